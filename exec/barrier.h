/* exec_barrier: the runtime's barrier between dependent steps of a run's
 * parallel region (exec/run.c) and between a dot's pack and compute phases
 * (exec/ops_linalg.c). It replaces `#pragma omp barrier`, whose libgomp
 * implementation spins for GOMP_SPINCOUNT (300k) iterations before sleeping:
 * on a loaded machine the spinner burns its time slice while the peer it
 * waits for is descheduled (2-thread runs were up to 18x slower than 1-thread
 * runs at load average 6). This one spins for a short, time-bounded while
 * (EXEC_BARRIER_SPIN_NS, with a pause instruction), then sleeps on a futex
 * (Linux; sched_yield elsewhere). As the pod layer's waits do, it does not
 * spin at all when another thread of the team last arrived on the waiter's
 * own CPU (Linux: sched_getcpu): that thread cannot run while this one
 * spins, so the waiter sleeps at once.
 *
 * Memory ordering: every write a thread made before exec_barrier_wait is
 * visible to every thread of the same barrier after its exec_barrier_wait
 * returns (each arrival is a release, each departure an acquire: the same
 * guarantee `omp barrier` gives). It is built only on C11 atomics (and the
 * futex as a sleep, never as a synchronisation), so ThreadSanitizer sees it.
 *
 * Thread safety: exactly `n` threads call exec_barrier_wait per generation;
 * the object must not be moved or re-initialised while any thread is inside.
 * Internal header (not installed). */
#ifndef OPTIC_EXEC_BARRIER_H
#define OPTIC_EXEC_BARRIER_H

#include <stdatomic.h>
#include <stdint.h>

/* How long a waiter spins before it sleeps when the team fits on the
 * machine's cores (no spin at all when it does not). The budget is fixed,
 * of the order of a futex wake-up's latency: spinning that long, then
 * sleeping, costs at most about twice the better of the two choices
 * whatever the wait turns out to be (the classic spin-then-block bound), and
 * at most one budget of CPU per wait on a loaded machine. An adaptive budget
 * that halved after every sleep made each short wait that followed a long
 * one pay the whole wake-up (a 2-thread MLP training step ran 1.30 ms
 * against 0.90 ms with the fixed budget, quiet machine). */
#ifndef EXEC_BARRIER_SPIN_NS
#define EXEC_BARRIER_SPIN_NS 20000
#endif
/* Threads whose CPU the barrier tracks (thread indexes at or above it still
 * synchronise; they only do not publish their CPU). */
#define EXEC_BARRIER_SLOTS 64

typedef struct exec_barrier {
  _Alignas(64) atomic_uint count;     /* arrivals in the current generation */
  _Alignas(64) atomic_uint gen;       /* the generation; the futex word */
  atomic_uint sleepers;               /* waiters that may be in (or about to enter) futex wait */
  atomic_uint spin_ns;                /* the spin budget (optic_wait_spin's; fixed here) */
  unsigned n;                         /* threads per generation */
  unsigned spin_max, spin_min;        /* the budget's bounds (equal: no adaptation) */
  atomic_uint spins_skipped;          /* waits that slept at once: a team thread shared the CPU (tests) */
  atomic_int cpu[EXEC_BARRIER_SLOTS]; /* the CPU thread t last arrived on; -1: not known */
} exec_barrier;

/* Prepares `b` for `n` >= 1 threads (0 counts as 1). The spin budget's
 * ceiling is EXEC_BARRIER_SPIN_NS when n <= the online CPUs, 0 (sleep at
 * once) when the team is oversubscribed. Never fails, never allocates. */
void exec_barrier_init(exec_barrier *b, unsigned n);

/* Fixes the spin budget at spin_ns (no adaptation; 0: always sleep). Tests. */
void exec_barrier_set_spin(exec_barrier *b, unsigned spin_ns);

/* Waits until all n threads have arrived (n == 1: returns at once). t is the
 * caller's index in the team (0 .. n-1), used only to publish its CPU. */
void exec_barrier_wait(exec_barrier *b, unsigned t);

#endif
