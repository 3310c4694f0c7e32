/* batch-norm-training, -inference and -grad in the evaluator against
 * hand-computed values (statistics per feature, biased variance, XLA's
 * gradient formula), bitwise against the textbook formulas in double over a
 * sweep of shapes, dtypes and feature dims, shape errors, XLA's byte count
 * and the HLO text. */
#include <math.h>

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

/* The textbook formulas in double, element by element in index order:
 * mean = sum x / N, var = sum (x - mean)^2 / N, sigma = sqrt(var + eps),
 * y = (x - mean) / sigma * scale + offset; grad (XLA): s1 = sum dy,
 * s2 = sum dy (x - mean) / sigma, gx = scale / (sigma N) (N dy - s1 - x_hat s2).
 * v holds scale, offset, mean, var (inputs); r gets y|gx, then 2 x F. */
typedef struct {
  size_t n, F, stride;
  double eps;
} bn_ref_dims;

static void ref_statistics(const bn_ref_dims *d, const double *x, double *mean, double *var) {
  double N = d->F ? (double)(d->n / d->F) : 0;
  for (size_t i = 0; i < d->n; i++) mean[(i / d->stride) % d->F] += x[i];
  for (size_t c = 0; c < d->F; c++) mean[c] = N > 0 ? mean[c] / N : 0;
  for (size_t i = 0; i < d->n; i++) {
    size_t c = (i / d->stride) % d->F;
    var[c] += (x[i] - mean[c]) * (x[i] - mean[c]);
  }
  for (size_t c = 0; c < d->F; c++) var[c] = N > 0 ? var[c] / N : 0;
}

static void ref_bn(optic_opcode op, const bn_ref_dims *d, const double *x, const double *dy, double *const *v,
                   double *r) {
  size_t F = d->F;
  double N = F ? (double)(d->n / F) : 0, *mean = r + d->n, *var = r + d->n + F;
  memset(mean, 0, 2 * F * sizeof *r);
  if (op == OPTIC_OP_BATCH_NORM_TRAINING) ref_statistics(d, x, mean, var);
  if (op == OPTIC_OP_BATCH_NORM_INFERENCE) memcpy(mean, v[2], F * sizeof *mean), memcpy(var, v[3], F * sizeof *var);
  if (op != OPTIC_OP_BATCH_NORM_GRAD) {
    for (size_t i = 0; i < d->n; i++) {
      size_t c = (i / d->stride) % F;
      r[i] = (x[i] - mean[c]) / sqrt(var[c] + d->eps) * v[0][c] + v[1][c];
    }
    return;
  }
  double *s1 = var, *s2 = mean, *mu = v[2]; /* grad's outputs: grad_scale = s2, grad_offset = s1 */
  for (size_t i = 0; i < d->n; i++) {
    size_t c = (i / d->stride) % F;
    s1[c] += dy[i];
    s2[c] += dy[i] * (x[i] - mu[c]) / sqrt(v[3][c] + d->eps);
  }
  for (size_t i = 0; i < d->n; i++) {
    size_t c = (i / d->stride) % F;
    double sig = sqrt(v[3][c] + d->eps), xh = (x[i] - mu[c]) / sig;
    r[i] = v[0][c] / (sig * N) * (N * dy[i] - s1[c] - xh * s2[c]);
  }
}

static uint32_t bn_seed = 12345;
static double bn_random(void) { /* in [-2, 2) */
  bn_seed = bn_seed * 1664525u + 1013904223u;
  return (double)(bn_seed >> 8) / (double)(1u << 22) - 2.0;
}

/* A literal of dtype dt holding v (rounded to dt first, so v is what the
 * literal holds). */
static optic_literal_t *bn_lit(optic_dtype dt, int32_t rank, const int64_t *dims, double *v, size_t n) {
  float f[512];
  for (size_t i = 0; i < n; i++) v[i] = dt == OPTIC_F32 ? (double)(f[i] = (float)v[i]) : v[i];
  return ev_lit(dt, rank, dims, dt == OPTIC_F32 ? (const void *)f : (const void *)v);
}

/* True when leaf (dtype dt, n elements) holds want rounded once to dt. */
static bool bn_bitwise(const optic_literal_t *leaf, optic_dtype dt, const double *want, size_t n, const char *what) {
  const void *got = optic_literal_data(leaf, NULL);
  for (size_t i = 0; i < n; i++) {
    bool same = dt == OPTIC_F32 ? ((const float *)got)[i] == (float)want[i] : ((const double *)got)[i] == want[i];
    if (!same) {
      double g = dt == OPTIC_F32 ? (double)((const float *)got)[i] : ((const double *)got)[i];
      fprintf(stderr, "  %s element %zu: got %.17g, want %.17g\n", what, i, g, want[i]);
      return false;
    }
  }
  return true;
}

typedef struct {
  int32_t rank;
  int64_t dims[4];
} bn_shape;

/* One op on one shape, dtype and feature dim: the evaluator's bits against ref_bn. */
static bool bn_sweep_one(optic_opcode op, optic_dtype dt, const bn_shape *sh, int64_t f) {
  size_t n = 1, stride = 1, F = (size_t)sh->dims[f];
  for (int32_t k = 0; k < sh->rank; k++) n *= (size_t)sh->dims[k];
  for (int32_t k = (int32_t)f + 1; k < sh->rank; k++) stride *= (size_t)sh->dims[k];
  double x[512], dy[512], vs[4][64], r[512 + 128], *v[4] = {vs[0], vs[1], vs[2], vs[3]};
  for (size_t i = 0; i < n; i++) x[i] = 3 * bn_random() + 1, dy[i] = bn_random();
  for (size_t c = 0; c < F; c++)
    for (int k = 0; k < 4; k++) vs[k][c] = k == 3 ? fabs(bn_random()) + 0.25 : bn_random();
  const int64_t fd = (int64_t)F;
  /* operands: training x, scale, offset; inference x, scale, offset, mean,
   * var; grad x, scale, mean, var, dy */
  bool grad = op == OPTIC_OP_BATCH_NORM_GRAD;
  int32_t na = op == OPTIC_OP_BATCH_NORM_TRAINING ? 3 : 5;
  optic_literal_t *a[5] = {bn_lit(dt, sh->rank, sh->dims, x, n), bn_lit(dt, 1, &fd, v[0], F)};
  for (int32_t k = 2; k < na; k++) {
    int vk = grad ? k : k - 1;
    a[k] = grad && k == 4 ? bn_lit(dt, sh->rank, sh->dims, dy, n) : bn_lit(dt, 1, &fd, v[vk], F);
  }
  ev_fresh();
  optic_node_id p[5], id;
  for (int32_t k = 0; k < na; k++) p[k] = ev_param_type(ev_main, k, optic_literal_type(a[k]));
  OT_EXPECT_OK(optic_graph_batch_norm(ev_m, ev_main, op, p, na, 0.01f, f, NULL, &id));
  ev_root(ev_main, id);
  optic_literal_t *got = ev_run(ev_main, (const optic_literal_t *const *)a, na);
  bn_ref_dims d = {n, F, stride, (double)0.01f};
  ref_bn(op, &d, x, dy, v, r);
  bool ok = got != NULL;
  if (ok && op == OPTIC_OP_BATCH_NORM_INFERENCE) ok = bn_bitwise(got, dt, r, n, "y");
  for (int k = 0; ok && k < 3 && op != OPTIC_OP_BATCH_NORM_INFERENCE; k++)
    ok = bn_bitwise(optic_literal_element(got, k), dt, k ? r + n + (size_t)(k - 1) * F : r, k ? F : n, "leaf");
  optic_literal_destroy(got);
  for (int32_t k = 0; k < na; k++) optic_literal_destroy(a[k]);
  return ok;
}

/* Shapes with 0 and 1 elements, one-element features, feature dims first,
 * middle and last, f32 and f64, all three ops. */
static void textbook_sweep(void) {
  static const bn_shape shapes[] = {{1, {1}},       {1, {5}},          {2, {3, 0}},       {2, {0, 4}},
                                    {2, {1, 1}},    {2, {7, 3}},       {3, {4, 3, 5}},    {3, {2, 16, 9}},
                                    {3, {3, 0, 2}}, {4, {3, 4, 1, 5}}, {4, {2, 1, 3, 1}}, {2, {64, 8}}};
  static const optic_opcode ops[3] = {OPTIC_OP_BATCH_NORM_TRAINING, OPTIC_OP_BATCH_NORM_INFERENCE,
                                      OPTIC_OP_BATCH_NORM_GRAD};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    for (int64_t f = 0; f < shapes[k].rank; f++)
      for (int dt = 0; dt < 2; dt++)
        for (int o = 0; o < 3; o++)
          OT_CHECK(bn_sweep_one(ops[o], dt ? OPTIC_F64 : OPTIC_F32, &shapes[k], f),
                   "%s %s shape %zu feature_index %lld", optic_opcode_name(ops[o]), dt ? "f64" : "f32", k,
                   (long long)f);
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

static const ot_case cases[] = {
    {"hand_cases", hand_cases}, {"textbook_sweep", textbook_sweep}, {"shape_errors_and_text", shape_errors_and_text}};
OT_MAIN(cases)
