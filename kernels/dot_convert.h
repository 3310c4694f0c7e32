/* Internal: the conversions around a dot or convolution with f16/bf16
 * operands or result (exec/ops_linalg.c): 16-bit floats widened to f32 before
 * the f32 GEMM, an f32 result rounded to the 16-bit type after it. Results
 * are bit for bit those of optic_convert_elements (core/half.h: widening is
 * exact, narrowing rounds to nearest even, a NaN stays a NaN of its sign with
 * its high payload bits, overflow gives inf); on AVX-512 the loops are vector
 * (vcvtph2ps / vcvtps2ph for f16, integer bit arithmetic for bf16), elsewhere
 * this is optic_convert_elements. Kernel contract of kernels/common.h (no
 * over-read, never allocates); src and dst must not overlap. */
#ifndef OPTIC_KERNELS_DOT_CONVERT_H
#define OPTIC_KERNELS_DOT_CONVERT_H

#include "kernels/common.h"

/* One of f16 -> f32, bf16 -> f32, f32 -> f16, f32 -> bf16 on the ISA
 * selected now (optic_isa_selected()); any other pair goes to
 * optic_convert_elements, whose status this returns. */
optic_status optic_dot_convert(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n);

/* The same on an explicit ISA (tests): AVX-512 when isa is AVX-512 and built
 * here, optic_convert_elements otherwise. */
optic_status optic_dot_convert_isa(optic_isa isa, optic_dtype from, const void *src, optic_dtype to, void *dst,
                                   size_t n);

#if OPTIC_ARCH_X86_64
/* The AVX-512 loops (kernels/x86/avx512/dot_convert_avx512.c); true when the
 * pair is one of the four, false (nothing written) otherwise. */
bool optic_dot_convert__avx512(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n);
#endif

#endif
