/* Internal: f32 convolution with XLA semantics (N-D, strides, signed padding,
 * lhs/rhs dilation, window reversal, feature and batch groups, any dim_labels),
 * its shape inference, the naive double-precision reference, and the planned
 * OpenBLAS implementation of the forward pass and both gradients.
 * Run functions never allocate, never spawn threads, never print.
 *
 * Arrays are dense and row-major in the shapes given here. A non-default XLA
 * layout (minor_to_major) is expressed by optic_conv_apply_layouts, which
 * rewrites a logical descriptor into one over the physical (row-major) order;
 * dim labels may name any physical position, so no data is transposed.
 *
 * Semantics (StableHLO spec "convolution"; XLA ShapeInference): with
 * Cg = input features / feature_group_count, Og = kernel output features /
 * (feature_group_count * batch_group_count), Bo = input batch / batch_group_count,
 * output[b, o, y] = sum over c < kernel input features, window index k of
 *   input[bg*Bo + b, g*Cg + c, x] * kernel[c, o, k]
 * where g = o / (O / feature_group_count), bg = o / (O / batch_group_count),
 * and per spatial dim, with k' = reversed ? size-1-k : k, the position in the
 * lhs-dilated, padded input is X = y*stride + k'*rhs_dilation - pad_lo; the
 * term exists only if 0 <= X < (in-1)*lhs_dilation+1 and X % lhs_dilation == 0
 * (then x = X / lhs_dilation); otherwise it is padding (zero). */
#ifndef OPTIC_KERNELS_CONV_H
#define OPTIC_KERNELS_CONV_H

#include "kernels/common.h"

#define OPTIC_CONV_MAX_SPATIAL (OPTIC_MAX_RANK - 2)

/* Which dimension of each operand plays which role: XLA's
 * ConvolutionDimensionNumbers. Indices are positions in the operand's shape. */
typedef struct optic_conv_dnums {
  int32_t nspatial;
  int32_t in_batch, in_feature, in_spatial[OPTIC_CONV_MAX_SPATIAL];
  int32_t k_in, k_out, k_spatial[OPTIC_CONV_MAX_SPATIAL];
  int32_t out_batch, out_feature, out_spatial[OPTIC_CONV_MAX_SPATIAL];
} optic_conv_dnums;

/* A convolution: operand shapes, dimension numbers and window. Spatial arrays
 * are indexed by spatial dimension number (the digit in the dim labels);
 * window sizes are the kernel's spatial dims. */
typedef struct optic_conv_desc {
  optic_conv_dnums dn;
  optic_shape input, kernel;
  int64_t stride[OPTIC_CONV_MAX_SPATIAL];
  int64_t pad_lo[OPTIC_CONV_MAX_SPATIAL], pad_hi[OPTIC_CONV_MAX_SPATIAL]; /* may be negative */
  int64_t lhs_dilation[OPTIC_CONV_MAX_SPATIAL], rhs_dilation[OPTIC_CONV_MAX_SPATIAL];
  bool reverse[OPTIC_CONV_MAX_SPATIAL];
  int64_t feature_group_count, batch_group_count;
} optic_conv_desc;

/* Zeroes *d and sets XLA's window defaults: stride 1, no padding, dilations 1,
 * no reversal, group counts 1. The caller then fills dn, shapes and window. */
void optic_conv_desc_init(optic_conv_desc *d);

/* Parses XLA dim labels such as "b01f_01io->b01f" or "bf_io->bf" (0-D).
 * Errors: INVALID_ARGUMENT with what is wrong (unknown letter, missing or
 * repeated role, ranks or spatial counts that differ). */
optic_status optic_conv_parse_dim_labels(const char *labels, optic_conv_dnums *out);

/* Rewrites a descriptor over logical dims into one over physical row-major
 * dims, given each operand's XLA minor_to_major layout (NULL = row-major, i.e.
 * {rank-1, ..., 0}). The output's layout only moves the output dim numbers.
 * Errors: INVALID_ARGUMENT for a layout that is not a permutation. */
optic_status optic_conv_apply_layouts(const optic_conv_desc *logical, const int64_t *input_minor_to_major,
                                      const int64_t *kernel_minor_to_major, const int64_t *output_minor_to_major,
                                      optic_conv_desc *physical);

/* Validates d and infers the output shape (rank = input rank, dims placed by
 * dn.out_*). Errors: INVALID_ARGUMENT (bad dim numbers, non-positive stride,
 * dilation, window size or group count), SHAPE_MISMATCH (feature, group or
 * rank disagreements), OVERFLOW (sizes that do not fit). The message names
 * the dims and sizes involved. */
optic_status optic_conv_infer_shape(const optic_conv_desc *d, optic_shape *out);

/* ---------------------------------------------------------- reference */

/* Naive oracle: plain loops, double accumulation, one output element at a
 * time (no allocation). Validates d like optic_conv_infer_shape. The f64
 * variants take and give doubles (for finite-difference checks). */
optic_status optic_ref_f32_conv(const optic_conv_desc *d, const float *input, const float *kernel, float *output);
optic_status optic_ref_f64_conv(const optic_conv_desc *d, const double *input, const double *kernel, double *output);
/* Gradient w.r.t. the input: grad_input (input shape) from grad_output
 * (inferred output shape) and kernel. */
optic_status optic_ref_f32_conv_backward_input(const optic_conv_desc *d, const float *grad_output, const float *kernel,
                                               float *grad_input);
/* Gradient w.r.t. the kernel: grad_kernel (kernel shape) from input and grad_output. */
optic_status optic_ref_f32_conv_backward_kernel(const optic_conv_desc *d, const float *input, const float *grad_output,
                                                float *grad_kernel);

/* ------------------------------------------------------------- planned */

typedef enum optic_conv_pass {
  OPTIC_CONV_FORWARD = 0,     /* output = conv(input, kernel) */
  OPTIC_CONV_BACKWARD_INPUT,  /* grad_input = d(sum grad_output . output) / d input */
  OPTIC_CONV_BACKWARD_KERNEL, /* grad_kernel = d(sum grad_output . output) / d kernel */
} optic_conv_pass;

/* The strided problem the engine runs (private): `groups` independent
 * convolutions, each over `cin` input and `cout` output features, with every
 * operand addressed by element strides so any dim_labels need no copy. */
typedef struct optic_conv_geom {
  int32_t nsp;
  int64_t groups, batch, cin, cout;
  int64_t in_size[OPTIC_CONV_MAX_SPATIAL], k_size[OPTIC_CONV_MAX_SPATIAL], out_size[OPTIC_CONV_MAX_SPATIAL];
  int64_t stride[OPTIC_CONV_MAX_SPATIAL], pad_lo[OPTIC_CONV_MAX_SPATIAL];
  int64_t lhs_dil[OPTIC_CONV_MAX_SPATIAL], rhs_dil[OPTIC_CONV_MAX_SPATIAL];
  bool rev[OPTIC_CONV_MAX_SPATIAL];
  int64_t in_sb, in_sc, in_ss[OPTIC_CONV_MAX_SPATIAL], in_sg;
  int64_t k_si, k_so, k_ss[OPTIC_CONV_MAX_SPATIAL], k_sg;
  int64_t out_sb, out_so, out_ss[OPTIC_CONV_MAX_SPATIAL], out_sg;
  /* forward pass: element offsets of the input and kernel origins, where a
   * spatial dim with one output position and one valid window tap was
   * dropped from the geometry (a depth of 1 under a padded 3-deep window) */
  int64_t in_off, k_off;
} optic_conv_geom;

/* One dimension of a walk over output positions or contraction rows. */
typedef struct optic_conv_walk_dim {
  int64_t size;
  int32_t which; /* spatial dim number, or -1 for batch (positions) / feature (rows) */
} optic_conv_walk_dim;

/* A plan: everything a run needs, computed once. A plain value (copy it, no
 * destroy); immutable after optic_conv_plan_make, so one plan may be run by
 * many threads at once, each on its own slice and scratch. */
typedef struct optic_conv_plan {
  /* public, read-only */
  optic_conv_pass pass;
  optic_shape result_shape; /* shape of what the pass writes */
  int32_t threads;          /* run may be called with 1..threads slices */
  size_t scratch_bytes;     /* for all `threads` slices; 0 when none is needed */
  int32_t strategy;         /* OPTIC_CONV_STRATEGY_* (what the plan chose; for docs and tests) */
  /* private */
  optic_conv_geom g;
  size_t operand_elems[3]; /* elements of the pass's two operands and its result */
  int64_t kc;              /* contraction length: cin * window elements */
  int64_t positions;       /* output positions per group: batch * prod(out_size) */
  int32_t npos, nrow;      /* walk dims: positions (outer to inner) and contraction rows */
  optic_conv_walk_dim pos[OPTIC_CONV_MAX_SPATIAL + 1], row[OPTIC_CONV_MAX_SPATIAL + 1];
  int64_t run;              /* positions in one output run: blocks never cross a run */
  int64_t out_run_stride;   /* output stride between consecutive positions of a run */
  int64_t in_run_stride;    /* input stride likewise (GEMM strategy) */
  int64_t k_row_stride;     /* kernel stride between contraction rows (kernel_direct) */
  int64_t block;            /* positions per GEMM block */
  int64_t units;            /* work units split across threads */
  int64_t kchunk;           /* backward kernel: contraction rows per unit */
  int64_t direct_cin_block; /* DIRECT: input features per pass over a slice's rows */
  /* DIRECT with a kernel whose output features are strided (01oi, OIHW):
   * each slice first copies it into its scratch as [group][taps][in][out]
   * (g's kernel strides describe that copy; these the operand's) */
  bool direct_kernel_pack;
  int64_t pk_si, pk_so, pk_ss[OPTIC_CONV_MAX_SPATIAL], pk_sg;
  size_t pk_floats;               /* floats of the copy (at the end of each slice's scratch) */
  bool grouped_rows;              /* GROUPED: loops along output rows, not across adjacent groups */
  bool grouped_simd;              /* GROUPED: the AVX-512 loops run it (optic_conv_grouped_simd_fits) */
  bool grouped_dots;              /* GROUPED: the AVX-512 window dots run it (optic_conv_grouped_dots_fits) */
  int32_t loops_isa;              /* DIRECT, TAPS: the ISA whose loops run the plan (optic_isa, chosen at plan time) */
  bool kernel_direct;             /* the kernel (or grad kernel) is used in place as a matrix */
  bool output_direct;             /* output blocks are written (read) in place */
  size_t per_thread_floats;       /* scratch floats per slice */
  size_t col_floats, pack_floats; /* a slice holds the col block, then the kernel pack, then the tile */
} optic_conv_plan;

enum {
  OPTIC_CONV_STRATEGY_GEMM = 1,          /* 1x1-like window: the input is the GEMM operand, no im2col */
  OPTIC_CONV_STRATEGY_IM2COL_MK = 2,     /* blocked im2col, rows = positions (feature-contiguous input) */
  OPTIC_CONV_STRATEGY_IM2COL_KM = 3,     /* blocked im2col, rows = contraction (spatial-contiguous input) */
  OPTIC_CONV_STRATEGY_DIRECT = 4,        /* forward only, AVX-512 or AVX2: register-blocked direct loops, no BLAS
                                        (kernels/conv_direct.c, kernels/x86/avx{512,2}/conv_direct_avx*.c) */
  OPTIC_CONV_STRATEGY_GROUPED = 5,       /* forward only: many one-feature groups (depthwise, its kernel gradient),
                                        loops vectorised across groups, no BLAS (kernels/conv_grouped.c) */
  OPTIC_CONV_STRATEGY_IM2COL_MK_TAP = 6, /* blocked im2col, rows = positions, copies along the last window dim
                                            (a feature-strided input whose window runs outlast its output runs:
                                            the kernel gradient in NCHW) */
  OPTIC_CONV_STRATEGY_TAPS = 7,          /* forward only, AVX-512 or AVX2: a window larger than the output grid (a
                                            kernel gradient as a forward convolution), read in place
                                            (kernels/conv_taps.h) */
};

/* Validates d and plans `pass` for up to `threads` (>= 1) concurrent slices.
 * Errors: those of optic_conv_infer_shape; INVALID_ARGUMENT for a bad pass or
 * thread count; UNSUPPORTED when a matrix dimension or stride does not fit
 * the BLAS integer. */
optic_status optic_conv_plan_make(const optic_conv_desc *d, optic_conv_pass pass, int32_t threads,
                                  optic_conv_plan *out);

/* Like optic_conv_plan_make, with the strategy forced (for tests and
 * benchmarks): 0 chooses as optic_conv_plan_make does; OPTIC_CONV_STRATEGY_DIRECT
 * plans the direct kernel wherever it can run (forward pass, the selected ISA
 * is AVX-512, feature-contiguous input, output and kernel output features,
 * no lhs dilation, at most 2 spatial dims), even where the automatic choice
 * would not pick it. Errors: those of optic_conv_plan_make; UNSUPPORTED when
 * the forced strategy cannot run this convolution (the message says why);
 * INVALID_ARGUMENT for another strategy value (the BLAS strategies are chosen
 * by the shape, not forced). */
optic_status optic_conv_plan_make_strategy(const optic_conv_desc *d, optic_conv_pass pass, int32_t threads,
                                           int32_t strategy, optic_conv_plan *out);

/* Runs slice `thread` of `threads` (threads <= plan->threads): call it once
 * for every thread in [0, threads) (for example one per OpenMP thread inside
 * a parallel region, where OpenBLAS runs single-threaded) and the whole result
 * is written; slices write disjoint elements, so no synchronisation is needed.
 * scratch must hold plan->scratch_bytes (any alignment of float; may be NULL
 * when that is 0); each slice uses only its own part. Operands must not
 * overlap the result. Errors: INVALID_ARGUMENT (NULL operand with a nonzero
 * size, wrong pass, bad slice). */
optic_status optic_conv_run_forward(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    void *scratch, int32_t thread, int32_t threads);
optic_status optic_conv_run_backward_input(const optic_conv_plan *p, const float *grad_output, const float *kernel,
                                           float *grad_input, void *scratch, int32_t thread, int32_t threads);
optic_status optic_conv_run_backward_kernel(const optic_conv_plan *p, const float *input, const float *grad_output,
                                            float *grad_kernel, void *scratch, int32_t thread, int32_t threads);

#endif
