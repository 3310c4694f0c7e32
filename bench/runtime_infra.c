/* The runtime's memory pool and profiler against their peers in one run:
 * a cached arena (acquire, touch every page, release) vs a fresh block from
 * the default allocator each time (optic_alloc, touch, optic_free); recording
 * a profiler event vs a plain copy of the same event; the 100-op chain of
 * bench/exec.c run with a profiler attached, off and on, beside
 * exec/chain100 without one. Benchmark-only. */
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"
#include "exec/pool.h"
#include "exec/profile.h"
#include "core/unconst.h"

/* One byte per 4 KiB page: what the first use of an arena costs is the
 * mapping and the faults, not the bytes. */
static void touch_pages(unsigned char *p, size_t bytes, int v) {
  for (size_t i = 0; i < bytes; i += 4096) p[i] = (unsigned char)v;
  optic_bench_do_not_optimize(p);
}

static void bm_pool_hit(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  exec_pool *pool = NULL;
  exec_arena a;
  if (exec_pool_create(NULL, &pool) != OPTIC_OK || exec_pool_acquire(pool, bytes, NULL, 0, &a) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    exec_pool_destroy(pool);
    return;
  }
  exec_pool_release(pool, &a);
  int v = 0;
  while (optic_bench_keep_running(st)) {
    exec_pool_acquire(pool, bytes, NULL, 0, &a);
    touch_pages(a.data, bytes, ++v);
    exec_pool_release(pool, &a);
  }
  optic_pool_stats s;
  exec_pool_stats(pool, &s);
  optic_bench_counter(st, "misses", (double)s.misses, 0);
  exec_pool_destroy(pool);
  /* the model: one page touch per page (the acquire and release, tens of ns, are not in it) */
  optic_machine m;
  const double pages = (double)((bytes + 4095) / 4096);
  if (bench_machine(1, &m)) bench_report_estimate(st, pages * m.page_touch_ns, &(optic_cost){.bytes_accessed = pages});
}

static void bm_alloc_free(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  int v = 0;
  while (optic_bench_keep_running(st)) {
    void *p = NULL;
    if (optic_alloc(NULL, bytes, 64, &p) != OPTIC_OK) {
      optic_bench_skip_with_error(st, optic_last_error());
      return;
    }
    touch_pages(p, bytes, ++v);
    optic_free(NULL, p, bytes, 64);
  }
}

static void bm_profiler_record(optic_bench_state *st, void *user) {
  (void)user;
  optic_profiler_options o = optic_profiler_options_default();
  o.capacity = 4096;
  o.enabled = true;
  optic_profiler_t *p = NULL;
  if (optic_profiler_create(&o, &p) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  int64_t i = 0;
  while (optic_bench_keep_running(st)) {
    if ((++i & 4095) == 0) optic_profiler_clear(p); /* stay within capacity: every event is stored */
    optic_profiler_t *prof = exec_profiler_active(p);
    if (prof)
      exec_profiler_record_span(prof, OPTIC_PROFILE_FUSION, "fusion.12", "loop", NULL, 0, 0, i, 1, (uint64_t)i,
                                (uint64_t)i + 10, 2e6, 4096, 1234.5);
  }
  optic_profiler_destroy(p);
  optic_machine m;
  if (bench_machine(1, &m)) bench_report_estimate(st, m.profile_record_ns, NULL);
}

/* The peer: the same fields stored into a ring of events without the atomic
 * slot claim or the length-bounded name copies. */
static void bm_event_copy(optic_bench_state *st, void *user) {
  (void)user;
  static optic_profile_event ring[4096];
  int64_t i = 0;
  while (optic_bench_keep_running(st)) {
    optic_profile_event *e = &ring[++i & 4095];
    memcpy(e->name, "fusion.12", 10);
    memcpy(e->detail, "loop", 5);
    e->kind = OPTIC_PROFILE_FUSION;
    e->device = 0;
    e->thread = 0;
    e->node = i;
    e->run = 1;
    e->program = NULL;
    e->start_ns = (uint64_t)i;
    e->end_ns = (uint64_t)i + 10;
    e->flops = 2e6;
    e->bytes = 4096;
    e->est_ns = 1234.5;
    optic_bench_do_not_optimize(e);
  }
}

/* The chain behind the profiler benchmarks: y = ((x + w) * w + w) * w ...,
 * 100 dependent ops on 16 floats, fusion off, 1 thread (as
 * exec/chain100/fusion:0/threads:1/split:0), compiled once; contexts are
 * made per profiler mode. */
enum { CHAIN = 100, CHAIN_N = 16 };
typedef struct chain_case {
  optic_module_t *m;
  optic_program_t *p;
  optic_shape s;
  float xs[CHAIN_N], ws[CHAIN_N], ys[CHAIN_N];
  optic_tensor in[2], out;
} chain_case;

static bool chain_build(chain_case *c) {
  memset(c, 0, sizeof *c);
  optic_comp_id e;
  c->s = (optic_shape){.rank = 1, .dims = {CHAIN_N}};
  optic_type t = optic_type_array(OPTIC_F32, &c->s);
  optic_node_id x = OPTIC_NO_NODE, w = OPTIC_NO_NODE, y;
  optic_compile_options co = optic_compile_options_default();
  co.fusion = 0;
  co.threads = 1;
  bool ok = optic_module_create("chain", &c->m) == OPTIC_OK &&
            optic_module_add_computation(c->m, "main", &e) == OPTIC_OK &&
            optic_graph_parameter(c->m, e, 0, &t, NULL, &x) == OPTIC_OK &&
            optic_graph_parameter(c->m, e, 1, &t, NULL, &w) == OPTIC_OK;
  y = x;
  for (int i = 0; ok && i < CHAIN; i++)
    ok = optic_graph_binary(c->m, e, i % 2 ? OPTIC_OP_MULTIPLY : OPTIC_OP_ADD, y, w, NULL, &y) == OPTIC_OK;
  ok = ok && optic_computation_set_root(c->m, e, y) == OPTIC_OK && optic_compile(c->m, &co, &c->p) == OPTIC_OK;
  for (int i = 0; i < CHAIN_N; i++)
    c->xs[i] = 0.5f + 0.125f * (float)(i % 7), c->ws[i] = 0.25f + 0.125f * (float)(i % 5);
  c->in[0] = (optic_tensor){OPTIC_F32, c->s, c->xs};
  c->in[1] = (optic_tensor){OPTIC_F32, c->s, c->ws};
  c->out = (optic_tensor){OPTIC_F32, c->s, c->ys};
  return ok;
}

static void chain_free(chain_case *c) {
  optic_program_destroy(c->p);
  optic_module_destroy(c->m);
}

/* A 1-thread context with profiler prof attached (NULL: none), run once
 * untimed (binding, arenas). */
static bool chain_ctx(chain_case *c, optic_profiler_t *prof, optic_exec_ctx_t **ctx) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  eo.profiler = prof;
  return optic_exec_ctx_create(&eo, ctx) == OPTIC_OK && optic_program_run(c->p, *ctx, c->in, 2, &c->out, 1) == OPTIC_OK;
}

static bool chain_run(chain_case *c, optic_exec_ctx_t *ctx) {
  return optic_program_run(c->p, ctx, c->in, 2, &c->out, 1) == OPTIC_OK;
}

/* The compiled chain's estimate x runs per iteration, plus the profiler's
 * cost of the `events` each run records (two clock reads and one record an
 * event: docs/cost-model.md). */
static void chain_estimate(optic_bench_state *st, const chain_case *c, double runs, double events) {
  optic_program_summary s;
  optic_machine m;
  if (optic_program_summary_get(c->p, &s) != OPTIC_OK || !(s.est_ns > 0) || !bench_machine(1, &m)) return;
  optic_bench_counter(st, "est_time_ns", (s.est_ns + events * (2 * m.clock_read_ns + m.profile_record_ns)) * runs,
                      OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_bytes", s.cost.bytes_accessed * runs, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_flops", s.cost.flops * runs, OPTIC_BENCH_COUNTER_PLAIN);
}

/* profile:0 attaches a disabled profiler, profile:1 an enabled one (cleared
 * every 256 runs, so it never fills); peer/chain100_no_profiler runs this
 * same function (user != NULL) with none. Counter ns_per_op. */
static void bm_chain_profiled(optic_bench_state *st, void *user) {
  const bool none = user != NULL;
  optic_profiler_options po = optic_profiler_options_default();
  po.enabled = !none && optic_bench_range(st, 0) != 0;
  chain_case c;
  optic_profiler_t *prof = NULL;
  optic_exec_ctx_t *ctx = NULL;
  bool ok = chain_build(&c) && (none || optic_profiler_create(&po, &prof) == OPTIC_OK) && chain_ctx(&c, prof, &ctx);
  size_t events = 0; /* of one run: chain_ctx ran it once */
  if (ok && prof != NULL) optic_profiler_events(prof, &events);
  if (!ok) {
    optic_bench_skip_with_error(st, optic_last_error());
  } else {
    int64_t runs = 0;
    uint64_t t0 = optic_now_ns();
    while (optic_bench_keep_running(st)) {
      if ((++runs & 255) == 0 && prof != NULL) optic_profiler_clear(prof);
      if (!chain_run(&c, ctx)) {
        optic_bench_skip_with_error(st, optic_last_error());
        break;
      }
    }
    if (runs > 0) optic_bench_counter(st, "ns_per_op", (double)(optic_now_ns() - t0) / (double)runs / CHAIN, 0);
    if (prof != NULL) optic_bench_counter(st, "dropped", (double)optic_profiler_dropped(prof), 0);
    if (!none) chain_estimate(st, &c, 1.0, (double)events);
  }
  optic_exec_ctx_destroy(ctx);
  optic_profiler_destroy(prof);
  chain_free(&c);
}

/* The profiler-off bar measured within one benchmark: every iteration runs
 * the chain once with a disabled profiler attached and once with none, in
 * alternating order, each timed on its own; counters off_ns and none_ns are
 * the medians of blocks of 64 runs of each (ns per run). Two separate
 * benchmarks (runtime/chain100_profiled/profile:0 against
 * peer/chain100_no_profiler) read 0.90-1.37 on this VM, whose speed changes
 * between runs; alternating runs see the same machine. */
#define PAIR_BLOCK 64
#define PAIR_MAX_BLOCKS 4096
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void bm_chain_profiler_pair(optic_bench_state *st, void *user) {
  (void)user;
  optic_profiler_options po = optic_profiler_options_default();
  po.enabled = false;
  chain_case c;
  optic_profiler_t *prof = NULL;
  optic_exec_ctx_t *off = NULL, *none = NULL;
  double *blk_off = malloc(PAIR_MAX_BLOCKS * sizeof *blk_off), *blk_none = malloc(PAIR_MAX_BLOCKS * sizeof *blk_none);
  bool ok = blk_off && blk_none && chain_build(&c) && optic_profiler_create(&po, &prof) == OPTIC_OK &&
            chain_ctx(&c, prof, &off) && chain_ctx(&c, NULL, &none);
  if (!ok) {
    optic_bench_skip_with_error(st, blk_off && blk_none ? optic_last_error() : "out of memory");
  } else {
    uint64_t sum_off = 0, sum_none = 0;
    size_t blocks = 0, in_block = 0;
    int64_t runs = 0;
    while (optic_bench_keep_running(st)) {
      bool off_first = (runs++ & 1) == 0;
      uint64_t t0 = optic_now_ns();
      ok = chain_run(&c, off_first ? off : none);
      uint64_t t1 = optic_now_ns();
      ok = ok && chain_run(&c, off_first ? none : off);
      uint64_t t2 = optic_now_ns();
      if (!ok) {
        optic_bench_skip_with_error(st, optic_last_error());
        break;
      }
      sum_off += off_first ? t1 - t0 : t2 - t1;
      sum_none += off_first ? t2 - t1 : t1 - t0;
      if (++in_block == PAIR_BLOCK && blocks < PAIR_MAX_BLOCKS) {
        blk_off[blocks] = (double)sum_off / PAIR_BLOCK, blk_none[blocks] = (double)sum_none / PAIR_BLOCK;
        blocks++, in_block = 0, sum_off = sum_none = 0;
      }
    }
    if (ok && blocks > 0) {
      qsort(blk_off, blocks, sizeof *blk_off, cmp_double);
      qsort(blk_none, blocks, sizeof *blk_none, cmp_double);
      optic_bench_counter(st, "off_ns", blk_off[blocks / 2], OPTIC_BENCH_COUNTER_PLAIN);
      optic_bench_counter(st, "none_ns", blk_none[blocks / 2], OPTIC_BENCH_COUNTER_PLAIN);
    }
    if (ok) chain_estimate(st, &c, 2.0, 0); /* two runs per iteration, the profiler disabled */
  }
  free(blk_off);
  free(blk_none);
  optic_exec_ctx_destroy(off);
  optic_exec_ctx_destroy(none);
  optic_profiler_destroy(prof);
  chain_free(&c);
}

void bench_register_runtime_infra(void) {
  static const int64_t sizes[] = {(int64_t)1 << 16, (int64_t)1 << 20, (int64_t)16 << 20};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    optic_bench *b = optic_bench_register("runtime/pool_hit", bm_pool_hit, NULL);
    OPTIC_BENCH_ARGS(b, sizes[k]);
    OPTIC_BENCH_ARG_NAMES(b, "bytes");
    optic_bench_use_real_time(b);
    b = optic_bench_register("peer/alloc_touch_free", bm_alloc_free, NULL);
    OPTIC_BENCH_ARGS(b, sizes[k]);
    OPTIC_BENCH_ARG_NAMES(b, "bytes");
    optic_bench_use_real_time(b);
  }
  optic_bench_use_real_time(optic_bench_register("runtime/profiler_record", bm_profiler_record, NULL));
  optic_bench_use_real_time(optic_bench_register("peer/event_copy", bm_event_copy, NULL));
  optic_bench *c = optic_bench_register("runtime/chain100_profiled/threads:1", bm_chain_profiled, NULL);
  OPTIC_BENCH_ARGS(c, 0);
  OPTIC_BENCH_ARGS(c, 1);
  OPTIC_BENCH_ARG_NAMES(c, "profile");
  optic_bench_use_real_time(c);
  optic_bench_set_unit(c, OPTIC_BENCH_US);
  static const int no_profiler = 1;
  c = optic_bench_register("peer/chain100_no_profiler/threads:1", bm_chain_profiled,
                           OPTIC_UNCONST(void *, &no_profiler));
  optic_bench_use_real_time(c);
  optic_bench_set_unit(c, OPTIC_BENCH_US);
  c = optic_bench_register("runtime/chain100_profiler_pair/threads:1", bm_chain_profiler_pair, NULL);
  optic_bench_use_real_time(c);
  optic_bench_set_unit(c, OPTIC_BENCH_US);
}
