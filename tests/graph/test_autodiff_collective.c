/* Reverse-mode autodiff of the collectives (JAX's transposes: all-reduce
 * sum -> all-reduce sum, all-gather <-> reduce-scatter, collective-permute
 * -> the inverted pairs). optic evaluates single-replica programs, where
 * they are identities: central finite differences in f64 check the
 * values, and the gradient computation is checked to hold the transposed
 * collective (with the inverted pairs for a permute over replicas the
 * evaluator cannot run). An all-reduce maximum is refused. */
#include "tests/graph/autodiff_util.h"

/* How many instructions of opcode op computation c has. */
static int32_t count_op(optic_comp_id c, optic_opcode op) {
  int32_t n = 0, k = 0;
  const optic_node_id *ids = optic_computation_instructions(ev_m, c, &n);
  for (int32_t i = 0; i < n; i++) k += optic_node_opcode(ev_m, ids[i]) == op;
  return k;
}

static optic_comp_id grad_of_main(int32_t n_wrt) {
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g = -1;
  int32_t wrt[2] = {0, 1};
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, wrt, n_wrt, &o, &g));
  return g;
}

static optic_node_id tanh_of(optic_node_id x) {
  optic_node_id y;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, x, NULL, &y));
  return y;
}

static void test_all_reduce(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  int64_t d[2] = {3, 4};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, d), y;
  OT_EXPECT_OK(optic_graph_all_reduce(ev_m, ev_main, &x, 1, add, (int32_t[]){0}, (int32_t[]){1}, 1, NULL, &y));
  ev_root(ev_main, tanh_of(y));
  OT_CHECK(adf_check("all-reduce", ev_main, -1, 1, 1e-6));
  OT_CHECK(count_op(grad_of_main(1), OPTIC_OP_ALL_REDUCE) == 2, "the forward's and the cotangent's all-reduce");
}

static void test_all_reduce_tuple(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  int64_t d[1] = {5};
  optic_node_id xs[2] = {ev_param(ev_main, 0, OPTIC_F64, 1, d), ev_param(ev_main, 1, OPTIC_F64, 1, d)}, t, a, b, r;
  OT_EXPECT_OK(optic_graph_all_reduce(ev_m, ev_main, xs, 2, add, NULL, NULL, 0, NULL, &t));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, t, 0, NULL, &a));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, t, 1, NULL, &b));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, a, b, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(adf_check("all-reduce of two", ev_main, -1, 1, 1e-6));
}

static void test_gather_scatter(void) {
  for (int which = 0; which < 2; which++) {
    ev_fresh();
    optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
    int64_t d[2] = {2, 6};
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, d), y;
    if (which == 0) OT_EXPECT_OK(optic_graph_all_gather(ev_m, ev_main, x, 1, 1, NULL, &y));
    else OT_EXPECT_OK(optic_graph_reduce_scatter(ev_m, ev_main, x, 1, 1, add, NULL, &y));
    ev_root(ev_main, tanh_of(y));
    OT_CHECK(adf_check(which ? "reduce-scatter" : "all-gather", ev_main, -1, 1, 1e-6));
    optic_opcode back = which == 0 ? OPTIC_OP_REDUCE_SCATTER : OPTIC_OP_ALL_GATHER;
    OT_CHECK(count_op(grad_of_main(1), back) == 1, "the transpose of %s", which ? "reduce-scatter" : "all-gather");
  }
}

static void test_collective_permute(void) {
  ev_fresh();
  int64_t d[1] = {4};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, d), y;
  OT_EXPECT_OK(optic_graph_collective_permute(ev_m, ev_main, x, (int64_t[]){0, 0}, 1, NULL, &y));
  ev_root(ev_main, tanh_of(y));
  OT_CHECK(adf_check("collective-permute (0, 0)", ev_main, -1, 1, 1e-6));
  /* pairs (0 -> 1), (1 -> 2): the cotangent goes (1 -> 0), (2 -> 1) */
  ev_fresh();
  x = ev_param(ev_main, 0, OPTIC_F64, 1, d);
  OT_EXPECT_OK(optic_graph_collective_permute(ev_m, ev_main, x, (int64_t[]){0, 1, 1, 2}, 2, NULL, &y));
  ev_root(ev_main, tanh_of(y));
  optic_comp_id g = grad_of_main(1);
  int32_t n = 0, found = 0;
  const optic_node_id *ids = optic_computation_instructions(ev_m, g, &n);
  for (int32_t i = 0; i < n; i++) {
    optic_node_attrs_t a;
    if (optic_node_opcode(ev_m, ids[i]) != OPTIC_OP_COLLECTIVE_PERMUTE || optic_node_attrs(ev_m, ids[i], &a)) continue;
    const int64_t *p = a.collective_permute.pairs;
    bool inverted = a.collective_permute.n_pairs == 2 && p[0] == 1 && p[1] == 0 && p[2] == 2 && p[3] == 1;
    bool forward = a.collective_permute.n_pairs == 2 && p[0] == 0 && p[1] == 1;
    found += inverted ? 1 : forward ? 0 : 100;
  }
  OT_CHECK(found == 1, "one permute with the inverted pairs (found %d)", (int)found);
}

static void test_max_refused(void) {
  ev_fresh();
  optic_comp_id mx = ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F64);
  int64_t d[1] = {3};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, d), y;
  OT_EXPECT_OK(optic_graph_all_reduce(ev_m, ev_main, &x, 1, mx, NULL, NULL, 0, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "all-reduce") && strstr(optic_last_error(), "sum"), "%s", optic_last_error());
}

static const ot_case cases[] = {
    {"all_reduce", test_all_reduce},
    {"all_reduce_tuple", test_all_reduce_tuple},
    {"all_gather_reduce_scatter", test_gather_scatter},
    {"collective_permute", test_collective_permute},
    {"max_refused", test_max_refused},
};
OT_MAIN(cases)
