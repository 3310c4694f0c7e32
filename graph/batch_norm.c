/* batch-norm-training, batch-norm-inference and batch-norm-grad: builders
 * with XLA's shape inference, and one implementation (graph_batch_norm_run)
 * for the evaluator and the runtime. Statistics accumulate in double and
 * every result is rounded once to the operand's dtype; the variance is the
 * biased one (sum of squared deviations / N), as XLA's operation semantics
 * define it. Attribute ints: {feature_index, epsilon's f32 bits}. */
#include "graph/gather_scatter.h"

#include <math.h>
#include <string.h>

#include "graph/internal.h"

static optic_status feature_vector(const optic_module_t *m, optic_comp_id comp, const char *op, optic_node_id v,
                                   int32_t index, const optic_type *x, int64_t f) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, v, op, index, &t);
  if (st != OPTIC_OK) return st;
  if (t->dtype != x->dtype || t->shape.rank != 1 || t->shape.dims[0] != x->shape.dims[f]) {
    char b1[TYPE_BUF], b2[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand %d is %s; %s[%lld] is needed (the feature dim of %s)", op,
                      (int)index, graph_type_str(t, b1, sizeof b1), optic_dtype_name(x->dtype),
                      (long long)x->shape.dims[f], graph_type_str(x, b2, sizeof b2));
  }
  return OPTIC_OK;
}

optic_status optic_graph_batch_norm(optic_module_t *m, optic_comp_id comp, optic_opcode op, const optic_node_id *xs,
                                    int32_t n, float epsilon, int64_t feature_index, const char *name,
                                    optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  int32_t want = op == OPTIC_OP_BATCH_NORM_TRAINING    ? 3
                 : op == OPTIC_OP_BATCH_NORM_INFERENCE ? 5
                 : op == OPTIC_OP_BATCH_NORM_GRAD      ? 5
                                                       : -1;
  if (want < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "batch_norm: %s is not a batch-norm opcode", opn);
  if (xs == NULL || out == NULL || n != want) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: takes %d operands, %d given", opn, (int)want, (int)n);
  }
  const optic_type *x;
  optic_status st = graph_array_operand(m, comp, xs[0], opn, 0, &x);
  if (st != OPTIC_OK) return st;
  if (x->dtype != OPTIC_F32 && x->dtype != OPTIC_F64) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand 0 has dtype %s; f32 or f64 is needed", opn,
                      optic_dtype_name(x->dtype));
  }
  if (feature_index < 0 || feature_index >= x->shape.rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: feature_index %lld is outside the rank %d", opn,
                      (long long)feature_index, (int)x->shape.rank);
  }
  for (int32_t i = 1; i < n; i++) {
    bool array = op == OPTIC_OP_BATCH_NORM_GRAD && i == 4; /* grad_output has x's type */
    if (array) {
      const optic_type *g;
      if ((st = graph_array_operand(m, comp, xs[i], opn, i, &g)) != OPTIC_OK) return st;
      if (!optic_type_equal(g, x))
        return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: grad_output must have the operand's type", opn);
    } else if ((st = feature_vector(m, comp, opn, xs[i], i, x, feature_index)) != OPTIC_OK) {
      return st;
    }
  }
  optic_shape fs = {.rank = 1, .dims = {x->shape.dims[feature_index]}};
  optic_type els[3] = {*x, optic_type_array(x->dtype, &fs), optic_type_array(x->dtype, &fs)};
  uint32_t eb;
  memcpy(&eb, &epsilon, 4);
  int64_t ints[2] = {feature_index, (int64_t)eb};
  optic_instr_proto p = graph_proto(op);
  if (op == OPTIC_OP_BATCH_NORM_INFERENCE) {
    p.type = *x;
  } else {
    p.type.dtype = OPTIC_DTYPE_INVALID;
    p.type.tuple_size = 3;
    p.type.elements = els;
  }
  p.operands = xs;
  p.n_operands = n;
  p.ints = ints;
  p.n_ints = 2;
  return graph_add_instr(m, comp, &p, name, out);
}

/* The run below is specialized per dtype by inlining with dt a constant;
 * every double operation that decides a result is the textbook one in the
 * textbook order (no reassociation, divisions kept as divisions), so the
 * f32 and f64 paths give the bits the plain formulas give. Only values that
 * are the same for every element of a feature (sigma, the grad's
 * scale / (sigma N)) are computed once per feature. */
#define BN_INLINE static inline __attribute__((always_inline))

BN_INLINE double ld(optic_dtype dt, const void *p, size_t i) {
  return dt == OPTIC_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

BN_INLINE void st(optic_dtype dt, void *p, size_t i, double v) {
  if (dt == OPTIC_F32) ((float *)p)[i] = (float)v;
  else ((double *)p)[i] = v;
}

typedef struct {
  size_t outer, F, inner;
  double N;
} bn_dims;

/* Visits element i = (o * F + c) * inner + q in o, c, q order; with one
 * element per feature row the c loop is innermost and contiguous. */
#define BN_EACH(d, ...)                                   \
  do {                                                    \
    if ((d)->inner == 1) {                                \
      for (size_t o = 0; o < (d)->outer; o++)             \
        for (size_t c = 0; c < (d)->F; c++) {             \
          size_t i = o * (d)->F + c;                      \
          __VA_ARGS__;                                    \
        }                                                 \
    } else {                                              \
      for (size_t o = 0; o < (d)->outer; o++)             \
        for (size_t c = 0; c < (d)->F; c++)               \
          for (size_t q = 0; q < (d)->inner; q++) {       \
            size_t i = (o * (d)->F + c) * (d)->inner + q; \
            __VA_ARGS__;                                  \
          }                                               \
    }                                                     \
  } while (0)

/* mean and biased variance per feature, each a sum in element order / N */
BN_INLINE void bn_statistics(optic_dtype dt, const bn_dims *d, const void *x, double *mean, double *var) {
  BN_EACH(d, mean[c] += ld(dt, x, i));
  for (size_t c = 0; c < d->F; c++) mean[c] = d->N > 0 ? mean[c] / d->N : 0;
  BN_EACH(d, {
    double e = ld(dt, x, i) - mean[c];
    var[c] += e * e;
  });
  for (size_t c = 0; c < d->F; c++) var[c] = d->N > 0 ? var[c] / d->N : 0;
}

/* y = (x - mean) / sigma * scale + offset */
BN_INLINE void bn_normalize(optic_dtype dt, const bn_dims *d, const void *const *in, const double *mean,
                            const double *sig, void *y) {
  const void *x = in[0], *scale = in[1], *offset = in[2];
  BN_EACH(d, st(dt, y, i, (ld(dt, x, i) - mean[c]) / sig[c] * ld(dt, scale, c) + ld(dt, offset, c)));
}

/* XLA's gradient: x_hat = (x - mean) / sigma, s1 = sum dy, s2 = sum dy x_hat,
 * grad_x = scale / (sigma N) (N dy - s1 - x_hat s2); k = scale / (sigma N). */
BN_INLINE void bn_grad(optic_dtype dt, const bn_dims *d, const void *const *in, void *const *out, double *acc) {
  size_t F = d->F;
  double *mean = acc, *sig = acc + F, *s1 = acc + 2 * F, *s2 = acc + 3 * F, *k = acc + 4 * F, N = d->N;
  const void *x = in[0], *dy = in[4];
  BN_EACH(d, {
    double g = ld(dt, dy, i);
    s1[c] += g;
    s2[c] += g * (ld(dt, x, i) - mean[c]) / sig[c];
  });
  for (size_t c = 0; c < F; c++) k[c] = ld(dt, in[1], c) / (sig[c] * N);
  BN_EACH(d, {
    double xh = (ld(dt, x, i) - mean[c]) / sig[c];
    st(dt, out[0], i, k[c] * (N * ld(dt, dy, i) - s1[c] - xh * s2[c]));
  });
  for (size_t c = 0; c < F; c++) st(dt, out[1], c, s2[c]), st(dt, out[2], c, s1[c]);
}

BN_INLINE void bn_run(optic_opcode op, optic_dtype dt, const bn_dims *d, float eps, const void *const *in,
                      void *const *out, double *acc) {
  size_t F = d->F;
  double *mean = acc, *var = acc + F, *sig = acc + 2 * F;
  for (size_t c = 0; c < GRAPH_BATCH_NORM_SCRATCH(F); c++) acc[c] = 0;
  if (op == OPTIC_OP_BATCH_NORM_TRAINING) {
    bn_statistics(dt, d, in[0], mean, var);
  } else {
    for (size_t c = 0; c < F; c++) mean[c] = ld(dt, in[op == OPTIC_OP_BATCH_NORM_GRAD ? 2 : 3], c);
    for (size_t c = 0; c < F; c++) var[c] = ld(dt, in[op == OPTIC_OP_BATCH_NORM_GRAD ? 3 : 4], c);
  }
  if (op == OPTIC_OP_BATCH_NORM_GRAD) { /* grad's layout: mean, sigma, s1, s2, k */
    for (size_t c = 0; c < F; c++) var[c] = sqrt(var[c] + (double)eps);
    bn_grad(dt, d, in, out, acc);
    return;
  }
  for (size_t c = 0; c < F; c++) sig[c] = sqrt(var[c] + (double)eps);
  bn_normalize(dt, d, in, mean, sig, out[0]);
  if (op == OPTIC_OP_BATCH_NORM_TRAINING) {
    for (size_t c = 0; c < F; c++) st(dt, out[1], c, mean[c]), st(dt, out[2], c, var[c]);
  }
}

void graph_batch_norm_run(optic_opcode op, optic_dtype dt, const optic_shape *s, int64_t f, float eps,
                          const void *const *in, void *const *out, double *acc) {
  bn_dims d = {.outer = 1, .F = (size_t)s->dims[f], .inner = 1};
  for (int32_t k = (int32_t)f + 1; k < s->rank; k++) d.inner *= (size_t)s->dims[k];
  for (int32_t k = 0; k < f; k++) d.outer *= (size_t)s->dims[k];
  d.N = (double)(d.outer * d.inner);
  if (dt == OPTIC_F32) bn_run(op, OPTIC_F32, &d, eps, in, out, acc);
  else bn_run(op, OPTIC_F64, &d, eps, in, out, acc);
}
