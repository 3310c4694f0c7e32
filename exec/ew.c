/* The executor's elementwise primitive: one op over n elements of any dtype,
 * f32 through the kernels' dispatch tables, other dtypes through plain loops
 * with the reference evaluator's semantics (docs/graph-evaluate.md), so the
 * runtime agrees with the oracle bitwise except where an f32 kernel has a
 * documented ULP bound. Never allocates; scalar operands are expanded in
 * small stack chunks when a kernel has no scalar form. */
#include <math.h>
#include <pthread.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include <string.h>

#include "exec/exec_internal.h"
#include "graph/ew_generic.h"
#include "graph/ew_scalar.h"
#include "graph/opcode_kernels.h"
#include "kernels/binary.h"
#include "kernels/clamp.h"
#include "kernels/compare.h"
#include "kernels/convert.h"
#include "kernels/select.h"
#include "kernels/unary.h"

bool ew_is_elementwise(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_ADD: case OPTIC_OP_SUBTRACT: case OPTIC_OP_MULTIPLY: case OPTIC_OP_DIVIDE: case OPTIC_OP_POWER:
    case OPTIC_OP_MAXIMUM: case OPTIC_OP_MINIMUM: case OPTIC_OP_AND: case OPTIC_OP_OR: case OPTIC_OP_NEGATE:
    case OPTIC_OP_ABS: case OPTIC_OP_EXPONENTIAL: case OPTIC_OP_LOG: case OPTIC_OP_SQRT: case OPTIC_OP_RSQRT:
    case OPTIC_OP_TANH: case OPTIC_OP_LOGISTIC: case OPTIC_OP_SIGN: case OPTIC_OP_FLOOR: case OPTIC_OP_CEIL:
    case OPTIC_OP_NOT: case OPTIC_OP_COMPARE: case OPTIC_OP_SELECT: case OPTIC_OP_CLAMP: case OPTIC_OP_CONVERT:
    case OPTIC_OP_COPY: return true;
    default: return graph_ew_scalar_op(op);
  }
}

/* The BINARY rows of the kind column of OPTIC_OPCODE_LIST. */
#define EW_KIND_BINARY 1
#define EW_KIND_UNARY 0
#define EW_KIND_ELEMENTWISE 0
#define EW_KIND_OTHER 0
#define EW_IS_BINARY_(name, str, kind) [OPTIC_OP_##name] = EW_KIND_##kind,
static const bool ew_binary_[OPTIC_OPCODE_COUNT_] = {OPTIC_OPCODE_LIST(EW_IS_BINARY_)};
#undef EW_IS_BINARY_
static bool is_binary(optic_opcode op) { return (unsigned)op < OPTIC_OPCODE_COUNT_ && ew_binary_[op]; }

optic_compare_dir ew_param_of(const optic_node_attrs_t *a) {
  if (a->kind == OPTIC_ATTRS_REDUCE_PRECISION) {
    return (optic_compare_dir)graph_ew_reduce_precision_param(a->reduce_precision.exponent_bits,
                                                              a->reduce_precision.mantissa_bits);
  }
  return a->kind == OPTIC_ATTRS_COMPARE ? a->compare.direction : OPTIC_CMP_EQ;
}

bool ew_supported(optic_opcode op, optic_dtype in, optic_dtype out) {
  optic_unary_op u;
  optic_binary_op b;
  if (graph_ew_scalar_op(op)) return graph_ew_scalar_defines(op, in, out);
  if (op == OPTIC_OP_COPY || op == OPTIC_OP_CONVERT || op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP ||
      op == OPTIC_OP_COMPARE) {
    return optic_dtype_has_values(in) && optic_dtype_has_values(out);
  }
  switch (in) {
    case OPTIC_F32:
    case OPTIC_F64: return graph_opcode_unary_kernel(op, &u) || graph_opcode_binary_kernel(op, &b);
    case OPTIC_S32:
      return op == OPTIC_OP_NEGATE || op == OPTIC_OP_ABS || op == OPTIC_OP_SIGN || op == OPTIC_OP_NOT ||
             is_binary(op);
    case OPTIC_U8: return op == OPTIC_OP_NOT || is_binary(op) || graph_ew_generic_supported(op, in, out);
    case OPTIC_PRED:
      return op == OPTIC_OP_NOT || op == OPTIC_OP_AND || op == OPTIC_OP_OR || op == OPTIC_OP_MAXIMUM ||
             op == OPTIC_OP_MINIMUM;
    default: return graph_ew_generic_supported(op, in, out);
  }
}

/* The dtypes with loops of their own below; the others go to graph/ew_generic.c. */
static bool legacy_dtype(optic_dtype dt) {
  return dt == OPTIC_F32 || dt == OPTIC_F64 || dt == OPTIC_S32 || dt == OPTIC_U8 || dt == OPTIC_PRED;
}

/* The halves' f32 step: the dispatched f32 kernels, once per op. */
static void kernel_f32(void *ctx, optic_opcode op, optic_compare_dir cmp, size_t n, const float *const *src, void *y) {
  (void)ctx;
  ew_apply(op, cmp, OPTIC_F32, op == OPTIC_OP_COMPARE ? OPTIC_PRED : OPTIC_F32, n, (const void *const *)src, 0, y);
}

/* ------------------------------------------------------------ scalar semantics (non-f32) */

static double max_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static double min_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

static uint32_t ipow_u32(uint32_t base, uint32_t e) {
  uint32_t r = 1;
  while (e) {
    if (e & 1u) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

static double f64_unary1(optic_opcode op, double v) {
  switch (op) {
    case OPTIC_OP_NEGATE: return -v;
    case OPTIC_OP_ABS: return fabs(v);
    case OPTIC_OP_EXPONENTIAL: return exp(v);
    case OPTIC_OP_LOG: return log(v);
    case OPTIC_OP_SQRT: return sqrt(v);
    case OPTIC_OP_RSQRT: return 1.0 / sqrt(v);
    case OPTIC_OP_TANH: return tanh(v);
    case OPTIC_OP_LOGISTIC: return 1.0 / (1.0 + exp(-v));
    case OPTIC_OP_SIGN: return (isnan(v) || v == 0.0) ? v : (v > 0.0 ? 1.0 : -1.0);
    case OPTIC_OP_FLOOR: return floor(v);
    default: return ceil(v);
  }
}

static double f64_binary1(optic_opcode op, double u, double v) {
  switch (op) {
    case OPTIC_OP_ADD: return u + v;
    case OPTIC_OP_SUBTRACT: return u - v;
    case OPTIC_OP_MULTIPLY: return u * v;
    case OPTIC_OP_DIVIDE: return u / v;
    case OPTIC_OP_POWER: return pow(u, v);
    case OPTIC_OP_MAXIMUM: return max_f64(u, v);
    default: return min_f64(u, v);
  }
}

static int32_t s32_unary1(optic_opcode op, int32_t v) {
  uint32_t neg = 0u - (uint32_t)v;
  switch (op) {
    case OPTIC_OP_NEGATE: return (int32_t)neg;
    case OPTIC_OP_ABS: return v < 0 ? (int32_t)neg : v;
    case OPTIC_OP_SIGN: return (v > 0) - (v < 0);
    default: return ~v;
  }
}

static int32_t s32_binary1(optic_opcode op, int32_t u, int32_t v) {
  uint32_t uu = (uint32_t)u, uv = (uint32_t)v;
  switch (op) {
    case OPTIC_OP_ADD: return (int32_t)(uu + uv);
    case OPTIC_OP_SUBTRACT: return (int32_t)(uu - uv);
    case OPTIC_OP_MULTIPLY: return (int32_t)(uu * uv);
    case OPTIC_OP_DIVIDE: return v == 0 ? -1 : (u == INT32_MIN && v == -1) ? INT32_MIN : u / v;
    case OPTIC_OP_POWER: return v < 0 ? (u == 1) : (int32_t)ipow_u32(uu, uv);
    case OPTIC_OP_MAXIMUM: return u > v ? u : v;
    case OPTIC_OP_MINIMUM: return u < v ? u : v;
    case OPTIC_OP_AND: return u & v;
    default: return u | v;
  }
}

static uint8_t u8_binary1(optic_opcode op, unsigned u, unsigned v) {
  switch (op) {
    case OPTIC_OP_ADD: return (uint8_t)(u + v);
    case OPTIC_OP_SUBTRACT: return (uint8_t)(u - v);
    case OPTIC_OP_MULTIPLY: return (uint8_t)(u * v);
    case OPTIC_OP_DIVIDE: return v == 0 ? UINT8_MAX : (uint8_t)(u / v);
    case OPTIC_OP_POWER: return (uint8_t)ipow_u32(u, v);
    case OPTIC_OP_MAXIMUM: return (uint8_t)(u > v ? u : v);
    case OPTIC_OP_MINIMUM: return (uint8_t)(u < v ? u : v);
    case OPTIC_OP_AND: return (uint8_t)(u & v);
    default: return (uint8_t)(u | v);
  }
}

static uint8_t cmp_result(optic_compare_dir dir, int sign, bool unordered) {
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

static double load_d(optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: { float v; memcpy(&v, p, 4); return v; }
    case OPTIC_F64: { double v; memcpy(&v, p, 8); return v; }
    case OPTIC_S32: { int32_t v; memcpy(&v, p, 4); return v; }
    case OPTIC_PRED: return *p != 0;
    default: return *p;
  }
}

static double trunc_sat(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  return t < lo ? lo : t > hi ? hi : t;
}

static void store_cvt(optic_dtype src, optic_dtype dt, const unsigned char *from, unsigned char *p) {
  double v = load_d(src, from);
  switch (dt) {
    case OPTIC_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case OPTIC_F64: memcpy(p, &v, 8); break;
    case OPTIC_S32: { int32_t w = (int32_t)trunc_sat(v, INT32_MIN, INT32_MAX); memcpy(p, &w, 4); break; }
    case OPTIC_PRED: *p = v != 0; break;
    default:
      if (src == OPTIC_S32) {
        int32_t w;
        memcpy(&w, from, 4);
        *p = (uint8_t)(uint32_t)w;
      } else {
        *p = (uint8_t)trunc_sat(v, 0, UINT8_MAX);
      }
      break;
  }
}

/* Element i of operand k: its address (a scalar operand repeats element 0). */
#define AT(k, i, es) ((const unsigned char *)src[k] + (((scalar_mask >> (k)) & 1u) ? 0 : (i) * (es)))

static void generic_loop(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                         const void *const *src, unsigned scalar_mask, void *y) {
  size_t ies = optic_dtype_size(in), oes = optic_dtype_size(out);
  unsigned char *yb = y;
  for (size_t i = 0; i < n; i++) {
    unsigned char *d = yb + i * oes;
    switch (op) {
      case OPTIC_OP_COPY: memmove(d, AT(0, i, ies), ies); break;
      case OPTIC_OP_CONVERT: store_cvt(in, out, AT(0, i, ies), d); break;
      case OPTIC_OP_SELECT: memmove(d, *AT(0, i, 1) ? AT(1, i, ies) : AT(2, i, ies), ies); break;
      case OPTIC_OP_COMPARE: {
        const unsigned char *a = AT(0, i, ies), *b = AT(1, i, ies);
        if (in == OPTIC_F32 || in == OPTIC_F64) {
          double u = load_d(in, a), v = load_d(in, b);
          *d = cmp_result(cmp, (u > v) - (u < v), isnan(u) || isnan(v));
        } else if (in == OPTIC_S32) {
          int32_t u, v;
          memcpy(&u, a, 4);
          memcpy(&v, b, 4);
          *d = cmp_result(cmp, (u > v) - (u < v), false);
        } else {
          unsigned u = in == OPTIC_PRED ? *a != 0 : *a, v = in == OPTIC_PRED ? *b != 0 : *b;
          *d = cmp_result(cmp, (u > v) - (u < v), false);
        }
        break;
      }
      case OPTIC_OP_CLAMP: {
        const unsigned char *lo = AT(0, i, ies), *x = AT(1, i, ies), *hi = AT(2, i, ies);
        if (in == OPTIC_F32) {
          float fl, fx, fh;
          memcpy(&fl, lo, 4), memcpy(&fx, x, 4), memcpy(&fh, hi, 4);
          float r = optic_clamp_f32(fx, fl, fh);
          memcpy(d, &r, 4);
        } else if (in == OPTIC_F64) {
          double r = min_f64(max_f64(load_d(in, x), load_d(in, lo)), load_d(in, hi));
          memcpy(d, &r, 8);
        } else if (in == OPTIC_S32) {
          int32_t l, xv, h;
          memcpy(&l, lo, 4), memcpy(&xv, x, 4), memcpy(&h, hi, 4);
          int32_t t = xv > l ? xv : l;
          t = t < h ? t : h;
          memcpy(d, &t, 4);
        } else {
          uint8_t t = *x > *lo ? *x : *lo;
          *d = t < *hi ? t : *hi;
        }
        break;
      }
      default:
        if (is_binary(op)) {
          const unsigned char *a = AT(0, i, ies), *b = AT(1, i, ies);
          switch (in) {
            case OPTIC_F32: {
              /* Only reached for operands in place/scalar combos the kernels lack. */
              float u, v, r;
              memcpy(&u, a, 4), memcpy(&v, b, 4);
              optic_binary_op k = OPTIC_BINARY_ADD;
              graph_opcode_binary_kernel(op, &k);
              optic_ref_f32_binary(k, 1, &u, &v, &r);
              memcpy(d, &r, 4);
              break;
            }
            case OPTIC_F64: { double r = f64_binary1(op, load_d(in, a), load_d(in, b)); memcpy(d, &r, 8); break; }
            case OPTIC_S32: {
              int32_t u, v, r;
              memcpy(&u, a, 4), memcpy(&v, b, 4);
              r = s32_binary1(op, u, v);
              memcpy(d, &r, 4);
              break;
            }
            case OPTIC_U8: *d = u8_binary1(op, *a, *b); break;
            default: { /* pred: maximum is or, minimum is and */
              bool is_or = op == OPTIC_OP_OR || op == OPTIC_OP_MAXIMUM;
              *d = is_or ? (*a || *b) : (*a && *b);
              break;
            }
          }
        } else {
          const unsigned char *a = AT(0, i, ies);
          switch (in) {
            case OPTIC_F64: { double r = f64_unary1(op, load_d(in, a)); memcpy(d, &r, 8); break; }
            case OPTIC_S32: {
              int32_t u, r;
              memcpy(&u, a, 4);
              r = s32_unary1(op, u);
              memcpy(d, &r, 4);
              break;
            }
            case OPTIC_U8: *d = (uint8_t)~*a; break;
            default: *d = *a == 0; break; /* pred not */
          }
        }
        break;
    }
  }
}

/* ------------------------------------------------------------ f32 through the kernels */

typedef struct ew_tables {
  const optic_binary_kernels *bin;
  const optic_unary_kernels *un;
  const optic_compare_kernels *cmp;
  const optic_select_kernels *sel;
  const optic_clamp_kernels *clamp;
  const optic_convert_kernels *cvt;
} ew_tables;

/* The dispatch tables for the selected ISA, fetched once per process (each
 * _get() is itself once-initialized and thread-safe). */
static ew_tables g_tables;
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void) {
  g_tables = (ew_tables){optic_binary_kernels_get(), optic_unary_kernels_get(), optic_compare_kernels_get(),
                         optic_select_kernels_get(), optic_clamp_kernels_get(), optic_convert_kernels_get()};
}

static const ew_tables *tables(void) {
  pthread_once(&g_tables_once, tables_init);
  return &g_tables;
}

static void fill(size_t es, size_t n, const void *v, unsigned char *dst) {
  switch (es) {
    case 4: {
      uint32_t x;
      memcpy(&x, v, 4);
      uint32_t *d = (uint32_t *)(void *)dst;
      for (size_t i = 0; i < n; i++) d[i] = x;
      break;
    }
    case 8: {
      uint64_t x;
      memcpy(&x, v, 8);
      uint64_t *d = (uint64_t *)(void *)dst;
      for (size_t i = 0; i < n; i++) d[i] = x;
      break;
    }
    default: memset(dst, *(const unsigned char *)v, n); break;
  }
}

#define CHUNK 256

/* Expands the masked operands into stack chunks and runs the op unmasked. */
static void expand_scalars(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                           const void *const *src, unsigned mask, void *y, int nsrc) {
  _Alignas(64) unsigned char tmp[3][CHUNK * 8];
  size_t oes = optic_dtype_size(out);
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    const void *s[3];
    for (int k = 0; k < nsrc; k++) {
      size_t es = (op == OPTIC_OP_SELECT && k == 0) ? 1 : optic_dtype_size(in);
      if ((mask >> k) & 1u) {
        fill(es, len, src[k], tmp[k]);
        s[k] = tmp[k];
      } else {
        s[k] = (const unsigned char *)src[k] + lo * es;
      }
    }
    ew_apply(op, cmp, in, out, len, s, 0, (unsigned char *)y + lo * oes);
  }
}

static bool f32_apply(optic_opcode op, optic_compare_dir cmp, optic_dtype out, size_t n, const void *const *src,
                      unsigned mask, void *y) {
  const ew_tables *t = tables();
  optic_unary_op u;
  optic_binary_op b;
  if (graph_opcode_unary_kernel(op, &u)) {
    if (mask) return false;
    t->un->kernel[u](n, src[0], y);
    return true;
  }
  if (graph_opcode_binary_kernel(op, &b)) {
    if (mask == 1u && (op == OPTIC_OP_ADD || op == OPTIC_OP_MULTIPLY)) {
      /* s + a[i] and s * a[i] equal a[i] + s and a[i] * s (IEEE addition and
       * multiplication commute; only a NaN payload could differ). */
      t->bin->vs[b](n, src[1], *(const float *)src[0], y);
      return true;
    }
    if (mask == 0) t->bin->vv[b](n, src[0], src[1], y);
    else if (mask == 2u) t->bin->vs[b](n, src[0], *(const float *)src[1], y);
    else return false;
    return true;
  }
  switch (op) {
    case OPTIC_OP_COMPARE:
      if (mask == 0) t->cmp->vv[cmp](n, src[0], src[1], y);
      else if (mask == 2u) t->cmp->vs[cmp](n, src[0], *(const float *)src[1], y);
      else return false;
      return true;
    case OPTIC_OP_SELECT:
      if (mask == 0) t->sel->vpred(n, src[0], src[1], src[2], y);
      else if (mask == 1u) t->sel->spred(n, *(const uint8_t *)src[0], src[1], src[2], y);
      else return false;
      return true;
    case OPTIC_OP_CLAMP:
      if (mask == 0) t->clamp->vv(n, src[1], src[0], src[2], y);
      else if (mask == 5u) t->clamp->vs(n, src[1], *(const float *)src[0], *(const float *)src[2], y);
      else return false;
      return true;
    case OPTIC_OP_CONVERT:
      if (mask) return false;
      switch (out) {
        case OPTIC_F64: t->cvt->f32_f64(n, src[0], y); return true;
        case OPTIC_S32: t->cvt->f32_s32(n, src[0], y); return true;
        case OPTIC_PRED: t->cvt->f32_pred(n, src[0], y); return true;
        case OPTIC_F32: if (y != src[0]) memcpy(y, src[0], n * 4); return true;
        default: return false;
      }
    default: return false;
  }
}

void ew_apply(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
              const void *const *src, unsigned scalar_mask, void *y) {
  if (n == 0) return;
  if (graph_ew_scalar_op(op)) {
    graph_ew_scalar_apply(op, (int32_t)cmp, in, out, n, src, scalar_mask, y);
    return;
  }
  int nsrc = op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP ? 3 : (is_binary(op) || op == OPTIC_OP_COMPARE) ? 2 : 1;
  if (op == OPTIC_OP_COPY && !scalar_mask) {
    if (y != src[0]) memmove(y, src[0], n * optic_dtype_size(in));
    return;
  }
  if (!legacy_dtype(in) || (op == OPTIC_OP_CONVERT && !legacy_dtype(out)) ||
      (in == OPTIC_U8 && (op == OPTIC_OP_NEGATE || op == OPTIC_OP_ABS))) {
    graph_ew_generic(op, cmp, in, out, n, src, scalar_mask, y, kernel_f32, NULL);
    return;
  }
  if (in == OPTIC_F32 && op != OPTIC_OP_COPY) {
    if (f32_apply(op, cmp, out, n, src, scalar_mask, y)) return;
    if (scalar_mask && op != OPTIC_OP_CONVERT) {
      expand_scalars(op, cmp, in, out, n, src, scalar_mask, y, nsrc);
      return;
    }
  }
  if (op == OPTIC_OP_CONVERT && !scalar_mask) {
    const ew_tables *t = tables();
    if (in == OPTIC_F64 && out == OPTIC_F32) return t->cvt->f64_f32(n, src[0], y);
    if (in == OPTIC_S32 && out == OPTIC_F32) return t->cvt->s32_f32(n, src[0], y);
    if (in == OPTIC_F64 && out == OPTIC_S32) return t->cvt->f64_s32(n, src[0], y);
    if (in == OPTIC_S32 && out == OPTIC_F64) return t->cvt->s32_f64(n, src[0], y);
    if (in == OPTIC_U8 && out == OPTIC_F32) return t->cvt->u8_f32(n, src[0], y);
    if (in == out) {
      if (y != src[0]) memmove(y, src[0], n * optic_dtype_size(in));
      return;
    }
  }
  generic_loop(op, cmp, in, out, n, src, scalar_mask, y);
}

/* ------------------------------------------------------------ strided walks */

static int64_t walk_offset(const exec_walk *w, size_t i, int64_t *idx) {
  int64_t off = w->base;
  for (int32_t d = w->rank - 1; d >= 0; d--) {
    int64_t dim = w->dims[d];
    idx[d] = dim ? (int64_t)(i % (size_t)dim) : 0;
    i = dim ? i / (size_t)dim : 0;
    off += idx[d] * w->strides[d];
  }
  return off;
}

/* Calls body(dst_index, src_offset, run) for maximal runs along the last dim. */
#define WALK_RUNS(w, lo, len, BODY)                                                        \
  do {                                                                                     \
    int64_t idx_[OPTIC_MAX_RANK];                                                          \
    int64_t off_ = walk_offset(w, lo, idx_);                                               \
    int32_t last_ = (w)->rank - 1;                                                         \
    size_t k_ = 0;                                                                         \
    while (k_ < (len)) {                                                                   \
      size_t run_ = last_ < 0 ? 1 : (size_t)((w)->dims[last_] - idx_[last_]);              \
      if (run_ > (len) - k_) run_ = (len) - k_;                                            \
      int64_t st_ = last_ < 0 ? 0 : (w)->strides[last_];                                   \
      BODY;                                                                                \
      k_ += run_;                                                                          \
      if (last_ < 0) break;                                                                \
      idx_[last_] += (int64_t)run_;                                                        \
      off_ += (int64_t)run_ * st_;                                                         \
      for (int32_t d_ = last_; d_ > 0 && idx_[d_] >= (w)->dims[d_]; d_--) {                \
        off_ -= idx_[d_] * (w)->strides[d_];                                               \
        idx_[d_] = 0;                                                                      \
        idx_[d_ - 1]++;                                                                    \
        off_ += (w)->strides[d_ - 1];                                                      \
      }                                                                                    \
    }                                                                                      \
  } while (0)

static void copy_run(size_t es, const unsigned char *s, int64_t sst, unsigned char *d, int64_t dst_st, size_t run) {
  if (sst == 1 && dst_st == 1) {
    memcpy(d, s, run * es);
    return;
  }
  switch (es) {
    case 4: {
      /* memcpy keeps unaligned arrays defined; the constant-size copies compile to moves */
      if (sst == 0 && dst_st == 1) { /* a broadcast along the run: one value, filled (vectorized) */
        uint32_t v;
        memcpy(&v, s, 4);
        for (size_t j = 0; j < run; j++) memcpy(d + j * 4, &v, 4);
      } else if (dst_st == 1) {
        for (size_t j = 0; j < run; j++) memcpy(d + j * 4, s + (int64_t)j * sst * 4, 4);
      } else {
        for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 4, s + (int64_t)j * sst * 4, 4);
      }
      break;
    }
    case 8: {
      for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 8, s + (int64_t)j * sst * 8, 8);
      break;
    }
    case 2: {
      for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 2, s + (int64_t)j * sst * 2, 2);
      break;
    }
    case 1:
      for (size_t j = 0; j < run; j++) d[(int64_t)j * dst_st] = s[(int64_t)j * sst];
      break;
    default: /* token: no bytes */
      break;
  }
}

void walk_gather(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst) {
  if (len == 0) return;
  const unsigned char *s = src;
  unsigned char *d = dst;
  WALK_RUNS(w, lo, len, copy_run(es, s + off_ * (int64_t)es, st_, d + k_ * es, 1, run_));
}

void walk_scatter(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst) {
  if (len == 0) return;
  const unsigned char *s = src;
  unsigned char *d = dst;
  WALK_RUNS(w, lo, len, copy_run(es, s + k_ * es, 1, d + off_ * (int64_t)es, st_, run_));
}

/* ------------------------------------------------------------ streaming stores */

void stream_copy(void *dst, const void *src, size_t bytes) {
#if defined(__x86_64__)
  unsigned char *d = dst;
  const unsigned char *sp = src;
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > bytes) head = bytes;
  memcpy(d, sp, head);
  d += head, sp += head, bytes -= head;
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) _mm_stream_si128((__m128i *)(void *)(d + i), _mm_loadu_si128((const __m128i *)(const void *)(sp + i)));
  memcpy(d + i, sp + i, bytes - i);
#else
  memcpy(dst, src, bytes);
#endif
}

void stream_fence(void) {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}
