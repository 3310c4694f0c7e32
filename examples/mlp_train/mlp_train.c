/* mlp_train: trains an MLP (or, with --model conv, a small convnet) on a
 * generated classification set (mlp_data.h: labels from a fixed random
 * teacher network, or pattern images; held-out test set) with optic: the
 * forward graph built once with the public graph API and its gradients by
 * optic's reverse-mode autodiff (mlp_model.h, conv_model.h), compiled once, run with optic_program_run,
 * data-parallel over emulated pod cores or MPI ranks, Adam (or --optimizer)
 * with warm-up + cosine through the step engine, checkpoints every K steps
 * and --resume through optic_step_engine_save / _restore_latest. Links only
 * the installed library (find_package(optic CONFIG)). */
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

#include "mlp_trainer.h"

#define TRY(call, what)                                                 \
  do {                                                                  \
    if ((call) != OPTIC_OK) {                                           \
      fprintf(stderr, "mlp_train: %s: %s\n", what, optic_last_error()); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* ------------------------------------------------------------ gradients */
optic_status shard_gradients(trainer *t, optic_exec_ctx_t *ctx, int shard, float *grad_out) {
  const model *md = &t->md;
  const int n = md->n;
  optic_tensor in[MAX_PARAMS + 3], out[1 + MAX_PARAMS];
  for (int i = 0; i < n; i++) in[i] = md->p[i];
  int64_t xd[2] = {t->shard_batch, md->in}, yd[2] = {t->shard_batch, md->classes};
  optic_shape xs, ys, scalar;
  optic_shape_make(2, xd, &xs);
  optic_shape_make(2, yd, &ys);
  optic_shape_make(0, NULL, &scalar);
  optic_tensor_make(OPTIC_F32, &xs, t->xb + shard * t->shard_batch * md->in, &in[n]);
  optic_tensor_make(OPTIC_F32, &ys, t->yb + shard * t->shard_batch * md->classes, &in[n + 1]);
  optic_tensor_make(OPTIC_F32, &scalar, &t->grad_scale, &in[n + 2]);
  optic_tensor_make(OPTIC_F32, &scalar, &t->shard_loss[shard], &out[0]);
  tensors_over(md, grad_out, out + 1);
  return optic_program_run(t->train_prog, ctx, in, n + 3, out, 1 + n);
}

/* Emulated pod: core c computes its share of this process's shards into its
 * own gathered buffer, then the pod's all-gather gives every core all of them. */
static optic_status pod_core_fn(optic_pod_core_t *core, void *user) {
  trainer *t = user;
  int c = optic_pod_core_index(core), n = optic_pod_core_count(core), per = t->local_shards / n;
  const size_t P = t->md.total;
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

/* Samples the global batch (with replacement) from the training set. */
static void sample_batch(trainer *t) {
  const model *d = &t->md;
  for (int64_t r = 0; r < t->o.batch; r++) {
    int64_t idx = (int64_t)(rng_next(&t->rng) % (uint64_t)t->train.n);
    memcpy(t->xb + r * d->in, t->train.x + idx * d->in, sizeof(float) * (size_t)d->in);
    for (int64_t c = 0; c < d->classes; c++) t->yb[r * d->classes + c] = t->train.label[idx] == c;
  }
}

/* Every shard's gradients (pod cores, MPI ranks or this thread), then the
 * sum over shards in shard order: the same additions whatever ran them, so
 * every configuration gives the same bits. */
static optic_status global_gradients(trainer *t) {
  const size_t P = t->md.total;
  optic_status st = OPTIC_OK;
  if (t->pod) st = optic_pod_run(t->pod, pod_core_fn, t, NULL);
  else
    for (int s = t->first_shard; s < t->first_shard + t->local_shards && st == OPTIC_OK; s++)
      st = shard_gradients(t, t->ctx[0], s, t->gathered + (size_t)s * P);
  if (st == OPTIC_OK && t->mpi) {
    float losses[SHARDS];
    st = optic_pod_mpi_all_gather(t->mpi, t->gathered + (size_t)t->first_shard * P, t->gathered, SHARDS * P, OPTIC_F32);
    if (st == OPTIC_OK)
      st = optic_pod_mpi_all_gather(t->mpi, t->shard_loss + t->first_shard, losses, SHARDS, OPTIC_F32);
    if (st == OPTIC_OK) memcpy(t->shard_loss, losses, sizeof losses);
  }
  for (size_t i = 0; st == OPTIC_OK && i < P; i++) {
    float acc = t->gathered[i];
    for (int s = 1; s < SHARDS; s++) acc += t->gathered[(size_t)s * P + i];
    t->grad[i] = acc;
  }
  return st;
}

/* ------------------------------------------------------------ evaluation */
static optic_status accuracy(trainer *t, double *acc) {
  const model *md = &t->md;
  const dataset *ds = &t->test;
  optic_tensor in[MAX_PARAMS + 1], out;
  for (int i = 0; i < md->n; i++) in[i] = md->p[i];
  int64_t xd[2] = {ds->n, md->in};
  optic_shape xs;
  optic_shape_make(2, xd, &xs);
  optic_tensor_make(OPTIC_F32, &xs, ds->x, &in[md->n]);
  memset(&out, 0, sizeof out); /* data NULL: the context provides the logits */
  optic_status st = optic_program_run(t->fwd_prog, t->ctx[0], in, md->n + 1, &out, 1);
  if (st != OPTIC_OK) return st;
  const float *z = out.data;
  int64_t ok = 0, C = md->classes;
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
 * The trainer's own entries: the parameters, the batch sampler's RNG state
 * (u64[1]) and the running epoch loss (f64[1]). The optimizer's whole state
 * (moments, step counts, hyperparameters) goes with them through the step
 * engine's calls: no conversion here. */
static int ckpt_entries(trainer *t, optic_named_tensor *e) {
  optic_shape one;
  int64_t d1 = 1;
  const int n = t->md.n;
  optic_shape_make(1, &d1, &one);
  for (int i = 0; i < n; i++) e[i] = (optic_named_tensor){t->md.name[i], t->md.p[i]};
  e[n] = (optic_named_tensor){"train/rng", {OPTIC_U64, one, &t->rng}};
  e[n + 1] = (optic_named_tensor){"train/epoch_loss", {OPTIC_F64, one, &t->epoch_loss}};
  return n + 2;
}

static optic_status save_checkpoint(trainer *t) {
  optic_named_tensor e[MAX_PARAMS + 2];
  const int n = ckpt_entries(t, e);
  const char *dirs[1] = {t->o.ckpt_dir};
  optic_ckpt_save_options so = {.size = sizeof so, .keep = (uint32_t)t->o.keep};
  return optic_step_engine_save(t->engine, dirs, 1, t->step, e, (size_t)n, NULL, 0, &so);
}

static int resume(trainer *t) {
  optic_named_tensor e[MAX_PARAMS + 2];
  const int n = ckpt_entries(t, e);
  const char *dirs[1] = {t->o.ckpt_dir};
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  optic_status st = optic_step_engine_restore_latest(t->engine, dirs, 1, e, (size_t)n, NULL, &rep);
  if (st == OPTIC_ERR_NOT_FOUND) {
    if (t->rank == 0) printf("resume: no checkpoint in %s, starting at step 0\n", t->o.ckpt_dir);
    return 0;
  }
  TRY(st, "restoring the newest checkpoint");
  t->step = rep.step;
  if (t->rank == 0)
    printf("resume: continuing from step %" PRIu64 "%s\n", t->step, rep.skipped ? " (newer ones were damaged)" : "");
  return 0;
}

/* ------------------------------------------------------------ setup */
static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  bool ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "mlp_train: cannot write %s\n", path);
  return ok ? 0 : 1;
}

/* Builds the forward graph once, the gradient program from it, compiles both. */
static int build_programs(trainer *t) {
  const options *o = &t->o;
  TRY(model_build(&t->md, t->shard_batch, o->test_size, o->hand_gradients, &t->train_mod, &t->fwd_mod),
      "building the graphs");
  if (o->dump_hlo && t->rank == 0) {
    char *text = NULL;
    TRY(optic_module_to_hlo_text(t->train_mod, &text), "printing the training graph");
    int bad = write_text(o->dump_hlo, text);
    optic_string_free(text);
    if (bad) return 1;
  }
  TRY(optic_compile(t->train_mod, NULL, &t->train_prog), "compiling the training graph");
  TRY(optic_compile(t->fwd_mod, NULL, &t->fwd_prog), "compiling the forward graph");
  return 0;
}

/* The optimizer (--optimizer, PyTorch defaults, linear warm-up then cosine
 * decay to 5% of lr) and the step engine that runs it: one replica, as the
 * gradients arrive already reduced. */
static int build_optimizer(trainer *t) {
  const options *o = &t->o;
  optic_optim_options oo = {.size = sizeof oo, .threads = 1};
  optic_optim_hparams hp;
  TRY(optic_optim_create(&oo, &t->opt), "optimizer");
  TRY(optic_optim_hparams_default(o->optimizer, OPTIC_OPTIM_CONVENTION_DEFAULT, &hp), "hparams");
  hp.lr = o->lr;
  if (o->steps > o->warmup) /* else (a run of one step) the rate stays constant */
    hp.schedule = (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE,
                                      .warmup_steps = (uint64_t)o->warmup,
                                      .decay_steps = (uint64_t)o->steps,
                                      .min_lr = o->min_lr};
  TRY(optic_optim_add_group(t->opt, &hp, (size_t)t->md.n, t->md.shape, NULL), "optimizer group");
  optic_step_engine_options so = optic_step_engine_options_default();
  TRY(optic_step_engine_create(t->opt, &so, &t->engine), "step engine");
  return 0;
}

static int setup(trainer *t) {
  const options *o = &t->o;
  const int units = o->mpi ? t->ranks * o->cores : o->cores; /* who computes shards */
  if (SHARDS % units) {
    fprintf(stderr, "mlp_train: %d ranks/cores do not divide the %d shards\n", units, SHARDS);
    return 2;
  }
  t->shard_batch = o->batch / SHARDS;
  t->grad_scale = 1.0f / (float)o->batch; /* the seed: shard gradients add up to the global mean's */
  t->rng = o->seed * 0x2545f4914f6cdd1dull + 1;
  t->first_shard = o->mpi ? t->rank * (SHARDS / t->ranks) : 0;
  t->local_shards = o->mpi ? SHARDS / t->ranks : SHARDS;
  if (o->mpi) {
    optic_pod_mpi_options mo = {.size = sizeof mo};
    TRY(optic_pod_mpi_create(&mo, &t->mpi), "MPI pod backend");
  }
  model_init(&t->md, o, &t->rng);
  model_data(&t->md, o->seed, o->train_size, o->test_size, &t->train, &t->test);
  if (build_programs(t) || build_optimizer(t)) return 1;
  for (int c = 0; c < o->cores; c++) {
    optic_exec_options eo = optic_exec_options_default();
    eo.threads = o->threads;
    TRY(optic_exec_ctx_create(&eo, &t->ctx[c]), "execution context");
  }
  if (o->cores > 1) {
    optic_pod_options po = {.size = sizeof po, .cores = o->cores};
    TRY(optic_pod_create(&po, &t->pod), "emulated pod");
  }
  t->xb = malloc(sizeof(float) * (size_t)(o->batch * t->md.in));
  t->yb = malloc(sizeof(float) * (size_t)(o->batch * t->md.classes));
  t->gathered = malloc(sizeof(float) * t->md.total * SHARDS * (size_t)o->cores);
  t->grad = malloc(sizeof(float) * t->md.total);
  tensors_over(&t->md, t->grad, t->gt);
  if (o->ckpt_dir && t->rank == 0 && mkdir(o->ckpt_dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "mlp_train: cannot create %s: %s\n", o->ckpt_dir, strerror(errno));
    return 1;
  }
  return 0;
}

static void teardown(trainer *t) {
  optic_step_engine_destroy(t->engine);
  optic_optim_destroy(t->opt);
  optic_pod_destroy(t->pod);
  for (int c = 0; c < SHARDS; c++) optic_exec_ctx_destroy(t->ctx[c]);
  optic_program_destroy(t->train_prog);
  optic_program_destroy(t->fwd_prog);
  optic_module_destroy(t->train_mod);
  optic_module_destroy(t->fwd_mod);
  optic_pod_mpi_destroy(t->mpi);
  free(t->xb), free(t->yb), free(t->gathered), free(t->grad), free(t->md.params);
  dataset_free(&t->train);
  dataset_free(&t->test);
}

/* ------------------------------------------------------------ the loop */
static void print_header(const trainer *t) {
  char who[64];
  if (t->o.mpi) snprintf(who, sizeof who, "%d MPI ranks x %d pod cores", t->ranks, t->o.cores);
  else snprintf(who, sizeof who, "%d pod cores", t->o.cores);
  printf("mlp_train: %s, %zu parameters, batch %" PRId64 " (4 shards), %s, %s, %s gradients, %" PRId64
         " steps, %" PRId64 " steps/epoch\n",
         t->md.summary, t->md.total, t->o.batch, who, optic_optim_kind_name(t->o.optimizer),
         t->o.hand_gradients ? "hand-written" : "autodiff", t->o.steps, t->o.epoch_steps);
}

/* The loss curve: one line per epoch (and at the last step). */
static int end_of_epoch(trainer *t) {
  const uint64_t E = (uint64_t)t->o.epoch_steps, s = t->step;
  if (s % E != 0 && s != (uint64_t)t->o.steps) return 0;
  double acc = 0, lr = 0;
  TRY(accuracy(t, &acc), "evaluation");
  optic_optim_group_lr(t->opt, 0, &lr);
  uint64_t in_epoch = s % E ? s % E : E;
  if (t->rank == 0)
    printf("epoch %3" PRIu64 "  step %6" PRIu64 "  loss %.6f  test_acc %.4f  lr %.3g\n", (s + E - 1) / E, s,
           t->epoch_loss / (double)in_epoch, acc, lr);
  t->epoch_loss = 0;
  fflush(stdout);
  return 0;
}

static void print_final(const trainer *t) {
  if (t->rank != 0) return;
  printf("final params fnv1a64 %016" PRIx64 "\n", fnv1a(t->md.params, t->md.total * sizeof(float)));
  optic_step_engine_metrics em;
  if (optic_step_engine_metrics_get(t->engine, &em) == OPTIC_OK && em.steps > 0)
    printf("optimizer update (step engine): %.2f us per step measured, %.2f us estimated, %.0f bytes moved\n",
           em.mean_step_ns / 1e3, em.est_step_ns / 1e3, em.update_bytes_per_step);
}

static int train(trainer *t) {
  if (t->o.resume && resume(t)) return 1;
  if (t->rank == 0) print_header(t);
  while (t->step < (uint64_t)t->o.steps) {
    sample_batch(t);
    TRY(global_gradients(t), "gradients");
    TRY(optic_step_engine_step(t->engine, t->md.p, t->gt, (size_t)t->md.n), "optimizer step");
    double loss = 0;
    for (int s = 0; s < SHARDS; s++) loss += (double)t->shard_loss[s];
    t->epoch_loss += loss / (double)t->o.batch;
    t->step++;
    if (end_of_epoch(t)) return 1;
    if (t->o.ckpt_dir && t->rank == 0 && t->step % (uint64_t)t->o.ckpt_every == 0)
      TRY(save_checkpoint(t), "saving a checkpoint");
    if (t->o.kill_at_step >= 0 && t->step == (uint64_t)t->o.kill_at_step) {
      fflush(stdout);
      raise(SIGKILL); /* test hook: die as a crash would */
    }
  }
  print_final(t);
  return 0;
}

/* ------------------------------------------------------------ options */
static void usage(void) {
  fprintf(stderr,
          "usage: mlp_train [options]\n"
          "  --model NAME      mlp (default: 64-H-H-10 on teacher-labelled vectors) or conv (a convnet on 8x8\n"
          "                    pattern images: conv3x3-C, conv3x3 stride 2 -2C, global max-pool, dense-10)\n"
          "  --steps N         training steps (default 3000)\n"
          "  --batch N         global batch, split in 4 shards (default 64)\n"
          "  --hidden N        mlp: width of both hidden layers (default 256)\n"
          "  --channels N      conv: C, the first convolution's output channels (default 16)\n"
          "  --cores N         emulated pod cores (per rank with --mpi): 1, 2 or 4 (default 4; 1 with --mpi)\n"
          "  --threads N       threads of each core's runs (default 1)\n"
          "  --seed N          data, init and batch sampling seed (default 1)\n"
          "  --optimizer NAME  sgd, adam (default), adamw, rmsprop, adagrad, lamb, lion (their default settings)\n"
          "  --lr X            peak learning rate (default 3e-3, conv 3e-2); --warmup N steps (default steps/10)\n"
          "  --train-size N / --test-size N   (default 32768 / 1024)\n"
          "  --ckpt-dir DIR    save a checkpoint every --ckpt-every K steps (default 100), keep 3\n"
          "  --resume          continue from the newest valid checkpoint in --ckpt-dir\n"
          "  --mpi             data-parallel over MPI ranks (1, 2 or 4 ranks) instead of pod cores\n"
          "  --dump-hlo FILE   write the training step's graph as HLO text (e.g. for hlo_cost)\n"
          "  --mpi-available   print yes if --mpi can work (MPI in this build and in optic), and exit\n"
          "  --gradcheck       compare the gradient graph with finite differences and exit\n"
          "  --hand-gradients  mlp: use the hand-written backward pass instead of autodiff (for comparison)\n"
          "  --kill-at-step N  test hook: SIGKILL this process after step N\n");
}

static int check_options(options *o);

static int parse(int argc, char **argv, options *o) {
  *o = (options){.steps = 3000,
                 .batch = 64,
                 .hidden = 256,
                 .channels = 16,
                 .train_size = 32768,
                 .test_size = 1024,
                 .cores = 0,
                 .threads = 1,
                 .ckpt_every = 100,
                 .keep = 3,
                 .seed = 1,
                 .lr = 0, /* 0: the model's default */
                 .warmup = -1,
                 .kill_at_step = -1,
                 .optimizer = OPTIC_OPTIM_KIND_ADAM};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(flag, field, value)    \
  if (strcmp(a, flag) == 0 && v) { \
    o->field = value;              \
    i++;                           \
    continue;                      \
  } else (void)0
#define NUM(flag, field) OPT(flag, field, strtoll(v, NULL, 0))
#define FLAG(flag, field)     \
  if (strcmp(a, flag) == 0) { \
    o->field = true;          \
    continue;                 \
  } else (void)0
    // clang-format off
    NUM("--steps", steps); NUM("--batch", batch); NUM("--hidden", hidden); NUM("--channels", channels);
    NUM("--cores", cores); NUM("--threads", threads); NUM("--seed", seed); NUM("--warmup", warmup);
    NUM("--train-size", train_size); NUM("--test-size", test_size); NUM("--ckpt-every", ckpt_every);
    NUM("--kill-at-step", kill_at_step); OPT("--lr", lr, strtod(v, NULL));
    OPT("--ckpt-dir", ckpt_dir, v); OPT("--dump-hlo", dump_hlo, v);
    FLAG("--resume", resume); FLAG("--mpi", mpi); FLAG("--gradcheck", gradcheck);
    FLAG("--hand-gradients", hand_gradients);
    // clang-format on
#undef FLAG
#undef NUM
#undef OPT
    if (strcmp(a, "--model") == 0 && v && (strcmp(v, "mlp") == 0 || strcmp(v, "conv") == 0)) {
      o->model = strcmp(v, "conv") == 0 ? MODEL_CONV : MODEL_MLP;
      i++;
      continue;
    }
    if (strcmp(a, "--optimizer") == 0 && v) {
      if (optic_optim_kind_from_name(v, &o->optimizer) != OPTIC_OK) {
        fprintf(stderr, "mlp_train: --optimizer: %s\n", optic_last_error());
        return 2;
      }
      i++;
      continue;
    }
    usage();
    return 2;
  }
  return check_options(o);
}

/* The defaults that depend on other options, and the checks. */
static int check_options(options *o) {
  if (o->cores == 0) o->cores = o->mpi ? 1 : 4;
  if (o->model == MODEL_CONV && o->hand_gradients) {
    fprintf(stderr, "mlp_train: --hand-gradients: the convnet has no hand-written backward pass\n");
    return 2;
  }
  if (o->batch % SHARDS || o->batch <= 0 || o->steps <= 0 || o->hidden <= 0 || o->channels <= 0 || o->cores <= 0 ||
      SHARDS % o->cores || o->threads <= 0 || o->ckpt_every <= 0 || o->train_size <= 0 || o->test_size <= 0 ||
      (o->resume && !o->ckpt_dir)) {
    fprintf(stderr, "mlp_train: bad options (batch a multiple of 4, cores 1/2/4, --resume needs --ckpt-dir)\n");
    return 2;
  }
  if (o->lr == 0) o->lr = o->model == MODEL_CONV ? 3e-2 : 3e-3; /* not given */
  if (o->warmup < 0) o->warmup = o->steps / 10 > 0 ? o->steps / 10 : 1;
  o->epoch_steps = o->train_size / o->batch > 0 ? o->train_size / o->batch : 1;
  o->min_lr = o->lr * 0.05;
  return 0;
}

static int mpi_available(void) { /* for scripts: can --mpi work? */
#ifdef MLP_TRAIN_HAVE_MPI
  printf("%s\n", optic_pod_mpi_built() ? "yes" : "no");
#else
  printf("no\n");
#endif
  return 0;
}

static int mpi_begin(trainer *t, int *argc, char ***argv) {
  t->rank = 0, t->ranks = 1;
  if (!t->o.mpi) return 0;
#ifdef MLP_TRAIN_HAVE_MPI
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t->ranks);
  return 0;
#else
  (void)argc, (void)argv;
  fprintf(stderr, "mlp_train: --mpi: this build of the example has no MPI (MPI was not found)\n");
  return 1;
#endif
}

static void mpi_end(trainer *t) {
#ifdef MLP_TRAIN_HAVE_MPI
  if (t->o.mpi) MPI_Finalize();
#else
  (void)t;
#endif
}

/* ------------------------------------------------------------ main */
int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--mpi-available") == 0) return mpi_available();
  trainer t;
  memset(&t, 0, sizeof t);
  int rc = parse(argc, argv, &t.o);
  if (rc) return rc;
  if (mpi_begin(&t, &argc, &argv)) return 1;
  rc = setup(&t);
  if (rc == 0 && t.o.gradcheck) {
    sample_batch(&t);
    rc = gradient_check(&t);
  } else if (rc == 0) {
    rc = train(&t);
  }
  teardown(&t);
  if (rc == 0 || t.o.mpi) mpi_end(&t);
  return rc;
}
