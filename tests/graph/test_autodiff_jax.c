/* Autodiff against gradients that JAX/XLA emitted: modules in tests/data/hlo
 * hold a training step's forward part and the gradients XLA's autodiff
 * wrote for it. optic differentiates the forward part alone (the output
 * instruction, w.r.t. the parameters) and the test compares, on random
 * inputs, with the module's own gradient instructions, both evaluated by the
 * reference evaluator. */
#include <math.h>

#include "tests/graph/autodiff_util.h"

static void hlo_path(const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/data/hlo/%s", OPTIC_TEST_SOURCE_DIR, name);
}

static optic_node_id find(optic_module_t *m, optic_comp_id c, const char *name) {
  int32_t n;
  const optic_node_id *ids = optic_computation_instructions(m, c, &n);
  for (int32_t i = 0; i < n; i++) {
    if (strcmp(optic_node_name(m, ids[i]), name) == 0) return ids[i];
  }
  return OPTIC_NO_NODE;
}

typedef struct jax_case {
  const char *file, *output;
  int32_t n_wrt;
  int32_t wrt[4];
  const char *jax_grad[4]; /* the module's gradient of wrt[i] */
  int32_t seed_param;      /* -1: scalar output; else the parameter holding the cotangent */
  double abs_tol, rel_tol;
} jax_case;

static void run_case(const jax_case *jc) {
  char path[1024];
  hlo_path(jc->file, path, sizeof path);
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_file(path, &m));
  if (m == NULL) return;
  optic_comp_id entry = optic_module_entry(m);
  optic_grad_options o = optic_grad_options_default();
  o.output = find(m, entry, jc->output);
  o.seeded = jc->seed_param >= 0;
  OT_CHECK(o.output != OPTIC_NO_NODE, "%s: no instruction %s", jc->file, jc->output);
  int32_t np = optic_computation_parameter_count(m, entry);
  optic_literal_t *args[9] = {0};
  for (int32_t i = 0; i < np && i < 8; i++) {
    args[i] = adf_random(optic_node_type(m, optic_computation_parameter(m, entry, i)), -1, 1);
  }
  if (o.seeded) OT_EXPECT_OK(optic_literal_clone(args[jc->seed_param], &args[np]));
  optic_comp_id g = -1;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(m, entry, jc->wrt, jc->n_wrt, &o, &g));
  optic_literal_t *ours = NULL;
  if (g >= 0) OT_EXPECT_OK(optic_evaluate(m, g, (const optic_literal_t *const *)args, np + o.seeded, NULL, &ours));
  for (int32_t k = 0; ours && k < jc->n_wrt; k++) {
    optic_node_id jg = find(m, entry, jc->jax_grad[k]);
    optic_literal_t *theirs = NULL;
    OT_CHECK(jg != OPTIC_NO_NODE, "%s: no instruction %s", jc->file, jc->jax_grad[k]);
    if (jg == OPTIC_NO_NODE) continue;
    OT_EXPECT_OK(optic_computation_set_root(m, entry, jg)); /* evaluate the module's own gradient */
    OT_EXPECT_OK(optic_evaluate(m, entry, (const optic_literal_t *const *)args, np, NULL, &theirs));
    char why[256] = "";
    bool same = theirs && optic_literal_match(theirs, optic_literal_element(ours, k + 1), OPTIC_MATCH_TOLERANCE,
                                              jc->abs_tol, jc->rel_tol, why, sizeof why);
    OT_CHECK(same, "%s: d %s / d parameter %d vs %s: %s", jc->file, jc->output, (int)jc->wrt[k], jc->jax_grad[k], why);
    optic_literal_destroy(theirs);
  }
  optic_literal_destroy(ours);
  for (int32_t i = 0; i <= np && i < 9; i++) optic_literal_destroy(args[i]);
  optic_module_destroy(m);
}

/* sum(relu(x W)) w.r.t. W; JAX's ReLU derivative is select(dot == max, 1, 0). The
 * two agree bit for bit today (same dot, same order); 1e-6 allows for a
 * different summation order. */
static void test_one_matmul_train_step(void) {
  jax_case c = {"one_matmul_train_step.hlo", "reduce.43", 1, {0}, {"dot.2"}, -1, 1e-6, 1e-6};
  run_case(&c);
}

/* Layer norm over axes {1,2} with scale and bias; doutput (parameter 3) is
 * the cotangent. The module's constants 1/24 and 2/24 are written to 5-6
 * digits (0.041667, 0.083333), so its backward differs from the exact
 * derivative of its forward by up to ~6e-6 relative (tolerance 2e-5). */
static void test_layer_norm_train_bwd(void) {
  jax_case c = {"realworld/layer_norm_train_bwd_4d_axes12.hlo",
                "norm_scale_bias",
                3,
                {0, 1, 2},
                {"dinput", "dscale", "dbias"},
                3,
                2e-5,
                2e-5};
  run_case(&c);
}

static const ot_case cases[] = {
    {"one_matmul_train_step", test_one_matmul_train_step},
    {"layer_norm_train_bwd", test_layer_norm_train_bwd},
};
OT_MAIN(cases)
