/* The basic family: elementwise ops one element at a time on f32, f64,
 * s32, u8 and pred (kernels/elem.h). Integer arithmetic wraps and never
 * hits C undefined behaviour; floats follow IEEE with the binary kernels'
 * NaN-propagating maximum and minimum. */
#include "kernels/elem.h"

#include <math.h>
#include <string.h>

#include "kernels/clamp.h"

bool optic_elem_basic_defines(optic_elem_op op, optic_dtype in) {
  optic_unary_op u;
  optic_binary_op b;
  bool binary = optic_elem_kind_of(op) == OPTIC_ELEM_KIND_BINARY && !optic_elem_scalar_op(op);
  switch (in) {
    case OPTIC_F32:
    case OPTIC_F64: return optic_elem_unary_kernel(op, &u) || optic_elem_binary_kernel(op, &b);
    case OPTIC_S32:
      return op == OPTIC_ELEM_NEGATE || op == OPTIC_ELEM_ABS || op == OPTIC_ELEM_SIGN || op == OPTIC_ELEM_NOT || binary;
    case OPTIC_U8: return op == OPTIC_ELEM_NOT || binary;
    case OPTIC_PRED:
      return op == OPTIC_ELEM_NOT || op == OPTIC_ELEM_AND || op == OPTIC_ELEM_OR || op == OPTIC_ELEM_MAXIMUM ||
             op == OPTIC_ELEM_MINIMUM;
    default: return false;
  }
}

/* The binary family's NaN-propagating maximum/minimum (kernels/binary.h). */
static double max_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static double min_f64(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

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

static double f64_unary1(optic_elem_op op, double v) {
  switch (op) {
    case OPTIC_ELEM_NEGATE: return -v;
    case OPTIC_ELEM_ABS: return fabs(v);
    case OPTIC_ELEM_EXPONENTIAL: return exp(v);
    case OPTIC_ELEM_LOG: return log(v);
    case OPTIC_ELEM_SQRT: return sqrt(v);
    case OPTIC_ELEM_RSQRT: return 1.0 / sqrt(v);
    case OPTIC_ELEM_TANH: return tanh(v);
    case OPTIC_ELEM_LOGISTIC: return 1.0 / (1.0 + exp(-v));
    case OPTIC_ELEM_SIGN: return (isnan(v) || v == 0.0) ? v : (v > 0.0 ? 1.0 : -1.0);
    case OPTIC_ELEM_FLOOR: return floor(v);
    case OPTIC_ELEM_ERF: return erf(v);
    case OPTIC_ELEM_LOG_PLUS_ONE: return log1p(v);
    case OPTIC_ELEM_EXPONENTIAL_MINUS_ONE: return expm1(v);
    default: return ceil(v);
  }
}

static double f64_binary1(optic_elem_op op, double u, double v) {
  switch (op) {
    case OPTIC_ELEM_ADD: return u + v;
    case OPTIC_ELEM_SUBTRACT: return u - v;
    case OPTIC_ELEM_MULTIPLY: return u * v;
    case OPTIC_ELEM_DIVIDE: return u / v;
    case OPTIC_ELEM_POWER: return pow(u, v);
    case OPTIC_ELEM_MAXIMUM: return max_f64(u, v);
    default: return min_f64(u, v);
  }
}

static int32_t s32_unary1(optic_elem_op op, int32_t v) {
  uint32_t neg = 0u - (uint32_t)v; /* two's complement: negate(INT32_MIN) = INT32_MIN */
  switch (op) {
    case OPTIC_ELEM_NEGATE: return (int32_t)neg;
    case OPTIC_ELEM_ABS: return v < 0 ? (int32_t)neg : v;
    case OPTIC_ELEM_SIGN: return (v > 0) - (v < 0);
    default: return ~v;
  }
}

static int32_t s32_binary1(optic_elem_op op, int32_t u, int32_t v) {
  uint32_t uu = (uint32_t)u, uv = (uint32_t)v;
  switch (op) {
    case OPTIC_ELEM_ADD: return (int32_t)(uu + uv);
    case OPTIC_ELEM_SUBTRACT: return (int32_t)(uu - uv);
    case OPTIC_ELEM_MULTIPLY: return (int32_t)(uu * uv);
    case OPTIC_ELEM_DIVIDE: return v == 0 ? -1 : (u == INT32_MIN && v == -1) ? INT32_MIN : u / v;
    case OPTIC_ELEM_POWER: return v < 0 ? (u == 1) : (int32_t)ipow_u32(uu, uv);
    case OPTIC_ELEM_MAXIMUM: return u > v ? u : v;
    case OPTIC_ELEM_MINIMUM: return u < v ? u : v;
    case OPTIC_ELEM_AND: return u & v;
    default: return u | v;
  }
}

static uint8_t u8_binary1(optic_elem_op op, unsigned u, unsigned v) {
  switch (op) {
    case OPTIC_ELEM_ADD: return (uint8_t)(u + v);
    case OPTIC_ELEM_SUBTRACT: return (uint8_t)(u - v);
    case OPTIC_ELEM_MULTIPLY: return (uint8_t)(u * v);
    case OPTIC_ELEM_DIVIDE: return v == 0 ? UINT8_MAX : (uint8_t)(u / v);
    case OPTIC_ELEM_POWER: return (uint8_t)ipow_u32(u, v);
    case OPTIC_ELEM_MAXIMUM: return (uint8_t)(u > v ? u : v);
    case OPTIC_ELEM_MINIMUM: return (uint8_t)(u < v ? u : v);
    case OPTIC_ELEM_AND: return (uint8_t)(u & v);
    default: return (uint8_t)(u | v);
  }
}

/* a dir b for a three-way sign (-1, 0, 1) or an unordered pair. */
static uint8_t cmp_result(optic_compare_op dir, int sign, bool unordered) {
  if (unordered) return dir == OPTIC_COMPARE_NE;
  switch (dir) {
    case OPTIC_COMPARE_EQ: return sign == 0;
    case OPTIC_COMPARE_NE: return sign != 0;
    case OPTIC_COMPARE_LT: return sign < 0;
    case OPTIC_COMPARE_LE: return sign <= 0;
    case OPTIC_COMPARE_GT: return sign > 0;
    default: return sign >= 0;
  }
}

/* One element through double, which holds every f32, s32 and u8 exactly. */
static double load_d(optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: {
      float v;
      memcpy(&v, p, 4);
      return (double)v;
    }
    case OPTIC_F64: {
      double v;
      memcpy(&v, p, 8);
      return v;
    }
    case OPTIC_S32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case OPTIC_PRED: return *p != 0;
    default: return *p;
  }
}

/* A float to an integer of [lo, hi]: truncation toward zero, NaN -> 0,
 * saturating (the rule of the kernels' f32 -> s32, docs/kernels-elementwise.md). */
static double trunc_sat(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  return t < lo ? lo : t > hi ? hi : t;
}

static void store_cvt(optic_dtype src, optic_dtype dt, const unsigned char *from, unsigned char *p) {
  double v = load_d(src, from);
  switch (dt) {
    case OPTIC_F32: {
      float f = (float)v;
      memcpy(p, &f, 4);
      break;
    }
    case OPTIC_F64: memcpy(p, &v, 8); break;
    case OPTIC_S32: {
      int32_t w = (int32_t)trunc_sat(v, INT32_MIN, INT32_MAX);
      memcpy(p, &w, 4);
      break;
    }
    case OPTIC_PRED: *p = v != 0; break;
    default: /* u8: integers keep their low byte (XLA's integer convert), floats saturate */
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

static uint8_t compare1(optic_compare_op cmp, optic_dtype in, const unsigned char *a, const unsigned char *b) {
  if (in == OPTIC_F32 || in == OPTIC_F64) {
    double u = load_d(in, a), v = load_d(in, b);
    return cmp_result(cmp, (u > v) - (u < v), isnan(u) || isnan(v));
  }
  if (in == OPTIC_S32) {
    int32_t u, v;
    memcpy(&u, a, 4);
    memcpy(&v, b, 4);
    return cmp_result(cmp, (u > v) - (u < v), false);
  }
  unsigned u = in == OPTIC_PRED ? *a != 0 : *a, v = in == OPTIC_PRED ? *b != 0 : *b;
  return cmp_result(cmp, (u > v) - (u < v), false);
}

/* clamp(lo, x, hi) = min(max(x, lo), hi). */
static void clamp1(optic_dtype in, const unsigned char *lo, const unsigned char *x, const unsigned char *hi,
                   unsigned char *d) {
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
  } else { /* u8, pred: unsigned bytes */
    uint8_t t = *x > *lo ? *x : *lo;
    *d = t < *hi ? t : *hi;
  }
}

static void binary1(optic_elem_op op, optic_dtype in, const unsigned char *a, const unsigned char *b,
                    unsigned char *d) {
  switch (in) {
    case OPTIC_F32: {
      float u, v, r;
      memcpy(&u, a, 4), memcpy(&v, b, 4);
      optic_binary_op k = OPTIC_BINARY_ADD;
      optic_elem_binary_kernel(op, &k);
      optic_ref_f32_binary(k, 1, &u, &v, &r);
      memcpy(d, &r, 4);
      break;
    }
    case OPTIC_F64: {
      double r = f64_binary1(op, load_d(in, a), load_d(in, b));
      memcpy(d, &r, 8);
      break;
    }
    case OPTIC_S32: {
      int32_t u, v, r;
      memcpy(&u, a, 4), memcpy(&v, b, 4);
      r = s32_binary1(op, u, v);
      memcpy(d, &r, 4);
      break;
    }
    case OPTIC_U8: *d = u8_binary1(op, *a, *b); break;
    default: { /* pred: maximum is or, minimum is and (false < true); nonzero bytes are true */
      bool is_or = op == OPTIC_ELEM_OR || op == OPTIC_ELEM_MAXIMUM;
      *d = is_or ? (*a || *b) : (*a && *b);
      break;
    }
  }
}

static void unary1(optic_elem_op op, optic_dtype in, const unsigned char *a, unsigned char *d) {
  switch (in) {
    case OPTIC_F64: {
      double r = f64_unary1(op, load_d(in, a));
      memcpy(d, &r, 8);
      break;
    }
    case OPTIC_S32: {
      int32_t u, r;
      memcpy(&u, a, 4);
      r = s32_unary1(op, u);
      memcpy(d, &r, 4);
      break;
    }
    case OPTIC_U8: *d = (uint8_t) ~*a; break;
    default: *d = *a == 0; break; /* pred not */
  }
}

/* Element i of operand k: its address (a scalar operand repeats element 0). */
#define AT(k, i, es) ((const unsigned char *)src[k] + (((scalar_mask >> (k)) & 1u) ? 0 : (i) * (es)))

void optic_elem_basic(optic_elem_op op, optic_compare_op cmp, optic_dtype in, optic_dtype out, size_t n,
                      const void *const *src, unsigned scalar_mask, void *y) {
  size_t ies = optic_dtype_size(in), oes = optic_dtype_size(out);
  bool binary = optic_elem_kind_of(op) == OPTIC_ELEM_KIND_BINARY;
  unsigned char *yb = y;
  for (size_t i = 0; i < n; i++) {
    unsigned char *d = yb + i * oes;
    switch (op) {
      case OPTIC_ELEM_COPY: memmove(d, AT(0, i, ies), ies); break;
      case OPTIC_ELEM_CONVERT: store_cvt(in, out, AT(0, i, ies), d); break;
      case OPTIC_ELEM_SELECT: memmove(d, *AT(0, i, 1) ? AT(1, i, ies) : AT(2, i, ies), ies); break;
      case OPTIC_ELEM_COMPARE: *d = compare1(cmp, in, AT(0, i, ies), AT(1, i, ies)); break;
      case OPTIC_ELEM_CLAMP: clamp1(in, AT(0, i, ies), AT(1, i, ies), AT(2, i, ies), d); break;
      default:
        if (binary) binary1(op, in, AT(0, i, ies), AT(1, i, ies), d);
        else unary1(op, in, AT(0, i, ies), d);
        break;
    }
  }
}
