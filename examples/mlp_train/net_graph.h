/* net_graph: the graph-building helpers both of the example's models use
 * (mlp_model.c, conv_model.c): a module with f32 add/max reducers, f32
 * parameters, broadcasts, dot, reduce, the softmax cross-entropy loss and the
 * autodiff step that turns a loss computation into the training step. Uses
 * only the installed headers. */
#ifndef NET_GRAPH_H
#define NET_GRAPH_H

#include <optic/optic.h>

typedef struct builder {
  optic_module_t *m;
  optic_comp_id comp, add, max; /* the entry computation and the two reducers */
} builder;

/* A module named `name` with the reducers and an entry computation. */
optic_status net_builder(const char *name, builder *b);
/* f32 parameter `number` of shape s. */
optic_status net_param(builder *b, int32_t number, const optic_shape *s, const char *name, optic_node_id *out);
/* A scalar constant broadcast to rows x cols (cols 0: a vector of rows). */
optic_status net_filled(builder *b, float v, int64_t rows, int64_t cols, optic_node_id *out);
/* x contracted on x_dim with w's w_dim: dot_general with one contracting
 * pair, no batch dims. (1, 0) is x.w, (0, 0) is x^T.w, (1, 1) is x.w^T. */
optic_status net_matmul(builder *b, optic_node_id x, int32_t x_dim, optic_node_id w, int32_t w_dim, const char *name,
                        optic_node_id *out);
/* Sum (or max) of x over dimension dim. */
optic_status net_reduce(builder *b, optic_node_id x, int64_t dim, bool max, const char *name, optic_node_id *out);
/* v [n] broadcast along the other dimension of a [rows, cols] array: as
 * columns (v_dim 1: v has cols entries) or rows (v_dim 0: rows entries). */
optic_status net_bcast(builder *b, optic_node_id v, int64_t rows, int64_t cols, int64_t v_dim, optic_node_id *out);
/* x + bias (broadcast along x's last dimension), then max(., 0) when relu. */
optic_status net_bias_relu(builder *b, optic_node_id x, const optic_shape *xs, optic_node_id bias, bool relu,
                           optic_node_id *out);

/* The loss on logits [batch, classes]: log-softmax with the row max
 * subtracted, loss = -sum(y * logp) over the batch, y the one-hot labels
 * (parameter y_number, f32[batch, classes]). softmax is kept for a
 * hand-written backward pass; row_max is the log-softmax's shift, whose
 * gradient is exactly zero. */
typedef struct loss_nodes {
  optic_node_id y, softmax, loss, row_max;
} loss_nodes;
optic_status net_ce_loss(builder *b, optic_node_id logits, int64_t batch, int64_t classes, int32_t y_number,
                         loss_nodes *l);
/* Makes the loss the root and adds its value_and_grad computation (wrt
 * parameters 0 .. n_wrt-1, n_wrt <= 16, seeded by the parameter after y:
 * grad_scale) as the module's entry: its root is (loss, d parameter 0, ...). */
optic_status net_autodiff_step(builder *b, const loss_nodes *l, int32_t n_wrt, const char *name);

#endif /* NET_GRAPH_H */
