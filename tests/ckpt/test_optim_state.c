/* The optimizer's state through a checkpoint (how issue 6 stores it):
 * optic_optim_state_export's named tensors and scalars are saved as entries
 * and metadata beside the parameters; after a restore into library buffers
 * and optic_optim_state_import into a fresh optimizer, the next steps are
 * bitwise those of the optimizer that never stopped. */
#include <inttypes.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { TENSORS = 3 };
static const int64_t dims[TENSORS][2] = {{64, 33}, {33, 1}, {7, 5}};

static optic_optim_t *make_optim(optic_optim_kind kind) {
  optic_optim_t *opt = NULL;
  optic_optim_hparams hp;
  OT_EXPECT_OK(optic_optim_hparams_default(kind, OPTIC_OPTIM_CONVENTION_DEFAULT, &hp));
  hp.lr = 0.01;
  hp.weight_decay = 0.01;
  if (kind == OPTIC_OPTIM_KIND_SGD) hp.momentum = 0.9;
  optic_shape shapes[TENSORS];
  for (int i = 0; i < TENSORS; i++) OT_EXPECT_OK(optic_shape_make(2, dims[i], &shapes[i]));
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  OT_EXPECT_OK(optic_optim_add_group(opt, &hp, 2, shapes, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, &hp, 1, shapes + 2, NULL));
  return opt;
}

typedef struct model {
  float *p[TENSORS], *g[TENSORS];
  optic_tensor pt[TENSORS], gt[TENSORS];
} model;

static void model_make(model *m, uint64_t seed) {
  for (int i = 0; i < TENSORS; i++) {
    size_t n = (size_t)(dims[i][0] * dims[i][1]);
    m->p[i] = malloc(n * 4), m->g[i] = malloc(n * 4);
    for (size_t k = 0; k < n; k++) m->p[i][k] = (float)((k * 7 + seed) % 19) / 10.0f - 0.9f;
    optic_shape s;
    optic_shape_make(2, dims[i], &s);
    m->pt[i] = (optic_tensor){OPTIC_F32, s, m->p[i]};
    m->gt[i] = (optic_tensor){OPTIC_F32, s, m->g[i]};
  }
}

static void grads_for_step(model *m, int step) {
  for (int i = 0; i < TENSORS; i++)
    for (int64_t k = 0; k < dims[i][0] * dims[i][1]; k++)
      m->g[i][k] = (float)(((k + 3) * (step + 5) + i) % 23) / 11.0f - 1.0f;
}

static void run_kind(optic_optim_kind kind) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  model a;
  model_make(&a, 1);
  optic_optim_t *opt = make_optim(kind);
  for (int s = 0; s < 5; s++) {
    grads_for_step(&a, s);
    OT_EXPECT_OK(optic_optim_step(opt, a.pt, a.gt, TENSORS, NULL));
  }
  /* Save: parameters + optimizer tensors as entries, its scalars as metadata. */
  optic_optim_state *st = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &st));
  size_t n = TENSORS + st->tensor_count;
  optic_ckpt_entry *e = calloc(n, sizeof *e);
  char pname[TENSORS][16];
  for (int i = 0; i < TENSORS; i++) {
    snprintf(pname[i], sizeof pname[i], "param.%d", i);
    e[i] = (optic_ckpt_entry){pname[i], a.pt[i]};
  }
  for (size_t i = 0; i < st->tensor_count; i++)
    e[TENSORS + i] = (optic_ckpt_entry){st->tensors[i].name, st->tensors[i].tensor};
  optic_ckpt_meta *meta = calloc(st->scalar_count + 1, sizeof *meta);
  char(*text)[24] = calloc(st->scalar_count + 1, sizeof *text);
  for (size_t i = 0; i < st->scalar_count; i++) {
    snprintf(text[i], sizeof text[i], "%" PRId64, st->scalars[i].value);
    meta[i] = optic_ckpt_meta_str(st->scalars[i].name, text[i]);
  }
  meta[st->scalar_count] = optic_ckpt_meta_str("optimizer", optic_optim_kind_name(kind));
  OT_EXPECT_OK(optic_ckpt_save(dirs, 1, 5, e, n, meta, st->scalar_count + 1, NULL));
  optic_optim_state_destroy(st);

  /* Restore into a fresh model and optimizer. */
  model b;
  model_make(&b, 99);
  optic_optim_t *opt2 = make_optim(kind);
  optic_ckpt_entry targets[TENSORS];
  for (int i = 0; i < TENSORS; i++) targets[i] = (optic_ckpt_entry){pname[i], b.pt[i]};
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, targets, TENSORS, NULL, &rep));
  char path[160];
  optic_ckpt_path(dir, rep.step, path, sizeof path);
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  size_t total = optic_ckpt_entry_count(r), nt = 0, ns = 0;
  optic_named_tensor *nts = calloc(total, sizeof *nts);
  optic_named_scalar *nss = calloc(optic_ckpt_meta_count(r), sizeof *nss);
  size_t *bytes = calloc(total, sizeof *bytes);
  for (size_t i = 0; i < total; i++) {
    optic_ckpt_entry_info info;
    OT_EXPECT_OK(optic_ckpt_entry_at(r, i, &info));
    if (strncmp(info.name, "group.", 6) != 0) continue;
    nts[nt].name = info.name;
    OT_EXPECT_OK(optic_ckpt_restore_alloc(r, info.name, NULL, &nts[nt].tensor));
    bytes[nt] = (size_t)info.bytes;
    nt++;
  }
  for (size_t i = 0; i < optic_ckpt_meta_count(r); i++) {
    const char *key;
    const void *v;
    size_t len;
    OT_EXPECT_OK(optic_ckpt_meta_at(r, i, &key, &v, &len));
    if (strcmp(key, "optimizer") == 0) continue;
    nss[ns++] = (optic_named_scalar){key, strtoll(v, NULL, 10)};
  }
  optic_optim_state in = {OPTIC_OPTIM_STATE_VERSION, nt, nts, ns, nss};
  OT_EXPECT_OK(optic_optim_state_import(opt2, &in));
  for (size_t i = 0; i < nt; i++) optic_free(NULL, nts[i].tensor.data, bytes[i], OPTIC_DEFAULT_ALIGNMENT);
  optic_ckpt_reader_destroy(r);

  /* Both continue: bitwise the same parameters. */
  for (int s = 5; s < 8; s++) {
    grads_for_step(&a, s);
    grads_for_step(&b, s);
    OT_EXPECT_OK(optic_optim_step(opt, a.pt, a.gt, TENSORS, NULL));
    OT_EXPECT_OK(optic_optim_step(opt2, b.pt, b.gt, TENSORS, NULL));
  }
  for (int i = 0; i < TENSORS; i++)
    OT_CHECK(memcmp(a.p[i], b.p[i], (size_t)(dims[i][0] * dims[i][1]) * 4) == 0, "%s: tensor %d differs after resume",
             optic_optim_kind_name(kind), i);
  uint64_t sa, sb;
  OT_EXPECT_OK(optic_optim_group_step(opt, 0, &sa));
  OT_EXPECT_OK(optic_optim_group_step(opt2, 0, &sb));
  OT_CHECK(sa == 8 && sb == 8);
  for (int i = 0; i < TENSORS; i++) free(a.p[i]), free(a.g[i]), free(b.p[i]), free(b.g[i]);
  free(nts), free(nss), free(bytes), free(e), free(meta), free(text);
  optic_optim_destroy(opt);
  optic_optim_destroy(opt2);
  ct_rmdir(dir);
}

static void sgd_momentum(void) { run_kind(OPTIC_OPTIM_KIND_SGD); }
static void adamw(void) { run_kind(OPTIC_OPTIM_KIND_ADAMW); }
static void rmsprop(void) { run_kind(OPTIC_OPTIM_KIND_RMSPROP); }

static const ot_case cases[] = {{"sgd_momentum", sgd_momentum}, {"adamw", adamw}, {"rmsprop", rmsprop}};
OT_MAIN(cases)
