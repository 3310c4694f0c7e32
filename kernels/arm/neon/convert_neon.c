/* NEON (AArch64 Advanced SIMD) conversion kernels: vector bodies, then scalar
 * tails with the same semantics (kernels/convert.h). FCVTZS already is the
 * conversion optic defines for f32->s32: truncation, saturation to
 * INT32_MIN/INT32_MAX, NaN -> 0 (Arm ARM FPToFixed); f64->s32 goes through
 * FCVTZS to s64 and the saturating narrow SQXTN. FCVTN/FCVTL/SCVTF round per
 * FPCR, which is round to nearest even by default. */
#include <arm_neon.h>

#include "kernels/arm/neon/mask_bytes_neon.h"
#include "kernels/convert.h"

void optic_f32_f64_vcvt__neon(size_t n, const float *x, double *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x4_t v = vld1q_f32(x + i);
    vst1q_f64(y + i, vcvt_f64_f32(vget_low_f32(v)));
    vst1q_f64(y + i + 2, vcvt_high_f64_f32(v));
  }
  for (; i < n; i++) y[i] = (double)x[i];
}

void optic_f64_f32_vcvt__neon(size_t n, const double *x, float *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x2_t lo = vcvt_f32_f64(vld1q_f64(x + i));
    vst1q_f32(y + i, vcvt_high_f32_f64(lo, vld1q_f64(x + i + 2)));
  }
  for (; i < n; i++) y[i] = (float)x[i];
}

void optic_f32_s32_vcvt__neon(size_t n, const float *x, int32_t *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    int32x4_t r0 = vcvtq_s32_f32(vld1q_f32(x + i));
    int32x4_t r1 = vcvtq_s32_f32(vld1q_f32(x + i + 4));
    vst1q_s32(y + i, r0);
    vst1q_s32(y + i + 4, r1);
  }
  for (; i < n; i++) y[i] = optic_convert_f32_s32_one(x[i]);
}

void optic_s32_f32_vcvt__neon(size_t n, const int32_t *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t f0 = vcvtq_f32_s32(vld1q_s32(x + i));
    float32x4_t f1 = vcvtq_f32_s32(vld1q_s32(x + i + 4));
    vst1q_f32(y + i, f0);
    vst1q_f32(y + i + 4, f1);
  }
  for (; i < n; i++) y[i] = (float)x[i];
}

void optic_f64_s32_vcvt__neon(size_t n, const double *x, int32_t *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    int32x2_t lo = vqmovn_s64(vcvtq_s64_f64(vld1q_f64(x + i)));
    int32x2_t hi = vqmovn_s64(vcvtq_s64_f64(vld1q_f64(x + i + 2)));
    vst1q_s32(y + i, vcombine_s32(lo, hi));
  }
  for (; i < n; i++) y[i] = optic_convert_f64_s32_one(x[i]);
}

/* Every s32 is exact in s64 and in f64. */
void optic_s32_f64_vcvt__neon(size_t n, const int32_t *x, double *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    int32x4_t v = vld1q_s32(x + i);
    vst1q_f64(y + i, vcvtq_f64_s64(vmovl_s32(vget_low_s32(v))));
    vst1q_f64(y + i + 2, vcvtq_f64_s64(vmovl_high_s32(v)));
  }
  for (; i < n; i++) y[i] = (double)x[i];
}

/* x != 0 as the complement of FCMEQ with zero: true for NaN, false for ±0. */
static inline uint32x4_t nonzero(float32x4_t v) { return vmvnq_u32(vceqq_f32(v, vdupq_n_f32(0.0f))); }

void optic_f32_pred_vcvt__neon(size_t n, const float *x, uint8_t *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    optic_neon_store_mask_bytes16(y + i, nonzero(vld1q_f32(x + i)), nonzero(vld1q_f32(x + i + 4)),
                                  nonzero(vld1q_f32(x + i + 8)), nonzero(vld1q_f32(x + i + 12)));
  }
  for (; i < n; i++) y[i] = x[i] != 0.0f;
}

void optic_u8_f32_vcvt__neon(size_t n, const uint8_t *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint8x16_t b = vld1q_u8(x + i);
    uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_high_u8(b);
    vst1q_f32(y + i, vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))));
    vst1q_f32(y + i + 4, vcvtq_f32_u32(vmovl_high_u16(lo)));
    vst1q_f32(y + i + 8, vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))));
    vst1q_f32(y + i + 12, vcvtq_f32_u32(vmovl_high_u16(hi)));
  }
  for (; i < n; i++) y[i] = (float)x[i];
}
