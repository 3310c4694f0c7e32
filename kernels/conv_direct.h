/* Private to the convolution engine: the direct forward convolution
 * (OPTIC_CONV_STRATEGY_DIRECT). The planning part (kernels/conv_direct.c) is
 * ISA-neutral; the loops are per ISA (kernels/x86/avx512/conv_direct_avx512.c,
 * kernels/x86/avx2/conv_direct_avx2.c; the plan's loops_isa says which). The plan's geometry is used as is for the kernel and
 * the output; input rows are copied into a per-slice ring of packed rows
 * (see optic_conv_direct_packing), so padding and strides cost no branch in
 * the inner loops.
 *
 * Shape of the work: 1-D or 2-D spatial (1-D runs as one output row), the
 * "row" dim is spatial dim 0 of a 2-D convolution and the "pixel" dim the last
 * spatial dim. A work unit is one output row of one group and image; a slice
 * runs a contiguous range of units, so slices write disjoint rows. */
#ifndef OPTIC_KERNELS_CONV_DIRECT_H
#define OPTIC_KERNELS_CONV_DIRECT_H

#include "kernels/conv.h"

/* Input features per packed block: one 64-byte line per pixel. */
#define OPTIC_CONV_DIRECT_CB 16

/* How input rows are packed for the loops. A packed row holds, for each
 * block of OPTIC_CONV_DIRECT_CB input features of the current feature group,
 * `phases` (the pixel stride) sub-rows of `wq` pixels of CB floats: padded
 * pixel X (0 <= X < wspan, input pixel X - pad_lo, zeros outside the input)
 * sits in sub-row X % phases at X / phases. Output pixel ow, window tap t then
 * reads X = ow*stride + t*dilation, so the pixels of a tile are adjacent in
 * one sub-row. The ring has `span` rows (the window's extent along the row
 * dim), so each input row is packed once per pass while consecutive output
 * rows reuse it. */
typedef struct optic_conv_direct_packing {
  int64_t span, wspan, phases, wq;
  int64_t cin_group;  /* input features per pass (a multiple of CB, or all of them) */
  int64_t row_floats; /* floats of one packed row */
  size_t floats;      /* scratch floats per slice: a tag per ring row, then the ring */
} optic_conv_direct_packing;

/* NULL when the direct strategy can run g on `isa`; otherwise a short reason
 * (static string) why not. Checks layout, window and the packed rows' size,
 * not whether it would be faster (see optic_conv_direct_preferred). */
const char *optic_conv_direct_unfit(const optic_conv_geom *g, optic_isa isa);

/* True when the automatic choice should take the direct strategy for a
 * convolution that fits (measured on this project's benchmark machine: see
 * docs/kernels-conv.md). */
bool optic_conv_direct_preferred(const optic_conv_geom *g);

/* The packing of g: input features per pass (all of them when the kernel
 * slice for all output features and the ring fit their L2 budgets, else the
 * largest multiple of CB that does, at least CB) and the ring's size. */
optic_conv_direct_packing optic_conv_direct_packing_of(const optic_conv_geom *g);

/* Output rows (work units) of g: groups * batch * rows of the row dim. */
int64_t optic_conv_direct_units(const optic_conv_geom *g);

/* Runs units [u0, u1) of a DIRECT plan (called by optic_conv_run_forward);
 * scratch is the slice's part (plan->per_thread_floats). */
void optic_conv_direct_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                           float *scratch, int64_t u0, int64_t u1);

#if OPTIC_ARCH_X86_64
void optic_conv_direct_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                   float *scratch, int64_t u0, int64_t u1);
void optic_conv_direct_rows_avx2(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                 float *scratch, int64_t u0, int64_t u1);
#endif

#endif
