/* PyTorch as a peer (bench/rows.c's shapes): peer/torch/{softmax,layer_norm,
 * sum_rows,sum_cols}/m:M/n:N/threads:T time torch.softmax(x, 1),
 * nn.LayerNorm(N)(x), x.sum(1) and x.sum(0) on f32[M,N] with
 * torch.set_num_threads(T), no autograd. The timing is PyTorch's own, in a
 * worker process (/usr/bin/python3 torch_peer.py next to optic_bench, started
 * once): each iteration asks for one timed batch of calls (~1 ms) and records
 * the batch's time ("/manual_time"); `ns_per_call` and `GB/s` are per call,
 * and interleaved repetitions alternate optic and PyTorch in the same run. Without PyTorch (Debian python3-torch) the
 * benchmarks are skipped with that message, and the ratios that need them
 * are MISSING. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_util.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static FILE *to_py, *from_py;
static pid_t py_pid;
static char py_note[256]; /* why the peer is absent, once known */
static char py_version[64];

/* The script beside the executable (the build copies it there). */
static bool script_path(char *out, size_t cap) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return false;
  *slash = '\0';
  return snprintf(out, cap, "%s/torch_peer.py", exe) < (int)cap;
}

static void stop_worker(void) {
  if (to_py) fclose(to_py);
  if (from_py) fclose(from_py);
  to_py = from_py = NULL;
  if (py_pid > 0) waitpid(py_pid, NULL, 0);
  py_pid = 0;
}

/* Starts the worker once; false (with py_note) when PyTorch is not there. */
static bool worker(void) {
  if (to_py) return true;
  if (py_note[0]) return false;
  char script[PATH_MAX];
  int in[2], out[2];
  if (!script_path(script, sizeof script) || access(script, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
    snprintf(py_note, sizeof py_note,
             "PyTorch peer skipped: /usr/bin/python3 or torch_peer.py next to optic_bench missing");
    return false;
  }
  if (pipe(in) != 0 || pipe(out) != 0) {
    snprintf(py_note, sizeof py_note, "PyTorch peer skipped: pipe failed");
    return false;
  }
  fflush(NULL);
  py_pid = fork();
  if (py_pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execl("/usr/bin/python3", "python3", script, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (py_pid < 0) {
    close(in[1]), close(out[0]);
    snprintf(py_note, sizeof py_note, "PyTorch peer skipped: fork failed");
    return false;
  }
  signal(SIGPIPE, SIG_IGN);
  to_py = fdopen(in[1], "w");
  from_py = fdopen(out[0], "r");
  char line[256] = "";
  if (to_py == NULL || from_py == NULL || fgets(line, sizeof line, from_py) == NULL ||
      strncmp(line, "ready ", 6) != 0) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(py_note, sizeof py_note, "%s", strncmp(line, "skip ", 5) == 0 ? line + 5 : "PyTorch peer did not start");
    stop_worker();
    return false;
  }
  line[strcspn(line, "\n")] = '\0';
  snprintf(py_version, sizeof py_version, "torch %.48s", line + 6);
  atexit(stop_worker);
  return true;
}

static const char *const OPS[] = {"softmax", "layer_norm", "sum_rows", "sum_cols"};

static void run_torch(optic_bench_state *st, void *user) {
  const int op = (int)(intptr_t)user;
  const long m = (long)optic_bench_range(st, 0), n = (long)optic_bench_range(st, 1);
  const int threads = (int)optic_bench_range(st, 2);
  if (!worker()) {
    optic_bench_skip_with_error(st, py_note);
    return;
  }
  double total = 0, calls = 0;
  while (optic_bench_keep_running(st)) {
    char line[128];
    double sec = 0, k = 0;
    if (fprintf(to_py, "%s %ld %ld %d\n", OPS[op], m, n, threads) < 0 || fflush(to_py) != 0 ||
        fgets(line, sizeof line, from_py) == NULL || sscanf(line, "ok %lf %lf", &sec, &k) != 2 || k < 1) {
      optic_bench_skip_with_error(st, "PyTorch peer: no answer from torch_peer.py");
      return;
    }
    optic_bench_set_iteration_time(st, sec);
    total += sec, calls += k;
  }
  /* an iteration is one batch: per-call figures come from the counters */
  double bytes = op < 2 ? 8.0 * (double)m * (double)n : 4.0 * (double)m * (double)n;
  optic_bench_counter(st, "ns_per_call", calls > 0 ? total * 1e9 / calls : 0.0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "GB/s", total > 0 ? bytes * calls / total * 1e-9 : 0.0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_set_label(st, py_version);
}

void bench_register_torch(void) {
  for (int k = 0; k < 4; k++) {
    char name[64];
    snprintf(name, sizeof name, "peer/torch/%s", OPS[k]);
    optic_bench *b = optic_bench_register(name, run_torch, (void *)(intptr_t)k);
    for (int64_t t = 1; t <= 2; t++) {
      OPTIC_BENCH_ARGS(b, 127, 125, t);
      OPTIC_BENCH_ARGS(b, 4096, 1024, t);
    }
    OPTIC_BENCH_ARG_NAMES(b, "m", "n", "threads");
    optic_bench_use_manual_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
