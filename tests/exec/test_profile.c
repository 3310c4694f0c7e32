/* Profiler: events from 4 OpenMP threads land once each and in time order
 * per thread; a disabled profiler records nothing; overflow is counted, not
 * stored; compile events; the Chrome trace's structure (the python test
 * exec_profile_trace_json parses the file the write_trace_file case writes);
 * the summary's merge of overlapping spans and sum of separate ones. */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>

#include <optic/optic.h>

#include "exec/profile.h"
#include "tests/harness.h"

/* GCC's libgomp is not instrumented for ThreadSanitizer, so TSan sees
 * neither the fork nor the join of a parallel region. The main thread
 * publishes with a release before the region and every thread acquires on
 * entry; every thread releases at its end and the main thread acquires after
 * the join: the ordering OpenMP already provides, stated in atomics TSan sees. */
static atomic_int region_go, region_done;
/* What a region's threads share lives in globals, not in locals: libgomp
 * passes captured locals through a struct the main thread writes after
 * region_fork, which TSan would flag for the same reason. */
static optic_profiler_t *g_prof;
static uint64_t g_run;
static void region_fork(void) { atomic_fetch_add_explicit(&region_go, 1, memory_order_release); }
static void region_enter(void) { (void)atomic_load_explicit(&region_go, memory_order_acquire); }
static void region_end(void) { atomic_fetch_add_explicit(&region_done, 1, memory_order_release); }
static void region_joined(void) { (void)atomic_load_explicit(&region_done, memory_order_acquire); }

static optic_profiler_t *make(size_t capacity, bool enabled) {
  optic_profiler_options o = optic_profiler_options_default();
  o.capacity = capacity;
  o.enabled = enabled;
  optic_profiler_t *p = NULL;
  OT_EXPECT_OK(optic_profiler_create(&o, &p));
  return p;
}

static void events_from_several_threads(void) {
  optic_profiler_t *p = make(10000, true);
  enum { per_thread = 1000 };
  g_prof = p;
  region_fork();
#pragma omp parallel num_threads(4)
  {
    region_enter();
    int t = omp_get_thread_num();
    optic_profiler_t *prof = exec_profiler_active(g_prof);
    for (int i = 0; i < per_thread; i++) {
      uint64_t s = optic_now_ns();
      if (prof)
        exec_profiler_record_span(prof, OPTIC_PROFILE_OP, "add.1", "add", NULL, 0, t, i, 1, s, optic_now_ns(), 2.0 * i,
                                  12.0, 1.5);
    }
    region_end();
  }
  region_joined();
  size_t n = 0;
  const optic_profile_event *ev = optic_profiler_events(p, &n);
  int counts[4] = {0};
  int64_t last_node[4] = {-1, -1, -1, -1};
  uint64_t last_start[4] = {0};
  bool ordered = true, figures = true;
  for (size_t i = 0; i < n; i++) {
    int t = ev[i].thread;
    if (t < 0 || t > 3) {
      figures = false;
      continue;
    }
    counts[t]++;
    if (ev[i].node <= last_node[t] || ev[i].start_ns < last_start[t]) ordered = false;
    last_node[t] = ev[i].node;
    last_start[t] = ev[i].start_ns;
    if (strcmp(ev[i].name, "add.1") != 0 || strcmp(ev[i].detail, "add") != 0 ||
        ev[i].flops != 2.0 * (double)ev[i].node || ev[i].end_ns < ev[i].start_ns)
      figures = false;
  }
  int total = counts[0] + counts[1] + counts[2] + counts[3];
  OT_CHECK(n == (size_t)total && total % per_thread == 0 && total >= per_thread, "%zu events", n);
  for (int t = 0; t < 4; t++) OT_CHECK(counts[t] == 0 || counts[t] == per_thread, "thread %d: %d events", t, counts[t]);
  OT_CHECK(ordered, "each thread's events are in recording order");
  OT_CHECK(figures, "event fields survive");
  OT_CHECK(optic_profiler_dropped(p) == 0);
  optic_profiler_destroy(p);
}

static void disabled_records_nothing(void) {
  optic_profiler_t *p = make(16, false);
  OT_CHECK(!optic_profiler_enabled(p) && exec_profiler_active(p) == NULL && exec_profiler_active(NULL) == NULL);
  optic_profile_event e = {.name = "x", .kind = OPTIC_PROFILE_USER, .start_ns = 1, .end_ns = 2};
  OT_EXPECT_OK(optic_profiler_record(p, &e));
  optic_pass_stats ps = {.size = sizeof ps};
  ps.pass[0].runs = 1;
  OT_EXPECT_OK(optic_profiler_record_compile(p, &ps, 0.001, NULL, 0));
  size_t n = 99;
  optic_profiler_events(p, &n);
  OT_CHECK(n == 0 && optic_profiler_dropped(p) == 0);
  optic_profiler_enable(p, true);
  OT_CHECK(exec_profiler_active(p) == p);
  OT_EXPECT_OK(optic_profiler_record(p, &e));
  optic_profiler_events(p, &n);
  OT_CHECK(n == 1);
  optic_profiler_enable(p, false);
  OT_EXPECT_OK(optic_profiler_record(p, &e));
  optic_profiler_events(p, &n);
  OT_CHECK(n == 1);
  optic_profiler_destroy(p);
}

static void overflow_is_counted(void) {
  optic_profiler_t *p = make(100, true);
  optic_profile_event e = {.name = "x", .kind = OPTIC_PROFILE_USER, .start_ns = 5, .end_ns = 9};
  for (int i = 0; i < 150; i++) OT_EXPECT_OK(optic_profiler_record(p, &e));
  size_t n = 0;
  optic_profiler_events(p, &n);
  OT_CHECK(n == 100 && optic_profiler_dropped(p) == 50, "%zu kept, %llu dropped", n,
           (unsigned long long)optic_profiler_dropped(p));
  optic_profiler_clear(p);
  optic_profiler_events(p, &n);
  OT_CHECK(n == 0 && optic_profiler_dropped(p) == 0);
  /* From 4 threads at once: exactly capacity kept, the rest dropped. */
  g_prof = p;
  region_fork();
#pragma omp parallel num_threads(4)
  {
    region_enter();
    for (int i = 0; i < 500; i++)
      exec_profiler_record_span(g_prof, OPTIC_PROFILE_OP, "y", NULL, NULL, 0, omp_get_thread_num(), i, 1, 1, 2, 0, 0,
                                0);
    region_end();
  }
  region_joined();
  optic_profiler_events(p, &n);
  uint64_t total = n + optic_profiler_dropped(p);
  OT_CHECK(n == 100 && total % 500 == 0 && total >= 500, "%zu kept, %llu total", n, (unsigned long long)total);
  optic_profiler_destroy(p);
}

static void bad_arguments(void) {
  optic_profiler_t *p = NULL;
  optic_profiler_options o = optic_profiler_options_default();
  o.capacity = 0;
  OT_EXPECT_STATUS(optic_profiler_create(&o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_profiler_options_default();
  o.capacity = SIZE_MAX / 2;
  OT_EXPECT_STATUS(optic_profiler_create(&o, &p), OPTIC_ERR_OVERFLOW);
  OT_EXPECT_STATUS(optic_profiler_create(NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_profiler_create(NULL, &p));
  optic_profiler_enable(p, true);
  optic_profile_event e = {.name = "x", .kind = OPTIC_PROFILE_USER, .start_ns = 9, .end_ns = 5};
  OT_EXPECT_STATUS(optic_profiler_record(p, &e), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "ends") != NULL);
  e.end_ns = 10;
  e.kind = OPTIC_PROFILE_KIND_COUNT_;
  OT_EXPECT_STATUS(optic_profiler_record(p, &e), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_profiler_record(p, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_pass_stats ps = {.size = sizeof ps};
  OT_EXPECT_STATUS(optic_profiler_record_compile(p, &ps, -1.0, NULL, 0), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_profiler_record_compile(p, &ps, NAN, NULL, 0), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_profiler_record_compile(p, NULL, 1.0, NULL, 0), OPTIC_ERR_INVALID_ARGUMENT);
  /* A name that fills the whole array is terminated. */
  memset(e.name, 'a', sizeof e.name);
  e.kind = OPTIC_PROFILE_USER;
  OT_EXPECT_OK(optic_profiler_record(p, &e));
  size_t n;
  const optic_profile_event *ev = optic_profiler_events(p, &n);
  OT_CHECK(n == 1 && strlen(ev[0].name) == OPTIC_PROFILE_NAME_MAX - 1);
  OT_CHECK(strcmp(optic_profile_kind_name(OPTIC_PROFILE_COMPILE_PASS), "compile_pass") == 0);
  OT_CHECK(strcmp(optic_profile_kind_name((optic_profile_kind)99), "?") == 0);
  optic_profiler_destroy(p);
  optic_profiler_destroy(NULL);
}

static void compile_events(void) {
  optic_profiler_t *p = make(64, true);
  optic_pass_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.size = sizeof ps;
  ps.pass[OPTIC_PASS_DCE].runs = 3;
  ps.pass[OPTIC_PASS_DCE].seconds = 0.002;
  ps.pass[OPTIC_PASS_FUSION].runs = 1;
  ps.pass[OPTIC_PASS_FUSION].seconds = 0.001;
  OT_EXPECT_OK(optic_profiler_record_compile(p, &ps, 0.004, (const void *)&ps, 1000000));
  size_t n;
  const optic_profile_event *ev = optic_profiler_events(p, &n);
  OT_CHECK(n == 3, "%zu events", n);
  if (n == 3) {
    OT_CHECK(ev[0].kind == OPTIC_PROFILE_COMPILE && ev[0].start_ns == 1000000 && ev[0].end_ns == 5000000);
    OT_CHECK(ev[1].kind == OPTIC_PROFILE_COMPILE_PASS && strcmp(ev[1].name, optic_pass_name(OPTIC_PASS_DCE)) == 0);
    OT_CHECK(ev[1].start_ns == 1000000 && ev[1].end_ns == 3000000);
    OT_CHECK(strcmp(ev[2].name, optic_pass_name(OPTIC_PASS_FUSION)) == 0 && ev[2].start_ns == 3000000 &&
             ev[2].end_ns == 4000000);
    OT_CHECK(ev[2].program == (const void *)&ps);
  }
  optic_profiler_destroy(p);
}

/* Events with known times: node 7 is split over 2 threads in runs 1 and 2
 * (one execution from the first start to the last end: 100 ns per run),
 * node 9 runs twice in run 1 on one thread (a loop: 30 + 50 ns) and once in
 * run 2 (40 ns); a RUN event per run; an event of another program is left
 * out when filtering. */
static void summary_merges_and_sums(void) {
  optic_profiler_t *p = make(64, true);
  const void *prog = (const void *)0x1000, *other = (const void *)0x2000;
  for (uint64_t run = 1; run <= 2; run++) {
    uint64_t b = run * 10000;
    exec_profiler_record_span(p, OPTIC_PROFILE_RUN, "run", "main", prog, 0, 0, -1, run, b, b + 1000, 0, 0, 0);
    exec_profiler_record_span(p, OPTIC_PROFILE_FUSION, "fusion.7", "loop", prog, 0, 0, 7, run, b + 10, b + 90, 100, 64,
                              60);
    exec_profiler_record_span(p, OPTIC_PROFILE_FUSION, "fusion.7", "loop", prog, 0, 1, 7, run, b + 20, b + 110, 100, 64,
                              60);
    if (run == 1) {
      exec_profiler_record_span(p, OPTIC_PROFILE_OP, "add.9", "add", prog, 0, 0, 9, run, b + 200, b + 230, 1, 8, 5);
      exec_profiler_record_span(p, OPTIC_PROFILE_OP, "add.9", "add", prog, 0, 0, 9, run, b + 300, b + 350, 1, 8, 5);
    } else {
      exec_profiler_record_span(p, OPTIC_PROFILE_OP, "add.9", "add", prog, 0, 0, 9, run, b + 200, b + 240, 1, 8, 5);
    }
  }
  /* Run 1 only: node 11's two thread parts do not overlap (thread 1 started
   * late) but are one execution, 10..60 = 60 ns; node 13 runs twice on both
   * threads (a loop): 600..615 and 700..730, 45 ns in 2 executions. */
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "exp.11", "exponential", prog, 0, 1, 11, 1, 10530, 10560, 3, 8, 10);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "exp.11", "exponential", prog, 0, 0, 11, 1, 10500, 10520, 3, 8, 10);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "neg.13", "negate", prog, 0, 0, 13, 1, 10600, 10610, 1, 8, 4);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "neg.13", "negate", prog, 0, 1, 13, 1, 10605, 10615, 1, 8, 4);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "neg.13", "negate", prog, 0, 1, 13, 1, 10705, 10730, 1, 8, 4);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "neg.13", "negate", prog, 0, 0, 13, 1, 10700, 10720, 1, 8, 4);
  exec_profiler_record_span(p, OPTIC_PROFILE_OP, "mul.3", "multiply", other, 0, 0, 3, 3, 50000, 50500, 1, 8, 5);
  optic_profile_summary s;
  OT_EXPECT_OK(optic_profiler_summary(p, (const optic_program_t *)prog, &s));
  OT_CHECK(s.runs == 2 && s.op_count == 4, "runs %lld ops %zu", (long long)s.runs, s.op_count);
  if (s.op_count == 4) {
    const optic_profile_op_stat *e = &s.ops[2], *g = &s.ops[3];
    OT_CHECK(e->node == 11 && e->executions == 1 && e->measured_ns == 60.0 && e->est_ns == 10.0,
             "exp: node %lld exec %lld measured %g est %g", (long long)e->node, (long long)e->executions,
             e->measured_ns, e->est_ns);
    OT_CHECK(g->node == 13 && g->executions == 2 && g->measured_ns == 45.0 && g->est_ns == 8.0,
             "neg: node %lld exec %lld measured %g est %g", (long long)g->node, (long long)g->executions,
             g->measured_ns, g->est_ns);
    const optic_profile_op_stat *f = &s.ops[0], *a = &s.ops[1]; /* by decreasing measured time */
    OT_CHECK(f->node == 7 && f->executions == 2 && f->measured_ns == 100.0 && f->est_ns == 60.0,
             "fusion: node %lld exec %lld measured %g est %g", (long long)f->node, (long long)f->executions,
             f->measured_ns, f->est_ns);
    OT_CHECK(f->kind == OPTIC_PROFILE_FUSION && strcmp(f->detail, "loop") == 0);
    OT_CHECK(a->node == 9 && a->executions == 3 && a->measured_ns == 60.0 && a->est_ns == 7.5,
             "add: exec %lld measured %g est %g", (long long)a->executions, a->measured_ns, a->est_ns);
  }
  OT_CHECK(s.measured_ns == 265.0 && s.est_ns == 85.5 && s.run_ns == 1000.0, "totals %g %g %g", s.measured_ns, s.est_ns,
           s.run_ns);
  char *text = NULL;
  OT_EXPECT_OK(optic_profile_summary_to_text(&s, &text));
  OT_CHECK(text && strstr(text, "fusion.7") && strstr(text, "add.9") && strstr(text, "total (per run)") &&
               !strstr(text, "mul.3"),
           "%s", text ? text : "");
  optic_string_free(text);
  optic_profile_summary_free(&s);
  OT_CHECK(s.ops == NULL && s.op_count == 0);
  /* No filter: the other program's op is in. */
  OT_EXPECT_OK(optic_profiler_summary(p, NULL, &s));
  OT_CHECK(s.op_count == 5 && s.runs == 3);
  optic_profile_summary_free(&s);
  /* Empty profiler: empty summary. */
  optic_profiler_clear(p);
  OT_EXPECT_OK(optic_profiler_summary(p, NULL, &s));
  OT_CHECK(s.op_count == 0 && s.runs == 0 && s.measured_ns == 0.0);
  optic_profile_summary_free(&s);
  optic_profiler_destroy(p);
}

/* Nesting, with known times: in each of 2 runs, a while (node 1, 0..1000 on
 * both threads) runs a custom fusion (node 2) twice, whose add (node 3) runs
 * on thread 0 only; a negate (node 4) follows the while on thread 0 (it
 * starts as the while ends: next to it, not in it); an event of another
 * program inside the while stays top level in its own summary. Depths
 * 0, 1, 2, 0; the totals count the while and the negate only. */
static void summary_nests(void) {
  optic_profiler_t *p = make(64, true);
  const void *prog = (const void *)0x1000, *other = (const void *)0x2000;
  for (uint64_t run = 1; run <= 2; run++) {
    uint64_t b = run * 10000;
    for (int32_t t = 0; t < 2; t++) {
      for (uint64_t k = 0; k < 2; k++) {
        uint64_t f = b + 100 + 400 * k;
        if (t == 0)
          exec_profiler_record_span(p, OPTIC_PROFILE_OP, "add", "add", prog, 0, 0, 3, run, f + 10, f + 60, 0, 0, 5);
        exec_profiler_record_span(p, OPTIC_PROFILE_FUSION, "fusion", "custom", prog, 0, t, 2, run, f, f + 300, 0, 0,
                                  20);
      }
      exec_profiler_record_span(p, OPTIC_PROFILE_OP, "while", "while", prog, 0, t, 1, run, b, b + 1000, 0, 0, 100);
    }
    exec_profiler_record_span(p, OPTIC_PROFILE_OP, "negate", "negate", prog, 0, 0, 4, run, b + 1000, b + 1040, 0, 0, 7);
    exec_profiler_record_span(p, OPTIC_PROFILE_OP, "mul", "multiply", other, 0, 0, 9, run, b + 200, b + 210, 0, 0, 1);
  }
  optic_profile_summary s;
  OT_EXPECT_OK(optic_profiler_summary(p, (const optic_program_t *)prog, &s));
  OT_CHECK(s.op_count == 4, "%zu ops", s.op_count);
  const int32_t want_depth[5] = {-1, 0, 1, 2, 0};
  for (size_t i = 0; i < s.op_count; i++) {
    const optic_profile_op_stat *o = &s.ops[i];
    OT_CHECK(o->node >= 1 && o->node <= 4 && o->depth == want_depth[o->node], "%s: depth %d", o->name, (int)o->depth);
  }
  OT_CHECK(s.measured_ns == 1040.0 && s.est_ns == 107.0, "totals %g %g", s.measured_ns, s.est_ns);
  char *text = NULL;
  OT_EXPECT_OK(optic_profile_summary_to_text(&s, &text));
  OT_CHECK(text && strstr(text, "\n    add ") && strstr(text, "\n  fusion ") && strstr(text, "\nwhile ") &&
               strstr(text, "indented"),
           "%s", text ? text : "");
  optic_string_free(text);
  optic_profile_summary_free(&s);
  OT_EXPECT_OK(optic_profiler_summary(p, (const optic_program_t *)other, &s));
  OT_CHECK(s.op_count == 1 && s.ops[0].depth == 0 && s.measured_ns == 10.0);
  optic_profile_summary_free(&s);
  optic_profiler_destroy(p);
}

/* Fills a profiler with every kind of event, from 2 threads. */
static optic_profiler_t *sample_profile(void) {
  optic_profiler_t *p = make(256, true);
  optic_pass_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.size = sizeof ps;
  ps.pass[OPTIC_PASS_DCE].runs = 1;
  ps.pass[OPTIC_PASS_DCE].seconds = 0.0005;
  OT_EXPECT_OK(optic_profiler_record_compile(p, &ps, 0.001, NULL, 0));
  uint64_t run = exec_profiler_next_run(p);
  uint64_t t0 = optic_now_ns();
  g_prof = p;
  g_run = run;
  region_fork();
#pragma omp parallel num_threads(2)
  {
    region_enter();
    int t = omp_get_thread_num();
    for (int i = 0; i < 5; i++) {
      uint64_t s = optic_now_ns();
      exec_profiler_record_span(g_prof, i % 2 ? OPTIC_PROFILE_FUSION : OPTIC_PROFILE_OP,
                                i % 2 ? "fusion.\"q\"" : "dot.2", i % 2 ? "loop" : "dot", NULL, 0, t, i, g_run, s,
                                s + 1500 + (uint64_t)i, 2e6, 4096, 1234.5);
    }
    region_end();
  }
  region_joined();
  exec_profiler_record_span(p, OPTIC_PROFILE_RESERVE, "reserve", "", NULL, 0, 0, -1, run, t0, t0 + 700, 0, 8192, 0);
  exec_profiler_record_span(p, OPTIC_PROFILE_RUN, "run", "main", NULL, 0, 0, -1, run, t0, optic_now_ns() + 10000, 0, 0,
                            0);
  return p;
}

static void trace_json_structure(void) {
  optic_profiler_t *p = sample_profile();
  char *json = NULL;
  size_t len = 0;
  OT_EXPECT_OK(optic_profiler_trace_json(p, &json, &len));
  OT_CHECK(json && strlen(json) == len);
  OT_CHECK(json && strncmp(json, "{\"traceEvents\":[{", 17) == 0, "%.40s", json ? json : "");
  size_t n;
  optic_profiler_events(p, &n);
  size_t xs = 0;
  for (const char *c = json; c && (c = strstr(c, "\"ph\":\"X\"")) != NULL; c++) xs++;
  OT_CHECK(xs == n, "%zu X events for %zu events", xs, n);
  size_t ms = 0;
  for (const char *c = json; c && (c = strstr(c, "\"ph\":\"M\"")) != NULL; c++) ms++;
  OT_CHECK(ms == 3, "%zu metadata events: one process and two threads expected", ms);
  OT_CHECK(json && strstr(json, "\"args\":{\"name\":\"thread 1 of device 0\"}") &&
               strstr(json, "\"args\":{\"name\":\"optic host (device 0)\"}"),
           "track names");
  OT_CHECK(json && strstr(json, "fusion.\\\"q\\\"") != NULL, "names are escaped");
  OT_CHECK(json && strstr(json, "\"displayTimeUnit\":\"ns\"") && strstr(json, "\"dropped\":0"));
  optic_string_free(json);
  /* An empty profiler still writes a valid document. */
  optic_profiler_clear(p);
  OT_EXPECT_OK(optic_profiler_trace_json(p, &json, NULL));
  OT_CHECK(json && strncmp(json, "{\"traceEvents\":[],", 18) == 0, "%s", json ? json : "");
  optic_string_free(json);
  OT_EXPECT_STATUS(optic_profiler_write_trace(p, "/nonexistent-dir/x.json"), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "/nonexistent-dir/x.json") != NULL);
  optic_profiler_destroy(p);
}

/* Writes the sample trace to $OPTIC_TRACE_OUT for tests/exec/check_trace.py
 * (ctest exec_profile_trace_json); passes without doing anything when unset. */
static void write_trace_file(void) {
  const char *path = getenv("OPTIC_TRACE_OUT");
  if (path == NULL) return;
  optic_profiler_t *p = sample_profile();
  OT_EXPECT_OK(optic_profiler_write_trace(p, path));
  optic_profiler_destroy(p);
}

static const ot_case cases[] = {
    {"events_from_several_threads", events_from_several_threads},
    {"disabled_records_nothing", disabled_records_nothing},
    {"overflow_is_counted", overflow_is_counted},
    {"bad_arguments", bad_arguments},
    {"compile_events", compile_events},
    {"summary_merges_and_sums", summary_merges_and_sums},
    {"summary_nests", summary_nests},
    {"trace_json_structure", trace_json_structure},
    {"write_trace_file", write_trace_file},
};

OT_MAIN(cases)
