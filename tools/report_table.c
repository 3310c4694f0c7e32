/* `optic report`'s console table: the machine line, one row per case, one
 * line per peer bar, and the summary. It fits 100 columns (long case names
 * get a line of their own, prose is wrapped); r->wide adds the rate, the
 * peer's figure, the memory estimate and the ratio's own terms, unwrapped.
 * Every figure carries its unit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report.h"

#define TABLE_COLUMNS 100

/* text word-wrapped to TABLE_COLUMNS (unless wide), continuation lines
 * indented by indent spaces; first is what precedes text on its first line. */
static void wrap(FILE *out, bool wide, const char *first, int indent, const char *text) {
  int col = fprintf(out, "%s", first);
  const char *p = text;
  while (*p) {
    size_t word = strcspn(p, " ");
    if (!wide && col > indent && col + 1 + (int)word > TABLE_COLUMNS) {
      col = fprintf(out, "\n%*s", indent, "") - 1;
    } else if (p != text) {
      col += fprintf(out, " ");
    }
    col += fprintf(out, "%.*s", (int)word, p);
    p += word;
    while (*p == ' ') p++;
  }
  fputc('\n', out);
}

static void print_machine(const report *r, FILE *out) {
  const optic_machine *m = &r->machine;
  char line[1400];
  snprintf(line, sizeof line,
           "%.4g GFLOP/s FMA, %.4g Gexp/s, cache %.4g GB/s (up to %.3g MiB), DRAM %.4g GB/s, "
           "%.3g ns per op, %d cores (%s; %s)",
           m->peak_flops * 1e-9, m->peak_transcendentals * 1e-9, m->cache_bandwidth * 1e-9, m->cache_bytes / (1 << 20),
           m->dram_bandwidth * 1e-9, m->op_overhead_ns, (int)m->cores, r->machine_file, m->source);
  char head[80];
  snprintf(head, sizeof head, "machine %s: ", m->name);
  wrap(out, r->wide, head, 2, line);
  /* a model from before the per-strategy figures (format <= 3): say what it means */
  bool classes = m->dot_efficiency > 0;
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) classes = classes || m->conv_efficiency[c] > 0;
  if (!classes)
    wrap(out, r->wide, "  ", 2,
         "(no convolution or dot class figures: those take the GEMM bound; run `optic calibrate` to measure them)");
}

/* The name as the table shows it: without Google Benchmark's "/real_time"
 * suffix (nearly every case has it) unless wide. */
static int shown_len(const report *r, const char *name) {
  size_t n = strlen(name), k = strlen("/real_time");
  if (!r->wide && n > k && strcmp(name + n - k, "/real_time") == 0) n -= k;
  return (int)n;
}

typedef struct columns {
  int name; /* width of the case column */
  bool mem; /* a measured memory column */
} columns;

static columns layout(const report *r) {
  columns c = {.name = 4, .mem = report_any_measured_mem(r)};
  for (size_t i = 0; i < r->n_cases; i++) {
    int len = shown_len(r, r->cases[i].name);
    if (len > c.name) c.name = len;
  }
  /* measured, estimated, meas/est, % of bound, vs peer (+ memory) */
  int figures = 9 + 10 + 9 + 11 + 12 + (c.mem ? 16 : 0);
  if (!r->wide && c.name > TABLE_COLUMNS - figures) c.name = TABLE_COLUMNS - figures;
  return c;
}

static void print_header(const report *r, const columns *c, FILE *out) {
  fprintf(out, "\n%-*s %8s %9s %8s %10s", c->name, r->wide ? "case" : "case (/real_time left out)", "measured",
          "estimated", "meas/est", "% of bound");
  if (r->wide) fprintf(out, " %14s %14s", "rate", "peer");
  fprintf(out, " %11s", "vs peer");
  if (c->mem) fprintf(out, " %15s", "mem (meas/est)");
  if (r->wide) fprintf(out, " %12s", "est mem");
  fputc('\n', out);
}

static void print_case(const report *r, const columns *col, const report_case *c, FILE *out) {
  int len = shown_len(r, c->name);
  if (len > col->name) {
    /* A name wider than the table breaks after a '/'. */
    const char *p = c->name;
    while (!r->wide && len > TABLE_COLUMNS) {
      int cut = TABLE_COLUMNS;
      while (cut > 1 && p[cut - 1] != '/') cut--;
      if (cut <= 1) cut = TABLE_COLUMNS;
      fprintf(out, "%.*s\n", cut, p);
      p += cut, len -= cut;
    }
    fprintf(out, "%.*s\n%-*s", len, p, col->name, "");
  } else {
    fprintf(out, "%-*.*s", col->name, len, c->name);
  }
  if (c->error) {
    fprintf(out, " ERROR: %s\n", c->error);
    return;
  }
  char meas[32], est[32], ratio[32] = "-", pct[40] = "-", rate[40] = "-", peer[40] = "-", vs[40] = "-";
  report_fmt_time(meas, sizeof meas, c->time_ns);
  report_fmt_time(est, sizeof est, c->est_time_ns);
  if (!isnan(c->ratio)) snprintf(ratio, sizeof ratio, "%.2fx", c->ratio);
  if (!isnan(c->bound_pct)) snprintf(pct, sizeof pct, "%.0f%% %s", c->bound_pct, report_bound_name(c->bound));
  if (!isnan(c->gflops)) {
    report_fmt_metric(rate, sizeof rate, "GFLOP/s", c->gflops);
  } else if (!isnan(c->gbs)) {
    report_fmt_metric(rate, sizeof rate, "GB/s", c->gbs);
  }
  if (c->peer_ratio >= 0) {
    const report_ratio *q = &r->ratios[c->peer_ratio];
    double o = report_ratio_oriented(q);
    report_fmt_metric(peer, sizeof peer, q->metric, q->peer_value);
    if (!isnan(o)) {
      snprintf(vs, sizeof vs, "%.3gx %s", o, report_status_name(q->status));
    } else {
      snprintf(vs, sizeof vs, "%s", report_status_name(q->status));
    }
  }
  fprintf(out, " %8s %9s %8s %10s", meas, est, ratio, pct);
  if (r->wide) fprintf(out, " %14s %14s", rate, peer);
  fprintf(out, " %11s", vs);
  if (col->mem) {
    char mem[48] = "-", b[32];
    double mm = report_case_measured_mem(c);
    report_fmt_bytes(b, sizeof b, mm);
    if (!isnan(mm) && !isnan(c->est_peak_bytes) && c->est_peak_bytes > 0) {
      snprintf(mem, sizeof mem, "%s %.2fx", b, mm / c->est_peak_bytes);
    } else {
      snprintf(mem, sizeof mem, "%s", b);
    }
    fprintf(out, " %15s", mem);
  }
  if (r->wide) {
    char em[32];
    report_fmt_bytes(em, sizeof em, c->est_peak_bytes);
    fprintf(out, " %12s", em);
  }
  fputc('\n', out);
}

static void print_ratio(const report *r, const report_ratio *q, FILE *out) {
  char bar[64], val[32] = "-", detail[4096] = "";
  report_fmt_oriented_bar(bar, sizeof bar, q);
  double o = report_ratio_oriented(q);
  if (!isnan(o)) snprintf(val, sizeof val, "%.3gx", o);
  fprintf(out, "  %-7s %7s  %-13s  %s\n", report_status_name(q->status), val, bar, q->name);
  size_t len = 0;
  if (q->status == REPORT_MISSING) {
    len += (size_t)snprintf(detail, sizeof detail, "no figure for %s%s%s%s", isnan(q->ours_value) ? q->ours : "",
                            isnan(q->ours_value) && isnan(q->peer_value) ? " and " : "",
                            isnan(q->peer_value) ? q->peer : "", q->note[0] ? ":" : "");
  } else if (r->wide) {
    char a[40], b[40];
    report_fmt_metric(a, sizeof a, q->metric, q->ours_value);
    report_fmt_metric(b, sizeof b, q->metric, q->peer_value);
    char rawbar[64] = "none";
    if (q->has_min && q->has_max) snprintf(rawbar, sizeof rawbar, ">= %g and <= %g", q->bar_min, q->bar_max);
    else if (q->has_min) snprintf(rawbar, sizeof rawbar, ">= %g", q->bar_min);
    else if (q->has_max) snprintf(rawbar, sizeof rawbar, "<= %g", q->bar_max);
    len += (size_t)snprintf(detail, sizeof detail, "ours %s (%s), peer %s (%s); ours/peer %.4g, bar %s%s", a, q->ours,
                            b, q->peer, q->ratio, rawbar, q->note[0] ? ";" : "");
  }
  if (q->note[0] && len < sizeof detail) snprintf(detail + len, sizeof detail - len, "%s%s", len ? " " : "", q->note);
  if (detail[0]) wrap(out, r->wide, "            ", 12, detail);
}

/* The op of c whose measured time is furthest from its estimate (by
 * |measured - estimated|: the op adding most error to the case); NULL when
 * the case has no per-op figures. */
static const report_op_time *worst_op(const report_case *c) {
  const report_op_time *w = NULL;
  double worst = -1;
  for (size_t i = 0; i < c->n_ops; i++) {
    const report_op_time *o = &c->ops[i];
    if (isnan(o->measured_ns) || isnan(o->estimated_ns)) continue;
    double d = fabs(o->measured_ns - o->estimated_ns);
    if (d > worst) worst = d, w = o;
  }
  return w;
}

/* The five real-module cases furthest from their estimates (|ln ratio|),
 * each with the op that adds most error. */
static void print_worst_modules(const report *r, FILE *out) {
  enum { WORST = 5 };
  const report_case *top[WORST] = {NULL};
  const size_t plen = strlen(REPORT_REAL_MODULE_PREFIX);
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->ratio) || c->ratio <= 0 || strncmp(c->name, REPORT_REAL_MODULE_PREFIX, plen) != 0) continue;
    for (int k = 0; k < WORST; k++) {
      if (top[k] == NULL || fabs(log(c->ratio)) > fabs(log(top[k]->ratio))) {
        for (int j = WORST - 1; j > k; j--) top[j] = top[j - 1];
        top[k] = c;
        break;
      }
    }
  }
  if (top[0] == NULL) return;
  fprintf(out,
          "\nreal modules furthest from their estimates (meas/est; the op adding most error, measured/estimated):\n");
  for (int k = 0; k < WORST && top[k]; k++) {
    const report_op_time *o = worst_op(top[k]);
    char m[32] = "-", e[32] = "-";
    if (o) report_fmt_time(m, sizeof m, o->measured_ns), report_fmt_time(e, sizeof e, o->estimated_ns);
    fprintf(out, "  %8.2fx  %s\n            op %s: %s / %s\n", top[k]->ratio, top[k]->name + plen,
            o ? o->op : "(no profile)", m, e);
  }
}

static void print_summary(const report *r, FILE *out) {
  const report_summary *s = &r->summary;
  fprintf(out, "\nsummary: ");
  if (s->estimated > 0) {
    fprintf(out, "estimates: median |ln(measured/estimated)| %.3f over %zu cases, %.0f%% within 2x;\n",
            s->median_abs_log, s->estimated, 100.0 * s->within_2x);
    const report_fidelity *split[2] = {&s->benchmarks, &s->real_modules};
    const char *what[2] = {"benchmarks", "real modules"};
    for (int i = 0; i < 2; i++) {
      if (split[i]->estimated == 0) continue;
      fprintf(out, "         %s: median |ln| %.3f (%.2fx) over %zu cases, %.0f%% within 2x;\n", what[i],
              split[i]->median_abs_log, exp(split[i]->median_abs_log), split[i]->estimated,
              100.0 * split[i]->within_2x);
    }
  } else {
    fprintf(out, "estimates: no case in this run carries est_time_ns (graph-backed suites set it);\n");
  }
  if (s->unestimated > 0)
    fprintf(out, "         %zu non-peer case(s) without an estimate (the first listed: %s);\n", s->unestimated,
            s->unestimated_first);
  else fprintf(out, "         every non-peer case carries an estimate;\n");
  const report_bound_share *b = &s->real_module_bound;
  if (b->cases > 0) {
    fprintf(out,
            "         real modules vs their roofline bounds: median %.3f of the bound over %zu cases (%.3f to %.3f)",
            b->median, b->cases, b->min, b->max);
    if (b->has_bar) fprintf(out, "; bar median >= %g: %s", b->bar_min, report_status_name(b->status));
    fputs(";\n", out);
  }
  fprintf(out, "         peer bars: %zu of %zu met (PASS %zu, FAIL %zu, INFO %zu, N/A %zu, MISSING %zu)", s->pass,
          s->pass + s->fail, s->pass, s->fail, s->info, s->na, s->missing);
  if (s->not_run > 0)
    fprintf(out, ";\n         %zu bars not decided: --filter did not select their benchmarks", s->not_run);
  fputc('\n', out);
}

void report_print(const report *r, FILE *out) {
  print_machine(r, out);
  columns col = layout(r);
  print_header(r, &col, out);
  for (size_t i = 0; i < r->n_cases; i++) print_case(r, &col, &r->cases[i], out);
  size_t listed = 0;
  for (size_t i = 0; i < r->n_ratios; i++) listed += report_ratio_listed(r, &r->ratios[i]);
  if (listed > 0) {
    char head[256];
    snprintf(head, sizeof head,
             "optic / peer in the same run (bench/ratios.json, %s clock), oriented so that above "
             "1 is better for optic (a ratio where lower is better is shown inverted, peer / optic); "
             "the bar is in the same terms.",
             r->cpu_clock ? "critical-path CPU" : "wall");
    wrap(out, r->wide, "\npeer bars: ", 2, head);
    fprintf(out, "  %-7s %7s  %-13s  %s\n", "status", "value", "bar", "name");
  }
  for (size_t i = 0; i < r->n_ratios; i++) {
    if (report_ratio_listed(r, &r->ratios[i])) print_ratio(r, &r->ratios[i], out);
  }
  print_worst_modules(r, out);
  print_summary(r, out);
}
