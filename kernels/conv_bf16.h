/* Internal: forward convolution of two bf16 operands with f32 accumulation on
 * the bf16 GEMM kernels (kernels/dot_bf16.h: vdpbf16ps on AVX512_BF16,
 * tdpbf16ps on AMX-BF16). Any descriptor optic_conv_plan_make accepts
 * (strides, signed padding, dilations, reversal, feature and batch groups,
 * any dim_labels); the geometry is the f32 plan's (kernels/conv.h).
 *
 * Method: the kernel is gathered once per group into the B panels,
 * contraction index = window tap (outer) x input feature (inner). On
 * vdpbf16ps, where the input features are contiguous in pairs (an even
 * count, stride 1) and the input is not dilated, the direct rows: per chunk
 * of up to 112 output positions along the last spatial dim, the input pixels
 * they read are copied, with zeros for the padding, into one line per outer
 * window tap, and 14 x 32 output tiles accumulate every tap in registers,
 * the input pairs broadcast from those lines. Otherwise (and on AMX), blocks
 * of output positions are gathered (im2col) in bf16 into the A operand and
 * multiplied on the GEMM. The f32 accumulators are written to the output as
 * f32, or as bf16 rounded once to nearest even. Products of two bf16 values
 * are exact in f32; sums are rounded in f32 in the kernels' order (pairs of
 * taps-features; the GEMM in blocks of 256, kernels/dot_bf16.h; the direct
 * rows over all taps in order), with subnormal inputs
 * and results flushed to zero by the instructions. So an f32 result is
 * within K * 2^-24 * sum |terms| (+ K * 2^-126) of the exact sum of the bf16
 * products (K = contraction length), and a bf16 result within that plus half
 * a bf16 ulp (at most 2^-8 of its magnitude).
 *
 * Plans are plain values (no destroy), immutable after making, run by many
 * slices at once like optic_conv_plan. Runs never allocate, never spawn
 * threads, never print. */
#ifndef OPTIC_KERNELS_CONV_BF16_H
#define OPTIC_KERNELS_CONV_BF16_H

#include "kernels/conv.h"
#include "kernels/dot_bf16.h"

typedef struct optic_conv_bf16_plan {
  /* public, read-only */
  optic_shape result_shape;
  optic_dtype out_dtype;    /* OPTIC_F32 or OPTIC_BF16 */
  optic_bf16_kernel kernel; /* AVX512 or AMX */
  int32_t threads;
  size_t scratch_bytes; /* for all `threads` slices */
  /* private */
  optic_conv_geom g;
  int64_t kc, kld;     /* contraction length; its padded row length in the A block */
  int64_t kpairs, mr;  /* k pairs in a panel (AMX: padded to 16), rows of an A panel */
  int64_t positions;   /* output positions per group */
  int64_t block, nblk; /* positions per block (a multiple of mr), blocks per group */
  int64_t np;          /* B panels (NR columns each) */
  /* direct rows (vdpbf16ps): no im2col; units are chunks of output rows */
  bool direct;
  int64_t rows_out, chunk, nchunk; /* output rows per group, positions per chunk, chunks per row */
  int64_t lines, line_px;          /* line buffer: outer window taps x padded pixels */
  size_t a_off, p_off, bd_off, b_off, c_off, l_off, t_off, slice_bytes;
} optic_conv_bf16_plan;

/* The bf16 kernel the runtime plans a convolution on, when the ISA selected
 * now (optic_isa_selected, which optic_isa_reselect re-reads) is avx512: AMX
 * when optic_dot_bf16_kernel() is AMX and OPTIC_ISA is unset; else AVX512
 * where the CPU has AVX512_BF16; else NONE, and the runtime widens to f32. */
optic_bf16_kernel optic_conv_bf16_kernel(void);

/* True when the GEMM suits d: some group has more than one output feature or
 * a contraction of at least 16 (depthwise-like groups, one feature in and one
 * out, run faster on the f32 grouped loops: docs/kernels-conv.md). */
bool optic_conv_bf16_suits(const optic_conv_desc *d);
/* The runtime's choice (exec/bind.c, and the compiler's estimate): whether a
 * convolution with these operand and result dtypes runs on the bf16 kernels:
 * both operands bf16, an f32 or bf16 result, a kernel here
 * (optic_conv_bf16_kernel) and a shape that suits it; on vdpbf16ps only
 * shapes the direct rows run with at least 16 input and 16 output features
 * per group (the im2col GEMM on vdpbf16ps measured 1.15x the f32
 * convolution of a ResNet 3x3 layer where the direct rows run 1.8x:
 * docs/kernels-conv.md). */
bool optic_conv_bf16_chosen(const optic_conv_desc *d, optic_dtype lhs, optic_dtype rhs, optic_dtype out);

/* Plans the forward pass of d for up to `threads` slices on `kernel`, writing
 * out_dtype (F32 or BF16). Errors: those of optic_conv_plan_make;
 * INVALID_ARGUMENT (bad dtype or thread count); UNSUPPORTED when the kernel
 * cannot run here (optic_dot_bf16_kernel_usable) or a size overflows. */
optic_status optic_conv_bf16_plan_make(const optic_conv_desc *d, optic_dtype out_dtype, optic_bf16_kernel kernel,
                                       int32_t threads, optic_conv_bf16_plan *out);

/* Slice `thread` of `threads` (<= plan->threads), as optic_conv_run_forward:
 * call it for every slice; slices write disjoint output elements. scratch:
 * plan->scratch_bytes, 4-byte aligned. Errors: INVALID_ARGUMENT (NULL
 * pointer with a nonzero size, bad slice, misaligned scratch). */
optic_status optic_conv_bf16_run(const optic_conv_bf16_plan *p, const uint16_t *input, const uint16_t *kernel,
                                 void *output, void *scratch, int32_t thread, int32_t threads);

/* Depthwise convolutions of two bf16 operands, read in place: the f32
 * plan's grouped vector loops (kernels/conv_grouped.h, plan.grouped_simd:
 * AVX-512) widen the operands in registers, accumulate in f32 and write an
 * f32 result, or a bf16 one rounded once to nearest even; nothing is copied.
 * Products of two bf16 values are exact in f32, so the result is within the
 * f32 loops' bound on the widened operands (plus half a bf16 ulp for a bf16
 * result). optic_conv_grouped_bf16_chosen: whether the runtime runs a
 * convolution with these dtypes and this forward plan so (both operands
 * bf16, an f32 or bf16 result, a grouped plan on the vector loops, and not
 * the bf16 GEMM, which optic_conv_bf16_chosen checks first). */
bool optic_conv_grouped_bf16_chosen(const optic_conv_plan *p, optic_dtype lhs, optic_dtype rhs, optic_dtype out);

/* Slice `thread` of `threads` (<= plan->threads) of such a plan, as
 * optic_conv_run_forward (no scratch). Errors: INVALID_ARGUMENT (a plan the
 * loops cannot run, NULL operand with a nonzero size, bad slice). */
optic_status optic_conv_run_forward_bf16(const optic_conv_plan *p, const uint16_t *input, const uint16_t *kernel,
                                         void *output, bool bf16_result, int32_t thread, int32_t threads);

#endif
