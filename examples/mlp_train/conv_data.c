/* conv_data: generated pattern images for the convnet (mlp_data.h). */
#include <stdlib.h>

#include "mlp_data.h"

enum { PK = 3, PN = PK * PK }; /* pattern side, entries */

/* classes patterns of +-1, each differing from every earlier one in >= 3 entries. */
static void make_patterns(int64_t classes, uint64_t *s, double *pat) {
  for (int64_t c = 0; c < classes; c++) {
    int far;
    do {
      for (int i = 0; i < PN; i++) pat[c * PN + i] = rng_next(s) >> 63 ? 1.0 : -1.0;
      far = 1;
      for (int64_t e = 0; e < c && far; e++) {
        int diff = 0;
        for (int i = 0; i < PN; i++) diff += (pat[c * PN + i] > 0) != (pat[e * PN + i] > 0);
        far = diff >= 3;
      }
    } while (!far);
  }
}

static void draw_image(int64_t side, int64_t classes, double noise, const double *pat, uint64_t *s, float *x,
                       int *label) {
  const int64_t span = side - PK + 1;
  const int c = (int)(rng_next(s) % (uint64_t)classes);
  const int64_t r0 = (int64_t)(rng_next(s) % (uint64_t)span), c0 = (int64_t)(rng_next(s) % (uint64_t)span);
  for (int64_t i = 0; i < side * side; i++) x[i] = (float)(noise * rng_normal(s));
  for (int64_t i = 0; i < PK; i++)
    for (int64_t j = 0; j < PK; j++) x[(r0 + i) * side + c0 + j] += (float)pat[c * PN + i * PK + j];
  *label = c;
}

void make_images(int64_t side, int64_t classes, double noise, uint64_t seed, int64_t n_train, int64_t n_test,
                 dataset *train, dataset *test) {
  uint64_t s = seed ^ 0x7061747465726e73ull;
  double *pat = malloc(sizeof(double) * (size_t)(classes * PN));
  make_patterns(classes, &s, pat);
  dataset *sets[2] = {train, test};
  const int64_t sizes[2] = {n_train, n_test};
  for (int k = 0; k < 2; k++) {
    dataset *ds = sets[k];
    ds->n = sizes[k];
    ds->x = malloc(sizeof(float) * (size_t)(ds->n * side * side));
    ds->label = malloc(sizeof(int) * (size_t)ds->n);
    for (int64_t r = 0; r < ds->n; r++)
      draw_image(side, classes, noise, pat, &s, ds->x + r * side * side, &ds->label[r]);
  }
  free(pat);
}
