/* Shared by the pod tests: a watchdog that fails the test instead of letting
 * it hang, and per-core failure notes (the harness's counters are not
 * thread-safe, so cores record and the main thread reports). */
#ifndef OPTIC_TESTS_POD_TEST_H
#define OPTIC_TESTS_POD_TEST_H

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <optic/pod.h>

#include "tests/harness.h"

static void pod_test_watchdog_fired(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: watchdog: the test ran past its deadline (a pod call hung)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

/* Arms a deadline for the whole process (re-arming replaces it). */
static inline void pod_test_watchdog(unsigned seconds) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* the passed cases reach the log before a watchdog kill */
  signal(SIGALRM, pod_test_watchdog_fired);
  alarm(seconds);
}

typedef struct pod_test_notes {
  _Atomic int failures;
  char first[OPTIC_POD_MAX_CORES][256];
  int count[OPTIC_POD_MAX_CORES];
} pod_test_notes;

static inline void pod_note(pod_test_notes *n, int core, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void pod_note(pod_test_notes *n, int core, const char *fmt, ...) {
  if (n->count[core]++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->first[core], sizeof n->first[core], fmt, ap);
    va_end(ap);
  }
  atomic_fetch_add(&n->failures, 1);
}

/* Reports the notes through the harness (main thread, after the run). */
static inline void pod_notes_report(pod_test_notes *n, int cores, const char *what) {
  for (int k = 0; k < cores; k++) {
    OT_CHECK(n->count[k] == 0, "%s: core %d: %d failures, first: %s", what, k, n->count[k], n->first[k]);
  }
}

#endif
