/* The generic family: elementwise semantics for integers of every width and
 * for the halves (kernels/elem.h). Integers: values sign- or zero-extended to 64 bits,
 * arithmetic modulo 2^64, results keep the low bits; division by zero gives
 * all ones (-1, or the unsigned maximum), MIN / -1 gives MIN (XLA's rules).
 * Halves: chunks converted to f32 exactly, the caller's f32 routine, one
 * rounding back to nearest even (the convert kernels, kernels/convert.h). */
#include "kernels/elem.h"

#include <string.h>

#include "core/half.h"
#include "kernels/convert.h"

bool optic_elem_is_half(optic_dtype dt) { return dt == OPTIC_F16 || dt == OPTIC_BF16; }

static bool is_binary(optic_elem_op op) {
  optic_binary_op k;
  return optic_elem_binary_kernel(op, &k) || op == OPTIC_ELEM_AND || op == OPTIC_ELEM_OR;
}

bool optic_elem_generic_supported(optic_elem_op op, optic_dtype in, optic_dtype out) {
  if (op == OPTIC_ELEM_CONVERT) return optic_dtype_has_values(in) && optic_dtype_has_values(out);
  if (op == OPTIC_ELEM_COPY || op == OPTIC_ELEM_SELECT) return optic_dtype_has_values(in);
  bool half = optic_elem_is_half(in), integer = optic_dtype_is_int(in);
  if (!half && !integer) return false;
  if (op == OPTIC_ELEM_COMPARE || op == OPTIC_ELEM_CLAMP) return true;
  optic_unary_op u;
  optic_binary_op b;
  if (half) return optic_elem_unary_kernel(op, &u) || optic_elem_binary_kernel(op, &b);
  switch (op) {
    case OPTIC_ELEM_NEGATE:
    case OPTIC_ELEM_ABS:
    case OPTIC_ELEM_NOT: return true;
    case OPTIC_ELEM_SIGN: return optic_dtype_is_signed_int(in);
    default: return is_binary(op);
  }
}

/* ------------------------------------------------------------ integers */

static uint64_t load_int(optic_dtype dt, const unsigned char *p) {
  uint64_t u = 0;
  int bits = optic_dtype_int_bits(dt);
  memcpy(&u, p, (size_t)bits / 8); /* little-endian: the low bytes */
  if (bits < 64 && optic_dtype_is_signed_int(dt) && ((u >> (bits - 1)) & 1u)) u |= ~0ull << bits;
  return u;
}

static void store_int(optic_dtype dt, uint64_t u, unsigned char *p) { memcpy(p, &u, optic_dtype_size(dt)); }

static uint64_t ipow64(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1u) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

/* -1, 0 or 1 by the dtype's order. */
static int int_order(bool sg, uint64_t a, uint64_t b) {
  if (sg) return ((int64_t)a > (int64_t)b) - ((int64_t)a < (int64_t)b);
  return (a > b) - (a < b);
}

static uint64_t int_unary(optic_elem_op op, bool sg, uint64_t v) {
  switch (op) {
    case OPTIC_ELEM_NEGATE: return 0u - v;
    case OPTIC_ELEM_ABS: return sg && (int64_t)v < 0 ? 0u - v : v;
    case OPTIC_ELEM_SIGN: return (uint64_t)(int64_t)int_order(true, v, 0);
    default: return ~v; /* not */
  }
}

static uint64_t int_binary(optic_elem_op op, bool sg, uint64_t a, uint64_t b) {
  switch (op) {
    case OPTIC_ELEM_ADD: return a + b;
    case OPTIC_ELEM_SUBTRACT: return a - b;
    case OPTIC_ELEM_MULTIPLY: return a * b;
    case OPTIC_ELEM_DIVIDE:
      if (b == 0) return ~0ull; /* x / 0 = -1 (all ones) */
      if (!sg) return a / b;
      if ((int64_t)b == -1) return 0u - a; /* MIN / -1 wraps to MIN */
      return (uint64_t)((int64_t)a / (int64_t)b);
    case OPTIC_ELEM_POWER: return sg && (int64_t)b < 0 ? (uint64_t)((int64_t)a == 1) : ipow64(a, b);
    case OPTIC_ELEM_MAXIMUM: return int_order(sg, a, b) >= 0 ? a : b;
    case OPTIC_ELEM_MINIMUM: return int_order(sg, a, b) <= 0 ? a : b;
    case OPTIC_ELEM_AND: return a & b;
    default: return a | b; /* or */
  }
}

static uint8_t cmp_of(optic_compare_op dir, int order) {
  switch (dir) {
    case OPTIC_COMPARE_EQ: return order == 0;
    case OPTIC_COMPARE_NE: return order != 0;
    case OPTIC_COMPARE_LT: return order < 0;
    case OPTIC_COMPARE_LE: return order <= 0;
    case OPTIC_COMPARE_GT: return order > 0;
    default: return order >= 0;
  }
}

#define AT(k, i, es) ((const unsigned char *)src[k] + (((scalar_mask >> (k)) & 1u) ? 0 : (i) * (es)))

static void int_loop(optic_elem_op op, optic_compare_op cmp, optic_dtype in, size_t n, const void *const *src,
                     unsigned scalar_mask, void *y) {
  size_t es = optic_dtype_size(in);
  bool sg = optic_dtype_is_signed_int(in);
  unsigned char *yb = y;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = load_int(in, AT(0, i, es));
    if (op == OPTIC_ELEM_COMPARE) {
      yb[i] = cmp_of(cmp, int_order(sg, a, load_int(in, AT(1, i, es))));
    } else if (op == OPTIC_ELEM_CLAMP) { /* clamp(lo, x, hi) = min(max(x, lo), hi) */
      uint64_t x = load_int(in, AT(1, i, es)), hi = load_int(in, AT(2, i, es));
      uint64_t t = int_order(sg, x, a) >= 0 ? x : a;
      store_int(in, int_order(sg, t, hi) <= 0 ? t : hi, yb + i * es);
    } else if (is_binary(op)) {
      store_int(in, int_binary(op, sg, a, load_int(in, AT(1, i, es))), yb + i * es);
    } else {
      store_int(in, int_unary(op, sg, a), yb + i * es);
    }
  }
}

/* ------------------------------------------------------------ halves */

#define CHUNK 256

static void half_to_f32(optic_dtype dt, const unsigned char *p, bool scalar, size_t len, float *out) {
  if (scalar) {
    uint16_t h;
    memcpy(&h, p, 2);
    float v = dt == OPTIC_F16 ? optic_half_to_f32_f16(h) : optic_half_to_f32_bf16(h);
    for (size_t i = 0; i < len; i++) out[i] = v;
  } else {
    optic_convert_halves(dt, p, OPTIC_F32, out, len); /* the convert kernels: core/half.h's results */
  }
}

static void f32_to_half(optic_dtype dt, const float *r, size_t len, unsigned char *p) {
  optic_convert_halves(OPTIC_F32, r, dt, p, len);
}

static void half_loop(optic_elem_op op, optic_compare_op cmp, optic_dtype in, size_t n, const void *const *src,
                      unsigned scalar_mask, void *y, optic_elem_f32_fn f32, void *f32_ctx) {
  int nsrc = op == OPTIC_ELEM_CLAMP ? 3 : (op == OPTIC_ELEM_COMPARE || is_binary(op)) ? 2 : 1;
  float a[3][CHUNK], r[CHUNK];
  unsigned char *yb = y;
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    const float *s[3];
    for (int k = 0; k < nsrc; k++) {
      bool scalar = (scalar_mask >> k) & 1u;
      half_to_f32(in, (const unsigned char *)src[k] + (scalar ? 0 : 2 * lo), scalar, len, a[k]);
      s[k] = a[k];
    }
    if (op == OPTIC_ELEM_COMPARE) {
      f32(f32_ctx, op, cmp, len, s, yb + lo);
      continue;
    }
    f32(f32_ctx, op, cmp, len, s, r);
    f32_to_half(in, r, len, yb + 2 * lo);
  }
}

/* ------------------------------------------------------------ convert */

/* One chunk of 8- or 16-bit integers as floats (exact). */
static void small_int_chunk(optic_dtype in, const unsigned char *p, size_t len, float *f) {
  switch (in) {
    case OPTIC_S8:
      for (size_t i = 0; i < len; i++) f[i] = (float)(int8_t)p[i];
      break;
    case OPTIC_U8:
      for (size_t i = 0; i < len; i++) f[i] = (float)p[i];
      break;
    case OPTIC_S16:
      for (size_t i = 0; i < len; i++) f[i] = (float)(int16_t)(uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
      break;
    default: /* u16 */
      for (size_t i = 0; i < len; i++) f[i] = (float)(uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
      break;
  }
}

/* 8- and 16-bit integers to f16/bf16: exact in f32, then the one rounding of
 * the convert kernels (what rounding the integer directly gives); false for
 * other pairs. */
static bool small_int_to_half(optic_dtype in, const void *x, optic_dtype out, void *y, size_t n) {
  if (!optic_elem_is_half(out) || (in != OPTIC_S8 && in != OPTIC_U8 && in != OPTIC_S16 && in != OPTIC_U16))
    return false;
  size_t es = optic_dtype_size(in);
  float f[CHUNK];
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    small_int_chunk(in, (const unsigned char *)x + lo * es, len, f);
    optic_convert_halves(OPTIC_F32, f, out, (unsigned char *)y + 2 * lo, len);
  }
  return true;
}

/* ------------------------------------------------------------ select */

/* 2-byte select (the halves' select) without a branch: both values are
 * loaded and a mask picks the bits, so the compiler vectorizes the loop;
 * every y[i] has exactly a[i]'s or b[i]'s bits. y may be a or b. */
static void select_u16(size_t n, const void *pred, const void *a, const void *b, void *y) {
  const uint8_t *p = pred;
  const uint16_t *av = a, *bv = b;
  uint16_t *yv = y;
  for (size_t i = 0; i < n; i++) {
    uint16_t m = (uint16_t)(0u - (unsigned)(p[i] != 0));
    yv[i] = (uint16_t)((av[i] & m) | (bv[i] & (uint16_t)~m));
  }
}

/* ------------------------------------------------------------ dispatch */

void optic_elem_generic(optic_elem_op op, optic_compare_op cmp, optic_dtype in, optic_dtype out, size_t n,
                        const void *const *src, unsigned scalar_mask, void *y, optic_elem_f32_fn f32, void *f32_ctx) {
  if (n == 0) return;
  size_t es = optic_dtype_size(in), oes = optic_dtype_size(out);
  unsigned char *yb = y;
  switch (op) {
    case OPTIC_ELEM_COPY:
      for (size_t i = 0; i < n; i++) memmove(yb + i * es, AT(0, i, es), es);
      return;
    case OPTIC_ELEM_SELECT:
      if (scalar_mask == 0 && es == 2) {
        select_u16(n, src[0], src[1], src[2], y);
        return;
      }
      for (size_t i = 0; i < n; i++) memmove(yb + i * es, *AT(0, i, 1) ? AT(1, i, es) : AT(2, i, es), es);
      return;
    case OPTIC_ELEM_CONVERT:
      if (!(scalar_mask & 1u) &&
          (optic_convert_halves(in, src[0], out, y, n) || small_int_to_half(in, src[0], out, y, n)))
        return;
      if (scalar_mask & 1u) {
        for (size_t i = 0; i < n; i++) optic_convert_elements(in, src[0], out, yb + i * oes, 1);
      } else {
        optic_convert_elements(in, src[0], out, y, n); /* cannot fail: both dtypes hold values */
      }
      return;
    default: break;
  }
  if (optic_elem_is_half(in)) {
    half_loop(op, cmp, in, n, src, scalar_mask, y, f32, f32_ctx);
  } else {
    int_loop(op, cmp, in, n, src, scalar_mask, y);
  }
}
