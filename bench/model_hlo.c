/* The model suite: real XLA HLO modules nobody tuned the cost model on, run
 * through the runtime as `optic run --random-inputs 1` runs them, each case
 * "model/hlo/<file stem>/threads:1" with the compiler's estimates (est_time_ns,
 * est_flops, est_bytes, est_peak_bytes), the measured memory (the context's
 * pool peak, peak-RSS growth) and per-op measured vs estimated time from a
 * few profiled runs (op_ns:NAME, op_est_ns:NAME, the 12 slowest ops), which
 * `optic report` reads to name the op behind each case's error.
 * Modules: every .hlo file of tests/data/hlo but the parse-only ones, and every
 * tests/data/hlo/realworld module whose MANIFEST.tsv line says "run" (small
 * enough to run). Compilation, binding and input generation are untimed.
 * Benchmark-only code; the module paths come from the source tree the
 * binary was built from (OPTIC_BENCH_SOURCE_DIR). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "bench/bench_util.h"
#include "bench/memory.h"
#include "core/error.h"
#include "tools/run_values.h"

enum { MAX_MODULES = 128, MAX_LEAVES = 64, PROFILED_RUNS = 4, TOP_OPS = 12 };

static char paths[MAX_MODULES][1024];
static int n_paths;

typedef struct hlo_case {
  optic_module_t *m;
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_profiler_t *prof;
  optic_literal_t *args[MAX_LEAVES], *result;
  optic_tensor in[MAX_LEAVES], out[MAX_LEAVES];
  int32_t n_args, n_in, n_out;
} hlo_case;

static int32_t leaf_views(optic_literal_t *lit, optic_tensor *views, int32_t cap) {
  const optic_type *t = optic_literal_type(lit);
  if (!optic_type_is_tuple(t)) {
    if (cap < 1) return 0;
    views[0] = (optic_tensor){.dtype = t->dtype, .shape = t->shape, .data = optic_literal_mutable_data(lit, NULL)};
    return 1;
  }
  int32_t n = 0;
  /* the elements belong to lit, which this case owns and may write: the
   * accessor is const only because most callers just read */
  for (int32_t i = 0; i < optic_literal_tuple_size(lit); i++)
    n += leaf_views((optic_literal_t *)(uintptr_t)optic_literal_element(lit, i), views + n, cap - n);
  return n;
}

static void case_free(hlo_case *c) {
  optic_exec_ctx_destroy(c->ctx);
  optic_profiler_destroy(c->prof);
  optic_program_destroy(c->p);
  optic_module_destroy(c->m);
  for (int32_t i = 0; i < c->n_args; i++) optic_literal_destroy(c->args[i]);
  optic_literal_destroy(c->result);
}

/* Parse, compile for one thread, random inputs (seed 1, as --random-inputs 1),
 * bind with one untimed run. */
static bool case_init(hlo_case *c, const char *path) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  optic_compile_options co = optic_compile_options_default();
  co.threads = 1;
  if (optic_module_from_hlo_file(path, &c->m) != OPTIC_OK || optic_profiler_create(NULL, &c->prof) != OPTIC_OK)
    return false;
  eo.profiler = c->prof; /* created disabled */
  if (optic_exec_ctx_create(&eo, &c->ctx) != OPTIC_OK || optic_compile(c->m, &co, &c->p) != OPTIC_OK) return false;
  optic_comp_id e = optic_module_entry(c->m);
  c->n_args = optic_computation_parameter_count(c->m, e);
  if (c->n_args > MAX_LEAVES)
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "model/hlo: more than %d parameters", MAX_LEAVES), false;
  for (int32_t i = 0; i < c->n_args; i++) {
    if (run_random_literal(optic_node_type(c->m, optic_computation_parameter(c->m, e, i)), 1, i, &c->args[i]) !=
        OPTIC_OK)
      return false;
    c->n_in += leaf_views(c->args[i], c->in + c->n_in, MAX_LEAVES - c->n_in);
  }
  if (optic_literal_create(optic_node_type(c->m, optic_computation_root(c->m, e)), &c->result) != OPTIC_OK)
    return false;
  c->n_out = leaf_views(c->result, c->out, MAX_LEAVES);
  return optic_program_run(c->p, c->ctx, c->in, c->n_in, c->out, c->n_out) == OPTIC_OK;
}

static bool run_once(hlo_case *c) {
  return optic_program_run(c->p, c->ctx, c->in, c->n_in, c->out, c->n_out) == OPTIC_OK;
}

static void per_op_counters(optic_bench_state *st, hlo_case *c) {
  optic_profiler_enable(c->prof, true);
  bool ok = true;
  for (int i = 0; ok && i < PROFILED_RUNS; i++) ok = run_once(c);
  optic_profiler_enable(c->prof, false);
  if (ok) bench_report_op_times(st, c->prof, c->p, TOP_OPS);
}

static void run_hlo(optic_bench_state *st, void *user) {
  const char *path = user;
  hlo_case c = {0};
  const double rss0 = bench_maxrss_bytes();
  if (!case_init(&c, path)) {
    char msg[700];
    snprintf(msg, sizeof msg, "%s: %s", path, optic_last_error());
    optic_bench_skip_with_error(st, msg);
    case_free(&c);
    return;
  }
  uint64_t t0 = optic_now_ns();
  while (optic_bench_keep_running(st)) {
    if (!run_once(&c)) {
      optic_bench_skip_with_error(st, optic_last_error());
      break;
    }
  }
  (void)t0;
  optic_program_summary s;
  if (optic_program_summary_get(c.p, &s) == OPTIC_OK) {
    optic_bench_counter(st, "est_time_ns", s.est_ns, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_flops", s.cost.flops, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_bytes", s.cost.bytes_accessed, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "est_transcendentals", s.cost.transcendentals, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "omp_threads", 1, OPTIC_BENCH_COUNTER_PLAIN);
  }
  bench_report_memory(st, c.ctx, c.p, bench_tensor_bytes(c.in, c.n_in) + bench_tensor_bytes(c.out, c.n_out), rss0, 0);
  per_op_counters(st, &c);
  case_free(&c);
}

static void add_path(const char *dir, const char *file) {
  if (n_paths >= MAX_MODULES || strlen(dir) + strlen(file) + 2 > sizeof paths[0]) return;
  snprintf(paths[n_paths++], sizeof paths[0], "%.500s/%.500s", dir, file);
}

static int cmp_str(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* The realworld modules whose MANIFEST.tsv line says "run". */
static void add_realworld(const char *dir) {
  char manifest[1100], line[1024];
  snprintf(manifest, sizeof manifest, "%s/MANIFEST.tsv", dir);
  FILE *f = fopen(manifest, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    if (strncmp(tab + 1, "run\t", 4) == 0 || strncmp(tab + 1, "run\n", 4) == 0) add_path(dir, line);
  }
  fclose(f);
}

void bench_register_model_hlo(void) {
  char dir[400];
  if (snprintf(dir, sizeof dir, "%s/tests/data/hlo", OPTIC_BENCH_SOURCE_DIR) >= (int)sizeof dir) return;
  DIR *d = opendir(dir);
  if (!d) return; /* a binary moved away from its sources: no model suite */
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".hlo") == 0 && strstr(e->d_name, "parse_only") == NULL)
      add_path(dir, e->d_name);
  }
  closedir(d);
  qsort(paths, (size_t)n_paths, sizeof paths[0], cmp_str);
  int flat = n_paths;
  char rw[600];
  snprintf(rw, sizeof rw, "%s/realworld", dir);
  add_realworld(rw);
  qsort(paths[flat], (size_t)(n_paths - flat), sizeof paths[0], cmp_str);
  for (int i = 0; i < n_paths; i++) {
    const char *base = strrchr(paths[i], '/') + 1;
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) - 4), base);
    optic_bench *b = optic_bench_register(bench_name("model/hlo/%s/threads:1", stem), run_hlo, paths[i]);
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
