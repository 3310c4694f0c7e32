/* Reference evaluation of contractions through the kernels' naive references
 * (plain loops, double accumulation, XLA semantics): convolution with
 * optic_ref_f32_conv, dot with optic_ref_f32_dot. f16/bf16 operands are
 * widened to f32 exactly and the f32 result is rounded once to the result
 * type, as XLA's CPU backend computes half contractions in f32. */
#include <stdlib.h>

#include "graph/evaluate_internal.h"
#include "kernels/conv.h"
#include "kernels/dot.h"

/* x as f32: its own data, or a new widened copy in *tmp (caller frees). */
static optic_status as_f32(const optic_literal_t *x, void **tmp, const float **out) {
  *tmp = NULL;
  if (x->type.dtype == OPTIC_F32) {
    *out = x->data;
    return OPTIC_OK;
  }
  size_t n = lit_elements(x);
  float *f = malloc(n ? n * sizeof *f : 1);
  if (f == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory widening %zu elements", n);
  optic_status st = optic_convert_elements(x->type.dtype, x->data, OPTIC_F32, f, n);
  if (st != OPTIC_OK) {
    free(f);
    return st;
  }
  *tmp = f;
  *out = f;
  return OPTIC_OK;
}

typedef optic_status (*contraction_fn)(const optic_module_t *m, const optic_instr *in,
                                       const optic_literal_t *const *ops, const float *a, const float *b, float *y);

static optic_status run_dot(const optic_module_t *m, const optic_instr *in, const optic_literal_t *const *ops,
                            const float *a, const float *b, float *y) {
  (void)m;
  optic_dot_dims d;
  graph_dot_dims(in, &d);
  return optic_ref_f32_dot(&ops[0]->type.shape, &ops[1]->type.shape, &d, a, b, y);
}

static optic_status run_conv(const optic_module_t *m, const optic_instr *in, const optic_literal_t *const *ops,
                             const float *a, const float *b, float *y) {
  (void)ops;
  optic_conv_desc d;
  graph_conv_desc(m, in, &d);
  return optic_ref_f32_conv(&d, a, b, y);
}

static optic_status contraction(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                                contraction_fn fn, optic_literal_t **out) {
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  void *ta = NULL, *tb = NULL, *ty = NULL;
  const float *a = NULL, *b = NULL;
  float *yf = y->data;
  size_t n = lit_elements(y);
  st = as_f32(ops[0], &ta, &a);
  if (st == OPTIC_OK) st = as_f32(ops[1], &tb, &b);
  if (st == OPTIC_OK && y->type.dtype != OPTIC_F32) {
    if ((ty = yf = malloc(n ? n * sizeof *yf : 1)) == NULL)
      st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory");
  }
  if (st == OPTIC_OK) st = fn(ctx->m, in, ops, a, b, yf);
  if (st == OPTIC_OK && ty != NULL) st = optic_convert_elements(OPTIC_F32, yf, y->type.dtype, y->data, n);
  free(ta);
  free(tb);
  free(ty);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

optic_status eval_convolution(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                              optic_literal_t **out) {
  return contraction(ctx, in, ops, run_conv, out);
}

optic_status eval_dot(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out) {
  return contraction(ctx, in, ops, run_dot, out);
}
