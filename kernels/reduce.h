/* Internal: reduction f32 kernels. Contiguous: one value from n floats
 * (XLA reduce over the minor dimension); axis: for x viewed row-major as
 * [outer, r, inner], y[o, i] = op over k of x[o, k, i] (reduce over a
 * non-minor dimension). Contract in kernels/common.h; kernels never write
 * their input, and an axis kernel's y must not overlap x.
 *
 * Ops and identities (the result for n = 0 or r = 0): sum 0, max -inf,
 * min +inf, prod 1, sumsq (sum of squares, for norms) 0.
 *
 * Order of evaluation, fixed and the same on every ISA, so every ISA's kernel
 * returns bitwise the result of the scalar one (sum, sumsq, prod):
 *  - contiguous: the array is cut into leaves of OPTIC_REDUCE_BLOCK = 1024
 *    floats (the last may be shorter). In a leaf, element j goes to lane
 *    j mod 64 of 64 accumulators that start at the identity and fold their
 *    elements in index order (at most 16 each); the lanes are combined by a
 *    fixed pairwise tree (lane l with l + 32, then l + 16, ..., then l + 1).
 *  - axis: for each output, k is cut into leaves of OPTIC_REDUCE_AXIS_BLOCK =
 *    16 consecutive values folded in order from the identity.
 *  - leaves are combined by the canonical pairwise tree T(m): one leaf is
 *    itself; for m > 1 leaves, T(m) = T(p) op T(m - p) with p the largest
 *    power of two below m (a binary counter over leaves computes it).
 * sumsq squares with a separate rounded multiply (never a fused multiply-add):
 * that keeps x86, NEON and scalar results identical.
 *
 * Accuracy, u = FLT_EPSILON / 2 = 2^-24, gamma_k = k u / (1 - k u), when no
 * intermediate result overflows:
 *  - sum:   |got - s| <= gamma_D * sum |x_i|, where D is the number of rounded
 *    additions on one element's path: D = min(n - 1, 21 + ceil(log2 L)) for a
 *    contiguous array of L = ceil(n / 1024) leaves (15 in a lane, 6 across
 *    lanes, then the leaf tree), D = min(r - 1, 15 + ceil(log2 ceil(r / 16)))
 *    for an axis of r values. Both give |got - s| <= c log2(n + 1)
 *    FLT_EPSILON sum |x_i| with c = 2.5 (OPTIC_REDUCE_SUM_ERROR_C) for all n:
 *    error grows like O(log n), not O(n) as for a naive float loop.
 *  - sumsq: the same with D + 1 (the square's rounding), plus at most
 *    n 2^-150 absolute when squares underflow (the c = 2.5 form plus that).
 *    No scaling is done: sumsq overflows to +inf once sum x_i^2 > FLT_MAX.
 *  - prod:  |got - p| <= gamma_(n-1) |p| (n - 1 rounded products, whatever the
 *    order) when no intermediate product overflows or underflows; which
 *    intermediates exist depends on the tree above.
 *  - max/min: exact. The result is bitwise that of folding the binary family's
 *    maximum/minimum in index order from the identity, y = max(y, x_i): the
 *    first NaN of x (its bits) if x has one, else the last element equal to
 *    the extremum; so a zero extremum takes the sign of the last zero in x
 *    (binary max(-0, +0) is its second operand). Any NaN gives NaN; for sum,
 *    sumsq, prod a NaN (or inf - inf, 0 * inf) gives a NaN of unspecified bits.
 *
 * Splitting across threads: callers reduce disjoint chunks and combine the
 * partial results in chunk order with optic_f32_reduce_combine. That is
 * deterministic for a given split. Chunks of OPTIC_REDUCE_BLOCK * 2^k
 * contiguous floats (axis: OPTIC_REDUCE_AXIS_BLOCK * 2^k values of k), all full
 * but the last, reproduce the single-call result bitwise, because the leaf tree
 * splits at exactly those boundaries (optic_reduce_chunk_size picks such a
 * size); max/min reproduce it for any split. Splitting an axis reduction over
 * outer or inner never changes a result. */
#ifndef OPTIC_KERNELS_REDUCE_H
#define OPTIC_KERNELS_REDUCE_H

#include "kernels/common.h"

/* X(OP, name) */
#define OPTIC_REDUCE_OP_LIST(X) \
  X(SUM, "sum")                 \
  X(MAX, "max")                 \
  X(MIN, "min")                 \
  X(PROD, "prod")               \
  X(SUMSQ, "sumsq")

typedef enum optic_reduce_op {
#define OPTIC_REDUCE_OP_ENUM_(op, name) OPTIC_REDUCE_##op,
  OPTIC_REDUCE_OP_LIST(OPTIC_REDUCE_OP_ENUM_)
#undef OPTIC_REDUCE_OP_ENUM_
      OPTIC_REDUCE_OP_COUNT
} optic_reduce_op;

/* The fixed evaluation order above, in numbers. */
#define OPTIC_REDUCE_LANES 64       /* accumulator lanes of a contiguous leaf */
#define OPTIC_REDUCE_BLOCK 1024     /* floats per contiguous leaf (64 lanes x 16) */
#define OPTIC_REDUCE_AXIS_BLOCK 16  /* values of k per axis leaf */
#define OPTIC_REDUCE_TREE_LEVELS 64 /* a binary counter over < 2^64 leaves */
#define OPTIC_REDUCE_SUM_ERROR_C 2.5

/* Contiguous: returns op over x[0, n). */
typedef float (*optic_f32_reduce_fn)(size_t n, const float *x);
/* Axis: y[o * inner + i] = op over k < r of x[(o * r + k) * inner + i], for
 * o < outer, i < inner; writes exactly outer * inner floats. */
typedef void (*optic_f32_reduce_axis_fn)(size_t outer, size_t r, size_t inner, const float *x, float *y);

/* Strided columns: the contract of optic_f32_reduce_cols below. */
typedef void (*optic_f32_reduce_cols_fn)(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride,
                                         float *y);
/* Strided columns with caller work space: optic_f32_reduce_cols_work's contract. */
typedef void (*optic_f32_reduce_cols_work_fn)(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride,
                                              float *y, float *work, size_t work_floats);

typedef struct optic_reduce_kernels {
  optic_f32_reduce_fn r[OPTIC_REDUCE_OP_COUNT];       /* contiguous */
  optic_f32_reduce_axis_fn rd[OPTIC_REDUCE_OP_COUNT]; /* axis (discontiguous) */
  optic_isa isa_of_r[OPTIC_REDUCE_OP_COUNT];          /* which ISA each entry really is */
  optic_isa isa_of_rd[OPTIC_REDUCE_OP_COUNT];
  optic_f32_reduce_cols_fn cols; /* strided columns, every op */
  optic_isa isa_of_cols;
  optic_f32_reduce_cols_work_fn cols_wide; /* strided columns streamed from memory, with work space */
  optic_isa isa_of_cols_wide;
} optic_reduce_kernels;

/* Short name of an op ("sum"); "invalid" out of range. */
const char *optic_reduce_op_name(optic_reduce_op op);
/* The result of op over nothing: 0, -inf, +inf, 1, 0. */
float optic_reduce_identity(optic_reduce_op op);

/* The table for isa: the scalar kernels, overridden by isa's own where the list
 * has them. NULL if isa's kernels are not built into this binary. Built once,
 * thread-safe, static. */
const optic_reduce_kernels *optic_reduce_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_reduce_kernels *optic_reduce_kernels_get(void);

/* Rows form (XLA reduce over the minor dimension of [rows, n]):
 * y[j] = fn(n, x + j * x_stride) for j < rows; x_stride in floats. */
void optic_f32_reduce_rows(optic_f32_reduce_fn fn, size_t rows, size_t n, const float *x, size_t x_stride, float *y);

/* Strided columns (XLA reduce over a non-minor dimension), in the
 * contiguous order: y[c] = op over k < r of x[k * stride + c] for c < w,
 * each column bitwise what the contiguous kernel r[op] returns for its r
 * values laid out contiguously (max/min: the exact fold). So a reduction's
 * result does not depend on which axis of the data is reduced. Runs the
 * selected ISA's column kernel (AVX-512, AVX2: vectorized across columns, a
 * leaf's 64 lanes evaluated one at a time in registers) where it is the
 * faster one, else the generic one (baseline ISA, lanes in a stack block);
 * all give the same bits. y must not overlap x. Uses 16 KiB of stack. */
void optic_f32_reduce_cols(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y);
/* The same with caller work space (work_floats floats at work; no
 * alignment needed): where the rows read do not fit in 1 MiB, the table's
 * wide kernel (cols_wide: AVX2 on x86, else the generic one) keeps a leaf's
 * 64 lanes of blocks as wide as the work space holds, up to
 * OPTIC_REDUCE_COLS_WIDE columns, so each row is read in long contiguous
 * runs (what columns need to reach memory bandwidth). Same bits as
 * optic_f32_reduce_cols for any work size; too little (or NULL) falls back
 * to 32-column blocks on the stack (16 KiB). optic_f32_reduce_cols_work_floats(r, w)
 * is the size that gives the widest blocks. */
#define OPTIC_REDUCE_COLS_WIDE 1024
void optic_f32_reduce_cols_work(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                float *work, size_t work_floats);
size_t optic_f32_reduce_cols_work_floats(size_t r, size_t w);
/* Whether optic_f32_reduce_cols_work runs the wide kernel for this call: the
 * rows read, ((r - 1) * stride + w) floats, exceed 1 MiB (the cost model
 * prices such calls as rows streamed in long runs). */
bool optic_f32_reduce_cols_streams(size_t r, size_t w, size_t stride);
/* The column kernels themselves, for the dispatch table and the tests: the
 * generic one (every ISA's fallback) and the x86 ones. */
void optic_f32_reduce_cols__scalar(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y);
void optic_f32_reduce_cols_wide__scalar(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                        float *work, size_t work_floats);
#if OPTIC_ARCH_X86_64
void optic_f32_reduce_cols_wide__avx2(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                      float *work, size_t work_floats);
void optic_f32_reduce_cols__avx2(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y);
void optic_f32_reduce_cols__avx512(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y);
#endif

/* Combines partial results of chunks, in chunk order, as the kernels combine
 * leaves: y[i] = combine over p < nparts of parts[p * part_stride + i], for
 * i < m. sum and sumsq partials are added (sumsq partials are already sums of
 * squares) by the canonical pairwise tree, prod partials multiplied by it,
 * max/min partials folded in order; nparts = 0 gives the identity. y may be
 * parts (part 0) itself. */
void optic_f32_reduce_combine(optic_reduce_op op, size_t nparts, size_t m, const float *parts, size_t part_stride,
                              float *y);

/* The smallest chunk length block * 2^k (block = OPTIC_REDUCE_BLOCK for
 * contiguous, OPTIC_REDUCE_AXIS_BLOCK for axis splits) that cuts n into at
 * most max_parts chunks: splitting at multiples of it and combining with
 * optic_f32_reduce_combine reproduces the single call bitwise. n = 0 or
 * max_parts = 0 give block. */
size_t optic_reduce_chunk_size(size_t n, size_t max_parts, size_t block);

/* Naive reference (test oracle): one plain loop per output in double
 * precision for sum, sumsq and prod; max/min fold with the binary family's
 * semantics in index order (exact, returned widened to double). */
double optic_ref_f32_reduce(optic_reduce_op op, size_t n, const float *x);
void optic_ref_f32_reduce_axis(optic_reduce_op op, size_t outer, size_t r, size_t inner, const float *x, double *y);

/* Every kernel in kernels/list/reduce.inc is declared here. */
#define X_R(op, isa, fn) float fn(size_t n, const float *x);
#define X_RD(op, isa, fn) void fn(size_t outer, size_t r, size_t inner, const float *x, float *y);
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD

#endif
