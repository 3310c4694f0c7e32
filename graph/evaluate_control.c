/* Reference evaluation of structure and control flow: tuple,
 * get-tuple-element, call, while (bounded by max_while_iterations, so a
 * loop that never ends is an error, not a hang), conditional, fusion (its
 * fused computation, like a call) and all-reduce on one replica. */
#include <stdlib.h>

#include "graph/evaluate_internal.h"

static optic_status eval_while(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *init,
                               optic_literal_t **out) {
  optic_comp_id cond = in->calls[0], body = in->calls[1];
  optic_literal_t *state;
  optic_status st = lit_clone(init, &state);
  for (int64_t iter = 0; st == OPTIC_OK; iter++) {
    optic_literal_t *p;
    const optic_literal_t *arg = state;
    if ((st = eval_computation(ctx, cond, &arg, 1, &p)) != OPTIC_OK) break;
    bool go = ((const uint8_t *)p->data)[0] != 0;
    lit_free(p);
    if (!go) break;
    if (iter >= ctx->opts.max_while_iterations) {
      st = optic_fail(OPTIC_ERR_TIMEOUT,
                      "while: condition '%s' is still true after %lld iterations of body '%s' "
                      "(max_while_iterations = %lld)",
                      ctx->m->comps[cond].name, (long long)iter, ctx->m->comps[body].name,
                      (long long)ctx->opts.max_while_iterations);
      break;
    }
    optic_literal_t *next;
    if ((st = eval_computation(ctx, body, &arg, 1, &next)) != OPTIC_OK) break;
    lit_free(state);
    state = next;
  }
  if (st != OPTIC_OK) {
    lit_free(state);
    return st;
  }
  *out = state;
  return OPTIC_OK;
}

/* XLA: a pred selector runs branch 0 when true and branch 1 when false; an
 * s32 selector runs branch i, and the last branch when i is out of range. */
static optic_status eval_conditional(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                                     optic_literal_t **out) {
  int32_t n = in->n_calls, branch;
  if (in->ints[0]) {
    branch = ((const uint8_t *)ops[0]->data)[0] != 0 ? 0 : 1;
  } else {
    int32_t i = ((const int32_t *)ops[0]->data)[0];
    branch = i < 0 || i >= n ? n - 1 : i;
  }
  return eval_computation(ctx, in->calls[branch], &ops[1 + branch], 1, out);
}

optic_status eval_control(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out) {
  switch (in->op) {
    case OPTIC_OP_TUPLE: return lit_tuple_of(ops, in->n_operands, out);
    case OPTIC_OP_GET_TUPLE_ELEMENT: return lit_clone(ops[0]->elements[in->ints[0]], out);
    case OPTIC_OP_CALL:
    case OPTIC_OP_FUSION: return eval_computation(ctx, in->calls[0], ops, in->n_operands, out);
    case OPTIC_OP_WHILE: return eval_while(ctx, in, ops[0], out);
    case OPTIC_OP_CONDITIONAL: return eval_conditional(ctx, in, ops, out);
    case OPTIC_OP_ALL_REDUCE:
      /* One replica: every replica group holds only this replica, so the
       * reduction is over one value and returns it (to_apply never runs). */
      return in->n_operands == 1 ? lit_clone(ops[0], out) : lit_tuple_of(ops, in->n_operands, out);
    default: return optic_fail(OPTIC_ERR_INTERNAL, "%s: not a control op", optic_opcode_name(in->op));
  }
}
