/* Prints a module as XLA HLO text: callees before callers, the entry last
 * and marked ENTRY, ROOT on each computation's root, attributes in XLA's
 * spelling. Shapes are printed without layouts (everything is row-major). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "graph/hlo_print.h"
#include "graph/internal.h"

static const char *const dir_names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

/* Any length: a tuple of a training step's parameters prints to many KiB. */
static void print_type(optic_strbuf *s, const optic_type *t) {
  char buf[512];
  int n = optic_type_format(t, buf, sizeof buf);
  if (n < 0 || (size_t)n < sizeof buf) {
    optic_strbuf_printf(s, "%s", buf);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (big == NULL) { /* sticky error: the caller gets OUT_OF_MEMORY, not a truncated type */
    if (s->err == OPTIC_OK) s->err = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "hlo print: a %d-character type", n);
    return;
  }
  optic_type_format(t, big, (size_t)n + 1);
  optic_strbuf_printf(s, "%s", big);
  free(big);
}

static void print_int_list(optic_strbuf *s, const int64_t *v, int32_t n) {
  optic_strbuf_printf(s, "{");
  for (int32_t i = 0; i < n; i++) optic_strbuf_printf(s, i ? ",%lld" : "%lld", (long long)v[i]);
  optic_strbuf_printf(s, "}");
}

/* A half in the fewest digits that read back (strtod, then nearest even) to
 * the same bits, so printed modules round-trip exactly. */
static void print_half(optic_strbuf *s, optic_dtype dt, const unsigned char *p) {
  uint16_t h;
  memcpy(&h, p, 2);
  double v = (double)(dt == OPTIC_F16 ? optic_f16_to_f32(h) : optic_bf16_to_f32(h));
  if (isnan(v)) {
    optic_strbuf_printf(s, "nan");
    return;
  }
  if (isinf(v)) {
    optic_strbuf_printf(s, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[40];
  if (v == trunc(v) && fabs(v) < 1e15) { /* integers as XLA prints them: 65504, not 6.55e+04 */
    optic_strbuf_printf(s, "%.0f", v);
    return;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    double back = strtod(buf, NULL);
    uint16_t b = dt == OPTIC_F16 ? optic_f64_to_f16(back) : optic_f64_to_bf16(back);
    if (b == h) break;
  }
  optic_strbuf_printf(s, "%s", buf);
}

static void print_element(optic_strbuf *s, optic_dtype dt, const unsigned char *p) {
  if (optic_dtype_is_int(dt) && dt != OPTIC_S32 && dt != OPTIC_U8) {
    uint64_t u = 0;
    int bits = optic_dtype_int_bits(dt);
    memcpy(&u, p, (size_t)bits / 8);
    if (optic_dtype_is_signed_int(dt) && bits < 64 && ((u >> (bits - 1)) & 1u)) u |= ~0ull << bits;
    if (optic_dtype_is_signed_int(dt)) optic_strbuf_printf(s, "%lld", (long long)(int64_t)u);
    else optic_strbuf_printf(s, "%llu", (unsigned long long)u);
    return;
  }
  if (dt == OPTIC_F16 || dt == OPTIC_BF16) {
    print_half(s, dt, p);
    return;
  }
  switch (dt) {
    case OPTIC_F32:
    case OPTIC_F64: {
      double v;
      if (dt == OPTIC_F32) {
        float f;
        memcpy(&f, p, 4);
        v = (double)f;
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

/* A literal with no elements whose nested braces would still be many (the
 * dims before its first 0 multiply past 4096, e.g. f32[1000000000000,0]):
 * printed as "{}" (which the importer takes for any shape without elements)
 * so printing takes time by the module, not by a dimension's size. */
static bool empty_literal_is_long(const optic_shape *sh) {
  double braces = 1;
  for (int32_t d = 0; d < sh->rank; d++) {
    if (sh->dims[d] == 0) return braces > 4096;
    braces *= (double)sh->dims[d];
  }
  return false;
}

/* Nested braces by dimension, in row-major order. */
static void print_literal(optic_strbuf *s, const optic_type *t, const unsigned char *data, int32_t dim, size_t *index) {
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

/* window={size=AxB stride=... pad=lo_hixlo_hi lhs_dilate=... rhs_dilate=... rhs_reversal=...},
 * with the defaults left out as XLA does. */
static void print_window(optic_strbuf *s, const int64_t *w, int32_t rank) {
  static const char *const keys[] = {"size", "stride", "pad", NULL, "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  static const int64_t defaults[] = {-1, 1, 0, 0, 1, 1, 0};
  if (rank == 0) { /* a rank-0 reduce-window: XLA prints an empty window */
    optic_strbuf_printf(s, ", window={}");
    return;
  }
  optic_strbuf_printf(s, ", window={");
  bool first = true;
  for (int k = 0; k < 7; k++) {
    if (keys[k] == NULL) continue;
    bool all_default = k != 0;
    for (int32_t d = 0; d < rank; d++) {
      all_default &= w[7 * d + k] == defaults[k] && (k != 2 || w[7 * d + 3] == 0);
    }
    if (all_default) continue;
    optic_strbuf_printf(s, "%s%s=", first ? "" : " ", keys[k]);
    first = false;
    for (int32_t d = 0; d < rank; d++) {
      if (k == 2) {
        optic_strbuf_printf(s, "%s%lld_%lld", d ? "x" : "", (long long)w[7 * d + 2], (long long)w[7 * d + 3]);
      } else {
        optic_strbuf_printf(s, "%s%lld", d ? "x" : "", (long long)w[7 * d + k]);
      }
    }
  }
  optic_strbuf_printf(s, "}");
}

/* Convolution attributes (layout of ints: graph/internal.h). */
static void print_convolution(optic_strbuf *s, const optic_instr *in) {
  const int64_t *v = in->ints;
  int32_t ns = (int32_t)v[0], rank = ns + 2;
  if (ns > 0) print_window(s, v + 9 + 3 * ns, ns);
  char parts[3][OPTIC_MAX_RANK + 1];
  const char roles[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  for (int part = 0; part < 3; part++) {
    for (int32_t p = 0; p < rank; p++) {
      char c = '?';
      if (p == v[3 + 2 * part]) c = roles[part][0];
      if (p == v[4 + 2 * part]) c = roles[part][1];
      for (int32_t k = 0; k < ns; k++) {
        if (p == v[9 + 3 * k + part]) c = (char)('0' + k);
      }
      parts[part][p] = c;
    }
    parts[part][rank] = '\0';
  }
  optic_strbuf_printf(s, ", dim_labels=%s_%s->%s", parts[0], parts[1], parts[2]);
  if (v[1] != 1) optic_strbuf_printf(s, ", feature_group_count=%lld", (long long)v[1]);
  if (v[2] != 1) optic_strbuf_printf(s, ", batch_group_count=%lld", (long long)v[2]);
}

static void print_calls(optic_strbuf *s, const optic_module_t *m, const optic_instr *in) {
  if (in->n_calls == 0) return;
  switch (in->op) {
    case OPTIC_OP_WHILE:
      optic_strbuf_printf(s, ", condition=%s, body=%s", m->comps[in->calls[0]].name, m->comps[in->calls[1]].name);
      break;
    case OPTIC_OP_CONDITIONAL:
      if (in->ints[0]) { /* pred selector: XLA's true/false spelling */
        optic_strbuf_printf(s, ", true_computation=%s, false_computation=%s", m->comps[in->calls[0]].name,
                            m->comps[in->calls[1]].name);
        break;
      }
      optic_strbuf_printf(s, ", branch_computations={");
      for (int32_t k = 0; k < in->n_calls; k++)
        optic_strbuf_printf(s, "%s%s", k ? ", " : "", m->comps[in->calls[k]].name);
      optic_strbuf_printf(s, "}");
      break;
    case OPTIC_OP_FUSION: optic_strbuf_printf(s, ", calls=%s", m->comps[in->calls[0]].name); break;
    default: optic_strbuf_printf(s, ", to_apply=%s", m->comps[in->calls[0]].name); break;
  }
}

/* long: one switch over the opcodes, each printing its attributes in XLA's order */
static void print_attributes(optic_strbuf *s, const optic_module_t *m, const optic_instr *in) {
  int32_t r = in->n_operands ? optic_node_type(m, in->operands[0])->shape.rank : 0;
  switch (in->op) {
    case OPTIC_OP_IOTA: optic_strbuf_printf(s, ", iota_dimension=%lld", (long long)in->ints[0]); break;
    case OPTIC_OP_COMPARE: optic_strbuf_printf(s, ", direction=%s", dir_names[in->cmp]); break;
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
      optic_strbuf_printf(s, ", replica_groups={{");
      for (int64_t k = 0; k < in->ints[1]; k++) optic_strbuf_printf(s, "%s%lld", k ? "," : "", (long long)k);
      optic_strbuf_printf(s, "}}, dimensions={%lld}", (long long)in->ints[0]);
      break;
    case OPTIC_OP_COLLECTIVE_PERMUTE:
      optic_strbuf_printf(s, ", source_target_pairs={");
      for (int32_t k = 0; k + 1 < in->n_ints; k += 2) {
        optic_strbuf_printf(s, "%s{%lld,%lld}", k ? "," : "", (long long)in->ints[k], (long long)in->ints[k + 1]);
      }
      optic_strbuf_printf(s, "}");
      break;
    case OPTIC_OP_CUSTOM_CALL: optic_strbuf_printf(s, ", custom_call_target=\"%s\"", (const char *)in->data); break;
    case OPTIC_OP_RNG_BIT_GENERATOR: {
      static const char *const algs[] = {"rng_default", "rng_three_fry", "rng_philox"};
      optic_strbuf_printf(s, ", algorithm=%s", algs[in->ints[0] >= 0 && in->ints[0] <= 2 ? in->ints[0] : 0]);
      break;
    }
    case OPTIC_OP_OUTFEED: /* XLA writes the sent shape */
      optic_strbuf_printf(s, ", outfeed_shape=");
      print_type(s, optic_node_type(m, in->operands[0]));
      break;
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: {
      uint32_t eb = (uint32_t)in->ints[1];
      float e;
      memcpy(&e, &eb, 4);
      optic_strbuf_printf(s, ", epsilon=%.9g, feature_index=%lld", (double)e, (long long)in->ints[0]);
      break;
    }
    case OPTIC_OP_TOPK:
      optic_strbuf_printf(s, ", k=%lld, largest=%s", (long long)in->ints[0], in->ints[1] ? "true" : "false");
      break;
    case OPTIC_OP_SORT:
      optic_strbuf_printf(s, ", dimensions={%lld}%s", (long long)in->ints[0], in->ints[1] ? ", is_stable=true" : "");
      break;
    case OPTIC_OP_GATHER: {
      optic_gather_dims g;
      optic_node_gather_dims(m, (optic_node_id)(in - m->instrs), &g);
      optic_strbuf_printf(s, ", offset_dims=");
      print_int_list(s, g.offset_dims, g.n_offset_dims);
      optic_strbuf_printf(s, ", collapsed_slice_dims=");
      print_int_list(s, g.collapsed_slice_dims, g.n_collapsed);
      optic_strbuf_printf(s, ", start_index_map=");
      print_int_list(s, g.start_index_map, g.n_start_index_map);
      if (g.n_batching) {
        optic_strbuf_printf(s, ", operand_batching_dims=");
        print_int_list(s, g.operand_batching_dims, g.n_batching);
        optic_strbuf_printf(s, ", start_indices_batching_dims=");
        print_int_list(s, g.start_indices_batching_dims, g.n_batching);
      }
      optic_strbuf_printf(s, ", index_vector_dim=%lld, slice_sizes=", (long long)g.index_vector_dim);
      print_int_list(s, g.slice_sizes, r);
      break;
    }
    case OPTIC_OP_SCATTER: {
      optic_scatter_dims g;
      optic_node_scatter_dims(m, (optic_node_id)(in - m->instrs), &g);
      optic_strbuf_printf(s, ", update_window_dims=");
      print_int_list(s, g.update_window_dims, g.n_update_window_dims);
      optic_strbuf_printf(s, ", inserted_window_dims=");
      print_int_list(s, g.inserted_window_dims, g.n_inserted);
      optic_strbuf_printf(s, ", scatter_dims_to_operand_dims=");
      print_int_list(s, g.scatter_dims_to_operand_dims, g.n_scatter_dims_to_operand_dims);
      optic_strbuf_printf(s, ", index_vector_dim=%lld", (long long)g.index_vector_dim);
      break;
    }
    case OPTIC_OP_DYNAMIC_SLICE:
      optic_strbuf_printf(s, ", dynamic_slice_sizes=");
      print_int_list(s, in->ints, in->n_ints);
      break;
    case OPTIC_OP_REDUCE_PRECISION:
      optic_strbuf_printf(s, ", exponent_bits=%lld, mantissa_bits=%lld", (long long)in->ints[0],
                          (long long)in->ints[1]);
      break;
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
    case OPTIC_OP_FUSION: {
      static const char *const kinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};
      optic_strbuf_printf(s, ", kind=%s", kinds[in->ints[0]]);
      break;
    }
    case OPTIC_OP_ALL_REDUCE: {
      int64_t groups = in->ints[0], next = 1 + groups;
      optic_strbuf_printf(s, ", replica_groups={");
      for (int64_t g = 0; g < groups; g++) {
        optic_strbuf_printf(s, g ? ",{" : "{");
        for (int64_t k = 0; k < in->ints[1 + g]; k++)
          optic_strbuf_printf(s, k ? ",%lld" : "%lld", (long long)in->ints[next++]);
        optic_strbuf_printf(s, "}");
      }
      optic_strbuf_printf(s, "}");
      break;
    }
    case OPTIC_OP_REDUCE_WINDOW: print_window(s, in->ints, in->n_ints / 7); break;
    case OPTIC_OP_CONVOLUTION: print_convolution(s, in); break;
    case OPTIC_OP_DOT: {
      /* XLA prints only the non-empty lists, in this order. */
      static const char *const keys[] = {"lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims",
                                         "rhs_contracting_dims"};
      int64_t nb = in->ints[0], nc = in->ints[1];
      const int64_t *lists[4] = {in->ints + 2, in->ints + 2 + nb, in->ints + 2 + 2 * nb, in->ints + 2 + 2 * nb + nc};
      const int order[4] = {0, 2, 1, 3};
      for (int k = 0; k < 4; k++) {
        int64_t n = order[k] < 2 ? nb : nc;
        if (n == 0) continue;
        optic_strbuf_printf(s, ", %s=", keys[order[k]]);
        print_int_list(s, lists[order[k]], (int32_t)n);
      }
      break;
    }
    default: break;
  }
  print_calls(s, m, in);
}

static void print_instruction(optic_strbuf *s, const optic_module_t *m, const optic_computation *c, optic_node_id id,
                              const graph_print_hooks *h) {
  const optic_instr *in = &m->instrs[id];
  if (in->removed) return;
  optic_strbuf_printf(s, "  %s%s = ", c->root == id ? "ROOT " : "", in->name);
  print_type(s, &in->type);
  optic_strbuf_printf(s, " %s(", optic_opcode_name(in->op));
  if (in->op == OPTIC_OP_PARAMETER) {
    optic_strbuf_printf(s, "%lld", (long long)in->ints[0]);
  } else if (in->op == OPTIC_OP_CONSTANT) {
    size_t index = 0;
    if (empty_literal_is_long(&in->type.shape)) {
      optic_strbuf_printf(s, "{}");
    } else {
      print_literal(s, &in->type, in->data, 0, &index);
    }
  }
  for (int32_t i = 0; i < in->n_operands; i++) {
    optic_strbuf_printf(s, "%s%s", i ? ", " : "", m->instrs[in->operands[i]].name);
  }
  optic_strbuf_printf(s, ")");
  print_attributes(s, m, in);
  if (h && h->after_instruction) h->after_instruction(h->ctx, s, id);
  optic_strbuf_printf(s, "\n");
}

/* The computation's body: in the hooks' order if they give one, else in
 * creation order; then the closing brace and the hooks' footer. */
static void print_body(optic_strbuf *s, const optic_module_t *m, optic_comp_id cid, const graph_print_hooks *h) {
  const optic_computation *c = &m->comps[cid];
  int32_t n = 0;
  const optic_node_id *order = (h && h->order) ? h->order(h->ctx, cid, &n) : NULL;
  if (order) {
    for (int32_t i = 0; i < n; i++) print_instruction(s, m, c, order[i], h);
  } else {
    for (int32_t i = 0; i < c->n_instrs; i++) print_instruction(s, m, c, c->instrs[i], h);
  }
  optic_strbuf_printf(s, "}\n");
  if (h && h->after_computation) h->after_computation(h->ctx, s, cid);
}

/* Depth-first over call edges so callees print first. */
static void print_computation(optic_strbuf *s, const optic_module_t *m, optic_comp_id cid, unsigned char *state,
                              const graph_print_hooks *h) {
  if (state[cid]) return; /* 1: in progress (a cycle cannot be built), 2: printed */
  state[cid] = 1;
  const optic_computation *c = &m->comps[cid];
  for (int32_t i = 0; i < c->n_instrs; i++) {
    const optic_instr *in = &m->instrs[c->instrs[i]];
    if (in->removed) continue;
    for (int32_t k = 0; k < in->n_calls; k++) print_computation(s, m, in->calls[k], state, h);
  }
  if (cid == m->entry) return; /* printed last by the caller */
  optic_strbuf_printf(s, "\n%s {\n", c->name);
  print_body(s, m, cid, h);
  state[cid] = 2;
}

optic_status optic_module_to_hlo_text(const optic_module_t *m, char **out) { return graph_module_print(m, NULL, out); }

optic_status graph_module_print(const optic_module_t *m, const graph_print_hooks *h, char **out) {
  if (m == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "to_hlo_text: NULL argument");
  optic_strbuf s = {0};
  unsigned char *state = calloc((size_t)m->n_comps + 1, 1);
  if (state == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "to_hlo_text: out of memory");
  optic_strbuf_printf(&s, "HloModule %s", m->name);
  graph_print_io_aliases(m, &s);
  optic_strbuf_printf(&s, "\n");
  if (h && h->after_header) h->after_header(h->ctx, &s);
  for (optic_comp_id c = 0; c < m->n_comps; c++) print_computation(&s, m, c, state, h);
  if (m->entry >= 0) {
    const optic_computation *e = &m->comps[m->entry];
    optic_strbuf_printf(&s, "\nENTRY %s {\n", e->name);
    print_body(&s, m, m->entry, h);
  }
  if (h && h->after_module) h->after_module(h->ctx, &s);
  free(state);
  return optic_strbuf_take(&s, out);
}
