/* mlp_data: the example's data set, generated (no download): a fixed random
 * teacher network labels Gaussian inputs, samples near a class boundary are
 * redrawn, so the classes are separable with a margin. Deterministic for a
 * seed on every host (splitmix64 + double math). */
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
void dataset_free(dataset *ds);

#endif /* MLP_DATA_H */
