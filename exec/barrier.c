/* exec_barrier (exec/barrier.h): a counter + generation barrier.
 *
 * Arrival: fetch_add on `count` (acq_rel). The last arriver reads the
 * generation g it belongs to, resets the counter, publishes g + 1 (seq_cst
 * store, a release), and wakes the sleepers if there may be any. Every
 * other arriver waits for `gen` to leave g: first spinning (pause
 * instruction, for the fixed budget), then registering in `sleepers` and sleeping
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
#include "core/team.h"

void exec_barrier_init(exec_barrier *b, unsigned n) {
  atomic_init(&b->count, 0);
  atomic_init(&b->gen, 0);
  atomic_init(&b->sleepers, 0);
  b->n = n ? n : 1;
  b->spin_max = (long)b->n <= optic_wait_online_cpus() ? EXEC_BARRIER_SPIN_NS : 0;
  b->spin_min = b->spin_max;
  atomic_init(&b->spin_ns, b->spin_max);
  atomic_init(&b->spins_skipped, 0);
  /* only threads t < n publish and read a slot (note_cpu, cpu_shared) */
  for (unsigned i = 0; i < b->n && i < EXEC_BARRIER_SLOTS; i++) atomic_init(&b->cpu[i], -1);
}

/* Publishes thread t's CPU; returns it (-1: not known). */
static int note_cpu(exec_barrier *b, unsigned t) {
  int cpu = optic_wait_current_cpu();
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
    if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst) != 0) optic_wait_wake_all(&b->gen);
    return;
  }
  /* Spin (for the fixed budget), unless a team thread shares this CPU. */
  bool shared = atomic_load_explicit(&b->spin_ns, memory_order_relaxed) != 0 && cpu_shared(b, t, cpu);
  if (shared) atomic_fetch_add_explicit(&b->spins_skipped, 1, memory_order_relaxed);
  if (!shared && optic_wait_spin(&b->gen, g, &b->spin_ns, b->spin_min, b->spin_max)) return;
  atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&b->gen, memory_order_seq_cst) == g) optic_wait_sleep(&b->gen, g);
  atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
}
