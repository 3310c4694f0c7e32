/* `optic report`'s pod MPI run: bench/pod_mpi.c (optic_bench_pod_mpi) is a
 * plain MPI program, not part of optic_bench, because its ranks must agree on
 * iteration counts. The report runs it under mpirun -np 2 after optic_bench
 * and merges its JSON (entries as Google Benchmark writes them: bench/pod_mpi.c)
 * into the run, so the pod_mpi_* bars of bench/ratios.json have their rows. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "tools/mpi_launch.h"
#include "tools/report.h"
#include "core/unconst.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The benchmarks optic_bench_pod_mpi reports at -np 2 (bench/pod_mpi.c). */
static const char *const VARIANTS[] = {"pod_mpi/all_reduce", "pod_mpi/all_reduce_window", "pod_mpi/all_reduce_messages",
                                       "peer/mpi_allreduce"};
static const char *const SIZES[] = {"4096", "1048576", "67108864"};
enum { N_VARIANTS = 4, N_SIZES = 3, N_NAMES = N_VARIANTS * N_SIZES };

static void names(char out[N_NAMES][96]) {
  for (int s = 0; s < N_SIZES; s++) {
    for (int v = 0; v < N_VARIANTS; v++) {
      snprintf(out[s * N_VARIANTS + v], 96, "%s/bytes:%s/np:2/real_time", VARIANTS[v], SIZES[s]);
    }
  }
}

/* How many of the pod MPI names filter selects (all of them for NULL); the
 * selected names move to the front of n. */
static int select_names(const char *filter, char n[N_NAMES][96]) {
  names(n);
  regex_t re;
  if (!filter) return N_NAMES;
  if (regcomp(&re, filter, REG_EXTENDED | REG_NOSUB) != 0) return 0;
  int k = 0;
  for (int i = 0; i < N_NAMES; i++) {
    if (regexec(&re, n[i], 0, NULL, 0) == 0) memmove(n[k++], n[i], sizeof n[i]);
  }
  regfree(&re);
  return k;
}

bool report_filter_selects_pod_mpi(const char *filter) {
  char n[N_NAMES][96];
  return filter && select_names(filter, n) > 0;
}

optic_status report_run_pod_mpi(const char *bench, const char *filter, int reps, double timeout_s, const char *out_json,
                                const char *log_path, bool *ran, char *why, size_t why_size) {
  *ran = false;
  char exe[PATH_MAX], launcher[PATH_MAX], reps_s[16];
  snprintf(exe, sizeof exe, "%s", bench);
  char *slash = strrchr(exe, '/');
  size_t used = slash ? (size_t)(slash - exe + 1) : 0;
  snprintf(exe + used, sizeof exe - used, "optic_bench_pod_mpi");
  if (!tools_executable(exe)) {
    snprintf(why, why_size, "%s not built (MPI not found at configure)", exe);
    return OPTIC_OK;
  }
  if (!tools_mpi_launcher(launcher, sizeof launcher)) {
    snprintf(why, why_size, "no MPI launcher ($OPTIC_MPIRUN, mpirun on PATH)");
    return OPTIC_OK;
  }
  tools_mpi_env(); /* as tests/CMakeLists.txt runs the MPI tests; the user's settings win */
  snprintf(reps_s, sizeof reps_s, "%d", reps < 1 ? 1 : reps > 16 ? 16 : reps);
  char *argv[16];
  int a = tools_mpi_argv(argv, launcher, exe);
  argv[a++] = "--out";
  argv[a++] = OPTIC_UNCONST(char *, out_json);
  argv[a++] = "--reps";
  argv[a++] = reps_s;
  if (filter) {
    argv[a++] = "--filter";
    argv[a++] = OPTIC_UNCONST(char *, filter);
  }
  argv[a] = NULL;
  char n[N_NAMES][96];
  int n_sel = select_names(filter, n);
  char *np[N_NAMES];
  for (int i = 0; i < N_NAMES; i++) np[i] = n[i];
  report_progress prog;
  optic_status pst = report_progress_init(&prog, np, (size_t)n_sel, 1, isatty(STDERR_FILENO));
  if (pst != OPTIC_OK) return pst;
  fprintf(stderr, "report: running %s under %s -np 2, %s repetitions\n", exe, launcher, reps_s);
  remove(out_json);
  bool timed_out;
  int rc = report_run_child(argv, log_path, timeout_s, &prog, &timed_out);
  report_progress_free(&prog);
  if (timed_out)
    return optic_fail(OPTIC_ERR_TIMEOUT, "report: optic_bench_pod_mpi ran past %g s (log: %s)", timeout_s, log_path);
  if (rc != 0)
    return optic_fail(OPTIC_ERR_IO, "report: %s -np 2 %s exited with %d (log: %s)", launcher, exe, rc, log_path);
  *ran = true;
  return OPTIC_OK;
}

/* Moves src's items to the end of dst's (both arrays, or both objects). */
static bool append_items(optic_jv *dst, optic_jv *src, const bool *take) {
  size_t add = 0;
  for (size_t i = 0; i < src->length; i++) add += take[i];
  if (add == 0) return true;
  optic_jv *items = realloc(dst->items, (dst->length + add) * sizeof *items);
  if (!items) return false;
  dst->items = items;
  if (dst->kind == OPTIC_JV_OBJECT) {
    char **keys = realloc(dst->keys, (dst->length + add) * sizeof *keys);
    if (!keys) return false;
    dst->keys = keys;
  }
  size_t k = dst->length;
  for (size_t i = 0; i < src->length; i++) {
    if (!take[i]) continue;
    dst->items[k] = src->items[i];
    src->items[i] = (optic_jv){.kind = OPTIC_JV_NULL}; /* moved: src frees nothing of it */
    if (dst->kind == OPTIC_JV_OBJECT) {
      dst->keys[k] = src->keys[i];
      src->keys[i] = NULL;
    }
    k++;
  }
  dst->length = k;
  return true;
}

/* An entry compare.py and Google Benchmark's readers take: the fields every
 * run entry has, and an aggregate's name. */
static optic_status check_entry(const optic_jv *e, size_t i) {
  static const char *const strings[] = {"name", "run_name", "run_type", "time_unit"};
  static const char *const numbers[] = {"iterations", "real_time", "cpu_time", "repetitions"};
  double v;
  const char *missing = NULL;
  for (size_t k = 0; k < 4 && !missing; k++) {
    if (!optic_jv_get_str(e, strings[k], NULL)) missing = strings[k];
  }
  for (size_t k = 0; k < 4 && !missing; k++) {
    if (!optic_jv_get_num(e, numbers[k], &v)) missing = numbers[k];
  }
  const char *type = optic_jv_get_str(e, "run_type", "");
  if (!missing && strcmp(type, "aggregate") == 0 && !optic_jv_get_str(e, "aggregate_name", NULL))
    missing = "aggregate_name";
  if (!missing && strcmp(type, "aggregate") != 0 && strcmp(type, "iteration") != 0)
    missing = "run_type iteration|aggregate";
  if (!missing) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_CORRUPT,
                    "report: pod MPI run entry %zu (%s) has no %s, which Google Benchmark's readers need", i,
                    optic_jv_get_str(e, "name", "unnamed"), missing);
}

/* Moves extra's family_index past run's, as if one binary had run both. */
static void renumber_families(const optic_jv *b, optic_jv *xb) {
  double top = -1, v;
  for (size_t i = 0; i < b->length; i++) {
    if (optic_jv_get_num(&b->items[i], "family_index", &v) && v > top) top = v;
  }
  for (size_t i = 0; i < xb->length; i++) {
    optic_jv *f = OPTIC_UNCONST(optic_jv *, optic_jv_get(&xb->items[i], "family_index"));
    if (!f || f->kind != OPTIC_JV_NUMBER) continue;
    f->number += top + 1;
    f->is_integer = f->number == (double)(int64_t)f->number;
    f->integer = (int64_t)f->number;
  }
}

optic_status report_merge_run(optic_jv *run, optic_jv *extra) {
  optic_jv *b = OPTIC_UNCONST(optic_jv *, optic_jv_get(run, "benchmarks"));
  optic_jv *xb = OPTIC_UNCONST(optic_jv *, optic_jv_get(extra, "benchmarks"));
  if (!b || b->kind != OPTIC_JV_ARRAY || !xb || xb->kind != OPTIC_JV_ARRAY)
    return optic_fail(OPTIC_ERR_CORRUPT, "report: merging runs: a run has no \"benchmarks\" array");
  for (size_t i = 0; i < xb->length; i++) {
    optic_status st = check_entry(&xb->items[i], i);
    if (st != OPTIC_OK) return st;
  }
  renumber_families(b, xb);
  bool *take = calloc(xb->length + 1, sizeof *take);
  if (!take) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (size_t i = 0; i < xb->length; i++) take[i] = true;
  bool ok = append_items(b, xb, take);
  optic_jv *c = OPTIC_UNCONST(optic_jv *, optic_jv_get(run, "context"));
  optic_jv *xc = OPTIC_UNCONST(optic_jv *, optic_jv_get(extra, "context"));
  if (ok && c && xc && c->kind == OPTIC_JV_OBJECT && xc->kind == OPTIC_JV_OBJECT) {
    bool *tk = realloc(take, (xc->length + 1) * sizeof *tk);
    if (!tk) {
      free(take);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
    }
    take = tk;
    for (size_t i = 0; i < xc->length; i++) take[i] = optic_jv_get(c, xc->keys[i]) == NULL;
    ok = append_items(c, xc, take);
  }
  free(take);
  return ok ? OPTIC_OK : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory merging runs");
}
