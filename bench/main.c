/* optic_bench: the kernel and peer suites in one binary, so every ratio
 * (our kernel / its peer) compares figures measured in the same run. All
 * Google Benchmark flags work; see bench/README.md. Only the default minimum
 * time differs from Google Benchmark's (below); never rewrites a flag given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"

/* Seconds per benchmark when --benchmark_min_time is not given. Google
 * Benchmark's default, 0.5 s, makes the ~980 benchmarks of the full suite
 * take about 17 minutes on a 2-core VM; 0.2 s keeps the full run reasonable,
 * and runs that feed the bars add --benchmark_repetitions=5 anyway. */
static char default_min_time[] = "--benchmark_min_time=0.2";

int main(int argc, char **argv) {
  /* One console line per finished benchmark even through a pipe, so `optic
   * report` can show progress (Google Benchmark writes through std::cout,
   * which is synced with stdio's stdout). */
  setvbuf(stdout, NULL, _IOLBF, 0);
  bench_add_machine_context();
  bench_register_kernels();
  bench_register_optim_steps();
  bench_register_stream();
  bench_register_fma_peak();
  bench_register_sgemm();
  bench_register_exec();
  bench_register_exec_contexts();
  bench_register_exec_window();
  bench_register_sgemm_slices();
  bench_register_sha256();
  bench_register_write_fsync();
  bench_register_runtime_infra();
  bench_register_ckpt();
  bench_register_graph_compile();
  bench_register_pod();
  bench_register_model_mlp();
  bench_register_rows();
  bench_register_torch();
  bench_register_model_hlo();
#if OPTIC_BENCH_HAVE_DNNL
  bench_register_onednn_conv();
#endif
  bool has_min_time = false;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--benchmark_min_time", strlen("--benchmark_min_time")) == 0) has_min_time = true;
  }
  /* argv plus the default, NULL-terminated as main's argv is. */
  char **args = has_min_time ? NULL : malloc(((size_t)argc + 2) * sizeof *args);
  if (args == NULL) return optic_bench_main(argc, argv);
  for (int i = 0; i < argc; i++) args[i] = argv[i];
  args[argc] = default_min_time;
  args[argc + 1] = NULL;
  int rc = optic_bench_main(argc + 1, args);
  free(args);
  return rc;
}
