/* Private to the convolution engine: the window-tap loops
 * (OPTIC_CONV_STRATEGY_TAPS) for convolutions whose window is larger than
 * their output grid, the shape of a kernel gradient written as a forward
 * convolution (XLA/JAX: the image is the input, the output gradient is the
 * "kernel", the small kernel is the output). There im2col gathers one
 * element per multiply-add of a thin GEMM; these loops instead read the
 * input and the kernel in place: for each output position and block of 16
 * output features, a vector accumulation over input features and window
 * taps, with the contiguous kernel-feature rows as vectors and the input
 * element broadcast. No scratch. AVX-512 and AVX2 (chosen at plan time,
 * plan->loops_isa); other ISAs keep im2col.
 *
 * Work units are output positions (batch x spatial): each is computed by one
 * slice in a fixed order (features, then taps row-major, four interleaved
 * partial sums, tap j of each row of inner taps into sum j % 4, joined as
 * (s0 + s1) + (s2 + s3)), so results do not depend
 * on the number of slices. */
#ifndef OPTIC_KERNELS_CONV_TAPS_H
#define OPTIC_KERNELS_CONV_TAPS_H

#include "kernels/conv.h"

/* NULL when the taps strategy can run g on isa, else why not (static string). */
const char *optic_conv_taps_unfit(const optic_conv_geom *g, optic_isa isa);

/* True when g has the kernel-gradient shape the loops are for: a window of
 * at least 16 taps, no more output positions than taps, and at most 64
 * output positions (few input features). */
bool optic_conv_taps_preferred(const optic_conv_geom *g);

/* Runs output positions [u0, u1) of a TAPS plan. */
void optic_conv_taps_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                         int64_t u1);

#if OPTIC_ARCH_X86_64
void optic_conv_taps_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                            int64_t u0, int64_t u1);
void optic_conv_taps_avx2(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                          int64_t u1);
#endif

#endif
