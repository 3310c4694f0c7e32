/* Module storage: computations, instructions, operand/user edges (always
 * updated together, here only), names, and read accessors. Builders in
 * graph/build_*.c decide types and attributes; this file stores them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"

static const char *const opcode_names[OPTIC_OPCODE_COUNT_] = {
#define OPCODE_NAME(name, str, kind) str,
    OPTIC_OPCODE_LIST(OPCODE_NAME)
#undef OPCODE_NAME
};

static const unsigned char opcode_kinds[OPTIC_OPCODE_COUNT_] = {
#define OPCODE_KIND(name, str, kind) GRAPH_OPCODE_##kind,
    OPTIC_OPCODE_LIST(OPCODE_KIND)
#undef OPCODE_KIND
};

const char *optic_opcode_name(optic_opcode op) {
  return (unsigned)op < OPTIC_OPCODE_COUNT_ ? opcode_names[op] : "invalid";
}

optic_status optic_opcode_from_name(const char *name, optic_opcode *out) {
  if (name == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "opcode_from_name: NULL argument");
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    if (strcmp(name, opcode_names[i]) == 0) {
      *out = (optic_opcode)i;
      return OPTIC_OK;
    }
  }
  return optic_fail(OPTIC_ERR_NOT_FOUND, "unknown opcode '%.64s'", name);
}

graph_opcode_kind graph_opcode_kind_of(optic_opcode op) {
  return (unsigned)op < OPTIC_OPCODE_COUNT_ ? (graph_opcode_kind)opcode_kinds[op] : GRAPH_OPCODE_OTHER;
}

bool graph_opcode_is_elementwise(optic_opcode op) { return graph_opcode_kind_of(op) != GRAPH_OPCODE_OTHER; }

optic_status optic_module_create(const char *name, optic_module_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "module_create: out is NULL");
  *out = NULL;
  optic_module_t *m = calloc(1, sizeof *m);
  if (m == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "module_create: out of memory");
  m->name = strdup(name ? name : "module");
  if (m->name == NULL) {
    free(m);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "module_create: out of memory");
  }
  m->entry = -1;
  *out = m;
  return OPTIC_OK;
}

void optic_module_destroy(optic_module_t *m) {
  if (m == NULL) return;
  for (int32_t i = 0; i < m->n_instrs; i++) {
    optic_instr *in = &m->instrs[i];
    graph_type_release(&in->type);
    free(in->operands);
    free(in->users);
    free(in->ints);
    free(in->calls);
    free(in->data);
  }
  free(m->aliases);
  for (int32_t c = 0; c < m->n_comps; c++) {
    free(m->comps[c].name);
    free(m->comps[c].instrs ? m->comps[c].instrs - m->comps[c].head : NULL);
    free(m->comps[c].params);
  }
  free(m->instrs);
  free(m->comps);
  graph_names_free(&m->names);
  graph_names_free(&m->comp_names);
  free(m->name);
  free(m);
}

const char *optic_module_name(const optic_module_t *m) { return m ? m->name : ""; }

optic_status graph_check_comp(const optic_module_t *m, optic_comp_id comp, const char *op) {
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: module is NULL", op);
  if (comp < 0 || comp >= m->n_comps) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: computation id %d does not exist (module has %d)", op, (int)comp,
                      (int)m->n_comps);
  }
  return OPTIC_OK;
}

optic_status optic_module_add_computation(optic_module_t *m, const char *name, optic_comp_id *out) {
  if (m == NULL || name == NULL || out == NULL || name[0] == '\0') {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "add_computation: NULL or empty argument");
  }
  if (graph_names_contains(&m->comp_names, name)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "add_computation: a computation named '%.64s' exists", name);
  }
  if (m->n_comps == m->cap_comps) {
    int32_t cap = m->cap_comps ? m->cap_comps * 2 : 4;
    optic_computation *c = realloc(m->comps, (size_t)cap * sizeof *c);
    if (c == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "add_computation: out of memory");
    m->comps = c;
    m->cap_comps = cap;
  }
  optic_computation *c = &m->comps[m->n_comps];
  memset(c, 0, sizeof *c);
  c->name = strdup(name);
  if (c->name == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "add_computation: out of memory");
  const char *stored;
  if (graph_names_insert(&m->comp_names, name, &stored) != OPTIC_OK) {
    free(c->name);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "add_computation: out of memory");
  }
  c->root = OPTIC_NO_NODE;
  *out = m->n_comps++;
  if (m->entry < 0) m->entry = *out;
  return OPTIC_OK;
}

optic_status optic_module_set_entry(optic_module_t *m, optic_comp_id comp) {
  optic_status st = graph_check_comp(m, comp, "set_entry");
  if (st != OPTIC_OK) return st;
  m->entry = comp;
  return OPTIC_OK;
}

optic_comp_id optic_module_entry(const optic_module_t *m) { return m ? m->entry : -1; }
int32_t optic_module_computation_count(const optic_module_t *m) { return m ? m->n_comps : 0; }

const char *optic_computation_name(const optic_module_t *m, optic_comp_id comp) {
  return (m && comp >= 0 && comp < m->n_comps) ? m->comps[comp].name : NULL;
}

const optic_instr *graph_instr(const optic_module_t *m, optic_node_id id) {
  return (m && id >= 0 && id < m->n_instrs && !m->instrs[id].removed) ? &m->instrs[id] : NULL;
}

void graph_compact(optic_module_t *m, optic_comp_id comp) {
  optic_computation *c = &m->comps[comp];
  if (!c->has_removed) return;
  int32_t k = 0;
  for (int32_t i = 0; i < c->n_instrs; i++) {
    if (!m->instrs[c->instrs[i]].removed) c->instrs[k++] = c->instrs[i];
  }
  c->n_instrs = k;
  c->has_removed = false;
}

optic_status graph_check_operand(const optic_module_t *m, optic_comp_id comp, optic_node_id id, const char *op,
                                 int32_t index) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: operand %d is id %d, which does not exist%s", op, (int)index,
                      (int)id, (m && id >= 0 && id < m->n_instrs) ? " (it was removed)" : "");
  }
  if (in->comp != comp) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: operand %d (%s) belongs to computation '%s', not '%s'", op,
                      (int)index, in->name, m->comps[in->comp].name, m->comps[comp].name);
  }
  return OPTIC_OK;
}

optic_status optic_computation_set_root(optic_module_t *m, optic_comp_id comp, optic_node_id root) {
  optic_status st = graph_check_comp(m, comp, "set_root");
  if (st == OPTIC_OK) st = graph_check_operand(m, comp, root, "set_root", 0);
  if (st != OPTIC_OK) return st;
  m->comps[comp].root = root;
  return OPTIC_OK;
}

optic_node_id optic_computation_root(const optic_module_t *m, optic_comp_id comp) {
  return (m && comp >= 0 && comp < m->n_comps) ? m->comps[comp].root : OPTIC_NO_NODE;
}

int32_t optic_computation_parameter_count(const optic_module_t *m, optic_comp_id comp) {
  return (m && comp >= 0 && comp < m->n_comps) ? m->comps[comp].n_params : 0;
}

optic_node_id optic_computation_parameter(const optic_module_t *m, optic_comp_id comp, int32_t i) {
  if (m == NULL || comp < 0 || comp >= m->n_comps || i < 0 || i >= m->comps[comp].n_params) return OPTIC_NO_NODE;
  return m->comps[comp].params[i];
}

/* Room for `more` users beyond those `of` has. users and user_slot share
 * one block (ids, then slots, each cap_users long): growing it moves the
 * slots up to their new offset. */
static optic_status reserve_users(optic_instr *of, int32_t more) {
  if (more <= of->cap_users - of->n_users) return OPTIC_OK;
  if (more > INT32_MAX - of->n_users) return optic_fail(OPTIC_ERR_OVERFLOW, "graph: a user list would overflow");
  int32_t need = of->n_users + more, cap = of->cap_users ? of->cap_users : 4;
  while (cap < need) cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
  _Static_assert(sizeof(optic_node_id) == sizeof(int32_t), "user_slot shares the users allocation");
  optic_node_id *u = realloc(of->users, 2 * (size_t)cap * sizeof *u);
  if (u == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "graph: cannot grow a user list");
  memmove(u + cap, u + of->cap_users, (size_t)of->n_users * sizeof *u);
  of->users = u;
  of->user_slot = u + cap;
  of->cap_users = cap;
  return OPTIC_OK;
}

/* Lists `user` (through its operand slot `slot`) as a user of `of` and
 * returns the entry's index; room must be reserved. The caller knows user is
 * not listed yet (each user is listed once, however many operands it takes
 * from `of`). */
static int32_t push_user(optic_instr *of, optic_node_id user, int32_t slot) {
  int32_t at = of->n_users++;
  of->users[at] = user;
  of->user_slot[at] = slot;
  return at;
}

/* Drops entry `at` of of's user list in O(1): the last entry moves into the
 * hole and the slot that lists it learns its new index. */
static void remove_user_at(optic_module_t *m, optic_instr *of, int32_t at) {
  int32_t last = --of->n_users;
  if (at == last) return;
  of->users[at] = of->users[last];
  of->user_slot[at] = of->user_slot[last];
  m->instrs[of->users[at]].user_pos[of->user_slot[at]] = at;
}

/* A name the module already has becomes unique as XLA's NameUniquer makes
 * it: a numeric suffix ".N" (a '.' that is neither first nor last, digits
 * after it) is split off, and the stem gets ".k" for the smallest k >= 1 that
 * is free ("b" -> "b.1", "b.1" -> "b.2" when b.1 exists). */
static void uniquify(const optic_module_t *m, const char *want, char *buf, size_t size) {
  size_t n = strlen(want), stem = n;
  const char *dot = strrchr(want, '.');
  if (dot != NULL && dot > want && dot[1] != '\0' && strspn(dot + 1, "0123456789") == strlen(dot + 1))
    stem = (size_t)(dot - want);
  if (stem + 21 >= size) stem = size - 22; /* room for ".<k>" (names are at most size - 1 anyway) */
  for (int64_t k = 1;; k++) {
    snprintf(buf, size, "%.*s.%lld", (int)stem, want, (long long)k);
    if (!graph_names_contains(&m->names, buf)) return;
  }
}

/* Picks the instruction's name without changing the module: the caller's
 * (validated; made unique when taken) or "<opcode>.<k>" for the first free k. */
static optic_status choose_name(const optic_module_t *m, const char *want, optic_opcode op, char *buf, size_t size) {
  if (want != NULL) {
    if (want[0] == '\0' || strlen(want) >= size) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: instruction names must have 1 to %zu characters",
                        optic_opcode_name(op), size - 1);
    }
    if (graph_names_contains(&m->names, want)) uniquify(m, want, buf, size);
    else snprintf(buf, size, "%s", want);
    return OPTIC_OK;
  }
  for (int64_t k = m->n_instrs;; k++) {
    snprintf(buf, size, "%s.%lld", optic_opcode_name(op), (long long)k);
    if (!graph_names_contains(&m->names, buf)) return OPTIC_OK;
  }
}

/* long: all room is reserved before anything is linked, so a failure leaves the module unchanged */
optic_status graph_add_instr(optic_module_t *m, optic_comp_id comp, const optic_instr_proto *p, const char *name,
                             optic_node_id *out) {
  const char *op = optic_opcode_name(p->op);
  optic_status st = graph_check_comp(m, comp, op);
  if (st != OPTIC_OK) return st;
  for (int32_t i = 0; i < p->n_operands; i++) {
    if ((st = graph_check_operand(m, comp, p->operands[i], op, i)) != OPTIC_OK) return st;
  }
  if (m->n_instrs == INT32_MAX) return optic_fail(OPTIC_ERR_OVERFLOW, "%s: module has 2^31-1 instructions", op);
  char name_buf[257];
  if ((st = choose_name(m, name, p->op, name_buf, sizeof name_buf)) != OPTIC_OK) return st;
  optic_computation *c = &m->comps[comp];
  if (m->n_instrs == m->cap_instrs) {
    int32_t cap = m->cap_instrs ? (m->cap_instrs > INT32_MAX / 2 ? INT32_MAX : m->cap_instrs * 2) : 64;
    optic_instr *in = realloc(m->instrs, (size_t)cap * sizeof *in);
    if (in == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: cannot grow the instruction table", op);
    m->instrs = in;
    m->cap_instrs = cap;
  }
  if (c->head + c->n_instrs == c->cap_instrs) {
    if (c->head > 0) { /* room at the front: slide the list back to the start */
      optic_node_id *base = c->instrs - c->head;
      memmove(base, c->instrs, (size_t)c->n_instrs * sizeof *base);
      c->instrs = base;
      c->head = 0;
    } else {
      int32_t cap = c->cap_instrs ? c->cap_instrs * 2 : 16;
      optic_node_id *ids = realloc(c->instrs, (size_t)cap * sizeof *ids);
      if (ids == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: cannot grow a computation", op);
      c->instrs = ids;
      c->cap_instrs = cap;
    }
  }
  if (p->op == OPTIC_OP_PARAMETER && p->param_number >= c->cap_params) {
    /* Only capacity grows here; n_params changes when the instruction is committed. */
    optic_node_id *ps = realloc(c->params, (size_t)(p->param_number + 1) * sizeof *ps);
    if (ps == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "parameter: out of memory");
    c->params = ps;
    c->cap_params = p->param_number + 1;
  }

  if (p->n_calls < 0 || p->n_calls > OPTIC_MAX_CALLS) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %d called computations (at most %d)", op, (int)p->n_calls,
                      OPTIC_MAX_CALLS);
  }
  optic_instr in = {.op = p->op, .comp = comp, .cmp = p->cmp, .n_calls = p->n_calls};
  optic_node_id id = m->n_instrs;
  if ((st = graph_type_clone(&p->type, &in.type)) != OPTIC_OK) return st;
  if (p->n_operands > 0) {
    _Static_assert(sizeof(optic_node_id) == sizeof(int32_t), "user_pos shares the operands allocation");
    in.operands = malloc(2 * (size_t)p->n_operands * sizeof *in.operands);
    if (in.operands == NULL) goto oom;
    memcpy(in.operands, p->operands, (size_t)p->n_operands * sizeof *in.operands);
    in.user_pos = in.operands + p->n_operands;
    in.n_operands = p->n_operands;
  }
  if (p->n_ints > 0) {
    in.ints = malloc((size_t)p->n_ints * sizeof *in.ints);
    if (in.ints == NULL) goto oom;
    memcpy(in.ints, p->ints, (size_t)p->n_ints * sizeof *in.ints);
    in.n_ints = p->n_ints;
  }
  if (p->n_calls > 0) {
    in.calls = malloc((size_t)p->n_calls * sizeof *in.calls);
    if (in.calls == NULL) goto oom;
    memcpy(in.calls, p->calls, (size_t)p->n_calls * sizeof *in.calls);
  }
  if (p->data_bytes > 0) {
    in.data = malloc(p->data_bytes);
    if (in.data == NULL) goto oom;
    memcpy(in.data, p->data, p->data_bytes);
    in.data_bytes = p->data_bytes;
  }
  /* Room first, so that linking below cannot fail half-way. */
  for (int32_t i = 0; i < in.n_operands; i++) {
    if ((st = reserve_users(&m->instrs[in.operands[i]], 1)) != OPTIC_OK) goto fail;
  }
  if ((st = graph_names_insert(&m->names, name_buf, &in.name)) != OPTIC_OK) goto fail;
  for (int32_t i = 0; i < in.n_operands; i++) {
    /* id is new: it is listed already only if an earlier operand was this
     * same instruction, and then it was appended last. */
    optic_instr *of = &m->instrs[in.operands[i]];
    in.user_pos[i] = (of->n_users > 0 && of->users[of->n_users - 1] == id) ? -1 : push_user(of, id, i);
  }
  m->instrs[id] = in;
  m->n_instrs++;
  c->instrs[c->n_instrs++] = id;
  if (p->op == OPTIC_OP_PARAMETER) {
    for (int32_t i = c->n_params; i < p->param_number; i++) c->params[i] = OPTIC_NO_NODE;
    if (p->param_number >= c->n_params) c->n_params = p->param_number + 1;
    c->params[p->param_number] = id;
  }
  *out = id;
  return OPTIC_OK;
oom:
  st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
fail:
  graph_type_release(&in.type);
  free(in.operands);
  free(in.ints);
  free(in.calls);
  free(in.data);
  return st;
}

/* ---- read accessors: invalid ids give neutral values, never a crash */

optic_opcode optic_node_opcode(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->op : OPTIC_OPCODE_COUNT_;
}
const optic_type *optic_node_type(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? &in->type : NULL;
}
const char *optic_node_name(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->name : NULL;
}
optic_comp_id optic_node_computation(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->comp : -1;
}
int32_t optic_node_operand_count(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->n_operands : 0;
}
optic_node_id optic_node_operand(const optic_module_t *m, optic_node_id id, int32_t i) {
  const optic_instr *in = graph_instr(m, id);
  return (in && i >= 0 && i < in->n_operands) ? in->operands[i] : OPTIC_NO_NODE;
}
int32_t optic_node_user_count(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->n_users : 0;
}
optic_node_id optic_node_user(const optic_module_t *m, optic_node_id id, int32_t i) {
  const optic_instr *in = graph_instr(m, id);
  return (in && i >= 0 && i < in->n_users) ? in->users[i] : OPTIC_NO_NODE;
}
const int64_t *optic_node_dims(const optic_module_t *m, optic_node_id id, int32_t *count) {
  const optic_instr *in = graph_instr(m, id);
  if (count) *count = in ? in->n_ints : 0;
  return in ? in->ints : NULL;
}
optic_compare_dir optic_node_compare_dir(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->cmp : OPTIC_CMP_EQ;
}
int32_t optic_node_called_count(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in ? in->n_calls : 0;
}
optic_comp_id optic_node_called(const optic_module_t *m, optic_node_id id, int32_t i) {
  const optic_instr *in = graph_instr(m, id);
  return (in && i >= 0 && i < in->n_calls) ? in->calls[i] : -1;
}
const void *optic_node_constant_data(const optic_module_t *m, optic_node_id id, size_t *bytes) {
  const optic_instr *in = graph_instr(m, id);
  bool is_const = in && in->op == OPTIC_OP_CONSTANT;
  if (bytes) *bytes = is_const ? in->data_bytes : 0;
  return is_const ? in->data : NULL;
}

/* ------------------------------------------------------------ mutation */

void graph_compact_all(optic_module_t *m) {
  for (optic_comp_id c = 0; m && c < m->n_comps; c++) graph_compact(m, c);
}

const optic_node_id *graph_instructions(optic_module_t *m, optic_comp_id comp, int32_t *count) {
  if (count) *count = 0;
  if (m == NULL || comp < 0 || comp >= m->n_comps) return NULL;
  graph_compact(m, comp);
  if (count) *count = m->comps[comp].n_instrs;
  return m->comps[comp].instrs;
}

/* Reads only: public calls leave every computation compact (graph_compact_all). */
const optic_node_id *optic_computation_instructions(const optic_module_t *m, optic_comp_id comp, int32_t *count) {
  if (count) *count = 0;
  if (m == NULL || comp < 0 || comp >= m->n_comps) return NULL;
  if (count) *count = m->comps[comp].n_instrs;
  return m->comps[comp].instrs;
}

optic_status optic_node_replace_all_uses(optic_module_t *m, optic_node_id old_id, optic_node_id new_id) {
  const optic_instr *o = graph_instr(m, old_id), *n = graph_instr(m, new_id);
  if (o == NULL || n == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "replace_all_uses: instruction %d or %d does not exist", (int)old_id,
                      (int)new_id);
  }
  if (o->comp != n->comp) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "replace_all_uses: %s and %s are in different computations", o->name,
                      n->name);
  }
  if (!optic_type_equal(&o->type, &n->type)) {
    char b1[TYPE_BUF], b2[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "replace_all_uses: %s has type %s but %s has %s", o->name,
                      graph_type_str(&o->type, b1, sizeof b1), n->name, graph_type_str(&n->type, b2, sizeof b2));
  }
  if (old_id == new_id) return OPTIC_OK;
  optic_instr *old_in = &m->instrs[old_id], *new_in = &m->instrs[new_id];
  /* Reserved first, so nothing below can fail half-way. */
  optic_status st = reserve_users(new_in, old_in->n_users);
  if (st != OPTIC_OK) return st;
  /* Users of old that new itself feeds into would form a cycle if new used
   * old; a user equal to new keeps its operand (new cannot use itself). */
  int32_t new_keeps = -1; /* new's slot listed in old's users, if new uses old */
  for (int32_t u = 0; u < old_in->n_users; u++) {
    optic_node_id user = old_in->users[u];
    int32_t slot = old_in->user_slot[u];
    if (user == new_id) {
      new_keeps = slot;
      continue;
    }
    optic_instr *ui = &m->instrs[user];
    bool listed = false; /* user already took new as another operand */
    for (int32_t i = 0; i < ui->n_operands; i++) {
      if (ui->operands[i] == new_id) listed |= ui->user_pos[i] >= 0;
      else if (ui->operands[i] == old_id) ui->operands[i] = new_id;
    }
    ui->user_pos[slot] = listed ? -1 : push_user(new_in, user, slot);
  }
  old_in->n_users = 0;
  if (new_keeps >= 0) new_in->user_pos[new_keeps] = push_user(old_in, new_id, new_keeps);
  optic_computation *c = &m->comps[old_in->comp];
  if (c->root == old_id) c->root = new_id;
  return OPTIC_OK;
}

/* Drops id from its computation's list, looking from both ends and closing
 * the gap from the nearer one: O(min(position, ids after it)), so removing
 * oldest first or newest first costs O(1) per id. */
static void list_drop(optic_computation *c, optic_node_id id) {
  int32_t n = c->n_instrs, pos = -1;
  for (int32_t i = 0, j = n - 1; i <= j; i++, j--) {
    if (c->instrs[i] == id) pos = i;
    else if (c->instrs[j] == id) pos = j;
    if (pos >= 0) break;
  }
  if (pos < 0) return;
  if (pos < n - 1 - pos) {
    memmove(c->instrs + 1, c->instrs, (size_t)pos * sizeof *c->instrs);
    c->instrs++;
    c->head++;
  } else {
    memmove(c->instrs + pos, c->instrs + pos + 1, (size_t)(n - 1 - pos) * sizeof *c->instrs);
  }
  c->n_instrs--;
}

optic_status optic_node_remove(optic_module_t *m, optic_node_id id) {
  if (m != NULL && id >= 0 && id < m->n_instrs) graph_compact(m, m->instrs[id].comp);
  optic_status st = graph_node_remove(m, id);
  if (st != OPTIC_OK) return st;
  optic_computation *c = &m->comps[m->instrs[id].comp];
  list_drop(c, id);
  c->has_removed = false;
  return OPTIC_OK;
}

optic_status graph_node_remove(optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "remove: instruction %d does not exist", (int)id);
  if (in->n_users > 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "remove: %s still has %d user(s), e.g. %s", in->name,
                      (int)in->n_users, m->instrs[in->users[0]].name);
  }
  optic_computation *c = &m->comps[in->comp];
  if (c->root == id) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "remove: %s is the root of '%s'", in->name, c->name);
  if (in->op == OPTIC_OP_PARAMETER) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "remove: %s is a parameter of '%s'", in->name, c->name);
  }
  optic_instr *mi = &m->instrs[id];
  for (int32_t i = 0; i < mi->n_operands; i++) {
    if (mi->user_pos[i] >= 0) remove_user_at(m, &m->instrs[mi->operands[i]], mi->user_pos[i]);
  }
  mi->removed = true;
  c->has_removed = true;
  return OPTIC_OK;
}
