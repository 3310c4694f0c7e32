/* optic_team (core/team.h): a caller plus up to OPTIC_TEAM_MAX - 1 workers.
 *
 * Fork: the caller writes the job (fn, arg, active), sets `pending` to the
 * worker count and bumps `gen` (seq_cst, a release); workers wait for gen to
 * leave the value they last saw (spin, then futex on gen), read the job
 * (acquire) and run it when their index is below `active`. Join: each
 * worker decrements `pending` (seq_cst, a release) and wakes the caller if
 * it reached 0 and the caller may be asleep; the caller waits for 0 (spin,
 * then futex on pending). The seq_cst pairs (sleeper: announce, then re-read
 * the word; waker: change the word, then read the announcement) guarantee
 * that either the sleeper sees the change or the waker sees the sleeper.
 * The caller writes the next job only after pending reached 0, that is
 * after every worker finished reading the previous one. */
#include "core/team.h"
#include "core/unconst.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

uint64_t optic_wait_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

long optic_wait_online_cpus(void) {
  static atomic_long cached; /* sysconf reads /sys: microseconds, too slow per run */
  long c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c == 0) {
    c = sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) c = 1;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

int optic_wait_current_cpu(void) {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

void optic_wait_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("isb" ::: "memory");
#endif
}

void optic_wait_sleep(atomic_uint *word, unsigned expected) {
#if defined(__linux__)
  syscall(SYS_futex, OPTIC_UNCONST(unsigned *, word), FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
#else
  (void)word, (void)expected;
  sched_yield();
#endif
}

void optic_wait_wake_all(atomic_uint *word) {
#if defined(__linux__)
  syscall(SYS_futex, OPTIC_UNCONST(unsigned *, word), FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

bool optic_wait_spin(atomic_uint *word, unsigned expected, atomic_uint *budget_ns, unsigned min_ns, unsigned max_ns) {
  unsigned budget = atomic_load_explicit(budget_ns, memory_order_relaxed);
  if (budget == 0) return atomic_load_explicit(word, memory_order_acquire) != expected;
  uint64_t deadline = 0;
  for (unsigned i = 1;; i++) { /* the clock is read every 8 pauses */
    if (atomic_load_explicit(word, memory_order_acquire) != expected) {
      if (budget < max_ns)
        atomic_store_explicit(budget_ns, budget * 2 < max_ns ? budget * 2 : max_ns, memory_order_relaxed);
      return true;
    }
    optic_wait_pause();
    if ((i & 7) == 0) {
      uint64_t now = optic_wait_now_ns();
      if (deadline == 0) deadline = now + budget;
      else if (now >= deadline) break;
    }
  }
  atomic_store_explicit(budget_ns, budget / 2 > min_ns ? budget / 2 : min_ns, memory_order_relaxed);
  return false;
}

typedef struct team_worker {
  struct optic_team *tm;
  int index;
  unsigned seen; /* the generation it last ran */
} team_worker;

struct optic_team {
  _Alignas(64) atomic_uint gen;     /* fork generation: the workers' futex word */
  _Alignas(64) atomic_uint pending; /* workers yet to finish this generation: the caller's futex word */
  atomic_uint worker_sleepers;      /* workers that may be in (or about to enter) a futex wait */
  atomic_uint caller_sleeping;
  atomic_uint busy; /* a run is under way */
  atomic_uint idle_budget, join_budget, spins_skipped;
  atomic_int caller_cpu;
  atomic_int worker_cpu[OPTIC_TEAM_MAX];
  /* the job: written by the caller before the fork, read by workers after it */
  optic_team_fn fn;
  void *arg;
  int active;
  bool stop;
  int workers; /* started */
  bool start_failed;
  atomic_uint spin_max;         /* read by running workers while the team grows */
  struct optic_team *next_free; /* the shared pool's stack (under g_pool_mu) */
  pthread_t tid[OPTIC_TEAM_MAX];
  team_worker w[OPTIC_TEAM_MAX];
};

/* The shared pools: teams released by their last run, most recent on top.
 * Teams with more threads than CPUs never spin (start_workers) and keep
 * their extra workers waking at each run, so they stay apart: a run that
 * fits the CPUs never borrows one (a 2-thread run on a team a 3-thread
 * checkpoint pass had grown took 50 us instead of 10). */
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static optic_team *g_pool, *g_pool_over;

static void *worker_main(void *p) {
  team_worker *w = p;
  optic_team *tm = w->tm;
  for (;;) {
    int cpu = optic_wait_current_cpu();
    bool shared = cpu >= 0 && atomic_load_explicit(&tm->caller_cpu, memory_order_relaxed) == cpu;
    if (shared) atomic_fetch_add_explicit(&tm->spins_skipped, 1, memory_order_relaxed);
    if (shared || !optic_wait_spin(&tm->gen, w->seen, &tm->idle_budget, OPTIC_TEAM_SPIN_MIN_NS,
                                   atomic_load_explicit(&tm->spin_max, memory_order_relaxed))) {
      atomic_fetch_add_explicit(&tm->worker_sleepers, 1, memory_order_seq_cst);
      while (atomic_load_explicit(&tm->gen, memory_order_seq_cst) == w->seen) optic_wait_sleep(&tm->gen, w->seen);
      atomic_fetch_sub_explicit(&tm->worker_sleepers, 1, memory_order_relaxed);
    }
    w->seen = atomic_load_explicit(&tm->gen, memory_order_acquire);
    if (tm->stop) return NULL;
    atomic_store_explicit(&tm->worker_cpu[w->index], optic_wait_current_cpu(), memory_order_relaxed);
    if (w->index < tm->active) tm->fn(tm->arg, w->index, tm->active);
    if (atomic_fetch_sub_explicit(&tm->pending, 1, memory_order_seq_cst) == 1 &&
        atomic_load_explicit(&tm->caller_sleeping, memory_order_seq_cst) != 0) {
      optic_wait_wake_all(&tm->pending);
    }
  }
}

optic_team *optic_team_create(void) {
  optic_team *tm = calloc(1, sizeof *tm);
  if (tm == NULL) return NULL;
  atomic_init(&tm->idle_budget, OPTIC_TEAM_SPIN_NS);
  atomic_init(&tm->join_budget, OPTIC_TEAM_SPIN_NS);
  atomic_init(&tm->caller_cpu, -1);
  for (int i = 0; i < OPTIC_TEAM_MAX; i++) atomic_init(&tm->worker_cpu[i], -1);
  atomic_init(&tm->spin_max, OPTIC_TEAM_SPIN_NS);
  return tm;
}

/* Starts workers until the team has `want` (or the system refuses one). */
static void start_workers(optic_team *tm, int want) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  unsigned g = atomic_load_explicit(&tm->gen, memory_order_relaxed);
  while (tm->workers < want) {
    int i = tm->workers + 1;
    tm->w[i] = (team_worker){.tm = tm, .index = i, .seen = g};
    if (pthread_create(&tm->tid[i], NULL, worker_main, &tm->w[i]) != 0) {
      tm->start_failed = true;
      break;
    }
    tm->workers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  /* An oversubscribed team never spins: a spinner could only delay a peer. */
  unsigned max = tm->workers + 1 <= optic_wait_online_cpus() ? OPTIC_TEAM_SPIN_NS : 0;
  atomic_store_explicit(&tm->spin_max, max, memory_order_relaxed);
  if (max == 0) {
    atomic_store_explicit(&tm->idle_budget, 0, memory_order_relaxed);
    atomic_store_explicit(&tm->join_budget, 0, memory_order_relaxed);
  }
}

/* Bumps the generation: the workers start the job written before. */
static void fork_workers(optic_team *tm) {
  atomic_store_explicit(&tm->pending, (unsigned)tm->workers, memory_order_relaxed);
  atomic_fetch_add_explicit(&tm->gen, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&tm->worker_sleepers, memory_order_seq_cst) != 0) optic_wait_wake_all(&tm->gen);
}

static void join_workers(optic_team *tm, int cpu) {
  bool shared = false;
  for (int i = 1; cpu >= 0 && i < tm->active; i++) {
    if (atomic_load_explicit(&tm->worker_cpu[i], memory_order_relaxed) == cpu) shared = true;
  }
  if (shared) atomic_fetch_add_explicit(&tm->spins_skipped, 1, memory_order_relaxed);
  unsigned p;
  while ((p = atomic_load_explicit(&tm->pending, memory_order_acquire)) != 0) {
    if (shared || !optic_wait_spin(&tm->pending, p, &tm->join_budget, OPTIC_TEAM_SPIN_MIN_NS,
                                   atomic_load_explicit(&tm->spin_max, memory_order_relaxed))) {
      atomic_store_explicit(&tm->caller_sleeping, 1, memory_order_seq_cst);
      while ((p = atomic_load_explicit(&tm->pending, memory_order_seq_cst)) != 0) optic_wait_sleep(&tm->pending, p);
      atomic_store_explicit(&tm->caller_sleeping, 0, memory_order_relaxed);
    }
  }
}

int optic_team_prepare(optic_team *tm, int nt) {
  if (nt > OPTIC_TEAM_MAX) nt = OPTIC_TEAM_MAX;
  if (tm == NULL || nt <= 1 || atomic_exchange_explicit(&tm->busy, 1, memory_order_acquire) != 0) return 1;
  if (tm->workers < nt - 1 && !tm->start_failed) start_workers(tm, nt - 1);
  int n = tm->workers + 1 < nt ? tm->workers + 1 : nt;
  atomic_store_explicit(&tm->busy, 0, memory_order_release);
  return n;
}

int optic_team_run(optic_team *tm, int nt, optic_team_fn fn, void *arg) {
  if (nt > OPTIC_TEAM_MAX) nt = OPTIC_TEAM_MAX;
  if (tm == NULL || nt <= 1 || atomic_exchange_explicit(&tm->busy, 1, memory_order_acquire) != 0) {
    fn(arg, 0, 1);
    return 1;
  }
  if (tm->workers < nt - 1 && !tm->start_failed) start_workers(tm, nt - 1);
  int n = tm->workers + 1 < nt ? tm->workers + 1 : nt;
  if (n <= 1) {
    atomic_store_explicit(&tm->busy, 0, memory_order_release);
    fn(arg, 0, 1);
    return 1;
  }
  int cpu = optic_wait_current_cpu();
  atomic_store_explicit(&tm->caller_cpu, cpu, memory_order_relaxed);
  tm->fn = fn, tm->arg = arg, tm->active = n;
  fork_workers(tm);
  fn(arg, 0, n);
  join_workers(tm, optic_wait_current_cpu());
  atomic_store_explicit(&tm->busy, 0, memory_order_release);
  return n;
}

void optic_team_destroy(optic_team *tm) {
  if (tm == NULL) return;
  if (tm->workers > 0) {
    tm->stop = true;
    fork_workers(tm);
    for (int i = 1; i <= tm->workers; i++) pthread_join(tm->tid[i], NULL);
  }
  free(tm);
}

unsigned optic_team_spins_skipped(const optic_team *tm) {
  return tm ? atomic_load_explicit(&OPTIC_UNCONST(optic_team *, tm)->spins_skipped, memory_order_relaxed) : 0;
}

/* fork: a child has none of the parent's workers, so it forgets the pool
 * (those teams leak in the child; a run there starts new ones). */
static void pool_prepare(void) { pthread_mutex_lock(&g_pool_mu); }
static void pool_parent(void) { pthread_mutex_unlock(&g_pool_mu); }
static void pool_child(void) {
  g_pool = g_pool_over = NULL;
  pthread_mutex_unlock(&g_pool_mu);
}
static void pool_init(void) { pthread_atfork(pool_prepare, pool_parent, pool_child); }

static bool oversubscribed(int threads) { return threads > optic_wait_online_cpus(); }

optic_team *optic_team_acquire_for(int nt) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, pool_init);
  pthread_mutex_lock(&g_pool_mu);
  optic_team **pool = oversubscribed(nt) && g_pool_over ? &g_pool_over : &g_pool;
  optic_team *tm = *pool;
  if (tm) *pool = tm->next_free;
  pthread_mutex_unlock(&g_pool_mu);
  return tm ? tm : optic_team_create();
}

optic_team *optic_team_acquire(void) { return optic_team_acquire_for(2); }

void optic_team_release(optic_team *tm) {
  if (tm == NULL) return;
  pthread_mutex_lock(&g_pool_mu);
  optic_team **pool = oversubscribed(tm->workers + 1) ? &g_pool_over : &g_pool;
  tm->next_free = *pool;
  *pool = tm;
  pthread_mutex_unlock(&g_pool_mu);
}
