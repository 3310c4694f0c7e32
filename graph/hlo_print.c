/* Prints a module as XLA HLO text: callees before callers, the entry last
 * and marked ENTRY, ROOT on each computation's root, attributes in XLA's
 * spelling. Shapes are printed without layouts (everything is row-major). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "graph/internal.h"

static const char *const dir_names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static void print_type(optic_strbuf *s, const optic_type *t) {
  char buf[512];
  optic_type_format(t, buf, sizeof buf);
  optic_strbuf_printf(s, "%s", buf);
}

static void print_int_list(optic_strbuf *s, const int64_t *v, int32_t n) {
  optic_strbuf_printf(s, "{");
  for (int32_t i = 0; i < n; i++) optic_strbuf_printf(s, i ? ",%lld" : "%lld", (long long)v[i]);
  optic_strbuf_printf(s, "}");
}

static void print_element(optic_strbuf *s, optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32:
    case OPTIC_F64: {
      double v;
      if (dt == OPTIC_F32) {
        float f;
        memcpy(&f, p, 4);
        v = f;
      } else {
        memcpy(&v, p, 8);
      }
      if (isnan(v)) optic_strbuf_printf(s, "nan");
      else if (isinf(v)) optic_strbuf_printf(s, v < 0 ? "-inf" : "inf");
      else optic_strbuf_printf(s, "%.*g", dt == OPTIC_F32 ? 9 : 17, v);
      break;
    }
    case OPTIC_S32: {
      int32_t v;
      memcpy(&v, p, 4);
      optic_strbuf_printf(s, "%d", (int)v);
      break;
    }
    case OPTIC_U8: optic_strbuf_printf(s, "%u", (unsigned)*p); break;
    case OPTIC_PRED: optic_strbuf_printf(s, *p ? "true" : "false"); break;
    default: optic_strbuf_printf(s, "?"); break;
  }
}

/* Nested braces by dimension, in row-major order. */
static void print_literal(optic_strbuf *s, const optic_type *t, const unsigned char *data, int32_t dim,
                          size_t *index) {
  size_t esize = optic_dtype_size(t->dtype);
  if (dim == t->shape.rank) {
    print_element(s, t->dtype, data + *index * esize);
    (*index)++;
    return;
  }
  optic_strbuf_printf(s, "{");
  for (int64_t i = 0; i < t->shape.dims[dim]; i++) {
    if (i) optic_strbuf_printf(s, ", ");
    print_literal(s, t, data, dim + 1, index);
  }
  optic_strbuf_printf(s, "}");
}

static void print_attributes(optic_strbuf *s, const optic_module_t *m, const optic_instr *in) {
  int32_t r = in->n_operands ? optic_node_type(m, in->operands[0])->shape.rank : 0;
  switch (in->op) {
    case OPTIC_OP_IOTA: optic_strbuf_printf(s, ", iota_dimension=%lld", (long long)in->ints[0]); break;
    case OPTIC_OP_COMPARE: optic_strbuf_printf(s, ", direction=%s", dir_names[in->cmp]); break;
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_TRANSPOSE:
    case OPTIC_OP_REVERSE:
    case OPTIC_OP_REDUCE:
    case OPTIC_OP_MAP:
    case OPTIC_OP_CONCATENATE:
      optic_strbuf_printf(s, ", dimensions=");
      print_int_list(s, in->ints, in->n_ints);
      break;
    case OPTIC_OP_SLICE:
      optic_strbuf_printf(s, ", slice={");
      for (int32_t i = 0; i < r; i++) {
        optic_strbuf_printf(s, "%s[%lld:%lld:%lld]", i ? ", " : "", (long long)in->ints[i], (long long)in->ints[r + i],
                            (long long)in->ints[2 * r + i]);
      }
      optic_strbuf_printf(s, "}");
      break;
    case OPTIC_OP_PAD:
      optic_strbuf_printf(s, ", padding=");
      for (int32_t i = 0; i < r; i++) {
        optic_strbuf_printf(s, "%s%lld_%lld", i ? "x" : "", (long long)in->ints[3 * i], (long long)in->ints[3 * i + 1]);
        if (in->ints[3 * i + 2]) optic_strbuf_printf(s, "_%lld", (long long)in->ints[3 * i + 2]);
      }
      if (r == 0) optic_strbuf_printf(s, "{}");
      break;
    case OPTIC_OP_GET_TUPLE_ELEMENT: optic_strbuf_printf(s, ", index=%lld", (long long)in->ints[0]); break;
    default: break;
  }
  if (in->called >= 0) optic_strbuf_printf(s, ", to_apply=%s", m->comps[in->called].name);
}

static void print_instruction(optic_strbuf *s, const optic_module_t *m, const optic_computation *c, optic_node_id id) {
  const optic_instr *in = &m->instrs[id];
  optic_strbuf_printf(s, "  %s%s = ", c->root == id ? "ROOT " : "", in->name);
  print_type(s, &in->type);
  optic_strbuf_printf(s, " %s(", optic_opcode_name(in->op));
  if (in->op == OPTIC_OP_PARAMETER) {
    optic_strbuf_printf(s, "%lld", (long long)in->ints[0]);
  } else if (in->op == OPTIC_OP_CONSTANT) {
    size_t index = 0;
    print_literal(s, &in->type, in->data, 0, &index);
  }
  for (int32_t i = 0; i < in->n_operands; i++) {
    optic_strbuf_printf(s, "%s%s", i ? ", " : "", m->instrs[in->operands[i]].name);
  }
  optic_strbuf_printf(s, ")");
  print_attributes(s, m, in);
  optic_strbuf_printf(s, "\n");
}

/* Depth-first over `called` edges so callees print first. */
static void print_computation(optic_strbuf *s, const optic_module_t *m, optic_comp_id cid, unsigned char *state) {
  if (state[cid]) return; /* 1: in progress (a cycle cannot be built), 2: printed */
  state[cid] = 1;
  const optic_computation *c = &m->comps[cid];
  for (int32_t i = 0; i < c->n_instrs; i++) {
    optic_comp_id callee = m->instrs[c->instrs[i]].called;
    if (callee >= 0) print_computation(s, m, callee, state);
  }
  if (cid == m->entry) return; /* printed last by the caller */
  optic_strbuf_printf(s, "\n%s {\n", c->name);
  for (int32_t i = 0; i < c->n_instrs; i++) print_instruction(s, m, c, c->instrs[i]);
  optic_strbuf_printf(s, "}\n");
  state[cid] = 2;
}

optic_status optic_module_to_hlo_text(const optic_module_t *m, char **out) {
  if (m == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "to_hlo_text: NULL argument");
  optic_strbuf s = {0};
  unsigned char *state = calloc((size_t)m->n_comps + 1, 1);
  if (state == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "to_hlo_text: out of memory");
  optic_strbuf_printf(&s, "HloModule %s\n", m->name);
  for (optic_comp_id c = 0; c < m->n_comps; c++) print_computation(&s, m, c, state);
  if (m->entry >= 0) {
    const optic_computation *e = &m->comps[m->entry];
    optic_strbuf_printf(&s, "\nENTRY %s {\n", e->name);
    for (int32_t i = 0; i < e->n_instrs; i++) print_instruction(&s, m, e, e->instrs[i]);
    optic_strbuf_printf(&s, "}\n");
  }
  free(state);
  return optic_strbuf_take(&s, out);
}
