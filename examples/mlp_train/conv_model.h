/* conv_model: the example's small convnet, built with optic's public graph
 * API. x f32[batch, side*side] is read as single-channel side x side images
 * (NHWC); conv 3x3 (1 -> c1 channels, padding 1) + bias + ReLU; conv 3x3
 * stride 2 (c1 -> c2, padding 1) + bias + ReLU; global max-pool over the
 * side/2 x side/2 positions (a reduce); dense c2 -> classes; softmax
 * cross-entropy. Same parameter order and training-graph contract as
 * mlp_model.h: K1 c1 K2 c2 W b, x, y, grad_scale -> (loss_sum, dK1, dc1, dK2,
 * dc2, dW, db); the gradients come from optic_autodiff_value_and_grad (there
 * is no hand-written backward pass). */
#ifndef CONV_MODEL_H
#define CONV_MODEL_H

#include <optic/optic.h>

#define CONV_PARAMS 6 /* K1 c1 K2 c2 W b */

typedef struct conv_dims {
  int64_t side, c1, c2, classes; /* side even */
} conv_dims;

/* Shape of parameter i: K [3, 3, in, out] (HWIO), c [out], W [c2, classes],
 * b [classes]. */
void conv_param_shape(const conv_dims *d, int i, optic_shape *out);

/* Training graph for a shard of `batch` images (see mlp_build_train). */
optic_status conv_build_train(const conv_dims *d, int64_t batch, optic_module_t **out);
/* Forward graph: K1 c1 K2 c2 W b x -> logits f32[batch, classes]. */
optic_status conv_build_forward(const conv_dims *d, int64_t batch, optic_module_t **out);

#endif /* CONV_MODEL_H */
