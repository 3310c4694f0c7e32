/* One HLO instruction from its syntax tree and resolved operands, through
 * the public builder of its opcode: checks operand counts and the attributes
 * the opcode needs, converts them to the builders' arguments, and prefixes
 * builder errors with the instruction's position and name. Also folds the
 * entry's layout transposes into a convolution's dim labels (the operation
 * can read any dim order), so such modules cost what XLA says. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hlo_parse.h"
#include "graph/internal.h"
#include "kernels/conv.h"

typedef struct op_ctx {
  hlo_builder *B;
  hlo_comp *c;
  hlo_instr *in;
  const optic_node_id *ops;
} op_ctx;

static optic_status fail_in(const op_ctx *x, optic_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static optic_status fail_in(const op_ctx *x, optic_status code, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hlo_fail_at(code, x->in->pos.line, x->in->pos.col, "%s '%s': %s", optic_opcode_name(x->in->op), x->in->name,
                     msg);
}

/* A builder's error, with the instruction in front. */
static optic_status wrap(const op_ctx *x, optic_status st) {
  if (st == OPTIC_OK) return st;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "instruction '%s': ", x->in->name);
  return hlo_fail_wrap(st, x->in->pos.line, x->in->pos.col, prefix);
}

static optic_status count_is(const op_ctx *x, int32_t lo, int32_t hi) {
  int32_t n = x->in->n_operands;
  if (n >= lo && n <= hi) return OPTIC_OK;
  if (lo == hi)
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "takes %d operand%s, %d given", (int)lo, lo == 1 ? "" : "s", (int)n);
  return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "takes %d to %d operands, %d given", (int)lo, (int)hi, (int)n);
}

static optic_status need(const op_ctx *x, hlo_attr_kind k, const hlo_attr **a) {
  *a = hlo_find_attr(x->in, k);
  if (*a != NULL) return OPTIC_OK;
  return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "attribute '%s' is missing", hlo_attr_name(k));
}

static optic_status comp_of(const op_ctx *x, const hlo_attr *a, int32_t i, optic_comp_id *out) {
  int32_t ci = hlo_map_get(&x->B->map, a->names[i], HLO_SCOPE_COMPS); /* resolved by index_names */
  *out = x->B->P->comps[ci]->id;
  return OPTIC_OK;
}

static optic_status need_comp(const op_ctx *x, hlo_attr_kind k, optic_comp_id *out) {
  const hlo_attr *a;
  optic_status st = need(x, k, &a);
  return st == OPTIC_OK ? comp_of(x, a, 0, out) : st;
}

static int32_t rank_of(const op_ctx *x, int32_t k) {
  const optic_type *t = optic_node_type(x->B->m, x->ops[k]);
  return optic_type_is_tuple(t) ? -1 : t->shape.rank;
}

static optic_status array_shape(const op_ctx *x, const optic_shape **s) {
  if (x->in->shape.dtype == OPTIC_DTYPE_INVALID)
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "needs an array shape, not a tuple");
  *s = &x->in->shape.shape;
  return OPTIC_OK;
}

/* A list attribute with exactly n entries (n = the operand's rank, usually). */
static optic_status list_of(const op_ctx *x, hlo_attr_kind k, int32_t per, int32_t n, const hlo_attr **a) {
  optic_status st = need(x, k, a);
  if (st != OPTIC_OK) return st;
  if (n >= 0 && (*a)->n_ints != per * n) {
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "%s has %d entries for an operand of rank %d", hlo_attr_name(k),
                   (int)((*a)->n_ints / per), (int)n);
  }
  return OPTIC_OK;
}

static optic_status build_compare(const op_ctx *x, optic_node_id *out) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const hlo_attr *a;
  optic_status st = count_is(x, 2, 2);
  if (st == OPTIC_OK) st = need(x, HLO_A_DIRECTION, &a);
  if (st != OPTIC_OK) return st;
  for (int d = 0; d < 6; d++) {
    if (strcmp(a->word, dirs[d]) == 0) {
      return wrap(x, optic_graph_compare(x->B->m, x->c->id, (optic_compare_dir)d, x->ops[0], x->ops[1],
                                         x->in->final_name, out));
    }
  }
  return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "unknown direction '%s' (EQ, NE, LT, LE, GT, GE)", a->word);
}

/* The element type written on a contraction (its preferred_element_type);
 * INVALID for a tuple, so the builder's own rule and message apply. */
static optic_dtype written_dtype(const op_ctx *x) { return x->in->shape.dtype; }

static optic_status build_dot(const op_ctx *x, optic_node_id *out) {
  optic_status st = count_is(x, 2, 2);
  if (st != OPTIC_OK) return st;
  optic_dot_dims d;
  memset(&d, 0, sizeof d);
  const hlo_attr_kind kinds[4] = {HLO_A_LHS_BATCH, HLO_A_RHS_BATCH, HLO_A_LHS_CONTRACTING, HLO_A_RHS_CONTRACTING};
  int32_t *counts[4] = {&d.lhs_batch_count, &d.rhs_batch_count, &d.lhs_contracting_count, &d.rhs_contracting_count};
  int32_t *lists[4] = {d.lhs_batch, d.rhs_batch, d.lhs_contracting, d.rhs_contracting};
  for (int k = 0; k < 4; k++) {
    const hlo_attr *a = hlo_find_attr(x->in, kinds[k]);
    if (a == NULL) continue;
    if (a->n_ints > OPTIC_MAX_RANK)
      return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "%s lists more than %d dims", hlo_attr_name(kinds[k]),
                     OPTIC_MAX_RANK);
    for (int32_t i = 0; i < a->n_ints; i++) {
      if (a->ints[i] < 0 || a->ints[i] >= OPTIC_MAX_RANK) {
        return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "%s has dimension %lld", hlo_attr_name(kinds[k]),
                       (long long)a->ints[i]);
      }
      lists[k][i] = (int32_t)a->ints[i];
    }
    *counts[k] = a->n_ints;
  }
  return wrap(x,
              graph_dot_typed(x->B->m, x->c->id, x->ops[0], x->ops[1], &d, written_dtype(x), x->in->final_name, out));
}

/* Rewrites part `part` (0 lhs, 1 rhs, 2 out) of dim labels so it names the
 * physical dims of shape s; false when the part does not fit s's rank. */
static bool relabel(char *labels, int part, const hlo_shape *s) {
  char *us = strchr(labels, '_'), *arrow = strstr(labels, "->");
  if (us == NULL || arrow == NULL || arrow < us) return false;
  char *p = part == 0 ? labels : part == 1 ? us + 1 : arrow + 2;
  size_t n = part == 0 ? (size_t)(us - labels) : part == 1 ? (size_t)(arrow - us - 1) : strlen(arrow + 2);
  if ((int32_t)n != s->shape.rank) return false;
  int32_t pos[OPTIC_MAX_RANK];
  char old[OPTIC_MAX_RANK];
  hlo_physical_positions(s, pos);
  memcpy(old, p, n);
  for (size_t i = 0; i < n; i++) p[pos[i]] = old[i];
  return true;
}

static optic_status build_convolution(op_ctx *x, optic_node_id *out) {
  const hlo_attr *labels_attr, *fg = hlo_find_attr(x->in, HLO_A_FEATURE_GROUP_COUNT),
                               *bg = hlo_find_attr(x->in, HLO_A_BATCH_GROUP_COUNT),
                               *w = hlo_find_attr(x->in, HLO_A_WINDOW);
  optic_status st = count_is(x, 2, 2);
  if (st == OPTIC_OK) st = need(x, HLO_A_DIM_LABELS, &labels_attr);
  if (st != OPTIC_OK) return st;
  optic_conv_dnums dn;
  if ((st = optic_conv_parse_dim_labels(labels_attr->word, &dn)) != OPTIC_OK) return wrap(x, st);
  int32_t nw = w ? w->n_window : 0;
  if (nw != dn.nspatial) {
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "window has %d dimensions but dim_labels '%s' have %d spatial ones",
                   (int)nw, labels_attr->word, (int)dn.nspatial);
  }
  char labels[64];
  if (strlen(labels_attr->word) >= sizeof labels)
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "dim_labels are too long");
  strcpy(labels, labels_attr->word);
  optic_node_id lhs = x->ops[0], rhs = x->ops[1];
  if (x->c == x->B->P->comps[x->B->entry]) {
    /* Read an entry parameter in its physical order instead of through its layout transpose. */
    for (int k = 0; k < 2; k++) {
      const hlo_instr *o = x->c->instrs[x->in->operand_index[k]];
      if (o->phys_node != OPTIC_NO_NODE && relabel(labels, k, o->boundary)) *(k ? &rhs : &lhs) = o->phys_node;
    }
    /* Write the entry root straight in the caller's layout. */
    const hlo_shape *b = x->in->boundary;
    if (x->c->instrs[x->c->root] == x->in && x->in->n_users == 0 && b && b->dtype != OPTIC_DTYPE_INVALID &&
        !hlo_layout_is_default(b) && relabel(labels, 2, b)) {
      x->in->node_is_physical = true;
    }
  }
  return wrap(x,
              graph_convolution_typed(x->B->m, x->c->id, lhs, rhs, labels, w ? w->window : NULL, fg ? fg->ints[0] : 1,
                                      bg ? bg->ints[0] : 1, written_dtype(x), x->in->final_name, out));
}

static optic_status build_conditional(const op_ctx *x, optic_node_id *out) {
  const hlo_attr *branches = hlo_find_attr(x->in, HLO_A_BRANCH_COMPUTATIONS), *t = NULL, *f = NULL;
  optic_comp_id ids[OPTIC_MAX_CALLS];
  int32_t n;
  optic_status st;
  if (branches) {
    n = branches->n_names;
    if (n < 1 || n > OPTIC_MAX_CALLS) {
      return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "has %d branches; 1 to %d are supported", (int)n, OPTIC_MAX_CALLS);
    }
    for (int32_t i = 0; i < n; i++) comp_of(x, branches, i, &ids[i]);
  } else {
    if ((st = need(x, HLO_A_TRUE_COMPUTATION, &t)) != OPTIC_OK ||
        (st = need(x, HLO_A_FALSE_COMPUTATION, &f)) != OPTIC_OK) {
      return st;
    }
    n = 2;
    comp_of(x, t, 0, &ids[0]);
    comp_of(x, f, 0, &ids[1]);
  }
  if ((st = count_is(x, n + 1, n + 1)) != OPTIC_OK) return st;
  return wrap(x, optic_graph_conditional(x->B->m, x->c->id, x->ops[0], x->ops + 1, ids, n, x->in->final_name, out));
}

static optic_status build_fusion(const op_ctx *x, optic_node_id *out) {
  const hlo_attr *kind;
  optic_comp_id fused;
  optic_status st = need(x, HLO_A_KIND, &kind);
  if (st == OPTIC_OK) st = need_comp(x, HLO_A_CALLS, &fused);
  if (st != OPTIC_OK) return st;
  static const char *const kinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};
  for (int k = 0; k < 4; k++) {
    if (strcmp(kind->word, kinds[k]) == 0) {
      return wrap(x, optic_graph_fusion(x->B->m, x->c->id, (optic_fusion_kind)k, x->ops, x->in->n_operands, fused,
                                        x->in->final_name, out));
    }
  }
  return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "unknown fusion kind '%s' (kLoop, kInput, kOutput, kCustom)",
                 kind->word);
}

static optic_status build_all_reduce(const op_ctx *x, optic_node_id *out) {
  optic_comp_id f;
  optic_status st = count_is(x, 1, 64);
  if (st == OPTIC_OK) st = need_comp(x, HLO_A_TO_APPLY, &f);
  if (st != OPTIC_OK) return st;
  const hlo_attr *g = hlo_find_attr(x->in, HLO_A_REPLICA_GROUPS);
  int32_t n_ids = g ? g->n_ints : 0;
  int32_t *ids = n_ids ? hlo_arena_alloc(&x->B->P->A, (size_t)n_ids * sizeof *ids) : NULL;
  if (n_ids && ids == NULL) return fail_in(x, OPTIC_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; i < n_ids; i++) {
    if (g->ints[i] < 0 || g->ints[i] >= 65536) {
      return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "replica id %lld is outside [0, 65536)", (long long)g->ints[i]);
    }
    ids[i] = (int32_t)g->ints[i];
  }
  return wrap(x, optic_graph_all_reduce(x->B->m, x->c->id, x->ops, x->in->n_operands, f, ids, g ? g->sizes : NULL,
                                        g ? g->n_sizes : 0, x->in->final_name, out));
}

/* reduce and reduce-window: inputs then as many init values. */
static optic_status build_reduction(const op_ctx *x, optic_node_id *out) {
  int32_t n = x->in->n_operands / 2;
  optic_comp_id f;
  const hlo_attr *a;
  if (x->in->n_operands % 2 || n < 1 || n > 64) {
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "takes inputs and as many init values (2 to 128 operands), %d given",
                   (int)x->in->n_operands);
  }
  optic_status st = need_comp(x, HLO_A_TO_APPLY, &f);
  if (st != OPTIC_OK) return st;
  optic_module_t *m = x->B->m;
  if (x->in->op == OPTIC_OP_REDUCE) {
    if ((st = need(x, HLO_A_DIMENSIONS, &a)) != OPTIC_OK) return st;
    return wrap(x,
                optic_graph_reduce(m, x->c->id, x->ops, x->ops + n, n, a->ints, a->n_ints, f, x->in->final_name, out));
  }
  int32_t rank = rank_of(x, 0);
  a = hlo_find_attr(x->in, HLO_A_WINDOW);
  if (rank > 0 && a == NULL) return need(x, HLO_A_WINDOW, &a);
  if (rank >= 0 && (a ? a->n_window : 0) != rank) {
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "window has %d dimensions for inputs of rank %d",
                   (int)(a ? a->n_window : 0), (int)rank);
  }
  return wrap(x, optic_graph_reduce_window(m, x->c->id, x->ops, x->ops + n, n, a ? a->window : NULL, f,
                                           x->in->final_name, out));
}

/* An optional dims list into a fixed array (absent: empty). */
static optic_status dims_into(const op_ctx *x, hlo_attr_kind k, int64_t *out, int32_t *n) {
  const hlo_attr *a = hlo_find_attr(x->in, k);
  *n = a ? a->n_ints : 0;
  if (*n > OPTIC_MAX_RANK)
    return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "%s lists more than %d dims", hlo_attr_name(k), OPTIC_MAX_RANK);
  for (int32_t i = 0; i < *n; i++) out[i] = a->ints[i];
  return OPTIC_OK;
}

/* XLA's batching dims (newer gather/scatter): only the empty form is supported. */
static optic_status no_batching(const op_ctx *x, hlo_attr_kind a, hlo_attr_kind b) {
  const hlo_attr *p = hlo_find_attr(x->in, a), *q = hlo_find_attr(x->in, b);
  if ((p && p->n_ints) || (q && q->n_ints)) {
    return fail_in(x, OPTIC_ERR_UNSUPPORTED, "%s/%s (batching dims) are not supported", hlo_attr_name(a),
                   hlo_attr_name(b));
  }
  return OPTIC_OK;
}

static optic_status build_gather(const op_ctx *x, optic_node_id *out) {
  optic_gather_dims g;
  memset(&g, 0, sizeof g);
  const hlo_attr *ivd, *ss;
  int32_t n_ss;
  int32_t n_sib = 0;
  optic_status st = count_is(x, 2, 2);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_OPERAND_BATCHING_DIMS, g.operand_batching_dims, &g.n_batching);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_START_INDICES_BATCHING_DIMS, g.start_indices_batching_dims, &n_sib);
  if (st == OPTIC_OK && n_sib != g.n_batching) {
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "%d operand_batching_dims but %d start_indices_batching_dims",
                   (int)g.n_batching, (int)n_sib);
  }
  if (st == OPTIC_OK) st = need(x, HLO_A_INDEX_VECTOR_DIM, &ivd);
  if (st == OPTIC_OK) st = need(x, HLO_A_SLICE_SIZES, &ss);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_OFFSET_DIMS, g.offset_dims, &g.n_offset_dims);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_COLLAPSED_SLICE_DIMS, g.collapsed_slice_dims, &g.n_collapsed);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_START_INDEX_MAP, g.start_index_map, &g.n_start_index_map);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_SLICE_SIZES, g.slice_sizes, &n_ss);
  if (st != OPTIC_OK) return st;
  if (n_ss != rank_of(x, 0)) {
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "slice_sizes has %d entries for an operand of rank %d", (int)n_ss,
                   (int)rank_of(x, 0));
  }
  g.index_vector_dim = ivd->ints[0];
  return wrap(x, optic_graph_gather(x->B->m, x->c->id, x->ops[0], x->ops[1], &g, x->in->final_name, out));
}

static optic_status build_scatter(const op_ctx *x, optic_node_id *out) {
  optic_scatter_dims g;
  memset(&g, 0, sizeof g);
  const hlo_attr *ivd;
  optic_comp_id f;
  if (x->in->n_operands > 3) {
    return fail_in(x, OPTIC_ERR_UNSUPPORTED, "scatter with %d operands (variadic scatter) is not supported",
                   (int)x->in->n_operands);
  }
  optic_status st = count_is(x, 3, 3);
  if (st == OPTIC_OK) st = no_batching(x, HLO_A_INPUT_BATCHING_DIMS, HLO_A_SCATTER_INDICES_BATCHING_DIMS);
  if (st == OPTIC_OK) st = need(x, HLO_A_INDEX_VECTOR_DIM, &ivd);
  if (st == OPTIC_OK) st = need_comp(x, HLO_A_TO_APPLY, &f);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_UPDATE_WINDOW_DIMS, g.update_window_dims, &g.n_update_window_dims);
  if (st == OPTIC_OK) st = dims_into(x, HLO_A_INSERTED_WINDOW_DIMS, g.inserted_window_dims, &g.n_inserted);
  if (st == OPTIC_OK) {
    st = dims_into(x, HLO_A_SCATTER_DIMS_TO_OPERAND_DIMS, g.scatter_dims_to_operand_dims,
                   &g.n_scatter_dims_to_operand_dims);
  }
  if (st != OPTIC_OK) return st;
  g.index_vector_dim = ivd->ints[0];
  return wrap(x,
              optic_graph_scatter(x->B->m, x->c->id, x->ops[0], x->ops[1], x->ops[2], &g, f, x->in->final_name, out));
}

/* The shards of an all-gather / reduce-scatter: the written result's size
 * along the dimension against the operand's (cross-checked with the
 * replica groups when they are written). */
static optic_status shards_of(const op_ctx *x, int64_t dim, int64_t *shards) {
  const optic_type *t = optic_node_type(x->B->m, x->ops[0]);
  const hlo_shape *rs = &x->in->shape;
  if (rs->dtype == OPTIC_DTYPE_INVALID || dim < 0 || dim >= t->shape.rank || rs->shape.rank != t->shape.rank) {
    return fail_in(x, OPTIC_ERR_UNSUPPORTED, "only one array operand and an array result of its rank are supported");
  }
  int64_t a = t->shape.dims[dim], b = rs->shape.dims[dim];
  bool gather = x->in->op == OPTIC_OP_ALL_GATHER;
  int64_t big = gather ? b : a, small = gather ? a : b;
  if (small == 0 || big % small) {
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "dim %lld: %lld is not a multiple of %lld", (long long)dim,
                   (long long)big, (long long)small);
  }
  *shards = big / small;
  const hlo_attr *g = hlo_find_attr(x->in, HLO_A_REPLICA_GROUPS);
  if (g && g->n_sizes > 0 && g->sizes[0] != *shards) {
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "replica groups of %d but the shapes imply %lld", (int)g->sizes[0],
                   (long long)*shards);
  }
  return OPTIC_OK;
}

static optic_status build_collective(const op_ctx *x, optic_node_id *out) {
  optic_module_t *m = x->B->m;
  optic_comp_id comp = x->c->id, f;
  const hlo_attr *a;
  optic_status st;
  int64_t shards = 1;
  switch (x->in->op) {
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
      if ((st = count_is(x, 1, 1)) != OPTIC_OK || (st = list_of(x, HLO_A_DIMENSIONS, 1, 1, &a)) != OPTIC_OK ||
          (st = shards_of(x, a->ints[0], &shards)) != OPTIC_OK) {
        return st;
      }
      if (x->in->op == OPTIC_OP_ALL_GATHER) {
        return wrap(x, optic_graph_all_gather(m, comp, x->ops[0], a->ints[0], shards, x->in->final_name, out));
      }
      if ((st = need_comp(x, HLO_A_TO_APPLY, &f)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_reduce_scatter(m, comp, x->ops[0], a->ints[0], shards, f, x->in->final_name, out));
    case OPTIC_OP_COLLECTIVE_PERMUTE:
      if ((st = count_is(x, 1, 1)) != OPTIC_OK) return st;
      a = hlo_find_attr(x->in, HLO_A_SOURCE_TARGET_PAIRS);
      for (int32_t i = 0; a && i < a->n_sizes; i++) {
        if (a->sizes[i] != 2)
          return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "source_target_pairs entry %d is not a pair", (int)i);
      }
      return wrap(x, optic_graph_collective_permute(m, comp, x->ops[0], a ? a->ints : NULL, a ? a->n_ints / 2 : 0,
                                                    x->in->final_name, out));
    default: {
      optic_type rt;
      a = hlo_find_attr(x->in, HLO_A_CUSTOM_CALL_TARGET);
      if ((st = hlo_shape_to_type(&x->B->P->A, &x->in->shape, false, &rt)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_custom_call(m, comp, x->ops, x->in->n_operands, &rt, a && a->word ? a->word : "",
                                             x->in->final_name, out));
    }
  }
}

/* after-all, infeed, outfeed and rng-bit-generator (graph/build_io.c):
 * infeed's data type and rng-bit-generator's bits type come from the
 * written result, the tuple (data, token[]) or (state, bits). */
static optic_status build_io(const op_ctx *x, optic_node_id *out) {
  static const char *const algs[] = {"rng_default", "rng_three_fry", "rng_philox"};
  optic_module_t *m = x->B->m;
  optic_comp_id comp = x->c->id;
  optic_status st;
  optic_type rt;
  const hlo_attr *a;
  switch (x->in->op) {
    case OPTIC_OP_AFTER_ALL:
      return wrap(x, optic_graph_after_all(m, comp, x->ops, x->in->n_operands, x->in->final_name, out));
    case OPTIC_OP_REPLICA_ID:
    case OPTIC_OP_PARTITION_ID:
      if ((st = count_is(x, 0, 0)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_replica_id(m, comp, x->in->op == OPTIC_OP_PARTITION_ID, x->in->final_name, out));
    case OPTIC_OP_OUTFEED:
      if ((st = count_is(x, 2, 2)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_outfeed(m, comp, x->ops[0], x->ops[1], x->in->final_name, out));
    default: break;
  }
  if ((st = count_is(x, 1, 1)) != OPTIC_OK) return st;
  if ((st = hlo_shape_to_type(&x->B->P->A, &x->in->shape, false, &rt)) != OPTIC_OK) return st;
  bool infeed = x->in->op == OPTIC_OP_INFEED;
  if (!optic_type_is_tuple(&rt) || rt.tuple_size != 2) {
    return fail_in(x, OPTIC_ERR_SHAPE_MISMATCH, "the result must be the tuple %s",
                   infeed ? "(data, token[])" : "(state, bits)");
  }
  if (infeed) return wrap(x, optic_graph_infeed(m, comp, x->ops[0], &rt.elements[0], x->in->final_name, out));
  if ((st = need(x, HLO_A_ALGORITHM, &a)) != OPTIC_OK) return st;
  for (int k = 0; k < 3; k++) {
    if (strcmp(a->word, algs[k]) == 0) {
      return wrap(x, optic_graph_rng_bit_generator(m, comp, x->ops[0], (optic_rng_algorithm)k, &rt.elements[1],
                                                   x->in->final_name, out));
    }
  }
  return fail_in(x, OPTIC_ERR_INVALID_ARGUMENT, "unknown algorithm '%.32s' (rng_default, rng_three_fry, rng_philox)",
                 a->word);
}

/* bitcast reinterprets the operand's buffer: with row-major layouts on both
 * sides it is a reshape; otherwise the operand is first transposed to its
 * physical (storage) order and the result transposed from its physical order
 * to its logical one, so the elements land where XLA's buffer puts them. */
static optic_status build_bitcast(const op_ctx *x, optic_node_id *out) {
  optic_module_t *m = x->B->m;
  optic_comp_id comp = x->c->id;
  const hlo_shape *rs = &x->in->shape, *os = &x->c->instrs[x->in->operand_index[0]]->shape;
  const optic_type *ot = optic_node_type(m, x->ops[0]);
  if (rs->dtype == OPTIC_DTYPE_INVALID || ot->dtype != rs->dtype) {
    return fail_in(x, OPTIC_ERR_UNSUPPORTED,
                   "bitcast changes the element type or is a tuple; only array reshapes are supported");
  }
  optic_node_id node = x->ops[0];
  int32_t pos[OPTIC_MAX_RANK];
  int64_t perm[OPTIC_MAX_RANK];
  optic_status st;
  if (!hlo_layout_is_default(os)) {
    hlo_physical_positions(os, pos);
    for (int32_t i = 0; i < os->shape.rank; i++) perm[pos[i]] = i;
    const char *nm = hlo_unique_name(x->B, x->in->name, ".physical");
    if (nm == NULL) return fail_in(x, OPTIC_ERR_OUT_OF_MEMORY, "out of memory");
    if ((st = wrap(x, optic_graph_transpose(m, comp, node, perm, nm, &node))) != OPTIC_OK) return st;
  }
  if (hlo_layout_is_default(rs)) return wrap(x, optic_graph_bitcast(m, comp, node, &rs->shape, x->in->final_name, out));
  optic_shape phys = hlo_physical_shape(rs);
  const char *nm = hlo_unique_name(x->B, x->in->name, ".bitcast");
  if (nm == NULL) return fail_in(x, OPTIC_ERR_OUT_OF_MEMORY, "out of memory");
  if ((st = wrap(x, optic_graph_bitcast(m, comp, node, &phys, nm, &node))) != OPTIC_OK) return st;
  hlo_physical_positions(rs, pos);
  for (int32_t i = 0; i < rs->shape.rank; i++) perm[i] = pos[i];
  return wrap(x, optic_graph_transpose(m, comp, node, perm, x->in->final_name, out));
}

/* Layout-changing ops whose attributes are shaped by the operand's rank. */
static optic_status build_layout_op(const op_ctx *x, optic_node_id *out) {
  optic_module_t *m = x->B->m;
  optic_comp_id comp = x->c->id;
  const char *name = x->in->final_name;
  const optic_shape *s = NULL;
  const hlo_attr *a;
  optic_status st;
  int32_t rank = rank_of(x, 0);
  switch (x->in->op) {
    case OPTIC_OP_BROADCAST:
      if ((st = array_shape(x, &s)) != OPTIC_OK) return st;
      a = hlo_find_attr(x->in, HLO_A_DIMENSIONS);
      if (a == NULL && rank != 0) return need(x, HLO_A_DIMENSIONS, &a);
      return wrap(x, optic_graph_broadcast(m, comp, x->ops[0], s, a ? a->ints : NULL, a ? a->n_ints : 0, name, out));
    case OPTIC_OP_RESHAPE:
      if ((st = array_shape(x, &s)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_reshape(m, comp, x->ops[0], s, name, out));
    case OPTIC_OP_TRANSPOSE:
      if ((st = list_of(x, HLO_A_DIMENSIONS, 1, rank, &a)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_transpose(m, comp, x->ops[0], a->ints, name, out));
    case OPTIC_OP_REVERSE:
      if ((st = need(x, HLO_A_DIMENSIONS, &a)) != OPTIC_OK) return st;
      return wrap(x, optic_graph_reverse(m, comp, x->ops[0], a->ints, a->n_ints, name, out));
    case OPTIC_OP_SLICE: {
      if ((st = list_of(x, HLO_A_SLICE, 3, rank, &a)) != OPTIC_OK) return st;
      int64_t start[OPTIC_MAX_RANK], limit[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK];
      for (int32_t i = 0; i < rank; i++)
        start[i] = a->ints[3 * i], limit[i] = a->ints[3 * i + 1], stride[i] = a->ints[3 * i + 2];
      return wrap(x, optic_graph_slice(m, comp, x->ops[0], start, limit, stride, name, out));
    }
    case OPTIC_OP_PAD: {
      if ((st = count_is(x, 2, 2)) != OPTIC_OK || (st = list_of(x, HLO_A_PADDING, 3, rank, &a)) != OPTIC_OK) return st;
      optic_pad_dim cfg[OPTIC_MAX_RANK];
      for (int32_t i = 0; i < rank; i++) {
        cfg[i] = (optic_pad_dim){.low = a->ints[3 * i], .high = a->ints[3 * i + 1], .interior = a->ints[3 * i + 2]};
      }
      return wrap(x, optic_graph_pad(m, comp, x->ops[0], x->ops[1], cfg, name, out));
    }
    default: return fail_in(x, OPTIC_ERR_INTERNAL, "not a layout op");
  }
}

/* What optic_graph_unary builds: the unary elementwise ops and copy. */
static bool is_unary(optic_opcode op) { return graph_opcode_kind_of(op) == GRAPH_OPCODE_UNARY || op == OPTIC_OP_COPY; }

static bool is_binary(optic_opcode op) { return graph_opcode_kind_of(op) == GRAPH_OPCODE_BINARY; }

/* long: one dispatch switch over every opcode the importer builds */
optic_status hlo_build_op(hlo_builder *B, hlo_comp *c, hlo_instr *in, const optic_node_id *ops, optic_node_id *out) {
  op_ctx x = {.B = B, .c = c, .in = in, .ops = ops};
  optic_module_t *m = B->m;
  optic_comp_id comp = c->id;
  const char *name = in->final_name;
  const optic_shape *s = NULL;
  const hlo_attr *a;
  optic_comp_id f, g;
  optic_status st;
  optic_opcode op = in->op;
  if (is_unary(op)) {
    if ((st = count_is(&x, 1, 1)) != OPTIC_OK) return st;
    return wrap(&x, optic_graph_unary(m, comp, op, ops[0], name, out));
  }
  if (is_binary(op)) {
    if ((st = count_is(&x, 2, 2)) != OPTIC_OK) return st;
    return wrap(&x, optic_graph_binary(m, comp, op, ops[0], ops[1], name, out));
  }
  switch (op) {
    case OPTIC_OP_CONSTANT:
      if ((st = array_shape(&x, &s)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_constant(m, comp, in->shape.dtype, s, in->literal, in->literal_bytes, name, out));
    case OPTIC_OP_IOTA:
      if ((st = count_is(&x, 0, 0)) != OPTIC_OK || (st = array_shape(&x, &s)) != OPTIC_OK ||
          (st = need(&x, HLO_A_IOTA_DIMENSION, &a)) != OPTIC_OK) {
        return st;
      }
      return wrap(&x, optic_graph_iota(m, comp, in->shape.dtype, s, a->ints[0], name, out));
    case OPTIC_OP_COMPARE: return build_compare(&x, out);
    case OPTIC_OP_SELECT:
    case OPTIC_OP_CLAMP:
      if ((st = count_is(&x, 3, 3)) != OPTIC_OK) return st;
      if (op == OPTIC_OP_SELECT) return wrap(&x, optic_graph_select(m, comp, ops[0], ops[1], ops[2], name, out));
      return wrap(&x, optic_graph_clamp(m, comp, ops[0], ops[1], ops[2], name, out));
    case OPTIC_OP_CONVERT:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = array_shape(&x, &s)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_convert(m, comp, ops[0], in->shape.dtype, name, out));
    case OPTIC_OP_BITCAST_CONVERT:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = array_shape(&x, &s)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_bitcast_convert(m, comp, ops[0], in->shape.dtype, name, out));
    case OPTIC_OP_IS_FINITE:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_is_finite(m, comp, ops[0], name, out));
    case OPTIC_OP_REDUCE_PRECISION: {
      const hlo_attr *e;
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = need(&x, HLO_A_EXPONENT_BITS, &e)) != OPTIC_OK ||
          (st = need(&x, HLO_A_MANTISSA_BITS, &a)) != OPTIC_OK) {
        return st;
      }
      if (e->ints[0] < INT32_MIN || e->ints[0] > INT32_MAX || a->ints[0] < INT32_MIN || a->ints[0] > INT32_MAX) {
        return fail_in(&x, OPTIC_ERR_INVALID_ARGUMENT, "exponent_bits or mantissa_bits out of range");
      }
      return wrap(&x,
                  optic_graph_reduce_precision(m, comp, ops[0], (int32_t)e->ints[0], (int32_t)a->ints[0], name, out));
    }
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_TRANSPOSE:
    case OPTIC_OP_REVERSE:
    case OPTIC_OP_SLICE:
    case OPTIC_OP_PAD:
      if ((st = count_is(&x, op == OPTIC_OP_PAD ? 2 : 1, op == OPTIC_OP_PAD ? 2 : 1)) != OPTIC_OK) return st;
      if (rank_of(&x, 0) < 0) return fail_in(&x, OPTIC_ERR_SHAPE_MISMATCH, "operand 0 is a tuple; an array is needed");
      return build_layout_op(&x, out);
    case OPTIC_OP_DYNAMIC_SLICE:
      if ((st = count_is(&x, 2, 1 + OPTIC_MAX_RANK)) != OPTIC_OK ||
          (st = need(&x, HLO_A_DYNAMIC_SLICE_SIZES, &a)) != OPTIC_OK) {
        return st;
      }
      if (a->n_ints != rank_of(&x, 0)) {
        return fail_in(&x, OPTIC_ERR_SHAPE_MISMATCH, "dynamic_slice_sizes has %d entries for an operand of rank %d",
                       (int)a->n_ints, (int)rank_of(&x, 0));
      }
      return wrap(&x, optic_graph_dynamic_slice(m, comp, ops[0], ops + 1, in->n_operands - 1, a->ints, name, out));
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE:
      if ((st = count_is(&x, 3, 2 + OPTIC_MAX_RANK)) != OPTIC_OK) return st;
      return wrap(&x,
                  optic_graph_dynamic_update_slice(m, comp, ops[0], ops[1], ops + 2, in->n_operands - 2, name, out));
    case OPTIC_OP_SORT: {
      if ((st = count_is(&x, 1, 32)) != OPTIC_OK || (st = list_of(&x, HLO_A_DIMENSIONS, 1, 1, &a)) != OPTIC_OK ||
          (st = need_comp(&x, HLO_A_TO_APPLY, &f)) != OPTIC_OK) {
        return st;
      }
      const hlo_attr *stable = hlo_find_attr(in, HLO_A_IS_STABLE);
      bool is_stable = stable && stable->word && strcmp(stable->word, "true") == 0;
      return wrap(&x, optic_graph_sort(m, comp, ops, in->n_operands, a->ints[0], is_stable, f, name, out));
    }
    case OPTIC_OP_GATHER: return build_gather(&x, out);
    case OPTIC_OP_AFTER_ALL:
    case OPTIC_OP_REPLICA_ID:
    case OPTIC_OP_PARTITION_ID:
    case OPTIC_OP_INFEED:
    case OPTIC_OP_OUTFEED:
    case OPTIC_OP_RNG_BIT_GENERATOR: return build_io(&x, out);
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: {
      const hlo_attr *eps;
      if ((st = need(&x, HLO_A_EPSILON, &eps)) != OPTIC_OK || (st = need(&x, HLO_A_FEATURE_INDEX, &a)) != OPTIC_OK) {
        return st;
      }
      char *end = NULL;
      float e = strtof(eps->word, &end);
      if (end == eps->word || *end != '\0') {
        return fail_in(&x, OPTIC_ERR_INVALID_ARGUMENT, "epsilon '%.32s' is not a number", eps->word);
      }
      return wrap(&x, optic_graph_batch_norm(m, comp, op, ops, in->n_operands, e, a->ints[0], name, out));
    }
    case OPTIC_OP_TOPK: {
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = need(&x, HLO_A_K, &a)) != OPTIC_OK) return st;
      const hlo_attr *lg = hlo_find_attr(in, HLO_A_LARGEST);
      bool largest = lg == NULL || (lg->word && strcmp(lg->word, "true") == 0); /* XLA's default: largest */
      return wrap(&x, optic_graph_topk(m, comp, ops[0], a->ints[0], largest, name, out));
    }
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE:
    case OPTIC_OP_CUSTOM_CALL: return build_collective(&x, out);
    case OPTIC_OP_SCATTER: return build_scatter(&x, out);
    case OPTIC_OP_OPT_BARRIER:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_opt_barrier(m, comp, ops[0], name, out));
    case OPTIC_OP_BITCAST:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK) return st;
      if (rank_of(&x, 0) < 0) return fail_in(&x, OPTIC_ERR_UNSUPPORTED, "bitcast of a tuple is not supported");
      return build_bitcast(&x, out);
    case OPTIC_OP_CONCATENATE:
      if ((st = count_is(&x, 1, INT32_MAX)) != OPTIC_OK || (st = list_of(&x, HLO_A_DIMENSIONS, 1, 1, &a)) != OPTIC_OK) {
        return st;
      }
      return wrap(&x, optic_graph_concatenate(m, comp, ops, in->n_operands, a->ints[0], name, out));
    case OPTIC_OP_REDUCE:
    case OPTIC_OP_REDUCE_WINDOW: return build_reduction(&x, out);
    case OPTIC_OP_MAP:
      if ((st = count_is(&x, 1, 64)) != OPTIC_OK || (st = need_comp(&x, HLO_A_TO_APPLY, &f)) != OPTIC_OK) return st;
      a = hlo_find_attr(in, HLO_A_DIMENSIONS);
      for (int32_t i = 0; a && i < a->n_ints; i++) {
        if (a->n_ints != rank_of(&x, 0) || a->ints[i] != i) {
          return fail_in(&x, OPTIC_ERR_UNSUPPORTED,
                         "map over a subset of dimensions; only all of them (0, 1, ...) are supported");
        }
      }
      return wrap(&x, optic_graph_map(m, comp, ops, in->n_operands, f, name, out));
    case OPTIC_OP_DOT: return build_dot(&x, out);
    case OPTIC_OP_CONVOLUTION: return build_convolution(&x, out);
    case OPTIC_OP_TUPLE: return wrap(&x, optic_graph_tuple(m, comp, ops, in->n_operands, name, out));
    case OPTIC_OP_GET_TUPLE_ELEMENT:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = need(&x, HLO_A_INDEX, &a)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_get_tuple_element(m, comp, ops[0], a->ints[0], name, out));
    case OPTIC_OP_CALL:
      if ((st = need_comp(&x, HLO_A_TO_APPLY, &f)) != OPTIC_OK) return st;
      return wrap(&x, optic_graph_call(m, comp, f, ops, in->n_operands, name, out));
    case OPTIC_OP_WHILE:
      if ((st = count_is(&x, 1, 1)) != OPTIC_OK || (st = need_comp(&x, HLO_A_CONDITION, &f)) != OPTIC_OK ||
          (st = need_comp(&x, HLO_A_BODY, &g)) != OPTIC_OK) {
        return st;
      }
      return wrap(&x, optic_graph_while(m, comp, ops[0], f, g, name, out));
    case OPTIC_OP_CONDITIONAL: return build_conditional(&x, out);
    case OPTIC_OP_FUSION: return build_fusion(&x, out);
    case OPTIC_OP_ALL_REDUCE: return build_all_reduce(&x, out);
    default: return fail_in(&x, OPTIC_ERR_INTERNAL, "no builder for this opcode");
  }
}
