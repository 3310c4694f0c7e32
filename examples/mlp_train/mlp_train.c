/* mlp_train: trains an MLP on a synthetic task (labels from a fixed random
 * teacher network, held-out test set) with optic: graphs built with the
 * public graph API, compiled once, run with optic_program_run, data-parallel
 * over emulated pod cores or MPI ranks, Adam with warm-up + cosine through
 * optic_optim, checkpoints every K steps and --resume. Links only the
 * installed library (find_package(optic CONFIG)). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <optic/optic.h>
#ifdef MLP_TRAIN_HAVE_MPI
#include <mpi.h>
#endif

#include "mlp_model.h"

#define SHARDS 4 /* the global batch is always 4 shards, whatever runs them */

typedef struct options {
  int64_t steps, batch, hidden, train_size, test_size, epoch_steps;
  int cores, threads, ckpt_every, keep;
  uint64_t seed;
  double lr, min_lr;
  int64_t warmup, kill_at_step;
  const char *ckpt_dir, *dump_hlo;
  bool resume, mpi, gradcheck;
} options;

/* ------------------------------------------------------------ RNG (splitmix64) */
static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }
static double rng_normal(uint64_t *s) {
  double u = rng_uniform(s), v = rng_uniform(s);
  return sqrt(-2.0 * log(u + 0x1.0p-60)) * cos(6.283185307179586 * v);
}

/* ------------------------------------------------------------ data */
typedef struct dataset {
  int64_t n;
  float *x;  /* n x in */
  int *label;
} dataset;

/* Teacher: label = argmax(tanh(x T1) T2), T1 [in, 16], T2 [16, classes];
 * samples whose two best teacher logits are closer than MARGIN are redrawn,
 * so the classes are separable with a margin (a student can reach > 90%). */
static void make_data(const mlp_dims *d, uint64_t seed, int64_t n_train, int64_t n_test, dataset *train,
                      dataset *test) {
  enum { TH = 16 };
  const double MARGIN = 0.5;
  uint64_t s = seed ^ 0x7465616368657221ull;
  double *t1 = malloc(sizeof(double) * (size_t)(d->in * TH));
  double *t2 = malloc(sizeof(double) * (size_t)(TH * d->classes));
  for (int64_t i = 0; i < d->in * TH; i++) t1[i] = rng_normal(&s) / sqrt((double)d->in);
  for (int64_t i = 0; i < TH * d->classes; i++) t2[i] = rng_normal(&s);
  dataset *sets[2] = {train, test};
  int64_t sizes[2] = {n_train, n_test};
  for (int k = 0; k < 2; k++) {
    dataset *ds = sets[k];
    ds->n = sizes[k];
    ds->x = malloc(sizeof(float) * (size_t)(ds->n * d->in));
    ds->label = malloc(sizeof(int) * (size_t)ds->n);
    for (int64_t r = 0; r < ds->n; r++) {
      float *x = ds->x + r * d->in;
      for (int64_t j = 0; j < d->in; j++) x[j] = (float)rng_normal(&s);
      double h[TH], best = -1e300, second = -1e300;
      for (int q = 0; q < TH; q++) {
        double a = 0;
        for (int64_t j = 0; j < d->in; j++) a += x[j] * t1[j * TH + q];
        h[q] = tanh(a);
      }
      for (int64_t cl = 0; cl < d->classes; cl++) {
        double a = 0;
        for (int q = 0; q < TH; q++) a += h[q] * t2[q * d->classes + cl];
        if (a > best) second = best, best = a, ds->label[r] = (int)cl;
        else if (a > second) second = a;
      }
      if (best - second < MARGIN) r--; /* draw again: too close to a class boundary */
    }
  }
  free(t1);
  free(t2);
}

/* ------------------------------------------------------------ model state */
typedef struct model {
  mlp_dims dims;
  size_t count[MLP_PARAMS], total;
  float *params;           /* all parameters, one block */
  optic_tensor p[MLP_PARAMS];
} model;

static void tensors_over(const model *md, float *base, optic_tensor *out) {
  size_t off = 0;
  for (int i = 0; i < MLP_PARAMS; i++) {
    optic_shape s;
    mlp_param_shape(&md->dims, i, &s);
    optic_tensor_make(OPTIC_F32, &s, base + off, &out[i]);
    off += md->count[i];
  }
}

static void model_init(model *md, const mlp_dims *d, uint64_t *rng) {
  md->dims = *d;
  md->total = 0;
  for (int i = 0; i < MLP_PARAMS; i++) md->total += md->count[i] = mlp_param_count(d, i);
  md->params = calloc(md->total, sizeof(float));
  tensors_over(md, md->params, md->p);
  for (int i = 0; i < MLP_PARAMS; i += 2) { /* He init for W, zero biases */
    double sd = sqrt(2.0 / (double)md->p[i].shape.dims[0]);
    float *w = md->p[i].data;
    for (size_t k = 0; k < md->count[i]; k++) w[k] = (float)(sd * rng_normal(rng));
  }
}

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* ------------------------------------------------------------ one shard's gradients */
typedef struct trainer {
  const options *o;
  model *md;
  const optic_program_t *train_prog;
  int64_t shard_batch;
  float *xb, *yb;       /* the global batch: batch x in, batch x classes (one-hot) */
  float *gathered;      /* per core / rank: SHARDS x total gradients */
  float shard_loss[SHARDS];
  int first_shard, local_shards; /* this process's shards (all 4 unless --mpi) */
  optic_exec_ctx_t *ctx[SHARDS]; /* one per pod core (or one) */
} trainer;

static optic_status shard_gradients(trainer *t, optic_exec_ctx_t *ctx, int shard, float *grad_out) {
  const mlp_dims *d = &t->md->dims;
  optic_tensor in[MLP_PARAMS + 2], out[1 + MLP_PARAMS];
  for (int i = 0; i < MLP_PARAMS; i++) in[i] = t->md->p[i];
  int64_t xd[2] = {t->shard_batch, d->in}, yd[2] = {t->shard_batch, d->classes};
  optic_shape xs, ys, scalar;
  optic_shape_make(2, xd, &xs);
  optic_shape_make(2, yd, &ys);
  optic_shape_make(0, NULL, &scalar);
  optic_tensor_make(OPTIC_F32, &xs, t->xb + shard * t->shard_batch * d->in, &in[MLP_PARAMS]);
  optic_tensor_make(OPTIC_F32, &ys, t->yb + shard * t->shard_batch * d->classes, &in[MLP_PARAMS + 1]);
  optic_tensor_make(OPTIC_F32, &scalar, &t->shard_loss[shard], &out[0]);
  tensors_over(t->md, grad_out, out + 1);
  return optic_program_run(t->train_prog, ctx, in, MLP_PARAMS + 2, out, 1 + MLP_PARAMS);
}

/* Emulated pod: core c computes its k of this process's shards into its own
 * gathered buffer, then the pod's all-gather gives every core all of them
 * (with --mpi, the ranks' all-gather of core 0's buffer follows). */
static optic_status pod_core_fn(optic_pod_core *core, void *user) {
  trainer *t = user;
  int c = optic_pod_core_index(core), n = optic_pod_core_count(core), per = t->local_shards / n;
  const size_t P = t->md->total;
  float *mine = t->gathered + (size_t)c * SHARDS * P, *local = mine + (size_t)t->first_shard * P;
  for (int s = c * per; s < (c + 1) * per; s++) {
    optic_status st = shard_gradients(t, t->ctx[c], t->first_shard + s, local + (size_t)s * P);
    if (st != OPTIC_OK) return st;
  }
  size_t off, len;
  optic_pod_shard((size_t)t->local_shards * P, n, c, &off, &len);
  if (off != (size_t)c * per * P) return OPTIC_ERR_INTERNAL;
  return optic_pod_all_gather(core, local + off, local, (size_t)t->local_shards * P, OPTIC_F32);
}

/* grad = sum over shards in shard order (the same additions whatever ran them). */
static void reduce_shards(const float *all, size_t total, float *grad) {
  for (size_t i = 0; i < total; i++) {
    float acc = all[i];
    for (int s = 1; s < SHARDS; s++) acc += all[(size_t)s * total + i];
    grad[i] = acc;
  }
}

/* ------------------------------------------------------------ evaluation */
static optic_status accuracy(const optic_program_t *fwd, optic_exec_ctx_t *ctx, const model *md, const dataset *ds,
                             double *acc) {
  optic_tensor in[MLP_PARAMS + 1], out;
  for (int i = 0; i < MLP_PARAMS; i++) in[i] = md->p[i];
  int64_t xd[2] = {ds->n, md->dims.in};
  optic_shape xs;
  optic_shape_make(2, xd, &xs);
  optic_tensor_make(OPTIC_F32, &xs, ds->x, &in[MLP_PARAMS]);
  memset(&out, 0, sizeof out); /* data NULL: the context provides the logits */
  optic_status st = optic_program_run(fwd, ctx, in, MLP_PARAMS + 1, &out, 1);
  if (st != OPTIC_OK) return st;
  const float *z = out.data;
  int64_t ok = 0, C = md->dims.classes;
  for (int64_t r = 0; r < ds->n; r++) {
    int64_t best = 0;
    for (int64_t c = 1; c < C; c++)
      if (z[r * C + c] > z[r * C + best]) best = c;
    ok += best == ds->label[r];
  }
  *acc = (double)ok / (double)ds->n;
  return OPTIC_OK;
}

/* ------------------------------------------------------------ checkpoints
 * Entries: param/W1 .. param/b3, optim/<the optimizer's state names>, and
 * train/state (u8: step, RNG state, epoch loss sum, the optimizer's integer
 * scalars in export order). */
typedef struct train_state {
  uint64_t step, rng;
  double epoch_loss;
  int64_t scalars[16];
} train_state;

static const char *param_names[MLP_PARAMS] = {"param/W1", "param/b1", "param/W2", "param/b2", "param/W3", "param/b3"};

typedef struct ckpt_set {
  optic_ckpt_entry *e;
  char **names;
  size_t n;
  float **bufs; /* restore targets of the optimizer state (own copies) */
  size_t nopt;
  train_state ts;
} ckpt_set;

static void ckpt_set_free(ckpt_set *cs) {
  for (size_t i = 0; i < cs->n; i++) free(cs->names[i]);
  for (size_t i = 0; i < cs->nopt; i++) free(cs->bufs[i]);
  free(cs->e);
  free(cs->names);
  free(cs->bufs);
  memset(cs, 0, sizeof *cs);
}

/* restore_targets: optimizer tensors point at fresh buffers instead of the
 * optimizer's own (the state is imported after a verified restore). */
static optic_status ckpt_entries(model *md, const optic_optim_state *os, bool restore_targets, ckpt_set *cs) {
  memset(cs, 0, sizeof *cs);
  if (os->scalar_count > 16) return OPTIC_ERR_INTERNAL;
  cs->n = MLP_PARAMS + os->tensor_count + 1;
  cs->e = calloc(cs->n, sizeof *cs->e);
  cs->names = calloc(cs->n, sizeof *cs->names);
  cs->bufs = calloc(os->tensor_count + 1, sizeof *cs->bufs);
  size_t k = 0;
  for (int i = 0; i < MLP_PARAMS; i++, k++) {
    cs->names[k] = strdup(param_names[i]);
    cs->e[k].tensor = md->p[i];
  }
  for (size_t i = 0; i < os->tensor_count; i++, k++) {
    size_t len = strlen(os->tensors[i].name) + 8;
    cs->names[k] = malloc(len);
    snprintf(cs->names[k], len, "optim/%s", os->tensors[i].name);
    cs->e[k].tensor = os->tensors[i].tensor;
    if (restore_targets) {
      size_t bytes = 0;
      optic_tensor_bytes(&os->tensors[i].tensor, &bytes);
      cs->bufs[cs->nopt++] = cs->e[k].tensor.data = malloc(bytes ? bytes : 1);
    }
  }
  cs->names[k] = strdup("train/state");
  int64_t nb = (int64_t)sizeof cs->ts;
  optic_shape s;
  optic_shape_make(1, &nb, &s);
  optic_tensor_make(OPTIC_U8, &s, &cs->ts, &cs->e[k].tensor);
  for (size_t i = 0; i < cs->n; i++) cs->e[i].name = cs->names[i];
  return OPTIC_OK;
}

static optic_status save_checkpoint(const options *o, model *md, optic_step_engine *opt, uint64_t step, uint64_t rng,
                                    double epoch_loss) {
  optic_optim_state *os = NULL;
  optic_status st = optic_step_engine_state_export(opt, &os);
  if (st != OPTIC_OK) return st;
  ckpt_set cs;
  ckpt_entries(md, os, false, &cs);
  cs.ts.step = step;
  cs.ts.rng = rng;
  cs.ts.epoch_loss = epoch_loss;
  for (size_t i = 0; i < os->scalar_count; i++) cs.ts.scalars[i] = os->scalars[i].value;
  optic_ckpt_save_options so = {.size = sizeof so, .threads = 1, .keep = (uint32_t)o->keep};
  const char *dirs[1] = {o->ckpt_dir};
  st = optic_ckpt_save(dirs, 1, step, cs.e, cs.n, NULL, 0, &so);
  ckpt_set_free(&cs);
  optic_optim_state_destroy(os);
  return st;
}

/* NOT_FOUND when the directory holds no checkpoint. */
static optic_status restore_checkpoint(const options *o, model *md, optic_step_engine *opt, uint64_t *step, uint64_t *rng,
                                       double *epoch_loss) {
  optic_optim_state *os = NULL;
  optic_status st = optic_step_engine_state_export(opt, &os);
  if (st != OPTIC_OK) return st;
  ckpt_set cs;
  ckpt_entries(md, os, true, &cs);
  const char *dirs[1] = {o->ckpt_dir};
  optic_ckpt_read_options ro = {.size = sizeof ro, .threads = 1};
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  st = optic_ckpt_restore_latest(dirs, 1, cs.e, cs.n, &ro, &rep);
  if (st == OPTIC_OK) {
    optic_named_tensor *nt = calloc(os->tensor_count + 1, sizeof *nt);
    optic_named_scalar *ns = calloc(os->scalar_count + 1, sizeof *ns);
    for (size_t i = 0; i < os->tensor_count; i++) {
      nt[i].name = os->tensors[i].name;
      nt[i].tensor = cs.e[MLP_PARAMS + i].tensor;
    }
    for (size_t i = 0; i < os->scalar_count; i++) {
      ns[i].name = os->scalars[i].name;
      ns[i].value = cs.ts.scalars[i];
    }
    optic_optim_state in = {.version = OPTIC_OPTIM_STATE_VERSION, .tensor_count = os->tensor_count,
                            .tensors = nt, .scalar_count = os->scalar_count, .scalars = ns};
    st = optic_step_engine_state_import(opt, &in); /* the names still belong to os */
    free(nt);
    free(ns);
    *step = cs.ts.step;
    *rng = cs.ts.rng;
    *epoch_loss = cs.ts.epoch_loss;
    if (st == OPTIC_OK && rep.skipped > 0)
      fprintf(stderr, "mlp_train: skipped %zu invalid checkpoint(s), newest: %s\n", rep.skipped, rep.first_skipped);
  }
  optic_optim_state_destroy(os);
  ckpt_set_free(&cs);
  return st;
}

/* ------------------------------------------------------------ gradient check
 * The graph's gradients against central differences of the loss computed on
 * the host in double precision (a plain reference forward pass). */
static double host_loss(const model *md, const float *params, const float *x, const float *y, int64_t batch,
                        double scale) {
  const mlp_dims *d = &md->dims;
  const int64_t w[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  int64_t maxw = d->in;
  for (int l = 1; l <= MLP_LAYERS; l++) maxw = w[l] > maxw ? w[l] : maxw;
  double *a = malloc(sizeof(double) * (size_t)maxw), *b = malloc(sizeof(double) * (size_t)maxw);
  double loss = 0;
  for (int64_t r = 0; r < batch; r++) {
    for (int64_t j = 0; j < d->in; j++) a[j] = x[r * d->in + j];
    const float *p = params;
    for (int l = 0; l < MLP_LAYERS; l++) {
      const float *W = p, *bias = p + w[l] * w[l + 1];
      for (int64_t o = 0; o < w[l + 1]; o++) {
        double s = bias[o];
        for (int64_t i = 0; i < w[l]; i++) s += a[i] * W[i * w[l + 1] + o];
        b[o] = (l < MLP_LAYERS - 1 && s < 0) ? 0 : s;
      }
      p = bias + w[l + 1];
      double *t = a;
      a = b;
      b = t;
    }
    double mx = a[0], se = 0;
    for (int64_t c = 1; c < d->classes; c++) mx = a[c] > mx ? a[c] : mx;
    for (int64_t c = 0; c < d->classes; c++) se += exp(a[c] - mx);
    for (int64_t c = 0; c < d->classes; c++) loss -= y[r * d->classes + c] * (a[c] - mx - log(se));
  }
  free(a);
  free(b);
  return loss * scale;
}

static int gradient_check(trainer *t, uint64_t *rng) {
  model *md = t->md;
  float *grad = malloc(sizeof(float) * md->total);
  if (shard_gradients(t, t->ctx[0], 0, grad) != OPTIC_OK) {
    fprintf(stderr, "mlp_train: gradient check: %s\n", optic_last_error());
    free(grad);
    return 1;
  }
  const double scale = 1.0 / (double)t->o->batch, eps = 1e-3;
  double base = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, 1.0);
  int bad = 0;
  printf("gradcheck: loss graph %.6f host %.6f\n", t->shard_loss[0], base);
  if (fabs(base - t->shard_loss[0]) > 1e-4 * fabs(base) + 1e-4) bad++;
  for (int k = 0; k < 24; k++) {
    int i = k % MLP_PARAMS; /* every tensor, four elements each */
    size_t off = 0;
    for (int j = 0; j < i; j++) off += md->count[j];
    size_t e = off + (size_t)(rng_next(rng) % md->count[i]);
    float keep = md->params[e];
    md->params[e] = (float)(keep + eps);
    double up = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, scale);
    md->params[e] = (float)(keep - eps);
    double down = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, scale);
    md->params[e] = keep;
    double fd = (up - down) / ((double)(float)(keep + eps) - (double)(float)(keep - eps));
    double err = fabs(fd - grad[e]), tol = 2e-2 * fabs(fd) + 2e-5;
    if (err > tol) bad++;
    printf("gradcheck: %s[%zu] graph %+.6e finite-diff %+.6e %s\n", param_names[i] + 6, e - off, grad[e], fd,
           err > tol ? "MISMATCH" : "ok");
  }
  free(grad);
  printf("gradcheck: %s (%d mismatches)\n", bad ? "FAILED" : "passed", bad);
  return bad ? 1 : 0;
}

/* ------------------------------------------------------------ main */
static void usage(void) {
  fprintf(stderr,
          "usage: mlp_train [options]\n"
          "  --steps N         training steps (default 3000)\n"
          "  --batch N         global batch, split in 4 shards (default 64)\n"
          "  --hidden N        width of both hidden layers (default 256)\n"
          "  --cores N         emulated pod cores (per rank with --mpi): 1, 2 or 4 (default 4; 1 with --mpi)\n"
          "  --threads N       threads of each core's runs (default 1)\n"
          "  --seed N          data, init and batch sampling seed (default 1)\n"
          "  --lr X            peak Adam learning rate (default 3e-3); --warmup N steps (default steps/10)\n"
          "  --train-size N / --test-size N   (default 32768 / 1024)\n"
          "  --ckpt-dir DIR    save a checkpoint every --ckpt-every K steps (default 100), keep 3\n"
          "  --resume          continue from the newest valid checkpoint in --ckpt-dir\n"
          "  --mpi             data-parallel over MPI ranks (1, 2 or 4 ranks) instead of pod cores\n"
          "  --dump-hlo FILE   write the training step's graph as HLO text (e.g. for hlo_cost)\n"
          "  --mpi-available   print yes if --mpi can work (MPI in this build and in optic), and exit\n"
          "  --gradcheck       compare the backward graph with finite differences and exit\n"
          "  --kill-at-step N  test hook: SIGKILL this process after step N\n");
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.steps = 3000, .batch = 64, .hidden = 256, .train_size = 32768, .test_size = 1024, .cores = 0,
                 .threads = 1, .ckpt_every = 100, .keep = 3, .seed = 1, .lr = 3e-3, .warmup = -1,
                 .kill_at_step = -1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(flag, field)                  \
  if (strcmp(a, flag) == 0 && v) {        \
    o->field = strtoll(v, NULL, 0);       \
    i++;                                  \
    continue;                             \
  }
    NUM("--steps", steps) NUM("--batch", batch) NUM("--hidden", hidden) NUM("--cores", cores)
    NUM("--threads", threads) NUM("--seed", seed) NUM("--warmup", warmup) NUM("--train-size", train_size)
    NUM("--test-size", test_size) NUM("--ckpt-every", ckpt_every) NUM("--kill-at-step", kill_at_step)
#undef NUM
    if (strcmp(a, "--lr") == 0 && v) { o->lr = strtod(v, NULL); i++; continue; }
    if (strcmp(a, "--ckpt-dir") == 0 && v) { o->ckpt_dir = v; i++; continue; }
    if (strcmp(a, "--dump-hlo") == 0 && v) { o->dump_hlo = v; i++; continue; }
    if (strcmp(a, "--resume") == 0) { o->resume = true; continue; }
    if (strcmp(a, "--mpi") == 0) { o->mpi = true; continue; }
    if (strcmp(a, "--gradcheck") == 0) { o->gradcheck = true; continue; }
    usage();
    return 2;
  }
  if (o->cores == 0) o->cores = o->mpi ? 1 : 4;
  if (o->batch % SHARDS || o->batch <= 0 || o->steps <= 0 || o->hidden <= 0 || SHARDS % o->cores ||
      o->cores <= 0 || o->threads <= 0 || o->ckpt_every <= 0 || o->train_size <= 0 || o->test_size <= 0 ||
      (o->resume && !o->ckpt_dir)) {
    fprintf(stderr, "mlp_train: bad options (batch a multiple of 4, cores 1/2/4, --resume needs --ckpt-dir)\n");
    return 2;
  }
  if (o->warmup < 0) o->warmup = o->steps / 10 > 0 ? o->steps / 10 : 1;
  o->epoch_steps = o->train_size / o->batch > 0 ? o->train_size / o->batch : 1;
  o->min_lr = o->lr * 0.05;
  return 0;
}

#define CHECK(call, what)                                                         \
  do {                                                                            \
    if ((call) != OPTIC_OK) {                                                     \
      fprintf(stderr, "mlp_train: %s: %s\n", what, optic_last_error());          \
      rc = 1;                                                                     \
      goto done;                                                                  \
    }                                                                             \
  } while (0)

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--mpi-available") == 0) { /* for scripts: can --mpi work? */
#ifdef MLP_TRAIN_HAVE_MPI
    bool example = true;
#else
    bool example = false;
#endif
    printf("%s\n", example && optic_pod_mpi_built() ? "yes" : "no");
    return 0;
  }
  options o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc;
  int rank = 0, ranks = 1;
#ifdef MLP_TRAIN_HAVE_MPI
  optic_pod_mpi_t *mpi = NULL;
  if (o.mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }
#else
  if (o.mpi) {
    fprintf(stderr, "mlp_train: --mpi: this build of the example has no MPI (MPI was not found)\n");
    return 1;
  }
#endif
  const int units = o.mpi ? ranks * o.cores : o.cores; /* who computes shards */
  mlp_dims dims = {64, o.hidden, o.hidden, 10};
  model md = {0};
  dataset train = {0}, test = {0};
  trainer t = {.o = &o, .md = &md, .shard_batch = o.batch / SHARDS};
  optic_module_t *train_mod = NULL, *fwd_mod = NULL;
  optic_program_t *train_prog = NULL, *fwd_prog = NULL;
  optic_pod_t *pod = NULL;
  optic_optim *opt = NULL;
  optic_step_engine *engine = NULL;
  float *grad = NULL;
  uint64_t rng = o.seed * 0x2545f4914f6cdd1dull + 1;

  if (SHARDS % units) {
    fprintf(stderr, "mlp_train: %d ranks/cores do not divide the %d shards\n", units, SHARDS);
    rc = 2;
    goto done;
  }
#ifdef MLP_TRAIN_HAVE_MPI
  if (o.mpi) {
    optic_pod_mpi_options mo = {.size = sizeof mo};
    CHECK(optic_pod_mpi_create(&mo, &mpi), "MPI pod backend");
  }
#endif
  make_data(&dims, o.seed, o.train_size, o.test_size, &train, &test);
  model_init(&md, &dims, &rng);

  /* Compile both graphs once. */
  CHECK(mlp_build_train(&dims, t.shard_batch, 1.0f / (float)o.batch, &train_mod), "building the training graph");
  CHECK(mlp_build_forward(&dims, o.test_size, &fwd_mod), "building the forward graph");
  if (o.dump_hlo && rank == 0) {
    char *text = NULL;
    CHECK(optic_module_to_hlo_text(train_mod, &text), "printing the training graph");
    FILE *f = fopen(o.dump_hlo, "w");
    bool ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = false;
    optic_string_free(text);
    if (!ok) {
      fprintf(stderr, "mlp_train: cannot write %s\n", o.dump_hlo);
      rc = 1;
      goto done;
    }
  }
  CHECK(optic_compile(train_mod, NULL, &train_prog), "compiling the training graph");
  CHECK(optic_compile(fwd_mod, NULL, &fwd_prog), "compiling the forward graph");
  t.train_prog = train_prog;
  int nctx = o.cores;
  t.first_shard = o.mpi ? rank * (SHARDS / ranks) : 0;
  t.local_shards = o.mpi ? SHARDS / ranks : SHARDS;
  for (int c = 0; c < nctx; c++) {
    optic_exec_options eo = optic_exec_options_default();
    eo.threads = o.threads;
    CHECK(optic_exec_ctx_create(&eo, &t.ctx[c]), "execution context");
  }
  t.xb = malloc(sizeof(float) * (size_t)(o.batch * dims.in));
  t.yb = malloc(sizeof(float) * (size_t)(o.batch * dims.classes));
  t.gathered = malloc(sizeof(float) * md.total * SHARDS * (size_t)nctx);
  grad = malloc(sizeof(float) * md.total);

  if (o.gradcheck) {
    for (int64_t r = 0; r < o.batch; r++) {
      memcpy(t.xb + r * dims.in, train.x + r * dims.in, sizeof(float) * (size_t)dims.in);
      for (int64_t c = 0; c < dims.classes; c++) t.yb[r * dims.classes + c] = train.label[r] == c;
    }
    rc = gradient_check(&t, &rng);
    goto done;
  }

  /* Adam, PyTorch defaults, linear warm-up then cosine decay to 5% of lr. */
  optic_optim_options oo = {.size = sizeof oo, .threads = 1};
  optic_optim_hparams hp;
  CHECK(optic_optim_create(&oo, &opt), "optimizer");
  CHECK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp), "hparams");
  hp.lr = o.lr;
  if (o.steps > o.warmup) /* else (a run of one step) the rate stays constant */
    hp.schedule = (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = (uint64_t)o.warmup,
                                      .decay_steps = (uint64_t)o.steps, .min_lr = o.min_lr};
  optic_shape shapes[MLP_PARAMS];
  for (int i = 0; i < MLP_PARAMS; i++) mlp_param_shape(&dims, i, &shapes[i]);
  CHECK(optic_optim_add_group(opt, &hp, MLP_PARAMS, shapes, NULL), "optimizer group");
  /* The step engine runs the update (one replica: the gradients arrive
   * already reduced, see reduce_shards) and keeps the compiled update's
   * estimate beside the measured time. */
  optic_step_engine_options so = optic_step_engine_options_default();
  CHECK(optic_step_engine_create(opt, &so, &engine), "step engine");
  if (o.ckpt_dir && rank == 0 && mkdir(o.ckpt_dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "mlp_train: cannot create %s: %s\n", o.ckpt_dir, strerror(errno));
    rc = 1;
    goto done;
  }
  if (o.cores > 1) {
    optic_pod_options po = {.size = sizeof po, .cores = o.cores};
    CHECK(optic_pod_create(&po, &pod), "emulated pod");
  }

  uint64_t step = 0;
  double epoch_loss = 0;
  if (o.resume) {
    optic_status st = restore_checkpoint(&o, &md, engine, &step, &rng, &epoch_loss);
    if (st == OPTIC_ERR_NOT_FOUND) {
      if (rank == 0) printf("resume: no checkpoint in %s, starting at step 0\n", o.ckpt_dir);
    } else {
      CHECK(st, "restoring the newest checkpoint");
      if (rank == 0) printf("resume: continuing from step %" PRIu64 "\n", step);
    }
  }
  if (rank == 0) {
    char who[64];
    if (o.mpi) snprintf(who, sizeof who, "%d MPI ranks x %d pod cores", ranks, o.cores);
    else snprintf(who, sizeof who, "%d pod cores", o.cores);
    printf("mlp_train: 64-%" PRId64 "-%" PRId64 "-10, %zu parameters, batch %" PRId64 " (4 shards), %s, %" PRId64
           " steps, %" PRId64 " steps/epoch\n",
           dims.hidden1, dims.hidden2, md.total, o.batch, who, o.steps, o.epoch_steps);
  }

  optic_tensor gt[MLP_PARAMS];
  tensors_over(&md, grad, gt);
  for (; step < (uint64_t)o.steps; step++) {
    for (int64_t r = 0; r < o.batch; r++) { /* sample the global batch (with replacement) */
      int64_t idx = (int64_t)(rng_next(&rng) % (uint64_t)train.n);
      memcpy(t.xb + r * dims.in, train.x + idx * dims.in, sizeof(float) * (size_t)dims.in);
      for (int64_t c = 0; c < dims.classes; c++) t.yb[r * dims.classes + c] = train.label[idx] == c;
    }
    if (o.mpi) {
#ifdef MLP_TRAIN_HAVE_MPI
      int per = t.local_shards;
      if (pod)
        CHECK(optic_pod_run(pod, pod_core_fn, &t, NULL), "pod step");
      else
        for (int s = t.first_shard; s < t.first_shard + per; s++)
          CHECK(shard_gradients(&t, t.ctx[0], s, t.gathered + (size_t)s * md.total), "shard gradients");
      size_t off = (size_t)t.first_shard * md.total;
      CHECK(optic_pod_mpi_all_gather(mpi, t.gathered + off, t.gathered, SHARDS * md.total, OPTIC_F32),
            "all-gather of the shard gradients");
      float losses[SHARDS];
      CHECK(optic_pod_mpi_all_gather(mpi, t.shard_loss + t.first_shard, losses, SHARDS, OPTIC_F32),
            "all-gather of the losses");
      memcpy(t.shard_loss, losses, sizeof losses);
#endif
    } else if (pod) {
      CHECK(optic_pod_run(pod, pod_core_fn, &t, NULL), "pod step");
    } else {
      for (int s = 0; s < SHARDS; s++)
        CHECK(shard_gradients(&t, t.ctx[0], s, t.gathered + (size_t)s * md.total), "shard gradients");
    }
    reduce_shards(t.gathered, md.total, grad); /* core 0's (or this rank's) gathered copy */
    CHECK(optic_step_engine_step(engine, md.p, gt, MLP_PARAMS), "optimizer step");
    double loss = 0;
    for (int s = 0; s < SHARDS; s++) loss += t.shard_loss[s];
    epoch_loss += loss / (double)o.batch;
    uint64_t done_steps = step + 1;
    if (done_steps % (uint64_t)o.epoch_steps == 0 || done_steps == (uint64_t)o.steps) {
      double acc = 0;
      CHECK(accuracy(fwd_prog, t.ctx[0], &md, &test, &acc), "evaluation");
      uint64_t in_epoch = done_steps % (uint64_t)o.epoch_steps ? done_steps % (uint64_t)o.epoch_steps
                                                              : (uint64_t)o.epoch_steps;
      double lr = 0;
      optic_optim_group_lr(opt, 0, &lr);
      if (rank == 0)
        printf("epoch %3" PRIu64 "  step %6" PRIu64 "  loss %.6f  test_acc %.4f  lr %.3g\n",
               (done_steps + (uint64_t)o.epoch_steps - 1) / (uint64_t)o.epoch_steps, done_steps,
               epoch_loss / (double)in_epoch, acc, lr);
      epoch_loss = 0;
      fflush(stdout);
    }
    if (o.ckpt_dir && rank == 0 && done_steps % (uint64_t)o.ckpt_every == 0)
      CHECK(save_checkpoint(&o, &md, engine, done_steps, rng, epoch_loss), "saving a checkpoint");
    if (o.kill_at_step >= 0 && done_steps == (uint64_t)o.kill_at_step) {
      fflush(stdout);
      raise(SIGKILL);
    }
  }
  if (rank == 0) printf("final params fnv1a64 %016" PRIx64 "\n", fnv1a(md.params, md.total * sizeof(float)));
  optic_step_engine_metrics em;
  if (rank == 0 && optic_step_engine_metrics_get(engine, &em) == OPTIC_OK && em.steps > 0)
    printf("optimizer update (step engine): %.2f us per step measured, %.2f us estimated, %.0f bytes moved\n",
           em.mean_step_ns / 1e3, em.est_step_ns / 1e3, em.update_bytes_per_step);

done:
  optic_step_engine_destroy(engine);
  optic_optim_destroy(opt);
  optic_pod_destroy(pod);
  for (int c = 0; c < SHARDS; c++) optic_exec_ctx_destroy(t.ctx[c]);
  optic_program_destroy(train_prog);
  optic_program_destroy(fwd_prog);
  optic_module_destroy(train_mod);
  optic_module_destroy(fwd_mod);
  free(t.xb);
  free(t.yb);
  free(t.gathered);
  free(grad);
  free(md.params);
  free(train.x);
  free(train.label);
  free(test.x);
  free(test.label);
#ifdef MLP_TRAIN_HAVE_MPI
  if (o.mpi) {
    optic_pod_mpi_destroy(mpi);
    MPI_Finalize();
  }
#endif
  return rc;
}
