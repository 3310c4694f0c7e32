/* AVX-512 unary f32 kernels: two 16-float vectors per iteration, then a masked
 * remainder (masked loads never fault on masked-out lanes: no over-read).
 * exp/log/tanh/logistic are range reduction + polynomial with the shared
 * constants of kernels/unary_consts.h; no gathers, no scalar fallback.
 * Semantics and bounds as in kernels/unary.h; built with AVX-512 flags only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/unary.h"
#include "kernels/x86/stream_x86.h"
#include "kernels/unary_consts.h"

#define SIGN_MASK 0x80000000u
#define ABS_MASK 0x7fffffffu

static inline __m512 set1(float v) { return _mm512_set1_ps(v); }
static inline __m512 madd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }

static inline __m512 neg16(__m512 x) {
  return _mm512_xor_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)SIGN_MASK)));
}
static inline __m512 abs16(__m512 x) { return _mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32(ABS_MASK))); }
static inline __m512 sqrt16(__m512 x) { return _mm512_sqrt_ps(x); }
static inline __m512 square16(__m512 x) { return _mm512_mul_ps(x, x); }
static inline __m512 floor16(__m512 x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline __m512 ceil16(__m512 x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
/* Two correctly rounded steps: within 1 ULP, and 1/sqrt's special values
 * (+-0 -> +-inf, inf -> 0, x < 0 -> NaN) for free. */
static inline __m512 rsqrt16(__m512 x) { return _mm512_div_ps(set1(1.0f), _mm512_sqrt_ps(x)); }

/* x where x is +-0 or NaN (the ordered not-equal compare is false for both),
 * else copysign(1, x). */
static inline __m512 sign16(__m512 x) {
  __m512 one = _mm512_or_ps(set1(1.0f), _mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)SIGN_MASK))));
  return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NEQ_OQ), one);
}
/* Keep x where x > 0 or x is NaN ("not less or equal", unordered -> true). */
static inline __m512 relu16(__m512 x) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
}

/* exp: x = n ln2 + r, exp(r) by the degree-6 minimax polynomial, times 2^n
 * with scalef (one rounding, also for subnormal results and overflow). The
 * clamp keeps r finite for +-inf; max/min return their second operand when
 * either is NaN, so NaN passes through. */
static inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(set1(OPTIC_EXP_LO), x);
  x = _mm512_min_ps(set1(OPTIC_EXP_HI), x);
  __m512 n = _mm512_sub_ps(madd(x, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F)), set1(OPTIC_ROUND_MAGIC_F));
  __m512 r = madd(n, set1(-OPTIC_LN2_HI_F), x);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  __m512 p = madd(set1(OPTIC_EXP_C6), r, set1(OPTIC_EXP_C5));
  p = madd(p, r, set1(OPTIC_EXP_C4));
  p = madd(p, r, set1(OPTIC_EXP_C3));
  p = madd(p, r, set1(OPTIC_EXP_C2));
  p = madd(p, r, set1(1.0f));
  p = madd(p, r, set1(1.0f));
  return _mm512_scalef_ps(p, n);
}

/* Q of log(1 + f) = f + f^2 Q(f), f in [sqrt(1/2) - 1, sqrt(2) - 1):
 * the log polynomial, shared by log and log1p. */
static inline __m512 log_q16(__m512 f) {
  __m512 q = madd(set1(OPTIC_LOG_C10), f, set1(OPTIC_LOG_C9));
  q = madd(q, f, set1(OPTIC_LOG_C8));
  q = madd(q, f, set1(OPTIC_LOG_C7));
  q = madd(q, f, set1(OPTIC_LOG_C6));
  q = madd(q, f, set1(OPTIC_LOG_C5));
  q = madd(q, f, set1(OPTIC_LOG_C4));
  q = madd(q, f, set1(OPTIC_LOG_C3));
  q = madd(q, f, set1(OPTIC_LOG_C2));
  return q;
}

/* log: x = 2^e m, m in [sqrt(1/2), sqrt(2)) by integer ops on the bits
 * (subnormals are scaled by 2^23 first), log(m) = f + f^2 Q(f), f = m - 1
 * exact, plus e ln2 in two parts. Special lanes are patched at the end. */
static inline __m512 log16(__m512 x) {
  const __mmask16 sub = _mm512_cmp_ps_mask(x, set1(1.17549435e-38f), _CMP_LT_OQ);
  __m512 xs = _mm512_mask_mul_ps(x, sub, x, set1(8388608.0f));
  __m512i u = _mm512_sub_epi32(_mm512_castps_si512(xs), _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  __m512i ei = _mm512_srai_epi32(u, 23);
  ei = _mm512_mask_sub_epi32(ei, sub, ei, _mm512_set1_epi32(23));
  __m512i mi =
      _mm512_add_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  __m512 f = _mm512_sub_ps(_mm512_castsi512_ps(mi), set1(1.0f));
  __m512 e = _mm512_cvtepi32_ps(ei);
  const __m512 q = log_q16(f);
  __m512 f2 = _mm512_mul_ps(f, f);
  __m512 t = madd(f2, q, madd(e, set1(OPTIC_LN2_LO_F), f));
  __m512 y = madd(e, set1(OPTIC_LN2_HI_F), t);
  /* x <= 0, inf, NaN: -inf for +-0, inf for inf, NaN otherwise. */
  const __mmask16 ok =
      _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ) & _mm512_cmp_ps_mask(x, set1(INFINITY), _CMP_LT_OQ);
  if (ok != 0xffff) {
    __m512 special =
        _mm512_mask_mov_ps(set1(NAN), _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), set1(-INFINITY));
    special = _mm512_mask_mov_ps(special, _mm512_cmp_ps_mask(x, set1(INFINITY), _CMP_EQ_OQ), x);
    y = _mm512_mask_mov_ps(special, ok, y);
  }
  return y;
}

/* tanh(|x|) = E / (E + 2) with E = expm1(2|x|) = 2^n (expm1(r) + 1) - 1,
 * computed as madd(2^n, expm1(r), 2^n - 1); accurate down to tiny |x| (E = 2|x|
 * exactly there), saturating to 1 past the clamp; the sign is x's. */
static inline __m512 tanh16(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)SIGN_MASK)));
  __m512 z = _mm512_min_ps(set1(OPTIC_TANH_CLAMP), abs16(x));
  z = _mm512_add_ps(z, z);
  __m512 n = _mm512_sub_ps(madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F)), set1(OPTIC_ROUND_MAGIC_F));
  __m512 r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  __m512 p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  __m512 em1 = madd(_mm512_mul_ps(r, r), p, r);
  __m512 s = _mm512_scalef_ps(set1(1.0f), n);
  __m512 e = madd(s, em1, _mm512_sub_ps(s, set1(1.0f)));
  __m512 t = _mm512_div_ps(e, _mm512_add_ps(e, set1(2.0f)));
  return _mm512_or_ps(t, sign);
}

/* logistic(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, e = exp(-|x|):
 * no overflow, and subnormal results for x < -87.3 instead of a flush to 0. */
static inline __m512 logistic16(__m512 x) {
  __m512 e = exp16(_mm512_or_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)SIGN_MASK))));
  __m512 num = _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), set1(1.0f));
  return _mm512_div_ps(num, _mm512_add_ps(e, set1(1.0f)));
}

/* expm1(r) on the reduced interval (kernels/unary_consts.h), r + r^2 P(r). */
static inline __m512 expm1_poly16(__m512 r) {
  __m512 p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  return madd(_mm512_mul_ps(r, r), p, r);
}

/* expm1: x = n ln2 + r, 2^n (expm1(r) + (1 - 2^-n)), both powers by scalef
 * (exact, overflow to inf); tiny |x| (and +-0) return x. NaN passes the
 * clamps and every step. */
static inline __m512 expm116(__m512 x) {
  __m512 z = _mm512_max_ps(set1(OPTIC_EXPM1_LO), x);
  z = _mm512_min_ps(set1(OPTIC_EXPM1_HI), z);
  __m512 n = _mm512_sub_ps(madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F)), set1(OPTIC_ROUND_MAGIC_F));
  __m512 r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  __m512 c = _mm512_sub_ps(set1(1.0f), _mm512_scalef_ps(set1(1.0f), neg16(n)));
  __m512 y = _mm512_scalef_ps(_mm512_add_ps(expm1_poly16(r), c), n);
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(abs16(x), set1(OPTIC_EXPM1_TINY), _CMP_LT_OQ), x);
}

/* log1p: u = 1 + x = 2^e m (u >= 2^-24 is never subnormal); f = m - 1, or x
 * when e = 0; for e != 0 the rounding error of u, d = x - (u - 1) (exact),
 * enters as d / u. Special lanes (x <= -1, inf, NaN) as log of u; tiny |x|
 * returns x. */
static inline __m512 log1p16(__m512 x) {
  const __m512 u = _mm512_add_ps(x, set1(1.0f));
  __m512i b = _mm512_sub_epi32(_mm512_castps_si512(u), _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  __m512i ei = _mm512_srai_epi32(b, 23);
  __m512i mi =
      _mm512_add_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  const __mmask16 e0 = _mm512_cmpeq_epi32_mask(ei, _mm512_setzero_si512());
  __m512 f = _mm512_mask_mov_ps(_mm512_sub_ps(_mm512_castsi512_ps(mi), set1(1.0f)), e0, x);
  __m512 d = _mm512_div_ps(_mm512_sub_ps(x, _mm512_sub_ps(u, set1(1.0f))), u);
  d = _mm512_mask_mov_ps(d, e0, _mm512_setzero_ps());
  __m512 e = _mm512_cvtepi32_ps(ei);
  __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(f, f), log_q16(f)), madd(e, set1(OPTIC_LN2_LO_F), d));
  __m512 y = madd(e, set1(OPTIC_LN2_HI_F), _mm512_add_ps(f, t));
  const __mmask16 ok =
      _mm512_cmp_ps_mask(u, _mm512_setzero_ps(), _CMP_GT_OQ) & _mm512_cmp_ps_mask(u, set1(INFINITY), _CMP_LT_OQ);
  if (ok != 0xffff) {
    __m512 special =
        _mm512_mask_mov_ps(set1(NAN), _mm512_cmp_ps_mask(u, _mm512_setzero_ps(), _CMP_EQ_OQ), set1(-INFINITY));
    special = _mm512_mask_mov_ps(special, _mm512_cmp_ps_mask(u, set1(INFINITY), _CMP_EQ_OQ), u);
    y = _mm512_mask_mov_ps(special, ok, y);
  }
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(abs16(x), set1(OPTIC_LOG1P_TINY), _CMP_LT_OQ), x);
}

/* erf: three intervals of |x| (kernels/unary_consts.h), one Horner pass with
 * per-lane coefficients; the interval A result x + x P(x^2) keeps x's sign
 * (and +-0, NaN), B and C take it by or, |x| >= ERF_SAT gives +-1. */
#define ERF_COEF16(k, mb, mc) \
  _mm512_mask_mov_ps(_mm512_mask_mov_ps(set1(OPTIC_ERF_A##k), mb, set1(OPTIC_ERF_B##k)), mc, set1(OPTIC_ERF_C##k))
static inline __m512 erf16(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)SIGN_MASK)));
  const __m512 a = abs16(x);
  const __mmask16 mb = _mm512_cmp_ps_mask(a, set1(OPTIC_ERF_T1), _CMP_GE_OQ);
  const __mmask16 mc = _mm512_cmp_ps_mask(a, set1(OPTIC_ERF_T2), _CMP_GE_OQ);
  __m512 t = _mm512_mask_sub_ps(_mm512_mul_ps(x, x), mb, a, set1(OPTIC_ERF_MID_B));
  t = _mm512_mask_sub_ps(t, mc, a, set1(OPTIC_ERF_MID_C));
  __m512 p = madd(ERF_COEF16(9, mb, mc), t, ERF_COEF16(8, mb, mc));
  p = madd(p, t, ERF_COEF16(7, mb, mc));
  p = madd(p, t, ERF_COEF16(6, mb, mc));
  p = madd(p, t, ERF_COEF16(5, mb, mc));
  p = madd(p, t, ERF_COEF16(4, mb, mc));
  p = madd(p, t, ERF_COEF16(3, mb, mc));
  p = madd(p, t, ERF_COEF16(2, mb, mc));
  p = madd(p, t, ERF_COEF16(1, mb, mc));
  p = madd(p, t, ERF_COEF16(0, mb, mc));
  __m512 far = _mm512_or_ps(_mm512_min_ps(p, set1(1.0f)), sign);
  __m512 y = _mm512_mask_mov_ps(madd(x, p, x), mb, far);
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(a, set1(OPTIC_ERF_SAT), _CMP_GE_OQ), _mm512_or_ps(set1(1.0f), sign));
}
#undef ERF_COEF16

#define AVX512_UNARY_TAIL(OP, i, n)                                       \
  for (; i < n; i += 16) {                                                \
    size_t r = n - i < 16 ? n - i : 16;                                   \
    __mmask16 m = (__mmask16)((1u << r) - 1);                             \
    _mm512_mask_storeu_ps(y + i, m, OP(_mm512_maskz_loadu_ps(m, x + i))); \
  }

/* Large calls stream their stores (kernels/stream.h), as in binary_avx512.c. */
#define AVX512_UNARY(fn, OP)                                                                    \
  void fn(size_t n, const float *x, float *y) {                                                 \
    size_t i = 0, head = optic_x86_stream_head(y, n, 2 * n * sizeof(float), 64);                \
    if (head != SIZE_MAX) {                                                                     \
      AVX512_UNARY_TAIL(OP, i, head)                                                            \
      for (i = head; i + 16 <= n; i += 16) _mm512_stream_ps(y + i, OP(_mm512_loadu_ps(x + i))); \
      AVX512_UNARY_TAIL(OP, i, n)                                                               \
      _mm_sfence();                                                                             \
      return;                                                                                   \
    }                                                                                           \
    for (; i + 32 <= n; i += 32) {                                                              \
      __m512 r0 = OP(_mm512_loadu_ps(x + i));                                                   \
      __m512 r1 = OP(_mm512_loadu_ps(x + i + 16));                                              \
      _mm512_storeu_ps(y + i, r0);                                                              \
      _mm512_storeu_ps(y + i + 16, r1);                                                         \
    }                                                                                           \
    AVX512_UNARY_TAIL(OP, i, n)                                                                 \
  }

AVX512_UNARY(optic_f32_vneg__avx512, neg16)
AVX512_UNARY(optic_f32_vabs__avx512, abs16)
AVX512_UNARY(optic_f32_vexp__avx512, exp16)
AVX512_UNARY(optic_f32_vlog__avx512, log16)
AVX512_UNARY(optic_f32_vsqrt__avx512, sqrt16)
AVX512_UNARY(optic_f32_vrsqrt__avx512, rsqrt16)
AVX512_UNARY(optic_f32_vtanh__avx512, tanh16)
AVX512_UNARY(optic_f32_vlogistic__avx512, logistic16)
AVX512_UNARY(optic_f32_vsign__avx512, sign16)
AVX512_UNARY(optic_f32_vfloor__avx512, floor16)
AVX512_UNARY(optic_f32_vceil__avx512, ceil16)
AVX512_UNARY(optic_f32_vsquare__avx512, square16)
AVX512_UNARY(optic_f32_vrelu__avx512, relu16)
AVX512_UNARY(optic_f32_verf__avx512, erf16)
AVX512_UNARY(optic_f32_vexpm1__avx512, expm116)
AVX512_UNARY(optic_f32_vlog1p__avx512, log1p16)
