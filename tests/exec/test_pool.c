/* Memory pool: best-fit reuse with no allocation and no page fault in steady
 * state (getrusage minor faults), statistics, the retry policy against an
 * injected failing allocator (fails k times, fails always, cache freed before
 * retrying, bounded backoff), the cache cap, bad arguments, and 4 OpenMP
 * threads acquiring and releasing at once (also run under TSan). */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>

#include <optic/optic.h>

#include "exec/pool.h"
#include "exec/profile.h"
#include "tests/harness.h"

/* An allocator that fails while `fail_left` > 0 (or always), counting calls;
 * it delegates to the default allocator otherwise. Thread-safe. */
typedef struct injected {
  atomic_int fail_left;
  atomic_bool fail_always;
  atomic_int alloc_calls, alloc_ok, free_calls;
  atomic_size_t live_bytes;
} injected;

static void *injected_alloc(void *user, size_t size, size_t alignment) {
  injected *in = user;
  atomic_fetch_add(&in->alloc_calls, 1);
  if (atomic_load(&in->fail_always)) return NULL;
  if (atomic_fetch_sub(&in->fail_left, 1) > 0) return NULL;
  atomic_fetch_add(&in->fail_left, 1); /* undo: stays at 0 */
  const optic_allocator *d = optic_default_allocator();
  void *p = d->alloc(d->user, size, alignment);
  if (p) {
    atomic_fetch_add(&in->alloc_ok, 1);
    atomic_fetch_add(&in->live_bytes, size);
  }
  return p;
}

static void injected_free(void *user, void *ptr, size_t size, size_t alignment) {
  injected *in = user;
  atomic_fetch_add(&in->free_calls, 1);
  atomic_fetch_sub(&in->live_bytes, size);
  const optic_allocator *d = optic_default_allocator();
  d->free(d->user, ptr, size, alignment);
}

static optic_allocator injected_allocator(injected *in) {
  memset(in, 0, sizeof *in);
  return (optic_allocator){injected_alloc, injected_free, in};
}

static exec_pool *make_pool(const optic_allocator *a, int32_t retries, uint64_t backoff_ns) {
  optic_pool_options o = optic_pool_options_default();
  o.allocator = a;
  o.max_retries = retries;
  o.backoff_ns = backoff_ns;
  exec_pool *p = NULL;
  OT_EXPECT_OK(exec_pool_create(&o, &p));
  return p;
}

/* Sanitizers map and recycle shadow memory as the loop touches the arenas,
 * which shows up as faults of their own: the fault count is checked only in
 * uninstrumented builds (allocator calls are checked in every build). */
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

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* After a warm-up, acquire + touch every byte + release of the same or
 * smaller sizes calls the allocator 0 times and faults 0 pages. Sizes cover
 * the small (posix_memalign) and huge-page (mmap) paths. */
static void steady_state_no_allocation_no_faults(void) {
  injected in;
  optic_allocator a = injected_allocator(&in);
  exec_pool *p = make_pool(&a, 0, 0);
  const size_t sizes[] = {(size_t)9 << 20, (size_t)1 << 20, 100000, 4096, 1, 64 << 10};
  const size_t n = sizeof sizes / sizeof *sizes;
  exec_arena ar[6];
  for (int warm = 0; warm < 2; warm++) {
    for (size_t i = 0; i < n; i++) {
      OT_EXPECT_OK(exec_pool_acquire(p, sizes[i], NULL, 0, &ar[i]));
      if (ar[i].data) memset(ar[i].data, 1, sizes[i]);
    }
    for (size_t i = 0; i < n; i++) exec_pool_release(p, &ar[i]);
  }
  int calls_before = atomic_load(&in.alloc_calls);
  optic_pool_stats s0;
  exec_pool_stats(p, &s0);
  long f0 = minor_faults();
  for (int iter = 0; iter < 50; iter++) {
    for (size_t i = 0; i < n; i++) {
      size_t want = sizes[i] - (size_t)iter * (sizes[i] / 64); /* same or smaller */
      OT_EXPECT_OK(exec_pool_acquire(p, want, NULL, 0, &ar[i]));
      if (ar[i].data) memset(ar[i].data, iter, want);
    }
    for (size_t i = 0; i < n; i++) exec_pool_release(p, &ar[i]);
  }
  long f1 = minor_faults();
  optic_pool_stats s1;
  exec_pool_stats(p, &s1);
  OT_CHECK(atomic_load(&in.alloc_calls) == calls_before, "allocator called %d times in steady state",
           atomic_load(&in.alloc_calls) - calls_before);
  OT_CHECK(s1.misses == s0.misses, "misses %lld -> %lld", (long long)s0.misses, (long long)s1.misses);
  OT_CHECK(s1.hits == s0.hits + 50 * (int64_t)n, "hits %lld -> %lld", (long long)s0.hits, (long long)s1.hits);
  OT_CHECK(UNDER_SANITIZER || f1 - f0 == 0, "%ld minor page faults in steady state (expected 0)", f1 - f0);
  OT_CHECK(s1.bytes_reserved == s0.bytes_reserved && s1.bytes_in_use == 0);
  exec_pool_destroy(p);
  OT_CHECK(atomic_load(&in.live_bytes) == 0, "destroy left %zu bytes", atomic_load(&in.live_bytes));

  /* Control: the same loop without a pool (a fresh 9 MiB mapping each time)
   * does fault, so the measurement above can see faults. */
  long c0 = minor_faults();
  for (int iter = 0; iter < 5; iter++) {
    void *fresh = NULL;
    OT_EXPECT_OK(optic_alloc(NULL, sizes[0], 64, &fresh));
    if (fresh) memset(fresh, iter, sizes[0]);
    optic_free(NULL, fresh, sizes[0], 64);
  }
  OT_CHECK(minor_faults() - c0 >= 5, "control loop took only %ld faults", minor_faults() - c0);
}

/* The smallest cached arena that fits is chosen; rounding to pages and huge pages. */
static void best_fit_and_rounding(void) {
  exec_pool *p = make_pool(NULL, 0, 0);
  exec_arena a, b, c, d;
  OT_EXPECT_OK(exec_pool_acquire(p, 10000, NULL, 0, &a));
  OT_EXPECT_OK(exec_pool_acquire(p, 50000, NULL, 0, &b));
  OT_EXPECT_OK(exec_pool_acquire(p, (size_t)5 << 20, NULL, 0, &c));
  OT_CHECK(a.capacity == 12288 && a.bytes == 10000, "capacity %zu", a.capacity);
  OT_CHECK(b.capacity == 53248, "capacity %zu", b.capacity);
  OT_CHECK(c.capacity == ((size_t)6 << 20), "huge capacity %zu", c.capacity);
  OT_CHECK(((uintptr_t)a.data % 64) == 0 && ((uintptr_t)c.data % 64) == 0);
  void *pa = a.data, *pb = b.data, *pc = c.data;
  exec_pool_release(p, &c);
  exec_pool_release(p, &a);
  exec_pool_release(p, &b);
  OT_CHECK(a.data == NULL && a.capacity == 0, "release zeroes the arena");
  OT_EXPECT_OK(exec_pool_acquire(p, 12000, NULL, 0, &d)); /* fits a (12288) exactly best */
  OT_CHECK(d.data == pa, "12000 bytes should reuse the 12288-byte arena");
  exec_arena e, f, g;
  OT_EXPECT_OK(exec_pool_acquire(p, 20000, NULL, 0, &e)); /* a is taken: b is the best fit */
  OT_CHECK(e.data == pb);
  OT_EXPECT_OK(exec_pool_acquire(p, 1, NULL, 0, &f)); /* only the huge arena is left */
  OT_CHECK(f.data == pc);
  OT_EXPECT_OK(exec_pool_acquire(p, 1, NULL, 0, &g)); /* nothing cached: a new one */
  OT_CHECK(g.data != pa && g.data != pb && g.data != pc && g.capacity == 4096);
  optic_pool_stats s;
  exec_pool_stats(p, &s);
  OT_CHECK(s.misses == 4 && s.hits == 3 && s.arenas == 4, "misses %lld hits %lld arenas %lld", (long long)s.misses,
           (long long)s.hits, (long long)s.arenas);
  exec_pool_release(p, &d);
  exec_pool_release(p, &e);
  exec_pool_release(p, &f);
  exec_pool_release(p, &g);
  exec_pool_destroy(p);
}

static void statistics(void) {
  exec_pool *p = make_pool(NULL, 0, 0);
  exec_arena a, b;
  OT_EXPECT_OK(exec_pool_acquire(p, 100, NULL, 0, &a));
  OT_EXPECT_OK(exec_pool_acquire(p, 8192, NULL, 0, &b));
  optic_pool_stats s;
  exec_pool_stats(p, &s);
  OT_CHECK(s.bytes_reserved == 4096 + 8192 && s.bytes_in_use == 4096 + 8192 && s.peak_bytes == 4096 + 8192);
  OT_CHECK(s.bytes_requested == 8292 && s.arenas == 2 && s.misses == 2 && s.hits == 0);
  exec_pool_release(p, &b);
  exec_pool_stats(p, &s);
  OT_CHECK(s.bytes_reserved == 12288 && s.bytes_in_use == 4096 && s.bytes_requested == 100);
  OT_CHECK(exec_pool_trim(p) == 8192);
  exec_pool_stats(p, &s);
  OT_CHECK(s.bytes_reserved == 4096 && s.peak_bytes == 12288 && s.trims == 1 && s.arenas == 1);
  exec_pool_release(p, &a);
  exec_pool_stats(p, &s);
  OT_CHECK(s.bytes_in_use == 0 && s.bytes_requested == 0 && s.bytes_reserved == 4096);
  OT_CHECK(s.retries == 0 && s.failures == 0);
  exec_pool_destroy(p);
}

static void edges_and_bad_arguments(void) {
  exec_pool *p = make_pool(NULL, 0, 0);
  exec_arena a;
  OT_EXPECT_OK(exec_pool_acquire(p, 0, NULL, 0, &a));
  OT_CHECK(a.data == NULL && a.capacity == 0);
  OT_CHECK(!exec_pool_release(p, &a), "a 0-byte arena is not released");
  OT_EXPECT_STATUS(exec_pool_acquire(p, SIZE_MAX - 5, NULL, 0, &a), OPTIC_ERR_OVERFLOW);
  OT_EXPECT_STATUS(exec_pool_acquire(p, 10, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(exec_pool_acquire(NULL, 10, NULL, 0, &a), OPTIC_ERR_INVALID_ARGUMENT);
  int x;
  exec_arena foreign = {&x, 4, 4};
  OT_CHECK(!exec_pool_release(p, &foreign) && foreign.data == &x, "a foreign arena is left alone");
  exec_arena b;
  OT_EXPECT_OK(exec_pool_acquire(p, 64, NULL, 0, &b));
  exec_arena copy = b;
  OT_CHECK(exec_pool_release(p, &b));
  OT_CHECK(!exec_pool_release(p, &copy), "a second release of the same arena is ignored");
  exec_pool_destroy(p);
  exec_pool_destroy(NULL);

  optic_pool_options o = optic_pool_options_default();
  exec_pool *q = NULL;
  o.alignment = 48;
  OT_EXPECT_STATUS(exec_pool_create(&o, &q), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_pool_options_default();
  o.max_retries = -1;
  OT_EXPECT_STATUS(exec_pool_create(&o, &q), OPTIC_ERR_INVALID_ARGUMENT);
  optic_allocator broken = {NULL, NULL, NULL};
  o = optic_pool_options_default();
  o.allocator = &broken;
  OT_EXPECT_STATUS(exec_pool_create(&o, &q), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_pool_options_default();
  o.size = 0;
  OT_EXPECT_STATUS(exec_pool_create(&o, &q), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(q == NULL);
  /* An older caller whose struct ends after max_retries gets defaults beyond it. */
  o = optic_pool_options_default();
  o.size = offsetof(optic_pool_options, backoff_ns);
  o.max_retries = 7;
  o.alignment = 3; /* beyond size: ignored */
  OT_EXPECT_OK(exec_pool_create(&o, &q));
  if (q) {
    OT_CHECK(exec_pool_options(q)->max_retries == 7 && exec_pool_options(q)->alignment == 64);
    OT_CHECK(exec_pool_options(q)->backoff_ns == optic_pool_options_default().backoff_ns);
  }
  exec_pool_destroy(q);
  /* A larger alignment is honoured. */
  o = optic_pool_options_default();
  o.alignment = 4096;
  OT_EXPECT_OK(exec_pool_create(&o, &q));
  OT_EXPECT_OK(exec_pool_acquire(q, 100, NULL, 0, &a));
  OT_CHECK(((uintptr_t)a.data % 4096) == 0);
  exec_pool_release(q, &a);
  exec_pool_destroy(q);
}

/* The allocator fails the first k calls: with max_retries >= k the acquire
 * succeeds after exactly k retries; the cached arena was freed first. */
static void retry_succeeds_after_k_failures(void) {
  for (int k = 0; k <= 4; k++) {
    injected in;
    optic_allocator a = injected_allocator(&in);
    exec_pool *p = make_pool(&a, 4, 1000);
    exec_arena cached, big;
    OT_EXPECT_OK(exec_pool_acquire(p, 4096, NULL, 0, &cached));
    exec_pool_release(p, &cached);
    atomic_store(&in.fail_left, k);
    int calls0 = atomic_load(&in.alloc_calls);
    OT_EXPECT_OK(exec_pool_acquire(p, 100000, NULL, 0, &big));
    optic_pool_stats s;
    exec_pool_stats(p, &s);
    OT_CHECK(big.data != NULL && big.capacity >= 100000);
    OT_CHECK(atomic_load(&in.alloc_calls) - calls0 == k + 1, "k=%d: %d allocator calls", k,
             atomic_load(&in.alloc_calls) - calls0);
    OT_CHECK(s.retries == k && s.failures == 0 && s.misses == 2, "k=%d: retries %lld", k, (long long)s.retries);
    /* The cached 4 KiB arena was given back before the first retry. */
    OT_CHECK(atomic_load(&in.free_calls) == (k > 0 ? 1 : 0), "k=%d: %d frees", k, atomic_load(&in.free_calls));
    OT_CHECK(s.trims == (k > 0 ? 1 : 0) && s.arenas == (k > 0 ? 1 : 2));
    exec_pool_release(p, &big);
    exec_pool_destroy(p);
    OT_CHECK(atomic_load(&in.live_bytes) == 0);
  }
}

/* The allocator always fails: OUT_OF_MEMORY after max_retries + 1 attempts,
 * the message names the bytes asked; arenas in use are untouched. */
static void retry_gives_up_with_out_of_memory(void) {
  for (int retries = 0; retries <= 3; retries++) {
    injected in;
    optic_allocator a = injected_allocator(&in);
    exec_pool *p = make_pool(&a, retries, 100);
    exec_arena held, cached, big;
    OT_EXPECT_OK(exec_pool_acquire(p, 8192, NULL, 0, &held));
    OT_EXPECT_OK(exec_pool_acquire(p, 4096, NULL, 0, &cached));
    memset(held.data, 7, 8192);
    exec_pool_release(p, &cached);
    atomic_store(&in.fail_always, true);
    int calls0 = atomic_load(&in.alloc_calls);
    OT_EXPECT_STATUS(exec_pool_acquire(p, 123457, NULL, 0, &big), OPTIC_ERR_OUT_OF_MEMORY);
    OT_CHECK(big.data == NULL);
    OT_CHECK(strstr(optic_last_error(), "123457 bytes") != NULL, "message: %s", optic_last_error());
    OT_CHECK(atomic_load(&in.alloc_calls) - calls0 == retries + 1, "%d attempts for max_retries %d",
             atomic_load(&in.alloc_calls) - calls0, retries);
    optic_pool_stats s;
    exec_pool_stats(p, &s);
    OT_CHECK(s.retries == retries && s.failures == 1);
    OT_CHECK(s.bytes_in_use == 8192 && s.bytes_reserved == (retries > 0 ? 8192u : 12288u), "reserved %zu",
             s.bytes_reserved);
    OT_CHECK(((unsigned char *)held.data)[8191] == 7, "an arena in use is never freed by a retry");
    /* A cache hit needs no allocator: it still works while the allocator fails. */
    exec_pool_release(p, &held);
    exec_arena again;
    OT_EXPECT_OK(exec_pool_acquire(p, 8000, NULL, 0, &again));
    exec_pool_release(p, &again);
    exec_pool_destroy(p);
    OT_CHECK(atomic_load(&in.live_bytes) == 0);
  }
}

/* The waits double from backoff_ns and are capped: 3 retries from 2 ms with a
 * 3 ms cap wait at least 2 + 3 + 3 ms. */
static void backoff_is_bounded_and_doubles(void) {
  injected in;
  optic_allocator a = injected_allocator(&in);
  optic_pool_options o = optic_pool_options_default();
  o.allocator = &a;
  o.max_retries = 3;
  o.backoff_ns = 2000000;
  o.max_backoff_ns = 3000000;
  exec_pool *p = NULL;
  OT_EXPECT_OK(exec_pool_create(&o, &p));
  atomic_store(&in.fail_always, true);
  exec_arena x;
  uint64_t t0 = optic_now_ns();
  OT_EXPECT_STATUS(exec_pool_acquire(p, 10, NULL, 0, &x), OPTIC_ERR_OUT_OF_MEMORY);
  double ms = (double)(optic_now_ns() - t0) / 1e6;
  OT_CHECK(ms >= 8.0 && ms < 2000.0, "waited %.2f ms, expected >= 8", ms);
  exec_pool_destroy(p);

  /* A first wait above the cap is capped too: 2 retries from 1 s capped at
   * 1 ms end in well under a second. */
  o.max_retries = 2;
  o.backoff_ns = 1000000000;
  o.max_backoff_ns = 1000000;
  OT_EXPECT_OK(exec_pool_create(&o, &p));
  t0 = optic_now_ns();
  OT_EXPECT_STATUS(exec_pool_acquire(p, 10, NULL, 0, &x), OPTIC_ERR_OUT_OF_MEMORY);
  ms = (double)(optic_now_ns() - t0) / 1e6;
  OT_CHECK(ms >= 2.0 && ms < 500.0, "waited %.2f ms, expected 2 to 500", ms);
  exec_pool_destroy(p);
}

/* A release that would leave more than max_cached_bytes cached frees the arena. */
static void cache_cap(void) {
  injected in;
  optic_allocator a = injected_allocator(&in);
  optic_pool_options o = optic_pool_options_default();
  o.allocator = &a;
  o.max_cached_bytes = 8192;
  exec_pool *p = NULL;
  OT_EXPECT_OK(exec_pool_create(&o, &p));
  exec_arena x, y, z;
  OT_EXPECT_OK(exec_pool_acquire(p, 4096, NULL, 0, &x));
  OT_EXPECT_OK(exec_pool_acquire(p, 4096, NULL, 0, &y));
  OT_EXPECT_OK(exec_pool_acquire(p, 4096, NULL, 0, &z));
  exec_pool_release(p, &x);
  exec_pool_release(p, &y);
  exec_pool_release(p, &z); /* 12288 would be cached: this one is freed */
  optic_pool_stats s;
  exec_pool_stats(p, &s);
  OT_CHECK(s.bytes_reserved == 8192 && s.trims == 1 && atomic_load(&in.free_calls) == 1);
  exec_pool_destroy(p);
  OT_CHECK(atomic_load(&in.live_bytes) == 0);
}

/* A reservation records a RESERVE event when a profiler is enabled; a hit does not. */
static void reserve_events(void) {
  optic_profiler_t *prof = NULL;
  optic_profiler_options po = optic_profiler_options_default();
  po.enabled = true;
  OT_EXPECT_OK(optic_profiler_create(&po, &prof));
  exec_pool *p = make_pool(NULL, 0, 0);
  exec_arena a;
  OT_EXPECT_OK(exec_pool_acquire(p, 5000, prof, 3, &a));
  exec_pool_release(p, &a);
  OT_EXPECT_OK(exec_pool_acquire(p, 5000, prof, 3, &a));
  exec_pool_release(p, &a);
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(prof, &n);
  OT_CHECK(n == 1, "%zu events", n);
  if (n == 1) {
    OT_CHECK(ev[0].kind == OPTIC_PROFILE_RESERVE && ev[0].bytes == 8192.0 && ev[0].thread == 3);
    OT_CHECK(ev[0].end_ns >= ev[0].start_ns);
  }
  exec_pool_destroy(p);
  optic_profiler_destroy(prof);
}

/* 4 threads acquire, fill, check and release arenas of varied sizes at once;
 * the books balance and no arena is handed to two threads (the fill would
 * be overwritten). */
static void concurrent_acquire_release(void) {
  injected in;
  optic_allocator a = injected_allocator(&in);
  exec_pool *p = make_pool(&a, 2, 1000);
  const int iters = 1500;
  atomic_int errors = 0;
#pragma omp parallel num_threads(4)
  {
    int t = omp_get_thread_num();
    uint32_t seed = 12345u + 977u * (uint32_t)t;
    for (int i = 0; i < iters; i++) {
      seed = seed * 1664525u + 1013904223u;
      size_t bytes = 1 + (seed >> 8) % 40000;
      exec_arena ar;
      if (exec_pool_acquire(p, bytes, NULL, t, &ar) != OPTIC_OK) {
        atomic_fetch_add(&errors, 1);
        continue;
      }
      unsigned char *d = ar.data;
      memset(d, t + 1, bytes);
      for (size_t k = 0; k < bytes; k += 997)
        if (d[k] != t + 1) atomic_fetch_add(&errors, 1);
      if (d[bytes - 1] != t + 1) atomic_fetch_add(&errors, 1);
      if (!exec_pool_release(p, &ar)) atomic_fetch_add(&errors, 1);
    }
  }
  optic_pool_stats s;
  exec_pool_stats(p, &s);
  OT_CHECK(atomic_load(&errors) == 0, "%d errors", atomic_load(&errors));
  OT_CHECK(s.hits + s.misses == 4 * iters, "hits %lld + misses %lld", (long long)s.hits, (long long)s.misses);
  OT_CHECK(s.bytes_in_use == 0 && s.bytes_requested == 0 && s.arenas <= 4 * 10, "arenas %lld", (long long)s.arenas);
  OT_CHECK((int64_t)atomic_load(&in.alloc_ok) == s.misses);
  exec_pool_destroy(p);
  OT_CHECK(atomic_load(&in.live_bytes) == 0);
}

static const ot_case cases[] = {
    {"steady_state_no_allocation_no_faults", steady_state_no_allocation_no_faults},
    {"best_fit_and_rounding", best_fit_and_rounding},
    {"statistics", statistics},
    {"edges_and_bad_arguments", edges_and_bad_arguments},
    {"retry_succeeds_after_k_failures", retry_succeeds_after_k_failures},
    {"retry_gives_up_with_out_of_memory", retry_gives_up_with_out_of_memory},
    {"backoff_is_bounded_and_doubles", backoff_is_bounded_and_doubles},
    {"cache_cap", cache_cap},
    {"reserve_events", reserve_events},
    {"concurrent_acquire_release", concurrent_acquire_release},
};

OT_MAIN(cases)
