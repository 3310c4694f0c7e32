/* Autodiff rule of reduce-window with an add (sum pooling), maximum or
 * minimum (max/min pooling) combiner. Window element k of every output
 * reads one strided slice of the padded (and base-dilated) input, so the
 * rule loops over the window's elements: each takes its slice's share of
 * g, padded back to where the slice came from. For maximum/minimum the
 * share goes to the first element of each window (row-major window order)
 * equal to the result: XLA's select-and-scatter with a >= (<=) selector,
 * which is how XLA differentiates max pooling. */
#include "graph/autodiff_internal.h"

/* Window elements beyond this are refused (one slice and pad each). */
#define AD_MAX_WINDOW_ELEMENTS 4096

typedef struct rw {
  int32_t r;
  int64_t size[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK], wdil[OPTIC_MAX_RANK], out[OPTIC_MAX_RANK];
  int64_t padded[OPTIC_MAX_RANK];
  optic_pad_dim pad[OPTIC_MAX_RANK]; /* the padding (and base dilation) the windows read through */
  bool any_pad, rev[OPTIC_MAX_RANK]; /* rev: window reversal (visited from the far end) */
  int64_t elements;
} rw;

static void read_window(const ad_ctx *c, optic_node_id y, rw *w) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const optic_shape *xs = &ad_type(c, optic_node_operand(c->m, y, 0))->shape;
  w->r = xs->rank, w->any_pad = false, w->elements = 1;
  for (int32_t d = 0; d < w->r; d++) {
    const optic_window_dim *e = &a.reduce_window.window[d];
    w->size[d] = e->size, w->stride[d] = e->stride, w->wdil[d] = e->window_dilation, w->rev[d] = e->reversal;
    w->out[d] = ad_type(c, y)->shape.dims[d];
    int64_t lo = e->pad_low, hi = e->pad_high, bd = e->base_dilation;
    w->pad[d] = (optic_pad_dim){lo, hi, bd - 1};
    w->any_pad = w->any_pad || lo != 0 || hi != 0 || bd != 1;
    w->padded[d] = (xs->dims[d] == 0 ? 0 : (xs->dims[d] - 1) * bd + 1) + lo + hi;
    w->elements *= w->size[d];
  }
}

const char *ad_reduce_window_unsupported(const optic_module_t *m, optic_node_id y) {
  if (optic_node_operand_count(m, y) != 2) return "variadic reduce-window (several inputs) has no rule";
  optic_opcode op = ad_combiner_op(m, optic_node_called(m, y, 0));
  if (op != OPTIC_OP_ADD && op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) {
    return "only add, maximum and minimum combiners have rules";
  }
  optic_node_attrs_t a;
  ad_attrs(m, y, &a);
  int64_t n = 1;
  for (int32_t d = 0; d < a.reduce_window.rank; d++) {
    n *= a.reduce_window.window[d].size;
    if (n > AD_MAX_WINDOW_ELEMENTS) return "windows of more than 4096 elements are refused";
  }
  return NULL;
}

/* Window element k (multi-index) of every output: a strided slice of p. */
static optic_status window_slice(ad_ctx *c, const rw *w, optic_node_id p, const int64_t *k, optic_node_id *out) {
  int64_t start[OPTIC_MAX_RANK], limit[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < w->r; d++) {
    start[d] = k[d] * w->wdil[d];
    limit[d] = start[d] + (w->out[d] - 1) * w->stride[d] + 1;
  }
  return optic_graph_slice(c->m, c->dst, p, start, limit, w->stride, NULL, out);
}

/* The share t (output-shaped) of window element k, put back in p's shape. */
static optic_status window_back(ad_ctx *c, const rw *w, optic_node_id t, const int64_t *k, optic_node_id *out) {
  optic_pad_dim cfg[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < w->r; d++) {
    cfg[d].low = k[d] * w->wdil[d];
    cfg[d].interior = w->stride[d] - 1;
    cfg[d].high = w->padded[d] - (cfg[d].low + (w->out[d] - 1) * w->stride[d] + 1);
  }
  optic_node_id zero;
  AD_TRY(ad_const(c, 0.0, ad_type(c, t)->dtype, NULL, &zero));
  return optic_graph_pad(c->m, c->dst, t, zero, cfg, NULL, out);
}

static bool next_index(const rw *w, int64_t *k) {
  for (int32_t d = w->r - 1; d >= 0; d--) {
    if (++k[d] < w->size[d]) return true;
    k[d] = 0;
  }
  return false;
}

/* g's share for window element k: all of it (sum), or where k is the
 * first element equal to y (max/min; *taken tracks the earlier ones). */
static optic_status share(ad_ctx *c, const rw *w, bool chooser, optic_node_id p, optic_node_id y, optic_node_id g,
                          const int64_t *k, optic_node_id *taken, optic_node_id *out) {
  if (!chooser) {
    *out = g;
    return OPTIC_OK;
  }
  optic_node_id s, eq, fresh;
  AD_TRY(window_slice(c, w, p, k, &s));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, s, y, &eq));
  if (*taken == OPTIC_NO_NODE) {
    *taken = eq;
    return ad_mask(c, eq, g, out);
  }
  AD_TRY(ad_un(c, OPTIC_OP_NOT, *taken, &fresh));
  AD_TRY(ad_bin(c, OPTIC_OP_AND, eq, fresh, &fresh));
  AD_TRY(ad_bin(c, OPTIC_OP_OR, *taken, eq, taken));
  return ad_mask(c, fresh, g, out);
}

optic_status ad_rule_reduce_window(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), init = optic_node_operand(c->m, y, 1);
  bool chooser = ad_combiner_op(c->m, optic_node_called(c->m, y, 0)) != OPTIC_OP_ADD;
  rw w;
  read_window(c, y, &w);
  gx[0] = gx[1] = OPTIC_NO_NODE;
  if (!chooser && ad_wants(c, init)) AD_TRY(ad_sum_all(c, g, &gx[1])); /* padding positions: below */
  if (!ad_wants(c, x) && gx[1] == OPTIC_NO_NODE) return OPTIC_OK;
  for (int32_t d = 0; d < w.r; d++) {
    if (w.out[d] == 0) return ad_wants(c, x) ? ad_zeros_like(c, x, &gx[0]) : OPTIC_OK;
  }
  optic_node_id p = x, acc = OPTIC_NO_NODE, taken = OPTIC_NO_NODE, t;
  if (w.any_pad) AD_TRY(optic_graph_pad(c->m, c->dst, x, init, w.pad, NULL, &p));
  int64_t k[OPTIC_MAX_RANK] = {0}, kk[OPTIC_MAX_RANK];
  do { /* window elements in the order the reduction visits them */
    for (int32_t d = 0; d < w.r; d++) kk[d] = w.rev[d] ? w.size[d] - 1 - k[d] : k[d];
    AD_TRY(share(c, &w, chooser, p, y, g, kk, &taken, &t));
    AD_TRY(window_back(c, &w, t, kk, &t));
    if (acc == OPTIC_NO_NODE) acc = t;
    else AD_TRY(ad_bin(c, OPTIC_OP_ADD, acc, t, &acc));
  } while (next_index(&w, k));
  if (!w.any_pad) {
    if (ad_wants(c, x)) gx[0] = acc;
    return OPTIC_OK;
  }
  if (ad_wants(c, x)) AD_TRY(ad_pad_operand_grad(c, x, acc, w.pad, &gx[0]));
  if (!chooser && ad_wants(c, init)) { /* init also fills the padding the windows read */
    optic_node_id zeros, one, mask, s;
    optic_dtype dt = ad_type(c, x)->dtype;
    AD_TRY(ad_const(c, 0.0, dt, &ad_type(c, x)->shape, &zeros));
    AD_TRY(ad_const(c, 1.0, dt, NULL, &one));
    AD_TRY(optic_graph_pad(c->m, c->dst, zeros, one, w.pad, NULL, &mask));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, acc, mask, &s));
    AD_TRY(ad_sum_all(c, s, &s));
    AD_TRY(ad_bin(c, OPTIC_OP_ADD, gx[1], s, &gx[1]));
  }
  return OPTIC_OK;
}
