/* Measured memory counters (contract in memory.h). */
#include "bench/memory.h"

#include <sys/resource.h>

double bench_maxrss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, double rss0) {
  optic_pool_stats ps;
  if (ctx != NULL && optic_exec_ctx_pool_stats(ctx, &ps) == OPTIC_OK)
    optic_bench_counter(st, "peak_bytes", (double)ps.peak_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  double now = bench_maxrss_bytes();
  optic_bench_counter(st, "maxrss_delta_bytes", now > rss0 ? now - rss0 : 0, OPTIC_BENCH_COUNTER_PLAIN);
}
