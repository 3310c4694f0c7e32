/* Reverse-mode autodiff of scatter with the replace (returns the update:
 * JAX's .at[].set), multiply, maximum and minimum combiners against
 * central finite differences in f64: rows with a duplicate and an
 * out-of-bounds index (skipped), overlapping 2-D windows with one partly
 * outside, no updates at all, and every update on one element. Maximum's
 * tie rule (g split evenly among the equal operand and update elements,
 * JAX's rule) is checked exactly. */
#include "tests/graph/autodiff_util.h"

static optic_comp_id combiner(optic_opcode op) {
  if (op != OPTIC_OP_SCATTER) return ev_binary_comp("combine", op, OPTIC_F64);
  optic_comp_id c = ev_comp("replace");
  ev_param(c, 0, OPTIC_F64, 0, NULL);
  ev_root(c, ev_param(c, 1, OPTIC_F64, 0, NULL));
  return c;
}

typedef struct sc_case {
  const char *what;
  int32_t xr, ur, ir;
  int64_t xd[3], ud[3], id[2];
  int32_t idx[8];
  optic_scatter_dims d;
} sc_case;

static const sc_case cases_[] = {
    {"rows {1, 4, 1, 9} of [5,3]",
     2,
     2,
     1,
     {5, 3},
     {4, 3},
     {4},
     {1, 4, 1, 9},
     {.n_update_window_dims = 1,
      .update_window_dims = {1},
      .n_inserted = 1,
      .inserted_window_dims = {0},
      .n_scatter_dims_to_operand_dims = 1,
      .scatter_dims_to_operand_dims = {0},
      .index_vector_dim = 1}},
    {"2x2 windows at (0,1), (1,2), (3,4) of [4,5]",
     2,
     3,
     2,
     {4, 5},
     {3, 2, 2},
     {3, 2},
     {0, 1, 1, 2, 3, 4},
     {.n_update_window_dims = 2,
      .update_window_dims = {1, 2},
      .n_scatter_dims_to_operand_dims = 2,
      .scatter_dims_to_operand_dims = {0, 1},
      .index_vector_dim = 1}},
    {"no updates",
     2,
     2,
     1,
     {5, 3},
     {0, 3},
     {0},
     {0},
     {.n_update_window_dims = 1,
      .update_window_dims = {1},
      .n_inserted = 1,
      .inserted_window_dims = {0},
      .n_scatter_dims_to_operand_dims = 1,
      .scatter_dims_to_operand_dims = {0},
      .index_vector_dim = 1}},
    {"three updates on one element",
     1,
     1,
     1,
     {1},
     {3},
     {3},
     {0, 0, 0},
     {.n_inserted = 1,
      .inserted_window_dims = {0},
      .n_scatter_dims_to_operand_dims = 1,
      .scatter_dims_to_operand_dims = {0},
      .index_vector_dim = 1}},
};

static void run(optic_opcode op, const char *name, double lo, double hi) {
  for (size_t i = 0; i < sizeof cases_ / sizeof cases_[0]; i++) {
    const sc_case *k = &cases_[i];
    ev_fresh();
    optic_comp_id f = combiner(op);
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, k->xr, k->xd), u = ev_param(ev_main, 1, OPTIC_F64, k->ur, k->ud);
    optic_node_id idx = ev_const(ev_main, OPTIC_S32, k->ir, k->id, k->idx), y, sq;
    OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, idx, u, &k->d, f, NULL, &y));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &sq));
    ev_root(ev_main, sq);
    char what[128];
    snprintf(what, sizeof what, "scatter-%s %s", name, k->what);
    OT_CHECK(adf_check(what, ev_main, lo, hi, 1e-6), "%s", what);
  }
}

static void test_replace(void) { run(OPTIC_OP_SCATTER, "replace", -1, 1); }
static void test_multiply(void) {
  run(OPTIC_OP_MULTIPLY, "multiply", 0.5, 1.5);
  run(OPTIC_OP_MULTIPLY, "multiply (signs)", -1, 1);
}
static void test_maximum(void) { run(OPTIC_OP_MAXIMUM, "maximum", -1, 1); }
static void test_minimum(void) { run(OPTIC_OP_MINIMUM, "minimum", -1, 1); }

/* x = {1, 5}, updates {5, 5, 2} at {1, 1, 0}: y = {2, 5}. Seed {1, 3}:
 * position 1's 3 is split among x[1] and both updates (1 each); update 2
 * takes position 0's 1; x[0] lost to it. */
static void test_maximum_ties(void) {
  ev_fresh();
  int64_t two = 2, three = 3;
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &two), u = ev_param(ev_main, 1, OPTIC_F64, 1, &three), y;
  optic_node_id idx = ev_const(ev_main, OPTIC_S32, 1, &three, (int32_t[]){1, 1, 0});
  optic_scatter_dims d = {.n_inserted = 1,
                          .inserted_window_dims = {0},
                          .n_scatter_dims_to_operand_dims = 1,
                          .scatter_dims_to_operand_dims = {0},
                          .index_vector_dim = 1};
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, idx, u, &d, combiner(OPTIC_OP_MAXIMUM), NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0, 1}, 2, &o, &g));
  optic_literal_t *xl = ev_lit(OPTIC_F64, 1, &two, (double[]){1, 5}),
                  *ul = ev_lit(OPTIC_F64, 1, &three, (double[]){5, 5, 2});
  optic_literal_t *sl = ev_lit(OPTIC_F64, 1, &two, (double[]){1, 3});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){xl, ul, sl}, 3);
  optic_literal_t *wx = ev_lit(OPTIC_F64, 1, &two, (double[]){0, 1}),
                  *wu = ev_lit(OPTIC_F64, 1, &three, (double[]){1, 1, 1});
  OT_CHECK(r && ev_same(wx, optic_literal_element(r, 1), OPTIC_MATCH_BITWISE), "operand");
  OT_CHECK(r && ev_same(wu, optic_literal_element(r, 2), OPTIC_MATCH_BITWISE), "updates");
  optic_literal_destroy(xl), optic_literal_destroy(ul), optic_literal_destroy(sl), optic_literal_destroy(r);
  optic_literal_destroy(wx), optic_literal_destroy(wu);
}

/* A combiner with no rule is refused, naming the scatter. */
static void test_other_combiner_refused(void) {
  ev_fresh();
  int64_t two = 2;
  optic_comp_id f = ev_binary_comp("sub", OPTIC_OP_SUBTRACT, OPTIC_F64);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &two), u = ev_param(ev_main, 1, OPTIC_F64, 1, &two), y, s;
  optic_node_id idx = ev_const(ev_main, OPTIC_S32, 1, &two, (int32_t[]){0, 1});
  optic_scatter_dims d = {.n_inserted = 1,
                          .inserted_window_dims = {0},
                          .n_scatter_dims_to_operand_dims = 1,
                          .scatter_dims_to_operand_dims = {0},
                          .index_vector_dim = 1};
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, idx, u, &d, f, NULL, &y));
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  optic_node_id zero = ev_const(ev_main, OPTIC_F64, 0, NULL, (double[]){0});
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &y, &zero, 1, (int64_t[]){0}, 1, add, NULL, &s));
  ev_root(ev_main, s);
  optic_comp_id g;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0, 1}, 2, NULL, &g), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "cannot differentiate scatter") != NULL, "%s", optic_last_error());
}

static const ot_case cases[] = {
    {"replace", test_replace},           {"multiply", test_multiply},
    {"maximum", test_maximum},           {"minimum", test_minimum},
    {"maximum_ties", test_maximum_ties}, {"other_combiner_refused", test_other_combiner_refused},
};
OT_MAIN(cases)
