/* Elementwise semantics shared by the evaluator and the runtime for the
 * dtypes that have no kernels of their own (docs/dtypes.md):
 * - integers of every width (s8..s64, u8..u64): computed on 64 bits and
 *   wrapped to the width, XLA's rules for division by zero and overflow;
 * - halves (f16, bf16): each op computed in f32 by a routine the caller
 *   supplies (the naive references in the evaluator, the dispatched kernels
 *   in the runtime) and rounded once to nearest even, as XLA's CPU backend
 *   computes them.
 * convert between any two dtypes with values goes through
 * optic_convert_elements. Thread-safe; never allocates. */
#ifndef OPTIC_GRAPH_EW_GENERIC_H
#define OPTIC_GRAPH_EW_GENERIC_H

#include <stdbool.h>
#include <stddef.h>

#include <optic/graph.h>

/* The f32 op over n full arrays (src[k] of n floats in the HLO operand
 * order); y holds n floats, or n pred bytes for compare. */
typedef void (*graph_f32_ew_fn)(void *ctx, optic_opcode op, optic_compare_dir cmp, size_t n,
                                const float *const *src, void *y);

/* True for f16 and bf16. */
bool graph_ew_is_half(optic_dtype dt);
/* True when graph_ew_generic computes op with data dtype in and result out:
 * copy, select, convert (any two dtypes with values), and for integers and
 * halves compare, clamp, the unary and binary ops the builder allows. */
bool graph_ew_generic_supported(optic_opcode op, optic_dtype in, optic_dtype out);
/* One op over n elements; bit k of scalar_mask marks src[k] as a scalar
 * repeated n times. in is the data dtype (select: of operands 1 and 2). */
void graph_ew_generic(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                      const void *const *src, unsigned scalar_mask, void *y, graph_f32_ew_fn f32, void *f32_ctx);

#endif
