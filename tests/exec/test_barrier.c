/* exec_barrier (exec/barrier.h): N pthreads x 100k rounds (or 1.5 s per team) with a data
 * handoff checked every round (each thread writes its slot with plain
 * stores before the barrier, every thread reads all slots after it), for
 * 2..8 threads including teams larger than the machine, with the default
 * spin budget and with no spin (every waiter sleeps on the futex), plus a
 * straggler case in which one thread always arrives late so the others
 * reach the sleeping path. A SIGALRM watchdog ends the process if a
 * barrier ever hangs. The spin budget stays fixed after waits that slept.
 * Two threads pinned to one CPU never spin (each
 * waits for a thread that cannot run meanwhile); pinned to two, they do. Plain pthreads and C11 atomics: also run under TSan,
 * which checks the ordering claim (writes before the barrier are visible
 * after it) on every round: with the arrive/leave orderings weakened to
 * relaxed, TSan reports the handoff as a data race on the first case. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <optic/optic.h>

#include "core/team.h"
#include "exec/barrier.h"
#include "tests/harness.h"

#define MAX_T 8
/* Each team runs ROUNDS rounds or stops (at a round every thread agrees on)
 * after this long: on a loaded 2-core machine an oversubscribed team can
 * take ~100 us a round, and the whole test must stay under 20 s. */
#define TEAM_BUDGET_S 1.5

typedef struct team {
  exec_barrier bar;
  int n;
  long rounds;
  double deadline;   /* thread 0 ends the run early past this (monotonic seconds) */
  atomic_long limit; /* rounds to run: set by thread 0 before a barrier, read by all after it */
  int straggler;     /* thread index that does extra work before arriving, or -1 */
  int pin;           /* -1: no pinning; 0: every thread on cpus[0]; 1: thread t on cpus[t] */
  int cpus[MAX_T];
  uint64_t slot[2][MAX_T]; /* plain memory: the barrier must order it */
  atomic_long bad;
  atomic_long arrivals;
} team;

typedef struct arg {
  team *tm;
  int t;
} arg;

static volatile uint64_t g_sink;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *p) {
  arg *a = p;
  team *tm = a->tm;
  long bad = 0;
  if (tm->pin >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(tm->cpus[tm->pin ? a->t : 0], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) atomic_fetch_add(&tm->bad, 1000000);
  }
  for (long r = 0; r < tm->rounds; r++) {
    uint64_t *buf = tm->slot[r & 1];
    buf[a->t] = (uint64_t)r * MAX_T + (uint64_t)a->t + 1;
    if (a->t == tm->straggler) {
      uint64_t x = 0;
      for (int k = 0; k < 2000; k++) x += (uint64_t)k * (uint64_t)r;
      g_sink = x;
    }
    /* A loaded machine: thread 0 makes this round the last one; every
     * thread reads the limit after this round's barrier, so all agree. */
    if (a->t == 0 && (r & 255) == 255 && now_s() > tm->deadline) {
      atomic_store_explicit(&tm->limit, r + 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&tm->arrivals, 1, memory_order_relaxed);
    exec_barrier_wait(&tm->bar, (unsigned)a->t);
    for (int u = 0; u < tm->n; u++) {
      if (buf[u] != (uint64_t)r * MAX_T + (uint64_t)u + 1) bad++;
    }
    if (r + 1 >= atomic_load_explicit(&tm->limit, memory_order_relaxed)) break;
    /* The next write to this buffer is in round r + 2, after barrier r + 1,
     * which this thread only reaches once it has read everything here. */
  }
  atomic_fetch_add(&tm->bad, bad);
  return NULL;
}

static team tm; /* one team at a time; large enough to keep off the stack */

static void run_team_pinned(int n, long rounds, int64_t spin_ns, int straggler, int pin, const int *cpus) {
  memset(&tm, 0, sizeof tm);
  tm.pin = pin;
  for (int t = 0; pin >= 0 && t < n; t++) tm.cpus[t] = cpus[t];
  exec_barrier_init(&tm.bar, (unsigned)n);
  if (spin_ns >= 0) exec_barrier_set_spin(&tm.bar, (unsigned)spin_ns);
  tm.n = n;
  tm.rounds = rounds;
  tm.straggler = straggler;
  atomic_init(&tm.bad, 0);
  atomic_init(&tm.arrivals, 0);
  atomic_init(&tm.limit, rounds);
  pthread_t th[MAX_T];
  arg args[MAX_T];
  double t0 = now_s();
  tm.deadline = t0 + TEAM_BUDGET_S;
  for (int t = 0; t < n; t++) {
    args[t] = (arg){&tm, t};
    OT_CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0, "pthread_create %d", t);
  }
  for (int t = 0; t < n; t++) pthread_join(th[t], NULL);
  double dt = now_s() - t0;
  long bad = atomic_load(&tm.bad), arr = atomic_load(&tm.arrivals);
  rounds = atomic_load(&tm.limit); /* fewer when the time budget ran out */
  OT_CHECK(bad == 0, "%d threads, spin %lld ns, straggler %d: %ld stale reads after the barrier", n, (long long)spin_ns,
           straggler, bad);
  OT_CHECK(arr == (long)n * rounds, "%d threads: %ld arrivals, expected %ld", n, arr, (long)n * rounds);
  OT_CHECK(atomic_load(&tm.bar.count) == 0, "%d threads: counter %u after the last round", n,
           atomic_load(&tm.bar.count));
  OT_CHECK(atomic_load(&tm.bar.gen) == (unsigned)rounds, "%d threads: generation %u after %ld rounds", n,
           atomic_load(&tm.bar.gen), rounds);
  OT_CHECK(rounds >= 256, "%d threads: only %ld rounds", n, rounds);
  printf("  %d threads, spin %lld ns, straggler %d, pin %d: %ld rounds in %.3f s (%.2f us/round), %u spins skipped\n",
         n, (long long)spin_ns, straggler, pin, rounds, dt, dt * 1e6 / (double)rounds,
         atomic_load(&tm.bar.spins_skipped));
}

static void run_team(int n, long rounds, int64_t spin_ns, int straggler) {
  run_team_pinned(n, rounds, spin_ns, straggler, -1, NULL);
}

/* Two threads pinned to one CPU: a waiter never spins (its peer cannot run
 * meanwhile), so every wait but the first few sleeps at once; pinned to two
 * CPUs, no wait skips its spin. Needs sched_getaffinity (Linux). */
static void shared_cpu_sleeps(void) {
  cpu_set_t set;
  OT_CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
  int cpus[MAX_T], n_cpus = 0;
  for (int c = 0; c < CPU_SETSIZE && n_cpus < MAX_T; c++) {
    if (CPU_ISSET(c, &set)) cpus[n_cpus++] = c;
  }
  if (n_cpus < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    printf("  skipped: fewer than 2 CPUs (a 2-thread team would not spin at all)\n");
    return;
  }
  const long rounds = 20000;
  run_team_pinned(2, rounds, -1, -1, 0, cpus);
  long done = atomic_load(&tm.limit);
  unsigned skipped = atomic_load(&tm.bar.spins_skipped);
  /* each round has one waiter; only rounds before both CPUs are known may spin */
  OT_CHECK(skipped + 2 >= (unsigned)done, "one CPU: %u of %ld waits skipped the spin (want all but 2)", skipped, done);
  run_team_pinned(2, rounds, -1, -1, 1, cpus);
  skipped = atomic_load(&tm.bar.spins_skipped);
  OT_CHECK(skipped == 0, "two CPUs: %u waits skipped the spin (want 0)", skipped);
}

#define ROUNDS 100000

static void handoff_default_spin(void) {
  static const int ns[] = {2, 3, 4, 8}; /* 3, 4, 8: more threads than this 2-core machine */
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) run_team(ns[i], ROUNDS, -1, -1);
}

static void handoff_no_spin(void) {
  run_team(2, ROUNDS, 0, -1);
  run_team(5, ROUNDS, 0, -1);
}

static void straggler_sleeps(void) {
  run_team(2, ROUNDS / 4, 1000, 1);
  run_team(4, ROUNDS / 4, 1000, 0);
}

static void single_thread_and_reuse(void) {
  exec_barrier b;
  exec_barrier_init(&b, 1);
  for (int i = 0; i < 10; i++) exec_barrier_wait(&b, 0); /* n == 1: returns at once */
  exec_barrier_init(&b, 0);                              /* 0 is treated as 1 */
  exec_barrier_wait(&b, 0);
  OT_CHECK(b.n == 1);
  /* Re-initialised for a new team after the old one finished. */
  run_team(3, 1000, -1, -1);
  run_team(2, 1000, -1, -1);
}

/* The spin budget stays fixed: a waiter whose peer arrives long after the
 * budget sleeps, and the next wait still spins the whole budget (a budget
 * cut after each sleep made every later short wait pay the wake-up). */
typedef struct late_arg {
  exec_barrier *b;
  unsigned t;
} late_arg;

static void *late_arrival(void *p) {
  late_arg *a = p;
  for (int r = 0; r < 4; r++) {
    if (a->t == 1) nanosleep(&(struct timespec){0, 2000000}, NULL); /* 2 ms, far past the 20 us budget */
    exec_barrier_wait(a->b, a->t);
  }
  return NULL;
}

static void budget_fixed_after_sleep(void) {
  exec_barrier b;
  exec_barrier_init(&b, 2);
  unsigned want = optic_wait_online_cpus() >= 2 ? EXEC_BARRIER_SPIN_NS : 0;
  OT_CHECK(atomic_load(&b.spin_ns) == want, "budget %u at start, want %u", atomic_load(&b.spin_ns), want);
  pthread_t th;
  late_arg a0 = {&b, 0}, a1 = {&b, 1};
  OT_CHECK(pthread_create(&th, NULL, late_arrival, &a1) == 0, "pthread_create failed");
  late_arrival(&a0);
  pthread_join(th, NULL);
  OT_CHECK(atomic_load(&b.spin_ns) == want, "budget %u after 4 waits that slept, want %u (fixed)",
           atomic_load(&b.spin_ns), want);
}

static void watchdog(int sig) {
  (void)sig;
  static const char msg[] = "test_barrier: watchdog: a barrier did not complete within 20 s\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(1);
}

static void arm(void) {
  signal(SIGALRM, watchdog);
  alarm(20);
}

static const ot_case cases[] = {
    {"single_thread_and_reuse", single_thread_and_reuse},
    {"handoff_default_spin", handoff_default_spin},
    {"handoff_no_spin", handoff_no_spin},
    {"straggler_sleeps", straggler_sleeps},
    {"shared_cpu_sleeps", shared_cpu_sleeps},
    {"budget_fixed_after_sleep", budget_fixed_after_sleep},
};

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  arm();
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
