/* Private to the convolution engine: the direct forward convolution
 * (OPTIC_CONV_STRATEGY_DIRECT). The planning part (kernels/conv_direct.c) is
 * ISA-neutral; the loops are per ISA (kernels/x86/avx512/conv_direct_avx512.c,
 * the only one so far). The plan's geometry is used as is: no copy of any
 * operand, no scratch.
 *
 * Shape of the work: 1-D or 2-D spatial (1-D runs as one output row), the
 * "row" dim is spatial dim 0 of a 2-D convolution and the "pixel" dim the last
 * spatial dim. A work unit is one output row of one group and image; a slice
 * runs a contiguous range of units, so slices write disjoint rows. */
#ifndef OPTIC_KERNELS_CONV_DIRECT_H
#define OPTIC_KERNELS_CONV_DIRECT_H

#include "kernels/conv.h"

/* NULL when the direct strategy can run g on `isa`; otherwise a short reason
 * (static string) why not. Checks layout and window only, not whether it
 * would be faster (see optic_conv_direct_preferred). */
const char *optic_conv_direct_unfit(const optic_conv_geom *g, optic_isa isa);

/* True when the automatic choice should take the direct strategy for a
 * convolution that fits (measured on this project's benchmark machine: see
 * docs/kernels-conv.md). */
bool optic_conv_direct_preferred(const optic_conv_geom *g);

/* Input features per pass of the direct loops: all of them when the kernel
 * slice of 64 output features (taps x cin x 64 floats) fits the L2 budget,
 * else the largest block that does (at least 1). */
int64_t optic_conv_direct_cin_block(const optic_conv_geom *g);

/* Output rows (work units) of g: groups * batch * rows of the row dim. */
int64_t optic_conv_direct_units(const optic_conv_geom *g);

/* Runs units [u0, u1) of a DIRECT plan (called by optic_conv_run_forward). */
void optic_conv_direct_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                           int64_t u1);

#if OPTIC_ARCH_X86_64
void optic_conv_direct_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                   int64_t u0, int64_t u1);
#endif

#endif
