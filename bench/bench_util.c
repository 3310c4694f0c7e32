/* Cached benchmark arrays, the per-thread split and the rate counters shared
 * by all suites (contracts in bench_util.h). Never used inside a timed loop
 * except bench_split, which only does arithmetic. */
#include "bench/bench_util.h"

#include <stdarg.h>
#include <stdio.h>

#include <optic/core.h>

static struct {
  float *p;
  size_t n;
} slots[BENCH_SLOTS];

float *bench_f32_array(int slot, size_t n) {
  if (slot < 0 || slot >= BENCH_SLOTS || n == 0) return NULL;
  if (slots[slot].n >= n) return slots[slot].p;
  optic_free(NULL, slots[slot].p, slots[slot].n * sizeof(float), 0);
  slots[slot].p = NULL;
  slots[slot].n = 0;
  void *p = NULL;
  if (optic_alloc(NULL, n * sizeof(float), 64, &p) != OPTIC_OK) return NULL;
  float *f = p;
  /* Values in [1, 2): 1 + (i mod 1021 + slot) / 1040, so slots differ and
   * divisions, powers and products stay normal numbers. */
  for (size_t i = 0; i < n; i++) f[i] = 1.0f + (float)((i % 1021) + (size_t)slot) / 1040.0f;
  slots[slot].p = f;
  slots[slot].n = n;
  return f;
}

void bench_split(size_t n, int t, int nt, size_t *lo, size_t *hi) {
  const size_t line = 16;
  size_t lines = (n + line - 1) / line;
  size_t per = (lines + (size_t)nt - 1) / (size_t)nt;
  size_t a = (size_t)t * per * line, b = a + per * line;
  *lo = a < n ? a : n;
  *hi = b < n ? b : n;
}

void bench_report_rates(optic_bench_state *st, double bytes, double flops) {
  if (bytes > 0) {
    optic_bench_counter(st, "GB/s", bytes * 1e-9, OPTIC_BENCH_COUNTER_RATE_PER_ITERATION);
    optic_bench_set_bytes_processed(st, (int64_t)(bytes * (double)optic_bench_iterations(st)));
  }
  if (flops > 0) optic_bench_counter(st, "GFLOP/s", flops * 1e-9, OPTIC_BENCH_COUNTER_RATE_PER_ITERATION);
}

const char *bench_name(const char *fmt, ...) {
  static char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}
