/* The window-tap loops (OPTIC_CONV_STRATEGY_TAPS, kernels/conv_taps.h) for
 * convolutions whose window is larger than their output grid, chosen by the
 * automatic plan, against the naive double reference optic_ref_f32_conv:
 * kernel gradients written as forward convolutions (f01b_i01o->01bf and the
 * 1-D f0b_i0o->0bf, as autodiff emits them) and image-sized NHWC windows,
 * sweeping batch (1, 3, 16), input features (1, 2, 5), output features
 * around the 16-lane vector (1, 15, 16, 17, 33), images 4..9 wide, padding
 * (0, 1, 2, negative, asymmetric), rhs dilation (the forward stride),
 * reversal, 1..3 slices. Tolerance: |got - ref| <= 2e-5 * M + 1e-6 per
 * element, M the convolution of |input| and |kernel| (bounds the f32
 * accumulation error). The output is pre-filled with NaN and followed by
 * guard floats. The loops run on avx512 and avx2 (ctest
 * kernels_blas_conv_taps_isa_avx2 runs the AVX2 ones on an AVX-512 host);
 * with OPTIC_ISA=scalar the automatic plan must not pick the strategy, and
 * the same cases check the fallback (ctest kernels_blas_conv_taps_isa_scalar). Reproduce: ctest --preset release -R kernels_blas_conv_taps */
#include "kernels/conv.h"
#include "tests/kernels/conv_test.h"

#define RTOL 2e-5
#define ATOL 1e-6

/* Runs d as planned automatically, as `threads` slices; returns mismatches. */
static int check(const optic_conv_desc *d, int32_t threads, bool want_taps, const char *ctx) {
  optic_shape os;
  if (optic_conv_infer_shape(d, &os) != OPTIC_OK) return 0; /* the sweep skips empty windows */
  optic_conv_plan p;
  optic_status st = optic_conv_plan_make(d, OPTIC_CONV_FORWARD, threads, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan: %s", ctx, optic_last_error());
  if (st != OPTIC_OK) return 1;
  OT_CHECK((p.strategy == OPTIC_CONV_STRATEGY_TAPS) == want_taps, "%s: strategy %d, want taps %d", ctx, p.strategy,
           (int)want_taps);
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_buf in = kt_buf_make(nin, 1), k = kt_buf_make(nk, 1), out = kt_buf_make(nout, 1);
  kt_rng rng = {(uint64_t)nin * 31 + nk};
  kt_fill(&rng, in.p, nin, -1.0f, 1.0f, 0);
  kt_fill(&rng, k.p, nk, -1.0f, 1.0f, 0);
  for (size_t i = 0; i < nout; i++) out.p[i] = NAN;
  float *want = malloc((nout + 1) * sizeof(float)), *mag = malloc((nout + 1) * sizeof(float));
  float *ain = malloc((nin + 1) * sizeof(float)), *ak = malloc((nk + 1) * sizeof(float));
  void *scratch = p.scratch_bytes ? malloc(p.scratch_bytes) : NULL;
  for (size_t i = 0; i < nin; i++) ain[i] = fabsf(in.p[i]);
  for (size_t i = 0; i < nk; i++) ak[i] = fabsf(k.p[i]);
  OT_EXPECT_OK(optic_ref_f32_conv(d, in.p, k.p, want));
  OT_EXPECT_OK(optic_ref_f32_conv(d, ain, ak, mag));
  for (int32_t t = 0; t < threads; t++) OT_EXPECT_OK(optic_conv_run_forward(&p, in.p, k.p, out.p, scratch, t, threads));
  int bad = 0;
  for (size_t i = 0; i < nout; i++) {
    double err = fabs((double)out.p[i] - (double)want[i]);
    if (!(err <= RTOL * mag[i] + ATOL) && bad++ < 3) {
      OT_CHECK(false, "%s: %d slices: [%zu] = %.9g, ref %.9g (|terms| %.3g)", ctx, threads, i, out.p[i], want[i],
               mag[i]);
    }
  }
  OT_CHECK(kt_buf_guard_ok(&out), "%s: wrote past the output", ctx);
  kt_buf_free(&in), kt_buf_free(&k), kt_buf_free(&out);
  free(want), free(mag), free(ain), free(ak), free(scratch);
  return bad;
}

static const int64_t batches[] = {1, 3, 16}, cins[] = {1, 2, 5}, couts[] = {1, 15, 16, 17, 33};
static const int64_t pads[][2] = {{1, 1}, {0, 0}, {2, 2}, {-1, 0}, {2, 0}, {1, 3}};

/* The kernel gradient of a forward NHWC conv (image H x W, window kh x kw,
 * stride st, padding pad): lhs is the image as f01b, rhs the output
 * gradient as i01o (window = the forward output), output the kernel. */
static void kernel_gradients(void) {
  bool loops = optic_isa_selected() == OPTIC_ISA_AVX512 || optic_isa_selected() == OPTIC_ISA_AVX2;
  int cases = 0, bad = 0, i = 0;
  for (size_t b = 0; b < 3; b++) {
    for (size_t ci = 0; ci < 3; ci++) {
      for (size_t co = 0; co < 5; co++, i++) {
        int64_t B = batches[b], C = cins[ci], O = couts[co], H = 4 + i % 6, W = 9 - i % 5, st = 1 + i % 2;
        const int64_t *pd = pads[i % 6];
        int64_t kh = 3, kw = i % 3 == 0 ? 1 : 3;
        int64_t oh = (H + pd[0] + pd[1] - kh) / st + 1, ow = (W + pd[0] + pd[1] - kw) / st + 1;
        if (oh < 1 || ow < 1) continue;
        optic_conv_desc d = kt_conv_desc("f01b_i01o->01bf", 4, (int64_t[]){B, H, W, C}, (int64_t[]){B, oh, ow, O});
        for (int s = 0; s < 2; s++) {
          d.pad_lo[s] = pd[0];
          d.rhs_dilation[s] = st;
          /* the kernel-sized output: pad_hi so that (padded - dilated window) + 1 = k */
          int64_t in = s == 0 ? H : W, win = s == 0 ? oh : ow, kk = s == 0 ? kh : kw;
          d.pad_hi[s] = kk - 1 + (win - 1) * st + 1 - in - pd[0];
          d.reverse[s] = i % 7 == 3;
        }
        char ctx[200];
        snprintf(ctx, sizeof ctx, "kgrad B%lld C%lld O%lld %lldx%lld k%lldx%lld st%lld pad%lld_%lld%s", (long long)B,
                 (long long)C, (long long)O, (long long)H, (long long)W, (long long)kh, (long long)kw, (long long)st,
                 (long long)pd[0], (long long)pd[1], d.reverse[0] ? " rev" : "");
        int64_t taps = oh * ow, positions = C * kh * kw;
        bool taps_shape = taps >= 16 && positions <= taps && positions <= 64;
        for (int32_t t = 1; t <= 3; t++) bad += check(&d, t, loops && taps_shape, ctx);
        cases += taps_shape;
      }
    }
  }
  /* 1-D, and an image-sized NHWC window (one output position) */
  optic_conv_desc d1 = kt_conv_desc("f0b_i0o->0bf", 3, (int64_t[]){4, 37, 2}, (int64_t[]){4, 35, 17});
  bad += check(&d1, 2, loops, "kgrad 1-D");
  /* (one input feature: the direct loops, which take wider ones, decline it) */
  optic_conv_desc d2 = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 8, 8, 1}, (int64_t[]){8, 8, 1, 33});
  bad += check(&d2, 2, loops, "nhwc image-sized window");
  d2.pad_lo[0] = d2.pad_hi[0] = 1;
  bad += check(&d2, 3, loops, "nhwc image-sized window, padded rows");
  /* not the shape: a 3x3 forward conv keeps its strategy */
  optic_conv_desc d3 = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 8, 8, 3}, (int64_t[]){3, 3, 3, 16});
  bad += check(&d3, 1, false, "forward 3x3");
  printf("%d kernel-gradient shapes, %d mismatches\n", cases, bad);
  OT_CHECK(cases >= 20, "only %d cases had the taps shape", cases);
  OT_CHECK(bad == 0, "%d mismatches", bad);
}

static const ot_case tcases[] = {
    {"kernel_gradients", kernel_gradients},
};
OT_MAIN(tcases)
