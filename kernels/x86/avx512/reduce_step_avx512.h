/* The AVX-512 reducers' two vector steps (kernels/reduce.h): folding a
 * value into a lane's accumulator (sum, sum of squares without FMA, product)
 * and joining two partial results. Shared by the contiguous, axis and column
 * kernels; FP contraction follows each including file's flags. */
#ifndef OPTIC_KERNELS_X86_AVX512_REDUCE_STEP_AVX512_H
#define OPTIC_KERNELS_X86_AVX512_REDUCE_STEP_AVX512_H

#include <immintrin.h>

#include "kernels/reduce_tree.h"

OPTIC_REDUCE_INLINE __m512 v_step(optic_reduce_op op, __m512 acc, __m512 v) {
  switch (op) {
    case OPTIC_REDUCE_SUMSQ: return _mm512_add_ps(acc, _mm512_mul_ps(v, v)); /* no fma: see reduce.h */
    case OPTIC_REDUCE_PROD: return _mm512_mul_ps(acc, v);
    default: return _mm512_add_ps(acc, v);
  }
}
OPTIC_REDUCE_INLINE __m512 v_join(optic_reduce_op op, __m512 a, __m512 b) {
  return op == OPTIC_REDUCE_PROD ? _mm512_mul_ps(a, b) : _mm512_add_ps(a, b);
}

#endif
