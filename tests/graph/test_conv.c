/* Graph convolution: shape inference through the kernels' descriptor, errors,
 * HLO text, and XLA's flop count (only (kernel, output) pairs that land on
 * real input elements count) checked against brute-force counting. */
#include <optic/optic.h>

#include "tests/harness.h"

static optic_module_t *m;
static optic_comp_id c;

static void destroy_module(void) { optic_module_destroy(m); }

static void fresh(void) {
  static bool registered = false;
  if (!registered) registered = atexit(destroy_module) == 0;
  optic_module_destroy(m);
  if (optic_module_create("conv", &m) || optic_module_add_computation(m, "main", &c)) exit(2);
}

static optic_node_id param(int32_t n, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id;
  if (optic_graph_parameter(m, c, n, &t, NULL, &id)) exit(2);
  return id;
}

static optic_window_dim win(int64_t size, int64_t stride, int64_t lo, int64_t hi, int64_t ldil, int64_t rdil) {
  return (optic_window_dim){
      .size = size, .stride = stride, .pad_low = lo, .pad_high = hi, .base_dilation = ldil, .window_dilation = rdil};
}

static void resnet_layer(void) {
  fresh();
  int64_t in[] = {8, 56, 56, 64}, k[] = {3, 3, 64, 64};
  optic_node_id x = param(0, 4, in), w = param(1, 4, k), y;
  optic_window_dim wd[2] = {win(3, 1, 1, 1, 1, 1), win(3, 1, 1, 1, 1, 1)};
  OT_EXPECT_OK(optic_graph_convolution(m, c, x, w, "b01f_01io->b01f", wd, 1, 1, "y", &y));
  char buf[64];
  optic_type_format(optic_node_type(m, y), buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[8,56,56,64]") == 0, "got %s", buf);
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, y, &cost));
  /* per spatial dim 55 + 56 + 55 = 166 valid pairs */
  OT_CHECK(cost.flops == 2.0 * 64 * 64 * 8 * 166 * 166, "flops %.0f", cost.flops);
  OT_CHECK(cost.bytes_accessed == 4.0 * (8 * 56 * 56 * 64 * 2 + 3 * 3 * 64 * 64), "bytes %.0f", cost.bytes_accessed);
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text,
                          "ROOT y = f32[8,56,56,64] convolution(parameter.0, parameter.1), "
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"),
           "%s", text);
  optic_string_free(text);
}

static void errors(void) {
  fresh();
  int64_t in[] = {1, 5, 5, 3}, k[] = {3, 3, 4, 8};
  optic_node_id x = param(0, 4, in), w = param(1, 4, k), y;
  optic_window_dim wd[2] = {win(3, 1, 0, 0, 1, 1), win(3, 1, 0, 0, 1, 1)};
  OT_EXPECT_STATUS(optic_graph_convolution(m, c, x, w, "b01f_01io->b01f", wd, 1, 1, NULL, &y),
                   OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "feature") != NULL, "message: %s", optic_last_error());
  OT_EXPECT_STATUS(optic_graph_convolution(m, c, x, w, "b01x_01io->b01f", wd, 1, 1, NULL, &y),
                   OPTIC_ERR_INVALID_ARGUMENT);
  optic_window_dim wrong[2] = {win(2, 1, 0, 0, 1, 1), win(3, 1, 0, 0, 1, 1)};
  int64_t k3[] = {3, 3, 3, 8};
  optic_node_id w3 = param(2, 4, k3);
  OT_EXPECT_STATUS(optic_graph_convolution(m, c, x, w3, "b01f_01io->b01f", wrong, 1, 1, NULL, &y),
                   OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "window dim 0 has size 2") != NULL, "message: %s", optic_last_error());
  OT_EXPECT_OK(optic_graph_convolution(m, c, x, w3, "b01f_01io->b01f", wd, 1, 1, NULL, &y));
}

/* Brute force: for each (kernel index, output index) pair, is the input
 * position a real element? */
static double brute_valid(int64_t in, int64_t k, int64_t out, int64_t stride, int64_t lo, int64_t ldil, int64_t rdil) {
  double n = 0;
  for (int64_t o = 0; o < out; o++) {
    for (int64_t j = 0; j < k; j++) {
      int64_t x = o * stride - lo + j * rdil;
      if (x >= 0 && x % ldil == 0 && x / ldil < in) n++;
    }
  }
  return n;
}

static void flops_with_holes(void) {
  /* 1-D convolutions over a sweep of strides, pads (both signs) and dilations. */
  int checked = 0;
  for (int64_t stride = 1; stride <= 3; stride++) {
    for (int64_t ldil = 1; ldil <= 3; ldil++) {
      for (int64_t rdil = 1; rdil <= 2; rdil++) {
        for (int64_t lo = -2; lo <= 3; lo++) {
          fresh();
          int64_t in[] = {2, 7, 3}, k[] = {3, 3, 4};
          optic_node_id x = param(0, 3, in), w = param(1, 3, k), y;
          optic_window_dim wd = win(3, stride, lo, 2, ldil, rdil);
          optic_status st = optic_graph_convolution(m, c, x, w, "b0f_0io->b0f", &wd, 1, 1, NULL, &y);
          if (st != OPTIC_OK) continue; /* an empty or invalid window for this combination */
          checked++;
          optic_cost cost;
          OT_EXPECT_OK(optic_node_cost(m, y, &cost));
          int64_t out = optic_node_type(m, y)->shape.dims[1];
          double want = 2.0 * 3 * 4 * 2 * brute_valid(7, 3, out, stride, lo, ldil, rdil);
          OT_CHECK(cost.flops == want, "stride %lld ldil %lld rdil %lld pad_lo %lld: flops %.0f want %.0f",
                   (long long)stride, (long long)ldil, (long long)rdil, (long long)lo, cost.flops, want);
        }
      }
    }
  }
  OT_CHECK(checked >= 100, "only %d of 108 combinations built", checked);
}

static void groups(void) {
  fresh();
  /* feature_group_count 2: input features 4 = 2 groups of 2, kernel input features 2, 6 outputs */
  int64_t in[] = {3, 9, 4}, k[] = {2, 2, 6};
  optic_node_id x = param(0, 3, in), w = param(1, 3, k), y;
  optic_window_dim wd = win(2, 1, 0, 0, 1, 1);
  OT_EXPECT_OK(optic_graph_convolution(m, c, x, w, "b0f_0io->b0f", &wd, 2, 1, NULL, &y));
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, y, &cost));
  OT_CHECK(cost.flops == 2.0 * (4 / 2) * 6 * 3 * 16, "flops %.0f", cost.flops); /* 8 outputs x 2 taps */
  optic_computation_set_root(m, c, y);
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text, "window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2\n"), "%s", text);
  optic_string_free(text);
}

static const ot_case cases[] = {
    {"resnet_layer", resnet_layer},
    {"errors", errors},
    {"flops_with_holes", flops_with_holes},
    {"groups", groups},
};
OT_MAIN(cases)
