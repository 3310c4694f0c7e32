/* Reverse-mode autodiff of dot (any dimension numbers) and reduce (add,
 * multiply, maximum, minimum) against central finite differences: reduce
 * in f64; dot in f32, the only float width optic's dot has below f16
 * (tolerance 2e-3 of the largest gradient: f32 rounding over h = 1e-3). */
#include "tests/graph/autodiff_util.h"

#define F32_TOL 2e-3
#define F64_TOL 1e-6

static optic_node_id tanh_of(optic_node_id y) {
  optic_node_id r;
  if (optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, y, NULL, &r)) ev_die("tanh");
  return r;
}

typedef struct dot_case {
  const char *what;
  int32_t lr, rr;
  int64_t ld[4], rd[4];
  optic_dot_dims d;
} dot_case;

static void test_dot_dimension_numbers(void) {
  static const dot_case cases[] = {
      {"matmul",
       2,
       2,
       {3, 4},
       {4, 5},
       {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}}},
      {"lhs transposed",
       2,
       2,
       {4, 3},
       {4, 5},
       {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {0}, .rhs_contracting = {0}}},
      {"outer product", 1, 1, {3}, {2}, {0}},
      {"vector dot", 1, 1, {6}, {6}, {.lhs_contracting_count = 1, .rhs_contracting_count = 1}},
      {"batch reordered",
       3,
       3,
       {3, 2, 4},
       {4, 5, 2},
       {.lhs_batch_count = 1,
        .rhs_batch_count = 1,
        .lhs_batch = {1},
        .rhs_batch = {2},
        .lhs_contracting_count = 1,
        .rhs_contracting_count = 1,
        .lhs_contracting = {2},
        .rhs_contracting = {0}}},
      {"two contracting, swapped",
       3,
       3,
       {2, 3, 4},
       {4, 5, 3},
       {.lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 2}, .rhs_contracting = {2, 0}}},
      {"two batch dims",
       4,
       4,
       {2, 3, 1, 4},
       {3, 2, 4, 2},
       {.lhs_batch_count = 2,
        .rhs_batch_count = 2,
        .lhs_batch = {1, 0},
        .rhs_batch = {0, 1},
        .lhs_contracting_count = 1,
        .rhs_contracting_count = 1,
        .lhs_contracting = {3},
        .rhs_contracting = {2}}},
      {"size-1 contraction",
       2,
       2,
       {3, 1},
       {1, 2},
       {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const dot_case *c = &cases[i];
    ev_fresh();
    optic_node_id a = ev_param(ev_main, 0, OPTIC_F32, c->lr, c->ld), b = ev_param(ev_main, 1, OPTIC_F32, c->rr, c->rd),
                  y;
    OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, a, b, &c->d, NULL, &y));
    ev_root(ev_main, tanh_of(y));
    OT_CHECK(adf_check(c->what, ev_main, -1, 1, F32_TOL), "dot %s", c->what);
  }
}

static void reduce_case(optic_opcode op, double lo, double hi, const int64_t *rdims, int32_t nr, bool init_param) {
  ev_fresh();
  optic_comp_id f = ev_binary_comp("combine", op, OPTIC_F64);
  int64_t d[3] = {3, 4, 2};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 3, d), init, y, sq;
  if (init_param) {
    init = ev_param(ev_main, 1, OPTIC_F64, 0, NULL);
  } else {
    double v = op == OPTIC_OP_MAXIMUM ? -HUGE_VAL : op == OPTIC_OP_MINIMUM ? HUGE_VAL : op == OPTIC_OP_MULTIPLY ? 1 : 0;
    OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &v, 8, NULL, &init));
  }
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &x, &init, 1, rdims, nr, f, NULL, &y));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &sq));
  ev_root(ev_main, sq);
  OT_CHECK(adf_check(optic_opcode_name(op), ev_main, lo, hi, F64_TOL), "reduce %s over %d dims", optic_opcode_name(op),
           nr);
}

static void test_reduce(void) {
  static const int64_t dims[][3] = {{1}, {0, 2}, {0, 1, 2}};
  static const int32_t n[] = {1, 2, 3};
  for (int i = 0; i < 3; i++) {
    reduce_case(OPTIC_OP_ADD, -1, 1, dims[i], n[i], true);
    reduce_case(OPTIC_OP_MULTIPLY, 0.5, 1.5, dims[i], n[i], true);
    reduce_case(OPTIC_OP_MAXIMUM, -1, 1, dims[i], n[i], false);
    reduce_case(OPTIC_OP_MINIMUM, -1, 1, dims[i], n[i], false);
  }
  reduce_case(OPTIC_OP_ADD, -1, 1, NULL, 0, false); /* no dims: the identity */
}

/* Ties: maximum over [2, 2, 1] splits the gradient evenly between the two
 * 2s (JAX's rule), so the gradient of sum-of-max is [0.5, 0.5, 0]. */
static void test_reduce_max_tie(void) {
  ev_fresh();
  optic_comp_id f = ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, (int64_t[]){3}), init, y;
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){-INFINITY}, 4, NULL, &init));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &x, &init, 1, (int64_t[]){0}, 1, f, NULL, &y));
  ev_root(ev_main, y);
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, NULL, &g));
  optic_literal_t *in = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){2, 2, 1});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){in}, 1);
  OT_CHECK(r != NULL);
  if (r) {
    optic_literal_t *want = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){0.5f, 0.5f, 0});
    OT_CHECK(ev_same(want, optic_literal_element(r, 1), OPTIC_MATCH_BITWISE));
    optic_literal_destroy(want);
  }
  optic_literal_destroy(r);
  optic_literal_destroy(in);
}

/* A two-layer perceptron with bias, tanh and a mean-squared loss: every
 * parameter's gradient at once (scalar output, no seed). */
static void test_mlp(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, (int64_t[]){4, 3}),
                w1 = ev_param(ev_main, 1, OPTIC_F32, 2, (int64_t[]){3, 5}),
                b1 = ev_param(ev_main, 2, OPTIC_F32, 1, (int64_t[]){5}),
                w2 = ev_param(ev_main, 3, OPTIC_F32, 2, (int64_t[]){5, 2}),
                t = ev_param(ev_main, 4, OPTIC_F32, 2, (int64_t[]){4, 2}), h, bb, o, e, s, zero;
  optic_dot_dims mm = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}};
  OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, x, w1, &mm, NULL, &h));
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, b1, &(optic_shape){2, {4, 5}}, (int64_t[]){1}, 1, NULL, &bb));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, h, bb, NULL, &h));
  h = tanh_of(h);
  OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, h, w2, &mm, NULL, &o));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_SUBTRACT, o, t, NULL, &e));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, e, e, NULL, &e));
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){0}, 4, NULL, &zero));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &e, &zero, 1, (int64_t[]){0, 1}, 2, add, NULL, &s));
  ev_root(ev_main, s);
  OT_CHECK(adf_check("mlp", ev_main, -1, 1, F32_TOL));
}

/* batch-norm-training (feature dim 1 and 3) through its normalized output
 * (XLA's batch-norm-grad), its batch statistics, or all three:
 * use 1 = tanh(y), 2 = mean and variance only, 3 = tanh(y) * mean + var. */
static void batch_norm_training(int use) {
  for (int64_t fi = 1; fi <= 3; fi += 2) {
    ev_fresh();
    int64_t d[4] = {3, 4, 2, 4};
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 4, d), s = ev_param(ev_main, 1, OPTIC_F64, 1, (int64_t[]){4}),
                  o = ev_param(ev_main, 2, OPTIC_F64, 1, (int64_t[]){4}), bn, y, mean, var, r;
    OT_EXPECT_OK(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_TRAINING, (optic_node_id[]){x, s, o}, 3,
                                        0.001f, fi, NULL, &bn));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, bn, 0, NULL, &y));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, bn, 1, NULL, &mean));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, bn, 2, NULL, &var));
    OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, y, NULL, &r));
    optic_shape xs = ev_shape(4, d);
    if (use == 2) OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, mean, var, NULL, &r));
    if (use == 3) {
      optic_node_id mb, vb;
      OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, mean, &xs, &fi, 1, NULL, &mb));
      OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, var, &xs, &fi, 1, NULL, &vb));
      OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, r, mb, NULL, &r));
      OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, r, vb, NULL, &r));
    }
    ev_root(ev_main, r);
    OT_CHECK(adf_check("batch-norm-training", ev_main, -1, 1, F64_TOL), "use %d, feature index %lld", use,
             (long long)fi);
  }
}

static void test_batch_norm_training(void) { batch_norm_training(1); }
static void test_batch_norm_statistics(void) {
  batch_norm_training(2);
  batch_norm_training(3);
}

/* batch-norm-inference w.r.t. all five operands (variance in [0.5, 1.5]). */
static void test_batch_norm_inference(void) {
  for (int64_t fi = 0; fi <= 2; fi += 2) {
    ev_fresh();
    int64_t d[3] = {3, 5, 2}, c = d[fi];
    optic_node_id xs[5] = {ev_param(ev_main, 0, OPTIC_F64, 3, d)}, y;
    for (int32_t i = 1; i < 5; i++) xs[i] = ev_param(ev_main, i, OPTIC_F64, 1, &c);
    OT_EXPECT_OK(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_INFERENCE, xs, 5, 0.01f, fi, NULL, &y));
    OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, y, NULL, &y));
    ev_root(ev_main, y);
    OT_CHECK(adf_check("batch-norm-inference", ev_main, 0.5, 1.5, F64_TOL), "feature index %lld", (long long)fi);
  }
}

static const ot_case cases[] = {
    {"batch_norm_training", test_batch_norm_training},
    {"batch_norm_statistics", test_batch_norm_statistics},
    {"batch_norm_inference", test_batch_norm_inference},
    {"dot_dimension_numbers", test_dot_dimension_numbers},
    {"reduce", test_reduce},
    {"reduce_max_tie", test_reduce_max_tie},
    {"mlp", test_mlp},
};
OT_MAIN(cases)
