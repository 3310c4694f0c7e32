/* gather and scatter in the evaluator against hand-computed results: row
 * lookups with clamped indices (negative and past the end), 2-D windows,
 * index_vector_dim equal to the indices' rank (scalar indices), scatter-add
 * with duplicate and out-of-range indices (XLA skips a window that does not
 * fit), assignment order for duplicates, batching dims (take_along_axis),
 * shape errors, XLA's counts, and the HLO text form. */
#include "tests/graph/evaluate_util.h"

static const int64_t D53[2] = {5, 3};

static optic_node_id table53(void) {
  int32_t v[15];
  for (int r = 0; r < 5; r++) {
    for (int c = 0; c < 3; c++) v[r * 3 + c] = 10 * r + c;
  }
  return ev_const(ev_main, OPTIC_S32, 2, D53, v);
}

static optic_gather_dims gdims(int64_t ivd, int32_t no, const int64_t *off, int32_t nc, const int64_t *col, int32_t nm,
                               const int64_t *map, const int64_t *sizes, int32_t r) {
  optic_gather_dims g;
  memset(&g, 0, sizeof g);
  g.index_vector_dim = ivd;
  g.n_offset_dims = no, g.n_collapsed = nc, g.n_start_index_map = nm;
  for (int32_t i = 0; i < no; i++) g.offset_dims[i] = off[i];
  for (int32_t i = 0; i < nc; i++) g.collapsed_slice_dims[i] = col[i];
  for (int32_t i = 0; i < nm; i++) g.start_index_map[i] = map[i];
  for (int32_t i = 0; i < r; i++) g.slice_sizes[i] = sizes[i];
  return g;
}

static void gather_cases(void) {
  /* rows 0, 4, -1 -> 0, 7 -> 4 (the last start that fits) */
  ev_fresh();
  const int32_t rows[4] = {0, 4, -1, 7};
  const int64_t four = 4, d43[2] = {4, 3};
  optic_node_id x = table53(), i = ev_const(ev_main, OPTIC_S32, 1, &four, rows), r;
  optic_gather_dims g =
      gdims(1, 1, (const int64_t[]){1}, 1, (const int64_t[]){0}, 1, (const int64_t[]){0}, (const int64_t[]){1, 3}, 2);
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, i, &g, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, d43, (const int32_t[]){0, 1, 2, 40, 41, 42, 0, 1, 2, 40, 41, 42}),
           "row lookup with clamping");
  /* 2x2 windows at (1,1) and (4,2) -> clamped to (3,1) */
  ev_fresh();
  const int32_t st[4] = {1, 1, 4, 2};
  const int64_t d22[2] = {2, 2}, d222[3] = {2, 2, 2};
  x = table53(), i = ev_const(ev_main, OPTIC_S32, 2, d22, st);
  g = gdims(1, 2, (const int64_t[]){1, 2}, 0, NULL, 2, (const int64_t[]){0, 1}, (const int64_t[]){2, 2}, 2);
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, i, &g, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 3, d222, (const int32_t[]){11, 12, 21, 22, 31, 32, 41, 42}),
           "2-D windows");
  /* take along columns: index_vector_dim == rank of the indices (scalars); out[r][b] = x[r][idx[b]] */
  ev_fresh();
  const int32_t cols[3] = {2, 0, 2};
  const int64_t three = 3, d53[2] = {5, 3};
  x = table53(), i = ev_const(ev_main, OPTIC_S32, 1, &three, cols);
  g = gdims(1, 1, (const int64_t[]){0}, 1, (const int64_t[]){1}, 1, (const int64_t[]){1}, (const int64_t[]){5, 1}, 2);
  OT_EXPECT_OK(optic_graph_gather(ev_m, ev_main, x, i, &g, NULL, &r));
  ev_root(ev_main, r);
  int32_t want[15];
  for (int rr = 0; rr < 5; rr++) {
    for (int b = 0; b < 3; b++) want[rr * 3 + b] = 10 * rr + cols[b];
  }
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, d53, want), "scalar indices along dim 1");
  /* XLA: bytes = 2 x result + indices. */
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 0 && c.bytes_accessed == 2 * 60 + 12, "gather bytes %g", c.bytes_accessed);
}

static optic_scatter_dims sdims(int64_t ivd, int32_t nw, const int64_t *win, int32_t ni, const int64_t *ins, int32_t nm,
                                const int64_t *map) {
  optic_scatter_dims g;
  memset(&g, 0, sizeof g);
  g.index_vector_dim = ivd;
  g.n_update_window_dims = nw, g.n_inserted = ni, g.n_scatter_dims_to_operand_dims = nm;
  for (int32_t i = 0; i < nw; i++) g.update_window_dims[i] = win[i];
  for (int32_t i = 0; i < ni; i++) g.inserted_window_dims[i] = ins[i];
  for (int32_t i = 0; i < nm; i++) g.scatter_dims_to_operand_dims[i] = map[i];
  return g;
}

static optic_comp_id assign_comp(void) {
  optic_comp_id c = ev_comp("assign");
  ev_param(c, 0, OPTIC_S32, 0, NULL);
  ev_root(c, ev_param(c, 1, OPTIC_S32, 0, NULL));
  return c;
}

static void scatter_cases(void) {
  /* add, with a duplicate (index 1 twice) and an index past the end (skipped) */
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_S32);
  const int32_t ones[5] = {1, 1, 1, 1, 1}, idx[4] = {1, 3, 1, 9}, upd[4] = {10, 20, 30, 40};
  const int64_t five = 5, d41[2] = {4, 1}, four = 4;
  optic_node_id x = ev_const(ev_main, OPTIC_S32, 1, &five, ones), i = ev_const(ev_main, OPTIC_S32, 2, d41, idx);
  optic_node_id u = ev_const(ev_main, OPTIC_S32, 1, &four, upd), r;
  optic_scatter_dims g = sdims(1, 0, NULL, 1, (const int64_t[]){0}, 1, (const int64_t[]){0});
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, i, u, &g, add, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 1, &five, (const int32_t[]){1, 41, 1, 21, 1}), "scatter-add");
  /* XLA: bytes = 3 x updates + indices; flops = to_apply's x update elements. */
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 4 && c.bytes_accessed == 3 * 16 + 16, "scatter cost %g flops %g bytes", c.flops,
           c.bytes_accessed);
  /* assignment: the later duplicate wins */
  ev_fresh();
  optic_comp_id asg = assign_comp();
  x = ev_const(ev_main, OPTIC_S32, 1, &five, ones);
  i = ev_const(ev_main, OPTIC_S32, 2, d41, (const int32_t[]){1, 1, 4, -1});
  u = ev_const(ev_main, OPTIC_S32, 1, &four, (const int32_t[]){5, 7, 9, 11});
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, i, u, &g, asg, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 1, &five, (const int32_t[]){1, 7, 1, 1, 9}), "assign, in order");
  /* row windows of [3,4]: rows 2 and 0 get updated; row 3 and -1 do not fit */
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_S32);
  const int64_t d34[2] = {3, 4}, d44[2] = {4, 4};
  int32_t zeros[12] = {0}, uv[16];
  for (int k = 0; k < 16; k++) uv[k] = k + 1;
  x = ev_const(ev_main, OPTIC_S32, 2, d34, zeros);
  i = ev_const(ev_main, OPTIC_S32, 1, &four, (const int32_t[]){2, 3, 0, -1});
  u = ev_const(ev_main, OPTIC_S32, 2, d44, uv);
  g = sdims(1, 1, (const int64_t[]){1}, 1, (const int64_t[]){0}, 1, (const int64_t[]){0});
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, i, u, &g, add, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, d34, (const int32_t[]){9, 10, 11, 12, 0, 0, 0, 0, 1, 2, 3, 4}),
           "row windows");
  /* a 2-row window starting at row 2 of 3 does not fit: skipped whole */
  ev_fresh();
  add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_S32);
  const int64_t d124[3] = {1, 2, 4}, one = 1;
  x = ev_const(ev_main, OPTIC_S32, 2, d34, zeros);
  i = ev_const(ev_main, OPTIC_S32, 1, &one, (const int32_t[]){2});
  u = ev_const(ev_main, OPTIC_S32, 3, d124, uv);
  g = sdims(1, 2, (const int64_t[]){1, 2}, 0, NULL, 1, (const int64_t[]){0});
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, i, u, &g, add, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, d34, zeros), "partial window skipped");
}

static void shape_errors(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  const int64_t d53[2] = {5, 3}, four = 4, d41[2] = {4, 1};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, d53), fi = ev_param(ev_main, 1, OPTIC_F32, 1, &four);
  optic_node_id ii = ev_param(ev_main, 2, OPTIC_S32, 2, d41), r;
  optic_gather_dims g =
      gdims(1, 1, (const int64_t[]){1}, 1, (const int64_t[]){0}, 1, (const int64_t[]){0}, (const int64_t[]){1, 3}, 2);
  OT_EXPECT_STATUS(optic_graph_gather(ev_m, ev_main, x, fi, &g, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "an integer is needed") != NULL, "%s", optic_last_error());
  g.slice_sizes[1] = 4;
  OT_EXPECT_STATUS(optic_graph_gather(ev_m, ev_main, x, ii, &g, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "slice_sizes[1] = 4") != NULL, "%s", optic_last_error());
  g.slice_sizes[1] = 3, g.slice_sizes[0] = 2;
  OT_EXPECT_STATUS(optic_graph_gather(ev_m, ev_main, x, ii, &g, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "collapsed dim 0") != NULL, "%s", optic_last_error());
  g.slice_sizes[0] = 1, g.n_start_index_map = 2, g.start_index_map[1] = 1;
  OT_EXPECT_STATUS(optic_graph_gather(ev_m, ev_main, x, ii, &g, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "index vector has 1 entries") != NULL, "%s", optic_last_error());
  optic_node_id u = ev_param(ev_main, 3, OPTIC_F32, 2, d41);
  optic_scatter_dims s = sdims(1, 1, (const int64_t[]){1}, 1, (const int64_t[]){0}, 1, (const int64_t[]){0});
  OT_EXPECT_STATUS(optic_graph_scatter(ev_m, ev_main, x, ii, ii, &s, add, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_OK(optic_graph_scatter(ev_m, ev_main, x, ii, u, &s, add, NULL, &r));
  s.n_inserted = 0;
  OT_EXPECT_STATUS(optic_graph_scatter(ev_m, ev_main, x, ii, u, &s, add, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
}

static const char *const TEXT =
    "HloModule gs\n\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY e {\n"
    "  t = f32[6,4] parameter(0)\n"
    "  i = s32[3,1] parameter(1)\n"
    "  u = f32[3,4] parameter(2)\n"
    "  g = f32[3,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=false\n"
    "  s = f32[6,4] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "  ROOT r = (f32[3,4], f32[6,4]) tuple(g, s)\n"
    "}\n";

static void hlo_text(void) {
  optic_module_t *m = NULL;
  char *t1 = ev_print_round_trip(TEXT, &m);
  OT_CHECK(t1 && strstr(t1, "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"), "%s", t1 ? t1 : "");
  /* take_along_axis with batching dims: out[b][k] = t[b][i[b][k]] (5 clamps to 2) */
  static const char *const batching =
      "HloModule b\nENTRY e {\n  t = s32[2,3] parameter(0)\n  i = s32[2,2,1] parameter(1)\n"
      "  ROOT g = s32[2,2] gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
      "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}\n}\n";
  optic_module_t *mb = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(batching, strlen(batching), &mb));
  if (mb) {
    const int64_t d23[2] = {2, 3}, d221[3] = {2, 2, 1}, d22[2] = {2, 2};
    optic_literal_t *args[2] = {ev_lit(OPTIC_S32, 2, d23, (const int32_t[]){1, 2, 3, 4, 5, 6}),
                                ev_lit(OPTIC_S32, 3, d221, (const int32_t[]){2, 0, 1, 5})};
    optic_literal_t *got = NULL, *want = ev_lit(OPTIC_S32, 2, d22, (const int32_t[]){3, 1, 5, 6});
    OT_EXPECT_OK(optic_evaluate(mb, optic_module_entry(mb), (const optic_literal_t *const *)args, 2, NULL, &got));
    OT_CHECK(got && ev_same(want, got, OPTIC_MATCH_BITWISE), "batching dims");
    char *tb = NULL;
    OT_EXPECT_OK(optic_module_to_hlo_text(mb, &tb));
    OT_CHECK(tb && strstr(tb, "operand_batching_dims={0}, start_indices_batching_dims={0}"), "%s", tb ? tb : "");
    optic_string_free(tb);
    optic_literal_destroy(got);
    optic_literal_destroy(want);
    optic_literal_destroy(args[0]);
    optic_literal_destroy(args[1]);
    optic_module_destroy(mb);
  }
  optic_string_free(t1);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"gather_cases", gather_cases},
    {"scatter_cases", scatter_cases},
    {"shape_errors", shape_errors},
    {"hlo_text", hlo_text},
};
OT_MAIN(cases)
