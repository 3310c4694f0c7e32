/* The emulated pod's coordinator: creation, the SPMD run on OpenMP threads,
 * heartbeats, failure detection and propagation, fault injection, the
 * barrier, and the wait loop every blocking call uses. No wait here is
 * unbounded: each one polls heartbeats, the failure state and a timeout. */
#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "pod/pod_internal.h"

#define DEFAULT_HEARTBEAT_NS 2000000000ull
#define DEFAULT_TIMEOUT_NS 60000000000ull
#define DEFAULT_CHUNK_BYTES ((size_t)64 << 10)
#define SPIN_NS 50000ull    /* longest spin while the awaited core runs elsewhere */
#define YIELD_NS 200000ull  /* then sleep on the condition variable */
#define SLEEP_NS 1000000ull /* longest sleep between polls */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

optic_pod_options optic_pod_options_default(void) {
  optic_pod_options o = {.size = sizeof o,
                         .heartbeat_timeout_ns = DEFAULT_HEARTBEAT_NS,
                         .timeout_ns = DEFAULT_TIMEOUT_NS,
                         .chunk_bytes = DEFAULT_CHUNK_BYTES};
  return o;
}

optic_status optic_pod_create(const optic_pod_options *options, optic_pod_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_create: out is NULL");
  *out = NULL;
  optic_pod_options o = {.size = sizeof o};
  if (options != NULL) {
    if (options->size < sizeof(size_t) || options->size > sizeof o) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_create: options.size is %zu; expected %zu", options->size,
                        sizeof o);
    }
    memcpy(&o, options, options->size);
  }
  optic_topology topo;
  if (o.topology != NULL) {
    optic_status st = topology_check(o.topology, "pod_create");
    if (st != OPTIC_OK) return st;
    topo = *o.topology;
    if (o.cores != 0 && o.cores != topo.cores) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_create: cores is %d but topology '%s' has %d", o.cores,
                        topo.name, topo.cores);
    }
  } else {
    int n = o.cores == 0 ? 1 : o.cores;
    if (n < 1)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_create: cores is %d; must be 1..%d", n, OPTIC_POD_MAX_CORES);
    optic_status st = n == 1 ? optic_topology_single(&topo) : optic_topology_ring(n, true, &topo);
    if (st != OPTIC_OK) return st;
  }
  if (topo.cores < 1 || topo.cores > OPTIC_POD_MAX_CORES) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_create: %d cores; an emulated pod has 1..%d", topo.cores,
                      OPTIC_POD_MAX_CORES);
  }
  const optic_allocator *alloc = o.allocator != NULL ? o.allocator : optic_default_allocator();
  optic_pod_t *pod = NULL;
  optic_status st = optic_alloc(alloc, sizeof *pod, 64, (void **)&pod);
  if (st != OPTIC_OK) return st;
  memset(pod, 0, sizeof *pod);
  pod->allocator = *alloc;
  pod->n = topo.cores;
  pod->topo = topo;
  pod->heartbeat_timeout_ns = o.heartbeat_timeout_ns ? o.heartbeat_timeout_ns : DEFAULT_HEARTBEAT_NS;
  pod->timeout_ns = o.timeout_ns ? o.timeout_ns : DEFAULT_TIMEOUT_NS;
  pod->chunk_bytes = o.chunk_bytes ? o.chunk_bytes : DEFAULT_CHUNK_BYTES;
  pod->kernels = optic_binary_kernels_get();
  optic_topology_ring_order(&topo, pod->ring);
  for (int p = 0; p < pod->n; p++) pod->ring_pos[pod->ring[p]] = p;
  st = optic_alloc(alloc, sizeof(pod_slot) * (size_t)pod->n, 64, (void **)&pod->slot);
  if (st != OPTIC_OK) {
    optic_free(alloc, pod, sizeof *pod, 64);
    return st;
  }
  memset(pod->slot, 0, sizeof(pod_slot) * (size_t)pod->n);
  for (int k = 0; k < pod->n; k++) {
    pod->core[k].pod = pod;
    pod->core[k].index = k;
  }
  pthread_mutex_init(&pod->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&pod->cv, &ca);
  pthread_condattr_destroy(&ca);
  *out = pod;
  return OPTIC_OK;
}

void optic_pod_destroy(optic_pod_t *pod) {
  if (pod == NULL) return;
  for (int k = 0; k < pod->n; k++) {
    optic_free(&pod->allocator, pod->core[k].scratch, pod->core[k].scratch_bytes, 64);
  }
  pthread_mutex_destroy(&pod->mu);
  pthread_cond_destroy(&pod->cv);
  optic_allocator a = pod->allocator;
  optic_free(&a, pod->slot, sizeof(pod_slot) * (size_t)pod->n, 64);
  optic_free(&a, pod, sizeof *pod, 64);
}

int optic_pod_cores(const optic_pod_t *pod) { return pod ? pod->n : 0; }
int optic_pod_core_index(const optic_pod_core_t *core) { return core->index; }
int optic_pod_core_count(const optic_pod_core_t *core) { return core->pod->n; }
optic_pod_t *optic_pod_core_pod(optic_pod_core_t *core) { return core->pod; }

const char *optic_pod_core_message(const optic_pod_t *pod, int core) {
  if (pod == NULL || core < 0 || core >= pod->n) return "";
  return pod->message[core];
}

optic_status optic_pod_inject_fault(optic_pod_t *pod, int core, uint64_t at_call, optic_pod_fault fault) {
  if (pod == NULL || core < 0 || core >= pod->n) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_inject_fault: core %d outside the pod", core);
  }
  if (fault != OPTIC_POD_FAULT_NONE && fault != OPTIC_POD_FAULT_CRASH && fault != OPTIC_POD_FAULT_STALL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_inject_fault: unknown fault %d", (int)fault);
  }
  if (fault != OPTIC_POD_FAULT_NONE && at_call == 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_inject_fault: at_call is 1-based");
  }
  pod->fault[core] = fault;
  pod->fault_at[core] = at_call;
  return OPTIC_OK;
}

/* ---------------------------------------------------------------- failure */

void pod_wake(optic_pod_t *pod) {
  if (atomic_load(&pod->sleepers) > 0) {
    pthread_mutex_lock(&pod->mu);
    pthread_cond_broadcast(&pod->cv);
    pthread_mutex_unlock(&pod->mu);
  }
}

/* The first reason wins. A core that loses the race waits (a few hundred
 * ns: the winner is formatting one line, lock-free) until it is readable, so
 * whatever it publishes next (failed_mask, aborted) never lets a peer read
 * "(reason being recorded)": an ASan CI run once saw that when two cores
 * noticed the same crash together. */
__attribute__((format(printf, 2, 0))) static void set_reason(optic_pod_t *pod, const char *fmt, va_list ap) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&pod->reason_set, &expected, 1)) {
    vsnprintf(pod->reason, sizeof pod->reason, fmt, ap);
    atomic_store(&pod->reason_set, 2); /* reason readable */
    return;
  }
  /* yield, not spin: on a loaded machine the winner may be waiting for our CPU */
  while (atomic_load(&pod->reason_set) != 2) sched_yield();
}

void pod_abort(optic_pod_t *pod, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_reason(pod, fmt, ap);
  va_end(ap);
  atomic_store(&pod->aborted, 1);
  pod_wake(pod);
}

static void mark_failed(optic_pod_t *pod, int core, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void mark_failed(optic_pod_t *pod, int core, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_reason(pod, fmt, ap);
  va_end(ap);
  atomic_fetch_or(&pod->failed_mask, 1ull << core);
  pod_wake(pod);
}

static const char *reason_of(optic_pod_t *pod) {
  return atomic_load(&pod->reason_set) == 2 ? pod->reason : "(reason being recorded)";
}

/* PEER_FAILED if the pod has a failed core or was aborted. */
static optic_status check_failed(optic_pod_core_t *c, const char *what) {
  optic_pod_t *pod = c->pod;
  uint64_t mask = atomic_load(&pod->failed_mask);
  if (mask != 0 || atomic_load(&pod->aborted)) {
    return optic_fail(OPTIC_ERR_PEER_FAILED, "%s on core %d: %s", what, c->index, reason_of(pod));
  }
  return OPTIC_OK;
}

void pod_heartbeat_excuse(optic_pod_core_t *c) {
  if (!c->crashed) atomic_store_explicit(&c->pod->slot[c->index].heartbeat_ns, UINT64_MAX, memory_order_relaxed);
}

void pod_heartbeat_now(optic_pod_core_t *c) {
  if (!c->crashed) atomic_store_explicit(&c->pod->slot[c->index].heartbeat_ns, optic_now_ns(), memory_order_relaxed);
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

optic_status pod_enter(optic_pod_core_t *c, const char *what) {
  optic_pod_t *pod = c->pod;
  if (c->crashed) {
    return optic_fail(OPTIC_ERR_INTERNAL, "%s: core %d is dead (injected fault)", what, c->index);
  }
  c->calls++;
  optic_pod_fault f = pod->fault[c->index];
  if (f != OPTIC_POD_FAULT_NONE && c->calls == pod->fault_at[c->index]) {
    c->crashed = true; /* from now on: no heartbeats */
    if (f == OPTIC_POD_FAULT_CRASH) {
      return optic_fail(OPTIC_ERR_INTERNAL, "%s: core %d crashed (injected fault at call %llu)", what, c->index,
                        (unsigned long long)c->calls);
    }
    /* Stall: hang silently until the run has failed, with a cap so nothing
     * hangs. Any failure ends it, not only our own: once another core has
     * been declared failed (one descheduled past the heartbeat timeout on a
     * loaded machine, say) every survivor returns PEER_FAILED without
     * polling us, so nobody would ever declare us and we would sit out the
     * whole cap (50 timeouts: 100 s at the default) after the run was over. */
    uint64_t start = optic_now_ns(), cap = 50 * pod->heartbeat_timeout_ns;
    while (!atomic_load(&pod->failed_mask) && !atomic_load(&pod->aborted) && optic_now_ns() - start < cap) {
      sleep_ns(SLEEP_NS);
    }
    return optic_fail(OPTIC_ERR_PEER_FAILED, "%s: core %d stalled (injected fault at call %llu): %s", what, c->index,
                      (unsigned long long)c->calls, reason_of(pod));
  }
  pod_heartbeat_now(c);
  return check_failed(c, what);
}

/* One poll while waiting on core w: heartbeat, failure state, w's liveness,
 * the timeout. */
static optic_status poll_peer(optic_pod_core_t *c, int w, uint64_t now, uint64_t start, const char *what,
                              pod_ready_fn ready, const void *ctx) {
  optic_pod_t *pod = c->pod;
  pod_heartbeat_now(c);
  optic_status st = check_failed(c, what);
  if (st != OPTIC_OK) return st;
  pod_slot *s = &pod->slot[w];
  if (atomic_load(&s->exited)) {
    /* w may have arrived and returned from the SPMD function since ready()
     * named it: its exit is stored after its arrival, so ask ready() again
     * now that the exit is seen (OK: the caller's loop re-evaluates). */
    if (ready(pod, ctx) != w) return OPTIC_OK;
    mark_failed(pod, w, "core %d returned from the SPMD function while core %d waited in %s", w, c->index, what);
    return check_failed(c, what);
  }
  uint64_t hb = atomic_load_explicit(&s->heartbeat_ns, memory_order_relaxed);
  if (now > hb && now - hb > pod->heartbeat_timeout_ns) {
    mark_failed(pod, w, "core %d silent for %.1f ms (heartbeat timeout %.1f ms), noticed by core %d in %s", w,
                (double)(now - hb) * 1e-6, (double)pod->heartbeat_timeout_ns * 1e-6, c->index, what);
    return check_failed(c, what);
  }
  if (now - start > pod->timeout_ns) {
    pod_abort(pod, "core %d timed out after %.1f ms in %s waiting for core %d", c->index, (double)(now - start) * 1e-6,
              what, w);
    return optic_fail(OPTIC_ERR_TIMEOUT, "%s on core %d: waited %.1f ms for core %d (timeout %.1f ms)", what, c->index,
                      (double)(now - start) * 1e-6, w, (double)pod->timeout_ns * 1e-6);
  }
  return OPTIC_OK;
}

static int current_cpu(void) {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

/* Publishes the CPU this core runs on, for peers deciding whether to spin. */
static int note_cpu(optic_pod_core_t *c) {
  int cpu = current_cpu();
  pod_slot *s = &c->pod->slot[c->index];
  if (atomic_load_explicit(&s->cpu, memory_order_relaxed) != cpu)
    atomic_store_explicit(&s->cpu, cpu, memory_order_relaxed);
  return cpu;
}

optic_status pod_wait(optic_pod_core_t *c, pod_ready_fn ready, const void *ctx, const char *what) {
  optic_pod_t *pod = c->pod;
  /* Spin while the awaited core last ran on another CPU: it is making progress
   * while we poll, and a yield could hand our CPU to another process for a
   * whole time slice. When it last ran on our CPU (more runnable threads than
   * CPUs), every poll only delays it, so go straight to yielding. */
  const int cpu = note_cpu(c);
  uint64_t spin0 = 0;
  for (int i = 0;; i++) {
    int w = ready(pod, ctx);
    if (w < 0) return OPTIC_OK;
    if ((i & 63) == 0) {
      if (cpu >= 0 && atomic_load_explicit(&pod->slot[w].cpu, memory_order_relaxed) == cpu) break;
      uint64_t now = optic_now_ns();
      if (i == 0) {
        spin0 = now;
      } else if (now - spin0 > SPIN_NS) {
        break;
      }
    }
    cpu_relax();
  }
  uint64_t start = optic_now_ns();
  for (;;) {
    int w = ready(pod, ctx);
    if (w < 0) return OPTIC_OK;
    uint64_t now = optic_now_ns();
    optic_status st = poll_peer(c, w, now, start, what, ready, ctx);
    if (st != OPTIC_OK) return st;
    if (now - start < YIELD_NS) {
      sched_yield();
      continue;
    }
    /* Sleep until a signaller wakes us (it stores its predicate before it
     * looks at `sleepers`, and we re-check the predicate after announcing
     * ourselves, under the lock) or SLEEP_NS passes. */
    atomic_fetch_add(&pod->sleepers, 1);
    pthread_mutex_lock(&pod->mu);
    if (ready(pod, ctx) >= 0 && !atomic_load(&pod->aborted) && !atomic_load(&pod->failed_mask)) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      uint64_t wake = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + SLEEP_NS;
      ts.tv_sec = (time_t)(wake / 1000000000ull);
      ts.tv_nsec = (long)(wake % 1000000000ull);
      pthread_cond_timedwait(&pod->cv, &pod->mu, &ts);
    }
    pthread_mutex_unlock(&pod->mu);
    atomic_fetch_sub(&pod->sleepers, 1);
  }
}

typedef struct progress_wait {
  int peer;
  uint64_t target;
} progress_wait;

static int progress_ready(const optic_pod_t *pod, const void *ctx) {
  const progress_wait *w = ctx;
  return atomic_load_explicit(&pod->slot[w->peer].progress, memory_order_acquire) >= w->target ? -1 : w->peer;
}

optic_status pod_wait_progress(optic_pod_core_t *c, int peer, uint64_t target, const char *what) {
  if (atomic_load_explicit(&c->pod->slot[peer].progress, memory_order_acquire) >= target) return OPTIC_OK;
  progress_wait w = {peer, target};
  return pod_wait(c, progress_ready, &w, what);
}

void pod_set_progress(optic_pod_core_t *c, uint64_t value) {
  note_cpu(c);
  atomic_store(&c->pod->slot[c->index].progress, value);
  pod_wake(c->pod);
}

/* ---------------------------------------------------------------- barrier */

typedef struct barrier_wait {
  uint64_t seq;
} barrier_wait;

static int barrier_ready(const optic_pod_t *pod, const void *ctx) {
  const barrier_wait *b = ctx;
  for (int k = 0; k < pod->n; k++) {
    if (atomic_load_explicit(&pod->slot[k].barrier_seq, memory_order_acquire) < b->seq) return k;
  }
  return -1;
}

optic_status optic_pod_barrier(optic_pod_core_t *c) {
  if (c == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_barrier: core is NULL");
  optic_status st = pod_enter(c, "barrier");
  if (st != OPTIC_OK) return st;
  barrier_wait b = {++c->barrier_seq};
  atomic_store(&c->pod->slot[c->index].barrier_seq, b.seq); /* the predicate, then the wake-up */
  pod_wake(c->pod);
  return pod_wait(c, barrier_ready, &b, "barrier");
}

optic_status optic_pod_heartbeat(optic_pod_core_t *c) {
  if (c == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_heartbeat: core is NULL");
  if (c->crashed) return optic_fail(OPTIC_ERR_INTERNAL, "heartbeat: core %d is dead (injected fault)", c->index);
  pod_heartbeat_now(c);
  return check_failed(c, "heartbeat");
}

/* -------------------------------------------------------------------- run */

optic_status optic_pod_run(optic_pod_t *pod, optic_pod_fn fn, void *user, optic_status *statuses) {
  if (pod == NULL || fn == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_run: NULL pod or function");
  const int n = pod->n;
  uint64_t now = optic_now_ns();
  for (int k = 0; k < n; k++) {
    pod_slot *s = &pod->slot[k];
    atomic_store(&s->progress, 0);
    atomic_store(&s->work, NULL);
    atomic_store(&s->desc, 0);
    atomic_store(&s->barrier_seq, 0);
    atomic_store(&s->heartbeat_ns, now);
    atomic_store(&s->exited, 0);
    atomic_store(&s->cpu, -1);
    atomic_store(&s->clk_req, 0);
    atomic_store(&s->clk_rep, 0);
    atomic_store(&s->clk_done, 0);
    optic_pod_core_t *c = &pod->core[k];
    c->calls = c->seq = c->barrier_seq = 0;
    c->crashed = false;
    pod->message[k][0] = '\0';
  }
  atomic_store(&pod->failed_mask, 0);
  atomic_store(&pod->aborted, 0);
  atomic_store(&pod->reason_set, 0);
  pod->reason[0] = '\0';
  optic_status local[OPTIC_POD_MAX_CORES];
  /* `started` hands the state above to the threads and `finished` hands their
   * results back through atomics, so the ordering is visible to ThreadSanitizer
   * even though libgomp's own synchronization is not instrumented. */
  _Atomic int started = 0, finished = 0;
  atomic_store(&started, 1);
  int got = 0;
#pragma omp parallel num_threads(n)
  {
    int k = omp_get_thread_num();
    if (k == 0) got = omp_get_num_threads();
    (void)atomic_load(&started);
    if (omp_get_num_threads() == n) {
      optic_pod_core_t *c = &pod->core[k];
      optic_clear_error();
      optic_status st = fn(c, user);
      if (st != OPTIC_OK) snprintf(pod->message[k], sizeof pod->message[k], "%s", optic_last_error());
      local[k] = st;
      if (!c->crashed) atomic_store(&pod->slot[k].exited, 1);
      pod_wake(pod);
    }
    atomic_fetch_add(&finished, 1);
  }
  (void)atomic_load(&finished);
  if (got != n) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED,
                      "pod_run: OpenMP gave %d threads for %d cores (OMP_THREAD_LIMIT, or "
                      "called inside a parallel region without nested parallelism?)",
                      got, n);
  }
  int first = -1;
  for (int k = 0; k < n; k++) {
    if (statuses != NULL) statuses[k] = local[k];
    if (first < 0 && local[k] != OPTIC_OK) first = k;
  }
  if (first < 0) return OPTIC_OK;
  return optic_fail(local[first], "pod_run: core %d returned %s: %s", first, optic_status_name(local[first]),
                    pod->message[first]);
}
