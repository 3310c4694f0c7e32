/* sort in the evaluator against hand-sorted results: one operand, keys
 * with values (argsort; equal keys keep their order: optic's sort is
 * stable), descending along dim 0, a two-key comparator, shape errors,
 * XLA's count (n ceil(log2 n) flops) and the HLO text form; topk in XLA's
 * float total order. */
#include <math.h>

#include "tests/graph/evaluate_util.h"

/* comparator(p0, p1, ...) = compare(p[2 * key], p[2 * key + 1]), dir, over n operands of dtypes. */
static optic_comp_id cmp_comp(const char *name, int32_t n, const optic_dtype *dts, int32_t key, optic_compare_dir dir) {
  optic_comp_id c = ev_comp(name);
  optic_node_id p[8], r;
  for (int32_t i = 0; i < 2 * n; i++) p[i] = ev_param(c, i, dts[i / 2], 0, NULL);
  if (optic_graph_compare(ev_m, c, dir, p[2 * key], p[2 * key + 1], NULL, &r)) ev_die("compare");
  ev_root(c, r);
  return c;
}

static void sort_cases(void) {
  ev_fresh();
  const optic_dtype f = OPTIC_F32;
  optic_comp_id lt = cmp_comp("lt", 1, &f, 0, OPTIC_CMP_LT);
  const int64_t six = 6;
  optic_node_id x = ev_const(ev_main, OPTIC_F32, 1, &six, (const float[]){3, 1, 2, -5, 0, 1}), r;
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, &x, 1, 0, false, lt, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_F32, 1, &six, (const float[]){-5, 0, 1, 1, 2, 3}), "ascending");
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 18 && c.bytes_accessed == 48, "sort cost %g flops, %g bytes (XLA: 6 * 3, 24 + 24)", c.flops,
           c.bytes_accessed);
  /* argsort: keys and positions, equal keys in their original order */
  ev_fresh();
  const optic_dtype ss[2] = {OPTIC_S32, OPTIC_S32};
  lt = cmp_comp("lt", 2, ss, 0, OPTIC_CMP_LT);
  const int64_t d25[2] = {2, 5};
  optic_node_id k = ev_const(ev_main, OPTIC_S32, 2, d25, (const int32_t[]){2, 1, 2, 1, 0, 9, 8, 7, 8, 9});
  optic_node_id v = ev_const(ev_main, OPTIC_S32, 2, d25, (const int32_t[]){0, 1, 2, 3, 4, 0, 1, 2, 3, 4});
  optic_node_id kv[2] = {k, v};
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, kv, 2, 1, true, lt, NULL, &r));
  optic_node_id pos;
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, r, 1, NULL, &pos));
  ev_root(ev_main, pos);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 2, d25, (const int32_t[]){4, 1, 3, 0, 2, 2, 1, 3, 0, 4}), "argsort");
  OT_EXPECT_OK(optic_node_cost(ev_m, r, &c));
  OT_CHECK(c.flops == 40 && c.bytes_accessed == 16 + 80, "argsort cost %g flops, %g bytes", c.flops, c.bytes_accessed);
  /* descending along dim 0 of [3,2] */
  ev_fresh();
  optic_comp_id gt = cmp_comp("gt", 1, &f, 0, OPTIC_CMP_GT);
  const int64_t d32[2] = {3, 2};
  x = ev_const(ev_main, OPTIC_F32, 2, d32, (const float[]){1, 6, 3, 4, 2, 5});
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, &x, 1, 0, false, gt, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_F32, 2, d32, (const float[]){3, 6, 2, 5, 1, 4}), "descending, dim 0");
  /* sorted by operand 1 only: operand 0 follows */
  ev_fresh();
  optic_comp_id by1 = cmp_comp("by1", 2, ss, 1, OPTIC_CMP_LT);
  const int64_t four = 4;
  k = ev_const(ev_main, OPTIC_S32, 1, &four, (const int32_t[]){10, 20, 30, 40});
  v = ev_const(ev_main, OPTIC_S32, 1, &four, (const int32_t[]){3, 0, 2, 1});
  kv[0] = k, kv[1] = v;
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, kv, 2, 0, true, by1, NULL, &r));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, r, 0, NULL, &pos));
  ev_root(ev_main, pos);
  OT_CHECK(ev_check(ev_main, NULL, 0, OPTIC_S32, 1, &four, (const int32_t[]){20, 40, 30, 10}), "by operand 1");
}

static void shape_errors(void) {
  ev_fresh();
  const optic_dtype f = OPTIC_F32;
  optic_comp_id lt = cmp_comp("lt", 1, &f, 0, OPTIC_CMP_LT);
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  const int64_t four = 4, five = 5;
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, &four), y = ev_param(ev_main, 1, OPTIC_F32, 1, &five), r;
  OT_EXPECT_STATUS(optic_graph_sort(ev_m, ev_main, &x, 1, 0, false, add, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_sort(ev_m, ev_main, &x, 1, 1, false, lt, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  optic_node_id xy[2] = {x, y};
  OT_EXPECT_STATUS(optic_graph_sort(ev_m, ev_main, xy, 2, 0, false, lt, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_sort(ev_m, ev_main, xy, 0, 0, false, lt, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
}

static const char *const TEXT =
    "HloModule s\n\n"
    "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT\n}\n\n"
    "ENTRY e {\n  x = f32[4,8] parameter(0)\n  i = s32[4,8] iota(), iota_dimension=1\n"
    "  ROOT s = (f32[4,8], s32[4,8]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp\n}\n";

static void hlo_text(void) {
  optic_module_t *m = NULL;
  char *t1 = ev_print_round_trip(TEXT, &m);
  OT_CHECK(t1 && strstr(t1, "dimensions={1}, is_stable=true, to_apply=cmp"), "%s", t1 ? t1 : "");
  optic_string_free(t1);
  optic_module_destroy(m);
}

/* topk: XLA's total order (NaN above +inf, -0 below +0), ties by lower
 * index; the values and the s32 indices of the first k. */
static void topk_cases(void) {
  const float x[8] = {1.0f, NAN, 3.0f, -0.0f, 0.0f, INFINITY, 3.0f, -NAN};
  const int64_t eight = 8, four = 4;
  const struct {
    bool largest;
    float v[4];
    int32_t i[4];
  } want[2] = {{true, {NAN, INFINITY, 3.0f, 3.0f}, {1, 5, 2, 6}}, {false, {-NAN, -0.0f, 0.0f, 1.0f}, {7, 3, 4, 0}}};
  for (int c = 0; c < 2; c++) {
    ev_fresh();
    optic_node_id p = ev_const(ev_main, OPTIC_F32, 1, &eight, x), r, v, i;
    OT_EXPECT_OK(optic_graph_topk(ev_m, ev_main, p, 4, want[c].largest, NULL, &r));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, r, 0, NULL, &v));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, r, 1, NULL, &i));
    optic_node_id both[2] = {v, i}, t;
    OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, both, 2, NULL, &t));
    ev_root(ev_main, t);
    optic_literal_t *got = ev_run(ev_main, NULL, 0);
    OT_CHECK(got != NULL);
    if (got == NULL) continue;
    const float *gv = optic_literal_data(optic_literal_element(got, 0), NULL);
    const int32_t *gi = optic_literal_data(optic_literal_element(got, 1), NULL);
    for (int k = 0; k < 4; k++) {
      OT_CHECK(memcmp(&gv[k], &want[c].v[k], 4) == 0 && gi[k] == want[c].i[k],
               "largest=%d #%d: %g at %d, want %g at %d", (int)want[c].largest, k, (double)gv[k], gi[k],
               (double)want[c].v[k], want[c].i[k]);
    }
    optic_literal_destroy(got);
    optic_cost cost;
    OT_EXPECT_OK(optic_node_cost(ev_m, r, &cost));
    OT_CHECK(cost.flops == 0 && cost.bytes_accessed == 32 + 16, "topk cost %g %g (XLA: default bytes)", cost.flops,
             cost.bytes_accessed);
  }
  ev_fresh();
  optic_node_id p = ev_param(ev_main, 0, OPTIC_F32, 1, &four), r;
  OT_EXPECT_STATUS(optic_graph_topk(ev_m, ev_main, p, 5, true, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  static const char *const text =
      "HloModule t\nENTRY e {\n  x = f32[2,9] parameter(0)\n"
      "  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true\n}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  char *t1 = NULL;
  if (m) OT_EXPECT_OK(optic_module_to_hlo_text(m, &t1));
  OT_CHECK(t1 && strstr(t1, "topk(x), k=3, largest=true"), "%s", t1 ? t1 : "");
  optic_string_free(t1);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"sort_cases", sort_cases}, {"shape_errors", shape_errors}, {"hlo_text", hlo_text}, {"topk_cases", topk_cases}};
OT_MAIN(cases)
