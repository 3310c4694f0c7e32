/* The gradient's cost, from the cost model (XLA's counting rules): for
 * dot-dominated graphs differentiated w.r.t. every dot operand, the
 * backward part (the value_and_grad computation minus the forward it
 * contains) estimates 2x the forward's FLOPs, within 10%, before and after
 * optic_graph_optimize. Prints the figures. */
#include "tests/graph/autodiff_util.h"

typedef struct layer_spec {
  int64_t batch, in, hidden, out;
  int32_t layers;
} layer_spec;

/* An MLP: x [batch, in] through `layers` dense layers with bias and tanh,
 * summed. Parameters: x, then per layer W and b. */
static int32_t build_mlp(const layer_spec *s) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  optic_node_id h = ev_param(ev_main, 0, OPTIC_F32, 2, (int64_t[]){s->batch, s->in}), zero, y;
  int64_t width = s->in;
  int32_t np = 1;
  optic_dot_dims mm = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}};
  for (int32_t l = 0; l < s->layers; l++) {
    int64_t next = l == s->layers - 1 ? s->out : s->hidden;
    optic_node_id w = ev_param(ev_main, np++, OPTIC_F32, 2, (int64_t[]){width, next}),
                  b = ev_param(ev_main, np++, OPTIC_F32, 1, (int64_t[]){next}), bb;
    OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, h, w, &mm, NULL, &h));
    OT_EXPECT_OK(
        optic_graph_broadcast(ev_m, ev_main, b, &(optic_shape){2, {s->batch, next}}, (int64_t[]){1}, 1, NULL, &bb));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, h, bb, NULL, &h));
    OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, h, NULL, &h));
    width = next;
  }
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){0}, 4, NULL, &zero));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &h, &zero, 1, (int64_t[]){0, 1}, 2, add, NULL, &y));
  ev_root(ev_main, y);
  return np;
}

static double flops(optic_comp_id c) {
  optic_cost k = {0};
  OT_EXPECT_OK(optic_computation_cost(ev_m, c, &k));
  return k.flops;
}

/* Backward / forward FLOPs, raw and after the full optimizer. */
static void ratios(int32_t np, int32_t first_wrt, double *raw, double *opt) {
  int32_t wrt[16], n = 0;
  for (int32_t i = first_wrt; i < np; i++) wrt[n++] = i;
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, wrt, n, NULL, &g));
  double fwd = flops(ev_main), total = flops(g);
  *raw = (total - fwd) / fwd;
  OT_EXPECT_OK(optic_module_set_entry(ev_m, g));
  OT_EXPECT_OK(optic_graph_optimize(ev_m, NULL, NULL));
  *opt = (flops(g) - fwd) / fwd;
  printf("    forward %.4g flops, value_and_grad %.4g raw (backward/forward %.3f), %.4g optimized (%.3f)\n", fwd, total,
         *raw, flops(g), *opt);
}

static void test_mlp_all_operands(void) {
  static const layer_spec specs[] = {
      {64, 256, 256, 10, 3},
      {128, 784, 512, 10, 2},
      {32, 64, 64, 64, 1},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    double raw, opt;
    printf("  mlp batch %lld, %lld -> %lld x%d -> %lld, w.r.t. input and weights\n", (long long)specs[i].batch,
           (long long)specs[i].in, (long long)specs[i].hidden, specs[i].layers, (long long)specs[i].out);
    ratios(build_mlp(&specs[i]), 0, &raw, &opt);
    OT_CHECK(raw >= 1.8 && raw <= 2.2, "backward/forward flops %.3f not within 2 +- 10%%", raw);
    OT_CHECK(opt >= 1.8 && opt <= 2.2, "optimized backward/forward flops %.3f not within 2 +- 10%%", opt);
  }
}

/* A trainer's usual choice, weights only: the first layer's input gradient
 * is not built, so the ratio is (2L - 1) / L for L equal dot layers. */
static void test_mlp_weights_only(void) {
  layer_spec s = {64, 256, 256, 256, 4};
  double raw, opt;
  printf("  mlp 4 equal layers, weights only (expected ratio near 7/4)\n");
  ratios(build_mlp(&s), 1, &raw, &opt);
  OT_CHECK(raw >= 1.75 * 0.95 && raw <= 1.75 * 1.05, "ratio %.3f", raw);
}

/* A batched attention-score chain: softmax(q k^T) v, all three differentiated. */
static void test_batched_attention(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  int64_t d[3] = {4, 128, 64};
  optic_node_id q = ev_param(ev_main, 0, OPTIC_F32, 3, d), k = ev_param(ev_main, 1, OPTIC_F32, 3, d),
                v = ev_param(ev_main, 2, OPTIC_F32, 3, d), s, e, sum, zero, p, o, y, bs;
  optic_dot_dims qk = {.lhs_batch_count = 1,
                       .rhs_batch_count = 1,
                       .lhs_contracting_count = 1,
                       .rhs_contracting_count = 1,
                       .lhs_contracting = {2},
                       .rhs_contracting = {2}};
  optic_dot_dims pv = {.lhs_batch_count = 1,
                       .rhs_batch_count = 1,
                       .lhs_contracting_count = 1,
                       .rhs_contracting_count = 1,
                       .lhs_contracting = {2},
                       .rhs_contracting = {1}};
  OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, q, k, &qk, NULL, &s));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_EXPONENTIAL, s, NULL, &e));
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){0}, 4, NULL, &zero));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &e, &zero, 1, (int64_t[]){2}, 1, add, NULL, &sum));
  OT_EXPECT_OK(
      optic_graph_broadcast(ev_m, ev_main, sum, &(optic_shape){3, {4, 128, 128}}, (int64_t[]){0, 1}, 2, NULL, &bs));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_DIVIDE, e, bs, NULL, &p));
  OT_EXPECT_OK(optic_graph_dot(ev_m, ev_main, p, v, &pv, NULL, &o));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &o, &zero, 1, (int64_t[]){0, 1, 2}, 3, add, NULL, &y));
  ev_root(ev_main, y);
  double raw, opt;
  printf("  attention 4 x 128 x 64, w.r.t. q, k, v\n");
  ratios(3, 0, &raw, &opt);
  OT_CHECK(raw >= 1.8 && raw <= 2.2, "ratio %.3f", raw);
  OT_CHECK(opt >= 1.8 && opt <= 2.2, "optimized ratio %.3f", opt);
}

static const ot_case cases[] = {
    {"mlp_all_operands", test_mlp_all_operands},
    {"mlp_weights_only", test_mlp_weights_only},
    {"batched_attention", test_batched_attention},
};
OT_MAIN(cases)
