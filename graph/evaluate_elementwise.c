/* Reference evaluation of elementwise ops: unary, binary, compare, select,
 * clamp, convert, copy. f32 runs the kernels' naive references
 * (kernels/ref/), so folded constants agree with the kernels' documented
 * semantics bitwise; every other dtype runs the element semantics of
 * kernels/elem.h, the table the runtime runs too (docs/graph-evaluate.md).
 * Integer arithmetic wraps and never hits C undefined behaviour. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"
#include "graph/opcode_kernels.h"
#include "kernels/binary.h"
#include "kernels/clamp.h"
#include "kernels/compare.h"
#include "kernels/convert.h"
#include "kernels/elem.h"
#include "kernels/select.h"
#include "kernels/unary.h"

/* The halves' f32 step: the kernels' naive references (kernels/elem.h). */
static void ref_f32(void *ctx, optic_elem_op op, optic_compare_op cmp, size_t n, const float *const *src, void *y) {
  (void)ctx;
  optic_unary_op u;
  optic_binary_op b;
  if (op == OPTIC_ELEM_COMPARE) optic_ref_f32_compare(cmp, n, src[0], src[1], y);
  else if (op == OPTIC_ELEM_CLAMP) optic_ref_f32_clamp(n, src[1], src[0], src[2], y);
  else if (optic_elem_binary_kernel(op, &b)) optic_ref_f32_binary(b, n, src[0], src[1], y);
  else if (optic_elem_unary_kernel(op, &u)) optic_ref_f32_unary(u, n, src[0], y);
}

/* Integers of every width and the halves (kernels/elem.h); false if the
 * pair is not defined there. */
static bool generic(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                    const void *const *src, void *y) {
  optic_elem_op e;
  if (!graph_opcode_elem(op, &e) || !optic_elem_generic_supported(e, in, out)) return false;
  optic_elem_generic(e, (optic_compare_op)cmp, in, out, n, src, 0, y, ref_f32, NULL);
  return true;
}

/* The basic family of kernels/elem.h (f64, s32, u8, pred) for an op of the
 * given kind; false if it does not define it. */
static bool basic(optic_opcode op, optic_elem_kind kind, optic_dtype dt, size_t n, const void *const *src, void *y) {
  optic_elem_op e;
  if (!graph_opcode_elem(op, &e) || optic_elem_kind_of(e) != kind || !optic_elem_basic_defines(e, dt)) return false;
  optic_elem_basic(e, OPTIC_COMPARE_EQ, dt, dt, n, src, 0, y);
  return true;
}

static optic_status unsupported(optic_opcode op, optic_dtype dt) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: the evaluator does not define it for dtype %s", optic_opcode_name(op),
                    optic_dtype_name(dt));
}

bool eval_is_binary(optic_opcode op) { return graph_opcode_kind_of(op) == GRAPH_OPCODE_BINARY; }

/* The scalar family of kernels/elem.h, shared with the runtime. */
static optic_status scalar_family(optic_opcode op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                                  const void *a, const void *b, void *y) {
  optic_elem_op e;
  if (!graph_opcode_elem(op, &e) || !optic_elem_scalar_defines(e, in, out)) return unsupported(op, in);
  const void *src[2] = {a, b};
  optic_elem_scalar_apply(e, param, in, out, n, src, 0, y);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ unary */

optic_status eval_unary_raw(optic_opcode op, optic_dtype dt, size_t n, const void *x, void *y) {
  if (graph_ew_scalar_op(op)) return scalar_family(op, 0, dt, dt, n, x, NULL, y);
  if (op == OPTIC_OP_COPY) {
    if (n && x != y) memcpy(y, x, n * optic_dtype_size(dt));
    return OPTIC_OK;
  }
  bool ok = false;
  optic_unary_op k;
  switch (dt) {
    case OPTIC_F32:
      if ((ok = graph_opcode_unary_kernel(op, &k))) optic_ref_f32_unary(k, n, x, y);
      break;
    case OPTIC_F64:
    case OPTIC_S32:
    case OPTIC_U8:
    case OPTIC_PRED: ok = basic(op, OPTIC_ELEM_KIND_UNARY, dt, n, (const void *const[]){x}, y); break;
    default: break;
  }
  if (!ok) ok = generic(op, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){x}, y);
  return ok ? OPTIC_OK : unsupported(op, dt);
}

/* ------------------------------------------------------------ binary */

optic_status eval_binary_raw(optic_opcode op, optic_dtype dt, size_t n, const void *a, const void *b, void *y) {
  if (graph_ew_scalar_op(op)) return scalar_family(op, 0, dt, dt, n, a, b, y);
  bool ok = false;
  optic_binary_op k;
  switch (dt) {
    case OPTIC_F32:
      if ((ok = graph_opcode_binary_kernel(op, &k))) optic_ref_f32_binary(k, n, a, b, y);
      break;
    case OPTIC_F64:
    case OPTIC_S32:
    case OPTIC_U8:
    case OPTIC_PRED: ok = basic(op, OPTIC_ELEM_KIND_BINARY, dt, n, (const void *const[]){a, b}, y); break;
    default: break;
  }
  if (!ok && dt != OPTIC_PRED) ok = generic(op, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){a, b}, y);
  return ok ? OPTIC_OK : unsupported(op, dt);
}

/* ------------------------------------------------------------ compare */

static optic_status eval_compare(const optic_instr *in, const optic_literal_t *a, const optic_literal_t *b,
                                 optic_literal_t *out) {
  size_t n = lit_elements(a);
  uint8_t *y = out->data;
  switch (a->type.dtype) {
    case OPTIC_F32: optic_ref_f32_compare((optic_compare_op)in->cmp, n, a->data, b->data, y); return OPTIC_OK;
    case OPTIC_F64:
    case OPTIC_S32:
    case OPTIC_U8:
    case OPTIC_PRED:
      optic_elem_basic(OPTIC_ELEM_COMPARE, (optic_compare_op)in->cmp, a->type.dtype, OPTIC_PRED, n,
                       (const void *const[]){a->data, b->data}, 0, y);
      return OPTIC_OK;
    default:
      if (generic(in->op, in->cmp, a->type.dtype, OPTIC_PRED, n, (const void *const[]){a->data, b->data}, y)) {
        return OPTIC_OK;
      }
      return unsupported(in->op, a->type.dtype);
  }
}

/* ------------------------------------------------------------ select, clamp */

static void eval_select(const optic_literal_t *p, const optic_literal_t *t, const optic_literal_t *f,
                        optic_literal_t *out) {
  size_t n = lit_elements(t), es = optic_dtype_size(t->type.dtype);
  const uint8_t *pb = p->data;
  bool scalar = p->type.shape.rank == 0;
  if (t->type.dtype == OPTIC_F32) {
    if (scalar) {
      optic_ref_f32_select_spred(n, pb[0], t->data, f->data, out->data);
    } else {
      optic_ref_f32_select(n, pb, t->data, f->data, out->data);
    }
    return;
  }
  unsigned char *y = out->data;
  const unsigned char *tb = t->data, *fb = f->data;
  for (size_t i = 0; i < n; i++) memcpy(y + i * es, (scalar ? pb[0] : pb[i]) ? tb + i * es : fb + i * es, es);
}

/* A bound as n elements: an array bound as is, a scalar one repeated into
 * *tmp (the caller frees it). */
static optic_status bound_array(const optic_literal_t *b, size_t n, void **tmp, const void **out) {
  *tmp = NULL;
  if (b->type.shape.rank != 0 || n <= 1) {
    *out = b->data;
    return OPTIC_OK;
  }
  size_t es = optic_dtype_size(b->type.dtype);
  unsigned char *t = malloc(n * es);
  if (t == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "clamp: out of memory for %zu elements", n);
  for (size_t i = 0; i < n; i++) memcpy(t + i * es, b->data, es);
  *tmp = t;
  *out = t;
  return OPTIC_OK;
}

static optic_status eval_clamp(const optic_literal_t *lo, const optic_literal_t *x, const optic_literal_t *hi,
                               optic_literal_t *out) {
  size_t n = lit_elements(x);
  optic_dtype dt = x->type.dtype;
  if (dt == OPTIC_F32 && lo->type.shape.rank == 0 && hi->type.shape.rank == 0) {
    optic_ref_f32_clampc(n, x->data, *(const float *)lo->data, *(const float *)hi->data, out->data);
    return OPTIC_OK;
  }
  void *tl = NULL, *th = NULL;
  const void *l = NULL, *h = NULL;
  optic_status st = bound_array(lo, n, &tl, &l);
  if (st == OPTIC_OK && (st = bound_array(hi, n, &th, &h)) != OPTIC_OK) free(tl);
  if (st != OPTIC_OK) return st;
  switch (dt) {
    case OPTIC_S8:
    case OPTIC_S16:
    case OPTIC_S64:
    case OPTIC_U16:
    case OPTIC_U32:
    case OPTIC_U64:
    case OPTIC_F16:
    case OPTIC_BF16:
      generic(OPTIC_OP_CLAMP, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){l, x->data, h}, out->data);
      break;
    case OPTIC_F32: optic_ref_f32_clamp(n, x->data, l, h, out->data); break;
    default: /* f64, s32, u8, pred */
      optic_elem_basic(OPTIC_ELEM_CLAMP, OPTIC_COMPARE_EQ, dt, dt, n, (const void *const[]){l, x->data, h}, 0,
                       out->data);
      break;
  }
  free(tl);
  free(th);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ convert */

static void eval_convert(const optic_literal_t *x, optic_literal_t *out) {
  optic_dtype s = x->type.dtype, d = out->type.dtype;
  size_t n = lit_elements(x);
  const void *xv = x->data;
  void *yv = out->data;
  static const optic_dtype old_dtypes[] = {OPTIC_F32, OPTIC_F64, OPTIC_S32, OPTIC_U8, OPTIC_PRED};
  bool old_pair = false, old_d = false;
  for (int i = 0; i < 5; i++) old_pair |= s == old_dtypes[i], old_d |= d == old_dtypes[i];
  if (s == d) {
    if (n) memcpy(yv, xv, x->bytes);
  } else if (!old_pair || !old_d) {
    optic_convert_elements(s, xv, d, yv, n); /* XLA's rules for every other pair (docs/dtypes.md) */
  } else if (s == OPTIC_F32 && d == OPTIC_F64) {
    optic_ref_f32_f64_cvt(n, xv, yv);
  } else if (s == OPTIC_F64 && d == OPTIC_F32) {
    optic_ref_f64_f32_cvt(n, xv, yv);
  } else if (s == OPTIC_F32 && d == OPTIC_S32) {
    optic_ref_f32_s32_cvt(n, xv, yv);
  } else if (s == OPTIC_S32 && d == OPTIC_F32) {
    optic_ref_s32_f32_cvt(n, xv, yv);
  } else if (s == OPTIC_F64 && d == OPTIC_S32) {
    optic_ref_f64_s32_cvt(n, xv, yv);
  } else if (s == OPTIC_S32 && d == OPTIC_F64) {
    optic_ref_s32_f64_cvt(n, xv, yv);
  } else if (s == OPTIC_F32 && d == OPTIC_PRED) {
    optic_ref_f32_pred_cvt(n, xv, yv);
  } else if (s == OPTIC_U8 && d == OPTIC_F32) {
    optic_ref_u8_f32_cvt(n, xv, yv);
  } else { /* the other pairs of f32, f64, s32, u8, pred */
    optic_elem_basic(OPTIC_ELEM_CONVERT, OPTIC_COMPARE_EQ, s, d, n, (const void *const[]){xv}, 0, yv);
  }
}

/* ------------------------------------------------------------ dispatch */

optic_status eval_elementwise(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                              optic_literal_t **out) {
  (void)ctx;
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  const optic_literal_t *a = ops[0];
  switch (in->op) {
    case OPTIC_OP_IS_FINITE:
    case OPTIC_OP_BITCAST_CONVERT:
    case OPTIC_OP_REDUCE_PRECISION: {
      int32_t param =
          in->op == OPTIC_OP_REDUCE_PRECISION ? optic_elem_reduce_precision_param(in->ints[0], in->ints[1]) : 0;
      st = scalar_family(in->op, param, a->type.dtype, y->type.dtype, lit_elements(a), a->data, NULL, y->data);
      break;
    }
    case OPTIC_OP_COMPARE: st = eval_compare(in, a, ops[1], y); break;
    case OPTIC_OP_SELECT: eval_select(a, ops[1], ops[2], y); break;
    case OPTIC_OP_CLAMP: st = eval_clamp(a, ops[1], ops[2], y); break;
    case OPTIC_OP_CONVERT: eval_convert(a, y); break;
    default:
      if (eval_is_binary(in->op)) {
        st = eval_binary_raw(in->op, a->type.dtype, lit_elements(a), a->data, ops[1]->data, y->data);
      } else {
        st = eval_unary_raw(in->op, a->type.dtype, lit_elements(a), a->data, y->data);
      }
      break;
  }
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}
