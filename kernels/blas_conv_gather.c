/* The data movement of the convolution engine: strided GEMM views handed to
 * cblas_sgemm, blocked im2col gathers (position-major and row-major), kernel
 * packing and output tile copies. Never allocates; reads and writes only the
 * elements the plan's geometry names. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "kernels/blas_conv_engine.h"
#include "kernels/blas_threads.h"

static bool blas_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE *t, blasint *ld) {
  if (cols <= 1) cs = 1;
  if (rows <= 1) rs = cs == 1 ? (cols > 1 ? cols : 1) : 1;
  if (cs == 1 && rs >= (cols > 1 ? cols : 1) && rs <= INT_MAX) {
    *t = CblasNoTrans;
    *ld = (blasint)rs;
    return true;
  }
  if (rs == 1 && cs >= (rows > 1 ? rows : 1) && cs <= INT_MAX) {
    *t = CblasTrans;
    *ld = (blasint)cs;
    return true;
  }
  return false;
}

bool conv_view_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  CBLAS_TRANSPOSE t;
  blasint ld;
  return rows <= INT_MAX && cols <= INT_MAX && blas_view(rows, cols, rs, cs, &t, &ld);
}

void conv_gemm(int64_t m, int64_t n, int64_t k, conv_mat a, conv_mat b, conv_mat c, float beta) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++) {
        float *e = &c.p[i * c.rs + j * c.cs];
        *e = beta == 0.0f ? 0.0f : beta * *e;
      }
    }
    return;
  }
  CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans, tc = CblasNoTrans;
  blasint lda = 1, ldb = 1, ldc = 1;
  kernel_blas_note_call();
  if (blas_view(m, n, c.rs, c.cs, &tc, &ldc) && tc == CblasNoTrans) {
    blas_view(m, k, a.rs, a.cs, &ta, &lda);
    blas_view(k, n, b.rs, b.cs, &tb, &ldb);
    cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f, a.p, lda, b.p, ldb, beta, c.p, ldc);
  } else {
    /* C^T (n x m) = B^T (n x k) * A^T (k x m), all read through swapped strides. */
    blas_view(n, m, c.cs, c.rs, &tc, &ldc);
    blas_view(n, k, b.cs, b.rs, &tb, &ldb);
    blas_view(k, m, a.cs, a.rs, &ta, &lda);
    cblas_sgemm(CblasRowMajor, tb, ta, (blasint)n, (blasint)m, (blasint)k, 1.0f, b.p, ldb, a.p, lda, beta, c.p, ldc);
  }
}

/* Coordinates of linear index i over walk dims (last fastest). */
static void decode(const optic_conv_walk_dim *w, int32_t n, int64_t i, int64_t *coord) {
  for (int32_t d = n - 1; d >= 0; d--) {
    coord[d] = i % w[d].size;
    i /= w[d].size;
  }
}

static void advance(const optic_conv_walk_dim *w, int32_t n, int64_t *coord) {
  for (int32_t d = n - 1; d >= 0; d--) {
    if (++coord[d] < w[d].size) return;
    coord[d] = 0;
  }
}

void conv_pos_strides_out(const optic_conv_plan *pl, int64_t *strides) {
  for (int32_t d = 0; d < pl->npos; d++) {
    int32_t s = pl->pos[d].which;
    strides[d] = s < 0 ? pl->g.out_sb : pl->g.out_ss[s];
  }
}

void conv_pos_strides_in(const optic_conv_plan *pl, int64_t *strides) {
  for (int32_t d = 0; d < pl->npos; d++) {
    int32_t s = pl->pos[d].which;
    strides[d] = s < 0 ? pl->g.in_sb : pl->g.in_ss[s];
  }
}

int64_t conv_pos_offset(const optic_conv_plan *pl, int64_t p, const int64_t *strides) {
  int64_t off = 0;
  for (int32_t d = pl->npos - 1; d >= 0; d--) {
    off += (p % pl->pos[d].size) * strides[d];
    p /= pl->pos[d].size;
  }
  return off;
}

int64_t conv_kernel_row_stride(const optic_conv_plan *pl) { return pl->k_row_stride; }

/* Batch index and spatial coordinates of a position from its walk coordinates. */
static void position_of(const optic_conv_plan *pl, const int64_t *coord, int64_t *b, int64_t *y) {
  *b = 0;
  for (int32_t s = 0; s < pl->g.nsp; s++) y[s] = 0;
  for (int32_t d = 0; d < pl->npos; d++) {
    if (pl->pos[d].which < 0) {
      *b = coord[d];
    } else {
      y[pl->pos[d].which] = coord[d];
    }
  }
}

/* Input offset along spatial dim s for window tap k at base position
 * X0 = y*stride - pad_lo; false on padding or between dilated elements. */
static inline bool tap_offset(const optic_conv_geom *G, int32_t s, int64_t X0, int64_t k, int64_t *off) {
  int64_t keff = G->rev[s] ? G->k_size[s] - 1 - k : k;
  int64_t X = X0 + keff * G->rhs_dil[s];
  if (G->lhs_dil[s] == 1) {
    if ((uint64_t)X >= (uint64_t)G->in_size[s]) return false;
    *off += X * G->in_ss[s];
    return true;
  }
  if (X < 0 || X % G->lhs_dil[s] != 0 || X / G->lhs_dil[s] >= G->in_size[s]) return false;
  *off += (X / G->lhs_dil[s]) * G->in_ss[s];
  return true;
}

static void copy_strided(float *dst, const float *src, int64_t n, int64_t stride) {
  if (stride == 1) {
    memcpy(dst, src, (size_t)n * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; i++) dst[i] = src[i * stride];
  }
}

void conv_gather_mk(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                    int64_t k1, float *col) {
  const optic_conv_geom *G = &pl->g;
  const int64_t cin = G->cin, kt = k1 - k0;
  const int32_t ntap = pl->nrow - 1; /* row walk: taps, then the feature dim last */
  const int64_t t0 = k0 / cin, t1 = (k1 - 1) / cin;
  int64_t coord[OPTIC_CONV_MAX_SPATIAL + 1], tap0[OPTIC_CONV_MAX_SPATIAL + 1] = {0};
  decode(pl->pos, pl->npos, p, coord);
  decode(pl->row, ntap, t0, tap0);
  const float *gin = in + g * G->in_sg;
  for (int64_t j = 0; j < len; j++) {
    int64_t b, y[OPTIC_CONV_MAX_SPATIAL], X0[OPTIC_CONV_MAX_SPATIAL];
    position_of(pl, coord, &b, y);
    /* Spatial dims with a one-wide window are not in the tap walk: their
     * (single) tap decides validity for the whole position. */
    int64_t fixed = 0;
    bool fixed_valid = true;
    for (int32_t s = 0; s < G->nsp; s++) {
      X0[s] = y[s] * G->stride[s] - G->pad_lo[s];
      if (G->k_size[s] == 1 && fixed_valid) fixed_valid = tap_offset(G, s, X0[s], 0, &fixed);
    }
    const float *base = gin + b * G->in_sb + fixed;
    float *dst = col + j * kt;
    int64_t tap[OPTIC_CONV_MAX_SPATIAL + 1];
    memcpy(tap, tap0, sizeof tap);
    for (int64_t t = t0; t <= t1; t++) {
      int64_t c_lo = t == t0 ? k0 - t * cin : 0, c_hi = t == t1 ? k1 - t * cin : cin;
      int64_t off = 0;
      bool valid = fixed_valid;
      for (int32_t d = 0; d < ntap && valid; d++) {
        int32_t s = pl->row[d].which;
        valid = tap_offset(G, s, X0[s], tap[d], &off);
      }
      if (valid) {
        copy_strided(dst, base + off + c_lo * G->in_sc, c_hi - c_lo, G->in_sc);
      } else {
        memset(dst, 0, (size_t)(c_hi - c_lo) * sizeof(float));
      }
      dst += c_hi - c_lo;
      advance(pl->row, ntap, tap);
    }
    advance(pl->pos, pl->npos, coord);
  }
}

/* Fills dst[0..n) with the input along spatial dim s for positions y0..y0+n-1
 * and window tap k, starting from offset base (other dims already applied). */
static void gather_run_spatial(const optic_conv_geom *G, int32_t s, const float *base, int64_t y0, int64_t n, int64_t k,
                               float *dst) {
  int64_t keff = G->rev[s] ? G->k_size[s] - 1 - k : k;
  int64_t a = keff * G->rhs_dil[s] - G->pad_lo[s]; /* X = y*stride + a */
  int64_t st = G->stride[s], ld = G->lhs_dil[s], ss = G->in_ss[s];
  if (ld == 1) {
    /* valid y: 0 <= y*st + a < in_size */
    int64_t lo = a >= 0 ? 0 : (-a + st - 1) / st;
    int64_t hi = G->in_size[s] - a <= 0 ? 0 : (G->in_size[s] - a - 1) / st + 1; /* first invalid y */
    int64_t q_lo = lo - y0, q_hi = hi - y0;
    if (q_lo < 0) q_lo = 0;
    if (q_hi > n) q_hi = n;
    if (q_hi < q_lo) q_hi = q_lo;
    if (q_lo > n) q_lo = q_hi = n;
    memset(dst, 0, (size_t)q_lo * sizeof(float));
    if (q_hi > q_lo) copy_strided(dst + q_lo, base + ((y0 + q_lo) * st + a) * ss, q_hi - q_lo, st * ss);
    memset(dst + q_hi, 0, (size_t)(n - q_hi) * sizeof(float));
    return;
  }
  /* lhs dilation: X must be a non-negative multiple of ld below in*ld. The
   * valid q recur with period ld / gcd(st, ld): find the first by one scan
   * of at most ld candidates, then step (no division per element). */
  memset(dst, 0, (size_t)n * sizeof(float));
  int64_t q = 0;
  if (y0 * st + a < 0) q = (-(y0 * st + a) + st - 1) / st; /* first q with X >= 0 */
  int64_t end = q + ld;
  while (q < n && q < end && ((y0 + q) * st + a) % ld != 0) q++;
  if (q >= n || q >= end) return;
  int64_t gcd = st, r = ld;
  while (r != 0) {
    int64_t t = gcd % r;
    gcd = r, r = t;
  }
  const int64_t period = ld / gcd, dx = period * st / ld;
  for (int64_t x = ((y0 + q) * st + a) / ld; q < n && x < G->in_size[s]; q += period, x += dx) dst[q] = base[x * ss];
}

void conv_gather_km(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                    int64_t k1, float *col) {
  const optic_conv_geom *G = &pl->g;
  const float *gin = in + g * G->in_sg;
  int64_t row[OPTIC_CONV_MAX_SPATIAL + 1], start[OPTIC_CONV_MAX_SPATIAL + 1];
  decode(pl->row, pl->nrow, k0, row);
  decode(pl->pos, pl->npos, p, start);
  const int32_t inner = pl->npos - 1; /* innermost position dim; runs go along it */
  for (int64_t r = k0; r < k1; r++) {
    int64_t c = 0, k[OPTIC_CONV_MAX_SPATIAL] = {0};
    for (int32_t d = 0; d < pl->nrow; d++) {
      if (pl->row[d].which < 0) {
        c = row[d];
      } else {
        k[pl->row[d].which] = row[d];
      }
    }
    float *dst = col + (r - k0) * len;
    int64_t coord[OPTIC_CONV_MAX_SPATIAL + 1];
    memcpy(coord, start, sizeof coord);
    for (int64_t j = 0; j < len;) {
      int64_t seg = inner >= 0 ? pl->pos[inner].size - coord[inner] : 1;
      if (seg > len - j) seg = len - j;
      int64_t b, y[OPTIC_CONV_MAX_SPATIAL];
      position_of(pl, coord, &b, y);
      int32_t run_dim = inner >= 0 ? pl->pos[inner].which : -2;
      int64_t off = c * G->in_sc;
      bool valid = true;
      for (int32_t s = 0; s < G->nsp && valid; s++) {
        if (s != run_dim) valid = tap_offset(G, s, y[s] * G->stride[s] - G->pad_lo[s], k[s], &off);
      }
      if (!valid) {
        memset(dst + j, 0, (size_t)seg * sizeof(float));
      } else if (run_dim < 0) { /* run along batch (or a single position) */
        copy_strided(dst + j, gin + off + b * G->in_sb, seg, G->in_sb);
      } else {
        gather_run_spatial(G, run_dim, gin + off + b * G->in_sb, y[run_dim], seg, k[run_dim], dst + j);
      }
      j += seg;
      if (inner >= 0) {
        coord[inner] += seg - 1;
        advance(pl->pos, pl->npos, coord);
      }
    }
    advance(pl->row, pl->nrow, row);
  }
}

/* dst[0..n) = the input along spatial dim s for output coordinate y and
 * window taps k0..k0+n-1 of that dim, from offset base (other dims applied). */
static void gather_run_taps(const optic_conv_geom *G, int32_t s, const float *base, int64_t y, int64_t k0, int64_t n,
                            float *dst) {
  int64_t X0 = y * G->stride[s] - G->pad_lo[s], rd = G->rhs_dil[s], ss = G->in_ss[s], in = G->in_size[s];
  if (!G->rev[s] && G->lhs_dil[s] == 1) {
    /* valid taps k: 0 <= X0 + k*rd < in */
    int64_t lo = X0 >= 0 ? 0 : (-X0 + rd - 1) / rd;
    int64_t hi = in - X0 <= 0 ? 0 : (in - X0 - 1) / rd + 1;
    int64_t q_lo = lo - k0, q_hi = hi - k0;
    if (q_lo < 0) q_lo = 0;
    if (q_hi > n) q_hi = n;
    if (q_lo > n) q_lo = n;
    if (q_hi < q_lo) q_hi = q_lo;
    memset(dst, 0, (size_t)q_lo * sizeof(float));
    if (q_hi > q_lo) copy_strided(dst + q_lo, base + (X0 + (k0 + q_lo) * rd) * ss, q_hi - q_lo, rd * ss);
    memset(dst + q_hi, 0, (size_t)(n - q_hi) * sizeof(float));
    return;
  }
  for (int64_t q = 0; q < n; q++) {
    int64_t off = 0;
    dst[q] = tap_offset(G, s, X0, k0 + q, &off) ? base[off] : 0.0f;
  }
}

void conv_gather_mk_tap(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                        int64_t k1, float *col) {
  const optic_conv_geom *G = &pl->g;
  const int32_t last = pl->nrow - 1, s_run = pl->row[last].which; /* the row walk ends with a spatial dim */
  const int64_t run = pl->row[last].size, kt = k1 - k0;
  int64_t coord[OPTIC_CONV_MAX_SPATIAL + 1], row0[OPTIC_CONV_MAX_SPATIAL + 1];
  decode(pl->pos, pl->npos, p, coord);
  decode(pl->row, pl->nrow, k0, row0);
  const float *gin = in + g * G->in_sg;
  for (int64_t j = 0; j < len; j++) {
    int64_t b, y[OPTIC_CONV_MAX_SPATIAL];
    position_of(pl, coord, &b, y);
    int64_t fixed = 0;
    bool fixed_valid = true;
    for (int32_t s = 0; s < G->nsp && fixed_valid; s++) {
      if (G->k_size[s] == 1) fixed_valid = tap_offset(G, s, y[s] * G->stride[s] - G->pad_lo[s], 0, &fixed);
    }
    const float *base = gin + b * G->in_sb + fixed;
    float *dst = col + j * kt;
    int64_t row[OPTIC_CONV_MAX_SPATIAL + 1];
    memcpy(row, row0, sizeof row);
    for (int64_t r = k0; r < k1;) {
      int64_t seg = run - row[last];
      if (seg > k1 - r) seg = k1 - r;
      int64_t off = 0;
      bool valid = fixed_valid;
      for (int32_t d = 0; d < last && valid; d++) {
        int32_t s = pl->row[d].which;
        if (s < 0) {
          off += row[d] * G->in_sc;
        } else {
          valid = tap_offset(G, s, y[s] * G->stride[s] - G->pad_lo[s], row[d], &off);
        }
      }
      if (valid) {
        gather_run_taps(G, s_run, base + off, y[s_run], row[last], seg, dst);
      } else {
        memset(dst, 0, (size_t)seg * sizeof(float));
      }
      dst += seg;
      r += seg;
      row[last] += seg - 1;
      advance(pl->row, pl->nrow, row);
    }
    advance(pl->pos, pl->npos, coord);
  }
}

/* Kernel offset of contraction row coordinates (feature and taps). */
static int64_t kernel_row_offset(const optic_conv_plan *pl, const int64_t *row) {
  int64_t off = 0;
  for (int32_t d = 0; d < pl->nrow; d++) {
    int32_t s = pl->row[d].which;
    off += row[d] * (s < 0 ? pl->g.k_si : pl->g.k_ss[s]);
  }
  return off;
}

void conv_kernel_to_dense(const optic_conv_plan *pl, const float *kernel, int64_t g, int64_t k0, int64_t k1,
                          float *dense) {
  const optic_conv_geom *G = &pl->g;
  int64_t row[OPTIC_CONV_MAX_SPATIAL + 1];
  decode(pl->row, pl->nrow, k0, row);
  for (int64_t r = k0; r < k1; r++) {
    copy_strided(dense + (r - k0) * G->cout, kernel + g * G->k_sg + kernel_row_offset(pl, row), G->cout, G->k_so);
    advance(pl->row, pl->nrow, row);
  }
}

void conv_kernel_from_dense(const optic_conv_plan *pl, const float *dense, int64_t g, int64_t k0, int64_t k1,
                            float *kernel) {
  const optic_conv_geom *G = &pl->g;
  int64_t row[OPTIC_CONV_MAX_SPATIAL + 1];
  decode(pl->row, pl->nrow, k0, row);
  for (int64_t r = k0; r < k1; r++) {
    float *dst = kernel + g * G->k_sg + kernel_row_offset(pl, row);
    const float *src = dense + (r - k0) * G->cout;
    for (int64_t o = 0; o < G->cout; o++) dst[o * G->k_so] = src[o];
    advance(pl->row, pl->nrow, row);
  }
}

void conv_tile_to_output(const optic_conv_plan *pl, const float *tile, int64_t g, int64_t p, int64_t len, float *out) {
  const optic_conv_geom *G = &pl->g;
  int64_t strides[OPTIC_CONV_MAX_SPATIAL + 1], coord[OPTIC_CONV_MAX_SPATIAL + 1];
  conv_pos_strides_out(pl, strides);
  decode(pl->pos, pl->npos, p, coord);
  for (int64_t j = 0; j < len; j++) {
    int64_t off = g * G->out_sg;
    for (int32_t d = 0; d < pl->npos; d++) off += coord[d] * strides[d];
    for (int64_t o = 0; o < G->cout; o++) out[off + o * G->out_so] = tile[j * G->cout + o];
    advance(pl->pos, pl->npos, coord);
  }
}

void conv_tile_from_output(const optic_conv_plan *pl, const float *out, int64_t g, int64_t p, int64_t len,
                           float *tile) {
  const optic_conv_geom *G = &pl->g;
  int64_t strides[OPTIC_CONV_MAX_SPATIAL + 1], coord[OPTIC_CONV_MAX_SPATIAL + 1];
  conv_pos_strides_out(pl, strides);
  decode(pl->pos, pl->npos, p, coord);
  for (int64_t j = 0; j < len; j++) {
    int64_t off = g * G->out_sg;
    for (int32_t d = 0; d < pl->npos; d++) off += coord[d] * strides[d];
    copy_strided(tile + j * G->cout, out + off, G->cout, G->out_so);
    advance(pl->pos, pl->npos, coord);
  }
}
