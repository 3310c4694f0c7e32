/* The runtime's memory pool and profiler against their peers in one run:
 * a cached arena (acquire, touch every page, release) vs a fresh block from
 * the default allocator each time (optic_alloc, touch, optic_free); recording
 * a profiler event vs a plain copy of the same event. Benchmark-only. */
#include <string.h>

#include "bench/bench_util.h"
#include "exec/pool.h"
#include "exec/profile.h"

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
}
