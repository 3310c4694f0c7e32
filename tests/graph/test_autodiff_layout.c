/* Reverse-mode autodiff of the data-movement ops (broadcast, reshape,
 * transpose, slice, pad, concatenate, reverse, dynamic-slice,
 * dynamic-update-slice) against central finite differences in f64, with
 * edge sizes: size-1 and size-0 dims, strided and negative-edge windows,
 * clamped dynamic starts. Each op's result is squared so the gradient
 * depends on the values, not only on where they went. */
#include "tests/graph/autodiff_util.h"

#define TOL 1e-6

static optic_node_id squared(optic_node_id y) {
  optic_node_id r;
  if (optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &r)) ev_die("square");
  return r;
}

static optic_node_id f64_scalar(double v) {
  optic_node_id k;
  if (optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &v, 8, NULL, &k)) ev_die("constant");
  return k;
}

static void test_broadcast(void) {
  int64_t d[2] = {3, 1};
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, d), y;
  OT_EXPECT_OK(
      optic_graph_broadcast(ev_m, ev_main, x, &(optic_shape){4, {2, 3, 4, 1}}, (int64_t[]){1, 3}, 2, NULL, &y));
  ev_root(ev_main, squared(y));
  OT_CHECK(adf_check("broadcast", ev_main, -1, 1, TOL));
  ev_fresh();
  x = ev_param(ev_main, 0, OPTIC_F64, 0, NULL);
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, x, &(optic_shape){2, {2, 5}}, NULL, 0, NULL, &y));
  ev_root(ev_main, squared(y));
  OT_CHECK(adf_check("broadcast scalar", ev_main, -1, 1, TOL));
}

static void test_reshape_transpose(void) {
  int64_t d[3] = {2, 3, 4};
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 3, d), y, z;
  OT_EXPECT_OK(optic_graph_transpose(ev_m, ev_main, x, (int64_t[]){2, 0, 1}, NULL, &y));
  OT_EXPECT_OK(optic_graph_reshape(ev_m, ev_main, y, &(optic_shape){2, {8, 3}}, NULL, &z));
  ev_root(ev_main, squared(z));
  OT_CHECK(adf_check("transpose+reshape", ev_main, -1, 1, TOL));
}

static void test_slice(void) {
  int64_t d[2] = {7, 5};
  static const int64_t cases[][6] = {
      {1, 0, 6, 5, 2,
       1}, /* start, limit, stride for dims 0 and 1 interleaved: start0 start1 limit0 limit1 stride0 stride1 */
      {0, 4, 7, 5, 3, 1},
      {2, 1, 3, 4, 1, 2},
      {3, 2, 3, 5, 1, 1}, /* 0 rows */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, d), y;
    const int64_t *c = cases[i];
    OT_EXPECT_OK(optic_graph_slice(ev_m, ev_main, x, (int64_t[]){c[0], c[1]}, (int64_t[]){c[2], c[3]},
                                   (int64_t[]){c[4], c[5]}, NULL, &y));
    ev_root(ev_main, squared(y));
    OT_CHECK(adf_check("slice", ev_main, -1, 1, TOL), "case %zu", i);
  }
}

static void test_pad(void) {
  int64_t d[2] = {4, 3};
  static const optic_pad_dim cfgs[][2] = {
      {{1, 2, 0}, {0, 1, 1}},
      {{-1, 2, 1}, {2, -2, 0}},
      {{0, 0, 2}, {-1, -1, 1}},
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, d), v = ev_param(ev_main, 1, OPTIC_F64, 0, NULL), y;
    OT_EXPECT_OK(optic_graph_pad(ev_m, ev_main, x, v, cfgs[i], NULL, &y));
    ev_root(ev_main, squared(y));
    OT_CHECK(adf_check("pad", ev_main, -1, 1, TOL), "config %zu", i);
  }
}

static void test_concatenate(void) {
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){2, 3}),
                b = ev_param(ev_main, 1, OPTIC_F64, 2, (int64_t[]){2, 0}),
                c = ev_param(ev_main, 2, OPTIC_F64, 2, (int64_t[]){2, 1}), y;
  OT_EXPECT_OK(optic_graph_concatenate(ev_m, ev_main, (optic_node_id[]){a, b, c, a}, 4, 1, NULL, &y));
  ev_root(ev_main, squared(y));
  OT_CHECK(adf_check("concatenate", ev_main, -1, 1, TOL));
}

static void test_reverse(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 3, (int64_t[]){2, 3, 2}), y;
  OT_EXPECT_OK(optic_graph_reverse(ev_m, ev_main, x, (int64_t[]){0, 2}, 2, NULL, &y));
  ev_root(ev_main, squared(y));
  OT_CHECK(adf_check("reverse", ev_main, -1, 1, TOL));
}

static optic_node_id s32(int32_t v) {
  optic_node_id k;
  if (optic_graph_constant(ev_m, ev_main, OPTIC_S32, &(optic_shape){0}, &v, 4, NULL, &k)) ev_die("constant");
  return k;
}

/* Starts inside, at the edge and past it (clamped back, as XLA does). */
static void test_dynamic_slice(void) {
  int32_t starts[][2] = {{1, 2}, {0, 0}, {9, -4}};
  for (size_t i = 0; i < 3; i++) {
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){5, 6}), y;
    optic_node_id st[2] = {s32(starts[i][0]), s32(starts[i][1])};
    OT_EXPECT_OK(optic_graph_dynamic_slice(ev_m, ev_main, x, st, 2, (int64_t[]){2, 3}, NULL, &y));
    ev_root(ev_main, squared(y));
    OT_CHECK(adf_check("dynamic-slice", ev_main, -1, 1, TOL), "starts %d,%d", starts[i][0], starts[i][1]);
  }
}

static void test_dynamic_update_slice(void) {
  int32_t starts[][2] = {{1, 2}, {7, 7}};
  for (size_t i = 0; i < 2; i++) {
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){4, 5}),
                  u = ev_param(ev_main, 1, OPTIC_F64, 2, (int64_t[]){2, 2}), y;
    optic_node_id st[2] = {s32(starts[i][0]), s32(starts[i][1])};
    OT_EXPECT_OK(optic_graph_dynamic_update_slice(ev_m, ev_main, x, u, st, 2, NULL, &y));
    ev_root(ev_main, squared(y));
    OT_CHECK(adf_check("dynamic-update-slice", ev_main, -1, 1, TOL), "case %zu", i);
  }
}

/* A value used by several ops: the adjoints add up. */
static void test_fan_out(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, (int64_t[]){4}), r, t, y, k = f64_scalar(0.5);
  OT_EXPECT_OK(optic_graph_reverse(ev_m, ev_main, x, (int64_t[]){0}, 1, NULL, &r));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, x, r, NULL, &t));
  OT_EXPECT_OK(optic_graph_broadcast(ev_m, ev_main, k, &(optic_shape){1, {4}}, NULL, 0, NULL, &k));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_POWER, t, k, NULL, &y));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, y, x, NULL, &y));
  ev_root(ev_main, y);
  OT_CHECK(adf_check("fan-out", ev_main, 0.5, 2, TOL));
}

/* Empty arrays: a [0, 4] parameter gets a [0, 4] gradient; a [3, 0] one
 * reduced to a [3] zero vector gets zeros. */
static void test_empty(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){0, 4}),
                v = ev_param(ev_main, 1, OPTIC_F64, 2, (int64_t[]){3, 0}), t, s, r, zero = f64_scalar(0), y;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, x, NULL, &t));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &t, &zero, 1, (int64_t[]){0}, 1, add, NULL, &s)); /* [4] zeros */
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &v, &zero, 1, (int64_t[]){1}, 1, add, NULL, &r)); /* [3] zeros */
  OT_EXPECT_OK(optic_graph_concatenate(ev_m, ev_main, (optic_node_id[]){s, r}, 2, 0, NULL, &y));
  ev_root(ev_main, squared(y));
  OT_CHECK(adf_check("empty", ev_main, -1, 1, TOL));
}

static const ot_case cases[] = {
    {"empty", test_empty},
    {"broadcast", test_broadcast},
    {"reshape_transpose", test_reshape_transpose},
    {"slice", test_slice},
    {"pad", test_pad},
    {"concatenate", test_concatenate},
    {"reverse", test_reverse},
    {"dynamic_slice", test_dynamic_slice},
    {"dynamic_update_slice", test_dynamic_update_slice},
    {"fan_out", test_fan_out},
};
OT_MAIN(cases)
