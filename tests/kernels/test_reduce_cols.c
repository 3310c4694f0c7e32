/* Strided column reductions (optic_f32_reduce_cols and each ISA's column
 * kernel): every column must be bitwise what the scalar contiguous kernel
 * returns for the same values laid out contiguously (the row reducer on the
 * transposed data: the evaluation order kernels/reduce.h defines), and every
 * ISA's column kernel bitwise the generic one, any NaN equal to any NaN.
 * Shapes: rows 0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 1025, 2049 (one to
 * three leaves) x columns 1, 15, 16, 17, 125, 1024, row strides equal to the
 * width and padded, misaligned starts, guards after every output, all five
 * ops with special values (signed zeros, subnormals, infinities, NaN), and
 * columns split in two parts as two threads split them.
 * The wide kernels (cols_wide, for rows streamed from memory): every ISA
 * table's, rows 0..4096 x columns 0, 1, 7, 8, 9, 63, 64, 65, 1000, with the
 * work space the runtime passes (widest blocks), a small one (blocks of 40
 * columns, misaligned) and none (the 32-column stack blocks), the same checks.
 * A failure prints the case; rerun with `test_reduce_cols NAME`. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/reduce.h"
#include "tests/kernels/kernel_test.h"

static const size_t rows_list[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 1025, 2049};
static const size_t cols_list[] = {1, 15, 16, 17, 125, 1024};

/* Values for op: sums in [-100, 100) with about 1 in 16 special; prod near 1
 * so no partial product overflows, with a few signed zeros and a NaN; max/min
 * with specials (zeros of both signs, NaN payloads). */
static void fill(kt_rng *rng, optic_reduce_op op, float *x, size_t n, size_t r) {
  if (op == OPTIC_REDUCE_PROD) {
    double a = 3.0 / sqrt((double)(r ? r : 1));
    if (a > 0.5) a = 0.5;
    for (size_t i = 0; i < n; i++) {
      const uint64_t z = kt_next(rng);
      x[i] = (1.0f + kt_uniform(rng, (float)-a, (float)a)) * ((z & 1) ? -1.0f : 1.0f);
      if ((z & 1023) == 2) x[i] = (z >> 11) & 1 ? 0.0f : -0.0f;
      if ((z & 8191) == 4) x[i] = NAN;
    }
    return;
  }
  kt_fill(rng, x, n, -100.0f, 100.0f, 1);
  for (size_t i = 0; i < n; i++) { /* whole runs of -0 make the identity's sign matter */
    if ((kt_next(rng) & 7) == 0) x[i] = -0.0f;
  }
}

/* The reference: column c gathered contiguously, reduced by the scalar
 * contiguous kernel (itself checked against double precision in test_reduce). */
static float column_ref(optic_reduce_op op, size_t r, const float *x, size_t stride, size_t c, float *tmp) {
  for (size_t k = 0; k < r; k++) tmp[k] = x[k * stride + c];
  return optic_reduce_kernels_for(OPTIC_ISA_SCALAR)->r[op](r, tmp);
}

static bool same_cols(const char *what, optic_reduce_op op, optic_isa isa, size_t r, size_t w, size_t stride,
                      size_t off, const float *got, const float *want) {
  for (size_t c = 0; c < w; c++) {
    if (kt_same(got[c], want[c])) continue;
    OT_CHECK(false, "%s: %s %s r=%zu w=%zu stride=%zu offset=%zu column %zu: got %a want %a", what, optic_isa_name(isa),
             optic_reduce_op_name(op), r, w, stride, off, c, (double)got[c], (double)want[c]);
    return false;
  }
  return true;
}

/* One shape on one ISA's column kernel, every op. */
static bool one_shape(optic_isa isa, optic_f32_reduce_cols_fn fn, kt_rng *rng, size_t r, size_t w, size_t pad,
                      size_t off) {
  const size_t stride = w + pad, n = r ? (r - 1) * stride + w : 0;
  kt_buf x = kt_buf_make(n, off), got = kt_buf_make(w, off), want = kt_buf_make(w, 0), gen = kt_buf_make(w, 0);
  float *tmp = malloc((r ? r : 1) * sizeof(float));
  bool ok = tmp != NULL;
  for (int op = 0; ok && op < OPTIC_REDUCE_OP_COUNT; op++) {
    fill(rng, (optic_reduce_op)op, x.p, n, r);
    for (size_t c = 0; c < w; c++) want.p[c] = column_ref((optic_reduce_op)op, r, x.p, stride, c, tmp);
    fn((optic_reduce_op)op, r, w, x.p, stride, got.p);
    ok = same_cols("kernel vs row reducer", (optic_reduce_op)op, isa, r, w, stride, off, got.p, want.p);
    optic_f32_reduce_cols__scalar((optic_reduce_op)op, r, w, x.p, stride, gen.p);
    ok = ok && same_cols("kernel vs generic", (optic_reduce_op)op, isa, r, w, stride, off, got.p, gen.p);
    /* two parts, as two threads split the columns: the same bits */
    const size_t h = w / 2 + (w & 1);
    fn((optic_reduce_op)op, r, h, x.p, stride, got.p);
    fn((optic_reduce_op)op, r, w - h, r ? x.p + h : x.p, stride, got.p + h);
    ok = ok && same_cols("split columns", (optic_reduce_op)op, isa, r, w, stride, off, got.p, want.p);
    ok = ok && kt_buf_guard_ok(&got);
    if (!kt_buf_guard_ok(&got)) OT_CHECK(false, "%s wrote past w=%zu (r=%zu)", optic_isa_name(isa), w, r);
  }
  free(tmp);
  kt_buf_free(&x), kt_buf_free(&got), kt_buf_free(&want), kt_buf_free(&gen);
  return ok;
}

static void check_isa(optic_isa isa) {
  if (!optic_isa_built(isa) || kt_skip_isa(isa)) return;
  const optic_reduce_kernels *k = optic_reduce_kernels_for(isa);
  OT_CHECK(k != NULL && k->cols != NULL);
  if (k == NULL || k->cols == NULL) return;
  kt_rng rng = {0x5eed0000u + (uint64_t)isa};
  bool ok = true;
  for (size_t i = 0; ok && i < sizeof rows_list / sizeof rows_list[0]; i++) {
    for (size_t j = 0; ok && j < sizeof cols_list / sizeof cols_list[0]; j++) {
      const size_t r = rows_list[i], w = cols_list[j];
      if (r * w > 300000) continue; /* the 2049 x 1024 case adds nothing but time */
      ok = one_shape(isa, k->cols, &rng, r, w, 0, 0) && one_shape(isa, k->cols, &rng, r, w, 3, 1 + j % 15);
    }
  }
}

/* The wide kernel under test, adapted to the column kernels' signature
 * with a work space of wide_mode: 0 the widest blocks, 1 blocks of 40
 * columns (misaligned by a float), 2 none. */
static optic_f32_reduce_cols_work_fn wide_fn;
static int wide_mode;

static void wide_with_work(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  const size_t levels = optic_f32_reduce_cols_work_floats(r, 1) - OPTIC_REDUCE_LANES; /* rows beyond the lanes */
  const size_t wf = wide_mode == 0 ? optic_f32_reduce_cols_work_floats(r, w) : (OPTIC_REDUCE_LANES + levels) * 40;
  float *work = wide_mode == 2 ? NULL : malloc((wf + 1) * sizeof(float));
  if (wide_mode != 2 && work == NULL) {
    OT_CHECK(false, "out of memory");
    return;
  }
  wide_fn(op, r, w, x, stride, y, work ? work + (wide_mode == 1) : NULL, work ? wf : 0);
  free(work);
}

static void wide_isa(optic_isa isa) {
  static const size_t rows[] = {0, 1, 2, 7, 63, 64, 65, 255, 256, 257, 1000, 1023, 1024, 1025, 2049, 4096};
  static const size_t cols[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000};
  if (!optic_isa_built(isa) || kt_skip_isa(isa)) return;
  const optic_reduce_kernels *k = optic_reduce_kernels_for(isa);
  OT_CHECK(k != NULL && k->cols_wide != NULL);
  if (k == NULL || k->cols_wide == NULL) return;
  wide_fn = k->cols_wide;
  kt_rng rng = {0x3a1de000u + (uint64_t)isa};
  bool ok = true;
  for (size_t i = 0; ok && i < sizeof rows / sizeof rows[0]; i++) {
    for (size_t j = 0; ok && j < sizeof cols / sizeof cols[0]; j++) {
      const size_t r = rows[i], w = cols[j];
      for (wide_mode = 0; ok && wide_mode < 3; wide_mode++) {
        if (r * w > 1100000 && wide_mode > 0) continue; /* the widest blocks only: the others add time */
        ok = one_shape(isa, wide_with_work, &rng, r, w, 0, 0) &&
             (r * w > 300000 || one_shape(isa, wide_with_work, &rng, r, w, 5, 1 + (i + j) % 15));
      }
    }
  }
}

static void wide_all(void) {
  wide_isa(OPTIC_ISA_SCALAR);
  wide_isa(OPTIC_ISA_AVX2);
  wide_isa(OPTIC_ISA_AVX512);
}

static void cols_scalar(void) { check_isa(OPTIC_ISA_SCALAR); }
static void cols_avx2(void) { check_isa(OPTIC_ISA_AVX2); }
static void cols_avx512(void) { check_isa(OPTIC_ISA_AVX512); }

/* The public entry points (dispatching, with and without work space) agree
 * with the generic kernel on a shape the ISA kernels take and a wide one. */
static void dispatch_same_bits(void) {
  static const size_t shapes[][2] = {{127, 125}, {65, 17}, {1000, 1024}, {2049, 40}, {4096, 300}};
  kt_rng rng = {77};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const size_t r = shapes[s][0], w = shapes[s][1], n = r * w;
    float *x = malloc(n * sizeof(float)), *a = malloc(w * sizeof(float)), *b = malloc(w * sizeof(float));
    const size_t wf = optic_f32_reduce_cols_work_floats(r, w);
    float *work = malloc(wf * sizeof(float));
    OT_CHECK(x && a && b && work);
    for (int op = 0; x && a && b && work && op < OPTIC_REDUCE_OP_COUNT; op++) {
      fill(&rng, (optic_reduce_op)op, x, n, r);
      optic_f32_reduce_cols__scalar((optic_reduce_op)op, r, w, x, w, a);
      optic_f32_reduce_cols((optic_reduce_op)op, r, w, x, w, b);
      same_cols("optic_f32_reduce_cols", (optic_reduce_op)op, optic_isa_selected(), r, w, w, 0, b, a);
      optic_f32_reduce_cols_work((optic_reduce_op)op, r, w, x, w, b, work, wf);
      same_cols("optic_f32_reduce_cols_work", (optic_reduce_op)op, optic_isa_selected(), r, w, w, 0, b, a);
    }
    free(x), free(a), free(b), free(work);
  }
}

static const ot_case cases[] = {
    {"cols_scalar", cols_scalar}, {"cols_avx2", cols_avx2},
    {"cols_avx512", cols_avx512}, {"dispatch_same_bits", dispatch_same_bits},
    {"cols_wide", wide_all},
};
OT_MAIN(cases)
