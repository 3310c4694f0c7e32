/* Which f32 kernel of the unary and binary families computes an opcode:
 * one mapping for the evaluator (through the naive references), constant
 * folding and the runtime (through the dispatch tables). */
#ifndef OPTIC_GRAPH_OPCODE_KERNELS_H
#define OPTIC_GRAPH_OPCODE_KERNELS_H

#include <stdbool.h>

#include <optic/graph.h>

#include "kernels/binary.h"
#include "kernels/unary.h"

/* True and *k set when op is one of the unary kernels' ops. */
bool graph_opcode_unary_kernel(optic_opcode op, optic_unary_op *k);
/* True and *k set for add, subtract, multiply, divide, power, maximum, minimum. */
bool graph_opcode_binary_kernel(optic_opcode op, optic_binary_op *k);

#endif
