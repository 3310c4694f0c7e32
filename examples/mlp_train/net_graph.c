/* net_graph: graph-building helpers shared by the example's models (see
 * net_graph.h). */
#include "net_graph.h"

#include <math.h>
#include <string.h>

#define TRY(call)                   \
  do {                              \
    optic_status st_ = (call);      \
    if (st_ != OPTIC_OK) goto fail; \
  } while (0)

static optic_status scalar_reducer(optic_module_t *m, const char *name, optic_opcode op, optic_comp_id *out) {
  optic_shape scalar;
  optic_shape_make(0, NULL, &scalar);
  optic_type t = optic_type_array(OPTIC_F32, &scalar);
  optic_node_id a, b, r;
  optic_status st = optic_module_add_computation(m, name, out);
  if (st == OPTIC_OK) st = optic_graph_parameter(m, *out, 0, &t, NULL, &a);
  if (st == OPTIC_OK) st = optic_graph_parameter(m, *out, 1, &t, NULL, &b);
  if (st == OPTIC_OK) st = optic_graph_binary(m, *out, op, a, b, NULL, &r);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, *out, r);
  return st;
}

optic_status net_builder(const char *name, builder *b) {
  memset(b, 0, sizeof *b);
  optic_status st = optic_module_create(name, &b->m);
  if (st == OPTIC_OK) st = scalar_reducer(b->m, "add_f32", OPTIC_OP_ADD, &b->add);
  if (st == OPTIC_OK) st = scalar_reducer(b->m, "max_f32", OPTIC_OP_MAXIMUM, &b->max);
  if (st == OPTIC_OK) st = optic_module_add_computation(b->m, name, &b->comp);
  if (st == OPTIC_OK) st = optic_module_set_entry(b->m, b->comp);
  return st;
}

optic_status net_param(builder *b, int32_t number, const optic_shape *s, const char *name, optic_node_id *out) {
  optic_type t = optic_type_array(OPTIC_F32, s);
  return optic_graph_parameter(b->m, b->comp, number, &t, name, out);
}

optic_status net_filled(builder *b, float v, int64_t rows, int64_t cols, optic_node_id *out) {
  optic_shape scalar, s;
  optic_shape_make(0, NULL, &scalar);
  int64_t dims[2] = {rows, cols};
  optic_shape_make(cols ? 2 : 1, dims, &s);
  optic_node_id c;
  optic_status st = optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &v, sizeof v, NULL, &c);
  if (st == OPTIC_OK) st = optic_graph_broadcast(b->m, b->comp, c, &s, NULL, 0, NULL, out);
  return st;
}

optic_status net_matmul(builder *b, optic_node_id x, int32_t x_dim, optic_node_id w, int32_t w_dim, const char *name,
                        optic_node_id *out) {
  optic_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.lhs_contracting_count = dd.rhs_contracting_count = 1;
  dd.lhs_contracting[0] = x_dim;
  dd.rhs_contracting[0] = w_dim;
  return optic_graph_dot(b->m, b->comp, x, w, &dd, name, out);
}

optic_status net_reduce(builder *b, optic_node_id x, int64_t dim, bool max, const char *name, optic_node_id *out) {
  optic_shape scalar;
  optic_shape_make(0, NULL, &scalar);
  float init = max ? -INFINITY : 0.0f;
  optic_node_id c;
  optic_status st = optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &init, sizeof init, NULL, &c);
  if (st == OPTIC_OK) st = optic_graph_reduce(b->m, b->comp, &x, &c, 1, &dim, 1, max ? b->max : b->add, name, out);
  return st;
}

optic_status net_bcast(builder *b, optic_node_id v, int64_t rows, int64_t cols, int64_t v_dim, optic_node_id *out) {
  int64_t dims[2] = {rows, cols};
  optic_shape s;
  optic_shape_make(2, dims, &s);
  return optic_graph_broadcast(b->m, b->comp, v, &s, &v_dim, 1, NULL, out);
}

optic_status net_bias_relu(builder *b, optic_node_id x, const optic_shape *xs, optic_node_id bias, bool relu,
                           optic_node_id *out) {
  optic_shape scalar;
  optic_shape_make(0, NULL, &scalar);
  const int64_t last = xs->rank - 1;
  const float zero = 0.0f;
  optic_node_id bb, sum, c, z;
  TRY(optic_graph_broadcast(b->m, b->comp, bias, xs, &last, 1, NULL, &bb));
  TRY(optic_graph_binary(b->m, b->comp, OPTIC_OP_ADD, x, bb, NULL, relu ? &sum : out));
  if (!relu) return OPTIC_OK;
  TRY(optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &zero, sizeof zero, NULL, &c));
  TRY(optic_graph_broadcast(b->m, b->comp, c, xs, NULL, 0, NULL, &z));
  TRY(optic_graph_binary(b->m, b->comp, OPTIC_OP_MAXIMUM, sum, z, NULL, out));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

optic_status net_ce_loss(builder *b, optic_node_id logits, int64_t batch, int64_t classes, int32_t y_number,
                         loss_nodes *l) {
  optic_module_t *m = b->m;
  optic_comp_id c = b->comp;
  const int64_t C = classes;
  int64_t yd[2] = {batch, C};
  optic_shape ys;
  optic_shape_make(2, yd, &ys);
  TRY(net_param(b, y_number, &ys, "y", &l->y));
  optic_node_id mxb, zs, e, se, seb, lse, lseb, logp, ylogp, rows, loss_neg;
  TRY(net_reduce(b, logits, 1, true, "row_max", &l->row_max));
  TRY(net_bcast(b, l->row_max, batch, C, 0, &mxb));
  TRY(optic_graph_binary(m, c, OPTIC_OP_SUBTRACT, logits, mxb, "shifted", &zs));
  TRY(optic_graph_unary(m, c, OPTIC_OP_EXPONENTIAL, zs, NULL, &e));
  TRY(net_reduce(b, e, 1, false, "row_sum", &se));
  TRY(net_bcast(b, se, batch, C, 0, &seb));
  TRY(optic_graph_unary(m, c, OPTIC_OP_LOG, se, NULL, &lse));
  TRY(net_bcast(b, lse, batch, C, 0, &lseb));
  TRY(optic_graph_binary(m, c, OPTIC_OP_SUBTRACT, zs, lseb, "log_softmax", &logp));
  TRY(optic_graph_binary(m, c, OPTIC_OP_DIVIDE, e, seb, "softmax", &l->softmax));
  TRY(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, l->y, logp, NULL, &ylogp));
  TRY(net_reduce(b, ylogp, 1, false, NULL, &rows));
  TRY(net_reduce(b, rows, 0, false, NULL, &loss_neg));
  TRY(optic_graph_unary(m, c, OPTIC_OP_NEGATE, loss_neg, "loss_sum", &l->loss));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

optic_status net_autodiff_step(builder *b, const loss_nodes *l, int32_t n_wrt, const char *name) {
  int32_t wrt[16];
  if (n_wrt > 16) return OPTIC_ERR_INVALID_ARGUMENT;
  for (int32_t i = 0; i < n_wrt; i++) wrt[i] = i;
  optic_grad_options go = optic_grad_options_default();
  go.seeded = true; /* the parameter after y: the cotangent of the loss, i.e. grad_scale */
  go.name = name;
  go.stop_gradient = &l->row_max; /* as jax.nn.log_softmax does: the shift adds nothing to the gradient */
  go.n_stop_gradient = 1;
  optic_comp_id g;
  TRY(optic_computation_set_root(b->m, b->comp, l->loss));
  TRY(optic_autodiff_value_and_grad(b->m, b->comp, wrt, n_wrt, &go, &g));
  TRY(optic_module_set_entry(b->m, g));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}
