/* conv_model: the convnet's training and forward graphs (see conv_model.h):
 * the forward pass (build_forward) and the loss (net_ce_loss) are built once;
 * the gradients, including the convolutions' and the max-pool's, come from
 * optic's autodiff (net_autodiff_step). */
#include "conv_model.h"

#include <math.h>
#include <string.h>

#include "net_graph.h"

#define TRY(call)                   \
  do {                              \
    optic_status st_ = (call);      \
    if (st_ != OPTIC_OK) goto fail; \
  } while (0)

void conv_param_shape(const conv_dims *d, int i, optic_shape *out) {
  const int64_t dims[CONV_PARAMS][4] = {{3, 3, 1, d->c1},    {d->c1},     {3, 3, d->c1, d->c2}, {d->c2},
                                        {d->c2, d->classes}, {d->classes}};
  static const int32_t ranks[CONV_PARAMS] = {4, 1, 4, 1, 2, 1};
  optic_shape_make(ranks[i], dims[i], out);
}

static void shape4(int64_t a, int64_t b, int64_t c, int64_t e, optic_shape *out) {
  const int64_t dims[4] = {a, b, c, e};
  optic_shape_make(4, dims, out);
}

/* conv 3x3, padding 1, NHWC x HWIO -> NHWC (ys: its output shape), + bias, ReLU. */
static optic_status conv_relu(builder *b, optic_node_id x, optic_node_id k, optic_node_id bias, int64_t stride,
                              const optic_shape *ys, optic_node_id *out) {
  optic_window_dim w[2];
  for (int s = 0; s < 2; s++)
    w[s] = (optic_window_dim){
        .size = 3, .stride = stride, .pad_low = 1, .pad_high = 1, .base_dilation = 1, .window_dilation = 1};
  optic_node_id y;
  TRY(optic_graph_convolution(b->m, b->comp, x, k, "b01f_01io->b01f", w, 1, 1, NULL, &y));
  TRY(net_bias_relu(b, y, ys, bias, true, out));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

/* Global max-pool: the max of NHWC x over its two spatial dims -> [N, C]. */
static optic_status global_max_pool(builder *b, optic_node_id x, optic_node_id *out) {
  optic_shape scalar;
  optic_shape_make(0, NULL, &scalar);
  const float init = -INFINITY;
  const int64_t dims[2] = {1, 2};
  optic_node_id c;
  TRY(optic_graph_constant(b->m, b->comp, OPTIC_F32, &scalar, &init, sizeof init, NULL, &c));
  TRY(optic_graph_reduce(b->m, b->comp, &x, &c, 1, dims, 2, b->max, "max_pool", out));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

static optic_status build_forward(builder *b, const conv_dims *d, int64_t batch, optic_node_id *logits) {
  static const char *names[CONV_PARAMS] = {"K1", "c1", "K2", "c2", "W", "b"};
  const int64_t S = d->side, H = S / 2;
  optic_node_id p[CONV_PARAMS], x, img, a1, a2, pooled, mm;
  optic_shape s, img_s, a1_s, a2_s, out_s;
  for (int i = 0; i < CONV_PARAMS; i++) {
    conv_param_shape(d, i, &s);
    TRY(net_param(b, i, &s, names[i], &p[i]));
  }
  const int64_t xd[2] = {batch, S * S}, od[2] = {batch, d->classes};
  optic_shape_make(2, xd, &s);
  optic_shape_make(2, od, &out_s);
  shape4(batch, S, S, 1, &img_s);
  shape4(batch, S, S, d->c1, &a1_s);
  shape4(batch, H, H, d->c2, &a2_s);
  TRY(net_param(b, CONV_PARAMS, &s, "x", &x));
  TRY(optic_graph_reshape(b->m, b->comp, x, &img_s, "images", &img));
  TRY(conv_relu(b, img, p[0], p[1], 1, &a1_s, &a1));
  TRY(conv_relu(b, a1, p[2], p[3], 2, &a2_s, &a2));
  TRY(global_max_pool(b, a2, &pooled));
  TRY(net_matmul(b, pooled, 1, p[4], 0, NULL, &mm));
  TRY(net_bias_relu(b, mm, &out_s, p[5], false, logits));
  return OPTIC_OK;
fail:
  return optic_last_error_status();
}

optic_status conv_build_forward(const conv_dims *d, int64_t batch, optic_module_t **out) {
  builder b;
  optic_node_id logits;
  *out = NULL;
  TRY(net_builder("conv_forward", &b));
  TRY(build_forward(&b, d, batch, &logits));
  TRY(optic_computation_set_root(b.m, b.comp, logits));
  *out = b.m;
  return OPTIC_OK;
fail:
  optic_module_destroy(b.m);
  return optic_last_error_status();
}

optic_status conv_build_train(const conv_dims *d, int64_t batch, optic_module_t **out) {
  builder b;
  optic_node_id logits;
  loss_nodes l;
  *out = NULL;
  TRY(net_builder("conv_loss", &b));
  TRY(build_forward(&b, d, batch, &logits));
  TRY(net_ce_loss(&b, logits, batch, d->classes, CONV_PARAMS + 1, &l));
  TRY(net_autodiff_step(&b, &l, CONV_PARAMS, "conv_train_step"));
  *out = b.m;
  return OPTIC_OK;
fail:
  optic_module_destroy(b.m);
  return optic_last_error_status();
}
