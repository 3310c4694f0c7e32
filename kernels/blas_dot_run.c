/* Runs a planned dot_general: packs what the plan packs, then one
 * cblas_sgemm / cblas_sgemv per (batch item, slice of M or N). Each thread
 * does a disjoint share chosen from (thread, nthreads) alone. Never
 * allocates, never spawns threads (OpenBLAS may, outside a parallel region). */
#include <cblas.h>
#include <string.h>

#include "core/error.h"
#include "kernels/blas_threads.h"
#include "kernels/dot.h"
#include "kernels/dot_bf16.h"

/* Slices of M or N start at multiples of this many elements (64 bytes of a
 * row of the output), so threads splitting N never share a cache line of
 * the output except where a row itself starts unaligned. */
#define SLICE_ALIGN 16

/* Packing copies a contiguous run with memcpy from this many elements on;
 * shorter runs (a dim of 6 floats under a reordered batch, say) go through
 * the element loop, which costs less than a library call per run. The loop
 * takes the run's stride as a variable, so the compiler does not turn it
 * back into a memcpy call. */
#define PACK_MEMCPY_MIN 16

/* Thread t's start in [0, total) when total = rows * row_len units are split
 * evenly, rounded to the nearest multiple of `align` inside a row. Monotone in
 * t; 0 for t = 0 and total for t = nthreads. */
static int64_t share_start(int64_t total, int64_t row_len, int64_t align, int t, int nthreads) {
  if (t >= nthreads) return total;
  int64_t f = (total / nthreads) * t + (total % nthreads) * t / nthreads;
  int64_t row = f / row_len, x = f % row_len;
  x = (x + align / 2) / align * align;
  if (x > row_len) x = row_len;
  return row * row_len + x;
}

static int64_t batch_offset(const struct optic_dot_plan *p, const int64_t *strides, int64_t b) {
  int64_t off = 0;
  for (int32_t i = p->batch_rank - 1; i >= 0; i--) {
    off += (b % p->batch_sizes[i]) * strides[i];
    b /= p->batch_sizes[i];
  }
  return off;
}

static optic_status check_args(const char *fn, const struct optic_dot_plan *p, const float *lhs, const float *rhs,
                               bool need_out, const float *out, const void *scratch, int thread, int nthreads) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (nthreads < 1 || thread < 0 || thread >= nthreads) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: thread %d is outside [0, %d)", fn, thread, nthreads);
  }
  if (p->path == OPTIC_DOT_PATH_EMPTY) return OPTIC_OK;
  if (need_out && out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  if (p->path == OPTIC_DOT_PATH_ZEROS) return OPTIC_OK;
  if (lhs == NULL || rhs == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, lhs == NULL ? "lhs" : "rhs");
  }
  if (p->scratch_bytes > 0 && (scratch == NULL || (uintptr_t)scratch % _Alignof(float) != 0)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: the plan needs %zu bytes of float-aligned scratch, got %p", fn,
                      p->scratch_bytes, scratch);
  }
  return OPTIC_OK;
}

/* Copies thread's share of the runs of one operand into its packed layout
 * (elements of elem_size bytes: 4 for f32, 2 for bf16). */
void optic_dot_pack_operand(const optic_dot_operand *op, const void *src_v, void *dst_v, size_t es, int thread,
                            int nthreads) {
  const char *src = src_v;
  char *dst = dst_v;
  int32_t r = op->pack_rank;
  if (r == 0) { /* a single element */
    if (thread == 0) memcpy(dst, src, es);
    return;
  }
  int64_t run = op->pack_sizes[r - 1], run_stride = op->pack_strides[r - 1], runs = 1;
  for (int32_t i = 0; i < r - 1; i++) runs *= op->pack_sizes[i];
  int64_t begin = share_start(runs, runs, 1, thread, nthreads), end = share_start(runs, runs, 1, thread + 1, nthreads);
  if (begin >= end) return;
  int64_t idx[OPTIC_MAX_RANK] = {0}, off = 0, rest = begin;
  for (int32_t i = r - 2; i >= 0; i--) {
    idx[i] = rest % op->pack_sizes[i];
    rest /= op->pack_sizes[i];
    off += idx[i] * op->pack_strides[i];
  }
  char *d = dst + (size_t)(begin * run) * es;
  for (int64_t o = begin; o < end; o++, d += (size_t)run * es) {
    const char *s = src + (size_t)off * es;
    if (run_stride == 1 && run >= PACK_MEMCPY_MIN) {
      memcpy(d, s, (size_t)run * es);
    } else if (es == 4) {
      for (int64_t j = 0; j < run; j++) memcpy(d + j * 4, s + j * run_stride * 4, 4);
    } else {
      for (int64_t j = 0; j < run; j++) memcpy(d + (size_t)j * es, s + (size_t)(j * run_stride) * es, es);
    }
    for (int32_t i = r - 2; i >= 0; i--) { /* odometer over the outer dims */
      off += op->pack_strides[i];
      if (++idx[i] < op->pack_sizes[i]) break;
      off -= idx[i] * op->pack_strides[i];
      idx[i] = 0;
    }
  }
}

optic_status optic_dot_pack(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, void *scratch,
                            int thread, int nthreads) {
  optic_status st = check_args("dot_pack", plan, lhs, rhs, false, NULL, scratch, thread, nthreads);
  if (st != OPTIC_OK || plan->scratch_bytes == 0) return st;
  char *base = scratch;
  if (plan->lhs.packed) optic_dot_pack_operand(&plan->lhs, lhs, base + plan->lhs.scratch_offset, 4, thread, nthreads);
  if (plan->rhs.packed) optic_dot_pack_operand(&plan->rhs, rhs, base + plan->rhs.scratch_offset, 4, thread, nthreads);
  return OPTIC_OK;
}

static CBLAS_TRANSPOSE trans_of(const optic_dot_operand *op) { return op->trans ? CblasTrans : CblasNoTrans; }

/* out[b] slice [x0, x1) of M (or of N when split_n) through one BLAS call.
 * A and B point at batch item b of each operand (source or packed copy). */
static void compute_slice(const struct optic_dot_plan *p, const float *a, const float *b, float *c, int64_t x0,
                          int64_t x1) {
  const optic_dot_operand *l = &p->lhs, *r = &p->rhs;
  blasint len = (blasint)(x1 - x0), k = (blasint)p->k, lda = (blasint)l->ld, ldb = (blasint)r->ld;
  kernel_blas_note_call();
  if (p->path == OPTIC_DOT_PATH_GEMV && l->vector) { /* M == 1: y[N] = x[K] . B[K, N] */
    const float *bs = b + (r->trans ? x0 * r->ld : x0);
    if (r->trans) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, len, k, 1.0f, bs, ldb, a, lda, 0.0f, c + x0, 1);
    } else {
      cblas_sgemv(CblasRowMajor, CblasTrans, k, len, 1.0f, bs, ldb, a, lda, 0.0f, c + x0, 1);
    }
  } else if (p->path == OPTIC_DOT_PATH_GEMV) { /* N == 1: y[M] = A[M, K] . x[K] */
    const float *as = a + (l->trans ? x0 : x0 * l->ld);
    if (l->trans) {
      cblas_sgemv(CblasRowMajor, CblasTrans, k, len, 1.0f, as, lda, b, ldb, 0.0f, c + x0, 1);
    } else {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, len, k, 1.0f, as, lda, b, ldb, 0.0f, c + x0, 1);
    }
  } else if (p->split_n) {
    const float *bs = b + (r->trans ? x0 * r->ld : x0);
    cblas_sgemm(CblasRowMajor, trans_of(l), trans_of(r), (blasint)p->m, len, k, 1.0f, a, lda, bs, ldb, 0.0f, c + x0,
                (blasint)p->n);
  } else {
    const float *as = a + (l->trans ? x0 : x0 * l->ld);
    cblas_sgemm(CblasRowMajor, trans_of(l), trans_of(r), len, (blasint)p->n, k, 1.0f, as, lda, b, ldb, 0.0f,
                c + x0 * p->n, (blasint)p->n);
  }
}

optic_status optic_dot_compute(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, float *out,
                               const void *scratch, int thread, int nthreads) {
  optic_status st = check_args("dot_compute", plan, lhs, rhs, true, out, scratch, thread, nthreads);
  if (st != OPTIC_OK) return st;
  const struct optic_dot_plan *p = plan;
  if (p->path == OPTIC_DOT_PATH_EMPTY) return OPTIC_OK;
  if (p->path == OPTIC_DOT_PATH_ZEROS) {
    int64_t total = p->batch * p->m * p->n;
    int64_t begin = share_start(total, total, SLICE_ALIGN, thread, nthreads);
    int64_t end = share_start(total, total, SLICE_ALIGN, thread + 1, nthreads);
    if (end > begin) memset(out + begin, 0, (size_t)(end - begin) * sizeof(float));
    return OPTIC_OK;
  }
  const char *base = scratch;
  const float *a_src = p->lhs.packed ? (const float *)(base + p->lhs.scratch_offset) : lhs;
  const float *b_src = p->rhs.packed ? (const float *)(base + p->rhs.scratch_offset) : rhs;
  /* The work is batch x (M or N) units, split evenly over threads; a thread's
   * share may span the end of one batch item and the start of the next. */
  int64_t row = p->split_n ? p->n : p->m, total = p->batch * row;
  int64_t s = share_start(total, row, SLICE_ALIGN, thread, nthreads);
  int64_t e = share_start(total, row, SLICE_ALIGN, thread + 1, nthreads);
  while (s < e) {
    int64_t b = s / row, x0 = s % row, x1 = x0 + (e - s) < row ? x0 + (e - s) : row;
    compute_slice(p, a_src + batch_offset(p, p->lhs.batch_strides, b), b_src + batch_offset(p, p->rhs.batch_strides, b),
                  out + b * p->m * p->n, x0, x1);
    s += x1 - x0;
  }
  return OPTIC_OK;
}

optic_status optic_dot_run(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, float *out,
                           void *scratch) {
  optic_status st = check_args("dot_run", plan, lhs, rhs, true, out, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_pack(plan, lhs, rhs, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_compute(plan, lhs, rhs, out, scratch, 0, 1);
  return st;
}
