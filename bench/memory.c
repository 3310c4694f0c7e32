/* Measured memory counters (contract in memory.h). */
#include "bench/memory.h"

#include <stdio.h>
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

void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, const optic_program_t *p, double io_bytes,
                         double rss0) {
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

void bench_report_op_times(optic_bench_state *st, const optic_profiler_t *prof, const optic_program_t *p, size_t top) {
  optic_profile_summary sum;
  if (optic_profiler_summary(prof, p, &sum) != OPTIC_OK) return;
  for (size_t i = 0; i < sum.op_count && i < top; i++) {
    char key[96];
    snprintf(key, sizeof key, "op_ns:%s", sum.ops[i].name);
    optic_bench_counter(st, key, sum.ops[i].measured_ns, OPTIC_BENCH_COUNTER_PLAIN);
    snprintf(key, sizeof key, "op_est_ns:%s", sum.ops[i].name);
    optic_bench_counter(st, key, sum.ops[i].est_ns, OPTIC_BENCH_COUNTER_PLAIN);
  }
  optic_profile_summary_free(&sum);
}
