/* Data-movement and elementwise steps: broadcast, transpose, slice,
 * reverse, copying reshape, pad, concatenate, iota, all-reduce (one
 * replica: a copy), and plain elementwise ops. Each thread takes a
 * contiguous share of the output elements (concatenate: of each operand),
 * so shares never overlap and no step needs an inner barrier. */
#include <string.h>

#include "exec/exec_internal.h"
#include "kernels/layout.h"

bool exec_is_layout_op(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_TRANSPOSE:
    case OPTIC_OP_SLICE:
    case OPTIC_OP_REVERSE:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST:
    case OPTIC_OP_PAD:
    case OPTIC_OP_CONCATENATE:
    case OPTIC_OP_IOTA:
    case OPTIC_OP_ALL_REDUCE:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE:
    case OPTIC_OP_REPLICA_ID:
    case OPTIC_OP_PARTITION_ID: return true;
    default: return false;
  }
}

static size_t elems(const optic_shape *s) {
  size_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

static void strides_of(const optic_shape *s, int64_t *st) {
  int64_t v = 1;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    st[d] = v;
    v *= s->dims[d];
  }
}

static void store_index(optic_dtype dt, int64_t v, unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: {
      float x = (float)v;
      memcpy(p, &x, 4);
      break;
    }
    case OPTIC_F64: {
      double x = (double)v;
      memcpy(p, &x, 8);
      break;
    }
    case OPTIC_S32: {
      int32_t x = (int32_t)v;
      memcpy(p, &x, 4);
      break;
    }
    case OPTIC_PRED: *p = v != 0; break;
    case OPTIC_U8: *p = (uint8_t)v; break;
    default: { /* the index as an unsigned integer, converted (XLA: IntCast / UIToFP) */
      uint64_t u = (uint64_t)v;
      optic_convert_elements(OPTIC_U64, &u, dt, p, 1);
      break;
    }
  }
}

optic_status exec_op_elementwise(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const optic_shape *os = &s->type->shape;
  size_t n = elems(os), lo, hi;
  exec_share(n, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  const void *src[3] = {NULL, NULL, NULL};
  unsigned mask = 0;
  int32_t data = (s->op == OPTIC_OP_SELECT || s->op == OPTIC_OP_CLAMP) ? 1 : 0;
  optic_dtype in_dt = OPTIC_DTYPE_INVALID;
  for (int32_t i = 0; i < s->n_operands && i < 3; i++) {
    const exec_ref *r = &s->in[s->in_first[i]];
    size_t op_elems = s->operand_elems[i];
    optic_dtype dt = s->operand_dtype[i];
    if (i == data) in_dt = dt;
    const unsigned char *p = ref_ptr(f, r);
    if (op_elems == 1 && n != 1) {
      src[i] = p;
      mask |= 1u << i;
    } else {
      src[i] = p + lo * optic_dtype_size(dt);
    }
  }
  unsigned char *y = (unsigned char *)ref_ptr(f, &s->out[0]) + lo * optic_dtype_size(s->type->dtype);
  ew_apply(s->op, s->cmp, in_dt, s->type->dtype, hi - lo, src, mask, y);
  return OPTIC_OK;
}

/* The share [lo, hi) of one step's output elements, and where they go. */
typedef struct layout_share {
  size_t lo, hi, es;
  unsigned char *y;
  const unsigned char *x; /* operand 0's first leaf, or NULL */
} layout_share;

/* Steps that copy, zero or count without walking the operand (all-reduce,
 * replica-id, collective-permute, the one-replica all-gather and
 * reduce-scatter, copying reshape, iota). False for the others. */
static bool layout_direct(const exec_step *s, const exec_frame *f, const exec_thread *th, const layout_share *sh,
                          optic_status *st) {
  const optic_shape *os = &s->type->shape;
  size_t lo = sh->lo, hi = sh->hi, es = sh->es;
  bool copy = false;
  *st = OPTIC_OK;
  switch (s->op) {
    case OPTIC_OP_ALL_REDUCE:
      /* One replica: the sum over a group of one is the operand itself. */
      for (int32_t l = 0; l < s->n_out; l++) {
        size_t bytes = s->out[l].size, blo, bhi;
        exec_share(bytes, th->t, th->nt, &blo, &bhi);
        if (blo < bhi)
          memcpy((unsigned char *)ref_ptr(f, &s->out[l]) + blo, (const unsigned char *)ref_ptr(f, &s->in[l]) + blo,
                 bhi - blo);
      }
      return true;
    case OPTIC_OP_REPLICA_ID: /* one replica, one partition: 0 */
    case OPTIC_OP_PARTITION_ID: break;
    case OPTIC_OP_COLLECTIVE_PERMUTE: /* one replica: itself, or zeros when nobody sends to it */
      for (int32_t i = 0; i < s->attrs.collective_permute.n_pairs; i++) {
        const int64_t *pair = &s->attrs.collective_permute.pairs[2 * i];
        copy |= pair[0] == 0 && pair[1] == 0;
      }
      break;
    case OPTIC_OP_ALL_GATHER: /* one replica (checked at bind): the identity */
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST: copy = true; break;
    case OPTIC_OP_IOTA: {
      int64_t dim = s->attrs.iota.dimension, inner = 1;
      for (int32_t d = (int32_t)dim + 1; d < os->rank; d++) inner *= os->dims[d];
      for (size_t i = lo; i < hi; i++) {
        store_index(s->type->dtype, (int64_t)(i / (size_t)inner) % os->dims[dim], sh->y + i * es);
      }
      return true;
    }
    default: return false;
  }
  if (lo < hi && copy) memcpy(sh->y + lo * es, sh->x + lo * es, (hi - lo) * es);
  else if (lo < hi) memset(sh->y + lo * es, 0, (hi - lo) * es);
  return true;
}

/* The pad value and how to write runs of it: the vectorized fill kernel
 * for element sizes 1, 4 and 8 (fetched once per step). */
typedef struct pad_value {
  const unsigned char *pv;
  size_t es;
  optic_fill_fn fill; /* NULL: element by element */
} pad_value;

static pad_value pad_value_of(const unsigned char *pv, size_t es) {
  pad_value p = {.pv = pv, .es = es, .fill = NULL};
  if (es == 1 || es == 4 || es == 8) {
    p.fill = optic_layout_kernels_get()->fill[es == 1   ? OPTIC_LAYOUT_X8
                                              : es == 4 ? OPTIC_LAYOUT_X32
                                                        : OPTIC_LAYOUT_X64];
  }
  return p;
}

/* n elements, each the pad value. */
static void pad_fill(unsigned char *y, size_t n, const pad_value *p) {
  if (n == 0) return;
  if (p->fill != NULL) {
    p->fill(n, p->pv, y);
  } else {
    for (size_t i = 0; i < n; i++) memcpy(y + i * p->es, p->pv, p->es);
  }
}

/* The geometry of a pad as rows of chunks: the trailing dims without any
 * padding form one contiguous chunk of `chunk` elements, dim q (the last
 * padded dim) runs along a row, and the dims before q index the rows. */
typedef struct pad_rows {
  int32_t q;           /* last padded dim, -1 if none */
  size_t chunk, rows;  /* elements per chunk; output rows */
  int64_t out_q, in_q; /* dim q's extent in the output and the input */
  int64_t low, step;   /* dim q's low padding and interior + 1 */
} pad_rows;

static pad_rows pad_geometry(const optic_shape *os, const optic_shape *is, const optic_pad_dim *pad) {
  pad_rows g = {.q = -1, .chunk = 1, .rows = 1, .out_q = 1, .in_q = 1, .low = 0, .step = 1};
  for (int32_t d = os->rank - 1; d >= 0; d--) {
    if (pad[d].low != 0 || pad[d].high != 0 || pad[d].interior != 0) {
      g.q = d;
      break;
    }
    g.chunk *= (size_t)os->dims[d];
  }
  if (g.q < 0) return g;
  for (int32_t d = 0; d < g.q; d++) g.rows *= (size_t)os->dims[d];
  g.out_q = os->dims[g.q], g.in_q = is->dims[g.q];
  g.low = pad[g.q].low, g.step = pad[g.q].interior + 1;
  return g;
}

/* The input offset (elements) of output row r, or -1 when the row lies in
 * padding of some dim before q. */
static int64_t pad_row_source(const optic_shape *os, const optic_shape *is, const optic_pad_dim *pad,
                              const int64_t *ist, int32_t q, size_t r) {
  int64_t off = 0;
  for (int32_t d = q - 1; d >= 0; d--) {
    int64_t idx = (int64_t)(r % (size_t)os->dims[d]), step = pad[d].interior + 1, xpos = idx - pad[d].low;
    r /= (size_t)os->dims[d];
    if (xpos < 0 || xpos % step != 0 || xpos / step >= is->dims[d]) return -1;
    off += (xpos / step) * ist[d];
  }
  return off;
}

/* Output positions [j0, j1) of one row (chunks along dim q) whose input row
 * starts at x (NULL: the row is padding): fills and block copies. */
static void pad_row_span(const pad_rows *g, const unsigned char *x, unsigned char *y, int64_t j0, int64_t j1,
                         const pad_value *pv) {
  const size_t es = pv->es;
  const size_t cb = g->chunk * es;
  int64_t j = j0;
  if (x != NULL) {
    int64_t rel = j0 - g->low; /* first source position at or after j0 */
    int64_t i = rel <= 0 ? 0 : (rel + g->step - 1) / g->step;
    for (int64_t jv = g->low + i * g->step; i < g->in_q && jv < j1;) {
      pad_fill(y + (size_t)j * cb, (size_t)(jv - j) * g->chunk, pv);
      int64_t run = 1; /* no interior padding: consecutive chunks are one copy */
      if (g->step == 1) {
        run = j1 - jv < g->in_q - i ? j1 - jv : g->in_q - i;
      }
      memcpy(y + (size_t)jv * cb, x + (size_t)i * cb, (size_t)run * cb);
      j = jv + (run - 1) * g->step + 1;
      i += run, jv += run * g->step;
    }
  }
  pad_fill(y + (size_t)j * cb, (size_t)(j1 - j) * g->chunk, pv);
}

/* pad: each thread takes a share of the output's chunks (rows x dim q) and
 * writes each chunk once, as a block copy of its input run or a fill. */
static void layout_pad(const exec_step *s, const exec_frame *f, const exec_thread *th, const layout_share *sh,
                       const int64_t *ist) {
  const optic_shape *os = &s->type->shape, *is = &s->operand_shape[0];
  const optic_pad_dim *pad = s->attrs.pad.dims;
  size_t es = sh->es;
  const pad_value pv = pad_value_of(ref_ptr(f, &s->in[1]), es);
  pad_rows g = pad_geometry(os, is, pad);
  if (g.q < 0) { /* no padding: a copy */
    if (sh->lo < sh->hi) memcpy(sh->y + sh->lo * es, sh->x + sh->lo * es, (sh->hi - sh->lo) * es);
    return;
  }
  size_t units = g.rows * (size_t)g.out_q, lo, hi;
  if (g.chunk == 0) return;
  exec_share(units, th->t, th->nt, &lo, &hi);
  for (size_t u = lo; u < hi;) {
    size_t r = u / (size_t)g.out_q;
    int64_t j0 = (int64_t)(u % (size_t)g.out_q), j1 = g.out_q;
    if (hi - u < (size_t)(j1 - j0)) j1 = j0 + (int64_t)(hi - u);
    int64_t src = pad_row_source(os, is, pad, ist, g.q, r);
    unsigned char *yrow = sh->y + r * (size_t)g.out_q * g.chunk * es;
    /* an empty input may come as NULL: its rows are all padding */
    pad_row_span(&g, src < 0 || sh->x == NULL ? NULL : sh->x + (size_t)src * es, yrow, j0, j1, &pv);
    u += (size_t)(j1 - j0);
  }
}

/* concatenate: each thread writes its share of every operand. */
static void layout_concatenate(const exec_step *s, const exec_frame *f, const exec_thread *th, const layout_share *sh) {
  const optic_shape *os = &s->type->shape;
  int64_t dim = s->attrs.concatenate.dimension, ost[OPTIC_MAX_RANK], at = 0;
  size_t es = sh->es;
  strides_of(os, ost);
  for (int32_t k = 0; k < s->n_operands; k++) {
    const optic_shape *ks = &s->operand_shape[k];
    exec_walk kw = {.rank = ks->rank, .base = at * ost[dim]};
    for (int32_t d = 0; d < ks->rank; d++) kw.dims[d] = ks->dims[d], kw.strides[d] = ost[d];
    size_t kn = elems(ks), klo, khi;
    exec_share(kn, th->t, th->nt, &klo, &khi);
    const unsigned char *kx = ref_ptr(f, &s->in[s->in_first[k]]);
    if (klo < khi) walk_scatter(&kw, es, kx + klo * es, klo, khi - klo, sh->y);
    at += ks->dims[dim];
  }
}

/* The walk over the operand that broadcast, transpose, slice and reverse
 * read the output through. False for other ops. */
static bool layout_walk(const exec_step *s, const int64_t *ist, exec_walk *w) {
  const optic_shape *os = &s->type->shape;
  const optic_node_attrs_t *a = &s->attrs;
  *w = (exec_walk){.rank = os->rank};
  for (int32_t d = 0; d < os->rank; d++) w->dims[d] = os->dims[d];
  switch (s->op) {
    case OPTIC_OP_BROADCAST:
      for (int32_t i = 0; i < a->broadcast.count; i++) w->strides[a->broadcast.dims[i]] = ist[i];
      return true;
    case OPTIC_OP_TRANSPOSE:
      for (int32_t d = 0; d < os->rank; d++) w->strides[d] = ist[a->transpose.dims[d]];
      return true;
    case OPTIC_OP_SLICE:
      for (int32_t d = 0; d < a->slice.rank; d++) {
        w->base += a->slice.start[d] * ist[d];
        w->strides[d] = ist[d] * a->slice.stride[d];
      }
      return true;
    case OPTIC_OP_REVERSE:
      for (int32_t d = 0; d < os->rank; d++) w->strides[d] = ist[d];
      for (int32_t i = 0; i < a->reverse.count; i++) {
        int64_t d = a->reverse.dims[i];
        if (os->dims[d] > 0) w->base += (os->dims[d] - 1) * ist[d];
        w->strides[d] = -ist[d];
      }
      return true;
    default: return false;
  }
}

optic_status exec_op_layout(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  size_t n = optic_type_is_tuple(s->type) ? 0 : elems(&s->type->shape);
  layout_share sh = {.es = optic_dtype_size(s->type->dtype),
                     .y = ref_ptr(f, &s->out[0]),
                     .x = s->n_operands > 0 ? ref_ptr(f, &s->in[0]) : NULL};
  exec_share(n, th->t, th->nt, &sh.lo, &sh.hi);
  optic_status st;
  if (layout_direct(s, f, th, &sh, &st)) return st;
  size_t es = sh.es;
  if (s->op == OPTIC_OP_BROADCAST && s->operand_elems[0] == 1 && (es == 1 || es == 4 || es == 8)) {
    /* A scalar broadcast is a fill: the vectorized layout kernel, not the
     * element-by-element walk (measured 8 GB/s on 64 MiB). */
    const optic_layout_kernels *k = optic_layout_kernels_get();
    optic_layout_width wd = es == 1 ? OPTIC_LAYOUT_X8 : es == 4 ? OPTIC_LAYOUT_X32 : OPTIC_LAYOUT_X64;
    if (sh.lo < sh.hi) k->fill[wd](sh.hi - sh.lo, sh.x, sh.y + sh.lo * es);
    return OPTIC_OK;
  }
  if (s->op == OPTIC_OP_BROADCAST && s->operand_elems[0] == 1 && es == 2) { /* f16/bf16/s16/u16: a plain fill */
    uint16_t v;
    memcpy(&v, sh.x, 2);
    for (size_t i = sh.lo; i < sh.hi; i++) memcpy(sh.y + 2 * i, &v, 2);
    return OPTIC_OK;
  }
  int64_t ist[OPTIC_MAX_RANK];
  strides_of(&s->operand_shape[0], ist);
  exec_walk w;
  if (layout_walk(s, ist, &w)) {
    if (sh.lo < sh.hi) walk_gather(&w, es, sh.x, sh.lo, sh.hi - sh.lo, sh.y + sh.lo * es);
    return OPTIC_OK;
  }
  if (s->op == OPTIC_OP_PAD) {
    layout_pad(s, f, th, &sh, ist);
    return OPTIC_OK;
  }
  if (s->op == OPTIC_OP_CONCATENATE) {
    layout_concatenate(s, f, th, &sh);
    return OPTIC_OK;
  }
  return optic_fail(OPTIC_ERR_INTERNAL, "runtime: %s has no layout implementation", s->name);
}
