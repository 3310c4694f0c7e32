/* bf16 dot_general on AVX512_BF16: scratch layout, thread shares and the
 * calls into the vdpbf16ps kernels (kernels/x86/avx512bf16/). The plan is
 * optic_dot_plan's; this file only reads it.
 *
 * Scratch: [0, plan->scratch_bytes) holds the dense copies the plan asks
 * for (sized for f32, so the bf16 copies fit), then the A panels of every
 * batch item, then the B panels, each 64-byte aligned. */
#include <string.h>

#include "core/error.h"
#include "kernels/dot_bf16.h"

#define MR OPTIC_BF16_MR
#define NR OPTIC_BF16_NR

bool optic_dot_bf16_available(void) {
#if defined(OPTIC_HAVE_AVX512BF16_KERNELS)
  const optic_cpu_info *c = optic_cpu_info_get();
  return OPTIC_CPU_HAS(c, AVX512BF16) && optic_isa_selected() == OPTIC_ISA_AVX512;
#else
  return false;
#endif
}

#if !defined(OPTIC_HAVE_AVX512BF16_KERNELS)
/* Never called: optic_dot_bf16_available() is false in such builds. */
void optic_bf16_pack_a__avx512bf16(const optic_bf16_matrix *s, int64_t r0, uint32_t *dst) { (void)s, (void)r0, (void)dst; }
void optic_bf16_pack_b__avx512bf16(const optic_bf16_matrix *s, int64_t c0, uint32_t *dst) { (void)s, (void)c0, (void)dst; }
void optic_bf16_gemm__avx512bf16(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1) {
  (void)g, (void)pa0, (void)pa1, (void)pb0, (void)pb1;
}
#endif

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

typedef struct layout {
  int64_t kpairs, mp, np; /* pairs of k, A panels and B panels per batch item */
  size_t a_off, b_off, a_item, b_item; /* offsets; per-item panel sizes in words */
} layout;

static layout layout_of(const struct optic_dot_plan *p) {
  layout l;
  l.kpairs = (p->k + 1) / 2;
  l.mp = (p->m + MR - 1) / MR;
  l.np = (p->n + NR - 1) / NR;
  l.a_item = (size_t)(l.mp * l.kpairs * MR);
  l.b_item = (size_t)(l.np * l.kpairs * NR);
  l.a_off = align64(p->scratch_bytes);
  l.b_off = l.a_off + align64((size_t)p->batch * l.a_item * sizeof(uint32_t));
  return l;
}

size_t optic_dot_bf16_scratch_bytes(const struct optic_dot_plan *p) {
  if (p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return p->scratch_bytes;
  layout l = layout_of(p);
  return l.b_off + (size_t)p->batch * l.b_item * sizeof(uint32_t);
}

/* [lo, hi) of thread t's even share of n units. */
static void share(int64_t n, int t, int nt, int64_t *lo, int64_t *hi) {
  *lo = n / nt * t + (n % nt) * t / nt;
  *hi = n / nt * (t + 1) + (n % nt) * (t + 1) / nt;
}

static int64_t batch_offset(const struct optic_dot_plan *p, const int64_t *strides, int64_t b) {
  int64_t off = 0;
  for (int32_t i = p->batch_rank - 1; i >= 0; i--) {
    off += (b % p->batch_sizes[i]) * strides[i];
    b /= p->batch_sizes[i];
  }
  return off;
}

static optic_status check(const char *fn, const struct optic_dot_plan *p, bool need_in, const void *lhs,
                          const void *rhs, const void *scratch, int thread, int nthreads) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (nthreads < 1 || thread < 0 || thread >= nthreads) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: thread %d is outside [0, %d)", fn, thread, nthreads);
  }
  if (!optic_dot_bf16_available()) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: needs AVX512_BF16 and the avx512 ISA (selected: %s)", fn,
                      optic_isa_name(optic_isa_selected()));
  }
  if (p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return OPTIC_OK;
  if (need_in && (lhs == NULL || rhs == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, lhs == NULL ? "lhs" : "rhs");
  }
  if (scratch == NULL || (uintptr_t)scratch % 4 != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: needs %zu bytes of 4-aligned scratch, got %p", fn,
                      optic_dot_bf16_scratch_bytes(p), scratch);
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_pack_dense(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs,
                                       void *scratch, int thread, int nthreads) {
  optic_status st = check("dot_bf16_pack_dense", p, true, lhs, rhs, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return st;
  char *base = scratch;
  if (p->lhs.packed) optic_dot_pack_operand(&p->lhs, lhs, base + p->lhs.scratch_offset, 2, thread, nthreads);
  if (p->rhs.packed) optic_dot_pack_operand(&p->rhs, rhs, base + p->rhs.scratch_offset, 2, thread, nthreads);
  return OPTIC_OK;
}

/* Batch item b of an operand (after step 1) as a matrix. */
static optic_bf16_matrix matrix_of(const struct optic_dot_plan *p, const optic_dot_operand *op, const uint16_t *src,
                                   const void *scratch, int64_t b, int64_t rows, int64_t cols) {
  const uint16_t *base = op->packed ? (const uint16_t *)(const void *)((const char *)scratch + op->scratch_offset) : src;
  optic_bf16_matrix m = {base + batch_offset(p, op->batch_strides, b), rows, cols, op->ld, op->trans, op->vector};
  return m;
}

optic_status optic_dot_bf16_pack_panels(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs,
                                        void *scratch, int thread, int nthreads) {
  optic_status st = check("dot_bf16_pack_panels", p, true, lhs, rhs, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return st;
  layout l = layout_of(p);
  uint32_t *a = (uint32_t *)(void *)((char *)scratch + l.a_off), *bp = (uint32_t *)(void *)((char *)scratch + l.b_off);
  int64_t na = p->batch * l.mp, total = na + p->batch * l.np, lo, hi;
  share(total, thread, nthreads, &lo, &hi);
  for (int64_t u = lo; u < hi; u++) {
    if (u < na) {
      int64_t b = u / l.mp, i = u % l.mp;
      optic_bf16_matrix s = matrix_of(p, &p->lhs, lhs, scratch, b, p->m, p->k);
      optic_bf16_pack_a__avx512bf16(&s, i * MR, a + b * l.a_item + (size_t)(i * l.kpairs * MR));
    } else {
      int64_t b = (u - na) / l.np, j = (u - na) % l.np;
      optic_bf16_matrix s = matrix_of(p, &p->rhs, rhs, scratch, b, p->k, p->n);
      optic_bf16_pack_b__avx512bf16(&s, j * NR, bp + b * l.b_item + (size_t)(j * l.kpairs * NR));
    }
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_compute(const struct optic_dot_plan *p, float *out, const void *scratch, int thread,
                                    int nthreads) {
  optic_status st = check("dot_bf16_compute", p, false, NULL, NULL, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot_bf16_compute: out is NULL");
  int64_t lo, hi;
  if (p->path == OPTIC_DOT_PATH_ZEROS) {
    share(p->batch * p->m * p->n, thread, nthreads, &lo, &hi);
    if (hi > lo) memset(out + lo, 0, (size_t)(hi - lo) * sizeof(float));
    return OPTIC_OK;
  }
  layout l = layout_of(p);
  const uint32_t *a = (const uint32_t *)(const void *)((const char *)scratch + l.a_off);
  const uint32_t *b = (const uint32_t *)(const void *)((const char *)scratch + l.b_off);
  bool split_m = l.mp >= l.np; /* split the operand with more panels */
  int64_t per = split_m ? l.mp : l.np;
  share(p->batch * per, thread, nthreads, &lo, &hi);
  while (lo < hi) {
    int64_t item = lo / per, x0 = lo % per, x1 = x0 + (hi - lo) < per ? x0 + (hi - lo) : per;
    optic_bf16_gemm_args g = {a + item * l.a_item, b + item * l.b_item, out + item * p->m * p->n, p->m, p->n, p->k,
                              p->n};
    if (split_m) {
      optic_bf16_gemm__avx512bf16(&g, x0, x1, 0, l.np);
    } else {
      optic_bf16_gemm__avx512bf16(&g, 0, l.mp, x0, x1);
    }
    lo += x1 - x0;
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_run(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs, float *out,
                                void *scratch) {
  optic_status st = optic_dot_bf16_pack_dense(p, lhs, rhs, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_bf16_pack_panels(p, lhs, rhs, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_bf16_compute(p, out, scratch, 0, 1);
  return st;
}
