/* Element conversion between dtypes with XLA's convert semantics
 * (docs/dtypes.md): the CPU backend's rules (elemental IR emitter) in C.
 * Floats round to nearest even in one step; float -> integer truncates and
 * saturates, NaN -> 0; integer -> integer keeps the low bits. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/half.h"

/* ------------------------------------------------------------ bf16, f16 */

uint16_t optic_f32_to_bf16(float x) { return optic_half_from_f32_bf16(x); }
float optic_bf16_to_f32(uint16_t h) { return optic_half_to_f32_bf16(h); }
uint16_t optic_f32_to_f16(float x) { return optic_half_from_f32_f16(x); }
float optic_f16_to_f32(uint16_t h) { return optic_half_to_f32_f16(h); }

/* A double rounded to nearest even into a binary format with p significant
 * bits and exponents emin..emax, as its bit pattern (no NaN here). */
static uint16_t small_from_double(double x, int p, int emin, int emax, int ebits) {
  uint16_t sign = signbit(x) ? (uint16_t)(1u << (p - 1 + ebits)) : 0;
  double ax = fabs(x);
  uint16_t inf = (uint16_t)(((1u << ebits) - 1u) << (p - 1));
  if (isinf(ax)) return sign | inf;
  if (ax == 0) return sign;
  int e = ilogb(ax);
  if (e > emax) return sign | inf;
  int qexp = (e < emin ? emin : e) - (p - 1);
  double r = rint(ldexp(ax, -qexp)); /* exact scaling by a power of two, then RNE */
  uint32_t bits;
  if (e < emin) {
    bits = (uint32_t)r; /* subnormal; r == 2^(p-1) is the smallest normal */
  } else {
    bits = ((uint32_t)(e - emin + 1) << (p - 1)) + (uint32_t)r - (1u << (p - 1));
  }
  if (bits >= inf) return sign | inf; /* rounded up past the largest finite */
  return (uint16_t)(sign | bits);
}

static uint16_t nan_from_double(double x, int p, int ebits) {
  uint64_t b;
  memcpy(&b, &x, 8);
  uint16_t sign = (b >> 63) ? (uint16_t)(1u << (p - 1 + ebits)) : 0;
  uint16_t exp = (uint16_t)(((1u << ebits) - 1u) << (p - 1));
  uint16_t quiet = (uint16_t)(1u << (p - 2));
  uint16_t payload = (uint16_t)((b >> (53 - p)) & ((1u << (p - 1)) - 1u));
  return (uint16_t)(sign | exp | quiet | payload);
}

uint16_t optic_f64_to_bf16(double x) {
  if (isnan(x)) return nan_from_double(x, 8, 8);
  return small_from_double(x, 8, -126, 127, 8);
}

uint16_t optic_f64_to_f16(double x) {
  if (isnan(x)) return nan_from_double(x, 11, 5);
  return small_from_double(x, 11, -14, 15, 5);
}

/* ------------------------------------------------------------ elements */

/* A value on its way: a float as an exact double, or an integer as its
 * sign- or zero-extended 64 bits. */
typedef struct cvt_value {
  bool is_float;
  bool is_signed;
  double f;
  uint64_t u;
} cvt_value;

static cvt_value load_value(optic_dtype dt, const unsigned char *p) {
  cvt_value v = {.is_float = optic_dtype_is_float(dt), .is_signed = optic_dtype_is_signed_int(dt)};
  switch (dt) {
    case OPTIC_F32: {
      float x;
      memcpy(&x, p, 4);
      v.f = (double)x;
      break;
    }
    case OPTIC_F64: memcpy(&v.f, p, 8); break;
    case OPTIC_F16: {
      uint16_t h;
      memcpy(&h, p, 2);
      v.f = (double)optic_f16_to_f32(h);
      break;
    }
    case OPTIC_BF16: {
      uint16_t h;
      memcpy(&h, p, 2);
      v.f = (double)optic_bf16_to_f32(h);
      break;
    }
    case OPTIC_S8: v.u = (uint64_t)(int64_t)(int8_t)p[0]; break;
    case OPTIC_S16: {
      int16_t x;
      memcpy(&x, p, 2);
      v.u = (uint64_t)(int64_t)x;
      break;
    }
    case OPTIC_S32: {
      int32_t x;
      memcpy(&x, p, 4);
      v.u = (uint64_t)(int64_t)x;
      break;
    }
    case OPTIC_S64: memcpy(&v.u, p, 8); break;
    case OPTIC_U16: {
      uint16_t x;
      memcpy(&x, p, 2);
      v.u = x;
      break;
    }
    case OPTIC_U32: {
      uint32_t x;
      memcpy(&x, p, 4);
      v.u = x;
      break;
    }
    case OPTIC_U64: memcpy(&v.u, p, 8); break;
    case OPTIC_PRED: v.u = p[0] != 0; break;
    default: v.u = p[0]; break; /* u8 */
  }
  return v;
}

/* An integer magnitude rounded to nearest even at p significant bits (exact
 * in a double: at most p bits plus a power of two). */
static double round_int_bits(uint64_t mag, int p) {
  if (mag < (1ull << p)) return (double)mag;
  int msb = 63 - __builtin_clzll(mag), shift = msb + 1 - p;
  uint64_t q = mag >> shift, rem = mag & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return ldexp((double)q, shift);
}

/* An integer in a small float: one rounding at the target's precision. */
static double int_for_small(const cvt_value *v, int p) {
  bool neg = v->is_signed && (int64_t)v->u < 0;
  double r = round_int_bits(neg ? 0u - v->u : v->u, p);
  return neg ? -r : r;
}

/* XLA's float -> integer: NaN -> 0, x <= min -> min, x >= max -> max, else
 * truncation toward zero. Returns the 64-bit pattern of the result. */
static uint64_t float_to_int(double f, optic_dtype to) {
  if (isnan(f)) return 0;
  int bits = optic_dtype_int_bits(to);
  double t = trunc(f);
  if (optic_dtype_is_signed_int(to)) {
    double lim = ldexp(1.0, bits - 1);               /* 2^(bits-1) */
    if (t <= -lim) return 0u - (1ull << (bits - 1)); /* the minimum, sign-extended */
    if (t >= lim) return (bits == 64 ? (uint64_t)INT64_MAX : (1ull << (bits - 1)) - 1u);
    return (uint64_t)(int64_t)t;
  }
  double lim = ldexp(1.0, bits);
  if (t <= 0) return 0;
  if (t >= lim) return bits == 64 ? UINT64_MAX : (1ull << bits) - 1u;
  return (uint64_t)t;
}

static void store_value(const cvt_value *v, optic_dtype to, unsigned char *p) {
  if (to == OPTIC_PRED) {
    p[0] = v->is_float ? v->f != 0 : v->u != 0; /* NaN != 0 */
    return;
  }
  if (optic_dtype_is_float(to)) {
    double f = v->f;
    uint16_t h;
    switch (to) {
      case OPTIC_F32: {
        float x = v->is_float ? (float)f : v->is_signed ? (float)(int64_t)v->u : (float)v->u;
        memcpy(p, &x, 4);
        return;
      }
      case OPTIC_F64:
        if (!v->is_float) f = v->is_signed ? (double)(int64_t)v->u : (double)v->u;
        memcpy(p, &f, 8);
        return;
      case OPTIC_F16: h = optic_f64_to_f16(v->is_float ? f : int_for_small(v, 11)); break;
      default: h = optic_f64_to_bf16(v->is_float ? f : int_for_small(v, 8)); break;
    }
    memcpy(p, &h, 2);
    return;
  }
  uint64_t u = v->is_float ? float_to_int(v->f, to) : v->u;
  memcpy(p, &u, optic_dtype_size(to)); /* little-endian: the low bytes */
}

enum { CVT_CHUNK = 256 };

static bool small_int(optic_dtype dt) { return dt == OPTIC_S8 || dt == OPTIC_U8 || dt == OPTIC_S16 || dt == OPTIC_U16; }

/* n 8- or 16-bit integers as floats (exact: every value is below 2^24). */
static void small_ints_f32(optic_dtype dt, const unsigned char *s, size_t n, float *y) {
  if (dt == OPTIC_S8) {
    for (size_t i = 0; i < n; i++) y[i] = (float)(int8_t)s[i];
  } else if (dt == OPTIC_U8) {
    for (size_t i = 0; i < n; i++) y[i] = (float)s[i];
  } else if (dt == OPTIC_S16) {
    for (size_t i = 0; i < n; i++) {
      int16_t v;
      memcpy(&v, s + 2 * i, 2);
      y[i] = (float)v;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint16_t v;
      memcpy(&v, s + 2 * i, 2);
      y[i] = (float)v;
    }
  }
}

/* 8- and 16-bit integers to f32, bf16 or f16 a chunk at a time: the exact
 * f32 value, then (halves) its one rounding to nearest even, which is the
 * integer's own rounding at the half's precision. A chunk is read whole
 * before it is written, so equal-size conversions may run in place. */
static void small_ints_to_float(optic_dtype from, const unsigned char *s, optic_dtype to, unsigned char *d, size_t n) {
  const size_t ss = optic_dtype_size(from);
  float buf[CVT_CHUNK];
  for (size_t lo = 0; lo < n; lo += CVT_CHUNK) {
    size_t len = n - lo < CVT_CHUNK ? n - lo : CVT_CHUNK;
    small_ints_f32(from, s + lo * ss, len, buf);
    if (to == OPTIC_F32) {
      memcpy(d + 4 * lo, buf, 4 * len);
      continue;
    }
    for (size_t i = 0; i < len; i++) {
      uint16_t h = to == OPTIC_BF16 ? optic_half_from_f32_bf16(buf[i]) : optic_half_from_f32_f16(buf[i]);
      memcpy(d + 2 * (lo + i), &h, 2);
    }
  }
}

/* Fast paths for the pairs mixed-precision programs convert most. */
static bool convert_fast(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n) {
  const unsigned char *s = src;
  unsigned char *d = dst;
  if (small_int(from) && (to == OPTIC_F32 || to == OPTIC_BF16 || to == OPTIC_F16)) {
    small_ints_to_float(from, s, to, d, n);
    return true;
  }
  if (from == OPTIC_F32 && (to == OPTIC_BF16 || to == OPTIC_F16)) {
    for (size_t i = 0; i < n; i++) {
      float x;
      memcpy(&x, s + 4 * i, 4);
      uint16_t h = to == OPTIC_BF16 ? optic_half_from_f32_bf16(x) : optic_half_from_f32_f16(x);
      memcpy(d + 2 * i, &h, 2);
    }
    return true;
  }
  if (from == OPTIC_BF16 && to == OPTIC_F32) {
    for (size_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, s + 2 * i, 2);
      float x = optic_half_to_f32_bf16(h);
      memcpy(d + 4 * i, &x, 4);
    }
    return true;
  }
  if (from == OPTIC_F16 && to == OPTIC_F32) { /* one loop per type: each vectorizes */
    for (size_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, s + 2 * i, 2);
      float x = optic_half_to_f32_f16(h);
      memcpy(d + 4 * i, &x, 4);
    }
    return true;
  }
  return false;
}

optic_status optic_convert_elements(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n) {
  if (!optic_dtype_has_values(from) || !optic_dtype_has_values(to)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convert: no element conversion from %s to %s",
                      optic_dtype_name(from), optic_dtype_name(to));
  }
  if (n == 0) return OPTIC_OK;
  if (src == NULL || dst == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convert: NULL buffer");
  size_t ss = optic_dtype_size(from), ds = optic_dtype_size(to);
  if (src == dst && ss != ds) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convert: in place needs equal element sizes (%s, %s)",
                      optic_dtype_name(from), optic_dtype_name(to));
  }
  if (from == to) {
    if (src != dst) memcpy(dst, src, n * ss);
    return OPTIC_OK;
  }
  if (convert_fast(from, src, to, dst, n)) return OPTIC_OK;
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (size_t i = 0; i < n; i++) {
    cvt_value v = load_value(from, s + i * ss);
    store_value(&v, to, d + i * ds);
  }
  return OPTIC_OK;
}
