/* Depthwise convolutions on the grouped loops (OPTIC_CONV_STRATEGY_GROUPED,
 * kernels/conv_grouped.h) and 3-D convolutions whose degenerate dims the
 * plan drops, planned automatically, against the naive double reference
 * optic_ref_f32_conv.
 *   NHWC (channels in lanes) and NCHW (pixels in lanes) depthwise, 1-D and
 *   2-D: channels 1, 15, 16, 17, 53; widths 1, 7, 8, 9, 17, 70; heights 1, 5, 11;
 *   padding 0, 1 and 4 (larger than the 3-tap window), asymmetric; stride 2;
 *   dilation 2; reversal; channel multiplier 2; batch 0, 1, 2; 1..3 slices.
 *   With avx512 selected the vector loops must run where they fit
 *   (plan.grouped_simd); with OPTIC_ISA=avx2 (ctest
 *   kernels_blas_conv_depthwise_isa_avx2) the portable loops run the same cases.
 *   NCHW depthwise kernel gradients (batch groups; channels 1..64, batch 1,
 *   3, 17, images 1x20 .. 28x28, padding 0..2, forward stride 2): the window
 *   dots must run where they fit (plan.grouped_dots) and match.
 *   Kernels with strided output features (01oi, OIHW) under NHWC and H,W,N,C
 *   data: the direct strategy on a per-slice kernel copy (plan
 *   direct_kernel_pack) where it fits, 1 and 2 slices.
 *   3-D: a depth-1 volume under a padded 3-deep window (NDHWC and NCDHW,
 *   dilated, reversed) plans as 2-D (plan.g.nsp) and matches the reference;
 *   a depth with two valid taps keeps its dim. The bf16 GEMM plan of the same
 *   shape (where a bf16 kernel runs here) matches the f32 reference of the
 *   bf16-rounded operands. The vector loops on bf16 operands read in place
 *   (optic_conv_run_forward_bf16) match that reference for every case they
 *   take, with an f32 result and with a bf16 one (plus half a bf16 ulp).
 * Tolerance (f32): |got - ref| <= 2e-5 * M + 1e-6 per element, M the
 * convolution of |input| and |kernel| (bounds the f32 accumulation error);
 * bf16 operands, f32 result: the same bound on the widened operands.
 * The output is pre-filled with NaN and followed by guard floats.
 * Reproduce: ctest --preset release -R kernels_blas_conv_depthwise */
#include <stdio.h>
#include <stdlib.h>

#include "core/half.h"
#include "kernels/conv.h"
#include "kernels/conv_bf16.h"
#include "tests/kernels/conv_test.h"

#define RTOL 2e-5
#define ATOL 1e-6

/* Reference and magnitude of d on in and k; returns the output size. */
static size_t reference(const optic_conv_desc *d, const float *in, const float *k, float **want, float **mag) {
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(d, &os));
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  float *ain = malloc((nin + 1) * sizeof(float)), *ak = malloc((nk + 1) * sizeof(float));
  *want = malloc((nout + 1) * sizeof(float)), *mag = malloc((nout + 1) * sizeof(float));
  for (size_t i = 0; i < nin; i++) ain[i] = fabsf(in[i]);
  for (size_t i = 0; i < nk; i++) ak[i] = fabsf(k[i]);
  OT_EXPECT_OK(optic_ref_f32_conv(d, in, k, *want));
  OT_EXPECT_OK(optic_ref_f32_conv(d, ain, ak, *mag));
  free(ain), free(ak);
  return nout;
}

static int compare(const float *got, const float *want, const float *mag, size_t n, const char *ctx, int32_t threads) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    double err = fabs((double)got[i] - (double)want[i]);
    if (!(err <= RTOL * mag[i] + ATOL) && bad++ < 3) {
      OT_CHECK(false, "%s: %d slices: [%zu] = %.9g, ref %.9g (|terms| %.3g)", ctx, threads, i, got[i], want[i], mag[i]);
    }
  }
  return bad;
}

/* Plans d automatically for `threads` slices, checks the strategy (want:
 * the strategy, or 0 for any; simd: want grouped_simd, -1 for any), runs it
 * as 1..threads slices; returns mismatches. */
static int check(const optic_conv_desc *d, int32_t threads, int32_t want, int simd, int32_t want_nsp, const char *ctx) {
  optic_shape os;
  if (optic_conv_infer_shape(d, &os) != OPTIC_OK) return 0; /* a window larger than the padded input */
  optic_conv_plan p;
  optic_status st = optic_conv_plan_make(d, OPTIC_CONV_FORWARD, threads, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan: %s", ctx, optic_last_error());
  if (st != OPTIC_OK) return 1;
  OT_CHECK(want == 0 || p.strategy == want, "%s: strategy %d, want %d", ctx, p.strategy, want);
  OT_CHECK(simd < 0 || p.grouped_simd == (simd == 1), "%s: grouped_simd %d, want %d", ctx, (int)p.grouped_simd, simd);
  OT_CHECK(want_nsp == 0 || p.g.nsp == want_nsp, "%s: planned %d spatial dims, want %d", ctx, p.g.nsp, want_nsp);
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_buf in = kt_buf_make(nin, 1), k = kt_buf_make(nk, 3), out = kt_buf_make(nout, 1);
  kt_rng rng = {(uint64_t)nin * 31 + nk * 7 + 1};
  kt_fill(&rng, in.p, nin, -1.0f, 1.0f, 0);
  kt_fill(&rng, k.p, nk, -1.0f, 1.0f, 0);
  float *want_v, *mag;
  reference(d, in.p, k.p, &want_v, &mag);
  void *scratch = p.scratch_bytes ? malloc(p.scratch_bytes) : NULL;
  int bad = 0;
  for (int32_t n = 1; n <= threads; n++) {
    for (size_t i = 0; i < nout; i++) out.p[i] = NAN;
    for (int32_t t = 0; t < n; t++) OT_EXPECT_OK(optic_conv_run_forward(&p, in.p, k.p, out.p, scratch, t, n));
    bad += compare(out.p, want_v, mag, nout, ctx, n);
  }
  OT_CHECK(kt_buf_guard_ok(&out), "%s: wrote past the output", ctx);
  kt_buf_free(&in), kt_buf_free(&k), kt_buf_free(&out);
  free(want_v), free(mag), free(scratch);
  return bad;
}

/* The vector loops on bf16 operands (optic_conv_run_forward_bf16), f32 and
 * bf16 results, as 1..threads slices, against the reference of the
 * bf16-rounded operands: the f32 bound, plus 2^-8 |ref| (half a bf16 ulp)
 * for a bf16 result. Returns mismatches. */
static int check_bf16(const optic_conv_desc *d, int32_t threads, const char *ctx) {
  optic_conv_plan p;
  OT_EXPECT_OK(optic_conv_plan_make(d, OPTIC_CONV_FORWARD, threads, &p));
  OT_CHECK(optic_conv_grouped_bf16_chosen(&p, OPTIC_BF16, OPTIC_BF16, OPTIC_BF16), "%s: bf16 in place not chosen", ctx);
  OT_CHECK(!optic_conv_grouped_bf16_chosen(&p, OPTIC_BF16, OPTIC_F32, OPTIC_F32), "%s: chosen for an f32 kernel", ctx);
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&p.result_shape);
  uint16_t *in = malloc(nin * 2 + 2), *k = malloc(nk * 2 + 2), *o16 = malloc(nout * 2 + 2);
  float *fin = malloc(nin * 4 + 4), *fk = malloc(nk * 4 + 4), *o32 = malloc(nout * 4 + 4);
  kt_rng rng = {(uint64_t)nin * 13 + nk};
  kt_fill(&rng, fin, nin, -1.0f, 1.0f, 0);
  kt_fill(&rng, fk, nk, -1.0f, 1.0f, 0);
  for (size_t i = 0; i < nin; i++) in[i] = optic_half_from_f32_bf16(fin[i]), fin[i] = optic_half_to_f32_bf16(in[i]);
  for (size_t i = 0; i < nk; i++) k[i] = optic_half_from_f32_bf16(fk[i]), fk[i] = optic_half_to_f32_bf16(k[i]);
  float *want, *mag;
  reference(d, fin, fk, &want, &mag);
  int bad = 0;
  for (int32_t n = 1; n <= threads; n++) {
    for (size_t i = 0; i < nout; i++) o32[i] = NAN, o16[i] = 0x7FC1;
    for (int32_t t = 0; t < n; t++) {
      OT_EXPECT_OK(optic_conv_run_forward_bf16(&p, in, k, o32, false, t, n));
      OT_EXPECT_OK(optic_conv_run_forward_bf16(&p, in, k, o16, true, t, n));
    }
    bad += compare(o32, want, mag, nout, ctx, n);
    for (size_t i = 0; i < nout; i++) {
      double got = optic_half_to_f32_bf16(o16[i]), err = fabs(got - (double)want[i]);
      if (!(err <= RTOL * mag[i] + ATOL + fabs((double)want[i]) / 256) && bad++ < 3)
        OT_CHECK(false, "%s: bf16 result, %d slices: [%zu] = %.9g, ref %.9g", ctx, n, i, got, want[i]);
    }
  }
  free(in), free(k), free(o16), free(fin), free(fk), free(o32), free(want), free(mag);
  return bad;
}

typedef struct dw_case {
  int64_t batch, c, h, w, mult, pad_lo, pad_hi, stride, dil;
  bool rev;
} dw_case;

/* The depthwise descriptor of case x in NHWC (nchw false) or NCHW, 2-D (or
 * 1-D when h is 0): a 3x3 (3) window. */
static optic_conv_desc dw_desc(const dw_case *x, bool nchw) {
  int64_t o = x->c * x->mult;
  optic_conv_desc d;
  if (x->h == 0) {
    d = nchw ? kt_conv_desc("bf0_oi0->bf0", 3, (int64_t[]){x->batch, x->c, x->w}, (int64_t[]){o, 1, 3})
             : kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){x->batch, x->w, x->c}, (int64_t[]){3, 1, o});
  } else if (nchw) {
    d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){x->batch, x->c, x->h, x->w}, (int64_t[]){o, 1, 3, 3});
  } else {
    d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){x->batch, x->h, x->w, x->c}, (int64_t[]){3, 3, 1, o});
  }
  d.feature_group_count = x->c;
  for (int32_t s = 0; s < d.dn.nspatial; s++) {
    d.pad_lo[s] = x->pad_lo, d.pad_hi[s] = x->pad_hi, d.stride[s] = x->stride, d.rhs_dilation[s] = x->dil;
    d.reverse[s] = x->rev;
  }
  return d;
}

static void depthwise_sweep(void) {
  const bool avx512 = optic_isa_selected() == OPTIC_ISA_AVX512;
  const int64_t chans[] = {1, 15, 16, 17, 53}, widths[] = {1, 7, 8, 9, 17, 70},
                pads[][2] = {{1, 1}, {0, 0}, {4, 4}, {2, 0}};
  int cases = 0, bad = 0, simd_cases = 0;
  for (size_t ci = 0; ci < 5; ci++) {
    for (size_t wi = 0; wi < 6; wi++) {
      int i = (int)(ci * 6 + wi);
      int64_t h = i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : i % 2 ? 5 : 11; /* 0: 1-D */
      int64_t stride = 1 + (i % 7 == 2 || i % 7 == 5), dil = 1 + (i % 4 == 3), mult = 1 + (i % 5 == 4);
      dw_case x = {1 + i % 2, chans[ci], h, widths[wi], mult, pads[i % 4][0], pads[i % 4][1], stride, dil, i % 6 == 1};
      for (int layout = 0; layout < 2; layout++) {
        optic_conv_desc d = dw_desc(&x, layout == 1);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "%s depthwise B%lld C%lld x%lld H%lld W%lld pad%lld_%lld st%lld dil%lld%s",
                 layout ? "NCHW" : "NHWC", (long long)x.batch, (long long)x.c, (long long)x.mult, (long long)x.h,
                 (long long)x.w, (long long)x.pad_lo, (long long)x.pad_hi, (long long)x.stride, (long long)x.dil,
                 x.rev ? " rev" : "");
        /* NHWC: the channel loops whenever there are 8 groups or more; NCHW:
         * the row loops need window stride 1 and 8 outputs along the row */
        optic_conv_plan p;
        bool planned = optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p) == OPTIC_OK;
        int simd = -1;
        if (planned && p.strategy == OPTIC_CONV_STRATEGY_GROUPED) {
          bool fits = layout == 0 ? x.mult == 1 : p.grouped_rows && x.stride == 1;
          simd = avx512 && fits ? 1 : 0;
          simd_cases += simd == 1;
        }
        OT_CHECK(!planned || layout == 1 || x.c < 8 || p.strategy == OPTIC_CONV_STRATEGY_GROUPED,
                 "%s: strategy %d, want grouped", ctx, planned ? p.strategy : -1);
        bad += check(&d, 3, 0, simd, 0, ctx);
        if (simd == 1) bad += check_bf16(&d, 2, ctx);
        cases++;
      }
    }
  }
  /* batch 0 and 1x1 images */
  dw_case z = {0, 17, 5, 9, 1, 1, 1, 1, 1, false};
  for (int layout = 0; layout < 2; layout++) {
    optic_conv_desc d = dw_desc(&z, layout == 1);
    bad += check(&d, 2, 0, -1, 0, layout ? "NCHW batch 0" : "NHWC batch 0");
  }
  dw_case one = {1, 53, 1, 1, 1, 1, 1, 1, 1, false};
  optic_conv_desc d1 = dw_desc(&one, false);
  bad += check(&d1, 2, OPTIC_CONV_STRATEGY_GROUPED, avx512 ? 1 : 0, 0, "NHWC depthwise 1x1 image");
  /* the real module's shapes: 53 channels of 64x64, 256 of 56x56 NCHW */
  dw_case m1 = {2, 53, 64, 64, 1, 1, 1, 1, 1, false}, m2 = {1, 256, 56, 56, 1, 1, 1, 1, 1, false};
  optic_conv_desc dm1 = dw_desc(&m1, false), dm2 = dw_desc(&m2, true);
  bad += check(&dm1, 2, OPTIC_CONV_STRATEGY_GROUPED, avx512 ? 1 : 0, 0, "NHWC 2x64x64x53");
  bad += check(&dm2, 2, OPTIC_CONV_STRATEGY_GROUPED, avx512 ? 1 : 0, 0, "NCHW 1x256x56x56");
  if (avx512) bad += check_bf16(&dm1, 2, "bf16 NHWC 2x64x64x53") + check_bf16(&dm2, 2, "bf16 NCHW 1x256x56x56");
  printf("%d depthwise cases (%d on the vector loops), %d mismatches\n", cases, simd_cases, bad);
  OT_CHECK(!avx512 || simd_cases >= 25, "only %d cases ran the vector loops", simd_cases);
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

/* The NCHW depthwise kernel gradient as graph/autodiff_conv.c builds it
 * (fb01_io01->bf01, batch groups = channels; the window is the output
 * gradient image, the output the kernel): the window dots where they fit
 * (avx512, >= 16 window taps along the row, rhs dilation 1), else the
 * portable strided loops. Images h x w, forward window kh x kw, padding
 * pad, forward stride st (the gradient's rhs dilation). */
static void depthwise_kernel_gradients(void) {
  const bool avx512 = optic_isa_selected() == OPTIC_ISA_AVX512;
  const int64_t ns[] = {1, 3, 17}, cs[] = {1, 8, 17, 64};
  const int64_t imgs[][2] = {{5, 5}, {6, 17}, {28, 28}, {1, 20}, {9, 33}};
  int bad = 0, dots = 0, cases = 0;
  for (int i = 0; i < 30; i++) {
    int64_t n = ns[i % 3], c = cs[i % 4], h = imgs[i % 5][0], w = imgs[i % 5][1];
    int64_t kh = h == 1 ? 1 : 3, kw = i % 6 == 5 ? 1 : 3, pad = i % 7 == 3 ? 0 : i % 7 == 4 ? 2 : 1;
    int64_t st = i % 8 == 6 ? 2 : 1;
    int64_t oh = (h + 2 * pad - kh) / st + 1, ow = (w + 2 * pad - kw) / st + 1; /* the forward output */
    if (oh < 1 || ow < 1) continue;
    optic_conv_desc d = kt_conv_desc("fb01_io01->bf01", 4, (int64_t[]){n, c, h, w}, (int64_t[]){n, c, oh, ow});
    d.batch_group_count = c;
    int64_t in[2] = {h, w}, win[2] = {oh, ow}, kk[2] = {kh, kw};
    for (int s = 0; s < 2; s++) {
      d.pad_lo[s] = pad, d.rhs_dilation[s] = st;
      d.pad_hi[s] = kk[s] - 1 + (win[s] - 1) * st + 1 - in[s] - pad; /* so the output is the kh x kw kernel */
    }
    char ctx[160];
    snprintf(ctx, sizeof ctx, "NCHW depthwise kgrad N%lld C%lld %lldx%lld k%lldx%lld pad%lld st%lld", (long long)n,
             (long long)c, (long long)h, (long long)w, (long long)kh, (long long)kw, (long long)pad, (long long)st);
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p));
    bool want_dots = avx512 && p.strategy == OPTIC_CONV_STRATEGY_GROUPED && ow >= 16 && st == 1;
    OT_CHECK(p.grouped_dots == want_dots, "%s: grouped_dots %d, want %d (strategy %d)", ctx, (int)p.grouped_dots,
             (int)want_dots, p.strategy);
    dots += p.grouped_dots;
    bad += check(&d, 3, 0, -1, 0, ctx);
    cases++;
  }
  printf("%d kernel-gradient cases (%d on the window dots), %d mismatches\n", cases, dots, bad);
  OT_CHECK(!avx512 || dots >= 6, "only %d cases ran the window dots", dots);
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

/* Kernels whose output features are strided (01oi, as in XLA's
 * isolated_convolution module, and OIHW under NHWC data): the direct
 * strategy runs them on a per-slice copy of the kernel (plan
 * direct_kernel_pack) where it would run the contiguous layout, against the
 * reference; data in NHWC and in the H,W,N,C order of that module. */
static void direct_strided_kernels(void) {
  const bool direct = optic_isa_selected() == OPTIC_ISA_AVX512 || optic_isa_selected() == OPTIC_ISA_AVX2;
  const int64_t cins[] = {2, 16, 17, 33}, couts[] = {16, 17, 32};
  int bad = 0, packed = 0;
  for (int i = 0; i < 12; i++) {
    int64_t ci = cins[i % 4], co = couts[i % 3], n = 2 + 2 * (i % 2), h = 15 + i % 3, w = 17 + i % 4;
    bool hwnc = i % 3 == 1, oihw = i % 4 == 2;
    optic_conv_desc d = hwnc ? kt_conv_desc("01bf_01oi->01bf", 4, (int64_t[]){h, w, n, ci}, (int64_t[]){3, 3, co, ci})
                        : oihw
                            ? kt_conv_desc("b01f_oi01->b01f", 4, (int64_t[]){n, h, w, ci}, (int64_t[]){co, ci, 3, 3})
                            : kt_conv_desc("b01f_01oi->b01f", 4, (int64_t[]){n, h, w, ci}, (int64_t[]){3, 3, co, ci});
    for (int s = 0; s < 2; s++) {
      d.pad_lo[s] = d.pad_hi[s] = i % 5 == 3 ? 0 : 1;
      d.stride[s] = i % 6 == 4 ? 2 : 1;
      d.rhs_dilation[s] = i % 7 == 5 ? 2 : 1;
    }
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s N%lld %lldx%lld C%lld->%lld",
             hwnc   ? "HWNC/01oi"
             : oihw ? "NHWC/OIHW"
                    : "NHWC/01oi",
             (long long)n, (long long)h, (long long)w, (long long)ci, (long long)co);
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 2, &p));
    double kernel = (double)(9 * ci * co), input = (double)p.positions * (double)ci;
    bool want = direct && 2 * kernel <= input;
    OT_CHECK(p.direct_kernel_pack == want && (!want || p.strategy == OPTIC_CONV_STRATEGY_DIRECT),
             "%s: direct_kernel_pack %d (strategy %d), want %d", ctx, (int)p.direct_kernel_pack, p.strategy, (int)want);
    packed += p.direct_kernel_pack;
    bad += check(&d, 2, 0, -1, 0, ctx);
  }
  printf("%d of 12 on the direct strategy with a kernel copy, %d mismatches\n", packed, bad);
  OT_CHECK(!direct || packed >= 4, "only %d cases copied the kernel", packed);
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

/* A 3-D convolution of volumes of depth `depth` (NDHWC, or NCDHW), window
 * 3x3x3 with depth padding dpad_lo/dpad_hi and depth dilation ddil. */
static optic_conv_desc conv3d_desc(bool ncdhw, int64_t depth, int64_t dpad_lo, int64_t dpad_hi, int64_t ddil,
                                   bool rev) {
  optic_conv_desc d =
      ncdhw ? kt_conv_desc("bf012_oi012->bf012", 5, (int64_t[]){2, 3, depth, 9, 7}, (int64_t[]){5, 3, 3, 3, 3})
            : kt_conv_desc("b012f_012io->b012f", 5, (int64_t[]){2, depth, 9, 7, 3}, (int64_t[]){3, 3, 3, 3, 5});
  for (int32_t s = 0; s < 3; s++) d.pad_lo[s] = d.pad_hi[s] = 1;
  d.pad_lo[0] = dpad_lo, d.pad_hi[0] = dpad_hi, d.rhs_dilation[0] = ddil, d.reverse[0] = rev;
  return d;
}

static void conv3d_degenerate(void) {
  int bad = 0;
  for (int layout = 0; layout < 2; layout++) {
    bool n = layout == 1;
    const char *l = n ? "NCDHW" : "NDHWC";
    char ctx[96];
    optic_conv_desc d = conv3d_desc(n, 1, 1, 1, 1, false);
    snprintf(ctx, sizeof ctx, "%s depth 1, pad 1", l);
    bad += check(&d, 3, 0, -1, 2, ctx);
    d = conv3d_desc(n, 1, 1, 1, 1, true);
    snprintf(ctx, sizeof ctx, "%s depth 1, pad 1, reversed", l);
    bad += check(&d, 2, 0, -1, 2, ctx);
    d = conv3d_desc(n, 1, 2, 2, 2, false); /* taps at -2, 0, 2: the middle one reads */
    snprintf(ctx, sizeof ctx, "%s depth 1, dilation 2, pad 2", l);
    bad += check(&d, 2, 0, -1, 2, ctx);
    d = conv3d_desc(n, 1, 0, 2, 1, true); /* the first (reversed: last) tap reads */
    snprintf(ctx, sizeof ctx, "%s depth 1, pad 0_2, reversed", l);
    bad += check(&d, 2, 0, -1, 2, ctx);
    d = conv3d_desc(n, 2, 1, 0, 1, false); /* one output depth, two valid taps: kept */
    snprintf(ctx, sizeof ctx, "%s depth 2, pad 1_0", l);
    bad += check(&d, 2, 0, -1, 3, ctx);
    d = conv3d_desc(n, 3, 1, 1, 1, false); /* three output depths: kept */
    snprintf(ctx, sizeof ctx, "%s depth 3, pad 1", l);
    bad += check(&d, 2, 0, -1, 3, ctx);
  }
  /* the real module: f32[2,1,84,84,3] x [3,3,3,3,32], pad 1 */
  optic_conv_desc m = kt_conv_desc("b012f_012io->b012f", 5, (int64_t[]){2, 1, 84, 84, 3}, (int64_t[]){3, 3, 3, 3, 32});
  for (int32_t s = 0; s < 3; s++) m.pad_lo[s] = m.pad_hi[s] = 1;
  bad += check(&m, 2, 0, -1, 2, "conv3d 2x1x84x84x3 -> 32");
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

/* The bf16 GEMM plan over the dropped geometry (it reads the f32 plan's
 * offsets): bf16 operands, f32 result, against the f32 reference of the
 * widened operands. */
static void conv3d_degenerate_bf16(void) {
  optic_bf16_kernel kernels[] = {OPTIC_BF16_AVX512, OPTIC_BF16_AMX};
  int ran = 0, bad = 0;
  for (int ki = 0; ki < 2; ki++) {
    if (!optic_dot_bf16_kernel_usable(kernels[ki])) continue;
    for (int layout = 0; layout < 2; layout++) {
      optic_conv_desc d = conv3d_desc(layout == 1, 1, 1, 1, 1, layout == 1);
      optic_conv_bf16_plan p;
      OT_EXPECT_OK(optic_conv_bf16_plan_make(&d, OPTIC_F32, kernels[ki], 2, &p));
      size_t nin = kt_elements(&d.input), nk = kt_elements(&d.kernel), nout = kt_elements(&p.result_shape);
      uint16_t *in = malloc(nin * 2), *k = malloc(nk * 2);
      float *fin = malloc(nin * 4), *fk = malloc(nk * 4), *out = malloc(nout * 4);
      kt_rng rng = {77 + (uint64_t)layout};
      kt_fill(&rng, fin, nin, -1.0f, 1.0f, 0);
      kt_fill(&rng, fk, nk, -1.0f, 1.0f, 0);
      for (size_t i = 0; i < nin; i++) in[i] = optic_half_from_f32_bf16(fin[i]), fin[i] = optic_half_to_f32_bf16(in[i]);
      for (size_t i = 0; i < nk; i++) k[i] = optic_half_from_f32_bf16(fk[i]), fk[i] = optic_half_to_f32_bf16(k[i]);
      float *want, *mag;
      reference(&d, fin, fk, &want, &mag);
      void *scratch = malloc(p.scratch_bytes ? p.scratch_bytes : 1);
      for (size_t i = 0; i < nout; i++) out[i] = NAN;
      for (int32_t t = 0; t < 2; t++) OT_EXPECT_OK(optic_conv_bf16_run(&p, in, k, out, scratch, t, 2));
      bad += compare(out, want, mag, nout, layout ? "bf16 NCDHW depth 1" : "bf16 NDHWC depth 1", 2);
      ran++;
      free(in), free(k), free(fin), free(fk), free(out), free(want), free(mag), free(scratch);
    }
  }
  printf("%d bf16 plans run\n", ran);
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

static const ot_case tcases[] = {
    {"depthwise_sweep", depthwise_sweep},
    {"depthwise_kernel_gradients", depthwise_kernel_gradients},
    {"direct_strided_kernels", direct_strided_kernels},
    {"conv3d_degenerate", conv3d_degenerate},
    {"conv3d_degenerate_bf16", conv3d_degenerate_bf16},
};
OT_MAIN(tcases)
