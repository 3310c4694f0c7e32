/* Which element op of kernels/elem.h (and which f32 kernel of the unary and
 * binary families) computes an opcode: one mapping for the evaluator
 * (through the naive references), constant folding, shape checks and the
 * builders. Derived by name from OPTIC_ELEM_OP_LIST. */
#ifndef OPTIC_GRAPH_OPCODE_KERNELS_H
#define OPTIC_GRAPH_OPCODE_KERNELS_H

#include <stdbool.h>

#include <optic/graph.h>

#include "kernels/binary.h"
#include "kernels/elem.h"
#include "kernels/unary.h"

/* True and *e set when op is an element op (kernels/elem.h). */
bool graph_opcode_elem(optic_opcode op, optic_elem_op *e);
/* True and *k set when op is one of the unary kernels' ops. */
bool graph_opcode_unary_kernel(optic_opcode op, optic_unary_op *k);
/* True and *k set for add, subtract, multiply, divide, power, maximum, minimum. */
bool graph_opcode_binary_kernel(optic_opcode op, optic_binary_op *k);
/* Whether op is in the scalar family of kernels/elem.h, and whether that
 * family defines it from dtype in to out. */
bool graph_ew_scalar_op(optic_opcode op);
bool graph_ew_scalar_defines(optic_opcode op, optic_dtype in, optic_dtype out);

#endif
