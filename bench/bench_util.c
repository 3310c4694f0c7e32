/* Cached benchmark arrays, the per-thread split and the rate counters shared
 * by all suites (contracts in bench_util.h). Never used inside a timed loop
 * except the splits, which only do arithmetic. */
#include "bench/bench_util.h"

#include <stdarg.h>
#include <stdio.h>

#include <optic/core.h>

static struct {
  void *p;
  size_t bytes; /* allocated */
  size_t n;     /* elements filled with type t */
  bench_dtype t;
} slots[BENCH_SLOTS];

size_t bench_dtype_bytes(bench_dtype t) {
  switch (t) {
    case BENCH_F32: return sizeof(float);
    case BENCH_F64: return sizeof(double);
    case BENCH_S32: return sizeof(int32_t);
    case BENCH_U8: return sizeof(uint8_t);
    case BENCH_U16: return sizeof(uint16_t);
    default: return 0;
  }
}

/* The slot's first-use contents (see bench_util.h). Values in [1, 2) are
 * 1 + (i mod 1021 + slot) / 1040, so slots differ and divisions, powers and
 * products stay normal numbers. */
static void fill(void *p, size_t n, bench_dtype t, int slot) {
  switch (t) {
    case BENCH_F32: {
      float *f = p;
      for (size_t i = 0; i < n; i++) f[i] = 1.0f + (float)((i % 1021) + (size_t)slot) / 1040.0f;
      break;
    }
    case BENCH_F64: {
      double *d = p;
      for (size_t i = 0; i < n; i++) d[i] = 1.0 + (double)((i % 1021) + (size_t)slot) / 1040.0;
      break;
    }
    case BENCH_S32: {
      int32_t *s = p;
      for (size_t i = 0; i < n; i++) s[i] = (int32_t)((i + (size_t)slot) % 1021) - 510;
      break;
    }
    case BENCH_U8: {
      /* Bit 16 of a multiplicative hash: no short period a predictor learns. */
      uint8_t *u = p;
      for (size_t i = 0; i < n; i++) u[i] = (uint8_t)((((uint32_t)(i + (size_t)slot) * 2654435761u) >> 16) & 1u);
      break;
    }
    case BENCH_U16: { /* bf16 or f16 bits of normal numbers (0x3c00.. is 1.0 in f16, 2^-7.. in bf16) */
      uint16_t *h = p;
      for (size_t i = 0; i < n; i++) h[i] = (uint16_t)(0x3c00u + (i + (size_t)slot) % 1021);
      break;
    }
    default: break;
  }
}

void *bench_array(int slot, size_t n, bench_dtype t) {
  size_t esize = bench_dtype_bytes(t);
  if (slot < 0 || slot >= BENCH_SLOTS || n == 0 || esize == 0 || n > SIZE_MAX / esize) return NULL;
  if (slots[slot].t == t && slots[slot].n >= n) return slots[slot].p;
  if (slots[slot].bytes < n * esize) {
    optic_free(NULL, slots[slot].p, slots[slot].bytes, 64);
    slots[slot].p = NULL;
    slots[slot].bytes = 0;
    slots[slot].n = 0;
    void *p = NULL;
    if (optic_alloc(NULL, n * esize, 64, &p) != OPTIC_OK) return NULL;
    slots[slot].p = p;
    slots[slot].bytes = n * esize;
  }
  fill(slots[slot].p, n, t, slot);
  slots[slot].t = t;
  slots[slot].n = n;
  return slots[slot].p;
}

float *bench_f32_array(int slot, size_t n) { return bench_array(slot, n, BENCH_F32); }

void bench_fill_f32(float *x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * (float)(i % 1021) / 1021.0f;
}

void bench_split_aligned(size_t n, size_t align, int t, int nt, size_t *lo, size_t *hi) {
  if (align == 0) align = 1;
  size_t units = (n + align - 1) / align;
  size_t per = (units + (size_t)nt - 1) / (size_t)nt;
  size_t a = (size_t)t * per * align, b = a + per * align;
  *lo = a < n ? a : n;
  *hi = b < n ? b : n;
}

void bench_split(size_t n, int t, int nt, size_t *lo, size_t *hi) { bench_split_aligned(n, 16, t, nt, lo, hi); }

size_t bench_repeats(size_t n) { return n == 0 || n >= BENCH_REPEAT_ELEMENTS ? 1 : BENCH_REPEAT_ELEMENTS / n; }

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
