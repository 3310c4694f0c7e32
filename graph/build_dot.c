/* The dot builder: validates dimension numbers and infers the output through
 * the kernels' dot shape inference (kernels/dot.h), so the graph and the
 * kernel that runs it agree on every rule. */
#include <string.h>

#include "graph/internal.h"
#include "kernels/dot.h"

static bool contraction_dtype(optic_dtype d) { return d == OPTIC_F32 || d == OPTIC_F16 || d == OPTIC_BF16; }

optic_status graph_contraction_dtype(const char *op, optic_dtype l, optic_dtype r, optic_dtype *result) {
  if (!contraction_dtype(l) || !contraction_dtype(r)) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: operands are %s and %s; only f32, f16 and bf16 are supported", op,
                      optic_dtype_name(l), optic_dtype_name(r));
  }
  if (*result == OPTIC_DTYPE_INVALID) *result = l == r ? l : OPTIC_F32;
  if (!contraction_dtype(*result)) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: result type %s; only f32, f16 and bf16 are supported", op,
                      optic_dtype_valid(*result) ? optic_dtype_name(*result) : "invalid");
  }
  return OPTIC_OK;
}

optic_status optic_graph_dot(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                             const optic_dot_dims *dims, const char *name, optic_node_id *out) {
  return graph_dot_typed(m, comp, lhs, rhs, dims, OPTIC_DTYPE_INVALID, name, out);
}

optic_status graph_dot_typed(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                             const optic_dot_dims *dims, optic_dtype result, const char *name, optic_node_id *out) {
  const optic_type *tl, *tr;
  optic_status st = graph_array_operand(m, comp, lhs, "dot", 0, &tl);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, rhs, "dot", 1, &tr);
  if (st != OPTIC_OK) return st;
  if (out == NULL || dims == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: NULL argument");
  if ((st = graph_contraction_dtype("dot", tl->dtype, tr->dtype, &result)) != OPTIC_OK) return st;
  optic_shape shape;
  if ((st = optic_dot_infer_shape(&tl->shape, &tr->shape, dims, &shape)) != OPTIC_OK) return st;
  /* ints: {batch count, contracting count, lhs_batch, rhs_batch, lhs_contracting, rhs_contracting} */
  int64_t ints[2 + 4 * OPTIC_MAX_RANK];
  int32_t nb = dims->lhs_batch_count, nc = dims->lhs_contracting_count, k = 2;
  ints[0] = nb, ints[1] = nc;
  for (int32_t i = 0; i < nb; i++) ints[k++] = dims->lhs_batch[i];
  for (int32_t i = 0; i < nb; i++) ints[k++] = dims->rhs_batch[i];
  for (int32_t i = 0; i < nc; i++) ints[k++] = dims->lhs_contracting[i];
  for (int32_t i = 0; i < nc; i++) ints[k++] = dims->rhs_contracting[i];
  optic_node_id ops[2] = {lhs, rhs};
  optic_instr_proto p = graph_proto(OPTIC_OP_DOT);
  p.type = optic_type_array(result, &shape);
  p.operands = ops;
  p.n_operands = 2;
  p.ints = ints;
  p.n_ints = k;
  return graph_add_instr(m, comp, &p, name, out);
}

void graph_dot_dims(const optic_instr *in, optic_dot_dims *d) {
  memset(d, 0, sizeof *d);
  int32_t nb = (int32_t)in->ints[0], nc = (int32_t)in->ints[1], k = 2;
  d->lhs_batch_count = d->rhs_batch_count = nb;
  d->lhs_contracting_count = d->rhs_contracting_count = nc;
  for (int32_t i = 0; i < nb; i++) d->lhs_batch[i] = (int32_t)in->ints[k++];
  for (int32_t i = 0; i < nb; i++) d->rhs_batch[i] = (int32_t)in->ints[k++];
  for (int32_t i = 0; i < nc; i++) d->lhs_contracting[i] = (int32_t)in->ints[k++];
  for (int32_t i = 0; i < nc; i++) d->rhs_contracting[i] = (int32_t)in->ints[k++];
}
