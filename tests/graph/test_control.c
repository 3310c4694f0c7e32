/* Graph builder, control flow and multi-core ops: while, conditional,
 * fusion, all-reduce, reduce-window: inferred types, errors with messages,
 * and their HLO text. */
#include <optic/optic.h>

#include "tests/harness.h"

static optic_type scalar_type(optic_dtype dt) { return optic_type_array(dt, &(optic_shape){.rank = 0}); }

static bool msg_has(const char *needle) {
  if (strstr(optic_last_error(), needle)) return true;
  fprintf(stderr, "  message '%s' lacks '%s'\n", optic_last_error(), needle);
  return false;
}

/* A computation of one scalar parameter of `in` returning op(p) or p itself. */
static optic_comp_id unary_comp(optic_module_t *m, const char *name, optic_dtype in, int kind) {
  optic_comp_id c;
  optic_node_id p, r = OPTIC_NO_NODE, k;
  optic_type t = scalar_type(in);
  float limit = 10;
  if (optic_module_add_computation(m, name, &c) || optic_graph_parameter(m, c, 0, &t, NULL, &p)) exit(2);
  if (kind == 0) {
    r = p;                /* identity */
  } else if (kind == 1) { /* p < 10 */
    if (optic_graph_constant(m, c, OPTIC_F32, &t.shape, &limit, 4, NULL, &k) ||
        optic_graph_compare(m, c, OPTIC_CMP_LT, p, k, NULL, &r))
      exit(2);
  } else if (kind == 2) {
    if (optic_graph_unary(m, c, OPTIC_OP_NEGATE, p, NULL, &r)) exit(2);
  }
  if (optic_computation_set_root(m, c, r)) exit(2);
  return c;
}

static optic_comp_id adder(optic_module_t *m, const char *name) {
  optic_comp_id c;
  optic_node_id x, y, r;
  optic_type t = scalar_type(OPTIC_F32);
  if (optic_module_add_computation(m, name, &c) || optic_graph_parameter(m, c, 0, &t, NULL, &x) ||
      optic_graph_parameter(m, c, 1, &t, NULL, &y) || optic_graph_binary(m, c, OPTIC_OP_ADD, x, y, NULL, &r) ||
      optic_computation_set_root(m, c, r))
    exit(2);
  return c;
}

static void while_loop(void) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_create("w", &m));
  optic_comp_id cond = unary_comp(m, "cond", OPTIC_F32, 1), body = unary_comp(m, "body", OPTIC_F32, 2);
  optic_comp_id ident = unary_comp(m, "ident", OPTIC_F32, 0);
  optic_comp_id main;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  optic_type t = scalar_type(OPTIC_F32), ts = scalar_type(OPTIC_S32);
  optic_node_id p, q, w, x;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &t, "p", &p));
  OT_EXPECT_OK(optic_graph_parameter(m, main, 1, &ts, "q", &q));
  OT_EXPECT_OK(optic_graph_while(m, main, p, cond, body, "w", &w));
  OT_CHECK(optic_node_called_count(m, w) == 2 && optic_node_called(m, w, 0) == cond &&
           optic_node_called(m, w, 1) == body);
  OT_EXPECT_STATUS(optic_graph_while(m, main, p, ident, body, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("condition 'ident' returns f32[], not pred[]"));
  OT_EXPECT_STATUS(optic_graph_while(m, main, q, cond, body, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("parameter 0 of 'cond' has type f32[] but s32[] is passed"));
  OT_EXPECT_OK(optic_computation_set_root(m, main, w));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text, "ROOT w = f32[] while(p), condition=cond, body=body\n"), "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

static void conditional(void) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_create("c", &m));
  optic_comp_id neg = unary_comp(m, "neg", OPTIC_F32, 2), ident = unary_comp(m, "ident", OPTIC_F32, 0);
  optic_comp_id cmp = unary_comp(m, "cmp", OPTIC_F32, 1);
  optic_comp_id main;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  optic_type tf = scalar_type(OPTIC_F32), tp = scalar_type(OPTIC_PRED), ti = scalar_type(OPTIC_S32);
  optic_node_id x, pr, ix, c, bad;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &tf, "x", &x));
  OT_EXPECT_OK(optic_graph_parameter(m, main, 1, &tp, "pr", &pr));
  OT_EXPECT_OK(optic_graph_parameter(m, main, 2, &ti, "ix", &ix));
  optic_node_id ops2[] = {x, x}, ops3[] = {x, x, x};
  optic_comp_id br2[] = {neg, ident}, br3[] = {neg, ident, neg}, mixed[] = {neg, cmp};
  OT_EXPECT_OK(optic_graph_conditional(m, main, pr, ops2, br2, 2, "c2", &c));
  OT_EXPECT_OK(optic_graph_conditional(m, main, ix, ops3, br3, 3, "c3", &c));
  OT_EXPECT_STATUS(optic_graph_conditional(m, main, pr, ops3, br3, 3, NULL, &bad), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_conditional(m, main, ix, ops2, mixed, 2, NULL, &bad), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("branch 1 returns pred[] but branch 0 returns f32[]"));
  OT_EXPECT_STATUS(optic_graph_conditional(m, main, x, ops2, br2, 2, NULL, &bad), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_OK(optic_computation_set_root(m, main, c));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text, "c2 = f32[] conditional(pr, x, x), true_computation=neg, false_computation=ident\n") &&
               strstr(text, "ROOT c3 = f32[] conditional(ix, x, x, x), branch_computations={neg, ident, neg}\n"),
           "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

static void fusion_and_all_reduce(void) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_create("f", &m));
  optic_comp_id fused = unary_comp(m, "fused", OPTIC_F32, 2), add = adder(m, "add");
  optic_comp_id main;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  optic_type tf = scalar_type(OPTIC_F32), ti = scalar_type(OPTIC_S32);
  optic_node_id x, i, f, ar, bad;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &tf, "x", &x));
  OT_EXPECT_OK(optic_graph_parameter(m, main, 1, &ti, "i", &i));
  OT_EXPECT_OK(optic_graph_fusion(m, main, OPTIC_FUSION_LOOP, &x, 1, fused, "f", &f));
  OT_EXPECT_STATUS(optic_graph_fusion(m, main, OPTIC_FUSION_LOOP, &i, 1, fused, NULL, &bad), OPTIC_ERR_SHAPE_MISMATCH);
  int32_t ids[] = {0, 1, 2, 3}, sizes[] = {2, 2};
  OT_EXPECT_OK(optic_graph_all_reduce(m, main, &f, 1, add, ids, sizes, 2, "ar", &ar));
  int32_t dup[] = {0, 1, 1, 3};
  OT_EXPECT_STATUS(optic_graph_all_reduce(m, main, &f, 1, add, dup, sizes, 2, NULL, &bad), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("replica id 1"));
  OT_EXPECT_STATUS(optic_graph_all_reduce(m, main, &i, 1, add, NULL, NULL, 0, NULL, &bad), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_OK(optic_computation_set_root(m, main, ar));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text, "f = f32[] fusion(x), kind=kLoop, calls=fused\n") &&
               strstr(text, "ROOT ar = f32[] all-reduce(f), replica_groups={{0,1},{2,3}}, to_apply=add\n"),
           "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

static void reduce_window(void) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_create("rw", &m));
  optic_comp_id add = adder(m, "add");
  optic_comp_id main;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  optic_shape s = {.rank = 2, .dims = {4, 6}};
  optic_type t = optic_type_array(OPTIC_F32, &s), tz = scalar_type(OPTIC_F32);
  optic_node_id x, z, r, bad;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &t, "x", &x));
  OT_EXPECT_OK(optic_graph_parameter(m, main, 1, &tz, "z", &z));
  /* dim 0: size 2 stride 2 -> 2; dim 1: size 3, pad 1_1, window dilation 2 (span 5), base dilation 2
   * (11 wide + 2 = 13) stride 3 -> (13 - 5) / 3 + 1 = 3 */
  optic_window_dim w[2] = {
      {.size = 2, .stride = 2, .base_dilation = 1, .window_dilation = 1},
      {.size = 3, .stride = 3, .pad_low = 1, .pad_high = 1, .base_dilation = 2, .window_dilation = 2}};
  OT_EXPECT_OK(optic_graph_reduce_window(m, main, &x, &z, 1, w, add, "r", &r));
  char buf[64];
  optic_type_format(optic_node_type(m, r), buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[2,3]") == 0, "got %s", buf);
  optic_window_dim zero_stride[2] = {{.size = 2, .stride = 0, .base_dilation = 1, .window_dilation = 1}, w[1]};
  OT_EXPECT_STATUS(optic_graph_reduce_window(m, main, &x, &z, 1, zero_stride, add, NULL, &bad),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("window dim 0"));
  OT_EXPECT_OK(optic_computation_set_root(m, main, r));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text, "window={size=2x3 stride=2x3 pad=0_0x1_1 lhs_dilate=1x2 rhs_dilate=1x2}, to_apply=add"),
           "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"while_loop", while_loop},
    {"conditional", conditional},
    {"fusion_and_all_reduce", fusion_and_all_reduce},
    {"reduce_window", reduce_window},
};
OT_MAIN(cases)
