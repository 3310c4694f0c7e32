/* The program's signature (include/optic/compile.h "Signature"): its inputs
 * and outputs as optic_program_run takes them — array leaves of the entry's
 * parameters and result, depth first — with names, types, and the
 * input_output_alias of the module. Built once by optic_compile from the
 * module it was given (before any pass renames or fuses anything). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "graph/program_internal.h"

typedef struct sig_builder {
  optic_program_io *io;
  char **owned; /* 2 per leaf: name, index (what io's const pointers point at) */
  int32_t n, cap;
  int32_t (*paths)[OPTIC_MAX_RANK + 1]; /* per leaf: [0] depth, then the index */
  optic_status st;
} sig_builder;

static char *path_string(const int32_t *path, int32_t n) {
  char buf[OPTIC_MAX_RANK * 12 + 4];
  int k = snprintf(buf, sizeof buf, "{");
  for (int32_t i = 0; i < n; i++) k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%d", i ? "," : "", path[i]);
  snprintf(buf + k, sizeof buf - (size_t)k, "}");
  return strdup(buf);
}

/* The instruction that makes the leaf at path of id's value: through tuple
 * instructions as far as they go. */
static optic_node_id producer(const optic_module_t *m, optic_node_id id, const int32_t *path, int32_t n) {
  for (int32_t i = 0; i < n && m->instrs[id].op == OPTIC_OP_TUPLE && path[i] < m->instrs[id].n_operands; i++)
    id = m->instrs[id].operands[path[i]];
  return id;
}

static void add_leaves(sig_builder *b, const optic_module_t *m, optic_node_id id, const optic_type *t, int32_t *path,
                       int32_t depth, int32_t parameter) {
  if (b->st != OPTIC_OK) return;
  if (optic_type_is_tuple(t)) {
    for (int32_t i = 0; i < t->tuple_size && depth < OPTIC_MAX_RANK; i++) {
      path[depth] = i;
      add_leaves(b, m, id, &t->elements[i], path, depth + 1, parameter);
    }
    return;
  }
  if (b->n == b->cap) {
    int32_t cap = b->cap ? b->cap * 2 : 8;
    optic_program_io *io = realloc(b->io, sizeof *io * (size_t)cap);
    void *paths = io ? realloc(b->paths, sizeof *b->paths * (size_t)cap) : NULL;
    char **owned = paths ? realloc(b->owned, sizeof *owned * 2 * (size_t)cap) : NULL;
    if (io) b->io = io;
    if (paths) b->paths = paths;
    if (owned) b->owned = owned;
    if (io == NULL || paths == NULL || owned == NULL) {
      b->st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "compile: out of memory (signature)");
      return;
    }
    b->cap = cap;
  }
  optic_program_io *o = &b->io[b->n];
  memset(o, 0, sizeof *o);
  o->name = b->owned[2 * b->n] = strdup(m->instrs[producer(m, id, path, depth)].name);
  o->index = b->owned[2 * b->n + 1] = path_string(path, depth);
  o->dtype = t->dtype;
  o->shape = t->shape;
  o->parameter = parameter;
  o->alias = -1;
  o->alias_kind = OPTIC_IO_ALIAS_NONE;
  b->paths[b->n][0] = depth;
  memcpy(&b->paths[b->n][1], path, sizeof(int32_t) * (size_t)depth);
  b->n++;
  if (o->name == NULL || o->index == NULL)
    b->st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "compile: out of memory (signature)");
}

static int32_t find_leaf(const sig_builder *b, int32_t parameter, const int32_t *path, int32_t n) {
  for (int32_t i = 0; i < b->n; i++)
    if (b->io[i].parameter == parameter && b->paths[i][0] == n &&
        memcmp(&b->paths[i][1], path, sizeof(int32_t) * (size_t)n) == 0)
      return i;
  return -1;
}

void program_signature_free(optic_program_t *p) {
  for (int32_t i = 0; i < 2 * p->n_inputs; i++) free(p->sig_owned_in[i]);
  for (int32_t i = 0; i < 2 * p->n_outputs; i++) free(p->sig_owned_out[i]);
  free(p->sig_owned_in);
  free(p->sig_owned_out);
  p->sig_owned_in = p->sig_owned_out = NULL;
  free(p->inputs);
  free(p->outputs);
  p->inputs = p->outputs = NULL;
  p->n_inputs = p->n_outputs = 0;
}

optic_status program_signature_build(optic_program_t *p, const optic_module_t *m) {
  if (m->entry < 0) return OPTIC_OK;
  const optic_computation *e = &m->comps[m->entry];
  sig_builder in = {0}, out = {0};
  int32_t path[OPTIC_MAX_RANK];
  for (int32_t k = 0; k < e->n_params; k++)
    if (e->params[k] >= 0) add_leaves(&in, m, e->params[k], &m->instrs[e->params[k]].type, path, 0, k);
  if (e->root >= 0) add_leaves(&out, m, e->root, &m->instrs[e->root].type, path, 0, -1);
  optic_status st = in.st != OPTIC_OK ? in.st : out.st;
  for (int32_t a = 0; a < m->n_aliases && st == OPTIC_OK; a++) {
    const graph_io_alias *al = &m->aliases[a];
    int32_t o = find_leaf(&out, -1, al->out_path, al->out_len);
    int32_t i = find_leaf(&in, al->param, al->param_path, al->param_len);
    if (o < 0 || i < 0) continue; /* checked when the aliases were set */
    out.io[o].parameter = al->param;
    out.io[o].alias = i;
    out.io[o].alias_kind = al->must ? OPTIC_IO_ALIAS_MUST : OPTIC_IO_ALIAS_MAY;
    in.io[i].alias = o;
    in.io[i].alias_kind = out.io[o].alias_kind;
  }
  free(in.paths);
  free(out.paths);
  p->inputs = in.io, p->n_inputs = in.n, p->sig_owned_in = in.owned;
  p->outputs = out.io, p->n_outputs = out.n, p->sig_owned_out = out.owned;
  if (st != OPTIC_OK) program_signature_free(p);
  return st;
}

int32_t optic_program_input_count(const optic_program_t *p) { return p ? p->n_inputs : 0; }
int32_t optic_program_output_count(const optic_program_t *p) { return p ? p->n_outputs : 0; }

static optic_status get(const optic_program_t *p, int32_t i, optic_program_io *out, bool input) {
  const char *what = input ? "program_input" : "program_output";
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  int32_t n = input ? p->n_inputs : p->n_outputs;
  if (i < 0 || i >= n)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: index %d, the program has %d %s", what, i, n,
                      input ? "inputs" : "outputs");
  *out = input ? p->inputs[i] : p->outputs[i];
  return OPTIC_OK;
}

optic_status optic_program_input(const optic_program_t *p, int32_t i, optic_program_io *out) {
  return get(p, i, out, true);
}
optic_status optic_program_output(const optic_program_t *p, int32_t i, optic_program_io *out) {
  return get(p, i, out, false);
}
