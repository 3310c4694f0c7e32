/* Unary f32 kernels: every (op, ISA) entry of kernels/list/unary.inc against
 * the naive reference (each op in double with libm, rounded to float).
 * Tolerance: the op's max_ulp from OPTIC_UNARY_OP_LIST in kernels/unary.h
 * (0 = bitwise; negate/abs/sqrt/square/floor/ceil/sign/relu are exact;
 * exp, log, rsqrt, erf, expm1, log1p 1 ULP; tanh, logistic 2 ULP); whenever the kernel's or the
 * reference's result is NaN, +-inf or +-0 the two must be the same class and
 * sign (kt_same), whatever the tolerance.
 * Each entry is checked over edge sizes, misaligned starts and in place with
 * guards, on random data with special values, on a list of edge inputs (+-0,
 * subnormals, +-inf, NaN, exp's overflow/underflow thresholds, tiny tanh
 * arguments, saturation), and on a strided sweep over all 2^32 float bit
 * patterns: every SWEEP_STRIDE-th one (4099 by default, about 1M inputs).
 * OPTIC_UNARY_SWEEP_STRIDE=1 in the environment makes the sweep exhaustive
 * (minutes per entry), any other positive value sets the stride. */
#include <float.h>

#include "kernels/stream.h"
#include "kernels/unary.h"
#include "tests/kernels/kernel_test.h"

#define SWEEP_STRIDE 4099u

static bool is_class_value(float v) { return isnan(v) || isinf(v) || v == 0.0f; }

static bool close_enough(optic_unary_op op, float got, float want) {
  uint32_t tol = optic_unary_max_ulp(op);
  if (tol == 0 || is_class_value(got) || is_class_value(want)) return kt_same(got, want);
  return kt_ulp_distance(got, want) <= tol;
}

/* Random inputs where each op is interesting. */
static void op_range(optic_unary_op op, float *lo, float *hi) {
  switch (op) {
    case OPTIC_UNARY_EXP: *lo = -110.0f, *hi = 95.0f; break;
    case OPTIC_UNARY_LOG:
    case OPTIC_UNARY_RSQRT:
    case OPTIC_UNARY_SQRT: *lo = -1.0f, *hi = 1000.0f; break;
    case OPTIC_UNARY_TANH: *lo = -12.0f, *hi = 12.0f; break;
    case OPTIC_UNARY_LOGISTIC: *lo = -110.0f, *hi = 110.0f; break;
    case OPTIC_UNARY_ERF: *lo = -5.0f, *hi = 5.0f; break;
    case OPTIC_UNARY_EXPM1: *lo = -20.0f, *hi = 95.0f; break;
    case OPTIC_UNARY_LOG1P: *lo = -1.5f, *hi = 100.0f; break;
    default: *lo = -100.0f, *hi = 100.0f; break;
  }
}

/* Inputs at the edges of every op's domain and range. */
static const float edge_inputs[] = {
    0.0f,
    -0.0f,
    INFINITY,
    -INFINITY,
    NAN,
    -NAN,
    1.0f,
    -1.0f,
    0.5f,
    -0.5f,
    2.0f,
    1.5f,
    -1.5f,
    2.5f,
    -2.5f,
    FLT_MIN,
    -FLT_MIN,
    1e-40f,
    -1e-40f,
    1.4e-45f,
    -1.4e-45f,
    0x1.fffffcp-127f,
    FLT_MAX,
    -FLT_MAX,
    /* exp: FLT_MAX boundary (ln FLT_MAX = 88.7228), FLT_MIN boundary (-87.3365),
     * smallest subnormal (-103.279) and rounding to 0 (ln 2^-150 = -103.972) */
    88.7228317f,
    88.7228394f,
    88.72284f,
    88.8f,
    89.0f,
    100.0f,
    -87.3365402f,
    -87.34f,
    -100.0f,
    -103.27f,
    -103.28f,
    -103.9720764f,
    -103.9721f,
    -103.98f,
    -104.0f,
    -150.0f,
    /* values near 1 (log's cancellation), subnormal and huge arguments */
    0x1.000002p0f,
    0x1.fffffep-1f,
    0.70710677f,
    1.41421354f,
    1e-30f,
    1e30f,
    3e38f,
    /* tanh: tiny arguments (tanh(x) ~ x), the polynomial/scale seams, saturation
     * (tanh(x) rounds to 1 from 9.011), logistic saturation */
    1e-20f,
    -1e-20f,
    1e-10f,
    2.44e-4f,
    -2.44e-4f,
    0.0625f,
    0.17328679f,
    0.34657359f,
    0.55f,
    0.625f,
    -0.625f,
    9.0f,
    9.0109f,
    9.02f,
    -9.02f,
    10.0f,
    20.0f,
    -20.0f,
    44.0f,
    16.7f,
    17.0f,
    -16.7f,
    -17.0f,
    88.0f,
    -88.0f,
    -88.8f,
    -95.0f,
    -0.9f,
    0.9f,
    127.5f,
    -127.5f,
    8388607.5f,
    8388608.0f,
    16777215.0f,
    /* erf: the interval seams, saturation (erf rounds to 1 from 3.9193);
     * expm1: tiny arguments, the clamp, overflow; log1p: x near -1, tiny x */
    0.99999994f,
    2.2499998f,
    2.25f,
    -2.25f,
    3.9193f,
    3.92f,
    -3.92f,
    0x1p-30f,
    -0x1p-30f,
    0x1.fffffep-31f,
    1e-7f,
    -1e-7f,
    -17.33f,
    -18.0f,
    -18.5f,
    88.72283f,
    -0.99999994f,
    -0.9999999f,
    -0.29289323f,
    0.41421357f,
    -1.0000001f,
};
#define N_EDGE (sizeof edge_inputs / sizeof edge_inputs[0])

static void report_mismatch(const char *fn_name, const char *what, optic_unary_op op, float x, float got, float want) {
  uint32_t g, w, xb;
  memcpy(&g, &got, 4), memcpy(&w, &want, 4), memcpy(&xb, &x, 4);
  OT_CHECK(false, "%s %s: x=%.9g (0x%08x): got %.9g (0x%08x) want %.9g (0x%08x), ulp %u > %u", fn_name, what, x, xb,
           got, g, want, w, kt_ulp_distance(got, want), optic_unary_max_ulp(op));
}

/* Edge sizes, offsets, in place (mode 1), guards; `stream`: with the
 * streaming-store threshold at 0, so every call of an AVX2/AVX-512 kernel
 * takes its streaming path (kernels/stream.h). */
static void check_sizes(optic_unary_op op, optic_isa isa, optic_f32_vunary_fn fn, const char *fn_name, int stream) {
  size_t saved = optic_stream_threshold_set(stream ? 0 : SIZE_MAX);
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0x9E3779B97F4A7C15ull ^ (uint64_t)op};
  float lo, hi;
  op_range(op, &lo, &hi);
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      for (int mode = 0; mode < 2; mode++) {
        size_t off = kt_offsets[oi];
        kt_buf x = kt_buf_make(n, off), y = kt_buf_make(n, (off + 2) % 4);
        kt_fill(&rng, x.p, n, lo, hi, 1);
        float *want = malloc((n + 1) * sizeof(float));
        optic_ref_f32_unary(op, n, x.p, want);
        float *dst = mode == 1 ? x.p : y.p;
        fn(n, x.p, dst);
        for (size_t i = 0; i < n; i++) {
          if (!close_enough(op, dst[i], want[i])) {
            OT_CHECK(false, "%s n=%zu offset=%zu mode=%d stream=%d: y[%zu]=%.9g want %.9g, ulp %u", fn_name, n, off,
                     mode, stream, i, dst[i], want[i], kt_ulp_distance(dst[i], want[i]));
            failures++;
            break;
          }
        }
        OT_CHECK(kt_buf_guard_ok(&x) && kt_buf_guard_ok(&y), "%s n=%zu offset=%zu mode=%d stream=%d wrote past the end",
                 fn_name, n, off, mode, stream);
        free(want);
        kt_buf_free(&x), kt_buf_free(&y);
      }
    }
  }
  optic_stream_threshold_set(saved);
}

/* The edge inputs at every position of a vector, the body and the tail. */
static void check_edges(optic_unary_op op, optic_f32_vunary_fn fn, const char *fn_name) {
  float x[N_EDGE + 3], got[N_EDGE + 3], want[N_EDGE + 3];
  for (size_t shift = 0; shift < 3; shift++) {
    for (size_t i = 0; i < shift; i++) x[i] = 1.0f;
    memcpy(x + shift, edge_inputs, sizeof edge_inputs);
    size_t n = N_EDGE + shift;
    fn(n, x, got);
    optic_ref_f32_unary(op, n, x, want);
    for (size_t i = 0; i < n; i++) {
      if (!close_enough(op, got[i], want[i])) report_mismatch(fn_name, "edge input", op, x[i], got[i], want[i]);
    }
  }
}

static uint32_t sweep_stride(void) {
  const char *s = getenv("OPTIC_UNARY_SWEEP_STRIDE");
  long v = s ? strtol(s, NULL, 10) : 0;
  return v > 0 && v <= 0x7fffffff ? (uint32_t)v : SWEEP_STRIDE;
}

/* Every stride-th bit pattern from 0 to 2^32 - 1, in chunks; prints the largest
 * ULP distance seen. */
static void check_sweep(optic_unary_op op, optic_f32_vunary_fn fn, const char *fn_name) {
  enum { CHUNK = 4096 };
  static float x[CHUNK], got[CHUNK], want[CHUNK];
  const uint64_t stride = sweep_stride();
  uint32_t worst = 0;
  float worst_x = 0.0f;
  uint64_t count = 0;
  int failures = 0;
  for (uint64_t u = 0; u <= 0xffffffffull;) {
    size_t k = 0;
    for (; k < CHUNK && u <= 0xffffffffull; k++, u += stride) {
      uint32_t bits = (uint32_t)u;
      memcpy(&x[k], &bits, 4);
    }
    fn(k, x, got);
    optic_ref_f32_unary(op, k, x, want);
    count += k;
    for (size_t i = 0; i < k; i++) {
      uint32_t d = kt_ulp_distance(got[i], want[i]);
      if (d > worst && !isnan(want[i])) worst = d, worst_x = x[i];
      if (!close_enough(op, got[i], want[i]) && failures++ < 5) {
        report_mismatch(fn_name, "sweep", op, x[i], got[i], want[i]);
      }
    }
  }
  printf("  %s: max %u ulp over %llu inputs (stride %llu, worst at x=%.9g)\n", fn_name, worst,
         (unsigned long long)count, (unsigned long long)stride, worst_x);
}

static void check(optic_unary_op op, optic_isa isa, optic_f32_vunary_fn fn, const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  check_sizes(op, isa, fn, fn_name, 0);
  check_sizes(op, isa, fn, fn_name, 1);
  check_edges(op, fn, fn_name);
  check_sweep(op, fn, fn_name);
}

#define X(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_UNARY_##op, OPTIC_ISA_##isa, fn, #fn); }
#include "kernels/list/unary.inc"
#undef X

/* Semantics the reference itself must have (it is the oracle): sign and relu
 * on zeros and NaN, exp/log/tanh/logistic classes. */
static void reference_semantics(void) {
  const float in[] = {-0.0f, 0.0f, NAN, -3.0f, INFINITY, -INFINITY};
  float y[6];
  optic_ref_f32_unary(OPTIC_UNARY_SIGN, 6, in, y);
  OT_CHECK(kt_same(y[0], -0.0f) && kt_same(y[1], 0.0f) && isnan(y[2]) && y[3] == -1.0f && y[4] == 1.0f);
  optic_ref_f32_unary(OPTIC_UNARY_RELU, 6, in, y);
  OT_CHECK(kt_same(y[0], 0.0f) && kt_same(y[1], 0.0f) && isnan(y[2]) && kt_same(y[3], 0.0f) && isinf(y[4]));
  optic_ref_f32_unary(OPTIC_UNARY_LOG, 6, in, y);
  OT_CHECK(y[0] == -INFINITY && y[1] == -INFINITY && isnan(y[2]) && isnan(y[3]) && y[4] == INFINITY && isnan(y[5]));
  optic_ref_f32_unary(OPTIC_UNARY_TANH, 6, in, y);
  OT_CHECK(kt_same(y[0], -0.0f) && y[3] < -0.99f && y[4] == 1.0f && y[5] == -1.0f);
  optic_ref_f32_unary(OPTIC_UNARY_LOGISTIC, 6, in, y);
  OT_CHECK(y[0] == 0.5f && y[4] == 1.0f && kt_same(y[5], 0.0f));
  optic_ref_f32_unary(OPTIC_UNARY_ERF, 6, in, y);
  OT_CHECK(kt_same(y[0], -0.0f) && kt_same(y[1], 0.0f) && isnan(y[2]) && y[3] < -0.9999f && y[4] == 1.0f &&
           y[5] == -1.0f);
  optic_ref_f32_unary(OPTIC_UNARY_EXPM1, 6, in, y);
  OT_CHECK(kt_same(y[0], -0.0f) && kt_same(y[1], 0.0f) && isnan(y[2]) && y[3] < -0.95f && y[4] == INFINITY &&
           y[5] == -1.0f);
  const float l1p[] = {-0.0f, -1.0f, -3.0f, INFINITY, NAN, 1e-30f};
  optic_ref_f32_unary(OPTIC_UNARY_LOG1P, 6, l1p, y);
  OT_CHECK(kt_same(y[0], -0.0f) && y[1] == -INFINITY && isnan(y[2]) && y[3] == INFINITY && isnan(y[4]) &&
           y[5] == 1e-30f);
  const float tiny[] = {-88.8f, -103.0f};
  optic_ref_f32_unary(OPTIC_UNARY_LOGISTIC, 2, tiny, y);
  OT_CHECK(y[0] > 0.0f && y[0] < FLT_MIN && y[1] > 0.0f, "logistic keeps subnormal results");
}

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_unary_kernels *t = optic_unary_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    for (int op = 0; op < OPTIC_UNARY_OP_COUNT; op++) {
      OT_CHECK(t->kernel[op] != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i),
               optic_unary_op_name((optic_unary_op)op));
      OT_CHECK(t->isa_of[op] == OPTIC_ISA_SCALAR || t->isa_of[op] == (optic_isa)i);
    }
  }
#define X(op, isa, fn) \
  OT_CHECK(optic_unary_kernels_for(OPTIC_ISA_##isa)->kernel[OPTIC_UNARY_##op] == fn, #fn " not in its table");
#include "kernels/list/unary.inc"
#undef X
  OT_CHECK(strcmp(optic_unary_op_name(OPTIC_UNARY_EXP), "exponential") == 0);
  OT_CHECK(strcmp(optic_unary_op_name(OPTIC_UNARY_OP_COUNT), "invalid") == 0);
  OT_CHECK(optic_unary_max_ulp(OPTIC_UNARY_NEG) == 0 && optic_unary_max_ulp(OPTIC_UNARY_TANH) == 2);
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_unary_kernels_get() == optic_unary_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_unary_kernels_get()->kernel[OPTIC_UNARY_EXP] == optic_f32_vexp__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_unary_kernels_get() == optic_unary_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/unary.inc"
#undef X
    {"reference_semantics", reference_semantics},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
