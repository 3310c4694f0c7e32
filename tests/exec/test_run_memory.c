/* The memory pool and the profiler through optic_program_run: a program with
 * 4 MiB buffers (huge-page arenas) run 10 times after a warm-up takes 0 minor
 * page faults and no pool traffic, on 1 and 2 threads; a smaller program on
 * the same context reuses the bigger one's arenas; an allocation failure
 * injected while a run reserves memory is retried (the cached arena freed
 * first) and gives the right result, or ends in OUT_OF_MEMORY naming the
 * bytes; reservation events and a trace of a real run (write_run_trace_file,
 * parsed by tests/exec/check_trace.py --run). */
#include <math.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include <optic/optic.h>

#include "tests/harness.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* 4 MiB buffers (huge-page arenas); smaller under sanitizers, which skip the
 * fault count and would take minutes over 4 MiB arrays. */
#if UNDER_SANITIZER
enum { BIG = 1 << 16, SMALL = 1 << 14 };
#else
enum { BIG = 1 << 20, SMALL = 1 << 18 };
#endif

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/* y = tanh(a * x + b) * a over n f32 compiled at `level`: at NONE every op
 * runs on its own and the intermediates live in the context's arena; at FULL
 * the chain is one fused loop. */
static optic_program_t *chain_program_at(int64_t n, optic_opt_level level) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("chain", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_shape s = {.rank = 1, .dims = {n}};
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id a, x, b, ax, axb, th, y;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t, NULL, &a));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &t, NULL, &x));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 2, &t, NULL, &b));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, a, x, NULL, &ax));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, ax, b, NULL, &axb));
  OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_TANH, axb, NULL, &th));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, th, a, NULL, &y));
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  OT_EXPECT_OK(optic_module_set_entry(m, c));
  optic_compile_options o = optic_compile_options_default();
  o.level = level;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, &o, &p));
  optic_module_destroy(m);
  if (p == NULL) exit(2);
  return p;
}

static optic_program_t *chain_program(int64_t n) { return chain_program_at(n, OPTIC_OPT_NONE); }

static float A[BIG], X[BIG], B[BIG], Y[BIG];

static void fill_inputs(void) {
  for (int i = 0; i < BIG; i++) {
    A[i] = (float)(i % 7) * 0.25f - 0.75f;
    X[i] = (float)(i % 11) * 0.125f - 0.5f;
    B[i] = (float)(i % 5) * 0.5f - 1.0f;
  }
}

static void bind(int64_t n, optic_tensor in[3], optic_tensor *out, float *y) {
  optic_shape s = {.rank = 1, .dims = {n}};
  in[0] = (optic_tensor){OPTIC_F32, s, A};
  in[1] = (optic_tensor){OPTIC_F32, s, X};
  in[2] = (optic_tensor){OPTIC_F32, s, B};
  *out = (optic_tensor){OPTIC_F32, s, y};
}

/* Max |y - naive| over n elements (tanh within the kernels' 2 ULP: 1e-6). */
static double max_error(const float *y, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double want = tanh((double)A[i] * X[i] + B[i]) * A[i];
    double e = fabs((double)y[i] - want);
    if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
  }
  return worst;
}

static optic_exec_ctx_t *make_ctx(int32_t threads, const optic_allocator *a, const optic_pool_options *po) {
  optic_exec_options o = optic_exec_options_default();
  o.threads = threads;
  o.allocator = a;
  o.pool = po;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  if (ctx == NULL) exit(2);
  return ctx;
}

/* 10 runs after 2 warm-up runs: 0 minor faults, no pool acquire at all,
 * right results; with caller outputs and with context outputs. */
static void ten_runs_no_faults(void) {
  fill_inputs();
  optic_program_t *p = chain_program(BIG);
  for (int32_t threads = 1; threads <= 2; threads++) {
    for (int ctx_out = 0; ctx_out <= 1; ctx_out++) {
      optic_exec_ctx_t *ctx = make_ctx(threads, NULL, NULL);
      optic_tensor in[3], out;
      bind(BIG, in, &out, ctx_out ? NULL : Y);
      for (int w = 0; w < 2; w++) {
        if (ctx_out) out.data = NULL;
        OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
      }
      optic_pool_stats s0, s1;
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s0));
      long f0 = minor_faults();
      for (int r = 0; r < 10; r++) {
        if (ctx_out) out.data = NULL;
        OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
      }
      long f1 = minor_faults();
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s1));
      OT_CHECK(UNDER_SANITIZER || f1 - f0 == 0, "threads %d, context outputs %d: %ld minor faults in 10 runs",
               (int)threads, ctx_out, f1 - f0);
      OT_CHECK(s1.misses == s0.misses && s1.hits == s0.hits && s1.bytes_reserved == s0.bytes_reserved,
               "pool traffic in steady state: misses %lld -> %lld, hits %lld -> %lld", (long long)s0.misses,
               (long long)s1.misses, (long long)s0.hits, (long long)s1.hits);
      /* The intermediates (4 MiB each, sharing by liveness) are in the pool. */
      OT_CHECK(s1.bytes_in_use >= (size_t)4 * BIG, "in use %zu", s1.bytes_in_use);
      double err = out.data ? max_error(out.data, BIG) : INFINITY;
      OT_CHECK(err <= 1e-6, "threads %d: max error %g", (int)threads, err);
      optic_exec_ctx_destroy(ctx);
    }
  }
  optic_program_destroy(p);
}

/* A smaller program after a bigger one on the same context reserves
 * nothing; alternating them after a warm-up neither. */
static void smaller_program_reuses_arenas(void) {
  fill_inputs();
  optic_program_t *big = chain_program(BIG), *small = chain_program(SMALL);
  optic_exec_ctx_t *ctx = make_ctx(2, NULL, NULL);
  optic_tensor in[3], out;
  bind(BIG, in, &out, Y);
  OT_EXPECT_OK(optic_program_run(big, ctx, in, 3, &out, 1));
  optic_pool_stats s0, s1;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s0));
  bind(SMALL, in, &out, Y);
  OT_EXPECT_OK(optic_program_run(small, ctx, in, 3, &out, 1));
  OT_CHECK(max_error(Y, SMALL) <= 1e-6);
  for (int r = 0; r < 10; r++) {
    bind(r % 2 ? SMALL : BIG, in, &out, Y);
    OT_EXPECT_OK(optic_program_run(r % 2 ? small : big, ctx, in, 3, &out, 1));
  }
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s1));
  OT_CHECK(s1.misses == s0.misses && s1.bytes_reserved == s0.bytes_reserved,
           "the smaller program reserved memory: misses %lld -> %lld, reserved %zu -> %zu", (long long)s0.misses,
           (long long)s1.misses, s0.bytes_reserved, s1.bytes_reserved);
  OT_CHECK(max_error(Y, SMALL) <= 1e-6);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(big);
  optic_program_destroy(small);
}

/* An allocator whose next `fail` calls return NULL (or every call once
 * `always` is set); counts calls and frees. */
typedef struct injected {
  atomic_int fail, calls, frees;
  atomic_bool always;
} injected;

static void *injected_alloc(void *user, size_t size, size_t alignment) {
  injected *in = user;
  atomic_fetch_add(&in->calls, 1);
  if (atomic_load(&in->always)) return NULL;
  if (atomic_fetch_sub(&in->fail, 1) > 0) return NULL;
  atomic_fetch_add(&in->fail, 1);
  const optic_allocator *d = optic_default_allocator();
  return d->alloc(d->user, size, alignment);
}

static void injected_free(void *user, void *ptr, size_t size, size_t alignment) {
  injected *in = user;
  atomic_fetch_add(&in->frees, 1);
  const optic_allocator *d = optic_default_allocator();
  d->free(d->user, ptr, size, alignment);
}

/* The context holds the small program's arena; running the big one trades
 * it for a bigger one: the small arena goes to the cache, the reservation
 * fails k times, the retry frees the cached arena first, and the run
 * succeeds with exactly k retries and the right result. */
static void retry_through_run(void) {
  fill_inputs();
  optic_program_t *big = chain_program(BIG), *small = chain_program(SMALL);
  for (int k = 1; k <= 3; k++) {
    injected inj = {0};
    optic_allocator a = {injected_alloc, injected_free, &inj};
    optic_pool_options po = optic_pool_options_default();
    po.max_retries = 3;
    po.backoff_ns = 1000;
    optic_exec_ctx_t *ctx = make_ctx(2, &a, &po);
    optic_tensor in[3], out;
    bind(SMALL, in, &out, Y);
    OT_EXPECT_OK(optic_program_run(small, ctx, in, 3, &out, 1));
    optic_pool_stats s0, s1;
    OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s0));
    int frees0 = atomic_load(&inj.frees);
    atomic_store(&inj.fail, k);
    bind(BIG, in, &out, Y);
    memset(Y, 0, sizeof Y);
    OT_EXPECT_OK(optic_program_run(big, ctx, in, 3, &out, 1));
    OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s1));
    OT_CHECK(s1.retries - s0.retries == k, "k=%d: %lld retries", k, (long long)(s1.retries - s0.retries));
    OT_CHECK(s1.trims > s0.trims && atomic_load(&inj.frees) > frees0,
             "k=%d: the cached arena was not given back before retrying", k);
    OT_CHECK(s1.failures == 0);
    double err = max_error(Y, BIG);
    OT_CHECK(err <= 1e-6, "k=%d: max error %g after the retried run", k, err);
    optic_exec_ctx_destroy(ctx);
  }
  /* Always failing: OUT_OF_MEMORY after max_retries + 1 attempts, naming the
   * bytes; the context stays usable once the allocator recovers. */
  injected inj = {0};
  optic_allocator a = {injected_alloc, injected_free, &inj};
  optic_pool_options po = optic_pool_options_default();
  po.max_retries = 2;
  po.backoff_ns = 1000;
  optic_exec_ctx_t *ctx = make_ctx(1, &a, &po);
  optic_tensor in[3], out;
  bind(BIG, in, &out, Y);
  atomic_store(&inj.always, true);
  int calls0 = atomic_load(&inj.calls);
  OT_EXPECT_STATUS(optic_program_run(big, ctx, in, 3, &out, 1), OPTIC_ERR_OUT_OF_MEMORY);
  OT_CHECK(strstr(optic_last_error(), " bytes") != NULL && strstr(optic_last_error(), "max_retries 2") != NULL, "%s",
           optic_last_error());
  OT_CHECK(atomic_load(&inj.calls) - calls0 == 3, "%d allocator calls", atomic_load(&inj.calls) - calls0);
  optic_pool_stats s;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s));
  OT_CHECK(s.failures == 1 && s.retries == 2);
  atomic_store(&inj.always, false);
  memset(Y, 0, sizeof Y);
  OT_EXPECT_OK(optic_program_run(big, ctx, in, 3, &out, 1));
  OT_CHECK(max_error(Y, BIG) <= 1e-6);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(big);
  optic_program_destroy(small);
}

/* exec options carry the caller's pool options by pointer: an older, shorter
 * struct gets defaults past its size (max_retries beyond it is not read); a
 * size of 0 is rejected. */
static void pool_options_through_context(void) {
  fill_inputs();
  optic_program_t *p = chain_program(SMALL);
  injected inj = {0};
  optic_allocator a = {injected_alloc, injected_free, &inj};
  optic_pool_options po = optic_pool_options_default();
  po.size = offsetof(optic_pool_options, max_retries);
  po.max_retries = 0; /* past size: the default (3) applies */
  po.backoff_ns = 0;
  optic_exec_ctx_t *ctx = make_ctx(1, &a, &po);
  atomic_store(&inj.fail, 2);
  optic_tensor in[3], out;
  bind(SMALL, in, &out, Y);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
  optic_pool_stats s;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s));
  OT_CHECK(s.retries == 2 && s.failures == 0, "retries %lld", (long long)s.retries);
  optic_exec_ctx_destroy(ctx);
  po.size = 0;
  optic_exec_options o = optic_exec_options_default();
  o.pool = &po;
  ctx = NULL;
  OT_EXPECT_STATUS(optic_exec_ctx_create(&o, &ctx), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(ctx == NULL);
  optic_program_destroy(p);
}

/* The first run reserves (RESERVE events with the arena sizes), later runs do not. */
static void reserve_events_on_first_run_only(void) {
  fill_inputs();
  optic_program_t *p = chain_program(SMALL);
  optic_profiler_options po = optic_profiler_options_default();
  po.enabled = true;
  optic_profiler_t *prof = NULL;
  OT_EXPECT_OK(optic_profiler_create(&po, &prof));
  optic_exec_options o = optic_exec_options_default();
  o.threads = 2;
  o.profiler = prof;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  optic_tensor in[3], out;
  bind(SMALL, in, &out, Y);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(prof, &n);
  int reserves = 0;
  double reserved = 0;
  for (size_t i = 0; i < n; i++)
    if (ev[i].kind == OPTIC_PROFILE_RESERVE) reserves++, reserved += ev[i].bytes;
  optic_pool_stats s;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &s));
  OT_CHECK(reserves == (int)s.misses && reserves >= 1, "%d reserve events, %lld misses", reserves, (long long)s.misses);
  OT_CHECK(reserved == (double)s.bytes_reserved, "reserve events sum %g, pool holds %zu", reserved, s.bytes_reserved);
  optic_profiler_clear(prof);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
  ev = optic_profiler_events(prof, &n);
  int later = 0, runs = 0;
  for (size_t i = 0; i < n; i++) later += ev[i].kind == OPTIC_PROFILE_RESERVE, runs += ev[i].kind == OPTIC_PROFILE_RUN;
  OT_CHECK(later == 0 && runs == 1, "%d reserve events in the second run", later);
  optic_exec_ctx_destroy(ctx);
  optic_profiler_destroy(prof);
  optic_program_destroy(p);
}

/* A real run's trace into $OPTIC_TRACE_OUT for check_trace.py --run: the
 * compile at FULL (its passes), 3 runs of the fused chain on 2 threads, the
 * reservations; the summary printed. */
static void write_run_trace_file(void) {
  const char *path = getenv("OPTIC_TRACE_OUT");
  if (path == NULL) return;
  fill_inputs();
  uint64_t t0 = optic_now_ns();
  optic_program_t *p = chain_program_at(BIG, OPTIC_OPT_FULL);
  optic_program_summary sum;
  memset(&sum, 0, sizeof sum);
  OT_EXPECT_OK(optic_program_summary_get(p, &sum));
  optic_profiler_options po = optic_profiler_options_default();
  po.enabled = true;
  optic_profiler_t *prof = NULL;
  OT_EXPECT_OK(optic_profiler_create(&po, &prof));
  OT_EXPECT_OK(optic_profiler_record_compile(prof, &sum.passes, sum.compile_seconds, p, t0));
  optic_exec_options o = optic_exec_options_default();
  o.threads = 2;
  o.profiler = prof;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  optic_tensor in[3], out;
  bind(BIG, in, &out, Y);
  for (int r = 0; r < 3; r++) OT_EXPECT_OK(optic_program_run(p, ctx, in, 3, &out, 1));
  OT_EXPECT_OK(optic_profiler_write_trace(prof, path));
  optic_profile_summary s;
  OT_EXPECT_OK(optic_profiler_summary(prof, p, &s));
  OT_CHECK(s.runs == 3 && s.op_count >= 1 && s.measured_ns > 0 && s.est_ns > 0, "runs %lld ops %zu", (long long)s.runs,
           s.op_count);
  char *text = NULL;
  OT_EXPECT_OK(optic_profile_summary_to_text(&s, &text));
  if (text) printf("%s", text);
  optic_string_free(text);
  optic_profile_summary_free(&s);
  optic_exec_ctx_destroy(ctx);
  optic_profiler_destroy(prof);
  optic_program_destroy(p);
}

static const ot_case cases[] = {
    {"ten_runs_no_faults", ten_runs_no_faults},
    {"smaller_program_reuses_arenas", smaller_program_reuses_arenas},
    {"retry_through_run", retry_through_run},
    {"pool_options_through_context", pool_options_through_context},
    {"reserve_events_on_first_run_only", reserve_events_on_first_run_only},
    {"write_run_trace_file", write_run_trace_file},
};

OT_MAIN(cases)
