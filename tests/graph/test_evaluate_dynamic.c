/* dynamic-slice, dynamic-update-slice, opt-barrier and bitcast in the
 * evaluator: hand-computed windows including XLA's start clamping (negative
 * and too-large starts, unsigned index dtypes, the older rank-1 index form),
 * shape-inference errors, XLA's byte counts, and HLO text round trips
 * (a bitcast between layouts is a transpose of the logical values). */
#include "tests/graph/evaluate_util.h"

static const int64_t D45[2] = {4, 5};

/* x = iota-like s32[4,5] (value 5 * row + col); dynamic-slice at (a, b). */
static bool slice_case(int32_t a, int32_t b, const int64_t *sizes, const int32_t *want) {
  ev_fresh();
  int32_t xv[20];
  for (int i = 0; i < 20; i++) xv[i] = i;
  optic_node_id x = ev_const(ev_main, OPTIC_S32, 2, D45, xv);
  optic_node_id s0 = ev_const(ev_main, OPTIC_S32, 0, NULL, &a), s1 = ev_const(ev_main, OPTIC_S32, 0, NULL, &b), r;
  optic_node_id st[2] = {s0, s1};
  OT_EXPECT_OK(optic_graph_dynamic_slice(ev_m, ev_main, x, st, 2, sizes, NULL, &r));
  ev_root(ev_main, r);
  return ev_check(ev_main, NULL, 0, OPTIC_S32, 2, sizes, want);
}

static void dynamic_slice_clamps(void) {
  const int64_t w22[2] = {2, 2}, w45[2] = {4, 5}, w03[2] = {0, 3};
  OT_CHECK(slice_case(1, 2, w22, (const int32_t[]){7, 8, 12, 13}), "in range");
  OT_CHECK(slice_case(5, -3, w22, (const int32_t[]){10, 11, 15, 16}), "(5, -3) clamps to (2, 0)");
  OT_CHECK(slice_case(INT32_MAX, INT32_MIN, w22, (const int32_t[]){10, 11, 15, 16}), "extremes clamp");
  int32_t all[20];
  for (int i = 0; i < 20; i++) all[i] = i;
  OT_CHECK(slice_case(3, 3, w45, all), "full window: starts clamp to 0");
  OT_CHECK(slice_case(1, 1, w03, NULL), "empty window");
  /* The older form: one s32[2] index array; and a u8 index (unsigned). */
  ev_fresh();
  int32_t xv[20];
  for (int i = 0; i < 20; i++) xv[i] = i;
  const int32_t iv[2] = {-1, 4};
  const int64_t two = 2;
  optic_node_id x = ev_const(ev_main, OPTIC_S32, 2, D45, xv), idx = ev_const(ev_main, OPTIC_S32, 1, &two, iv), r;
  OT_EXPECT_OK(optic_graph_dynamic_slice(ev_m, ev_main, x, &idx, 1, w22, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, w22, (const int32_t[]){3, 4, 8, 9}), "vector index (-1, 4)");
  ev_fresh();
  const uint8_t u200 = 200, u1 = 1;
  x = ev_const(ev_main, OPTIC_S32, 2, D45, xv);
  optic_node_id st[2] = {ev_const(ev_main, OPTIC_U8, 0, NULL, &u200), ev_const(ev_main, OPTIC_U8, 0, NULL, &u1)};
  OT_EXPECT_OK(optic_graph_dynamic_slice(ev_m, ev_main, x, st, 2, w22, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, w22, (const int32_t[]){11, 12, 16, 17}), "u8 200 is not -56");
}

static void dynamic_update_slice_clamps(void) {
  const int64_t w22[2] = {2, 2};
  const int32_t starts[][2] = {{1, 1}, {3, 4}, {-2, -9}};
  const int32_t want[][20] = {
      {0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 3, 4}, /* (3, 4) clamps to (2, 3) */
      {1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, /* negative: 0 */
  };
  for (int k = 0; k < 3; k++) {
    ev_fresh();
    const int32_t upd[4] = {1, 2, 3, 4}, zeros[20] = {0};
    optic_node_id x = ev_const(ev_main, OPTIC_S32, 2, D45, zeros), u = ev_const(ev_main, OPTIC_S32, 2, w22, upd);
    optic_node_id st[2] = {ev_const(ev_main, OPTIC_S32, 0, NULL, &starts[k][0]),
                           ev_const(ev_main, OPTIC_S32, 0, NULL, &starts[k][1])};
    optic_node_id r;
    OT_EXPECT_OK(optic_graph_dynamic_update_slice(ev_m, ev_main, x, u, st, 2, NULL, &r));
    ev_root(ev_main, r);
    OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, D45, want[k]), "update at (%d, %d)", starts[k][0], starts[k][1]);
  }
}

static void shape_errors_and_cost(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, D45), f = ev_param(ev_main, 1, OPTIC_F32, 0, NULL);
  optic_node_id i = ev_param(ev_main, 2, OPTIC_S32, 0, NULL), b = ev_param(ev_main, 3, OPTIC_U8, 0, NULL), r;
  const int64_t w22[2] = {2, 2}, w62[2] = {6, 2};
  optic_node_id ii[2] = {i, i}, fi[2] = {f, i}, mixed[2] = {i, b};
  OT_EXPECT_STATUS(optic_graph_dynamic_slice(ev_m, ev_main, x, ii, 2, w62, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "slice size 6 of dim 0") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_graph_dynamic_slice(ev_m, ev_main, x, ii, 1, w22, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_dynamic_slice(ev_m, ev_main, x, fi, 2, w22, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "an integer is needed") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_graph_dynamic_slice(ev_m, ev_main, x, mixed, 2, w22, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  optic_node_id big = ev_param(ev_main, 4, OPTIC_F32, 2, w62), small = ev_param(ev_main, 5, OPTIC_S32, 2, w22);
  OT_EXPECT_STATUS(optic_graph_dynamic_update_slice(ev_m, ev_main, x, big, ii, 2, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_dynamic_update_slice(ev_m, ev_main, x, small, ii, 2, NULL, &r),
                   OPTIC_ERR_SHAPE_MISMATCH);
  /* XLA: dynamic-slice bytes = 2 x window + operand 1; dynamic-update-slice
   * = 2 x update + operand 2 (the operand is updated in place). */
  optic_cost c;
  OT_EXPECT_OK(optic_graph_dynamic_slice(ev_m, ev_main, x, ii, 2, w22, NULL, &r));
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 0 && c.bytes_accessed == 2 * 16 + 4, "dynamic-slice bytes %g", c.bytes_accessed);
  optic_node_id u = ev_param(ev_main, 6, OPTIC_F32, 2, w22);
  OT_EXPECT_OK(optic_graph_dynamic_update_slice(ev_m, ev_main, x, u, ii, 2, NULL, &r));
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 0 && c.bytes_accessed == 2 * 16 + 4, "dynamic-update-slice bytes %g", c.bytes_accessed);
  OT_EXPECT_OK(optic_graph_bitcast(ev_m, ev_main, x, &(optic_shape){.rank = 1, .dims = {20}}, NULL, &r));
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.bytes_accessed == 0, "bitcast bytes %g (XLA: 0)", c.bytes_accessed);
  OT_EXPECT_STATUS(optic_graph_bitcast(ev_m, ev_main, x, &(optic_shape){.rank = 1, .dims = {21}}, NULL, &r),
                   OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_OK(optic_graph_opt_barrier(ev_m, ev_main, x, NULL, &r));
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.bytes_accessed == 160, "opt-barrier bytes %g (XLA: in + out)", c.bytes_accessed);
}

static const char *const TEXT =
    "HloModule dyn\n\n"
    "ENTRY e {\n"
    "  p = f32[2,3]{1,0} parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  t = f32[3,2]{0,1} bitcast(p)\n"
    "  c = f32[3,2]{1,0} copy(t)\n"
    "  ds = f32[2,2]{1,0} dynamic-slice(c, i, i), dynamic_slice_sizes={2,2}\n"
    "  z = f32[] constant(0)\n"
    "  dus = f32[3,2]{1,0} dynamic-update-slice(c, ds, i, i)\n"
    "  tu = (f32[2,2]{1,0}, f32[3,2]{1,0}) tuple(ds, dus)\n"
    "  ROOT ob = (f32[2,2]{1,0}, f32[3,2]{1,0}) opt-barrier(tu)\n"
    "}\n";

static void hlo_text_and_layout_bitcast(void) {
  optic_module_t *m = NULL;
  char *t1 = ev_print_round_trip(TEXT, &m);
  if (m == NULL) return;
  OT_CHECK(t1 && strstr(t1, "dynamic_slice_sizes={2,2}") && strstr(t1, "opt-barrier("), "%s", t1);
  /* p = [[1,2,3],[4,5,6]] stored row-major; t = the same bytes read with
   * dim 0 minor: t[i][j] = p[j][i], so c = [[1,4],[2,5],[3,6]]. With i = 7
   * the 2x2 window clamps to (1, 0): [[2,5],[3,6]]; writing it back at the
   * same clamped place leaves c unchanged. */
  const float pv[6] = {1, 2, 3, 4, 5, 6};
  const int32_t iv = 7;
  const int64_t d23[2] = {2, 3};
  optic_literal_t *args[2] = {ev_lit(OPTIC_F32, 2, d23, pv), ev_lit(OPTIC_S32, 0, NULL, &iv)};
  optic_literal_t *got = NULL;
  OT_EXPECT_OK(optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)args, 2, NULL, &got));
  if (got) {
    const float *ds = optic_literal_data(optic_literal_element(got, 0), NULL);
    const float *dus = optic_literal_data(optic_literal_element(got, 1), NULL);
    const float wds[4] = {2, 5, 3, 6}, wdus[6] = {1, 4, 2, 5, 3, 6};
    OT_CHECK(memcmp(ds, wds, sizeof wds) == 0, "ds = %g %g %g %g", ds[0], ds[1], ds[2], ds[3]);
    OT_CHECK(memcmp(dus, wdus, sizeof wdus) == 0, "dus = %g %g %g %g %g %g", dus[0], dus[1], dus[2], dus[3], dus[4],
             dus[5]);
  }
  optic_literal_destroy(got);
  optic_literal_destroy(args[0]);
  optic_literal_destroy(args[1]);
  optic_string_free(t1);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"dynamic_slice_clamps", dynamic_slice_clamps},
    {"dynamic_update_slice_clamps", dynamic_update_slice_clamps},
    {"shape_errors_and_cost", shape_errors_and_cost},
    {"hlo_text_and_layout_bitcast", hlo_text_and_layout_bitcast},
};
OT_MAIN(cases)
