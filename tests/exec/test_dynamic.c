/* The runtime against the evaluator for dynamic-slice, dynamic-update-slice,
 * opt-barrier and bitcast: operand shapes with 0, 1, 15, 16, 17 and 257
 * columns, windows from empty to full, starts negative, inside and far past
 * the end (XLA clamps them), at levels NONE and FULL on 1 and 2 threads
 * (2 threads split every step, so the dynamic-update-slice shares are
 * exercised), and a scan-like while loop that slices row i of its input. */
#include "tests/exec/exec_util.h"

static optic_module_t *build(int64_t rows, int64_t cols, int64_t h, int64_t w) {
  optic_module_t *m;
  optic_comp_id c;
  if (optic_module_create("dyn", &m) || optic_module_add_computation(m, "main", &c)) return NULL;
  optic_shape xs = {.rank = 2, .dims = {rows, cols}}, us = {.rank = 2, .dims = {h, w}}, ss = {.rank = 0};
  optic_type tx = optic_type_array(OPTIC_F32, &xs), tu = optic_type_array(OPTIC_F32, &us);
  optic_type ti = optic_type_array(OPTIC_S32, &ss);
  optic_node_id x = OPTIC_NO_NODE, u = x, a = x, b = x, ds = x, dus = x, neg = x, bc = x, t = x, ob = x;
  const int64_t sizes[2] = {h, w};
  optic_shape flat = {.rank = 1, .dims = {rows * cols}};
  bool ok = !optic_graph_parameter(m, c, 0, &tx, "x", &x) && !optic_graph_parameter(m, c, 1, &tu, "u", &u) &&
            !optic_graph_parameter(m, c, 2, &ti, "a", &a) && !optic_graph_parameter(m, c, 3, &ti, "b", &b);
  optic_node_id st[2] = {a, b};
  ok = ok && !optic_graph_dynamic_slice(m, c, x, st, 2, sizes, NULL, &ds) &&
       !optic_graph_unary(m, c, OPTIC_OP_NEGATE, u, NULL, &neg) &&
       !optic_graph_dynamic_update_slice(m, c, x, neg, st, 2, NULL, &dus) &&
       !optic_graph_bitcast(m, c, dus, &flat, NULL, &bc);
  optic_node_id parts[3] = {ds, dus, bc};
  ok = ok && !optic_graph_tuple(m, c, parts, 3, NULL, &t) && !optic_graph_opt_barrier(m, c, t, NULL, &ob) &&
       !optic_computation_set_root(m, c, ob);
  if (!ok) {
    fprintf(stderr, "  build: %s\n", optic_last_error());
    optic_module_destroy(m);
    return NULL;
  }
  return m;
}

static void shapes_and_starts(void) {
  static const int64_t shapes[][4] = {{0, 3, 0, 2},    {1, 1, 1, 1},      {3, 15, 2, 15}, {16, 16, 5, 7},
                                      {17, 17, 17, 0}, {40, 257, 9, 100}, {5, 16, 1, 1}};
  static const int32_t starts[][2] = {{0, 0}, {1, 2}, {-7, 3}, {1000, -1000}, {INT32_MAX, 4}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    const int64_t *sh = shapes[k];
    optic_module_t *m = build(sh[0], sh[1], sh[2], sh[3]);
    OT_CHECK(m != NULL);
    if (m == NULL) continue;
    optic_comp_id e = optic_module_entry(m);
    for (size_t q = 0; q < sizeof starts / sizeof starts[0]; q++) {
      optic_literal_t *args[4];
      ex_rng r = {k * 31 + q};
      for (int i = 0; i < 2; i++) {
        optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, i)), &args[i]);
        ex_fill(args[i], &r);
      }
      const optic_shape sc = {.rank = 0};
      optic_literal_create_array(OPTIC_S32, &sc, &starts[q][0], 4, &args[2]);
      optic_literal_create_array(OPTIC_S32, &sc, &starts[q][1], 4, &args[3]);
      optic_literal_t *want = NULL;
      OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)args, 4, NULL, &want));
      char label[96];
      snprintf(label, sizeof label, "x[%lld,%lld] window [%lld,%lld] at (%d,%d)", (long long)sh[0], (long long)sh[1],
               (long long)sh[2], (long long)sh[3], starts[q][0], starts[q][1]);
      for (int level = 0; want && level <= 2; level += 2) {
        for (int t = 1; t <= 2; t++) {
          if (!ex_run_compare(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, 4, want, 0, 0, t == 2,
                              label)) {
            printf("  reproduce: %s shapes_and_starts\n", ot_prog_);
          }
        }
      }
      optic_literal_destroy(want);
      for (int i = 0; i < 4; i++) optic_literal_destroy(args[i]);
    }
    optic_module_destroy(m);
  }
}

/* A scan: out[i] = 2 * x[i] row by row through dynamic-slice and
 * dynamic-update-slice inside a while loop (the shape of jax.lax.scan). */
static const char *const SCAN =
    "HloModule scan\n\n"
    "body {\n"
    "  s = (s32[], f32[7,33], f32[7,33]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[7,33] get-tuple-element(s), index=1\n"
    "  y = f32[7,33] get-tuple-element(s), index=2\n"
    "  z = s32[] constant(0)\n"
    "  row = f32[1,33] dynamic-slice(x, i, z), dynamic_slice_sizes={1,33}\n"
    "  two = f32[1,33] add(row, row)\n"
    "  y2 = f32[7,33] dynamic-update-slice(y, two, i, z)\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, x, y2)\n"
    "}\n\n"
    "cond {\n"
    "  s = (s32[], f32[7,33], f32[7,33]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(7)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n\n"
    "ENTRY e {\n"
    "  x = f32[7,33] parameter(0)\n"
    "  y0 = f32[7,33] parameter(1)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[7,33], f32[7,33]) tuple(z, x, y0)\n"
    "  w = (s32[], f32[7,33], f32[7,33]) while(t), condition=cond, body=body\n"
    "  ROOT out = f32[7,33] get-tuple-element(w), index=2\n"
    "}\n";

static void scan_loop(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(SCAN, strlen(SCAN), &m));
  if (m == NULL) return;
  OT_CHECK(ex_check_module(m, 3, 0, 0, "scan"), "scan");
  optic_module_destroy(m);
}

/* While bodies whose dynamic-update-slice may or may not update the loop
 * state in place (exec/bind.c): in place when the slice's operand is state
 * leaf l, its result root leaf l, and nothing reads the old leaf after it;
 * not when a later op reads the old leaf, another root leaf passes it
 * through, or the result goes to another leaf. Each against the evaluator,
 * levels NONE and FULL, 1 and 2 threads (every op split). */
static void scan_in_place_rules(void) {
  static const char *const bodies[] = {
      /* in place; the update is read from the same leaf before */
      "  row = f32[1,33] dynamic-slice(y, i, z), dynamic_slice_sizes={1,33}\n"
      "  two = f32[1,33] add(row, row)\n"
      "  y2 = f32[7,33] dynamic-update-slice(y, two, i, z)\n"
      "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, x, y2)\n",
      /* the old leaf is read after the update: a copy */
      "  row = f32[1,33] dynamic-slice(x, i, z), dynamic_slice_sizes={1,33}\n"
      "  y2 = f32[7,33] dynamic-update-slice(y, row, i, z)\n"
      "  x2 = f32[7,33] add(y, y2)\n"
      "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, x2, y2)\n",
      /* the old leaf is passed through to another leaf: a copy */
      "  row = f32[1,33] dynamic-slice(x, i, z), dynamic_slice_sizes={1,33}\n"
      "  y2 = f32[7,33] dynamic-update-slice(y, row, i, z)\n"
      "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, y, y2)\n",
      /* the result goes to the other leaf (the two leaves swap each step) */
      "  row = f32[1,33] dynamic-slice(x, i, z), dynamic_slice_sizes={1,33}\n"
      "  y2 = f32[7,33] dynamic-update-slice(y, row, i, z)\n"
      "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, y2, x)\n",
      /* two updates of the same leaf, the second over the first's result */
      "  row = f32[1,33] dynamic-slice(x, i, z), dynamic_slice_sizes={1,33}\n"
      "  y2 = f32[7,33] dynamic-update-slice(y, row, i, z)\n"
      "  neg = f32[1,33] negate(row)\n"
      "  y3 = f32[7,33] dynamic-update-slice(y2, neg, z, z)\n"
      "  ROOT t = (s32[], f32[7,33], f32[7,33]) tuple(i2, x, y3)\n",
  };
  for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
    char text[4096];
    snprintf(text, sizeof text,
             "HloModule scan_rules\n\n"
             "body {\n"
             "  s = (s32[], f32[7,33], f32[7,33]) parameter(0)\n"
             "  i = s32[] get-tuple-element(s), index=0\n"
             "  x = f32[7,33] get-tuple-element(s), index=1\n"
             "  y = f32[7,33] get-tuple-element(s), index=2\n"
             "  z = s32[] constant(0)\n"
             "  one = s32[] constant(1)\n"
             "  i2 = s32[] add(i, one)\n"
             "%s"
             "}\n\n"
             "cond {\n"
             "  s = (s32[], f32[7,33], f32[7,33]) parameter(0)\n"
             "  i = s32[] get-tuple-element(s), index=0\n"
             "  n = s32[] constant(7)\n"
             "  ROOT lt = pred[] compare(i, n), direction=LT\n"
             "}\n\n"
             "ENTRY e {\n"
             "  x = f32[7,33] parameter(0)\n"
             "  y0 = f32[7,33] parameter(1)\n"
             "  z = s32[] constant(0)\n"
             "  t = (s32[], f32[7,33], f32[7,33]) tuple(z, x, y0)\n"
             "  w = (s32[], f32[7,33], f32[7,33]) while(t), condition=cond, body=body\n"
             "  a = f32[7,33] get-tuple-element(w), index=1\n"
             "  b = f32[7,33] get-tuple-element(w), index=2\n"
             "  ROOT out = (f32[7,33], f32[7,33]) tuple(a, b)\n"
             "}\n",
             bodies[k]);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    char label[64];
    snprintf(label, sizeof label, "scan_in_place_rules body %zu", k);
    OT_CHECK(ex_check_module(m, 5 + k, 0, 0, label), "%s", label);
    optic_module_destroy(m);
  }
}

/* Embedding-style gather of rows and scatter-add / scatter-assign of rows,
 * with random indices in [-8, 8] (so some clamp or are skipped) and
 * duplicates, for several table and index counts. */
static void gather_scatter(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {6, 15, 4}, {9, 16, 17}, {5, 17, 16}, {12, 257, 40}, {4, 3, 0}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    long long R = shapes[k][0], C = shapes[k][1], K = shapes[k][2];
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule gs\n\n"
             "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
             "assign {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n\n"
             "ENTRY e {\n"
             "  t = f32[%lld,%lld] parameter(0)\n  i = s32[%lld] parameter(1)\n  u = f32[%lld,%lld] parameter(2)\n"
             "  g = f32[%lld,%lld] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
             "index_vector_dim=1, slice_sizes={1,%lld}\n"
             "  e = f32[%lld,%lld] exponential(g)\n"
             "  s = f32[%lld,%lld] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
             "  w = f32[%lld,%lld] scatter(t, i, e), update_window_dims={1}, inserted_window_dims={0}, "
             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign\n"
             "  ROOT r = (f32[%lld,%lld], f32[%lld,%lld], f32[%lld,%lld]) tuple(e, s, w)\n"
             "}\n",
             R, C, K, K, C, K, C, C, K, C, R, C, R, C, K, C, R, C, R, C);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    char label[64];
    snprintf(label, sizeof label, "table [%lld,%lld], %lld indices", R, C, K);
    OT_CHECK(ex_check_module(m, 11 + k, 1e-6, 1e-6, label), "%s", label);
    optic_module_destroy(m);
  }
}

/* sort of keys with positions (argsort, the comparator a block program), and
 * of f32 values alone (random values with ties), along rows of 0, 1, 15, 16,
 * 17 and 1000 elements; 2 threads split the rows. */
static void sort_rows(void) {
  static const int64_t shapes[][2] = {{3, 0}, {1, 1}, {4, 15}, {3, 16}, {5, 17}, {3, 1000}, {0, 4}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    long long R = shapes[k][0], C = shapes[k][1];
    char text[1536];
    snprintf(text, sizeof text,
             "HloModule s\n\n"
             "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
             "  d = s32[] parameter(3)\n  ROOT gt = pred[] compare(a, b), direction=GT\n}\n\n"
             "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT lt = pred[] compare(a, b), "
             "direction=LT\n}\n\n"
             "ENTRY e {\n  x = f32[%lld,%lld] parameter(0)\n  i = s32[%lld,%lld] iota(), iota_dimension=1\n"
             "  s = (f32[%lld,%lld], s32[%lld,%lld]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp\n"
             "  p = s32[%lld,%lld] get-tuple-element(s), index=1\n"
             "  n = f32[%lld,%lld] negate(x)\n"
             "  v = f32[%lld,%lld] sort(n), dimensions={1}, to_apply=lt\n"
             "  ROOT r = (s32[%lld,%lld], f32[%lld,%lld]) tuple(p, v)\n}\n",
             R, C, R, C, R, C, R, C, R, C, R, C, R, C, R, C, R, C);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    char label[64];
    snprintf(label, sizeof label, "sort rows of [%lld,%lld]", R, C);
    OT_CHECK(ex_check_module(m, 5 + k, 0, 0, label), "%s", label);
    optic_module_destroy(m);
  }
}

/* jax.numpy.take_along_axis: a gather with batching dims, after an argsort. */
static void take_along_axis(void) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 15}, {4, 16}, {2, 17}, {6, 40}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    long long B = shapes[k][0], N = shapes[k][1];
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY e {\n  t = f32[%lld,%lld] parameter(0)\n  i = s32[%lld,%lld,1] parameter(1)\n"
             "  ROOT g = f32[%lld,%lld] gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
             "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}\n}\n",
             B, N, B, N, B, N);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    OT_CHECK(ex_check_module(m, 21 + k, 0, 0, "take_along_axis"), "[%lld,%lld]", B, N);
    optic_module_destroy(m);
  }
}

/* topk along the last dim, rows split across threads; values with ties. */
static void topk_rows(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {3, 15, 4}, {2, 16, 16}, {5, 17, 0}, {2, 1000, 10}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    long long R = shapes[k][0], C = shapes[k][1], K = shapes[k][2];
    char text[512];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY e {\n  x = f32[%lld,%lld] parameter(0)\n"
             "  a = (f32[%lld,%lld], s32[%lld,%lld]) topk(x), k=%lld, largest=true\n"
             "  b = (f32[%lld,%lld], s32[%lld,%lld]) topk(x), k=%lld, largest=false\n"
             "  ROOT r = ((f32[%lld,%lld], s32[%lld,%lld]), (f32[%lld,%lld], s32[%lld,%lld])) tuple(a, b)\n}\n",
             R, C, R, K, R, K, K, R, K, R, K, K, R, K, R, K, R, K, R, K);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    OT_CHECK(ex_check_module(m, 31 + k, 0, 0, "topk"), "[%lld,%lld] k=%lld", R, C, K);
    optic_module_destroy(m);
  }
}

/* batch-norm-training, -inference and -grad over features along dim 1. */
static void batch_norm(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {4, 3, 5}, {2, 16, 17}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    long long A = shapes[k][0], F = shapes[k][1], B = shapes[k][2];
    char text[1536];
    snprintf(
        text, sizeof text,
        "HloModule bn\n\nENTRY e {\n  x = f32[%lld,%lld,%lld] parameter(0)\n  s = f32[%lld] parameter(1)\n"
        "  o = f32[%lld] parameter(2)\n  dy = f32[%lld,%lld,%lld] parameter(3)\n"
        "  t = (f32[%lld,%lld,%lld], f32[%lld], f32[%lld]) batch-norm-training(x, s, o), epsilon=0.5, feature_index=1\n"
        "  m = f32[%lld] get-tuple-element(t), index=1\n  v = f32[%lld] get-tuple-element(t), index=2\n"
        "  y = f32[%lld,%lld,%lld] batch-norm-inference(x, s, o, m, v), epsilon=0.5, feature_index=1\n"
        "  g = (f32[%lld,%lld,%lld], f32[%lld], f32[%lld]) batch-norm-grad(x, s, m, v, dy), epsilon=0.5, "
        "feature_index=1\n"
        "  ROOT r = ((f32[%lld,%lld,%lld], f32[%lld], f32[%lld]), f32[%lld,%lld,%lld], (f32[%lld,%lld,%lld], "
        "f32[%lld], f32[%lld])) tuple(t, y, g)\n}\n",
        A, F, B, F, F, A, F, B, A, F, B, F, F, F, F, A, F, B, A, F, B, F, F, A, F, B, F, F, A, F, B, A, F, B, F, F);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    OT_CHECK(ex_check_module(m, 41 + k, 0, 0, "batch norm"), "[%lld,%lld,%lld]", A, F, B);
    optic_module_destroy(m);
  }
}

static const ot_case cases[] = {
    {"shapes_and_starts", shapes_and_starts}, {"batch_norm", batch_norm}, {"topk_rows", topk_rows},
    {"take_along_axis", take_along_axis},     {"scan_loop", scan_loop},   {"scan_in_place_rules", scan_in_place_rules},
    {"gather_scatter", gather_scatter},       {"sort_rows", sort_rows}};
OT_MAIN(cases)
