/* batch-norm-training, -inference and -grad in the evaluator against
 * hand-computed values (statistics per feature, biased variance, XLA's
 * gradient formula), shape errors, XLA's byte count and the HLO text. */
#include "tests/graph/evaluate_util.h"

static optic_literal_t *eval_bn(optic_opcode op, int32_t n, const optic_literal_t *const *args) {
  ev_fresh();
  optic_node_id p[5], r;
  for (int32_t i = 0; i < n; i++) p[i] = ev_param_type(ev_main, i, optic_literal_type(args[i]));
  OT_EXPECT_OK(optic_graph_batch_norm(ev_m, ev_main, op, p, n, 3.0f, 1, NULL, &r));
  ev_root(ev_main, r);
  return ev_run(ev_main, args, n);
}

static bool near(const float *got, const double *want, int n) {
  for (int i = 0; i < n; i++) {
    if ((float)want[i] != got[i]) {
      fprintf(stderr, "  element %d: got %.9g, want %.9g\n", i, (double)got[i], want[i]);
      return false;
    }
  }
  return true;
}

/* x = [[0],[3],[6]] (feature dim 1 of size 1): mean 3, variance 6; with
 * epsilon 3, sigma = 3 and x_hat = (-1, 0, 1). */
static void hand_cases(void) {
  const int64_t d31[2] = {3, 1}, one = 1;
  optic_literal_t *x = ev_lit(OPTIC_F32, 2, d31, (const float[]){0, 3, 6});
  optic_literal_t *scale = ev_lit(OPTIC_F32, 1, &one, (const float[]){2});
  optic_literal_t *offset = ev_lit(OPTIC_F32, 1, &one, (const float[]){10});
  optic_literal_t *mean = ev_lit(OPTIC_F32, 1, &one, (const float[]){3});
  optic_literal_t *var = ev_lit(OPTIC_F32, 1, &one, (const float[]){6});
  optic_literal_t *dy = ev_lit(OPTIC_F32, 2, d31, (const float[]){1, 0, 0});
  const optic_literal_t *tr[3] = {x, scale, offset};
  optic_literal_t *t = eval_bn(OPTIC_OP_BATCH_NORM_TRAINING, 3, tr);
  OT_CHECK(t != NULL);
  if (t) {
    OT_CHECK(near(optic_literal_data(optic_literal_element(t, 0), NULL), (const double[]){8, 10, 12}, 3), "y");
    OT_CHECK(near(optic_literal_data(optic_literal_element(t, 1), NULL), (const double[]){3}, 1), "mean");
    OT_CHECK(near(optic_literal_data(optic_literal_element(t, 2), NULL), (const double[]){6}, 1), "biased variance");
  }
  optic_literal_destroy(t);
  const optic_literal_t *inf[5] = {x, scale, offset, mean, var};
  optic_literal_t *y = eval_bn(OPTIC_OP_BATCH_NORM_INFERENCE, 5, inf);
  OT_CHECK(y && near(optic_literal_data(y, NULL), (const double[]){8, 10, 12}, 3), "inference");
  optic_literal_destroy(y);
  /* grad: sum dy = 1, sum dy * x_hat = -1; grad_x = scale / (sigma N) (N dy - 1 + x_hat) */
  const optic_literal_t *gr[5] = {x, scale, mean, var, dy};
  optic_literal_t *g = eval_bn(OPTIC_OP_BATCH_NORM_GRAD, 5, gr);
  OT_CHECK(g != NULL);
  if (g) {
    OT_CHECK(
        near(optic_literal_data(optic_literal_element(g, 0), NULL), (const double[]){2.0 / 9.0, -2.0 / 9.0, 0.0}, 3),
        "grad_x");
    OT_CHECK(near(optic_literal_data(optic_literal_element(g, 1), NULL), (const double[]){-1}, 1), "grad_scale");
    OT_CHECK(near(optic_literal_data(optic_literal_element(g, 2), NULL), (const double[]){1}, 1), "grad_offset");
  }
  optic_literal_destroy(g);
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(ev_m, optic_computation_root(ev_m, ev_main), &c));
  OT_CHECK(c.flops == 0 && c.bytes_accessed == 24 + 12 + 4 + 4 + 4 + 12, "grad cost %g %g (XLA: default bytes)",
           c.flops, c.bytes_accessed);
  optic_literal_t *lits[6] = {x, scale, offset, mean, var, dy};
  for (int i = 0; i < 6; i++) optic_literal_destroy(lits[i]);
}

static void shape_errors_and_text(void) {
  ev_fresh();
  const int64_t d84[2] = {8, 4}, three = 3, four = 4;
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, d84), s3 = ev_param(ev_main, 1, OPTIC_F32, 1, &three);
  optic_node_id s4 = ev_param(ev_main, 2, OPTIC_F32, 1, &four), xi = ev_param(ev_main, 3, OPTIC_S32, 2, d84), r;
  optic_node_id bad[3] = {x, s3, s4}, ints[3] = {xi, s4, s4}, ok[3] = {x, s4, s4};
  OT_EXPECT_STATUS(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_TRAINING, bad, 3, 1e-3f, 1, NULL, &r),
                   OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "f32[4] is needed") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_TRAINING, ints, 3, 1e-3f, 1, NULL, &r),
                   OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_TRAINING, ok, 3, 1e-3f, 2, NULL, &r),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_batch_norm(ev_m, ev_main, OPTIC_OP_BATCH_NORM_GRAD, ok, 3, 1e-3f, 1, NULL, &r),
                   OPTIC_ERR_INVALID_ARGUMENT);
  static const char *const text =
      "HloModule bn\nENTRY e {\n  x = f32[8,4] parameter(0)\n  s = f32[4] parameter(1)\n  o = f32[4] parameter(2)\n"
      "  ROOT t = (f32[8,4], f32[4], f32[4]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  char *t1 = NULL;
  if (m) OT_EXPECT_OK(optic_module_to_hlo_text(m, &t1));
  OT_CHECK(t1 && strstr(t1, "epsilon=0.00100000005, feature_index=1"), "%s", t1 ? t1 : "");
  optic_string_free(t1);
  optic_module_destroy(m);
}

static const ot_case cases[] = {{"hand_cases", hand_cases}, {"shape_errors_and_text", shape_errors_and_text}};
OT_MAIN(cases)
