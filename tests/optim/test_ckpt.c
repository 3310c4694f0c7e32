/* optic_optim_save / _restore / _restore_latest and the step engine's
 * save/restore: for every optimizer kind (and the slot variants: SGD with and
 * without momentum, AMSGrad, centered RMSprop with momentum, a schedule), a
 * run saved after K steps and restored into a fresh optimizer (and fresh
 * parameter arrays) then continued is bitwise the run that never stopped:
 * parameters, every state tensor, step counts and skipped steps. Then the
 * errors: mismatched hyperparameters (the field is named), kinds, group
 * counts, shapes, a checkpoint with no optimizer state, a corrupt tensor
 * (optimizer unchanged; rollback to the older good file), reserved names. */
#include <inttypes.h>
#include <math.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { TENSORS = 3, SAVE_AT = 4, TOTAL = 9 };
static const int64_t dims[TENSORS][2] = {{17, 33}, {33, 1}, {7, 5}};

typedef struct variant {
  const char *name;
  optic_optim_kind kind;
  optic_optim_convention conv;
  double momentum;
  bool amsgrad, centered, nesterov, schedule;
} variant;

static const variant variants[] = {
    {"sgd", OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_PYTORCH, 0, false, false, false, false},
    {"sgd_nesterov", OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_PYTORCH, 0.9, false, false, true, true},
    {"adam_amsgrad", OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH, 0, true, false, false, true},
    {"adam_keras", OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_KERAS, 0, false, false, false, false},
    {"adamw", OPTIC_OPTIM_KIND_ADAMW, OPTIC_OPTIM_CONVENTION_DEFAULT, 0, false, false, false, false},
    {"rmsprop_centered", OPTIC_OPTIM_KIND_RMSPROP, OPTIC_OPTIM_CONVENTION_PYTORCH, 0.5, false, true, false, false},
    {"adagrad", OPTIC_OPTIM_KIND_ADAGRAD, OPTIC_OPTIM_CONVENTION_OPTAX, 0, false, false, false, false},
    {"lamb", OPTIC_OPTIM_KIND_LAMB, OPTIC_OPTIM_CONVENTION_DEFAULT, 0, false, false, false, true},
    {"lion", OPTIC_OPTIM_KIND_LION, OPTIC_OPTIM_CONVENTION_DEFAULT, 0, false, false, false, false},
};

static optic_optim_hparams hparams_of(const variant *v) {
  optic_optim_hparams hp;
  OT_EXPECT_OK(optic_optim_hparams_default(v->kind, v->conv, &hp));
  hp.lr = 0.01;
  hp.weight_decay = 0.01;
  hp.momentum = v->momentum;
  hp.amsgrad = v->amsgrad;
  hp.centered = v->centered;
  hp.nesterov = v->nesterov;
  if (v->schedule)
    hp.schedule =
        (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = 2, .decay_steps = 8, .min_lr = 0.001};
  return hp;
}

static optic_optim_t *make_optim_hp(const optic_optim_hparams *hp, optic_optim_options *oo) {
  optic_shape shapes[TENSORS];
  for (int i = 0; i < TENSORS; i++) OT_EXPECT_OK(optic_shape_make(2, dims[i], &shapes[i]));
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(oo, &opt));
  OT_EXPECT_OK(optic_optim_add_group(opt, hp, 2, shapes, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, hp, 1, shapes + 2, NULL));
  return opt;
}

static optic_optim_t *make_optim(const variant *v) {
  optic_optim_hparams hp = hparams_of(v);
  optic_optim_options oo = {.size = sizeof oo, .skip_nonfinite = true};
  return make_optim_hp(&hp, &oo);
}

typedef struct model {
  float *p[TENSORS], *g[TENSORS];
  optic_tensor pt[TENSORS], gt[TENSORS];
  optic_named_tensor named[TENSORS];
} model;

static const char *pnames[TENSORS] = {"param/w0", "param/w1", "param/b"};

static size_t numel(int i) { return (size_t)(dims[i][0] * dims[i][1]); }

static void model_make(model *m, uint64_t seed) {
  for (int i = 0; i < TENSORS; i++) {
    m->p[i] = malloc(numel(i) * 4), m->g[i] = malloc(numel(i) * 4);
    for (size_t k = 0; k < numel(i); k++) m->p[i][k] = (float)((k * 7 + seed) % 19) / 10.0f - 0.9f;
    optic_shape s;
    optic_shape_make(2, dims[i], &s);
    m->pt[i] = (optic_tensor){OPTIC_F32, s, m->p[i]};
    m->gt[i] = (optic_tensor){OPTIC_F32, s, m->g[i]};
    m->named[i] = (optic_named_tensor){pnames[i], m->pt[i]};
  }
}

static void model_free(model *m) {
  for (int i = 0; i < TENSORS; i++) free(m->p[i]), free(m->g[i]);
}

/* Step 2 has a NaN gradient: a skipped step, so skipped_steps is 1. */
static void grads_for_step(model *m, int step) {
  for (int i = 0; i < TENSORS; i++)
    for (size_t k = 0; k < numel(i); k++)
      m->g[i][k] = (float)(((k + 3) * (size_t)(step + 5) + (size_t)i) % 23) / 11.0f - 1.0f;
  if (step == 2) m->g[1][3] = NAN;
}

/* Same parameters, same state tensors (bitwise), same step counts. */
static void expect_same(const char *what, optic_optim_t *a, optic_optim_t *b, const model *ma, const model *mb) {
  for (int i = 0; i < TENSORS; i++)
    OT_CHECK(memcmp(ma->p[i], mb->p[i], numel(i) * 4) == 0, "%s: parameter %d differs", what, i);
  optic_optim_state *sa = NULL, *sb = NULL;
  OT_EXPECT_OK(optic_optim_state_export(a, &sa));
  OT_EXPECT_OK(optic_optim_state_export(b, &sb));
  OT_CHECK(sa->tensor_count == sb->tensor_count && sa->scalar_count == sb->scalar_count, "%s", what);
  for (size_t i = 0; i < sa->tensor_count && i < sb->tensor_count; i++) {
    size_t bytes = 0;
    optic_tensor_bytes(&sa->tensors[i].tensor, &bytes);
    OT_CHECK(strcmp(sa->tensors[i].name, sb->tensors[i].name) == 0 &&
                 memcmp(sa->tensors[i].tensor.data, sb->tensors[i].tensor.data, bytes) == 0,
             "%s: state %s differs", what, sa->tensors[i].name);
  }
  for (size_t i = 0; i < sa->scalar_count && i < sb->scalar_count; i++)
    OT_CHECK(sa->scalars[i].value == sb->scalars[i].value, "%s: scalar %s: %" PRId64 " vs %" PRId64, what,
             sa->scalars[i].name, sa->scalars[i].value, sb->scalars[i].value);
  optic_optim_state_destroy(sa);
  optic_optim_state_destroy(sb);
}

static void run_variant(const variant *v) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  model a, b;
  model_make(&a, 1);
  model_make(&b, 77); /* other contents: the restore must overwrite them */
  optic_optim_t *opt = make_optim(v), *opt2 = make_optim(v);
  uint64_t rng = 0x1234567890abcdefull, rng2 = 0;
  optic_shape one;
  int64_t d1 = 1;
  optic_shape_make(1, &d1, &one);
  optic_named_tensor extra[TENSORS + 1];
  memcpy(extra, a.named, sizeof a.named);
  extra[TENSORS] = (optic_named_tensor){"train/rng", {OPTIC_U64, one, &rng}};
  for (int s = 0; s < TOTAL; s++) {
    grads_for_step(&a, s);
    OT_EXPECT_OK(optic_optim_step(opt, a.pt, a.gt, TENSORS, NULL));
    if (s + 1 == SAVE_AT) {
      OT_EXPECT_OK(optic_optim_save(opt, dirs, 1, SAVE_AT, extra, TENSORS + 1, NULL, 0, NULL));
      /* Restore into the fresh optimizer while the first one runs on. */
      optic_named_tensor targets[TENSORS + 1];
      memcpy(targets, b.named, sizeof b.named);
      targets[TENSORS] = (optic_named_tensor){"train/rng", {OPTIC_U64, one, &rng2}};
      optic_ckpt_restore_report rep = {.size = sizeof rep};
      OT_EXPECT_OK(optic_optim_restore_latest(opt2, dirs, 1, targets, TENSORS + 1, NULL, &rep));
      OT_CHECK(rep.step == SAVE_AT && rep.skipped == 0, "%s: step %" PRIu64, v->name, rep.step);
      OT_CHECK(rng2 == rng, "%s: the extra u64 entry did not round-trip", v->name);
      expect_same(v->name, opt, opt2, &a, &b);
    }
  }
  for (int s = SAVE_AT; s < TOTAL; s++) {
    grads_for_step(&b, s);
    OT_EXPECT_OK(optic_optim_step(opt2, b.pt, b.gt, TENSORS, NULL));
  }
  expect_same(v->name, opt, opt2, &a, &b);
  OT_CHECK(optic_optim_skipped_steps(opt2) == 1, "%s: skipped %" PRIu64, v->name, optic_optim_skipped_steps(opt2));
  double la, lb;
  OT_EXPECT_OK(optic_optim_group_lr(opt, 1, &la));
  OT_EXPECT_OK(optic_optim_group_lr(opt2, 1, &lb));
  OT_CHECK(la == lb, "%s: next lr %g vs %g", v->name, la, lb);
  model_free(&a);
  model_free(&b);
  optic_optim_destroy(opt);
  optic_optim_destroy(opt2);
  ct_rmdir(dir);
}

static void every_kind(void) {
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) run_variant(&variants[i]);
}

/* ------------------------------------------------------------ errors */

static bool last_error_has(const char *needle) { return strstr(optic_last_error(), needle) != NULL; }

/* The state exported before and after a failed restore is the same. */
static void expect_unchanged(optic_optim_t *opt, const optic_optim_state *before_copy_src, float *copy) {
  optic_optim_state *s = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &s));
  size_t off = 0;
  for (size_t i = 0; i < s->tensor_count; i++) {
    size_t n = 0;
    optic_shape_elements(&s->tensors[i].tensor.shape, &n);
    OT_CHECK(memcmp(s->tensors[i].tensor.data, copy + off, n * 4) == 0, "state %s changed by a failed restore",
             s->tensors[i].name);
    off += n;
  }
  (void)before_copy_src;
  optic_optim_state_destroy(s);
}

static float *state_copy(optic_optim_t *opt) {
  optic_optim_state *s = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &s));
  size_t total = 0;
  for (size_t i = 0; i < s->tensor_count; i++) {
    size_t n = 0;
    optic_shape_elements(&s->tensors[i].tensor.shape, &n);
    total += n;
  }
  float *c = malloc(total * 4 + 4), *p = c;
  for (size_t i = 0; i < s->tensor_count; i++) {
    size_t n = 0;
    optic_shape_elements(&s->tensors[i].tensor.shape, &n);
    memcpy(p, s->tensors[i].tensor.data, n * 4);
    p += n;
  }
  optic_optim_state_destroy(s);
  return c;
}

static optic_status restore_file(optic_optim_t *opt, const char *path, optic_optim_hparams_policy policy) {
  optic_ckpt_reader_t *r = NULL;
  optic_status st = optic_ckpt_reader_create(path, NULL, &r);
  optic_optim_restore_options ro = {.size = sizeof ro, .hparams = policy};
  if (st == OPTIC_OK) st = optic_optim_restore(opt, r, NULL, 0, &ro);
  optic_ckpt_reader_destroy(r);
  return st;
}

static void mismatches(void) {
  char dir[64], path[160];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  snprintf(path, sizeof path, "%s/adam.optic", dir);
  const variant *adam = &variants[2];
  optic_optim_t *saved = make_optim(adam);
  model m;
  model_make(&m, 3);
  for (int s = 0; s < 3; s++) {
    grads_for_step(&m, s + 5);
    OT_EXPECT_OK(optic_optim_step(saved, m.pt, m.gt, TENSORS, NULL));
  }
  OT_EXPECT_OK(optic_optim_save_file(saved, path, m.named, TENSORS, NULL, 0, NULL));

  /* Another learning rate: CHECK names the field; KEEP restores. */
  optic_optim_hparams hp = hparams_of(adam);
  hp.lr = 0.02;
  optic_optim_t *other = make_optim_hp(&hp, NULL);
  float *before = state_copy(other);
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(last_error_has("group 0 hyperparameter lr") && last_error_has("0.01") && last_error_has("0.02"), "%s",
           optic_last_error());
  expect_unchanged(other, NULL, before);
  OT_EXPECT_OK(restore_file(other, path, OPTIC_OPTIM_HPARAMS_KEEP));
  uint64_t step = 0;
  OT_EXPECT_OK(optic_optim_group_step(other, 1, &step));
  OT_CHECK(step == 3);
  free(before);
  optic_optim_destroy(other);

  /* Another kind: CHECK says kind; KEEP still refuses (state import). */
  other = make_optim(&variants[4]);
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(last_error_has("hyperparameter kind") && last_error_has("adamw"), "%s", optic_last_error());
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_KEEP), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(last_error_has("adamw"), "%s", optic_last_error());
  optic_optim_destroy(other);

  /* Adam without AMSGrad under KEEP: the slot sets differ. */
  hp = hparams_of(adam);
  hp.amsgrad = false;
  other = make_optim_hp(&hp, NULL);
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(last_error_has("amsgrad"), "%s", optic_last_error());
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_KEEP), OPTIC_ERR_INVALID_ARGUMENT);
  optic_optim_destroy(other);

  /* One group instead of two. */
  optic_shape shapes[TENSORS];
  for (int i = 0; i < TENSORS; i++) optic_shape_make(2, dims[i], &shapes[i]);
  hp = hparams_of(adam);
  OT_EXPECT_OK(optic_optim_create(NULL, &other));
  OT_EXPECT_OK(optic_optim_add_group(other, &hp, 3, shapes, NULL));
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_KEEP), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(last_error_has("2 parameter groups, this optimizer 1"), "%s", optic_last_error());
  optic_optim_destroy(other);

  /* Same groups, another shape. */
  OT_EXPECT_OK(optic_optim_create(NULL, &other));
  OT_EXPECT_OK(optic_optim_add_group(other, &hp, 2, shapes, NULL));
  int64_t odd[2] = {7, 6};
  optic_shape_make(2, odd, &shapes[2]);
  OT_EXPECT_OK(optic_optim_add_group(other, &hp, 1, shapes + 2, NULL));
  OT_EXPECT_STATUS(restore_file(other, path, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(last_error_has("group.1/tensor.0") && last_error_has("f32[7,5]"), "%s", optic_last_error());
  optic_optim_destroy(other);

  /* A checkpoint of parameters only. */
  char plain[160];
  snprintf(plain, sizeof plain, "%s/plain.optic", dir);
  OT_EXPECT_OK(optic_ckpt_save_file(plain, m.named, TENSORS, NULL, 0, NULL));
  other = make_optim(adam);
  OT_EXPECT_STATUS(restore_file(other, plain, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(last_error_has("no optimizer state"), "%s", optic_last_error());
  optic_optim_destroy(other);

  /* Names under optim/ are the library's. */
  optic_named_tensor bad = {"optim/mine", m.pt[0]};
  OT_EXPECT_STATUS(optic_optim_save_file(saved, plain, &bad, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_ckpt_meta badm = optic_ckpt_meta_str("optim/x", "1");
  OT_EXPECT_STATUS(optic_optim_save_file(saved, plain, NULL, 0, &badm, 1, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_ckpt_verify_file(plain, NULL)); /* the failed saves left the file alone */
  optic_optim_restore_options badro = {.size = 3};
  OT_EXPECT_STATUS(optic_optim_restore_latest(saved, (const char *[]){dir}, 1, NULL, 0, &badro, NULL),
                   OPTIC_ERR_INVALID_ARGUMENT);
  model_free(&m);
  optic_optim_destroy(saved);
  ct_rmdir(dir);
}

/* Flips one byte of the newest checkpoint's optimizer tensor: restore from
 * it fails CORRUPT with the optimizer unchanged, restore_latest falls back
 * to the older file. */
static void corrupt_rolls_back(void) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  const variant *v = &variants[4];
  optic_optim_t *opt = make_optim(v);
  model m;
  model_make(&m, 5);
  for (int s = 1; s <= 2; s++) {
    grads_for_step(&m, s + 5);
    OT_EXPECT_OK(optic_optim_step(opt, m.pt, m.gt, TENSORS, NULL));
    OT_EXPECT_OK(optic_optim_save(opt, dirs, 1, (uint64_t)s, NULL, 0, NULL, 0, NULL));
  }
  char path[160];
  optic_ckpt_path(dir, 2, path, sizeof path);
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  size_t idx = 0;
  OT_EXPECT_OK(optic_ckpt_find(r, "optim/group.1/tensor.0/exp_avg_sq", &idx));
  optic_ckpt_entry_info info;
  OT_EXPECT_OK(optic_ckpt_entry_at(r, idx, &info));
  optic_ckpt_reader_destroy(r);
  FILE *f = fopen(path, "r+b");
  OT_CHECK(f != NULL);
  if (f) {
    fseek(f, (long)info.offset + 5, SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long)info.offset + 5, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
  }
  optic_optim_t *fresh = make_optim(v);
  float *before = state_copy(fresh);
  OT_EXPECT_STATUS(restore_file(fresh, path, OPTIC_OPTIM_HPARAMS_CHECK), OPTIC_ERR_CORRUPT);
  OT_CHECK(last_error_has("exp_avg_sq"), "%s", optic_last_error());
  expect_unchanged(fresh, NULL, before);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_optim_restore_latest(fresh, dirs, 1, NULL, 0, NULL, &rep));
  OT_CHECK(rep.step == 1 && rep.skipped == 1 && strstr(rep.first_skipped, path) != NULL, "step %" PRIu64 " %s",
           rep.step, rep.first_skipped);
  uint64_t step = 0;
  OT_EXPECT_OK(optic_optim_group_step(fresh, 0, &step));
  OT_CHECK(step == 1);
  free(before);
  model_free(&m);
  optic_optim_destroy(opt);
  optic_optim_destroy(fresh);
  /* An empty directory: NOT_FOUND. */
  ct_rmdir(dir);
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  optic_optim_t *o3 = make_optim(v);
  OT_EXPECT_STATUS(optic_optim_restore_latest(o3, dirs, 1, NULL, 0, NULL, NULL), OPTIC_ERR_NOT_FOUND);
  optic_optim_destroy(o3);
  ct_rmdir(dir);
}

/* The step engine on a 2-core emulated pod: saved after SAVE_AT replica
 * steps, restored into a fresh engine (fresh optimizer, replicas) and
 * continued, both cores end bitwise as the engine that never stopped, and
 * the engine's step counter continues. */
static void engine_round_trip(void) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  const variant *v = &variants[2];
  model a[2], b[2];
  for (int c = 0; c < 2; c++) model_make(&a[c], 1), model_make(&b[c], 50 + (uint64_t)c);
  optic_optim_t *oa = make_optim(v), *ob = make_optim(v);
  optic_step_engine_options so = optic_step_engine_options_default();
  so.cores = 2;
  optic_step_engine_t *ea = NULL, *eb = NULL;
  OT_EXPECT_OK(optic_step_engine_create(oa, &so, &ea));
  OT_EXPECT_OK(optic_step_engine_create(ob, &so, &eb));
  const optic_tensor *pa[2] = {a[0].pt, a[1].pt}, *ga[2] = {a[0].gt, a[1].gt};
  const optic_tensor *pb[2] = {b[0].pt, b[1].pt}, *gb[2] = {b[0].gt, b[1].gt};
  for (int s = 0; s < TOTAL; s++) {
    for (int c = 0; c < 2; c++) grads_for_step(&a[c], s + 3 * c); /* cores see different gradients */
    OT_EXPECT_OK(optic_step_engine_step_replicas(ea, pa, ga, TENSORS));
    if (s + 1 == SAVE_AT)
      OT_EXPECT_OK(optic_step_engine_save(ea, dirs, 1, SAVE_AT, a[0].named, TENSORS, NULL, 0, NULL));
  }
  OT_EXPECT_OK(optic_step_engine_restore_latest(eb, dirs, 1, b[0].named, TENSORS, NULL, NULL));
  for (int i = 0; i < TENSORS; i++) memcpy(b[1].p[i], b[0].p[i], numel(i) * 4);
  optic_step_engine_metrics mb;
  OT_EXPECT_OK(optic_step_engine_metrics_get(eb, &mb));
  OT_CHECK(mb.steps == SAVE_AT, "engine steps %" PRIu64, mb.steps);
  for (int s = SAVE_AT; s < TOTAL; s++) {
    for (int c = 0; c < 2; c++) grads_for_step(&b[c], s + 3 * c);
    OT_EXPECT_OK(optic_step_engine_step_replicas(eb, pb, gb, TENSORS));
  }
  expect_same("engine", oa, ob, &a[0], &b[0]);
  for (int i = 0; i < TENSORS; i++)
    OT_CHECK(memcmp(a[1].p[i], b[1].p[i], numel(i) * 4) == 0, "engine core 1 parameter %d differs", i);
  optic_step_engine_metrics ma;
  OT_EXPECT_OK(optic_step_engine_metrics_get(ea, &ma));
  OT_EXPECT_OK(optic_step_engine_metrics_get(eb, &mb));
  OT_CHECK(ma.steps == mb.steps && ma.skipped_steps == mb.skipped_steps, "%" PRIu64 "/%" PRIu64, ma.steps, mb.steps);
  optic_step_engine_destroy(ea);
  optic_step_engine_destroy(eb);
  optic_optim_destroy(oa);
  optic_optim_destroy(ob);
  for (int c = 0; c < 2; c++) model_free(&a[c]), model_free(&b[c]);
  ct_rmdir(dir);
}

static const ot_case cases[] = {{"every_kind", every_kind},
                                {"mismatches", mismatches},
                                {"corrupt_rolls_back", corrupt_rolls_back},
                                {"engine_round_trip", engine_round_trip}};
OT_MAIN(cases)
