/* Pod benchmarks: the emulated pod's ring all-reduce (f32 sum, in place) at
 * 4 KiB, 1 MiB and 64 MiB on 2 cores, beside two peers on the same threads
 * and sizes: the ring's data movement with only the synchronization its reads
 * need (the bound for this data movement on this machine; bm_memory_bound)
 * and a naive shared-memory all-reduce (one thread sums every buffer, a
 * barrier, everyone copies).
 * All three report bus bandwidth, bytes * 2(n-1)/n per second, so ratios are
 * time ratios, and critical-path CPU-time counters (cpu_path.h) for
 * ratios.py --clock cpu on a loaded machine. Plus barrier latency beside an
 * OpenMP barrier. */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <optic/pod.h>

#include "bench/bench_util.h"
#include "bench/cpu_path.h"
#include "bench/estimate.h"
#include "kernels/binary.h"

#define MAX_CORES 8

typedef struct bufs {
  int cores;
  size_t n;       /* floats per core */
  size_t repeats; /* all-reduces per iteration */
  float *own[MAX_CORES], *shared;
  bench_cpu_path cpu; /* critical-path CPU time (cpu_path.h) */
} bufs;

static float *zeros(size_t n) {
  void *p = NULL;
  if (optic_alloc(NULL, n * sizeof(float), 64, &p) != OPTIC_OK) return NULL;
  if (p != NULL) memset(p, 0, n * sizeof(float)); /* fault in now, untimed */
  return p;
}

static bool setup(bufs *b, optic_bench_state *st, bool with_shared) {
  memset(b, 0, sizeof *b);
  b->n = (size_t)optic_bench_range(st, 0) / sizeof(float);
  b->cores = (int)optic_bench_range(st, 1);
  b->repeats = bench_repeats(b->n);
  bool ok = b->cores >= 1 && b->cores <= MAX_CORES;
  for (int k = 0; ok && k < b->cores; k++) {
    ok = (b->own[k] = zeros(b->n)) != NULL;
  }
  if (ok && with_shared) ok = (b->shared = zeros(b->n)) != NULL;
  if (!ok) optic_bench_skip_with_error(st, "pod bench: allocation failed");
  return ok;
}

static void teardown(bufs *b) {
  for (int k = 0; k < b->cores; k++) {
    optic_free(NULL, b->own[k], b->n * sizeof(float), 64);
  }
  optic_free(NULL, b->shared, b->n * sizeof(float), 64);
}

static void report(optic_bench_state *st, const bufs *b) {
  double bus = (double)b->n * sizeof(float) * 2.0 * (b->cores - 1) / b->cores;
  bench_report_rates(st, bus * (double)b->repeats, 0);
  bench_cpu_path_report(st, &b->cpu, bus * (double)b->repeats, 0);
  optic_bench_counter(st, "repeats", (double)b->repeats, OPTIC_BENCH_COUNTER_PLAIN);
}

/* --------------------------------------------------------------- ours */

static optic_status ring_body(optic_pod_core_t *c, void *user) {
  bufs *b = user;
  const int me = optic_pod_core_index(c);
  float *x = b->own[me];
  uint64_t t0 = bench_thread_cpu_ns();
  for (size_t r = 0; r < b->repeats; r++) {
    optic_status st = optic_pod_all_reduce(c, x, x, b->n, OPTIC_F32, OPTIC_POD_SUM);
    if (st != OPTIC_OK) return st;
  }
  bench_cpu_path_record(&b->cpu, me, bench_thread_cpu_ns() - t0);
  return OPTIC_OK;
}

static void bm_pod_all_reduce(optic_bench_state *st, void *user) {
  (void)user;
  bufs b;
  if (!setup(&b, st, false)) return;
  optic_pod_options o = {.size = sizeof o, .cores = b.cores};
  optic_pod_t *pod = NULL;
  if (optic_pod_create(&o, &pod) != OPTIC_OK || optic_pod_run(pod, ring_body, &b, NULL) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
  } else {
    b.cpu.total_ns = 0; /* the untimed first run does not count */
    while (optic_bench_keep_running(st)) {
      optic_pod_run(pod, ring_body, &b, NULL);
      bench_cpu_path_end_region(&b.cpu, b.cores);
    }
    report(st, &b);
    /* optic report's estimates, per iteration: in place, each of the N cores
     * reads two and writes one segment per reduce-scatter step and reads one
     * and writes one per all-gather step: 5(N-1)/N of the buffer, and
     * (N-1)/N of its elements in adds */
    const double n = b.cores, bytes = (double)b.n * sizeof(float), reps = (double)b.repeats;
    optic_bench_counter(st, "est_bytes", 5.0 * (n - 1) * bytes * reps, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_flops", (n - 1) * (double)b.n * reps, OPTIC_BENCH_COUNTER_PLAIN);
    /* and the link model's time (bench/estimate.h), plus the pod run's own
     * fork and join (one barrier) */
    const double ring = bench_ring_all_reduce_ns(b.cores, bytes);
    optic_machine mc;
    if (ring > 0 && bench_machine(b.cores, &mc))
      optic_bench_counter(st, "est_time_ns", ring * reps + mc.sync_ns, OPTIC_BENCH_COUNTER_PLAIN);
  }
  optic_pod_destroy(pod);
  teardown(&b);
}

/* ---------------------------------------------------------------- peers */

/* The bound for the ring's data movement: the same in-place adds and copies
 * on the same segments of the same per-core buffers, with the kernels ours
 * uses, and only the synchronization that makes the reads correct. Every core
 * reads its predecessor's buffer, which the predecessor wrote during the
 * previous step or repetition (in place, as in ours: every element is rewritten
 * by its owner each all-reduce, as a fresh gradient would be), so the data
 * crosses cores cache to cache exactly as in ours. The synchronization is one
 * step counter per core on its own cache line: after each step a core
 * publishes the count (release), and before step g it spins until its
 * predecessor and successor (the same core when n = 2) have completed g
 * steps (acquire). That is the minimum for whole-segment steps: step g reads
 * what the predecessor wrote at step g-1 and overwrites what the successor
 * read at step g-1. No heartbeats, failure checks, timeouts or chunking. */
typedef struct step_flag {
  _Alignas(64) _Atomic uint64_t done;
  _Atomic int cpu; /* CPU the owner last ran on, -1 unknown */
  char pad[64 - sizeof(uint64_t) - sizeof(int)];
} step_flag;

static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int this_cpu(void) {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

/* Waits until *f >= v with the pod's waiting policy minus its failure checks
 * and sleeping: spin (pause) for up to 50 us while the owner of f last ran on
 * another CPU, and yield between polls once it shares ours or the spin is
 * over. */
static void wait_flag(step_flag *f, uint64_t v, int cpu) {
  uint64_t spin0 = 0;
  bool spin = true;
  for (int i = 0; atomic_load_explicit(&f->done, memory_order_acquire) < v; i++) {
    if (spin && (i & 63) == 0) {
      uint64_t now = optic_now_ns();
      if (i == 0) spin0 = now;
      spin = !(cpu >= 0 && atomic_load_explicit(&f->cpu, memory_order_relaxed) == cpu) && now - spin0 <= 50000;
    }
    if (spin) {
      spin_pause();
    } else {
      sched_yield();
    }
  }
}

static void bm_memory_bound(optic_bench_state *st, void *user) {
  (void)user;
  bufs b;
  if (!setup(&b, st, false)) return;
  const optic_binary_kernels *kern = optic_binary_kernels_get();
  const int n = b.cores;
  step_flag flag[MAX_CORES];
  for (int k = 0; k < MAX_CORES; k++) {
    atomic_init(&flag[k].done, 0);
    atomic_init(&flag[k].cpu, -1);
  }
  uint64_t base = 0; /* steps completed by every core before this region */
  const uint64_t per_rep = 2 * (uint64_t)(n - 1);
  while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(n)
    {
      const int t = omp_get_thread_num(), pred = (t + n - 1) % n, succ = (t + 1) % n;
      float *y = b.own[t];
      const float *a = b.own[pred];
      uint64_t g = base;
      uint64_t t0 = bench_thread_cpu_ns();
      for (size_t r = 0; r < b.repeats; r++) {
        for (int s = 0; s < 2 * (n - 1); s++, g++) {
          const int cpu = this_cpu();
          atomic_store_explicit(&flag[t].cpu, cpu, memory_order_relaxed);
          if (n > 1) {
            wait_flag(&flag[pred], g, cpu);
            if (succ != pred) wait_flag(&flag[succ], g, cpu);
          }
          size_t off, len;
          if (s < n - 1) { /* reduce-scatter: fold the predecessor's partial */
            optic_pod_shard(b.n, n, ((t - s - 2) % n + 2 * n) % n, &off, &len);
            kern->vv[OPTIC_BINARY_ADD](len, a + off, y + off, y + off);
          } else { /* all-gather: copy the predecessor's finished segment */
            optic_pod_shard(b.n, n, ((t - (s - n + 1) - 1) % n + n) % n, &off, &len);
            memcpy(y + off, a + off, len * sizeof(float));
          }
          atomic_store_explicit(&flag[t].done, g + 1, memory_order_release);
        }
      }
      bench_cpu_path_record(&b.cpu, t, bench_thread_cpu_ns() - t0);
    }
    base += per_rep * b.repeats;
    bench_cpu_path_end_region(&b.cpu, n);
  }
  report(st, &b);
  teardown(&b);
}

/* Naive: thread 0 sums every core's buffer into a shared one, a barrier,
 * every thread copies it out, a barrier. */
static void bm_naive(optic_bench_state *st, void *user) {
  (void)user;
  bufs b;
  if (!setup(&b, st, true)) return;
  const optic_binary_kernels *kern = optic_binary_kernels_get();
  const int n = b.cores;
  while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(n)
    {
      int t = omp_get_thread_num();
      uint64_t t0 = bench_thread_cpu_ns();
      for (size_t r = 0; r < b.repeats; r++) {
        if (t == 0) {
          memcpy(b.shared, b.own[0], b.n * sizeof(float));
          for (int k = 1; k < n; k++) kern->vv[OPTIC_BINARY_ADD](b.n, b.own[k], b.shared, b.shared);
        }
#pragma omp barrier
        memcpy(b.own[t], b.shared, b.n * sizeof(float));
#pragma omp barrier
      }
      bench_cpu_path_record(&b.cpu, t, bench_thread_cpu_ns() - t0);
    }
    bench_cpu_path_end_region(&b.cpu, n);
  }
  report(st, &b);
  teardown(&b);
}

/* ------------------------------------------------------------- barriers */

#define BARRIERS 2000

static optic_status barrier_body(optic_pod_core_t *c, void *user) {
  (void)user;
  for (int i = 0; i < BARRIERS; i++) {
    optic_status st = optic_pod_barrier(c);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static void bm_pod_barrier(optic_bench_state *st, void *user) {
  (void)user;
  optic_pod_options o = {.size = sizeof o, .cores = (int)optic_bench_range(st, 0)};
  optic_pod_t *pod = NULL;
  if (optic_pod_create(&o, &pod) != OPTIC_OK || optic_pod_run(pod, barrier_body, NULL, NULL) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
  } else {
    while (optic_bench_keep_running(st)) optic_pod_run(pod, barrier_body, NULL, NULL);
    optic_bench_set_items_processed(st, (int64_t)BARRIERS * optic_bench_iterations(st));
    /* The estimate: BARRIERS + 1 (the run's join) barriers of the model. */
    optic_machine m;
    if (bench_machine(o.cores, &m) && m.sync_ns > 0)
      optic_bench_counter(st, "est_time_ns", (BARRIERS + 1) * m.sync_ns, OPTIC_BENCH_COUNTER_PLAIN);
  }
  optic_pod_destroy(pod);
}

static void bm_omp_barrier(optic_bench_state *st, void *user) {
  (void)user;
  const int n = (int)optic_bench_range(st, 0);
  while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(n)
    {
      for (int i = 0; i < BARRIERS; i++) {
#pragma omp barrier
      }
    }
  }
  optic_bench_set_items_processed(st, (int64_t)BARRIERS * optic_bench_iterations(st));
}

void bench_register_pod(void) {
  const int64_t sizes[] = {4096, 1 << 20, 64 << 20};
  struct {
    const char *name;
    optic_bench_fn fn;
  } ar[] = {{"pod/all_reduce", bm_pod_all_reduce},
            {"peer/pod_memory_bound", bm_memory_bound},
            {"peer/pod_naive_all_reduce", bm_naive}};
  for (size_t i = 0; i < 3; i++) {
    optic_bench *b = optic_bench_register(ar[i].name, ar[i].fn, NULL);
    for (size_t s = 0; s < 3; s++) OPTIC_BENCH_ARGS(b, sizes[s], 2);
    OPTIC_BENCH_ARG_NAMES(b, "bytes", "cores");
    optic_bench_use_real_time(b);
  }
  optic_bench *b = optic_bench_register("pod/barrier", bm_pod_barrier, NULL);
  OPTIC_BENCH_ARGS(b, 2);
  OPTIC_BENCH_ARG_NAMES(b, "cores");
  optic_bench_use_real_time(b);
  b = optic_bench_register("peer/omp_barrier", bm_omp_barrier, NULL);
  OPTIC_BENCH_ARGS(b, 2);
  OPTIC_BENCH_ARG_NAMES(b, "threads");
  optic_bench_use_real_time(b);
}
