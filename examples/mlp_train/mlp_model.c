/* mlp_model: the MLP's training and forward graphs (see mlp_model.h). The
 * forward pass and the loss are built once, by one function each; the
 * gradients come from optic's reverse-mode autodiff of the loss computation
 * (autodiff_gradients), or, for comparison, from a backward pass spelled out
 * op by op (hand_gradients: dot contractions for the transposed products,
 * compare/select for the ReLU masks, softmax minus one-hot). */
#include "mlp_model.h"

#include <math.h>
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

typedef struct builder {
  optic_module_t *m;
  optic_comp_id comp, add, max;
} builder;

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

static optic_status make_builder(const char *name, builder *b) {
  memset(b, 0, sizeof *b);
  optic_status st = optic_module_create(name, &b->m);
  if (st == OPTIC_OK) st = scalar_reducer(b->m, "add_f32", OPTIC_OP_ADD, &b->add);
  if (st == OPTIC_OK) st = scalar_reducer(b->m, "max_f32", OPTIC_OP_MAXIMUM, &b->max);
  if (st == OPTIC_OK) st = optic_module_add_computation(b->m, name, &b->comp);
  if (st == OPTIC_OK) st = optic_module_set_entry(b->m, b->comp);
  return st;
}

static optic_status param(builder *b, int32_t number, const optic_shape *s, const char *name, optic_node_id *out) {
  optic_type t = optic_type_array(OPTIC_F32, s);
  return optic_graph_parameter(b->m, b->comp, number, &t, name, out);
}

/* A scalar constant broadcast to rows x cols (cols 0: a vector of rows). */
static optic_status filled(builder *b, float v, int64_t rows, int64_t cols, optic_node_id *out) {
  optic_shape scalar, s;
  optic_shape_make(0, NULL, &scalar);
  int64_t dims[2] = {rows, cols};
  optic_shape_make(cols ? 2 : 1, dims, &s);
  optic_node_id c;
  optic_status st = optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &v, sizeof v, NULL, &c);
  if (st == OPTIC_OK) st = optic_graph_broadcast(b->m, b->comp, c, &s, NULL, 0, NULL, out);
  return st;
}

/* x [rows, k] contracted on x_dim with w's w_dim: dot_general with one
 * contracting pair, no batch dims. (x_dim, w_dim) = (1, 0) is x.w,
 * (0, 0) is x^T.w, (1, 1) is x.w^T. */
static optic_status matmul(builder *b, optic_node_id x, int32_t x_dim, optic_node_id w, int32_t w_dim, const char *name,
                           optic_node_id *out) {
  optic_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.lhs_contracting_count = dd.rhs_contracting_count = 1;
  dd.lhs_contracting[0] = x_dim;
  dd.rhs_contracting[0] = w_dim;
  return optic_graph_dot(b->m, b->comp, x, w, &dd, name, out);
}

/* Sum (or max) of x over dimension dim. */
static optic_status reduce(builder *b, optic_node_id x, int64_t dim, bool max, const char *name, optic_node_id *out) {
  optic_shape scalar;
  optic_shape_make(0, NULL, &scalar);
  float init = max ? -INFINITY : 0.0f;
  optic_node_id c;
  optic_status st = optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &init, sizeof init, NULL, &c);
  if (st == OPTIC_OK) st = optic_graph_reduce(b->m, b->comp, &x, &c, 1, &dim, 1, max ? b->max : b->add, name, out);
  return st;
}

/* v [n] broadcast along the other dimension of a [rows, cols] array: as
 * columns (v_dim 1: v has cols entries) or rows (v_dim 0: rows entries). */
static optic_status bcast(builder *b, optic_node_id v, int64_t rows, int64_t cols, int64_t v_dim, optic_node_id *out) {
  int64_t dims[2] = {rows, cols};
  optic_shape s;
  optic_shape_make(2, dims, &s);
  return optic_graph_broadcast(b->m, b->comp, v, &s, &v_dim, 1, NULL, out);
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
    st = param(b, i, &s, names[i], &f->p[i]);
  }
  int64_t xd[2] = {batch, d->in};
  optic_shape xs;
  optic_shape_make(2, xd, &xs);
  if (st == OPTIC_OK) st = param(b, MLP_PARAMS, &xs, "x", &f->x);
  optic_node_id h = f->x;
  for (int l = 0; l < MLP_LAYERS && st == OPTIC_OK; l++) {
    optic_node_id mm, bias, zero;
    st = matmul(b, h, 1, f->p[2 * l], 0, NULL, &mm);
    if (st == OPTIC_OK) st = bcast(b, f->p[2 * l + 1], batch, widths[l + 1], 1, &bias);
    if (st == OPTIC_OK) st = optic_graph_binary(b->m, b->comp, OPTIC_OP_ADD, mm, bias, NULL, &f->pre[l]);
    if (l == MLP_LAYERS - 1) break;
    if (st == OPTIC_OK) st = filled(b, 0.0f, batch, widths[l + 1], &zero);
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
  TRY(make_builder("mlp_forward", &b));
  TRY(build_forward(&b, d, batch, &f));
  TRY(optic_computation_set_root(b.m, b.comp, f.logits));
  *out = b.m;
  return OPTIC_OK;
fail:
  optic_module_destroy(b.m);
  return optic_last_error_status();
}

/* The loss on top of the forward pass: log-softmax with the row max
 * subtracted; loss_sum = -sum(y * logp). Keeps softmax for the hand-written
 * backward pass. */
typedef struct loss_nodes {
  forward_nodes f;
  optic_node_id y, softmax, loss;
  optic_node_id row_max; /* the shift of the stable log-softmax: its gradient is exactly zero */
} loss_nodes;

static optic_status build_loss(builder *b, const mlp_dims *d, int64_t batch, loss_nodes *l) {
  optic_module_t *m = b->m;
  optic_comp_id c = b->comp;
  const int64_t C = d->classes;
  TRY(build_forward(b, d, batch, &l->f));
  int64_t yd[2] = {batch, C};
  optic_shape ys;
  optic_shape_make(2, yd, &ys);
  TRY(param(b, MLP_PARAMS + 1, &ys, "y", &l->y));
  optic_node_id mx, mxb, zs, e, se, seb, lse, lseb, logp, ylogp, rows, loss_neg;
  TRY(reduce(b, l->f.logits, 1, true, "row_max", &mx));
  l->row_max = mx;
  TRY(bcast(b, mx, batch, C, 0, &mxb));
  TRY(optic_graph_binary(m, c, OPTIC_OP_SUBTRACT, l->f.logits, mxb, "shifted", &zs));
  TRY(optic_graph_unary(m, c, OPTIC_OP_EXPONENTIAL, zs, NULL, &e));
  TRY(reduce(b, e, 1, false, "row_sum", &se));
  TRY(bcast(b, se, batch, C, 0, &seb));
  TRY(optic_graph_unary(m, c, OPTIC_OP_LOG, se, NULL, &lse));
  TRY(bcast(b, lse, batch, C, 0, &lseb));
  TRY(optic_graph_binary(m, c, OPTIC_OP_SUBTRACT, zs, lseb, "log_softmax", &logp));
  TRY(optic_graph_binary(m, c, OPTIC_OP_DIVIDE, e, seb, "softmax", &l->softmax));
  TRY(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, l->y, logp, NULL, &ylogp));
  TRY(reduce(b, ylogp, 1, false, NULL, &rows));
  TRY(reduce(b, rows, 0, false, NULL, &loss_neg));
  TRY(optic_graph_unary(m, c, OPTIC_OP_NEGATE, loss_neg, "loss_sum", &l->loss));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

/* The gradients written by hand (--hand-gradients, for comparison):
 * d(loss_sum)/d(every parameter) times the seed parameter grad_scale. */
static optic_status hand_gradients(builder *b, const mlp_dims *d, int64_t batch, const loss_nodes *l,
                                   optic_node_id grad[MLP_PARAMS]) {
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
  TRY(param(b, MLP_PARAMS + 2, &scalar, "grad_scale", &seed));
  TRY(optic_graph_broadcast(m, c, seed, &ds, NULL, 0, NULL, &scale));
  TRY(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, diff, scale, "dlogits", &dpre));
  for (int k = MLP_LAYERS - 1; k >= 0; k--) {
    optic_node_id in = k == 0 ? l->f.x : l->f.act[k - 1];
    /* dW = in^T . dpre, db = column sums of dpre. */
    TRY(matmul(b, in, 0, dpre, 0, NULL, &grad[2 * k]));
    TRY(reduce(b, dpre, 0, false, NULL, &grad[2 * k + 1]));
    if (k == 0) break;
    /* d(in) = dpre . W^T, masked where the ReLU's input was <= 0. */
    optic_node_id din, zero, mask, dmasked;
    TRY(matmul(b, dpre, 1, l->f.p[2 * k], 1, NULL, &din));
    TRY(filled(b, 0.0f, batch, widths[k], &zero));
    TRY(optic_graph_compare(m, c, OPTIC_CMP_GT, l->f.pre[k - 1], zero, NULL, &mask));
    TRY(optic_graph_select(m, c, mask, din, zero, NULL, &dmasked));
    dpre = dmasked;
  }
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

/* The gradients by reverse-mode autodiff of the loss computation, seeded
 * with grad_scale: optic builds the value_and_grad computation (loss_sum,
 * dW1, ..., db3) in the module, and it becomes the entry. */
static optic_status autodiff_gradients(builder *b, const loss_nodes *l) {
  int32_t wrt[MLP_PARAMS];
  for (int i = 0; i < MLP_PARAMS; i++) wrt[i] = i;
  optic_grad_options go = optic_grad_options_default();
  go.seeded = true; /* parameter MLP_PARAMS + 2: the cotangent of loss_sum, i.e. grad_scale */
  go.name = "mlp_train_step";
  go.stop_gradient = &l->row_max; /* as jax.nn.log_softmax does: the shift adds nothing to the gradient */
  go.n_stop_gradient = 1;
  optic_comp_id g;
  TRY(optic_computation_set_root(b->m, b->comp, l->loss));
  TRY(optic_autodiff_value_and_grad(b->m, b->comp, wrt, MLP_PARAMS, &go, &g));
  TRY(optic_module_set_entry(b->m, g));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

optic_status mlp_build_train(const mlp_dims *d, int64_t batch, bool hand_written, optic_module_t **out) {
  builder b;
  loss_nodes l;
  optic_node_id outs[1 + MLP_PARAMS], root;
  *out = NULL;
  TRY(make_builder(hand_written ? "mlp_train_step" : "mlp_loss", &b));
  TRY(build_loss(&b, d, batch, &l));
  if (!hand_written) {
    TRY(autodiff_gradients(&b, &l));
  } else {
    TRY(hand_gradients(&b, d, batch, &l, outs + 1));
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
