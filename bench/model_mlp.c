/* Model benchmark: one training step of the example trainer's MLP
 * (examples/mlp_train: 64-256-256-10, ReLU, softmax cross-entropy; the
 * grad_scale seed is an input), compiled into the suite so the bench measures
 * exactly what the example runs, in two forms:
 *  - model/mlp_train_step: the hand-written backward graph of
 *    examples/mlp_train/mlp_model.c (the example's --hand-gradients path);
 *  - model/mlp_train_step_autodiff: the same loss with its gradients from
 *    optic_autodiff_value_and_grad (the example's default), so the report can
 *    compare the two in one run.
 *  - model/mlp_train_step/batch:256/threads:T: optic_program_run of the
 *    training graph on a batch of 256 (one context of T threads) plus the
 *    Adam update through the step engine. Counters: samples_per_s, and the
 *    compiler's estimate of the same step for T threads: est_time_ns = the
 *    program's est_ns + the step engine's est_update_ns; omp_threads = T; est_flops, est_bytes,
 *    est_peak_bytes of the program; est_ratio = measured / estimated; and,
 *    from 8 profiled steps after the timed loop, op_ns:<op> / op_est_ns:<op>
 *    for the program's 12 slowest instructions (optic report's per-op plot).
 * Compilation, binding, the first step and the profiled steps are untimed. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "bench/memory.h"
#include "examples/mlp_train/mlp_model.h"
#include <optic/optic.h>

#define MODEL_MLP_BATCH 256

typedef struct mlp_case {
  optic_module_t *m;
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_profiler_t *prof;
  optic_optim_t *opt;
  optic_step_engine_t *engine;
  float *params, *grads, *x, *y, loss, grad_scale;
  optic_tensor in[MLP_PARAMS + 3], out[1 + MLP_PARAMS], pt[MLP_PARAMS];
} mlp_case;

static void mlp_case_free(mlp_case *c) {
  optic_step_engine_destroy(c->engine);
  optic_optim_destroy(c->opt);
  optic_exec_ctx_destroy(c->ctx);
  optic_profiler_destroy(c->prof);
  optic_program_destroy(c->p);
  optic_module_destroy(c->m);
  free(c->params);
  free(c->grads);
  free(c->x);
  free(c->y);
}

static bool mlp_case_init(mlp_case *c, const mlp_dims *d, int threads, bool hand_written) {
  size_t total = 0, off = 0;
  for (int i = 0; i < MLP_PARAMS; i++) total += mlp_param_count(d, i);
  c->params = calloc(total, sizeof(float));
  c->grads = calloc(total, sizeof(float));
  c->x = calloc((size_t)(MODEL_MLP_BATCH * d->in), sizeof(float));
  c->y = calloc((size_t)(MODEL_MLP_BATCH * d->classes), sizeof(float));
  if (!c->params || !c->grads || !c->x || !c->y) return false;
  bench_fill_f32(c->params, total, -0.05f, 0.05f);
  bench_fill_f32(c->x, (size_t)(MODEL_MLP_BATCH * d->in), -1.0f, 1.0f);
  for (int64_t r = 0; r < MODEL_MLP_BATCH; r++) c->y[r * d->classes + r % d->classes] = 1.0f;
  optic_shape shapes[MLP_PARAMS], s;
  for (int i = 0; i < MLP_PARAMS; i++) {
    mlp_param_shape(d, i, &shapes[i]);
    optic_tensor_make(OPTIC_F32, &shapes[i], c->params + off, &c->pt[i]);
    optic_tensor_make(OPTIC_F32, &shapes[i], c->grads + off, &c->out[1 + i]);
    c->in[i] = c->pt[i];
    off += mlp_param_count(d, i);
  }
  int64_t xd[2] = {MODEL_MLP_BATCH, d->in}, yd[2] = {MODEL_MLP_BATCH, d->classes};
  optic_shape_make(2, xd, &s);
  optic_tensor_make(OPTIC_F32, &s, c->x, &c->in[MLP_PARAMS]);
  optic_shape_make(2, yd, &s);
  optic_tensor_make(OPTIC_F32, &s, c->y, &c->in[MLP_PARAMS + 1]);
  optic_shape_make(0, NULL, &s);
  optic_tensor_make(OPTIC_F32, &s, &c->loss, &c->out[0]);
  c->grad_scale = 1.0f / MODEL_MLP_BATCH; /* the gradient program's seed input */
  optic_tensor_make(OPTIC_F32, &s, &c->grad_scale, &c->in[MLP_PARAMS + 2]);

  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  if (optic_profiler_create(NULL, &c->prof) != OPTIC_OK) return false; /* created disabled */
  eo.profiler = c->prof;
  optic_optim_options oo = {.size = sizeof oo, .threads = threads};
  optic_optim_hparams hp;
  optic_step_engine_options so = optic_step_engine_options_default();
  /* Estimates for the context's threads (the engine compiles for the optimizer's). */
  optic_compile_options co = optic_compile_options_default();
  co.threads = threads;
  return mlp_build_train(d, MODEL_MLP_BATCH, hand_written, &c->m) == OPTIC_OK &&
         optic_compile(c->m, &co, &c->p) == OPTIC_OK && optic_exec_ctx_create(&eo, &c->ctx) == OPTIC_OK &&
         optic_optim_create(&oo, &c->opt) == OPTIC_OK &&
         optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH, &hp) == OPTIC_OK &&
         optic_optim_add_group(c->opt, &hp, MLP_PARAMS, shapes, NULL) == OPTIC_OK &&
         optic_step_engine_create(c->opt, &so, &c->engine) == OPTIC_OK;
}

static bool mlp_step(mlp_case *c) {
  return optic_program_run(c->p, c->ctx, c->in, MLP_PARAMS + 3, c->out, 1 + MLP_PARAMS) == OPTIC_OK &&
         optic_step_engine_step(c->engine, c->pt, c->out + 1, MLP_PARAMS) == OPTIC_OK;
}

/* Per-op figures of the training program from a few profiled steps: the
 * slowest ops' measured and estimated time per step. */
static void per_op_counters(optic_bench_state *st, mlp_case *c) {
  enum { STEPS = 8, TOP = 12 };
  optic_profiler_enable(c->prof, true);
  bool ok = true;
  for (int i = 0; ok && i < STEPS; i++) ok = mlp_step(c);
  optic_profiler_enable(c->prof, false);
  if (ok) bench_report_op_times(st, c->prof, c->p, TOP);
}

/* user: non-NULL for the hand-written backward pass. */
static void run_mlp_train_step(optic_bench_state *st, void *user) {
  const bool hand_written = user != NULL;
  const int threads = (int)optic_bench_range(st, 1);
  const mlp_dims d = {64, 256, 256, 10};
  mlp_case c = {0};
  const double rss0 = bench_maxrss_bytes();
  if (!mlp_case_init(&c, &d, threads, hand_written) || !mlp_step(&c)) { /* the first step binds and compiles: untimed */
    optic_bench_skip_with_error(st, optic_last_error());
    mlp_case_free(&c);
    return;
  }
  uint64_t t0 = optic_now_ns();
  while (optic_bench_keep_running(st)) {
    if (!mlp_step(&c)) {
      optic_bench_skip_with_error(st, optic_last_error());
      break;
    }
  }
  int64_t it = optic_bench_iterations(st);
  double ns = it > 0 ? (double)(optic_now_ns() - t0) / (double)it : 0.0;
  optic_program_summary s;
  optic_step_engine_metrics em;
  if (it > 0 && optic_program_summary_get(c.p, &s) == OPTIC_OK &&
      optic_step_engine_metrics_get(c.engine, &em) == OPTIC_OK) {
    double est = s.est_ns + em.est_update_ns;
    optic_bench_counter(st, "samples_per_s", ns > 0 ? MODEL_MLP_BATCH * 1e9 / ns : 0, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_samples_per_s", est > 0 ? MODEL_MLP_BATCH * 1e9 / est : 0, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_time_ns", est, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_flops", s.cost.flops, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_bytes", s.cost.bytes_accessed + em.est_bytes_per_step, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_ratio", est > 0 ? ns / est : 0, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_set_items_processed(st, it * MODEL_MLP_BATCH);
    bench_report_memory(st, c.ctx, c.p,
                        bench_tensor_bytes(c.in, MLP_PARAMS + 2) + bench_tensor_bytes(c.out, 1 + MLP_PARAMS), rss0, 0);
    per_op_counters(st, &c);
  }
  mlp_case_free(&c);
}

void bench_register_model_mlp(void) {
  static char hand = 1;
  const char *names[2] = {"model/mlp_train_step", "model/mlp_train_step_autodiff"};
  for (int k = 0; k < 2; k++) {
    optic_bench *b = optic_bench_register(names[k], run_mlp_train_step, k == 0 ? &hand : NULL);
    for (int64_t t = 1; t <= 2; t++) OPTIC_BENCH_ARGS(b, MODEL_MLP_BATCH, t);
    OPTIC_BENCH_ARG_NAMES(b, "batch", "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
