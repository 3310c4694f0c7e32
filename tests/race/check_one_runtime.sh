#!/usr/bin/env bash
# Runs a tsan-omp program with every symbol bound at load (LD_BIND_NOW) and
# the dynamic linker's binding log on: it must pass, bind OpenBLAS's OpenMP
# calls to libomp, and bind nothing to libgomp (which OpenBLAS's NEEDED entry
# loads) but libgomp's own references and libomp's two start-up probes for an
# offload library (dlsym of omp_target_free and omp_get_num_devices: kept as
# pointers for device memory spaces and device queries, which neither optic
# nor OpenBLAS uses).
# Usage: check_one_runtime.sh PROGRAM WORK_DIR
set -euo pipefail
prog=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/ld" "$prog"
log=$(cat "$work"/ld.*)
into_gomp=$(grep "to [^ ]*libgomp" <<<"$log" | grep -v "binding file [^ ]*libgomp" |
  grep -v "binding file [^ ]*libomp[^ ]* \[0\] to [^ ]*libgomp[^ ]* \[0\]: normal symbol \`\(omp_target_free\|omp_get_num_devices\)'$" || true)
to_gomp=$(grep -c . <<<"$into_gomp" || true)
blas_to_omp=$(grep -c "binding file [^ ]*libopenblas[^ ]* \[0\] to [^ ]*libomp[^ ]* \[0\]: normal symbol \`GOMP_parallel'" <<<"$log" || true)
if [[ $to_gomp -ne 0 ]]; then
  echo "FAIL: $to_gomp symbols bound to libgomp:"
  head -20 <<<"$into_gomp"
  exit 1
fi
if [[ $blas_to_omp -eq 0 ]]; then
  echo "FAIL: OpenBLAS's GOMP_parallel is not bound to libomp; its OpenMP bindings:"
  grep "binding file [^ ]*libopenblas.*\`\(GOMP\|omp\)_" <<<"$log" | head -20
  exit 1
fi
echo "check_one_runtime: no call bound to libgomp; OpenBLAS's GOMP_parallel bound to libomp"
