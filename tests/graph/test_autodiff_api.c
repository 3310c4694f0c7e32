/* optic_autodiff_value_and_grad's contract: the computation it builds
 * (parameters, seed, result tuple, name), zeros for parameters without a
 * path, inlined calls, and errors that leave the module untouched. */
#include "tests/graph/autodiff_util.h"

static void expect_message(const char *needle) {
  OT_CHECK(strstr(optic_last_error(), needle) != NULL, "message '%s' lacks '%s'", optic_last_error(), needle);
}

/* The new computation: the parameters, then the tuple (value, grads). */
static void test_shape_of_result(void) {
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F32, 1, (int64_t[]){3}), n = ev_param(ev_main, 1, OPTIC_S32, 0, NULL),
                b = ev_param(ev_main, 2, OPTIC_F32, 1, (int64_t[]){3}), y;
  (void)n, (void)b;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, a, a, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  o.name = "my_grad";
  optic_comp_id g;
  int32_t before = optic_module_computation_count(ev_m);
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){2, 0}, 2, &o, &g));
  OT_CHECK(strcmp(optic_computation_name(ev_m, g), "my_grad") == 0);
  OT_CHECK(optic_module_entry(ev_m) == ev_main, "the entry stays");
  OT_CHECK(optic_module_computation_count(ev_m) > before);
  OT_CHECK(optic_computation_parameter_count(ev_m, g) == 4, "3 parameters + seed");
  const optic_type *rt = optic_node_type(ev_m, optic_computation_root(ev_m, g));
  OT_CHECK(rt->tuple_size == 3);
  /* b does not reach the output: zeros; a: 2 a seed */
  optic_literal_t *av = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){1, 2, 3});
  optic_literal_t *nv = ev_lit(OPTIC_S32, 0, NULL, (int32_t[]){7});
  optic_literal_t *bv = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){5, 5, 5});
  optic_literal_t *sv = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){1, 10, 100});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){av, nv, bv, sv}, 4);
  if (r != NULL) {
    optic_literal_t *zeros = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, NULL);
    optic_literal_t *ga = ev_lit(OPTIC_F32, 1, (int64_t[]){3}, (float[]){2, 40, 600});
    OT_CHECK(ev_same(zeros, optic_literal_element(r, 1), OPTIC_MATCH_BITWISE), "d/db");
    OT_CHECK(ev_same(ga, optic_literal_element(r, 2), OPTIC_MATCH_BITWISE), "d/da");
    optic_literal_destroy(zeros);
    optic_literal_destroy(ga);
  }
  optic_literal_destroy(r);
  optic_literal_destroy(av);
  optic_literal_destroy(nv);
  optic_literal_destroy(bv);
  optic_literal_destroy(sv);
  /* the default name, taken twice */
  optic_comp_id g1, g2;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g1),
                   OPTIC_ERR_INVALID_ARGUMENT); /* "my_grad" exists */
  o.name = NULL;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g1));
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g2));
  OT_CHECK(strcmp(optic_computation_name(ev_m, g1), "main.value_and_grad") == 0, "%s",
           optic_computation_name(ev_m, g1));
  OT_CHECK(strcmp(optic_computation_name(ev_m, g2), "main.value_and_grad.1") == 0, "%s",
           optic_computation_name(ev_m, g2));
}

static void test_bad_arguments(void) {
  ev_fresh();
  optic_node_id a = ev_param(ev_main, 0, OPTIC_F32, 1, (int64_t[]){3}), i = ev_param(ev_main, 1, OPTIC_S32, 0, NULL), y;
  (void)i;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_EXPONENTIAL, a, NULL, &y));
  ev_root(ev_main, y);
  optic_comp_id g;
  int32_t before = optic_module_computation_count(ev_m);
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, NULL, &g),
                   OPTIC_ERR_INVALID_ARGUMENT);
  expect_message("not a scalar");
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){1}, 1, &o, &g), OPTIC_ERR_INVALID_ARGUMENT);
  expect_message("not a floating-point array");
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0, 0}, 2, &o, &g),
                   OPTIC_ERR_INVALID_ARGUMENT);
  expect_message("listed twice");
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){5}, 1, &o, &g), OPTIC_ERR_INVALID_ARGUMENT);
  expect_message("no parameter 5");
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, 99, (int32_t[]){0}, 1, &o, &g), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(NULL, 0, NULL, 0, &o, &g), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, NULL, 0, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_module_computation_count(ev_m) == before, "nothing added on error");
}

/* A while loop on the path: UNSUPPORTED naming it, and nothing added. */
static void test_while_is_unsupported(void) {
  ev_fresh();
  optic_shape s = {1, {2}};
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_comp_id cond = ev_comp("cond"), body = ev_comp("body");
  optic_node_id cp = ev_param_type(cond, 0, &t), f, p;
  OT_EXPECT_OK(optic_graph_constant(ev_m, cond, OPTIC_PRED, &(optic_shape){0}, &(uint8_t){0}, 1, NULL, &f));
  (void)cp;
  ev_root(cond, f);
  optic_node_id bp = ev_param_type(body, 0, &t), bb;
  OT_EXPECT_OK(optic_graph_binary(ev_m, body, OPTIC_OP_MULTIPLY, bp, bp, NULL, &bb));
  ev_root(body, bb);
  p = ev_param_type(ev_main, 0, &t);
  optic_node_id w, y;
  OT_EXPECT_OK(optic_graph_while(ev_m, ev_main, p, cond, body, "loop", &w));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, w, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g;
  int32_t before = optic_module_computation_count(ev_m);
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g), OPTIC_ERR_UNSUPPORTED);
  expect_message("while 'loop'");
  OT_CHECK(optic_module_computation_count(ev_m) == before, "nothing added on error");
}

/* A call and a fusion on the path are inlined and differentiated. */
static void test_call_is_inlined(void) {
  ev_fresh();
  optic_comp_id sq = ev_comp("square");
  optic_node_id q = ev_param(sq, 0, OPTIC_F64, 1, (int64_t[]){4}), qq;
  OT_EXPECT_OK(optic_graph_unary(ev_m, sq, OPTIC_OP_SINE, q, NULL, &qq));
  OT_EXPECT_OK(optic_graph_binary(ev_m, sq, OPTIC_OP_MULTIPLY, qq, q, NULL, &qq));
  ev_root(sq, qq);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, (int64_t[]){4}), c1, c2;
  OT_EXPECT_OK(optic_graph_call(ev_m, ev_main, sq, &x, 1, NULL, &c1));
  OT_EXPECT_OK(optic_graph_fusion(ev_m, ev_main, OPTIC_FUSION_LOOP, &c1, 1, sq, NULL, &c2));
  ev_root(ev_main, c2);
  OT_CHECK(adf_check("call+fusion", ev_main, -1, 1, 1e-6));
}

/* Output need not be the root; a parameter as the output. */
static void test_output_choice(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 0, NULL), e, y;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_EXPONENTIAL, x, NULL, &e));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_NEGATE, e, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  o.output = e;
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g));
  optic_literal_t *xv = ev_lit(OPTIC_F32, 0, NULL, (float[]){1});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){xv}, 1);
  if (r) {
    float v = *(const float *)optic_literal_data(optic_literal_element(r, 1), NULL);
    OT_CHECK(fabsf(v - 2.7182817f) < 1e-6f, "d exp(x) / dx at 1 = %g", (double)v);
  }
  optic_literal_destroy(r);
  o.output = x; /* d x / d x = 1 */
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g));
  r = ev_run(g, (const optic_literal_t *const[]){xv}, 1);
  if (r) OT_CHECK(*(const float *)optic_literal_data(optic_literal_element(r, 1), NULL) == 1.0f);
  optic_literal_destroy(r);
  optic_literal_destroy(xv);
}

/* A fori_loop: state (i, x, w), body x = tanh(x w) + x, i = i + 1, while
 * i < bound (start 1): unrolled and differentiated w.r.t. x and w, for
 * 0, 1 and 4 iterations. */
static void test_counted_loop_is_unrolled(void) {
  for (int32_t bound = 1; bound <= 5; bound += (bound == 1 ? 1 : 3)) {
    ev_fresh();
    optic_shape vs = {1, {3}}, ss = {0};
    optic_type el[3] = {optic_type_array(OPTIC_S32, &ss), optic_type_array(OPTIC_F64, &vs),
                        optic_type_array(OPTIC_F64, &vs)};
    optic_type st = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 3, .elements = el};
    optic_comp_id cond = ev_comp("cond"), body = ev_comp("body");
    optic_node_id cp = ev_param_type(cond, 0, &st), ci, cb, cr;
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, cond, cp, 0, NULL, &ci));
    OT_EXPECT_OK(optic_graph_constant(ev_m, cond, OPTIC_S32, &ss, &bound, 4, NULL, &cb));
    OT_EXPECT_OK(optic_graph_compare(ev_m, cond, OPTIC_CMP_LT, ci, cb, NULL, &cr));
    ev_root(cond, cr);
    optic_node_id bp = ev_param_type(body, 0, &st), i, x, w, one, t, r;
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, body, bp, 0, NULL, &i));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, body, bp, 1, NULL, &x));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, body, bp, 2, NULL, &w));
    OT_EXPECT_OK(optic_graph_constant(ev_m, body, OPTIC_S32, &ss, &(int32_t){1}, 4, NULL, &one));
    OT_EXPECT_OK(optic_graph_binary(ev_m, body, OPTIC_OP_ADD, i, one, NULL, &i));
    OT_EXPECT_OK(optic_graph_binary(ev_m, body, OPTIC_OP_MULTIPLY, x, w, NULL, &t));
    OT_EXPECT_OK(optic_graph_unary(ev_m, body, OPTIC_OP_TANH, t, NULL, &t));
    OT_EXPECT_OK(optic_graph_binary(ev_m, body, OPTIC_OP_ADD, t, x, NULL, &t));
    OT_EXPECT_OK(optic_graph_tuple(ev_m, body, (optic_node_id[]){i, t, w}, 3, NULL, &r));
    ev_root(body, r);
    optic_node_id x0 = ev_param(ev_main, 0, OPTIC_F64, 1, (int64_t[]){3}),
                  w0 = ev_param(ev_main, 1, OPTIC_F64, 1, (int64_t[]){3});
    optic_node_id start, init, loop, y;
    OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_S32, &ss, &(int32_t){1}, 4, NULL, &start));
    OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, (optic_node_id[]){start, x0, w0}, 3, NULL, &init));
    OT_EXPECT_OK(optic_graph_while(ev_m, ev_main, init, cond, body, NULL, &loop));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, loop, 1, NULL, &y));
    ev_root(ev_main, y);
    OT_CHECK(adf_check("counted loop", ev_main, -1, 1, 1e-6), "bound %d", (int)bound);
  }
}

/* Second order: the gradient computation is ordinary, so it can itself be
 * differentiated. d/dx of (d/dx sum(tanh(x w)^2)) seeded: a Hessian-vector
 * product, checked by finite differences of the first gradient. */
static void test_second_order(void) {
  ev_fresh();
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F64);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, (int64_t[]){5}),
                w = ev_param(ev_main, 1, OPTIC_F64, 1, (int64_t[]){5}), t, s, zero;
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, x, w, NULL, &t));
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, t, NULL, &t));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, t, t, NULL, &t));
  OT_EXPECT_OK(optic_graph_constant(ev_m, ev_main, OPTIC_F64, &(optic_shape){0}, &(double){0}, 8, NULL, &zero));
  OT_EXPECT_OK(optic_graph_reduce(ev_m, ev_main, &t, &zero, 1, (int64_t[]){0}, 1, add, NULL, &s));
  ev_root(ev_main, s);
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, NULL, &g));
  optic_node_id root = optic_computation_root(ev_m, g);
  OT_EXPECT_OK(optic_computation_set_root(ev_m, g, optic_node_operand(ev_m, root, 1))); /* g(x, w) = df/dx */
  OT_CHECK(adf_check("second order", g, -1, 1, 1e-6));
}

/* stop_gradient: y = x exp(x) has dy/dx = exp(x) (1 + x); with exp(x)
 * stopped (a constant to the gradient) it is exp(x). Bad lists fail. */
static float stop_case_grad(const optic_grad_options *o, float x) {
  optic_comp_id g;
  float v = -1.0f;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, o, &g));
  optic_literal_t *xv = ev_lit(OPTIC_F32, 0, NULL, (float[]){x});
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const[]){xv}, 1);
  if (r) v = *(const float *)optic_literal_data(optic_literal_element(r, 1), NULL);
  optic_literal_destroy(r);
  optic_literal_destroy(xv);
  return v;
}

static void test_stop_gradient(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 0, NULL), e, y;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_EXPONENTIAL, x, NULL, &e));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, x, e, NULL, &y));
  ev_root(ev_main, y);
  optic_grad_options o = optic_grad_options_default();
  const float ex = expf(1.0f);
  float full = stop_case_grad(&o, 1.0f);
  OT_CHECK(fabsf(full - 2.0f * ex) < 1e-5f, "d x e^x / dx at 1 = %g, want %g", (double)full, 2.0 * ex);
  o.stop_gradient = &e, o.n_stop_gradient = 1;
  float stopped = stop_case_grad(&o, 1.0f);
  OT_CHECK(fabsf(stopped - ex) < 1e-6f, "with e^x stopped: %g, want %g", (double)stopped, (double)ex);
  o.stop_gradient = &y; /* the output itself stopped: nothing flows */
  float none = stop_case_grad(&o, 1.0f);
  OT_CHECK(none == 0.0f, "with the output stopped: %g, want 0", (double)none);
  optic_comp_id g, other = ev_binary_comp("other_add", OPTIC_OP_ADD, OPTIC_F32);
  optic_node_id bad[2] = {e, e}, foreign = optic_computation_root(ev_m, other), missing = 1000000;
  const optic_node_id *lists[3] = {bad, &foreign, &missing};
  const int32_t counts[3] = {2, 1, 1};
  for (int i = 0; i < 3; i++) {
    o.stop_gradient = lists[i], o.n_stop_gradient = counts[i];
    OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g),
                     OPTIC_ERR_INVALID_ARGUMENT);
    expect_message("stop_gradient");
  }
  o.stop_gradient = NULL, o.n_stop_gradient = 1;
  OT_EXPECT_STATUS(optic_autodiff_value_and_grad(ev_m, ev_main, (int32_t[]){0}, 1, &o, &g), OPTIC_ERR_INVALID_ARGUMENT);
  expect_message("stop_gradient");
}

static const ot_case cases[] = {
    {"second_order", test_second_order},
    {"counted_loop_is_unrolled", test_counted_loop_is_unrolled},
    {"shape_of_result", test_shape_of_result},
    {"bad_arguments", test_bad_arguments},
    {"while_is_unsupported", test_while_is_unsupported},
    {"call_is_inlined", test_call_is_inlined},
    {"output_choice", test_output_choice},
    {"stop_gradient", test_stop_gradient},
};
OT_MAIN(cases)
