#!/usr/bin/env bash
# End-to-end test of the examples against an install tree: installs this build
# into a temporary prefix, builds examples/hlo_cost and examples/mlp_train
# from it with find_package(optic CONFIG), then checks:
#   hlo_cost prints costs for the host model (host-default with no machine
#     file, the file's model with $OPTIC_MACHINE), tpu-v4 and tpu-v5e;
#   mlp_train's gradient graph (autodiff) matches finite differences (--gradcheck),
#     so does the hand-written one (--hand-gradients), and both give the same
#     loss curve within 1%;
#   training reaches >= 90% held-out accuracy in 3000 steps and the loss falls
#     (a backward pass without the ReLU masks reaches 88.3%, a flipped sign
#     12%, a frozen first layer 59%; see examples/README.md);
#   1 and 4 emulated pod cores end with bitwise identical parameters;
#   a run SIGKILLed at step 1234, resumed from its step-1000 checkpoint, ends
#     bitwise identical to the uninterrupted run; so does a run killed with
#     kill -9 from outside right after its first checkpoint (every 50 steps,
#     so the kill may land inside a save); resuming with another optimizer
#     (--optimizer adamw) fails naming the mismatched hyperparameter;
#   the convnet (--model conv, 400 steps) passes --gradcheck, its loss falls
#     by >= 10x from the first epoch to the last (12.9x; with its first
#     convolution frozen 8.3x) and held-out accuracy is >= 0.90 (0.931); 1 and 4
#     cores, a 2-core run SIGKILLed at step 222 and resumed from step 150 on
#     1 core, and mpirun -np 2 --mpi end with bitwise identical parameters;
#   mpirun -np 2 --mpi gives the same loss curve and parameters, also with a
#     2-core pod per rank (when MPI and mpirun exist; otherwise that step says
#     it was skipped).
# usage: run.sh CMAKE BUILD_DIR EXAMPLES_DIR CC HLO_FILE
set -euo pipefail
cmake=$1 build=$2 src=$3 cc=$4 hlo=$5
work=$build/examples-test
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
# Nothing from the user's home: no machine file (the host model is the
# host-default preset unless a step names one), no $OPTIC_* settings.
mkdir -p "$work/home/config"
export HOME=$work/home XDG_CONFIG_HOME=$work/home/config
for v in $(compgen -e | grep '^OPTIC_'); do unset "$v"; done
step() { echo "== $*"; }
die() { echo "FAIL examples_e2e: $*"; echo "reproduce: $0 $cmake $build $src $cc $hlo"; exit 1; }
trap 'echo "FAIL examples_e2e (step above); reproduce: $0 $cmake $build $src $cc $hlo"' ERR
# Every run has a watchdog: nothing here may hang the suite.
run() { timeout 120 "$@"; }
common=(--hidden 64 --steps 3000 --batch 64 --seed 1)
conv=(--model conv --steps 400 --batch 64 --train-size 6400 --seed 1)

step "install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null

for ex in hlo_cost mlp_train; do
  step "build examples/$ex against the install tree"
  "$cmake" -S "$src/$ex" -B "$work/$ex" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  "$cmake" --build "$work/$ex" >/dev/null
done
deps=$(ldd "$work/mlp_train/mlp_train")
grep -q "$prefix/.*liboptic.so" <<<"$deps" || die "mlp_train does not link the installed liboptic.so"
train=$work/mlp_train/mlp_train

step "hlo_cost on $hlo and on the MLP training step"
run "$train" --hidden 64 --steps 1 --dump-hlo "$work/mlp_step.hlo" >/dev/null
# The host model comes from $OPTIC_MACHINE or the config directory: with
# neither (as set above) the host-default preset, with a file the file's model.
fixture_machine=$work/machine.json
cat >"$fixture_machine" <<'JSON'
{"name": "host", "peak_flops": 2e11, "peak_transcendentals": 1e10, "dram_bandwidth": 2e10,
 "cache_bandwidth": 2e11, "cache_bytes": 2097152, "op_overhead_ns": 300, "cores": 2,
 "source": "examples_e2e fixture"}
JSON
for f in "$hlo" "$work/mlp_step.hlo"; do
  for host in host-default host; do
    if [ $host = host ]; then
      out=$(OPTIC_MACHINE=$fixture_machine run "$work/hlo_cost/hlo_cost" "$f")
    else
      out=$(run "$work/hlo_cost/hlo_cost" "$f")
    fi
    echo "$out"
    [ $host = host ] || grep -q "^host-default .*uncalibrated defaults" <<<"$out" ||
      die "hlo_cost $f: with no machine file the host row is not the uncalibrated host-default preset"
    for m in $host tpu-v4 tpu-v5e; do
      grep -Eq "^$m +[0-9.e+]+ " <<<"$out" || die "hlo_cost $f: no row for $m"
    done
  done
  grep -q "examples_e2e fixture" <<<"$out" || die "hlo_cost $f: the host row does not name the OPTIC_MACHINE file's source"
done

step "gradient check (finite differences)"
out=$(run "$train" --hidden 64 --gradcheck)
echo "$out" | tail -1
grep -q "gradcheck: passed" <<<"$out" || { echo "$out"; die "the backward graph disagrees with finite differences"; }

step "train on 4 emulated pod cores"
run "$train" "${common[@]}" --cores 4 >"$work/c4.log"
cat "$work/c4.log"
final_hash() { awk '/^final params fnv1a64/ {print $4}' "$1"; }
h4=$(final_hash "$work/c4.log")
[ -n "$h4" ] || die "4-core run printed no final parameters"
awk '/^epoch/ {if (first == "") first = $6; last = $6; acc = $8}
     END {printf "first epoch loss %s, last %s, held-out accuracy %s\n", first, last, acc;
          exit !(last < first && acc >= 0.90)}' "$work/c4.log" ||
  die "the loss did not fall or the held-out accuracy stayed below 0.90"

step "the hand-written backward pass agrees (gradient check, and the loss curve within 1%)"
out=$(run "$train" --hidden 64 --gradcheck --hand-gradients)
grep -q "gradcheck: passed" <<<"$out" || { echo "$out"; die "the hand-written backward graph disagrees with finite differences"; }
run "$train" "${common[@]}" --cores 4 --hand-gradients >"$work/hand.log"
paste <(grep '^epoch' "$work/c4.log") <(grep '^epoch' "$work/hand.log") |
  awk '{d = $6 - $16; if (d < 0) d = -d; if (d > 0.01 * $16) {print "epoch " $2 ": autodiff loss " $6 ", hand-written " $16; bad = 1}}
       END {exit bad}' || die "autodiff and hand-written gradients train differently"

step "1 core: same parameters bitwise"
run "$train" "${common[@]}" --cores 1 >"$work/c1.log"
[ "$(final_hash "$work/c1.log")" = "$h4" ] || die "1-core parameters differ from 4-core ($(final_hash "$work/c1.log") vs $h4)"
diff <(grep '^epoch' "$work/c1.log") <(grep '^epoch' "$work/c4.log") || die "1-core loss curve differs"

step "SIGKILL at step 1234, then --resume"
ck=$work/ckpt
rc=0
run "$train" "${common[@]}" --cores 4 --ckpt-dir "$ck" --ckpt-every 500 --kill-at-step 1234 >"$work/killed.log" 2>&1 ||
  rc=$?
[ "$rc" = 137 ] || { cat "$work/killed.log"; die "the run to be killed exited with $rc, not 137 (SIGKILL)"; }
ls "$ck"
run "$train" "${common[@]}" --cores 4 --ckpt-dir "$ck" --ckpt-every 500 --resume >"$work/resumed.log"
cat "$work/resumed.log"
grep -q "resume: continuing from step 1000" "$work/resumed.log" || die "did not resume from step 1000"
[ "$(final_hash "$work/resumed.log")" = "$h4" ] || die "resumed run ends with different parameters"

step "a checkpoint of another optimizer is refused with the reason"
rc=0
out=$(run "$train" "${common[@]}" --cores 4 --ckpt-dir "$ck" --resume --optimizer adamw 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "hyperparameter kind: the checkpoint has adam, this optimizer adamw" <<<"$out" ||
  { echo "$out"; die "resuming an adam checkpoint as adamw did not fail with the reason (exit $rc)"; }

step "SIGKILL from outside at an arbitrary point (checkpoints every 50 steps), then --resume"
ck2=$work/ckpt-external
"$train" "${common[@]}" --cores 4 --ckpt-dir "$ck2" --ckpt-every 50 >"$work/killed2.log" 2>&1 &
pid=$!
# Bounded poll for the first checkpoint (a precondition, not the result): 30 s at most.
for _ in $(seq 3000); do
  compgen -G "$ck2/ckpt-*.optic" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
if kill -9 "$pid" 2>/dev/null; then echo "killed pid $pid"; else echo "the run had already ended"; fi
wait "$pid" || true
ls -a "$ck2"
run "$train" "${common[@]}" --cores 4 --ckpt-dir "$ck2" --ckpt-every 50 --resume >"$work/resumed2.log"
grep '^resume' "$work/resumed2.log"
[ "$(final_hash "$work/resumed2.log")" = "$h4" ] || die "run resumed after an external SIGKILL ends with different parameters"

step "convnet: gradient check (finite differences)"
out=$(run "$train" --model conv --gradcheck)
echo "$out" | tail -1
grep -q "gradcheck: passed" <<<"$out" || { echo "$out"; die "the convnet's backward graph disagrees with finite differences"; }

step "convnet: train on 4 emulated pod cores"
run "$train" "${conv[@]}" --cores 4 >"$work/conv4.log"
cat "$work/conv4.log"
hc=$(final_hash "$work/conv4.log")
[ -n "$hc" ] || die "the convnet's 4-core run printed no final parameters"
awk '/^epoch/ {if (first == "") first = $6; last = $6; acc = $8}
     END {printf "first epoch loss %s, last %s (%.1fx lower), held-out accuracy %s\n", first, last, first / last, acc;
          exit !(last * 10 <= first && acc >= 0.90)}' "$work/conv4.log" ||
  die "the convnet's loss did not fall 10x or its held-out accuracy stayed below 0.90"

step "convnet: 1 core, same parameters bitwise"
run "$train" "${conv[@]}" --cores 1 >"$work/conv1.log"
[ "$(final_hash "$work/conv1.log")" = "$hc" ] ||
  die "convnet: 1-core parameters differ from 4-core ($(final_hash "$work/conv1.log") vs $hc)"
diff <(grep '^epoch' "$work/conv1.log") <(grep '^epoch' "$work/conv4.log") || die "convnet: 1-core loss curve differs"

step "convnet: SIGKILL at step 222 on 2 cores, then --resume on 1 core"
ckc=$work/ckpt-conv
rc=0
run "$train" "${conv[@]}" --cores 2 --ckpt-dir "$ckc" --ckpt-every 150 --kill-at-step 222 >"$work/conv-killed.log" 2>&1 ||
  rc=$?
[ "$rc" = 137 ] || { cat "$work/conv-killed.log"; die "the convnet run to be killed exited with $rc, not 137 (SIGKILL)"; }
run "$train" "${conv[@]}" --cores 1 --ckpt-dir "$ckc" --ckpt-every 150 --resume >"$work/conv-resumed.log"
grep '^resume' "$work/conv-resumed.log"
grep -q "resume: continuing from step 150" "$work/conv-resumed.log" || die "the convnet did not resume from step 150"
[ "$(final_hash "$work/conv-resumed.log")" = "$hc" ] ||
  die "the resumed convnet ends with different parameters ($(final_hash "$work/conv-resumed.log") vs $hc)"

step "mpirun -np 2 --mpi"
if [ "$("$train" --mpi-available)" = yes ] && command -v mpirun >/dev/null; then
  run mpirun --allow-run-as-root --oversubscribe -np 2 "$train" "${common[@]}" --mpi >"$work/mpi.log"
  cat "$work/mpi.log"
  [ "$(final_hash "$work/mpi.log")" = "$h4" ] || die "MPI parameters differ ($(final_hash "$work/mpi.log") vs $h4)"
  diff <(grep '^epoch' "$work/mpi.log") <(grep '^epoch' "$work/c4.log") || die "MPI loss curve differs"
  step "mpirun -np 2 --mpi --cores 2 (a 2-core pod inside each rank)"
  run mpirun --allow-run-as-root --oversubscribe -np 2 "$train" "${common[@]}" --mpi --cores 2 >"$work/mpi2.log"
  [ "$(final_hash "$work/mpi2.log")" = "$h4" ] || die "MPI x pod parameters differ ($(final_hash "$work/mpi2.log") vs $h4)"
  step "convnet: mpirun -np 2 --mpi"
  run mpirun --allow-run-as-root --oversubscribe -np 2 "$train" "${conv[@]}" --mpi >"$work/conv-mpi.log"
  [ "$(final_hash "$work/conv-mpi.log")" = "$hc" ] ||
    die "convnet: MPI parameters differ ($(final_hash "$work/conv-mpi.log") vs $hc)"
else
  echo "skipped: mlp_train or the installed optic was built without MPI, or mpirun is missing"
fi
echo "1 passed, 0 failed"
