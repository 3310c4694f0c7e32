/* The trip count of a while loop when it is fixed when the loop is built:
 * the shape JAX gives lax.scan and fori_loop. The loop state is a tuple
 * whose element i is an integer counter that the init sets to a constant,
 * that the body advances by a constant (add(counter, k)) and that the
 * condition compares with a constant. Such a loop can be unrolled, and so
 * differentiated like straight-line code (graph/autodiff.c), and its time
 * estimated as trips x its body's (graph/compile.c). */
#include <string.h>

#include <optic/attrs.h>

#include "graph/internal.h"

static bool int_constant(const optic_module_t *m, optic_node_id id, int64_t *v) {
  const optic_type *t = optic_node_type(m, id);
  size_t bytes;
  const void *p = optic_node_constant_data(m, id, &bytes);
  if (p == NULL || t->shape.rank != 0) return false;
  switch (t->dtype) {
    case OPTIC_S32: *v = *(const int32_t *)p; return true;
    case OPTIC_S64: *v = *(const int64_t *)p; return true;
    case OPTIC_U32: *v = *(const uint32_t *)p; return true;
    default: return false;
  }
}

/* id is get-tuple-element(param, index): *index gets it. */
static bool element_of(const optic_module_t *m, optic_node_id id, optic_node_id param, int64_t *index) {
  if (optic_node_opcode(m, id) != OPTIC_OP_GET_TUPLE_ELEMENT || optic_node_operand(m, id, 0) != param) return false;
  optic_node_attrs_t a;
  if (optic_node_attrs(m, id, &a) != OPTIC_OK) return false;
  *index = a.get_tuple_element.index;
  return true;
}

static bool compare_holds(optic_compare_dir dir, int64_t a, int64_t b) {
  switch (dir) {
    case OPTIC_CMP_EQ: return a == b;
    case OPTIC_CMP_NE: return a != b;
    case OPTIC_CMP_LT: return a < b;
    case OPTIC_CMP_LE: return a <= b;
    case OPTIC_CMP_GT: return a > b;
    default: return a >= b;
  }
}

/* The condition: compare(counter, bound) or compare(bound, counter). */
static bool read_condition(const optic_module_t *m, optic_comp_id cond, int64_t *index, int64_t *bound,
                           optic_compare_dir *dir, bool *counter_left) {
  optic_node_id r = optic_computation_root(m, cond), p = optic_computation_parameter(m, cond, 0);
  if (r == OPTIC_NO_NODE || optic_node_opcode(m, r) != OPTIC_OP_COMPARE) return false;
  optic_node_id a = optic_node_operand(m, r, 0), b = optic_node_operand(m, r, 1);
  *dir = optic_node_compare_dir(m, r);
  *counter_left = element_of(m, a, p, index) && int_constant(m, b, bound);
  return *counter_left || (element_of(m, b, p, index) && int_constant(m, a, bound));
}

/* The body's root is a tuple whose element index is counter + step. */
static bool read_step(const optic_module_t *m, optic_comp_id body, int64_t index, int64_t *step) {
  optic_node_id r = optic_computation_root(m, body), p = optic_computation_parameter(m, body, 0), e;
  if (r == OPTIC_NO_NODE || optic_node_opcode(m, r) != OPTIC_OP_TUPLE || index >= optic_node_operand_count(m, r)) {
    return false;
  }
  e = optic_node_operand(m, r, (int32_t)index);
  if (optic_node_opcode(m, e) != OPTIC_OP_ADD) return false;
  optic_node_id a = optic_node_operand(m, e, 0), b = optic_node_operand(m, e, 1);
  int64_t i;
  return (element_of(m, a, p, &i) && i == index && int_constant(m, b, step)) ||
         (element_of(m, b, p, &i) && i == index && int_constant(m, a, step));
}

bool graph_while_trip_count(const optic_module_t *m, optic_node_id w, int64_t limit, int64_t *n) {
  optic_node_id init = optic_node_operand(m, w, 0);
  int64_t index, bound, step, v;
  optic_compare_dir dir;
  bool left;
  if (!read_condition(m, optic_node_called(m, w, 0), &index, &bound, &dir, &left)) return false;
  if (!read_step(m, optic_node_called(m, w, 1), index, &step)) return false;
  if (optic_node_opcode(m, init) != OPTIC_OP_TUPLE || index >= optic_node_operand_count(m, init)) return false;
  if (!int_constant(m, optic_node_operand(m, init, (int32_t)index), &v)) return false;
  for (*n = 0; left ? compare_holds(dir, v, bound) : compare_holds(dir, bound, v); (*n)++) {
    if (*n >= limit) return false;
    v += step;
  }
  return true;
}
