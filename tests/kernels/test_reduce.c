/* Reduction f32 kernels: every (op, ISA) entry of kernels/list/reduce.inc
 * against the naive double-precision reference, over edge sizes (0, 1, tiles
 * and 64-lane steps +-1, leaf sizes 1024 +-1, large odd sizes), misaligned
 * starts, axis shapes with outer/inner of 1, tile-1, tile, tile+1 and odd
 * sizes, guards after every output, and special values.
 * Tolerances (u = 2^-24, gamma_k = k u / (1 - k u), D as in kernels/reduce.h):
 *  - sum:   |got - ref| <= gamma_D sum|x| + n 2^-52 sum|x| (the reference's own
 *           double rounding), and also <= 2.5 log2(n + 1) FLT_EPSILON sum|x| + the same;
 *  - sumsq: the same with D + 1 and sum x^2, plus n 2^-150 for underflowed squares;
 *  - prod:  |got - ref| <= gamma_(n-1) |ref| + n 2^-52 |ref| (data kept in range);
 *  - max/min: bitwise equal to the reference fold, NaN bits included;
 *  - a NaN reference needs a NaN, an infinite one the same infinity, a zero
 *    one a zero of the same sign;
 *  - every entry bitwise equal to the scalar entry of its op (any NaN = any NaN). */
#include <float.h>

#include "kernels/reduce.h"
#include "tests/kernels/kernel_test.h"

#define NVARIANTS 4

static const optic_reduce_kernels *scalar_table(void) { return optic_reduce_kernels_for(OPTIC_ISA_SCALAR); }

static unsigned ceil_log2(size_t m) {
  unsigned d = 0;
  while (d < 63 && ((size_t)1 << d) < m) d++;
  return d;
}
/* Rounded operations on one element's path (kernels/reduce.h). */
static size_t depth_contiguous(size_t n) {
  if (n <= 1) return 0;
  size_t d = 21 + ceil_log2((n + OPTIC_REDUCE_BLOCK - 1) / OPTIC_REDUCE_BLOCK);
  return d < n - 1 ? d : n - 1;
}
static size_t depth_axis(size_t r) {
  if (r <= 1) return 0;
  size_t d = 15 + ceil_log2((r + OPTIC_REDUCE_AXIS_BLOCK - 1) / OPTIC_REDUCE_AXIS_BLOCK);
  return d < r - 1 ? d : r - 1;
}
static double gamma_k(size_t k) {
  const double u = FLT_EPSILON / 2.0;
  return (double)k * u / (1.0 - (double)k * u);
}

/* Checks got against the reference for n values reduced along a path of
 * depth rounded operations; abs_sum is sum |x| (sum), sum x^2 (sumsq) or
 * |ref| (prod). Returns false (and reports) on a mismatch. */
static bool check_value(optic_reduce_op op, float got, double ref, size_t n, size_t depth, double abs_sum,
                        const char *what) {
  if (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) {
    float want = (float)ref;
    if (memcmp(&got, &want, sizeof got) != 0) {
      uint32_t g, w;
      memcpy(&g, &got, 4), memcpy(&w, &want, 4);
      OT_CHECK(false, "%s: got %.9g (0x%08x), want %.9g (0x%08x)", what, got, g, want, w);
      return false;
    }
    return true;
  }
  bool ok;
  double tol = 0, c_form = 0;
  if (isnan(ref)) {
    ok = isnan(got);
  } else if (isinf(ref)) {
    ok = (double)got == ref;
  } else if (ref == 0.0 && got == 0.0f) {
    ok = !signbit(ref) == !signbit(got);
  } else {
    const double ref_err = (double)n * 0x1p-52 * abs_sum;
    if (op == OPTIC_REDUCE_PROD) {
      tol = gamma_k(n > 0 ? n - 1 : 0) * abs_sum + ref_err;
      c_form = tol;
    } else {
      const size_t d = depth + (op == OPTIC_REDUCE_SUMSQ ? 1 : 0);
      const double underflow = op == OPTIC_REDUCE_SUMSQ ? (double)n * 0x1p-150 : 0.0;
      tol = gamma_k(d) * abs_sum + ref_err + underflow;
      c_form = OPTIC_REDUCE_SUM_ERROR_C * log2((double)n + 1.0) * FLT_EPSILON * abs_sum + ref_err + underflow;
    }
    const double err = fabs((double)got - ref);
    ok = isfinite(got) && err <= tol && err <= c_form;
  }
  if (!ok) OT_CHECK(false, "%s: got %.9g, want %.17g, tolerance %.3g (c form %.3g)", what, got, ref, tol, c_form);
  return ok;
}

/* Test data. Values stay where no intermediate overflows (prod: factors
 * 1 + [-a, a] with a ~ 3 / sqrt(len), so partial products stay near 1). */
static void fill(kt_rng *rng, optic_reduce_op op, int variant, float *x, size_t n, size_t len) {
  static const float finite_specials[] = {0.0f, -0.0f, 1e-40f, -1e-40f, FLT_MIN, -FLT_MIN};
  static const float nonfinite[] = {INFINITY, -INFINITY, NAN};
  switch (op) {
    case OPTIC_REDUCE_MAX:
    case OPTIC_REDUCE_MIN: {
      const bool is_max = op == OPTIC_REDUCE_MAX;
      if (variant == 0) {
        kt_fill(rng, x, n, -100.0f, 100.0f, 1);
      } else if (variant == 1) {
        kt_fill(rng, x, n, -100.0f, 100.0f, 0);
        for (size_t i = 0; i < n; i += 1 + (size_t)(kt_next(rng) % 97)) {
          static const float s[] = {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e-40f};
          x[i] = s[kt_next(rng) % 7];
        }
      } else if (variant == 2) { /* the extremum is zero: its sign is the last zero's */
        for (size_t i = 0; i < n; i++) {
          const float v = kt_uniform(rng, 1.0f, 100.0f);
          x[i] = (kt_next(rng) % 5) == 0 ? ((kt_next(rng) & 1) ? 0.0f : -0.0f) : (is_max ? -v : v);
        }
      } else { /* two NaNs with different payloads: the first one's bits */
        kt_fill(rng, x, n, -100.0f, 100.0f, 0);
        if (n > 0) {
          uint32_t a = 0x7fc00001u, b = 0xffc00002u;
          size_t i = (size_t)(kt_next(rng) % n), j = (size_t)(kt_next(rng) % n);
          memcpy(&x[j], &b, 4);
          memcpy(&x[i], &a, 4);
        }
      }
      return;
    }
    case OPTIC_REDUCE_PROD: {
      double a = 3.0 / sqrt((double)(len ? len : 1));
      if (a > 0.5) a = 0.5;
      for (size_t i = 0; i < n; i++) {
        float v = 1.0f + kt_uniform(rng, (float)-a, (float)a);
        x[i] = (variant != 3 && (kt_next(rng) & 1)) ? -v : v;
      }
      break;
    }
    default: {
      const float hi = op == OPTIC_REDUCE_SUM ? 100.0f : 10.0f;
      kt_fill(rng, x, n, variant == 1 ? 0.0f : -hi, variant == 1 ? 1.0f : hi, 0);
      if (variant == 1) return;
      break;
    }
  }
  /* sum, sumsq: 2 adds zeros and subnormals, 3 infinities and NaN;
   * prod: 1 adds signed zeros, 2 infinities and NaN, 3 is positive */
  const bool prod = op == OPTIC_REDUCE_PROD;
  for (size_t i = 0; i < n; i++) {
    const uint64_t z = kt_next(rng);
    if (!prod && variant == 2 && (z & 15) == 0) x[i] = finite_specials[(z >> 8) % 6];
    if (prod && variant == 1 && (z & 63) == 0) x[i] = (z >> 9) & 1 ? 0.0f : -0.0f;
    if (variant == (prod ? 2 : 3) && (z & 255) == 0) x[i] = nonfinite[(z >> 10) % 3];
  }
}

/* sum |x| (sum, sumsq: of squares) over n values at stride. */
static double abs_sum(optic_reduce_op op, size_t n, const float *x, size_t stride) {
  double s = 0;
  for (size_t k = 0; k < n; k++) {
    double v = fabs((double)x[k * stride]);
    s += op == OPTIC_REDUCE_SUMSQ ? v * v : v;
  }
  return s;
}

static void check_contiguous(optic_reduce_op op, optic_isa isa, optic_f32_reduce_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[48];
  size_t ns = kt_sizes(isa, sizes, 32);
  static const size_t extra[] = {63,   64,   65,   127,  128,  129,   1023,          1024,
                                 1025, 2047, 2048, 2049, 3077, 65537, (1u << 20) + 3};
  for (size_t e = 0; e < sizeof extra / sizeof *extra; e++) sizes[ns++] = extra[e];
  const optic_f32_reduce_fn scalar = scalar_table()->r[op];
  kt_rng rng = {0x5DEECE66Dull ^ ((uint64_t)op << 32) ^ (uint64_t)isa};
  int failures = 0;
  for (size_t si = 0; si < ns && failures < 5; si++) {
    const size_t n = sizes[si];
    for (size_t oi = n > 100000 ? 1 : 0; oi < (n > 100000 ? 2 : kt_noffsets); oi++) { /* large: one offset */
      const size_t off = kt_offsets[oi];
      kt_buf x = kt_buf_make(n, off);
      for (int variant = 0; variant < NVARIANTS; variant++) {
        fill(&rng, op, variant, x.p, n, n);
        const double ref = optic_ref_f32_reduce(op, n, x.p);
        const float got = fn(n, x.p);
        char what[160];
        snprintf(what, sizeof what, "%s n=%zu offset=%zu variant=%d", name, n, off, variant);
        const double mag = op == OPTIC_REDUCE_PROD ? fabs(ref) : abs_sum(op, n, x.p, 1);
        if (!check_value(op, got, ref, n, depth_contiguous(n), mag, what)) failures++;
        const float want_scalar = scalar(n, x.p);
        if (!kt_same(got, want_scalar)) {
          OT_CHECK(false, "%s: %.9g differs from the scalar kernel's %.9g", what, got, want_scalar);
          failures++;
        }
      }
      OT_CHECK(kt_buf_guard_ok(&x), "%s n=%zu offset=%zu: input guard overwritten", name, n, off);
      kt_buf_free(&x);
    }
    if (n > 4097) continue;
    /* rows form: 3 rows at a stride that misaligns each row differently */
    const size_t rows = 3, stride = n + 5;
    kt_buf x = kt_buf_make(rows * stride, 1), y = kt_buf_make(rows, 3);
    fill(&rng, op, 1, x.p, rows * stride, n);
    optic_f32_reduce_rows(fn, rows, n, x.p, stride, y.p);
    for (size_t j = 0; j < rows; j++) {
      OT_CHECK(kt_same(y.p[j], fn(n, x.p + j * stride)), "%s rows n=%zu: row %zu", name, n, j);
    }
    OT_CHECK(kt_buf_guard_ok(&y), "%s rows n=%zu wrote past the end", name, n);
    kt_buf_free(&x), kt_buf_free(&y);
  }
}

/* Inner sizes around both column tiles of an ISA (one vector, and the
 * 4-vector tile; scalar tiles 16 columns) plus odd sizes. */
static size_t axis_inner_sizes(optic_isa isa, size_t *out) {
  size_t w = optic_isa_vector_floats(isa), t = isa == OPTIC_ISA_SCALAR ? 16 : 4 * w, c = 0;
  const size_t cand[] = {1, w > 1 ? w - 1 : 2, w, w + 1, t - 1, t, t + 1, 2 * t + 3, 37, 100};
  for (size_t i = 0; i < sizeof cand / sizeof *cand; i++) {
    bool dup = false;
    for (size_t j = 0; j < c; j++) dup |= out[j] == cand[i];
    if (!dup) out[c++] = cand[i];
  }
  return c;
}

/* One axis case; returns false on the first mismatch. */
static bool axis_case(optic_reduce_op op, optic_f32_reduce_axis_fn fn, const char *name, kt_rng *rng, size_t outer,
                      size_t r, size_t inner, size_t off, int variant) {
  const optic_f32_reduce_axis_fn scalar = scalar_table()->rd[op];
  const size_t nx = outer * r * inner, ny = outer * inner;
  kt_buf x = kt_buf_make(nx, off), y = kt_buf_make(ny, (off + 2) % 4), ys = kt_buf_make(ny, 0);
  fill(rng, op, variant, x.p, nx, r);
  double *ref = malloc((ny + 1) * sizeof *ref);
  optic_ref_f32_reduce_axis(op, outer, r, inner, x.p, ref);
  fn(outer, r, inner, x.p, y.p);
  scalar(outer, r, inner, x.p, ys.p);
  bool ok = true;
  char what[200];
  for (size_t j = 0; j < ny && ok; j++) {
    const size_t o = j / inner, i = j % inner;
    snprintf(what, sizeof what, "%s outer=%zu r=%zu inner=%zu offset=%zu variant=%d: y[%zu]", name, outer, r, inner,
             off, variant, j);
    const double mag = op == OPTIC_REDUCE_PROD ? fabs(ref[j]) : abs_sum(op, r, x.p + o * r * inner + i, inner);
    ok = check_value(op, y.p[j], ref[j], r, depth_axis(r), mag, what);
    if (ok && !kt_same(y.p[j], ys.p[j])) {
      OT_CHECK(false, "%s: %.9g differs from the scalar kernel's %.9g", what, y.p[j], ys.p[j]);
      ok = false;
    }
  }
  if (!kt_buf_guard_ok(&y)) {
    OT_CHECK(false, "%s outer=%zu r=%zu inner=%zu offset=%zu wrote past the end", name, outer, r, inner, off);
    ok = false;
  }
  free(ref);
  kt_buf_free(&x), kt_buf_free(&y), kt_buf_free(&ys);
  return ok;
}

static void check_axis(optic_reduce_op op, optic_isa isa, optic_f32_reduce_axis_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  size_t inners[16];
  const size_t ni = axis_inner_sizes(isa, inners);
  static const size_t rs[] = {0, 1, 2, 15, 16, 17, 31, 33, 100, 257};
  static const size_t outers[] = {1, 2, 3};
  kt_rng rng = {0x2545F4914F6CDD1Dull ^ ((uint64_t)op << 40) ^ (uint64_t)isa};
  int failures = 0, turn = 0;
  for (size_t a = 0; a < 3; a++) {
    for (size_t b = 0; b < sizeof rs / sizeof *rs; b++) {
      for (size_t c = 0; c < ni && failures < 5; c++) {
        for (int variant = 0; variant < NVARIANTS; variant++, turn++) {
          const size_t off = kt_offsets[(size_t)turn % kt_noffsets];
          if (!axis_case(op, fn, name, &rng, outers[a], rs[b], inners[c], off, variant)) failures++;
        }
      }
    }
  }
  /* a long axis: many leaves, a deep tree */
  for (int variant = 0; variant < NVARIANTS && failures < 5; variant++) {
    if (!axis_case(op, fn, name, &rng, 1, 70001, 5, 1, variant)) failures++;
  }
}

#define X_R(op, isa, fn) \
  static void test_##fn(void) { check_contiguous(OPTIC_REDUCE_##op, OPTIC_ISA_##isa, fn, #fn); }
#define X_RD(op, isa, fn) \
  static void test_##fn(void) { check_axis(OPTIC_REDUCE_##op, OPTIC_ISA_##isa, fn, #fn); }
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD

/* 2^24 ones followed by 2^22 halves: the exact sum 2^24 + 2^21 = 18874368 is
 * a float, but a naive float loop sticks at 2^24 = 16777216 (each + 1 or
 * + 0.5 rounds back to 2^24). Every sum kernel must return it exactly, and
 * sumsq 2^24 + 2^20. Also 2^24 + 1 ones: the true 16777217 is not a float;
 * correctly rounded (ties to even) it is 16777216, which the kernels return
 * (and which a naive loop happens to return too, so it shows nothing). */
static void sum_of_2pow24_ones(void) {
  const size_t ones = (size_t)1 << 24, n = ones + ((size_t)1 << 22);
  float *x = malloc(n * sizeof *x);
  if (x == NULL) {
    OT_CHECK(false, "out of memory");
    return;
  }
  for (size_t i = 0; i < n; i++) x[i] = i < ones ? 1.0f : 0.5f;
  float naive = 0.0f;
  for (size_t i = 0; i < n; i++) naive += x[i];
  printf("  naive float loop: %.1f, exact: 18874368\n", naive);
  OT_CHECK(naive == 16777216.0f, "the naive loop was expected to be wrong (%.1f)", naive);
  float y = 0;
#define X_R(op, isa, fn)                                                                 \
  if (!kt_skip_isa(OPTIC_ISA_##isa) && OPTIC_REDUCE_##op == OPTIC_REDUCE_SUM) {          \
    OT_CHECK(fn(n, x) == 18874368.0f, #fn ": %.1f", fn(n, x));                           \
    OT_CHECK(fn(ones + 1, x) == 16777216.0f, #fn " 2^24+1 ones: %.1f", fn(ones + 1, x)); \
  }                                                                                      \
  if (!kt_skip_isa(OPTIC_ISA_##isa) && OPTIC_REDUCE_##op == OPTIC_REDUCE_SUMSQ) {        \
    OT_CHECK(fn(n, x) == 17825792.0f, #fn ": %.1f", fn(n, x));                           \
  }
#define X_RD(op, isa, fn)                                                       \
  if (!kt_skip_isa(OPTIC_ISA_##isa) && OPTIC_REDUCE_##op == OPTIC_REDUCE_SUM) { \
    fn(1, n, 1, x, &y);                                                         \
    OT_CHECK(y == 18874368.0f, #fn " over r = %zu: %.1f", n, y);                \
  }
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
  free(x);
}

/* Chunks of OPTIC_REDUCE_BLOCK * 2^k (axis: OPTIC_REDUCE_AXIS_BLOCK * 2^k
 * values of k) combined with optic_f32_reduce_combine reproduce one call
 * bitwise; max/min do for any chunk length. */
static bool same_result(optic_reduce_op op, float a, float b) {
  return (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) ? memcmp(&a, &b, 4) == 0 : kt_same(a, b);
}

static void split_reproduces_single_call(void) {
  enum { INNER = 21, MAX_PARTS = 512 };
  const size_t n = 13 * OPTIC_REDUCE_BLOCK + 77, r = 23 * OPTIC_REDUCE_AXIS_BLOCK + 5;
  kt_buf x = kt_buf_make(n, 1), xa = kt_buf_make(r * INNER, 0);
  kt_rng rng = {42};
  static float parts[MAX_PARTS], ys[MAX_PARTS * INNER];
  float yfull[INNER];
  for (int opi = 0; opi < OPTIC_REDUCE_OP_COUNT; opi++) {
    const optic_reduce_op op = (optic_reduce_op)opi;
    const bool extremum = op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN;
    for (int variant = 0; variant < NVARIANTS; variant++) {
      fill(&rng, op, variant, x.p, n, n);
      fill(&rng, op, variant, xa.p, r * INNER, r);
      for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
        const optic_reduce_kernels *t = optic_reduce_kernels_for((optic_isa)isa);
        if (t == NULL || !optic_isa_supported((optic_isa)isa)) continue;
        const char *isa_name = optic_isa_name((optic_isa)isa);
        const float whole = t->r[op](n, x.p);
        for (size_t c = extremum ? 37 : OPTIC_REDUCE_BLOCK; c <= 8 * OPTIC_REDUCE_BLOCK; c *= 2) {
          size_t np = 0;
          for (size_t i = 0; i < n; i += c) parts[np++] = t->r[op](n - i < c ? n - i : c, x.p + i);
          float y;
          optic_f32_reduce_combine(op, np, 1, parts, 1, &y);
          OT_CHECK(same_result(op, y, whole), "%s r%s variant %d chunk %zu: %.9g vs one call %.9g", isa_name,
                   optic_reduce_op_name(op), variant, c, y, whole);
        }
        t->rd[op](1, r, INNER, xa.p, yfull);
        for (size_t c = extremum ? 3 : OPTIC_REDUCE_AXIS_BLOCK; c <= 8 * OPTIC_REDUCE_AXIS_BLOCK; c *= 2) {
          size_t np = 0;
          for (size_t k = 0; k < r; k += c, np++) {
            t->rd[op](1, r - k < c ? r - k : c, INNER, xa.p + k * INNER, ys + np * INNER);
          }
          optic_f32_reduce_combine(op, np, INNER, ys, INNER, ys); /* in place into part 0 */
          for (size_t i = 0; i < INNER; i++) {
            OT_CHECK(same_result(op, ys[i], yfull[i]), "%s rd%s variant %d chunk %zu: column %zu %.9g vs %.9g",
                     isa_name, optic_reduce_op_name(op), variant, c, i, ys[i], yfull[i]);
          }
        }
      }
    }
    float id;
    optic_f32_reduce_combine(op, 0, 1, parts, 1, &id);
    const float want = optic_reduce_identity(op);
    OT_CHECK(memcmp(&id, &want, 4) == 0, "combine of nothing is the identity of %s", optic_reduce_op_name(op));
  }
  kt_buf_free(&x), kt_buf_free(&xa);
}

static void chunk_size(void) {
  OT_CHECK(optic_reduce_chunk_size(0, 4, OPTIC_REDUCE_BLOCK) == OPTIC_REDUCE_BLOCK);
  OT_CHECK(optic_reduce_chunk_size(100, 4, OPTIC_REDUCE_BLOCK) == OPTIC_REDUCE_BLOCK);
  OT_CHECK(optic_reduce_chunk_size(4096, 4, 1024) == 1024);
  OT_CHECK(optic_reduce_chunk_size(4097, 4, 1024) == 2048);
  OT_CHECK(optic_reduce_chunk_size(3 << 20, 3, 1024) == 1u << 20);
  OT_CHECK(optic_reduce_chunk_size((3 << 20) + 1, 3, 1024) == 1u << 21);
  OT_CHECK(optic_reduce_chunk_size(1000, 0, 16) == 16);
  OT_CHECK(optic_reduce_chunk_size(SIZE_MAX, 1, 16) > SIZE_MAX / 2);
  for (size_t n = 1; n < 100000; n = n * 3 + 1) {
    for (size_t p = 1; p <= 8; p++) {
      size_t c = optic_reduce_chunk_size(n, p, 16);
      OT_CHECK((n + c - 1) / c <= p && (c == 16 || (n + c / 2 - 1) / (c / 2) > p), "n=%zu parts=%zu chunk=%zu", n, p,
               c);
    }
  }
}

/* Identities, names, and zero-sign rules spelled out on tiny inputs. */
static void identities_and_zeros(void) {
  static const float want[OPTIC_REDUCE_OP_COUNT] = {0.0f, -INFINITY, INFINITY, 1.0f, 0.0f};
  const float one = 1.0f;
  for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
    const optic_reduce_kernels *t = optic_reduce_kernels_for((optic_isa)isa);
    if (t == NULL || !optic_isa_supported((optic_isa)isa)) continue;
    for (int op = 0; op < OPTIC_REDUCE_OP_COUNT; op++) {
      float got = t->r[op](0, &one), y[2] = {7, 7};
      OT_CHECK(memcmp(&got, &want[op], 4) == 0, "%s %s of nothing: %g", optic_isa_name((optic_isa)isa),
               optic_reduce_op_name((optic_reduce_op)op), got);
      t->rd[op](2, 0, 1, &one, y);
      OT_CHECK(memcmp(&y[0], &want[op], 4) == 0 && memcmp(&y[1], &want[op], 4) == 0, "%s rd%s with r = 0",
               optic_isa_name((optic_isa)isa), optic_reduce_op_name((optic_reduce_op)op));
      OT_CHECK(memcmp(&want[op], &(float){optic_reduce_identity((optic_reduce_op)op)}, 4) == 0);
    }
    const float pz_mz[2] = {0.0f, -0.0f}, mz_pz[2] = {-0.0f, 0.0f}, ms[3] = {-0.0f, -0.0f, -0.0f};
    OT_CHECK(signbit(t->r[OPTIC_REDUCE_MAX](2, pz_mz)) && !signbit(t->r[OPTIC_REDUCE_MAX](2, mz_pz)),
             "%s max: last zero's sign", optic_isa_name((optic_isa)isa));
    OT_CHECK(signbit(t->r[OPTIC_REDUCE_MIN](2, pz_mz)) && !signbit(t->r[OPTIC_REDUCE_MIN](2, mz_pz)),
             "%s min: last zero's sign", optic_isa_name((optic_isa)isa));
    OT_CHECK(!signbit(t->r[OPTIC_REDUCE_SUM](3, ms)), "%s sum of -0s is +0 (identity +0)",
             optic_isa_name((optic_isa)isa));
    OT_CHECK(signbit(t->r[OPTIC_REDUCE_PROD](3, ms)), "%s prod of three -0s is -0", optic_isa_name((optic_isa)isa));
  }
  OT_CHECK(strcmp(optic_reduce_op_name(OPTIC_REDUCE_SUMSQ), "sumsq") == 0);
  OT_CHECK(strcmp(optic_reduce_op_name(OPTIC_REDUCE_OP_COUNT), "invalid") == 0);
}

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_reduce_kernels *t = optic_reduce_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    for (int op = 0; op < OPTIC_REDUCE_OP_COUNT; op++) {
      OT_CHECK(t->r[op] != NULL && t->rd[op] != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i),
               optic_reduce_op_name((optic_reduce_op)op));
      OT_CHECK(t->isa_of_r[op] == OPTIC_ISA_SCALAR || t->isa_of_r[op] == (optic_isa)i);
      OT_CHECK(t->isa_of_rd[op] == OPTIC_ISA_SCALAR || t->isa_of_rd[op] == (optic_isa)i);
    }
  }
#define X_R(op, isa, fn) \
  OT_CHECK(optic_reduce_kernels_for(OPTIC_ISA_##isa)->r[OPTIC_REDUCE_##op] == fn, #fn " not in its table");
#define X_RD(op, isa, fn) \
  OT_CHECK(optic_reduce_kernels_for(OPTIC_ISA_##isa)->rd[OPTIC_REDUCE_##op] == fn, #fn " not in its table");
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_reduce_kernels_get() == optic_reduce_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_reduce_kernels_get()->r[OPTIC_REDUCE_SUM] == optic_f32_rsum__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_reduce_kernels_get() == optic_reduce_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_R(op, isa, fn) {#fn, test_##fn},
#define X_RD(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
    {"sum_of_2pow24_ones", sum_of_2pow24_ones},
    {"split_reproduces_single_call", split_reproduces_single_call},
    {"chunk_size", chunk_size},
    {"identities_and_zeros", identities_and_zeros},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
