/* NEON helpers for kernels that turn float lane masks (all-ones or zero per
 * 32-bit lane) into 0/1 bytes: compare and convert-to-pred. Static inline, for
 * files in this folder only. */
#ifndef OPTIC_KERNELS_ARM_NEON_MASK_BYTES_H
#define OPTIC_KERNELS_ARM_NEON_MASK_BYTES_H

#include <arm_neon.h>
#include <stdint.h>

/* 16 lane masks (m0 lanes first) -> 16 bytes of 0/1 in lane order. */
static inline void optic_neon_store_mask_bytes16(uint8_t *y, uint32x4_t m0, uint32x4_t m1, uint32x4_t m2,
                                                 uint32x4_t m3) {
  uint16x8_t h01 = vcombine_u16(vmovn_u32(m0), vmovn_u32(m1));
  uint16x8_t h23 = vcombine_u16(vmovn_u32(m2), vmovn_u32(m3));
  uint8x16_t b = vcombine_u8(vmovn_u16(h01), vmovn_u16(h23));
  vst1q_u8(y, vandq_u8(b, vdupq_n_u8(1)));
}

#endif
