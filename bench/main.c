/* optic_bench: the kernel and peer suites in one binary, so every ratio
 * (our kernel / its peer) compares figures measured in the same run. All
 * Google Benchmark flags work; see bench/README.md. */
#include "bench/bench_util.h"

int main(int argc, char **argv) {
  bench_add_machine_context();
  bench_register_kernels();
  bench_register_stream();
  bench_register_fma_peak();
  bench_register_sgemm();
  bench_register_sgemm_slices();
  bench_register_sha256();
  bench_register_write_fsync();
#if OPTIC_BENCH_HAVE_DNNL
  bench_register_onednn_conv();
#endif
  return optic_bench_main(argc, argv);
}
