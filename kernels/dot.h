/* Internal: f32 dot with XLA dot_general semantics, planned once and run on
 * OpenBLAS (cblas_sgemm / cblas_sgemv). The plan validates and decides the
 * mapping; running never allocates, never spawns threads, never prints.
 *
 * Semantics (XLA's DotGeneral): lhs and rhs are dense row-major f32 arrays of
 * rank <= 8. Dimension numbers pair lhs_batch[i] with rhs_batch[i] and
 * lhs_contracting[i] with rhs_contracting[i]; every other dim is free. The
 * output is out[batch..., lhs free..., rhs free...] with the batch dims in
 * lhs_batch order and the free dims of each operand in increasing order:
 *   out[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n].
 * With no contracting dims it is an outer product; with a 0-sized contracting
 * dim the sum is empty and the output is all zeros.
 *
 * Threading (decided and measured in docs/kernels-dot.md): the executor calls
 * optic_dot_pack, then optic_dot_compute, from EVERY thread of its one
 * parallel region with (thread, nthreads); it puts a barrier between the two
 * when plan->lhs.packed or plan->rhs.packed, and one after compute before the
 * output is read. Inside an OpenMP region OpenBLAS runs single-threaded, so
 * each thread's share goes through single-threaded sgemm/sgemv.
 * optic_dot_run does both steps for the whole dot; called outside any
 * parallel region it lets OpenBLAS use its own threads (tests, tools,
 * constant folding). */
#ifndef OPTIC_KERNELS_DOT_H
#define OPTIC_KERNELS_DOT_H

#include <optic/kernels.h>

#include "kernels/common.h"

/* optic_dot_dims (XLA's DotDimensionNumbers) is public: include/optic/kernels.h. */

/* Validates shapes and dimension numbers and computes the output shape.
 * Needs no BLAS (the graph builder's shape inference may call it). Errors:
 * INVALID_ARGUMENT (NULL, rank out of range, counts that differ, a dim out of
 * range or listed twice, output rank above OPTIC_MAX_RANK), SHAPE_MISMATCH
 * (paired batch or contracting dims of different sizes), OVERFLOW (output too
 * large). The message names the dims, e.g. "dot: lhs contracting dim 1 has
 * size 3 but rhs contracting dim 0 has size 4". */
optic_status optic_dot_infer_shape(const optic_shape *lhs, const optic_shape *rhs, const optic_dot_dims *dims,
                                   optic_shape *out);

/* The free dims of one operand (dims in neither of its lists), in increasing
 * order, written to free_dims; returns how many. Assumes validated dims. */
int32_t optic_dot_free_dims(int32_t rank, const int32_t *batch, int32_t batch_count, const int32_t *contracting,
                            int32_t contracting_count, int32_t *free_dims);

typedef enum optic_dot_path {
  OPTIC_DOT_PATH_EMPTY, /* the output has no elements: nothing runs */
  OPTIC_DOT_PATH_ZEROS, /* K == 0: the output is filled with zeros */
  OPTIC_DOT_PATH_GEMV,  /* M == 1 or N == 1: cblas_sgemv per batch item */
  OPTIC_DOT_PATH_GEMM   /* cblas_sgemm per batch item */
} optic_dot_path;

/* How one operand reaches BLAS. Read-only for callers; set by optic_dot_plan. */
typedef struct optic_dot_operand {
  bool packed; /* copied into scratch (dense, batch-major) before compute */
  bool trans;  /* the matrix is stored transposed: lhs as K x M, rhs as N x K */
  bool vector; /* the vector of a GEMV (M == 1 for lhs, N == 1 for rhs) */
  int64_t ld;  /* leading dimension of the matrix, or the vector's increment */
  /* Element stride of each batch dim (in output batch order), in the
   * operand's memory or, when packed, in the packed copy. */
  int64_t batch_strides[OPTIC_MAX_RANK];
  /* The packed copy: at scratch + scratch_offset, dense in the order
   * pack_sizes (outermost first), read from the source with pack_strides.
   * Size-1 dims are dropped and contiguous runs merged, so pack_rank <= 8. */
  size_t scratch_offset;
  int32_t pack_rank;
  int64_t pack_sizes[OPTIC_MAX_RANK];
  int64_t pack_strides[OPTIC_MAX_RANK];
} optic_dot_operand;

/* A planned dot: a plain value with no pointers into anything, so it may be
 * copied, stored in a compiled program and used by any number of threads at
 * once. Every field is read-only for callers. Like POSIX `struct stat` and
 * stat(), the type is spelled `struct optic_dot_plan` and the function that
 * fills it is optic_dot_plan(). */
struct optic_dot_plan {
  optic_shape lhs_shape, rhs_shape, out_shape;
  optic_dot_path path;
  /* The GEMM view: batch items of an (M x K) . (K x N) product; out is
   * row-major [batch, M, N] by construction, so it is never copied. */
  int64_t batch, m, n, k;
  bool split_n;         /* threads split N (else M) within a batch item */
  size_t scratch_bytes; /* what run/pack/compute need; 0 when copy-free */
  optic_dot_operand lhs, rhs;
  int32_t batch_rank;                  /* number of batch dims */
  int64_t batch_sizes[OPTIC_MAX_RANK]; /* their sizes, in lhs_batch order */
};

/* Validates (as optic_dot_infer_shape) and decides the mapping onto BLAS:
 * each operand goes copy-free when its free dims and its contracting dims
 * each form one strided index (contiguous runs, in a usable order) whose
 * layout BLAS accepts; otherwise it is packed into scratch. Batch dims may
 * sit anywhere (each batch item is one BLAS call at its own offset). Errors
 * as optic_dot_infer_shape, plus UNSUPPORTED when M, N or K exceeds the
 * 32-bit index range of the OpenBLAS build. Thread-safe. */
optic_status optic_dot_plan(const optic_shape *lhs, const optic_shape *rhs, const optic_dot_dims *dims,
                            struct optic_dot_plan *plan);

/* Runs the whole dot: out = dot(lhs, rhs). out must hold out_shape's
 * elements and must not overlap lhs, rhs or scratch; scratch must hold
 * plan->scratch_bytes bytes aligned to at least 4 (64 is best) and may be
 * NULL when that is 0. Called outside a parallel region, OpenBLAS uses its own
 * threads. Never allocates. Errors: INVALID_ARGUMENT for a NULL plan or a NULL
 * buffer that the plan needs. */
optic_status optic_dot_run(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, float *out,
                           void *scratch);

/* The two steps of optic_dot_run, split for an executor's parallel region:
 * thread `thread` of `nthreads` packs its share of the packed operands, then
 * (after a barrier when anything is packed) computes its share of the output.
 * Shares are disjoint and together cover everything, so calling every thread's
 * share in turn from one thread is also correct. Same errors as optic_dot_run,
 * plus INVALID_ARGUMENT for thread outside [0, nthreads). */
optic_status optic_dot_pack(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, void *scratch,
                            int thread, int nthreads);
optic_status optic_dot_compute(const struct optic_dot_plan *plan, const float *lhs, const float *rhs, float *out,
                               const void *scratch, int thread, int nthreads);

/* Naive reference (test oracle, constant folding): plain loops over the
 * output and the contracting index, accumulating in double. Validates like
 * optic_dot_infer_shape; out holds the output shape's elements. */
optic_status optic_ref_f32_dot(const optic_shape *lhs_shape, const optic_shape *rhs_shape, const optic_dot_dims *dims,
                               const float *lhs, const float *rhs, float *out);

#endif
