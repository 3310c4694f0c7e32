/* Keeps a computation's instruction list in "operands before users" order
 * after a pass appended instructions that took over uses of earlier ones.
 * Reorders the list only; edges are never touched here. */
#include <stdlib.h>

#include "graph/passes/passes.h"

/* Depth-first post-order over operands, starting from each instruction in
 * list order: an instruction is emitted once all its operands are, and an
 * already ordered list comes out unchanged. The stack holds (node, next
 * operand index) frames; each node enters it once. */
optic_status pass_restore_order(optic_module_t *m, optic_comp_id comp) {
  graph_compact(m, comp);
  optic_computation *c = &m->comps[comp];
  int32_t n = c->n_instrs;
  if (n == 0) return OPTIC_OK;
  /* Node ids are module-wide; map them to list positions through a sparse
   * array only as large as the id range this computation spans. */
  optic_node_id lo = c->instrs[0], hi = c->instrs[0];
  for (int32_t i = 1; i < n; i++) {
    if (c->instrs[i] < lo) lo = c->instrs[i];
    if (c->instrs[i] > hi) hi = c->instrs[i];
  }
  size_t span = (size_t)hi - (size_t)lo + 1;
  unsigned char *state = calloc(span, 1); /* 0 new, 1 on the stack, 2 emitted */
  optic_node_id *out = malloc((size_t)n * sizeof *out);
  optic_node_id *stack_node = malloc((size_t)n * sizeof *stack_node);
  int32_t *stack_next = malloc((size_t)n * sizeof *stack_next);
  if (state == NULL || out == NULL || stack_node == NULL || stack_next == NULL) {
    free(state);
    free(out);
    free(stack_node);
    free(stack_next);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "passes: out of memory ordering '%s'", c->name);
  }
  int32_t k = 0;
  for (int32_t i = 0; i < n; i++) {
    optic_node_id start = c->instrs[i];
    if (state[start - lo]) continue;
    int32_t sp = 0;
    state[start - lo] = 1;
    stack_node[sp] = start;
    stack_next[sp++] = 0;
    while (sp > 0) {
      const optic_instr *in = &m->instrs[stack_node[sp - 1]];
      if (stack_next[sp - 1] < in->n_operands) {
        optic_node_id o = in->operands[stack_next[sp - 1]++];
        if (state[o - lo] == 0) {
          state[o - lo] = 1;
          stack_node[sp] = o;
          stack_next[sp++] = 0;
        }
        continue;
      }
      state[stack_node[sp - 1] - lo] = 2;
      out[k++] = stack_node[--sp];
    }
  }
  /* k == n: every operand is a live instruction of this computation. */
  for (int32_t i = 0; i < n; i++) c->instrs[i] = out[i];
  free(state);
  free(out);
  free(stack_node);
  free(stack_next);
  return OPTIC_OK;
}
