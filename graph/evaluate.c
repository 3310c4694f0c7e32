/* The reference evaluator's interpreter: plans a computation (the root's
 * dependencies, operands first), runs its instructions one by one on
 * literals, frees intermediates after their last use, and dispatches each
 * opcode to its family's file. Never edits the module; never recurses
 * without bound (a computation calling itself, directly or not, is an error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"
#include "core/unconst.h"

#define DEFAULT_MAX_WHILE_ITERATIONS 1000000

optic_evaluate_options optic_evaluate_options_default(void) {
  optic_evaluate_options o = {.size = sizeof o, .max_while_iterations = DEFAULT_MAX_WHILE_ITERATIONS};
  return o;
}

static optic_status ctx_init(eval_ctx *ctx, const optic_module_t *m, const optic_evaluate_options *opts) {
  memset(ctx, 0, sizeof *ctx);
  ctx->m = m;
  ctx->opts = optic_evaluate_options_default();
  if (opts != NULL) {
    if (opts->size < sizeof(size_t) || opts->size > 4096) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "evaluate: options.size is %zu; set it to sizeof(optic_evaluate_options)", opts->size);
    }
    memcpy(&ctx->opts, opts, opts->size < sizeof ctx->opts ? opts->size : sizeof ctx->opts);
    ctx->opts.size = sizeof ctx->opts;
    if (ctx->opts.max_while_iterations < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: max_while_iterations is %lld; it must be >= 0",
                        (long long)ctx->opts.max_while_iterations);
    }
  }
  return OPTIC_OK;
}

/* The per-module tables, allocated on first need, so evaluating one
 * instruction (constant folding) costs nothing per module instruction. */
static optic_status ctx_tables(eval_ctx *ctx) {
  if (ctx->slot_of != NULL) return OPTIC_OK;
  const optic_module_t *m = ctx->m;
  int32_t *slot_of = malloc((size_t)(m->n_instrs > 0 ? m->n_instrs : 1) * sizeof *slot_of);
  ctx->plans = calloc((size_t)(m->n_comps > 0 ? m->n_comps : 1), sizeof *ctx->plans);
  ctx->active = calloc((size_t)(m->n_comps > 0 ? m->n_comps : 1), sizeof *ctx->active);
  if (slot_of == NULL || ctx->plans == NULL || ctx->active == NULL) {
    free(slot_of), free(ctx->plans), free(ctx->active);
    ctx->plans = NULL, ctx->active = NULL;
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory for a module of %d instructions",
                      (int)m->n_instrs);
  }
  for (int32_t i = 0; i < m->n_instrs; i++) slot_of[i] = -1;
  ctx->slot_of = slot_of;
  return OPTIC_OK;
}

static void ctx_free(eval_ctx *ctx) {
  for (int32_t c = 0; ctx->plans && c < ctx->m->n_comps; c++) {
    free(ctx->plans[c].order);
    free(ctx->plans[c].last_use);
  }
  free(ctx->slot_of);
  free(ctx->plans);
  free(ctx->active);
}

/* The fast path of a scalar combiner: root = binary(param 0, param 1) or
 * binary(param 1, param 0) in a computation of exactly two parameters. */
static void detect_fast(const optic_module_t *m, optic_comp_id c, eval_plan *p) {
  const optic_computation *comp = &m->comps[c];
  const optic_instr *root = graph_instr(m, comp->root);
  if (comp->n_params != 2 || root == NULL || !eval_is_binary(root->op)) return;
  const optic_instr *a = graph_instr(m, root->operands[0]), *b = graph_instr(m, root->operands[1]);
  if (a->op != OPTIC_OP_PARAMETER || b->op != OPTIC_OP_PARAMETER || a->ints[0] == b->ints[0]) return;
  p->fast = true;
  p->fast_op = root->op;
  p->fast_swapped = a->ints[0] == 1;
}

/* The next instruction of comp from *at on that has an effect and is not
 * yet planned, or OPTIC_NO_NODE. */
static optic_node_id next_unseen_effect(const eval_ctx *ctx, const optic_computation *comp, int32_t *at) {
  while (*at < comp->n_instrs) {
    optic_node_id id = comp->instrs[(*at)++];
    const optic_instr *in = graph_instr(ctx->m, id);
    if (in && graph_opcode_has_effect(in->op) && ctx->slot_of[id] == -1) return id;
  }
  return OPTIC_NO_NODE;
}

optic_status eval_get_plan(eval_ctx *ctx, optic_comp_id c, const eval_plan **out) {
  optic_status st = ctx_tables(ctx);
  if (st != OPTIC_OK) return st;
  eval_plan *p = &ctx->plans[c];
  *out = p;
  if (p->built) return OPTIC_OK;
  const optic_module_t *m = ctx->m;
  const optic_computation *comp = &m->comps[c];
  if (comp->root == OPTIC_NO_NODE || graph_instr(m, comp->root) == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: computation '%s' has no root", comp->name);
  }
  int32_t cap = comp->n_instrs;
  p->order = malloc((size_t)cap * sizeof *p->order);
  p->last_use = malloc((size_t)cap * sizeof *p->last_use);
  struct frame {
    optic_node_id id;
    int32_t next;
  } *stack = malloc((size_t)cap * sizeof *stack);
  if (p->order == NULL || p->last_use == NULL || stack == NULL) {
    free(stack), free(p->order), free(p->last_use);
    p->order = NULL, p->last_use = NULL;
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory planning '%s'", comp->name);
  }
  /* Iterative DFS post-order: slot_of is -1 (unseen), -2 (on the stack) or
   * the position. A node met again while on the stack is a cycle. */
  int32_t depth = 0, n = 0, next_start = 0, root_slot = -1;
  stack[depth++] = (struct frame){comp->root, 0};
  ctx->slot_of[comp->root] = -2;
  while (st == OPTIC_OK) {
    if (depth == 0) { /* after the root, instructions with effects nothing reaches (an unused outfeed) */
      if (root_slot < 0) root_slot = n - 1;
      optic_node_id e = next_unseen_effect(ctx, comp, &next_start);
      if (e == OPTIC_NO_NODE) break;
      ctx->slot_of[e] = -2;
      stack[depth++] = (struct frame){e, 0};
      continue;
    }
    struct frame *f = &stack[depth - 1];
    const optic_instr *in = &m->instrs[f->id];
    if (f->next < in->n_operands) {
      optic_node_id child = in->operands[f->next++];
      if (ctx->slot_of[child] == -1) {
        if (n + depth >= cap) {
          st = optic_fail(OPTIC_ERR_INTERNAL, "evaluate: '%s' has more dependencies than instructions", comp->name);
        } else {
          ctx->slot_of[child] = -2;
          stack[depth++] = (struct frame){child, 0};
        }
      } else if (ctx->slot_of[child] == -2) {
        st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: '%s' has a cycle through %s", comp->name,
                        m->instrs[child].name);
      }
      continue;
    }
    ctx->slot_of[f->id] = n;
    p->order[n++] = f->id;
    depth--;
  }
  free(stack);
  if (st != OPTIC_OK) {
    /* Forget the partial plan so slot_of holds no stale marks. */
    for (int32_t i = 0; i < comp->n_instrs; i++) ctx->slot_of[comp->instrs[i]] = -1;
    free(p->order), free(p->last_use);
    p->order = NULL, p->last_use = NULL;
    return st;
  }
  for (int32_t i = 0; i < n; i++) p->last_use[i] = -1;
  for (int32_t i = 0; i < n; i++) {
    const optic_instr *in = &m->instrs[p->order[i]];
    for (int32_t k = 0; k < in->n_operands; k++) p->last_use[ctx->slot_of[in->operands[k]]] = i;
  }
  p->last_use[root_slot] = n;
  p->root_slot = root_slot;
  p->n = n;
  detect_fast(m, c, p);
  p->built = true;
  return OPTIC_OK;
}

/* Evaluates one non-parameter instruction on its operands' values. */
static optic_status eval_instr(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                               optic_literal_t **out) {
  if (graph_opcode_is_elementwise(in->op)) return eval_elementwise(ctx, in, ops, out);
  switch (in->op) {
    case OPTIC_OP_PARAMETER:
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "parameter: has no value outside its computation");
    case OPTIC_OP_CONSTANT: {
      optic_status st = lit_new(&in->type, out);
      if (st == OPTIC_OK && in->data_bytes) memcpy((*out)->data, in->data, in->data_bytes);
      return st;
    }
    case OPTIC_OP_COPY: return eval_elementwise(ctx, in, ops, out);
    case OPTIC_OP_IOTA:
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_TRANSPOSE:
    case OPTIC_OP_SLICE:
    case OPTIC_OP_CONCATENATE:
    case OPTIC_OP_PAD:
    case OPTIC_OP_REVERSE:
    case OPTIC_OP_BITCAST: return eval_layout(ctx, in, ops, out);
    case OPTIC_OP_DYNAMIC_SLICE:
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE:
    case OPTIC_OP_OPT_BARRIER:
    case OPTIC_OP_GATHER:
    case OPTIC_OP_TOPK:
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: return eval_dynamic(ctx, in, ops, out);
    case OPTIC_OP_SCATTER: return eval_scatter(ctx, in, ops, out);
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE:
    case OPTIC_OP_CUSTOM_CALL:
    case OPTIC_OP_AFTER_ALL:
    case OPTIC_OP_REPLICA_ID:
    case OPTIC_OP_PARTITION_ID:
    case OPTIC_OP_INFEED:
    case OPTIC_OP_OUTFEED:
    case OPTIC_OP_RNG_BIT_GENERATOR: return eval_dynamic(ctx, in, ops, out);
    case OPTIC_OP_SORT: return eval_sort(ctx, in, ops, out);
    case OPTIC_OP_REDUCE: return eval_reduce(ctx, in, ops, out);
    case OPTIC_OP_REDUCE_WINDOW: return eval_reduce_window(ctx, in, ops, out);
    case OPTIC_OP_MAP: return eval_map(ctx, in, ops, out);
    case OPTIC_OP_DOT: return eval_dot(ctx, in, ops, out);
    case OPTIC_OP_CONVOLUTION: return eval_convolution(ctx, in, ops, out);
    case OPTIC_OP_TUPLE:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_CALL:
    case OPTIC_OP_WHILE:
    case OPTIC_OP_CONDITIONAL:
    case OPTIC_OP_FUSION:
    case OPTIC_OP_ALL_REDUCE: return eval_control(ctx, in, ops, out);
    default: return optic_fail(OPTIC_ERR_UNSUPPORTED, "evaluate: opcode %d is not known", (int)in->op);
  }
}

/* Prefixes the innermost failure's message with the instruction (once: outer
 * levels keep it, so the message names where it really failed). */
static optic_status name_failure(eval_ctx *ctx, const optic_instr *in, optic_status st) {
  if (ctx->named) return st;
  ctx->named = true;
  char inner[512];
  snprintf(inner, sizeof inner, "%s", optic_last_error());
  return optic_fail(st, "evaluate: %s in computation '%s': %s", in->name, ctx->m->comps[in->comp].name, inner);
}

typedef struct eval_value {
  optic_literal_t *lit;
  bool owned;
} eval_value;

#define STACK_OPERANDS 16

optic_status eval_computation(eval_ctx *ctx, optic_comp_id c, const optic_literal_t *const *args, int32_t nargs,
                              optic_literal_t **out) {
  *out = NULL;
  const optic_module_t *m = ctx->m;
  optic_status st = ctx_tables(ctx);
  if (st != OPTIC_OK) return st;
  if (ctx->active[c]) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "evaluate: computation '%s' calls itself (directly or through others)", m->comps[c].name);
  }
  const eval_plan *p;
  if ((st = eval_get_plan(ctx, c, &p)) != OPTIC_OK) return st;
  eval_value *vals = calloc((size_t)p->n, sizeof *vals);
  if (vals == NULL)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory running '%s'", m->comps[c].name);
  ctx->active[c] = true;
  const optic_literal_t *stack_ops[STACK_OPERANDS];
  for (int32_t i = 0; i < p->n && st == OPTIC_OK; i++) {
    const optic_instr *in = &m->instrs[p->order[i]];
    if (in->op == OPTIC_OP_PARAMETER) {
      int64_t number = in->ints[0];
      if (number >= nargs) {
        st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: computation '%s' reads parameter %lld of %d arguments",
                        m->comps[c].name, (long long)number, (int)nargs);
        break;
      }
      vals[i].lit = OPTIC_UNCONST(optic_literal_t *, args[number]); /* borrowed: never freed or written here */
      continue;
    }
    const optic_literal_t **ops = stack_ops;
    if (in->n_operands > STACK_OPERANDS) {
      ops = malloc((size_t)in->n_operands * sizeof *ops);
      if (ops == NULL) {
        st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory");
        break;
      }
    }
    for (int32_t k = 0; k < in->n_operands; k++) ops[k] = vals[ctx->slot_of[in->operands[k]]].lit;
    st = eval_instr(ctx, in, ops, &vals[i].lit);
    if (ops != stack_ops) free(ops);
    if (st != OPTIC_OK) {
      st = name_failure(ctx, in, st);
      break;
    }
    vals[i].owned = true;
    for (int32_t k = 0; k < in->n_operands; k++) {
      int32_t s = ctx->slot_of[in->operands[k]];
      if (p->last_use[s] == i && vals[s].owned) {
        lit_free(vals[s].lit);
        vals[s].lit = NULL;
        vals[s].owned = false;
      }
    }
  }
  if (st == OPTIC_OK) {
    eval_value *root = &vals[p->root_slot];
    if (root->owned) {
      *out = root->lit;
      root->owned = false;
    } else {
      st = lit_clone(root->lit, out);
    }
  }
  for (int32_t i = 0; i < p->n; i++) {
    if (vals[i].owned) lit_free(vals[i].lit);
  }
  free(vals);
  ctx->active[c] = false;
  return st;
}

/* ------------------------------------------------------------ public API */

static optic_status check_values(const optic_module_t *m, const char *what, const char *owner,
                                 const optic_literal_t *const *vals, int32_t n, const optic_node_id *ids) {
  for (int32_t i = 0; i < n; i++) {
    if (vals[i] == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: %s %d of %s is NULL", what, (int)i, owner);
    const optic_type *want = &m->instrs[ids[i]].type;
    if (!optic_type_equal(&vals[i]->type, want)) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "evaluate: %s %d of %s has type %s but %s is expected", what, (int)i,
                        owner, graph_type_str(&vals[i]->type, b1, sizeof b1), graph_type_str(want, b2, sizeof b2));
    }
  }
  return OPTIC_OK;
}

optic_status optic_evaluate(const optic_module_t *m, optic_comp_id comp, const optic_literal_t *const *args,
                            int32_t nargs, const optic_evaluate_options *options, optic_literal_t **result) {
  if (result) *result = NULL;
  optic_status st = graph_check_comp(m, comp, "evaluate");
  if (st != OPTIC_OK) return st;
  if (result == NULL || nargs < 0 || (nargs > 0 && args == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: NULL result or arguments");
  }
  const optic_computation *c = &m->comps[comp];
  if (c->root == OPTIC_NO_NODE) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: computation '%s' has no root", c->name);
  }
  if (nargs != c->n_params) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: computation '%s' takes %d arguments, %d given", c->name,
                      (int)c->n_params, (int)nargs);
  }
  for (int32_t i = 0; i < c->n_params; i++) {
    if (c->params[i] == OPTIC_NO_NODE) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate: computation '%s' has no parameter %d", c->name, (int)i);
    }
  }
  if ((st = check_values(m, "argument", c->name, args, nargs, c->params)) != OPTIC_OK) return st;
  eval_ctx ctx;
  if ((st = ctx_init(&ctx, m, options)) != OPTIC_OK) return st;
  st = eval_computation(&ctx, comp, args, nargs, result);
  ctx_free(&ctx);
  return st;
}

optic_status optic_evaluate_node(const optic_module_t *m, optic_node_id id, const optic_literal_t *const *operands,
                                 int32_t n, const optic_evaluate_options *options, optic_literal_t **result) {
  if (result) *result = NULL;
  if (m == NULL || result == NULL || n < 0 || (n > 0 && operands == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate_node: NULL argument");
  }
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate_node: instruction %d does not exist", (int)id);
  if (n != in->n_operands) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "evaluate_node: %s has %d operands, %d values given", in->name,
                      (int)in->n_operands, (int)n);
  }
  optic_status st = check_values(m, "operand", in->name, operands, n, in->operands);
  if (st != OPTIC_OK) return st;
  eval_ctx ctx;
  if ((st = ctx_init(&ctx, m, options)) != OPTIC_OK) return st;
  st = eval_instr(&ctx, in, operands, result);
  if (st != OPTIC_OK) st = name_failure(&ctx, in, st);
  ctx_free(&ctx);
  return st;
}
