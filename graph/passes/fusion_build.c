/* Turns one fusion group into a fused computation "fused_computation.N" and
 * a fusion instruction that takes over the group root's uses; the members
 * are then removed from their computation. Outside operands enter the fused
 * computation as parameters (numbered in order of first use, members in
 * list order), except that scalar constants are copied in and broadcasts,
 * reshapes and transposes of a parameter or constant are duplicated in
 * (their own operand then enters the same way), within the size cap.
 * Members are copied with their attributes, called computations and types
 * unchanged, so the fused computation computes exactly what they did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/passes/fusion.h"

static bool is_scalar_constant(const optic_instr *in) {
  return in->op == OPTIC_OP_CONSTANT && !optic_type_is_tuple(&in->type) && fusion_elements(&in->type) == 1;
}

static bool is_dup_candidate(const optic_module_t *m, const optic_instr *in) {
  if (in->op != OPTIC_OP_BROADCAST && in->op != OPTIC_OP_RESHAPE && in->op != OPTIC_OP_BITCAST &&
      in->op != OPTIC_OP_TRANSPOSE)
    return false;
  optic_opcode q = m->instrs[in->operands[0]].op;
  return q == OPTIC_OP_PARAMETER || q == OPTIC_OP_CONSTANT;
}

/* entry/mapped/touched cover every id up to id (fusion instructions made
 * for earlier groups of this computation have ids past the sweep's). */
static optic_status reach(fusion_ctx *cx, optic_node_id id) {
  if (id < cx->n_map) return OPTIC_OK;
  int32_t cap = cx->n_map;
  while (cap <= id) cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
  unsigned char *e = realloc(cx->entry, (size_t)cap);
  if (e == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  cx->entry = e;
  memset(e + cx->n_map, 0, (size_t)(cap - cx->n_map));
  optic_node_id *mp = realloc(cx->mapped, (size_t)cap * sizeof *mp);
  if (mp == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  cx->mapped = mp;
  optic_node_id *t = realloc(cx->touched, (size_t)cap * sizeof *t);
  if (t == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  cx->touched = t;
  cx->n_map = cap;
  return OPTIC_OK;
}

static bool in_group(const fusion_ctx *cx, optic_node_id id, int32_t g) {
  return id < cx->n_ids && cx->group_of[id] == g;
}

static void set_entry(fusion_ctx *cx, optic_node_id id, fusion_entry e) {
  cx->entry[id] = (unsigned char)e;
  cx->mapped[id] = OPTIC_NO_NODE;
  cx->touched[cx->n_touched++] = id;
}

/* Decides how outside operand o enters; *budget is the room left under the
 * size cap, *dups counts duplicated instructions (they count as fused). */
static optic_status plan_operand(fusion_ctx *cx, optic_node_id o, int32_t *budget, int32_t *dups) {
  optic_status st = reach(cx, o);
  if (st != OPTIC_OK || cx->entry[o] != ENTRY_NONE) return st;
  const optic_instr *in = &cx->m->instrs[o];
  if (is_scalar_constant(in) && *budget >= 1) {
    set_entry(cx, o, ENTRY_CLONE);
    --*budget;
    return OPTIC_OK;
  }
  if (is_dup_candidate(cx->m, in) && *budget >= 1) {
    optic_node_id q = in->operands[0];
    if ((st = reach(cx, q)) != OPTIC_OK) return st;
    int32_t need = 1 + (cx->entry[q] == ENTRY_NONE && is_scalar_constant(&cx->m->instrs[q]) ? 1 : 0);
    if (*budget >= need) {
      set_entry(cx, o, ENTRY_DUP);
      --*budget;
      ++*dups;
      return plan_operand(cx, q, budget, dups);
    }
  }
  set_entry(cx, o, ENTRY_PARAM);
  return OPTIC_OK;
}

/* A copy of src in computation comp with the given operands. */
static optic_status clone_into(optic_module_t *m, optic_comp_id comp, optic_node_id src, const optic_node_id *ops,
                               optic_node_id *out) {
  const optic_instr *in = &m->instrs[src];
  optic_instr_proto p = graph_proto(in->op);
  p.type = in->type;
  p.operands = ops;
  p.n_operands = in->n_operands;
  p.ints = in->ints;
  p.n_ints = in->n_ints;
  p.cmp = in->cmp;
  p.calls = in->calls;
  p.n_calls = in->n_calls;
  p.data = in->data;
  p.data_bytes = in->data_bytes;
  return graph_add_instr(m, comp, &p, NULL, out);
}

typedef struct build_state {
  optic_comp_id fc;
  optic_node_id *ext; /* the fusion's operands */
  int32_t n_ext;
} build_state;

/* The instruction standing for outside operand o inside the fused computation. */
static optic_status enter(fusion_ctx *cx, build_state *b, optic_node_id o, optic_node_id *out) {
  optic_module_t *m = cx->m;
  if (cx->mapped[o] != OPTIC_NO_NODE) {
    *out = cx->mapped[o];
    return OPTIC_OK;
  }
  optic_status st;
  optic_node_id id;
  switch ((fusion_entry)cx->entry[o]) {
    case ENTRY_CLONE: st = clone_into(m, b->fc, o, NULL, &id); break;
    case ENTRY_DUP: {
      optic_node_id q;
      st = enter(cx, b, m->instrs[o].operands[0], &q);
      if (st == OPTIC_OK) st = clone_into(m, b->fc, o, &q, &id);
      break;
    }
    default: {
      optic_type t = m->instrs[o].type;
      st = optic_graph_parameter(m, b->fc, b->n_ext, &t, NULL, &id);
      if (st == OPTIC_OK) b->ext[b->n_ext++] = o;
      break;
    }
  }
  if (st != OPTIC_OK) return st;
  cx->counts->work++;
  cx->mapped[o] = id;
  *out = id;
  return OPTIC_OK;
}

static void reset_entries(fusion_ctx *cx, bool keep_leftovers) {
  for (int32_t i = 0; i < cx->n_touched; i++) {
    optic_node_id id = cx->touched[i];
    if (keep_leftovers && (cx->entry[id] == ENTRY_CLONE || cx->entry[id] == ENTRY_DUP) && id < cx->n_ids &&
        !cx->left_mark[id]) {
      cx->left_mark[id] = 1;
      cx->leftovers[cx->n_leftovers++] = id;
    }
    cx->entry[id] = ENTRY_NONE;
  }
  cx->n_touched = 0;
}

/* Copies the members into a new fused computation and creates the fusion
 * instruction; *fusion gets its id. */
static optic_status build(fusion_ctx *cx, const fusion_group *g, build_state *b, optic_node_id *fusion) {
  optic_module_t *m = cx->m;
  int32_t gi = (int32_t)(g - cx->groups);
  const optic_node_id *mem = cx->members + g->first;
  char name[48];
  snprintf(name, sizeof name, "fused_computation.%d", (int)cx->next_name++);
  optic_status st = optic_module_add_computation(m, name, &b->fc);
  for (int32_t k = 0; k < g->size && st == OPTIC_OK; k++) {
    optic_node_id ops[4];
    int32_t nops = m->instrs[mem[k]].n_operands;
    if (nops > 4) return optic_fail(OPTIC_ERR_INTERNAL, "fusion: %s has %d operands", m->instrs[mem[k]].name, nops);
    for (int32_t i = 0; i < nops && st == OPTIC_OK; i++) {
      optic_node_id o = m->instrs[mem[k]].operands[i];
      if (in_group(cx, o, gi)) ops[i] = cx->mapped[o];
      else st = enter(cx, b, o, &ops[i]);
    }
    if (st == OPTIC_OK) st = clone_into(m, b->fc, mem[k], ops, &cx->mapped[mem[k]]);
    cx->counts->work++;
  }
  if (st == OPTIC_OK) st = optic_computation_set_root(m, b->fc, cx->mapped[g->root]);
  if (st == OPTIC_OK) st = optic_graph_fusion(m, cx->comp, g->kind, b->ext, b->n_ext, b->fc, NULL, fusion);
  return st;
}

optic_status fusion_build_group(fusion_ctx *cx, const fusion_group *g, bool *fused) {
  optic_module_t *m = cx->m;
  int32_t gi = (int32_t)(g - cx->groups);
  const optic_node_id *mem = cx->members + g->first;
  *fused = false;
  /* Plan: how each outside operand enters; give up below two instructions. */
  int32_t budget = cx->max_size - g->size, dups = 0, operands = 0;
  optic_status st = OPTIC_OK;
  /* A dot's or convolution's operands enter as they are (parameters), even
   * where another member could have duplicated them: first sweep. */
  for (int32_t k = 0; k < g->size && st == OPTIC_OK; k++) {
    const optic_instr *in = &m->instrs[mem[k]];
    if (in->op != OPTIC_OP_DOT && in->op != OPTIC_OP_CONVOLUTION) continue;
    for (int32_t i = 0; i < in->n_operands && st == OPTIC_OK; i++) {
      optic_node_id o = in->operands[i];
      if ((st = reach(cx, o)) == OPTIC_OK && cx->entry[o] == ENTRY_NONE) set_entry(cx, o, ENTRY_PARAM);
    }
  }
  for (int32_t k = 0; k < g->size && st == OPTIC_OK; k++) {
    const optic_instr *in = &m->instrs[mem[k]];
    for (int32_t i = 0; i < in->n_operands && st == OPTIC_OK; i++) {
      cx->counts->work++;
      operands++;
      if (!in_group(cx, in->operands[i], gi)) st = plan_operand(cx, in->operands[i], &budget, &dups);
    }
  }
  if (st != OPTIC_OK || g->size + dups < 2) {
    reset_entries(cx, false);
    return st;
  }
  build_state b = {.fc = -1, .n_ext = 0};
  b.ext = malloc((size_t)(operands ? operands : 1) * sizeof *b.ext);
  if (b.ext == NULL) {
    reset_entries(cx, false);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  }
  optic_node_id fusion = OPTIC_NO_NODE;
  st = build(cx, g, &b, &fusion);
  free(b.ext);
  /* Until here the module only gained a computation nobody calls yet (and
   * perhaps an unused fusion instruction): valid and equivalent on error. */
  if (st == OPTIC_OK) st = optic_node_replace_all_uses(m, g->root, fusion);
  reset_entries(cx, st == OPTIC_OK);
  if (st != OPTIC_OK) return st;
  /* Users before producers: the root is last in list order. */
  for (int32_t k = g->size - 1; k >= 0 && st == OPTIC_OK; k--) st = graph_node_remove(m, mem[k]);
  if (st != OPTIC_OK) return st;
  cx->counts->added++;
  cx->counts->replaced++;
  cx->counts->removed += g->size;
  *fused = true;
  return OPTIC_OK;
}
