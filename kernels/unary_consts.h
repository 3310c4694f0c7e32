/* Internal: the constants every ISA's exp/log/tanh/logistic (and the binary
 * family's pow) kernels share, so all ISAs evaluate the same approximations.
 * Plain numbers only: no intrinsics, no code. The float coefficients are
 * relative-error minimax fits (Remez exchange in 50-digit arithmetic,
 * kernels/unary_minimax.py) rounded to float; the error figures quoted are
 * those of the rounded coefficients, before evaluation rounding. */
#ifndef OPTIC_KERNELS_UNARY_CONSTS_H
#define OPTIC_KERNELS_UNARY_CONSTS_H

/* Range reduction x = n ln2 + r, n = rint(x log2e), |r| <= ln2/2 (+ slack).
 * ln2 = LN2_HI + LN2_LO with LN2_HI = float(ln2); with FMA, x - n*LN2_HI is
 * exact for the n that occur, so r carries one rounding. */
#define OPTIC_LOG2E_F 1.44269502f
#define OPTIC_LN2_HI_F 0.693147182f
#define OPTIC_LN2_LO_F -1.90465421e-09f
/* 1.5 * 2^23: fma(x, log2e, M) - M rounds x log2e to the nearest integer, and
 * the low bits of fma(x, log2e, M) hold that integer (|n| < 2^22). */
#define OPTIC_ROUND_MAGIC_F 12582912.0f

/* exp(r) ~ 1 + r + r^2 (c2 + c3 r + ... + c6 r^4) on |r| <= 0.3467; relative
 * error 3.7e-9 (0.03 ULP). */
#define OPTIC_EXP_C2 0.49999994f
#define OPTIC_EXP_C3 0.166665211f
#define OPTIC_EXP_C4 0.041668389f
#define OPTIC_EXP_C5 0.0083687352f
#define OPTIC_EXP_C6 0.00138145604f
/* exp inputs are clamped to [EXP_LO, EXP_HI]: below, exp rounds to +0; above,
 * to +inf (ln(FLT_MAX) = 88.7228, ln(2^-150) = -103.972), and n stays in
 * [-150, 129] so two normal scale factors 2^(n/2) always suffice. */
#define OPTIC_EXP_LO -104.0f
#define OPTIC_EXP_HI 89.0f
/* |x| <= EXP_FAST keeps 2^n a normal float (n in [-126, 127]): one scale. */
#define OPTIC_EXP_FAST 87.0f

/* expm1(r) ~ r + r^2 (c2 + c3 r + ... + c7 r^5) on |r| <= 0.3467; relative
 * error 2.9e-9 (tanh's building block: it stays accurate as r -> 0). */
#define OPTIC_EXPM1_C2 0.5f
#define OPTIC_EXPM1_C3 0.166666672f
#define OPTIC_EXPM1_C4 0.0416663252f
#define OPTIC_EXPM1_C5 0.00833322015f
#define OPTIC_EXPM1_C6 0.00139432389f
#define OPTIC_EXPM1_C7 0.000199622387f
/* tanh(x) rounds to +-1 for |x| >= 9.011; clamping |x| to 10 keeps 2|x| log2e
 * below 29 so the expm1 scale 2^n is a normal float. */
#define OPTIC_TANH_CLAMP 10.0f

/* expm1(x) = 2^n (expm1(r) + (1 - 2^-n)) with the tanh reduction above: one
 * rounding in the sum, an exact scale (overflow rounds to inf). Inputs are
 * clamped to [EXPM1_LO, EXPM1_HI]: below, expm1 rounds to -1; above, to
 * +inf; n stays in [-26, 129]. |x| below EXPM1_TINY returns x itself
 * (expm1(x) rounds to x there; it also keeps the sign of -0). */
#define OPTIC_EXPM1_LO -18.0f
#define OPTIC_EXPM1_HI 89.0f
#define OPTIC_EXPM1_TINY 0x1p-30f

/* log1p(x): u = 1 + x rounded, u = 2^e m split as for log, f = m - 1 (or x
 * itself when e = 0, so no bit of x is lost), plus the rounding error of u,
 * (x - (u - 1)) / u, for e != 0; |x| below LOG1P_TINY returns x. */
#define OPTIC_LOG1P_TINY 0x1p-30f

/* erf on three intervals of |x|, one Horner evaluation whose coefficients
 * are selected per lane (the shorter fits are padded with zeros):
 *  A: |x| < ERF_T1, erf(x) = x + x P(x^2), P(t) = a0 + ... + a6 t^6, relative
 *     error 1.4e-9 (0.024 of 2^-24) on t in [0, 1];
 *  B: |x| in [ERF_T1, ERF_T2), erf = Q(|x| - ERF_MID_B), degree 9, absolute
 *     error 1.0e-8;
 *  C: |x| in [ERF_T2, ERF_SAT), erf = Q(|x| - ERF_MID_C), degree 9, absolute
 *     error 2.3e-8;
 *  |x| >= ERF_SAT: +-1 (erf rounds to 1 from 3.9193 on).
 * A: a relative-error Remez fit of (erf(sqrt t)/sqrt t - 1) weighted by
 * sqrt t/erf(sqrt t); B and C: least-squares fits on Chebyshev nodes
 * (near-minimax); all with the coefficients rounded to float one at a time,
 * the later ones refitted (kernels/unary_minimax.py erf). */
#define OPTIC_ERF_T1 1.0f
#define OPTIC_ERF_T2 2.25f
#define OPTIC_ERF_SAT 3.92f
#define OPTIC_ERF_MID_B 1.625f
#define OPTIC_ERF_MID_C 3.085f
#define OPTIC_ERF_A0 0.128379166f
#define OPTIC_ERF_A1 -0.37612626f
#define OPTIC_ERF_A2 0.112835787f
#define OPTIC_ERF_A3 -0.0268533472f
#define OPTIC_ERF_A4 0.0051871622f
#define OPTIC_ERF_A5 -0.00079978531f
#define OPTIC_ERF_A6 7.80690389e-05f
#define OPTIC_ERF_A7 0.0f
#define OPTIC_ERF_A8 0.0f
#define OPTIC_ERF_A9 0.0f
#define OPTIC_ERF_B0 0.978443742f
#define OPTIC_ERF_B1 0.0804722458f
#define OPTIC_ERF_B2 -0.130767256f
#define OPTIC_ERF_B3 0.114841275f
#define OPTIC_ERF_B4 -0.0497275926f
#define OPTIC_ERF_B5 -0.00214421074f
#define OPTIC_ERF_B6 0.014495872f
#define OPTIC_ERF_B7 -0.00613027997f
#define OPTIC_ERF_B8 -0.000856032944f
#define OPTIC_ERF_B9 0.00127339049f
#define OPTIC_ERF_C0 0.999987185f
#define OPTIC_ERF_C1 8.30047502e-05f
#define OPTIC_ERF_C2 -0.000256749714f
#define OPTIC_ERF_C3 0.000499471091f
#define OPTIC_ERF_C4 -0.000679517048f
#define OPTIC_ERF_C5 0.000691629539f
#define OPTIC_ERF_C6 -0.000547344389f
#define OPTIC_ERF_C7 0.000314150122f
#define OPTIC_ERF_C8 -0.000100306097f
#define OPTIC_ERF_C9 8.12209328e-06f

/* log(1 + f) ~ f + f^2 (c2 + c3 f + ... + c10 f^8) for f = m - 1, m in
 * [sqrt(1/2), sqrt(2)); relative error 7.6e-9. SQRT_HALF_BITS is the bit
 * pattern of float(sqrt(1/2)): subtracting it from x's bits splits x into
 * 2^e * m with m in that interval. */
#define OPTIC_LOG_SQRT_HALF_BITS 0x3f3504f3
#define OPTIC_LOG_C2 -0.499999881f
#define OPTIC_LOG_C3 0.333333254f
#define OPTIC_LOG_C4 -0.250015974f
#define OPTIC_LOG_C5 0.20002088f
#define OPTIC_LOG_C6 -0.166087955f
#define OPTIC_LOG_C7 0.141792566f
#define OPTIC_LOG_C8 -0.132427201f
#define OPTIC_LOG_C9 0.129219383f
#define OPTIC_LOG_C10 -0.0764497817f

/* pow (binary family) works in double: log2|a| = e + log(m) log2e with
 * log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716, summed as the Taylor
 * series 2s (1 + s^2/3 + ... + s^14/15) (truncation 3e-14 relative); then
 * 2^t = 2^n 2^r, |r| <= 1/2, 2^r by its Taylor series to degree 10
 * (truncation 2.2e-13). Coefficients (ln2)^k / k! from 40-digit arithmetic. */
#define OPTIC_POW_LOG2E 1.4426950408889634074
#define OPTIC_POW_EXP2_C1 0.69314718055994530942
#define OPTIC_POW_EXP2_C2 0.24022650695910071233
#define OPTIC_POW_EXP2_C3 0.055504108664821579953
#define OPTIC_POW_EXP2_C4 0.009618129107628477162
#define OPTIC_POW_EXP2_C5 0.0013333558146428443423
#define OPTIC_POW_EXP2_C6 0.00015403530393381609954
#define OPTIC_POW_EXP2_C7 0.00001525273380405984028
#define OPTIC_POW_EXP2_C8 1.3215486790144309488e-6
#define OPTIC_POW_EXP2_C9 1.0178086009239699727e-7
#define OPTIC_POW_EXP2_C10 7.0549116208011233299e-9
/* |b log2|a|| beyond this over- or underflows float whatever the rounding. */
#define OPTIC_POW_T_LIMIT 200.0
/* 1.5 * 2^52: t + M - M rounds a double to an integer; the low bits of t + M
 * hold it. */
#define OPTIC_POW_ROUND_MAGIC 6755399441055744.0

#endif
