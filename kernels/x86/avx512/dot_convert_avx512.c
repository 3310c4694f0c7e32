/* AVX-512 loops of kernels/dot_convert.h, 16 elements a step with a masked
 * remainder (nothing past n is read or written). f16 uses vcvtph2ps /
 * vcvtps2ph (round to nearest even, exceptions suppressed, MXCSR ignored);
 * NaN lanes are rebuilt with core/half.h's rule so every bit pattern matches
 * the scalar converter (vcvtph2ps would quiet a signaling NaN). bf16 is
 * integer arithmetic, the same formulas as core/half.h. */
#include <immintrin.h>

#include "kernels/dot_convert.h"

static inline __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << (r < 16 ? r : 16)) - 1); }

/* 16 f16 patterns to f32 bits. */
static inline __m512i f16_widen(__m256i raw) {
  __m512i h = _mm512_cvtepu16_epi32(raw), em = _mm512_and_si512(h, _mm512_set1_epi32(0x7FFF));
  __m512i bits = _mm512_castps_si512(_mm512_cvtph_ps(raw));
  __mmask16 nan = _mm512_cmpgt_epi32_mask(em, _mm512_set1_epi32(0x7C00));
  __m512i sign = _mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(0x8000)), 16);
  __m512i special = _mm512_or_si512(_mm512_slli_epi32(em, 13), _mm512_set1_epi32(0x7F800000));
  return _mm512_mask_mov_epi32(bits, nan, _mm512_or_si512(sign, special));
}

/* 16 f32 values to f16 patterns (in 32-bit lanes). */
static inline __m512i f16_narrow(__m512 x) {
  __m512i b = _mm512_castps_si512(x), a = _mm512_and_si512(b, _mm512_set1_epi32(0x7FFFFFFF));
  __m512i h = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
  __m512i sign = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x8000));
  __m512i payload = _mm512_and_si512(_mm512_srli_epi32(a, 13), _mm512_set1_epi32(0x1FF));
  __m512i q = _mm512_or_si512(_mm512_or_si512(sign, _mm512_set1_epi32(0x7E00)), payload);
  return _mm512_mask_mov_epi32(h, nan, q);
}

/* 16 f32 values (as bits) to bf16 patterns (in 32-bit lanes). */
static inline __m512i bf16_narrow(__m512i b) {
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  __m512i nan = _mm512_or_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x0040));
  __m512i a = _mm512_and_si512(b, _mm512_set1_epi32(0x7FFFFFFF));
  __mmask16 is_nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
  return _mm512_mask_mov_epi32(rounded, is_nan, nan);
}

static void widen(bool f16, const uint16_t *s, float *d, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m256i raw = _mm256_maskz_loadu_epi16(m, s + i);
    __m512i bits = f16 ? f16_widen(raw) : _mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16);
    _mm512_mask_storeu_ps(d + i, m, _mm512_castsi512_ps(bits));
  }
}

static void narrow(bool f16, const float *s, uint16_t *d, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512 x = _mm512_maskz_loadu_ps(m, s + i);
    __m512i h = f16 ? f16_narrow(x) : bf16_narrow(_mm512_castps_si512(x));
    _mm256_mask_storeu_epi16(d + i, m, _mm512_cvtepi32_epi16(h));
  }
}

bool optic_dot_convert__avx512(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n) {
  bool half_from = from == OPTIC_F16 || from == OPTIC_BF16, half_to = to == OPTIC_F16 || to == OPTIC_BF16;
  if (half_from && to == OPTIC_F32) {
    widen(from == OPTIC_F16, src, dst, n);
    return true;
  }
  if (from == OPTIC_F32 && half_to) {
    narrow(to == OPTIC_F16, src, dst, n);
    return true;
  }
  return false;
}
