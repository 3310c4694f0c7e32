/* exec/contexts/dot:256/contexts:C/threads:T: one 256^3 dot program run
 * 4 x REPS times per iteration, either on C = 4 contexts of T = 1 thread,
 * each on its own thread (REPS runs each), or on C = 1 context of T = 2
 * threads (all 4 x REPS runs in a row). Same work per iteration, so the
 * ratio of the two times is the throughput ratio (bar: 4 x 1 >= 0.8 x
 * 1 x 2 on 2 cores): 1-thread contexts must not start OpenBLAS threads of
 * their own (oversubscription). Each result is checked once after the loop
 * against the naive product. Compilation, binding and thread start-up of
 * the first run are untimed. The C = 4 case's threads are a team
 * (core/team.h: the caller and 3 workers) that lives across iterations, as
 * a server's threads, each owning a context, would: each iteration is one
 * team run, context t on thread t. Started afresh every iteration, 4 threads of a few ms on 2
 * cores were often placed 3 + 1 by the scheduler (4 busy loops of 5.6 ms
 * took 11-19 ms against 11.2 ideal; as workers, 10.8-11.5). Memory: the C pools' peaks
 * beside C x the planned run (bench/memory.h). Estimate: the program's
 * (compiled for T threads) x the runs, over min(C, cores) when C > 1. */
#include <stdlib.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"
#include "bench/memory.h"
#include "core/team.h"
#include <optic/optic.h>

enum { CTX_N = 256, CTX_REPS = 4, CTX_MAX = 4 };

typedef struct ctx_job {
  const optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_tensor in[2], out;
  int runs, bad;
} ctx_job;

static void *ctx_job_main(void *arg) {
  ctx_job *j = arg;
  for (int r = 0; r < j->runs && !j->bad; r++) {
    if (optic_program_run(j->p, j->ctx, j->in, 2, &j->out, 1) != OPTIC_OK) j->bad = 1;
  }
  return NULL;
}

/* Thread t of a team run: context t's job. */
static void ctx_team_job(void *arg, int t, int nt) {
  (void)nt;
  ctx_job_main(&((ctx_job *)arg)[t]);
}

static optic_program_t *dot_program(int threads) {
  optic_module_t *m = NULL;
  optic_comp_id e;
  optic_program_t *p = NULL;
  optic_shape s = {.rank = 2, .dims = {CTX_N, CTX_N}};
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_node_id a, b, y;
  optic_compile_options co = optic_compile_options_default();
  co.threads = threads;
  if (optic_module_create("ctx_dot", &m) == OPTIC_OK && optic_module_add_computation(m, "main", &e) == OPTIC_OK &&
      optic_graph_parameter(m, e, 0, &t, NULL, &a) == OPTIC_OK &&
      optic_graph_parameter(m, e, 1, &t, NULL, &b) == OPTIC_OK &&
      optic_graph_dot(m, e, a, b, &d, NULL, &y) == OPTIC_OK && optic_computation_set_root(m, e, y) == OPTIC_OK) {
    if (optic_compile(m, &co, &p) != OPTIC_OK) p = NULL;
  }
  optic_module_destroy(m);
  return p;
}

/* Whether job j's result is the naive product (small integers: exact). */
static bool ctx_job_correct(const ctx_job *j) {
  const float *a = j->in[0].data, *b = j->in[1].data, *y = j->out.data;
  for (int i = 0; i < CTX_N; i += 17) {
    for (int n = 0; n < CTX_N; n++) {
      float want = 0;
      for (int k = 0; k < CTX_N; k++) want += a[i * CTX_N + k] * b[k * CTX_N + n];
      if (y[i * CTX_N + n] != want) return false;
    }
  }
  return true;
}

/* The compiler's estimate of one iteration: its runs back to back on one
 * context, or shared out over the contexts, which run side by side on at
 * most the machine's cores (thread start-up not counted). */
static void report_contexts_estimate(optic_bench_state *st, const optic_program_t *p, int n_ctx) {
  optic_program_summary s;
  optic_machine host;
  if (optic_program_summary_get(p, &s) != OPTIC_OK || !bench_machine(0, &host)) return;
  const double runs = CTX_MAX * CTX_REPS, lanes = n_ctx < host.cores ? n_ctx : host.cores;
  const optic_cost c = {s.cost.flops * runs, s.cost.transcendentals * runs, s.cost.bytes_accessed * runs};
  bench_report_estimate(st, s.est_ns * runs / (lanes > 1 ? lanes : 1), &c);
}

static void run_contexts(optic_bench_state *st, void *user) {
  (void)user;
  const int n_ctx = (int)optic_bench_range(st, 1), threads = (int)optic_bench_range(st, 2);
  const double rss0 = bench_maxrss_bytes();
  optic_program_t *p = dot_program(threads);
  ctx_job jobs[CTX_MAX] = {0};
  float *buf = malloc(sizeof(float) * 3 * CTX_N * CTX_N * CTX_MAX);
  bool ok = p != NULL && buf != NULL && n_ctx >= 1 && n_ctx <= CTX_MAX;
  optic_shape s = {.rank = 2, .dims = {CTX_N, CTX_N}};
  for (int c = 0; ok && c < n_ctx; c++) {
    ctx_job *j = &jobs[c];
    float *base = buf + (size_t)c * 3 * CTX_N * CTX_N;
    for (int i = 0; i < CTX_N * CTX_N; i++)
      base[i] = (float)((i * 7) % 13) - 6, base[CTX_N * CTX_N + i] = (float)((i * 5) % 11) - 5;
    *j = (ctx_job){
        p, NULL, {{OPTIC_F32, s, base}, {OPTIC_F32, s, base + CTX_N * CTX_N}}, {OPTIC_F32, s, base + 2 * CTX_N * CTX_N},
        1, 0};
    optic_exec_options eo = optic_exec_options_default();
    eo.threads = threads;
    ok = optic_exec_ctx_create(&eo, &j->ctx) == OPTIC_OK;
    if (ok) ctx_job_main(j); /* untimed: binding, arenas */
    j->runs = CTX_MAX * CTX_REPS / n_ctx;
    ok = ok && !j->bad;
  }
  if (!ok) optic_bench_skip_with_error(st, p == NULL || buf == NULL ? "setup failed" : optic_last_error());
  /* the workers: core/team.h's, started once and kept across iterations */
  optic_team *team = ok && n_ctx > 1 ? optic_team_create() : NULL;
  if (ok && n_ctx > 1 && (team == NULL || optic_team_prepare(team, n_ctx) != n_ctx)) {
    optic_bench_skip_with_error(st, "cannot start the worker threads");
    ok = false;
  }
  while (ok && optic_bench_keep_running(st)) {
    if (n_ctx == 1) ctx_job_main(&jobs[0]);
    else optic_team_run(team, n_ctx, ctx_team_job, jobs);
    for (int c = 0; c < n_ctx; c++) ok = ok && !jobs[c].bad;
    if (!ok) optic_bench_skip_with_error(st, "a run failed");
  }
  optic_team_destroy(team);
  for (int c = 0; ok && c < n_ctx; c++) {
    if (!ctx_job_correct(&jobs[c])) {
      optic_bench_skip_with_error(st, "wrong result");
      ok = false;
    }
  }
  if (ok) {
    const double runs = (double)optic_bench_iterations(st) * CTX_MAX * CTX_REPS;
    optic_bench_set_items_processed(st, (int64_t)runs);
    optic_bench_counter(st, "runs_per_iteration", CTX_MAX * CTX_REPS, OPTIC_BENCH_COUNTER_PLAIN);
    const optic_exec_ctx_t *ctxs[CTX_MAX];
    for (int c = 0; c < n_ctx; c++) ctxs[c] = jobs[c].ctx;
    bench_report_memory_n(st, ctxs, n_ctx, p, sizeof(float) * 3.0 * CTX_N * CTX_N * n_ctx, rss0, 0);
    report_contexts_estimate(st, p, n_ctx);
  }
  for (int c = 0; c < n_ctx; c++) optic_exec_ctx_destroy(jobs[c].ctx);
  free(buf);
  optic_program_destroy(p);
}

void bench_register_exec_contexts(void) {
  optic_bench *b = optic_bench_register("exec/contexts", run_contexts, NULL);
  OPTIC_BENCH_ARGS(b, CTX_N, 4, 1);
  OPTIC_BENCH_ARGS(b, CTX_N, 1, 2);
  OPTIC_BENCH_ARGS(b, CTX_N, 1, 1); /* the same runs on one thread: the 1 x 2 case's scaling */
  OPTIC_BENCH_ARG_NAMES(b, "dot", "contexts", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
