/* Evaluator, elementwise ops: unary, binary, compare, select, clamp, convert
 * on every dtype the builders accept, with hand-computed answers (integer
 * wrap-around and division by zero, NaN propagation, the saturating
 * conversions of docs/kernels-elementwise.md) and f32 transcendentals
 * against the kernels' naive reference they must use. */
#include <math.h>

#include "kernels/unary.h"
#include "tests/graph/evaluate_util.h"

/* Builds main = op(x) (or op(x, y)) over dt[n], evaluates it on the given
 * data and compares with want (dtype out_dt) bitwise. */
static bool run_elementwise(optic_opcode op, optic_dtype dt, optic_dtype out_dt, int64_t n, const void *a,
                            const void *b, const void *want) {
  ev_fresh();
  int64_t d[] = {n};
  optic_node_id x = ev_param(ev_main, 0, dt, 1, d), y = OPTIC_NO_NODE, r;
  optic_status st;
  if (b) {
    y = ev_param(ev_main, 1, dt, 1, d);
    st = optic_graph_binary(ev_m, ev_main, op, x, y, NULL, &r);
  } else if (op == OPTIC_OP_CONVERT) {
    st = optic_graph_convert(ev_m, ev_main, x, out_dt, NULL, &r);
  } else {
    st = optic_graph_unary(ev_m, ev_main, op, x, NULL, &r);
  }
  if (st != OPTIC_OK) ev_die(optic_opcode_name(op));
  ev_root(ev_main, r);
  optic_literal_t *la = ev_lit(dt, 1, d, a), *lb = b ? ev_lit(dt, 1, d, b) : NULL;
  const optic_literal_t *args[] = {la, lb};
  bool ok = ev_check(ev_main, args, b ? 2 : 1, out_dt, 1, d, want);
  optic_literal_destroy(la);
  optic_literal_destroy(lb);
  return ok;
}

static void unary_f32(void) {
  float x[] = {0.0f, -0.0f, 4.0f, -2.5f, INFINITY, -INFINITY, 2.25f};
  OT_CHECK(run_elementwise(OPTIC_OP_NEGATE, OPTIC_F32, OPTIC_F32, 7, x, NULL,
                           (float[]){-0.0f, 0.0f, -4.0f, 2.5f, -INFINITY, INFINITY, -2.25f}));
  OT_CHECK(run_elementwise(OPTIC_OP_ABS, OPTIC_F32, OPTIC_F32, 7, x, NULL,
                           (float[]){0.0f, 0.0f, 4.0f, 2.5f, INFINITY, INFINITY, 2.25f}));
  OT_CHECK(run_elementwise(OPTIC_OP_SIGN, OPTIC_F32, OPTIC_F32, 7, x, NULL,
                           (float[]){0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_FLOOR, OPTIC_F32, OPTIC_F32, 7, x, NULL,
                           (float[]){0.0f, -0.0f, 4.0f, -3.0f, INFINITY, -INFINITY, 2.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_CEIL, OPTIC_F32, OPTIC_F32, 7, x, NULL,
                           (float[]){0.0f, -0.0f, 4.0f, -2.0f, INFINITY, -INFINITY, 3.0f}));
  /* The transcendentals are exactly the kernels' reference. */
  const optic_opcode ops[] = {OPTIC_OP_EXPONENTIAL, OPTIC_OP_LOG,  OPTIC_OP_SQRT,
                              OPTIC_OP_RSQRT,       OPTIC_OP_TANH, OPTIC_OP_LOGISTIC};
  const optic_unary_op ref[] = {OPTIC_UNARY_EXP,   OPTIC_UNARY_LOG,  OPTIC_UNARY_SQRT,
                                OPTIC_UNARY_RSQRT, OPTIC_UNARY_TANH, OPTIC_UNARY_LOGISTIC};
  for (int i = 0; i < 6; i++) {
    float want[7];
    optic_ref_f32_unary(ref[i], 7, x, want);
    OT_CHECK(run_elementwise(ops[i], OPTIC_F32, OPTIC_F32, 7, x, NULL, want), "%s", optic_opcode_name(ops[i]));
  }
  OT_CHECK(run_elementwise(OPTIC_OP_EXPONENTIAL, OPTIC_F32, OPTIC_F32, 2, (float[]){0.0f, -INFINITY}, NULL,
                           (float[]){1.0f, 0.0f}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_LOG, OPTIC_F32, OPTIC_F32, 2, (float[]){1.0f, 0.0f}, NULL, (float[]){0.0f, -INFINITY}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_SQRT, OPTIC_F32, OPTIC_F32, 2, (float[]){4.0f, 2.25f}, NULL, (float[]){2.0f, 1.5f}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_RSQRT, OPTIC_F32, OPTIC_F32, 2, (float[]){4.0f, 0.25f}, NULL, (float[]){0.5f, 2.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_TANH, OPTIC_F32, OPTIC_F32, 2, (float[]){0.0f, -INFINITY}, NULL,
                           (float[]){0.0f, -1.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_LOGISTIC, OPTIC_F32, OPTIC_F32, 2, (float[]){0.0f, -INFINITY}, NULL,
                           (float[]){0.5f, 0.0f}));
  float c[] = {1.5f, NAN};
  OT_CHECK(run_elementwise(OPTIC_OP_COPY, OPTIC_F32, OPTIC_F32, 2, c, NULL, c));
}

static void unary_other_dtypes(void) {
  double xd[] = {-0.0, 2.0, -1.5, 0.0};
  OT_CHECK(run_elementwise(OPTIC_OP_NEGATE, OPTIC_F64, OPTIC_F64, 4, xd, NULL, (double[]){0.0, -2.0, 1.5, -0.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_SIGN, OPTIC_F64, OPTIC_F64, 4, xd, NULL, (double[]){-0.0, 1.0, -1.0, 0.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_FLOOR, OPTIC_F64, OPTIC_F64, 4, xd, NULL, (double[]){-0.0, 2.0, -2.0, 0.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_EXPONENTIAL, OPTIC_F64, OPTIC_F64, 4, xd, NULL,
                           (double[]){1.0, exp(2.0), exp(-1.5), 1.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_LOGISTIC, OPTIC_F64, OPTIC_F64, 1, (double[]){0.0}, NULL, (double[]){0.5}));
  OT_CHECK(run_elementwise(OPTIC_OP_RSQRT, OPTIC_F64, OPTIC_F64, 1, (double[]){4.0}, NULL, (double[]){0.5}));
  /* s32: negate and abs wrap at INT32_MIN (two's complement), as XLA. */
  int32_t xi[] = {INT32_MIN, -5, 0, 7, INT32_MAX};
  OT_CHECK(run_elementwise(OPTIC_OP_NEGATE, OPTIC_S32, OPTIC_S32, 5, xi, NULL,
                           (int32_t[]){INT32_MIN, 5, 0, -7, -INT32_MAX}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_ABS, OPTIC_S32, OPTIC_S32, 5, xi, NULL, (int32_t[]){INT32_MIN, 5, 0, 7, INT32_MAX}));
  OT_CHECK(run_elementwise(OPTIC_OP_SIGN, OPTIC_S32, OPTIC_S32, 5, xi, NULL, (int32_t[]){-1, -1, 0, 1, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_NOT, OPTIC_S32, OPTIC_S32, 2, (int32_t[]){0, 5}, NULL, (int32_t[]){-1, -6}));
  OT_CHECK(run_elementwise(OPTIC_OP_NOT, OPTIC_U8, OPTIC_U8, 2, (uint8_t[]){0, 0x0f}, NULL, (uint8_t[]){0xff, 0xf0}));
  OT_CHECK(run_elementwise(OPTIC_OP_NOT, OPTIC_PRED, OPTIC_PRED, 2, (uint8_t[]){0, 1}, NULL, (uint8_t[]){1, 0}));
  OT_CHECK(run_elementwise(OPTIC_OP_COPY, OPTIC_U8, OPTIC_U8, 2, (uint8_t[]){3, 4}, NULL, (uint8_t[]){3, 4}));
}

static void binary_f32_and_f64(void) {
  float a[] = {1.0f, NAN, 2.0f, -0.0f, 3.0f, 2.0f}, b[] = {2.0f, 1.0f, NAN, 0.0f, 0.0f, 10.0f};
  OT_CHECK(run_elementwise(OPTIC_OP_ADD, OPTIC_F32, OPTIC_F32, 1, a, b, (float[]){3.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_SUBTRACT, OPTIC_F32, OPTIC_F32, 1, a, b, (float[]){-1.0f}));
  /* maximum/minimum: NaN propagates (a's first), ties return b: max(-0, +0) = +0. */
  OT_CHECK(
      run_elementwise(OPTIC_OP_MAXIMUM, OPTIC_F32, OPTIC_F32, 6, a, b, (float[]){2.0f, NAN, NAN, 0.0f, 3.0f, 10.0f}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_MINIMUM, OPTIC_F32, OPTIC_F32, 6, a, b, (float[]){1.0f, NAN, NAN, 0.0f, 0.0f, 2.0f}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_DIVIDE, OPTIC_F32, OPTIC_F32, 1, (float[]){1.0f}, (float[]){0.0f}, (float[]){INFINITY}));
  OT_CHECK(run_elementwise(OPTIC_OP_POWER, OPTIC_F32, OPTIC_F32, 3, (float[]){2.0f, 1.0f, 4.0f},
                           (float[]){10.0f, NAN, 0.5f}, (float[]){1024.0f, 1.0f, 2.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_MULTIPLY, OPTIC_F64, OPTIC_F64, 2, (double[]){0.1, 3.0}, (double[]){3.0, -0.0},
                           (double[]){0.1 * 3.0, -0.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_MAXIMUM, OPTIC_F64, OPTIC_F64, 2, (double[]){NAN, -0.0}, (double[]){1.0, 0.0},
                           (double[]){NAN, 0.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_POWER, OPTIC_F64, OPTIC_F64, 1, (double[]){9.0}, (double[]){0.5}, (double[]){3.0}));
}

static void binary_integers(void) {
  int32_t a[] = {INT32_MAX, INT32_MIN, 7, -7, 5, INT32_MIN}, b[] = {1, 1, 2, 2, 0, -1};
  OT_CHECK(run_elementwise(OPTIC_OP_ADD, OPTIC_S32, OPTIC_S32, 2, a, b, (int32_t[]){INT32_MIN, INT32_MIN + 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_SUBTRACT, OPTIC_S32, OPTIC_S32, 2, a, b, (int32_t[]){INT32_MAX - 1, INT32_MAX}));
  OT_CHECK(run_elementwise(OPTIC_OP_MULTIPLY, OPTIC_S32, OPTIC_S32, 1, (int32_t[]){65536}, (int32_t[]){65536},
                           (int32_t[]){0}));
  /* Division truncates; x / 0 = -1 and INT32_MIN / -1 = INT32_MIN (XLA). */
  OT_CHECK(run_elementwise(OPTIC_OP_DIVIDE, OPTIC_S32, OPTIC_S32, 6, a, b,
                           (int32_t[]){INT32_MAX, INT32_MIN, 3, -3, -1, INT32_MIN}));
  /* Power: wraps; a negative exponent gives 1 for base 1, else 0 (XLA). */
  OT_CHECK(run_elementwise(OPTIC_OP_POWER, OPTIC_S32, OPTIC_S32, 6, (int32_t[]){3, -2, 2, 1, -1, 5},
                           (int32_t[]){4, 3, 32, -3, -1, 0}, (int32_t[]){81, -8, 0, 1, 0, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_MAXIMUM, OPTIC_S32, OPTIC_S32, 2, (int32_t[]){-1, 4}, (int32_t[]){2, 3},
                           (int32_t[]){2, 4}));
  OT_CHECK(run_elementwise(OPTIC_OP_AND, OPTIC_S32, OPTIC_S32, 1, (int32_t[]){12}, (int32_t[]){10}, (int32_t[]){8}));
  OT_CHECK(run_elementwise(OPTIC_OP_OR, OPTIC_S32, OPTIC_S32, 1, (int32_t[]){12}, (int32_t[]){10}, (int32_t[]){14}));
  uint8_t ua[] = {250, 3, 10, 7, 2}, ub[] = {10, 5, 0, 2, 9};
  OT_CHECK(run_elementwise(OPTIC_OP_ADD, OPTIC_U8, OPTIC_U8, 5, ua, ub, (uint8_t[]){4, 8, 10, 9, 11}));
  OT_CHECK(run_elementwise(OPTIC_OP_SUBTRACT, OPTIC_U8, OPTIC_U8, 5, ua, ub, (uint8_t[]){240, 254, 10, 5, 249}));
  OT_CHECK(run_elementwise(OPTIC_OP_DIVIDE, OPTIC_U8, OPTIC_U8, 5, ua, ub, (uint8_t[]){25, 0, 255, 3, 0}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_POWER, OPTIC_U8, OPTIC_U8, 2, (uint8_t[]){2, 3}, (uint8_t[]){8, 4}, (uint8_t[]){0, 81}));
  OT_CHECK(run_elementwise(OPTIC_OP_MINIMUM, OPTIC_U8, OPTIC_U8, 5, ua, ub, (uint8_t[]){10, 3, 0, 2, 2}));
  uint8_t pa[] = {0, 0, 1, 1}, pb[] = {0, 1, 0, 1};
  OT_CHECK(run_elementwise(OPTIC_OP_AND, OPTIC_PRED, OPTIC_PRED, 4, pa, pb, (uint8_t[]){0, 0, 0, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_OR, OPTIC_PRED, OPTIC_PRED, 4, pa, pb, (uint8_t[]){0, 1, 1, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_MAXIMUM, OPTIC_PRED, OPTIC_PRED, 4, pa, pb, (uint8_t[]){0, 1, 1, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_MINIMUM, OPTIC_PRED, OPTIC_PRED, 4, pa, pb, (uint8_t[]){0, 0, 0, 1}));
}

static bool run_compare(optic_compare_dir dir, optic_dtype dt, int64_t n, const void *a, const void *b,
                        const uint8_t *want) {
  ev_fresh();
  int64_t d[] = {n};
  optic_node_id x = ev_param(ev_main, 0, dt, 1, d), y = ev_param(ev_main, 1, dt, 1, d), r;
  if (optic_graph_compare(ev_m, ev_main, dir, x, y, NULL, &r)) ev_die("compare");
  ev_root(ev_main, r);
  optic_literal_t *la = ev_lit(dt, 1, d, a), *lb = ev_lit(dt, 1, d, b);
  const optic_literal_t *args[] = {la, lb};
  bool ok = ev_check(ev_main, args, 2, OPTIC_PRED, 1, d, want);
  optic_literal_destroy(la);
  optic_literal_destroy(lb);
  return ok;
}

static void compare(void) {
  float a[] = {1.0f, NAN, -0.0f, 2.0f}, b[] = {2.0f, NAN, 0.0f, 1.0f};
  OT_CHECK(run_compare(OPTIC_CMP_LT, OPTIC_F32, 4, a, b, (uint8_t[]){1, 0, 0, 0}));
  OT_CHECK(run_compare(OPTIC_CMP_EQ, OPTIC_F32, 4, a, b, (uint8_t[]){0, 0, 1, 0}));
  OT_CHECK(run_compare(OPTIC_CMP_NE, OPTIC_F32, 4, a, b, (uint8_t[]){1, 1, 0, 1}));
  OT_CHECK(run_compare(OPTIC_CMP_GE, OPTIC_F32, 4, a, b, (uint8_t[]){0, 0, 1, 1}));
  double da[] = {1.0, NAN, 3.0}, db[] = {1.0, 0.0, 2.0};
  OT_CHECK(run_compare(OPTIC_CMP_LE, OPTIC_F64, 3, da, db, (uint8_t[]){1, 0, 0}));
  OT_CHECK(run_compare(OPTIC_CMP_NE, OPTIC_F64, 3, da, db, (uint8_t[]){0, 1, 1}));
  int32_t ia[] = {-1, 5, 3}, ib[] = {1, 5, 2};
  OT_CHECK(run_compare(OPTIC_CMP_GT, OPTIC_S32, 3, ia, ib, (uint8_t[]){0, 0, 1}));
  uint8_t ua[] = {255, 0}, ub[] = {1, 0};
  OT_CHECK(run_compare(OPTIC_CMP_GT, OPTIC_U8, 2, ua, ub, (uint8_t[]){1, 0}));
  uint8_t pa[] = {1, 0}, pb[] = {0, 0};
  OT_CHECK(run_compare(OPTIC_CMP_GT, OPTIC_PRED, 2, pa, pb, (uint8_t[]){1, 0})); /* false < true */
}

static void select_and_clamp(void) {
  ev_fresh();
  int64_t d[] = {4};
  optic_node_id p = ev_param(ev_main, 0, OPTIC_PRED, 1, d), ps = ev_param(ev_main, 1, OPTIC_PRED, 0, NULL);
  optic_node_id t = ev_param(ev_main, 2, OPTIC_F32, 1, d), f = ev_param(ev_main, 3, OPTIC_F32, 1, d);
  optic_node_id ti = ev_param(ev_main, 4, OPTIC_S32, 1, d), fi = ev_param(ev_main, 5, OPTIC_S32, 1, d);
  optic_node_id s1, s2, s3, tup;
  OT_EXPECT_OK(optic_graph_select(ev_m, ev_main, p, t, f, NULL, &s1));
  OT_EXPECT_OK(optic_graph_select(ev_m, ev_main, ps, t, f, NULL, &s2));
  OT_EXPECT_OK(optic_graph_select(ev_m, ev_main, p, ti, fi, NULL, &s3));
  optic_node_id els[] = {s1, s2, s3};
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, els, 3, NULL, &tup));
  ev_root(ev_main, tup);
  uint8_t pv[] = {1, 0, 0, 1}, psv = 0;
  float tv[] = {1, 2, 3, 4}, fv[] = {-1, -2, -3, -4};
  int32_t tiv[] = {10, 20, 30, 40}, fiv[] = {-10, -20, -30, -40};
  optic_literal_t *args[] = {ev_lit(OPTIC_PRED, 1, d, pv), ev_lit(OPTIC_PRED, 0, NULL, &psv),
                             ev_lit(OPTIC_F32, 1, d, tv),  ev_lit(OPTIC_F32, 1, d, fv),
                             ev_lit(OPTIC_S32, 1, d, tiv), ev_lit(OPTIC_S32, 1, d, fiv)};
  optic_literal_t *r = ev_run(ev_main, (const optic_literal_t *const *)args, 6);
  if (r) {
    const float *a = optic_literal_data(optic_literal_element(r, 0), NULL);
    const float *b = optic_literal_data(optic_literal_element(r, 1), NULL);
    const int32_t *c = optic_literal_data(optic_literal_element(r, 2), NULL);
    OT_CHECK(a[0] == 1 && a[1] == -2 && a[2] == -3 && a[3] == 4);
    OT_CHECK(b[0] == -1 && b[3] == -4);
    OT_CHECK(c[0] == 10 && c[1] == -20 && c[3] == 40);
  }
  optic_literal_destroy(r);
  for (int i = 0; i < 6; i++) optic_literal_destroy(args[i]);

  /* clamp(lo, x, hi): scalar, array and mixed bounds; NaN x propagates;
   * lo > hi gives hi. */
  ev_fresh();
  optic_node_id lo = ev_param(ev_main, 0, OPTIC_F32, 0, NULL), x = ev_param(ev_main, 1, OPTIC_F32, 1, d);
  optic_node_id hi = ev_param(ev_main, 2, OPTIC_F32, 0, NULL), hia = ev_param(ev_main, 3, OPTIC_F32, 1, d);
  optic_node_id xi = ev_param(ev_main, 4, OPTIC_S32, 1, d), loi = ev_param(ev_main, 5, OPTIC_S32, 0, NULL);
  optic_node_id c1, c2, c3, c4;
  OT_EXPECT_OK(optic_graph_clamp(ev_m, ev_main, lo, x, hi, NULL, &c1));
  OT_EXPECT_OK(optic_graph_clamp(ev_m, ev_main, lo, x, hia, NULL, &c2));
  OT_EXPECT_OK(optic_graph_clamp(ev_m, ev_main, hia, x, hia, NULL, &c3));
  OT_EXPECT_OK(optic_graph_clamp(ev_m, ev_main, loi, xi, xi, NULL, &c4));
  optic_node_id cs[] = {c1, c2, c3, c4};
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, cs, 4, NULL, &tup));
  ev_root(ev_main, tup);
  float lov = 0, xv[] = {-1, 0.5f, 2, NAN}, hiv = 1, hiav[] = {0.25f, 0.25f, 5, 1};
  int32_t xiv[] = {-3, 0, 3, 9}, loiv = 1;
  optic_literal_t *cargs[] = {ev_lit(OPTIC_F32, 0, NULL, &lov), ev_lit(OPTIC_F32, 1, d, xv),
                              ev_lit(OPTIC_F32, 0, NULL, &hiv), ev_lit(OPTIC_F32, 1, d, hiav),
                              ev_lit(OPTIC_S32, 1, d, xiv),     ev_lit(OPTIC_S32, 0, NULL, &loiv)};
  r = ev_run(ev_main, (const optic_literal_t *const *)cargs, 6);
  if (r) {
    const float *a = optic_literal_data(optic_literal_element(r, 0), NULL);
    const float *b = optic_literal_data(optic_literal_element(r, 1), NULL);
    const float *c = optic_literal_data(optic_literal_element(r, 2), NULL);
    const int32_t *e = optic_literal_data(optic_literal_element(r, 3), NULL);
    OT_CHECK(a[0] == 0 && a[1] == 0.5f && a[2] == 1 && isnan(a[3]));
    OT_CHECK(b[0] == 0 && b[1] == 0.25f && b[2] == 2 && isnan(b[3]));
    OT_CHECK(c[0] == 0.25f && c[1] == 0.25f && c[2] == 5 && isnan(c[3]));
    /* s32 clamp(1, x, x) = min(max(x, 1), x): x itself; below 1, lo > hi and hi = x wins. */
    OT_CHECK(e[0] == -3 && e[1] == 0 && e[2] == 3 && e[3] == 9);
  }
  optic_literal_destroy(r);
  for (int i = 0; i < 6; i++) optic_literal_destroy(cargs[i]);
}

static void convert(void) {
  /* f32 -> s32: truncation, NaN -> 0, saturation exactly at the docs' bounds. */
  float f[] = {2147483648.0f, -2147483904.0f, NAN, 2.9f, -2.9f, -2147483648.0f, INFINITY, -INFINITY, 2147483520.0f};
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F32, OPTIC_S32, 9, f, NULL,
                           (int32_t[]){INT32_MAX, INT32_MIN, 0, 2, -2, INT32_MIN, INT32_MAX, INT32_MIN, 2147483520}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F64, OPTIC_S32, 4,
                           (double[]){-2147483648.9, -2147483649.0, 1e300, NAN}, NULL,
                           (int32_t[]){INT32_MIN, INT32_MIN, INT32_MAX, 0}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_S32, OPTIC_F32, 2, (int32_t[]){16777217, INT32_MAX}, NULL,
                           (float[]){16777216.0f, 2147483648.0f}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F64, OPTIC_F32, 2, (double[]){1e300, 0.1}, NULL,
                           (float[]){INFINITY, 0.1f}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F32, OPTIC_F64, 1, (float[]){0.1f}, NULL, (double[]){(double)0.1f}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F32, OPTIC_PRED, 4, (float[]){0.0f, -0.0f, NAN, 0.5f}, NULL,
                           (uint8_t[]){0, 0, 1, 1}));
  /* To u8: floats saturate like s32 does, integers keep their low byte. */
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_F32, OPTIC_U8, 5, (float[]){-3.5f, 255.9f, 300.0f, NAN, 7.7f}, NULL,
                           (uint8_t[]){0, 255, 255, 0, 7}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_S32, OPTIC_U8, 3, (int32_t[]){-1, 256, 300}, NULL,
                           (uint8_t[]){255, 0, 44}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_U8, OPTIC_F32, 2, (uint8_t[]){0, 255}, NULL, (float[]){0, 255}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_U8, OPTIC_S32, 1, (uint8_t[]){200}, NULL, (int32_t[]){200}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_PRED, OPTIC_F32, 2, (uint8_t[]){1, 0}, NULL, (float[]){1, 0}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_PRED, OPTIC_S32, 2, (uint8_t[]){1, 0}, NULL, (int32_t[]){1, 0}));
  OT_CHECK(
      run_elementwise(OPTIC_OP_CONVERT, OPTIC_S32, OPTIC_PRED, 3, (int32_t[]){0, -4, 1}, NULL, (uint8_t[]){0, 1, 1}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_S32, OPTIC_F64, 1, (int32_t[]){INT32_MIN}, NULL,
                           (double[]){-2147483648.0}));
  OT_CHECK(run_elementwise(OPTIC_OP_CONVERT, OPTIC_U8, OPTIC_U8, 1, (uint8_t[]){9}, NULL, (uint8_t[]){9}));
}

static const ot_case cases[] = {
    {"unary_f32", unary_f32},
    {"unary_other_dtypes", unary_other_dtypes},
    {"binary_f32_and_f64", binary_f32_and_f64},
    {"binary_integers", binary_integers},
    {"compare", compare},
    {"select_and_clamp", select_and_clamp},
    {"convert", convert},
};
OT_MAIN(cases)
