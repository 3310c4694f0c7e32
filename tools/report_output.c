/* `optic report`'s report.json (Google Benchmark's JSON,
 * unchanged, plus context.optic with the machine model, the facts of the
 * run, the per-case analysis, the peer ratios and the summary). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/report.h"

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

/* long: the report's optic section written field by field in the schema's order */
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
  optic_json_key(j, "filtered");
  optic_json_bool(j, r->filtered);
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
    key_num(j, "mem_peak_bytes", c->mem_peak_bytes);
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
    key_num(j, "oriented", report_ratio_oriented(q)); /* above 1: better for optic */
    optic_json_key(j, "higher_is_better");
    optic_json_bool(j, report_ratio_higher_better(q));
    optic_json_key(j, "listed");
    optic_json_bool(j, report_ratio_listed(r, q));
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
  optic_json_key(j, "unestimated_cases");
  optic_json_uint(j, s->unestimated);
  key_num(j, "median_abs_log_ratio", s->median_abs_log);
  key_num(j, "share_within_2x", s->within_2x);
  const report_fidelity *split[2] = {&s->benchmarks, &s->real_modules};
  const char *split_names[2] = {"benchmarks", "real_modules"};
  for (int i = 0; i < 2; i++) {
    optic_json_key(j, split_names[i]);
    optic_json_begin_object(j);
    optic_json_key(j, "estimated_cases");
    optic_json_uint(j, split[i]->estimated);
    key_num(j, "median_abs_log_ratio", split[i]->median_abs_log);
    key_num(j, "share_within_2x", split[i]->within_2x);
    optic_json_end_object(j);
  }
  const report_bound_share *b = &s->real_module_bound;
  optic_json_key(j, "real_module_bound_share");
  optic_json_begin_object(j);
  optic_json_key(j, "cases");
  optic_json_uint(j, b->cases);
  key_num(j, "median", b->median);
  key_num(j, "min", b->min);
  key_num(j, "max", b->max);
  if (b->has_bar) key_num(j, "bar_min", b->bar_min);
  key_str(j, "status", report_status_name(b->status));
  optic_json_end_object(j);
  optic_json_key(j, "bars_met");
  optic_json_uint(j, s->pass);
  optic_json_key(j, "bars_checked");
  optic_json_uint(j, s->pass + s->fail);
  const char *names[] = {"pass", "fail", "info", "na", "missing", "not_run"};
  size_t counts[] = {s->pass, s->fail, s->info, s->na, s->missing, s->not_run};
  for (int i = 0; i < 6; i++) {
    optic_json_key(j, names[i]);
    optic_json_uint(j, counts[i]);
  }
  optic_json_end_object(j);
  optic_json_end_object(j);
}

void report_take_run_facts(report *r, const optic_jv *run) {
  const optic_jv *facts = optic_jv_get(optic_jv_get(optic_jv_get(run, "context"), "optic"), "run");
  if (!facts || facts->kind != OPTIC_JV_OBJECT) return;
  double reps;
  snprintf(r->mode, sizeof r->mode, "%s", optic_jv_get_str(facts, "mode", r->mode));
  char filter[sizeof r->filter];
  snprintf(filter, sizeof filter, "%s", optic_jv_get_str(facts, "filter", r->filter));
  memcpy(r->filter, filter, sizeof filter);
  if (optic_jv_get_num(facts, "repetitions", &reps) && reps >= 1 && reps <= 1000) r->repetitions = (int)reps;
  const optic_jv *f = optic_jv_get(facts, "filtered");
  if (f && f->kind == OPTIC_JV_BOOL) r->filtered = f->boolean;
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
