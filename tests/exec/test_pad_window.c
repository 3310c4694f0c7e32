/* pad and reduce-window through optic_program_run against the reference
 * evaluator (graph/evaluate*.c, plain loops over output elements), at levels
 * NONE and FULL, on 1 and 2 threads (every op split): sweeps of edge sizes
 * (0, 1, odd), edge and interior padding (negative included), strides,
 * dilations, reversal, windows larger than the input, and several dtypes.
 * Inputs are small integers and quarters (tests/exec/exec_util.h), so pad
 * (copies) and every reduce here are exact: tolerance 0.
 * Reproduce a failure: ctest --preset release -R exec_pad_window
 * (each failing case prints its label with shape and configuration). */
#include <stdio.h>

#include "tests/exec/exec_util.h"

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t k, optic_dtype dt, int32_t rank,
                           const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_parameter(m, c, k, &t, NULL, &id));
  return id;
}

/* pad of x (dtype dt, dims) with cfg; false (nothing checked) when the
 * configuration gives a negative output extent. */
static bool pad_case(optic_dtype dt, int32_t rank, const int64_t *dims, const optic_pad_dim *cfg) {
  for (int32_t d = 0; d < rank; d++) {
    int64_t n = dims[d], out = cfg[d].low + cfg[d].high + n + (n > 0 ? (n - 1) * cfg[d].interior : 0);
    if (out < 0) return false;
  }
  char label[256];
  int at = snprintf(label, sizeof label, "pad %s [", optic_dtype_name(dt));
  for (int32_t d = 0; d < rank; d++) {
    at += snprintf(label + at, sizeof label - (size_t)at, "%s%lld:%lld_%lld_%lld", d ? " " : "", (long long)dims[d],
                   (long long)cfg[d].low, (long long)cfg[d].high, (long long)cfg[d].interior);
  }
  snprintf(label + at, sizeof label - (size_t)at, "]");
  optic_module_t *m = NULL;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("pad", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_node_id x = param(m, c, 0, dt, rank, dims), pv = param(m, c, 1, dt, 0, NULL), y;
  OT_EXPECT_OK(optic_graph_pad(m, c, x, pv, cfg, NULL, &y));
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  optic_module_set_entry(m, c);
  ex_check_module(m, 7, 0, 0, label);
  optic_module_destroy(m);
  return true;
}

static const optic_pad_dim pad_configs[] = {{0, 0, 0},  {1, 2, 0},  {0, 0, 1},  {1, 1, 1},  {2, 0, 3},
                                            {-1, 0, 0}, {0, -2, 0}, {-1, 1, 2}, {3, -2, 1}, {-3, -1, 1}};
#define N_PAD_CONFIGS (sizeof pad_configs / sizeof pad_configs[0])

static void pad_sweep(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {2, 3, 5}, {3, 1, 8}, {1, 7, 17}, {2, 0, 3}, {4, 4, 1}};
  ex_rng r = {11};
  int checked = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (int k = 0; k < 12; k++) {
      optic_pad_dim cfg[3];
      for (int d = 0; d < 3; d++) cfg[d] = pad_configs[ex_next(&r) % N_PAD_CONFIGS];
      if (k < 3) cfg[0] = cfg[1] = pad_configs[0];  /* only the last dim padded: chunk 1 */
      if (k == 3) cfg[1] = cfg[2] = pad_configs[0]; /* only the first dim padded: one row of big chunks */
      checked += pad_case(OPTIC_F32, 3, shapes[s], cfg);
    }
  }
  /* rank 1 and 0-size, every configuration */
  static const int64_t n1[] = {0, 1, 2, 9, 33};
  for (size_t s = 0; s < sizeof n1 / sizeof n1[0]; s++) {
    for (size_t k = 0; k < N_PAD_CONFIGS; k++) checked += pad_case(OPTIC_F32, 1, &n1[s], &pad_configs[k]);
  }
  /* every element size: 1 (u8, pred), 2 (f16: the byte-loop fill), 4, 8 */
  static const optic_dtype dts[] = {OPTIC_U8, OPTIC_PRED, OPTIC_F16, OPTIC_BF16, OPTIC_S32, OPTIC_F64, OPTIC_S64};
  const int64_t nhwc[] = {2, 4, 5, 3};
  const optic_pad_dim pool[] = {{0, 0, 0}, {1, 1, 1}, {-1, 2, 2}, {0, 0, 0}};
  const optic_pad_dim last[] = {{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {2, -1, 1}};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    checked += pad_case(dts[d], 4, nhwc, pool);
    checked += pad_case(dts[d], 4, nhwc, last);
  }
  /* the convnet's shape (interior padding between 4x4 pixels of 8 channels) */
  const int64_t conv[] = {16, 4, 4, 8};
  const optic_pad_dim up[] = {{0, 0, 0}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}};
  checked += pad_case(OPTIC_F32, 4, conv, up);
  printf("pad: %d cases\n", checked);
  OT_CHECK(checked > 60, "pad sweep ran only %d cases", checked);
}

/* reduce-window of x (dtype dt, dims) by reducer op with window win and a
 * parameter init value; false when the window gives no valid output shape. */
static bool rw_case(optic_dtype dt, optic_opcode op, int32_t rank, const int64_t *dims, const optic_window_dim *win) {
  for (int32_t d = 0; d < rank; d++) {
    const optic_window_dim *e = &win[d];
    int64_t padded = (dims[d] > 0 ? (dims[d] - 1) * e->base_dilation + 1 : 0) + e->pad_low + e->pad_high;
    if (padded < (e->size - 1) * e->window_dilation + 1) return false;
  }
  char label[320];
  int at = snprintf(label, sizeof label, "reduce-window %s %s [", optic_opcode_name(op), optic_dtype_name(dt));
  for (int32_t d = 0; d < rank; d++) {
    const optic_window_dim *e = &win[d];
    at += snprintf(label + at, sizeof label - (size_t)at, "%s%lld:size%lld stride%lld pad%lld_%lld lhs%lld rhs%lld%s",
                   d ? ", " : "", (long long)dims[d], (long long)e->size, (long long)e->stride, (long long)e->pad_low,
                   (long long)e->pad_high, (long long)e->base_dilation, (long long)e->window_dilation,
                   e->reversal ? " rev" : "");
  }
  snprintf(label + at, sizeof label - (size_t)at, "]");
  optic_module_t *m = NULL;
  optic_comp_id c, f;
  OT_EXPECT_OK(optic_module_create("rw", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "red", &f));
  optic_node_id a = param(m, f, 0, dt, 0, NULL), b = param(m, f, 1, dt, 0, NULL), r, y;
  OT_EXPECT_OK(optic_graph_binary(m, f, op, a, b, NULL, &r));
  OT_EXPECT_OK(optic_computation_set_root(m, f, r));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_node_id x = param(m, c, 0, dt, rank, dims), init = param(m, c, 1, dt, 0, NULL);
  OT_EXPECT_OK(optic_graph_reduce_window(m, c, &x, &init, 1, win, f, NULL, &y));
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  optic_module_set_entry(m, c);
  ex_check_module(m, 5, 0, 0, label);
  optic_module_destroy(m);
  return true;
}

#define W1 \
  { 1, 1, 0, 0, 1, 1, false }

static void reduce_window_sweep(void) {
  /* NHWC windows: pool 2x2/2, 3x3 same, the last (contiguous) dim windowed
   * (strided loop), window larger than the input, base and window dilation
   * with reversal, negative padding, no window at all, odd strides */
  static const optic_window_dim wins[][4] = {
      {W1, {2, 2, 0, 0, 1, 1, false}, {2, 2, 0, 0, 1, 1, false}, W1},
      {W1, {3, 1, 1, 1, 1, 1, false}, {3, 1, 1, 1, 1, 1, false}, W1},
      {W1, W1, W1, {2, 2, 0, 1, 1, 1, false}},
      {W1, W1, {3, 1, 1, 1, 1, 1, true}, {3, 2, 2, 1, 1, 1, false}},
      {W1, {7, 1, 3, 3, 1, 1, false}, {8, 3, 2, 3, 1, 1, false}, W1},
      {W1, {2, 1, 0, 1, 2, 1, true}, {2, 1, 1, 1, 1, 2, false}, W1},
      {W1, {2, 3, -1, 0, 1, 1, false}, {3, 2, -1, -1, 1, 1, false}, W1},
      {W1, W1, W1, W1},
      {{2, 1, 0, 0, 1, 1, false}, W1, W1, W1},
      {W1, {3, 2, 1, 0, 3, 2, false}, W1, {2, 1, 1, 0, 2, 1, true}},
  };
  static const int64_t shapes[][4] = {{2, 5, 6, 3}, {1, 1, 1, 1}, {3, 4, 7, 1}, {2, 0, 6, 3}, {1, 8, 8, 16}};
  static const optic_opcode ops[] = {OPTIC_OP_MAXIMUM, OPTIC_OP_ADD, OPTIC_OP_MINIMUM, OPTIC_OP_MULTIPLY};
  int checked = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++) {
      for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        checked += rw_case(OPTIC_F32, ops[o], 4, shapes[s], wins[w]);
      /* the general (block program) path: s32 and f64 */
      if (s == 0) checked += rw_case(OPTIC_S32, OPTIC_OP_MAXIMUM, 4, shapes[s], wins[w]);
      if (s == 2) checked += rw_case(OPTIC_F64, OPTIC_OP_ADD, 4, shapes[s], wins[w]);
    }
  }
  /* rank 1: sizes 0, 1, 2, 17, 33 with strided, padded windows */
  static const int64_t n1[] = {0, 1, 2, 17, 33};
  static const optic_window_dim w1[] = {{3, 2, 1, 1, 1, 1, false},
                                        {1, 1, 0, 0, 1, 1, false},
                                        {5, 1, 4, 4, 1, 1, false},
                                        {2, 2, -1, 0, 1, 1, false},
                                        {2, 1, 0, 0, 2, 3, false}};
  for (size_t s = 0; s < sizeof n1 / sizeof n1[0]; s++) {
    for (size_t w = 0; w < sizeof w1 / sizeof w1[0]; w++) {
      checked += rw_case(OPTIC_F32, OPTIC_OP_MAXIMUM, 1, &n1[s], &w1[w]);
      checked += rw_case(OPTIC_F32, OPTIC_OP_ADD, 1, &n1[s], &w1[w]);
    }
  }
  printf("reduce-window: %d cases\n", checked);
  OT_CHECK(checked > 150, "reduce-window sweep ran only %d cases", checked);
}

static const ot_case cases[] = {
    {"pad_sweep", pad_sweep},
    {"reduce_window_sweep", reduce_window_sweep},
};
OT_MAIN(cases)
