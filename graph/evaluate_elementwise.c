/* Reference evaluation of elementwise ops: unary, binary, compare, select,
 * clamp, convert, copy. f32 runs the kernels' naive references
 * (kernels/ref/), so folded constants agree with the kernels' documented
 * semantics bitwise; f64, s32, u8 and pred are plain loops with XLA's
 * semantics (docs/graph-evaluate.md). Integer arithmetic wraps and never
 * hits C undefined behaviour. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"
#include "graph/ew_generic.h"
#include "graph/ew_scalar.h"
#include "graph/opcode_kernels.h"
#include "kernels/binary.h"
#include "kernels/clamp.h"
#include "kernels/compare.h"
#include "kernels/convert.h"
#include "kernels/select.h"
#include "kernels/unary.h"

/* The halves' f32 step: the kernels' naive references (graph/ew_generic.h). */
static void ref_f32(void *ctx, optic_opcode op, optic_compare_dir cmp, size_t n, const float *const *src, void *y) {
  (void)ctx;
  optic_unary_op u;
  optic_binary_op b;
  if (op == OPTIC_OP_COMPARE) optic_ref_f32_compare((optic_compare_op)cmp, n, src[0], src[1], y);
  else if (op == OPTIC_OP_CLAMP) optic_ref_f32_clamp(n, src[1], src[0], src[2], y);
  else if (graph_opcode_binary_kernel(op, &b)) optic_ref_f32_binary(b, n, src[0], src[1], y);
  else if (graph_opcode_unary_kernel(op, &u)) optic_ref_f32_unary(u, n, src[0], y);
}

/* Integers of every width and the halves (graph/ew_generic.h); false if the
 * pair is not defined there. */
static bool generic(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                    const void *const *src, void *y) {
  if (!graph_ew_generic_supported(op, in, out)) return false;
  graph_ew_generic(op, cmp, in, out, n, src, 0, y, ref_f32, NULL);
  return true;
}

static optic_status unsupported(optic_opcode op, optic_dtype dt) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: the evaluator does not define it for dtype %s", optic_opcode_name(op),
                    optic_dtype_name(dt));
}

bool eval_is_binary(optic_opcode op) { return graph_opcode_kind_of(op) == GRAPH_OPCODE_BINARY; }

/* The ops of graph/ew_scalar.h, shared with the runtime. */
static optic_status scalar_family(optic_opcode op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                                  const void *a, const void *b, void *y) {
  if (!graph_ew_scalar_defines(op, in, out)) return unsupported(op, in);
  const void *src[2] = {a, b};
  graph_ew_scalar_apply(op, param, in, out, n, src, 0, y);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ unary */

static bool f64_unary(optic_opcode op, size_t n, const double *x, double *y) {
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    switch (op) {
      case OPTIC_OP_NEGATE: y[i] = -v; break;
      case OPTIC_OP_ABS: y[i] = fabs(v); break;
      case OPTIC_OP_EXPONENTIAL: y[i] = exp(v); break;
      case OPTIC_OP_LOG: y[i] = log(v); break;
      case OPTIC_OP_SQRT: y[i] = sqrt(v); break;
      case OPTIC_OP_RSQRT: y[i] = 1.0 / sqrt(v); break;
      case OPTIC_OP_TANH: y[i] = tanh(v); break;
      case OPTIC_OP_LOGISTIC: y[i] = 1.0 / (1.0 + exp(-v)); break;
      case OPTIC_OP_SIGN: y[i] = (isnan(v) || v == 0.0) ? v : (v > 0.0 ? 1.0 : -1.0); break;
      case OPTIC_OP_FLOOR: y[i] = floor(v); break;
      case OPTIC_OP_CEIL: y[i] = ceil(v); break;
      default: return false;
    }
  }
  return true;
}

static bool s32_unary(optic_opcode op, size_t n, const int32_t *x, int32_t *y) {
  for (size_t i = 0; i < n; i++) {
    int32_t v = x[i];
    uint32_t neg = 0u - (uint32_t)v; /* two's complement: negate(INT32_MIN) = INT32_MIN */
    switch (op) {
      case OPTIC_OP_NEGATE: y[i] = (int32_t)neg; break;
      case OPTIC_OP_ABS: y[i] = v < 0 ? (int32_t)neg : v; break;
      case OPTIC_OP_SIGN: y[i] = (v > 0) - (v < 0); break;
      case OPTIC_OP_NOT: y[i] = ~v; break;
      default: return false;
    }
  }
  return true;
}

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
    case OPTIC_F64: ok = f64_unary(op, n, x, y); break;
    case OPTIC_S32: ok = s32_unary(op, n, x, y); break;
    case OPTIC_U8:
    case OPTIC_PRED:
      if ((ok = op == OPTIC_OP_NOT)) {
        const uint8_t *xb = x;
        uint8_t *yb = y;
        for (size_t i = 0; i < n; i++) yb[i] = dt == OPTIC_PRED ? (xb[i] == 0) : (uint8_t)~xb[i];
      }
      break;
    default: break;
  }
  if (!ok) ok = generic(op, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){x}, y);
  return ok ? OPTIC_OK : unsupported(op, dt);
}

/* ------------------------------------------------------------ binary */

/* The binary family's NaN-propagating maximum/minimum (kernels/binary.h). */
static double max_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static double min_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

static bool f64_binary(optic_opcode op, size_t n, const double *a, const double *b, double *y) {
  for (size_t i = 0; i < n; i++) {
    double u = a[i], v = b[i];
    switch (op) {
      case OPTIC_OP_ADD: y[i] = u + v; break;
      case OPTIC_OP_SUBTRACT: y[i] = u - v; break;
      case OPTIC_OP_MULTIPLY: y[i] = u * v; break;
      case OPTIC_OP_DIVIDE: y[i] = u / v; break;
      case OPTIC_OP_POWER: y[i] = pow(u, v); break;
      case OPTIC_OP_MAXIMUM: y[i] = max_f64(u, v); break;
      case OPTIC_OP_MINIMUM: y[i] = min_f64(u, v); break;
      default: return false;
    }
  }
  return true;
}

/* Unsigned exponentiation by squaring, wrapping modulo 2^32. */
static uint32_t ipow_u32(uint32_t base, uint32_t e) {
  uint32_t r = 1;
  while (e) {
    if (e & 1u) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

static bool s32_binary(optic_opcode op, size_t n, const int32_t *a, const int32_t *b, int32_t *y) {
  for (size_t i = 0; i < n; i++) {
    int32_t u = a[i], v = b[i];
    uint32_t uu = (uint32_t)u, uv = (uint32_t)v;
    switch (op) {
      case OPTIC_OP_ADD: y[i] = (int32_t)(uu + uv); break;
      case OPTIC_OP_SUBTRACT: y[i] = (int32_t)(uu - uv); break;
      case OPTIC_OP_MULTIPLY: y[i] = (int32_t)(uu * uv); break;
      case OPTIC_OP_DIVIDE: y[i] = v == 0 ? -1 : (u == INT32_MIN && v == -1) ? INT32_MIN : u / v; break;
      case OPTIC_OP_POWER: y[i] = v < 0 ? (u == 1) : (int32_t)ipow_u32(uu, uv); break;
      case OPTIC_OP_MAXIMUM: y[i] = u > v ? u : v; break;
      case OPTIC_OP_MINIMUM: y[i] = u < v ? u : v; break;
      case OPTIC_OP_AND: y[i] = u & v; break;
      case OPTIC_OP_OR: y[i] = u | v; break;
      default: return false;
    }
  }
  return true;
}

static bool u8_binary(optic_opcode op, size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y) {
  for (size_t i = 0; i < n; i++) {
    unsigned u = a[i], v = b[i];
    switch (op) {
      case OPTIC_OP_ADD: y[i] = (uint8_t)(u + v); break;
      case OPTIC_OP_SUBTRACT: y[i] = (uint8_t)(u - v); break;
      case OPTIC_OP_MULTIPLY: y[i] = (uint8_t)(u * v); break;
      case OPTIC_OP_DIVIDE: y[i] = v == 0 ? UINT8_MAX : (uint8_t)(u / v); break;
      case OPTIC_OP_POWER: y[i] = (uint8_t)ipow_u32(u, v); break;
      case OPTIC_OP_MAXIMUM: y[i] = (uint8_t)(u > v ? u : v); break;
      case OPTIC_OP_MINIMUM: y[i] = (uint8_t)(u < v ? u : v); break;
      case OPTIC_OP_AND: y[i] = (uint8_t)(u & v); break;
      case OPTIC_OP_OR: y[i] = (uint8_t)(u | v); break;
      default: return false;
    }
  }
  return true;
}

/* pred: maximum is or, minimum is and (false < true); nonzero bytes are true. */
static bool pred_binary(optic_opcode op, size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y) {
  bool is_or = op == OPTIC_OP_OR || op == OPTIC_OP_MAXIMUM;
  if (!is_or && op != OPTIC_OP_AND && op != OPTIC_OP_MINIMUM) return false;
  for (size_t i = 0; i < n; i++) y[i] = is_or ? (a[i] || b[i]) : (a[i] && b[i]);
  return true;
}

optic_status eval_binary_raw(optic_opcode op, optic_dtype dt, size_t n, const void *a, const void *b, void *y) {
  if (graph_ew_scalar_op(op)) return scalar_family(op, 0, dt, dt, n, a, b, y);
  bool ok = false;
  optic_binary_op k;
  switch (dt) {
    case OPTIC_F32:
      if ((ok = graph_opcode_binary_kernel(op, &k))) optic_ref_f32_binary(k, n, a, b, y);
      break;
    case OPTIC_F64: ok = f64_binary(op, n, a, b, y); break;
    case OPTIC_S32: ok = s32_binary(op, n, a, b, y); break;
    case OPTIC_U8: ok = u8_binary(op, n, a, b, y); break;
    case OPTIC_PRED: ok = pred_binary(op, n, a, b, y); break;
    default: break;
  }
  if (!ok && dt != OPTIC_PRED) ok = generic(op, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){a, b}, y);
  return ok ? OPTIC_OK : unsupported(op, dt);
}

/* ------------------------------------------------------------ compare */

/* a dir b for a three-way sign (-1, 0, 1) or an unordered pair. */
static uint8_t compare_result(optic_compare_dir dir, int sign, bool unordered) {
  if (unordered) return dir == OPTIC_CMP_NE;
  switch (dir) {
    case OPTIC_CMP_EQ: return sign == 0;
    case OPTIC_CMP_NE: return sign != 0;
    case OPTIC_CMP_LT: return sign < 0;
    case OPTIC_CMP_LE: return sign <= 0;
    case OPTIC_CMP_GT: return sign > 0;
    default: return sign >= 0;
  }
}

static optic_status eval_compare(const optic_instr *in, const optic_literal *a, const optic_literal *b,
                                 optic_literal *out) {
  size_t n = lit_elements(a);
  uint8_t *y = out->data;
  switch (a->type.dtype) {
    case OPTIC_F32:
      optic_ref_f32_compare((optic_compare_op)in->cmp, n, a->data, b->data, y);
      return OPTIC_OK;
    case OPTIC_F64: {
      const double *x = a->data, *z = b->data;
      for (size_t i = 0; i < n; i++) {
        y[i] = compare_result(in->cmp, (x[i] > z[i]) - (x[i] < z[i]), isnan(x[i]) || isnan(z[i]));
      }
      return OPTIC_OK;
    }
    case OPTIC_S32: {
      const int32_t *x = a->data, *z = b->data;
      for (size_t i = 0; i < n; i++) y[i] = compare_result(in->cmp, (x[i] > z[i]) - (x[i] < z[i]), false);
      return OPTIC_OK;
    }
    case OPTIC_U8:
    case OPTIC_PRED: {
      bool pred = a->type.dtype == OPTIC_PRED;
      const uint8_t *x = a->data, *z = b->data;
      for (size_t i = 0; i < n; i++) {
        unsigned u = pred ? x[i] != 0 : x[i], v = pred ? z[i] != 0 : z[i];
        y[i] = compare_result(in->cmp, (u > v) - (u < v), false);
      }
      return OPTIC_OK;
    }
    default:
      if (generic(in->op, in->cmp, a->type.dtype, OPTIC_PRED, n, (const void *const[]){a->data, b->data}, y)) {
        return OPTIC_OK;
      }
      return unsupported(in->op, a->type.dtype);
  }
}

/* ------------------------------------------------------------ select, clamp */

static void eval_select(const optic_literal *p, const optic_literal *t, const optic_literal *f, optic_literal *out) {
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
static optic_status bound_array(const optic_literal *b, size_t n, void **tmp, const void **out) {
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

static optic_status eval_clamp(const optic_literal *lo, const optic_literal *x, const optic_literal *hi,
                               optic_literal *out) {
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
    case OPTIC_S8: case OPTIC_S16: case OPTIC_S64: case OPTIC_U16: case OPTIC_U32: case OPTIC_U64:
    case OPTIC_F16: case OPTIC_BF16:
      generic(OPTIC_OP_CLAMP, OPTIC_CMP_EQ, dt, dt, n, (const void *const[]){l, x->data, h}, out->data);
      break;
    case OPTIC_F32: optic_ref_f32_clamp(n, x->data, l, h, out->data); break;
    case OPTIC_F64: {
      const double *xv = x->data, *lv = l, *hv = h;
      double *y = out->data;
      for (size_t i = 0; i < n; i++) y[i] = min_f64(max_f64(xv[i], lv[i]), hv[i]);
      break;
    }
    case OPTIC_S32: {
      const int32_t *xv = x->data, *lv = l, *hv = h;
      int32_t *y = out->data;
      for (size_t i = 0; i < n; i++) {
        int32_t t = xv[i] > lv[i] ? xv[i] : lv[i];
        y[i] = t < hv[i] ? t : hv[i];
      }
      break;
    }
    default: { /* u8, pred: unsigned bytes */
      const uint8_t *xv = x->data, *lv = l, *hv = h;
      uint8_t *y = out->data;
      for (size_t i = 0; i < n; i++) {
        uint8_t t = xv[i] > lv[i] ? xv[i] : lv[i];
        y[i] = t < hv[i] ? t : hv[i];
      }
      break;
    }
  }
  free(tl);
  free(th);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ convert */

/* A float to an integer of [lo, hi]: truncation toward zero, NaN -> 0,
 * saturating (the rule of the kernels' f32 -> s32, docs/kernels-elementwise.md). */
static double trunc_sat(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  return t < lo ? lo : t > hi ? hi : t;
}

/* One element of a conversion the reference kernels do not cover, through
 * double (which holds every f32, s32 and u8 exactly). */
static double load_as_double(optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: return *(const float *)(const void *)p;
    case OPTIC_F64: return *(const double *)(const void *)p;
    case OPTIC_S32: return *(const int32_t *)(const void *)p;
    case OPTIC_PRED: return *p != 0;
    default: return *p;
  }
}

static void store_from_double(optic_dtype src, optic_dtype dt, double v, const unsigned char *from, unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: *(float *)(void *)p = (float)v; break;
    case OPTIC_F64: *(double *)(void *)p = v; break;
    case OPTIC_S32: *(int32_t *)(void *)p = (int32_t)trunc_sat(v, INT32_MIN, INT32_MAX); break;
    case OPTIC_PRED: *p = v != 0; break;
    default: /* u8: integers keep their low byte (XLA's integer convert), floats saturate */
      if (src == OPTIC_S32) {
        int32_t w = *(const int32_t *)(const void *)from;
        *p = (uint8_t)(uint32_t)w;
      } else {
        *p = (uint8_t)trunc_sat(v, 0, UINT8_MAX);
      }
      break;
  }
}

static void eval_convert(const optic_literal *x, optic_literal *out) {
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
  } else {
    size_t ss = optic_dtype_size(s), ds = optic_dtype_size(d);
    const unsigned char *xb = xv;
    unsigned char *yb = yv;
    for (size_t i = 0; i < n; i++) store_from_double(s, d, load_as_double(s, xb + i * ss), xb + i * ss, yb + i * ds);
  }
}

/* ------------------------------------------------------------ dispatch */

optic_status eval_elementwise(eval_ctx *ctx, const optic_instr *in, const optic_literal *const *ops,
                              optic_literal **out) {
  (void)ctx;
  optic_literal *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  const optic_literal *a = ops[0];
  switch (in->op) {
    case OPTIC_OP_IS_FINITE:
    case OPTIC_OP_BITCAST_CONVERT:
    case OPTIC_OP_REDUCE_PRECISION: {
      int32_t param = in->op == OPTIC_OP_REDUCE_PRECISION ? graph_ew_reduce_precision_param(in->ints[0], in->ints[1]) : 0;
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
