/* bf16 convolution on the bf16 GEMM (kernels/conv_bf16.h) against the naive
 * double reference (optic_ref_f64_conv) over the same bf16 operands widened
 * exactly, with f32 and bf16 results, on every bf16 kernel this machine can
 * run (AVX512_BF16, AMX-BF16), 1 and 3 slices. Sweep: channels 1, 15, 16,
 * 17, 31, 32, 33, 64 in and out, 1x1 and 3x3 windows, strides 1 and 2,
 * padding 0 and 1, batch 1 and 3, NHWC and NCHW, feature groups, depthwise,
 * dilations, window reversal, batch groups; for the direct rows, widths
 * around their 14-row tiles and 112-position chunks, wide padding.
 * Tolerance per element, M = the same convolution of |operands|, K = the
 * contraction length (input features per group x window):
 *   f32 result:  |got - ref| <= T = (K + 2) * 2^-24 * M + K * 2^-124
 *   bf16 result: |got - ref| <= T + 2^-8 * (|ref| + T)
 * (f32 summation of exact products in any order, flushed subnormal products;
 * then one rounding to bf16, at most half an ulp = 2^-8 relative).
 * The fallback that runs elsewhere (widen exactly, the f32 convolution) is
 * checked on the same cases under OPTIC_ISA=scalar, avx2 and avx512, set by
 * the test itself (setenv + optic_isa_reselect), where the runtime's bf16
 * kernel choice (optic_conv_bf16_kernel) must be NONE: AMX only uncapped.
 * A failure prints the case number; `kernels_blas_conv_bf16 sweep` reruns. */
#include <stdlib.h>

#include "kernels/conv_bf16.h"
#include "tests/kernels/kernel_test.h"

typedef struct conv_case {
  bool nchw;
  int64_t n, cin, cout, h, w, k, stride, pad, dil, fgc, bgc;
  bool rev;
} conv_case;

static int checked, ran[3];

static optic_conv_desc desc_of(const conv_case *c) {
  optic_conv_desc d;
  optic_conv_desc_init(&d);
  OT_EXPECT_OK(optic_conv_parse_dim_labels(c->nchw ? "bf01_oi01->bf01" : "b01f_01io->b01f", &d.dn));
  int64_t in[4], kd[4], ci = c->cin / c->fgc;
  if (c->nchw) {
    in[0] = c->n, in[1] = c->cin, in[2] = c->h, in[3] = c->w;
    kd[0] = c->cout, kd[1] = ci, kd[2] = c->k, kd[3] = c->k;
  } else {
    in[0] = c->n, in[1] = c->h, in[2] = c->w, in[3] = c->cin;
    kd[0] = c->k, kd[1] = c->k, kd[2] = ci, kd[3] = c->cout;
  }
  OT_EXPECT_OK(optic_shape_make(4, in, &d.input));
  OT_EXPECT_OK(optic_shape_make(4, kd, &d.kernel));
  for (int s = 0; s < 2; s++) {
    d.stride[s] = c->stride, d.pad_lo[s] = d.pad_hi[s] = c->pad;
    d.rhs_dilation[s] = c->dil, d.reverse[s] = c->rev;
  }
  d.feature_group_count = c->fgc, d.batch_group_count = c->bgc;
  return d;
}

/* bf16 operand, its exact widening and its magnitudes. */
static void random_bf16(kt_rng *r, size_t n, uint16_t *h, double *x, double *ax) {
  for (size_t i = 0; i < n; i++) {
    h[i] = optic_f32_to_bf16(kt_uniform(r, -2.0f, 2.0f));
    x[i] = optic_bf16_to_f32(h[i]);
    ax[i] = fabs(x[i]);
  }
}

static bool within(double got, double ref, double m, int64_t kc, bool bf16, double *worst) {
  double t = (double)(kc + 2) * 0x1p-24 * m + (double)kc * 0x1p-124;
  if (bf16) t += 0x1p-8 * (fabs(ref) + t);
  double e = fabs(got - ref);
  if (t > 0 && e / t > *worst) *worst = e / t;
  return e <= t;
}

static bool check_out(const char *how, int idx, const void *out, optic_dtype dt, const double *ref, const double *m,
                      size_t n, int64_t kc, double *worst) {
  for (size_t i = 0; i < n; i++) {
    double got =
        dt == OPTIC_F32 ? (double)((const float *)out)[i] : (double)optic_bf16_to_f32(((const uint16_t *)out)[i]);
    if (!within(got, ref[i], m[i], kc, dt == OPTIC_BF16, worst)) {
      OT_CHECK(false, "case %d (%s): out[%zu] = %.9g, reference %.12g (|terms| %.6g, K %lld)", idx, how, i, got, ref[i],
               m[i], (long long)kc);
      return false;
    }
  }
  return true;
}

typedef struct operands {
  uint16_t *in, *k;
  double *rin, *rk, *ref, *mag;
  float *fin, *fk;
  size_t nin, nk, nout;
  int64_t kc;
} operands;

/* One bf16 kernel, one result dtype, `slices` slices run one after another. */
static bool run_kernel(int idx, const optic_conv_desc *d, const operands *o, optic_bf16_kernel kern, optic_dtype dt,
                       int32_t slices, double *worst) {
  optic_conv_bf16_plan p;
  optic_status st = optic_conv_bf16_plan_make(d, dt, kern, slices, &p);
  if (!optic_dot_bf16_kernel_usable(kern)) {
    OT_CHECK(st == OPTIC_ERR_UNSUPPORTED, "case %d: unusable kernel %s planned: %s", idx,
             optic_dot_bf16_kernel_name(kern), optic_status_name(st));
    return true;
  }
  OT_CHECK(st == OPTIC_OK, "case %d: plan failed: %s", idx, optic_last_error());
  if (st != OPTIC_OK) return false;
  size_t es = optic_dtype_size(dt);
  kt_mem out = kt_mem_make(o->nout, es, 0), scratch = kt_mem_make(p.scratch_bytes + 64, 1, 0);
  memset(out.p, 0xff, o->nout * es); /* NaN in both dtypes: an unwritten element fails */
  for (int32_t t = 0; t < slices; t++) OT_EXPECT_OK(optic_conv_bf16_run(&p, o->in, o->k, out.p, scratch.p, t, slices));
  char how[96];
  snprintf(how, sizeof how, "%s, %s result, %d slices", optic_dot_bf16_kernel_name(kern), optic_dtype_name(dt), slices);
  bool ok = check_out(how, idx, out.p, dt, o->ref, o->mag, o->nout, o->kc, worst);
  OT_CHECK(kt_mem_guard_ok(&out) && kt_mem_guard_ok(&scratch), "case %d (%s): wrote past a buffer", idx, how);
  kt_mem_free(&out);
  kt_mem_free(&scratch);
  if (ok) ran[kern]++;
  return ok;
}

/* The fallback: widen exactly and run the f32 convolution under each ISA. */
static bool run_fallback(int idx, const optic_conv_desc *d, const operands *o, double *worst) {
  static const char *const isas[] = {"scalar", "avx2", "avx512"};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) {
    if (optic_isa_best() < (i == 0 ? OPTIC_ISA_SCALAR : i == 1 ? OPTIC_ISA_AVX2 : OPTIC_ISA_AVX512)) continue;
    setenv("OPTIC_ISA", isas[i], 1);
    optic_isa_reselect();
    optic_bf16_kernel k = optic_conv_bf16_kernel(), want = OPTIC_BF16_NONE;
    if (i == 2 && optic_dot_bf16_kernel_usable(OPTIC_BF16_AVX512)) want = OPTIC_BF16_AVX512; /* never AMX capped */
    OT_CHECK(k == want, "OPTIC_ISA=%s offers the %s kernel", isas[i], optic_dot_bf16_kernel_name(k));
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(d, OPTIC_CONV_FORWARD, 1, &p));
    float *out = malloc(o->nout * sizeof *out + 1), *scratch = malloc(p.scratch_bytes + 64);
    OT_EXPECT_OK(optic_conv_run_forward(&p, o->fin, o->fk, out, scratch, 0, 1));
    ok = check_out(isas[i], idx, out, OPTIC_F32, o->ref, o->mag, o->nout, o->kc, worst);
    free(out);
    free(scratch);
  }
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  return ok;
}

static bool run_case(int idx, const conv_case *c, double *worst) {
  optic_conv_desc d = desc_of(c);
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(&d, &os));
  kt_rng r = {0x5eedu + (uint64_t)idx};
  operands o = {.nin = kt_elements(&d.input), .nk = kt_elements(&d.kernel), .nout = kt_elements(&os)};
  o.kc = c->cin / c->fgc * c->k * c->k;
  o.in = malloc(o.nin * 2 + 2), o.k = malloc(o.nk * 2 + 2);
  o.rin = malloc(o.nin * 8 + 8), o.rk = malloc(o.nk * 8 + 8), o.ref = malloc(o.nout * 8 + 8);
  double *ain = malloc(o.nin * 8 + 8), *ak = malloc(o.nk * 8 + 8);
  o.mag = malloc(o.nout * 8 + 8), o.fin = malloc(o.nin * 4 + 4), o.fk = malloc(o.nk * 4 + 4);
  random_bf16(&r, o.nin, o.in, o.rin, ain);
  random_bf16(&r, o.nk, o.k, o.rk, ak);
  for (size_t i = 0; i < o.nin; i++) o.fin[i] = (float)o.rin[i];
  for (size_t i = 0; i < o.nk; i++) o.fk[i] = (float)o.rk[i];
  OT_EXPECT_OK(optic_ref_f64_conv(&d, o.rin, o.rk, o.ref));
  OT_EXPECT_OK(optic_ref_f64_conv(&d, ain, ak, o.mag));
  bool ok = true;
  for (int k = OPTIC_BF16_AVX512; k <= OPTIC_BF16_AMX && ok; k++) {
    for (int dt = 0; dt < 2 && ok; dt++) {
      ok = run_kernel(idx, &d, &o, (optic_bf16_kernel)k, dt ? OPTIC_BF16 : OPTIC_F32, 1 + 2 * dt, worst);
    }
  }
  if (ok) ok = run_fallback(idx, &d, &o, worst);
  free(o.in), free(o.k), free(o.rin), free(o.rk), free(o.ref), free(ain), free(ak), free(o.mag), free(o.fin),
      free(o.fk);
  checked++;
  return ok;
}

static const int64_t channels[] = {1, 15, 16, 17, 31, 32, 33, 64};

static void sweep(void) {
  double worst = 0;
  int idx = 0, failed = 0;
  for (int ci = 0; ci < 8; ci++) {
    for (int v = 0; v < 8; v++, idx++) { /* v: window, layout, batch */
      conv_case c = {.nchw = v & 2,
                     .n = v & 4 ? 3 : 1,
                     .cin = channels[ci],
                     .cout = channels[(ci + v) % 8],
                     .h = 7 + v % 3,
                     .w = 9 - v % 2,
                     .k = v & 1 ? 3 : 1,
                     .stride = 1 + (ci + v) % 2,
                     .pad = (v & 1) && ci % 2 == 0,
                     .dil = 1,
                     .fgc = 1,
                     .bgc = 1};
      if (!run_case(idx, &c, &worst)) failed++;
    }
  }
  static const conv_case special[] = {
      {false, 2, 32, 32, 10, 10, 3, 1, 1, 1, 2, 1, false}, /* two feature groups */
      {true, 2, 33, 66, 9, 8, 3, 2, 1, 1, 3, 1, false},    /* three groups, NCHW, stride 2 */
      {false, 1, 17, 17, 8, 8, 3, 1, 1, 1, 17, 1, false},  /* depthwise */
      {true, 3, 16, 32, 8, 8, 3, 1, 1, 1, 16, 1, false},   /* depthwise multiplier 2 */
      {false, 1, 16, 31, 12, 11, 3, 1, 2, 2, 1, 1, true},  /* rhs dilation, reversed window */
      {false, 4, 8, 16, 6, 6, 3, 1, 1, 1, 1, 2, false},    /* batch groups (a kernel gradient's shape) */
      {false, 1, 64, 64, 56, 56, 3, 1, 1, 1, 1, 1, false}, /* the ResNet 3x3 layer at batch 1 */
      /* direct rows (vdpbf16ps): widths around the 14-row tiles and the 112-position chunks */
      {false, 2, 16, 32, 3, 13, 3, 1, 1, 1, 1, 1, false},
      {false, 1, 32, 16, 4, 14, 3, 1, 1, 1, 1, 1, false},
      {false, 1, 16, 48, 3, 15, 3, 1, 0, 1, 1, 1, false},
      {false, 1, 2, 33, 5, 29, 3, 1, 1, 1, 1, 1, false},
      {false, 1, 16, 16, 3, 113, 3, 1, 1, 1, 1, 1, false},
      {false, 1, 16, 16, 2, 240, 3, 2, 1, 1, 1, 1, false},
      {false, 2, 18, 70, 9, 31, 3, 2, 2, 3, 1, 1, true}, /* stride 2, dilation 3, reversed */
      {false, 1, 64, 16, 5, 7, 3, 1, 3, 1, 1, 1, false}, /* padding wider than the window reaches */
      {false, 3, 32, 64, 6, 6, 3, 1, 1, 1, 2, 1, false}, /* two groups of 16 */
  };
  for (size_t i = 0; i < sizeof special / sizeof *special; i++, idx++) {
    if (!run_case(idx, &special[i], &worst)) failed++;
  }
  printf("bf16 conv: %d cases (%d failed), worst error / tolerance %.3g; avx512_bf16 ran %d, amx_bf16 ran %d\n",
         checked, failed, worst, ran[OPTIC_BF16_AVX512], ran[OPTIC_BF16_AMX]);
  if (failed) fprintf(stderr, "  reproduce: kernels_blas_conv_bf16 sweep\n");
  const optic_cpu_info *cpu = optic_cpu_info_get();
  if (OPTIC_CPU_HAS(cpu, AVX512BF16) && optic_isa_selected() == OPTIC_ISA_AVX512) {
    OT_CHECK(ran[OPTIC_BF16_AVX512] == 2 * checked, "the AVX512_BF16 kernel did not run every case");
  }
}

static void invalid_args(void) {
  conv_case c = {false, 1, 16, 16, 4, 4, 3, 1, 1, 1, 1, 1, false};
  optic_conv_desc d = desc_of(&c);
  optic_conv_bf16_plan p;
  OT_EXPECT_STATUS(optic_conv_bf16_plan_make(&d, OPTIC_F16, OPTIC_BF16_AVX512, 1, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_bf16_plan_make(NULL, OPTIC_F32, OPTIC_BF16_AVX512, 1, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_bf16_plan_make(&d, OPTIC_F32, OPTIC_BF16_NONE, 1, &p), OPTIC_ERR_UNSUPPORTED);
  if (!optic_dot_bf16_kernel_usable(OPTIC_BF16_AVX512)) return;
  OT_EXPECT_OK(optic_conv_bf16_plan_make(&d, OPTIC_F32, OPTIC_BF16_AVX512, 2, &p));
  uint16_t x[256] = {0};
  float y[256];
  void *scratch = malloc(p.scratch_bytes);
  OT_EXPECT_STATUS(optic_conv_bf16_run(&p, x, x, y, scratch, 2, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_bf16_run(&p, x, x, y, scratch, 0, 3), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_bf16_run(&p, NULL, x, y, scratch, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_bf16_run(NULL, x, x, y, scratch, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  free(scratch);
}

/* The runtime's choice: on vdpbf16ps only the direct rows' shapes with at
 * least 16 features in and out per group; AMX takes every suited shape;
 * nothing without a kernel. */
static void choice(void) {
  static const struct {
    conv_case c;
    bool on_avx512;
  } shapes[] = {
      {{false, 8, 64, 64, 56, 56, 3, 1, 1, 1, 1, 1, false}, true},  /* ResNet 3x3, NHWC */
      {{false, 8, 64, 256, 56, 56, 1, 1, 0, 1, 1, 1, false}, true}, /* ResNet 1x1 */
      {{true, 8, 64, 64, 56, 56, 3, 1, 1, 1, 1, 1, false}, false},  /* NCHW: features not contiguous */
      {{false, 1, 8, 64, 16, 16, 3, 1, 1, 1, 1, 1, false}, false},  /* 8 input features */
      {{false, 1, 17, 64, 16, 16, 3, 1, 1, 1, 1, 1, false}, false}, /* odd input features */
      {{false, 1, 64, 8, 16, 16, 3, 1, 1, 1, 1, 1, false}, false},  /* 8 output features */
  };
  optic_bf16_kernel k = optic_conv_bf16_kernel();
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    optic_conv_desc d = desc_of(&shapes[i].c);
    bool want = k == OPTIC_BF16_AMX || (k == OPTIC_BF16_AVX512 && shapes[i].on_avx512);
    bool got = optic_conv_bf16_chosen(&d, OPTIC_BF16, OPTIC_BF16, OPTIC_BF16);
    OT_CHECK(got == want, "shape %zu on %s: chosen %d, want %d", i, optic_dot_bf16_kernel_name(k), got, want);
    OT_CHECK(!optic_conv_bf16_chosen(&d, OPTIC_F32, OPTIC_BF16, OPTIC_F32), "shape %zu: chosen with an f32 operand", i);
  }
  const optic_cpu_info *cpu = optic_cpu_info_get();
  if (OPTIC_CPU_HAS(cpu, AVX512BF16) && optic_isa_selected() == OPTIC_ISA_AVX512) {
    OT_CHECK(k != OPTIC_BF16_NONE, "AVX512_BF16 here, yet no bf16 convolution kernel");
  }
}

static const ot_case cases[] = {
    {"sweep", sweep},
    {"invalid_args", invalid_args},
    {"choice", choice},
};

OT_MAIN(cases)
