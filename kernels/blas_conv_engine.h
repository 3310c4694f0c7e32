/* Private to kernels/blas_conv*.c: the pieces of the planned convolution
 * engine (strided GEMM views, im2col gathers, kernel packing, tile copies).
 * Nothing here allocates, spawns threads or fails on valid plans. */
#ifndef OPTIC_KERNELS_BLAS_CONV_ENGINE_H
#define OPTIC_KERNELS_BLAS_CONV_ENGINE_H

#include "kernels/conv.h"

/* A matrix view: element (r, c) at p[r*rs + c*cs]. */
typedef struct conv_mat {
  float *p;
  int64_t rs, cs;
} conv_mat;

/* True if a rows x cols view with these strides can be handed to cblas
 * (one unit stride, the other >= the extent, both within a BLAS int). */
bool conv_view_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

/* C (m x n) = A (m x k) * B (k x n) + beta * C, single call to cblas_sgemm in
 * whichever orientation the views allow (C or its transpose row-major). With
 * k == 0 it writes beta * C. The plan guarantees the views are valid. */
void conv_gemm(int64_t m, int64_t n, int64_t k, conv_mat a, conv_mat b, conv_mat c, float beta);

/* Offset of linear position p of the position walk in an operand whose walk
 * dims have the given strides. */
int64_t conv_pos_offset(const optic_conv_plan *pl, int64_t p, const int64_t *strides);

/* Output (or grad output) strides of each position walk dim, and the input's. */
void conv_pos_strides_out(const optic_conv_plan *pl, int64_t *strides);
void conv_pos_strides_in(const optic_conv_plan *pl, int64_t *strides);

/* im2col of positions [p, p+len) of group g, contraction rows [k0, k1):
 * strategy MK writes col[j*(k1-k0) + (r-k0)], KM writes col[(r-k0)*len + j]. */
void conv_gather_mk(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                    int64_t k1, float *col);
void conv_gather_km(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                    int64_t k1, float *col);

/* Like conv_gather_mk (col[j*(k1-k0) + (r-k0)]) for the IM2COL_MK_TAP
 * strategy: the row walk (features among the taps, by kernel stride) ends
 * with a spatial tap dim, and copies run along its taps. */
void conv_gather_mk_tap(const optic_conv_plan *pl, const float *in, int64_t g, int64_t p, int64_t len, int64_t k0,
                        int64_t k1, float *col);

/* Kernel rows [k0, k1) of group g in row-walk order as a dense (k1-k0) x cout
 * matrix (to_dense) or back (from_dense, for the kernel gradient). */
void conv_kernel_to_dense(const optic_conv_plan *pl, const float *kernel, int64_t g, int64_t k0, int64_t k1,
                          float *dense);
void conv_kernel_from_dense(const optic_conv_plan *pl, const float *dense, int64_t g, int64_t k0, int64_t k1,
                            float *kernel);

/* Output positions [p, p+len) of group g to or from a dense len x cout tile. */
void conv_tile_to_output(const optic_conv_plan *pl, const float *tile, int64_t g, int64_t p, int64_t len, float *out);
void conv_tile_from_output(const optic_conv_plan *pl, const float *out, int64_t g, int64_t p, int64_t len, float *tile);

/* Row stride of the kernel as a kc x cout matrix (valid when kernel_direct). */
int64_t conv_kernel_row_stride(const optic_conv_plan *pl);

#endif
