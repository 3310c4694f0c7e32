/* NEON f32 <-> bf16/f16 conversion kernels: the integer bit arithmetic of
 * core/half.h on 4 lanes (every case computed, one selected by masks),
 * bitwise the scalar converter's, FTZ or not; the last n mod 4 elements go
 * through core/half.h itself (nothing past n is touched). The FCVTN/BFCVTN
 * instructions are not used: BFCVTN needs the BF16 extension, and both
 * follow FPCR (flush-to-zero), which the scalar converter does not.
 * Semantics as in kernels/convert.h. */
#include <arm_neon.h>

#include "core/half.h"
#include "kernels/convert.h"

static inline uint32x4_t set1u(uint32_t v) { return vdupq_n_u32(v); }

static inline uint16x4_t f32_bf16_4(float32x4_t x) {
  const uint32x4_t b = vreinterpretq_u32_f32(x);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(b, 16), set1u(1));
  const uint32x4_t r = vshrq_n_u32(vaddq_u32(vaddq_u32(b, set1u(0x7FFF)), lsb), 16);
  const uint32x4_t nan = vcgtq_u32(vandq_u32(b, set1u(0x7FFFFFFF)), set1u(0x7F800000));
  return vmovn_u32(vbslq_u32(nan, vorrq_u32(vshrq_n_u32(b, 16), set1u(0x0040)), r));
}

static inline float32x4_t bf16_f32_4(uint16x4_t h) { return vreinterpretq_f32_u32(vshll_n_u16(h, 16)); }

static inline uint16x4_t f32_f16_4(float32x4_t x) {
  const uint32x4_t b = vreinterpretq_u32_f32(x), a = vandq_u32(b, set1u(0x7FFFFFFF));
  const uint32x4_t sign = vandq_u32(vshrq_n_u32(b, 16), set1u(0x8000));
  const uint32x4_t sub =
      vreinterpretq_u32_s32(vcvtnq_s32_f32(vmulq_f32(vreinterpretq_f32_u32(a), vdupq_n_f32(0x1p24f))));
  const uint32x4_t an = vsubq_u32(a, set1u(0x38000000));
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(an, 13), set1u(1));
  const uint32x4_t normal = vshrq_n_u32(vaddq_u32(vaddq_u32(an, set1u(0x0FFF)), lsb), 13);
  const uint32x4_t nan = vorrq_u32(set1u(0x7E00), vandq_u32(vshrq_n_u32(a, 13), set1u(0x1FF)));
  uint32x4_t r = vbslq_u32(vcgeq_u32(a, set1u(0x38800000)), normal, sub);
  r = vbslq_u32(vcgeq_u32(a, set1u(0x477FF000)), set1u(0x7C00), r);
  r = vbslq_u32(vcgtq_u32(a, set1u(0x7F800000)), nan, r);
  return vmovn_u32(vorrq_u32(r, sign));
}

static inline float32x4_t f16_f32_4(uint16x4_t h16) {
  const uint32x4_t h = vmovl_u16(h16), em = vandq_u32(h, set1u(0x7FFF));
  const uint32x4_t sign = vshlq_n_u32(vandq_u32(h, set1u(0x8000)), 16);
  const uint32x4_t sub = vreinterpretq_u32_f32(vmulq_f32(vcvtq_f32_u32(em), vdupq_n_f32(0x1p-24f)));
  const uint32x4_t sh = vshlq_n_u32(em, 13);
  uint32x4_t r = vaddq_u32(sh, set1u(112u << 23));
  r = vbslq_u32(vcltq_u32(em, set1u(0x400)), sub, r);
  r = vbslq_u32(vcgeq_u32(em, set1u(0x7C00)), vorrq_u32(sh, set1u(0x7F800000)), r);
  return vreinterpretq_f32_u32(vorrq_u32(r, sign));
}

#define NARROW4(fn, OP, ONE)                                               \
  void fn(size_t n, const float *x, uint16_t *y) {                         \
    size_t i = 0;                                                          \
    for (; i + 8 <= n; i += 8) {                                           \
      uint16x4_t r0 = OP(vld1q_f32(x + i)), r1 = OP(vld1q_f32(x + i + 4)); \
      vst1_u16(y + i, r0);                                                 \
      vst1_u16(y + i + 4, r1);                                             \
    }                                                                      \
    for (; i + 4 <= n; i += 4) vst1_u16(y + i, OP(vld1q_f32(x + i)));      \
    for (; i < n; i++) y[i] = ONE(x[i]);                                   \
  }

#define WIDEN4(fn, OP, ONE)                                               \
  void fn(size_t n, const uint16_t *x, float *y) {                        \
    size_t i = 0;                                                         \
    for (; i + 8 <= n; i += 8) {                                          \
      float32x4_t r0 = OP(vld1_u16(x + i)), r1 = OP(vld1_u16(x + i + 4)); \
      vst1q_f32(y + i, r0);                                               \
      vst1q_f32(y + i + 4, r1);                                           \
    }                                                                     \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, OP(vld1_u16(x + i)));     \
    for (; i < n; i++) y[i] = ONE(x[i]);                                  \
  }

NARROW4(optic_f32_bf16_vcvt__neon, f32_bf16_4, optic_half_from_f32_bf16)
WIDEN4(optic_bf16_f32_vcvt__neon, bf16_f32_4, optic_half_to_f32_bf16)
NARROW4(optic_f32_f16_vcvt__neon, f32_f16_4, optic_half_from_f32_f16)
WIDEN4(optic_f16_f32_vcvt__neon, f16_f32_4, optic_half_to_f32_f16)
