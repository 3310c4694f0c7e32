/* Cost model: hand-computed counts under XLA HloCostAnalysis's rules
 * (../shared/reference/hlo/COST_ANALYSIS.md), including XLA's own
 * FusionCostAnalysis.LoopFusion case (16 flops, 4 transcendentals, 64 bytes). */
#include <optic/optic.h>

#include "tests/harness.h"

static optic_module_t *m;
static optic_comp_id main_comp;

static void destroy_module(void) { optic_module_destroy(m); }

/* Each case starts from an empty module; the last one is freed at exit. */
static void fresh(void) {
  static bool registered = false;
  if (!registered) registered = atexit(destroy_module) == 0;
  optic_module_destroy(m);
  if (optic_module_create("cost", &m) || optic_module_add_computation(m, "main", &main_comp)) exit(2);
}

static optic_node_id param(optic_comp_id c, int32_t n, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id;
  if (optic_graph_parameter(m, c, n, &t, NULL, &id)) exit(2);
  return id;
}

static bool cost_is(optic_node_id id, double flops, double trans, double bytes) {
  optic_cost c;
  if (optic_node_cost(m, id, &c) != OPTIC_OK) {
    fprintf(stderr, "  cost failed: %s\n", optic_last_error());
    return false;
  }
  if (c.flops == flops && c.transcendentals == trans && c.bytes_accessed == bytes) return true;
  fprintf(stderr, "  %s: flops %g trans %g bytes %g, want %g %g %g\n", optic_node_name(m, id), c.flops,
          c.transcendentals, c.bytes_accessed, flops, trans, bytes);
  return false;
}

static optic_comp_id adder(const char *name) {
  optic_comp_id c;
  optic_node_id x, y, r;
  if (optic_module_add_computation(m, name, &c)) exit(2);
  x = param(c, 0, 0, NULL), y = param(c, 1, 0, NULL);
  if (optic_graph_binary(m, c, OPTIC_OP_ADD, x, y, NULL, &r) || optic_computation_set_root(m, c, r)) exit(2);
  return c;
}

static void xla_loop_fusion(void) {
  fresh();
  int64_t d[] = {2, 2};
  optic_comp_id f;
  OT_EXPECT_OK(optic_module_add_computation(m, "fused", &f));
  optic_node_id p0 = param(f, 0, 2, d), p1 = param(f, 1, 2, d), p2 = param(f, 2, 2, d);
  optic_node_id add, clamp, ex, mul, sub;
  OT_EXPECT_OK(optic_graph_binary(m, f, OPTIC_OP_ADD, p0, p1, NULL, &add));
  OT_EXPECT_OK(optic_graph_clamp(m, f, p1, add, add, NULL, &clamp));
  OT_EXPECT_OK(optic_graph_unary(m, f, OPTIC_OP_EXPONENTIAL, add, NULL, &ex));
  OT_EXPECT_OK(optic_graph_binary(m, f, OPTIC_OP_MULTIPLY, ex, p2, NULL, &mul));
  OT_EXPECT_OK(optic_graph_binary(m, f, OPTIC_OP_SUBTRACT, mul, clamp, NULL, &sub));
  OT_EXPECT_OK(optic_computation_set_root(m, f, sub));
  optic_node_id a = param(main_comp, 0, 2, d), b = param(main_comp, 1, 2, d), c = param(main_comp, 2, 2, d);
  optic_node_id ops[] = {a, b, c}, fu;
  OT_EXPECT_OK(optic_graph_fusion(m, main_comp, OPTIC_FUSION_LOOP, ops, 3, f, NULL, &fu));
  OT_CHECK(cost_is(fu, 16, 4, 64));
  /* Unfused, the same ops cost their intermediates too. */
  optic_cost unfused;
  OT_EXPECT_OK(optic_computation_cost(m, f, &unfused));
  OT_CHECK(unfused.flops == 16 && unfused.transcendentals == 4 && unfused.bytes_accessed == 16 * (3 + 4 + 2 + 3 + 3),
           "unfused bytes %g", unfused.bytes_accessed);
}

static void elementwise_and_layout(void) {
  fresh();
  int64_t d10[] = {10}, d23[] = {2, 3}, d15[] = {1, 5};
  optic_node_id x = param(main_comp, 0, 1, d10), y = param(main_comp, 1, 2, d23), z = param(main_comp, 2, 2, d15);
  optic_node_id e, s, t, tb, tup, g, cv;
  OT_EXPECT_OK(optic_graph_unary(m, main_comp, OPTIC_OP_EXPONENTIAL, x, NULL, &e));
  OT_CHECK(cost_is(e, 0, 10, 80));
  OT_EXPECT_OK(optic_graph_convert(m, main_comp, x, OPTIC_F64, NULL, &cv));
  OT_CHECK(cost_is(cv, 10, 0, 40 + 80));
  int64_t st[] = {2}, li[] = {8}, sd[] = {2};
  OT_EXPECT_OK(optic_graph_slice(m, main_comp, x, st, li, sd, NULL, &s));
  OT_CHECK(cost_is(s, 0, 0, 2 * 3 * 4));
  int64_t perm[] = {1, 0};
  OT_EXPECT_OK(optic_graph_transpose(m, main_comp, y, perm, NULL, &t));
  OT_CHECK(cost_is(t, 0, 0, 48));
  OT_EXPECT_OK(optic_graph_transpose(m, main_comp, z, perm, NULL, &tb)); /* [1,5] -> [5,1] is a bitcast */
  OT_CHECK(cost_is(tb, 0, 0, 0));
  optic_node_id els[] = {x, y, e};
  OT_EXPECT_OK(optic_graph_tuple(m, main_comp, els, 3, NULL, &tup));
  OT_CHECK(cost_is(tup, 0, 0, 24));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, main_comp, tup, 1, NULL, &g));
  OT_CHECK(cost_is(g, 0, 0, 0) && cost_is(x, 0, 0, 0));
}

static void reduce_map_window(void) {
  fresh();
  optic_comp_id add = adder("add");
  int64_t d23[] = {2, 3}, d44[] = {4, 4};
  optic_node_id y = param(main_comp, 0, 2, d23), z = param(main_comp, 1, 0, NULL), w = param(main_comp, 2, 2, d44);
  optic_node_id r, mp, rw;
  int64_t dims[] = {1};
  OT_EXPECT_OK(optic_graph_reduce(m, main_comp, &y, &z, 1, dims, 1, add, NULL, &r));
  OT_CHECK(cost_is(r, 6 - 2, 0, 24 + 4 + 8));
  optic_node_id pair[] = {y, y};
  OT_EXPECT_OK(optic_graph_map(m, main_comp, pair, 2, add, NULL, &mp));
  OT_CHECK(cost_is(mp, 6, 0, 72));
  optic_window_dim win[2] = {{.size = 2, .stride = 2, .base_dilation = 1, .window_dilation = 1},
                             {.size = 2, .stride = 2, .base_dilation = 1, .window_dilation = 1}};
  OT_EXPECT_OK(optic_graph_reduce_window(m, main_comp, &w, &z, 1, win, add, NULL, &rw));
  OT_CHECK(cost_is(rw, 3 * 4, 0, 16 + 64 + 4)); /* (4 window elements - 1) x 4 outputs */
}

static void control_flow(void) {
  fresh();
  int64_t d4[] = {4};
  /* body: exp(x) (4 transcendentals, 32 bytes); condition: x[0] < x[0] as a stand-in predicate */
  optic_comp_id body, cond, other;
  optic_node_id bx, be, cx, cs, cc, ox, on, on2;
  OT_EXPECT_OK(optic_module_add_computation(m, "body", &body));
  bx = param(body, 0, 1, d4);
  OT_EXPECT_OK(optic_graph_unary(m, body, OPTIC_OP_EXPONENTIAL, bx, NULL, &be));
  OT_EXPECT_OK(optic_computation_set_root(m, body, be));
  OT_EXPECT_OK(optic_module_add_computation(m, "cond", &cond));
  cx = param(cond, 0, 1, d4);
  int64_t st[] = {0}, li[] = {1}, sd[] = {1};
  OT_EXPECT_OK(optic_graph_slice(m, cond, cx, st, li, sd, NULL, &cs)); /* 8 bytes */
  optic_node_id cr;
  OT_EXPECT_OK(optic_graph_reshape(m, cond, cs, &(optic_shape){.rank = 0}, NULL, &cr)); /* 8 bytes */
  OT_EXPECT_OK(optic_graph_compare(m, cond, OPTIC_CMP_LT, cr, cr, NULL, &cc)); /* 1 flop, 9 bytes */
  OT_EXPECT_OK(optic_computation_set_root(m, cond, cc));
  OT_EXPECT_OK(optic_module_add_computation(m, "other", &other));
  ox = param(other, 0, 1, d4);
  OT_EXPECT_OK(optic_graph_unary(m, other, OPTIC_OP_NEGATE, ox, NULL, &on));
  OT_EXPECT_OK(optic_graph_unary(m, other, OPTIC_OP_NEGATE, on, NULL, &on2));
  OT_EXPECT_OK(optic_computation_set_root(m, other, on2)); /* 8 flops, 64 bytes */
  optic_node_id x = param(main_comp, 0, 1, d4), w, sel, c, call;
  OT_EXPECT_OK(optic_graph_while(m, main_comp, x, cond, body, NULL, &w));
  OT_CHECK(cost_is(w, 1, 4, 32 + 8 + 8 + 9));
  optic_type tp = optic_type_array(OPTIC_PRED, &(optic_shape){.rank = 0});
  OT_EXPECT_OK(optic_graph_parameter(m, main_comp, 1, &tp, NULL, &sel));
  optic_node_id ops[] = {x, x};
  optic_comp_id br[] = {body, other};
  OT_EXPECT_OK(optic_graph_conditional(m, main_comp, sel, ops, br, 2, NULL, &c));
  OT_CHECK(cost_is(c, 8, 4, 64)); /* per-property maximum over the branches */
  OT_EXPECT_OK(optic_graph_call(m, main_comp, other, &x, 1, NULL, &call));
  OT_CHECK(cost_is(call, 8, 0, 64));
}

static void fusion_parameter_reads(void) {
  fresh();
  int64_t d4[] = {4};
  optic_comp_id f;
  OT_EXPECT_OK(optic_module_add_computation(m, "fused", &f));
  optic_node_id p = param(f, 0, 1, d4), b1, b2, add;
  optic_shape s24 = {.rank = 2, .dims = {2, 4}};
  int64_t bd[] = {1};
  OT_EXPECT_OK(optic_graph_broadcast(m, f, p, &s24, bd, 1, NULL, &b1));
  OT_EXPECT_OK(optic_graph_broadcast(m, f, p, &s24, bd, 1, NULL, &b2));
  OT_EXPECT_OK(optic_graph_binary(m, f, OPTIC_OP_ADD, b1, b2, NULL, &add));
  OT_EXPECT_OK(optic_computation_set_root(m, f, add));
  optic_node_id x = param(main_comp, 0, 1, d4), fu;
  OT_EXPECT_OK(optic_graph_fusion(m, main_comp, OPTIC_FUSION_LOOP, &x, 1, f, NULL, &fu));
  /* out 32 bytes + the parameter read once per broadcast user (2 x 16) */
  OT_CHECK(cost_is(fu, 8, 0, 32 + 32));
}

/* Tuple results: a multi-output fusion writes every array leaf (XLA's
 * FusionProcessOutputBytesAccessed), and so does a tuple all-reduce; a plain
 * tuple instruction costs only its 8-byte pointer table. */
static void tuple_results(void) {
  fresh();
  int64_t d[] = {4, 8}, e[] = {16};
  optic_comp_id f;
  OT_EXPECT_OK(optic_module_add_computation(m, "fused2", &f));
  optic_node_id p0 = param(f, 0, 2, d), p1 = param(f, 1, 1, e);
  optic_node_id neg, ab, tup;
  OT_EXPECT_OK(optic_graph_unary(m, f, OPTIC_OP_NEGATE, p0, NULL, &neg));
  OT_EXPECT_OK(optic_graph_unary(m, f, OPTIC_OP_ABS, p1, NULL, &ab));
  optic_node_id leaves[] = {neg, ab};
  OT_EXPECT_OK(optic_graph_tuple(m, f, leaves, 2, NULL, &tup));
  OT_EXPECT_OK(optic_computation_set_root(m, f, tup));
  optic_node_id a = param(main_comp, 0, 2, d), b = param(main_comp, 1, 1, e);
  optic_node_id ops[] = {a, b}, fu;
  OT_EXPECT_OK(optic_graph_fusion(m, main_comp, OPTIC_FUSION_LOOP, ops, 2, f, NULL, &fu));
  /* reads 128 + 64, writes 128 + 64 (not the 16-byte pointer table) */
  OT_CHECK(cost_is(fu, 48, 0, 384));
  optic_node_id t2;
  OT_EXPECT_OK(optic_graph_tuple(m, main_comp, ops, 2, NULL, &t2));
  OT_CHECK(cost_is(t2, 0, 0, 16));
  optic_comp_id add = adder("add");
  optic_node_id ar;
  OT_EXPECT_OK(optic_graph_all_reduce(m, main_comp, ops, 2, add, NULL, NULL, 0, NULL, &ar));
  /* flops = output elements (XLA's two-replica assumption); bytes = leaves out + operands in */
  OT_CHECK(cost_is(ar, 48, 0, 384));
}

static const ot_case cases[] = {
    {"xla_loop_fusion", xla_loop_fusion},
    {"elementwise_and_layout", elementwise_and_layout},
    {"reduce_map_window", reduce_map_window},
    {"control_flow", control_flow},
    {"fusion_parameter_reads", fusion_parameter_reads},
    {"tuple_results", tuple_results},
};
OT_MAIN(cases)
