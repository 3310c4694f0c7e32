/* NEON (AArch64 Advanced SIMD) contiguous reductions: a leaf is up to 16 steps
 * of 16 vectors (lanes 4q..4q+3 of kernels/reduce.h's order); a tail shorter
 * than a vector is copied into an identity-filled vector, never over-read, so
 * results are bitwise the scalar kernel's. */
#include <arm_neon.h>
#include <math.h>

#include "kernels/reduce_tree.h"

/* The first r floats of p (all four when r >= 4), fill in the other lanes. */
static inline float32x4_t load_first(const float *p, size_t r, float fill) {
  if (r >= 4) return vld1q_f32(p);
  float t[4] = {fill, fill, fill, fill};
  for (size_t j = 0; j < r; j++) t[j] = p[j];
  return vld1q_f32(t);
}

/* vmulq + vaddq, never vfmaq: see reduce.h (GCC does not contract separate
 * intrinsics under ISO C's default -ffp-contract=off). */
OPTIC_REDUCE_INLINE float32x4_t v_step(optic_reduce_op op, float32x4_t acc, float32x4_t v) {
  switch (op) {
    case OPTIC_REDUCE_SUMSQ: return vaddq_f32(acc, vmulq_f32(v, v));
    case OPTIC_REDUCE_PROD: return vmulq_f32(acc, v);
    default: return vaddq_f32(acc, v);
  }
}
OPTIC_REDUCE_INLINE float32x4_t v_join(optic_reduce_op op, float32x4_t a, float32x4_t b) {
  return op == OPTIC_REDUCE_PROD ? vmulq_f32(a, b) : vaddq_f32(a, b);
}

OPTIC_REDUCE_INLINE float leaf(optic_reduce_op op, size_t n, const float *x) {
  const float id1 = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  const float32x4_t id = vdupq_n_f32(id1);
  float32x4_t a[16];
  for (int q = 0; q < 16; q++) a[q] = id;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int q = 0; q < 16; q++) a[q] = v_step(op, a[q], vld1q_f32(x + i + 4 * q));
  }
  if (i < n) {
    const size_t r = n - i;
    for (int q = 0; q < 16; q++) {
      if (r > (size_t)(4 * q)) a[q] = v_step(op, a[q], load_first(x + i + 4 * q, r - (size_t)(4 * q), id1));
    }
  }
  /* lanes l + 32, l + 16, l + 8, l + 4, then within a vector l + 2, l + 1 */
  for (int q = 0; q < 8; q++) a[q] = v_join(op, a[q], a[q + 8]);
  for (int q = 0; q < 4; q++) a[q] = v_join(op, a[q], a[q + 4]);
  for (int q = 0; q < 2; q++) a[q] = v_join(op, a[q], a[q + 2]);
  const float32x4_t v = v_join(op, a[0], a[1]);
  const float32x2_t lo = vget_low_f32(v), hi = vget_high_f32(v);
  const float32x2_t h = op == OPTIC_REDUCE_PROD ? vmul_f32(lo, hi) : vadd_f32(lo, hi);
  return optic_reduce_tree_op(op, vget_lane_f32(h, 0), vget_lane_f32(h, 1));
}

OPTIC_REDUCE_INLINE float reduce_tree(optic_reduce_op op, size_t n, const float *x) {
  optic_reduce_tree t;
  t.count = 0;
  t.depth = 0;
  for (size_t i = 0; i < n; i += OPTIC_REDUCE_BLOCK) {
    const size_t len = n - i < OPTIC_REDUCE_BLOCK ? n - i : OPTIC_REDUCE_BLOCK;
    optic_reduce_tree_push(op, &t, leaf(op, len, x + i));
  }
  return optic_reduce_tree_root(op, &t);
}

float optic_f32_rsum__neon(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUM, n, x); }
float optic_f32_rsumsq__neon(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUMSQ, n, x); }
float optic_f32_rprod__neon(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_PROD, n, x); }

/* FMAX/FMIN return NaN when either operand is NaN, so a NaN anywhere makes
 * the result NaN; optic_reduce_extremum_bits then returns the fold's bits
 * (first NaN, sign of a zero extremum). */
OPTIC_REDUCE_INLINE float32x4_t v_ext(bool is_max, float32x4_t a, float32x4_t b) {
  return is_max ? vmaxq_f32(a, b) : vminq_f32(a, b);
}

OPTIC_REDUCE_INLINE float extremum(bool is_max, size_t n, const float *x) {
  const float id1 = is_max ? -INFINITY : INFINITY;
  const float32x4_t id = vdupq_n_f32(id1);
  float32x4_t a0 = id, a1 = id, a2 = id, a3 = id;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = v_ext(is_max, a0, vld1q_f32(x + i));
    a1 = v_ext(is_max, a1, vld1q_f32(x + i + 4));
    a2 = v_ext(is_max, a2, vld1q_f32(x + i + 8));
    a3 = v_ext(is_max, a3, vld1q_f32(x + i + 12));
  }
  for (; i < n; i += 4) a0 = v_ext(is_max, a0, load_first(x + i, n - i, id1));
  const float32x4_t v = v_ext(is_max, v_ext(is_max, a0, a1), v_ext(is_max, a2, a3));
  const float m = is_max ? vmaxvq_f32(v) : vminvq_f32(v);
  return optic_reduce_extremum_bits(m, m != m, n, x);
}

float optic_f32_rmax__neon(size_t n, const float *x) { return extremum(true, n, x); }
float optic_f32_rmin__neon(size_t n, const float *x) { return extremum(false, n, x); }
