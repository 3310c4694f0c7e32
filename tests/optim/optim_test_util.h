/* Shared by the optimizer-layer tests: tensors of odd shapes with float data
 * for the library and double copies for the naive references, and the
 * relative-error metric. Header-only, test code. */
#ifndef OPTIC_TESTS_OPTIM_TEST_UTIL_H
#define OPTIC_TESTS_OPTIM_TEST_UTIL_H

#include <math.h>
#include <optic/optim.h>

#include "tests/kernels/kernel_test.h"

/* Odd shapes, the last larger than one work block (65536 elements), so a
 * tensor spans several blocks and the trust-ratio and norm sums combine
 * blocks. */
#define OT_NTENSORS 5
static const int32_t ot_ranks[OT_NTENSORS] = {1, 1, 2, 3, 1};
static const int64_t ot_dims[OT_NTENSORS][3] = {{1}, {37}, {5, 13}, {3, 7, 11}, {65536 + 77}};

typedef struct ot_tensors {
  size_t count;
  optic_shape shapes[OT_NTENSORS];
  size_t n[OT_NTENSORS];
  float *p[OT_NTENSORS], *g[OT_NTENSORS];
  optic_tensor tp[OT_NTENSORS], tg[OT_NTENSORS];
} ot_tensors;

static inline void ot_tensors_make(ot_tensors *t, size_t count) {
  t->count = count;
  for (size_t i = 0; i < count; i++) {
    optic_shape_make(ot_ranks[i], ot_dims[i], &t->shapes[i]);
    optic_shape_elements(&t->shapes[i], &t->n[i]);
    t->p[i] = calloc(t->n[i], sizeof(float));
    t->g[i] = calloc(t->n[i], sizeof(float));
    if (!t->p[i] || !t->g[i]) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
    optic_tensor_make(OPTIC_F32, &t->shapes[i], t->p[i], &t->tp[i]);
    optic_tensor_make(OPTIC_F32, &t->shapes[i], t->g[i], &t->tg[i]);
  }
}

static inline void ot_tensors_free(ot_tensors *t) {
  for (size_t i = 0; i < t->count; i++) {
    free(t->p[i]);
    free(t->g[i]);
  }
}

/* Deterministic gradient of tensor i at step `step` for seed: uniform in
 * [-1, 1), the same whichever run asks for it. */
static inline void ot_grad(uint64_t seed, uint64_t step, size_t i, float *g, size_t n) {
  kt_rng r = {.s = seed * 1000003u + step * 7919u + i * 104729u + 1u};
  for (size_t e = 0; e < n; e++) g[e] = kt_uniform(&r, -1.0f, 1.0f);
}

/* Scaled error of got against ref over a buffer: max over elements of
 * |got − ref| / max(|ref|, floor), floor = 0.25·max(1, max |ref|): relative
 * error for elements at least a quarter of the buffer's scale, absolute
 * (relative to the scale) below it, as in tests/kernels/test_optim.c. */
static inline double ot_scaled_error(const float *got, const double *ref, size_t n) {
  double scale = 1.0;
  for (size_t e = 0; e < n; e++) scale = fmax(scale, fabs(ref[e]));
  const double floor_ = 0.25 * scale;
  double worst = 0.0;
  for (size_t e = 0; e < n; e++) {
    double err = fabs((double)got[e] - ref[e]) / fmax(fabs(ref[e]), floor_);
    if (!(err <= worst)) worst = isnan(err) ? INFINITY : err;
  }
  return worst;
}

#endif
