/* mlp_model: builds the MLP's graphs with optic's public graph API: the
 * training graph (forward, softmax cross-entropy, and its gradients by
 * autodiff) and the forward-only graph for evaluation. Uses only the
 * installed headers, so the example builds from an install tree alone. */
#ifndef MLP_MODEL_H
#define MLP_MODEL_H

#include <optic/optic.h>

#define MLP_LAYERS 3
#define MLP_PARAMS (2 * MLP_LAYERS) /* W1 b1 W2 b2 W3 b3 */

typedef struct mlp_dims {
  int64_t in, hidden1, hidden2, classes;
} mlp_dims;

/* Shape of parameter i (W: [fan_in, fan_out], b: [fan_out]). */
void mlp_param_shape(const mlp_dims *d, int i, optic_shape *out);
size_t mlp_param_count(const mlp_dims *d, int i);

/* Training graph for a shard of `batch` samples. Parameters (in order):
 * W1 b1 W2 b2 W3 b3, x f32[batch,in], y f32[batch,classes] (one-hot),
 * grad_scale f32[]. Root: tuple(loss_sum f32[], dW1, db1, dW2, db2, dW3, db3)
 * where loss_sum is the shard's summed cross-entropy and the gradients are
 * of loss_sum * grad_scale (grad_scale = 1 / global batch, so the shards'
 * gradients add up to the global mean's). The gradients come from
 * optic_autodiff_value_and_grad (seeded with grad_scale), or from the
 * hand-written backward pass when hand_written. */
optic_status mlp_build_train(const mlp_dims *d, int64_t batch, bool hand_written, optic_module_t **out);
/* Forward graph: W1 b1 W2 b2 W3 b3 x -> logits f32[batch,classes]. */
optic_status mlp_build_forward(const mlp_dims *d, int64_t batch, optic_module_t **out);

#endif /* MLP_MODEL_H */
