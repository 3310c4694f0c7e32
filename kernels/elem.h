/* Element semantics per dtype: the one definition of what every elementwise
 * op computes for every dtype, with XLA's rules (docs/graph-evaluate.md,
 * docs/dtypes.md). Both the reference evaluator (graph/) and the runtime
 * (exec/) call these routines, so they agree bitwise by construction; the
 * evaluator's independent check is the f32 naive references (kernels/ref/)
 * against the dispatched kernels, and the tests that compare these routines
 * with libm and hand-computed cases.
 *
 * Three families, chosen by op and dtype:
 * - scalar (optic_elem_scalar_*): ops without a vector kernel, one element
 *   at a time (sine, cosine, tan,
 *   cbrt, the two round-nearest ops, atan2, remainder, is-finite,
 *   reduce-precision, bitcast-convert, xor, shifts, popcnt,
 *   count-leading-zeros), every dtype they are defined for;
 * - basic (optic_elem_basic): the other ops on f32 (operand combinations
 *   the kernels lack), f64, s32, u8 and pred;
 * - generic (optic_elem_generic): the other ops on integers of every width
 *   (computed on 64 bits, wrapped to the width) and on the halves (each op
 *   in f32 by a routine the caller supplies, rounded once to nearest even).
 *
 * kernels/ knows nothing of graphs: ops are named by optic_elem_op, whose
 * names are XLA's opcode names; graph/ and exec/ map their opcodes to it by
 * name (a test checks the kind column below against the opcode list's).
 * Thread-safe; never allocates. Little-endian hosts only. */
#ifndef OPTIC_KERNELS_ELEM_H
#define OPTIC_KERNELS_ELEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <optic/core.h>

#include "kernels/binary.h"
#include "kernels/compare.h"
#include "kernels/unary.h"

/* X(NAME, kind): kind is UNARY or BINARY for the arithmetic and logic ops
 * on one or two operands of one dtype, OTHER for the rest. */
#define OPTIC_ELEM_OP_LIST(X)       \
  X(ADD, BINARY)                    \
  X(SUBTRACT, BINARY)               \
  X(MULTIPLY, BINARY)               \
  X(DIVIDE, BINARY)                 \
  X(POWER, BINARY)                  \
  X(MAXIMUM, BINARY)                \
  X(MINIMUM, BINARY)                \
  X(AND, BINARY)                    \
  X(OR, BINARY)                     \
  X(NEGATE, UNARY)                  \
  X(ABS, UNARY)                     \
  X(EXPONENTIAL, UNARY)             \
  X(LOG, UNARY)                     \
  X(SQRT, UNARY)                    \
  X(RSQRT, UNARY)                   \
  X(TANH, UNARY)                    \
  X(LOGISTIC, UNARY)                \
  X(SIGN, UNARY)                    \
  X(FLOOR, UNARY)                   \
  X(CEIL, UNARY)                    \
  X(NOT, UNARY)                     \
  X(ERF, UNARY)                     \
  X(LOG_PLUS_ONE, UNARY)            \
  X(EXPONENTIAL_MINUS_ONE, UNARY)   \
  X(SINE, UNARY)                    \
  X(COSINE, UNARY)                  \
  X(TAN, UNARY)                     \
  X(CBRT, UNARY)                    \
  X(ROUND_NEAREST_AFZ, UNARY)       \
  X(ROUND_NEAREST_EVEN, UNARY)      \
  X(POPCNT, UNARY)                  \
  X(COUNT_LEADING_ZEROS, UNARY)     \
  X(ATAN2, BINARY)                  \
  X(REMAINDER, BINARY)              \
  X(XOR, BINARY)                    \
  X(SHIFT_LEFT, BINARY)             \
  X(SHIFT_RIGHT_LOGICAL, BINARY)    \
  X(SHIFT_RIGHT_ARITHMETIC, BINARY) \
  X(IS_FINITE, OTHER)               \
  X(REDUCE_PRECISION, OTHER)        \
  X(BITCAST_CONVERT, OTHER)         \
  X(COMPARE, OTHER)                 \
  X(SELECT, OTHER)                  \
  X(CLAMP, OTHER)                   \
  X(CONVERT, OTHER)                 \
  X(COPY, OTHER)

typedef enum optic_elem_op {
#define OPTIC_ELEM_OP_ENUM_(name, kind) OPTIC_ELEM_##name,
  OPTIC_ELEM_OP_LIST(OPTIC_ELEM_OP_ENUM_)
#undef OPTIC_ELEM_OP_ENUM_
      OPTIC_ELEM_OP_COUNT_
} optic_elem_op;

typedef enum optic_elem_kind { OPTIC_ELEM_KIND_UNARY, OPTIC_ELEM_KIND_BINARY, OPTIC_ELEM_KIND_OTHER } optic_elem_kind;

/* The kind column; OTHER outside the enum. */
optic_elem_kind optic_elem_kind_of(optic_elem_op op);
/* XLA's spelling of the op ("log-plus-one"); "invalid" outside the enum. */
const char *optic_elem_op_name(optic_elem_op op);

/* True and *k set when op is one of the f32 unary kernels' ops. */
bool optic_elem_unary_kernel(optic_elem_op op, optic_unary_op *k);
/* True and *k set for add, subtract, multiply, divide, power, maximum, minimum. */
bool optic_elem_binary_kernel(optic_elem_op op, optic_binary_op *k);

/* Whether dt is an integer dtype (pred is not), and its width and sign. */
bool optic_elem_dtype_int_info(optic_dtype dt, int *bits, bool *is_signed);

/* ------------------------------------------------------------ scalar family */

/* Whether op belongs to the scalar family (whatever the dtypes). */
bool optic_elem_scalar_op(optic_elem_op op);
/* Whether the family defines op from dtype in (the operands') to out. */
bool optic_elem_scalar_defines(optic_elem_op op, optic_dtype in, optic_dtype out);

/* reduce-precision's two attributes travel as one parameter. */
static inline int32_t optic_elem_reduce_precision_param(int64_t exponent_bits, int64_t mantissa_bits) {
  return (int32_t)((exponent_bits << 8) | mantissa_bits);
}

/* y[i] = op(src[0][i], src[1][i]) for i < n; bit k of scalar_mask marks
 * src[k] as one element repeated. param: reduce-precision's packed
 * attributes (else ignored). The caller has checked optic_elem_scalar_defines.
 * y may equal an unmasked source of the same element size. */
void optic_elem_scalar_apply(optic_elem_op op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                             const void *const *src, unsigned scalar_mask, void *y);

/* ------------------------------------------------------------ basic family */

/* Whether the basic family computes the unary or binary op with operands
 * of dtype in (f32, f64, s32, u8, pred); compare, select, clamp, convert
 * and copy are defined for every pair of those five dtypes. */
bool optic_elem_basic_defines(optic_elem_op op, optic_dtype in);

/* One op over n elements of the five basic dtypes; bit k of scalar_mask
 * marks src[k] as one element repeated. in is the data dtype (select: of
 * operands 1 and 2; clamp's operands are lo, x, hi). compare gives pred
 * bytes, convert truncates floats toward zero and saturates (NaN -> 0),
 * integers to u8 keep their low byte. f32 unary ops are not defined here
 * (the kernels and references own them). */
void optic_elem_basic(optic_elem_op op, optic_compare_op cmp, optic_dtype in, optic_dtype out, size_t n,
                      const void *const *src, unsigned scalar_mask, void *y);

/* ------------------------------------------------------------ generic family */

/* The f32 op over n full arrays (src[k] of n floats in the HLO operand
 * order); y holds n floats, or n pred bytes for compare. */
typedef void (*optic_elem_f32_fn)(void *ctx, optic_elem_op op, optic_compare_op cmp, size_t n, const float *const *src,
                                  void *y);

/* True for f16 and bf16. */
bool optic_elem_is_half(optic_dtype dt);
/* True when optic_elem_generic computes op with data dtype in and result
 * out: copy, select, convert (any two dtypes with values), and for integers
 * and halves compare, clamp, the unary and binary ops the builder allows. */
bool optic_elem_generic_supported(optic_elem_op op, optic_dtype in, optic_dtype out);
/* One op over n elements; bit k of scalar_mask marks src[k] as a scalar
 * repeated n times. in is the data dtype (select: of operands 1 and 2). */
void optic_elem_generic(optic_elem_op op, optic_compare_op cmp, optic_dtype in, optic_dtype out, size_t n,
                        const void *const *src, unsigned scalar_mask, void *y, optic_elem_f32_fn f32, void *f32_ctx);

#endif
