/* Measured memory counters (contract in memory.h). */
#include "bench/memory.h"

#include <sys/resource.h>

double bench_maxrss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

double bench_tensor_bytes(const optic_tensor *t, int32_t n) {
  double b = 0;
  for (int32_t i = 0; i < n; i++) {
    double e = 1;
    for (int32_t d = 0; d < t[i].shape.rank; d++) e *= (double)t[i].shape.dims[d];
    b += e * (double)optic_dtype_size(t[i].dtype);
  }
  return b;
}

void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, const optic_program_t *p,
                         double io_bytes, double rss0) {
  optic_pool_stats ps;
  optic_program_summary s;
  double constants = p != NULL && optic_program_summary_get(p, &s) == OPTIC_OK ? (double)s.memory.constant_bytes : 0;
  if (ctx != NULL && optic_exec_ctx_pool_stats(ctx, &ps) == OPTIC_OK) {
    optic_bench_counter(st, "peak_bytes", (double)ps.peak_bytes, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "mem_peak_bytes", (double)ps.peak_bytes + io_bytes + constants, OPTIC_BENCH_COUNTER_PLAIN);
  }
  double now = bench_maxrss_bytes();
  optic_bench_counter(st, "maxrss_delta_bytes", now > rss0 ? now - rss0 : 0, OPTIC_BENCH_COUNTER_PLAIN);
}
