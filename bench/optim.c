/* Optimizer steps through the public API (optic_optim_step on one group of
 * one f32 tensor of n parameters, `threads` OpenMP threads): what a trainer
 * linking optic pays per step, judged against the read-modify-write peer
 * (peer/rmw_axpy) and the raw fused kernel (kernel/optim/...) in the same
 * run. Real bytes per element as for the kernels: Adam/AdamW 28, SGD
 * momentum 20 (bench/kernels/optim.c). Clipping and the non-finite check are
 * off (each would add a pass over the gradients). cpu_GB/s and cpu_path_ns
 * come from the step's own profile (options.profile: the largest per-thread
 * CPU time of the update region), the same clock as the kernel harness.
 * Benchmark-only code. */
#include <optic/optim.h>

#include "bench/bench_util.h"
#include "bench/cpu_path.h"
#include "bench/elementwise.h"
#include "bench/estimate.h"
#include "bench/memory.h"
#include "bench/parallel.h"
#include "core/unconst.h"

typedef struct step_case {
  const char *name;
  optic_optim_kind kind;
  double bytes_per_element;
} step_case;

/* PyTorch defaults as in bench/kernels/optim.c: Adam, AdamW (λ 0.01), SGD
 * lr 0.1, momentum 0.9, weight decay 1e-4. */
static const step_case cases[] = {
    {"adam", OPTIC_OPTIM_KIND_ADAM, 28.0},
    {"adamw", OPTIC_OPTIM_KIND_ADAMW, 28.0},
    {"sgd_momentum", OPTIC_OPTIM_KIND_SGD, 20.0},
};

/* Memory: mem_peak_bytes, the high-water mark of what the optimizer (and
 * the engine around it) allocated through its allocator (state and tables;
 * read before the export below allocates its own description), beside
 * est_peak_bytes, the state it holds (the exported state tensors' bytes). */
static void report_state_memory(optic_bench_state *st, const optic_optim_t *opt, bench_counting_allocator *ca,
                                double rss0) {
  const double peak = (double)atomic_load(&ca->peak);
  optic_optim_state *s = NULL;
  if (optic_optim_state_export(opt, &s) != OPTIC_OK) return;
  double state = 0;
  for (size_t i = 0; i < s->tensor_count; i++) state += bench_tensor_bytes(&s->tensors[i].tensor, 1);
  optic_optim_state_destroy(s);
  optic_bench_counter(st, "mem_peak_bytes", peak, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_peak_bytes", state, OPTIC_BENCH_COUNTER_PLAIN);
  double now = bench_maxrss_bytes();
  optic_bench_counter(st, "maxrss_delta_bytes", now > rss0 ? now - rss0 : 0, OPTIC_BENCH_COUNTER_PLAIN);
}

/* The estimate of one profiled step of n parameters asked to run on
 * `threads`: the library's own step estimate (optic_optim_step_estimate_ns:
 * one fused update on the threads it runs on, bound by its real bytes, as
 * the compiled step's update counts them, or by the kind's per-element
 * arithmetic, with its dispatch, barrier and clock reads). 0 without a model. */
static double step_estimate_ns(const step_case *c, size_t n, int threads, double bytes) {
  optic_machine m;
  double ns = 0;
  if (!bench_machine(0, &m) || optic_optim_step_estimate_ns(&m, c->kind, n, bytes, threads, true, &ns) != OPTIC_OK)
    return 0;
  return ns;
}

static void run_step(optic_bench_state *st, void *user) {
  const step_case *c = user;
  const size_t n = (size_t)optic_bench_range(st, 0);
  const int threads = (int)optic_bench_range(st, 1);
  float *param = bench_f32_array(BENCH_OUTPUT_SLOT0, n), *grad = bench_f32_array(BENCH_INPUT_SLOT0, n);
  if (param == NULL || grad == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_fill_f32(param, n, 1.0f, 2.0f);
  optic_optim_hparams h;
  /* profile: the step reports its update's critical-path CPU time (the
   * largest per-thread CPU time of its share), the kernel harness's clock. */
  bench_counting_allocator ca;
  bench_counting_allocator_init(&ca);
  const double rss0 = bench_maxrss_bytes();
  optic_optim_options o = {.size = sizeof o, .threads = threads, .profile = true, .allocator = &ca.allocator};
  optic_optim_t *opt = NULL;
  int64_t dim = (int64_t)n;
  optic_shape shape;
  optic_tensor p, g;
  bool ok = optic_optim_hparams_default(c->kind, OPTIC_OPTIM_CONVENTION_PYTORCH, &h) == OPTIC_OK;
  if (c->kind == OPTIC_OPTIM_KIND_SGD) h.lr = 0.1, h.momentum = 0.9, h.weight_decay = 1e-4;
  ok = ok && optic_shape_make(1, &dim, &shape) == OPTIC_OK &&
       optic_tensor_make(OPTIC_F32, &shape, param, &p) == OPTIC_OK &&
       optic_tensor_make(OPTIC_F32, &shape, grad, &g) == OPTIC_OK && optic_optim_create(&o, &opt) == OPTIC_OK &&
       optic_optim_add_group(opt, &h, 1, &shape, NULL) == OPTIC_OK;
  /* One untimed step faults the state in and starts the threads. */
  ok = ok && optic_optim_step(opt, &p, &g, 1, NULL) == OPTIC_OK;
  if (!ok) {
    optic_bench_skip_with_error(st, optic_last_error());
    optic_optim_destroy(opt);
    return;
  }
  double cpu_ns = 0.0;
  bool failed = false;
  while (optic_bench_keep_running(st)) {
    optic_optim_step_report rep = {.update_cpu_ns = 0};
    if (!failed && optic_optim_step(opt, &p, &g, 1, &rep) != OPTIC_OK) {
      failed = true;
      optic_bench_skip_with_error(st, optic_last_error());
    }
    cpu_ns += (double)rep.update_cpu_ns;
  }
  if (!failed) report_state_memory(st, opt, &ca, rss0);
  optic_optim_destroy(opt);
  if (failed) return;
  const double bytes = c->bytes_per_element * (double)n;
  bench_report_rates(st, bytes, 0.0);
  bench_cpu_path c2 = {.total_ns = cpu_ns};
  bench_cpu_path_report(st, &c2, bytes, 0.0);
  optic_bench_set_items_processed(st, (int64_t)n * optic_bench_iterations(st));
  optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
  const optic_cost cost = {0, 0, bytes};
  bench_report_estimate(st, step_estimate_ns(c, n, threads, bytes), &cost);
}

/* The same step through the step engine (optic_step_engine_step, 1 core,
 * no profiler): the engine's per-step cache lookup, timing and metrics
 * around optic_optim_step. Also reports the engine's estimates: est_time_ns
 * (its step estimate, the fused step's model per group, the same as
 * optim/step's for this shape), est_ratio = measured / estimated, and
 * est_bytes (the compiled program's bytes accessed). */
static void run_engine_step(optic_bench_state *st, void *user) {
  const step_case *c = user;
  const size_t n = (size_t)optic_bench_range(st, 0);
  const int threads = (int)optic_bench_range(st, 1);
  float *param = bench_f32_array(BENCH_OUTPUT_SLOT0, n), *grad = bench_f32_array(BENCH_INPUT_SLOT0, n);
  if (param == NULL || grad == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_fill_f32(param, n, 1.0f, 2.0f);
  optic_optim_hparams h;
  bench_counting_allocator ca;
  bench_counting_allocator_init(&ca);
  const double rss0 = bench_maxrss_bytes();
  optic_optim_options o = {.size = sizeof o, .threads = threads, .profile = true, .allocator = &ca.allocator};
  optic_optim_t *opt = NULL;
  optic_step_engine_t *e = NULL;
  int64_t dim = (int64_t)n;
  optic_shape shape;
  optic_tensor p, g;
  bool ok = optic_optim_hparams_default(c->kind, OPTIC_OPTIM_CONVENTION_PYTORCH, &h) == OPTIC_OK;
  if (c->kind == OPTIC_OPTIM_KIND_SGD) h.lr = 0.1, h.momentum = 0.9, h.weight_decay = 1e-4;
  ok = ok && optic_shape_make(1, &dim, &shape) == OPTIC_OK &&
       optic_tensor_make(OPTIC_F32, &shape, param, &p) == OPTIC_OK &&
       optic_tensor_make(OPTIC_F32, &shape, grad, &g) == OPTIC_OK && optic_optim_create(&o, &opt) == OPTIC_OK &&
       optic_optim_add_group(opt, &h, 1, &shape, NULL) == OPTIC_OK &&
       optic_step_engine_create(opt, NULL, &e) == OPTIC_OK;
  /* One untimed step compiles, faults the state in and starts the threads. */
  ok = ok && optic_step_engine_step(e, &p, &g, 1) == OPTIC_OK;
  if (!ok) {
    optic_bench_skip_with_error(st, optic_last_error());
    optic_step_engine_destroy(e);
    optic_optim_destroy(opt);
    return;
  }
  double cpu_ns = 0.0;
  bool failed = false;
  const uint64_t t0 = optic_now_ns();
  while (optic_bench_keep_running(st)) {
    if (!failed && optic_step_engine_step(e, &p, &g, 1) != OPTIC_OK) {
      failed = true;
      optic_bench_skip_with_error(st, optic_last_error());
    }
    optic_step_engine_metrics m;
    optic_step_engine_metrics_get(e, &m);
    cpu_ns += (double)m.last_report.update_cpu_ns;
  }
  const double wall_ns = (double)(optic_now_ns() - t0);
  optic_step_engine_metrics m;
  optic_step_engine_metrics_get(e, &m);
  if (!failed) report_state_memory(st, opt, &ca, rss0);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  if (failed) return;
  const double bytes = c->bytes_per_element * (double)n;
  bench_report_rates(st, bytes, 0.0);
  bench_cpu_path c2 = {.total_ns = cpu_ns};
  bench_cpu_path_report(st, &c2, bytes, 0.0);
  optic_bench_set_items_processed(st, (int64_t)n * optic_bench_iterations(st));
  optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
  const double iters = (double)optic_bench_iterations(st);
  optic_bench_counter(st, "est_bytes", m.est_bytes_per_step, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_time_ns", m.est_step_ns, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_ratio", iters > 0 && m.est_step_ns > 0 ? wall_ns / iters / m.est_step_ns : 0.0,
                      OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "cache_hit_rate", m.cache_hit_rate, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_register_optim_steps(void) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bench_register_n_threads(bench_name("optim/step_engine/%s", cases[i].name), run_engine_step,
                             OPTIC_UNCONST(void *, &cases[i]), (int64_t)BENCH_N_IN_CACHE, (int64_t)BENCH_N_DRAM);
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bench_register_n_threads(bench_name("optim/step/%s", cases[i].name), run_step, OPTIC_UNCONST(void *, &cases[i]),
                             (int64_t)BENCH_N_IN_CACHE, (int64_t)BENCH_N_DRAM);
  }
}
