/* What the declared outputs need: live instructions and needed computations,
 * found from the entry's root by marking operands and following calls of live
 * instructions. Read-only over the module; fails (changing nothing) when a
 * needed computation has no root, so no pass ever treats "no root" as "nothing
 * is needed". */
#include <stdlib.h>

#include "graph/passes/passes.h"

bool pass_instr_has_effect(const optic_module_t *m, const optic_instr *in, const unsigned char *comp_effect) {
  (void)m;
  if (graph_opcode_has_effect(in->op)) return true;
  for (int32_t k = 0; k < in->n_calls; k++) {
    if (comp_effect[in->calls[k]]) return true;
  }
  return false;
}

/* Instructions that call computations or are all-reduces ("candidates"),
 * grouped by computation: cand[start[c] .. start[c + 1]). Found in one scan
 * of the instruction table; everything after that walks only candidates
 * and live instructions. */
typedef struct cand_index {
  optic_node_id *cand;
  int64_t *start;
} cand_index;

static bool is_candidate(const optic_instr *in) {
  return !in->removed && (in->n_calls > 0 || graph_opcode_has_effect(in->op));
}

static optic_status index_candidates(const optic_module_t *m, cand_index *ix, int64_t *work) {
  int32_t nc = m->n_comps;
  int64_t n = 0, cap = 64;
  optic_node_id *found = malloc((size_t)cap * sizeof *found);
  ix->start = calloc((size_t)nc + 1, sizeof *ix->start);
  if (found == NULL || ix->start == NULL) goto oom;
  for (int32_t i = 0; i < m->n_instrs; i++) {
    if (!is_candidate(&m->instrs[i])) continue;
    if (n == cap) {
      optic_node_id *grown = realloc(found, (size_t)(cap *= 2) * sizeof *found);
      if (grown == NULL) goto oom;
      found = grown;
    }
    found[n++] = i;
    ix->start[m->instrs[i].comp + 1]++;
  }
  *work += m->n_instrs;
  for (int32_t c = 0; c < nc; c++) ix->start[c + 1] += ix->start[c];
  /* Counting sort by computation, keeping id order within each. */
  ix->cand = malloc((size_t)(n ? n : 1) * sizeof *ix->cand);
  int64_t *fill = calloc((size_t)nc + 1, sizeof *fill);
  if (ix->cand == NULL || fill == NULL) {
    free(fill);
    goto oom;
  }
  for (int64_t k = 0; k < n; k++) {
    optic_comp_id c = m->instrs[found[k]].comp;
    ix->cand[ix->start[c] + fill[c]++] = found[k];
  }
  free(fill);
  free(found);
  return OPTIC_OK;
oom:
  free(found);
  return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "passes: out of memory for the call graph");
}

/* comp_effect[c] = 1 when c holds an all-reduce or calls (transitively) a
 * computation that does. Propagated backwards from the all-reduces along
 * reversed call edges, so a call cycle (which the builders allow) cannot
 * make the answer depend on visiting order. */
static optic_status compute_effects(const optic_module_t *m, const cand_index *ix, unsigned char *effect) {
  int32_t nc = m->n_comps;
  /* Reversed call edges in CSR form: callers of comp c are
   * caller[rstart[c] .. rstart[c + 1]). */
  int64_t n_edges = 0;
  for (int64_t k = 0; k < ix->start[nc]; k++) n_edges += m->instrs[ix->cand[k]].n_calls;
  int64_t *rstart = calloc((size_t)nc + 1, sizeof *rstart), *fill = calloc((size_t)nc + 1, sizeof *fill);
  optic_comp_id *caller = malloc((size_t)(n_edges ? n_edges : 1) * sizeof *caller);
  optic_comp_id *queue = malloc((size_t)(nc ? nc : 1) * sizeof *queue);
  optic_status st = OPTIC_OK;
  if (rstart == NULL || fill == NULL || caller == NULL || queue == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "passes: out of memory for the call graph");
    goto done;
  }
  for (int64_t k = 0; k < ix->start[nc]; k++) {
    const optic_instr *in = &m->instrs[ix->cand[k]];
    for (int32_t j = 0; j < in->n_calls; j++) rstart[in->calls[j] + 1]++;
  }
  for (int32_t c = 0; c < nc; c++) rstart[c + 1] += rstart[c];
  int32_t head = 0, tail = 0;
  for (int64_t k = 0; k < ix->start[nc]; k++) {
    const optic_instr *in = &m->instrs[ix->cand[k]];
    for (int32_t j = 0; j < in->n_calls; j++) caller[rstart[in->calls[j]] + fill[in->calls[j]]++] = in->comp;
    if (graph_opcode_has_effect(in->op) && !effect[in->comp]) {
      effect[in->comp] = 1;
      queue[tail++] = in->comp;
    }
  }
  while (head < tail) {
    optic_comp_id c = queue[head++];
    for (int64_t e = rstart[c]; e < rstart[c + 1]; e++) {
      if (!effect[caller[e]]) {
        effect[caller[e]] = 1;
        queue[tail++] = caller[e];
      }
    }
  }
done:
  free(rstart);
  free(fill);
  free(caller);
  free(queue);
  return st;
}
void pass_liveness_free(pass_liveness *l) {
  if (l == NULL) return;
  free(l->live);
  free(l->comp_effect);
  free(l->comps);
  l->live = l->comp_effect = NULL;
  l->comps = NULL;
  l->n_comps = 0;
}

/* Adds callee to the needed list unless it is there; a rootless callee is
 * the fail-safe error. */
static optic_status need_comp(const optic_module_t *m, const char *who, pass_liveness *l, unsigned char *seen,
                              optic_comp_id c, const optic_instr *caller) {
  if (seen[c]) return OPTIC_OK;
  if (m->comps[c].root == OPTIC_NO_NODE) {
    if (caller == NULL) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: the entry computation '%s' has no root; declare its output with "
                        "optic_computation_set_root (without one nothing would be kept)",
                        who, m->comps[c].name);
    }
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: computation '%s' has no root but %s in '%s' calls it (without one nothing would be kept)",
                      who, m->comps[c].name, caller->name, m->comps[caller->comp].name);
  }
  seen[c] = 1;
  l->comps[l->n_comps++] = c;
  return OPTIC_OK;
}

optic_status pass_liveness_compute(const optic_module_t *m, const char *who, pass_liveness *out) {
  pass_liveness l = {0};
  cand_index ix = {0};
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: module is NULL", who);
  if (m->entry < 0 || m->entry >= m->n_comps) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: module '%s' has no entry computation", who, m->name);
  }
  size_t ni = (size_t)m->n_instrs, nc = (size_t)m->n_comps;
  l.n_ids = m->n_instrs;
  l.live = calloc(ni ? ni : 1, 1);
  l.comp_effect = calloc(nc, 1);
  l.comps = malloc(nc * sizeof *l.comps);
  unsigned char *seen = calloc(nc, 1);
  optic_node_id *stack = malloc((ni ? ni : 1) * sizeof *stack);
  optic_status st = OPTIC_OK;
  if (l.live == NULL || l.comp_effect == NULL || l.comps == NULL || seen == NULL || stack == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory for liveness", who);
    goto done;
  }
  if ((st = index_candidates(m, &ix, &l.work)) != OPTIC_OK) goto done;
  if ((st = compute_effects(m, &ix, l.comp_effect)) != OPTIC_OK) goto done;
  if ((st = need_comp(m, who, &l, seen, m->entry, NULL)) != OPTIC_OK) goto done;
  for (int32_t q = 0; q < l.n_comps; q++) {
    const optic_computation *c = &m->comps[l.comps[q]];
    int32_t sp = 0;
    /* Seeds: the root, then the effects. */
    l.live[c->root] = 1;
    stack[sp++] = c->root;
    for (int64_t k = ix.start[l.comps[q]]; k < ix.start[l.comps[q] + 1]; k++) {
      optic_node_id id = ix.cand[k];
      l.work++;
      if (l.live[id] || !pass_instr_has_effect(m, &m->instrs[id], l.comp_effect)) continue;
      l.live[id] = 1;
      stack[sp++] = id;
    }
    while (sp > 0) {
      const optic_instr *in = &m->instrs[stack[--sp]];
      l.n_live++;
      for (int32_t k = 0; k < in->n_calls; k++) {
        if ((st = need_comp(m, who, &l, seen, in->calls[k], in)) != OPTIC_OK) goto done;
      }
      for (int32_t i = 0; i < in->n_operands; i++) {
        optic_node_id o = in->operands[i];
        l.work++;
        if (!l.live[o]) {
          l.live[o] = 1;
          stack[sp++] = o;
        }
      }
    }
  }
done:
  free(seen);
  free(stack);
  free(ix.cand);
  free(ix.start);
  if (st != OPTIC_OK) {
    pass_liveness_free(&l);
    return st;
  }
  *out = l;
  return OPTIC_OK;
}
