/* Internal: f32 clamp kernels, XLA's clamp(min, operand, max):
 * y[i] = clamp(lo[i], x[i], hi[i]) (vv, array bounds) and
 * y[i] = clamp(lo, x[i], hi) (vs, scalar bounds). Contract in
 * kernels/common.h; y may be x, lo or hi (in place).
 * Definition, bitwise: clamp(lo, x, hi) = minimum(maximum(x, lo), hi) with
 * the binary family's NaN-propagating maximum/minimum (kernels/binary.h):
 *   t = isnan(x) ? x : isnan(lo) ? lo : (x > lo ? x : lo);
 *   y = isnan(t) ? t : isnan(hi) ? hi : (t < hi ? t : hi);
 * So a NaN x propagates with its own bits; otherwise a NaN bound is returned
 * (lo's before hi's); lo > hi gives hi for every non-NaN x (XLA's
 * min(max(...)) order); x equal to a bound returns the bound (clamp of -0
 * with lo = +0 is +0). One scalar bound and one array bound is binary maximum
 * then minimum, which is bitwise the same. */
#ifndef OPTIC_KERNELS_CLAMP_H
#define OPTIC_KERNELS_CLAMP_H

#include "kernels/common.h"

typedef void (*optic_f32_vclamp_fn)(size_t n, const float *x, const float *lo, const float *hi, float *y);
typedef void (*optic_f32_vclampc_fn)(size_t n, const float *x, float lo, float hi, float *y);

typedef struct optic_clamp_kernels {
  optic_f32_vclamp_fn vv;
  optic_f32_vclampc_fn vs;
  optic_isa isa_of_vv; /* which ISA each entry really is */
  optic_isa isa_of_vs;
} optic_clamp_kernels;

/* The table for isa (scalar kernels overridden by isa's own); NULL if isa's
 * kernels are not built into this binary. Built once, thread-safe, static. */
const optic_clamp_kernels *optic_clamp_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_clamp_kernels *optic_clamp_kernels_get(void);

/* Naive reference (test oracle, constant folding). */
void optic_ref_f32_clamp(size_t n, const float *x, const float *lo, const float *hi, float *y);
void optic_ref_f32_clampc(size_t n, const float *x, float lo, float hi, float *y);

/* One element, as defined above: the scalar kernels and SIMD tails use it. */
static inline float optic_clamp_f32(float x, float lo, float hi) {
  float t = x != x ? x : lo != lo ? lo : (x > lo ? x : lo);
  return t != t ? t : hi != hi ? hi : (t < hi ? t : hi);
}

/* Every kernel in kernels/list/clamp.inc is declared here. */
#define X_VV(op, isa, fn) void fn(size_t n, const float *x, const float *lo, const float *hi, float *y);
#define X_VS(op, isa, fn) void fn(size_t n, const float *x, float lo, float hi, float *y);
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS

#endif
