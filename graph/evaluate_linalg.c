/* Reference evaluation of contractions through the kernels' naive references
 * (plain loops, double accumulation, XLA semantics): convolution with
 * optic_ref_f32_conv, dot with optic_ref_f32_dot. */
#include "graph/evaluate_internal.h"
#include "kernels/conv.h"
#include "kernels/dot.h"

optic_status eval_convolution(eval_ctx *ctx, const optic_instr *in, const optic_literal *const *ops,
                              optic_literal **out) {
  if (ops[0]->type.dtype != OPTIC_F32 || ops[1]->type.dtype != OPTIC_F32) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "convolution: the evaluator does not define it for dtype %s",
                      optic_dtype_name(ops[0]->type.dtype));
  }
  optic_conv_desc d;
  graph_conv_desc(ctx->m, in, &d);
  optic_literal *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  if ((st = optic_ref_f32_conv(&d, ops[0]->data, ops[1]->data, y->data)) != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

optic_status eval_dot(eval_ctx *ctx, const optic_instr *in, const optic_literal *const *ops, optic_literal **out) {
  (void)ctx;
  if (ops[0]->type.dtype != OPTIC_F32 || ops[1]->type.dtype != OPTIC_F32) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "dot: the evaluator does not define it for dtype %s",
                      optic_dtype_name(ops[0]->type.dtype));
  }
  optic_dot_dims d;
  graph_dot_dims(in, &d);
  optic_literal *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  if ((st = optic_ref_f32_dot(&ops[0]->type.shape, &ops[1]->type.shape, &d, ops[0]->data, ops[1]->data, y->data)) !=
      OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}
