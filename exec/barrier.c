/* exec_barrier (exec/barrier.h): a counter + generation barrier.
 *
 * Arrival: fetch_add on `count` (acq_rel). The last arriver reads the
 * generation g it belongs to, resets the counter, publishes g + 1 (seq_cst
 * store, a release), and wakes the sleepers if there may be any. Every
 * other arriver waits for `gen` to leave g: first spinning (pause
 * instruction, time-bounded), then registering in `sleepers` and sleeping
 * on the futex word `gen` with expected value g, so a wake that happened
 * before it sleeps is never lost (the kernel compares gen with g).
 * Before spinning, a waiter looks at the CPUs the team's other threads last
 * arrived on (each publishes its own, relaxed: a hint); if one is its own
 * CPU it sleeps at once, since spinning could only delay that thread.
 * The seq_cst pair (waiter: sleepers++ then load gen; last arriver: store
 * gen then load sleepers) guarantees that either the waiter sees the new
 * generation or the last arriver sees the sleeper and wakes it.
 *
 * Why g is read before arriving is safe: a thread reaches generation g only
 * after it left g - 1 (it read gen == g, or published it), and gen cannot
 * move past g until this thread arrives. Reset before publish: the next
 * generation's arrivals only start after they read g + 1 (acquire), which
 * is ordered after the reset. */
#include "exec/barrier.h"
#include "core/unconst.h"

#include <limits.h>
#include <stdbool.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_pause(void) { _mm_pause(); }
#elif defined(__aarch64__)
static inline void cpu_pause(void) { __asm__ __volatile__("isb" ::: "memory"); }
#else
static inline void cpu_pause(void) {}
#endif

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_while(atomic_uint *word, unsigned expected) {
#if defined(__linux__)
  syscall(SYS_futex, OPTIC_UNCONST(unsigned *, word), FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
#else
  (void)word, (void)expected;
  sched_yield();
#endif
}

static void wake_all(atomic_uint *word) {
#if defined(__linux__)
  syscall(SYS_futex, OPTIC_UNCONST(unsigned *, word), FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

/* Online CPUs, read once (sysconf reads /sys: microseconds, too slow per run). */
static long online_cpus(void) {
  static atomic_long cached;
  long c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c == 0) {
    c = sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) c = 1;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

void exec_barrier_init(exec_barrier *b, unsigned n) {
  atomic_init(&b->count, 0);
  atomic_init(&b->gen, 0);
  atomic_init(&b->sleepers, 0);
  b->n = n ? n : 1;
  b->spin_max = (long)b->n <= online_cpus() ? EXEC_BARRIER_SPIN_NS : 0;
  b->spin_min = b->spin_max < EXEC_BARRIER_SPIN_MIN_NS ? b->spin_max : EXEC_BARRIER_SPIN_MIN_NS;
  atomic_init(&b->spin_ns, b->spin_max);
  atomic_init(&b->spins_skipped, 0);
  for (unsigned i = 0; i < EXEC_BARRIER_SLOTS; i++) atomic_init(&b->cpu[i], -1);
}

static int current_cpu(void) {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

/* Publishes thread t's CPU; returns it (-1: not known). */
static int note_cpu(exec_barrier *b, unsigned t) {
  int cpu = current_cpu();
  if (t < EXEC_BARRIER_SLOTS && atomic_load_explicit(&b->cpu[t], memory_order_relaxed) != cpu) {
    atomic_store_explicit(&b->cpu[t], cpu, memory_order_relaxed);
  }
  return cpu;
}

/* Whether another thread of the team last arrived on `cpu`. */
static bool cpu_shared(exec_barrier *b, unsigned t, int cpu) {
  if (cpu < 0) return false;
  unsigned n = b->n < EXEC_BARRIER_SLOTS ? b->n : EXEC_BARRIER_SLOTS;
  for (unsigned u = 0; u < n; u++) {
    if (u != t && atomic_load_explicit(&b->cpu[u], memory_order_relaxed) == cpu) return true;
  }
  return false;
}

void exec_barrier_set_spin(exec_barrier *b, unsigned spin_ns) {
  b->spin_max = b->spin_min = spin_ns;
  atomic_store_explicit(&b->spin_ns, spin_ns, memory_order_relaxed);
}

void exec_barrier_wait(exec_barrier *b, unsigned t) {
  if (b->n <= 1) return;
  const int cpu = note_cpu(b, t);
  unsigned g = atomic_load_explicit(&b->gen, memory_order_relaxed);
  if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
    atomic_store_explicit(&b->count, 0, memory_order_relaxed);
    atomic_store_explicit(&b->gen, g + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst) != 0) wake_all(&b->gen);
    return;
  }
  /* Spin (the clock is read every 8 pauses), adapting the budget. */
  unsigned budget = atomic_load_explicit(&b->spin_ns, memory_order_relaxed);
  if (budget && cpu_shared(b, t, cpu)) {
    budget = 0;
    atomic_fetch_add_explicit(&b->spins_skipped, 1, memory_order_relaxed);
  }
  if (budget) {
    uint64_t deadline = 0;
    for (unsigned i = 1;; i++) {
      if (atomic_load_explicit(&b->gen, memory_order_acquire) != g) {
        if (budget < b->spin_max) {
          unsigned up = budget * 2 < b->spin_max ? budget * 2 : b->spin_max;
          atomic_store_explicit(&b->spin_ns, up, memory_order_relaxed);
        }
        return;
      }
      cpu_pause();
      if ((i & 7) == 0) {
        uint64_t now = mono_ns();
        if (deadline == 0) deadline = now + budget;
        else if (now >= deadline) break;
      }
    }
    unsigned down = budget / 2 > b->spin_min ? budget / 2 : b->spin_min;
    atomic_store_explicit(&b->spin_ns, down, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&b->gen, memory_order_seq_cst) == g) sleep_while(&b->gen, g);
  atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
}
