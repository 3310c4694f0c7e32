/* Dead code elimination from the declared outputs: in every needed
 * computation, removes each instruction that neither the root nor an effect
 * (an all-reduce) depends on. Never removes parameters (callers pass them)
 * and never runs without a root (pass_liveness_compute refuses). */
#include <stdio.h>

#include "graph/passes/passes.h"

optic_status pass_dce(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed) {
  for (int32_t q = 0; q < l->n_comps; q++) {
    optic_comp_id comp = l->comps[q];
    int32_t n;
    const optic_node_id *list = graph_instructions(m, comp, &n);
    /* Backwards: users come after their operands, and every user of a dead
     * instruction is dead, so each is gone before its operands are reached.
     * Removing only marks ids, so the list stays valid during the loop. */
    for (int32_t i = n - 1; i >= 0; i--) {
      optic_node_id id = list[i];
      counts->work++;
      if (l->live[id] || m->instrs[id].op == OPTIC_OP_PARAMETER) continue;
      optic_status st = graph_node_remove(m, id);
      if (st != OPTIC_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", optic_last_error());
        return optic_fail(OPTIC_ERR_INTERNAL, "dce: could not remove dead %s from '%s': %s", m->instrs[id].name,
                          m->comps[comp].name, why);
      }
      counts->removed++;
      *changed = true;
    }
  }
  return OPTIC_OK;
}
