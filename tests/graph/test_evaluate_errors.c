/* Evaluator errors: wrong argument count and types, NULLs, a computation
 * without a root, bad options, a while that exceeds its cap (also deep
 * inside other computations, with live intermediates: ASan checks nothing
 * leaks), recursion through calls, and single-instruction misuse. Each
 * failure leaves *result NULL and a message naming what failed. */
#include "tests/graph/evaluate_util.h"

static bool message_has(const char *what) {
  if (strstr(optic_last_error(), what) != NULL) return true;
  fprintf(stderr, "  message '%s' lacks '%s'\n", optic_last_error(), what);
  return false;
}

static void arguments(void) {
  ev_fresh();
  int64_t d2[] = {2}, d3[] = {3};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d2), y = ev_param(ev_main, 1, OPTIC_S32, 0, NULL), t;
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){x, y}, 2, NULL, &t));
  ev_root(ev_main, t);
  int32_t one = 1;
  optic_literal_t *a = ev_lit(OPTIC_F32, 1, d2, NULL), *b = ev_lit(OPTIC_S32, 0, NULL, &one);
  optic_literal_t *wrong = ev_lit(OPTIC_F32, 1, d3, NULL), *r = (optic_literal_t *)&r;
  const optic_literal_t *good[] = {a, b}, *bad_type[] = {wrong, b}, *bad_dtype[] = {a, a}, *null_arg[] = {a, NULL};
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, good, 1, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(r == NULL && message_has("takes 2 arguments, 1 given"));
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, bad_type, 2, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(message_has("argument 0 of main has type f32[3] but f32[2] is expected"));
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, bad_dtype, 2, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(message_has("argument 1 of main has type f32[2] but s32[] is expected"));
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, null_arg, 2, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, NULL, 2, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, good, 2, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_evaluate(ev_m, 42, good, 2, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_evaluate(NULL, ev_main, good, 2, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  /* A tuple argument is checked element by element. */
  optic_literal_t *tl;
  OT_EXPECT_OK(optic_literal_create_tuple(good, 2, &tl));
  const optic_literal_t *tuple_arg[] = {tl, b};
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, tuple_arg, 2, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(message_has("has type (f32[2], s32[]) but f32[2] is expected"));
  OT_EXPECT_OK(optic_evaluate(ev_m, ev_main, good, 2, NULL, &r));
  optic_literal_destroy(r);
  optic_literal_t *ls[] = {a, b, wrong, tl};
  for (int i = 0; i < 4; i++) optic_literal_destroy(ls[i]);
}

static void rootless_and_options(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 0, NULL);
  float v = 1;
  optic_literal_t *a = ev_lit(OPTIC_F32, 0, NULL, &v), *r = (optic_literal_t *)&r;
  const optic_literal_t *args[] = {a};
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, args, 1, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(r == NULL && message_has("computation 'main' has no root"));
  ev_root(ev_main, x);
  optic_evaluate_options o = optic_evaluate_options_default();
  OT_CHECK(o.size == sizeof o && o.max_while_iterations == 1000000);
  o.size = 0;
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, args, 1, &o, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(message_has("options.size is 0"));
  o = optic_evaluate_options_default();
  o.max_while_iterations = -1;
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, args, 1, &o, &r), OPTIC_ERR_INVALID_ARGUMENT);
  /* An older, shorter options struct keeps the defaults for what it lacks. */
  o = optic_evaluate_options_default();
  o.size = sizeof(size_t);
  OT_EXPECT_OK(optic_evaluate(ev_m, ev_main, args, 1, &o, &r));
  optic_literal_destroy(r);
  optic_literal_destroy(a);
}

/* A while that never ends (x == x on s32) over x + 1, inside a call, next
 * to live intermediates. */
static void while_cap(void) {
  ev_fresh();
  optic_comp_id cond = ev_comp("forever"), body = ev_comp("inc"), inner = ev_comp("inner");
  optic_node_id cx = ev_param(cond, 0, OPTIC_S32, 0, NULL), eq;
  OT_EXPECT_OK(optic_graph_compare(ev_m, cond, OPTIC_CMP_EQ, cx, cx, NULL, &eq));
  ev_root(cond, eq);
  optic_node_id bx = ev_param(body, 0, OPTIC_S32, 0, NULL), inc;
  int32_t one = 1;
  OT_EXPECT_OK(optic_graph_binary(ev_m, body, OPTIC_OP_ADD, bx, ev_const(body, OPTIC_S32, 0, NULL, &one), NULL, &inc));
  ev_root(body, inc);
  optic_node_id ix = ev_param(inner, 0, OPTIC_S32, 0, NULL), w, t;
  OT_EXPECT_OK(optic_graph_while(ev_m, inner, ix, cond, body, NULL, &w));
  ev_root(inner, w);
  int64_t d64[] = {64};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_S32, 0, NULL), big, c;
  optic_shape s64 = ev_shape(1, d64);
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_F32, &s64, 0, NULL, &big));
  OT_EXPECT_OK(optic_graph_call(ev_m, ev_main, inner, &x, 1, NULL, &c));
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){big, c}, 2, NULL, &t));
  ev_root(ev_main, t);
  int32_t zero = 0;
  optic_literal_t *a = ev_lit(OPTIC_S32, 0, NULL, &zero), *r = (optic_literal_t *)&r;
  const optic_literal_t *args[] = {a};
  optic_evaluate_options o = optic_evaluate_options_default();
  o.max_while_iterations = 100;
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, args, 1, &o, &r), OPTIC_ERR_TIMEOUT);
  OT_CHECK(r == NULL);
  /* Named once, where it failed: the while in 'inner', not the call. */
  OT_CHECK(message_has("evaluate: while") && message_has("in computation 'inner'") &&
           message_has("condition 'forever' is still true after 100 iterations of body 'inc'"));
  OT_CHECK(strstr(optic_last_error(), "call") == NULL, "%s", optic_last_error());
  /* A cap of 0 fails as soon as the condition first holds. */
  o.max_while_iterations = 0;
  OT_EXPECT_STATUS(optic_evaluate(ev_m, ev_main, args, 1, &o, &r), OPTIC_ERR_TIMEOUT);
  optic_literal_destroy(a);
}

static void recursion(void) {
  /* a(x) = b(x), b(y) = a(y): built by re-rooting a after b exists. */
  ev_fresh();
  optic_comp_id a = ev_comp("a"), b = ev_comp("b");
  optic_node_id ax = ev_param(a, 0, OPTIC_F32, 0, NULL), an, by, bc, ac;
  OT_EXPECT_OK(optic_graph_unary(ev_m, a, OPTIC_OP_NEGATE, ax, NULL, &an));
  ev_root(a, an);
  by = ev_param(b, 0, OPTIC_F32, 0, NULL);
  OT_EXPECT_OK(optic_graph_call(ev_m, b, a, &by, 1, NULL, &bc));
  ev_root(b, bc);
  OT_EXPECT_OK(optic_graph_call(ev_m, a, b, &ax, 1, NULL, &ac));
  ev_root(a, ac);
  float v = 1;
  optic_literal_t *lv = ev_lit(OPTIC_F32, 0, NULL, &v), *r = (optic_literal_t *)&r;
  const optic_literal_t *args[] = {lv};
  OT_EXPECT_STATUS(optic_evaluate(ev_m, a, args, 1, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(r == NULL && message_has("computation 'a' calls itself"));
  optic_literal_destroy(lv);
}

static void single_instruction_misuse(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 0, NULL), n;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_NEGATE, x, NULL, &n));
  optic_literal_t *r = (optic_literal_t *)&r;
  OT_EXPECT_STATUS(optic_evaluate_node(ev_m, x, NULL, 0, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(r == NULL && message_has("parameter: has no value outside its computation"));
  OT_EXPECT_STATUS(optic_evaluate_node(ev_m, n, NULL, 0, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(message_has("has 1 operands, 0 values given"));
  int32_t i = 3;
  optic_literal_t *li = ev_lit(OPTIC_S32, 0, NULL, &i);
  const optic_literal_t *ops[] = {li};
  OT_EXPECT_STATUS(optic_evaluate_node(ev_m, n, ops, 1, NULL, &r), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(message_has("operand 0 of negate"));
  OT_EXPECT_STATUS(optic_evaluate_node(ev_m, 999, NULL, 0, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  optic_literal_destroy(li);
}

static const ot_case cases[] = {
    {"arguments", arguments}, {"rootless_and_options", rootless_and_options},           {"while_cap", while_cap},
    {"recursion", recursion}, {"single_instruction_misuse", single_instruction_misuse},
};
OT_MAIN(cases)
