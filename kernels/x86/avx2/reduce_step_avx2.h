/* The AVX2 reducers' two vector steps (kernels/reduce.h): folding a
 * value into a lane's accumulator (sum, sum of squares without FMA, product)
 * and joining two partial results. Shared by the contiguous, axis and column
 * kernels; FP contraction follows each including file's flags. */
#ifndef OPTIC_KERNELS_X86_AVX2_REDUCE_STEP_AVX2_H
#define OPTIC_KERNELS_X86_AVX2_REDUCE_STEP_AVX2_H

#include <immintrin.h>

#include "kernels/reduce_tree.h"

OPTIC_REDUCE_INLINE __m256 v_step(optic_reduce_op op, __m256 acc, __m256 v) {
  switch (op) {
    case OPTIC_REDUCE_SUMSQ: return _mm256_add_ps(acc, _mm256_mul_ps(v, v)); /* no fma: see reduce.h */
    case OPTIC_REDUCE_PROD: return _mm256_mul_ps(acc, v);
    default: return _mm256_add_ps(acc, v);
  }
}
OPTIC_REDUCE_INLINE __m256 v_join(optic_reduce_op op, __m256 a, __m256 b) {
  return op == OPTIC_REDUCE_PROD ? _mm256_mul_ps(a, b) : _mm256_add_ps(a, b);
}

#endif
