/* HLO's input_output_alias on a module: which output leaf of the entry may
 * reuse which parameter's buffer (JAX's donated arguments). Kept, checked,
 * copied with the module and printed; the runtime does not run in place, so
 * this is description only (optic_program_output reports it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "graph/internal.h"

static int path_text(const int32_t *p, int32_t n, char *buf, size_t size) {
  int k = snprintf(buf, size, "{");
  for (int32_t i = 0; i < n; i++)
    k += snprintf(buf + k, size > (size_t)k ? size - (size_t)k : 0, "%s%d", i ? "," : "", p[i]);
  return k + snprintf(buf + k, size > (size_t)k ? size - (size_t)k : 0, "}");
}

/* The array leaf of t at path, or NULL. */
static const optic_type *leaf_at(const optic_type *t, const int32_t *path, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (!optic_type_is_tuple(t) || path[i] < 0 || path[i] >= t->tuple_size) return NULL;
    t = &t->elements[path[i]];
  }
  return optic_type_is_tuple(t) ? NULL : t;
}

optic_status graph_set_io_aliases(optic_module_t *m, const graph_io_alias *a, int32_t n) {
  const char *op = "input_output_alias";
  if (n > 0 && m->entry < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: the module has no entry computation", op);
  const optic_computation *e = n > 0 ? &m->comps[m->entry] : NULL;
  for (int32_t i = 0; i < n; i++) {
    char out[96], par[96];
    path_text(a[i].out_path, a[i].out_len, out, sizeof out);
    path_text(a[i].param_path, a[i].param_len, par, sizeof par);
    if (e->root < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: the entry computation has no root", op);
    const optic_type *o = leaf_at(&m->instrs[e->root].type, a[i].out_path, a[i].out_len);
    if (o == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: output %s is not an array leaf of the entry's result", op,
                        out);
    if (a[i].param < 0 || a[i].param >= e->n_params || e->params[a[i].param] < 0)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: output %s: the entry has no parameter %d (it has %d)", op, out,
                        a[i].param, e->n_params);
    const optic_type *p = leaf_at(&m->instrs[e->params[a[i].param]].type, a[i].param_path, a[i].param_len);
    if (p == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: output %s: %s is not an array leaf of parameter %d", op, out,
                        par, a[i].param);
    if (!optic_type_equal(o, p)) {
      char to[64], tp[64];
      optic_type_format(o, to, sizeof to);
      optic_type_format(p, tp, sizeof tp);
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: output %s is %s but parameter %d %s is %s", op, out, to,
                        a[i].param, par, tp);
    }
    for (int32_t j = 0; j < i; j++)
      if (a[j].out_len == a[i].out_len &&
          memcmp(a[j].out_path, a[i].out_path, sizeof(int32_t) * (size_t)a[i].out_len) == 0)
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: output %s is aliased twice", op, out);
  }
  graph_io_alias *copy = NULL;
  if (n > 0 && (copy = malloc(sizeof *copy * (size_t)n)) == NULL)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  if (n > 0) memcpy(copy, a, sizeof *copy * (size_t)n);
  free(m->aliases);
  m->aliases = copy;
  m->n_aliases = n;
  return OPTIC_OK;
}

void graph_print_io_aliases(const optic_module_t *m, struct optic_strbuf *s) {
  if (m->n_aliases == 0) return;
  optic_strbuf_printf(s, ", input_output_alias={ ");
  for (int32_t i = 0; i < m->n_aliases; i++) {
    const graph_io_alias *a = &m->aliases[i];
    char out[96], par[96];
    path_text(a->out_path, a->out_len, out, sizeof out);
    path_text(a->param_path, a->param_len, par, sizeof par);
    optic_strbuf_printf(s, "%s%s: (%d, %s, %s)", i ? ", " : "", out, a->param, par,
                        a->must ? "must-alias" : "may-alias");
  }
  optic_strbuf_printf(s, " }");
}
