/* NEON (AArch64 Advanced SIMD) layout kernels: 2-D transposes of 4x4 (32-bit)
 * and 2x2 (64-bit) tiles in registers (TRN1/TRN2) inside cache blocks, edge
 * rows and columns element by element, and vector fills with a scalar tail.
 * Contract in kernels/layout.h; nothing is read or written past an element
 * named by the call. */
#include <arm_neon.h>
#include <string.h>

#include "kernels/layout.h"

/* Blocks of 128-byte rows; inside a block tiles run down columns of tiles,
 * so each 64-byte line of y is completed by consecutive tiles (the order
 * measured best for the AVX2 kernels, whose tiles also cover part of a line). */
#define BLOCK32 32
#define BLOCK64 16
/* Column strips: a transpose runs strip by strip (256 bytes of each x row),
 * so each strip writes its rows of y front to back, the pattern of the
 * plan's work units (measured on x86; qemu cannot time NEON). */
#define STRIP32 64
#define STRIP64 32

static inline void tile32(const uint32_t *x, size_t ldx, uint32_t *y, size_t ldy) {
  uint32x4_t r0 = vld1q_u32(x), r1 = vld1q_u32(x + ldx);
  uint32x4_t r2 = vld1q_u32(x + 2 * ldx), r3 = vld1q_u32(x + 3 * ldx);
  /* t0 = [r0[0] r1[0] r0[2] r1[2]], t1 = [r0[1] r1[1] r0[3] r1[3]], ... */
  uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1));
  uint64x2_t t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
  uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3));
  uint64x2_t t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
  vst1q_u32(y, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
  vst1q_u32(y + ldy, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
  vst1q_u32(y + 2 * ldy, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
  vst1q_u32(y + 3 * ldy, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
}

static inline void blocked32(size_t rows, size_t cols, const uint32_t *x, size_t ldx, uint32_t *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK32) {
    size_t i1 = rows - i0 < BLOCK32 ? rows : i0 + BLOCK32;
    size_t i_full = i0 + (i1 - i0) / 4 * 4;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK32) {
      size_t j1 = cols - j0 < BLOCK32 ? cols : j0 + BLOCK32;
      size_t j = j0;
      for (; j + 4 <= j1; j += 4) {
        size_t i = i0;
        for (; i < i_full; i += 4) tile32(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
        for (; i < i1; i++) {
          for (size_t k = 0; k < 4; k++) y[(j + k) * ldy + i] = x[i * ldx + j + k];
        }
      }
      for (; j < j1; j++) {
        for (size_t i = i0; i < i1; i++) y[j * ldy + i] = x[i * ldx + j];
      }
    }
  }
}

void optic_x32_transpose__neon(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  const uint32_t *x = xv;
  uint32_t *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP32) {
    size_t c = cols - s0 < STRIP32 ? cols - s0 : STRIP32;
    blocked32(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

static inline void blocked64(size_t rows, size_t cols, const uint64_t *x, size_t ldx, uint64_t *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK64) {
    size_t i1 = rows - i0 < BLOCK64 ? rows : i0 + BLOCK64;
    size_t i_full = i0 + (i1 - i0) / 2 * 2;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK64) {
      size_t j1 = cols - j0 < BLOCK64 ? cols : j0 + BLOCK64;
      size_t j = j0;
      for (; j + 2 <= j1; j += 2) {
        size_t i = i0;
        for (; i < i_full; i += 2) {
          uint64x2_t r0 = vld1q_u64(x + i * ldx + j), r1 = vld1q_u64(x + (i + 1) * ldx + j);
          vst1q_u64(y + j * ldy + i, vtrn1q_u64(r0, r1));
          vst1q_u64(y + (j + 1) * ldy + i, vtrn2q_u64(r0, r1));
        }
        if (i < i1) {
          y[j * ldy + i] = x[i * ldx + j];
          y[(j + 1) * ldy + i] = x[i * ldx + j + 1];
        }
      }
      if (j < j1) {
        for (size_t i = i0; i < i1; i++) y[j * ldy + i] = x[i * ldx + j];
      }
    }
  }
}

void optic_x64_transpose__neon(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  const uint64_t *x = xv;
  uint64_t *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP64) {
    size_t c = cols - s0 < STRIP64 ? cols - s0 : STRIP64;
    blocked64(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

void optic_x32_fill__neon(size_t n, const void *value, void *yv) {
  uint32_t v;
  memcpy(&v, value, 4);
  const uint32x4_t vv = vdupq_n_u32(v);
  uint32_t *y = yv;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    vst1q_u32(y + i, vv);
    vst1q_u32(y + i + 4, vv);
    vst1q_u32(y + i + 8, vv);
    vst1q_u32(y + i + 12, vv);
  }
  for (; i + 4 <= n; i += 4) vst1q_u32(y + i, vv);
  for (; i < n; i++) y[i] = v;
}

void optic_x64_fill__neon(size_t n, const void *value, void *yv) {
  uint64_t v;
  memcpy(&v, value, 8);
  const uint64x2_t vv = vdupq_n_u64(v);
  uint64_t *y = yv;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    vst1q_u64(y + i, vv);
    vst1q_u64(y + i + 2, vv);
    vst1q_u64(y + i + 4, vv);
    vst1q_u64(y + i + 6, vv);
  }
  for (; i + 2 <= n; i += 2) vst1q_u64(y + i, vv);
  if (i < n) y[i] = v;
}
