/* Internal: what the pass manager (graph/passes/manager.c) hands each pass,
 * and the analyses the passes share. A pass rewrites only through the
 * mutation API (optic_node_replace_all_uses, optic_node_remove, builders);
 * it never edits operand or user edges itself. Never include from outside
 * graph/. */
#ifndef OPTIC_GRAPH_PASSES_H
#define OPTIC_GRAPH_PASSES_H

#include "graph/internal.h"

/* Which instructions the declared outputs need, and which computations.
 * Built by pass_liveness_compute from the entry's root: an instruction is
 * live if a needed computation's root depends on it, or if it has an effect
 * (see pass_instr_has_effect); a computation is needed if it is the entry or
 * a live instruction calls it. */
typedef struct pass_liveness {
  unsigned char *live;        /* by node id, n_ids entries */
  int32_t n_ids;              /* m->n_instrs when computed */
  unsigned char *comp_effect; /* by comp id: 1 if it contains an effect, transitively */
  optic_comp_id *comps;       /* needed computations, entry first, in discovery order */
  int32_t n_comps;
  int64_t n_live; /* live instructions, parameters included */
  int64_t work;   /* instructions visited + operand edges walked */
} pass_liveness;

/* Fails with INVALID_ARGUMENT (changing nothing) if there is no entry or a
 * needed computation has no root; `who` starts the message ("dce"). */
optic_status pass_liveness_compute(const optic_module_t *m, const char *who, pass_liveness *out);
void pass_liveness_free(pass_liveness *l);

/* An instruction with an effect beyond its value: an all-reduce (a
 * collective every participant must enter), or any instruction calling a
 * computation that contains one. DCE keeps them even when unused, CSE never
 * merges them. comp_effect comes from pass_liveness. */
bool pass_instr_has_effect(const optic_module_t *m, const optic_instr *in, const unsigned char *comp_effect);

/* Counters a pass adds to; the manager turns them into optic_pass_stat. */
typedef struct pass_counts {
  int64_t removed, replaced, added, work;
} pass_counts;

/* One run of a pass over the needed computations. *changed is set when the
 * module changed (a use redirected, an instruction added or removed). */
typedef optic_status (*pass_fn)(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed);

/* A pass that reads the options (checked by the manager; fields beyond the
 * caller's size hold their defaults). */
typedef optic_status (*pass_opts_fn)(optic_module_t *m, const pass_liveness *l, const optic_optimize_options *o,
                                     pass_counts *counts, bool *changed);

optic_status pass_dce(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed);
optic_status pass_cse(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed);
optic_status pass_simplify(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed);
optic_status pass_fusion(optic_module_t *m, const pass_liveness *l, const optic_optimize_options *o,
                         pass_counts *counts, bool *changed);

/* Reads o->fold_max_bytes (> 0 after the manager's defaults). */
optic_status pass_fold(optic_module_t *m, const pass_liveness *l, const optic_optimize_options *o, pass_counts *counts,
                       bool *changed);

/* Whether id is live. Instructions a pass creates after the analysis
 * (ids >= n_ids) are live: they take over uses of live ones. Passes rewrite
 * only live instructions; the rest is DCE's, and skipping it keeps rounds
 * from finding "changes" in dead code forever. */
static inline bool pass_is_live(const pass_liveness *l, optic_node_id id) { return id >= l->n_ids || l->live[id]; }

/* Restores "operands before users" in comp's instruction list after new
 * instructions were appended and took over uses of earlier ones: a stable
 * depth-first order that leaves an already ordered list unchanged. O(n +
 * edges). Only the list order changes, never an edge. */
optic_status pass_restore_order(optic_module_t *m, optic_comp_id comp);

#endif
