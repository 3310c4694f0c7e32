/* optic kernels layer: SIMD microkernels with run-time ISA dispatch and the
 * OpenBLAS-backed dot and convolution. This header grows with the kernel
 * families; today it describes the BLAS library optic runs on.
 *
 * Contents, in order:
 *   1. OpenBLAS information (optic_blas_get_info)
 *   2. dot dimension numbers (optic_dot_dims), shared with the graph layer */
#ifndef OPTIC_KERNELS_H
#define OPTIC_KERNELS_H

#include <optic/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What OpenBLAS reports about itself. Strings point into OpenBLAS (static). */
typedef struct optic_blas_info {
  const char *config;   /* openblas_get_config(): version and build options */
  const char *corename; /* openblas_get_corename(): the kernel set chosen at load,
                           e.g. "Haswell" (OPENBLAS_CORETYPE may force it) */
  const char *parallel; /* "sequential", "pthreads" or "openmp" */
  int32_t threads;      /* openblas_get_num_threads() */
  /* The ISA level of corename's kernels, and whether it is weaker than what
   * this CPU supports (optic_isa_best): then GEMM runs below the machine's peak. */
  optic_isa core_isa;
  bool core_weaker_than_cpu;
} optic_blas_info;

/* Fills *out. Thread-safe. Errors: INVALID_ARGUMENT for NULL. */
OPTIC_API optic_status optic_blas_get_info(optic_blas_info *out);

/* XLA's DotDimensionNumbers. Counts of the lhs and rhs lists must match;
 * entries are dim indices of the operand. */
typedef struct optic_dot_dims {
  int32_t lhs_batch_count, rhs_batch_count;
  int32_t lhs_contracting_count, rhs_contracting_count;
  int32_t lhs_batch[OPTIC_MAX_RANK], rhs_batch[OPTIC_MAX_RANK];
  int32_t lhs_contracting[OPTIC_MAX_RANK], rhs_contracting[OPTIC_MAX_RANK];
} optic_dot_dims;

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_KERNELS_H */
