/* Conversion kernels: every (op, ISA) entry of kernels/list/convert.inc
 * against the naive reference over edge sizes and misaligned inputs and
 * outputs, with guards around every buffer (in place is not allowed: the
 * types differ). Tolerance: none, outputs must match the reference bit for bit
 * (NaN payloads included). Inputs include ±0, ±inf, NaNs with payloads,
 * subnormals, rounding ties, and the int32 boundaries exactly: ±2^31,
 * 2147483520.f (largest float below 2^31), -2147483904.f (next float below
 * -2^31), 2147483647.9, -2147483648.9 and -2147483649 as doubles. */
#include <float.h>

#include "kernels/convert.h"
#include "tests/kernels/kernel_test.h"

static float f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static double f64_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

static double uniform64(kt_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(kt_next(r) >> 11) / 9007199254740992.0);
}

/* ---- inputs: a quarter specials, the rest spread over the interesting ranges */

static void fill_f32(kt_rng *r, float *x, size_t n) {
  const float specials[] = {0.0f,
                            -0.0f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            f32_bits(0x7fc12345u),
                            f32_bits(0xffc00001u),
                            f32_bits(0x7f800001u),
                            1e-40f,
                            -1e-40f,
                            FLT_MIN,
                            FLT_MAX,
                            -FLT_MAX,
                            2147483648.0f,
                            -2147483648.0f,
                            2147483520.0f,
                            -2147483520.0f,
                            -2147483904.0f,
                            2147483904.0f,
                            0.5f,
                            -0.5f,
                            1.5f,
                            -1.5f,
                            2.5f,
                            -0.99999994f,
                            0.99999994f,
                            16777216.0f,
                            8388607.5f,
                            4294967296.0f,
                            -4294967296.0f};
  for (size_t i = 0; i < n; i++) {
    switch (kt_next(r) & 3) {
      case 0: x[i] = specials[kt_next(r) % (sizeof specials / sizeof specials[0])]; break;
      case 1: x[i] = kt_uniform(r, -100.0f, 100.0f); break;
      case 2: x[i] = kt_uniform(r, -3e9f, 3e9f); break;
      default: x[i] = f32_bits((uint32_t)kt_next(r)); break; /* any bit pattern */
    }
  }
}

static void fill_f64(kt_rng *r, double *x, size_t n) {
  const double fmax_tie = (double)FLT_MAX + ldexp(1.0, 103); /* halfway to 2^128: rounds to inf */
  const double specials[] = {0.0,
                             -0.0,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             f64_bits(0x7ff8000000012345ull),
                             f64_bits(0xfff8000000000001ull),
                             f64_bits(0x7ff0000000000001ull),
                             DBL_MAX,
                             -DBL_MAX,
                             DBL_MIN,
                             4.9e-324,
                             (double)FLT_MAX,
                             fmax_tie,
                             fmax_tie - ldexp(1.0, 60),
                             -fmax_tie,
                             1.0 + ldexp(1.0, -24),
                             1.0 + 3 * ldexp(1.0, -24),
                             ldexp(1.0, -149),
                             ldexp(1.0, -150),
                             3 * ldexp(1.0, -150),
                             -ldexp(1.0, -150),
                             2147483647.0,
                             2147483647.9,
                             2147483648.0,
                             -2147483648.0,
                             -2147483648.9,
                             -2147483649.0,
                             1e300,
                             -1e300,
                             0.5,
                             -0.5,
                             -0.9999};
  for (size_t i = 0; i < n; i++) {
    switch (kt_next(r) & 3) {
      case 0: x[i] = specials[kt_next(r) % (sizeof specials / sizeof specials[0])]; break;
      case 1: x[i] = uniform64(r, -100.0, 100.0); break;
      case 2: x[i] = uniform64(r, -3e9, 3e9); break;
      default: x[i] = f64_bits(kt_next(r)); break;
    }
  }
}

static void fill_s32(kt_rng *r, int32_t *x, size_t n) {
  const int32_t specials[] = {INT32_MIN, INT32_MAX, 0,          -1,         1,          16777216,    16777217,
                              16777219,  -16777217, 2147483520, 2147483584, 2147483583, -2147483584, -2147483583};
  for (size_t i = 0; i < n; i++) {
    switch (kt_next(r) & 3) {
      case 0: x[i] = specials[kt_next(r) % (sizeof specials / sizeof specials[0])]; break;
      case 1: x[i] = (int32_t)(kt_next(r) % 2001) - 1000; break;
      default: {
        uint32_t u = (uint32_t)kt_next(r);
        memcpy(&x[i], &u, 4);
      } break;
    }
  }
}

static void fill_u8(kt_rng *r, uint8_t *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = (uint8_t)kt_next(r);
}

/* ---- element printers for failure messages */

typedef void (*show_fn)(char *buf, size_t len, const void *arr, size_t i);
static void show_f32(char *b, size_t len, const void *a, size_t i) {
  float v;
  uint32_t u;
  memcpy(&v, (const char *)a + 4 * i, 4), memcpy(&u, &v, 4);
  snprintf(b, len, "%.9g (0x%08x)", v, u);
}
static void show_f64(char *b, size_t len, const void *a, size_t i) {
  double v;
  uint64_t u;
  memcpy(&v, (const char *)a + 8 * i, 8), memcpy(&u, &v, 8);
  snprintf(b, len, "%.17g (0x%016llx)", v, (unsigned long long)u);
}
static void show_s32(char *b, size_t len, const void *a, size_t i) {
  int32_t v;
  memcpy(&v, (const char *)a + 4 * i, 4);
  snprintf(b, len, "%d", v);
}
static void show_u8(char *b, size_t len, const void *a, size_t i) { snprintf(b, len, "%u", ((const uint8_t *)a)[i]); }
static void show_u16(char *b, size_t len, const void *a, size_t i) {
  snprintf(b, len, "0x%04x", ((const uint16_t *)a)[i]);
}

/* Any 16-bit pattern: NaNs, infinities, subnormals and zeros of both halves. */
static void fill_u16(kt_rng *r, uint16_t *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = (uint16_t)kt_next(r);
}

/* f32 inputs for the narrowing conversions: the f32 specials, the halves'
 * rounding ties (exact midpoints between two bf16 or f16 values, both
 * parities), f16's overflow and subnormal ranges, any bit pattern. */
static void fill_f32_half(kt_rng *r, float *x, size_t n) {
  fill_f32(r, x, n);
  for (size_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)kt_next(r), sign = u & 0x80000000u;
    switch (u & 7) {
      case 0: x[i] = f32_bits((u & 0xFFFF0000u) | 0x8000u); break;                          /* a bf16 tie */
      case 1: x[i] = f32_bits(sign | ((0x33000000u + (u & 0x0FFFE000u)) | 0x1000u)); break; /* f16 tie range */
      case 2: x[i] = kt_uniform(r, -70000.0f, 70000.0f); break;                             /* around 65504 */
      case 3: x[i] = f32_bits(sign | (0x33000000u + (u >> 6 & 0x05FFFFFFu))); break;        /* 2^-25 .. 2^-13 */
      default: break;
    }
  }
}

/* Reports the first element where got and want differ in any bit; 1 if one does. */
static int report_diff(const char *fn_name, size_t n, size_t off, const void *x, size_t src_size, show_fn show_src,
                       const void *got, const void *want, size_t dst_size, show_fn show_dst) {
  for (size_t i = 0; i < n; i++) {
    if (memcmp((const char *)got + i * dst_size, (const char *)want + i * dst_size, dst_size) != 0) {
      char sx[64], sg[64], sw[64];
      show_src(sx, sizeof sx, x, i), show_dst(sg, sizeof sg, got, i), show_dst(sw, sizeof sw, want, i);
      OT_CHECK(false, "%s n=%zu offset=%zu: x[%zu]=%s gave %s, want %s", fn_name, n, off, i, sx, sg, sw);
      return 1;
    }
  }
  (void)src_size;
  return 0;
}

/* One sweep function per op: sizes x offsets, x and y at different offsets. */
#define CHECKER(op, src_t, dst_t, ref_fn, fill_fn, show_src, show_dst)                                                \
  static void check_##op(optic_isa isa, optic_convert_##op##_fn *fn, const char *fn_name) {                           \
    if (kt_skip_isa(isa)) return;                                                                                     \
    size_t sizes[32];                                                                                                 \
    size_t nsizes = kt_sizes(isa, sizes, 32);                                                                         \
    kt_rng rng = {0xC0DE5EEDull ^ (sizeof(src_t) << 8) ^ sizeof(dst_t) ^ (uint64_t)isa << 16};                        \
    int failures = 0;                                                                                                 \
    for (size_t si = 0; si < nsizes && failures < 5; si++) {                                                          \
      for (size_t oi = 0; oi < kt_noffsets; oi++) {                                                                   \
        size_t n = sizes[si], off = kt_offsets[oi];                                                                   \
        kt_mem x = kt_mem_make(n, sizeof(src_t), off), y = kt_mem_make(n, sizeof(dst_t), (off + 1) % 4);              \
        dst_t *want = malloc((n + 1) * sizeof(dst_t));                                                                \
        fill_fn(&rng, (src_t *)x.p, n);                                                                               \
        ref_fn(n, (const src_t *)x.p, want);                                                                          \
        fn(n, (const src_t *)x.p, (dst_t *)y.p);                                                                      \
        failures += report_diff(fn_name, n, off, x.p, sizeof(src_t), show_src, y.p, want, sizeof(dst_t), show_dst);   \
        OT_CHECK(kt_mem_guard_ok(&x) && kt_mem_guard_ok(&y), "%s n=%zu offset=%zu wrote outside its arrays", fn_name, \
                 n, off);                                                                                             \
        free(want);                                                                                                   \
        kt_mem_free(&x), kt_mem_free(&y);                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }

CHECKER(f32_f64, float, double, optic_ref_f32_f64_cvt, fill_f32, show_f32, show_f64)
CHECKER(f64_f32, double, float, optic_ref_f64_f32_cvt, fill_f64, show_f64, show_f32)
CHECKER(f32_s32, float, int32_t, optic_ref_f32_s32_cvt, fill_f32, show_f32, show_s32)
CHECKER(s32_f32, int32_t, float, optic_ref_s32_f32_cvt, fill_s32, show_s32, show_f32)
CHECKER(f64_s32, double, int32_t, optic_ref_f64_s32_cvt, fill_f64, show_f64, show_s32)
CHECKER(s32_f64, int32_t, double, optic_ref_s32_f64_cvt, fill_s32, show_s32, show_f64)
CHECKER(f32_pred, float, uint8_t, optic_ref_f32_pred_cvt, fill_f32, show_f32, show_u8)
CHECKER(u8_f32, uint8_t, float, optic_ref_u8_f32_cvt, fill_u8, show_u8, show_f32)
CHECKER(f32_bf16, float, uint16_t, optic_ref_f32_bf16_cvt, fill_f32_half, show_f32, show_u16)
CHECKER(bf16_f32, uint16_t, float, optic_ref_bf16_f32_cvt, fill_u16, show_u16, show_f32)
CHECKER(f32_f16, float, uint16_t, optic_ref_f32_f16_cvt, fill_f32_half, show_f32, show_u16)
CHECKER(f16_f32, uint16_t, float, optic_ref_f16_f32_cvt, fill_u16, show_u16, show_f32)

/* Every kernel of the halves on all 2^16 inputs (widening) and on every
 * 257th f32 bit pattern plus every tie pattern near each of 64 exponents
 * (narrowing), against the reference bit for bit. */
static void halves_sweep(void) {
  enum { N = 65536 };
  uint16_t *h = malloc(N * 2), *g16 = malloc(N * 2), *w16 = malloc(N * 2);
  float *f = malloc(N * 4), *g32 = malloc(N * 4), *w32 = malloc(N * 4);
  for (uint32_t i = 0; i < N; i++) h[i] = (uint16_t)i;
  for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
    const optic_convert_kernels *t = optic_convert_kernels_for((optic_isa)isa);
    if (t == NULL || kt_skip_isa((optic_isa)isa)) continue;
    const char *in = optic_isa_name((optic_isa)isa);
    t->bf16_f32(N, h, g32), optic_ref_bf16_f32_cvt(N, h, w32);
    report_diff("bf16->f32 all", N, 0, h, 2, show_u16, g32, w32, 4, show_f32);
    t->f16_f32(N, h, g32), optic_ref_f16_f32_cvt(N, h, w32);
    OT_CHECK(report_diff("f16->f32 all", N, 0, h, 2, show_u16, g32, w32, 4, show_f32) == 0, "%s", in);
    for (uint64_t base = 0; base < 257; base += 64) { /* strided over all 2^32 patterns */
      for (uint64_t u = base, k = 0; u <= 0xffffffffull; u += 257u * 64u * 4u) {
        uint32_t b = (uint32_t)u;
        f[k++] = f32_bits(b);
        if (k == N || u + 257u * 64u * 4u > 0xffffffffull) {
          t->f32_bf16(k, f, g16), optic_ref_f32_bf16_cvt(k, f, w16);
          OT_CHECK(report_diff("f32->bf16 sweep", k, 0, f, 4, show_f32, g16, w16, 2, show_u16) == 0, "%s", in);
          t->f32_f16(k, f, g16), optic_ref_f32_f16_cvt(k, f, w16);
          OT_CHECK(report_diff("f32->f16 sweep", k, 0, f, 4, show_f32, g16, w16, 2, show_u16) == 0, "%s", in);
          k = 0;
        }
      }
    }
    /* ties and their neighbours: every 16-bit top half with low half
     * 0x7fff, 0x8000, 0x8001 (bf16), and f16's rounding bit patterns */
    for (uint32_t k = 0; k < N; k++) f[k] = f32_bits((k << 16) | (0x7fffu + k % 3));
    t->f32_bf16(N, f, g16), optic_ref_f32_bf16_cvt(N, f, w16);
    OT_CHECK(report_diff("f32->bf16 ties", N, 0, f, 4, show_f32, g16, w16, 2, show_u16) == 0, "%s", in);
    for (uint32_t k = 0; k < N; k++)
      f[k] = f32_bits(((k & 0x8000u) << 16) | (0x33000000u + ((k & 0x7FFFu) << 13)) | (0x0FFFu + k % 3));
    t->f32_f16(N, f, g16), optic_ref_f32_f16_cvt(N, f, w16);
    OT_CHECK(report_diff("f32->f16 ties", N, 0, f, 4, show_f32, g16, w16, 2, show_u16) == 0, "%s", in);
  }
  free(h), free(g16), free(w16), free(f), free(g32), free(w32);
}

#define X_CVT(op, isa, fn) \
  static void test_##fn(void) { check_##op(OPTIC_ISA_##isa, fn, #fn); }
#include "kernels/list/convert.inc"
#undef X_CVT

/* ---- the oracle itself against hand-written answers at every boundary */

static void reference_known_answers(void) {
  const struct {
    float x;
    int32_t want;
  } f32_s32[] = {{2147483648.0f, INT32_MAX},
                 {-2147483648.0f, INT32_MIN},
                 {2147483520.0f, 2147483520},
                 {-2147483520.0f, -2147483520},
                 {-2147483904.0f, INT32_MIN},
                 {2147483904.0f, INT32_MAX},
                 {NAN, 0},
                 {-NAN, 0},
                 {INFINITY, INT32_MAX},
                 {-INFINITY, INT32_MIN},
                 {1.9f, 1},
                 {-1.9f, -1},
                 {-0.5f, 0},
                 {1e-40f, 0},
                 {-0.0f, 0},
                 {16777217.0f, 16777216}};
  for (size_t i = 0; i < sizeof f32_s32 / sizeof f32_s32[0]; i++) {
    int32_t got;
    optic_ref_f32_s32_cvt(1, &f32_s32[i].x, &got);
    OT_CHECK(got == f32_s32[i].want, "f32->s32 %.9g gave %d want %d", f32_s32[i].x, got, f32_s32[i].want);
    OT_CHECK(optic_convert_f32_s32_one(f32_s32[i].x) == f32_s32[i].want, "f32_s32_one %.9g", f32_s32[i].x);
  }
  const struct {
    double x;
    int32_t want;
  } f64_s32[] = {{2147483647.0, INT32_MAX},
                 {2147483647.9, INT32_MAX},
                 {2147483648.0, INT32_MAX},
                 {-2147483648.0, INT32_MIN},
                 {-2147483648.9, INT32_MIN},
                 {-2147483649.0, INT32_MIN},
                 {-2147483647.5, -2147483647},
                 {NAN, 0},
                 {1e300, INT32_MAX},
                 {-1e300, INT32_MIN},
                 {INFINITY, INT32_MAX},
                 {-INFINITY, INT32_MIN},
                 {-0.99, 0},
                 {4.9e-324, 0},
                 {123456.999, 123456}};
  for (size_t i = 0; i < sizeof f64_s32 / sizeof f64_s32[0]; i++) {
    int32_t got;
    optic_ref_f64_s32_cvt(1, &f64_s32[i].x, &got);
    OT_CHECK(got == f64_s32[i].want, "f64->s32 %.17g gave %d want %d", f64_s32[i].x, got, f64_s32[i].want);
    OT_CHECK(optic_convert_f64_s32_one(f64_s32[i].x) == f64_s32[i].want, "f64_s32_one %.17g", f64_s32[i].x);
  }
  const struct {
    double x;
    float want;
  } f64_f32[] = {{1.0 + ldexp(1.0, -24), 1.0f},                 /* tie, to even */
                 {1.0 + 3 * ldexp(1.0, -24), 1.0f + 0x1p-22f},  /* tie, to even (up) */
                 {(double)FLT_MAX + ldexp(1.0, 103), INFINITY}, /* tie at the top: to even is 2^128 */
                 {(double)FLT_MAX + ldexp(1.0, 102), FLT_MAX},
                 {ldexp(1.0, -150), 0.0f},
                 {3 * ldexp(1.0, -150), 0x1p-148f},
                 {-ldexp(1.0, -150), -0.0f},
                 {ldexp(1.0, -149), 0x1p-149f},
                 {1e300, INFINITY},
                 {-1e300, -INFINITY},
                 {0.1, 0.1f}};
  for (size_t i = 0; i < sizeof f64_f32 / sizeof f64_f32[0]; i++) {
    float got;
    optic_ref_f64_f32_cvt(1, &f64_f32[i].x, &got);
    OT_CHECK(memcmp(&got, &f64_f32[i].want, 4) == 0, "f64->f32 %.17g gave %a want %a", f64_f32[i].x, got,
             f64_f32[i].want);
  }
  const struct {
    int32_t x;
    float want;
  } s32_f32[] = {
      {16777217, 16777216.0f},     {16777219, 16777220.0f},     {-16777217, -16777216.0f},   {INT32_MAX, 2147483648.0f},
      {2147483584, 2147483648.0f}, {2147483583, 2147483520.0f}, {INT32_MIN, -2147483648.0f}, {0, 0.0f}};
  for (size_t i = 0; i < sizeof s32_f32 / sizeof s32_f32[0]; i++) {
    float got;
    optic_ref_s32_f32_cvt(1, &s32_f32[i].x, &got);
    OT_CHECK(memcmp(&got, &s32_f32[i].want, 4) == 0, "s32->f32 %d gave %.9g want %.9g", s32_f32[i].x, got,
             s32_f32[i].want);
  }
  const float px[] = {0.0f, -0.0f, NAN, 1e-40f, -INFINITY, 2.0f};
  const uint8_t pwant[] = {0, 0, 1, 1, 1, 1};
  uint8_t pgot[6];
  optic_ref_f32_pred_cvt(6, px, pgot);
  OT_CHECK(memcmp(pgot, pwant, 6) == 0, "f32->pred");
  const uint8_t ux[] = {0, 1, 255};
  const float uwant[] = {0.0f, 1.0f, 255.0f};
  float ugot[3];
  optic_ref_u8_f32_cvt(3, ux, ugot);
  OT_CHECK(memcmp(ugot, uwant, sizeof ugot) == 0, "u8->f32");
  const int32_t dx[] = {INT32_MIN, INT32_MAX};
  const double dwant[] = {-2147483648.0, 2147483647.0};
  double dgot[2];
  optic_ref_s32_f64_cvt(2, dx, dgot);
  OT_CHECK(memcmp(dgot, dwant, sizeof dgot) == 0, "s32->f64");
  /* halves: ties to even, carries into the exponent, overflow, subnormals,
   * NaN made quiet with its sign and high payload */
  const float hx[] = {1.0f,
                      f32_bits(0x3f808000u),
                      f32_bits(0x3f818000u),
                      f32_bits(0x3f808001u),
                      f32_bits(0x3fffffffu),
                      FLT_MAX,
                      f32_bits(0x7f800001u),
                      f32_bits(0xffc00001u),
                      65504.0f,
                      65519.99f,
                      65520.0f,
                      0x1p-24f,
                      0x1p-25f,
                      0x1.000002p-25f,
                      0x1.8p-24f,
                      0x1.ffcp-15f,
                      -0.0f,
                      0x1p-14f,
                      f32_bits(0x3f801000u),
                      f32_bits(0x3f803000u)};
  const uint16_t bwant[] = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x4000, 0x7f80, 0x7fc0, 0xffc0, 0x4780, 0x4780,
                            0x4780, 0x3380, 0x3300, 0x3300, 0x33c0, 0x3880, 0x8000, 0x3880, 0x3f80, 0x3f80};
  const uint16_t hwant[] = {0x3c00, 0x3c04, 0x3c0c, 0x3c04, 0x4000, 0x7c00, 0x7e00, 0xfe00, 0x7bff, 0x7bff,
                            0x7c00, 0x0001, 0x0000, 0x0001, 0x0002, 0x0400, 0x8000, 0x0400, 0x3c00, 0x3c02};
  uint16_t hgot[20];
  optic_ref_f32_bf16_cvt(20, hx, hgot);
  for (int i = 0; i < 20; i++) OT_CHECK(hgot[i] == bwant[i], "f32->bf16 %d: 0x%04x want 0x%04x", i, hgot[i], bwant[i]);
  optic_ref_f32_f16_cvt(20, hx, hgot);
  for (int i = 0; i < 20; i++) OT_CHECK(hgot[i] == hwant[i], "f32->f16 %d: 0x%04x want 0x%04x", i, hgot[i], hwant[i]);
  const uint16_t wx[] = {0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x7d00, 0x8001};
  const float wwant[] = {0x1p-24f,  0x1.ff8p-15f,          0x1p-14f, 1.0f, 65504.0f, INFINITY,
                         -INFINITY, f32_bits(0x7fa00000u), -0x1p-24f};
  float wgot[9];
  optic_ref_f16_f32_cvt(9, wx, wgot);
  OT_CHECK(memcmp(wgot, wwant, sizeof wgot) == 0, "f16->f32");
}

static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_convert_kernels *t = optic_convert_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
#define HOLE_CHECK(op, src_t, dst_t, name)                                                   \
  OT_CHECK(t->op != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i), name);           \
  OT_CHECK(t->isa_of.op == OPTIC_ISA_SCALAR || t->isa_of.op == (optic_isa)i, "%s %s isa_of", \
           optic_isa_name((optic_isa)i), name);
    OPTIC_CONVERT_OP_LIST(HOLE_CHECK)
#undef HOLE_CHECK
  }
#define X_CVT(op, isa, fn) OT_CHECK(optic_convert_kernels_for(OPTIC_ISA_##isa)->op == fn, #fn " not in its table");
#include "kernels/list/convert.inc"
#undef X_CVT
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_convert_kernels_get() == optic_convert_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_convert_kernels_get()->f32_s32 == optic_f32_s32_vcvt__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_convert_kernels_get() == optic_convert_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_CVT(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/convert.inc"
#undef X_CVT
    {"reference_known_answers", reference_known_answers},
    {"halves_sweep", halves_sweep},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
