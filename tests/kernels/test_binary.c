/* Binary f32 kernels: every (op, ISA) entry of kernels/list/binary.inc against
 * the naive reference, over edge sizes, misaligned starts and in place, with
 * guards after every output. Tolerance: add/sub/mul/div/max/min must match
 * bitwise (IEEE ops are exactly rounded); pow within 2 ULP of the double-
 * precision reference rounded to float, and whenever either result is NaN,
 * +-inf or +-0 both must be the same class and sign. Inputs include +-0,
 * +-inf, NaN and subnormals; pow's cover C powf's special cases (a grid of
 * special bases x special exponents, negative bases with integer and
 * non-integer exponents, 0^negative, +-inf, NaN, x^0, 1^y), bases over the
 * whole float range with exponents that overflow to inf and underflow through
 * the subnormals to 0, and bases near 1 with huge exponents. */
#include "kernels/binary.h"
#include "kernels/stream.h"
#include "tests/kernels/kernel_test.h"

static uint32_t tolerance_ulp(optic_binary_op op) { return op == OPTIC_BINARY_POW ? 2 : 0; }

/* C powf's special cases come from these (every pair is checked). */
static const float special_a[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN,   1.0f,   -1.0f,      0.5f,        -0.5f,
                                  2.0f, -2.0f, 1e-40f,   -1e-40f,   3e38f, -3e38f, 1.0000001f, 0.99999994f, -7.5f};
static const float special_b[] = {0.0f,        -0.0f, INFINITY, -INFINITY, NAN,    1.0f,        -1.0f,
                                  2.0f,        3.0f,  -3.0f,    0.5f,      -0.5f,  16777215.0f, -16777215.0f,
                                  16777216.0f, 1e10f, -1e10f,   2.5f,      127.0f, -149.0f,     1e-10f};
#define N_SPECIAL_A (sizeof special_a / sizeof special_a[0])
#define N_SPECIAL_B (sizeof special_b / sizeof special_b[0])

/* One pow operand pair from a mix of regimes. */
static void pow_pair(kt_rng *r, float *a, float *b) {
  switch (kt_next(r) % 6) {
    case 0: /* the original moderate range */ *a = kt_uniform(r, 0.0f, 8.0f), *b = kt_uniform(r, -6.0f, 6.0f); break;
    case 1: { /* |a| anywhere in the float range, b with overflow and underflow */
      uint32_t bits = (uint32_t)(kt_next(r) % 0x7f800000u);
      memcpy(a, &bits, 4);
      *b = kt_uniform(r, -4.0f, 4.0f);
      break;
    }
    case 2: /* negative base, integer exponent (sign from parity) */
      *a = kt_uniform(r, -12.0f, 0.0f), *b = (float)((int)(kt_next(r) % 81) - 40);
      break;
    case 3: /* negative base, non-integer exponent: NaN */
      *a = kt_uniform(r, -12.0f, 0.0f), *b = kt_uniform(r, -6.0f, 6.0f);
      break;
    case 4: /* base near 1, huge exponent: needs log2 far below float precision */
      *a = 1.0f + kt_uniform(r, -1e-3f, 1e-3f), *b = kt_uniform(r, -9e4f, 9e4f);
      break;
    default:
      *a = special_a[kt_next(r) % N_SPECIAL_A];
      *b = special_b[kt_next(r) % N_SPECIAL_B];
      break;
  }
}

static void fill_operands(kt_rng *r, optic_binary_op op, float *a, float *b, size_t n) {
  if (op == OPTIC_BINARY_POW) {
    for (size_t i = 0; i < n; i++) pow_pair(r, &a[i], &b[i]);
    if (n > 2) a[0] = -2.0f, b[0] = 3.0f, a[1] = 0.0f, b[1] = -1.0f; /* odd power of a negative; 0^-1 = inf */
  } else {
    kt_fill(r, a, n, -100.0f, 100.0f, 1);
    kt_fill(r, b, n, -100.0f, 100.0f, 1);
  }
}

/* Exponents for the vs kernels, cycled through the cases. */
static const float pow_scalars[] = {0.5f,      2.0f, 3.0f,  -1.0f,  -2.5f, 0.0f,        -0.0f, INFINITY,
                                    -INFINITY, NAN,  1e-3f, 100.0f, -3.0f, 16777215.0f, 1.7f};

static bool is_class_value(float v) { return isnan(v) || isinf(v) || v == 0.0f; }

static bool close_enough(optic_binary_op op, float got, float want) {
  uint32_t tol = tolerance_ulp(op);
  if (tol == 0 || is_class_value(got) || is_class_value(want)) return kt_same(got, want);
  return kt_ulp_distance(got, want) <= tol;
}

/* Every special base with every special exponent, at every lane position. */
static void check_pow_grid(optic_f32_vbinary_fn vv, optic_f32_vbinaryc_fn vs, const char *fn_name) {
  enum { N = N_SPECIAL_A * N_SPECIAL_B };
  float a[N], b[N], got[N], want[N];
  for (size_t i = 0; i < N; i++) a[i] = special_a[i % N_SPECIAL_A], b[i] = special_b[i / N_SPECIAL_A];
  for (size_t start = 0; start < N; start += N_SPECIAL_A) {
    size_t len = vv ? N - start : N_SPECIAL_A;
    if (vv) {
      vv(len, a + start, b + start, got + start);
      optic_ref_f32_binary(OPTIC_BINARY_POW, len, a + start, b + start, want + start);
    } else {
      vs(len, a + start, b[start], got + start);
      optic_ref_f32_binaryc(OPTIC_BINARY_POW, len, a + start, b[start], want + start);
    }
    for (size_t i = start; i < start + len; i++) {
      OT_CHECK(close_enough(OPTIC_BINARY_POW, got[i], want[i]), "%s pow(%.9g, %.9g) = %.9g, want %.9g", fn_name, a[i],
               b[i], got[i], want[i]);
    }
  }
}

/* mode 0: y separate; 1: y == a; 2: y == b (vv only). `stream`: the pass
 * runs with the streaming-store threshold at 0, so every call takes the
 * streaming path of the kernels that have one (kernels/stream.h). */
static void check_sweep(optic_binary_op op, optic_isa isa, optic_f32_vbinary_fn vv, optic_f32_vbinaryc_fn vs,
                        const char *fn_name, int stream) {
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0x9E3779B97F4A7C15ull ^ (uint64_t)op};
  int failures = 0;
  size_t scalar_index = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      for (int mode = 0; mode < (vv ? 3 : 2); mode++) {
        size_t off = kt_offsets[oi];
        kt_buf a = kt_buf_make(n, off), b = kt_buf_make(n, (off + 1) % 4), y = kt_buf_make(n, off);
        fill_operands(&rng, op, a.p, b.p, n);
        float s = kt_uniform(&rng, -3.0f, 3.0f);
        if (op == OPTIC_BINARY_POW) s = pow_scalars[scalar_index++ % (sizeof pow_scalars / sizeof pow_scalars[0])];
        float *want = malloc((n + 1) * sizeof(float));
        float *a_in = malloc((n + 1) * sizeof(float)), *b_in = malloc((n + 1) * sizeof(float));
        memcpy(a_in, a.p, n * sizeof(float)), memcpy(b_in, b.p, n * sizeof(float));
        if (vv) {
          optic_ref_f32_binary(op, n, a.p, b.p, want);
        } else {
          optic_ref_f32_binaryc(op, n, a.p, s, want);
        }
        float *dst = mode == 1 ? a.p : mode == 2 ? b.p : y.p;
        if (vv) {
          vv(n, a.p, b.p, dst);
        } else {
          vs(n, a.p, s, dst);
        }
        for (size_t i = 0; i < n; i++) {
          if (!close_enough(op, dst[i], want[i])) {
            OT_CHECK(false,
                     "%s n=%zu offset=%zu mode=%d stream=%d: a=%.9g b=%.9g s=%.9g: y[%zu]=%.9g want %.9g, ulp %u",
                     fn_name, n, off, mode, stream, a_in[i], b_in[i], s, i, dst[i], want[i],
                     kt_ulp_distance(dst[i], want[i]));
            failures++;
            break;
          }
        }
        OT_CHECK(kt_buf_guard_ok(&a) && kt_buf_guard_ok(&b) && kt_buf_guard_ok(&y),
                 "%s n=%zu offset=%zu mode=%d stream=%d wrote past the end", fn_name, n, off, mode, stream);
        free(want), free(a_in), free(b_in);
        kt_buf_free(&a), kt_buf_free(&b), kt_buf_free(&y);
      }
    }
  }
}

static void check(optic_binary_op op, optic_isa isa, optic_f32_vbinary_fn vv, optic_f32_vbinaryc_fn vs,
                  const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  if (op == OPTIC_BINARY_POW) check_pow_grid(vv, vs, fn_name);
  size_t saved = optic_stream_threshold_set(SIZE_MAX);
  check_sweep(op, isa, vv, vs, fn_name, 0);
  optic_stream_threshold_set(0);
  check_sweep(op, isa, vv, vs, fn_name, 1);
  optic_stream_threshold_set(saved);
}

#define X_VV(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_BINARY_##op, OPTIC_ISA_##isa, fn, NULL, #fn); }
#define X_VS(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_BINARY_##op, OPTIC_ISA_##isa, NULL, fn, #fn); }
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_binary_kernels *t = optic_binary_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    for (int op = 0; op < OPTIC_BINARY_OP_COUNT; op++) {
      OT_CHECK(t->vv[op] != NULL && t->vs[op] != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i),
               optic_binary_op_name((optic_binary_op)op));
      OT_CHECK(t->isa_of_vv[op] == OPTIC_ISA_SCALAR || t->isa_of_vv[op] == (optic_isa)i);
    }
  }
#define X_VV(op, isa, fn) \
  OT_CHECK(optic_binary_kernels_for(OPTIC_ISA_##isa)->vv[OPTIC_BINARY_##op] == fn, #fn " not in its table");
#define X_VS(op, isa, fn) \
  OT_CHECK(optic_binary_kernels_for(OPTIC_ISA_##isa)->vs[OPTIC_BINARY_##op] == fn, #fn " not in its table");
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_binary_kernels_get() == optic_binary_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_binary_kernels_get()->vv[OPTIC_BINARY_ADD] == optic_f32_vadd__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_binary_kernels_get() == optic_binary_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_VV(op, isa, fn) {#fn, test_##fn},
#define X_VS(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
