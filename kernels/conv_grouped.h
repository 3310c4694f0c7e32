/* Private to the convolution engine: the group-vectorised direct loops
 * (OPTIC_CONV_STRATEGY_GROUPED) for convolutions made of many tiny groups,
 * where each group's GEMM is degenerate (one output feature, a handful of
 * input features): depthwise convolutions and the kernel gradient of a
 * depthwise convolution (batch groups, as graph/autodiff_conv.c builds it).
 * The inner loop runs across groups, which sit next to each other in all
 * three operands (group strides 1), so it reads and writes unit-stride runs.
 * ISA-neutral C; no copy of any operand, no scratch. A work unit is one
 * output position (batch index and spatial coordinates), so slices write
 * disjoint elements. */
#ifndef OPTIC_KERNELS_CONV_GROUPED_H
#define OPTIC_KERNELS_CONV_GROUPED_H

#include "kernels/conv.h"

/* True when the automatic plan should take the grouped loops for g: at
 * least 8 groups, each with at most 16 input x output feature pairs, and
 * unit group strides in the input, kernel and output. */
bool optic_conv_grouped_preferred(const optic_conv_geom *g);

/* The same loops with the groups at any strides (slower per element, still
 * far ahead of one degenerate GEMM per group): at least 8 groups of at most
 * 16 feature pairs. The plan tries the unit-stride and row forms first. */
bool optic_conv_grouped_strided_preferred(const optic_conv_geom *g);

/* Runs output positions [u0, u1) of plan p (units = batch * output spatial
 * positions per group, all groups at once). */
void optic_conv_grouped_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                            int64_t u0, int64_t u1);

/* The same for groups that are not adjacent (NCHW depthwise) but whose
 * innermost spatial dim is unit-stride in input and output with window
 * stride 1 and no lhs dilation: at least 2 groups of at most 16 feature
 * pairs, and >= 8 outputs along that dim. The loops then run along output
 * rows (units: groups * batch * outer output positions). */
bool optic_conv_grouped_rows_preferred(const optic_conv_geom *g);
int64_t optic_conv_grouped_rows_units(const optic_conv_geom *g);
void optic_conv_grouped_rows_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                 int64_t u0, int64_t u1);

/* True when the vector loops (kernels/x86/avx512/conv_grouped_avx512.c) run
 * a grouped plan of g (rows: the row form) on isa: avx512, 1 or 2 spatial
 * dims, no lhs dilation; the channel form also needs unit group strides in
 * all three operands. Elsewhere the portable loops above run it. */
bool optic_conv_grouped_simd_fits(const optic_conv_geom *g, bool rows, optic_isa isa);

/* The window-dot form of the strided-group loops, for a depthwise kernel
 * gradient in NCHW (batch groups; the window is the image, the output the
 * small kernel): per group and batch item, every output position is a dot
 * product of window rows with input rows, read in chunks of 16 taps along
 * the last spatial dim (unit-stride in input and kernel, rhs dilation 1,
 * not reversed). True when it runs g on isa: avx512, 1 or 2 spatial dims,
 * no lhs dilation, at most OPTIC_CONV_GROUPED_DOTS_MAX output positions per
 * group and at least 16 window taps along the last dim. Units: groups x
 * batch. */
#define OPTIC_CONV_GROUPED_DOTS_MAX 32
bool optic_conv_grouped_dots_fits(const optic_conv_geom *g, optic_isa isa);

#if OPTIC_ARCH_X86_64
void optic_conv_grouped_dots_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    int64_t u0, int64_t u1);
void optic_conv_grouped_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                               int64_t u0, int64_t u1);
void optic_conv_grouped_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    int64_t u0, int64_t u1);
/* The same loops on bf16 operands widened in registers, an f32 or bf16
 * result (kernels/conv_bf16.h optic_conv_run_forward_bf16). */
void optic_conv_grouped_bf16_avx512(const optic_conv_plan *p, const uint16_t *input, const uint16_t *kernel,
                                    void *output, bool bf16_result, int64_t u0, int64_t u1);
#endif

#endif
