/* Internal: f32 <-> bf16/f16 conversions inline, for the loops that widen
 * and round halves in bulk (the runtime's and evaluator's half paths, the
 * fast pairs of optic_convert_elements). Round to nearest even; a NaN stays
 * a NaN of the same sign (quiet, high payload bits kept); overflow gives inf.
 * Tested through the public optic_f32_to_bf16 & co (tests/core). */
#ifndef OPTIC_CORE_HALF_H
#define OPTIC_CORE_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t optic_half_f32_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  return b;
}

static inline float optic_half_bits_f32(uint32_t b) {
  float x;
  memcpy(&x, &b, 4);
  return x;
}

static inline uint16_t optic_half_from_f32_bf16(float x) {
  uint32_t b = optic_half_f32_bits(x);
  /* Adding 0x7FFF plus the kept LSB rounds to nearest even; a carry moves into
   * the exponent, which is right for binade steps and overflow to inf. */
  uint32_t rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16, nan = (b >> 16) | 0x0040u;
  return (uint16_t)((b & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

static inline float optic_half_to_f32_bf16(uint16_t h) { return optic_half_bits_f32((uint32_t)h << 16); }

static inline uint16_t optic_half_from_f32_f16(float x) {
  uint32_t b = optic_half_f32_bits(x), a = b & 0x7FFFFFFFu;
  uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
  if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x1FFu)); /* NaN */
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);                       /* >= 65520 rounds to inf */
  if (a >= 0x38800000u) {                                                        /* normal: >= 2^-14 */
    a -= 0x38000000u;                                                            /* rebias 127 -> 15 */
    return (uint16_t)(sign | ((a + 0x0FFFu + ((a >> 13) & 1u)) >> 13));
  }
  /* Subnormal (or zero): the quantum is 2^-24; scaling by 2^24 is exact and
   * rintf rounds to nearest even (1024 is the smallest normal, encoded alike). */
  return (uint16_t)(sign | (uint16_t)rintf(optic_half_bits_f32(a) * 0x1p24f));
}

/* Branch-free, so that bulk loops vectorize: every case is computed and one
 * is selected. Subnormals are m x 2^-24 from an integer (exact, no reliance
 * on the FP environment's denormal handling); normals rebias the exponent
 * (15 -> 127) by an integer add; inf/NaN keep the payload. */
static inline float optic_half_to_f32_f16(uint16_t h) {
  int32_t em = h & 0x7FFF;
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t sub = optic_half_f32_bits((float)em * 0x1p-24f), normal = ((uint32_t)em << 13) + (112u << 23);
  uint32_t special = ((uint32_t)em << 13) | 0x7F800000u;
  uint32_t is_sub = 0u - (uint32_t)(em < 0x400), is_special = 0u - (uint32_t)(em >= 0x7C00); /* all ones or 0 */
  uint32_t b = (sub & is_sub) | (special & is_special) | (normal & ~(is_sub | is_special));
  return optic_half_bits_f32(sign | b);
}

#endif
