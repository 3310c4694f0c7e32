/* Internal: element type conversion kernels (XLA convert), y[i] = T(x[i]).
 * Contract in kernels/common.h, except in place: source and destination types
 * differ, so y must not overlap x at all (even f32<->s32, same size: C's
 * effective-type rules make reading floats and writing ints through the same
 * memory undefined). Semantics, bitwise on every ISA (default FP environment:
 * round to nearest even, no FTZ/DAZ):
 *  f32->f64, s32->f64, u8->f32  exact;
 *  f64->f32, s32->f32           IEEE round to nearest even (f64 overflow -> ±inf,
 *                               underflow -> subnormal or ±0);
 *  f32->s32, f64->s32           truncation toward zero; NaN -> 0; values whose
 *                               truncation is >= 2^31 -> INT32_MAX, <= -2^31-1 ->
 *                               INT32_MIN (saturation, never C undefined behaviour);
 *  f32->pred                    x != 0 (NaN -> 1, ±0 -> 0), one 0/1 byte;
 *  u8->f32                      XLA pred->f32 when the bytes are 0/1;
 *  f32->bf16, f32->f16          round to nearest even (f16: overflow -> ±inf,
 *                               subnormal results kept); NaN -> a quiet NaN of
 *                               the same sign with the high payload bits;
 *  bf16->f32, f16->f32          exact (f16 subnormals widened, NaN payload kept).
 * The half conversions give bitwise the results of core/half.h (the scalar
 * converter of optic_convert_elements) on every ISA, with integer bit
 * arithmetic, whatever the FP environment's FTZ/DAZ.
 * NaN payloads follow the hardware conversion, the same for kernels and the
 * C casts of the reference (quiet bit set, payload shifted/truncated). */
#ifndef OPTIC_KERNELS_CONVERT_H
#define OPTIC_KERNELS_CONVERT_H

#include <stdbool.h>

#include "kernels/common.h"

/* X(op, src_t, dst_t, name): op is the table field, and the first argument of
 * the lines of kernels/list/convert.inc. */
#define OPTIC_CONVERT_OP_LIST(X)            \
  X(f32_f64, float, double, "f32->f64")     \
  X(f64_f32, double, float, "f64->f32")     \
  X(f32_s32, float, int32_t, "f32->s32")    \
  X(s32_f32, int32_t, float, "s32->f32")    \
  X(f64_s32, double, int32_t, "f64->s32")   \
  X(s32_f64, int32_t, double, "s32->f64")   \
  X(f32_pred, float, uint8_t, "f32->pred")  \
  X(u8_f32, uint8_t, float, "u8->f32")      \
  X(f32_bf16, float, uint16_t, "f32->bf16") \
  X(bf16_f32, uint16_t, float, "bf16->f32") \
  X(f32_f16, float, uint16_t, "f32->f16")   \
  X(f16_f32, uint16_t, float, "f16->f32")

typedef void optic_convert_f32_f64_fn(size_t n, const float *x, double *y);
typedef void optic_convert_f64_f32_fn(size_t n, const double *x, float *y);
typedef void optic_convert_f32_s32_fn(size_t n, const float *x, int32_t *y);
typedef void optic_convert_s32_f32_fn(size_t n, const int32_t *x, float *y);
typedef void optic_convert_f64_s32_fn(size_t n, const double *x, int32_t *y);
typedef void optic_convert_s32_f64_fn(size_t n, const int32_t *x, double *y);
typedef void optic_convert_f32_pred_fn(size_t n, const float *x, uint8_t *y);
typedef void optic_convert_u8_f32_fn(size_t n, const uint8_t *x, float *y);
typedef void optic_convert_f32_bf16_fn(size_t n, const float *x, uint16_t *y);
typedef void optic_convert_bf16_f32_fn(size_t n, const uint16_t *x, float *y);
typedef void optic_convert_f32_f16_fn(size_t n, const float *x, uint16_t *y);
typedef void optic_convert_f16_f32_fn(size_t n, const uint16_t *x, float *y);

typedef struct optic_convert_kernels {
#define OPTIC_CONVERT_FIELD_(op, src_t, dst_t, name) optic_convert_##op##_fn *op;
  OPTIC_CONVERT_OP_LIST(OPTIC_CONVERT_FIELD_)
#undef OPTIC_CONVERT_FIELD_
  struct optic_convert_isa_of { /* which ISA each entry really is */
#define OPTIC_CONVERT_ISA_FIELD_(op, src_t, dst_t, name) optic_isa op;
    OPTIC_CONVERT_OP_LIST(OPTIC_CONVERT_ISA_FIELD_)
#undef OPTIC_CONVERT_ISA_FIELD_
  } isa_of;
} optic_convert_kernels;

/* The table for isa (scalar kernels overridden by isa's own); NULL if isa's
 * kernels are not built into this binary. Built once, thread-safe, static. */
const optic_convert_kernels *optic_convert_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_convert_kernels *optic_convert_kernels_get(void);

/* Naive reference (test oracle, constant folding). */
void optic_ref_f32_f64_cvt(size_t n, const float *x, double *y);
void optic_ref_f64_f32_cvt(size_t n, const double *x, float *y);
void optic_ref_f32_s32_cvt(size_t n, const float *x, int32_t *y);
void optic_ref_s32_f32_cvt(size_t n, const int32_t *x, float *y);
void optic_ref_f64_s32_cvt(size_t n, const double *x, int32_t *y);
void optic_ref_s32_f64_cvt(size_t n, const int32_t *x, double *y);
void optic_ref_f32_pred_cvt(size_t n, const float *x, uint8_t *y);
void optic_ref_u8_f32_cvt(size_t n, const uint8_t *x, float *y);
void optic_ref_f32_bf16_cvt(size_t n, const float *x, uint16_t *y);
void optic_ref_bf16_f32_cvt(size_t n, const uint16_t *x, float *y);
void optic_ref_f32_f16_cvt(size_t n, const float *x, uint16_t *y);
void optic_ref_f16_f32_cvt(size_t n, const uint16_t *x, float *y);

/* n elements from one of f32, bf16, f16 to another through the selected
 * ISA's kernels; false (nothing written) for any other pair. */
bool optic_convert_halves(optic_dtype from, const void *x, optic_dtype to, void *y, size_t n);

/* One element of the saturating conversions, for the scalar kernels and the
 * SIMD tails: the range is checked before the cast, which C only defines when
 * the truncated value fits. */
static inline int32_t optic_convert_f32_s32_one(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return INT32_MAX;
  if (x < -2147483648.0f) return INT32_MIN; /* -2^31 itself fits */
  return (int32_t)x;
}
static inline int32_t optic_convert_f64_s32_one(double x) {
  if (x != x) return 0;
  if (x >= 2147483648.0) return INT32_MAX;
  if (x <= -2147483649.0) return INT32_MIN; /* above it, truncation is >= -2^31 */
  return (int32_t)x;
}

/* Every kernel in kernels/list/convert.inc is declared here, with the
 * function type of its op. */
#define X_CVT(op, isa, fn) optic_convert_##op##_fn fn;
#include "kernels/list/convert.inc"
#undef X_CVT

#endif
