/* `optic report`'s console table and report.json (Google Benchmark's JSON,
 * unchanged, plus context.optic with the machine model, the facts of the
 * run, the per-case analysis, the peer ratios and the summary). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/report.h"

static void fmt_time(char *buf, size_t size, double ns) {
  if (isnan(ns)) {
    snprintf(buf, size, "-");
  } else if (ns >= 1e9) {
    snprintf(buf, size, "%.3g s", ns * 1e-9);
  } else if (ns >= 1e6) {
    snprintf(buf, size, "%.3g ms", ns * 1e-6);
  } else if (ns >= 1e3) {
    snprintf(buf, size, "%.3g us", ns * 1e-3);
  } else {
    snprintf(buf, size, "%.3g ns", ns);
  }
}

static void fmt_bytes(char *buf, size_t size, double b) {
  if (isnan(b)) {
    snprintf(buf, size, "-");
  } else if (b >= 1 << 30) {
    snprintf(buf, size, "%.3gGiB", b / (1 << 30));
  } else if (b >= 1 << 20) {
    snprintf(buf, size, "%.3gMiB", b / (1 << 20));
  } else if (b >= 1 << 10) {
    snprintf(buf, size, "%.3gKiB", b / (1 << 10));
  } else {
    snprintf(buf, size, "%.0fB", b);
  }
}

static void fmt_num(char *buf, size_t size, const char *fmt, double v) {
  if (isnan(v)) {
    snprintf(buf, size, "-");
  } else {
    snprintf(buf, size, fmt, v);
  }
}

static void bar_text(char *buf, size_t size, const report_ratio *q) {
  if (q->has_min && q->has_max) {
    snprintf(buf, size, ">= %g and <= %g", q->bar_min, q->bar_max);
  } else if (q->has_min) {
    snprintf(buf, size, ">= %g", q->bar_min);
  } else if (q->has_max) {
    snprintf(buf, size, "<= %g", q->bar_max);
  } else {
    snprintf(buf, size, "-");
  }
}

void report_print(const report *r, FILE *out) {
  const optic_machine *m = &r->machine;
  fprintf(out, "machine %s: %.4g GFLOP/s, %.4g Gexp/s, cache %.4g GB/s (<= %.3g MiB), DRAM %.4g GB/s, %.3g ns/op, %d cores\n",
          m->name, m->peak_flops * 1e-9, m->peak_transcendentals * 1e-9, m->cache_bandwidth * 1e-9,
          m->cache_bytes / (1 << 20), m->dram_bandwidth * 1e-9, m->op_overhead_ns, (int)m->cores);
  fprintf(out, "  (%s; %s)\n", r->machine_file, m->source);
  int w = 20;
  for (size_t i = 0; i < r->n_cases; i++) {
    int len = (int)strlen(r->cases[i].name);
    if (len > w) w = len;
  }
  if (w > 72) w = 72;
  fprintf(out, "\n%-*s %10s %10s %8s %11s %9s %9s %17s\n", w, "case", "measured", "estimated", "meas/est",
          "% of bound", "peer", "vs peer", "mem est/meas");
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    char meas[32], est[32], ratio[32], pct[40], peer[32] = "-", vs[32] = "-", me[32], mm[32];
    if ((int)strlen(c->name) > w) fprintf(out, "%s\n%-*s", c->name, w, "");
    else fprintf(out, "%-*s", w, c->name);
    if (c->error) {
      fprintf(out, " ERROR: %s\n", c->error);
      continue;
    }
    fmt_time(meas, sizeof meas, c->time_ns);
    fmt_time(est, sizeof est, c->est_time_ns);
    fmt_num(ratio, sizeof ratio, "%.2f", c->ratio);
    if (isnan(c->bound_pct)) {
      snprintf(pct, sizeof pct, "-");
    } else {
      snprintf(pct, sizeof pct, "%.0f%% %s", c->bound_pct, report_bound_name(c->bound));
    }
    if (c->peer_ratio >= 0) {
      const report_ratio *q = &r->ratios[c->peer_ratio];
      if (strcmp(q->metric, "real_time") == 0 || strcmp(q->metric, "cpu_time") == 0) {
        fmt_time(peer, sizeof peer, q->peer_value);
      } else {
        fmt_num(peer, sizeof peer, "%.4g", q->peer_value);
      }
      if (!isnan(q->ratio)) snprintf(vs, sizeof vs, "%.2f %s", q->ratio, report_status_name(q->status));
      else snprintf(vs, sizeof vs, "%s", report_status_name(q->status));
    }
    fmt_bytes(me, sizeof me, c->est_peak_bytes);
    fmt_bytes(mm, sizeof mm, !isnan(c->peak_bytes) ? c->peak_bytes : c->maxrss_delta_bytes);
    char mem[72];
    snprintf(mem, sizeof mem, "%s/%s", me, mm);
    fprintf(out, " %10s %10s %8s %11s %9s %9s %17s\n", meas, est, ratio, pct, peer, vs,
            (isnan(c->est_peak_bytes) && isnan(c->peak_bytes) && isnan(c->maxrss_delta_bytes)) ? "-" : mem);
  }

  if (r->n_ratios > 0)
    fprintf(out, "\npeer ratios (bench/ratios.json: ours / peer, same run, %s clock)\n",
            r->cpu_clock ? "critical-path CPU" : "wall");
  for (size_t i = 0; i < r->n_ratios; i++) {
    const report_ratio *q = &r->ratios[i];
    char bar[64];
    bar_text(bar, sizeof bar, q);
    if (q->status == REPORT_MISSING) {
      fprintf(out, "  %-7s %-36s bar %s; %s %s / %s absent or errored%s%s\n", "MISSING", q->name, bar, q->metric,
              isnan(q->ours_value) ? q->ours : "", isnan(q->peer_value) ? q->peer : "", q->note[0] ? ": " : "",
              q->note);
      continue;
    }
    fprintf(out, "  %-7s %-36s ratio %.3f (bar %s)  %s %.4g / %.4g (%s)%s%s\n", report_status_name(q->status),
            q->name, q->ratio, bar, q->metric, q->ours_value, q->peer_value, q->peer, q->note[0] ? "  " : "",
            q->note);
  }

  const report_summary *s = &r->summary;
  fprintf(out, "\nsummary: ");
  if (s->estimated > 0) {
    fprintf(out, "estimates: median |ln(measured/estimated)| %.3f over %zu cases, %.0f%% within 2x", s->median_abs_log,
            s->estimated, 100.0 * s->within_2x);
  } else {
    fprintf(out, "estimates: no case in this run carries est_time_ns (graph-backed suites set it)");
  }
  fprintf(out, "; peer bars: %zu of %zu met", s->pass, s->pass + s->fail);
  fprintf(out, " (PASS %zu, FAIL %zu, INFO %zu, N/A %zu, MISSING %zu)\n", s->pass, s->fail, s->info, s->na, s->missing);
}

/* -------------------------------------------------------------- JSON */

static void key_num(optic_json *j, const char *key, double v) {
  optic_json_key(j, key);
  optic_json_double(j, v); /* NaN -> null */
}

static void key_str(optic_json *j, const char *key, const char *v) {
  optic_json_key(j, key);
  optic_json_string(j, v);
}

static void write_machine(optic_json *j, const optic_machine *m) {
  optic_json_begin_object(j);
  key_str(j, "name", m->name);
  key_num(j, "peak_flops", m->peak_flops);
  key_num(j, "peak_transcendentals", m->peak_transcendentals);
  key_num(j, "dram_bandwidth", m->dram_bandwidth);
  key_num(j, "cache_bandwidth", m->cache_bandwidth);
  key_num(j, "cache_bytes", m->cache_bytes);
  key_num(j, "op_overhead_ns", m->op_overhead_ns);
  optic_json_key(j, "cores");
  optic_json_int(j, m->cores);
  key_str(j, "source", m->source);
  optic_json_end_object(j);
}

static void write_optic(optic_json *j, const report *r) {
  optic_json_begin_object(j);
  key_str(j, "version", optic_version());
  key_str(j, "compiler", optic_build_compiler());
  key_str(j, "isa", optic_jv_get_str(r->context, "optic_isa", optic_isa_name(optic_isa_selected())));
  key_str(j, "isa_best", optic_jv_get_str(r->context, "optic_isa_best", optic_isa_name(optic_isa_best())));
  key_str(j, "openblas_core", optic_jv_get_str(r->context, "optic_openblas_core", "unknown"));
  key_str(j, "google_benchmark", optic_jv_get_str(r->context, "optic_google_benchmark", "unknown"));
  key_str(j, "openssl", optic_jv_get_str(r->context, "optic_openssl", "unknown"));
  key_str(j, "onednn", optic_jv_get_str(r->context, "optic_onednn", "unknown"));
  key_str(j, "machine_file", r->machine_file);
  optic_json_key(j, "machine");
  write_machine(j, &r->machine);
  optic_json_key(j, "run");
  optic_json_begin_object(j);
  key_str(j, "mode", r->mode);
  key_str(j, "filter", r->filter);
  optic_json_key(j, "repetitions");
  optic_json_int(j, r->repetitions);
  key_str(j, "bench", r->bench);
  key_str(j, "ratios_file", r->ratios_file);
  key_str(j, "clock", r->cpu_clock ? "cpu" : "wall");
  key_num(j, "seconds", r->seconds);
  optic_json_end_object(j);

  optic_json_key(j, "cases");
  optic_json_begin_array(j);
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    optic_json_begin_object(j);
    key_str(j, "name", c->name);
    if (c->error) key_str(j, "error", c->error);
    key_num(j, "time_ns", c->time_ns);
    key_num(j, "est_time_ns", c->est_time_ns);
    key_num(j, "ratio", c->ratio);
    key_num(j, "est_flops", c->est_flops);
    key_num(j, "est_bytes", c->est_bytes);
    key_num(j, "est_peak_bytes", c->est_peak_bytes);
    key_num(j, "peak_bytes", c->peak_bytes);
    key_num(j, "maxrss_delta_bytes", c->maxrss_delta_bytes);
    key_str(j, "bound", report_bound_name(c->bound));
    key_num(j, "bound_percent", c->bound_pct);
    key_num(j, "intensity", c->intensity);
    key_num(j, "achieved_flops", c->achieved_flops);
    if (c->peer_ratio >= 0) key_str(j, "peer_ratio", r->ratios[c->peer_ratio].name);
    if (c->n_ops > 0) {
      optic_json_key(j, "ops");
      optic_json_begin_array(j);
      for (size_t k = 0; k < c->n_ops; k++) {
        optic_json_begin_object(j);
        key_str(j, "op", c->ops[k].op);
        key_num(j, "measured_ns", c->ops[k].measured_ns);
        key_num(j, "estimated_ns", c->ops[k].estimated_ns);
        optic_json_end_object(j);
      }
      optic_json_end_array(j);
    }
    optic_json_end_object(j);
  }
  optic_json_end_array(j);

  optic_json_key(j, "ratios");
  optic_json_begin_array(j);
  for (size_t i = 0; i < r->n_ratios; i++) {
    const report_ratio *q = &r->ratios[i];
    optic_json_begin_object(j);
    key_str(j, "name", q->name);
    key_str(j, "description", q->description);
    key_str(j, "ours", q->ours);
    key_str(j, "peer", q->peer);
    key_str(j, "metric", q->metric);
    key_num(j, "ours_value", q->ours_value);
    key_num(j, "peer_value", q->peer_value);
    key_num(j, "ratio", q->ratio);
    optic_json_key(j, "bar");
    optic_json_begin_object(j);
    if (q->has_min) key_num(j, "min", q->bar_min);
    if (q->has_max) key_num(j, "max", q->bar_max);
    optic_json_end_object(j);
    key_str(j, "status", report_status_name(q->status));
    key_str(j, "taken", q->taken);
    key_str(j, "note", q->note);
    optic_json_end_object(j);
  }
  optic_json_end_array(j);

  const report_summary *s = &r->summary;
  optic_json_key(j, "summary");
  optic_json_begin_object(j);
  optic_json_key(j, "estimated_cases");
  optic_json_uint(j, s->estimated);
  key_num(j, "median_abs_log_ratio", s->median_abs_log);
  key_num(j, "share_within_2x", s->within_2x);
  optic_json_key(j, "bars_met");
  optic_json_uint(j, s->pass);
  optic_json_key(j, "bars_checked");
  optic_json_uint(j, s->pass + s->fail);
  const char *names[] = {"pass", "fail", "info", "na", "missing"};
  size_t counts[] = {s->pass, s->fail, s->info, s->na, s->missing};
  for (int i = 0; i < 5; i++) {
    optic_json_key(j, names[i]);
    optic_json_uint(j, counts[i]);
  }
  optic_json_end_object(j);
  optic_json_end_object(j);
}

optic_status report_write_json(const report *r, const char *path) {
  optic_json j;
  optic_json_init(&j, true);
  optic_json_begin_object(&j);
  const optic_jv *run = r->run;
  bool wrote_context = false;
  for (size_t i = 0; i < run->length; i++) {
    optic_json_key(&j, run->keys[i]);
    if (strcmp(run->keys[i], "context") == 0 && run->items[i].kind == OPTIC_JV_OBJECT && !wrote_context) {
      const optic_jv *ctx = &run->items[i];
      optic_json_begin_object(&j);
      for (size_t k = 0; k < ctx->length; k++) {
        if (strcmp(ctx->keys[k], "optic") == 0) continue; /* re-rendering a report: replace it */
        optic_json_key(&j, ctx->keys[k]);
        optic_json_write_value(&j, &ctx->items[k]);
      }
      optic_json_key(&j, "optic");
      write_optic(&j, r);
      optic_json_end_object(&j);
      wrote_context = true;
    } else {
      optic_json_write_value(&j, &run->items[i]);
    }
  }
  if (!wrote_context) {
    optic_json_key(&j, "context");
    optic_json_begin_object(&j);
    optic_json_key(&j, "optic");
    write_optic(&j, r);
    optic_json_end_object(&j);
  }
  optic_json_end_object(&j);
  const char *text;
  size_t len;
  optic_status st = optic_json_finish(&j, &text, &len);
  if (st == OPTIC_OK) {
    FILE *f = fopen(path, "w");
    if (!f) {
      st = optic_fail(OPTIC_ERR_IO, "report: cannot write %s", path);
    } else {
      bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
      if (fclose(f) != 0 || !ok) st = optic_fail(OPTIC_ERR_IO, "report: error writing %s", path);
    }
  }
  optic_json_free(&j);
  return st;
}
