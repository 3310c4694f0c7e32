/* mlp_data: generated teacher-labelled classification data (mlp_data.h). */
#include "mlp_data.h"

#include <math.h>
#include <stdlib.h>

uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }
double rng_normal(uint64_t *s) {
  double u = rng_uniform(s), v = rng_uniform(s);
  return sqrt(-2.0 * log(u + 0x1.0p-60)) * cos(6.283185307179586 * v);
}

void make_data(const mlp_dims *d, uint64_t seed, int64_t n_train, int64_t n_test, dataset *train, dataset *test) {
  enum { TH = 16 };
  const double MARGIN = 0.5;
  uint64_t s = seed ^ 0x7465616368657221ull;
  double *t1 = malloc(sizeof(double) * (size_t)(d->in * TH));
  double *t2 = malloc(sizeof(double) * (size_t)(TH * d->classes));
  for (int64_t i = 0; i < d->in * TH; i++) t1[i] = rng_normal(&s) / sqrt((double)d->in);
  for (int64_t i = 0; i < TH * d->classes; i++) t2[i] = rng_normal(&s);
  dataset *sets[2] = {train, test};
  int64_t sizes[2] = {n_train, n_test};
  for (int k = 0; k < 2; k++) {
    dataset *ds = sets[k];
    ds->n = sizes[k];
    ds->x = malloc(sizeof(float) * (size_t)(ds->n * d->in));
    ds->label = malloc(sizeof(int) * (size_t)ds->n);
    for (int64_t r = 0; r < ds->n; r++) {
      float *x = ds->x + r * d->in;
      for (int64_t j = 0; j < d->in; j++) x[j] = (float)rng_normal(&s);
      double h[TH], best = -1e300, second = -1e300;
      for (int q = 0; q < TH; q++) {
        double a = 0;
        for (int64_t j = 0; j < d->in; j++) a += (double)x[j] * t1[j * TH + q];
        h[q] = tanh(a);
      }
      for (int64_t cl = 0; cl < d->classes; cl++) {
        double a = 0;
        for (int q = 0; q < TH; q++) a += h[q] * t2[q * d->classes + cl];
        if (a > best) second = best, best = a, ds->label[r] = (int)cl;
        else if (a > second) second = a;
      }
      if (best - second < MARGIN) r--; /* draw again: too close to a class boundary */
    }
  }
  free(t1);
  free(t2);
}

void dataset_free(dataset *ds) {
  free(ds->x);
  free(ds->label);
  ds->x = NULL;
  ds->label = NULL;
}
