/* From the HLO syntax tree to a module: resolves names (instructions per
 * computation, computations module-wide, in any textual order), makes
 * instruction names module-unique, builds computations callees first and
 * instructions operands first through the public builders (so every shape is
 * inferred and then checked against the written one), and turns the entry's
 * non-default layouts into explicit transposes: a parameter becomes a
 * row-major parameter of its physical shape followed by a transpose to the
 * logical shape, a root is transposed to its physical shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hlo_parse.h"
#include "graph/internal.h"

/* ------------------------------------------------------------- layouts */

bool hlo_layout_is_default(const hlo_shape *s) {
  if (s->dtype == OPTIC_DTYPE_INVALID) {
    for (int32_t i = 0; i < s->n_elems; i++) {
      if (!hlo_layout_is_default(&s->elems[i])) return false;
    }
    return true;
  }
  if (!s->has_layout) return true;
  for (int32_t j = 0; j < s->shape.rank; j++) {
    if (s->m2m[j] != s->shape.rank - 1 - j) return false;
  }
  return true;
}

void hlo_physical_positions(const hlo_shape *s, int32_t *pos) {
  int32_t r = s->shape.rank;
  for (int32_t j = 0; j < r; j++) pos[s->has_layout ? s->m2m[j] : r - 1 - j] = r - 1 - j;
}

optic_shape hlo_physical_shape(const hlo_shape *s) {
  int32_t pos[OPTIC_MAX_RANK];
  optic_shape out = s->shape;
  hlo_physical_positions(s, pos);
  for (int32_t i = 0; i < s->shape.rank; i++) out.dims[pos[i]] = s->shape.dims[i];
  return out;
}

optic_status hlo_shape_to_type(hlo_arena *a, const hlo_shape *s, bool physical, optic_type *out) {
  memset(out, 0, sizeof *out);
  if (s->dtype != OPTIC_DTYPE_INVALID) {
    optic_shape shape = physical ? hlo_physical_shape(s) : s->shape;
    *out = optic_type_array(s->dtype, &shape);
    return OPTIC_OK;
  }
  optic_type *els = s->n_elems ? hlo_arena_alloc(a, (size_t)s->n_elems * sizeof *els) : NULL;
  if (s->n_elems && els == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "hlo: out of memory");
  for (int32_t i = 0; i < s->n_elems; i++) {
    optic_status st = hlo_shape_to_type(a, &s->elems[i], physical, &els[i]);
    if (st != OPTIC_OK) return st;
  }
  out->dtype = OPTIC_DTYPE_INVALID;
  out->tuple_size = s->n_elems;
  out->elements = els;
  return OPTIC_OK;
}

/* Dtypes and dims of a written shape against a type (layouts aside). */
static bool shape_matches(const hlo_shape *s, const optic_type *t, bool physical) {
  if (s->dtype != t->dtype) return false;
  if (s->dtype != OPTIC_DTYPE_INVALID) {
    optic_shape want = physical ? hlo_physical_shape(s) : s->shape;
    return optic_shape_equal(&want, &t->shape);
  }
  if (s->n_elems != t->tuple_size) return false;
  for (int32_t i = 0; i < s->n_elems; i++) {
    if (!shape_matches(&s->elems[i], &t->elements[i], physical)) return false;
  }
  return true;
}

static bool shapes_agree(hlo_arena *a, const hlo_shape *x, const hlo_shape *y) {
  optic_type ty;
  return hlo_shape_to_type(a, y, false, &ty) == OPTIC_OK && shape_matches(x, &ty, false);
}

static const char *shape_str(hlo_arena *a, const hlo_shape *s, bool physical, char *buf, size_t size) {
  optic_type t;
  if (hlo_shape_to_type(a, s, physical, &t) != OPTIC_OK) return "?";
  optic_type_format(&t, buf, size);
  return buf;
}

/* --------------------------------------------------------------- names */

static optic_status oom_at(hlo_pos p) { return hlo_fail_at(OPTIC_ERR_OUT_OF_MEMORY, p.line, p.col, "out of memory"); }

/* Per base name, the next suffix number to try (keeps renaming linear). */
#define HLO_SCOPE_NEXT (-4)

const char *hlo_unique_name(hlo_builder *B, const char *base, const char *suffix) {
  hlo_arena *a = &B->P->A;
  size_t nb = strlen(base), ns = strlen(suffix);
  char *stem = hlo_arena_alloc(a, nb + ns + 1);
  if (stem == NULL) return NULL;
  memcpy(stem, base, nb);
  memcpy(stem + nb, suffix, ns + 1);
  int32_t ex;
  if (ns > 0 && hlo_map_get(&B->map, stem, HLO_SCOPE_USED) < 0) {
    return hlo_map_put(&B->map, stem, HLO_SCOPE_USED, 0, &ex) == OPTIC_OK ? stem : NULL;
  }
  int32_t k = hlo_map_get(&B->map, stem, HLO_SCOPE_NEXT);
  for (k = k < 1 ? 1 : k;; k++) {
    char *cand = hlo_arena_alloc(a, nb + ns + 16);
    if (cand == NULL) return NULL;
    snprintf(cand, nb + ns + 16, "%s.%d", stem, (int)k);
    if (hlo_map_get(&B->map, cand, HLO_SCOPE_USED) < 0) {
      if (hlo_map_put(&B->map, cand, HLO_SCOPE_USED, 0, &ex) != OPTIC_OK) return NULL;
      if (hlo_map_set(&B->map, stem, HLO_SCOPE_NEXT, k + 1) != OPTIC_OK) return NULL;
      return cand;
    }
  }
}

/* Computation and instruction names, roots, final names, operand and callee
 * references: every lookup the build needs, with errors in text order. */
/* long: every name lookup of the build in one pass, so errors come in text order */
static optic_status index_names(hlo_builder *B) {
  hlo_parser *P = B->P;
  hlo_map *map = &B->map;
  int32_t ex;
  optic_status st;
  B->entry = -1;
  for (int32_t ci = 0; ci < P->n_comps; ci++) {
    hlo_comp *c = P->comps[ci];
    if ((st = hlo_map_put(map, c->name, HLO_SCOPE_COMPS, ci, &ex)) != OPTIC_OK) return st;
    if (ex >= 0) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, c->pos.line, c->pos.col,
                         "computation '%s' is defined twice (first at line %d:%d)", c->name,
                         (int)P->comps[ex]->pos.line, (int)P->comps[ex]->pos.col);
    }
    if (c->is_entry && B->entry >= 0) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, c->pos.line, c->pos.col,
                         "computation '%s' is a second ENTRY ('%s' is one)", c->name, P->comps[B->entry]->name);
    }
    if (c->is_entry) B->entry = ci;
    c->root = -1;
    for (int32_t ii = 0; ii < c->n_instrs; ii++) {
      hlo_instr *in = c->instrs[ii];
      if ((st = hlo_map_put(map, in->name, ci, ii, &ex)) != OPTIC_OK) return st;
      if (ex >= 0) {
        return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->pos.line, in->pos.col,
                           "instruction '%s' is defined twice in computation '%s' (first at line %d:%d)", in->name,
                           c->name, (int)c->instrs[ex]->pos.line, (int)c->instrs[ex]->pos.col);
      }
      /* Every written name is taken; one written again in another computation is renamed below. */
      if ((st = hlo_map_put(map, in->name, HLO_SCOPE_USED, 0, &ex)) != OPTIC_OK) return st;
      in->final_name = ex < 0 ? in->name : NULL;
      if (in->is_root && c->root >= 0) {
        return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->pos.line, in->pos.col,
                           "computation '%s' has a second ROOT '%s' ('%s' is one)", c->name, in->name,
                           c->instrs[c->root]->name);
      }
      if (in->is_root) c->root = ii;
    }
    if (c->root < 0) c->root = c->n_instrs - 1;
  }
  if (B->entry < 0) B->entry = P->n_comps - 1;
  /* The first instruction written with a name keeps it; later ones in other
   * computations become name.1, name.2, ... (names unused by the text). */
  for (int32_t ci = 0; ci < P->n_comps; ci++) {
    hlo_comp *c = P->comps[ci];
    for (int32_t ii = 0; ii < c->n_instrs; ii++) {
      hlo_instr *in = c->instrs[ii];
      if (in->final_name == NULL && (in->final_name = hlo_unique_name(B, in->name, "")) == NULL) return oom_at(in->pos);
    }
  }
  for (int32_t ci = 0; ci < P->n_comps; ci++) {
    hlo_comp *c = P->comps[ci];
    hlo_vec callees = {0}, callee_pos = {0};
    for (int32_t ii = 0; ii < c->n_instrs; ii++) {
      hlo_instr *in = c->instrs[ii];
      if (in->n_operands &&
          (in->operand_index = hlo_arena_alloc(&P->A, (size_t)in->n_operands * sizeof(int32_t))) == NULL) {
        return oom_at(in->pos);
      }
      for (int32_t k = 0; k < in->n_operands; k++) {
        int32_t j = hlo_map_get(map, in->operands[k], ci);
        if (j < 0) {
          return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->operand_pos[k].line, in->operand_pos[k].col,
                             "unknown operand '%s' (computation '%s' has no instruction of that name)", in->operands[k],
                             c->name);
        }
        in->operand_index[k] = j;
        c->instrs[j]->n_users++;
      }
      for (const hlo_attr *a = in->attrs; a; a = a->next) {
        for (int32_t k = 0; k < a->n_names; k++) {
          int32_t j = hlo_map_get(map, a->names[k], HLO_SCOPE_COMPS);
          if (j < 0) {
            return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, a->name_pos[k].line, a->name_pos[k].col,
                               "unknown computation '%s' in %s of '%s'", a->names[k], hlo_attr_name(a->kind), in->name);
          }
          int32_t *slot = hlo_vec_push(&P->A, &callees, sizeof *slot);
          hlo_pos *pos = hlo_vec_push(&P->A, &callee_pos, sizeof *pos);
          if (slot == NULL || pos == NULL) return oom_at(a->pos);
          *slot = j;
          *pos = a->name_pos[k];
        }
      }
    }
    c->callees = callees.data;
    c->callee_pos = callee_pos.data;
    c->n_callees = callees.n;
  }
  return OPTIC_OK;
}

/* -------------------------------------------------------- entry layouts */

static optic_status remember(hlo_builder *B, optic_node_id id) {
  if (B->n_made == B->cap_made) {
    int32_t cap = B->cap_made ? B->cap_made * 2 : 16;
    optic_node_id *p = realloc(B->made, (size_t)cap * sizeof *p);
    if (p == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "hlo: out of memory");
    B->made = p;
    B->cap_made = cap;
  }
  B->made[B->n_made++] = id;
  return OPTIC_OK;
}

/* Converts node between the physical (row-major storage) and logical forms
 * of boundary shape s: one transpose per array with a non-default layout,
 * get-tuple-element/tuple around tuples that hold one. */
static optic_status relayout(hlo_builder *B, optic_comp_id comp, optic_node_id node, const hlo_shape *s,
                             bool to_logical, const char *base, hlo_pos at, optic_node_id *out) {
  *out = node;
  if (hlo_layout_is_default(s)) return OPTIC_OK;
  const char *suffix = to_logical ? ".logical" : ".physical";
  optic_status st;
  if (s->dtype != OPTIC_DTYPE_INVALID) {
    int32_t pos[OPTIC_MAX_RANK];
    int64_t perm[OPTIC_MAX_RANK];
    hlo_physical_positions(s, pos);
    for (int32_t i = 0; i < s->shape.rank; i++) {
      if (to_logical) perm[i] = pos[i];
      else perm[pos[i]] = i;
    }
    const char *name = hlo_unique_name(B, base, suffix);
    if (name == NULL) return oom_at(at);
    if ((st = optic_graph_transpose(B->m, comp, node, perm, name, out)) != OPTIC_OK) {
      return hlo_fail_wrap(st, at.line, at.col, "layout transpose: ");
    }
    return remember(B, *out);
  }
  optic_node_id *els = hlo_arena_alloc(&B->P->A, (size_t)s->n_elems * sizeof *els);
  if (els == NULL) return oom_at(at);
  for (int32_t i = 0; i < s->n_elems; i++) {
    char idx[24];
    snprintf(idx, sizeof idx, ".%d", (int)i);
    const char *name = hlo_unique_name(B, base, idx);
    if (name == NULL) return oom_at(at);
    optic_node_id g;
    if ((st = optic_graph_get_tuple_element(B->m, comp, node, i, name, &g)) != OPTIC_OK ||
        (st = remember(B, g)) != OPTIC_OK) {
      return hlo_fail_wrap(st, at.line, at.col, "layout: ");
    }
    if ((st = relayout(B, comp, g, &s->elems[i], to_logical, name, at, &els[i])) != OPTIC_OK) return st;
  }
  const char *name = hlo_unique_name(B, base, suffix);
  if (name == NULL) return oom_at(at);
  if ((st = optic_graph_tuple(B->m, comp, els, s->n_elems, name, out)) != OPTIC_OK) {
    return hlo_fail_wrap(st, at.line, at.col, "layout: ");
  }
  return remember(B, *out);
}

/* The entry's caller-facing shapes: entry_computation_layout when written
 * (its dims must agree with the instructions), else the instructions' own. */
static optic_status set_boundaries(hlo_builder *B, hlo_comp *c) {
  hlo_parser *P = B->P;
  char b1[TYPE_BUF], b2[TYPE_BUF];
  int32_t n_params = 0;
  for (int32_t ii = 0; ii < c->n_instrs; ii++) {
    hlo_instr *in = c->instrs[ii];
    if (in->op != OPTIC_OP_PARAMETER) continue;
    n_params++;
    in->boundary = &in->shape;
    if (!P->has_entry_layout) continue;
    if (in->param_number >= P->n_entry_params) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->pos.line, in->pos.col,
                         "parameter %lld has no entry in entry_computation_layout (%d given)",
                         (long long)in->param_number, (int)P->n_entry_params);
    }
    in->boundary = &P->entry_params[in->param_number];
    if (!shapes_agree(&P->A, &in->shape, in->boundary)) {
      return hlo_fail_at(OPTIC_ERR_SHAPE_MISMATCH, in->pos.line, in->pos.col,
                         "parameter '%s' has shape %s but entry_computation_layout gives %s", in->name,
                         shape_str(&P->A, &in->shape, false, b1, sizeof b1),
                         shape_str(&P->A, in->boundary, false, b2, sizeof b2));
    }
  }
  hlo_instr *root = c->instrs[c->root];
  root->boundary = P->has_entry_layout ? &P->entry_result : &root->shape;
  if (!shapes_agree(&P->A, &root->shape, root->boundary)) {
    return hlo_fail_at(OPTIC_ERR_SHAPE_MISMATCH, root->pos.line, root->pos.col,
                       "root '%s' has shape %s but entry_computation_layout gives %s", root->name,
                       shape_str(&P->A, &root->shape, false, b1, sizeof b1),
                       shape_str(&P->A, root->boundary, false, b2, sizeof b2));
  }
  if (P->has_entry_layout && n_params != P->n_entry_params) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, P->entry_layout_pos.line, P->entry_layout_pos.col,
                       "entry_computation_layout lists %d parameters but the entry has %d", (int)P->n_entry_params,
                       (int)n_params);
  }
  return OPTIC_OK;
}

/* ---------------------------------------------------------- instructions */

static optic_status build_parameter(hlo_builder *B, hlo_comp *c, hlo_instr *in) {
  const hlo_shape *s = in->boundary ? in->boundary : &in->shape;
  bool relaid = in->boundary && !hlo_layout_is_default(s);
  optic_type t;
  optic_status st = hlo_shape_to_type(&B->P->A, s, relaid, &t);
  if (st != OPTIC_OK) return st;
  optic_node_id p;
  if (in->param_number > (1 << 20)) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->pos.line, in->pos.col, "parameter number %lld is above 2^20",
                       (long long)in->param_number);
  }
  if ((st = optic_graph_parameter(B->m, c->id, (int32_t)in->param_number, &t, in->final_name, &p)) != OPTIC_OK) {
    char prefix[300];
    snprintf(prefix, sizeof prefix, "instruction '%s': ", in->name);
    return hlo_fail_wrap(st, in->pos.line, in->pos.col, prefix);
  }
  if (relaid && s->dtype != OPTIC_DTYPE_INVALID) in->phys_node = p;
  return relayout(B, c->id, p, s, true, in->final_name, in->pos, &in->node);
}

static optic_status build_instr(hlo_builder *B, hlo_comp *c, hlo_instr *in, optic_node_id *ops) {
  hlo_parser *P = B->P;
  char b1[TYPE_BUF], b2[TYPE_BUF];
  if (in->op == OPTIC_OP_PARAMETER) return build_parameter(B, c, in);
  for (int32_t k = 0; k < in->n_operands; k++) {
    const hlo_instr *o = c->instrs[in->operand_index[k]];
    ops[k] = o->node;
    const optic_type *t = optic_node_type(B->m, o->node);
    if (in->operand_shapes[k] && !shape_matches(in->operand_shapes[k], t, false)) {
      return hlo_fail_at(OPTIC_ERR_SHAPE_MISMATCH, in->operand_pos[k].line, in->operand_pos[k].col,
                         "operand '%s' of '%s' is written as %s but it has type %s", o->name, in->name,
                         shape_str(&P->A, in->operand_shapes[k], false, b1, sizeof b1),
                         graph_type_str(t, b2, sizeof b2));
    }
  }
  optic_node_id node;
  optic_status st = hlo_build_op(B, c, in, ops, &node);
  if (st != OPTIC_OK) return st;
  const optic_type *t = optic_node_type(B->m, node);
  const hlo_shape *want = in->node_is_physical ? in->boundary : &in->shape; /* a folded root: the caller's layout */
  if (!shape_matches(want, t, in->node_is_physical)) {
    return hlo_fail_at(OPTIC_ERR_SHAPE_MISMATCH, in->pos.line, in->pos.col,
                       "instruction '%s' is written as %s but %s gives %s", in->name,
                       shape_str(&P->A, want, in->node_is_physical, b1, sizeof b1), optic_opcode_name(in->op),
                       graph_type_str(t, b2, sizeof b2));
  }
  in->node = node;
  return OPTIC_OK;
}

/* Operands first (any textual order), iteratively: an explicit stack. */
static optic_status build_instructions(hlo_builder *B, hlo_comp *c, int32_t *stack, optic_node_id *ops) {
  for (int32_t start = 0; start < c->n_instrs; start++) {
    if (c->instrs[start]->state) continue;
    int32_t top = 0;
    stack[top++] = start;
    c->instrs[start]->state = 1;
    while (top > 0) {
      hlo_instr *in = c->instrs[stack[top - 1]];
      if (in->cursor < in->n_operands) {
        int32_t k = in->cursor++, j = in->operand_index[k];
        hlo_instr *o = c->instrs[j];
        if (o->state == 1) {
          return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->operand_pos[k].line, in->operand_pos[k].col,
                             "instruction '%s' depends on itself through operand '%s'", in->name, o->name);
        }
        if (o->state == 0) {
          o->state = 1;
          stack[top++] = j;
        }
        continue;
      }
      optic_status st = build_instr(B, c, in, ops);
      if (st != OPTIC_OK) return st;
      in->state = 2;
      top--;
    }
  }
  return OPTIC_OK;
}

static optic_status build_computation(hlo_builder *B, int32_t ci, int32_t *levels) {
  hlo_parser *P = B->P;
  hlo_comp *c = P->comps[ci];
  int32_t level = 1;
  for (int32_t k = 0; k < c->n_callees; k++) {
    if (levels[c->callees[k]] + 1 > level) level = levels[c->callees[k]] + 1;
  }
  if (level > HLO_MAX_CALL_DEPTH) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, c->pos.line, c->pos.col,
                       "computation '%s' nests calls %d deep; at most %d are supported", c->name, (int)level,
                       HLO_MAX_CALL_DEPTH);
  }
  levels[ci] = level;
  optic_status st = optic_module_add_computation(B->m, c->name, &c->id);
  if (st != OPTIC_OK) return hlo_fail_wrap(st, c->pos.line, c->pos.col, "");
  bool is_entry = ci == B->entry;
  if (is_entry && (st = set_boundaries(B, c)) != OPTIC_OK) return st;
  int32_t max_ops = 1;
  for (int32_t ii = 0; ii < c->n_instrs; ii++) {
    if (c->instrs[ii]->n_operands > max_ops) max_ops = c->instrs[ii]->n_operands;
  }
  int32_t *stack = malloc((size_t)c->n_instrs * sizeof *stack);
  optic_node_id *ops = malloc((size_t)max_ops * sizeof *ops);
  if (stack == NULL || ops == NULL) st = oom_at(c->pos);
  if (st == OPTIC_OK) st = build_instructions(B, c, stack, ops);
  free(stack);
  free(ops);
  if (st != OPTIC_OK) return st;
  hlo_instr *root = c->instrs[c->root];
  optic_node_id r = root->node;
  if (is_entry && !root->node_is_physical) {
    st = relayout(B, c->id, r, root->boundary, false, root->final_name, root->pos, &r);
    if (st != OPTIC_OK) return st;
  }
  if ((st = optic_computation_set_root(B->m, c->id, r)) != OPTIC_OK)
    return hlo_fail_wrap(st, root->pos.line, root->pos.col, "");
  int32_t np = optic_computation_parameter_count(B->m, c->id);
  for (int32_t i = 0; i < np; i++) {
    if (optic_computation_parameter(B->m, c->id, i) == OPTIC_NO_NODE) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, c->pos.line, c->pos.col,
                         "computation '%s' has parameters up to %d but no parameter %d", c->name, (int)np - 1, (int)i);
    }
  }
  if (is_entry) { /* layout nodes a folded convolution made unnecessary */
    for (int32_t k = B->n_made - 1; k >= 0; k--) {
      optic_node_id id = B->made[k];
      if (optic_node_user_count(B->m, id) == 0 && id != r && (st = graph_node_remove(B->m, id)) != OPTIC_OK) return st;
    }
    graph_compact(B->m, c->id);
  }
  return OPTIC_OK;
}

/* Callees before callers, iteratively; a call cycle is an error. */
static optic_status build_computations(hlo_builder *B) {
  hlo_parser *P = B->P;
  int32_t *stack = malloc((size_t)P->n_comps * sizeof *stack);
  int32_t *levels = calloc((size_t)P->n_comps, sizeof *levels);
  optic_status st = OPTIC_OK;
  if (stack == NULL || levels == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "hlo: out of memory");
  for (int32_t start = 0; st == OPTIC_OK && start < P->n_comps; start++) {
    if (P->comps[start]->state) continue;
    int32_t top = 0;
    stack[top++] = start;
    P->comps[start]->state = 1;
    while (st == OPTIC_OK && top > 0) {
      hlo_comp *c = P->comps[stack[top - 1]];
      if (c->cursor < c->n_callees) {
        int32_t k = c->cursor++, j = c->callees[k];
        hlo_comp *callee = P->comps[j];
        hlo_pos at = c->callee_pos[k];
        if (callee == c) {
          st = hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, at.line, at.col, "computation '%s' calls itself", c->name);
        } else if (callee->state == 1) {
          st = hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, at.line, at.col,
                           "computation '%s' calls '%s', which calls it back (a cycle)", c->name, callee->name);
        } else if (callee->state == 0) {
          callee->state = 1;
          stack[top++] = j;
        }
        continue;
      }
      st = build_computation(B, stack[top - 1], levels);
      c->state = 2;
      top--;
    }
  }
  free(stack);
  free(levels);
  return st;
}

optic_status hlo_build_module(hlo_parser *P, optic_module_t **out) {
  hlo_builder B;
  memset(&B, 0, sizeof B);
  B.P = P;
  optic_status st = index_names(&B);
  if (st == OPTIC_OK) st = optic_module_create(P->module_name, &B.m);
  if (st == OPTIC_OK) st = build_computations(&B);
  if (st == OPTIC_OK) st = optic_module_set_entry(B.m, P->comps[B.entry]->id);
  if (st == OPTIC_OK && P->n_aliases > 0 && graph_set_io_aliases(B.m, P->aliases, P->n_aliases) != OPTIC_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", optic_last_error());
    st = hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, P->aliases_pos.line, P->aliases_pos.col, "%s", why);
  }
  hlo_map_free(&B.map);
  free(B.made);
  if (st != OPTIC_OK) {
    optic_module_destroy(B.m);
    return st;
  }
  *out = B.m;
  return OPTIC_OK;
}
