/* `optic report`'s analysis: Google Benchmark JSON -> cases (measured vs
 * estimated, % of the machine bound), the named peer ratios of
 * bench/ratios.json, and the summary. The ratio rules are bench/ratios.py's
 * (wall clock): the tests run both on the same fixtures and compare. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tools/report.h"

static char *dup_str(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---------------------------------------------------------------- figures */

static bool is_time_metric(const char *metric) {
  return strcmp(metric, "real_time") == 0 || strcmp(metric, "cpu_time") == 0;
}

/* entry[metric] as a double, times in ns whatever time_unit says. */
static bool value_of(const optic_jv *entry, const char *metric, double *out) {
  if (!optic_jv_get_num(entry, metric, out)) return false;
  if (is_time_metric(metric)) {
    const char *unit = optic_jv_get_str(entry, "time_unit", "ns");
    double scale = strcmp(unit, "ns") == 0   ? 1.0
                   : strcmp(unit, "us") == 0 ? 1e3
                   : strcmp(unit, "ms") == 0 ? 1e6
                   : strcmp(unit, "s") == 0  ? 1e9
                                             : (double)NAN;
    *out *= scale;
  }
  return !isnan(*out) || !is_time_metric(metric);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
  if (n == 0) return (double)NAN;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct group {
  const char *run_name;
  double family, instance; /* registration order (family_index, per_family_instance_index) */
  const optic_jv **entries;
  size_t n, cap;
} group;

typedef struct groups {
  group *g;
  size_t n, cap;
} groups;

/* The run's figure for metric: the median aggregate when repetitions ran,
 * else the median of the error-free iterations; NaN when absent. *taken
 * says which ("median", "median of N", "single run"). */
static double figure(const group *g, const char *metric, char *taken, size_t taken_size) {
  double v;
  if (taken) snprintf(taken, taken_size, "-");
  if (!g) return (double)NAN;
  for (size_t i = 0; i < g->n; i++) {
    const optic_jv *e = g->entries[i];
    if (strcmp(optic_jv_get_str(e, "run_type", ""), "aggregate") == 0 &&
        strcmp(optic_jv_get_str(e, "aggregate_name", ""), "median") == 0 && value_of(e, metric, &v)) {
      if (taken) snprintf(taken, taken_size, "median");
      return v;
    }
  }
  double *vals = malloc((g->n ? g->n : 1) * sizeof *vals);
  if (!vals) return (double)NAN;
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++) {
    const optic_jv *e = g->entries[i];
    const optic_jv *err = optic_jv_get(e, "error_occurred");
    if (strcmp(optic_jv_get_str(e, "run_type", "iteration"), "iteration") != 0) continue;
    if (err && err->kind == OPTIC_JV_BOOL && err->boolean) continue;
    if (value_of(e, metric, &v)) vals[k++] = v;
  }
  double m = median(vals, k);
  if (taken && k > 0) {
    if (k > 1) {
      snprintf(taken, taken_size, "median of %zu", k);
    } else {
      snprintf(taken, taken_size, "single run");
    }
  }
  free(vals);
  return m;
}

static group *find_group(const groups *gs, const char *name) {
  for (size_t i = 0; i < gs->n; i++) {
    if (strcmp(gs->g[i].run_name, name) == 0) return &gs->g[i];
  }
  return NULL;
}

static optic_status group_runs(const optic_jv *benchmarks, groups *gs) {
  for (size_t i = 0; benchmarks && i < benchmarks->length; i++) {
    const optic_jv *e = &benchmarks->items[i];
    const char *name = optic_jv_get_str(e, "run_name", optic_jv_get_str(e, "name", NULL));
    if (!name) return optic_fail(OPTIC_ERR_CORRUPT, "report: benchmark entry %zu has no name", i);
    group *g = find_group(gs, name);
    if (!g) {
      if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 64;
        group *ng = realloc(gs->g, cap * sizeof *ng);
        if (!ng) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory grouping runs");
        gs->g = ng, gs->cap = cap;
      }
      g = &gs->g[gs->n++];
      memset(g, 0, sizeof *g);
      g->run_name = name;
      g->family = g->instance = (double)INFINITY;
      optic_jv_get_num(e, "family_index", &g->family);
      optic_jv_get_num(e, "per_family_instance_index", &g->instance);
    }
    if (g->n == g->cap) {
      size_t cap = g->cap ? g->cap * 2 : 8;
      const optic_jv **ne = realloc(g->entries, cap * sizeof *ne);
      if (!ne) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory grouping runs");
      g->entries = ne, g->cap = cap;
    }
    g->entries[g->n++] = e;
  }
  return OPTIC_OK;
}

/* Registration order, as compare.py sorts (a run with random interleaving
 * lists benchmarks in execution order); name order where indices are absent. */
static int cmp_group(const void *a, const void *b) {
  const group *x = a, *y = b;
  if (x->family != y->family) return x->family < y->family ? -1 : 1;
  if (x->instance != y->instance) return x->instance < y->instance ? -1 : 1;
  return strcmp(x->run_name, y->run_name);
}

static void free_groups(groups *gs) {
  for (size_t i = 0; i < gs->n; i++) free(gs->g[i].entries);
  free(gs->g);
}

/* ----------------------------------------------------------------- ratios */

/* name with {key} replaced by context[key]; CORRUPT when a key is missing. */
static optic_status expand(const char *ratio, const char *name, const char *const *keys, const char *const *values,
                           size_t n, char **out) {
  size_t cap = strlen(name) + 256, len = 0;
  char *s = malloc(cap);
  if (!s) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (const char *p = name; *p;) {
    const char *val = NULL;
    size_t skip = 1;
    if (*p == '{') {
      const char *close = strchr(p, '}');
      if (!close) {
        free(s);
        return optic_fail(OPTIC_ERR_CORRUPT, "ratio %s: unclosed '{' in %s", ratio, name);
      }
      size_t klen = (size_t)(close - p - 1);
      for (size_t i = 0; i < n; i++) {
        if (strlen(keys[i]) == klen && strncmp(keys[i], p + 1, klen) == 0) val = values[i];
      }
      if (!val) {
        free(s);
        return optic_fail(OPTIC_ERR_CORRUPT,
                          "ratio %s: benchmark name %s needs context key %.*s, which the run does not have", ratio,
                          name, (int)klen, p + 1);
      }
      skip = klen + 2;
    }
    size_t add = val ? strlen(val) : 1;
    if (len + add + 1 > cap) {
      cap = (len + add + 1) * 2;
      char *ns = realloc(s, cap);
      if (!ns) {
        free(s);
        return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
      }
      s = ns;
    }
    memcpy(s + len, val ? val : p, add);
    len += add;
    p += skip;
  }
  s[len] = '\0';
  *out = s;
  return OPTIC_OK;
}

/* The context's string values as key/value arrays (borrowed pointers). */
static size_t context_pairs(const optic_jv *ctx, const char ***keys, const char ***values) {
  size_t n = 0;
  *keys = calloc(ctx && ctx->length ? ctx->length : 1, sizeof **keys);
  *values = calloc(ctx && ctx->length ? ctx->length : 1, sizeof **values);
  if (!*keys || !*values) return 0;
  for (size_t i = 0; ctx && ctx->kind == OPTIC_JV_OBJECT && i < ctx->length; i++) {
    if (ctx->items[i].kind != OPTIC_JV_STRING) continue;
    (*keys)[n] = ctx->keys[i];
    (*values)[n] = ctx->items[i].string;
    n++;
  }
  return n;
}

optic_status report_spec_filter(const optic_jv *spec, const char *const *keys, const char *const *values, size_t n,
                                char **out) {
  const optic_jv *list = optic_jv_get(spec, "ratios");
  if (!list || list->kind != OPTIC_JV_ARRAY) return optic_fail(OPTIC_ERR_CORRUPT, "ratios spec: no \"ratios\" array");
  size_t cap = 256, len = 0;
  char *s = malloc(cap);
  if (!s) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  len = (size_t)snprintf(s, cap, "^(");
  for (size_t i = 0; i < list->length; i++) {
    for (int side = 0; side < 2; side++) {
      const optic_jv *r = &list->items[i];
      const char *name = optic_jv_get_str(r, side ? "peer" : "ours", NULL), *rname = optic_jv_get_str(r, "name", "?");
      if (!name) {
        free(s);
        return optic_fail(OPTIC_ERR_CORRUPT, "ratios spec: ratio %s lacks \"%s\"", rname, side ? "peer" : "ours");
      }
      char *x;
      optic_status st = expand(rname, name, keys, values, n, &x);
      if (st != OPTIC_OK) {
        free(s);
        return st;
      }
      /* Escape regex metacharacters ('.' appears in names; the rest for safety). */
      size_t need = len + 2 * strlen(x) + 4;
      if (need > cap) {
        cap = need * 2;
        char *ns = realloc(s, cap);
        if (!ns) {
          free(s), free(x);
          return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
        }
        s = ns;
      }
      if (len > 2) s[len++] = '|';
      for (const char *p = x; *p; p++) {
        if (strchr(".^$|()[]{}*+?\\", *p)) s[len++] = '\\';
        s[len++] = *p;
      }
      s[len] = '\0';
      free(x);
    }
  }
  if (len + 2 > cap) {
    char *ns = realloc(s, len + 2);
    if (!ns) {
      free(s);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
    }
    s = ns;
  }
  s[len++] = ')';
  s[len] = '\0';
  *out = s;
  return OPTIC_OK;
}

/* applies_if {context, in, show}: true when the run's context value is in
 * the list; else *why says so. */
static bool applies(const optic_jv *cond, const optic_jv *ctx, char *why, size_t why_size) {
  if (!cond || cond->kind != OPTIC_JV_OBJECT) return true;
  const char *key = optic_jv_get_str(cond, "context", "");
  const char *have = optic_jv_get_str(ctx, key, "unknown");
  const optic_jv *in = optic_jv_get(cond, "in");
  size_t len = 0;
  char allowed[256] = "";
  for (size_t i = 0; in && in->kind == OPTIC_JV_ARRAY && i < in->length; i++) {
    const char *v = optic_jv_str(&in->items[i]);
    if (v && strcmp(v, have) == 0) return true;
    if (v && len < sizeof allowed)
      len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s%s", i ? " or " : "", v);
  }
  int w = snprintf(why, why_size, "bar applies only when %s is %s; this run: %s", key, allowed, have);
  const char *show = optic_jv_get_str(cond, "show", NULL);
  if (show && w > 0 && (size_t)w < why_size)
    snprintf(why + w, why_size - (size_t)w, " (%s %s)", show, optic_jv_get_str(ctx, show, "unknown"));
  return false;
}

/* ratios.py --clock cpu: the CPU-time counterpart of a wall-clock metric
 * (never mixed: a metric without one gets no figure), with its default note. */
static void cpu_clock_metric(report_ratio *q) {
  static const char *const map[][2] = {{"GB/s", "cpu_GB/s"}, {"GFLOP/s", "cpu_GFLOP/s"}, {"real_time", "cpu_path_ns"}};
  const char *to = NULL, *note;
  char buf[300];
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    if (strcmp(q->metric, map[i][0]) == 0) to = map[i][1];
  }
  if (to) {
    note =
        "CPU-time counters come from optic_bench's own harnesses; peers that thread themselves (oneDNN, "
        "OpenBLAS) have none";
    snprintf(buf, sizeof buf, "%s", to);
  } else {
    snprintf(buf, sizeof buf, "no CPU-time counterpart of %s", q->metric);
    note = buf;
  }
  if (!q->note[0]) {
    free(q->note);
    q->note = dup_str(note);
  }
  if (to) {
    free(q->metric);
    q->metric = dup_str(to);
  } else {
    snprintf(buf, sizeof buf, "cpu clock: %s", q->metric);
    free(q->metric);
    q->metric = dup_str(buf);
  }
}

static optic_status compute_ratios(report *r, const optic_jv *spec, const groups *gs) {
  const optic_jv *list = optic_jv_get(spec, "ratios");
  if (!list || list->kind != OPTIC_JV_ARRAY) return optic_fail(OPTIC_ERR_CORRUPT, "ratios spec: no \"ratios\" array");
  r->ratios = calloc(list->length ? list->length : 1, sizeof *r->ratios);
  if (!r->ratios) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  const char **keys, **values;
  size_t nctx = context_pairs(r->context, &keys, &values);
  optic_status st = OPTIC_OK;
  for (size_t i = 0; i < list->length && st == OPTIC_OK; i++) {
    const optic_jv *spec_r = &list->items[i];
    report_ratio *q = &r->ratios[r->n_ratios++];
    q->ours_value = q->peer_value = q->ratio = (double)NAN;
    q->status = REPORT_MISSING;
    q->name = dup_str(optic_jv_get_str(spec_r, "name", "?"));
    q->description = dup_str(optic_jv_get_str(spec_r, "description", ""));
    q->metric = dup_str(optic_jv_get_str(spec_r, "metric", "real_time"));
    q->note = dup_str(optic_jv_get_str(spec_r, "pending", ""));
    if (r->cpu_clock && q->metric && q->note) cpu_clock_metric(q);
    const char *ours = optic_jv_get_str(spec_r, "ours", NULL), *peer = optic_jv_get_str(spec_r, "peer", NULL);
    if (!ours || !peer) {
      st = optic_fail(OPTIC_ERR_CORRUPT, "ratios spec: ratio %s lacks ours or peer", q->name);
      break;
    }
    if ((st = expand(q->name, ours, keys, values, nctx, &q->ours)) != OPTIC_OK) break;
    if ((st = expand(q->name, peer, keys, values, nctx, &q->peer)) != OPTIC_OK) break;
    const optic_jv *bar = optic_jv_get(spec_r, "bar");
    q->has_min = optic_jv_get_num(bar, "min", &q->bar_min);
    q->has_max = optic_jv_get_num(bar, "max", &q->bar_max);
    char taken[32];
    q->ran_ours = find_group(gs, q->ours) != NULL;
    q->ran_peer = find_group(gs, q->peer) != NULL;
    q->ours_value = figure(find_group(gs, q->ours), q->metric, taken, sizeof taken);
    q->taken = dup_str(taken);
    /* peer_metric: the peer's figure is another counter (of the same
     * benchmark when it measured both sides alternately); under the CPU clock
     * such counters have no counterpart, so the ratio stays MISSING. */
    const char *peer_metric = optic_jv_get_str(spec_r, "peer_metric", NULL);
    if (peer_metric == NULL) {
      q->peer_value = figure(find_group(gs, q->peer), q->metric, NULL, 0);
    } else if (!r->cpu_clock) {
      q->peer_value = figure(find_group(gs, q->peer), peer_metric, NULL, 0);
    }
    if (!isnan(q->ours_value) && !isnan(q->peer_value) && q->peer_value != 0) {
      q->ratio = q->ours_value / q->peer_value;
      bool ok = (!q->has_min || q->ratio >= q->bar_min) && (!q->has_max || q->ratio <= q->bar_max);
      char why[512];
      free(q->note);
      q->note = dup_str("");
      if (!q->has_min && !q->has_max) {
        q->status = REPORT_INFO;
      } else if (!applies(optic_jv_get(spec_r, "applies_if"), r->context, why, sizeof why)) {
        q->status = REPORT_NA;
        free(q->note);
        q->note = dup_str(why);
      } else {
        q->status = ok ? REPORT_PASS : REPORT_FAIL;
      }
    }
    if (!q->name || !q->description || !q->metric || !q->note || !q->taken)
      st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  }
  free(keys);
  free(values);
  return st;
}

/* ------------------------------------------------------------------ cases */

/* The device-wide model for the threads a case ran on
 * (optic_machine_for_threads: compute and per-core caches scale with cores;
 * DRAM is min(device, threads x core_dram_bandwidth)); the whole device when
 * the case does not say. */
static optic_machine scaled_machine(const optic_machine *m, double threads) {
  optic_machine s = *m;
  if (!isnan(threads) && threads >= 1 && threads < m->cores &&
      optic_machine_for_threads(m, (int32_t)threads, &s) != OPTIC_OK)
    s = *m; /* the report's machine was validated when loaded; keep the device figures */
  return s;
}

static void case_bound(report_case *c, const optic_machine *device) {
  const optic_machine scaled = scaled_machine(device, c->threads), *m = &scaled;
  c->bound = REPORT_BOUND_NONE;
  c->bound_pct = c->intensity = c->achieved_flops = (double)NAN;
  if (isnan(c->time_ns) || c->time_ns <= 0) return;
  double t = c->time_ns * 1e-9;
  if (!isnan(c->est_flops) || !isnan(c->est_bytes)) {
    /* The compiler's counts: the roofline bound of the whole iteration. */
    double flops = isnan(c->est_flops) ? 0 : c->est_flops, bytes = isnan(c->est_bytes) ? 0 : c->est_bytes;
    double tr = isnan(c->est_transcendentals) ? 0 : c->est_transcendentals;
    double bw_bytes = bytes / c->repeats;
    bool cached = bw_bytes <= m->cache_bytes;
    double tf = flops / m->peak_flops, tt = tr / m->peak_transcendentals;
    double tb = bytes / (cached ? m->cache_bandwidth : m->dram_bandwidth);
    double bound = tf;
    c->bound = REPORT_BOUND_FLOPS;
    if (tt > bound) bound = tt, c->bound = REPORT_BOUND_TRANSCENDENTALS;
    if (tb > bound) bound = tb, c->bound = cached ? REPORT_BOUND_CACHE : REPORT_BOUND_DRAM;
    c->bound_pct = bound > 0 ? 100.0 * bound / t : (double)NAN;
    if (bound <= 0) c->bound = REPORT_BOUND_NONE;
    if (flops > 0 && bytes > 0) {
      c->intensity = flops / bytes;
      c->achieved_flops = flops / t;
    }
    return;
  }
  if (!isnan(c->gflops)) {
    c->bound = REPORT_BOUND_FLOPS;
    c->bound_pct = 100.0 * c->gflops * 1e9 / m->peak_flops;
    if (!isnan(c->gbs) && c->gbs > 0) {
      c->intensity = c->gflops / c->gbs;
      c->achieved_flops = c->gflops * 1e9;
    }
    return;
  }
  if (!isnan(c->gbs)) {
    /* Working set of one call: bytes per iteration over the calls in it. */
    double per_call = c->gbs * 1e9 * t / c->repeats;
    bool cached = per_call <= m->cache_bytes;
    c->bound = cached ? REPORT_BOUND_CACHE : REPORT_BOUND_DRAM;
    c->bound_pct = 100.0 * c->gbs * 1e9 / (cached ? m->cache_bandwidth : m->dram_bandwidth);
  }
}

static optic_status case_ops(report_case *c, const group *g) {
  /* Counter names come from the first entry that has any. */
  const optic_jv *src = NULL;
  for (size_t i = 0; i < g->n && !src; i++) {
    const optic_jv *e = g->entries[i];
    for (size_t k = 0; e->kind == OPTIC_JV_OBJECT && k < e->length; k++) {
      if (strncmp(e->keys[k], "op_ns:", 6) == 0) {
        src = e;
        break;
      }
    }
  }
  if (!src) return OPTIC_OK;
  c->ops = calloc(src->length, sizeof *c->ops);
  if (!c->ops) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (size_t k = 0; k < src->length; k++) {
    if (strncmp(src->keys[k], "op_ns:", 6) != 0) continue;
    report_op_time *o = &c->ops[c->n_ops++];
    o->op = dup_str(src->keys[k] + 6);
    if (!o->op) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
    char est_key[256];
    snprintf(est_key, sizeof est_key, "op_est_ns:%s", o->op);
    o->measured_ns = figure(g, src->keys[k], NULL, 0);
    o->estimated_ns = figure(g, est_key, NULL, 0);
  }
  return OPTIC_OK;
}

static optic_status build_case(report_case *c, const group *g, const optic_machine *m) {
  c->name = dup_str(g->run_name);
  if (!c->name) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  c->time_ns = figure(g, "real_time", NULL, 0);
  if (isnan(c->time_ns)) {
    const char *msg = "no error-free run";
    for (size_t i = 0; i < g->n; i++) msg = optic_jv_get_str(g->entries[i], "error_message", msg);
    c->error = dup_str(msg);
  }
  c->est_time_ns = figure(g, "est_time_ns", NULL, 0);
  c->est_flops = figure(g, "est_flops", NULL, 0);
  c->est_bytes = figure(g, "est_bytes", NULL, 0);
  c->est_peak_bytes = figure(g, "est_peak_bytes", NULL, 0);
  c->est_transcendentals = figure(g, "est_transcendentals", NULL, 0);
  c->peak_bytes = figure(g, "peak_bytes", NULL, 0);
  c->maxrss_delta_bytes = figure(g, "maxrss_delta_bytes", NULL, 0);
  c->mem_peak_bytes = figure(g, "mem_peak_bytes", NULL, 0);
  c->gflops = figure(g, "GFLOP/s", NULL, 0);
  c->gbs = figure(g, "GB/s", NULL, 0);
  c->repeats = figure(g, "repeats", NULL, 0);
  c->threads = figure(g, "omp_threads", NULL, 0);
  if (isnan(c->repeats) || c->repeats < 1) c->repeats = 1;
  c->ratio = (!isnan(c->est_time_ns) && c->est_time_ns > 0) ? c->time_ns / c->est_time_ns : (double)NAN;
  c->peer_ratio = -1;
  case_bound(c, m);
  return case_ops(c, g);
}

/* Fidelity over the cases whose name starts with REPORT_REAL_MODULE_PREFIX
 * (which 1), the others (which 0) or all (which -1). */
static report_fidelity fidelity(const report *r, int which) {
  report_fidelity f = {0, (double)NAN, (double)NAN};
  double *logs = malloc((r->n_cases ? r->n_cases : 1) * sizeof *logs);
  size_t n = 0, within = 0;
  const size_t plen = strlen(REPORT_REAL_MODULE_PREFIX);
  for (size_t i = 0; logs && i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->ratio) || c->ratio <= 0) continue;
    int real = strncmp(c->name, REPORT_REAL_MODULE_PREFIX, plen) == 0;
    if (which >= 0 && real != which) continue;
    double l = fabs(log(c->ratio));
    logs[n++] = l;
    if (l <= log(2.0)) within++;
  }
  f.estimated = n;
  f.median_abs_log = median(logs, n);
  f.within_2x = n ? (double)within / (double)n : (double)NAN;
  free(logs);
  return f;
}

/* The real modules' shares of their roofline bounds, against the spec's bar. */
static report_bound_share bound_share(const report *r, const optic_jv *spec) {
  report_bound_share b = {0, (double)NAN, (double)NAN, (double)NAN, false, (double)NAN, REPORT_MISSING};
  const optic_jv *bar = optic_jv_get(optic_jv_get(spec, "summary_bars"), "real_module_bound_share");
  b.has_bar = optic_jv_get_num(bar, "min", &b.bar_min);
  double *shares = malloc((r->n_cases ? r->n_cases : 1) * sizeof *shares);
  const size_t plen = strlen(REPORT_REAL_MODULE_PREFIX);
  for (size_t i = 0; shares && i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (strncmp(c->name, REPORT_REAL_MODULE_PREFIX, plen) != 0 || isnan(c->bound_pct) || c->bound_pct <= 0) continue;
    double v = c->bound_pct / 100.0;
    shares[b.cases++] = v;
    if (b.cases == 1 || v < b.min) b.min = v;
    if (b.cases == 1 || v > b.max) b.max = v;
  }
  if (b.cases > 0) {
    b.median = median(shares, b.cases);
    b.status = !b.has_bar ? REPORT_INFO : b.median >= b.bar_min ? REPORT_PASS : REPORT_FAIL;
  }
  free(shares);
  return b;
}

/* Non-peer cases with a measured time and no estimate: what the model misses. */
static void count_unestimated(report *r) {
  report_summary *s = &r->summary;
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (c->error != NULL || strncmp(c->name, "peer/", 5) == 0 || !(c->time_ns > 0) || c->est_time_ns > 0) continue;
    if (s->unestimated++ == 0) s->unestimated_first = c->name;
  }
}

static void summarize(report *r, const optic_jv *spec) {
  report_summary *s = &r->summary;
  count_unestimated(r);
  s->real_module_bound = bound_share(r, spec);
  report_fidelity all = fidelity(r, -1);
  s->estimated = all.estimated;
  s->median_abs_log = all.median_abs_log;
  s->within_2x = all.within_2x;
  s->benchmarks = fidelity(r, 0);
  s->real_modules = fidelity(r, 1);
  for (size_t i = 0; i < r->n_ratios; i++) {
    if (!report_ratio_listed(r, &r->ratios[i])) {
      s->not_run++;
      continue;
    }
    switch (r->ratios[i].status) {
      case REPORT_PASS: s->pass++; break;
      case REPORT_FAIL: s->fail++; break;
      case REPORT_INFO: s->info++; break;
      case REPORT_NA: s->na++; break;
      case REPORT_MISSING: s->missing++; break;
    }
  }
}

optic_status report_analyze(report *r, optic_jv *run, const optic_jv *spec, const optic_machine *machine) {
  r->run = run;
  r->context = optic_jv_get(run, "context");
  r->machine = *machine;
  const optic_jv *benchmarks = optic_jv_get(run, "benchmarks");
  if (!benchmarks || benchmarks->kind != OPTIC_JV_ARRAY)
    return optic_fail(OPTIC_ERR_CORRUPT, "report: the run has no \"benchmarks\" array");
  groups gs = {0};
  optic_status st = group_runs(benchmarks, &gs);
  if (st == OPTIC_OK && gs.n > 1) qsort(gs.g, gs.n, sizeof *gs.g, cmp_group);
  if (st == OPTIC_OK) {
    r->cases = calloc(gs.n ? gs.n : 1, sizeof *r->cases);
    if (!r->cases) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  }
  for (size_t i = 0; st == OPTIC_OK && i < gs.n; i++) {
    r->n_cases++;
    st = build_case(&r->cases[i], &gs.g[i], machine);
  }
  if (st == OPTIC_OK && spec) st = compute_ratios(r, spec, &gs);
  for (size_t q = 0; st == OPTIC_OK && q < r->n_ratios; q++) {
    for (size_t i = 0; i < r->n_cases; i++) {
      if (r->cases[i].peer_ratio < 0 && strcmp(r->cases[i].name, r->ratios[q].ours) == 0)
        r->cases[i].peer_ratio = (int)q;
    }
  }
  if (st == OPTIC_OK) summarize(r, spec);
  free_groups(&gs);
  return st;
}

void report_free(report *r) {
  for (size_t i = 0; i < r->n_cases; i++) {
    free(r->cases[i].name);
    free(r->cases[i].error);
    for (size_t k = 0; k < r->cases[i].n_ops; k++) free(r->cases[i].ops[k].op);
    free(r->cases[i].ops);
  }
  free(r->cases);
  for (size_t i = 0; i < r->n_ratios; i++) {
    report_ratio *q = &r->ratios[i];
    free(q->name), free(q->description), free(q->ours), free(q->peer), free(q->metric), free(q->note);
    free(q->taken);
  }
  free(r->ratios);
  optic_jv_free(r->run);
  memset(r, 0, sizeof *r);
}

const char *report_status_name(report_status s) {
  static const char *names[] = {"PASS", "FAIL", "INFO", "N/A", "MISSING"};
  return (unsigned)s < 5 ? names[s] : "?";
}

const char *report_bound_name(report_bound b) {
  static const char *names[] = {"-", "FMA", "exp", "cache", "DRAM"};
  return (unsigned)b < 5 ? names[b] : "?";
}
