/* optic_team (core/team.h), the fork-join team exec runs and optimizer steps
 * run on. For teams of 1..8 threads (more than the machine has included):
 * every thread index runs exactly once per run with the n the run returns,
 * optic_team_prepare predicts that n, what the caller wrote before a run is
 * seen by every thread (plain memory), and what each thread wrote is seen by
 * the caller after it (so TSan checks the ordering claim on every round).
 * Runs spaced out so the workers fall asleep on the futex between them, a
 * nested run (which must run alone on its caller), a NULL team, and two
 * threads pinned to one CPU (the waits sleep at once: spins_skipped grows),
 * the shared pool (distinct teams lent at once, the last released first), and
 * a fork child's runs (new workers, not the parent's).
 * A SIGALRM watchdog ends the process if a run ever hangs. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/team.h"
#include "tests/harness.h"

#define MAX_T 8

typedef struct job {
  uint64_t token;          /* written by the caller before each run */
  uint64_t seen[MAX_T];    /* per thread: the token it read */
  uint64_t written[MAX_T]; /* per thread: written in the run, checked after it */
  atomic_int calls[MAX_T];
  atomic_int bad_nt;
  int want_nt;
  optic_team *nest; /* non-NULL: thread 0 runs a nested job on this team */
  atomic_int nested_n;
  int pin_cpu; /* >= 0: every thread pins itself to this CPU */
} job;

static void work(void *arg, int t, int nt) {
  job *j = arg;
  if (nt != j->want_nt) atomic_fetch_add(&j->bad_nt, 1);
  if (t < 0 || t >= MAX_T) return;
  if (j->pin_cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(j->pin_cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  atomic_fetch_add(&j->calls[t], 1);
  j->seen[t] = j->token;
  j->written[t] = j->token * 31 + (uint64_t)t;
}

static void check_runs(optic_team *tm, int nt, int rounds, long gap_us) {
  job j = {.pin_cpu = -1};
  int want = optic_team_prepare(tm, nt);
  OT_CHECK(want >= 1 && want <= nt, "nt %d: prepare gave %d", nt, want);
  j.want_nt = want;
  long bad = 0;
  for (int r = 0; r < rounds; r++) {
    j.token = (uint64_t)r * 1000003u + (uint64_t)nt;
    int n = optic_team_run(tm, nt, work, &j);
    if (n != want) bad++;
    for (int t = 0; t < want; t++) {
      if (j.seen[t] != j.token || j.written[t] != j.token * 31 + (uint64_t)t) bad++;
    }
    if (gap_us > 0) usleep((useconds_t)gap_us);
  }
  for (int t = 0; t < MAX_T; t++) {
    int c = atomic_load(&j.calls[t]);
    if (c != (t < want ? rounds : 0)) bad++;
  }
  OT_CHECK(bad == 0 && atomic_load(&j.bad_nt) == 0,
           "nt %d, %d rounds, gap %ld us: %ld mismatches, %d calls with the wrong nt (repro: exec_team handoff)", nt,
           rounds, gap_us, bad, atomic_load(&j.bad_nt));
}

static void handoff(void) {
  for (int nt = 1; nt <= MAX_T; nt++) {
    optic_team *tm = optic_team_create();
    OT_CHECK(tm != NULL, "create");
    if (!tm) return;
    check_runs(tm, nt, nt <= 2 ? 20000 : 2000, 0);
    check_runs(tm, nt > 1 ? nt - 1 : 1, 500, 0); /* fewer than the team has: the rest sit out */
    optic_team_destroy(tm);
  }
}

static void sleeping_workers(void) {
  /* 300 us between runs: longer than any spin budget, so every fork wakes a
   * sleeping worker and every join may sleep. */
  optic_team *tm = optic_team_create();
  check_runs(tm, 2, 300, 300);
  check_runs(tm, 4, 100, 300);
  optic_team_destroy(tm);
  optic_team_destroy(NULL);
}

static void nested_work(void *arg, int t, int nt) {
  job *j = arg;
  (void)nt;
  if (t == 0) {
    job inner = {.want_nt = 1, .pin_cpu = -1, .token = 7};
    atomic_store(&j->nested_n, optic_team_run(j->nest, 2, work, &inner));
    if (atomic_load(&inner.calls[0]) != 1 || inner.seen[0] != 7 || atomic_load(&inner.bad_nt) != 0)
      atomic_store(&j->nested_n, -1);
  }
  atomic_fetch_add(&j->calls[t], 1);
}

static void nested_and_null(void) {
  optic_team *tm = optic_team_create();
  job j = {.nest = tm, .pin_cpu = -1};
  int n = optic_team_run(tm, 2, nested_work, &j);
  OT_CHECK(n >= 1 && atomic_load(&j.nested_n) == 1, "nested run: outer %d, inner %d (want 1, alone)", n,
           atomic_load(&j.nested_n));
  job k = {.want_nt = 1, .pin_cpu = -1, .token = 5};
  OT_CHECK(optic_team_run(NULL, 4, work, &k) == 1 && atomic_load(&k.calls[0]) == 1 && k.seen[0] == 5,
           "a NULL team runs the job on the caller");
  OT_CHECK(optic_team_prepare(NULL, 4) == 1 && optic_team_prepare(tm, 0) == 1, "prepare of NULL / nt 0");
  optic_team_destroy(tm);
}

static void shared_cpu_sleeps(void) {
  cpu_set_t mine;
  if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < 1) return;
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++) {
    if (CPU_ISSET(c, &mine)) cpu = c;
  }
  optic_team *tm = optic_team_create();
  job j = {.pin_cpu = cpu};
  j.want_nt = optic_team_prepare(tm, 2);
  for (int r = 0; r < 200; r++) {
    j.token = (uint64_t)r;
    optic_team_run(tm, 2, work, &j);
  }
  unsigned skipped = optic_team_spins_skipped(tm);
  OT_CHECK(j.want_nt == 1 || skipped > 0, "two threads pinned to CPU %d: no wait skipped its spin", cpu);
  optic_team_destroy(tm);
  pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
}

static void shared_pool(void) {
  optic_team *a = optic_team_acquire(), *b = optic_team_acquire();
  OT_CHECK(a != NULL && b != NULL && a != b, "two teams lent at once are distinct");
  optic_team_release(a);
  optic_team_release(b);
  optic_team *c = optic_team_acquire();
  OT_CHECK(c == b, "acquire lends the team released last");
  check_runs(c, 2, 1000, 0);
  optic_team_release(c);
  optic_team_release(NULL);
}

/* A team grown past the CPUs never spins: a run that fits the CPUs must not
 * borrow it (it would sleep at every wait), one that does not gets it back. */
static void oversubscribed_pool(void) {
  const int cpus = (int)optic_wait_online_cpus(), over = cpus + 1;
  optic_team *big = optic_team_acquire_for(over);
  OT_CHECK(big != NULL, "acquire_for(%d)", over);
  check_runs(big, over, 10, 0);
  optic_team_release(big);
  optic_team *fit = optic_team_acquire_for(2);
  OT_CHECK(cpus < 2 || fit != big, "a 2-thread run on %d CPUs was lent the team grown to %d threads", cpus, over);
  optic_team *again = optic_team_acquire_for(over);
  OT_CHECK(cpus < 2 || again == big, "a %d-thread run was not lent the %d-thread team released last", over, over);
  optic_team_release(again);
  optic_team_release(fit);
}

/* A child of fork has none of the parent's workers: its runs must start
 * new ones instead of waiting for threads that do not exist there. */
static void fork_child_runs(void) {
  if (OT_UNDER_TSAN) {
    printf("skip fork_child_runs: ThreadSanitizer cannot start threads after a multi-threaded fork\n");
    return;
  }
  optic_team *tm = optic_team_acquire();
  check_runs(tm, 2, 100, 0);
  optic_team_release(tm);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    optic_team *c = optic_team_acquire();
    job j = {.pin_cpu = -1, .token = 3};
    j.want_nt = optic_team_prepare(c, 2);
    int n = optic_team_run(c, 2, work, &j);
    _exit(n == j.want_nt && j.seen[0] == 3 && (n < 2 || j.seen[1] == 3) ? 0 : 1);
  }
  int status = -1;
  OT_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait");
  OT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's team run failed or hung (status %d)", status);
}

static void watchdog(int sig) {
  (void)sig;
  static const char msg[] = "test_team: watchdog: a team run did not complete within 60 s\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(1);
}

static const ot_case cases[] = {
    {"handoff", handoff},
    {"sleeping_workers", sleeping_workers},
    {"nested_and_null", nested_and_null},
    {"shared_cpu_sleeps", shared_cpu_sleeps},
    {"shared_pool", shared_pool},
    {"oversubscribed_pool", oversubscribed_pool},
    {"fork_child_runs", fork_child_runs},
};

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGALRM, watchdog);
  alarm(60);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
