/* AVX-512 layout kernels: strided row copies (rows of 32-64 bytes as one
 * byte-masked load and store), 2-D transposes of 16x16 (32-bit) and 8x8 (64-bit)
 * tiles in registers, a tile row being exactly one 64-byte cache line; edge
 * tiles use masked loads and stores (masked-out lanes never fault and are
 * never written), and vector fills with a masked tail. Contract in
 * kernels/layout.h; built with AVX-512 F/BW/VL/DQ flags only. */
#include <immintrin.h>
#include <string.h>

#include "kernels/layout.h"
#include "kernels/x86/stream_x86.h"

/* Block edge in elements: 128-byte block rows (2 cache lines). Measured on
 * the build host, 32x32 blocks of floats beat 64x64 ones by 1.3-1.8x when
 * the leading dimensions are powers of two (256x128, 1024x1024: fewer rows
 * of a block compete for the same cache sets) and tie elsewhere. */
#define BLOCK32 32
#define BLOCK64 16
/* Column strips: a transpose runs strip by strip (256 bytes of each x row),
 * so each strip writes its rows of y front to back, the pattern of the
 * plan's work units; measured on 4096x4096 f32, a whole-matrix call became as
 * fast as the plan this way (it was 1.3x slower). */
#define STRIP32 64
#define STRIP64 32

static inline __mmask16 mask16(size_t r) { return (__mmask16)((1u << r) - 1u); }
static inline __mmask8 mask8(size_t r) { return (__mmask8)((1u << r) - 1u); }

/* Rows of 32-64 bytes are one byte-masked load and store (AVX512BW),
 * shorter ones a head and a tail of fixed-size moves, longer ones memcpy
 * (as fast there). A memcpy call per short row costs more than the row:
 * measured on 4096 rows, 4-24 byte rows take 1.9-2.5 us and 33-64 byte rows
 * 3.4-4.9 us, against 8-11 us with memcpy; masked moves measured slower than
 * the plain ones below 32 bytes. */
void optic_copy2d__avx512(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  const size_t n = row_bytes;
  if (n > 64) {
    for (size_t r = 0; r < rows; r++) memcpy(yb + r * ldy, xb + r * ldx, n);
  } else if (n >= 32) {
    const __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    for (size_t r = 0; r < rows; r++)
      _mm512_mask_storeu_epi8(yb + r * ldy, m, _mm512_maskz_loadu_epi8(m, xb + r * ldx));
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

/* r[k] row k of a 16x16 tile -> r[k] column k (64 shuffles). After the 32-
 * and 64-bit interleaves, s[g][c] holds in 128-bit lane L column 4L+c of rows
 * 4g..4g+3; two rounds of 128-bit lane shuffles (0x88 takes lanes 0,2 of each
 * source, 0xDD lanes 1,3) transpose the 4x4 grid of lanes. */
static inline void transpose16x16(__m512 r[16]) {
  __m512 a[8], b[8];
  for (int p = 0; p < 8; p++) {
    a[p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
    b[p] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
  }
  __m512 s[4][4];
  for (int g = 0; g < 4; g++) {
    __m512d a0 = _mm512_castps_pd(a[2 * g]), a1 = _mm512_castps_pd(a[2 * g + 1]);
    __m512d b0 = _mm512_castps_pd(b[2 * g]), b1 = _mm512_castps_pd(b[2 * g + 1]);
    s[g][0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a1));
    s[g][1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a1));
    s[g][2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b0, b1));
    s[g][3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b0, b1));
  }
  for (int c = 0; c < 4; c++) {
    __m512 q0 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0x88);
    __m512 q1 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0xDD);
    __m512 q2 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0x88);
    __m512 q3 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(q0, q2, 0x88);      /* column c */
    r[c + 4] = _mm512_shuffle_f32x4(q1, q3, 0x88);  /* column 4 + c */
    r[c + 8] = _mm512_shuffle_f32x4(q0, q2, 0xDD);  /* column 8 + c */
    r[c + 12] = _mm512_shuffle_f32x4(q1, q3, 0xDD); /* column 12 + c */
  }
}

static inline void tile32(const float *x, size_t ldx, float *y, size_t ldy) {
  __m512 r[16];
  for (size_t k = 0; k < 16; k++) r[k] = _mm512_loadu_ps(x + k * ldx);
  transpose16x16(r);
  for (size_t k = 0; k < 16; k++) _mm512_storeu_ps(y + k * ldy, r[k]);
}

/* nr x nc edge tile (1..16 each). */
static inline void tile32_part(const float *x, size_t ldx, float *y, size_t ldy, size_t nr, size_t nc) {
  const __mmask16 mc = mask16(nc), mr = mask16(nr);
  __m512 r[16];
  for (size_t k = 0; k < 16; k++) r[k] = k < nr ? _mm512_maskz_loadu_ps(mc, x + k * ldx) : _mm512_setzero_ps();
  transpose16x16(r);
  for (size_t k = 0; k < nc; k++) _mm512_mask_storeu_ps(y + k * ldy, mr, r[k]);
}

static inline void blocked32(size_t rows, size_t cols, const float *x, size_t ldx, float *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK32) {
    size_t i1 = rows - i0 < BLOCK32 ? rows : i0 + BLOCK32;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK32) {
      size_t j1 = cols - j0 < BLOCK32 ? cols : j0 + BLOCK32;
      size_t i = i0;
      for (; i + 16 <= i1; i += 16) {
        size_t j = j0;
        for (; j + 16 <= j1; j += 16) tile32(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
        if (j < j1) tile32_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, 16, j1 - j);
      }
      if (i < i1) {
        for (size_t j = j0; j < j1; j += 16) {
          tile32_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, i1 - i, j1 - j < 16 ? j1 - j : 16);
        }
      }
    }
  }
}

/* Narrow x (fewer than 16 columns) goes to the AVX2 kernel (AVX-512 here
 * implies AVX2): every tile would be a masked load of a few lanes per row, and
 * those measured 1.5-1.7x slower than AVX2's 8-lane vmaskmov (1000x3 and
 * 100000x3 f32). */
void optic_x32_transpose__avx512(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  if (cols < 16) {
    optic_x32_transpose__avx2(rows, cols, xv, ldx, yv, ldy);
    return;
  }
  const float *x = xv;
  float *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP32) {
    size_t c = cols - s0 < STRIP32 ? cols - s0 : STRIP32;
    blocked32(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

/* r[k] row k of an 8x8 tile of 64-bit elements -> column k (24 shuffles):
 * after the 64-bit interleave, lane L of a[p] (b[p]) holds column 2L (2L+1)
 * of rows 2p, 2p+1; the 4x4 grid of 128-bit lanes is transposed as above. */
static inline void transpose8x8_64(__m512d r[8]) {
  __m512d v[2][4];
  for (int p = 0; p < 4; p++) {
    v[0][p] = _mm512_unpacklo_pd(r[2 * p], r[2 * p + 1]);
    v[1][p] = _mm512_unpackhi_pd(r[2 * p], r[2 * p + 1]);
  }
  for (int c = 0; c < 2; c++) {
    __m512d q0 = _mm512_shuffle_f64x2(v[c][0], v[c][1], 0x88);
    __m512d q1 = _mm512_shuffle_f64x2(v[c][0], v[c][1], 0xDD);
    __m512d q2 = _mm512_shuffle_f64x2(v[c][2], v[c][3], 0x88);
    __m512d q3 = _mm512_shuffle_f64x2(v[c][2], v[c][3], 0xDD);
    r[c] = _mm512_shuffle_f64x2(q0, q2, 0x88);     /* column c */
    r[c + 2] = _mm512_shuffle_f64x2(q1, q3, 0x88); /* column 2 + c */
    r[c + 4] = _mm512_shuffle_f64x2(q0, q2, 0xDD); /* column 4 + c */
    r[c + 6] = _mm512_shuffle_f64x2(q1, q3, 0xDD); /* column 6 + c */
  }
}

static inline void tile64(const double *x, size_t ldx, double *y, size_t ldy) {
  __m512d r[8];
  for (size_t k = 0; k < 8; k++) r[k] = _mm512_loadu_pd(x + k * ldx);
  transpose8x8_64(r);
  for (size_t k = 0; k < 8; k++) _mm512_storeu_pd(y + k * ldy, r[k]);
}

static inline void tile64_part(const double *x, size_t ldx, double *y, size_t ldy, size_t nr, size_t nc) {
  const __mmask8 mc = mask8(nc), mr = mask8(nr);
  __m512d r[8];
  for (size_t k = 0; k < 8; k++) r[k] = k < nr ? _mm512_maskz_loadu_pd(mc, x + k * ldx) : _mm512_setzero_pd();
  transpose8x8_64(r);
  for (size_t k = 0; k < nc; k++) _mm512_mask_storeu_pd(y + k * ldy, mr, r[k]);
}

static inline void blocked64(size_t rows, size_t cols, const double *x, size_t ldx, double *y, size_t ldy) {
  for (size_t i0 = 0; i0 < rows; i0 += BLOCK64) {
    size_t i1 = rows - i0 < BLOCK64 ? rows : i0 + BLOCK64;
    for (size_t j0 = 0; j0 < cols; j0 += BLOCK64) {
      size_t j1 = cols - j0 < BLOCK64 ? cols : j0 + BLOCK64;
      size_t i = i0;
      for (; i + 8 <= i1; i += 8) {
        size_t j = j0;
        for (; j + 8 <= j1; j += 8) tile64(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
        if (j < j1) tile64_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, 8, j1 - j);
      }
      if (i < i1) {
        for (size_t j = j0; j < j1; j += 8) {
          tile64_part(x + i * ldx + j, ldx, y + j * ldy + i, ldy, i1 - i, j1 - j < 8 ? j1 - j : 8);
        }
      }
    }
  }
}

/* Narrow x goes to the AVX2 kernel, as for 32-bit elements (1000x3 f64:
 * 0.18 ns per element there against 0.25 with masked 8-lane tiles). */
void optic_x64_transpose__avx512(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) {
  if (cols < 8) {
    optic_x64_transpose__avx2(rows, cols, xv, ldx, yv, ldy);
    return;
  }
  const double *x = xv;
  double *y = yv;
  for (size_t s0 = 0; s0 < cols; s0 += STRIP64) {
    size_t c = cols - s0 < STRIP64 ? cols - s0 : STRIP64;
    blocked64(rows, c, x + s0, ldx, y + s0 * ldy, ldy);
  }
}

/* Normal-store fills: 4 vectors per iteration, then 1, then the tail: one
 * full store ending at n when there is room (it rewrites a few elements with
 * the same value), else a masked store. */
static void fill32(size_t n, __m512i vv, int32_t *y) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm512_storeu_si512(y + i, vv);
    _mm512_storeu_si512(y + i + 16, vv);
    _mm512_storeu_si512(y + i + 32, vv);
    _mm512_storeu_si512(y + i + 48, vv);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_si512(y + i, vv);
  if (i < n) {
    if (n >= 16) {
      _mm512_storeu_si512(y + n - 16, vv);
    } else {
      _mm512_mask_storeu_epi32(y, mask16(n), vv);
    }
  }
}

static void fill64(size_t n, __m512i vv, int64_t *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm512_storeu_si512(y + i, vv);
    _mm512_storeu_si512(y + i + 8, vv);
    _mm512_storeu_si512(y + i + 16, vv);
    _mm512_storeu_si512(y + i + 24, vv);
  }
  for (; i + 8 <= n; i += 8) _mm512_storeu_si512(y + i, vv);
  if (i < n) {
    if (n >= 8) {
      _mm512_storeu_si512(y + n - 8, vv);
    } else {
      _mm512_mask_storeu_epi64(y, mask8(n), vv);
    }
  }
}

/* Fills of at least the streaming threshold (kernels/stream.h) store the
 * unaligned head normally, stream whole vectors, store the tail normally,
 * then SFENCE (OPTIC_X86_FILL_STREAMED, kernels/x86/stream_x86.h). */
#define STREAM512(p, v) _mm512_stream_si512((void *)(p), v)
OPTIC_X86_FILL_STREAMED(optic_x32_fill__avx512, int32_t, __m512i, 64, _mm512_set1_epi32, STREAM512, fill32)
OPTIC_X86_FILL_STREAMED(optic_x64_fill__avx512, int64_t, __m512i, 64, _mm512_set1_epi64, STREAM512, fill64)
