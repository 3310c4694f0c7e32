/* Evaluator, structure and control flow: tuple and get-tuple-element, call,
 * while (summing to 10), conditional in both selector forms (an
 * out-of-range index runs the last branch), fusion against the same ops
 * unfused (XLA's loop-fusion example of tests/graph/test_cost.c),
 * all-reduce on one replica, convolution, single-instruction evaluation and
 * a 20,000-instruction chain. */
#include <math.h>

#include "tests/graph/evaluate_util.h"

static optic_type scalar_type(optic_dtype dt) {
  optic_shape s = {.rank = 0};
  return optic_type_array(dt, &s);
}

static void tuple_and_call(void) {
  ev_fresh();
  /* callee(a, b) = (a * b + a, b) */
  optic_comp_id f = ev_comp("f");
  int64_t d2[] = {2};
  optic_node_id a = ev_param(f, 0, OPTIC_F32, 1, d2), b = ev_param(f, 1, OPTIC_S32, 0, NULL), ab, r, t;
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_MULTIPLY, a, a, NULL, &ab));
  OT_EXPECT_OK(optic_graph_binary(ev_m, f, OPTIC_OP_ADD, ab, a, NULL, &r));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, f, (optic_node_id[]){r, b}, 2, NULL, &t));
  ev_root(f, t);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d2), y = ev_param(ev_main, 1, OPTIC_S32, 0, NULL), c, g0, g1,
                nest, g, root;
  OT_EXPECT_OK(optic_graph_call(ev_m, ev_main, f, (optic_node_id[]){x, y}, 2, NULL, &c));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, c, 0, NULL, &g0));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, c, 1, NULL, &g1));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){g1, c}, 2, NULL, &nest));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, nest, 1, NULL, &g));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){g0, g, nest}, 3, NULL, &root));
  ev_root(ev_main, root);
  int32_t seven = 7;
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d2, (float[]){2, 3}), *ly = ev_lit(OPTIC_S32, 0, NULL, &seven);
  const optic_literal_t *args[] = {lx, ly};
  optic_literal_t *got = ev_run(ev_main, args, 2);
  char buf[256];
  optic_literal_format(got, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "(f32[2] {6, 12}, (f32[2] {6, 12}, s32[] 7), (s32[] 7, (f32[2] {6, 12}, s32[] 7)))") == 0, "%s",
           buf);
  optic_literal_destroy(got);
  /* A root that is a parameter comes back as a copy. */
  ev_root(ev_main, x);
  got = ev_run(ev_main, args, 2);
  OT_CHECK(got && got != lx && ev_same(lx, got, OPTIC_MATCH_BITWISE));
  optic_literal_destroy(got);
  optic_literal_destroy(lx);
  optic_literal_destroy(ly);
}

/* state (i, s): while i < limit: (i + 1, s + i). */
static optic_node_id build_sum_loop(int32_t limit, optic_node_id init) {
  optic_type st[] = {scalar_type(OPTIC_S32), scalar_type(OPTIC_S32)};
  optic_type state = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = st};
  optic_comp_id cond = ev_comp("cond"), body = ev_comp("body");
  optic_node_id cp = ev_param_type(cond, 0, &state), ci, lim, lt;
  OT_CHECK(optic_graph_get_tuple_element(ev_m, cond, cp, 0, NULL, &ci) == OPTIC_OK);
  lim = ev_const(cond, OPTIC_S32, 0, NULL, &limit);
  OT_CHECK(optic_graph_compare(ev_m, cond, OPTIC_CMP_LT, ci, lim, NULL, &lt) == OPTIC_OK);
  ev_root(cond, lt);
  optic_node_id bp = ev_param_type(body, 0, &state), bi, bs, one, ni, ns, bt;
  int32_t onev = 1;
  OT_CHECK(optic_graph_get_tuple_element(ev_m, body, bp, 0, NULL, &bi) == OPTIC_OK);
  OT_CHECK(optic_graph_get_tuple_element(ev_m, body, bp, 1, NULL, &bs) == OPTIC_OK);
  one = ev_const(body, OPTIC_S32, 0, NULL, &onev);
  OT_CHECK(optic_graph_binary(ev_m, body, OPTIC_OP_ADD, bi, one, NULL, &ni) == OPTIC_OK);
  OT_CHECK(optic_graph_binary(ev_m, body, OPTIC_OP_ADD, bs, bi, NULL, &ns) == OPTIC_OK);
  OT_CHECK(optic_graph_tuple(ev_m, body, (optic_node_id[]){ni, ns}, 2, NULL, &bt) == OPTIC_OK);
  ev_root(body, bt);
  optic_node_id w;
  if (optic_graph_while(ev_m, ev_main, init, cond, body, NULL, &w)) ev_die("while");
  return w;
}

static void while_sums_to_ten(void) {
  ev_fresh();
  int32_t zero = 0;
  optic_node_id z = ev_const(ev_main, OPTIC_S32, 0, NULL, &zero), init;
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){z, z}, 2, NULL, &init));
  ev_root(ev_main, build_sum_loop(5, init));
  optic_literal_t *got = ev_run(ev_main, NULL, 0);
  char buf[64];
  optic_literal_format(got, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "(s32[] 5, s32[] 10)") == 0, "%s", buf);
  optic_literal_destroy(got);
  /* The cap counts body runs: exactly 5 are allowed, 4 are not. */
  optic_evaluate_options o = optic_evaluate_options_default();
  o.max_while_iterations = 5;
  OT_EXPECT_OK(optic_evaluate(ev_m, ev_main, NULL, 0, &o, &got));
  optic_literal_destroy(got);
  o.max_while_iterations = 4;
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, NULL, 0, &o, &got), OPTIC_ERR_TIMEOUT);
  OT_CHECK(got == NULL);
  OT_CHECK(strstr(optic_last_error(), "max_while_iterations = 4") != NULL, "%s", optic_last_error());
}

/* branch(x) = op(x) or op(x, x) over s32[]. */
static optic_comp_id branch(const char *name, optic_opcode op) {
  optic_comp_id c = ev_comp(name);
  optic_node_id x = ev_param(c, 0, OPTIC_S32, 0, NULL), r;
  optic_status st = op == OPTIC_OP_NEGATE ? optic_graph_unary(ev_m, c, op, x, NULL, &r)
                                          : optic_graph_binary(ev_m, c, op, x, x, NULL, &r);
  if (st) ev_die(name);
  ev_root(c, r);
  return c;
}

static int32_t run_conditional(optic_dtype sel_dt, int32_t sel, int32_t x0, int32_t x1, int32_t x2) {
  optic_literal_t *ls =
      sel_dt == OPTIC_PRED ? ev_lit(OPTIC_PRED, 0, NULL, (uint8_t[]){(uint8_t)sel}) : ev_lit(OPTIC_S32, 0, NULL, &sel);
  optic_literal_t *a = ev_lit(OPTIC_S32, 0, NULL, &x0), *b = ev_lit(OPTIC_S32, 0, NULL, &x1);
  optic_literal_t *c = ev_lit(OPTIC_S32, 0, NULL, &x2);
  const optic_literal_t *args[] = {ls, a, b, c};
  optic_literal_t *got = ev_run(ev_main, args, sel_dt == OPTIC_PRED ? 3 : 4);
  int32_t v = got ? *(const int32_t *)optic_literal_data(got, NULL) : INT32_MIN;
  optic_literal_destroy(got);
  optic_literal_t *ls_[] = {ls, a, b, c};
  for (int i = 0; i < 4; i++) optic_literal_destroy(ls_[i]);
  return v;
}

static void conditional(void) {
  /* pred: true runs branch 0 (x + x) on operand 1, false branch 1 (x * x) on operand 2. */
  ev_fresh();
  optic_comp_id b0 = branch("twice", OPTIC_OP_ADD), b1 = branch("square", OPTIC_OP_MULTIPLY);
  optic_node_id p = ev_param(ev_main, 0, OPTIC_PRED, 0, NULL), x = ev_param(ev_main, 1, OPTIC_S32, 0, NULL);
  optic_node_id y = ev_param(ev_main, 2, OPTIC_S32, 0, NULL), r;
  OT_EXPECT_OK(
      optic_graph_conditional(ev_m, ev_main, p, (optic_node_id[]){x, y}, (optic_comp_id[]){b0, b1}, 2, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(run_conditional(OPTIC_PRED, 1, 5, 7, 0) == 10);
  OT_CHECK(run_conditional(OPTIC_PRED, 0, 5, 7, 0) == 49);
  /* s32: branch i; out of range (negative or past the end) runs the last. */
  ev_fresh();
  b0 = branch("twice", OPTIC_OP_ADD), b1 = branch("square", OPTIC_OP_MULTIPLY);
  optic_comp_id b2 = branch("neg", OPTIC_OP_NEGATE);
  optic_node_id s = ev_param(ev_main, 0, OPTIC_S32, 0, NULL);
  x = ev_param(ev_main, 1, OPTIC_S32, 0, NULL), y = ev_param(ev_main, 2, OPTIC_S32, 0, NULL);
  optic_node_id z = ev_param(ev_main, 3, OPTIC_S32, 0, NULL);
  OT_EXPECT_OK(optic_graph_conditional(ev_m, ev_main, s, (optic_node_id[]){x, y, z}, (optic_comp_id[]){b0, b1, b2}, 3,
                                       NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(run_conditional(OPTIC_S32, 0, 5, 7, 9) == 10);
  OT_CHECK(run_conditional(OPTIC_S32, 1, 5, 7, 9) == 49);
  OT_CHECK(run_conditional(OPTIC_S32, 2, 5, 7, 9) == -9);
  OT_CHECK(run_conditional(OPTIC_S32, -1, 5, 7, 9) == -9);
  OT_CHECK(run_conditional(OPTIC_S32, 7, 5, 7, 9) == -9);
}

/* XLA's loop-fusion example: sub(mul(exp(add(p0, p1)), p2), clamp(p1, add, add)). */
static optic_node_id loop_fusion_ops(optic_comp_id c, optic_node_id p0, optic_node_id p1, optic_node_id p2) {
  optic_node_id add, clamp, ex, mul, sub;
  if (optic_graph_binary(ev_m, c, OPTIC_OP_ADD, p0, p1, NULL, &add) ||
      optic_graph_clamp(ev_m, c, p1, add, add, NULL, &clamp) ||
      optic_graph_unary(ev_m, c, OPTIC_OP_EXPONENTIAL, add, NULL, &ex) ||
      optic_graph_binary(ev_m, c, OPTIC_OP_MULTIPLY, ex, p2, NULL, &mul) ||
      optic_graph_binary(ev_m, c, OPTIC_OP_SUBTRACT, mul, clamp, NULL, &sub)) {
    ev_die("loop fusion");
  }
  return sub;
}

static void fusion_equals_unfused(void) {
  ev_fresh();
  int64_t d[] = {2, 2};
  optic_comp_id f = ev_comp("fused"), u = ev_comp("unfused");
  ev_root(f, loop_fusion_ops(f, ev_param(f, 0, OPTIC_F32, 2, d), ev_param(f, 1, OPTIC_F32, 2, d),
                             ev_param(f, 2, OPTIC_F32, 2, d)));
  optic_node_id ps[] = {ev_param(ev_main, 0, OPTIC_F32, 2, d), ev_param(ev_main, 1, OPTIC_F32, 2, d),
                        ev_param(ev_main, 2, OPTIC_F32, 2, d)},
                fu;
  OT_EXPECT_OK(optic_graph_fusion(ev_m, ev_main, OPTIC_FUSION_LOOP, ps, 3, f, NULL, &fu));
  ev_root(ev_main, fu);
  ev_root(u, loop_fusion_ops(u, ev_param(u, 0, OPTIC_F32, 2, d), ev_param(u, 1, OPTIC_F32, 2, d),
                             ev_param(u, 2, OPTIC_F32, 2, d)));
  float a[] = {0.5f, -1.25f, 3.0f, NAN}, b[] = {0.25f, 2.0f, -7.5f, 1.0f}, c[] = {1.5f, -2.0f, 0.125f, 4.0f};
  optic_literal_t *la = ev_lit(OPTIC_F32, 2, d, a), *lb = ev_lit(OPTIC_F32, 2, d, b), *lc = ev_lit(OPTIC_F32, 2, d, c);
  const optic_literal_t *args[] = {la, lb, lc};
  optic_literal_t *fused = ev_run(ev_main, args, 3), *unfused = ev_run(u, args, 3);
  OT_CHECK(fused && unfused && ev_same(unfused, fused, OPTIC_MATCH_BITWISE));
  /* And both are the kernels' semantics written out: exp in double, rounded once. */
  float want[4];
  for (int i = 0; i < 4; i++) {
    float s = a[i] + b[i];
    float t = s > b[i] ? s : b[i], cl = isnan(s) ? s : (t < s ? t : s); /* clamp(b, s, s), b finite */
    float e = (float)exp((double)s);
    float m = e * c[i];
    want[i] = m - cl;
  }
  optic_literal_t *lw = ev_lit(OPTIC_F32, 2, d, want);
  OT_CHECK(fused && ev_same(lw, fused, OPTIC_MATCH_NAN_AWARE));
  optic_literal_t *ls[] = {la, lb, lc, fused, unfused, lw};
  for (int i = 0; i < 6; i++) optic_literal_destroy(ls[i]);
}

static void all_reduce_one_replica(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  int64_t d3[] = {3};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d3), y = ev_param(ev_main, 1, OPTIC_F32, 0, NULL), r1, r2, t;
  OT_EXPECT_OK(optic_graph_all_reduce(ev_m, ev_main, &x, 1, add, NULL, NULL, 0, NULL, &r1));
  int32_t ids[] = {0, 1}, sizes[] = {2};
  OT_EXPECT_OK(optic_graph_all_reduce(ev_m, ev_main, (optic_node_id[]){x, y}, 2, add, ids, sizes, 1, NULL, &r2));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){r1, r2}, 2, NULL, &t));
  ev_root(ev_main, t);
  float yv = 4;
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d3, (float[]){1, 2, 3}), *ly = ev_lit(OPTIC_F32, 0, NULL, &yv);
  const optic_literal_t *args[] = {lx, ly};
  optic_literal_t *got = ev_run(ev_main, args, 2);
  char buf[128];
  optic_literal_format(got, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "(f32[3] {1, 2, 3}, (f32[3] {1, 2, 3}, f32[] 4))") == 0, "%s", buf);
  optic_literal_destroy(got);
  optic_literal_destroy(lx);
  optic_literal_destroy(ly);
}

static void convolution(void) {
  /* 1-D, batch and feature 1: [1,2,3,4] with kernel [1,1] gives [3,5,7];
   * padded by 1 on both sides [1,3,5,7,4]; with an f32[1,4,2] input of two
   * features and kernel [1,2,3] (1 tap, 2 in, 3 out) it is a per-pixel matmul. */
  ev_fresh();
  int64_t din[] = {1, 4, 1}, dk[] = {2, 1, 1}, dout[] = {1, 3, 1}, dpad[] = {1, 5, 1};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 3, din), k = ev_param(ev_main, 1, OPTIC_F32, 3, dk), c1, c2, t;
  optic_window_dim w = {.size = 2, .stride = 1, .base_dilation = 1, .window_dilation = 1};
  OT_EXPECT_OK(optic_graph_convolution(ev_m, ev_main, x, k, "b0f_0io->b0f", &w, 1, 1, NULL, &c1));
  w.pad_low = w.pad_high = 1;
  OT_EXPECT_OK(optic_graph_convolution(ev_m, ev_main, x, k, "b0f_0io->b0f", &w, 1, 1, NULL, &c2));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){c1, c2}, 2, NULL, &t));
  ev_root(ev_main, t);
  optic_literal_t *lx = ev_lit(OPTIC_F32, 3, din, (float[]){1, 2, 3, 4}),
                  *lk = ev_lit(OPTIC_F32, 3, dk, (float[]){1, 1});
  const optic_literal_t *args[] = {lx, lk};
  optic_literal_t *got = ev_run(ev_main, args, 2);
  optic_literal_t *w1 = ev_lit(OPTIC_F32, 3, dout, (float[]){3, 5, 7}),
                  *w2 = ev_lit(OPTIC_F32, 3, dpad, (float[]){1, 3, 5, 7, 4});
  OT_CHECK(got && ev_same(w1, optic_literal_element(got, 0), OPTIC_MATCH_BITWISE) &&
           ev_same(w2, optic_literal_element(got, 1), OPTIC_MATCH_BITWISE));
  optic_literal_t *ls[] = {lx, lk, got, w1, w2};
  for (int i = 0; i < 5; i++) optic_literal_destroy(ls[i]);

  ev_fresh();
  int64_t d2in[] = {1, 2, 2}, d2k[] = {1, 2, 3}, d2out[] = {1, 2, 3};
  x = ev_param(ev_main, 0, OPTIC_F32, 3, d2in), k = ev_param(ev_main, 1, OPTIC_F32, 3, d2k);
  optic_window_dim w1x = {.size = 1, .stride = 1, .base_dilation = 1, .window_dilation = 1};
  OT_EXPECT_OK(optic_graph_convolution(ev_m, ev_main, x, k, "b0f_0io->b0f", &w1x, 1, 1, NULL, &c1));
  ev_root(ev_main, c1);
  /* pixel p: out[p, o] = sum_i x[p, i] * k[i, o] */
  lx = ev_lit(OPTIC_F32, 3, d2in, (float[]){1, 2, 3, 4});
  lk = ev_lit(OPTIC_F32, 3, d2k, (float[]){1, 0, 2, 0, 1, 3});
  const optic_literal_t *args2[] = {lx, lk};
  OT_CHECK(ev_check(ev_main, args2, 2, OPTIC_F32, 3, d2out, (float[]){1, 2, 8, 3, 4, 18}));
  optic_literal_destroy(lx);
  optic_literal_destroy(lk);
}

static void single_instruction(void) {
  ev_fresh();
  int64_t d3[] = {3};
  float cv[] = {1, 2, 3};
  optic_node_id c = ev_const(ev_main, OPTIC_F32, 1, d3, cv), x = ev_param(ev_main, 0, OPTIC_F32, 1, d3), s, r, z;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, c, x, NULL, &s));
  float zero = 0;
  z = ev_const(ev_main, OPTIC_F32, 0, NULL, &zero);
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &s, &z, 1, (int64_t[]){0}, 1, add, NULL, &r));
  optic_literal_t *lc, *ls, *lz, *lr;
  OT_EXPECT_OK(optic_evaluate_node(ev_m, c, NULL, 0, NULL, &lc));
  OT_EXPECT_OK(optic_evaluate_node(ev_m, z, NULL, 0, NULL, &lz));
  const optic_literal_t *ops[] = {lc, lc};
  OT_EXPECT_OK(optic_evaluate_node(ev_m, s, ops, 2, NULL, &ls));
  const optic_literal_t *rops[] = {ls, lz};
  OT_EXPECT_OK(optic_evaluate_node(ev_m, r, rops, 2, NULL, &lr));
  OT_CHECK(lr && *(const float *)optic_literal_data(lr, NULL) == 14.0f);
  optic_literal_t *w = ev_lit(OPTIC_F32, 1, d3, (float[]){1, 4, 9});
  OT_CHECK(ls && ev_same(w, ls, OPTIC_MATCH_BITWISE));
  optic_literal_t *all[] = {lc, ls, lz, lr, w};
  for (int i = 0; i < 5; i++) optic_literal_destroy(all[i]);
}

static void after_mutation(void) {
  /* A pass replaces a = negate(x) by c = abs(x), created after a's user b:
   * creation order is no longer operands-first, the plan's walk from the
   * root still is; the removed a never runs. */
  ev_fresh();
  int64_t d2[] = {2};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d2), a, b, c;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_NEGATE, x, NULL, &a));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, a, a, NULL, &b));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_ABS, x, NULL, &c));
  ev_root(ev_main, b);
  OT_EXPECT_OK(optic_node_replace_all_uses(ev_m, a, c));
  OT_EXPECT_OK(optic_node_remove(ev_m, a));
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d2, (float[]){-3, 0.5f});
  const optic_literal_t *args[] = {lx};
  OT_CHECK(ev_check(ev_main, args, 1, OPTIC_F32, 1, d2, (float[]){9, 0.25f}));
  optic_literal_destroy(lx);
}

static void long_chain(void) {
  /* 20,000 negates: planning is iterative and intermediates are freed as
   * they die, so depth and memory stay flat. */
  ev_fresh();
  int64_t d4[] = {4};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d4), y = x;
  for (int i = 0; i < 20000; i++) {
    if (optic_graph_unary(ev_m, ev_main, OPTIC_OP_NEGATE, y, NULL, &y)) ev_die("negate");
  }
  ev_root(ev_main, y);
  float v[] = {1, -2, 0.5f, -0.0f};
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d4, v);
  const optic_literal_t *args[] = {lx};
  uint64_t t0 = optic_now_ns();
  OT_CHECK(ev_check(ev_main, args, 1, OPTIC_F32, 1, d4, v));
  double ms = (double)(optic_now_ns() - t0) / 1e6;
  OT_CHECK(ms < 2000, "20,000 instructions took %.1f ms", ms);
  optic_literal_destroy(lx);
}

static const ot_case cases[] = {
    {"tuple_and_call", tuple_and_call},
    {"while_sums_to_ten", while_sums_to_ten},
    {"conditional", conditional},
    {"fusion_equals_unfused", fusion_equals_unfused},
    {"all_reduce_one_replica", all_reduce_one_replica},
    {"convolution", convolution},
    {"single_instruction", single_instruction},
    {"after_mutation", after_mutation},
    {"long_chain", long_chain},
};
OT_MAIN(cases)
