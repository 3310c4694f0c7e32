/* Reverse-mode autodiff of the elementwise ops, checked against central
 * finite differences in f64 (tests/graph/autodiff_util.h): every
 * differentiable unary and binary opcode, select, clamp, convert, with
 * shapes from scalars to [3,5], on inputs away from each op's kinks. */
#include "tests/graph/autodiff_util.h"

#define F64_TOL 1e-6

static void unary_case(optic_opcode op, double lo, double hi, int32_t rank, const int64_t *dims) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, rank, dims), y, z;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, op, x, NULL, &y));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, x, NULL, &z)); /* two paths to x */
  ev_root(ev_main, z);
  OT_CHECK(adf_check(optic_opcode_name(op), ev_main, lo, hi, F64_TOL), "unary %s", optic_opcode_name(op));
}

static void test_unary_ops(void) {
  static const struct {
    optic_opcode op;
    double lo, hi;
  } ops[] = {
      {OPTIC_OP_NEGATE, -2, 2},
      {OPTIC_OP_ABS, 0.1, 2},
      {OPTIC_OP_EXPONENTIAL, -2, 2},
      {OPTIC_OP_LOG, 0.2, 3},
      {OPTIC_OP_SQRT, 0.2, 3},
      {OPTIC_OP_RSQRT, 0.2, 3},
      {OPTIC_OP_TANH, -2, 2},
      {OPTIC_OP_LOGISTIC, -3, 3},
      {OPTIC_OP_ERF, -2, 2},
      {OPTIC_OP_LOG_PLUS_ONE, -0.5, 2},
      {OPTIC_OP_EXPONENTIAL_MINUS_ONE, -2, 2},
      {OPTIC_OP_SINE, -3, 3},
      {OPTIC_OP_COSINE, -3, 3},
      {OPTIC_OP_TAN, -1.2, 1.2},
      {OPTIC_OP_CBRT, 0.2, 3},
      {OPTIC_OP_COPY, -2, 2},
  };
  int64_t d[2] = {3, 5};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    unary_case(ops[i].op, ops[i].lo, ops[i].hi, 0, NULL);
    unary_case(ops[i].op, ops[i].lo, ops[i].hi, 2, d);
  }
  unary_case(OPTIC_OP_ABS, -2, -0.1, 1, d); /* negative side */
}

/* Ops whose derivative is zero: the gradient is x's own path only. */
static void test_piecewise_constant_ops(void) {
  optic_opcode ops[] = {OPTIC_OP_SIGN, OPTIC_OP_FLOOR, OPTIC_OP_CEIL, OPTIC_OP_ROUND_NEAREST_AFZ,
                        OPTIC_OP_ROUND_NEAREST_EVEN};
  int64_t d[1] = {7};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) unary_case(ops[i], 0.1, 0.4, 1, d);
}

static void binary_case(optic_opcode op, double lo, double hi, int32_t rank, const int64_t *dims, bool same) {
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F64, rank, dims),
                b = same ? a : ev_param(ev_main, 1, OPTIC_F64, rank, dims), y;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, op, a, b, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check(optic_opcode_name(op), ev_main, lo, hi, F64_TOL), "binary %s same=%d", optic_opcode_name(op),
           same);
}

static void test_binary_ops(void) {
  static const struct {
    optic_opcode op;
    double lo, hi;
  } ops[] = {
      {OPTIC_OP_ADD, -2, 2},    {OPTIC_OP_SUBTRACT, -2, 2}, {OPTIC_OP_MULTIPLY, -2, 2}, {OPTIC_OP_DIVIDE, 0.5, 2},
      {OPTIC_OP_POWER, 0.5, 2}, {OPTIC_OP_MAXIMUM, -2, 2},  {OPTIC_OP_MINIMUM, -2, 2},  {OPTIC_OP_ATAN2, 0.3, 2},
  };
  int64_t d[2] = {4, 3}, one[1] = {1};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    binary_case(ops[i].op, ops[i].lo, ops[i].hi, 2, d, false);
    binary_case(ops[i].op, ops[i].lo, ops[i].hi, 0, NULL, false);
    binary_case(ops[i].op, ops[i].lo, ops[i].hi, 1, one, true); /* both operands the same value */
  }
}

/* remainder(a, b) on a / b in (2, 3): away from its jumps. */
static void test_remainder(void) {
  ev_fresh();
  int64_t d[1] = {6};
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F64, 1, d), b = ev_param(ev_main, 1, OPTIC_F64, 1, d), y, t, two;
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &(double){2.5}, 8, NULL, &two));
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, two, &(optic_shape){1, {6}}, NULL, 0, NULL, &two));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, a, two, NULL, &t)); /* a + 2.5 in (2.3, 2.7) */
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_REMAINDER, t, b, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("remainder", ev_main, -0.2, 0.2, F64_TOL));
  (void)b;
}

static void test_select_compare(void) {
  ev_fresh();
  int64_t d[2] = {2, 5};
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F64, 2, d), b = ev_param(ev_main, 1, OPTIC_F64, 2, d), p, aa, y;
  OT_EXPECT_OK(optic_graph_compare(ev_m, ev_main, OPTIC_CMP_GT, a, b, NULL, &p));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, a, a, NULL, &aa));
  OT_EXPECT_OK(optic_graph_select(ev_m, ev_main, p, aa, b, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("select", ev_main, -1, 1, F64_TOL));
}

static void test_select_scalar_pred(void) {
  ev_fresh();
  int64_t d[1] = {3};
  optic_node_id s = ev_param(ev_main, 0, OPTIC_F64, 0, NULL), a = ev_param(ev_main, 1, OPTIC_F64, 1, d),
                b = ev_param(ev_main, 2, OPTIC_F64, 1, d), zero, p, y;
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &(double){0}, 8, NULL, &zero));
  OT_EXPECT_OK(optic_graph_compare(ev_m, ev_main, OPTIC_CMP_LT, s, zero, NULL, &p));
  OT_EXPECT_OK(optic_graph_select(ev_m, ev_main, p, a, b, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("select scalar pred", ev_main, -1, 1, F64_TOL));
}

/* clamp with scalar and array bounds; inputs drawn wider than the bounds,
 * so some elements are clamped to each side. */
static void test_clamp(void) {
  for (int arrays = 0; arrays < 2; arrays++) {
    ev_fresh();
    int64_t d[1] = {9};
    int32_t r = arrays ? 1 : 0;
    optic_node_id lo = ev_param(ev_main, 0, OPTIC_F64, r, d), x = ev_param(ev_main, 1, OPTIC_F64, 1, d),
                  hi = ev_param(ev_main, 2, OPTIC_F64, r, d), t, u, y, k, k3;
    OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &(double){1.5}, 8, NULL, &k));
    OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &(double){3}, 8, NULL, &k3));
    OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, k3, &(optic_shape){1, {9}}, NULL, 0, NULL, &k3));
    if (arrays) OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, k, &(optic_shape){1, {9}}, NULL, 0, NULL, &k));
    /* lo - 1.5 in [-2.5, -0.5] < hi + 1.5 in [0.5, 2.5]; 3x in [-3, 3] */
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, hi, k, NULL, &t));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_SUBTRACT, lo, k, NULL, &u));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, x, k3, NULL, &x));
    OT_EXPECT_OK(optic_graph_clamp(ev_m, ev_main, u, x, t, NULL, &y));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &y));
    ev_root(ev_main, y);
    OT_CHECK(adf_check("clamp", ev_main, -1, 1, F64_TOL), "arrays=%d", arrays);
  }
}

/* f32 -> f64 -> f32: the gradient converts back. */
static void test_convert(void) {
  ev_fresh();
  int64_t d[1] = {5};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d), w, e, y;
  OT_EXPECT_OK(optic_graph_convert(ev_m, ev_main, x, OPTIC_F64, NULL, &w));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_EXPONENTIAL, w, NULL, &e));
  OT_EXPECT_OK(optic_graph_convert(ev_m, ev_main, e, OPTIC_F32, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("convert", ev_main, -1, 1, 2e-3));
}

/* Integer paths carry no gradient: x * convert(floor-ish int) is x's own. */
static void test_integer_path_is_zero(void) {
  ev_fresh();
  int64_t d[1] = {4};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, d), i, f, y;
  OT_EXPECT_OK(optic_graph_convert(ev_m, ev_main, x, OPTIC_S32, NULL, &i));
  OT_EXPECT_OK(optic_graph_convert(ev_m, ev_main, i, OPTIC_F64, NULL, &f));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, x, f, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("integer path", ev_main, 2.2, 2.8, F64_TOL));
}

/* power at a = 0: JAX's rule reads log 0 as 0, so 0^2 gives d/db = 0 (not
 * 0 * -inf = NaN) and d/da = 2 * 0 = 0. */
static void test_power_at_zero(void) {
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F64, 0, NULL), b = ev_param(ev_main, 1, OPTIC_F64, 0, NULL), y;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_POWER, a, b, NULL, &y));
  ev_root(ev_main, y);
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0, 1}, 2, NULL, &g));
  optic_literal_t *av = ev_lit(OPTIC_F64, 0, NULL, (double[]){0}), *bv = ev_lit(OPTIC_F64, 0, NULL, (double[]){2});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){av, bv}, 2);
  if (r) {
    double da = *(const double *)optic_literal_data(optic_literal_element(r, 1), NULL);
    double db = *(const double *)optic_literal_data(optic_literal_element(r, 2), NULL);
    OT_CHECK(da == 0 && db == 0, "d/da %g, d/db %g", da, db);
  }
  optic_literal_destroy(r);
  optic_literal_destroy(av);
  optic_literal_destroy(bv);
}

static const ot_case cases[] = {
    {"power_at_zero", test_power_at_zero},
    {"unary_ops", test_unary_ops},
    {"piecewise_constant_ops", test_piecewise_constant_ops},
    {"binary_ops", test_binary_ops},
    {"remainder", test_remainder},
    {"select_compare", test_select_compare},
    {"select_scalar_pred", test_select_scalar_pred},
    {"clamp", test_clamp},
    {"convert", test_convert},
    {"integer_path_is_zero", test_integer_path_is_zero},
};
OT_MAIN(cases)
