/* PyTorch as a peer: peer/torch/... measure with PyTorch the same work that
 * optic's benchmarks measure, in the same run, at torch.set_num_threads(T):
 *  - {softmax,layer_norm,sum_rows,sum_cols}/m:M/n:N/threads:T (bench/rows.c's
 *    shapes): torch.softmax(x, 1), nn.LayerNorm(N)(x), x.sum(1), x.sum(0);
 *  - mlp_step/batch:256/threads:T: model/mlp_train_step's training step
 *    (64-256-256-10, ReLU, softmax cross-entropy, forward + backward +
 *    torch.optim.Adam(foreach=True) at PyTorch's defaults);
 *  - conv_nchw/LAYER/threads:T and conv_channels_last/LAYER/threads:T:
 *    F.conv2d on bench/conv_layers.h's 3x3 layer, contiguous NCHW or
 *    channels_last (the NHWC/OHWI memory order kernel/conv/LAYER uses);
 *  - adam/n:16777216/threads:T: torch.optim.Adam(foreach=True).step() on 16M
 *    parameters (optim/step/adam's case);
 *  - chain/n:16777216/threads:T: y = relu(a*x + b)*s - c eagerly
 *    (exec/relu_affine's fused chain).
 * The timing is PyTorch's own, in a worker process (/usr/bin/python3
 * torch_peer.py next to optic_bench, started once; its docstring has the
 * protocol): after warm-up calls, each iteration asks for one timed batch of
 * calls (>= ~1 ms) and records the batch's time ("/manual_time"); the
 * counters are per call (ns_per_call, GB/s, GFLOP/s, samples_per_s), so they
 * compare with optic's per-call figures whatever the batch.
 *
 * Waiting policy: the worker inherits this process's environment, so both
 * sides wait as libgomp is told to (by default a spin of GOMP_SPINCOUNT =
 * 300000 pause loops, ~3.6 ms on this Xeon, before sleeping); the label names
 * the policy. Under load that spin dominates both sides at 2 threads (on the
 * loaded 2-core VM a 2-thread MLP step took 250 ms in torch and 28 ms in
 * optic, against 4.4 and 2.7 ms with GOMP_SPINCOUNT=2000); to compare there,
 * set GOMP_SPINCOUNT (or OMP_WAIT_POLICY) for the whole run. And the two
 * processes never run at once: before each request the benchmark process
 * waits until none of its other threads is running (its idle OpenMP team
 * asleep), and after a benchmark until none of the worker's threads is
 * (Linux /proc; counter idle_wait_us; a process still busy after
 * IDLE_WAIT_MAX_NS is not waited for again).
 *
 * Without PyTorch (Debian python3-torch) the benchmarks are skipped with that
 * message, and the ratios that need them are MISSING. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/conv_layers.h"
#include "core/unconst.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

enum { IDLE_WAIT_MAX_NS = 200000000, IDLE_POLL_NS = 200000, MLP_BATCH = 256, TORCH_MAX_ARGS = 9 };

static FILE *to_py, *from_py;
static pid_t py_pid;
static char py_note[256]; /* why the peer is absent, once known */
static char py_version[96];

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

/* Threads of process `pid` (0: this one) in state R (running or runnable),
 * from /proc/PID/task/TID/stat; -1 when /proc cannot be read. */
static int running_threads(pid_t pid) {
  char dir[64];
  if (pid > 0) snprintf(dir, sizeof dir, "/proc/%ld/task", (long)pid);
  else snprintf(dir, sizeof dir, "/proc/self/task");
  DIR *d = opendir(dir);
  if (d == NULL) return -1;
  int running = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[128], buf[512];
    snprintf(path, sizeof path, "%s/%.20s/stat", dir, e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue; /* the thread ended */
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the state follows "(comm)" */
    if (paren != NULL && paren[1] == ' ' && paren[2] == 'R') running++;
  }
  closedir(d);
  return running;
}

/* Waits until no more than `allowed` threads of pid (0: this process, whose
 * calling thread is itself running) are running; ns waited. */
static double wait_idle(pid_t pid, int allowed) {
  static bool given_up[2]; /* a process that once stayed busy past the limit is not waited for again */
  bool *gave_up = &given_up[pid > 0];
  uint64_t t0 = optic_now_ns();
  while (!*gave_up) {
    int r = running_threads(pid);
    uint64_t waited = optic_now_ns() - t0;
    if (r < 0 || r <= allowed) break;
    if (waited >= IDLE_WAIT_MAX_NS) *gave_up = true;
    struct timespec ts = {0, IDLE_POLL_NS};
    nanosleep(&ts, NULL);
  }
  return (double)(optic_now_ns() - t0);
}

/* Forks /usr/bin/python3 SCRIPT with pipes; false (py_note set) on failure. */
static bool spawn_worker(const char *script) {
  int in[2], out[2];
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
  return true;
}

/* Starts the worker once; false (with py_note) when PyTorch is not there. */
static bool worker(void) {
  if (to_py) return true;
  if (py_note[0]) return false;
  char script[PATH_MAX];
  if (!script_path(script, sizeof script) || access(script, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
    snprintf(py_note, sizeof py_note,
             "PyTorch peer skipped: /usr/bin/python3 or torch_peer.py next to optic_bench missing");
    return false;
  }
  if (!spawn_worker(script)) return false;
  char line[256] = "";
  if (to_py == NULL || from_py == NULL || fgets(line, sizeof line, from_py) == NULL ||
      strncmp(line, "ready ", 6) != 0) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(py_note, sizeof py_note, "%s", strncmp(line, "skip ", 5) == 0 ? line + 5 : "PyTorch peer did not start");
    stop_worker();
    return false;
  }
  line[strcspn(line, "\n")] = '\0';
  const char *wp = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
  char policy[48] = "default";
  if (wp || spin)
    snprintf(policy, sizeof policy, "%s%.12s%s%s%.12s", wp ? "OMP_WAIT_POLICY=" : "", wp ? wp : "",
             wp && spin ? " " : "", spin ? "GOMP_SPINCOUNT=" : "", spin ? spin : "");
  snprintf(py_version, sizeof py_version, "torch %.32s, OpenMP wait %s", line + 6, policy);
  atexit(stop_worker);
  return true;
}

/* One kind of peer/torch benchmark: the worker's op, its integer arguments
 * after THREADS (rows: m and n come from the benchmark's ranges 0 and 1), and
 * what one call moves or computes (per-call counters; 0: not reported). */
typedef struct torch_work {
  const char *op;
  bool rows; /* args are (m, n) from ranges 0, 1; threads from range 2 */
  int n_args;
  int64_t args[TORCH_MAX_ARGS];
  double bytes_per_element; /* rows: bytes per element of f32[m,n] */
  double bytes, flops, samples;
} torch_work;

/* The request line for st's arguments; false when it does not fit. */
static bool request_line(const torch_work *w, optic_bench_state *st, int threads, char *line, size_t cap) {
  int64_t args[TORCH_MAX_ARGS];
  int n = w->rows ? 2 : w->n_args;
  for (int i = 0; i < n; i++) args[i] = w->rows ? optic_bench_range(st, i) : w->args[i];
  int len = snprintf(line, cap, "%s %d", w->op, threads);
  for (int i = 0; i < n && len > 0 && (size_t)len < cap; i++)
    len += snprintf(line + len, cap - (size_t)len, " %lld", (long long)args[i]);
  return len > 0 && (size_t)len + 1 < cap && strcat(line, "\n") != NULL;
}

/* One timed batch: its seconds and calls; false (message set) on no answer. */
static bool ask(const char *request, double *sec, double *calls, char *why, size_t cap) {
  char line[256];
  if (fputs(request, to_py) < 0 || fflush(to_py) != 0 || fgets(line, sizeof line, from_py) == NULL) {
    snprintf(why, cap, "PyTorch peer: no answer from torch_peer.py");
    return false;
  }
  if (sscanf(line, "ok %lf %lf", sec, calls) != 2 || *calls < 1) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(why, cap, "PyTorch peer: %.200s", line);
    return false;
  }
  return true;
}

static void per_call_counters(optic_bench_state *st, const torch_work *w, double total, double calls) {
  double bytes = w->bytes;
  if (w->rows) bytes = w->bytes_per_element * (double)optic_bench_range(st, 0) * (double)optic_bench_range(st, 1);
  double per_s = total > 0 ? calls / total : 0.0;
  optic_bench_counter(st, "ns_per_call", calls > 0 ? total * 1e9 / calls : 0.0, OPTIC_BENCH_COUNTER_PLAIN);
  if (bytes > 0) optic_bench_counter(st, "GB/s", bytes * per_s * 1e-9, OPTIC_BENCH_COUNTER_PLAIN);
  if (w->flops > 0) optic_bench_counter(st, "GFLOP/s", w->flops * per_s * 1e-9, OPTIC_BENCH_COUNTER_PLAIN);
  if (w->samples > 0) optic_bench_counter(st, "samples_per_s", w->samples * per_s, OPTIC_BENCH_COUNTER_PLAIN);
}

static void run_torch(optic_bench_state *st, void *user) {
  const torch_work *w = user;
  const int threads = (int)optic_bench_range(st, w->rows ? 2 : 0);
  char request[256], why[256];
  if (!worker()) {
    optic_bench_skip_with_error(st, py_note);
    return;
  }
  if (!request_line(w, st, threads, request, sizeof request)) {
    optic_bench_skip_with_error(st, "PyTorch peer: request too long");
    return;
  }
  double total = 0, calls = 0, idle_ns = 0;
  while (optic_bench_keep_running(st)) {
    double sec = 0, k = 0;
    idle_ns += wait_idle(0, 1); /* this process's OpenMP team asleep (untimed: manual time) */
    if (!ask(request, &sec, &k, why, sizeof why)) {
      optic_bench_skip_with_error(st, why);
      return;
    }
    optic_bench_set_iteration_time(st, sec);
    total += sec, calls += k;
  }
  idle_ns += wait_idle(py_pid, 0); /* the worker's team asleep before optic runs again */
  per_call_counters(st, w, total, calls);
  optic_bench_counter(st, "idle_wait_us", idle_ns * 1e-3, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_set_label(st, py_version);
}

/* softmax and layer norm read and write f32[m,n] (8 B/element), the sums read it. */
static const torch_work ROWS[] = {
    {"softmax", true, 2, {0}, 8.0, 0, 0, 0},
    {"layer_norm", true, 2, {0}, 8.0, 0, 0, 0},
    {"sum_rows", true, 2, {0}, 4.0, 0, 0, 0},
    {"sum_cols", true, 2, {0}, 4.0, 0, 0, 0},
};

static void register_rows(void) {
  for (size_t k = 0; k < sizeof ROWS / sizeof ROWS[0]; k++) {
    optic_bench *b =
        optic_bench_register(bench_name("peer/torch/%s", ROWS[k].op), run_torch, OPTIC_UNCONST(void *, &ROWS[k]));
    for (int64_t t = 1; t <= 2; t++) {
      OPTIC_BENCH_ARGS(b, 127, 125, t);
      OPTIC_BENCH_ARGS(b, 4096, 1024, t);
    }
    OPTIC_BENCH_ARG_NAMES(b, "m", "n", "threads");
    optic_bench_use_manual_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}

static void register_threads(const char *name, const torch_work *w, optic_bench_unit unit) {
  optic_bench *b = optic_bench_register(name, run_torch, OPTIC_UNCONST(void *, w));
  OPTIC_BENCH_ARGS(b, 1);
  OPTIC_BENCH_ARGS(b, 2);
  OPTIC_BENCH_ARG_NAMES(b, "threads");
  optic_bench_use_manual_time(b);
  optic_bench_set_unit(b, unit);
}

/* MLP (examples/mlp_train's 64-256-256-10), conv 3x3 in two layouts, Adam 16M, the chain. */
static torch_work MLP, CONV[2], ADAM, CHAIN;

static void register_work(void) {
  const double n16 = 16777216.0;
  MLP = (torch_work){.op = "mlp_step", .n_args = 5, .args = {MLP_BATCH, 64, 256, 256, 10}, .samples = MLP_BATCH};
  const bench_conv_layer *l = &bench_conv_layers[0]; /* the 3x3 layer */
  for (int layout = 0; layout < 2; layout++) {
    CONV[layout] = (torch_work){.op = "conv",
                                .n_args = 9,
                                .args = {layout, l->n, l->c, l->k, l->h, l->w, l->r, l->s, l->pad},
                                .flops = bench_conv_flops(l)};
  }
  ADAM = (torch_work){.op = "adam", .n_args = 1, .args = {(int64_t)n16}, .bytes = 28.0 * n16};
  CHAIN = (torch_work){.op = "chain", .n_args = 1, .args = {(int64_t)n16}, .bytes = 16.0 * n16};
  register_threads(bench_name("peer/torch/mlp_step/batch:%d", MLP_BATCH), &MLP, OPTIC_BENCH_US);
  register_threads(bench_name("peer/torch/conv_nchw/%s", l->name), &CONV[0], OPTIC_BENCH_MS);
  register_threads(bench_name("peer/torch/conv_channels_last/%s", l->name), &CONV[1], OPTIC_BENCH_MS);
  register_threads("peer/torch/adam/n:16777216", &ADAM, OPTIC_BENCH_MS);
  register_threads("peer/torch/chain/n:16777216", &CHAIN, OPTIC_BENCH_MS);
}

void bench_register_torch(void) {
  register_rows();
  register_work();
}
