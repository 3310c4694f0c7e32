/* NEON (AArch64 Advanced SIMD) f32 compare kernels: 16 floats per iteration
 * narrowed into 16 predicate bytes, then a scalar tail. Semantics as in
 * kernels/compare.h: FCMEQ/FCMGT/FCMGE are false on NaN, and NE is the
 * complement of EQ, so NaN != x is 1. */
#include <arm_neon.h>

#include "kernels/arm/neon/mask_bytes_neon.h"
#include "kernels/compare.h"

static inline uint32x4_t cmp_eq(float32x4_t a, float32x4_t b) { return vceqq_f32(a, b); }
static inline uint32x4_t cmp_ne(float32x4_t a, float32x4_t b) { return vmvnq_u32(vceqq_f32(a, b)); }
static inline uint32x4_t cmp_lt(float32x4_t a, float32x4_t b) { return vcltq_f32(a, b); }
static inline uint32x4_t cmp_le(float32x4_t a, float32x4_t b) { return vcleq_f32(a, b); }
static inline uint32x4_t cmp_gt(float32x4_t a, float32x4_t b) { return vcgtq_f32(a, b); }
static inline uint32x4_t cmp_ge(float32x4_t a, float32x4_t b) { return vcgeq_f32(a, b); }

#define NEON_VV(fn, CMP, OP1)                                            \
  void fn(size_t n, const float *a, const float *b, uint8_t *y) {        \
    size_t i = 0;                                                        \
    for (; i + 16 <= n; i += 16) {                                       \
      uint32x4_t m0 = CMP(vld1q_f32(a + i), vld1q_f32(b + i));           \
      uint32x4_t m1 = CMP(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));   \
      uint32x4_t m2 = CMP(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));   \
      uint32x4_t m3 = CMP(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12)); \
      optic_neon_store_mask_bytes16(y + i, m0, m1, m2, m3);              \
    }                                                                    \
    for (; i < n; i++) y[i] = (uint8_t)(a[i] OP1 b[i]);                  \
  }

#define NEON_VS(fn, CMP, OP1)                               \
  void fn(size_t n, const float *a, float s, uint8_t *y) {  \
    const float32x4_t vs = vdupq_n_f32(s);                  \
    size_t i = 0;                                           \
    for (; i + 16 <= n; i += 16) {                          \
      uint32x4_t m0 = CMP(vld1q_f32(a + i), vs);            \
      uint32x4_t m1 = CMP(vld1q_f32(a + i + 4), vs);        \
      uint32x4_t m2 = CMP(vld1q_f32(a + i + 8), vs);        \
      uint32x4_t m3 = CMP(vld1q_f32(a + i + 12), vs);       \
      optic_neon_store_mask_bytes16(y + i, m0, m1, m2, m3); \
    }                                                       \
    for (; i < n; i++) y[i] = (uint8_t)(a[i] OP1 s);        \
  }

NEON_VV(optic_f32_vcmpeq__neon, cmp_eq, ==)
NEON_VV(optic_f32_vcmpne__neon, cmp_ne, !=)
NEON_VV(optic_f32_vcmplt__neon, cmp_lt, <)
NEON_VV(optic_f32_vcmple__neon, cmp_le, <=)
NEON_VV(optic_f32_vcmpgt__neon, cmp_gt, >)
NEON_VV(optic_f32_vcmpge__neon, cmp_ge, >=)
NEON_VS(optic_f32_vcmpeqc__neon, cmp_eq, ==)
NEON_VS(optic_f32_vcmpnec__neon, cmp_ne, !=)
NEON_VS(optic_f32_vcmpltc__neon, cmp_lt, <)
NEON_VS(optic_f32_vcmplec__neon, cmp_le, <=)
NEON_VS(optic_f32_vcmpgtc__neon, cmp_gt, >)
NEON_VS(optic_f32_vcmpgec__neon, cmp_ge, >=)
