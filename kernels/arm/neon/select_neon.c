/* NEON (AArch64 Advanced SIMD) f32 select kernel: 16 predicate bytes tested
 * against themselves (0xFF where nonzero), sign-extended to four 32-bit lane
 * masks, bitwise select; then a scalar tail. Semantics as in kernels/select.h:
 * any nonzero byte is true; BSL moves bits. */
#include <arm_neon.h>

#include "kernels/select.h"

void optic_f32_vselect__neon(size_t n, const uint8_t *p, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint8x16_t pv = vld1q_u8(p + i);
    int8x16_t t = vreinterpretq_s8_u8(vtstq_u8(pv, pv));
    int16x8_t lo = vmovl_s8(vget_low_s8(t)), hi = vmovl_high_s8(t);
    uint32x4_t m0 = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(lo)));
    uint32x4_t m1 = vreinterpretq_u32_s32(vmovl_high_s16(lo));
    uint32x4_t m2 = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(hi)));
    uint32x4_t m3 = vreinterpretq_u32_s32(vmovl_high_s16(hi));
    float32x4_t r0 = vbslq_f32(m0, vld1q_f32(a + i), vld1q_f32(b + i));
    float32x4_t r1 = vbslq_f32(m1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    float32x4_t r2 = vbslq_f32(m2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    float32x4_t r3 = vbslq_f32(m3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    vst1q_f32(y + i, r0);
    vst1q_f32(y + i + 4, r1);
    vst1q_f32(y + i + 8, r2);
    vst1q_f32(y + i + 12, r3);
  }
  for (; i < n; i++) y[i] = p[i] != 0 ? a[i] : b[i];
}
