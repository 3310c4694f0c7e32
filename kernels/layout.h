/* Internal: layout kernels (contiguous and strided copies, 2-D transposes,
 * fills with one value) and the planned XLA transpose and broadcast built on
 * them. Layout kernels only move bits: no arithmetic, NaN payloads survive.
 * Contract as in kernels/common.h, except that in place is never legal here
 * (x and y must not overlap at all) and that element pointers need the
 * alignment of their element type (what any C pointer to it has), nothing
 * more; byte-based kernels (copy, copy2d, x8) need none. Strided kernels touch
 * only the elements they name, never the gaps between rows (in x or in y). */
#ifndef OPTIC_KERNELS_LAYOUT_H
#define OPTIC_KERNELS_LAYOUT_H

#include "kernels/common.h"

/* Element widths of the width-specific kernels: X(NAME, bytes). Every dtype
 * of core.h has one of these sizes (pred/u8: X8, f32/s32: X32, f64: X64). */
#define OPTIC_LAYOUT_WIDTH_LIST(X) \
  X(X8, 1)                         \
  X(X32, 4)                        \
  X(X64, 8)

typedef enum optic_layout_width {
#define OPTIC_LAYOUT_WIDTH_ENUM_(name, bytes) OPTIC_LAYOUT_##name,
  OPTIC_LAYOUT_WIDTH_LIST(OPTIC_LAYOUT_WIDTH_ENUM_)
#undef OPTIC_LAYOUT_WIDTH_ENUM_
      OPTIC_LAYOUT_WIDTH_COUNT
} optic_layout_width;

/* Bytes of one element of width w (0 outside the enum). */
size_t optic_layout_width_bytes(optic_layout_width w);
/* The width of elements of elem_size bytes; false if there is none. */
bool optic_layout_width_of(size_t elem_size, optic_layout_width *out);

/* y[0, nbytes) = x[0, nbytes). */
typedef void (*optic_copy_fn)(size_t nbytes, const void *x, void *y);
/* For r < rows: y[r*ldy, r*ldy + row_bytes) = x[r*ldx, r*ldx + row_bytes)
 * (strides in bytes). ldx may be 0 (every row copies the same source row);
 * rows of y must not overlap each other (ldy >= row_bytes when rows > 1). */
typedef void (*optic_copy2d_fn)(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy);
/* 2-D transpose of elements of the kernel's width: y[j*ldy + i] = x[i*ldx + j]
 * for i < rows, j < cols (leading dimensions in elements, ldx >= cols,
 * ldy >= rows). x is rows x cols, y is cols x rows. */
typedef void (*optic_transpose_fn)(size_t rows, size_t cols, const void *x, size_t ldx, void *y, size_t ldy);
/* y[i] = *value for i < n, elements of the kernel's width; value needs no
 * alignment and may not point into y. */
typedef void (*optic_fill_fn)(size_t n, const void *value, void *y);

typedef struct optic_layout_kernels {
  optic_copy_fn copy;
  optic_copy2d_fn copy2d;
  optic_transpose_fn transpose[OPTIC_LAYOUT_WIDTH_COUNT];
  optic_fill_fn fill[OPTIC_LAYOUT_WIDTH_COUNT];
  /* which ISA each entry really is */
  optic_isa isa_of_copy, isa_of_copy2d;
  optic_isa isa_of_transpose[OPTIC_LAYOUT_WIDTH_COUNT];
  optic_isa isa_of_fill[OPTIC_LAYOUT_WIDTH_COUNT];
} optic_layout_kernels;

/* The table for isa: the scalar kernels, overridden by isa's own where the
 * list has them. NULL if isa's kernels are not built into this binary. Built
 * once, thread-safe, static. */
const optic_layout_kernels *optic_layout_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_layout_kernels *optic_layout_kernels_get(void);

/* ------------------------------------------------- planned XLA operations */

/* How a plan moves data; every plan is "loops over an inner operation". */
typedef enum optic_layout_plan_kind {
  OPTIC_LAYOUT_PLAN_EMPTY,     /* zero elements: nothing to do */
  OPTIC_LAYOUT_PLAN_COPY,      /* y is x, both contiguous: one copy */
  OPTIC_LAYOUT_PLAN_FILL,      /* every element of y is x[0] */
  OPTIC_LAYOUT_PLAN_ROWS,      /* rows contiguous in x and y: strided row copies */
  OPTIC_LAYOUT_PLAN_FILL_ROWS, /* each row of y repeats one x element: fills */
  OPTIC_LAYOUT_PLAN_TRANSPOSE  /* 2-D transposes */
} optic_layout_plan_kind;

/* Work is cut into `units` equal-cost-ish units (outer loop iterations times
 * chunks of the inner operation) of about this many elements or more. */
#define OPTIC_LAYOUT_UNIT_ELEMENTS ((size_t)16384)

/* A precomputed XLA transpose or broadcast: y (dense, row-major, shape
 * out_shape) from x (dense, row-major). Plain value: no allocation, copy it
 * freely; immutable after planning, so threads may run disjoint unit ranges
 * of one plan at once (they write disjoint parts of y). */
typedef struct optic_layout_plan {
  /* public, read-only */
  optic_layout_plan_kind kind;
  size_t elem_size;      /* bytes per element */
  size_t units;          /* run units [0, units); 0 for EMPTY */
  optic_shape out_shape; /* shape of y */
  /* private: loops (outer to inner, strides in elements) over the inner op */
  int nloops;
  size_t loop_n[OPTIC_MAX_RANK];
  size_t loop_xs[OPTIC_MAX_RANK];
  size_t loop_ys[OPTIC_MAX_RANK];
  /* inner operation on a rows x cols block: COPY/FILL use cols only;
   * ROWS/FILL_ROWS: rows of cols elements, x row stride ldx, y row stride
   * cols; TRANSPOSE: transpose(rows, cols, x, ldx, y, ldy). */
  size_t rows, cols, ldx, ldy;
  size_t chunk, nchunks; /* chunked extent: cols (COPY, FILL, TRANSPOSE), rows (ROWS, FILL_ROWS) */
  optic_copy_fn copy;
  optic_copy2d_fn copy2d;
  optic_transpose_fn transpose;
  optic_fill_fn fill;
} optic_layout_plan;

/* XLA transpose: y has dims out[k] = in[permutation[k]] and
 * y[o_0, ..., o_{r-1}] = x[i] with i[permutation[k]] = o_k. nperm must equal
 * in->rank and permutation must name each of 0..rank-1 once; elem_size is 1,
 * 4 or 8. kernels NULL means optic_layout_kernels_get(). Errors:
 * INVALID_ARGUMENT (NULL, bad shape, bad permutation, element size) with a
 * message naming the offending entry. */
optic_status optic_layout_plan_transpose(const optic_layout_kernels *kernels, const optic_shape *in,
                                         const int64_t *permutation, size_t nperm, size_t elem_size,
                                         optic_layout_plan *out);

/* XLA broadcast (HLO `broadcast`, StableHLO `broadcast_in_dim`): operand dim i
 * becomes output dim dimensions[i]; y[o] = x[i] with i_k = o[dimensions[k]]
 * (or 0 where the operand dim has size 1). ndims must equal operand->rank;
 * entries must be distinct and in [0, out->rank); operand dim k must have the
 * size of output dim dimensions[k] (HLO's rule) or size 1 (StableHLO's
 * degenerate broadcast). Entries need not increase (neither HLO's verifier nor
 * StableHLO requires it; a decreasing mapping also transposes). Errors:
 * INVALID_ARGUMENT / SHAPE_MISMATCH with a message naming the entry. */
optic_status optic_layout_plan_broadcast(const optic_layout_kernels *kernels, const optic_shape *operand,
                                         const optic_shape *out, const int64_t *dimensions, size_t ndims,
                                         size_t elem_size, optic_layout_plan *out_plan);

/* Runs units [unit_begin, unit_end) of plan (clamped to plan->units): an
 * executor gives each thread its own range; run(plan, x, y, 0, plan->units)
 * does everything. x and y must not overlap. Never allocates or fails. */
void optic_layout_run(const optic_layout_plan *plan, const void *x, void *y, size_t unit_begin, size_t unit_end);

/* ------------------------------------------------------ naive references */

/* Test oracles: plain loops, byte by byte; preconditions as the kernels'
 * (the XLA ones expect arguments the planners would accept). */
void optic_ref_copy(size_t nbytes, const void *x, void *y);
void optic_ref_copy2d(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy);
void optic_ref_transpose2d(size_t elem_size, size_t rows, size_t cols, const void *x, size_t ldx, void *y, size_t ldy);
void optic_ref_fill(size_t elem_size, size_t n, const void *value, void *y);
/* Naive index mapping over every output element. */
void optic_ref_permute(size_t elem_size, const optic_shape *in, const int64_t *permutation, const void *x, void *y);
void optic_ref_broadcast(size_t elem_size, const optic_shape *operand, const optic_shape *out,
                         const int64_t *dimensions, const void *x, void *y);

/* Every kernel in kernels/list/layout.inc is declared here. */
#define X_COPY(op, isa, fn) void fn(size_t nbytes, const void *x, void *y);
#define X_COPY2D(op, isa, fn) void fn(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy);
#define X_TRANSPOSE(width, isa, fn) void fn(size_t rows, size_t cols, const void *x, size_t ldx, void *y, size_t ldy);
#define X_FILL(width, isa, fn) void fn(size_t n, const void *value, void *y);
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL

#endif
