/* Mixed-precision Adam/AdamW (optic_mixed_adam_bf16): bf16 parameters and
 * gradients, f32 master weights and state, against the double reference of
 * the formulas (optic_ref_adam) fed the same exactly widened gradients, for
 * 5 steps, over sizes 0, 1, 15, 16, 17, 1023, 1024 (the block), 1025, 4099
 * and misaligned starts, with guards after every buffer.
 * Tolerance, as the f32 optimizer tests (tests/kernels/test_optim.c): for the
 * master and every state element, |got - ref| <= 1e-6 * max(|ref|, floor),
 * floor = 0.25 * max(1, max |ref| of the buffer); the bf16 parameter must be
 * exactly the master rounded to nearest even (optic_f32_to_bf16), and the
 * gradient must not be written. Runs under every OPTIC_ISA the suite sets. */
#include "kernels/optim.h"
#include "tests/kernels/kernel_test.h"

static const struct {
  const char *name;
  optic_adam_params p;
} cfgs[] = {
    {"adam", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-3f}},
    {"adamw",
     {.lr = 0.01f,
      .beta1 = 0.9f,
      .beta2 = 0.999f,
      .eps = 1e-8f,
      .weight_decay = 0.1f,
      .decay = OPTIC_OPTIM_DECAY_DECOUPLED}},
    {"adamw amsgrad",
     {.lr = 0.01f,
      .beta1 = 0.8f,
      .beta2 = 0.99f,
      .eps = 1e-4f,
      .weight_decay = 0.05f,
      .decay = OPTIC_OPTIM_DECAY_DECOUPLED,
      .amsgrad = true}},
};

static double worst;

static bool close_all(const char *cfg, const char *what, size_t n, size_t off, int step, const float *got,
                      const double *ref) {
  double scale = 1;
  for (size_t i = 0; i < n; i++) scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
  for (size_t i = 0; i < n; i++) {
    double floor = 0.25 * scale, e = fabs((double)got[i] - ref[i]) / (fabs(ref[i]) > floor ? fabs(ref[i]) : floor);
    worst = e > worst ? e : worst;
    if (!(e <= 1e-6)) {
      OT_CHECK(false, "%s n=%zu offset=%zu step %d: %s[%zu] = %.9g, reference %.12g (scaled error %.3g)", cfg, n, off,
               step, what, i, (double)got[i], ref[i], e);
      return false;
    }
  }
  return true;
}

static void run_case(size_t c, size_t n, size_t off, uint64_t seed) {
  optic_adam_params p = cfgs[c].p;
  kt_rng r = {seed | 1};
  kt_mem param = kt_mem_make(n, 2, off), grad = kt_mem_make(n, 2, off + 1);
  kt_buf master = kt_buf_make(n, off), m = kt_buf_make(n, off), v = kt_buf_make(n, off), vmax = kt_buf_make(n, off);
  double *dm = malloc(n * sizeof(double) + 8), *dmo = malloc(n * sizeof(double) + 8);
  double *dv = malloc(n * sizeof(double) + 8), *dvx = malloc(n * sizeof(double) + 8);
  double *dg = malloc(n * sizeof(double) + 8);
  uint16_t *g = grad.p, *th = param.p;
  for (size_t i = 0; i < n; i++) {
    master.p[i] = kt_uniform(&r, -1.0f, 1.0f);
    m.p[i] = kt_uniform(&r, -0.1f, 0.1f);
    v.p[i] = vmax.p[i] = kt_uniform(&r, 0.0f, 0.1f);
    dmo[i] = (double)master.p[i], dm[i] = (double)m.p[i], dv[i] = (double)v.p[i], dvx[i] = (double)vmax.p[i];
    th[i] = optic_f32_to_bf16(master.p[i]);
  }
  bool ok = true;
  for (int step = 1; step <= 5 && ok; step++) {
    p.bias_correction1 = optic_optim_bias_correction(p.beta1, (uint64_t)step);
    p.bias_correction2 = optic_optim_bias_correction(p.beta2, (uint64_t)step);
    for (size_t i = 0; i < n; i++) {
      g[i] = optic_f32_to_bf16(kt_uniform(&r, -1.0f, 1.0f));
      dg[i] = (double)optic_bf16_to_f32(g[i]);
    }
    uint16_t g0 = n ? g[0] : 0;
    optic_mixed_adam_bf16(n, th, master.p, g, m.p, v.p, p.amsgrad ? vmax.p : NULL, &p);
    optic_ref_adam(n, dmo, dg, dm, dv, p.amsgrad ? dvx : NULL, &p);
    ok = close_all(cfgs[c].name, "master", n, off, step, master.p, dmo) &&
         close_all(cfgs[c].name, "m", n, off, step, m.p, dm) && close_all(cfgs[c].name, "v", n, off, step, v.p, dv) &&
         (!p.amsgrad || close_all(cfgs[c].name, "vmax", n, off, step, vmax.p, dvx));
    for (size_t i = 0; i < n && ok; i++) {
      if (th[i] != optic_f32_to_bf16(master.p[i])) {
        OT_CHECK(false, "%s n=%zu step %d: param[%zu] = 0x%04x, master %.9g rounds to 0x%04x", cfgs[c].name, n, step, i,
                 th[i], (double)master.p[i], optic_f32_to_bf16(master.p[i]));
        ok = false;
      }
    }
    OT_CHECK(n == 0 || g[0] == g0, "the gradient was written");
  }
  OT_CHECK(kt_mem_guard_ok(&param) && kt_mem_guard_ok(&grad) && kt_buf_guard_ok(&master) && kt_buf_guard_ok(&m) &&
               kt_buf_guard_ok(&v) && kt_buf_guard_ok(&vmax),
           "%s n=%zu offset=%zu: a guard changed", cfgs[c].name, n, off);
  free(dm), free(dmo), free(dv), free(dvx), free(dg);
  kt_mem_free(&param), kt_mem_free(&grad);
  kt_buf_free(&master), kt_buf_free(&m), kt_buf_free(&v), kt_buf_free(&vmax);
}

static void sweep(void) {
  static const size_t sizes[] = {0, 1, 15, 16, 17, 1023, 1024, 1025, 4099};
  uint64_t seed = 1;
  for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      for (size_t o = 0; o < 3; o++) run_case(c, sizes[s], o, seed++);
    }
  }
  printf("  mixed bf16 Adam (ISA %s): largest scaled error %.3g (tolerance 1e-6)\n",
         optic_isa_name(optic_isa_selected()), worst);
}

static const ot_case cases[] = {{"sweep", sweep}};

OT_MAIN(cases)
