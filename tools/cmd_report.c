/* `optic report`: calibrates if no machine model exists, runs optic_bench
 * (bench/) on a suite chosen by mode or --filter with a progress line on
 * stderr, then prints the table (measured vs estimated, % of the machine
 * bound, peer ratios, memory) and writes report.json and report.html
 * (tools/report*.c). --input renders a report from an existing run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"
#include "tools/cli.h"
#include "tools/report.h"
#include "core/unconst.h"

/* Suites that carry the compiler's estimates (est_* counters) by convention:
 * every benchmark under these prefixes is in the default and quick runs. */
#define ESTIMATED_SUITES "^(graph|model|step|optim|pod|ckpt|exec|runtime)/"
/* Left out of the default and quick sets (POSIX extended regexes over the
 * listed names), to keep them under 3 minutes and 30 s on 2 cores; their bars
 * are then MISSING with the spec's "pending" note. The 1 GiB checkpoint and
 * write+fsync runs take ~10 s each per repetition: --full only (the default
 * runs the 256 MiB bars). */
#define FULL_ONLY "^(ckpt/[^/]+/tensors:64|peer/write_fsync|peer/sha256_memory)/bytes:1073741824/"
#define QUICK_SKIPS FULL_ONLY "|^(ckpt/[^/]+/tensors:64|peer/write_fsync|peer/sha256_memory)/bytes:268435456/"
/* The bounds the table reads cases against. */
#define BOUND_PEERS "^peer/(fma_peak|stream_triad|rmw_axpy)/"

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic report [--quick|--full] [--filter REGEX] [--json FILE] [--html FILE]\n"
          "                    [--out-dir DIR] [--repetitions N] [--min-time S] [--timeout S]\n"
          "                    [--machine FILE] [--bench PATH] [--ratios FILE] [--input RUN.json]\n"
          "                    [--clock wall|cpu] [--wide]\n"
          "       optic report --help\n\n"
          "Runs optic_bench and reads every case against the compiler's estimate (est_*\n"
          "counters), the machine bound (model from `optic calibrate`, measured first if\n"
          "missing) and its peer (bench/ratios.json). Prints a table and a summary line;\n"
          "writes DIR/report.json (Google Benchmark JSON + context.optic) and\n"
          "DIR/report.html (SVG plots). DIR defaults to the current directory.\n\n"
          "  (default)  every peer-ratio benchmark, the FMA/STREAM bounds and every\n"
          "             graph-backed suite (graph/ model/ step/ optim/ pod/ ckpt/ exec/\n"
          "             runtime/) but the 1 GiB checkpoint runs (--full only), plus the\n"
          "             pod MPI bars (optic_bench_pod_mpi under mpirun -np 2), 5 repetitions\n"
          "             interleaved, 0.1 s per case: under 3 minutes on 2 cores\n"
          "  --quick    the default set without the 256 MiB checkpoint runs and the MPI\n"
          "             run, 1 repetition, 0.05 s per case: under 30 s\n"
          "  --full     every benchmark and the MPI run, 3 repetitions interleaved\n"
          "             (tens of minutes)\n"
          "  --filter   a --benchmark_filter regex instead of the mode's set (the MPI\n"
          "             run too when it selects pod_mpi/ or peer/mpi_allreduce/ names);\n"
          "             only the bars whose two benchmarks it selects are listed\n"
          "  --input    no run: read an existing optic_bench JSON (e.g. to re-render)\n"
          "  --timeout  stop the run after S seconds (default 3600; 0 = none)\n"
          "  --clock    wall (default: the bars' definition) or cpu: the peer ratios on the\n"
          "             critical-path CPU-time counters, as bench/ratios.py --clock cpu\n"
          "  --wide     every column (rate, peer figure, memory estimate, the ratio's own\n"
          "             terms), names unbroken; by default the table fits 100 columns\n\n"
          "optic_bench is found as --bench, $OPTIC_BENCH, then next to this executable,\n"
          "../bench/ (build tree) or ../libexec/optic/ (install). The ratio spec: --ratios,\n"
          "$OPTIC_RATIOS, then ratios.json next to optic_bench (the build copies it).\n"
          "The machine model: --machine, else optic_machine_host's file ($OPTIC_MACHINE,\n"
          "~/.config/optic/machine.json). A host model of an older machine-file format\n"
          "(calibrated by an older optic: it lacks figures this version estimates with, or\n"
          "measured one of them another way) is measured again first and the file\n"
          "replaced; report says so on stderr.\n"
          "SIGINT/SIGTERM stop the run and every process it started; the exit code is then\n"
          "128 + the signal.\n"
          "Exit codes: 0 ok (failed bars are reported, not errors), 1 runtime error, 2 usage\n"
          "(e.g. --quick with --full, a --filter that is not a valid regular expression).\n");
}

typedef struct opts {
  const char *mode, *filter, *json, *html, *out_dir, *machine, *bench, *ratios, *input;
  int repetitions;
  double min_time, timeout;
  bool cpu_clock, wide;
} opts;

static bool file_exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool exe_dir(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (!slash) return false;
  *slash = '\0';
  return true;
}

static bool locate_bench(const opts *o, char *out, size_t size) {
  const char *env = getenv("OPTIC_BENCH");
  if (o->bench) return snprintf(out, size, "%s", o->bench), file_exists(out);
  if (env && env[0]) return snprintf(out, size, "%s", env), file_exists(out);
  char dir[PATH_MAX];
  if (!exe_dir(dir, sizeof dir)) return false;
  const char *rel[] = {"/optic_bench", "/../bench/optic_bench", "/../libexec/optic/optic_bench"};
  for (size_t i = 0; i < 3; i++) {
    if (snprintf(out, size, "%s%s", dir, rel[i]) >= (int)size) continue;
    if (file_exists(out)) return true;
  }
  return false;
}

static bool locate_ratios(const opts *o, const char *bench, char *out, size_t size) {
  const char *env = getenv("OPTIC_RATIOS");
  if (o->ratios) return snprintf(out, size, "%s", o->ratios), file_exists(out);
  if (env && env[0]) return snprintf(out, size, "%s", env), file_exists(out);
  if (bench[0]) {
    snprintf(out, size, "%s", bench);
    char *slash = strrchr(out, '/');
    size_t used = slash ? (size_t)(slash - out + 1) : 0;
    snprintf(out + used, size - used, "ratios.json");
    if (file_exists(out)) return true;
  }
  char dir[PATH_MAX];
  if (exe_dir(dir, sizeof dir)) {
    if (snprintf(out, size, "%s/../share/optic/ratios.json", dir) < (int)size && file_exists(out)) return true;
  }
  return false;
}

/* ------------------------------------------------------------- running */

/* Complete lines of fd's pending bytes to fn; false at end of input. */
static bool read_lines(int fd, char *buf, size_t size, size_t *len, report_progress *p,
                       void (*fn)(report_progress *, const char *)) {
  ssize_t n = read(fd, buf + *len, size - 1 - *len);
  if (n <= 0) return false;
  *len += (size_t)n;
  buf[*len] = '\0';
  char *start = buf, *nl;
  while ((nl = strchr(start, '\n')) != NULL) {
    *nl = '\0';
    fn(p, start);
    start = nl + 1;
  }
  *len = strlen(start);
  memmove(buf, start, *len + 1);
  if (*len == size - 1) *len = 0; /* an absurdly long line: drop it */
  return true;
}

int report_run_child(char **argv, const char *log_path, double timeout_s, report_progress *prog, bool *timed_out) {
  int fds[2], ev[2]; /* stdout; optic_bench's start events ($OPTIC_BENCH_PROGRESS_FD) */
  *timed_out = false;
  if (pipe(fds) != 0) return -1;
  if (pipe(ev) != 0) {
    close(fds[0]), close(fds[1]);
    return -1;
  }
  report_proc_begin();
  pid_t self = getpid(), pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]), close(ev[0]), close(ev[1]);
    report_proc_finish();
    return -1;
  }
  if (pid == 0) {
    report_proc_child(self);
    dup2(fds[1], STDOUT_FILENO);
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) dup2(log, STDERR_FILENO);
    close(fds[0]), close(fds[1]), close(ev[0]);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", ev[1]);
    setenv("OPTIC_BENCH_PROGRESS_FD", fd, 1);
    execv(argv[0], argv);
    fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, 0); /* as the child does: whichever runs first */
  close(fds[1]), close(ev[1]);
  char buf[8192], evbuf[4096];
  size_t len = 0, evlen = 0;
  bool ev_open = true;
  uint64_t start = optic_now_ns();
  int stop = 0;
  for (;;) {
    struct pollfd pfd[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = ev_open ? ev[0] : -1, .events = POLLIN}};
    int pr = poll(pfd, 2, 1000);
    if ((stop = report_stop_signal()) != 0) break;
    if (timeout_s > 0 && (double)(optic_now_ns() - start) * 1e-9 > timeout_s) {
      stop = SIGKILL; /* a run past its deadline may be stuck: no chance to linger */
      *timed_out = true;
      break;
    }
    report_progress_tick(prog);
    if (pr <= 0) continue;
    if (pfd[1].revents && !read_lines(ev[0], evbuf, sizeof evbuf, &evlen, prog, report_progress_event_line))
      ev_open = false;
    if (pfd[0].revents && !read_lines(fds[0], buf, sizeof buf, &len, prog, report_progress_console_line)) break;
  }
  int rc = report_proc_end(pid, stop, fds[0]); /* the few start events meanwhile fit the pipe */
  close(fds[0]), close(ev[0]);
  report_proc_finish();
  return rc;
}

/* Appends s single-quoted for sh (embedded quotes closed, escaped, reopened). */
static bool sh_quote(char *cmd, size_t size, size_t *len, const char *s) {
  if (*len + 2 >= size) return false;
  cmd[(*len)++] = '\'';
  for (; *s; s++) {
    if (*len + 6 >= size) return false;
    if (*s == '\'') {
      memcpy(cmd + *len, "'\\''", 4);
      *len += 4;
    } else {
      cmd[(*len)++] = *s;
    }
  }
  cmd[(*len)++] = '\'';
  cmd[*len] = '\0';
  return true;
}

/* Benchmark names the filter selects (--benchmark_list_tests). */
static optic_status list_names(const char *bench, const char *filter_arg, char ***names, size_t *n) {
  char cmd[40000];
  size_t len = 0;
  static const char flag[] = " --benchmark_list_tests ";
  bool fits = sh_quote(cmd, sizeof cmd, &len, bench) && len + sizeof flag < sizeof cmd;
  if (fits) {
    memcpy(cmd + len, flag, sizeof flag);
    len += sizeof flag - 1;
    fits = sh_quote(cmd, sizeof cmd, &len, filter_arg);
  }
  /* Its own "failed to match" message would repeat ours below. */
  static const char quiet[] = " 2>/dev/null";
  if (fits && len + sizeof quiet < sizeof cmd) {
    memcpy(cmd + len, quiet, sizeof quiet);
  } else {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "report: benchmark path or filter too long");
  }
  FILE *f = popen(cmd, "r");
  if (!f) return optic_fail(OPTIC_ERR_IO, "report: cannot run %s", bench);
  char line[2048];
  size_t cap = 0;
  *names = NULL, *n = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0]) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(*names, cap * sizeof *nn);
      if (!nn) break;
      *names = nn;
    }
    (*names)[(*n)++] = strdup(line);
  }
  int rc = pclose(f);
  if (*n == 0) {
    return optic_fail(OPTIC_ERR_NOT_FOUND, "report: the filter selects no benchmark of %s (exit %d): %s", bench,
                      WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, filter_arg);
  }
  return OPTIC_OK;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Drops the names skip (POSIX extended) matches and, when any went, rewrites
 * farg as the exact alternation of the rest (the filter regex cannot say "not"). */
static optic_status drop_names(const char *skip, char **names, size_t *n, char *farg, size_t size) {
  regex_t re;
  if (regcomp(&re, skip, REG_EXTENDED | REG_NOSUB) != 0)
    return optic_fail(OPTIC_ERR_INTERNAL, "report: bad skip regex %s", skip);
  size_t kept = 0;
  for (size_t i = 0; i < *n; i++) {
    if (regexec(&re, names[i], 0, NULL, 0) == 0) {
      free(names[i]);
    } else {
      names[kept++] = names[i];
    }
  }
  regfree(&re);
  if (kept == *n) return OPTIC_OK;
  *n = kept;
  size_t len = (size_t)snprintf(farg, size, "--benchmark_filter=^(");
  for (size_t i = 0; i < kept; i++) {
    if (len + 2 * strlen(names[i]) + 4 >= size)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "report: the selected names exceed %zu bytes of filter", size);
    if (i) farg[len++] = '|';
    for (const char *p = names[i]; *p; p++) {
      if (strchr(".^$|()[]{}*+?\\", *p)) farg[len++] = '\\';
      farg[len++] = *p;
    }
  }
  snprintf(farg + len, size - len, ")$");
  return OPTIC_OK;
}

static optic_status run_bench(const opts *o, const char *bench, const char *filter, const char *skip,
                              const char *out_json, const char *log_path) {
  static char farg[sizeof((report *)0)->filter + 32];
  char rep[64], mt[64], out[PATH_MAX + 32];
  snprintf(farg, sizeof farg, "--benchmark_filter=%s", filter);
  char **names = NULL;
  size_t n = 0;
  optic_status st = list_names(bench, farg, &names, &n);
  if (st == OPTIC_OK && skip) st = drop_names(skip, names, &n, farg, sizeof farg);
  if (st != OPTIC_OK) {
    free_names(names, n);
    return st;
  }
  snprintf(rep, sizeof rep, "--benchmark_repetitions=%d", o->repetitions);
  snprintf(out, sizeof out, "--benchmark_out=%s", out_json);
  char *argv[16];
  int a = 0;
  argv[a++] = OPTIC_UNCONST(char *, bench);
  argv[a++] = farg;
  argv[a++] = rep;
  argv[a++] = out;
  argv[a++] = "--benchmark_out_format=json";
  argv[a++] = "--benchmark_format=console";
  argv[a++] = "--benchmark_color=false";
  if (o->repetitions > 1) argv[a++] = "--benchmark_enable_random_interleaving=true";
  if (o->min_time > 0) {
    snprintf(mt, sizeof mt, "--benchmark_min_time=%g", o->min_time);
    argv[a++] = mt;
  }
  argv[a] = NULL;
  report_progress prog;
  if ((st = report_progress_init(&prog, names, n, o->repetitions, isatty(STDERR_FILENO))) != OPTIC_OK) {
    free_names(names, n);
    return st;
  }
  fprintf(stderr, "report: running %zu benchmarks x %d repetitions (%s)\n", n, o->repetitions, bench);
  bool timed_out;
  int rc = report_run_child(argv, log_path, o->timeout, &prog, &timed_out);
  report_progress_free(&prog);
  free_names(names, n);
  if (report_stop_signal()) return optic_fail(OPTIC_ERR_IO, "report: stopped by signal %d", report_stop_signal());
  if (timed_out)
    return optic_fail(OPTIC_ERR_TIMEOUT, "report: optic_bench ran past --timeout %g s (log: %s)", o->timeout, log_path);
  /* optic_bench: 0 ok, 3 some benchmark errored (the report shows which). */
  if (rc != 0 && rc != 3) return optic_fail(OPTIC_ERR_IO, "report: optic_bench exited with %d (log: %s)", rc, log_path);
  return OPTIC_OK;
}

/* ------------------------------------------------------------- main */

/* Loads the model at path; one calibrated by an older optic (a host file of
 * an older format: it lacks figures this version's estimates use) is
 * measured again and replaced, as the message says. */
static optic_status load_current(const opts *o, optic_machine *m, char *path, size_t size) {
  int32_t format = 0;
  optic_status st = optic_machine_load_format(path, m, &format);
  if (st != OPTIC_OK || format >= OPTIC_MACHINE_FORMAT || strcmp(m->name, "host") != 0) return st;
  const bool quick = strcmp(o->mode, "quick") == 0;
  fprintf(stderr,
          "report: the machine model at %s is format %d, older than this optic's %d (it lacks figures or "
          "measured one another way): calibrating again "
          "(optic calibrate%s; the file is replaced)\n",
          path, (int)format, OPTIC_MACHINE_FORMAT, quick ? " --quick" : "");
  char target[4096];
  snprintf(target, sizeof target, "%s", path);
  return calib_calibrate_and_save(quick, target, stderr, m, path, size);
}

static optic_status load_machine(const opts *o, optic_machine *m, char *path, size_t size) {
  if (o->machine) {
    snprintf(path, size, "%s", o->machine);
    return load_current(o, m, path, size);
  }
  const char *env = getenv("OPTIC_MACHINE");
  if (env && env[0]) {
    snprintf(path, size, "%s", env);
  } else {
    optic_status st = optic_machine_default_path(path, size);
    if (st != OPTIC_OK) return st;
  }
  if (file_exists(path)) return load_current(o, m, path, size);
  fprintf(stderr, "report: no machine model at %s: calibrating first (optic calibrate%s)\n", path,
          strcmp(o->mode, "quick") == 0 ? " --quick" : "");
  return calib_calibrate_and_save(strcmp(o->mode, "quick") == 0, path, stderr, m, path, size);
}

static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.mode = "default", .repetitions = -1, .min_time = -1, .timeout = 3600};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return -1;
    } else if (strcmp(a, "--quick") == 0 || strcmp(a, "--full") == 0) {
      const char *mode = a + 2;
      if (strcmp(o->mode, "default") != 0 && strcmp(o->mode, mode) != 0)
        return fprintf(stderr, "optic report: --%s and --%s conflict: choose one mode\n", o->mode, mode), 2;
      o->mode = mode;
    } else if (strcmp(a, "--wide") == 0) {
      o->wide = true;
    } else if (has && strcmp(a, "--filter") == 0) {
      o->filter = argv[++i];
    } else if (has && strcmp(a, "--json") == 0) {
      o->json = argv[++i];
    } else if (has && strcmp(a, "--html") == 0) {
      o->html = argv[++i];
    } else if (has && strcmp(a, "--out-dir") == 0) {
      o->out_dir = argv[++i];
    } else if (has && strcmp(a, "--machine") == 0) {
      o->machine = argv[++i];
    } else if (has && strcmp(a, "--bench") == 0) {
      o->bench = argv[++i];
    } else if (has && strcmp(a, "--ratios") == 0) {
      o->ratios = argv[++i];
    } else if (has && strcmp(a, "--input") == 0) {
      o->input = argv[++i];
    } else if (has && strcmp(a, "--clock") == 0) {
      const char *c = argv[++i];
      if (strcmp(c, "wall") != 0 && strcmp(c, "cpu") != 0)
        return fprintf(stderr, "optic report: --clock is wall or cpu, not '%s'\n", c), 2;
      o->cpu_clock = strcmp(c, "cpu") == 0;
    } else if (has && strcmp(a, "--repetitions") == 0) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000) return fprintf(stderr, "optic report: bad --repetitions '%s'\n", argv[i]), 2;
      o->repetitions = (int)v;
    } else if (has && (strcmp(a, "--min-time") == 0 || strcmp(a, "--timeout") == 0)) {
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || !(v >= 0) || isinf(v)) return fprintf(stderr, "optic report: bad %s '%s'\n", a, argv[i]), 2;
      *(strcmp(a, "--min-time") == 0 ? &o->min_time : &o->timeout) = v;
    } else {
      fprintf(stderr, "optic report: unknown or incomplete option '%s'\n", a);
      return 2;
    }
  }
  if (o->filter) {
    /* Google Benchmark's filter is a POSIX extended regex too: name a bad one here. */
    regex_t re;
    int rc = regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char msg[256];
      regerror(rc, &re, msg, sizeof msg);
      return fprintf(stderr, "optic report: --filter '%s' is not a valid regular expression: %s\n", o->filter, msg), 2;
    }
    regfree(&re);
  }
  if (o->repetitions < 0) o->repetitions = strcmp(o->mode, "quick") == 0 ? 1 : strcmp(o->mode, "full") == 0 ? 3 : 5;
  /* default: 0.1 s per case keeps 5 interleaved repetitions of ~100 cases near 2 minutes; full: optic_bench's 0.2 s */
  if (o->min_time < 0) o->min_time = strcmp(o->mode, "quick") == 0 ? 0.05 : strcmp(o->mode, "full") == 0 ? 0 : 0.1;
  return 0;
}

/* mkdir -p. */
static bool make_dirs(const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return errno = ENAMETOOLONG, false;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

static void out_path(char *buf, size_t size, const char *given, const char *dir, const char *name) {
  if (given) {
    snprintf(buf, size, "%s", given);
  } else {
    snprintf(buf, size, "%s/%s", dir ? dir : ".", name);
  }
}

static int fail_exit(const char *what, optic_status st) {
  fprintf(stderr, "optic report: %s: %s: %s\n", what, optic_status_str(st), optic_last_error());
  return OPTIC_EXIT_ERROR;
}

/* After SIGINT/SIGTERM stopped a run (report_proc.c): 128 + the signal. */
static int stopped_exit(optic_jv *spec, const char *log_path) {
  int sig = report_stop_signal();
  optic_jv_free(spec);
  fprintf(stderr, "optic report: stopped by %s; every benchmark process it started has ended (log: %s)\n",
          sig == SIGINT    ? "SIGINT"
          : sig == SIGTERM ? "SIGTERM"
                           : "a signal",
          log_path);
  return 128 + sig;
}

/* long: the command's options, then its steps in order, with one exit path */
int optic_cmd_report(int argc, char **argv) {
  opts o;
  int prc = parse_opts(argc, argv, &o);
  if (prc < 0) return OPTIC_EXIT_OK;
  if (prc > 0) {
    usage(stderr);
    return OPTIC_EXIT_USAGE;
  }
  if (o.out_dir && !make_dirs(o.out_dir)) {
    fprintf(stderr, "optic report: cannot create %s: %s\n", o.out_dir, strerror(errno));
    return OPTIC_EXIT_ERROR;
  }
  uint64_t t0 = optic_now_ns();
  report r;
  memset(&r, 0, sizeof r);
  snprintf(r.mode, sizeof r.mode, "%s", o.mode);
  r.repetitions = o.repetitions;
  r.cpu_clock = o.cpu_clock;
  r.wide = o.wide;
  r.filtered = o.filter != NULL && o.input == NULL;

  optic_machine machine;
  optic_status st = load_machine(&o, &machine, r.machine_file, sizeof r.machine_file);
  if (st != OPTIC_OK) return fail_exit("machine model", st);
  /* The benchmarks' estimates (optic_machine_host in optic_bench and the
   * MPI run) must use the model the table reads them against. */
  setenv("OPTIC_MACHINE", r.machine_file, 1);

  bool have_bench = locate_bench(&o, r.bench, sizeof r.bench);
  if (!o.input && !have_bench) {
    fprintf(stderr,
            "optic report: optic_bench not found (tried --bench, $OPTIC_BENCH, next to this executable, "
            "../bench/, ../libexec/optic/); build it (cmake --build build/release) or set OPTIC_BENCH\n");
    return OPTIC_EXIT_ERROR;
  }
  if (!have_bench) r.bench[0] = '\0';
  optic_jv *spec = NULL;
  if (locate_ratios(&o, r.bench, r.ratios_file, sizeof r.ratios_file)) {
    if ((st = optic_json_parse_file(r.ratios_file, NULL, &spec)) != OPTIC_OK) return fail_exit("ratio spec", st);
  } else if (o.ratios || getenv("OPTIC_RATIOS")) {
    fprintf(stderr, "optic report: ratio spec %s not found\n", r.ratios_file);
    return OPTIC_EXIT_ERROR;
  } else {
    fprintf(stderr, "report: no ratios.json found next to %s: peer ratios are left out\n", r.bench);
    r.ratios_file[0] = '\0';
  }

  char json_path[PATH_MAX], html_path[PATH_MAX], run_path[PATH_MAX + 16], log_path[PATH_MAX + 16];
  out_path(json_path, sizeof json_path, o.json, o.out_dir, "report.json");
  out_path(html_path, sizeof html_path, o.html, o.out_dir, "report.html");
  snprintf(run_path, sizeof run_path, "%s.run", json_path);
  snprintf(log_path, sizeof log_path, "%s.log", json_path);
  char mpi_path[PATH_MAX + 16], mpi_log[PATH_MAX + 16];
  snprintf(mpi_path, sizeof mpi_path, "%s.mpi", json_path);
  snprintf(mpi_log, sizeof mpi_log, "%s.mpi.log", json_path);
  bool have_mpi = false;

  if (o.input) {
    snprintf(r.filter, sizeof r.filter, "(--input %s)", o.input);
    snprintf(run_path, sizeof run_path, "%s", o.input);
  } else {
    if (o.filter) {
      if ((size_t)snprintf(r.filter, sizeof r.filter, "%s", o.filter) >= sizeof r.filter) {
        optic_jv_free(spec);
        fprintf(stderr, "optic report: --filter longer than %zu bytes\n", sizeof r.filter - 1);
        return OPTIC_EXIT_USAGE;
      }
    } else if (strcmp(o.mode, "full") == 0) {
      snprintf(r.filter, sizeof r.filter, ".");
    } else {
      /* The peer-ratio benchmarks at the ISA optic dispatches to here. */
      char *bars = NULL;
      if (spec) {
        const char *keys[] = {"optic_isa"}, *values[] = {optic_isa_name(optic_isa_selected())};
        if ((st = report_spec_filter(spec, keys, values, 1, &bars)) != OPTIC_OK) {
          optic_jv_free(spec);
          return fail_exit("ratio spec", st);
        }
      }
      int n = snprintf(r.filter, sizeof r.filter, "%s%s%s|%s", bars ? bars : "", bars ? "|" : "", BOUND_PEERS,
                       ESTIMATED_SUITES);
      free(bars);
      if (n < 0 || (size_t)n >= sizeof r.filter) {
        optic_jv_free(spec);
        fprintf(stderr, "optic report: the default filter (%d bytes) exceeds %zu bytes\n", n, sizeof r.filter);
        return OPTIC_EXIT_ERROR;
      }
    }
    const char *skip = o.filter || strcmp(o.mode, "full") == 0 ? NULL
                       : strcmp(o.mode, "quick") == 0          ? QUICK_SKIPS
                                                               : FULL_ONLY;
    st = run_bench(&o, r.bench, r.filter, skip, run_path, log_path);
    if (report_stop_signal()) return stopped_exit(spec, log_path);
    if (st != OPTIC_OK) {
      optic_jv_free(spec);
      return fail_exit("benchmark run", st);
    }
    /* The pod MPI bars: a separate MPI program (not in --quick: ~15-40 s). */
    if (o.filter ? report_filter_selects_pod_mpi(o.filter) : strcmp(o.mode, "quick") != 0) {
      char why[PATH_MAX + 64] = "";
      double left = o.timeout > 0 ? o.timeout - (double)(optic_now_ns() - t0) * 1e-9 : 0;
      if (o.timeout > 0 && left < 1) left = 1;
      st = report_run_pod_mpi(r.bench, o.filter, o.repetitions, left, mpi_path, mpi_log, &have_mpi, why, sizeof why);
      if (report_stop_signal()) return stopped_exit(spec, mpi_log);
      if (st != OPTIC_OK) {
        fprintf(stderr, "report: the pod MPI benchmarks failed, their bars stay MISSING: %s\n", optic_last_error());
      } else if (!have_mpi) {
        fprintf(stderr, "report: pod MPI benchmarks not run (%s): their bars stay MISSING\n", why);
      }
    }
  }

  optic_jv *run = NULL;
  const optic_json_parse_options popt = {.size = sizeof popt, .allow_nonfinite = true};
  if ((st = optic_json_parse_file(run_path, &popt, &run)) != OPTIC_OK) {
    optic_jv_free(spec);
    return fail_exit("reading the run", st);
  }
  if (o.input) report_take_run_facts(&r, run); /* re-rendering a report: its run's facts */
  if (have_mpi) {
    optic_jv *extra = NULL;
    if ((st = optic_json_parse_file(mpi_path, &popt, &extra)) == OPTIC_OK) st = report_merge_run(run, extra);
    optic_jv_free(extra);
    if (st != OPTIC_OK) {
      optic_jv_free(spec);
      optic_jv_free(run);
      return fail_exit("merging the pod MPI run", st);
    }
  }
  st = report_analyze(&r, run, spec, &machine);
  optic_jv_free(spec);
  r.seconds = (double)(optic_now_ns() - t0) * 1e-9;
  if (st == OPTIC_OK) {
    report_print(&r, stdout);
    fflush(stdout);
    if ((st = report_write_json(&r, json_path)) == OPTIC_OK) st = report_write_html(&r, html_path);
  }
  report_free(&r);
  if (st != OPTIC_OK) return fail_exit("report", st);
  if (!o.input) {
    remove(run_path);
    remove(log_path);
    if (have_mpi) remove(mpi_path), remove(mpi_log);
  }
  printf("\nreport: %s\n        %s\n", json_path, html_path);
  return OPTIC_EXIT_OK;
}
