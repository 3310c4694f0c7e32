/* NEON axis reductions ([outer, r, inner] -> [outer, inner]): tiles of 16
 * columns (4 vectors), then 4-column tiles (the last copied through an
 * identity-filled vector, never over-read or over-written), walking k row by
 * row in the evaluation order of kernels/reduce.h: bitwise the scalar kernel's. */
#include <arm_neon.h>
#include <math.h>

#include "kernels/reduce_tree.h"

static inline float32x4_t load_first(const float *p, size_t w, float fill) {
  if (w >= 4) return vld1q_f32(p);
  float t[4] = {fill, fill, fill, fill};
  for (size_t j = 0; j < w; j++) t[j] = p[j];
  return vld1q_f32(t);
}
static inline void store_first(float *p, size_t w, float32x4_t v) {
  if (w >= 4) {
    vst1q_f32(p, v);
    return;
  }
  float t[4];
  vst1q_f32(t, v);
  for (size_t j = 0; j < w; j++) p[j] = t[j];
}

/* vmulq + vaddq, never vfmaq: see reduce.h. */
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
/* The binary family's max/min by compare + select: FMAX would turn a NaN into
 * the default NaN and return +0 for max(-0, +0). */
OPTIC_REDUCE_INLINE float32x4_t v_fold(bool is_max, float32x4_t a, float32x4_t b) {
  const float32x4_t r = vbslq_f32(is_max ? vcgtq_f32(a, b) : vcltq_f32(a, b), a, b);
  return vbslq_f32(vceqq_f32(a, a), r, a);
}

/* 16 columns from x (row stride inner) into y, tree ops. */
OPTIC_REDUCE_INLINE void tree_cols16(optic_reduce_op op, size_t r, size_t inner, const float *x, float *y) {
  const float32x4_t id = vdupq_n_f32(op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f);
  float32x4_t level[OPTIC_REDUCE_TREE_LEVELS][4];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_AXIS_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_AXIS_BLOCK ? r - k0 : OPTIC_REDUCE_AXIS_BLOCK;
    float32x4_t a0 = id, a1 = id, a2 = id, a3 = id;
    for (size_t k = k0; k < k0 + kn; k++) {
      const float *row = x + k * inner;
      a0 = v_step(op, a0, vld1q_f32(row));
      a1 = v_step(op, a1, vld1q_f32(row + 4));
      a2 = v_step(op, a2, vld1q_f32(row + 8));
      a3 = v_step(op, a3, vld1q_f32(row + 12));
    }
    for (size_t c = count++; c & 1; c >>= 1) {
      depth--;
      a0 = v_join(op, level[depth][0], a0);
      a1 = v_join(op, level[depth][1], a1);
      a2 = v_join(op, level[depth][2], a2);
      a3 = v_join(op, level[depth][3], a3);
    }
    level[depth][0] = a0, level[depth][1] = a1, level[depth][2] = a2, level[depth][3] = a3;
    depth++;
  }
  unsigned d = depth - 1; /* r > 0: there is at least one leaf */
  float32x4_t a0 = level[d][0], a1 = level[d][1], a2 = level[d][2], a3 = level[d][3];
  while (d-- > 0) {
    a0 = v_join(op, level[d][0], a0);
    a1 = v_join(op, level[d][1], a1);
    a2 = v_join(op, level[d][2], a2);
    a3 = v_join(op, level[d][3], a3);
  }
  vst1q_f32(y, a0);
  vst1q_f32(y + 4, a1);
  vst1q_f32(y + 8, a2);
  vst1q_f32(y + 12, a3);
}

/* The first w (<= 4) columns from x into y, tree ops. */
OPTIC_REDUCE_INLINE void tree_cols4(optic_reduce_op op, size_t r, size_t inner, size_t w, const float *x, float *y) {
  const float id1 = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  float32x4_t level[OPTIC_REDUCE_TREE_LEVELS];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_AXIS_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_AXIS_BLOCK ? r - k0 : OPTIC_REDUCE_AXIS_BLOCK;
    float32x4_t a = vdupq_n_f32(id1);
    for (size_t k = k0; k < k0 + kn; k++) a = v_step(op, a, load_first(x + k * inner, w, id1));
    for (size_t c = count++; c & 1; c >>= 1) a = v_join(op, level[--depth], a);
    level[depth++] = a;
  }
  unsigned d = depth - 1;
  float32x4_t a = level[d];
  while (d-- > 0) a = v_join(op, level[d], a);
  store_first(y, w, a);
}

OPTIC_REDUCE_INLINE void fold_cols16(bool is_max, size_t r, size_t inner, const float *x, float *y) {
  const float32x4_t id = vdupq_n_f32(is_max ? -INFINITY : INFINITY);
  float32x4_t a0 = id, a1 = id, a2 = id, a3 = id;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * inner;
    a0 = v_fold(is_max, a0, vld1q_f32(row));
    a1 = v_fold(is_max, a1, vld1q_f32(row + 4));
    a2 = v_fold(is_max, a2, vld1q_f32(row + 8));
    a3 = v_fold(is_max, a3, vld1q_f32(row + 12));
  }
  vst1q_f32(y, a0);
  vst1q_f32(y + 4, a1);
  vst1q_f32(y + 8, a2);
  vst1q_f32(y + 12, a3);
}

OPTIC_REDUCE_INLINE void fold_cols4(bool is_max, size_t r, size_t inner, size_t w, const float *x, float *y) {
  const float id1 = is_max ? -INFINITY : INFINITY;
  float32x4_t a = vdupq_n_f32(id1);
  for (size_t k = 0; k < r; k++) a = v_fold(is_max, a, load_first(x + k * inner, w, id1));
  store_first(y, w, a);
}

OPTIC_REDUCE_INLINE void reduce_axis(optic_reduce_op op, size_t outer, size_t r, size_t inner, const float *x,
                                     float *y) {
  const bool fold = op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN;
  if (r == 0) { /* x may be empty: form no pointers into it */
    const float id = optic_reduce_identity(op);
    for (size_t j = 0; j < outer * inner; j++) y[j] = id;
    return;
  }
  for (size_t o = 0; o < outer; o++) {
    const float *xo = x + o * r * inner;
    float *yo = y + o * inner;
    size_t i = 0;
    for (; i + 16 <= inner; i += 16) {
      if (fold) {
        fold_cols16(op == OPTIC_REDUCE_MAX, r, inner, xo + i, yo + i);
      } else {
        tree_cols16(op, r, inner, xo + i, yo + i);
      }
    }
    for (; i < inner; i += 4) {
      if (fold) {
        fold_cols4(op == OPTIC_REDUCE_MAX, r, inner, inner - i, xo + i, yo + i);
      } else {
        tree_cols4(op, r, inner, inner - i, xo + i, yo + i);
      }
    }
  }
}

void optic_f32_rdsum__neon(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUM, outer, r, inner, x, y);
}
void optic_f32_rdmax__neon(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MAX, outer, r, inner, x, y);
}
void optic_f32_rdmin__neon(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MIN, outer, r, inner, x, y);
}
void optic_f32_rdprod__neon(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_PROD, outer, r, inner, x, y);
}
void optic_f32_rdsumsq__neon(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUMSQ, outer, r, inner, x, y);
}
