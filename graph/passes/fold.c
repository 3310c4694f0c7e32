/* Constant folding: a live instruction whose operands are all constants (or
 * that has none, like iota) is evaluated once with the reference evaluator
 * (optic_evaluate_node, which runs the kernels' naive references) and its
 * uses move to a new constant holding the result. The old instruction is left
 * for DCE. Skipped, and left as they are: parameters and constants, anything
 * with an effect (all-reduce, calls into code containing one), tuple-valued
 * results (a constant is an array), results larger than the size cap, work
 * beyond the budget below, and anything the evaluator refuses (an error is
 * never the pass's error). Visiting in list order makes whole constant chains
 * fold in one run: a folded instruction's users see a constant operand when
 * their turn comes. Semantics and limits: docs/graph-passes.md. */
#include <stdlib.h>
#include <string.h>

#include "graph/passes/passes.h"

/* Work budget per instruction, in multiples of the size cap: flops +
 * transcendentals + bytes accessed by XLA's cost rules (one iteration for a
 * while loop). */
#define FOLD_WORK_FACTOR 16
/* A while loop is folded only if its condition turns false within this many
 * body runs. */
#define FOLD_MAX_WHILE_ITERATIONS 1024

typedef struct fold_ctx {
  optic_module_t *m;
  const pass_liveness *l;
  pass_counts *counts;
  int64_t max_bytes;
  optic_evaluate_options eval;
  optic_literal **args; /* operand literals of the instruction being folded */
  int32_t cap_args;
  bool added;
} fold_ctx;

/* Whether id can be folded under the settings, by what it is and costs. */
static bool foldable(fold_ctx *cx, optic_node_id id) {
  const optic_instr *in = graph_instr(cx->m, id);
  if (in == NULL || !pass_is_live(cx->l, id)) return false;
  if (in->op == OPTIC_OP_CONSTANT || in->op == OPTIC_OP_PARAMETER) return false;
  if (pass_instr_has_effect(cx->m, in, cx->l->comp_effect)) return false;
  if (optic_type_is_tuple(&in->type) || in->type.dtype == OPTIC_TOKEN) return false; /* no literal holds a token */
  cx->counts->work += in->n_operands;
  for (int32_t k = 0; k < in->n_operands; k++) {
    if (graph_instr(cx->m, in->operands[k])->op != OPTIC_OP_CONSTANT) return false;
  }
  size_t out_bytes;
  if (optic_shape_bytes(&in->type.shape, in->type.dtype, &out_bytes) != OPTIC_OK) return false;
  if (out_bytes > (uint64_t)cx->max_bytes) return false;
  optic_cost cost;
  if (optic_node_cost(cx->m, id, &cost) != OPTIC_OK) return false;
  double work = cost.flops + cost.transcendentals + cost.bytes_accessed;
  return work <= (double)FOLD_WORK_FACTOR * (double)cx->max_bytes;
}

static void free_args(fold_ctx *cx, int32_t n) {
  for (int32_t k = 0; k < n; k++) {
    optic_literal_destroy(cx->args[k]);
    cx->args[k] = NULL;
  }
}

/* Evaluates id on its constant operands; *value is NULL when the evaluator
 * declines (any error but out of memory while preparing the operands). */
static optic_status evaluate(fold_ctx *cx, optic_node_id id, optic_literal **value) {
  *value = NULL;
  const optic_instr *in = graph_instr(cx->m, id);
  int32_t n = in->n_operands;
  if (n > cx->cap_args) {
    optic_literal **grown = realloc(cx->args, (size_t)n * sizeof *grown);
    if (grown == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fold: out of memory");
    for (int32_t k = cx->cap_args; k < n; k++) grown[k] = NULL;
    cx->args = grown;
    cx->cap_args = n;
  }
  for (int32_t k = 0; k < n; k++) {
    const optic_instr *c = graph_instr(cx->m, in->operands[k]);
    optic_status st = optic_literal_create_array(c->type.dtype, &c->type.shape, c->data, c->data_bytes, &cx->args[k]);
    if (st != OPTIC_OK) {
      free_args(cx, k);
      return st;
    }
  }
  /* An evaluation error (unsupported op/dtype, loop limit, ...) only means
   * that this instruction stays as it is. */
  (void)optic_evaluate_node(cx->m, id, (const optic_literal *const *)cx->args, n, &cx->eval, value);
  free_args(cx, n);
  return OPTIC_OK;
}

static optic_status fold_instr(fold_ctx *cx, optic_comp_id comp, optic_node_id id, bool *changed) {
  cx->counts->work++;
  if (!foldable(cx, id)) return OPTIC_OK;
  optic_literal *value;
  optic_status st = evaluate(cx, id, &value);
  if (st != OPTIC_OK || value == NULL) return st;
  const optic_type *t = optic_literal_type(value);
  size_t bytes = 0;
  const void *data = optic_literal_data(value, &bytes);
  optic_node_id c;
  st = optic_graph_constant(cx->m, comp, t->dtype, &t->shape, data, bytes, NULL, &c);
  if (st == OPTIC_OK) {
    cx->added = true;
    cx->counts->added++;
    cx->counts->work += (int64_t)(bytes / optic_dtype_size(t->dtype));
    *changed = true;
    st = optic_node_replace_all_uses(cx->m, id, c);
    if (st == OPTIC_OK) cx->counts->replaced++;
  }
  optic_literal_destroy(value);
  return st;
}

optic_status pass_fold(optic_module_t *m, const pass_liveness *l, const optic_optimize_options *o, pass_counts *counts,
                       bool *changed) {
  fold_ctx cx = {.m = m, .l = l, .counts = counts, .max_bytes = o->fold_max_bytes};
  cx.eval = optic_evaluate_options_default();
  cx.eval.max_while_iterations = FOLD_MAX_WHILE_ITERATIONS;
  optic_status st = OPTIC_OK;
  for (int32_t q = 0; q < l->n_comps && st == OPTIC_OK; q++) {
    optic_comp_id comp = l->comps[q];
    cx.added = false;
    int32_t n;
    const optic_node_id *list = optic_computation_instructions(m, comp, &n);
    /* New constants are appended (and may move the list): walk a copy. */
    optic_node_id *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (ids == NULL) {
      st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fold: out of memory");
      break;
    }
    memcpy(ids, list, (size_t)n * sizeof *ids);
    for (int32_t i = 0; i < n && st == OPTIC_OK; i++) st = fold_instr(&cx, comp, ids[i], changed);
    free(ids);
    /* New constants sit at the end but feed earlier users. */
    if (cx.added) {
      optic_status st2 = pass_restore_order(m, comp);
      if (st == OPTIC_OK) st = st2;
    }
  }
  free(cx.args);
  return st;
}
