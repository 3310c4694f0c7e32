/* Internal: unary f32 kernels, elementwise y[i] = op(x[i]). Contract in
 * kernels/common.h; in place (y == x) is legal. Never allocates, never reads
 * or writes outside [x, x + n) and [y, y + n).
 * Semantics (XLA's, see docs/kernels-unary.md):
 *  - negate/abs flip/clear the sign bit only (NaN payloads kept, -0 -> +0 for abs);
 *  - sqrt, square, floor, ceil are exact (IEEE, results bitwise those of libm);
 *  - sign(x) is +-1 for nonzero x, x itself for +-0 and NaN;
 *  - relu(x) is x for x > 0 or NaN, +0 otherwise (relu(-0) = +0, the project's
 *    maximum(x, 0) rule: a is returned only when strictly greater);
 *  - exponential, log, tanh, logistic = 1/(1+exp(-x)), rsqrt = 1/sqrt(x), erf,
 *    exponential-minus-one, log-plus-one are
 *    within the ULP bound in the op list below of the correctly rounded result,
 *    on every ISA, over the whole float range; special inputs give libm's class
 *    (exp(-inf) = +0, exp(+-big) = inf/+0, log(0) = -inf, log(x<0) = NaN,
 *    log(inf) = inf, tanh(+-inf) = +-1, tanh(+-0) = +-0, logistic(-inf) = +0,
 *    rsqrt(+-0) = +-inf, rsqrt(x<0) = NaN, NaN -> NaN) and subnormal results
 *    are produced, never flushed. */
#ifndef OPTIC_KERNELS_UNARY_H
#define OPTIC_KERNELS_UNARY_H

#include "kernels/common.h"

/* X(OP, name, max_ulp): max_ulp is the largest distance, in units in the last
 * place, of any kernel of the op (every ISA, every float input) from the exact
 * result rounded to float; 0 means bitwise exact. tests/kernels/test_unary.c
 * holds every kernel to it. The bounds are the measured maxima (strided sweep
 * of all float bit patterns on every ISA, exhaustive for the AVX2/AVX-512
 * transcendentals): exp, log, rsqrt, erf, expm1, log1p 1 ULP; tanh, logistic
 * 2 ULP; per-ISA
 * figures in docs/kernels-unary.md. */
#define OPTIC_UNARY_OP_LIST(X)         \
  X(NEG, "negate", 0)                  \
  X(ABS, "abs", 0)                     \
  X(EXP, "exponential", 1)             \
  X(LOG, "log", 1)                     \
  X(SQRT, "sqrt", 0)                   \
  X(RSQRT, "rsqrt", 1)                 \
  X(TANH, "tanh", 2)                   \
  X(LOGISTIC, "logistic", 2)           \
  X(SIGN, "sign", 0)                   \
  X(FLOOR, "floor", 0)                 \
  X(CEIL, "ceil", 0)                   \
  X(SQUARE, "square", 0)               \
  X(RELU, "relu", 0)                   \
  X(ERF, "erf", 1)                     \
  X(EXPM1, "exponential-minus-one", 1) \
  X(LOG1P, "log-plus-one", 1)

typedef enum optic_unary_op {
#define OPTIC_UNARY_OP_ENUM_(op, name, ulp) OPTIC_UNARY_##op,
  OPTIC_UNARY_OP_LIST(OPTIC_UNARY_OP_ENUM_)
#undef OPTIC_UNARY_OP_ENUM_
      OPTIC_UNARY_OP_COUNT
} optic_unary_op;

typedef void (*optic_f32_vunary_fn)(size_t n, const float *x, float *y);

typedef struct optic_unary_kernels {
  optic_f32_vunary_fn kernel[OPTIC_UNARY_OP_COUNT];
  optic_isa isa_of[OPTIC_UNARY_OP_COUNT]; /* which ISA each entry really is */
} optic_unary_kernels;

/* Op name ("exponential"); "invalid" for an out-of-range op. */
const char *optic_unary_op_name(optic_unary_op op);
/* The op's accuracy bound in ULP (the list's max_ulp); 0 = exact. */
unsigned optic_unary_max_ulp(optic_unary_op op);

/* The table for isa: the scalar kernels, overridden by isa's own where the list
 * has them. NULL if isa's kernels are not built into this binary. Built once,
 * thread-safe, static. */
const optic_unary_kernels *optic_unary_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_unary_kernels *optic_unary_kernels_get(void);

/* Naive reference (test oracle, constant folding): each op computed in double
 * with libm and rounded to float once. */
void optic_ref_f32_unary(optic_unary_op op, size_t n, const float *x, float *y);

/* Every kernel in kernels/list/unary.inc is declared here. */
#define X(op, isa, fn) void fn(size_t n, const float *x, float *y);
#include "kernels/list/unary.inc"
#undef X

#endif
