/* Evaluator, computations applied to scalars: reduce (add, max, a general
 * combiner, a variadic arg-max with a tuple combiner, fold order, empty
 * dims), reduce-window (padding filled with the init value, base and window
 * dilation, reversal, a variadic window) and map; hand-computed. */
#include <math.h>

#include "tests/graph/evaluate_util.h"

/* Evaluates main with one f32 argument x[dims] and one f32 scalar init,
 * comparing with want (f32, out dims). */
static bool run_f32(const float *x, int32_t rank, const int64_t *dims, float init, int32_t out_rank,
                    const int64_t *out_dims, const float *want) {
  optic_literal_t *lx = ev_lit(OPTIC_F32, rank, dims, x), *li = ev_lit(OPTIC_F32, 0, NULL, &init);
  const optic_literal_t *args[] = {lx, li};
  bool ok = ev_check(ev_main, args, 2, OPTIC_F32, out_rank, out_dims, want);
  optic_literal_destroy(lx);
  optic_literal_destroy(li);
  return ok;
}

/* main(x, init) = reduce(x, init, dims, comp). */
static void build_reduce(optic_comp_id comp, int32_t rank, const int64_t *dims, const int64_t *rdims, int32_t nr) {
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, rank, dims), z = ev_param(ev_main, 1, OPTIC_F32, 0, NULL), r;
  if (optic_graph_reduce(ev_m, ev_main, &x, &z, 1, rdims, nr, comp, NULL, &r)) ev_die("reduce");
  ev_root(ev_main, r);
}

static void reduce_add_and_max(void) {
  int64_t d23[] = {2, 3}, d2[] = {2}, d3[] = {3};
  float x[] = {1, 2, 3, 4, 5, 6};
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  build_reduce(add, 2, d23, (int64_t[]){1}, 1);
  OT_CHECK(run_f32(x, 2, d23, 0, 1, d2, (float[]){6, 15}));
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  build_reduce(add, 2, d23, (int64_t[]){0}, 1);
  OT_CHECK(run_f32(x, 2, d23, 0, 1, d3, (float[]){5, 7, 9}));
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  build_reduce(add, 2, d23, (int64_t[]){1, 0}, 2);
  OT_CHECK(run_f32(x, 2, d23, 0.5f, 0, NULL, (float[]){21.5f}));
  /* No reduced dims: every output is combiner(init, x). */
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  build_reduce(add, 2, d23, NULL, 0);
  OT_CHECK(run_f32(x, 2, d23, 10, 2, d23, (float[]){11, 12, 13, 14, 15, 16}));
  /* Rank 3 over dims {0, 2}: x[i, j, k] = 6i + 3j + k, out[j] = 24 + 18j. */
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  int64_t d223[] = {2, 2, 3};
  build_reduce(add, 3, d223, (int64_t[]){0, 2}, 2);
  float x12[12];
  for (int i = 0; i < 12; i++) x12[i] = (float)i;
  OT_CHECK(run_f32(x12, 3, d223, 0, 1, d2, (float[]){24, 42}));
  /* A reduced dim of size 0 leaves the init value. */
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  int64_t d20[] = {2, 0};
  build_reduce(add, 2, d20, (int64_t[]){1}, 1);
  OT_CHECK(run_f32(NULL, 2, d20, 5, 1, d2, (float[]){5, 5}));
  /* max combiner from -inf. */
  ev_fresh();
  optic_comp_id mx = ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32);
  build_reduce(mx, 2, d23, (int64_t[]){1}, 1);
  OT_CHECK(run_f32((float[]){1, 5, 2, -3, -7, -4}, 2, d23, -INFINITY, 1, d2, (float[]){5, -3}));
}

/* root = subtract(p1, p0): acc = value - acc, an order-sensitive fold. With
 * general = true an extra copy keeps it off the fast path. */
static optic_comp_id swapped_sub(const char *name, bool general) {
  optic_comp_id c = ev_comp(name);
  optic_node_id a = ev_param(c, 0, OPTIC_F32, 0, NULL), b = ev_param(c, 1, OPTIC_F32, 0, NULL), r;
  if (general && optic_graph_unary(ev_m, c, OPTIC_OP_COPY, a, NULL, &a)) ev_die(name);
  if (optic_graph_binary(ev_m, c, OPTIC_OP_SUBTRACT, b, a, NULL, &r)) ev_die(name);
  ev_root(c, r);
  return c;
}

static void reduce_fold_order_and_general_combiner(void) {
  int64_t d3[] = {3}, d4[] = {4};
  float x[] = {1, 2, 3};
  /* acc = v - acc from 0: 1, 1, 2 (row-major order); fast and general agree. */
  for (int general = 0; general < 2; general++) {
    ev_fresh();
    build_reduce(swapped_sub("f", general), 1, d3, (int64_t[]){0}, 1);
    OT_CHECK(run_f32(x, 1, d3, 0, 0, NULL, (float[]){2}), "general %d", general);
  }
  ev_fresh();
  build_reduce(ev_binary_comp("sub", OPTIC_OP_SUBTRACT, OPTIC_F32), 1, d3, (int64_t[]){0}, 1);
  OT_CHECK(run_f32(x, 1, d3, 0, 0, NULL, (float[]){-6}));
  /* Sum of squares: acc + v * v. */
  ev_fresh();
  optic_comp_id c = ev_comp("sumsq");
  optic_node_id a = ev_param(c, 0, OPTIC_F32, 0, NULL), b = ev_param(c, 1, OPTIC_F32, 0, NULL), sq, r;
  OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_MULTIPLY, b, b, NULL, &sq));
  OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_ADD, a, sq, NULL, &r));
  ev_root(c, r);
  build_reduce(c, 1, d4, (int64_t[]){0}, 1);
  OT_CHECK(run_f32((float[]){1, 2, 3, 4}, 1, d4, 0, 0, NULL, (float[]){30}));
}

/* (av, ai, v, i) -> v > av ? (v, i) : (av, ai): arg-max, first occurrence. */
static optic_comp_id argmax_comp(void) {
  optic_comp_id c = ev_comp("argmax");
  optic_node_id av = ev_param(c, 0, OPTIC_F32, 0, NULL), ai = ev_param(c, 1, OPTIC_S32, 0, NULL);
  optic_node_id v = ev_param(c, 2, OPTIC_F32, 0, NULL), i = ev_param(c, 3, OPTIC_S32, 0, NULL);
  optic_node_id gt, sv, si, t;
  if (optic_graph_compare(ev_m, c, OPTIC_CMP_GT, v, av, NULL, &gt) ||
      optic_graph_select(ev_m, c, gt, v, av, NULL, &sv) || optic_graph_select(ev_m, c, gt, i, ai, NULL, &si)) {
    ev_die("argmax");
  }
  optic_node_id els[] = {sv, si};
  if (optic_graph_tuple(ev_m, c, els, 2, NULL, &t)) ev_die("argmax");
  ev_root(c, t);
  return c;
}

static void reduce_variadic_argmax(void) {
  ev_fresh();
  optic_comp_id am = argmax_comp();
  int64_t d23[] = {2, 3}, d2[] = {2};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, d23), idx, r;
  optic_shape s23 = ev_shape(2, d23);
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_S32, &s23, 1, NULL, &idx));
  float ninf = -INFINITY;
  int32_t neg1 = -1;
  optic_node_id iv = ev_const(ev_main, OPTIC_F32, 0, NULL, &ninf), ii = ev_const(ev_main, OPTIC_S32, 0, NULL, &neg1);
  optic_node_id ins[] = {x, idx}, inits[] = {iv, ii};
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, ins, inits, 2, (int64_t[]){1}, 1, am, NULL, &r));
  ev_root(ev_main, r);
  optic_literal_t *lx = ev_lit(OPTIC_F32, 2, d23, (float[]){3, 7, 7, -1, -5, -2});
  const optic_literal_t *args[] = {lx};
  optic_literal_t *got = ev_run(ev_main, args, 1);
  optic_literal_t *w0 = ev_lit(OPTIC_F32, 1, d2, (float[]){7, -1}), *w1 = ev_lit(OPTIC_S32, 1, d2, (int32_t[]){1, 0});
  const optic_literal_t *ws[] = {w0, w1};
  optic_literal_t *want;
  OT_EXPECT_OK(optic_literal_create_tuple(ws, 2, &want));
  OT_CHECK(got && ev_same(want, got, OPTIC_MATCH_BITWISE));
  optic_literal_t *ls[] = {lx, got, w0, w1, want};
  for (int i = 0; i < 5; i++) optic_literal_destroy(ls[i]);
}

static optic_window_dim win(int64_t size, int64_t stride, int64_t lo, int64_t hi, int64_t bd, int64_t wd) {
  return (optic_window_dim){
      .size = size, .stride = stride, .pad_low = lo, .pad_high = hi, .base_dilation = bd, .window_dilation = wd};
}

/* main(x, init) = reduce-window(x, init, window, comp) over f32. */
static void build_window(optic_comp_id comp, int32_t rank, const int64_t *dims, const optic_window_dim *w) {
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, rank, dims), z = ev_param(ev_main, 1, OPTIC_F32, 0, NULL), r;
  if (optic_graph_reduce_window(ev_m, ev_main, &x, &z, 1, w, comp, NULL, &r)) ev_die("reduce-window");
  ev_root(ev_main, r);
}

static void reduce_window(void) {
  int64_t d5[] = {5}, d3[] = {3}, d2[] = {2}, d4[] = {4};
  float x5[] = {1, 2, 3, 4, 5};
  /* Size 2, stride 2, padding 1/1: 0 1 | 2 3 | 4 5 (| 0 dropped). */
  ev_fresh();
  optic_window_dim w1 = win(2, 2, 1, 1, 1, 1);
  build_window(ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32), 1, d5, &w1);
  OT_CHECK(run_f32(x5, 1, d5, 0, 1, d3, (float[]){1, 5, 9}));
  /* Window dilation 2: (x0, x2), (x1, x3), (x2, x4). */
  ev_fresh();
  optic_window_dim w2 = win(2, 1, 0, 0, 1, 2);
  build_window(ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32), 1, d5, &w2);
  OT_CHECK(run_f32(x5, 1, d5, 0, 1, d3, (float[]){4, 6, 8}));
  /* Base dilation 2: [1, h, 2, h, 3]; max over pairs, holes hold -inf. */
  ev_fresh();
  optic_window_dim w3 = win(2, 1, 0, 0, 2, 1);
  build_window(ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32), 1, d3, &w3);
  OT_CHECK(run_f32((float[]){1, 2, 3}, 1, d3, -INFINITY, 1, d4, (float[]){1, 2, 2, 3}));
  /* Padding holds the init value, which the combiner sees like any element:
   * init 1, [pad, 1, 2]: 1 + pad(1) + 1 = 3, then 1 + 1 + 2 = 4. */
  ev_fresh();
  optic_window_dim w4 = win(2, 1, 1, 0, 1, 1);
  build_window(ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32), 1, d2, &w4);
  OT_CHECK(run_f32((float[]){1, 2}, 1, d2, 1, 1, d2, (float[]){3, 4}));
  /* 2x2 max pool, stride 2, on a 4x4 iota. */
  ev_fresh();
  int64_t d44[] = {4, 4}, d22[] = {2, 2};
  optic_window_dim w5[] = {win(2, 2, 0, 0, 1, 1), win(2, 2, 0, 0, 1, 1)};
  build_window(ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32), 2, d44, w5);
  float x16[16];
  for (int i = 0; i < 16; i++) x16[i] = (float)i;
  OT_CHECK(run_f32(x16, 2, d44, -INFINITY, 2, d22, (float[]){5, 7, 13, 15}));
  /* Reversal visits the window backwards: acc * 2 + v over [1, 2, 3] is 11
   * forwards and 17 backwards. */
  for (int rev = 0; rev < 2; rev++) {
    ev_fresh();
    optic_comp_id c = ev_comp("horner");
    optic_node_id a = ev_param(c, 0, OPTIC_F32, 0, NULL), v = ev_param(c, 1, OPTIC_F32, 0, NULL), twice, r;
    OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_ADD, a, a, NULL, &twice));
    OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_ADD, twice, v, NULL, &r));
    ev_root(c, r);
    optic_window_dim w6 = win(3, 1, 0, 0, 1, 1);
    w6.reversal = rev;
    build_window(c, 1, d3, &w6);
    OT_CHECK(run_f32((float[]){1, 2, 3}, 1, d3, 0, 1, (int64_t[]){1}, (float[]){rev ? 17.0f : 11.0f}), "rev %d", rev);
  }
}

static void reduce_window_variadic(void) {
  /* (sa, mb, a, b) -> (sa + a, max(mb, b)) over windows of 2. */
  ev_fresh();
  optic_comp_id c = ev_comp("summax");
  optic_node_id sa = ev_param(c, 0, OPTIC_F32, 0, NULL), mb = ev_param(c, 1, OPTIC_S32, 0, NULL);
  optic_node_id a = ev_param(c, 2, OPTIC_F32, 0, NULL), b = ev_param(c, 3, OPTIC_S32, 0, NULL), s, m, t;
  OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_ADD, sa, a, NULL, &s));
  OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_MAXIMUM, mb, b, NULL, &m));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, c, (optic_node_id[]){s, m}, 2, NULL, &t));
  ev_root(c, t);
  int64_t d4[] = {4}, d3[] = {3};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d4), y = ev_param(ev_main, 1, OPTIC_S32, 1, d4), r;
  float zf = 0;
  int32_t zi = INT32_MIN;
  optic_node_id inits[] = {ev_const(ev_main, OPTIC_F32, 0, NULL, &zf), ev_const(ev_main, OPTIC_S32, 0, NULL, &zi)};
  optic_window_dim w = win(2, 1, 0, 0, 1, 1);
  OT_EXPECT_OK(optic_graph_reduce_window(ev_m, ev_main, (optic_node_id[]){x, y}, inits, 2, &w, c, NULL, &r));
  ev_root(ev_main, r);
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d4, (float[]){1, 2, 3, 4}),
                  *ly = ev_lit(OPTIC_S32, 1, d4, (int32_t[]){4, 3, 2, 1});
  const optic_literal_t *args[] = {lx, ly};
  optic_literal_t *got = ev_run(ev_main, args, 2);
  if (got) {
    const float *sv = optic_literal_data(optic_literal_element(got, 0), NULL);
    const int32_t *mv = optic_literal_data(optic_literal_element(got, 1), NULL);
    OT_CHECK(sv[0] == 3 && sv[1] == 5 && sv[2] == 7 && mv[0] == 4 && mv[1] == 3 && mv[2] == 2);
    OT_CHECK(optic_literal_type(optic_literal_element(got, 1))->shape.dims[0] == d3[0]);
  }
  optic_literal_destroy(lx);
  optic_literal_destroy(ly);
  optic_literal_destroy(got);
}

static void map(void) {
  int64_t d3[] = {3};
  float x[] = {1, 2, 3}, y[] = {10, 20, 30};
  /* Binary combiners take the whole-array fast path, in parameter order. */
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F32, 1, d3), b = ev_param(ev_main, 1, OPTIC_F32, 1, d3), r1, r2, r3, t;
  OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, (optic_node_id[]){a, b}, 2,
                               ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32), NULL, &r1));
  OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, (optic_node_id[]){a, b}, 2, swapped_sub("rsub", false), NULL, &r2));
  /* General: x * x + 1. */
  optic_comp_id g = ev_comp("sq1");
  optic_node_id p = ev_param(g, 0, OPTIC_F32, 0, NULL), sq, one_n, gr;
  float one = 1;
  OT_EXPECT_OK(optic_graph_binary(ev_m, g, OPTIC_OP_MULTIPLY, p, p, NULL, &sq));
  one_n = ev_const(g, OPTIC_F32, 0, NULL, &one);
  OT_EXPECT_OK(optic_graph_binary(ev_m, g, OPTIC_OP_ADD, sq, one_n, NULL, &gr));
  ev_root(g, gr);
  OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, &a, 1, g, NULL, &r3));
  /* Three operands of different dtypes, to pred: p ? x < y : x > y. */
  optic_comp_id h = ev_comp("pick");
  optic_node_id hp = ev_param(h, 0, OPTIC_PRED, 0, NULL), hx = ev_param(h, 1, OPTIC_F32, 0, NULL);
  optic_node_id hy = ev_param(h, 2, OPTIC_F32, 0, NULL), lt, gt, hs, r4;
  OT_EXPECT_OK(optic_graph_compare(ev_m, h, OPTIC_CMP_LT, hx, hy, NULL, &lt));
  OT_EXPECT_OK(optic_graph_compare(ev_m, h, OPTIC_CMP_GT, hx, hy, NULL, &gt));
  OT_EXPECT_OK(optic_graph_select(ev_m, h, hp, lt, gt, NULL, &hs));
  ev_root(h, hs);
  optic_node_id pm = ev_param(ev_main, 2, OPTIC_PRED, 1, d3);
  OT_EXPECT_OK(optic_graph_map(ev_m, ev_main, (optic_node_id[]){pm, a, b}, 3, h, NULL, &r4));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){r1, r2, r3, r4}, 4, NULL, &t));
  ev_root(ev_main, t);
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d3, x), *ly = ev_lit(OPTIC_F32, 1, d3, y);
  optic_literal_t *lp = ev_lit(OPTIC_PRED, 1, d3, (uint8_t[]){1, 0, 1});
  const optic_literal_t *args[] = {lx, ly, lp};
  optic_literal_t *got = ev_run(ev_main, args, 3);
  if (got) {
    const float *s = optic_literal_data(optic_literal_element(got, 0), NULL);
    const float *d = optic_literal_data(optic_literal_element(got, 1), NULL);
    const float *q = optic_literal_data(optic_literal_element(got, 2), NULL);
    const uint8_t *k = optic_literal_data(optic_literal_element(got, 3), NULL);
    OT_CHECK(s[0] == 11 && s[1] == 22 && s[2] == 33);
    OT_CHECK(d[0] == 9 && d[1] == 18 && d[2] == 27);
    OT_CHECK(q[0] == 2 && q[1] == 5 && q[2] == 10);
    OT_CHECK(k[0] == 1 && k[1] == 0 && k[2] == 1);
  }
  optic_literal_destroy(lx);
  optic_literal_destroy(ly);
  optic_literal_destroy(lp);
  optic_literal_destroy(got);
}

static const ot_case cases[] = {
    {"reduce_add_and_max", reduce_add_and_max},
    {"reduce_fold_order_and_general_combiner", reduce_fold_order_and_general_combiner},
    {"reduce_variadic_argmax", reduce_variadic_argmax},
    {"reduce_window", reduce_window},
    {"reduce_window_variadic", reduce_window_variadic},
    {"map", map},
};
OT_MAIN(cases)
