/* mlp_data: the example's data sets, generated (no download). For the MLP a
 * fixed random teacher network labels Gaussian inputs, samples near a class
 * boundary are redrawn, so the classes are separable with a margin; for the
 * convnet (conv_data.c) each image holds one of `classes` random 3x3 patterns
 * at a random place, in noise. Deterministic for a seed on every host
 * (splitmix64 + double math). */
#ifndef MLP_DATA_H
#define MLP_DATA_H

#include <stdint.h>

#include "mlp_model.h"

/* splitmix64 */
uint64_t rng_next(uint64_t *s);
double rng_uniform(uint64_t *s);
double rng_normal(uint64_t *s);

typedef struct dataset {
  int64_t n;
  float *x; /* n x in */
  int *label;
} dataset;

/* Teacher: label = argmax(tanh(x T1) T2), T1 [in, 16], T2 [16, classes]. */
void make_data(const mlp_dims *d, uint64_t seed, int64_t n_train, int64_t n_test, dataset *train, dataset *test);
/* Images side x side (row-major, one channel): Gaussian noise of standard
 * deviation `noise` plus pattern[label] (3x3, entries +-1, fixed by the seed,
 * any two differing in >= 3 entries) added at a uniformly random offset. */
void make_images(int64_t side, int64_t classes, double noise, uint64_t seed, int64_t n_train, int64_t n_test,
                 dataset *train, dataset *test);
void dataset_free(dataset *ds);

#endif /* MLP_DATA_H */
