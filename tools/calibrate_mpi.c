/* `optic calibrate`'s MPI link figures (machine format 10): runs
 * optic_mpi_probe (tools/mpi_probe, built beside optic when MPI was found)
 * under the MPI launcher with 2 ranks, as the report runs its MPI benchmark,
 * and reads the latency and bandwidth it writes. Never fails the
 * calibration: without MPI, a launcher or a working probe the figures stay
 * 0 ("not measured") and `why` says what was missing. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/calibrate_measure.h"
#include "tools/mpi_launch.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define PROBE_TIMEOUT_MS 60000

/* The probe beside this executable. */
static bool probe_path(char *out, size_t size) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return false;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash == NULL) return false;
  slash[1] = 0;
  return snprintf(out, size, "%soptic_mpi_probe", self) < (int)size && tools_executable(out);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs argv with stdin, stdout and stderr on /dev/null; the exit status, or
 * -1 (could not start, killed, or past PROBE_TIMEOUT_MS: then SIGTERM, which
 * the launcher forwards to its ranks, and SIGKILL 2 s later). */
static int run_quiet(char **argv) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0), dup2(null, 1), dup2(null, 2);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  for (long waited = 0;; waited += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0) return -1;
    if (waited == PROBE_TIMEOUT_MS) kill(pid, SIGTERM);
    if (waited == PROBE_TIMEOUT_MS + 2000) kill(pid, SIGKILL);
    sleep_ms(10);
  }
}

static bool read_figures(const char *path, double *latency_ns, double *bandwidth) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  double l = 0, b = 0;
  int got = fscanf(f, "latency_ns %lf bandwidth %lf", &l, &b);
  fclose(f);
  if (got != 2 || !(l > 0 && l < 1e9) || !(b > 0 && b < 1e14)) return false;
  *latency_ns = l;
  *bandwidth = b;
  return true;
}

bool calib_measure_mpi_link(double *latency_ns, double *bandwidth, char *why, size_t why_size) {
  *latency_ns = 0, *bandwidth = 0;
  char probe[PATH_MAX], launcher[PATH_MAX], out[PATH_MAX];
  if (!probe_path(probe, sizeof probe)) {
    snprintf(why, why_size, "optic_mpi_probe not beside optic (MPI not found at configure)");
    return false;
  }
  if (!tools_mpi_launcher(launcher, sizeof launcher)) {
    snprintf(why, why_size, "no MPI launcher ($OPTIC_MPIRUN, mpirun on PATH)");
    return false;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(out, sizeof out, "%s/optic-mpi-probe-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  int fd = mkstemp(out);
  if (fd < 0) {
    snprintf(why, why_size, "cannot create a temporary file for the probe");
    return false;
  }
  close(fd);
  tools_mpi_env();
  char *argv[10];
  int a = tools_mpi_argv(argv, launcher, probe);
  argv[a++] = "--out";
  argv[a++] = out;
  argv[a] = NULL;
  int rc = run_quiet(argv);
  bool ok = rc == 0 && read_figures(out, latency_ns, bandwidth);
  remove(out);
  if (!ok) snprintf(why, why_size, "%s -np 2 %s failed (exit %d)", launcher, probe, rc);
  return ok;
}
