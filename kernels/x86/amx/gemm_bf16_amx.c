/* bf16 GEMM on AMX-BF16 tiles (tdpbf16ps): a 32 x 32 block of the output
 * in four 16 x 16 f32 accumulator tiles, two A tiles (16 rows x 32 k) and two
 * B tiles (16 pairs of k x 16 columns) per step of 32 k. Compiled with
 * -mamx-tile -mamx-bf16; called only after optic_dot_bf16_kernel() found the
 * CPU, XCR0 and the Linux permission for tile data (kernels/dot_bf16.h).
 *
 * Packed layouts (blas_dot_bf16.c pads K to a multiple of 32 with zeros):
 *   A panel (32 rows): row-major, row i at i * kpad, k contiguous
 *   B panel (32 cols): word [kp][j] = (B[2kp][j], B[2kp+1][j]), 32 words a row
 * Tile configuration is per thread: loaded at the start of each call and
 * released at its end, so no tile state outlives a call. */
#include <immintrin.h>
#include <string.h>

#include "kernels/dot_bf16.h"

typedef struct tile_config {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

/* Tiles 0-3: C (16 x 16 f32); 4-5: A (16 x 32 bf16); 6-7: B (16 x 16 pairs). */
static void configure(void) {
  tile_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
}

/* One 32 x 32 output block over all of k (kpad bf16, a multiple of 32). */
static void block_32x32(const uint16_t *a, const uint32_t *b, int64_t kpad, float *c, int64_t ldc, int rows, int cols) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  size_t lda = (size_t)kpad * 2, ldb = OPTIC_BF16_NR * 4;
  for (int64_t k = 0; k < kpad; k += 32) {
    const uint16_t *ak = a + k;
    const uint32_t *bk = b + (k / 2) * OPTIC_BF16_NR;
    _tile_loadd(4, ak, lda);
    _tile_loadd(5, ak + 16 * kpad, lda);
    _tile_loadd(6, bk, ldb);
    _tile_loadd(7, bk + 16, ldb);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  if (rows == 32 && cols == 32) {
    _tile_stored(0, c, ldc * 4);
    _tile_stored(1, c + 16, ldc * 4);
    _tile_stored(2, c + 16 * ldc, ldc * 4);
    _tile_stored(3, c + 16 * ldc + 16, ldc * 4);
    return;
  }
  float tmp[32 * 32];
  _tile_stored(0, tmp, 128);
  _tile_stored(1, tmp + 16, 128);
  _tile_stored(2, tmp + 16 * 32, 128);
  _tile_stored(3, tmp + 16 * 32 + 16, 128);
  for (int i = 0; i < rows; i++) memcpy(c + i * ldc, tmp + i * 32, (size_t)cols * sizeof(float));
}

/* A panels [pa0, pa1) x B panels [pb0, pb1) of one batch item; g->k is the
 * padded depth kpad. */
void optic_bf16_gemm__amx(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1) {
  configure();
  int64_t kpad = g->k;
  for (int64_t i = pa0; i < pa1; i++) {
    int rows = (int)(g->m - i * 32 < 32 ? g->m - i * 32 : 32);
    for (int64_t j = pb0; j < pb1; j++) {
      int cols = (int)(g->n - j * 32 < 32 ? g->n - j * 32 : 32);
      block_32x32((const uint16_t *)(const void *)g->a + i * 32 * kpad, g->b + j * (kpad / 2) * OPTIC_BF16_NR, kpad,
                  g->c + i * 32 * g->ldc + j * 32, g->ldc, rows, cols);
    }
  }
  _tile_release();
}

/* A for AMX: rows [r0, r0 + 32) of s, k contiguous, zero-padded to kpad. */
void optic_bf16_pack_a__amx(const optic_bf16_matrix *s, int64_t r0, int64_t kpad, uint16_t *dst) {
  int64_t rows = s->rows - r0 < 32 ? s->rows - r0 : 32, k = s->cols;
  /* zeros where no element goes: k..kpad of each row, rows past s->rows */
  for (int64_t i = 0; i < rows; i++) memset(dst + i * kpad + k, 0, (size_t)(kpad - k) * sizeof(uint16_t));
  memset(dst + rows * kpad, 0, (size_t)((32 - rows) * kpad) * sizeof(uint16_t));
  if (s->trans && !s->vector) {
    /* Stored k-major: each k holds the panel's rows side by side. A block of
     * 32 k is read as 32 runs of the rows into L1, then written as one
     * 64-byte run per row. (Row by row from the source, every element would
     * sit in another source row and page; one k at a time, every store would
     * be a partial write to another line.) */
    uint16_t block[32][32];
    for (int64_t c0 = 0; c0 < k; c0 += 32) {
      int64_t kc = k - c0 < 32 ? k - c0 : 32;
      for (int64_t c = 0; c < kc; c++) memcpy(block[c], s->data + (c0 + c) * s->ld + r0, (size_t)rows * 2);
      for (int64_t i = 0; i < rows; i++) {
        uint16_t *d = dst + i * kpad + c0;
        for (int64_t c = 0; c < kc; c++) d[c] = block[c][i];
      }
    }
    return;
  }
  for (int64_t i = 0; i < rows; i++) {
    uint16_t *d = dst + i * kpad;
    if (!s->vector) {
      memcpy(d, s->data + (r0 + i) * s->ld, (size_t)k * sizeof(uint16_t));
    } else {
      for (int64_t c = 0; c < k; c++) d[c] = s->data[c * s->ld];
    }
  }
}
