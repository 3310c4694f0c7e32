/* Internal: the elementwise ops optic runs one element at a time, with XLA's
 * semantics (docs/graph-evaluate.md): transcendental and rounding ops that
 * have no vector kernel (erf, log-plus-one, exponential-minus-one, sine,
 * cosine, tan, atan2, cbrt, remainder, the two round-nearest ops), is-finite,
 * reduce-precision, bitcast-convert, and the integer bit ops (xor, shifts,
 * popcnt, count-leading-zeros). The evaluator and the runtime both call
 * graph_ew_scalar_apply, so they agree bitwise; tests check it against libm
 * and hand-computed cases. Integer ops are written once over (bit width,
 * signedness), so a new integer dtype needs only an entry in
 * graph_dtype_int_info. Never allocates. */
#ifndef OPTIC_GRAPH_EW_SCALAR_H
#define OPTIC_GRAPH_EW_SCALAR_H

#include <optic/graph.h>

/* Whether dt is an integer dtype (pred is not), and its width and sign. */
bool graph_dtype_int_info(optic_dtype dt, int *bits, bool *is_signed);
bool graph_dtype_is_float(optic_dtype dt);

/* Whether op belongs to this family (whatever the dtypes). */
bool graph_ew_scalar_op(optic_opcode op);
/* Whether the family defines op from dtype in (the operands') to out. */
bool graph_ew_scalar_defines(optic_opcode op, optic_dtype in, optic_dtype out);

/* reduce-precision's two attributes travel as one parameter. */
static inline int32_t graph_ew_reduce_precision_param(int64_t exponent_bits, int64_t mantissa_bits) {
  return (int32_t)((exponent_bits << 8) | mantissa_bits);
}

/* y[i] = op(src[0][i], src[1][i]) for i < n; bit k of scalar_mask marks
 * src[k] as one element repeated. param: reduce-precision's packed
 * attributes (else ignored). The caller has checked graph_ew_scalar_defines.
 * y may equal an unmasked source of the same element size. */
void graph_ew_scalar_apply(optic_opcode op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                           const void *const *src, unsigned scalar_mask, void *y);

#endif
