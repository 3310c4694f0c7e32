/* Dtype table and optic_convert_elements against references computed here
 * from first principles: bf16/f16 values decoded from their fields, rounding
 * checked by distance to the two neighbouring representable values (ties to
 * the even pattern), every half pattern decoded, integer wrap-around by
 * arithmetic modulo 2^bits, float -> integer by truncation and saturation
 * (NaN -> 0), as XLA's CPU backend converts. */
#include <math.h>
#include <optic/optic.h>
#include <stdint.h>

#include "tests/harness.h"

/* ------------------------------------------------------------ references */

static double ref_bf16(uint16_t h) { /* sign, 8-bit exponent, 7-bit mantissa */
  int e = (h >> 7) & 0xFF, m = h & 0x7F;
  double v = e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
  return (h & 0x8000) ? -v : v;
}

static double ref_f16(uint16_t h) { /* sign, 5-bit exponent, 10-bit mantissa */
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

static float f32_of(uint32_t b) {
  float x;
  memcpy(&x, &b, 4);
  return x;
}

/* The pattern a magnitude a between pattern h (value lo) and h+1 (value hi)
 * rounds to: the nearer, ties to the even pattern. */
static uint16_t nearest(double a, uint16_t h, double lo, double hi) {
  double dl = a - lo, dh = hi - a;
  if (dl < dh) return h;
  if (dh < dl) return (uint16_t)(h + 1);
  return (h & 1) ? (uint16_t)(h + 1) : h;
}

static bool bits_are_nan16(uint16_t h, int ebits) {
  int p1 = 15 - ebits; /* mantissa bits */
  return ((h >> p1) & ((1 << ebits) - 1)) == (1 << ebits) - 1 && (h & ((1 << p1) - 1)) != 0;
}

/* ------------------------------------------------------------ cases */

static void table(void) {
  static const struct {
    optic_dtype d;
    const char *name;
    size_t size;
    bool is_float, is_int, is_signed;
  } want[] = {
      {OPTIC_F32, "f32", 4, true, false, false},    {OPTIC_F64, "f64", 8, true, false, false},
      {OPTIC_F16, "f16", 2, true, false, false},    {OPTIC_BF16, "bf16", 2, true, false, false},
      {OPTIC_S8, "s8", 1, false, true, true},       {OPTIC_S16, "s16", 2, false, true, true},
      {OPTIC_S32, "s32", 4, false, true, true},     {OPTIC_S64, "s64", 8, false, true, true},
      {OPTIC_U8, "u8", 1, false, true, false},      {OPTIC_U16, "u16", 2, false, true, false},
      {OPTIC_U32, "u32", 4, false, true, false},    {OPTIC_U64, "u64", 8, false, true, false},
      {OPTIC_PRED, "pred", 1, false, false, false}, {OPTIC_TOKEN, "token", 0, false, false, false},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    optic_dtype d = want[i].d, back;
    OT_CHECK(strcmp(optic_dtype_name(d), want[i].name) == 0, "%s", want[i].name);
    OT_CHECK(optic_dtype_size(d) == want[i].size, "%s size %zu", want[i].name, optic_dtype_size(d));
    OT_CHECK(optic_dtype_is_float(d) == want[i].is_float, "%s", want[i].name);
    OT_CHECK(optic_dtype_is_int(d) == want[i].is_int, "%s", want[i].name);
    OT_CHECK(optic_dtype_is_signed_int(d) == want[i].is_signed, "%s", want[i].name);
    OT_CHECK(optic_dtype_int_bits(d) == (want[i].is_int ? (int)want[i].size * 8 : 0), "%s", want[i].name);
    OT_CHECK(optic_dtype_valid(d));
    OT_CHECK(optic_dtype_has_values(d) == (d != OPTIC_TOKEN));
    OT_EXPECT_OK(optic_dtype_from_name(want[i].name, &back));
    OT_CHECK(back == d, "%s", want[i].name);
  }
  OT_CHECK(!optic_dtype_valid(OPTIC_DTYPE_INVALID) && !optic_dtype_valid(OPTIC_DTYPE_COUNT_));
  optic_dtype d;
  OT_EXPECT_STATUS(optic_dtype_from_name("f8e4m3fn", &d), OPTIC_ERR_INVALID_ARGUMENT);
  uint8_t b = 0;
  OT_EXPECT_STATUS(optic_convert_elements(OPTIC_TOKEN, &b, OPTIC_F32, &b, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_convert_elements(OPTIC_F32, NULL, OPTIC_S8, &b, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_convert_elements(OPTIC_F32, NULL, OPTIC_S8, NULL, 0));
}

/* Every bf16 and f16 pattern decodes as its fields say (NaN stays NaN). */
static void half_decode_all(void) {
  for (uint32_t h = 0; h < 65536; h++) {
    float b = optic_bf16_to_f32((uint16_t)h), f = optic_f16_to_f32((uint16_t)h);
    if (bits_are_nan16((uint16_t)h, 8)) {
      OT_CHECK(isnan(b) && (signbit(b) != 0) == (h >> 15), "bf16 0x%04x", h);
    } else if (((h >> 7) & 0xFF) == 0xFF) {
      OT_CHECK(isinf(b) && (b < 0) == (h >> 15), "bf16 0x%04x", h);
    } else {
      OT_CHECK((double)b == ref_bf16((uint16_t)h) && (signbit(b) != 0) == (h >> 15), "bf16 0x%04x -> %a", h, b);
    }
    if (bits_are_nan16((uint16_t)h, 5)) {
      OT_CHECK(isnan(f) && (signbit(f) != 0) == (h >> 15), "f16 0x%04x", h);
    } else if (((h >> 10) & 0x1F) == 0x1F) {
      OT_CHECK(isinf(f) && (f < 0) == (h >> 15), "f16 0x%04x", h);
    } else {
      OT_CHECK((double)f == ref_f16((uint16_t)h) && (signbit(f) != 0) == (h >> 15), "f16 0x%04x -> %a", h, f);
    }
  }
  /* The bulk path (a vectorized loop) over every f16 pattern, one call, into
   * a misaligned destination: the scalar's bits, and a NaN keeps its payload
   * in the high mantissa bits. */
  uint16_t *all = malloc(65536 * sizeof *all);
  unsigned char *raw = malloc(65536 * 4 + 1);
  for (uint32_t h = 0; h < 65536; h++) all[h] = (uint16_t)h;
  OT_EXPECT_OK(optic_convert_elements(OPTIC_F16, all, OPTIC_F32, raw + 1, 65536));
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t got, want;
    memcpy(&got, raw + 1 + 4 * h, 4);
    float f = optic_f16_to_f32((uint16_t)h);
    memcpy(&want, &f, 4);
    if (bits_are_nan16((uint16_t)h, 5)) want = ((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13);
    if (got != want && bad++ < 5) OT_CHECK(false, "bulk f16 0x%04x -> 0x%08x, want 0x%08x", h, got, want);
  }
  free(all);
  free(raw);
}

/* f32 -> bf16 for f32 patterns around every bf16 value, ties included. */
static void bf16_rounding(void) {
  static const uint32_t lows[] = {0x0000, 0x0001, 0x3FFF, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF};
  int bad = 0;
  for (uint32_t h = 0; h < 0x7F80 && bad < 10; h++) {
    double lo = ref_bf16((uint16_t)h), hi = h == 0x7F7F ? ldexp(1, 128) : ref_bf16((uint16_t)(h + 1));
    for (size_t k = 0; k < sizeof lows / sizeof lows[0]; k++) {
      for (uint32_t sgn = 0; sgn < 2; sgn++) {
        float x = f32_of((sgn << 31) | (h << 16) | lows[k]);
        uint16_t want = (uint16_t)(nearest(fabs((double)x), (uint16_t)h, lo, hi) | (sgn << 15));
        uint16_t got = optic_f32_to_bf16(x), got64 = optic_f64_to_bf16((double)x), arr;
        OT_EXPECT_OK(optic_convert_elements(OPTIC_F32, &x, OPTIC_BF16, &arr, 1));
        if (got != want || got64 != want || arr != want) {
          bad++;
          OT_CHECK(false, "bf16 of %a: got 0x%04x (f64 path 0x%04x, array 0x%04x), want 0x%04x", (double)x, got, got64,
                   arr, want);
        }
      }
    }
  }
  /* f64 -> bf16 rounds once: just above a tie goes up even where f32 would
   * first round onto the tie (double rounding would give the even value). */
  for (uint32_t h = 0x3F80; h < 0x3F90; h += 2) {
    double mid = (ref_bf16((uint16_t)h) + ref_bf16((uint16_t)(h + 1))) / 2, above = mid + ldexp(mid, -40);
    OT_CHECK(optic_f64_to_bf16(above) == h + 1, "f64 %a -> 0x%04x", above, optic_f64_to_bf16(above));
    OT_CHECK(optic_f32_to_bf16((float)above) == h, "f32 tie %a", (double)(float)above);
  }
  float nan_in[] = {NAN, -NAN, f32_of(0x7F800001u), f32_of(0xFF800001u), f32_of(0x7FFFFFFFu), INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof nan_in / sizeof nan_in[0]; i++) {
    uint16_t r = optic_f32_to_bf16(nan_in[i]);
    if (isnan(nan_in[i])) {
      OT_CHECK(bits_are_nan16(r, 8) && (r >> 15) == (signbit(nan_in[i]) != 0), "NaN %d -> 0x%04x", (int)i, r);
    } else {
      OT_CHECK(r == (nan_in[i] > 0 ? 0x7F80 : 0xFF80), "inf -> 0x%04x", r);
    }
  }
}

/* f32 and f64 -> f16 at, between and just around every f16 value. */
static void f16_rounding(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 0x7C00 && bad < 10; h++) {
    double lo = ref_f16((uint16_t)h), hi = h == 0x7BFF ? 65536.0 : ref_f16((uint16_t)(h + 1)), mid = (lo + hi) / 2;
    double xs[] = {lo,
                   mid,
                   nextafterf((float)mid, 0.0f),
                   nextafterf((float)mid, INFINITY),
                   nextafter(mid, 0.0),
                   nextafter(mid, INFINITY)};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
      for (int sgn = 0; sgn < 2; sgn++) {
        double x = sgn ? -xs[k] : xs[k];
        uint16_t want = (uint16_t)(nearest(xs[k], (uint16_t)h, lo, hi) | (sgn << 15));
        uint16_t got64 = optic_f64_to_f16(x), arr64;
        OT_EXPECT_OK(optic_convert_elements(OPTIC_F64, &x, OPTIC_F16, &arr64, 1));
        bool ok = got64 == want && arr64 == want;
        if ((double)(float)x == x) { /* the f32 paths where x is an f32 */
          float xf = (float)x;
          uint16_t arr32;
          OT_EXPECT_OK(optic_convert_elements(OPTIC_F32, &xf, OPTIC_F16, &arr32, 1));
          ok = ok && optic_f32_to_f16(xf) == want && arr32 == want;
        }
        if (!ok) {
          bad++;
          OT_CHECK(false, "f16 of %a: f64 0x%04x, f32 0x%04x, want 0x%04x", x, got64, optic_f32_to_f16((float)x), want);
        }
      }
    }
  }
  OT_CHECK(optic_f32_to_f16(65519.0f) == 0x7BFF && optic_f32_to_f16(65520.0f) == 0x7C00);
  OT_CHECK(optic_f32_to_f16(1e10f) == 0x7C00 && optic_f32_to_f16(-INFINITY) == 0xFC00);
  OT_CHECK(optic_f32_to_f16(0x1p-25f) == 0x0000, "half the smallest subnormal ties to zero");
  OT_CHECK(optic_f32_to_f16(nextafterf(0x1p-25f, 1.0f)) == 0x0001);
  OT_CHECK(optic_f32_to_f16(-0.0f) == 0x8000);
  uint16_t n = optic_f32_to_f16(-NAN);
  OT_CHECK(bits_are_nan16(n, 5) && (n >> 15), "0x%04x", n);
  OT_CHECK(bits_are_nan16(optic_f64_to_f16(NAN), 5) && bits_are_nan16(optic_f64_to_bf16(-NAN), 8));
}

/* Reads an integer element as int64 (signed) or its zero-extended bits. */
static int64_t read_int(optic_dtype d, const void *p) {
  uint64_t u = 0;
  memcpy(&u, p, optic_dtype_size(d));
  int bits = optic_dtype_int_bits(d);
  if (bits < 64 && optic_dtype_is_signed_int(d) && (u >> (bits - 1)) & 1u) u |= ~0ull << bits;
  return (int64_t)u;
}

static const optic_dtype ints[] = {OPTIC_S8, OPTIC_S16, OPTIC_S32, OPTIC_S64,
                                   OPTIC_U8, OPTIC_U16, OPTIC_U32, OPTIC_U64};

/* Integer -> integer keeps the low bits of the (sign-extended) source. */
static void int_wraparound(void) {
  static const int64_t vals[] = {INT64_MIN,
                                 INT64_MIN + 1,
                                 -32769,
                                 -32768,
                                 -129,
                                 -128,
                                 -1,
                                 0,
                                 1,
                                 127,
                                 128,
                                 255,
                                 256,
                                 32767,
                                 32768,
                                 65535,
                                 65536,
                                 INT32_MAX,
                                 (int64_t)INT32_MAX + 1,
                                 (int64_t)UINT32_MAX,
                                 (int64_t)UINT32_MAX + 1,
                                 INT64_MAX};
  size_t nv = sizeof vals / sizeof vals[0];
  for (size_t di = 0; di < sizeof ints / sizeof ints[0]; di++) {
    optic_dtype d = ints[di];
    int bits = optic_dtype_int_bits(d);
    unsigned char out[sizeof vals];
    OT_EXPECT_OK(optic_convert_elements(OPTIC_S64, vals, d, out, nv));
    for (size_t i = 0; i < nv; i++) {
      uint64_t m = bits == 64 ? (uint64_t)vals[i] : (uint64_t)vals[i] % (1ull << bits); /* mod 2^bits */
      int64_t want = (int64_t)m;
      if (optic_dtype_is_signed_int(d) && bits < 64 && m >= (1ull << (bits - 1))) want = (int64_t)m - (1ll << bits);
      int64_t got = read_int(d, out + i * optic_dtype_size(d));
      OT_CHECK(got == want, "s64 %lld -> %s: %lld, want %lld", (long long)vals[i], optic_dtype_name(d), (long long)got,
               (long long)want);
    }
  }
  /* The source's signedness decides the extension. */
  int8_t m1 = -1;
  uint8_t ff = 255;
  uint64_t u;
  int64_t s;
  OT_EXPECT_OK(optic_convert_elements(OPTIC_S8, &m1, OPTIC_U64, &u, 1));
  OT_CHECK(u == UINT64_MAX);
  OT_EXPECT_OK(optic_convert_elements(OPTIC_U8, &ff, OPTIC_S64, &s, 1));
  OT_CHECK(s == 255);
  uint64_t big = UINT64_MAX;
  float f;
  OT_EXPECT_OK(optic_convert_elements(OPTIC_U64, &big, OPTIC_F32, &f, 1));
  OT_CHECK(f == 0x1p64f, "u64 max -> f32 %a", (double)f);
}

/* Float -> integer: truncate toward zero, saturate at the limits, NaN -> 0,
 * from f64, f32, f16 and bf16 sources. */
static void float_to_int_saturation(void) {
  static const double xs[] = {NAN,          -NAN,          INFINITY,     -INFINITY, 0.0,      -0.0,    0.5,
                              -0.5,         0.99,          -1.5,         2.5,       127.9,    128.0,   -128.5,
                              -129.0,       255.5,         256.0,        32767.5,   -32768.5, 65535.0, 65536.0,
                              2147483520.0, -2147483648.0, 4294967040.0, 1e19,      -1e19,    1e30,    -1e30};
  const optic_dtype srcs[] = {OPTIC_F64, OPTIC_F32, OPTIC_F16, OPTIC_BF16};
  for (size_t si = 0; si < 4; si++) {
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
      unsigned char in[8];
      double x = xs[k]; /* the value the source actually holds */
      switch (srcs[si]) {
        case OPTIC_F64: memcpy(in, &x, 8); break;
        case OPTIC_F32: {
          float f = (float)x;
          memcpy(in, &f, 4);
          x = f;
          break;
        }
        case OPTIC_F16: {
          uint16_t h = optic_f64_to_f16(x);
          memcpy(in, &h, 2);
          x = optic_f16_to_f32(h);
          break;
        }
        default: {
          uint16_t h = optic_f64_to_bf16(x);
          memcpy(in, &h, 2);
          x = optic_bf16_to_f32(h);
          break;
        }
      }
      for (size_t di = 0; di < sizeof ints / sizeof ints[0]; di++) {
        optic_dtype d = ints[di];
        int bits = optic_dtype_int_bits(d);
        bool sg = optic_dtype_is_signed_int(d);
        long double lo = sg ? -ldexpl(1, bits - 1) : 0, hi = sg ? ldexpl(1, bits - 1) - 1 : ldexpl(1, bits) - 1;
        long double t = isnan(x) ? 0 : truncl((long double)x);
        if (t < lo) t = lo;
        if (t > hi) t = hi;
        unsigned char out[8] = {0};
        OT_EXPECT_OK(optic_convert_elements(srcs[si], in, d, out, 1));
        uint64_t got;
        memcpy(&got, out, 8);
        if (bits < 64) got &= (1ull << bits) - 1u;
        uint64_t want = sg ? (uint64_t)(int64_t)t : (uint64_t)t;
        if (bits < 64) want &= (1ull << bits) - 1u;
        OT_CHECK(got == want, "%s %a -> %s: 0x%llx, want 0x%llx", optic_dtype_name(srcs[si]), x, optic_dtype_name(d),
                 (unsigned long long)got, (unsigned long long)want);
      }
    }
  }
}

/* Integer -> float rounds once at the target's precision (ties to even). */
static void int_to_float_rounding(void) {
  static const struct {
    int64_t v;
    double f32, bf16, f16; /* worked by hand: p = 24, 8, 11 significant bits */
  } cases[] = {
      {257, 257, 256, 257},                     /* bf16 tie 256|258 -> 256 (even) */
      {259, 259, 260, 259},                     /* bf16 tie 258|260 -> 260 */
      {2049, 2049, 2048, 2048},                 /* f16 tie 2048|2050 -> 2048 */
      {2051, 2051, 2048, 2052},                 /* f16 tie -> 2052; bf16 2048|2064 -> 2048 */
      {16777217, 16777216, 16777216, INFINITY}, /* f32 tie 2^24|2^24+2 -> 2^24 */
      {16777219, 16777220, 16777216, INFINITY}, /* f32 tie -> 2^24+4 */
      {65519, 65519, 65536, 65504},             /* f16: below the overflow midpoint */
      {65520, 65520, 65536, INFINITY},          /* f16: the midpoint rounds to 2^16 -> inf */
      {-65520, -65520, -65536, -INFINITY},
      {(1ll << 40) + (1ll << 32), 1099511627776.0 + 4294967296.0, 1099511627776.0, INFINITY}, /* bf16 tie -> even */
      {(1ll << 40) + (1ll << 32) + 1, 1099511627776.0 + 4294967296.0, 1099511627776.0 + 8589934592.0, INFINITY},
      {INT64_MIN, -0x1p63, -0x1p63, -INFINITY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    float f;
    uint16_t b, h;
    OT_EXPECT_OK(optic_convert_elements(OPTIC_S64, &cases[i].v, OPTIC_F32, &f, 1));
    OT_EXPECT_OK(optic_convert_elements(OPTIC_S64, &cases[i].v, OPTIC_BF16, &b, 1));
    OT_EXPECT_OK(optic_convert_elements(OPTIC_S64, &cases[i].v, OPTIC_F16, &h, 1));
    OT_CHECK((double)f == cases[i].f32, "%lld -> f32 %a", (long long)cases[i].v, (double)f);
    OT_CHECK((double)optic_bf16_to_f32(b) == cases[i].bf16, "%lld -> bf16 %a", (long long)cases[i].v,
             (double)optic_bf16_to_f32(b));
    OT_CHECK((double)optic_f16_to_f32(h) == cases[i].f16, "%lld -> f16 %a", (long long)cases[i].v,
             (double)optic_f16_to_f32(h));
  }
  uint64_t umax = UINT64_MAX;
  uint16_t b;
  OT_EXPECT_OK(optic_convert_elements(OPTIC_U64, &umax, OPTIC_BF16, &b, 1));
  OT_CHECK(optic_bf16_to_f32(b) == 0x1p64f, "u64 max -> bf16 %a", (double)optic_bf16_to_f32(b));
  int8_t sm = -128;
  OT_EXPECT_OK(optic_convert_elements(OPTIC_S8, &sm, OPTIC_BF16, &b, 1));
  OT_CHECK(optic_bf16_to_f32(b) == -128.0f);
}

/* pred: x != 0 (NaN is true, -0 false); from pred: 0 or 1. bf16 <-> f16 goes
 * through f32 exactly. */
static void pred_and_half_pairs(void) {
  float in[] = {0.0f, -0.0f, NAN, 1e-45f, -3.0f};
  uint8_t p[5];
  OT_EXPECT_OK(optic_convert_elements(OPTIC_F32, in, OPTIC_PRED, p, 5));
  OT_CHECK(p[0] == 0 && p[1] == 0 && p[2] == 1 && p[3] == 1 && p[4] == 1);
  uint8_t pin[] = {0, 1};
  uint16_t hb[2];
  OT_EXPECT_OK(optic_convert_elements(OPTIC_PRED, pin, OPTIC_BF16, hb, 2));
  OT_CHECK(hb[0] == 0x0000 && hb[1] == 0x3F80, "0x%04x 0x%04x", hb[0], hb[1]);
  for (uint32_t h = 0; h < 65536; h += 7) { /* f16 -> bf16 rounds the exact f32 value once */
    uint16_t s = (uint16_t)h, got;
    OT_EXPECT_OK(optic_convert_elements(OPTIC_F16, &s, OPTIC_BF16, &got, 1));
    float f = optic_f16_to_f32(s);
    if (isnan(f)) {
      OT_CHECK(bits_are_nan16(got, 8), "f16 0x%04x -> 0x%04x", h, got);
    } else {
      OT_CHECK(got == optic_f64_to_bf16(f), "f16 0x%04x -> 0x%04x", h, got);
    }
  }
  uint16_t same[3] = {1, 2, 3};
  OT_EXPECT_OK(optic_convert_elements(OPTIC_U16, same, OPTIC_S16, same, 3)); /* in place, equal sizes */
  OT_CHECK(same[2] == 3);
  OT_EXPECT_STATUS(optic_convert_elements(OPTIC_U16, same, OPTIC_S32, same, 1), OPTIC_ERR_INVALID_ARGUMENT);
}

/* Every 8- and 16-bit integer to f32, bf16 and f16 in one call (and in calls
 * of 0, 1, 255, 256 and 257 elements, into a misaligned destination, and in
 * place for the equal-size pairs): f32 exact; a half holds the integer
 * rounded to nearest even at its precision (11 bits f16, 8 bf16), f16 past
 * 65504 is infinity. */
static double int_rounded(int64_t v, int p) {
  uint64_t mag = (uint64_t)(v < 0 ? -v : v);
  if (mag >= (1ull << p)) {
    int msb = 63 - __builtin_clzll(mag), shift = msb + 1 - p;
    uint64_t q = mag >> shift, rem = mag & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    mag = q << shift;
  }
  return v < 0 ? -(double)mag : (double)mag;
}

static bool small_int_case(optic_dtype from, optic_dtype to, size_t n, size_t first, bool in_place, int *bad) {
  size_t ss = optic_dtype_size(from), ds = optic_dtype_size(to);
  unsigned char *src = malloc(n * ss + 1), *raw = malloc(n * (ds > ss ? ds : ss) + 1), *dst = in_place ? raw : raw + 1;
  for (size_t i = 0; i < n; i++) { /* pattern first + i */
    uint16_t pat = (uint16_t)(first + i);
    memcpy(src + i * ss, &pat, ss);
  }
  if (in_place) memcpy(dst, src, n * ss);
  bool ok = optic_convert_elements(from, in_place ? dst : src, to, dst, n) == OPTIC_OK;
  for (size_t i = 0; ok && i < n; i++) {
    int64_t v = read_int(from, src + i * ss);
    double want = to == OPTIC_F32 ? (double)v : int_rounded(v, to == OPTIC_F16 ? 11 : 8), got;
    if (to == OPTIC_F16 && fabs(want) > 65504.0) want = v < 0 ? -(double)INFINITY : (double)INFINITY;
    if (to == OPTIC_F32) {
      float f;
      memcpy(&f, dst + 4 * i, 4);
      got = (double)f;
    } else {
      uint16_t h;
      memcpy(&h, dst + 2 * i, 2);
      got = to == OPTIC_BF16 ? (double)optic_bf16_to_f32(h) : (double)optic_f16_to_f32(h);
    }
    if (got != want && (*bad)++ < 10) {
      fprintf(stderr, "  %s %lld -> %s: %g, want %g (n %zu%s)\n", optic_dtype_name(from), (long long)v,
              optic_dtype_name(to), got, want, n, in_place ? ", in place" : "");
    }
  }
  free(src);
  free(raw);
  return ok;
}

static void small_ints_to_floats(void) {
  const optic_dtype froms[] = {OPTIC_S8, OPTIC_U8, OPTIC_S16, OPTIC_U16};
  const optic_dtype tos[] = {OPTIC_F32, OPTIC_BF16, OPTIC_F16};
  const size_t ns[] = {0, 1, 255, 256, 257};
  int bad = 0;
  for (int f = 0; f < 4; f++) {
    size_t all = optic_dtype_size(froms[f]) == 1 ? 256 : 65536;
    for (int t = 0; t < 3; t++) {
      OT_CHECK(small_int_case(froms[f], tos[t], all, 0, false, &bad));
      for (int k = 0; k < 5; k++) OT_CHECK(small_int_case(froms[f], tos[t], ns[k], all - 130, false, &bad));
      if (optic_dtype_size(froms[f]) == optic_dtype_size(tos[t])) {
        OT_CHECK(small_int_case(froms[f], tos[t], all, 0, true, &bad));
      }
    }
  }
  OT_CHECK(bad == 0, "%d small-integer conversions differ from the rounding rule", bad);
}

static const ot_case cases[] = {
    {"table", table},
    {"half_decode_all", half_decode_all},
    {"bf16_rounding", bf16_rounding},
    {"f16_rounding", f16_rounding},
    {"int_wraparound", int_wraparound},
    {"float_to_int_saturation", float_to_int_saturation},
    {"int_to_float_rounding", int_to_float_rounding},
    {"pred_and_half_pairs", pred_and_half_pairs},
    {"small_ints_to_floats", small_ints_to_floats},
};
OT_MAIN(cases)
