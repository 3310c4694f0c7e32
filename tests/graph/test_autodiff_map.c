/* Reverse-mode autodiff of map against central finite differences in f64:
 * a computation of two operands with a constant, transcendental ops, a
 * select on a compare and a convert (the rule rebuilds it over whole
 * arrays and differentiates that), at sizes 0, 1 and [3, 4]; a map whose
 * computation holds a non-elementwise op is refused. */
#include "tests/graph/autodiff_util.h"

/* f(a, b) = select(a > b, a * sin(b), exp(a) - 0.5 * b) + f64(s32(3 a)) (no gradient). */
static optic_comp_id body(void) {
  optic_comp_id f = ev_comp("f");
  optic_node_id a = ev_param(f, 0, OPTIC_F64, 0, NULL), b = ev_param(f, 1, OPTIC_F64, 0, NULL), p, s, t, e, h, k, r, c;
  OT_EXPECT_OK(optic_graph_compare(ev_m, f, OPTIC_CMP_GT, a, b, NULL, &p));
  OT_EXPECT_OK(optic_graph_unary(ev_m, f, OPTIC_OP_SINE, b, NULL, &s));
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_MULTIPLY, a, s, NULL, &t));
  OT_EXPECT_OK(optic_graph_unary(ev_m, f, OPTIC_OP_EXPONENTIAL, a, NULL, &e));
  h = ev_const(f, OPTIC_F64, 0, NULL, (double[]){0.5});
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_MULTIPLY, h, b, NULL, &k));
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_SUBTRACT, e, k, NULL, &k));
  OT_EXPECT_OK(optic_graph_select(ev_m, f, p, t, k, NULL, &r));
  optic_node_id three = ev_const(f, OPTIC_F64, 0, NULL, (double[]){3});
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_MULTIPLY, a, three, NULL, &c));
  OT_EXPECT_OK(optic_graph_convert(ev_m, f, c, OPTIC_S32, NULL, &c));
  OT_EXPECT_OK(optic_graph_convert(ev_m, f, c, OPTIC_F64, NULL, &c));
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_ADD, r, c, NULL, &r));
  ev_root(f, r);
  return f;
}

static void test_map(void) {
  const int64_t shapes[][2] = {{0, 0}, {1, 0}, {3, 4}};
  const int32_t ranks[] = {1, 1, 2};
  for (int i = 0; i < 3; i++) {
    ev_fresh();
    optic_comp_id f = body();
    optic_node_id xs[2] = {ev_param(ev_main, 0, OPTIC_F64, ranks[i], shapes[i]),
                           ev_param(ev_main, 1, OPTIC_F64, ranks[i], shapes[i])},
                  y;
    OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, xs, 2, f, NULL, &y));
    ev_root(ev_main, y);
    char what[64];
    snprintf(what, sizeof what, "map, shape %d", i);
    OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "%s", what);
  }
}

/* map of a computation holding a reduce: refused, naming the map. */
static void test_refused(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64), f = ev_comp("f");
  optic_node_id a = ev_param(f, 0, OPTIC_F64, 0, NULL), z = ev_const(f, OPTIC_F64, 0, NULL, (double[]){0}), r;
  OT_EXPECT_OK(optic_graph_reduce(ev_m, f, &a, &z, 1, NULL, 0, add, NULL, &r));
  ev_root(f, r);
  int64_t n = 3;
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &n), y;
  OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, &x, 1, f, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "cannot differentiate map") != NULL, "%s", optic_last_error());
}

static const ot_case cases[] = {
    {"map", test_map},
    {"refused", test_refused},
};
OT_MAIN(cases)
