/* The opcode -> f32 kernel mapping (graph/opcode_kernels.h). */
#include "graph/opcode_kernels.h"

bool graph_opcode_unary_kernel(optic_opcode op, optic_unary_op *k) {
  switch (op) {
    case OPTIC_OP_NEGATE: *k = OPTIC_UNARY_NEG; return true;
    case OPTIC_OP_ABS: *k = OPTIC_UNARY_ABS; return true;
    case OPTIC_OP_EXPONENTIAL: *k = OPTIC_UNARY_EXP; return true;
    case OPTIC_OP_LOG: *k = OPTIC_UNARY_LOG; return true;
    case OPTIC_OP_SQRT: *k = OPTIC_UNARY_SQRT; return true;
    case OPTIC_OP_RSQRT: *k = OPTIC_UNARY_RSQRT; return true;
    case OPTIC_OP_TANH: *k = OPTIC_UNARY_TANH; return true;
    case OPTIC_OP_LOGISTIC: *k = OPTIC_UNARY_LOGISTIC; return true;
    case OPTIC_OP_SIGN: *k = OPTIC_UNARY_SIGN; return true;
    case OPTIC_OP_FLOOR: *k = OPTIC_UNARY_FLOOR; return true;
    case OPTIC_OP_CEIL: *k = OPTIC_UNARY_CEIL; return true;
    default: return false;
  }
}

bool graph_opcode_binary_kernel(optic_opcode op, optic_binary_op *k) {
  switch (op) {
    case OPTIC_OP_ADD: *k = OPTIC_BINARY_ADD; return true;
    case OPTIC_OP_SUBTRACT: *k = OPTIC_BINARY_SUB; return true;
    case OPTIC_OP_MULTIPLY: *k = OPTIC_BINARY_MUL; return true;
    case OPTIC_OP_DIVIDE: *k = OPTIC_BINARY_DIV; return true;
    case OPTIC_OP_POWER: *k = OPTIC_BINARY_POW; return true;
    case OPTIC_OP_MAXIMUM: *k = OPTIC_BINARY_MAX; return true;
    case OPTIC_OP_MINIMUM: *k = OPTIC_BINARY_MIN; return true;
    default: return false;
  }
}
