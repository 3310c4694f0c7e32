/* The one-element-at-a-time elementwise ops (kernels/elem.h, scalar family) in the
 * evaluator: transcendental ops against libm in higher precision (f32
 * within 2 ulp of the double result; f64 within 2 ulp of the long double
 * one), rounding, integer bit ops, is-finite, reduce-precision and
 * bitcast-convert against hand-computed values, plus shape-inference
 * errors, HLO text round trips and XLA's cost counts. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "tests/graph/evaluate_util.h"

/* Distance in ulps between two finite floats of the same sign class. */
static int64_t ulp_f32(float a, float b) {
  if (isnan(a) && isnan(b)) return 0;
  if (a == b) return 0;
  int32_t ia, ib;
  memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return llabs((long long)ia - (long long)ib);
}

static int64_t ulp_f64(double a, double b) {
  if (isnan(a) && isnan(b)) return 0;
  if (a == b) return 0;
  int64_t ia, ib;
  memcpy(&ia, &a, 8), memcpy(&ib, &b, 8);
  if (ia < 0) ia = INT64_MIN - ia;
  if (ib < 0) ib = INT64_MIN - ib;
  double d = (double)ia - (double)ib;
  return d < 0 ? (int64_t)-d : (int64_t)d;
}

/* y = op(x) (or op(x, z)) over n elements of dt, evaluated. */
static optic_literal_t *eval_ew(optic_opcode op, optic_dtype dt, int64_t n, const void *x, const void *z) {
  ev_fresh();
  int64_t dims[1] = {n};
  optic_node_id a = ev_param(ev_main, 0, dt, 1, dims), r;
  optic_node_id b = z ? ev_param(ev_main, 1, dt, 1, dims) : OPTIC_NO_NODE;
  optic_status st =
      z ? optic_graph_binary(ev_m, ev_main, op, a, b, NULL, &r) : optic_graph_unary(ev_m, ev_main, op, a, NULL, &r);
  if (st != OPTIC_OK) ev_die(optic_opcode_name(op));
  ev_root(ev_main, r);
  optic_literal_t *la = ev_lit(dt, 1, dims, x), *lb = z ? ev_lit(dt, 1, dims, z) : NULL;
  const optic_literal_t *args[2] = {la, lb};
  optic_literal_t *got = ev_run(ev_main, args, z ? 2 : 1);
  optic_literal_destroy(la);
  optic_literal_destroy(lb);
  return got;
}

#define NF 64
static void f32_inputs(float *x, float *z) {
  static const float special[] = {0.0f,        -0.0f,  1.0f,   -1.0f,    0.5f,      -0.5f, 1e-30f, -1e-7f,
                                  3.14159265f, 100.0f, -88.0f, INFINITY, -INFINITY, NAN,   1e30f,  -2.5f};
  for (int i = 0; i < NF; i++) {
    x[i] = i < 16 ? special[i] : (float)((i * 7919 % 2001) - 1000) / 97.0f;
    z[i] = (float)((i * 104729 % 1999) - 999) / 131.0f;
  }
}

static double ref_d(optic_opcode op, double a, double b) {
  switch (op) {
    case OPTIC_OP_ERF: return erf(a);
    case OPTIC_OP_LOG_PLUS_ONE: return log1p(a);
    case OPTIC_OP_EXPONENTIAL_MINUS_ONE: return expm1(a);
    case OPTIC_OP_SINE: return sin(a);
    case OPTIC_OP_COSINE: return cos(a);
    case OPTIC_OP_TAN: return tan(a);
    case OPTIC_OP_CBRT: return cbrt(a);
    case OPTIC_OP_ATAN2: return atan2(a, b);
    default: return fmod(a, b);
  }
}

static long double ref_l(optic_opcode op, long double a, long double b) {
  switch (op) {
    case OPTIC_OP_ERF: return erfl(a);
    case OPTIC_OP_LOG_PLUS_ONE: return log1pl(a);
    case OPTIC_OP_EXPONENTIAL_MINUS_ONE: return expm1l(a);
    case OPTIC_OP_SINE: return sinl(a);
    case OPTIC_OP_COSINE: return cosl(a);
    case OPTIC_OP_TAN: return tanl(a);
    case OPTIC_OP_CBRT: return cbrtl(a);
    case OPTIC_OP_ATAN2: return atan2l(a, b);
    default: return fmodl(a, b);
  }
}

static const optic_opcode transcendental[] = {OPTIC_OP_ERF,  OPTIC_OP_LOG_PLUS_ONE, OPTIC_OP_EXPONENTIAL_MINUS_ONE,
                                              OPTIC_OP_SINE, OPTIC_OP_COSINE,       OPTIC_OP_TAN,
                                              OPTIC_OP_CBRT, OPTIC_OP_ATAN2,        OPTIC_OP_REMAINDER};

static void transcendental_f32_vs_libm(void) {
  float x[NF], z[NF];
  f32_inputs(x, z);
  for (size_t k = 0; k < sizeof transcendental / sizeof transcendental[0]; k++) {
    optic_opcode op = transcendental[k];
    bool binary = op == OPTIC_OP_ATAN2 || op == OPTIC_OP_REMAINDER;
    optic_literal_t *got = eval_ew(op, OPTIC_F32, NF, x, binary ? z : NULL);
    OT_CHECK(got != NULL, "%s", optic_opcode_name(op));
    if (!got) continue;
    const float *y = optic_literal_data(got, NULL);
    for (int i = 0; i < NF; i++) {
      float want = (float)ref_d(op, x[i], z[i]);
      int64_t u = ulp_f32(want, y[i]);
      OT_CHECK(u <= 2 || (fabsf(want) < 1e-30f && fabsf(y[i]) < 1e-30f), "%s(%a, %a): got %a, libm %a (%lld ulp)",
               optic_opcode_name(op), (double)x[i], (double)z[i], (double)y[i], (double)want, (long long)u);
    }
    optic_literal_destroy(got);
  }
}

static void transcendental_f64_vs_long_double(void) {
  double x[NF], z[NF];
  float xf[NF], zf[NF];
  f32_inputs(xf, zf);
  for (int i = 0; i < NF; i++) x[i] = xf[i] * 1.000000123, z[i] = zf[i];
  for (size_t k = 0; k < sizeof transcendental / sizeof transcendental[0]; k++) {
    optic_opcode op = transcendental[k];
    bool binary = op == OPTIC_OP_ATAN2 || op == OPTIC_OP_REMAINDER;
    optic_literal_t *got = eval_ew(op, OPTIC_F64, NF, x, binary ? z : NULL);
    OT_CHECK(got != NULL, "%s", optic_opcode_name(op));
    if (!got) continue;
    const double *y = optic_literal_data(got, NULL);
    for (int i = 0; i < NF; i++) {
      double want = (double)ref_l(op, x[i], z[i]);
      int64_t u = ulp_f64(want, y[i]);
      OT_CHECK(u <= 2 || (fabs(want) < 1e-300 && fabs(y[i]) < 1e-300), "%s(%a, %a): got %a, long double %a (%lld ulp)",
               optic_opcode_name(op), x[i], z[i], y[i], want, (long long)u);
    }
    optic_literal_destroy(got);
  }
}

static void rounding(void) {
  static const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f, -0.0f, 8388609.0f, INFINITY, 3.0f};
  static const float afz[] = {1.0f, 2.0f, 3.0f, -1.0f, -2.0f, -3.0f, 2.0f, 3.0f, -0.0f, 8388609.0f, INFINITY, 3.0f};
  static const float even[] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -2.0f, 2.0f, 3.0f, -0.0f, 8388609.0f, INFINITY, 3.0f};
  int64_t n = 12;
  optic_literal_t *a = eval_ew(OPTIC_OP_ROUND_NEAREST_AFZ, OPTIC_F32, n, x, NULL);
  optic_literal_t *e = eval_ew(OPTIC_OP_ROUND_NEAREST_EVEN, OPTIC_F32, n, x, NULL);
  OT_CHECK(a && e);
  if (a && e) {
    OT_CHECK(memcmp(optic_literal_data(a, NULL), afz, sizeof afz) == 0, "round-nearest-afz");
    OT_CHECK(memcmp(optic_literal_data(e, NULL), even, sizeof even) == 0, "round-nearest-even");
  }
  optic_literal_destroy(a);
  optic_literal_destroy(e);
  static const double xd[] = {2.5, -3.5, 4503599627370497.0, 0.49999999999999994};
  static const double evd[] = {2.0, -4.0, 4503599627370497.0, 0.0};
  optic_literal_t *d = eval_ew(OPTIC_OP_ROUND_NEAREST_EVEN, OPTIC_F64, 4, xd, NULL);
  OT_CHECK(d && memcmp(optic_literal_data(d, NULL), evd, sizeof evd) == 0, "round-nearest-even f64");
  optic_literal_destroy(d);
}

/* Hand-computed s32 cases for the binary integer ops. */
static void integer_binary_s32(void) {
  static const int32_t a[] = {1, -8, 0x40000000, -1, 7, -7, INT32_MIN, 5, 12345, -12345};
  static const int32_t b[] = {31, 1, 1, 32, 3, 3, -1, 0, 33, -1};
  static const struct {
    optic_opcode op;
    int32_t want[10];
  } cases[] = {
      {OPTIC_OP_SHIFT_LEFT, {INT32_MIN, -16, INT32_MIN, 0, 56, -56, 0, 5, 0, 0}},
      {OPTIC_OP_SHIFT_RIGHT_LOGICAL, {0, 0x7ffffffc, 0x20000000, 0, 0, 0x1fffffff, 0, 5, 0, 0}},
      {OPTIC_OP_SHIFT_RIGHT_ARITHMETIC, {0, -4, 0x20000000, -1, 0, -1, -1, 5, 0, -1}},
      {OPTIC_OP_XOR, {30, -7, 0x40000001, -33, 4, -6, INT32_MAX, 5, 12345 ^ 33, 12344}},
      {OPTIC_OP_REMAINDER, {1, 0, 0, -1, 1, -1, 0, 5, 3, 0}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    optic_literal_t *got = eval_ew(cases[k].op, OPTIC_S32, 10, a, b);
    OT_CHECK(got != NULL);
    if (!got) continue;
    const int32_t *y = optic_literal_data(got, NULL);
    for (int i = 0; i < 10; i++) {
      OT_CHECK(y[i] == cases[k].want[i], "%s(%d, %d) = %d, want %d", optic_opcode_name(cases[k].op), a[i], b[i], y[i],
               cases[k].want[i]);
    }
    optic_literal_destroy(got);
  }
}

static void integer_u8_and_pred(void) {
  static const uint8_t a[] = {0x81, 0xff, 7, 200, 0};
  static const uint8_t b[] = {1, 8, 2, 7, 0};
  static const uint8_t shl[] = {0x02, 0, 28, 0, 0}, srl[] = {0x40, 0, 1, 1, 0},
                       sra[] = {0xc0, 0xff, 1, 0xff, 0}; /* XLA: the bits read as signed */
  static const uint8_t rem[] = {0, 7, 1, 4, 0}, pop[] = {2, 8, 3, 3, 0}, clz[] = {0, 0, 5, 0, 8};
  const struct {
    optic_opcode op;
    const uint8_t *want;
    bool binary;
  } cases[] = {{OPTIC_OP_SHIFT_LEFT, shl, true},
               {OPTIC_OP_SHIFT_RIGHT_LOGICAL, srl, true},
               {OPTIC_OP_SHIFT_RIGHT_ARITHMETIC, sra, true},
               {OPTIC_OP_REMAINDER, rem, true},
               {OPTIC_OP_POPCNT, pop, false},
               {OPTIC_OP_COUNT_LEADING_ZEROS, clz, false}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    optic_literal_t *got = eval_ew(cases[k].op, OPTIC_U8, 5, a, cases[k].binary ? b : NULL);
    OT_CHECK(got && memcmp(optic_literal_data(got, NULL), cases[k].want, 5) == 0, "u8 %s",
             optic_opcode_name(cases[k].op));
    optic_literal_destroy(got);
  }
  static const int32_t s[] = {0, 1, -1, INT32_MIN, 0x00010000};
  static const int32_t spop[] = {0, 1, 32, 1, 1}, sclz[] = {32, 31, 0, 0, 15};
  optic_literal_t *p = eval_ew(OPTIC_OP_POPCNT, OPTIC_S32, 5, s, NULL),
                  *c = eval_ew(OPTIC_OP_COUNT_LEADING_ZEROS, OPTIC_S32, 5, s, NULL);
  OT_CHECK(p && memcmp(optic_literal_data(p, NULL), spop, sizeof spop) == 0, "s32 popcnt");
  OT_CHECK(c && memcmp(optic_literal_data(c, NULL), sclz, sizeof sclz) == 0, "s32 count-leading-zeros");
  optic_literal_destroy(p);
  optic_literal_destroy(c);
  static const uint8_t pa[] = {0, 0, 1, 1}, pb[] = {0, 1, 0, 1}, px[] = {0, 1, 1, 0};
  optic_literal_t *x = eval_ew(OPTIC_OP_XOR, OPTIC_PRED, 4, pa, pb);
  OT_CHECK(x && memcmp(optic_literal_data(x, NULL), px, 4) == 0, "pred xor");
  optic_literal_destroy(x);
}

/* One-operand ops with their own builders: is-finite, reduce-precision, bitcast-convert. */
static optic_literal_t *eval_special(optic_opcode op, optic_dtype dt, int64_t n, const void *x, int32_t e, int32_t m,
                                     optic_dtype to) {
  ev_fresh();
  int64_t dims[1] = {n};
  optic_node_id a = ev_param(ev_main, 0, dt, 1, dims), r;
  optic_status st = op == OPTIC_OP_IS_FINITE          ? optic_graph_is_finite(ev_m, ev_main, a, NULL, &r)
                    : op == OPTIC_OP_REDUCE_PRECISION ? optic_graph_reduce_precision(ev_m, ev_main, a, e, m, NULL, &r)
                                                      : optic_graph_bitcast_convert(ev_m, ev_main, a, to, NULL, &r);
  if (st != OPTIC_OK) ev_die(optic_opcode_name(op));
  ev_root(ev_main, r);
  optic_literal_t *la = ev_lit(dt, 1, dims, x);
  const optic_literal_t *args[1] = {la};
  optic_literal_t *got = ev_run(ev_main, args, 1);
  optic_literal_destroy(la);
  return got;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void is_finite_reduce_precision_bitcast(void) {
  static const float x[] = {1.0f, INFINITY, -INFINITY, NAN, -0.0f, FLT_MAX, FLT_TRUE_MIN};
  static const uint8_t fin[] = {1, 0, 0, 0, 1, 1, 1};
  optic_literal_t *f = eval_special(OPTIC_OP_IS_FINITE, OPTIC_F32, 7, x, 0, 0, OPTIC_PRED);
  OT_CHECK(f && memcmp(optic_literal_data(f, NULL), fin, 7) == 0, "is-finite");
  optic_literal_destroy(f);
  /* bf16 (8 exponent, 7 mantissa bits): 1 + 2^-8 is a tie -> 1 (even);
   * 1 + 3 * 2^-8 -> 1 + 2^-6 (tie, rounds up to even); 1 + 2^-8 + 2^-20 -> 1 + 2^-7. */
  const float bf_in[] = {1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 1.0f + 0x1p-8f + 0x1p-20f, NAN, -3.0f};
  const float bf_want[] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, NAN, -3.0f};
  optic_literal_t *b = eval_special(OPTIC_OP_REDUCE_PRECISION, OPTIC_F32, 5, bf_in, 8, 7, OPTIC_F32);
  OT_CHECK(b != NULL);
  if (b) {
    const float *y = optic_literal_data(b, NULL);
    for (int i = 0; i < 5; i++) {
      OT_CHECK((isnan(bf_want[i]) && isnan(y[i])) || y[i] == bf_want[i], "bf16 rp(%a) = %a, want %a", (double)bf_in[i],
               (double)y[i], (double)bf_want[i]);
    }
  }
  optic_literal_destroy(b);
  /* f16 (5, 10): 65504 is the largest; 65520 rounds to 65536, which overflows
   * to inf; 2^-14 is the smallest normal (kept), 2^-15 is subnormal (flushed
   * to signed zero, as XLA does); -1e9 -> -inf. */
  const float h_in[] = {65504.0f, 65520.0f, 0x1p-14f, -0x1p-15f, -1e9f, 0.1f};
  const float h_want[] = {65504.0f, INFINITY, 0x1p-14f, -0.0f, -INFINITY, from_bits(0x3dccc000u)};
  optic_literal_t *h = eval_special(OPTIC_OP_REDUCE_PRECISION, OPTIC_F32, 6, h_in, 5, 10, OPTIC_F32);
  OT_CHECK(h != NULL);
  if (h) {
    const float *y = optic_literal_data(h, NULL);
    for (int i = 0; i < 6; i++) {
      OT_CHECK(memcmp(&y[i], &h_want[i], 4) == 0, "f16 rp(%a) = %a, want %a", (double)h_in[i], (double)y[i],
               (double)h_want[i]);
    }
  }
  optic_literal_destroy(h);
  static const float bc[] = {1.0f, -2.0f, 0.0f};
  static const int32_t bc_want[] = {0x3f800000, (int32_t)0xc0000000u, 0};
  optic_literal_t *c = eval_special(OPTIC_OP_BITCAST_CONVERT, OPTIC_F32, 3, bc, 0, 0, OPTIC_S32);
  OT_CHECK(c && memcmp(optic_literal_data(c, NULL), bc_want, sizeof bc_want) == 0, "bitcast-convert f32 -> s32");
  optic_literal_destroy(c);
}

/* XLA's shape-inference rules: dtype errors name the op and the dtype. */
static void shape_errors(void) {
  ev_fresh();
  int64_t dims[1] = {4};
  optic_node_id f = ev_param(ev_main, 0, OPTIC_F32, 1, dims), s = ev_param(ev_main, 1, OPTIC_S32, 1, dims);
  optic_node_id p = ev_param(ev_main, 2, OPTIC_PRED, 1, dims), r;
  const struct {
    optic_opcode op;
    optic_node_id x;
  } un[] = {{OPTIC_OP_SINE, s}, {OPTIC_OP_ERF, p}, {OPTIC_OP_POPCNT, f}, {OPTIC_OP_COUNT_LEADING_ZEROS, p}};
  for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
    OT_EXPECT_STATUS(optic_graph_unary(ev_m, ev_main, un[k].op, un[k].x, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
    OT_CHECK(strstr(optic_last_error(), optic_opcode_name(un[k].op)) != NULL, "%s", optic_last_error());
  }
  const struct {
    optic_opcode op;
    optic_node_id x;
  } bin[] = {{OPTIC_OP_XOR, f},
             {OPTIC_OP_SHIFT_LEFT, f},
             {OPTIC_OP_SHIFT_RIGHT_LOGICAL, p},
             {OPTIC_OP_ATAN2, s},
             {OPTIC_OP_REMAINDER, p}};
  for (size_t k = 0; k < sizeof bin / sizeof bin[0]; k++) {
    OT_EXPECT_STATUS(optic_graph_binary(ev_m, ev_main, bin[k].op, bin[k].x, bin[k].x, NULL, &r),
                     OPTIC_ERR_SHAPE_MISMATCH);
    OT_CHECK(strstr(optic_last_error(), "does not take") != NULL, "%s", optic_last_error());
  }
  OT_EXPECT_STATUS(optic_graph_binary(ev_m, ev_main, OPTIC_OP_XOR, s, p, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_is_finite(ev_m, ev_main, s, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_reduce_precision(ev_m, ev_main, s, 5, 10, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_reduce_precision(ev_m, ev_main, f, 0, 10, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_reduce_precision(ev_m, ev_main, f, 5, -1, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_bitcast_convert(ev_m, ev_main, f, OPTIC_U8, NULL, &r), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "element sizes") != NULL, "%s", optic_last_error());
  OT_EXPECT_OK(optic_graph_bitcast_convert(ev_m, ev_main, s, OPTIC_F32, NULL, &r));
  OT_CHECK(optic_node_type(ev_m, r)->dtype == OPTIC_F32);
  OT_EXPECT_OK(optic_graph_is_finite(ev_m, ev_main, f, NULL, &r));
  OT_CHECK(optic_node_type(ev_m, r)->dtype == OPTIC_PRED && optic_node_type(ev_m, r)->shape.dims[0] == 4);
}

static const char *const ROUND_TRIP =
    "HloModule ew\n\n"
    "ENTRY e {\n"
    "  x = f32[8]{0} parameter(0)\n"
    "  i = s32[8]{0} parameter(1)\n"
    "  a = f32[8]{0} erf(x)\n  b = f32[8]{0} log-plus-one(a)\n  c = f32[8]{0} exponential-minus-one(b)\n"
    "  d = f32[8]{0} sine(c)\n  e1 = f32[8]{0} cosine(d)\n  f = f32[8]{0} tan(e1)\n  g = f32[8]{0} cbrt(f)\n"
    "  h = f32[8]{0} round-nearest-afz(g)\n  k = f32[8]{0} round-nearest-even(h)\n  l = f32[8]{0} atan2(k, x)\n"
    "  m = f32[8]{0} remainder(l, x)\n  n = f32[8]{0} reduce-precision(m), exponent_bits=5, mantissa_bits=10\n"
    "  fin = pred[8]{0} is-finite(n)\n  bc = s32[8]{0} bitcast-convert(n)\n"
    "  s1 = s32[8]{0} xor(bc, i)\n  s2 = s32[8]{0} shift-left(s1, i)\n  s3 = s32[8]{0} shift-right-logical(s2, i)\n"
    "  s4 = s32[8]{0} shift-right-arithmetic(s3, i)\n  s5 = s32[8]{0} popcnt(s4)\n"
    "  s6 = s32[8]{0} count-leading-zeros(s5)\n"
    "  ROOT t = (s32[8]{0}, pred[8]{0}) tuple(s6, fin)\n"
    "}\n";

static void hlo_round_trip_and_cost(void) {
  optic_module_t *m = NULL;
  char *t1 = ev_print_round_trip(ROUND_TRIP, &m);
  if (m == NULL) return;
  OT_CHECK(t1 && strstr(t1, "reduce-precision(") && strstr(t1, "exponent_bits=5, mantissa_bits=10"), "%s", t1);
  /* XLA's HandleElementwiseOp: erf, log1p, expm1, sin, cos, tan, cbrt and
   * atan2 count one transcendental per element; round, remainder,
   * reduce-precision, is-finite, bitcast-convert and the integer ops one
   * flop. Bytes: output + operands. */
  optic_cost c;
  OT_EXPECT_OK(optic_computation_cost(m, optic_module_entry(m), &c));
  OT_CHECK(c.transcendentals == 8 * 8, "transcendentals %g", c.transcendentals);
  OT_CHECK(c.flops == 8 * 12, "flops %g", c.flops);
  double want = 9 * 64.0   /* erf, log1p, expm1, sin, cos, tan, cbrt, round-afz, round-even */
                + 2 * 96.0 /* atan2, remainder */
                + 64.0     /* reduce-precision */
                + (32 + 8) /* is-finite */
                + 64.0     /* bitcast-convert */
                + 4 * 96.0 /* xor and the three shifts */
                + 2 * 64.0 /* popcnt, clz */
                + 16.0;    /* the tuple's pointer table */
  OT_CHECK(c.bytes_accessed == want, "bytes %g, want %g", c.bytes_accessed, want);
  optic_string_free(t1);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"transcendental_f32_vs_libm", transcendental_f32_vs_libm},
    {"transcendental_f64_vs_long_double", transcendental_f64_vs_long_double},
    {"rounding", rounding},
    {"integer_binary_s32", integer_binary_s32},
    {"integer_u8_and_pred", integer_u8_and_pred},
    {"is_finite_reduce_precision_bitcast", is_finite_reduce_precision_bitcast},
    {"shape_errors", shape_errors},
    {"hlo_round_trip_and_cost", hlo_round_trip_and_cost},
};
OT_MAIN(cases)
