/* Fusion: groups of instructions that share one iteration space become one
 * `fusion` instruction calling a fused computation (XLA's
 * InstructionFusion, simplified). Three kinds:
 *   loop:   elementwise ops (unary, binary, compare, select, clamp, convert,
 *           copy) and the broadcasts, reshapes and transposes feeding them;
 *   input:  a reduce as the root, with its input's producers fused in;
 *   output: a dot or convolution with an elementwise epilogue (bias add,
 *           relu as maximum with a broadcast zero, scale).
 * Groups are found in one backward sweep over each computation's
 * instruction list (users before producers): a producer joins its users'
 * group when every one of its users is in that same group, it is not the
 * computation's root, it computes as many elements as each of those users
 * (so each of its elements is computed once: reshape, transpose and
 * size-preserving broadcast are bijective index maps; anything that would be
 * recomputed per output element stays outside), and the group is below the
 * size cap. Because a member's users are all in the group, only the root's
 * value leaves it, and no path can leave the group and re-enter it: fusing
 * never creates a cycle, and checking it is O(users) per instruction.
 * Operands from outside become parameters, except scalar constants (copied
 * in) and broadcasts/reshapes/transposes of a parameter or constant
 * (duplicated in when they also have other users). Single output only. */
#include <stdlib.h>
#include <string.h>

#include "graph/passes/fusion.h"

bool fusion_is_loop_op(optic_opcode op) {
  return graph_opcode_is_elementwise(op) || op == OPTIC_OP_COPY || op == OPTIC_OP_BROADCAST || op == OPTIC_OP_RESHAPE ||
         op == OPTIC_OP_BITCAST || op == OPTIC_OP_TRANSPOSE;
}

int64_t fusion_elements(const optic_type *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->shape.rank; i++) n *= t->shape.dims[i];
  return n;
}

/* The group every user of id belongs to, or -1 (no users, a user outside
 * any group, users in different groups, or id is the computation's root). */
static int32_t users_group(fusion_ctx *cx, const optic_instr *in, optic_node_id id) {
  if (in->n_users == 0 || cx->m->comps[cx->comp].root == id) return -1;
  int32_t g = -1;
  for (int32_t u = 0; u < in->n_users; u++) {
    optic_node_id user = in->users[u];
    cx->counts->work++;
    int32_t ug = user < cx->n_ids ? cx->group_of[user] : -1;
    if (ug < 0 || (g >= 0 && ug != g)) return -1;
    g = ug;
  }
  return g;
}

/* Whether id may join group g (all its users are in g). */
static bool can_join(fusion_ctx *cx, const optic_instr *in, const fusion_group *g) {
  if (g->size >= cx->max_size) return false;
  bool dot = in->op == OPTIC_OP_DOT || in->op == OPTIC_OP_CONVOLUTION;
  if (dot) {
    if (g->kind != OPTIC_FUSION_LOOP) return false; /* one dot/convolution per group, never under a reduce */
  } else if (!fusion_is_loop_op(in->op)) {
    return false;
  }
  int64_t n = fusion_elements(&in->type);
  for (int32_t u = 0; u < in->n_users; u++) {
    const optic_instr *user = &cx->m->instrs[in->users[u]];
    switch (user->op) {
      case OPTIC_OP_DOT:
      case OPTIC_OP_CONVOLUTION: return false; /* the dot's operands stay outside */
      case OPTIC_OP_REDUCE:
        /* the reduced input only; init values stay outside */
        for (int32_t k = 1; k < user->n_operands; k++) {
          if (&cx->m->instrs[user->operands[k]] == in) return false;
        }
        break;
      default:
        if (fusion_elements(&user->type) != n) return false;
        break;
    }
  }
  return true;
}

/* The backward sweep: assigns group_of for the computation's live
 * instructions and lays the members out group by group in list order. */
static optic_status find_groups(fusion_ctx *cx, const optic_node_id *ids, int32_t n) {
  optic_module_t *m = cx->m;
  for (int32_t i = 0; i < n; i++) cx->group_of[ids[i]] = -1;
  cx->n_groups = 0;
  for (int32_t i = n - 1; i >= 0; i--) {
    optic_node_id id = ids[i];
    const optic_instr *in = &m->instrs[id];
    cx->counts->work++;
    if (!pass_is_live(cx->l, id) || optic_type_is_tuple(&in->type)) continue; /* single array outputs only */
    int32_t g = users_group(cx, in, id);
    if (g >= 0 && can_join(cx, in, &cx->groups[g])) {
      cx->group_of[id] = g;
      cx->groups[g].size++;
      if (in->op == OPTIC_OP_DOT || in->op == OPTIC_OP_CONVOLUTION) cx->groups[g].kind = OPTIC_FUSION_OUTPUT;
      continue;
    }
    bool reduce = in->op == OPTIC_OP_REDUCE && in->n_operands == 2;
    if (!reduce && !fusion_is_loop_op(in->op)) continue;
    fusion_group *ng = &cx->groups[cx->n_groups];
    ng->root = id;
    ng->kind = reduce ? OPTIC_FUSION_INPUT : OPTIC_FUSION_LOOP;
    ng->size = 1;
    cx->group_of[id] = cx->n_groups++;
  }
  /* Counting sort by group, stable in list order. */
  int32_t at = 0;
  for (int32_t g = 0; g < cx->n_groups; g++) {
    cx->groups[g].first = at;
    at += cx->groups[g].size;
  }
  int32_t *fill = calloc((size_t)(cx->n_groups ? cx->n_groups : 1), sizeof *fill);
  if (fill == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  for (int32_t i = 0; i < n; i++) {
    int32_t g = cx->group_of[ids[i]];
    if (g >= 0) cx->members[cx->groups[g].first + fill[g]++] = ids[i];
  }
  free(fill);
  return OPTIC_OK;
}

/* Computations the pass leaves alone: fused computations (already one op)
 * and the scalar combiners of reduce, map, reduce-window and all-reduce. */
static optic_status mark_skipped(const optic_module_t *m, const pass_liveness *l, unsigned char **out) {
  unsigned char *skip = calloc((size_t)(m->n_comps ? m->n_comps : 1), 1);
  if (skip == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  for (int32_t q = 0; q < l->n_comps; q++) {
    const optic_computation *c = &m->comps[l->comps[q]];
    for (int32_t i = 0; i < c->n_instrs; i++) {
      const optic_instr *in = graph_instr(m, c->instrs[i]);
      if (in == NULL || in->n_calls == 0) continue;
      switch (in->op) {
        case OPTIC_OP_FUSION:
        case OPTIC_OP_REDUCE:
        case OPTIC_OP_MAP:
        case OPTIC_OP_REDUCE_WINDOW:
        case OPTIC_OP_ALL_REDUCE:
        case OPTIC_OP_REDUCE_SCATTER:
        case OPTIC_OP_SCATTER:
        case OPTIC_OP_SORT:
          for (int32_t k = 0; k < in->n_calls; k++) skip[in->calls[k]] = 1;
          break;
        default: break;
      }
    }
  }
  *out = skip;
  return OPTIC_OK;
}

/* 1 + the largest N of an existing "fused_computation.N". */
static int32_t first_free_name(const optic_module_t *m) {
  static const char prefix[] = "fused_computation.";
  int32_t next = 0;
  for (int32_t c = 0; c < m->n_comps; c++) {
    const char *name = m->comps[c].name;
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) continue;
    const char *d = name + sizeof prefix - 1;
    int64_t v = 0;
    int32_t digits = 0;
    for (; *d >= '0' && *d <= '9' && digits < 10; d++, digits++) v = v * 10 + (*d - '0');
    if (*d == '\0' && digits > 0 && v < INT32_MAX && v + 1 > next) next = (int32_t)v + 1;
  }
  return next;
}

static void ctx_free(fusion_ctx *cx) {
  free(cx->group_of);
  free(cx->entry);
  free(cx->mapped);
  free(cx->touched);
  free(cx->groups);
  free(cx->members);
  free(cx->leftovers);
  free(cx->left_mark);
  cx->group_of = NULL;
  cx->entry = cx->left_mark = NULL;
  cx->mapped = cx->touched = cx->members = cx->leftovers = NULL;
  cx->groups = NULL;
}

/* (Re)sizes the per-computation arrays for n instructions and ids < n_ids. */
static optic_status ctx_reserve(fusion_ctx *cx, int32_t n_ids, int32_t n) {
  ctx_free(cx);
  size_t ni = (size_t)(n_ids ? n_ids : 1), nn = (size_t)(n ? n : 1);
  cx->n_ids = cx->n_map = (int32_t)ni;
  cx->group_of = malloc(ni * sizeof *cx->group_of);
  cx->entry = calloc(ni, 1);
  cx->mapped = malloc(ni * sizeof *cx->mapped);
  cx->touched = malloc(ni * sizeof *cx->touched);
  cx->groups = malloc(nn * sizeof *cx->groups);
  cx->members = malloc(nn * sizeof *cx->members);
  cx->leftovers = malloc(ni * sizeof *cx->leftovers);
  cx->left_mark = calloc(ni, 1);
  cx->n_touched = cx->n_leftovers = 0;
  if (!cx->group_of || !cx->entry || !cx->mapped || !cx->touched || !cx->groups || !cx->members || !cx->leftovers ||
      !cx->left_mark) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  }
  return OPTIC_OK;
}

static int cmp_desc(const void *a, const void *b) {
  optic_node_id x = *(const optic_node_id *)a, y = *(const optic_node_id *)b;
  return (x < y) - (x > y);
}

/* Removes copied/duplicated outside operands that lost their last user,
 * users first (ids descend: a duplicated broadcast before its constant). */
static optic_status drop_leftovers(fusion_ctx *cx) {
  qsort(cx->leftovers, (size_t)cx->n_leftovers, sizeof *cx->leftovers, cmp_desc);
  optic_node_id prev = OPTIC_NO_NODE;
  for (int32_t i = 0; i < cx->n_leftovers; i++) {
    optic_node_id id = cx->leftovers[i];
    if (id == prev) continue;
    prev = id;
    const optic_instr *in = graph_instr(cx->m, id);
    if (in == NULL || in->n_users > 0 || in->op == OPTIC_OP_PARAMETER || cx->m->comps[in->comp].root == id) continue;
    optic_status st = graph_node_remove(cx->m, id);
    if (st != OPTIC_OK) return st;
    cx->counts->removed++;
  }
  cx->n_leftovers = 0;
  return OPTIC_OK;
}

static optic_status fuse_computation(fusion_ctx *cx, bool *changed) {
  optic_module_t *m = cx->m;
  int32_t n;
  const optic_node_id *list = graph_instructions(m, cx->comp, &n);
  optic_node_id *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
  if (ids == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  memcpy(ids, list, (size_t)n * sizeof *ids);
  optic_status st = ctx_reserve(cx, m->n_instrs, n);
  if (st == OPTIC_OK) st = find_groups(cx, ids, n);
  bool any = false;
  /* Groups were numbered from the end of the list; build them in that
   * order (a member leaving its operands' user lists costs O(1) in any
   * order: graph/module.c swap-removes). */
  for (int32_t g = 0; g < cx->n_groups && st == OPTIC_OK; g++) {
    bool fused = false;
    st = fusion_build_group(cx, &cx->groups[g], &fused);
    any |= fused;
  }
  if (st == OPTIC_OK) st = drop_leftovers(cx);
  if (any) {
    *changed = true;
    optic_status st2 = pass_restore_order(m, cx->comp);
    if (st == OPTIC_OK) st = st2;
  }
  free(ids);
  return st;
}

optic_status pass_fusion(optic_module_t *m, const pass_liveness *l, const optic_optimize_options *o,
                         pass_counts *counts, bool *changed) {
  fusion_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.m = m;
  cx.l = l;
  cx.counts = counts;
  cx.max_size = o->max_fusion_size > 0 ? o->max_fusion_size : FUSION_DEFAULT_MAX_SIZE;
  cx.next_name = first_free_name(m);
  unsigned char *skip = NULL;
  optic_status st = mark_skipped(m, l, &skip);
  /* l->comps is fixed for this run; fused computations added meanwhile are
   * not in it. */
  for (int32_t q = 0; q < l->n_comps && st == OPTIC_OK; q++) {
    if (skip[l->comps[q]]) continue;
    cx.comp = l->comps[q];
    st = fuse_computation(&cx, changed);
  }
  ctx_free(&cx);
  free(skip);
  return st;
}
