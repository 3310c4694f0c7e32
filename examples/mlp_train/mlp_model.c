/* mlp_model: the MLP's training and forward graphs (see mlp_model.h). The
 * forward pass (build_forward) and the loss (net_ce_loss) are built once; the
 * gradients come from optic's reverse-mode autodiff of the loss computation
 * (net_autodiff_step), or, for comparison, from a backward pass spelled out
 * op by op (hand_gradients: dot contractions for the transposed products,
 * compare/select for the ReLU masks, softmax minus one-hot). */
#include "mlp_model.h"

#include "net_graph.h"

#include <string.h>

#define TRY(call)                   \
  do {                              \
    optic_status st_ = (call);      \
    if (st_ != OPTIC_OK) goto fail; \
  } while (0)

void mlp_param_shape(const mlp_dims *d, int i, optic_shape *out) {
  const int64_t widths[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  int layer = i / 2;
  if (i % 2 == 0) {
    int64_t dims[2] = {widths[layer], widths[layer + 1]};
    optic_shape_make(2, dims, out);
  } else {
    int64_t dims[1] = {widths[layer + 1]};
    optic_shape_make(1, dims, out);
  }
}

size_t mlp_param_count(const mlp_dims *d, int i) {
  optic_shape s;
  mlp_param_shape(d, i, &s);
  size_t n = 0;
  optic_shape_elements(&s, &n);
  return n;
}

typedef struct forward_nodes {
  optic_node_id p[MLP_PARAMS], x;
  optic_node_id pre[MLP_LAYERS], act[MLP_LAYERS - 1], logits;
} forward_nodes;

static optic_status build_forward(builder *b, const mlp_dims *d, int64_t batch, forward_nodes *f) {
  static const char *names[MLP_PARAMS] = {"W1", "b1", "W2", "b2", "W3", "b3"};
  const int64_t widths[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  optic_status st = OPTIC_OK;
  for (int i = 0; i < MLP_PARAMS && st == OPTIC_OK; i++) {
    optic_shape s;
    mlp_param_shape(d, i, &s);
    st = net_param(b, i, &s, names[i], &f->p[i]);
  }
  int64_t xd[2] = {batch, d->in};
  optic_shape xs;
  optic_shape_make(2, xd, &xs);
  if (st == OPTIC_OK) st = net_param(b, MLP_PARAMS, &xs, "x", &f->x);
  optic_node_id h = f->x;
  for (int l = 0; l < MLP_LAYERS && st == OPTIC_OK; l++) {
    optic_node_id mm, bias, zero;
    st = net_matmul(b, h, 1, f->p[2 * l], 0, NULL, &mm);
    if (st == OPTIC_OK) st = net_bcast(b, f->p[2 * l + 1], batch, widths[l + 1], 1, &bias);
    if (st == OPTIC_OK) st = optic_graph_binary(b->m, b->comp, OPTIC_OP_ADD, mm, bias, NULL, &f->pre[l]);
    if (l == MLP_LAYERS - 1) break;
    if (st == OPTIC_OK) st = net_filled(b, 0.0f, batch, widths[l + 1], &zero);
    if (st == OPTIC_OK) st = optic_graph_binary(b->m, b->comp, OPTIC_OP_MAXIMUM, f->pre[l], zero, NULL, &f->act[l]);
    h = f->act[l];
  }
  f->logits = f->pre[MLP_LAYERS - 1];
  return st;
}

optic_status mlp_build_forward(const mlp_dims *d, int64_t batch, optic_module_t **out) {
  builder b;
  forward_nodes f;
  *out = NULL;
  TRY(net_builder("mlp_forward", &b));
  TRY(build_forward(&b, d, batch, &f));
  TRY(optic_computation_set_root(b.m, b.comp, f.logits));
  *out = b.m;
  return OPTIC_OK;
fail:
  optic_module_destroy(b.m);
  return optic_last_error_status();
}

/* The gradients written by hand (--hand-gradients, for comparison):
 * d(loss_sum)/d(every parameter) times the seed parameter grad_scale. */
static optic_status hand_gradients(builder *b, const mlp_dims *d, int64_t batch, const forward_nodes *f,
                                   const loss_nodes *l, optic_node_id grad[MLP_PARAMS]) {
  optic_module_t *m = b->m;
  optic_comp_id c = b->comp;
  const int64_t widths[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  /* d(loss * scale)/dlogits = (softmax - y) * scale. */
  optic_node_id diff, seed, scale, dpre;
  optic_shape scalar, ds;
  int64_t dd[2] = {batch, d->classes};
  optic_shape_make(0, NULL, &scalar);
  optic_shape_make(2, dd, &ds);
  TRY(optic_graph_binary(m, c, OPTIC_OP_SUBTRACT, l->softmax, l->y, NULL, &diff));
  TRY(net_param(b, MLP_PARAMS + 2, &scalar, "grad_scale", &seed));
  TRY(optic_graph_broadcast(m, c, seed, &ds, NULL, 0, NULL, &scale));
  TRY(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, diff, scale, "dlogits", &dpre));
  for (int k = MLP_LAYERS - 1; k >= 0; k--) {
    optic_node_id in = k == 0 ? f->x : f->act[k - 1];
    /* dW = in^T . dpre, db = column sums of dpre. */
    TRY(net_matmul(b, in, 0, dpre, 0, NULL, &grad[2 * k]));
    TRY(net_reduce(b, dpre, 0, false, NULL, &grad[2 * k + 1]));
    if (k == 0) break;
    /* d(in) = dpre . W^T, masked where the ReLU's input was <= 0. */
    optic_node_id din, zero, mask, dmasked;
    TRY(net_matmul(b, dpre, 1, f->p[2 * k], 1, NULL, &din));
    TRY(net_filled(b, 0.0f, batch, widths[k], &zero));
    TRY(optic_graph_compare(m, c, OPTIC_CMP_GT, f->pre[k - 1], zero, NULL, &mask));
    TRY(optic_graph_select(m, c, mask, din, zero, NULL, &dmasked));
    dpre = dmasked;
  }
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

optic_status mlp_build_train(const mlp_dims *d, int64_t batch, bool hand_written, optic_module_t **out) {
  builder b;
  forward_nodes f;
  loss_nodes l;
  optic_node_id outs[1 + MLP_PARAMS], root;
  *out = NULL;
  TRY(net_builder(hand_written ? "mlp_train_step" : "mlp_loss", &b));
  TRY(build_forward(&b, d, batch, &f));
  TRY(net_ce_loss(&b, f.logits, batch, d->classes, MLP_PARAMS + 1, &l));
  if (!hand_written) {
    TRY(net_autodiff_step(&b, &l, MLP_PARAMS, "mlp_train_step"));
  } else {
    TRY(hand_gradients(&b, d, batch, &f, &l, outs + 1));
    outs[0] = l.loss;
    TRY(optic_graph_tuple(b.m, b.comp, outs, 1 + MLP_PARAMS, "results", &root));
    TRY(optic_computation_set_root(b.m, b.comp, root));
  }
  *out = b.m;
  return OPTIC_OK;
fail:
  optic_module_destroy(b.m);
  return optic_last_error_status();
}
