/* models: the MLP and the convnet as the training loop sees them
 * (mlp_trainer.h): parameter shapes and names, initialisation, graphs, data.
 * Everything else in the trainer is the same for both. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp_trainer.h"

static const char *const mlp_names[MLP_PARAMS] = {"param/W1", "param/b1", "param/W2",
                                                  "param/b2", "param/W3", "param/b3"};
static const char *const conv_names[CONV_PARAMS] = {"param/K1", "param/c1", "param/K2",
                                                    "param/c2", "param/W",  "param/b"};

enum { IMAGE_SIDE = 8, CLASSES = 10 };
static const double IMAGE_NOISE = 0.5; /* standard deviation; pattern entries are +-1 */

static void describe(model *md, const options *o) {
  md->kind = o->model;
  md->classes = CLASSES;
  if (o->model == MODEL_MLP) {
    md->dims = (mlp_dims){64, o->hidden, o->hidden, CLASSES};
    md->n = MLP_PARAMS, md->in = 64;
    for (int i = 0; i < md->n; i++) mlp_param_shape(&md->dims, i, &md->shape[i]), md->name[i] = mlp_names[i];
    snprintf(md->summary, sizeof md->summary, "MLP 64-%" PRId64 "-%" PRId64 "-10", o->hidden, o->hidden);
  } else {
    md->cdims = (conv_dims){IMAGE_SIDE, o->channels, 2 * o->channels, CLASSES};
    md->n = CONV_PARAMS, md->in = IMAGE_SIDE * IMAGE_SIDE;
    for (int i = 0; i < md->n; i++) conv_param_shape(&md->cdims, i, &md->shape[i]), md->name[i] = conv_names[i];
    snprintf(md->summary, sizeof md->summary,
             "convnet 8x8x1 conv3x3-%" PRId64 " conv3x3/2-%" PRId64 " global-maxpool dense-10", o->channels,
             2 * o->channels);
  }
}

void tensors_over(const model *md, float *base, optic_tensor *out) {
  size_t off = 0;
  for (int i = 0; i < md->n; i++) {
    optic_tensor_make(OPTIC_F32, &md->shape[i], base + off, &out[i]);
    off += md->count[i];
  }
}

void model_init(model *md, const options *o, uint64_t *rng) {
  describe(md, o);
  md->total = 0;
  for (int i = 0; i < md->n; i++) {
    optic_shape_elements(&md->shape[i], &md->count[i]);
    md->total += md->count[i];
  }
  md->params = calloc(md->total, sizeof(float));
  tensors_over(md, md->params, md->p);
  for (int i = 0; i < md->n; i++) { /* He init for weights (fan-in: all dims but the last), zero biases */
    const optic_shape *s = &md->shape[i];
    if (s->rank < 2) continue;
    int64_t fan_in = 1;
    for (int32_t k = 0; k + 1 < s->rank; k++) fan_in *= s->dims[k];
    double sd = sqrt(2.0 / (double)fan_in);
    float *w = md->p[i].data;
    for (size_t k = 0; k < md->count[i]; k++) w[k] = (float)(sd * rng_normal(rng));
  }
}

optic_status model_build(const model *md, int64_t batch, int64_t test_batch, bool hand_gradients,
                         optic_module_t **train, optic_module_t **forward) {
  *forward = NULL;
  optic_status st = md->kind == MODEL_MLP ? mlp_build_train(&md->dims, batch, hand_gradients, train)
                                          : conv_build_train(&md->cdims, batch, train);
  if (st != OPTIC_OK) return st;
  st = md->kind == MODEL_MLP ? mlp_build_forward(&md->dims, test_batch, forward)
                             : conv_build_forward(&md->cdims, test_batch, forward);
  if (st != OPTIC_OK) {
    optic_module_destroy(*train);
    *train = NULL;
  }
  return st;
}

void model_data(const model *md, uint64_t seed, int64_t n_train, int64_t n_test, dataset *train, dataset *test) {
  if (md->kind == MODEL_MLP) make_data(&md->dims, seed, n_train, n_test, train, test);
  else make_images(IMAGE_SIDE, CLASSES, IMAGE_NOISE, seed, n_train, n_test, train, test);
}
