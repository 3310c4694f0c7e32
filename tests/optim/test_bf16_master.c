/* bf16 parameters and gradients with f32 master weights in the optimizer
 * object (optic_optim_hparams.bf16_master): Adam, AdamW and AdamW with
 * AMSGrad, PyTorch convention, over tensors of 1, 37, 65 and 65613 elements
 * (the last spans two work blocks), 5 steps of random bf16 gradients,
 * against the double reference of the formulas (optic_ref_adam) run on the
 * exactly widened bf16 parameters and gradients. Tolerance, as the f32
 * optimizer tests: |master - ref| <= 1e-6 * max(|ref|, floor), floor =
 * 0.25 * max(1, max |ref| of the tensor), for the master and every state
 * element; each bf16 parameter must be exactly its master rounded to nearest
 * even. Also: 1 and 2 threads give the same bits; the master survives a
 * state export/import (the next step matches bit for bit); wrong dtypes,
 * bf16_master on SGD, and clipping are refused. */
#include <stdlib.h>
#include <string.h>

#include "kernels/optim.h"
#include "tests/optim/optim_test_util.h"

#define NT 4
static const int64_t sizes[NT] = {1, 37, 65, 65536 + 77};
static double worst;

typedef struct model {
  optic_shape shapes[NT];
  uint16_t *p[NT], *g[NT];
  optic_tensor tp[NT], tg[NT];
  double *rp[NT], *rm[NT], *rv[NT], *rx[NT];
} model;

static void model_make(model *m, kt_rng *r) {
  for (int i = 0; i < NT; i++) {
    size_t n = (size_t)sizes[i];
    optic_shape_make(1, &sizes[i], &m->shapes[i]);
    m->p[i] = malloc(n * 2), m->g[i] = malloc(n * 2);
    m->rp[i] = malloc(n * 8), m->rm[i] = calloc(n, 8), m->rv[i] = calloc(n, 8), m->rx[i] = calloc(n, 8);
    for (size_t e = 0; e < n; e++) {
      m->p[i][e] = optic_f32_to_bf16(kt_uniform(r, -1.0f, 1.0f));
      m->rp[i][e] = (double)optic_bf16_to_f32(m->p[i][e]);
    }
    optic_tensor_make(OPTIC_BF16, &m->shapes[i], m->p[i], &m->tp[i]);
    optic_tensor_make(OPTIC_BF16, &m->shapes[i], m->g[i], &m->tg[i]);
  }
}

static void model_free(model *m) {
  for (int i = 0; i < NT; i++)
    free(m->p[i]), free(m->g[i]), free(m->rp[i]), free(m->rm[i]), free(m->rv[i]), free(m->rx[i]);
}

static optic_optim_t *make_opt(const optic_optim_hparams *hp, const model *m, int threads) {
  optic_optim_options o = optic_optim_options_default();
  o.threads = threads;
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  OT_EXPECT_OK(optic_optim_add_group(opt, hp, NT, m->shapes, NULL));
  return opt;
}

static const float *slot(const optic_optim_state *s, int tensor, const char *name) {
  char want[96];
  snprintf(want, sizeof want, "group.0/tensor.%d/%s", tensor, name);
  for (size_t i = 0; i < s->tensor_count; i++) {
    if (strcmp(s->tensors[i].name, want) == 0) return s->tensors[i].tensor.data;
  }
  OT_CHECK(false, "state has no %s", want);
  return NULL;
}

static bool close_all(const char *cfg, const char *what, int tensor, int step, const float *got, const double *ref) {
  size_t n = (size_t)sizes[tensor];
  double scale = 1;
  for (size_t i = 0; i < n; i++) scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
  for (size_t i = 0; i < n; i++) {
    double fl = 0.25 * scale, e = fabs((double)got[i] - ref[i]) / (fabs(ref[i]) > fl ? fabs(ref[i]) : fl);
    worst = e > worst ? e : worst;
    if (!(e <= 1e-6)) {
      OT_CHECK(false, "%s tensor %d (n=%zu) step %d: %s[%zu] = %.9g, reference %.12g (scaled error %.3g)", cfg, tensor,
               n, step, what, i, (double)got[i], ref[i], e);
      return false;
    }
  }
  return true;
}

/* The reference's kernel parameters for step t, as the PyTorch convention
 * resolves them (docs/optim.md). */
static optic_adam_params ref_params(const optic_optim_hparams *hp, uint64_t t) {
  optic_adam_params p = {
      .lr = (float)hp->lr,
      .beta1 = (float)hp->beta1,
      .beta2 = (float)hp->beta2,
      .eps = (float)hp->eps,
      .weight_decay = (float)hp->weight_decay,
      .decay = hp->kind == OPTIC_OPTIM_KIND_ADAMW ? OPTIC_OPTIM_DECAY_DECOUPLED : OPTIC_OPTIM_DECAY_L2,
      .amsgrad = hp->amsgrad};
  p.bias_correction1 = optic_optim_bias_correction(p.beta1, t);
  p.bias_correction2 = optic_optim_bias_correction(p.beta2, t);
  return p;
}

static bool check_step(const char *cfg, const optic_optim_t *opt, const model *m, const optic_optim_hparams *hp,
                       int step) {
  optic_optim_state *s = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &s));
  if (s == NULL) return false;
  bool ok = true;
  for (int i = 0; i < NT && ok; i++) {
    const float *master = slot(s, i, "master");
    ok = master && close_all(cfg, "master", i, step, master, m->rp[i]) &&
         close_all(cfg, "exp_avg", i, step, slot(s, i, "exp_avg"), m->rm[i]) &&
         close_all(cfg, "exp_avg_sq", i, step, slot(s, i, "exp_avg_sq"), m->rv[i]) &&
         (!hp->amsgrad || close_all(cfg, "max_exp_avg_sq", i, step, slot(s, i, "max_exp_avg_sq"), m->rx[i]));
    for (size_t e = 0; ok && e < (size_t)sizes[i]; e++) {
      if (m->p[i][e] != optic_f32_to_bf16(master[e])) {
        OT_CHECK(false, "%s tensor %d step %d: param[%zu] = 0x%04x, master %.9g rounds to 0x%04x", cfg, i, step, e,
                 m->p[i][e], (double)master[e], optic_f32_to_bf16(master[e]));
        ok = false;
      }
    }
  }
  optic_optim_state_destroy(s);
  return ok;
}

static void run_cfg(const char *cfg, optic_optim_hparams *hp) {
  kt_rng r = {0xb16u};
  model m, m2;
  model_make(&m, &r);
  kt_rng r2 = {0xb16u};
  model_make(&m2, &r2); /* the same parameters, for the 2-thread run */
  hp->bf16_master = true;
  optic_optim_t *opt = make_opt(hp, &m, 1), *opt2 = make_opt(hp, &m2, 2);
  bool ok = opt && opt2;
  for (int step = 1; step <= 5 && ok; step++) {
    for (int i = 0; i < NT; i++) {
      for (size_t e = 0; e < (size_t)sizes[i]; e++) m.g[i][e] = m2.g[i][e] = optic_f32_to_bf16(kt_uniform(&r, -1, 1));
      double *dg = malloc((size_t)sizes[i] * 8);
      for (size_t e = 0; e < (size_t)sizes[i]; e++) dg[e] = (double)optic_bf16_to_f32(m.g[i][e]);
      optic_adam_params p = ref_params(hp, (uint64_t)step);
      optic_ref_adam((size_t)sizes[i], m.rp[i], dg, m.rm[i], m.rv[i], hp->amsgrad ? m.rx[i] : NULL, &p);
      free(dg);
    }
    OT_EXPECT_OK(optic_optim_step(opt, m.tp, m.tg, NT, NULL));
    OT_EXPECT_OK(optic_optim_step(opt2, m2.tp, m2.tg, NT, NULL));
    ok = check_step(cfg, opt, &m, hp, step);
    for (int i = 0; i < NT && ok; i++) {
      ok = memcmp(m.p[i], m2.p[i], (size_t)sizes[i] * 2) == 0;
      OT_CHECK(ok, "%s step %d tensor %d: 2 threads differ from 1", cfg, step, i);
    }
  }
  if (!ok) fprintf(stderr, "  reproduce: optim_bf16_master master_vs_reference (%s)\n", cfg);
  optic_optim_destroy(opt);
  optic_optim_destroy(opt2);
  model_free(&m);
  model_free(&m2);
}

static void master_vs_reference(void) {
  optic_optim_hparams hp;
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp));
  hp.lr = 0.01, hp.weight_decay = 0.01;
  run_cfg("adam", &hp);
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAMW, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp));
  hp.lr = 0.01, hp.weight_decay = 0.1;
  run_cfg("adamw", &hp);
  hp.amsgrad = true, hp.beta1 = 0.8, hp.beta2 = 0.99, hp.eps = 1e-4;
  run_cfg("adamw amsgrad", &hp);
  printf("  bf16 master Adam: largest scaled error %.3g (tolerance 1e-6)\n", worst);
}

/* Export after 2 steps, import into a fresh optimizer: the next step of both
 * gives the same bits (the master was carried, not re-read from bf16). */
static void master_survives_import(void) {
  optic_optim_hparams hp;
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAMW, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp));
  hp.bf16_master = true, hp.lr = 0.003;
  kt_rng r = {77};
  model m;
  model_make(&m, &r);
  optic_optim_t *a = make_opt(&hp, &m, 1), *b = make_opt(&hp, &m, 1);
  for (int step = 0; step < 2; step++) {
    for (int i = 0; i < NT; i++)
      for (size_t e = 0; e < (size_t)sizes[i]; e++) m.g[i][e] = optic_f32_to_bf16(kt_uniform(&r, -1, 1));
    OT_EXPECT_OK(optic_optim_step(a, m.tp, m.tg, NT, NULL));
  }
  optic_optim_state *s = NULL;
  OT_EXPECT_OK(optic_optim_state_export(a, &s));
  OT_EXPECT_OK(optic_optim_state_import(b, s));
  optic_optim_state_destroy(s);
  uint16_t *copy[NT];
  for (int i = 0; i < NT; i++) copy[i] = malloc((size_t)sizes[i] * 2), memcpy(copy[i], m.p[i], (size_t)sizes[i] * 2);
  OT_EXPECT_OK(optic_optim_step(a, m.tp, m.tg, NT, NULL));
  uint16_t *after_a[NT];
  for (int i = 0; i < NT; i++) {
    after_a[i] = malloc((size_t)sizes[i] * 2), memcpy(after_a[i], m.p[i], (size_t)sizes[i] * 2);
    memcpy(m.p[i], copy[i], (size_t)sizes[i] * 2);
  }
  OT_EXPECT_OK(optic_optim_step(b, m.tp, m.tg, NT, NULL));
  for (int i = 0; i < NT; i++) {
    OT_CHECK(memcmp(after_a[i], m.p[i], (size_t)sizes[i] * 2) == 0, "tensor %d: the imported optimizer differs", i);
    free(copy[i]), free(after_a[i]);
  }
  optic_optim_destroy(a);
  optic_optim_destroy(b);
  model_free(&m);
}

static void refusals(void) {
  optic_optim_hparams hp;
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp));
  hp.bf16_master = true;
  kt_rng r = {5};
  model m;
  model_make(&m, &r);
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &hp, NT, m.shapes, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_optim_destroy(opt);
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp));
  hp.bf16_master = true;
  opt = make_opt(&hp, &m, 1);
  optic_tensor f32p = m.tp[0];
  f32p.dtype = OPTIC_F32;
  optic_tensor tp[NT];
  memcpy(tp, m.tp, sizeof tp);
  tp[0] = f32p;
  OT_EXPECT_STATUS(optic_optim_step(opt, tp, m.tg, NT, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_optim_destroy(opt);
  optic_optim_options o = optic_optim_options_default();
  o.clip_global_norm = 1.0;
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  OT_EXPECT_OK(optic_optim_add_group(opt, &hp, NT, m.shapes, NULL));
  OT_EXPECT_STATUS(optic_optim_step(opt, m.tp, m.tg, NT, NULL), OPTIC_ERR_UNSUPPORTED);
  optic_optim_destroy(opt);
  model_free(&m);
}

static const ot_case cases[] = {
    {"master_vs_reference", master_vs_reference},
    {"master_survives_import", master_survives_import},
    {"refusals", refusals},
};

OT_MAIN(cases)
