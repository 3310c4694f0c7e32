/* The scalar family: one-element-at-a-time elementwise ops with XLA's
 * semantics (kernels/elem.h). Floating ops compute in the operand's precision (f32
 * through the float functions of libm, f64 through the double ones).
 * Integer ops work on the raw bits widened to 64, so no C undefined
 * behaviour is reachable (shift counts, INT_MIN % -1, division by zero). */
#include "kernels/elem.h"

#include <math.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kernels/elem_scalar.c loads integers of any width by their low-order bytes: little-endian only"
#endif

static bool is_int(optic_dtype dt) {
  int bits;
  bool s;
  return optic_elem_dtype_int_info(dt, &bits, &s);
}

bool optic_elem_scalar_op(optic_elem_op op) {
  switch (op) {
    case OPTIC_ELEM_SINE:
    case OPTIC_ELEM_COSINE:
    case OPTIC_ELEM_TAN:
    case OPTIC_ELEM_CBRT:
    case OPTIC_ELEM_ROUND_NEAREST_AFZ:
    case OPTIC_ELEM_ROUND_NEAREST_EVEN:
    case OPTIC_ELEM_ATAN2:
    case OPTIC_ELEM_REMAINDER:
    case OPTIC_ELEM_IS_FINITE:
    case OPTIC_ELEM_REDUCE_PRECISION:
    case OPTIC_ELEM_BITCAST_CONVERT:
    case OPTIC_ELEM_XOR:
    case OPTIC_ELEM_SHIFT_LEFT:
    case OPTIC_ELEM_SHIFT_RIGHT_LOGICAL:
    case OPTIC_ELEM_SHIFT_RIGHT_ARITHMETIC:
    case OPTIC_ELEM_POPCNT:
    case OPTIC_ELEM_COUNT_LEADING_ZEROS: return true;
    default: return false;
  }
}

bool optic_elem_scalar_defines(optic_elem_op op, optic_dtype in, optic_dtype out) {
  switch (op) {
    case OPTIC_ELEM_SINE:
    case OPTIC_ELEM_COSINE:
    case OPTIC_ELEM_TAN:
    case OPTIC_ELEM_CBRT:
    case OPTIC_ELEM_ROUND_NEAREST_AFZ:
    case OPTIC_ELEM_ROUND_NEAREST_EVEN:
    case OPTIC_ELEM_ATAN2:
    case OPTIC_ELEM_REDUCE_PRECISION: return optic_dtype_is_float(in) && out == in;
    case OPTIC_ELEM_REMAINDER: return (optic_dtype_is_float(in) || is_int(in)) && out == in;
    case OPTIC_ELEM_IS_FINITE: return optic_dtype_is_float(in) && out == OPTIC_PRED;
    case OPTIC_ELEM_BITCAST_CONVERT: return optic_dtype_size(in) != 0 && optic_dtype_size(in) == optic_dtype_size(out);
    case OPTIC_ELEM_XOR: return (is_int(in) || in == OPTIC_PRED) && out == in;
    case OPTIC_ELEM_SHIFT_LEFT:
    case OPTIC_ELEM_SHIFT_RIGHT_LOGICAL:
    case OPTIC_ELEM_SHIFT_RIGHT_ARITHMETIC:
    case OPTIC_ELEM_POPCNT:
    case OPTIC_ELEM_COUNT_LEADING_ZEROS: return is_int(in) && out == in;
    default: return false;
  }
}

/* ------------------------------------------------------------ floating point */

/* Round half to even without depending on the caller's rounding mode. */
static float round_even_f32(float x) {
  float r = roundf(x);
  return fabsf(x - truncf(x)) == 0.5f ? 2.0f * roundf(x * 0.5f) : r;
}

static double round_even_f64(double x) {
  double r = round(x);
  return fabs(x - trunc(x)) == 0.5 ? 2.0 * round(x * 0.5) : r;
}

static float f32_op(optic_elem_op op, float a, float b) {
  switch (op) {
    case OPTIC_ELEM_SINE: return sinf(a);
    case OPTIC_ELEM_COSINE: return cosf(a);
    case OPTIC_ELEM_TAN: return tanf(a);
    case OPTIC_ELEM_CBRT: return cbrtf(a);
    case OPTIC_ELEM_ROUND_NEAREST_AFZ: return roundf(a);
    case OPTIC_ELEM_ROUND_NEAREST_EVEN: return round_even_f32(a);
    case OPTIC_ELEM_ATAN2: return atan2f(a, b);
    default: return fmodf(a, b); /* remainder: the sign of the dividend, as C's fmod */
  }
}

static double f64_op(optic_elem_op op, double a, double b) {
  switch (op) {
    case OPTIC_ELEM_SINE: return sin(a);
    case OPTIC_ELEM_COSINE: return cos(a);
    case OPTIC_ELEM_TAN: return tan(a);
    case OPTIC_ELEM_CBRT: return cbrt(a);
    case OPTIC_ELEM_ROUND_NEAREST_AFZ: return round(a);
    case OPTIC_ELEM_ROUND_NEAREST_EVEN: return round_even_f64(a);
    case OPTIC_ELEM_ATAN2: return atan2(a, b);
    default: return fmod(a, b);
  }
}

/* XLA's reduce-precision on an IEEE value with `mbits` mantissa and `ebits`
 * exponent bits: round the mantissa to m bits (to nearest, ties to even),
 * then flush exponents the e-bit format cannot hold to signed zero
 * (underflow, subnormals included) or signed infinity (overflow). NaN stays
 * NaN when m > 0 (with m = 0 there are no mantissa bits to keep it). */
static uint64_t reduce_precision_bits(uint64_t x, int mbits, int ebits, int m, int e) {
  uint64_t sign = (uint64_t)1 << (mbits + ebits);
  uint64_t exp_mask = (((uint64_t)1 << ebits) - 1) << mbits;
  uint64_t mant_mask = ((uint64_t)1 << mbits) - 1;
  bool nan = (x & exp_mask) == exp_mask && (x & mant_mask) != 0;
  uint64_t orig = x;
  if (m < mbits) {
    uint64_t last = (uint64_t)1 << (mbits - m);
    uint64_t bias = (last >> 1) - 1 + ((x & last) >> (mbits - m));
    x = (x + bias) & ~(last - 1);
  }
  if (e < ebits) {
    int64_t bias = ((int64_t)1 << (ebits - 1)) - 1;
    int64_t reduced_bias = ((int64_t)1 << (e - 1)) - 1;
    uint64_t max_exp = (uint64_t)(bias + reduced_bias) << mbits;
    uint64_t min_exp = (uint64_t)(bias - reduced_bias) << mbits;
    uint64_t xe = x & exp_mask;
    if (xe > max_exp) x = (x & sign) | exp_mask;
    else if (xe <= min_exp) x = x & sign;
  }
  return (nan && m > 0) ? orig : x;
}

static void reduce_precision(optic_dtype dt, int32_t param, const unsigned char *a, unsigned char *d) {
  int e = param >> 8, m = param & 0xff;
  if (dt == OPTIC_F32) {
    uint32_t v;
    memcpy(&v, a, 4);
    v = (uint32_t)reduce_precision_bits(v, 23, 8, m, e);
    memcpy(d, &v, 4);
  } else {
    uint64_t v;
    memcpy(&v, a, 8);
    v = reduce_precision_bits(v, 52, 11, m, e);
    memcpy(d, &v, 8);
  }
}

static void float_one(optic_elem_op op, int32_t param, optic_dtype dt, const unsigned char *a, const unsigned char *b,
                      unsigned char *d) {
  if (op == OPTIC_ELEM_REDUCE_PRECISION) {
    reduce_precision(dt, param, a, d);
  } else if (dt == OPTIC_F32) {
    float u, v = 0;
    memcpy(&u, a, 4);
    if (b) memcpy(&v, b, 4);
    if (op == OPTIC_ELEM_IS_FINITE) {
      *d = isfinite(u) ? 1 : 0;
      return;
    }
    float r = f32_op(op, u, v);
    memcpy(d, &r, 4);
  } else {
    double u, v = 0;
    memcpy(&u, a, 8);
    if (b) memcpy(&v, b, 8);
    if (op == OPTIC_ELEM_IS_FINITE) {
      *d = isfinite(u) ? 1 : 0;
      return;
    }
    double r = f64_op(op, u, v);
    memcpy(d, &r, 8);
  }
}

/* ------------------------------------------------------------ integers */

static uint64_t width_mask(int bits) { return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1; }

/* The two's complement value of the low `bits` bits of v, as int64. */
static int64_t sign_extend(uint64_t v, int bits) {
  if (bits < 64 && ((v >> (bits - 1)) & 1u)) v |= ~width_mask(bits);
  return (int64_t)v;
}

/* Arithmetic right shift of a negative value without implementation-defined >>. */
static uint64_t shift_right_arith(int64_t v, unsigned amount) {
  return v < 0 ? ~(~(uint64_t)v >> amount) : (uint64_t)v >> amount;
}

static int clz64(uint64_t v) {
  int n = 0;
  for (uint64_t bit = (uint64_t)1 << 63; bit && !(v & bit); bit >>= 1) n++;
  return n;
}

static int popcount64(uint64_t v) {
  int n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

/* XLA: shift amounts are unsigned, and one of the width or more shifts
 * every bit out (arithmetic right shifts fill with the sign). */
static uint64_t int_op(optic_elem_op op, int bits, bool is_signed, uint64_t a, uint64_t b) {
  uint64_t mask = width_mask(bits);
  a &= mask, b &= mask;
  int64_t sa = sign_extend(a, bits), sb = sign_extend(b, bits);
  switch (op) {
    case OPTIC_ELEM_XOR: return a ^ b;
    case OPTIC_ELEM_SHIFT_LEFT: return b >= (uint64_t)bits ? 0 : a << b;
    case OPTIC_ELEM_SHIFT_RIGHT_LOGICAL: return b >= (uint64_t)bits ? 0 : a >> b;
    case OPTIC_ELEM_SHIFT_RIGHT_ARITHMETIC:
      return shift_right_arith(sa, b >= (uint64_t)bits ? (unsigned)bits - 1 : (unsigned)b);
    case OPTIC_ELEM_POPCNT: return (uint64_t)popcount64(a);
    case OPTIC_ELEM_COUNT_LEADING_ZEROS: return (uint64_t)(clz64(a) - (64 - bits));
    default: /* remainder: x % 0 = x; INT_MIN % -1 = 0; else C's truncated remainder */
      if (b == 0) return a;
      if (!is_signed) return a % b;
      if (sb == -1) return 0;
      return (uint64_t)(sa % sb);
  }
}

/* ------------------------------------------------------------ the loop */

/* f16/bf16: each chunk widened to f32 exactly, the f32 op, one rounding
 * back (is-finite writes pred directly); as XLA's CPU backend computes them. */
static void half_apply(optic_elem_op op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                       const void *const *src, unsigned scalar_mask, void *y) {
  enum { CHUNK = 256 };
  bool binary = optic_elem_kind_of(op) == OPTIC_ELEM_KIND_BINARY;
  float a[2][CHUNK], r[CHUNK];
  unsigned char *d = y;
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    const void *s[2];
    for (int k = 0; k < (binary ? 2 : 1); k++) {
      bool scalar = (scalar_mask >> k) & 1u;
      const unsigned char *p = (const unsigned char *)src[k] + (scalar ? 0 : 2 * lo);
      for (size_t i = 0; i < len; i++) optic_convert_elements(in, p + (scalar ? 0 : 2 * i), OPTIC_F32, &a[k][i], 1);
      s[k] = a[k];
    }
    if (out == OPTIC_PRED) {
      optic_elem_scalar_apply(op, param, OPTIC_F32, OPTIC_PRED, len, s, 0, d + lo);
    } else {
      optic_elem_scalar_apply(op, param, OPTIC_F32, OPTIC_F32, len, s, 0, r);
      optic_convert_elements(OPTIC_F32, r, out, d + 2 * lo, len);
    }
  }
}

void optic_elem_scalar_apply(optic_elem_op op, int32_t param, optic_dtype in, optic_dtype out, size_t n,
                             const void *const *src, unsigned scalar_mask, void *y) {
  if ((in == OPTIC_F16 || in == OPTIC_BF16) && op != OPTIC_ELEM_BITCAST_CONVERT) {
    half_apply(op, param, in, out, n, src, scalar_mask, y);
    return;
  }
  size_t ies = optic_dtype_size(in), oes = optic_dtype_size(out);
  bool binary = optic_elem_kind_of(op) == OPTIC_ELEM_KIND_BINARY;
  const unsigned char *s0 = src[0], *s1 = binary ? src[1] : NULL;
  size_t st0 = (scalar_mask & 1u) ? 0 : ies, st1 = (scalar_mask & 2u) ? 0 : ies;
  unsigned char *d = y;
  int bits = 0;
  bool is_signed = false;
  if (op == OPTIC_ELEM_BITCAST_CONVERT) {
    for (size_t i = 0; i < n; i++) memmove(d + i * oes, s0 + i * st0, oes);
  } else if (optic_elem_dtype_int_info(in, &bits, &is_signed)) {
    for (size_t i = 0; i < n; i++) {
      uint64_t a = 0, b = 0;
      memcpy(&a, s0 + i * st0, ies);
      if (binary) memcpy(&b, s1 + i * st1, ies);
      uint64_t r = int_op(op, bits, is_signed, a, b);
      memcpy(d + i * oes, &r, oes);
    }
  } else if (in == OPTIC_PRED) { /* xor */
    for (size_t i = 0; i < n; i++) d[i] = (s0[i * st0] != 0) != (s1[i * st1] != 0);
  } else {
    for (size_t i = 0; i < n; i++) float_one(op, param, in, s0 + i * st0, binary ? s1 + i * st1 : NULL, d + i * oes);
  }
}
