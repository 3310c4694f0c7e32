/* Reverse-mode autodiff of reduce-window (sum, max and min pooling)
 * against central finite differences in f64: overlapping and strided
 * windows, padding (negative too), base and window dilation, windows of
 * one element, window reversal, and XLA's select-and-scatter tie rule for
 * max pooling (in the order the window is visited). */
#include "tests/graph/autodiff_util.h"

#define W(sz, st, lo, hi, ld, rd) \
  { .size = sz, .stride = st, .pad_low = lo, .pad_high = hi, .base_dilation = ld, .window_dilation = rd }

/* The same, with window reversal (the window visited from its far end). */
#define WR(sz, st, lo, hi, ld, rd)                                                                       \
  {                                                                                                      \
    .size = sz, .stride = st, .pad_low = lo, .pad_high = hi, .base_dilation = ld, .window_dilation = rd, \
    .reversal = true                                                                                     \
  }

typedef struct rw_case {
  const char *what;
  int32_t rank;
  int64_t dims[4];
  optic_window_dim w[4];
} rw_case;

static const rw_case cases[] = {
    {"2x2 stride 2", 2, {4, 6}, {W(2, 2, 0, 0, 1, 1), W(2, 2, 0, 0, 1, 1)}},
    {"3x3 stride 1 overlapping, same padding", 2, {5, 4}, {W(3, 1, 1, 1, 1, 1), W(3, 1, 1, 1, 1, 1)}},
    {"nhwc 3x3 stride 2",
     4,
     {2, 5, 5, 2},
     {W(1, 1, 0, 0, 1, 1), W(3, 2, 1, 1, 1, 1), W(3, 2, 0, 1, 1, 1), W(1, 1, 0, 0, 1, 1)}},
    {"window dilation 2", 1, {9}, {W(3, 2, 0, 0, 1, 2)}},
    {"base dilation 2, negative pad", 2, {4, 3}, {W(2, 1, -1, 1, 2, 1), W(2, 1, 0, 0, 1, 1)}},
    {"one-element window (identity)", 2, {3, 3}, {W(1, 1, 0, 0, 1, 1), W(1, 1, 0, 0, 1, 1)}},
    {"global pool", 2, {3, 7}, {W(1, 1, 0, 0, 1, 1), W(7, 1, 0, 0, 1, 1)}},
    {"reversed 3x2, padding, stride 2", 2, {5, 4}, {WR(3, 2, 1, 1, 1, 1), WR(2, 1, 0, 1, 1, 1)}},
    {"reversed in one dim, window dilation 2", 2, {6, 3}, {WR(2, 1, 0, 0, 1, 2), W(2, 1, 0, 0, 1, 1)}},
    {"reversed, empty", 2, {0, 3}, {WR(1, 1, 0, 0, 1, 1), WR(2, 1, 0, 0, 1, 1)}},
};

static void run(optic_opcode op, bool init_param) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const rw_case *c = &cases[i];
    ev_fresh();
    optic_comp_id f = ev_binary_comp("combine", op, OPTIC_F64);
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, c->rank, c->dims), init, y;
    if (init_param) {
      init = ev_param(ev_main, 1, OPTIC_F64, 0, NULL);
    } else {
      double v = op == OPTIC_OP_MAXIMUM ? -HUGE_VAL : op == OPTIC_OP_MINIMUM ? HUGE_VAL : 0;
      OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &v, 8, NULL, &init));
    }
    OT_EXPECT_OK(optic_graph_reduce_window(ev_m, ev_main, &x, &init, 1, c->w, f, NULL, &y));
    OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &y));
    ev_root(ev_main, y);
    OT_CHECK(adf_check(c->what, ev_main, -1, 1, 1e-6), "reduce-window %s %s", optic_opcode_name(op), c->what);
  }
}

static void test_sum_pool(void) {
  run(OPTIC_OP_ADD, false);
  run(OPTIC_OP_ADD, true); /* the init value's gradient too (once per window, and per padding read) */
}

static void test_max_pool(void) { run(OPTIC_OP_MAXIMUM, false); }
static void test_min_pool(void) { run(OPTIC_OP_MINIMUM, false); }

/* Ties: in [[1, 3, 3], [3, 0, 2]] pooled 2x2 stride 1, the first 3 of each
 * window in row-major order takes the gradient (XLA's select-and-scatter
 * with >=): windows [0..1]x[0..1] and [0..1]x[1..2] both pick (0,1). */
static void max_pool_ties(bool reversed) {
  ev_fresh();
  optic_comp_id f = ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, (int64_t[]){2, 3}), init, y, s, zero;
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  optic_window_dim w[2] = {W(2, 1, 0, 0, 1, 1), W(2, 1, 0, 0, 1, 1)};
  w[0].reversal = w[1].reversal = reversed;
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){-INFINITY}, 4, NULL, &init));
  OT_EXPECT_OK(optic_graph_reduce_window(ev_m, ev_main, &x, &init, 1, w, f, NULL, &y));
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){0}, 4, NULL, &zero));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &y, &zero, 1, (int64_t[]){0, 1}, 2, add, NULL, &s));
  ev_root(ev_main, s);
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, NULL, &g));
  optic_literal_t *in = ev_lit(OPTIC_F32, 2, (int64_t[]){2, 3}, (float[]){1, 3, 3, 3, 0, 2});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){in}, 1);
  if (r) {
    float plain[6] = {0, 2, 0, 0, 0, 0}, rev[6] = {0, 0, 1, 1, 0, 0};
    optic_literal_t *want = ev_lit(OPTIC_F32, 2, (int64_t[]){2, 3}, reversed ? rev : plain);
    OT_CHECK(ev_same(want, optic_literal_element(r, 1), OPTIC_MATCH_BITWISE));
    optic_literal_destroy(want);
  }
  optic_literal_destroy(r);
  optic_literal_destroy(in);
}

static void test_max_pool_ties(void) { max_pool_ties(false); }
/* Reversed windows are visited from their far end: window (0, 0) meets
 * the 3 at (1, 0) first, window (0, 1) the one at (0, 2). */
static void test_max_pool_ties_reversed(void) { max_pool_ties(true); }

static const ot_case test_cases[] = {
    {"sum_pool", test_sum_pool},
    {"max_pool", test_max_pool},
    {"min_pool", test_min_pool},
    {"max_pool_ties", test_max_pool_ties},
    {"max_pool_ties_reversed", test_max_pool_ties_reversed},
};
OT_MAIN(test_cases)
