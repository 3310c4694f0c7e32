/* AVX2 helpers for kernels that turn float lane masks (all-ones or zero per
 * 32-bit lane) into 0/1 bytes: compare and convert-to-pred. Static inline, for
 * files in this folder only (they are the ones built with -mavx2). */
#ifndef OPTIC_KERNELS_X86_AVX2_MASK_BYTES_H
#define OPTIC_KERNELS_X86_AVX2_MASK_BYTES_H

#include <immintrin.h>
#include <stdint.h>

/* 32 lane masks (m0 lanes first) -> 32 bytes of 0/1 in lane order. The
 * saturating packs keep -1 as -1 but interleave the 128-bit halves, so the
 * dwords come out as m0lo m1lo m2lo m3lo | m0hi m1hi m2hi m3hi and the
 * permute puts each mask's halves back together. */
static inline void optic_avx2_store_mask_bytes32(uint8_t *y, __m256 m0, __m256 m1, __m256 m2, __m256 m3) {
  __m256i w01 = _mm256_packs_epi32(_mm256_castps_si256(m0), _mm256_castps_si256(m1));
  __m256i w23 = _mm256_packs_epi32(_mm256_castps_si256(m2), _mm256_castps_si256(m3));
  __m256i b = _mm256_packs_epi16(w01, w23);
  b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256((__m256i *)y, _mm256_and_si256(b, _mm256_set1_epi8(1)));
}

/* 8 lane masks -> 8 bytes of 0/1 (writes exactly 8 bytes). */
static inline void optic_avx2_store_mask_bytes8(uint8_t *y, __m256 m) {
  __m256i mi = _mm256_castps_si256(m);
  __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(mi), _mm256_extracti128_si256(mi, 1));
  __m128i b = _mm_packs_epi16(w, w);
  _mm_storel_epi64((__m128i *)y, _mm_and_si128(b, _mm_set1_epi8(1)));
}

#endif
