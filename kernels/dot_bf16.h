/* Internal: dot_general with bf16 operands and f32 accumulation on
 * AMX-BF16 (tdpbf16ps) or AVX512_BF16 (vdpbf16ps), for a plan made by
 * optic_dot_plan (kernels/dot.h).
 *
 * Semantics: out[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n] in f32.
 * Each product of two bf16 values is exact in f32; the sums are rounded to
 * nearest even in f32, pairs of k first (odd index, then even), then the
 * pairs in increasing k inside blocks of 256, then the blocks (AMX: pairs
 * in increasing k over all of K). Both instructions treat subnormal inputs
 * and results as zero (DAZ/FTZ, whatever MXCSR says). The fallback (widen to f32, sgemm) sums in another order and keeps
 * subnormals, so the two agree within the f32 summation bound
 * K * 2^-24 * sum_k |lhs * rhs| plus K * 2^-126 (docs/kernels-dot.md).
 *
 * Steps, like optic_dot_pack / optic_dot_compute, called from every thread
 * with (thread, nthreads): optic_dot_bf16_pack copies the operands the plan
 * packs into dense bf16 copies (step 1) and then every operand into
 * vdpbf16ps panels (step 2); the caller puts a barrier after step 1 when
 * plan->lhs.packed or plan->rhs.packed, after step 2, and after compute.
 * Never allocates, never spawns threads. */
#ifndef OPTIC_KERNELS_DOT_BF16_H
#define OPTIC_KERNELS_DOT_BF16_H

#include "kernels/dot.h"

#define OPTIC_BF16_MR 12 /* rows of an A panel and of the micro-kernel tile */
#define OPTIC_BF16_NR 32 /* columns of a B panel (two zmm of f32) */

/* One batch item of an operand as a matrix (lhs rows x k, rhs k x cols). */
typedef struct optic_bf16_matrix {
  const uint16_t *data;
  int64_t rows, cols, ld;
  bool trans, vector; /* as optic_dot_operand */
} optic_bf16_matrix;

typedef struct optic_bf16_gemm_args {
  const uint32_t *a, *b; /* one batch item's panels */
  float *c;
  int64_t m, n, k, ldc;
} optic_bf16_gemm_args;

/* The bf16 kernels, best last. Each has its own panel layout, so the kernel
 * chosen for the scratch size must be the one passed to every step. */
typedef enum optic_bf16_kernel {
  OPTIC_BF16_NONE = 0,   /* no bf16 kernel: widen to f32 and use sgemm */
  OPTIC_BF16_AVX512 = 1, /* vdpbf16ps, 12 x 32 register tile */
  OPTIC_BF16_AMX = 2     /* AMX-BF16 tdpbf16ps, 32 x 32 block of four tiles */
} optic_bf16_kernel;

/* The best bf16 kernel here, chosen once (thread-safe):
 * AMX when CPUID reports AMX-TILE and AMX-BF16, XCR0 enables tile state,
 * Linux grants this process tile data (arch_prctl ARCH_REQ_XCOMP_PERM, asked
 * once), the selected ISA is avx512 and OPTIC_ISA is unset (AMX is above
 * every ISA OPTIC_ISA can name, so any valid cap excludes it); else AVX512
 * when the CPU has AVX512_BF16 and the selected ISA is avx512; else NONE. */
optic_bf16_kernel optic_dot_bf16_kernel(void);
/* True when kernel can run here (NONE: false). */
bool optic_dot_bf16_kernel_usable(optic_bf16_kernel kernel);
const char *optic_dot_bf16_kernel_name(optic_bf16_kernel kernel);
/* optic_dot_bf16_kernel() != OPTIC_BF16_NONE. */
bool optic_dot_bf16_available(void);

/* Scratch the bf16 steps need for plan with the best kernel
 * (>= plan->scratch_bytes); _for: with a given kernel. */
size_t optic_dot_bf16_scratch_bytes(const struct optic_dot_plan *plan);
size_t optic_dot_bf16_scratch_bytes_for(const struct optic_dot_plan *plan, optic_bf16_kernel kernel);

/* Step 1 (dense copies; only when the plan packs an operand) and step 2
 * (panels). Errors: INVALID_ARGUMENT (NULL plan or buffer, bad thread),
 * UNSUPPORTED when optic_dot_bf16_available() is false. */
optic_status optic_dot_bf16_pack_dense(const struct optic_dot_plan *plan, const uint16_t *lhs, const uint16_t *rhs,
                                       void *scratch, int thread, int nthreads);
optic_status optic_dot_bf16_pack_panels(const struct optic_dot_plan *plan, const uint16_t *lhs, const uint16_t *rhs,
                                        void *scratch, int thread, int nthreads);
/* out (f32, row-major out_shape) = the dot, this thread's share. */
optic_status optic_dot_bf16_compute(const struct optic_dot_plan *plan, float *out, const void *scratch, int thread,
                                    int nthreads);
/* All steps from one thread. */
optic_status optic_dot_bf16_run(const struct optic_dot_plan *plan, const uint16_t *lhs, const uint16_t *rhs, float *out,
                                void *scratch);
/* The same four calls with an explicit kernel (tests run every usable one);
 * UNSUPPORTED when !optic_dot_bf16_kernel_usable(kernel). */
optic_status optic_dot_bf16_pack_panels_with(optic_bf16_kernel kernel, const struct optic_dot_plan *plan,
                                             const uint16_t *lhs, const uint16_t *rhs, void *scratch, int thread,
                                             int nthreads);
optic_status optic_dot_bf16_compute_with(optic_bf16_kernel kernel, const struct optic_dot_plan *plan, float *out,
                                         const void *scratch, int thread, int nthreads);
optic_status optic_dot_bf16_run_with(optic_bf16_kernel kernel, const struct optic_dot_plan *plan, const uint16_t *lhs,
                                     const uint16_t *rhs, float *out, void *scratch);

/* The ISA kernels (kernels/x86/avx512bf16/). */
void optic_bf16_pack_a__avx512bf16(const optic_bf16_matrix *s, int64_t r0, uint32_t *dst);
/* B panel with kpairs_pad >= ceil(k/2) rows of pairs (the rest zero). */
void optic_bf16_pack_b__avx512bf16(const optic_bf16_matrix *s, int64_t c0, int64_t kpairs_pad, uint32_t *dst);
void optic_bf16_gemm__avx512bf16(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1);
/* Direct convolution rows (kernels/conv_bf16.h): c[rows x cols] = the sum
 * over taps t and pairs kp < tap_pairs of A row i (a + tap_off[t] + i * rs,
 * bf16 elements, pair kp at 2 * kp) times B panel row t * tap_pairs + kp.
 * rows <= 14, cols <= NR; rows up to the next of 7 or 14 are read (their
 * results dropped), so the buffer behind a must hold them. With out set,
 * row i goes to out + i * ldo instead (columns contiguous), as f32 or, with
 * out_bf16, rounded to bf16 as optic_half_from_f32_bf16 does. */
typedef struct optic_bf16_conv_rows_args {
  const uint16_t *a;
  const int64_t *tap_off;
  int64_t taps, tap_pairs, rs;
  const uint32_t *b;
  float *c;
  int64_t ldc;
  void *out;
  int64_t ldo;
  bool out_bf16;
  int rows, cols;
} optic_bf16_conv_rows_args;
#define OPTIC_BF16_CONV_ROWS 14
void optic_bf16_conv_rows__avx512bf16(const optic_bf16_conv_rows_args *r);
/* AMX (kernels/x86/amx/): A panels of 32 rows, k contiguous, padded to kpad
 * (a multiple of 32); g->k is kpad. */
void optic_bf16_pack_a__amx(const optic_bf16_matrix *s, int64_t r0, int64_t kpad, uint16_t *dst);
void optic_bf16_gemm__amx(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1);

/* Shared with blas_dot_run.c: thread's share of packing one operand of
 * elem_size-byte elements into its dense copy. */
void optic_dot_pack_operand(const optic_dot_operand *op, const void *src, void *dst, size_t elem_size, int thread,
                            int nthreads);

#endif
