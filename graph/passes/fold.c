/* Constant folding: a live instruction whose operands are all constants (or
 * that has none, like iota) is evaluated once with the reference evaluator
 * (optic_evaluate_node, which runs the kernels' naive references) and its
 * uses move to a new constant holding the result. The old instruction is left
 * for DCE. Skipped, and left as they are: parameters and constants, anything
 * with an effect (all-reduce, calls into code containing one), tuple-valued
 * results (a constant is an array), results larger than the size cap or
 * than the constant operands the fold frees (so folding never grows the
 * program: a broadcast of a scalar stays a broadcast), work beyond the
 * budget below, and anything the evaluator refuses (an error is never the
 * pass's error). Visiting in list order makes whole constant chains
 * fold in one run: a folded instruction's users see a constant operand when
 * their turn comes. Semantics and limits: docs/graph-passes.md. */
#include <math.h>
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
  optic_literal_t **args; /* operand literals of the instruction being folded */
  int32_t cap_args;
  int32_t *readers; /* by node id: see reader_count */
  int32_t cap_readers;
  signed char *loops; /* by computation id: comp_loop_depth, -2 unknown */
  int32_t cap_loops;
  bool added;
} fold_ctx;

/* Whether user u still reads its operands: live by the analysis and not
 * folded by this pass (a folded instruction has no users left and is no
 * root; a live one without users has an effect). */
static bool still_reads(fold_ctx *cx, optic_node_id u) {
  const optic_instr *in = graph_instr(cx->m, u);
  if (!pass_is_live(cx->l, u)) return false;
  return in->n_users > 0 || cx->m->comps[in->comp].root == u || pass_instr_has_effect(cx->m, in, cx->l->comp_effect);
}

/* How many live instructions still read constant c: counted once (live
 * users by the analysis; new constants' users all took over live uses),
 * then lowered as this pass folds them (a folded instruction's uses move to
 * its new constant, so it reads nothing any more). -1: not counted yet. */
static optic_status reader_count(fold_ctx *cx, optic_node_id c, int32_t *out) {
  if (c >= cx->cap_readers) {
    int32_t cap = cx->m->n_instrs > c ? cx->m->n_instrs : c + 1;
    int32_t *grown = realloc(cx->readers, (size_t)cap * sizeof *grown);
    if (grown == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fold: out of memory");
    for (int32_t i = cx->cap_readers; i < cap; i++) grown[i] = -1;
    cx->readers = grown, cx->cap_readers = cap;
  }
  if (cx->readers[c] < 0) {
    const optic_instr *in = graph_instr(cx->m, c);
    int32_t n = 0;
    for (int32_t u = 0; u < in->n_users; u++) n += still_reads(cx, in->users[u]);
    cx->counts->work += in->n_users;
    cx->readers[c] = n;
  }
  *out = cx->readers[c];
  return OPTIC_OK;
}

/* Bytes of in's constant operands that folding in frees: those that only
 * in still reads and that are not their computation's root. Each distinct
 * operand once (later slots of the same operand have user_pos -1). */
static optic_status freed_operand_bytes(fold_ctx *cx, const optic_instr *in, double *freed) {
  *freed = 0;
  for (int32_t k = 0; k < in->n_operands; k++) {
    if (in->user_pos[k] < 0) continue;
    optic_node_id id = in->operands[k];
    const optic_instr *c = graph_instr(cx->m, id);
    int32_t readers = 0;
    optic_status st = reader_count(cx, id, &readers);
    if (st != OPTIC_OK) return st;
    if (readers == 1 && cx->m->comps[c->comp].root != id) *freed += (double)c->data_bytes;
  }
  return OPTIC_OK;
}

/* in was folded: its operands lose a reader. */
static void drop_reads(fold_ctx *cx, const optic_instr *in) {
  for (int32_t k = 0; k < in->n_operands; k++) {
    optic_node_id id = in->operands[k];
    if (in->user_pos[k] >= 0 && id < cx->cap_readers && cx->readers[id] > 0) cx->readers[id]--;
  }
}

/* How deeply while loops nest in what in runs: 1 for a while whose body
 * and condition hold none, plus the nesting inside any computation it
 * calls (transitively); -1 past MAX_LOOP_SCAN_DEPTH calls (or a cycle).
 * Remembered per computation for the run. */
#define MAX_LOOP_SCAN_DEPTH 64
static int comp_loop_depth(fold_ctx *cx, optic_comp_id c, int depth);
static int loop_depth(fold_ctx *cx, const optic_instr *in, int depth) {
  int inner = 0;
  for (int32_t k = 0; k < in->n_calls; k++) {
    int d = comp_loop_depth(cx, in->calls[k], depth + 1);
    if (d < 0) return -1;
    if (d > inner) inner = d;
  }
  return inner + (in->op == OPTIC_OP_WHILE);
}

static int comp_loop_depth(fold_ctx *cx, optic_comp_id c, int depth) {
  if (depth > MAX_LOOP_SCAN_DEPTH) return -1;
  if (c >= cx->cap_loops) {
    int32_t cap = cx->m->n_comps > c ? cx->m->n_comps : c + 1;
    signed char *grown = realloc(cx->loops, (size_t)cap);
    if (grown == NULL) return -1; /* not folded: never an error */
    memset(grown + cx->cap_loops, -2, (size_t)(cap - cx->cap_loops));
    cx->loops = grown, cx->cap_loops = cap;
  }
  if (cx->loops[c] != -2) return cx->loops[c]; /* -1 stays -1 */
  int best = 0;
  const optic_computation *comp = &cx->m->comps[c];
  for (int32_t i = 0; i < comp->n_instrs && best >= 0; i++) {
    const optic_instr *x = graph_instr(cx->m, comp->instrs[i]);
    if (x == NULL || x->n_calls == 0) continue;
    int d = loop_depth(cx, x, depth);
    best = d < 0 ? -1 : d > best ? d : best;
  }
  cx->counts->work += comp->n_instrs;
  cx->loops[c] = (signed char)(best > 100 ? 100 : best);
  return cx->loops[c];
}

/* What evaluating in costs the reference evaluator, in the units of XLA's
 * counts: XLA's flops + transcendentals + bytes, except where the evaluator
 * visits more than XLA counts: a reduce-window applies its computation at
 * every window position of every output (padding included), and the naive
 * convolution visits every kernel tap of every output. */
static double evaluation_work(fold_ctx *cx, const optic_instr *in, const optic_cost *cost) {
  double work = cost->flops + cost->transcendentals + cost->bytes_accessed;
  /* XLA counts a while loop's body once; the evaluator may run it up to
   * FOLD_MAX_WHILE_ITERATIONS times, per level of loop nesting */
  int loops = loop_depth(cx, in, 0);
  if (loops < 0) return (double)INFINITY;
  for (int i = 0; i < loops; i++) work *= FOLD_MAX_WHILE_ITERATIONS;
  size_t n = 0;
  if (in->op == OPTIC_OP_REDUCE_WINDOW) {
    /* the evaluator runs a combiner with anything but elementwise ops (a
     * dot, say) as a whole computation per window position: not folded */
    const optic_computation *rc = &cx->m->comps[in->calls[0]];
    for (int32_t i = 0; i < rc->n_instrs; i++) {
      optic_opcode op = graph_instr(cx->m, rc->instrs[i])->op;
      if (op != OPTIC_OP_PARAMETER && op != OPTIC_OP_CONSTANT && op != OPTIC_OP_TUPLE &&
          !graph_opcode_is_elementwise(op))
        return (double)INFINITY;
    }
    optic_cost sub;
    if (optic_computation_cost(cx->m, in->calls[0], &sub) != OPTIC_OK) return (double)INFINITY;
    double calls = 1;
    for (int32_t d = 0; d < in->n_ints / 7; d++) calls *= (double)in->ints[7 * d];
    const optic_type *t = optic_type_is_tuple(&in->type) ? &in->type.elements[0] : &in->type;
    optic_shape_elements(&t->shape, &n);
    work += calls * (double)n * (1 + sub.flops + sub.transcendentals);
  } else if (in->op == OPTIC_OP_CONVOLUTION) {
    size_t k = 0;
    const optic_type *kt = optic_node_type(cx->m, in->operands[1]);
    optic_shape_elements(&in->type.shape, &n);
    optic_shape_elements(&kt->shape, &k);
    work += (double)n * (double)k; /* >= outputs x taps x input features */
  }
  return work;
}

/* Whether id can be folded under the settings, by what it is and costs.
 * Folding never grows the program: the result may be no larger than the
 * constant operands it frees (a broadcast of a scalar or an iota, whose
 * result outgrows its operands, stays as it is), except a one-element
 * result, which replaces an instruction by a value no longer than it.
 * *st reports only an out-of-memory while deciding. */
static bool foldable(fold_ctx *cx, optic_node_id id, optic_status *st) {
  const optic_instr *in = graph_instr(cx->m, id);
  if (in == NULL || !pass_is_live(cx->l, id)) return false;
  if (in->op == OPTIC_OP_CONSTANT || in->op == OPTIC_OP_PARAMETER) return false;
  if (pass_instr_has_effect(cx->m, in, cx->l->comp_effect)) return false;
  if (optic_type_is_tuple(&in->type) || in->type.dtype == OPTIC_TOKEN) return false; /* no literal holds a token */
  cx->counts->work += in->n_operands;
  for (int32_t k = 0; k < in->n_operands; k++) {
    if (graph_instr(cx->m, in->operands[k])->op != OPTIC_OP_CONSTANT) return false;
  }
  size_t out_bytes, out_elements;
  if (optic_shape_bytes(&in->type.shape, in->type.dtype, &out_bytes) != OPTIC_OK) return false;
  if (optic_shape_elements(&in->type.shape, &out_elements) != OPTIC_OK) return false;
  if (out_bytes > (uint64_t)cx->max_bytes) return false;
  if (out_elements > 1) {
    double freed;
    if ((*st = freed_operand_bytes(cx, in, &freed)) != OPTIC_OK || (double)out_bytes > freed) return false;
  }
  optic_cost cost;
  if (optic_node_cost(cx->m, id, &cost) != OPTIC_OK) return false;
  return evaluation_work(cx, in, &cost) <= (double)FOLD_WORK_FACTOR * (double)cx->max_bytes;
}

static void free_args(fold_ctx *cx, int32_t n) {
  for (int32_t k = 0; k < n; k++) {
    optic_literal_destroy(cx->args[k]);
    cx->args[k] = NULL;
  }
}

/* Evaluates id on its constant operands; *value is NULL when the evaluator
 * declines (any error but out of memory while preparing the operands). */
static optic_status evaluate(fold_ctx *cx, optic_node_id id, optic_literal_t **value) {
  *value = NULL;
  const optic_instr *in = graph_instr(cx->m, id);
  int32_t n = in->n_operands;
  if (n > cx->cap_args) {
    optic_literal_t **grown = realloc(cx->args, (size_t)n * sizeof *grown);
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
  (void)optic_evaluate_node(cx->m, id, (const optic_literal_t *const *)cx->args, n, &cx->eval, value);
  free_args(cx, n);
  return OPTIC_OK;
}

static optic_status fold_instr(fold_ctx *cx, optic_comp_id comp, optic_node_id id, bool *changed) {
  cx->counts->work++;
  optic_status st = OPTIC_OK;
  if (!foldable(cx, id, &st)) return st;
  optic_literal_t *value;
  st = evaluate(cx, id, &value);
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
    if (st == OPTIC_OK) {
      cx->counts->replaced++;
      drop_reads(cx, graph_instr(cx->m, id));
    }
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
    const optic_node_id *list = graph_instructions(m, comp, &n);
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
  free(cx.readers);
  free(cx.loops);
  return st;
}
