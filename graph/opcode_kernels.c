/* The opcode -> element op mapping (graph/opcode_kernels.h). */
#include "graph/opcode_kernels.h"

/* Element op + 1 by opcode (0: not an element op); a name of
 * OPTIC_ELEM_OP_LIST without an opcode of that name does not compile. */
static const unsigned char elem_of[OPTIC_OPCODE_COUNT_] = {
#define ELEM_OF_(name, kind) [OPTIC_OP_##name] = OPTIC_ELEM_##name + 1,
    OPTIC_ELEM_OP_LIST(ELEM_OF_)
#undef ELEM_OF_
};

/* compare directions travel to the kernels as their own enum. */
#define SAME_DIR_(d) _Static_assert((int)OPTIC_CMP_##d == (int)OPTIC_COMPARE_##d, "compare direction " #d)
// clang-format off
SAME_DIR_(EQ); SAME_DIR_(NE); SAME_DIR_(LT); SAME_DIR_(LE); SAME_DIR_(GT); SAME_DIR_(GE);
// clang-format on
#undef SAME_DIR_

bool graph_opcode_elem(optic_opcode op, optic_elem_op *e) {
  if ((unsigned)op >= OPTIC_OPCODE_COUNT_ || elem_of[op] == 0) return false;
  *e = (optic_elem_op)(elem_of[op] - 1);
  return true;
}

bool graph_opcode_unary_kernel(optic_opcode op, optic_unary_op *k) {
  optic_elem_op e;
  return graph_opcode_elem(op, &e) && optic_elem_unary_kernel(e, k);
}

bool graph_opcode_binary_kernel(optic_opcode op, optic_binary_op *k) {
  optic_elem_op e;
  return graph_opcode_elem(op, &e) && optic_elem_binary_kernel(e, k);
}

bool graph_ew_scalar_op(optic_opcode op) {
  optic_elem_op e;
  return graph_opcode_elem(op, &e) && optic_elem_scalar_op(e);
}

bool graph_ew_scalar_defines(optic_opcode op, optic_dtype in, optic_dtype out) {
  optic_elem_op e;
  return graph_opcode_elem(op, &e) && optic_elem_scalar_defines(e, in, out);
}
