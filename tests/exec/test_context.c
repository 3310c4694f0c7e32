/* The execution context: argument checks (counts, dtypes, shapes, NULL),
 * the while iteration cap (TIMEOUT, never a hang, on 1 and 2 threads),
 * context-allocated outputs, zero page faults and no pool traffic in steady
 * state, allocation failures injected through the pluggable allocator
 * (retried, then OUT_OF_MEMORY), and profiler events plus a Chrome trace of
 * a real run. The 4096-element programs here run each op on thread 0 alone
 * with split_min_elements = 32768; the 2-thread cases also run with 1, so
 * both threads work on every op (what the tsan-omp race check needs). */
#include <cblas.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "kernels/blas_threads.h"
#include "tests/exec/exec_util.h"

static optic_module_t *M;
static optic_comp_id C;

static void fresh(void) {
  optic_module_destroy(M);
  if (optic_module_create("t", &M) || optic_module_add_computation(M, "main", &C)) exit(2);
}

static optic_node_id param(optic_comp_id c, int32_t k, optic_dtype dt, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id;
  if (optic_graph_parameter(M, c, k, &t, NULL, &id)) exit(2);
  return id;
}

static optic_program_t *compile(optic_opt_level level) {
  optic_compile_options o = optic_compile_options_default();
  o.level = level;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(M, &o, &p));
  if (p == NULL) exit(2);
  return p;
}

/* y = tanh(x * x + x) over 4096 f32, plus its sum: two outputs. */
static optic_program_t *small_program(optic_opt_level level) {
  fresh();
  const int64_t n[] = {4096};
  optic_node_id x = param(C, 0, OPTIC_F32, 1, n), sq, s, y, zero, sum, t;
  optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, x, x, NULL, &sq);
  optic_graph_binary(M, C, OPTIC_OP_ADD, sq, x, NULL, &s);
  optic_graph_unary(M, C, OPTIC_OP_TANH, s, NULL, &y);
  optic_comp_id add;
  optic_module_add_computation(M, "add", &add);
  optic_node_id a = param(add, 0, OPTIC_F32, 0, NULL), b = param(add, 1, OPTIC_F32, 0, NULL), ab;
  optic_graph_binary(M, add, OPTIC_OP_ADD, a, b, NULL, &ab);
  optic_computation_set_root(M, add, ab);
  float z = 0;
  optic_graph_constant(M, C, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
  const int64_t d0 = 0;
  optic_graph_reduce(M, C, &y, &zero, 1, &d0, 1, add, NULL, &sum);
  optic_node_id els[2] = {y, sum};
  optic_graph_tuple(M, C, els, 2, NULL, &t);
  optic_computation_set_root(M, C, t);
  return compile(level);
}

static float xs[4096], ys[4096], total;

static void argument_checks(void) {
  optic_program_t *p = small_program(OPTIC_OPT_FULL);
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  optic_shape s = {.rank = 1, .dims = {4096}}, s0 = {.rank = 0}, bad = {.rank = 1, .dims = {4095}};
  optic_tensor in = {OPTIC_F32, s, xs}, out[2] = {{OPTIC_F32, s, ys}, {OPTIC_F32, s0, &total}};
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &in, 0, out, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "takes 1 inputs") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &in, 1, out, 1), OPTIC_ERR_INVALID_ARGUMENT);
  optic_tensor wrong = {OPTIC_S32, s, xs};
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &wrong, 1, out, 2), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "input 0 is s32[4096]; the program expects f32[4096]") != NULL, "%s",
           optic_last_error());
  wrong = (optic_tensor){OPTIC_F32, bad, xs};
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &wrong, 1, out, 2), OPTIC_ERR_SHAPE_MISMATCH);
  optic_tensor wout[2] = {out[0], {OPTIC_F32, s, ys}};
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &in, 1, wout, 2), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "output 1") != NULL, "%s", optic_last_error());
  wrong = (optic_tensor){OPTIC_F32, s, NULL};
  OT_EXPECT_STATUS(optic_program_run(p, ctx, &wrong, 1, out, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_program_run(NULL, ctx, &in, 1, out, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_program_run(p, NULL, &in, 1, out, 2), OPTIC_ERR_INVALID_ARGUMENT);
  optic_exec_options bado = optic_exec_options_default();
  bado.threads = -1;
  optic_exec_ctx_t *c2 = NULL;
  OT_EXPECT_STATUS(optic_exec_ctx_create(&bado, &c2), OPTIC_ERR_INVALID_ARGUMENT);
  bado = optic_exec_options_default();
  bado.device = 99;
  OT_EXPECT_STATUS(optic_exec_ctx_create(&bado, &c2), OPTIC_ERR_NOT_FOUND);
  optic_exec_ctx_destroy(ctx);
  optic_exec_ctx_destroy(NULL);
  optic_program_destroy(p);
}

static void while_cap(void) {
  fresh();
  optic_comp_id cond, body;
  optic_module_add_computation(M, "cond", &cond);
  optic_module_add_computation(M, "body", &body);
  const int64_t n[] = {8};
  optic_node_id cp = param(cond, 0, OPTIC_F32, 1, n), t;
  uint8_t one = 1;
  optic_graph_constant(M, cond, OPTIC_PRED, &(optic_shape){.rank = 0}, &one, 1, NULL, &t);
  optic_node_id cz;
  optic_graph_binary(M, cond, OPTIC_OP_AND, t, t, NULL, &cz);
  optic_computation_set_root(M, cond, cz);
  (void)cp;
  optic_node_id bp = param(body, 0, OPTIC_F32, 1, n), bn;
  optic_graph_unary(M, body, OPTIC_OP_NEGATE, bp, NULL, &bn);
  optic_computation_set_root(M, body, bn);
  optic_node_id x = param(C, 0, OPTIC_F32, 1, n), w;
  optic_graph_while(M, C, x, cond, body, NULL, &w);
  optic_computation_set_root(M, C, w);
  for (int level = 0; level <= 2; level += 2) {
    optic_program_t *p = compile((optic_opt_level)level);
    for (int32_t cfg = 0; cfg < 3; cfg++) {
      optic_exec_options o = optic_exec_options_default();
      o.threads = cfg == 0 ? 1 : 2;
      o.split_min_elements = cfg == 2 ? 1 : 0;
      o.max_while_iterations = 1000;
      optic_exec_ctx_t *ctx = NULL;
      OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
      float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, outv[8];
      optic_shape s = {.rank = 1, .dims = {8}};
      optic_tensor ti = {OPTIC_F32, s, in}, to = {OPTIC_F32, s, outv};
      OT_EXPECT_STATUS(optic_program_run(p, ctx, &ti, 1, &to, 1), OPTIC_ERR_TIMEOUT);
      OT_CHECK(strstr(optic_last_error(), "after 1000 iterations") != NULL, "%s", optic_last_error());
      /* the context stays usable */
      OT_EXPECT_STATUS(optic_program_run(p, ctx, &ti, 1, &to, 1), OPTIC_ERR_TIMEOUT);
      optic_exec_ctx_destroy(ctx);
    }
    optic_program_destroy(p);
  }
}

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

static void steady_state(void) {
  optic_program_t *p = small_program(OPTIC_OPT_FULL);
  for (int cfg = 0; cfg < 3; cfg++) {
    const int threads = cfg == 0 ? 1 : 2, split = cfg == 2;
    optic_exec_options o = optic_exec_options_default();
    o.threads = threads;
    o.split_min_elements = split;
    optic_exec_ctx_t *ctx = NULL;
    OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
    for (int i = 0; i < 4096; i++) xs[i] = (float)(i % 13) / 8.0f - 0.75f;
    optic_shape s = {.rank = 1, .dims = {4096}};
    optic_tensor in = {OPTIC_F32, s, xs}, out[2] = {{OPTIC_F32, s, NULL}, {OPTIC_F32, {0}, NULL}};
    OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
    OT_CHECK(out[0].data != NULL && out[1].data != NULL && out[1].shape.rank == 0 && out[0].dtype == OPTIC_F32);
    void *first = out[0].data;
    OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2)); /* the given pointers are now the caller's */
    optic_pool_stats before, after;
    OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &before));
    long f0 = minor_faults();
    for (int r = 0; r < 50; r++) {
      out[0].data = NULL, out[1].data = NULL;
      OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
    }
    long f1 = minor_faults();
    OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &after));
    OT_CHECK(out[0].data == first, "context outputs are reused across runs");
    if (strstr(optic_build_type(), "address") != NULL || strstr(optic_build_type(), "thread") != NULL) {
      /* ASan's quarantine hands its own bookkeeping and libgomp's per-region
       * allocations fresh pages, TSan maps shadow and sync metadata on first
       * touch: a few faults that are not the runtime's. */
      OT_CHECK(f1 - f0 <= 100, "threads %d split %d: %ld minor page faults in 50 runs (sanitizer)", threads, split,
               f1 - f0);
    } else {
      OT_CHECK(f1 - f0 == 0, "threads %d split %d: %ld minor page faults in 50 steady-state runs", threads, split,
               f1 - f0);
    }
    OT_CHECK(after.misses == before.misses && after.hits == before.hits, "no pool traffic in steady state");
    OT_CHECK(before.bytes_in_use > 0);
    double want = 0, mag = 0;
    for (int i = 0; i < 4096; i++) {
      float v = tanhf(xs[i] * xs[i] + xs[i]);
      OT_CHECK(fabsf(((float *)out[0].data)[i] - v) <= 1e-6f, "y[%d]", i);
      const double xd = (double)xs[i];
      want += tanh(xd * xd + xd), mag += fabs((double)v);
    }
    /* the reduction's bound (kernels/reduce.h) plus 1e-6 per tanh */
    double tol = 2.5 * log2(4097.0) * (double)FLT_EPSILON * mag + 4096 * 1e-6;
    const double got = (double)*(float *)out[1].data;
    OT_CHECK(fabs(got - want) <= tol, "sum %g vs %g (f64)", got, want);
    optic_exec_ctx_destroy(ctx);
  }
  optic_program_destroy(p);
}

/* An allocator that fails the first `fail` calls. */
typedef struct flaky {
  atomic_int calls, fail;
} flaky;

static void *flaky_alloc(void *user, size_t size, size_t alignment) {
  flaky *f = user;
  if (atomic_fetch_add(&f->calls, 1) < atomic_load(&f->fail)) return NULL;
  void *p = NULL;
  return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) ? NULL : p;
}

static void flaky_free(void *user, void *ptr, size_t size, size_t alignment) {
  (void)user, (void)size, (void)alignment;
  free(ptr);
}

static void injected_failures(void) {
  optic_program_t *p = small_program(OPTIC_OPT_NONE);
  optic_shape s = {.rank = 1, .dims = {4096}}, s0 = {.rank = 0};
  optic_tensor in = {OPTIC_F32, s, xs}, out[2] = {{OPTIC_F32, s, ys}, {OPTIC_F32, s0, &total}};
  for (int fail = 1; fail <= 2; fail++) {
    flaky f;
    atomic_init(&f.calls, 0);
    atomic_init(&f.fail, fail == 1 ? 2 : 1000);
    optic_allocator a = {flaky_alloc, flaky_free, &f};
    optic_pool_options po = optic_pool_options_default();
    po.max_retries = 3;
    po.backoff_ns = 1000;
    optic_exec_options o = optic_exec_options_default();
    o.allocator = &a;
    o.pool = &po;
    optic_exec_ctx_t *ctx = NULL;
    OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
    optic_pool_stats st;
    if (fail == 1) {
      OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2)); /* two failures, then the retry succeeds */
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &st));
      OT_CHECK(st.retries >= 2, "retries %lld", (long long)st.retries);
    } else {
      OT_EXPECT_STATUS(optic_program_run(p, ctx, &in, 1, out, 2), OPTIC_ERR_OUT_OF_MEMORY);
      OT_CHECK(strstr(optic_last_error(), "bytes") != NULL, "%s", optic_last_error());
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &st));
      OT_CHECK(st.failures >= 1);
    }
    optic_exec_ctx_destroy(ctx);
  }
  optic_program_destroy(p);
}

static void profiler_events(void) {
  optic_program_t *p = small_program(OPTIC_OPT_NONE);
  optic_exec_options o = optic_exec_options_default();
  o.threads = 2;
  o.profile = true;
  /* by size, not by this host's cost model: every op here stays on thread 0 */
  o.split_min_elements = 32768;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  optic_shape s = {.rank = 1, .dims = {4096}}, s0 = {.rank = 0};
  optic_tensor in = {OPTIC_F32, s, xs}, out[2] = {{OPTIC_F32, s, ys}, {OPTIC_F32, s0, &total}};
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  optic_profiler_t *prof = optic_exec_ctx_profiler(ctx);
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(prof, &n);
  int runs = 0, ops = 0, tanh_events = 0;
  for (size_t i = 0; i < n; i++) {
    runs += ev[i].kind == OPTIC_PROFILE_RUN;
    ops += ev[i].kind == OPTIC_PROFILE_OP;
    if (ev[i].kind == OPTIC_PROFILE_OP && strcmp(ev[i].detail, "tanh") == 0) {
      tanh_events++;
      OT_CHECK(ev[i].est_ns > 0 && ev[i].bytes > 0 && ev[i].end_ns >= ev[i].start_ns && ev[i].program == p);
    }
  }
  OT_CHECK(runs == 2, "%d run events", runs);
  /* 4096 elements: small enough that thread 0 runs each op alone (one event per run) */
  OT_CHECK(tanh_events == 2, "one tanh event per run, got %d", tanh_events);
  OT_CHECK(ops >= 2 * 4, "%d op events", ops);
  optic_profile_summary sum;
  OT_EXPECT_OK(optic_profiler_summary(prof, p, &sum));
  OT_CHECK(sum.runs == 2 && sum.op_count >= 4 && sum.est_ns > 0, "runs %lld ops %zu", (long long)sum.runs,
           sum.op_count);
  optic_profile_summary_free(&sum);
  char *json = NULL;
  OT_EXPECT_OK(optic_profiler_trace_json(prof, &json, NULL));
  OT_CHECK(json && strncmp(json, "{\"traceEvents\":[", 16) == 0 && strstr(json, "\"ph\":\"X\"") &&
           strstr(json, "\"name\":\"run\""));
  optic_string_free(json);
  /* profiling off: nothing recorded */
  optic_profiler_enable(prof, false);
  optic_profiler_clear(prof);
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  optic_profiler_events(prof, &n);
  OT_CHECK(n == 0);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
}

/* Both threads of a 2-thread context record their share of every op
 * (split_min_elements = 1): one event per thread per op, from threads 0 and 1. */
static void profiler_events_split(void) {
  optic_program_t *p = small_program(OPTIC_OPT_NONE);
  optic_exec_options o = optic_exec_options_default();
  o.threads = 2;
  o.profile = true;
  o.split_min_elements = 1;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  optic_shape s = {.rank = 1, .dims = {4096}}, s0 = {.rank = 0};
  optic_tensor in = {OPTIC_F32, s, xs}, out[2] = {{OPTIC_F32, s, ys}, {OPTIC_F32, s0, &total}};
  for (int i = 0; i < 4096; i++) xs[i] = (float)(i % 7) / 4.0f - 0.5f;
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 2));
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(optic_exec_ctx_profiler(ctx), &n);
  int tanh_by_thread[2] = {0, 0}, other = 0;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].kind != OPTIC_PROFILE_OP || strcmp(ev[i].detail, "tanh") != 0) continue;
    if (ev[i].thread == 0 || ev[i].thread == 1) tanh_by_thread[ev[i].thread]++;
    else other++;
  }
  OT_CHECK(tanh_by_thread[0] == 2 && tanh_by_thread[1] == 2 && other == 0,
           "tanh events by thread: %d, %d, other %d (want 2, 2, 0)", tanh_by_thread[0], tanh_by_thread[1], other);
  for (int i = 0; i < 4096; i++) {
    const float v = tanhf(xs[i] * xs[i] + xs[i]);
    if (fabsf(ys[i] - v) > 1e-6f) {
      OT_CHECK(false, "y[%d] = %g, want %g", i, (double)ys[i], (double)v);
      break;
    }
  }
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
}

/* One program, four contexts on four threads at once (a program is
 * immutable; contexts are independent), each checking its results. */
typedef struct conc_job {
  const optic_program_t *p;
  int threads, split, bad;
} conc_job;

/* The job's context (threads, split), or NULL with bad = 1. */
static optic_exec_ctx_t *conc_ctx(conc_job *j) {
  optic_exec_options o = optic_exec_options_default();
  o.threads = j->threads;
  o.split_min_elements = j->split;
  optic_exec_ctx_t *ctx = NULL;
  if (optic_exec_ctx_create(&o, &ctx) != OPTIC_OK) j->bad = 1;
  return ctx;
}

static void *conc_main(void *arg) {
  conc_job *j = arg;
  optic_exec_ctx_t *ctx = conc_ctx(j);
  if (ctx == NULL) return NULL;
  /* Each job its own input: one shared array filled by every job at once
   * was a data race (the tsan-omp check found it). */
  float in[4096], y[4096], sum;
  for (int i = 0; i < 4096; i++) in[i] = (float)(i % 5) * 0.25f;
  optic_shape s = {.rank = 1, .dims = {4096}}, s0 = {.rank = 0};
  optic_tensor ti = {OPTIC_F32, s, in}, to[2] = {{OPTIC_F32, s, y}, {OPTIC_F32, s0, &sum}};
  for (int r = 0; r < 20 && !j->bad; r++) {
    if (optic_program_run(j->p, ctx, &ti, 1, to, 2) != OPTIC_OK) j->bad = 2;
    for (int i = 0; i < 4096 && !j->bad; i++) {
      if (fabsf(y[i] - tanhf(in[i] * in[i] + in[i])) > 1e-6f) j->bad = 3;
    }
  }
  optic_exec_ctx_destroy(ctx);
  return NULL;
}

static void concurrent_contexts(void) {
  optic_program_t *p = small_program(OPTIC_OPT_FULL);
  pthread_t th[4];
  conc_job jobs[4];
  for (int i = 0; i < 4; i++) {
    /* jobs 1 and 3: 2-thread teams that split every op, running at once */
    jobs[i] = (conc_job){p, 1 + i % 2, i % 2, 0};
    OT_CHECK(pthread_create(&th[i], NULL, conc_main, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    OT_CHECK(jobs[i].bad == 0, "job %d failed (%d)", i, jobs[i].bad);
  }
  optic_program_destroy(p);
}

/* Oversubscribed: four 2-thread contexts (8 threads on this 2-core machine)
 * splitting every op, so every step ends in a barrier whose peers are
 * often descheduled; each context checks every result (the barrier's
 * sleep-at-once path under contention). */
static void oversubscribed_contexts(void) {
  optic_program_t *p = small_program(OPTIC_OPT_FULL);
  pthread_t th[4];
  conc_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (conc_job){p, 2, 1, 0};
    OT_CHECK(pthread_create(&th[i], NULL, conc_main, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    OT_CHECK(jobs[i].bad == 0, "job %d failed (%d)", i, jobs[i].bad);
  }
  optic_program_destroy(p);
}

/* y = a . b through OpenBLAS: a[64x96], b[96x80]. */
enum { DOT_M = 64, DOT_K = 96, DOT_N = 80 };
static optic_program_t *dot_program(void) {
  fresh();
  const int64_t ma[] = {DOT_M, DOT_K}, mb[] = {DOT_K, DOT_N};
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_node_id a = param(C, 0, OPTIC_F32, 2, ma), b = param(C, 1, OPTIC_F32, 2, mb), y;
  OT_EXPECT_OK(optic_graph_dot(M, C, a, b, &d, NULL, &y));
  OT_EXPECT_OK(optic_computation_set_root(M, C, y));
  return compile(OPTIC_OPT_FULL);
}

/* Small integers: every product and partial sum is exact in float, so the
 * result must equal the naive product bit for bit. */
static void *conc_dot_main(void *arg) {
  conc_job *j = arg;
  optic_exec_ctx_t *ctx = conc_ctx(j);
  if (ctx == NULL) return NULL;
  float a[DOT_M * DOT_K], b[DOT_K * DOT_N], y[DOT_M * DOT_N];
  for (int i = 0; i < DOT_M * DOT_K; i++) a[i] = (float)((i * 7 + j->threads) % 13) - 6.0f;
  for (int i = 0; i < DOT_K * DOT_N; i++) b[i] = (float)((i * 5) % 11) - 5.0f;
  optic_shape sa = {.rank = 2, .dims = {DOT_M, DOT_K}}, sb = {.rank = 2, .dims = {DOT_K, DOT_N}},
              sy = {.rank = 2, .dims = {DOT_M, DOT_N}};
  optic_tensor ti[2] = {{OPTIC_F32, sa, a}, {OPTIC_F32, sb, b}}, to = {OPTIC_F32, sy, y};
  for (int r = 0; r < 10 && !j->bad; r++) {
    memset(y, 0xff, sizeof y);
    if (optic_program_run(j->p, ctx, ti, 2, &to, 1) != OPTIC_OK) j->bad = 2;
    for (int i = 0; i < DOT_M && !j->bad; i++) {
      for (int n = 0; n < DOT_N && !j->bad; n++) {
        float want = 0.0f;
        for (int k = 0; k < DOT_K; k++) want += a[i * DOT_K + k] * b[k * DOT_N + n];
        if (y[i * DOT_N + n] != want) j->bad = 3;
      }
    }
  }
  optic_exec_ctx_destroy(ctx);
  return NULL;
}

/* A dot program on four contexts at once: 1-thread runs keep OpenBLAS on
 * their thread while 2-thread teams call it inside their region; afterwards
 * the OpenBLAS thread count is what it was. */
static void concurrent_contexts_dot(void) {
  optic_program_t *p = dot_program();
  const int blas_threads = openblas_get_num_threads();
  pthread_t th[4];
  conc_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (conc_job){p, 1 + i % 2, i % 2, 0};
    OT_CHECK(pthread_create(&th[i], NULL, conc_dot_main, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    OT_CHECK(jobs[i].bad == 0, "dot job %d (%d threads) failed (%d)", i, jobs[i].threads, jobs[i].bad);
  }
  OT_CHECK(openblas_get_num_threads() == blas_threads, "OpenBLAS threads %d after the runs, %d before",
           openblas_get_num_threads(), blas_threads);
  optic_program_destroy(p);
}

/* OS threads of this process (Linux: entries of /proc/self/task); -1 where
 * that is not readable. */
static int os_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* y = a . b, 256^3: large enough that OpenBLAS, called outside an active
 * OpenMP region with omp_get_max_threads() > 1, runs it on its own threads. */
enum { BIG = 256, BIG_JOBS = 4 };
typedef struct big_job {
  const optic_program_t *p;
  pthread_barrier_t *done; /* every job waits here after its runs, so the main thread counts threads */
  float *y;
  int bad;
} big_job;

static void big_inputs(float *a, float *b) {
  for (int i = 0; i < BIG * BIG; i++) a[i] = (float)((i * 7) % 13) - 6.0f, b[i] = (float)((i * 5) % 11) - 5.0f;
}

static void *big_main(void *arg) {
  big_job *j = arg;
  optic_exec_options o = optic_exec_options_default();
  o.threads = 1;
  optic_exec_ctx_t *ctx = NULL;
  float *a = malloc(sizeof(float) * BIG * BIG * 2);
  if (a == NULL || optic_exec_ctx_create(&o, &ctx) != OPTIC_OK) j->bad = 1;
  if (!j->bad) {
    big_inputs(a, a + BIG * BIG);
    optic_shape s = {.rank = 2, .dims = {BIG, BIG}};
    optic_tensor ti[2] = {{OPTIC_F32, s, a}, {OPTIC_F32, s, a + BIG * BIG}}, to = {OPTIC_F32, s, j->y};
    for (int r = 0; r < 3 && !j->bad; r++) {
      if (optic_program_run(j->p, ctx, ti, 2, &to, 1) != OPTIC_OK) j->bad = 2;
    }
  }
  pthread_barrier_wait(j->done);
  pthread_barrier_wait(j->done); /* released once the main thread has counted */
  optic_exec_ctx_destroy(ctx);
  free(a);
  return NULL;
}

/* Four 1-thread contexts on four threads running a 256^3 dot: no BLAS call
 * is made where OpenBLAS may start a team of its own (kernels/blas_threads.h
 * counts them), the process gains exactly the four job threads, and every
 * result equals the naive product bit for bit (small integers: exact in
 * float). Before each run set its region's OpenMP thread count to one, three
 * of the four jobs called OpenBLAS with omp_get_max_threads() = 2 (the
 * process-wide openblas_set_num_threads(1) of the first does not reach their
 * OpenMP setting), and those calls contended in OpenBLAS's exec_blas. */
static void contexts_start_no_blas_threads(void) {
  fresh();
  const int64_t d2[] = {BIG, BIG};
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_node_id a = param(C, 0, OPTIC_F32, 2, d2), b = param(C, 1, OPTIC_F32, 2, d2), y;
  OT_EXPECT_OK(optic_graph_dot(M, C, a, b, &d, NULL, &y));
  OT_EXPECT_OK(optic_computation_set_root(M, C, y));
  optic_program_t *p = compile(OPTIC_OPT_FULL);
  float *res = malloc(sizeof(float) * BIG * BIG * BIG_JOBS), *in = malloc(sizeof(float) * BIG * BIG * 2);
  OT_CHECK(res != NULL && in != NULL);
  pthread_barrier_t done;
  pthread_barrier_init(&done, NULL, BIG_JOBS + 1);
  const int before = os_threads();
  const uint64_t threaded0 = kernel_blas_threaded_calls();
  pthread_t th[BIG_JOBS];
  big_job jobs[BIG_JOBS];
  for (int i = 0; i < BIG_JOBS; i++) {
    jobs[i] = (big_job){p, &done, res + (size_t)i * BIG * BIG, 0};
    OT_CHECK(pthread_create(&th[i], NULL, big_main, &jobs[i]) == 0);
  }
  pthread_barrier_wait(&done);
  const int during = os_threads();
  pthread_barrier_wait(&done);
  for (int i = 0; i < BIG_JOBS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&done);
  const uint64_t threaded = kernel_blas_threaded_calls() - threaded0;
  OT_CHECK(threaded == 0, "%llu BLAS calls of 1-thread contexts could start OpenBLAS threads (want 0)",
           (unsigned long long)threaded);
  if (before >= 0) {
    OT_CHECK(during == before + BIG_JOBS, "process threads %d with %d 1-thread jobs running, %d before (want +%d)",
             during, BIG_JOBS, before, BIG_JOBS);
  }
  big_inputs(in, in + BIG * BIG);
  double *want = calloc((size_t)BIG * BIG, sizeof *want);
  OT_CHECK(want != NULL);
  for (int i = 0; i < BIG; i++) {
    for (int k = 0; k < BIG; k++) {
      for (int n = 0; n < BIG; n++) want[i * BIG + n] += (double)in[i * BIG + k] * (double)in[BIG * BIG + k * BIG + n];
    }
  }
  for (int j = 0; j < BIG_JOBS; j++) {
    OT_CHECK(jobs[j].bad == 0, "job %d failed (%d)", j, jobs[j].bad);
    for (int i = 0; i < BIG * BIG; i++) {
      if (res[(size_t)j * BIG * BIG + i] != (float)want[i]) {
        OT_CHECK(false, "job %d: y[%d] = %g, want %g", j, i, (double)res[(size_t)j * BIG * BIG + i], want[i]);
        break;
      }
    }
  }
  free(want);
  free(res);
  free(in);
  optic_program_destroy(p);
}

static void cleanup(void) {
  optic_module_destroy(M);
  M = NULL;
}

static const ot_case cases[] = {
    {"argument_checks", argument_checks},
    {"while_cap", while_cap},
    {"steady_state", steady_state},
    {"injected_failures", injected_failures},
    {"profiler_events", profiler_events},
    {"profiler_events_split", profiler_events_split},
    {"concurrent_contexts", concurrent_contexts},
    {"concurrent_contexts_dot", concurrent_contexts_dot},
    {"oversubscribed_contexts", oversubscribed_contexts},
    {"contexts_start_no_blas_threads", contexts_start_no_blas_threads},
    {"cleanup", cleanup},
};
OT_MAIN(cases)
