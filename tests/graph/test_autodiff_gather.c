/* Reverse-mode autodiff of gather (the gradient is a scatter-add at the
 * clamped starts) and scatter-add (a gather, zero where scatter skipped an
 * out-of-bounds window) against central finite differences in f64: an
 * embedding lookup with repeated and out-of-range rows, a 2-D start with a
 * non-trailing index vector dim, windows wider than one element. */
#include "tests/graph/autodiff_util.h"

static optic_node_id s32_const(int32_t rank, const int64_t *dims, const int32_t *data) {
  return ev_const(ev_main, OPTIC_S32, rank, dims, data);
}

static void finish(const char *what, optic_node_id y) {
  optic_node_id sq;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &sq));
  ev_root(ev_main, sq);
  OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "gather %s", what);
}

/* table [5, 3], rows {1, 4, 1, 7 (clamped to 4), -2 (clamped to 0)}. */
static void test_embedding_lookup(void) {
  ev_fresh();
  optic_node_id t = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){5, 3});
  optic_node_id idx = s32_const(1, (int64_t[]){5}, (int32_t[]){1, 4, 1, 7, -2}), y;
  optic_gather_dims d = {.n_offset_dims = 1,
                         .offset_dims = {1},
                         .n_collapsed = 1,
                         .collapsed_slice_dims = {0},
                         .n_start_index_map = 1,
                         .start_index_map = {0},
                         .index_vector_dim = 1,
                         .slice_sizes = {1, 3}};
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, t, idx, &d, NULL, &y));
  finish("embedding", y);
}

/* operand [4, 6]; indices [2, 3] with the index vector along dim 0: three
 * 2-D starts, windows of [2, 3] (the second start is clamped). */
static void test_windows(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){4, 6});
  optic_node_id idx = s32_const(2, (int64_t[]){2, 3}, (int32_t[]){0, 3, 1, 2, 5, 1}), y;
  optic_gather_dims d = {.n_offset_dims = 2,
                         .offset_dims = {1, 2},
                         .n_start_index_map = 2,
                         .start_index_map = {0, 1},
                         .index_vector_dim = 0,
                         .slice_sizes = {2, 3}};
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, idx, &d, NULL, &y));
  finish("windows", y);
}

/* take_along_axis on dim 1 of [3, 4] with s64 indices [3, 2, 1]. */
static void test_take_along_axis(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){3, 4}), y;
  int64_t rows[6] = {0, 0, 1, 1, 2, 2}, cols[6] = {3, 0, 2, 2, 1, 3}, both[12];
  for (int i = 0; i < 6; i++) both[2 * i] = rows[i], both[2 * i + 1] = cols[i];
  optic_node_id idx = ev_const(ev_main, OPTIC_S64, 3, (int64_t[]){3, 2, 2}, both);
  optic_gather_dims d = {.n_collapsed = 2,
                         .collapsed_slice_dims = {0, 1},
                         .n_start_index_map = 2,
                         .start_index_map = {0, 1},
                         .index_vector_dim = 2,
                         .slice_sizes = {1, 1}};
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, idx, &d, NULL, &y));
  finish("take_along_axis", y);
}

/* scatter-add into a parameter: rows {1, 4, 1, 9}; row 9 is out of bounds,
 * so scatter skips it and its update's gradient is 0. */
static void test_scatter_add_rows(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){5, 3}),
                u = ev_param(ev_main, 1, OPTIC_F64, 2, (int64_t[]){4, 3}), y;
  optic_node_id idx = s32_const(1, (int64_t[]){4}, (int32_t[]){1, 4, 1, 9});
  optic_scatter_dims d = {.n_update_window_dims = 1,
                          .update_window_dims = {1},
                          .n_inserted = 1,
                          .inserted_window_dims = {0},
                          .n_scatter_dims_to_operand_dims = 1,
                          .scatter_dims_to_operand_dims = {0},
                          .index_vector_dim = 1};
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, idx, u, &d, add, NULL, &y));
  finish("scatter rows", y);
}

/* 2x2 windows at 2-D starts (0,1), (2,3) and (3,4): the last lies partly
 * outside [4, 5] and is skipped. */
static void test_scatter_add_windows(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, (int64_t[]){4, 5}),
                u = ev_param(ev_main, 1, OPTIC_F64, 3, (int64_t[]){3, 2, 2}), y;
  optic_node_id idx = s32_const(2, (int64_t[]){3, 2}, (int32_t[]){0, 1, 2, 3, 3, 4});
  optic_scatter_dims d = {.n_update_window_dims = 2,
                          .update_window_dims = {1, 2},
                          .n_scatter_dims_to_operand_dims = 2,
                          .scatter_dims_to_operand_dims = {0, 1},
                          .index_vector_dim = 1};
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, idx, u, &d, add, NULL, &y));
  finish("scatter windows", y);
}

/* Batching dims (XLA's operand_batching_dims / start_indices_batching_dims):
 * operand dim ob is indexed by the result's position along indices dim
 * ib. Each case: operand and indices shapes, the index data (values past
 * the ends are clamped). */
typedef struct batched_case {
  const char *what;
  int32_t xr, ir;
  int64_t xd[4], id[4];
  optic_gather_dims d;
} batched_case;

static const batched_case batched[] = {
    {"per-batch rows [3,5,4], indices [3,2]",
     3,
     2,
     {3, 5, 4},
     {3, 2},
     {.n_offset_dims = 1,
      .offset_dims = {2},
      .n_collapsed = 1,
      .collapsed_slice_dims = {1},
      .n_start_index_map = 1,
      .start_index_map = {1},
      .index_vector_dim = 2,
      .slice_sizes = {1, 1, 4},
      .n_batching = 1,
      .operand_batching_dims = {0},
      .start_indices_batching_dims = {0}}},
    {"take_along_axis [4,6], indices [4,3,1] (JAX's shape)",
     2,
     3,
     {4, 6},
     {4, 3, 1},
     {.n_collapsed = 1,
      .collapsed_slice_dims = {1},
      .n_start_index_map = 1,
      .start_index_map = {1},
      .index_vector_dim = 2,
      .slice_sizes = {1, 1},
      .n_batching = 1,
      .operand_batching_dims = {0},
      .start_indices_batching_dims = {0}}},
    {"batch dim last [5,2], indices [3,2]",
     2,
     2,
     {5, 2},
     {3, 2},
     {.n_collapsed = 1,
      .collapsed_slice_dims = {0},
      .n_start_index_map = 1,
      .start_index_map = {0},
      .index_vector_dim = 2,
      .slice_sizes = {1, 1},
      .n_batching = 1,
      .operand_batching_dims = {1},
      .start_indices_batching_dims = {1}}},
    {"two batch dims paired crosswise, index vector first [2,3,6,4], indices [2,3,2]",
     4,
     3,
     {2, 3, 6, 4},
     {2, 3, 2},
     {.n_offset_dims = 2,
      .offset_dims = {2, 3},
      .n_start_index_map = 2,
      .start_index_map = {2, 3},
      .index_vector_dim = 0,
      .slice_sizes = {1, 1, 2, 3},
      .n_batching = 2,
      .operand_batching_dims = {0, 1},
      .start_indices_batching_dims = {2, 1}}},
    {"empty batch [0,5], indices [0,2]",
     2,
     2,
     {0, 5},
     {0, 2},
     {.n_collapsed = 1,
      .collapsed_slice_dims = {1},
      .n_start_index_map = 1,
      .start_index_map = {1},
      .index_vector_dim = 2,
      .slice_sizes = {0, 1},
      .n_batching = 1,
      .operand_batching_dims = {0},
      .start_indices_batching_dims = {0}}},
};

static void test_batching_dims(void) {
  for (size_t i = 0; i < sizeof batched / sizeof batched[0]; i++) {
    const batched_case *b = &batched[i];
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, b->xr, b->xd), y;
    int64_t n = 1;
    for (int32_t d = 0; d < b->ir; d++) n *= b->id[d];
    int32_t data[64];
    for (int64_t k = 0; k < n; k++) data[k] = (int32_t)((k * 5 + 2) % 9) - 1; /* -1 .. 7: some clamped */
    optic_node_id idx = s32_const(b->ir, b->id, data);
    OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, idx, &b->d, NULL, &y));
    finish(b->what, y);
  }
}

static const ot_case cases[] = {
    {"batching_dims", test_batching_dims},
    {"scatter_add_rows", test_scatter_add_rows},
    {"scatter_add_windows", test_scatter_add_windows},
    {"embedding_lookup", test_embedding_lookup},
    {"windows", test_windows},
    {"take_along_axis", test_take_along_axis},
};
OT_MAIN(cases)
