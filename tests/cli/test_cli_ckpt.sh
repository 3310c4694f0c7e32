#!/usr/bin/env bash
# `optic ckpt ls|verify|show|repair`: exit codes (0 all valid, 1 corrupt or
# unreadable with one message per file, 2 usage), the listing, the shown
# entries and metadata, and repair of a corrupt and a missing replica.
# usage: test_cli_ckpt.sh PATH/TO/optic PATH/TO/ckpt_write_fixture
set -u
optic=$1
fixture=$2
tmp=$(mktemp -d /tmp/optic-cli-ckpt-XXXXXX)
out=$tmp/out err=$tmp/err
trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
fail() { echo "FAIL $*"; echo "  reproduce: $0 $optic $fixture"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }
expect_exit() { # expected-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, expected $want"; cat "$err"; fi
}
has() { grep -q -- "$2" "$1" && pass "$3" || { fail "$3: no '$2' in $(cat "$1")"; }; }

a=$tmp/a b=$tmp/b
mkdir -p "$a" "$b"
"$fixture" 10 "$a" "$b" && "$fixture" 20 "$a" "$b" || fail "writing the fixtures"
f10=$a/ckpt-00000000000000000010.optic
f20=$a/ckpt-00000000000000000020.optic

expect_exit 0 "ckpt --help" "$optic" ckpt --help
has "$out" "usage: optic ckpt ls DIR" "--help prints the usage on stdout"
expect_exit 2 "ckpt (no subcommand)" "$optic" ckpt
has "$err" "no subcommand given" "no subcommand: message"
expect_exit 2 "ckpt frob" "$optic" ckpt frob "$a"
expect_exit 2 "ckpt ls (no dir)" "$optic" ckpt ls
expect_exit 2 "ckpt ls two dirs" "$optic" ckpt ls "$a" "$b"
expect_exit 2 "ckpt verify (no file)" "$optic" ckpt verify
expect_exit 2 "ckpt show --bogus" "$optic" ckpt show "$f10" --bogus
has "$err" "unknown option '--bogus'" "--bogus: message"

expect_exit 0 "ckpt ls" "$optic" ckpt ls "$a"
[ "$(grep -c 'index ok' "$out")" -eq 2 ] && pass "ls lists two checkpoints" || fail "ls: $(cat "$out")"
has "$out" "^10 .* 5  index ok $f10" "ls line of step 10"
expect_exit 0 "ckpt ls --verify" "$optic" ckpt ls "$a" --verify
[ "$(grep -c ' valid ' "$out")" -eq 2 ] && pass "ls --verify: both valid" || fail "ls --verify: $(cat "$out")"
expect_exit 1 "ckpt ls on a missing dir" "$optic" ckpt ls "$tmp/nope"

expect_exit 0 "ckpt verify two files" "$optic" ckpt verify "$f10" "$f20"
[ "$(grep -c ': valid (5 entries' "$out")" -eq 2 ] && pass "verify: a line per file" || fail "verify: $(cat "$out")"

# A checkpoint copied or renamed to another step's name is not valid; the message names both steps.
m=$tmp/misnamed
mkdir -p "$m"
cp "$f10" "$m/ckpt-00000000000000000030.optic"
expect_exit 1 "ckpt verify: step 10 under step 30's name" "$optic" ckpt verify "$m/ckpt-00000000000000000030.optic"
has "$err" "CORRUPT: .*step 30.*step 10" "misnamed copy: both steps named"
expect_exit 1 "ckpt ls: step 10 under step 30's name" "$optic" ckpt ls "$m"
has "$out" "^30 .*CORRUPT" "ls marks the misnamed file"
cp "$f10" "$m/my-own-name.optic"
expect_exit 0 "ckpt verify: a file outside the naming scheme" "$optic" ckpt verify "$m/my-own-name.optic"
has "$out" "valid (5 entries, .* step 10," "verify prints the recorded step"
expect_exit 1 "ckpt verify on a directory" "$optic" ckpt verify "$m"
has "$err" "is a directory" "directory: says so"
grep -q "Invalid argument" "$err" && fail "directory: bogus errno text: $(cat "$err")" || pass "directory: no errno text"

expect_exit 0 "ckpt show" "$optic" ckpt show "$f20"
has "$out" "embedding  *f32\[64,16\]" "show: entry embedding f32[64,16]"
has "$out" "step  *s32\[\]  *offset" "show: scalar entry"
has "$out" "mask  *pred\[10\]" "show: pred entry"
has "$out" 'step = "20"' "show: text metadata"
has "$out" "rng = 0x9e3779b97f4a7c15" "show: binary metadata as hex"
has "$out" "sha256 [0-9a-f]\{64\}" "show: hashes"
has "$out" "^format *optic checkpoint v2" "show: the file's format version"
has "$out" "^step *20" "show: the recorded step"

# Damage: a flipped data byte, a truncation, a foreign file.
python3 - "$f20" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[1000] ^= 0x40; open(p, 'wb').write(b)
PY
cp "$f10" "$tmp/trunc.optic" && truncate -s 3000 "$tmp/trunc.optic"
echo "hello" >"$tmp/text.optic"
expect_exit 1 "ckpt verify with corrupt files" "$optic" ckpt verify "$f10" "$f20" "$tmp/trunc.optic" "$tmp/text.optic" "$tmp/missing.optic"
has "$out" "$f10: valid" "the valid file still reported valid"
has "$err" "$f20: CORRUPT: .*entry 0 'embedding' SHA-256 mismatch" "flipped byte: entry named"
has "$err" "trunc.optic: CORRUPT: .*truncated at byte 3000" "truncation: byte named"
has "$err" "text.optic: CORRUPT: .*bad magic" "foreign file: bad magic"
has "$err" "missing.optic: OPTIC_ERR_IO: .*cannot open" "missing file: I/O error"
[ "$(wc -l <"$err")" -eq 4 ] && pass "one message per bad file" || fail "messages: $(cat "$err")"
expect_exit 1 "ckpt show on a truncated file" "$optic" ckpt show "$tmp/trunc.optic"
expect_exit 0 "ckpt ls (index still fine after a data flip)" "$optic" ckpt ls "$a"
expect_exit 1 "ckpt ls --verify finds it" "$optic" ckpt ls --verify "$a"
has "$out" "CORRUPT" "ls --verify marks the file"

# Repair: step 20 corrupt in a, step 10 corrupt in b, replica c lost (empty).
python3 - "$b/ckpt-00000000000000000010.optic" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[5000] ^= 0x01; open(p, 'wb').write(b)
PY
c=$tmp/c
mkdir -p "$c"
expect_exit 0 "ckpt repair a b c" "$optic" ckpt repair "$a" "$b" "$c"
has "$out" "checked 4, valid 2, repaired 4, unrecoverable steps 0" "repair report"
expect_exit 0 "verify after repair" "$optic" ckpt verify "$a"/*.optic "$b"/*.optic "$c"/*.optic
[ "$(grep -c ': valid' "$out")" -eq 6 ] && pass "six valid files" || fail "after repair: $(cat "$out")"
expect_exit 0 "repair again: nothing to do" "$optic" ckpt repair "$a" "$b" "$c"
has "$out" "valid 6, repaired 0" "second repair report"
python3 - "$a/ckpt-00000000000000000020.optic" "$b/ckpt-00000000000000000020.optic" <<'PY'
import sys
for p in sys.argv[1:]:
    b = bytearray(open(p, 'rb').read()); b[10] ^= 1; open(p, 'wb').write(b)
PY
expect_exit 1 "repair with a step corrupt everywhere" "$optic" ckpt repair "$a" "$b"
has "$err" "1 step(s) have no valid copy" "unrecoverable: message"
[ -z "$(ls -A "$a" | grep '^\.')" ] && pass "no temporary files left" || fail "temporaries: $(ls -A "$a")"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
