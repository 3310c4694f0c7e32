/* Measured vs estimated time per instruction from a profiler's op events.
 * In one run, each thread's k-th event of an instruction is its part of the
 * k-th execution (threads record once per execution; a solo op has one
 * part); an execution spans from its parts' earliest start to their latest
 * end, and executions (a while body's iterations) add up. An event inside
 * another of its thread and run (an op of a fusion run as a sequence, of a
 * call or of a while's body) is nested: its time is already in the outer
 * op's, so the totals count only ops that ran at the top level. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "exec/profile.h"

static bool is_op_event(const optic_profile_event *e) {
  return e->kind == OPTIC_PROFILE_OP || e->kind == OPTIC_PROFILE_FUSION;
}

/* Same instruction: same node id, and for node -1 the same name. */
static int compare_op_key(const optic_profile_event *a, const optic_profile_event *b) {
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  if (a->node < 0) return strcmp(a->name, b->name);
  return 0;
}

static int compare_events(const void *pa, const void *pb) {
  const optic_profile_event *a = *(const optic_profile_event *const *)pa;
  const optic_profile_event *b = *(const optic_profile_event *const *)pb;
  int k = compare_op_key(a, b);
  if (k) return k;
  if (a->run != b->run) return a->run < b->run ? -1 : 1;
  if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
  return 0;
}

static int compare_thread_start(const void *pa, const void *pb) {
  const optic_profile_event *a = *(const optic_profile_event *const *)pa;
  const optic_profile_event *b = *(const optic_profile_event *const *)pb;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
  return 0;
}

/* Same program, run and thread, then by start, the longer (outer) first. */
static int compare_nesting(const void *pa, const void *pb) {
  const optic_profile_event *a = *(const optic_profile_event *const *)pa;
  const optic_profile_event *b = *(const optic_profile_event *const *)pb;
  if (a->program != b->program) return (uintptr_t)a->program < (uintptr_t)b->program ? -1 : 1;
  if (a->run != b->run) return a->run < b->run ? -1 : 1;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
  if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* depth[e - first]: how many other op events of its program, run and thread
 * contain event e (start at or before its start, end at or after its end).
 * ops holds n op events of the array starting at first; sorted here (a
 * copy is the caller's to make). An executor's events of one thread nest or
 * follow one another, so one stack of the open outer events finds them. */
static optic_status event_depths(const optic_profile_event **ops, size_t n, const optic_profile_event *first,
                                 int32_t *depth) {
  const optic_profile_event **open = malloc((n ? n : 1) * sizeof *open);
  if (open == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_summary: no memory to nest %zu events", n);
  qsort(ops, n, sizeof *ops, compare_nesting);
  size_t top = 0;
  for (size_t i = 0; i < n; i++) {
    const optic_profile_event *e = ops[i];
    if (i > 0 && (e->program != ops[i - 1]->program || e->run != ops[i - 1]->run || e->thread != ops[i - 1]->thread))
      top = 0;
    while (top > 0 && open[top - 1]->end_ns < e->end_ns) top--;
    depth[e - first] = (int32_t)top;
    open[top++] = e;
  }
  free(open);
  return OPTIC_OK;
}

static int compare_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

static int compare_stats(const void *pa, const void *pb) {
  const optic_profile_op_stat *a = pa, *b = pb;
  if (a->measured_ns != b->measured_ns) return a->measured_ns > b->measured_ns ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

void optic_profile_summary_free(optic_profile_summary *s) {
  if (s == NULL) return;
  free(s->ops);
  memset(s, 0, sizeof *s);
}

/* long: one pass building the summary's arrays, freed together on any failure */
optic_status optic_profiler_summary(const optic_profiler_t *p, const optic_program_t *program,
                                    optic_profile_summary *out) {
  if (out == NULL || p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_summary: NULL argument");
  memset(out, 0, sizeof *out);
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(p, &n);
  const optic_profile_event **ops = malloc((n ? n : 1) * sizeof *ops);
  uint64_t *runs = malloc((n ? n : 1) * sizeof *runs);
  if (ops == NULL || runs == NULL) {
    free(ops);
    free(runs);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_summary: no memory to sort %zu events", n);
  }
  size_t nops = 0, nrun_events = 0;
  double run_total = 0.0;
  for (size_t i = 0; i < n; i++) {
    const optic_profile_event *e = &ev[i];
    if (program != NULL && e->program != (const void *)program) continue;
    if (is_op_event(e)) {
      ops[nops] = e;
      runs[nops] = e->run;
      nops++;
    } else if (e->kind == OPTIC_PROFILE_RUN) {
      run_total += (double)(e->end_ns - e->start_ns);
      nrun_events++;
    }
  }
  if (nrun_events) out->run_ns = run_total / (double)nrun_events;
  qsort(runs, nops, sizeof *runs, compare_u64);
  for (size_t i = 0; i < nops; i++)
    if (i == 0 || runs[i] != runs[i - 1]) out->runs++;
  free(runs);
  int32_t *depth = malloc((n ? n : 1) * sizeof *depth);
  optic_status dst = depth ? event_depths(ops, nops, ev, depth) : OPTIC_ERR_OUT_OF_MEMORY;
  if (dst != OPTIC_OK) {
    free(ops);
    free(depth);
    return depth ? dst : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_summary: no memory for %zu events", n);
  }
  qsort(ops, nops, sizeof *ops, compare_events);

  size_t groups = 0;
  for (size_t i = 0; i < nops; i++)
    if (i == 0 || compare_op_key(ops[i], ops[i - 1]) != 0) groups++;
  size_t cap = nops ? nops : 1;
  out->ops = calloc(groups ? groups : 1, sizeof *out->ops);
  const optic_profile_event **by_thread = malloc(cap * sizeof *by_thread);
  size_t *ordinal = malloc(cap * sizeof *ordinal);
  uint64_t *span_start = malloc(cap * sizeof *span_start), *span_end = malloc(cap * sizeof *span_end);
  double *span_est = malloc(cap * sizeof *span_est);
  if (out->ops == NULL || by_thread == NULL || ordinal == NULL || span_start == NULL || span_end == NULL ||
      span_est == NULL) {
    free(ops), free(depth);
    free(by_thread), free(ordinal), free(span_start), free(span_end), free(span_est);
    optic_profile_summary_free(out);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_summary: no memory for %zu events of %zu instructions", nops,
                      groups);
  }

  for (size_t i = 0; i < nops;) {
    size_t end = i + 1;
    while (end < nops && compare_op_key(ops[end], ops[i]) == 0) end++;
    optic_profile_op_stat *st = &out->ops[out->op_count++];
    memcpy(st->name, ops[i]->name, sizeof st->name);
    memcpy(st->detail, ops[i]->detail, sizeof st->detail);
    st->kind = ops[i]->kind;
    st->node = ops[i]->node;
    st->flops = ops[i]->flops;
    st->bytes = ops[i]->bytes;
    st->depth = INT32_MAX;
    for (size_t k = i; k < end; k++)
      if (depth[ops[k] - ev] < st->depth) st->depth = depth[ops[k] - ev];
    double measured = 0.0, est = 0.0;
    int64_t group_runs = 0;
    /* Events are sorted by run: one run at a time. */
    for (size_t k = i; k < end;) {
      size_t run_end = k + 1;
      while (run_end < end && ops[run_end]->run == ops[k]->run) run_end++;
      group_runs++;
      size_t parts = run_end - k;
      /* Each thread's events in time order get ordinals 0, 1, ...: ordinal
       * = execution. by_thread is ops[k..run_end) sorted by (thread, start). */
      memcpy(by_thread, &ops[k], parts * sizeof *by_thread);
      qsort(by_thread, parts, sizeof *by_thread, compare_thread_start);
      size_t execs = 0;
      for (size_t q = 0; q < parts; q++) {
        size_t ord = (q > 0 && by_thread[q]->thread == by_thread[q - 1]->thread) ? ordinal[q - 1] + 1 : 0;
        ordinal[q] = ord;
        if (ord + 1 > execs) execs = ord + 1;
      }
      for (size_t e = 0; e < execs; e++) span_start[e] = UINT64_MAX, span_end[e] = 0, span_est[e] = -1.0;
      for (size_t q = 0; q < parts; q++) {
        const optic_profile_event *pe = by_thread[q];
        size_t e = ordinal[q];
        if (pe->start_ns < span_start[e]) span_start[e] = pe->start_ns;
        if (pe->end_ns > span_end[e]) span_end[e] = pe->end_ns;
        if (span_est[e] < 0.0) span_est[e] = pe->est_ns;
      }
      for (size_t e = 0; e < execs; e++) {
        measured += (double)(span_end[e] - span_start[e]);
        est += span_est[e];
      }
      st->executions += (int64_t)execs;
      k = run_end;
    }
    st->measured_ns = measured / (double)group_runs;
    st->est_ns = est / (double)group_runs;
    if (st->depth == 0) { /* a nested op's time is in its outer op's */
      out->measured_ns += st->measured_ns;
      out->est_ns += st->est_ns;
    }
    i = end;
  }
  free(ops), free(depth);
  free(by_thread), free(ordinal), free(span_start), free(span_end), free(span_est);
  qsort(out->ops, out->op_count, sizeof *out->ops, compare_stats);
  return OPTIC_OK;
}

optic_status optic_profile_summary_to_text(const optic_profile_summary *s, char **out) {
  if (s == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profile_summary_to_text: NULL argument");
  *out = NULL;
  optic_strbuf b = {0};
  optic_strbuf_printf(&b, "%-40s %-16s %10s %12s %12s %9s\n", "instruction", "detail", "executions", "measured_us",
                      "estimated_us", "meas/est");
  for (size_t i = 0; i < s->op_count; i++) {
    const optic_profile_op_stat *o = &s->ops[i];
    int indent = o->depth > 0 ? 2 * (o->depth < 8 ? o->depth : 8) : 0;
    optic_strbuf_printf(&b, "%*s%-*.*s %-16.16s %10lld %12.3f %12.3f ", indent, "", 40 - indent, 40 - indent, o->name,
                        o->detail, (long long)o->executions, o->measured_ns / 1000.0, o->est_ns / 1000.0);
    if (o->est_ns > 0.0) optic_strbuf_printf(&b, "%9.2f\n", o->measured_ns / o->est_ns);
    else optic_strbuf_printf(&b, "%9s\n", "-");
  }
  optic_strbuf_printf(&b, "%-40s %-16s %10lld %12.3f %12.3f ", "total (per run)", "", (long long)s->runs,
                      s->measured_ns / 1000.0, s->est_ns / 1000.0);
  if (s->est_ns > 0.0) optic_strbuf_printf(&b, "%9.2f\n", s->measured_ns / s->est_ns);
  else optic_strbuf_printf(&b, "%9s\n", "-");
  bool nested = false;
  for (size_t i = 0; i < s->op_count && !nested; i++) nested = s->ops[i].depth > 0;
  if (nested)
    optic_strbuf_printf(
        &b, "(indented: ops that ran inside another op of the table; the total counts top-level ops only)\n");
  if (s->run_ns > 0.0) optic_strbuf_printf(&b, "run wall time (mean): %.3f us\n", s->run_ns / 1000.0);
  return optic_strbuf_take(&b, out);
}
