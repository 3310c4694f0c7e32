/* Read access to a compiled program. Every accessor only reads: a program
 * is immutable once optic_compile returns. */
#include <string.h>

#include "core/error.h"
#include "graph/program_internal.h"

const optic_module_t *optic_program_module(const optic_program_t *p) { return p ? p->module : NULL; }
optic_comp_id optic_program_entry(const optic_program_t *p) { return p ? p->entry : -1; }
const optic_machine *optic_program_machine(const optic_program_t *p) { return p ? &p->machine : NULL; }

const optic_buffer_plan_t *optic_program_buffers(const optic_program_t *p, optic_comp_id comp) {
  if (p == NULL || comp < 0 || comp >= p->n_comps) return NULL;
  return p->plans[comp];
}

const optic_schedule_t *optic_program_schedule(const optic_program_t *p, optic_comp_id comp) {
  const optic_buffer_plan_t *plan = optic_program_buffers(p, comp);
  return plan ? optic_buffer_plan_schedule(plan) : NULL;
}

optic_status optic_program_node_estimate(const optic_program_t *p, optic_node_id id, optic_node_estimate *out) {
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "program_node_estimate: NULL argument");
  if (id < 0 || id >= p->n_nodes || !p->nodes[id].scheduled) {
    const char *name = optic_node_name(p->module, id);
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "program_node_estimate: instruction %d%s%s%s is not scheduled in this program (only "
                      "instructions of the entry, of called, while and conditional computations and of fusions "
                      "the runtime runs as sequences are)",
                      (int)id, name ? " (" : "", name ? name : "", name ? ")" : "");
  }
  *out = p->nodes[id].est;
  return OPTIC_OK;
}

optic_status optic_program_summary_get(const optic_program_t *p, optic_program_summary *out) {
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "program_summary_get: NULL argument");
  *out = p->summary;
  return OPTIC_OK;
}
