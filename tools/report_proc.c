/* `optic report`'s benchmark processes: each run (optic_bench, or mpiexec
 * and its ranks) is a process group of its own, so a terminal's Ctrl-C
 * reaches only the report, which forwards it; the report is a child
 * subreaper (Linux), so a process whose parent died is re-parented to it and
 * reaped here rather than left running, and the run gets SIGTERM should the
 * report itself be killed outright. SIGINT/SIGTERM while a run is going
 * are recorded (report_stop_signal) and the caller ends the run, waits for
 * every process it started and exits with 128 + the signal. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "tools/report.h"

static volatile sig_atomic_t stop_signal;
static struct sigaction saved[2];
static bool handled[2];
static const int STOP_SIGNALS[2] = {SIGINT, SIGTERM};

static void on_stop(int sig) { stop_signal = sig; }

int report_stop_signal(void) { return stop_signal; }

void report_proc_begin(void) {
#ifdef PR_SET_CHILD_SUBREAPER
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
  for (int i = 0; i < 2; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigaction(STOP_SIGNALS[i], NULL, &saved[i]);
    /* A signal ignored at start (e.g. `optic report &` in a script) stays ignored. */
    handled[i] = saved[i].sa_handler != SIG_IGN;
    if (!handled[i]) continue;
    sa.sa_handler = on_stop; /* no SA_RESTART: poll and waitpid return EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(STOP_SIGNALS[i], &sa, NULL);
  }
}

void report_proc_finish(void) {
  for (int i = 0; i < 2; i++) {
    if (handled[i]) sigaction(STOP_SIGNALS[i], &saved[i], NULL);
  }
}

void report_proc_child(pid_t report_pid) {
  setpgid(0, 0);
#ifdef PR_SET_PDEATHSIG
  /* Should the report die without ending the run (SIGKILL), the run gets SIGTERM. */
  prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  if (getppid() != report_pid) _exit(128 + SIGTERM); /* it died before that took effect */
#endif
  (void)report_pid;
  for (int i = 0; i < 2; i++) {
    if (handled[i]) signal(STOP_SIGNALS[i], SIG_DFL);
  }
  /* Not the terminal's: a background process group reading it would stop
   * (mpiexec forwards stdin to rank 0). */
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, STDIN_FILENO), close(null);
}

/* Sends sig to every process below this one (a descendant's parent chain
 * leads here): those that left the run's process group, e.g. mpiexec's
 * ranks, each in a group of its own. Linux /proc; elsewhere nothing. */
static void signal_descendants(int sig) {
  enum { CAP = 8192 };
  static pid_t pid[CAP], ppid[CAP];
  static bool below[CAP];
  size_t n = 0;
  DIR *d = opendir("/proc");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < CAP) {
    char path[300], buf[512];
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *close_paren = strrchr(buf, ')'), state;
    int parent;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2) continue;
    pid[n] = (pid_t)atoi(e->d_name), ppid[n] = (pid_t)parent, below[n] = false;
    n++;
  }
  closedir(d);
  pid_t self = getpid();
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < n; i++) {
      if (below[i]) continue;
      bool parent_below = ppid[i] == self;
      for (size_t j = 0; j < n && !parent_below; j++) parent_below = below[j] && pid[j] == ppid[i];
      if (parent_below) below[i] = grew = true;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (below[i]) kill(pid[i], sig);
  }
}

/* Reads and drops what the run still writes to fd (so nothing blocks on a
 * full pipe while it shuts down); waits up to ms when there is nothing. */
static void drain(int fd, int ms) {
  if (fd < 0) {
    poll(NULL, 0, ms);
    return;
  }
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char scratch[4096];
  if (poll(&p, 1, ms) > 0 && (p.revents & POLLIN) && read(fd, scratch, sizeof scratch) <= 0) {
    poll(NULL, 0, ms); /* end of file: just wait */
  }
}

int report_proc_end(pid_t leader, int sig, int fd) {
  const double grace_s = 10, kill_s = 5;
  int status = -1;
  bool leader_done = false;
  if (sig == 0) {
    /* The run ended by itself: wait for its leader to exit (left unreaped, so
     * its process group id cannot be reused yet), then end what it left. */
    siginfo_t info;
    while (waitid(P_PID, (id_t)leader, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    sig = SIGKILL;
  }
  kill(-leader, sig); /* the leader is not reaped yet: the group id is still the run's */
  bool killing = sig == SIGKILL;
  if (killing) signal_descendants(SIGKILL); /* e.g. mpiexec's ranks, each in a group of its own */
  uint64_t start = optic_now_ns(), last_kill = start;
  for (;;) {
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
      if (w == leader) status = st, leader_done = true;
    }
    if (w < 0 && errno == ECHILD) break; /* nothing of the run is left */
    uint64_t now = optic_now_ns();
    if (!killing && (double)(now - start) * 1e-9 > grace_s) {
      if (!leader_done) kill(-leader, SIGKILL);
      killing = true, start = now;
    }
    if (killing && (double)(now - last_kill) * 1e-9 > 0.5) {
      /* every live process of the run descends from here (subreaper) */
      signal_descendants(SIGKILL);
      last_kill = now;
    }
    if (killing && (double)(now - start) * 1e-9 > kill_s) {
      fprintf(stderr, "report: benchmark processes survive SIGKILL for %g s; not waiting longer\n", kill_s);
      break;
    }
    drain(fd, 50);
  }
  if (!leader_done) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
