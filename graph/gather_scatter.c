/* gather and scatter: builders with XLA's shape inference, and the index
 * arithmetic shared by the evaluator and the runtime (graph_gather_run,
 * graph_scatter_run), so both read and write exactly the same elements.
 * Instruction ints: {n0, n1, n2, index_vector_dim, list0[n0], list1[n1],
 * list2[n2]} (+ slice_sizes[rank] for gather), the lists in the order of
 * the dims structs. */
#include "graph/gather_scatter.h"

#include <string.h>

#include "graph/internal.h"
#include "kernels/elem.h"

int64_t graph_load_index(optic_dtype dt, const void *p) {
  int bits = 0;
  bool is_signed = false;
  optic_elem_dtype_int_info(dt, &bits, &is_signed);
  uint64_t raw = 0;
  memcpy(&raw, p, optic_dtype_size(dt));
  if (is_signed) {
    if (bits < 64 && ((raw >> (bits - 1)) & 1u)) raw |= ~((((uint64_t)1) << bits) - 1);
    return (int64_t)raw;
  }
  return raw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)raw;
}

static optic_status bad(const char *op, const char *what, int64_t v) {
  return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s (%lld)", op, what, (long long)v);
}

/* A sorted-or-not list of distinct dims in [0, bound). */
static optic_status check_dims(const char *op, const char *name, const int64_t *d, int32_t n, int64_t bound,
                               bool sorted) {
  if (n < 0 || n > OPTIC_MAX_RANK) return bad(op, "too many dims in a list", n);
  for (int32_t i = 0; i < n; i++) {
    if (d[i] < 0 || d[i] >= bound) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s[%d] = %lld is outside [0, %lld)", op, name, (int)i,
                        (long long)d[i], (long long)bound);
    }
    for (int32_t j = 0; j < i; j++) {
      if (d[j] == d[i])
        return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s repeats dim %lld", op, name, (long long)d[i]);
      if (sorted && d[j] > d[i]) return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s must be sorted", op, name);
    }
  }
  return OPTIC_OK;
}

static bool in_list(const int64_t *d, int32_t n, int64_t v) {
  for (int32_t i = 0; i < n; i++) {
    if (d[i] == v) return true;
  }
  return false;
}

/* Checks the index array: integer, index_vector_dim in [0, rank], and the
 * index vector's length equal to n_map. */
static optic_status check_indices(const char *op, const optic_type *it, int64_t ivd, int32_t n_map) {
  int bits;
  bool sg;
  if (!optic_elem_dtype_int_info(it->dtype, &bits, &sg)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: indices have dtype %s; an integer is needed", op,
                      optic_dtype_name(it->dtype));
  }
  if (ivd < 0 || ivd > it->shape.rank) return bad(op, "index_vector_dim is outside [0, indices rank]", ivd);
  int64_t len = ivd == it->shape.rank ? 1 : it->shape.dims[ivd];
  if (len != n_map) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: the index vector has %lld entries but %d operand dims are mapped",
                      op, (long long)len, (int)n_map);
  }
  return OPTIC_OK;
}

/* long: XLA's gather shape rules checked in order, each failure with its own message */
optic_status optic_graph_gather(optic_module_t *m, optic_comp_id comp, optic_node_id operand, optic_node_id indices,
                                const optic_gather_dims *g, const char *name, optic_node_id *out) {
  const optic_type *xt, *it;
  optic_status st = graph_array_operand(m, comp, operand, "gather", 0, &xt);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, indices, "gather", 1, &it);
  if (st != OPTIC_OK) return st;
  if (g == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "gather: NULL argument");
  int32_t r = xt->shape.rank;
  if ((st = check_indices("gather", it, g->index_vector_dim, g->n_start_index_map)) != OPTIC_OK ||
      (st = check_dims("gather", "collapsed_slice_dims", g->collapsed_slice_dims, g->n_collapsed, r, true)) ||
      (st = check_dims("gather", "start_index_map", g->start_index_map, g->n_start_index_map, r, false))) {
    return st;
  }
  if ((st = check_dims("gather", "operand_batching_dims", g->operand_batching_dims, g->n_batching, r, true)) ||
      (st = check_dims("gather", "start_indices_batching_dims", g->start_indices_batching_dims, g->n_batching,
                       it->shape.rank, false))) {
    return st;
  }
  for (int32_t i = 0; i < g->n_batching; i++) {
    int64_t od = g->operand_batching_dims[i], id = g->start_indices_batching_dims[i];
    if (in_list(g->collapsed_slice_dims, g->n_collapsed, od) || id == g->index_vector_dim ||
        xt->shape.dims[od] != it->shape.dims[id]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "gather: batching pair %d (operand dim %lld, indices dim %lld): the dims must have equal sizes "
                        "and be neither collapsed nor the index vector dim",
                        (int)i, (long long)od, (long long)id);
    }
  }
  for (int32_t d = 0; d < r; d++) {
    bool squeezed =
        in_list(g->collapsed_slice_dims, g->n_collapsed, d) || in_list(g->operand_batching_dims, g->n_batching, d);
    if (g->slice_sizes[d] < 0 || g->slice_sizes[d] > xt->shape.dims[d]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "gather: slice_sizes[%d] = %lld is outside [0, %lld]", (int)d,
                        (long long)g->slice_sizes[d], (long long)xt->shape.dims[d]);
    }
    if (squeezed && g->slice_sizes[d] > 1) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "gather: collapsed dim %d has slice size %lld; at most 1 is allowed",
                        (int)d, (long long)g->slice_sizes[d]);
    }
  }
  if (g->n_offset_dims != r - g->n_collapsed - g->n_batching) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "gather: %d offset_dims for %d uncollapsed operand dims",
                      (int)g->n_offset_dims, (int)(r - g->n_collapsed - g->n_batching));
  }
  int32_t n_batch = it->shape.rank - (g->index_vector_dim < it->shape.rank ? 1 : 0);
  int32_t out_rank = n_batch + g->n_offset_dims;
  if (out_rank > OPTIC_MAX_RANK) return bad("gather", "the result's rank is above the maximum", out_rank);
  if ((st = check_dims("gather", "offset_dims", g->offset_dims, g->n_offset_dims, out_rank, true)) != OPTIC_OK)
    return st;
  optic_shape s = {.rank = out_rank};
  int32_t k_off = 0, k_batch = 0, d_op = 0;
  for (int32_t i = 0; i < out_rank; i++) {
    if (k_off < g->n_offset_dims && g->offset_dims[k_off] == i) {
      while (in_list(g->collapsed_slice_dims, g->n_collapsed, d_op) ||
             in_list(g->operand_batching_dims, g->n_batching, d_op)) {
        d_op++;
      }
      s.dims[i] = g->slice_sizes[d_op++];
      k_off++;
    } else {
      if (k_batch == g->index_vector_dim) k_batch++;
      s.dims[i] = it->shape.dims[k_batch++];
    }
  }
  int64_t ints[5 + 6 * OPTIC_MAX_RANK];
  int32_t n = 0;
  ints[n++] = g->n_offset_dims, ints[n++] = g->n_collapsed, ints[n++] = g->n_start_index_map;
  ints[n++] = g->index_vector_dim;
  for (int32_t i = 0; i < g->n_offset_dims; i++) ints[n++] = g->offset_dims[i];
  for (int32_t i = 0; i < g->n_collapsed; i++) ints[n++] = g->collapsed_slice_dims[i];
  for (int32_t i = 0; i < g->n_start_index_map; i++) ints[n++] = g->start_index_map[i];
  for (int32_t i = 0; i < r; i++) ints[n++] = g->slice_sizes[i];
  ints[n++] = g->n_batching;
  for (int32_t i = 0; i < g->n_batching; i++) ints[n++] = g->operand_batching_dims[i];
  for (int32_t i = 0; i < g->n_batching; i++) ints[n++] = g->start_indices_batching_dims[i];
  optic_node_id ops[2] = {operand, indices};
  optic_instr_proto p = graph_proto(OPTIC_OP_GATHER);
  if ((st = optic_shape_make(s.rank, s.dims, &p.type.shape)) != OPTIC_OK) return st;
  p.type.dtype = xt->dtype;
  p.operands = ops;
  p.n_operands = 2;
  p.ints = ints;
  p.n_ints = n;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_scatter(optic_module_t *m, optic_comp_id comp, optic_node_id operand, optic_node_id indices,
                                 optic_node_id updates, const optic_scatter_dims *g, optic_comp_id to_apply,
                                 const char *name, optic_node_id *out) {
  const optic_type *xt, *it, *ut;
  optic_status st = graph_array_operand(m, comp, operand, "scatter", 0, &xt);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, indices, "scatter", 1, &it);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, updates, "scatter", 2, &ut);
  if (st != OPTIC_OK) return st;
  if (g == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "scatter: NULL argument");
  int32_t r = xt->shape.rank;
  if (ut->dtype != xt->dtype) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "scatter: updates have dtype %s but the operand %s",
                      optic_dtype_name(ut->dtype), optic_dtype_name(xt->dtype));
  }
  if ((st = check_indices("scatter", it, g->index_vector_dim, g->n_scatter_dims_to_operand_dims)) != OPTIC_OK ||
      (st = check_dims("scatter", "update_window_dims", g->update_window_dims, g->n_update_window_dims, ut->shape.rank,
                       true)) ||
      (st = check_dims("scatter", "inserted_window_dims", g->inserted_window_dims, g->n_inserted, r, true)) ||
      (st = check_dims("scatter", "scatter_dims_to_operand_dims", g->scatter_dims_to_operand_dims,
                       g->n_scatter_dims_to_operand_dims, r, false))) {
    return st;
  }
  if (g->n_update_window_dims + g->n_inserted != r) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "scatter: %d window dims + %d inserted dims != operand rank %d",
                      (int)g->n_update_window_dims, (int)g->n_inserted, (int)r);
  }
  int32_t n_scatter = ut->shape.rank - g->n_update_window_dims;
  int32_t want_scatter = it->shape.rank - (g->index_vector_dim < it->shape.rank ? 1 : 0);
  if (n_scatter != want_scatter) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "scatter: updates have %d scatter dims but the indices %d",
                      (int)n_scatter, (int)want_scatter);
  }
  for (int32_t i = 0, k = 0, ks = 0; i < ut->shape.rank; i++) {
    if (in_list(g->update_window_dims, g->n_update_window_dims, i)) {
      while (in_list(g->inserted_window_dims, g->n_inserted, k)) k++;
      if (ut->shape.dims[i] > xt->shape.dims[k]) {
        return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                          "scatter: update window dim %d (%lld) is larger than operand dim %d", (int)i,
                          (long long)ut->shape.dims[i], (int)k);
      }
      k++;
    } else {
      if (ks == g->index_vector_dim) ks++;
      if (ut->shape.dims[i] != it->shape.dims[ks]) {
        return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                          "scatter: update scatter dim %d has size %lld but indices dim %d %lld", (int)i,
                          (long long)ut->shape.dims[i], (int)ks, (long long)it->shape.dims[ks]);
      }
      ks++;
    }
  }
  const optic_type pt[2] = {optic_type_array(xt->dtype, &(optic_shape){.rank = 0}),
                            optic_type_array(xt->dtype, &(optic_shape){.rank = 0})};
  if ((st = graph_check_callee(m, comp, to_apply, "scatter", pt, 2)) != OPTIC_OK ||
      (st = graph_check_scalar_root(m, to_apply, "scatter", &xt->dtype, 1)) != OPTIC_OK) {
    return st;
  }
  int64_t ints[4 + 3 * OPTIC_MAX_RANK];
  int32_t n = 0;
  ints[n++] = g->n_update_window_dims, ints[n++] = g->n_inserted, ints[n++] = g->n_scatter_dims_to_operand_dims;
  ints[n++] = g->index_vector_dim;
  for (int32_t i = 0; i < g->n_update_window_dims; i++) ints[n++] = g->update_window_dims[i];
  for (int32_t i = 0; i < g->n_inserted; i++) ints[n++] = g->inserted_window_dims[i];
  for (int32_t i = 0; i < g->n_scatter_dims_to_operand_dims; i++) ints[n++] = g->scatter_dims_to_operand_dims[i];
  optic_node_id ops[3] = {operand, indices, updates};
  optic_instr_proto p = graph_proto(OPTIC_OP_SCATTER);
  p.type = *xt;
  p.operands = ops;
  p.n_operands = 3;
  p.ints = ints;
  p.n_ints = n;
  p.calls = &to_apply;
  p.n_calls = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

bool optic_node_gather_dims(const optic_module_t *m, optic_node_id id, optic_gather_dims *g) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL || in->op != OPTIC_OP_GATHER || g == NULL) return false;
  const int64_t *v = in->ints;
  memset(g, 0, sizeof *g);
  g->n_offset_dims = (int32_t)v[0], g->n_collapsed = (int32_t)v[1], g->n_start_index_map = (int32_t)v[2];
  g->index_vector_dim = v[3];
  v += 4;
  for (int32_t i = 0; i < g->n_offset_dims; i++) g->offset_dims[i] = *v++;
  for (int32_t i = 0; i < g->n_collapsed; i++) g->collapsed_slice_dims[i] = *v++;
  for (int32_t i = 0; i < g->n_start_index_map; i++) g->start_index_map[i] = *v++;
  int32_t r = optic_node_type(m, in->operands[0])->shape.rank;
  for (int32_t i = 0; i < r; i++) g->slice_sizes[i] = *v++;
  g->n_batching = (int32_t)*v++;
  for (int32_t i = 0; i < g->n_batching; i++) g->operand_batching_dims[i] = *v++;
  for (int32_t i = 0; i < g->n_batching; i++) g->start_indices_batching_dims[i] = *v++;
  return true;
}

bool optic_node_scatter_dims(const optic_module_t *m, optic_node_id id, optic_scatter_dims *g) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL || in->op != OPTIC_OP_SCATTER || g == NULL) return false;
  const int64_t *v = in->ints;
  memset(g, 0, sizeof *g);
  g->n_update_window_dims = (int32_t)v[0], g->n_inserted = (int32_t)v[1];
  g->n_scatter_dims_to_operand_dims = (int32_t)v[2], g->index_vector_dim = v[3];
  v += 4;
  for (int32_t i = 0; i < g->n_update_window_dims; i++) g->update_window_dims[i] = *v++;
  for (int32_t i = 0; i < g->n_inserted; i++) g->inserted_window_dims[i] = *v++;
  for (int32_t i = 0; i < g->n_scatter_dims_to_operand_dims; i++) g->scatter_dims_to_operand_dims[i] = *v++;
  return true;
}

/* ------------------------------------------------------------ index arithmetic */

static size_t offset_of(const optic_shape *s, const int64_t *idx) {
  size_t off = 0;
  for (int32_t d = 0; d < s->rank; d++) off = off * (size_t)s->dims[d] + (size_t)idx[d];
  return off;
}

/* Entry k of the index vector at batch position `batch` (the indices' dims
 * without index_vector_dim, in order). */
static int64_t index_entry(const graph_index_array *ix, int64_t ivd, const int64_t *batch, int32_t k) {
  int64_t at[OPTIC_MAX_RANK];
  for (int32_t d = 0, b = 0; d < ix->shape->rank; d++) at[d] = d == ivd ? k : batch[b++];
  return graph_load_index(ix->dtype,
                          (const unsigned char *)ix->data + offset_of(ix->shape, at) * optic_dtype_size(ix->dtype));
}

static void unflatten(const optic_shape *s, size_t i, int64_t *idx) {
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    idx[d] = s->dims[d] ? (int64_t)(i % (size_t)s->dims[d]) : 0;
    i = s->dims[d] ? i / (size_t)s->dims[d] : 0;
  }
}

/* True when the output's minor dim is an offset dim over the operand's minor
 * dim: consecutive outputs along it read consecutive operand elements (the
 * window's start is clamped so the whole window lies inside the operand). */
static bool minor_runs(const optic_gather_dims *g, const optic_shape *xs, const optic_shape *ys) {
  int32_t last = xs->rank - 1;
  return ys->rank > 0 && xs->rank > 0 && g->n_offset_dims > 0 && g->offset_dims[g->n_offset_dims - 1] == ys->rank - 1 &&
         !in_list(g->collapsed_slice_dims, g->n_collapsed, last) &&
         !in_list(g->operand_batching_dims, g->n_batching, last);
}

void graph_gather_run(const optic_gather_dims *g, size_t es, const optic_shape *xs, const void *x,
                      const graph_index_array *ix, const optic_shape *ys, void *y, size_t lo, size_t hi) {
  int64_t out[OPTIC_MAX_RANK], batch[OPTIC_MAX_RANK], at[OPTIC_MAX_RANK];
  const bool runs = minor_runs(g, xs, ys);
  for (size_t i = lo, run = 1; i < hi; i += run) {
    unflatten(ys, i, out);
    int32_t nb = 0, ko = 0;
    for (int32_t d = 0; d < ys->rank; d++) {
      if (ko < g->n_offset_dims && g->offset_dims[ko] == d) ko++;
      else batch[nb++] = out[d];
    }
    for (int32_t d = 0; d < xs->rank; d++) at[d] = 0;
    for (int32_t k = 0; k < g->n_start_index_map; k++) {
      int64_t dim = g->start_index_map[k], hi_start = xs->dims[dim] - g->slice_sizes[dim];
      int64_t v = index_entry(ix, g->index_vector_dim, batch, k);
      at[dim] = v < 0 ? 0 : v > hi_start ? hi_start : v;
    }
    for (int32_t b = 0; b < g->n_batching; b++) { /* the batch position of the paired indices dim */
      int64_t id = g->start_indices_batching_dims[b];
      at[g->operand_batching_dims[b]] = batch[id - (id > g->index_vector_dim ? 1 : 0)];
    }
    for (int32_t d = 0, j = 0; d < xs->rank; d++) {
      if (in_list(g->collapsed_slice_dims, g->n_collapsed, d) || in_list(g->operand_batching_dims, g->n_batching, d)) {
        continue;
      }
      at[d] += out[g->offset_dims[j++]];
    }
    if (runs) { /* the rest of this window row, within [lo, hi) */
      size_t left = (size_t)(ys->dims[ys->rank - 1] - out[ys->rank - 1]);
      run = left < hi - i ? left : hi - i;
    }
    memcpy((unsigned char *)y + i * es, (const unsigned char *)x + offset_of(xs, at) * es, run * es);
  }
}

optic_status graph_scatter_run(const optic_scatter_dims *g, size_t es, const optic_shape *ys, void *y,
                               const graph_index_array *ix, const optic_shape *us, const void *u,
                               graph_scatter_combine combine, void *ctx) {
  size_t n = 1;
  for (int32_t d = 0; d < us->rank; d++) n *= (size_t)us->dims[d];
  int64_t ui[OPTIC_MAX_RANK], batch[OPTIC_MAX_RANK], at[OPTIC_MAX_RANK], start[OPTIC_MAX_RANK], win[OPTIC_MAX_RANK];
  /* Window size per operand dim: 1 for inserted dims, else the update dim's size. */
  for (int32_t d = 0, j = 0; d < ys->rank; d++) {
    win[d] = in_list(g->inserted_window_dims, g->n_inserted, d) ? 1 : us->dims[g->update_window_dims[j++]];
  }
  for (size_t i = 0; i < n; i++) {
    unflatten(us, i, ui);
    int32_t nb = 0;
    for (int32_t d = 0; d < us->rank; d++) {
      if (!in_list(g->update_window_dims, g->n_update_window_dims, d)) batch[nb++] = ui[d];
    }
    for (int32_t d = 0; d < ys->rank; d++) start[d] = 0;
    for (int32_t k = 0; k < g->n_scatter_dims_to_operand_dims; k++) {
      start[g->scatter_dims_to_operand_dims[k]] = index_entry(ix, g->index_vector_dim, batch, k);
    }
    bool inside = true;
    for (int32_t d = 0, j = 0; d < ys->rank; d++) {
      if (start[d] < 0 || start[d] > ys->dims[d] - win[d]) inside = false;
      at[d] = start[d] + (in_list(g->inserted_window_dims, g->n_inserted, d) ? 0 : ui[g->update_window_dims[j++]]);
    }
    if (!inside) continue; /* XLA skips a window that does not fit */
    optic_status st = combine(ctx, (unsigned char *)y + offset_of(ys, at) * es, (const unsigned char *)u + i * es);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}
