/* Reverse-mode autodiff of convolution against central finite differences
 * in f32 (optic's convolution has no f64; h = 1e-3, tolerance 2e-3 of the
 * largest gradient): NHWC and NCHW and permuted dim labels, strides,
 * asymmetric and negative padding, lhs (base) and rhs (window) dilation,
 * feature groups (grouped and depthwise), batch groups, 1-D and 0-D
 * spatial, windows that leave input rows unread, window reversal. */
#include "tests/graph/autodiff_util.h"

typedef struct conv_case {
  const char *what, *labels;
  int32_t rank;
  int64_t in[5], k[5];
  int32_t ns;
  optic_window_dim w[3];
  int64_t fgc, bgc;
} conv_case;

#define W(sz, st, lo, hi, ld, rd) \
  { .size = sz, .stride = st, .pad_low = lo, .pad_high = hi, .base_dilation = ld, .window_dilation = rd }

#define WR(sz, st, lo, hi, ld, rd)                                                                       \
  {                                                                                                      \
    .size = sz, .stride = st, .pad_low = lo, .pad_high = hi, .base_dilation = ld, .window_dilation = rd, \
    .reversal = true                                                                                     \
  }

static const conv_case cases[] = {
    {"window reversal in both dims",
     "b01f_01io->b01f",
     4,
     {1, 5, 4, 2},
     {3, 2, 2, 3},
     2,
     {WR(3, 1, 1, 1, 1, 1), WR(2, 1, 0, 1, 1, 1)},
     1,
     1},
    {"window reversal in one dim, stride 2, rhs dilation, kernel labels permuted",
     "bf01_i01o->bf01",
     4,
     {2, 2, 7, 5},
     {2, 3, 2, 3},
     2,
     {W(3, 2, 0, 1, 1, 1), WR(2, 1, 1, 0, 1, 2)},
     1,
     1},
    {"nhwc same",
     "b01f_01io->b01f",
     4,
     {1, 5, 5, 2},
     {3, 3, 2, 3},
     2,
     {W(3, 1, 1, 1, 1, 1), W(3, 1, 1, 1, 1, 1)},
     1,
     1},
    {"nchw stride 2",
     "bf01_oi01->bf01",
     4,
     {2, 2, 6, 5},
     {3, 2, 3, 2},
     2,
     {W(3, 2, 0, 1, 1, 1), W(2, 2, 1, 0, 1, 1)},
     1,
     1},
    {"stride leaves rows unread",
     "bf01_oi01->bf01",
     4,
     {1, 1, 7, 4},
     {2, 1, 2, 2},
     2,
     {W(2, 3, 0, 0, 1, 1), W(2, 1, 0, 0, 1, 1)},
     1,
     1},
    {"rhs dilation",
     "b01f_01io->b01f",
     4,
     {1, 7, 6, 1},
     {2, 3, 1, 2},
     2,
     {W(2, 1, 0, 0, 1, 2), W(3, 1, 2, 1, 1, 2)},
     1,
     1},
    {"lhs dilation (transposed conv)",
     "b01f_01io->b01f",
     4,
     {1, 3, 4, 2},
     {3, 2, 2, 1},
     2,
     {W(3, 1, 2, 2, 2, 1), W(2, 1, 1, 0, 3, 1)},
     1,
     1},
    {"negative padding",
     "b01f_01io->b01f",
     4,
     {1, 6, 6, 1},
     {2, 2, 1, 2},
     2,
     {W(2, 1, -1, 0, 1, 1), W(2, 2, 1, -2, 1, 1)},
     1,
     1},
    {"feature groups 2",
     "b01f_01io->b01f",
     4,
     {2, 4, 4, 4},
     {2, 2, 2, 6},
     2,
     {W(2, 1, 0, 1, 1, 1), W(2, 1, 0, 0, 1, 1)},
     2,
     1},
    {"depthwise x2",
     "b01f_01io->b01f",
     4,
     {1, 5, 4, 3},
     {3, 3, 1, 6},
     2,
     {W(3, 1, 1, 1, 1, 1), W(3, 2, 1, 1, 1, 1)},
     3,
     1},
    {"batch groups 2",
     "b01f_01io->b01f",
     4,
     {4, 4, 3, 2},
     {2, 2, 2, 4},
     2,
     {W(2, 1, 0, 0, 1, 1), W(2, 1, 1, 0, 1, 1)},
     1,
     2},
    {"permuted labels",
     "0bf1_o10i->f01b",
     4,
     {5, 2, 3, 4},
     {2, 3, 2, 3},
     2,
     {W(2, 1, 0, 1, 1, 1), W(3, 2, 1, 1, 1, 1)},
     1,
     1},
    {"1-d", "bf0_io0->b0f", 3, {2, 3, 9}, {3, 2, 4}, 1, {W(4, 2, 1, 2, 1, 2)}, 1, 1},
    {"0-d (a matmul)", "bf_io->bf", 2, {3, 4}, {4, 5}, 0, {{0}}, 1, 1},
    {"3-d",
     "b012f_012io->b012f",
     5,
     {1, 3, 4, 3, 2},
     {2, 2, 2, 2, 2},
     3,
     {W(2, 1, 0, 0, 1, 1), W(2, 2, 1, 0, 1, 1), W(2, 1, 0, 1, 1, 2)},
     1,
     1},
};

static void test_convolution(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const conv_case *c = &cases[i];
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, c->rank, c->in),
                  k = ev_param(ev_main, 1, OPTIC_F32, c->rank, c->k), y;
    optic_status st = optic_graph_convolution(ev_m, ev_main, x, k, c->labels, c->w, c->fgc, c->bgc, NULL, &y);
    OT_CHECK(st == OPTIC_OK, "%s: %s", c->what, optic_last_error());
    if (st != OPTIC_OK) continue;
    OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, y, NULL, &y));
    ev_root(ev_main, y);
    OT_CHECK(adf_check(c->what, ev_main, -1, 1, 2e-3), "convolution %s", c->what);
  }
}

/* A conv block: conv -> bias -> relu (maximum with 0) -> sum, all parameters. */
static void test_conv_block(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 4, (int64_t[]){2, 6, 6, 3}),
                k = ev_param(ev_main, 1, OPTIC_F32, 4, (int64_t[]){3, 3, 3, 4}),
                b = ev_param(ev_main, 2, OPTIC_F32, 1, (int64_t[]){4}), y, bb, z, zero, s;
  optic_window_dim w[2] = {W(3, 2, 1, 1, 1, 1), W(3, 2, 1, 1, 1, 1)};
  OT_EXPECT_OK(optic_graph_convolution(ev_m, ev_main, x, k, "b01f_01io->b01f", w, 1, 1, NULL, &y));
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, b, &optic_node_type(ev_m, y)->shape, (int64_t[]){3}, 1, NULL, &bb));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, y, bb, NULL, &y));
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &(float){0}, 4, NULL, &zero));
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, zero, &optic_node_type(ev_m, y)->shape, NULL, 0, NULL, &z));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MAXIMUM, y, z, NULL, &y));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &y));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &y, &zero, 1, (int64_t[]){0, 1, 2, 3}, 4, add, NULL, &s));
  ev_root(ev_main, s);
  OT_CHECK(adf_check("conv block", ev_main, -1, 1, 2e-3));
}

static const ot_case test_cases[] = {
    {"convolution", test_convolution},
    {"conv_block", test_conv_block},
};
OT_MAIN(test_cases)
