/* Reference evaluation of data movement: iota, broadcast, reshape,
 * transpose, slice, concatenate, pad, reverse. Plain loops over output
 * indices that move element bytes (any dtype, NaN payloads kept); no
 * blocking, no kernels: this is the oracle the layout plans are checked
 * against. */
#include <string.h>

#include "graph/evaluate_internal.h"

/* y[i] = x[base + sum_d idx_d * stride_d] over the row-major indices of out
 * (strides in elements, any sign): broadcast (stride 0), transpose
 * (permuted strides), slice (scaled strides), reverse (negated strides). */
static void gather_affine(size_t es, const optic_shape *out, const unsigned char *x, int64_t base,
                          const int64_t *stride, unsigned char *y) {
  size_t n;
  optic_shape_elements(out, &n);
  int64_t idx[OPTIC_MAX_RANK] = {0}, off = base;
  for (size_t i = 0; i < n; i++) {
    memcpy(y + i * es, x + off * (int64_t)es, es);
    for (int32_t d = out->rank - 1; d >= 0; d--) {
      off += stride[d];
      if (++idx[d] < out->dims[d]) break;
      off -= stride[d] * out->dims[d];
      idx[d] = 0;
    }
  }
}

static optic_status eval_iota(const optic_instr *in, optic_literal_t *y) {
  const optic_shape *s = &y->type.shape;
  int32_t dim = (int32_t)in->ints[0];
  size_t n = lit_elements(y);
  int64_t idx[OPTIC_MAX_RANK] = {0};
  for (size_t i = 0; i < n; i++, eval_next_index(s->rank, s->dims, idx)) {
    int64_t v = idx[dim];
    switch (y->type.dtype) {
      case OPTIC_F32: ((float *)y->data)[i] = (float)v; break;
      case OPTIC_F64: ((double *)y->data)[i] = (double)v; break;
      case OPTIC_S32: ((int32_t *)y->data)[i] = (int32_t)(uint32_t)v; break; /* wraps past 2^31, as XLA's s32 iota */
      case OPTIC_U8: ((uint8_t *)y->data)[i] = (uint8_t)v; break;            /* wraps past 255 */
      default: { /* the index as an unsigned integer, converted (XLA: IntCast / UIToFP) */
        uint64_t u = (uint64_t)v;
        optic_status st = optic_convert_elements(OPTIC_U64, &u, y->type.dtype,
                                                 (unsigned char *)y->data + i * optic_dtype_size(y->type.dtype), 1);
        if (st != OPTIC_OK) return st;
        break;
      }
    }
  }
  return OPTIC_OK;
}

static void eval_concatenate(const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t *y) {
  int32_t dim = (int32_t)in->ints[0];
  const optic_shape *s = &y->type.shape;
  size_t es = optic_dtype_size(y->type.dtype), outer = 1;
  for (int32_t d = 0; d < dim; d++) outer *= (size_t)s->dims[d];
  size_t inner = es; /* bytes of one step along dim */
  for (int32_t d = dim + 1; d < s->rank; d++) inner *= (size_t)s->dims[d];
  unsigned char *dst = y->data;
  for (size_t o = 0; o < outer; o++) {
    for (int32_t k = 0; k < in->n_operands; k++) {
      size_t chunk = inner * (size_t)ops[k]->type.shape.dims[dim];
      if (chunk == 0) continue;
      memcpy(dst, (const unsigned char *)ops[k]->data + o * chunk, chunk);
      dst += chunk;
    }
  }
}

/* Output position p of a padded dim reads input element (p - low) / (interior + 1)
 * when that divides exactly and lands inside the input; else the pad value.
 * Negative low/high simply crop, since p starts at 0 and stops at the output size. */
static void eval_pad(const optic_instr *in, const optic_literal_t *x, const optic_literal_t *value,
                     optic_literal_t *y) {
  const optic_shape *s = &y->type.shape;
  size_t es = optic_dtype_size(y->type.dtype), n = lit_elements(y);
  int64_t xst[OPTIC_MAX_RANK], idx[OPTIC_MAX_RANK] = {0};
  optic_shape_strides(&x->type.shape, xst);
  const unsigned char *xb = x->data;
  unsigned char *yb = y->data;
  for (size_t i = 0; i < n; i++, eval_next_index(s->rank, s->dims, idx)) {
    int64_t off = 0;
    bool inside = true;
    for (int32_t d = 0; d < s->rank && inside; d++) {
      int64_t p = idx[d] - in->ints[3 * d], step = in->ints[3 * d + 2] + 1;
      inside = p >= 0 && p % step == 0 && p / step < x->type.shape.dims[d];
      off += inside ? (p / step) * xst[d] : 0;
    }
    memcpy(yb + i * es, inside ? xb + off * (int64_t)es : (const unsigned char *)value->data, es);
  }
}

optic_status eval_layout(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                         optic_literal_t **out) {
  (void)ctx;
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  const optic_literal_t *x = in->n_operands ? ops[0] : NULL;
  const optic_shape *os = &y->type.shape;
  size_t es = optic_dtype_size(y->type.dtype);
  int64_t xst[OPTIC_MAX_RANK] = {0}, stride[OPTIC_MAX_RANK] = {0}, base = 0;
  if (x) optic_shape_strides(&x->type.shape, xst);
  switch (in->op) {
    case OPTIC_OP_IOTA: st = eval_iota(in, y); break;
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST:
      if (y->bytes) memcpy(y->data, x->data, y->bytes);
      break;
    case OPTIC_OP_BROADCAST: /* operand dim i is output dim ints[i]; other output dims repeat */
      for (int32_t i = 0; i < in->n_ints; i++) stride[in->ints[i]] = xst[i];
      gather_affine(es, os, x->data, 0, stride, y->data);
      break;
    case OPTIC_OP_TRANSPOSE: /* output dim i is operand dim perm[i] */
      for (int32_t i = 0; i < os->rank; i++) stride[i] = xst[in->ints[i]];
      gather_affine(es, os, x->data, 0, stride, y->data);
      break;
    case OPTIC_OP_SLICE: { /* ints: start[r], limit[r], stride[r] */
      int32_t r = os->rank;
      for (int32_t i = 0; i < r; i++) {
        base += in->ints[i] * xst[i];
        stride[i] = in->ints[2 * r + i] * xst[i];
      }
      gather_affine(es, os, x->data, base, stride, y->data);
      break;
    }
    case OPTIC_OP_REVERSE:
      for (int32_t i = 0; i < os->rank; i++) stride[i] = xst[i];
      for (int32_t k = 0; k < in->n_ints; k++) {
        int32_t d = (int32_t)in->ints[k];
        if (os->dims[d] > 0) base += (os->dims[d] - 1) * xst[d];
        stride[d] = -xst[d];
      }
      gather_affine(es, os, x->data, base, stride, y->data);
      break;
    case OPTIC_OP_CONCATENATE: eval_concatenate(in, ops, y); break;
    case OPTIC_OP_PAD: eval_pad(in, x, ops[1], y); break;
    default: st = optic_fail(OPTIC_ERR_INTERNAL, "%s: not a layout op", optic_opcode_name(in->op)); break;
  }
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}
