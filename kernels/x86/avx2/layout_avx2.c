/* AVX2 layout kernels: strided row copies with in-register moves for short
 * rows, 2-D transposes of 8x8 (32-bit) and 4x4 (64-bit) tiles in registers
 * inside cache blocks, edge tiles through vmaskmov (masked-out lanes are
 * never touched, so no over-read and no write to row gaps), and vector fills.
 * Contract in kernels/layout.h; built with -mavx2 -mfma only. */
#include <immintrin.h>
#include <string.h>

#include "kernels/layout.h"
#include "kernels/x86/stream_x86.h"

/* Block edge in elements: 128-byte block rows (64x64 blocks measured up to
 * 3x slower at power-of-two leading dimensions). Inside a block the tiles of
 * one column of tiles run top to bottom: an 8x8 tile of floats covers half a
 * cache line of each y row and the next tile down the other half, so y lines
 * are complete before they can be evicted (x lines are only read, and are
 * re-read from L2 if need be). This order made 4096x4096 f32 1.4x faster and
 * 1024x1024 1.7x faster than the row-of-tiles order. */
#define BLOCK32 32
#define BLOCK64 16
/* Column strips: a transpose runs strip by strip (256 bytes of each x row),
 * so each strip writes its rows of y front to back, the pattern of the
 * plan's work units; measured on 4096x4096 f32, a whole-matrix call became as
 * fast as the plan this way (it was 1.3x slower). */
#define STRIP32 64
#define STRIP64 32

/* Lane masks for the first r (1..8) 32-bit or (1..4) 64-bit lanes. */
static inline __m256i mask32(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}
static inline __m256i mask64(size_t r) {
  static const int64_t ramp[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 4 - r));
}

/* Rows of 32-64 bytes move as a 32-byte head and tail (possibly
 * overlapping), shorter ones as a head and tail of fixed-size moves, longer
 * ones through memcpy (as fast there). A memcpy call per short row costs
 * more than the row: measured on 4096 rows, 4-24 byte rows take 2-3 us and
 * 33-64 byte rows 3.8-6 us, against 7-11 us with memcpy. */
void optic_copy2d__avx2(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  const size_t n = row_bytes;
  if (n > 64) {
    for (size_t r = 0; r < rows; r++) memcpy(yb + r * ldy, xb + r * ldx, n);
  } else if (n >= 32) {
    for (size_t r = 0; r < rows; r++) {
      const unsigned char *s = xb + r * ldx;
      unsigned char *d = yb + r * ldy;
      __m256i h = _mm256_loadu_si256((const __m256i *)s), t = _mm256_loadu_si256((const __m256i *)(s + n - 32));
      _mm256_storeu_si256((__m256i *)d, h);
      _mm256_storeu_si256((__m256i *)(d + n - 32), t);
    }
  } else {
    for (size_t r = 0; r < rows; r++) {
      const unsigned char *s = xb + r * ldx;
      unsigned char *d = yb + r * ldy;
      if (n >= 16) {
        _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
        _mm_storeu_si128((__m128i *)(d + n - 16), _mm_loadu_si128((const __m128i *)(s + n - 16)));
      } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
      } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
      } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
      }
    }
  }
}

/* r[k] row k of an 8x8 tile -> r[k] column k: 32-bit interleave, 64-bit
 * interleave, then swap 128-bit halves (24 shuffles). */
static inline void transpose8x8(__m256 r[8]) {
  __m256 a0 = _mm256_unpacklo_ps(r[0], r[1]), b0 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 a1 = _mm256_unpacklo_ps(r[2], r[3]), b1 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 a2 = _mm256_unpacklo_ps(r[4], r[5]), b2 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 a3 = _mm256_unpacklo_ps(r[6], r[7]), b3 = _mm256_unpackhi_ps(r[6], r[7]);
  /* s<g><c>: lane L holds column 4L+c of rows 4g..4g+3 */
  __m256 s00 = _mm256_shuffle_ps(a0, a1, 0x44), s01 = _mm256_shuffle_ps(a0, a1, 0xEE);
  __m256 s02 = _mm256_shuffle_ps(b0, b1, 0x44), s03 = _mm256_shuffle_ps(b0, b1, 0xEE);
  __m256 s10 = _mm256_shuffle_ps(a2, a3, 0x44), s11 = _mm256_shuffle_ps(a2, a3, 0xEE);
  __m256 s12 = _mm256_shuffle_ps(b2, b3, 0x44), s13 = _mm256_shuffle_ps(b2, b3, 0xEE);
  r[0] = _mm256_permute2f128_ps(s00, s10, 0x20);
  r[1] = _mm256_permute2f128_ps(s01, s11, 0x20);
  r[2] = _mm256_permute2f128_ps(s02, s12, 0x20);
  r[3] = _mm256_permute2f128_ps(s03, s13, 0x20);
  r[4] = _mm256_permute2f128_ps(s00, s10, 0x31);
  r[5] = _mm256_permute2f128_ps(s01, s11, 0x31);
  r[6] = _mm256_permute2f128_ps(s02, s12, 0x31);
  r[7] = _mm256_permute2f128_ps(s03, s13, 0x31);
}

/* A full 8x8 tile. Each source row is loaded as two 128-bit halves straight
 * into the lanes where the 128-bit swap would put them (rows k and k+4 share
 * a register), which saves the eight cross-lane permutes. */
static inline void tile32_full(const float *x, size_t ldx, float *y, size_t ldy) {
  __m256 r[8];
  for (int k = 0; k < 4; k++) {
    r[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + (size_t)k * ldx)),
                                _mm_loadu_ps(x + (size_t)(k + 4) * ldx), 1);
    r[k + 4] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + (size_t)k * ldx + 4)),
                                    _mm_loadu_ps(x + (size_t)(k + 4) * ldx + 4), 1);
  }
  /* r[k] = [row k cols 0-3 | row k+4 cols 0-3], r[k+4] the same for cols 4-7:
   * an in-lane 4x4 transpose of (r0..r3) gives columns 0-3, of (r4..r7)
   * columns 4-7. */
  for (int h = 0; h < 8; h += 4) {
    __m256 a0 = _mm256_unpacklo_ps(r[h], r[h + 1]), b0 = _mm256_unpackhi_ps(r[h], r[h + 1]);
    __m256 a1 = _mm256_unpacklo_ps(r[h + 2], r[h + 3]), b1 = _mm256_unpackhi_ps(r[h + 2], r[h + 3]);
    _mm256_storeu_ps(y + (size_t)(h + 0) * ldy, _mm256_shuffle_ps(a0, a1, 0x44));
    _mm256_storeu_ps(y + (size_t)(h + 1) * ldy, _mm256_shuffle_ps(a0, a1, 0xEE));
    _mm256_storeu_ps(y + (size_t)(h + 2) * ldy, _mm256_shuffle_ps(b0, b1, 0x44));
    _mm256_storeu_ps(y + (size_t)(h + 3) * ldy, _mm256_shuffle_ps(b0, b1, 0xEE));
  }
}

/* An nr x nc edge tile (1..8 each): masked loads of nr rows, masked stores of
 * nc rows; the lanes outside stay zero and are never stored. */
static inline void tile32_part(const float *x, size_t ldx, float *y, size_t ldy, size_t nr, size_t nc) {
  const __m256i mc = mask32(nc), mr = mask32(nr);
  __m256 r[8];
  for (size_t k = 0; k < 8; k++) r[k] = k < nr ? _mm256_maskload_ps(x + k * ldx, mc) : _mm256_setzero_ps();
  transpose8x8(r);
  for (size_t k = 0; k < nc; k++) _mm256_maskstore_ps(y + k * ldy, mr, r[k]);
}

static inline void blocked32(size_t rows, size_t cols, const float *x, size_t ldx, float *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK32) {
    size_t i1 = rows - i0 < BLOCK32 ? rows : i0 + BLOCK32;
    size_t i_full = i0 + (i1 - i0) / 8 * 8;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK32) {
      size_t j1 = cols - j0 < BLOCK32 ? cols : j0 + BLOCK32;
      for (size_t j = j0; j < j1; j += 8) {
        size_t nc = j1 - j < 8 ? j1 - j : 8, i = i0;
        if (nc == 8) {
          for (; i < i_full; i += 8) tile32_full(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
        } else {
          for (; i < i_full; i += 8) tile32_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, 8, nc);
        }
        if (i < i1) tile32_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, i1 - i, nc);
      }
    }
  }
}

void optic_x32_transpose__avx2(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  const float *x = xv;
  float *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP32) {
    size_t c = cols - s0 < STRIP32 ? cols - s0 : STRIP32;
    blocked32(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

/* r[k] row k of a 4x4 tile of 64-bit elements -> column k (8 shuffles). */
static inline void transpose4x4(__m256d r[4]) {
  __m256d a0 = _mm256_unpacklo_pd(r[0], r[1]), b0 = _mm256_unpackhi_pd(r[0], r[1]);
  __m256d a1 = _mm256_unpacklo_pd(r[2], r[3]), b1 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(a0, a1, 0x20);
  r[1] = _mm256_permute2f128_pd(b0, b1, 0x20);
  r[2] = _mm256_permute2f128_pd(a0, a1, 0x31);
  r[3] = _mm256_permute2f128_pd(b0, b1, 0x31);
}

static inline void tile64_full(const double *x, size_t ldx, double *y, size_t ldy) {
  __m256d r[4];
  for (size_t k = 0; k < 4; k++) r[k] = _mm256_loadu_pd(x + k * ldx);
  transpose4x4(r);
  for (size_t k = 0; k < 4; k++) _mm256_storeu_pd(y + k * ldy, r[k]);
}

static inline void tile64_part(const double *x, size_t ldx, double *y, size_t ldy, size_t nr, size_t nc) {
  const __m256i mc = mask64(nc), mr = mask64(nr);
  __m256d r[4];
  for (size_t k = 0; k < 4; k++) r[k] = k < nr ? _mm256_maskload_pd(x + k * ldx, mc) : _mm256_setzero_pd();
  transpose4x4(r);
  for (size_t k = 0; k < nc; k++) _mm256_maskstore_pd(y + k * ldy, mr, r[k]);
}

static inline void blocked64(size_t rows, size_t cols, const double *x, size_t ldx, double *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK64) {
    size_t i1 = rows - i0 < BLOCK64 ? rows : i0 + BLOCK64;
    size_t i_full = i0 + (i1 - i0) / 4 * 4;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK64) {
      size_t j1 = cols - j0 < BLOCK64 ? cols : j0 + BLOCK64;
      for (size_t j = j0; j < j1; j += 4) {
        size_t nc = j1 - j < 4 ? j1 - j : 4, i = i0;
        if (nc == 4) {
          for (; i < i_full; i += 4) tile64_full(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
        } else {
          for (; i < i_full; i += 4) tile64_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, 4, nc);
        }
        if (i < i1) tile64_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, i1 - i, nc);
      }
    }
  }
}

void optic_x64_transpose__avx2(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  const double *x = xv;
  double *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP64) {
    size_t c = cols - s0 < STRIP64 ? cols - s0 : STRIP64;
    blocked64(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

static void fill32(size_t n, __m256i vv, int32_t *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm256_storeu_si256((__m256i *)(y + i), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 8), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 16), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 24), vv);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(y + i), vv);
  if (i < n) _mm256_maskstore_epi32((int *)(y + i), mask32(n - i), vv);
}

static void fill64(size_t n, __m256i vv, long long *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256((__m256i *)(y + i), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 4), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 8), vv);
    _mm256_storeu_si256((__m256i *)(y + i + 12), vv);
  }
  for (; i + 4 <= n; i += 4) _mm256_storeu_si256((__m256i *)(y + i), vv);
  if (i < n) _mm256_maskstore_epi64(y + i, mask64(n - i), vv);
}

/* Large fills stream (kernels/stream.h), as in layout_avx512.c. */
#define STREAM256(p, v) _mm256_stream_si256((__m256i *)(void *)(p), v)
OPTIC_X86_FILL_STREAMED(optic_x32_fill__avx2, int32_t, __m256i, 32, _mm256_set1_epi32, STREAM256, fill32)
OPTIC_X86_FILL_STREAMED(optic_x64_fill__avx2, long long, __m256i, 32, _mm256_set1_epi64x, STREAM256, fill64)
