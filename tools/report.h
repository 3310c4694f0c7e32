/* Tools-internal: `optic report`'s model of one benchmark run read against
 * the machine model and the named peer ratios (bench/ratios.json), and the
 * three renderings of it (console table, report.json, report.html).
 * report_analyze.c builds it from Google Benchmark's JSON; nothing here runs
 * benchmarks. A report is a plain value owned by its caller (report_free);
 * not thread-safe, one report per thread. */
#ifndef OPTIC_TOOLS_REPORT_H
#define OPTIC_TOOLS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <optic/compile.h>
#include <optic/core.h>

#include "core/json.h"
#include "core/json_parse.h"

/* Which bound a case is measured against. */
typedef enum report_bound {
  REPORT_BOUND_NONE,  /* no flop or byte figure */
  REPORT_BOUND_FLOPS, /* FMA peak */
  REPORT_BOUND_TRANSCENDENTALS,
  REPORT_BOUND_CACHE, /* cache bandwidth (working set <= cache_bytes) */
  REPORT_BOUND_DRAM   /* DRAM bandwidth */
} report_bound;

/* A per-op time figure of a case: counters "op_ns:<op>" (measured) and
 * "op_est_ns:<op>" (estimated), per iteration. */
typedef struct report_op_time {
  char *op;
  double measured_ns, estimated_ns; /* NaN when absent */
} report_op_time;

/* One benchmark (one run_name): figures are the median aggregate when
 * repetitions ran, else the median of its iterations (ratios.py's rule).
 * Every double is NaN when the run does not have it. */
typedef struct report_case {
  char *name;
  char *error;    /* non-NULL: every run errored (the message) */
  double time_ns; /* real_time per iteration, ns */
  double est_time_ns, est_flops, est_bytes, est_peak_bytes, est_transcendentals;
  double peak_bytes, maxrss_delta_bytes; /* measured memory: pool peak, ru_maxrss delta */
  double mem_peak_bytes;                 /* measured memory: a suite's own peak counter */
  double gflops, gbs;                    /* the GFLOP/s and GB/s counters */
  double repeats;                        /* calls per iteration (the in-cache kernels' repeats counter), else 1 */
  double threads;                        /* the omp_threads counter (threads the case ran on), NaN if absent */
  double ratio;                          /* time_ns / est_time_ns */
  double bound_pct;                      /* share of the machine bound reached, % */
  report_bound bound;
  double intensity;      /* flops per byte (roofline x), NaN if unknown */
  double achieved_flops; /* FLOP/s (roofline y) */
  int peer_ratio;        /* index into report.ratios of the first ratio naming this case as ours, -1 */
  report_op_time *ops;
  size_t n_ops;
} report_case;

typedef enum report_status { REPORT_PASS, REPORT_FAIL, REPORT_INFO, REPORT_NA, REPORT_MISSING } report_status;

/* One named ratio of bench/ratios.json, evaluated as bench/ratios.py does
 * (wall clock): statuses PASS/FAIL against the bar, INFO (no bar), N/A
 * (applies_if does not hold; ratio still computed), MISSING. */
typedef struct report_ratio {
  char *name, *description, *ours, *peer, *metric, *note, *taken;
  double ours_value, peer_value, ratio; /* NaN when missing */
  bool has_min, has_max;
  double bar_min, bar_max;
  report_status status;
  bool ran_ours, ran_peer; /* the run has entries of that benchmark (errored or not) */
} report_ratio;

/* Fidelity of the estimates over a set of cases. */
typedef struct report_fidelity {
  size_t estimated;      /* cases with a measured time and an estimate */
  double median_abs_log; /* median |ln(measured / estimated)|, NaN if none */
  double within_2x;      /* share of estimated cases within 2x, NaN if none */
} report_fidelity;

/* Cases of the model suite: real HLO modules (bench/model_hlo.c). */
#define REPORT_REAL_MODULE_PREFIX "model/hlo/"

/* How close the real modules run to their roofline bounds. A case's share is
 * its bound time over its measured time (bound_pct / 100: the compiler's
 * flops, transcendentals and bytes at the machine model's peaks for the
 * case's threads, whichever takes longest). The bar is the ratio spec's
 * "summary_bars": {"real_module_bound_share": {"min": X}}, on the median. */
typedef struct report_bound_share {
  size_t cases;            /* real-module cases with a measured time and a bound */
  double median, min, max; /* of the shares, NaN if no case */
  bool has_bar;
  double bar_min;
  report_status status; /* PASS/FAIL on the median, INFO without a bar, MISSING without a case */
} report_bound_share;

typedef struct report_summary {
  size_t estimated;                         /* cases with a measured time and an estimate */
  double median_abs_log;                    /* median |ln(measured / estimated)|, NaN if none */
  double within_2x;                         /* share of estimated cases within 2x, NaN if none */
  report_fidelity benchmarks, real_modules; /* the same split: real modules vs every other case */
  report_bound_share real_module_bound;     /* the real modules against their roofline bounds */
  size_t unestimated;                       /* non-peer cases measured without an estimate */
  const char *unestimated_first;            /* the first of them in the report's order, NULL if none */
  size_t pass, fail, info, na, missing;
  size_t not_run; /* with --filter: bars whose benchmarks the run did not select (not listed, not MISSING) */
} report_summary;

typedef struct report {
  optic_jv *run; /* the Google Benchmark document (owned) */
  const optic_jv *context;
  optic_machine machine;
  char machine_file[1024];
  report_case *cases;
  size_t n_cases;
  report_ratio *ratios;
  size_t n_ratios;
  report_summary summary;
  /* How the run was made (for the JSON and HTML). */
  char mode[16], filter[32768], bench[1024],
      ratios_file[1024]; /* filter: the default set names every bar's benchmarks */
  int repetitions;
  double seconds;
  bool cpu_clock; /* set before report_analyze: ratios on the critical-path CPU-time counters */
  bool filtered;  /* set before report_analyze: --filter chose the run, so a bar with a side the run did
                     not select is left out (summary.not_run) instead of MISSING */
  bool wide;      /* report_print: every column, names unbroken (else the table fits 100 columns) */
} report;

/* Evaluates run (takes ownership) against machine and the ratio spec (not
 * owned; may be NULL: no ratios). With r->cpu_clock the ratios read the
 * critical-path CPU-time counters instead (ratios.py --clock cpu: GB/s ->
 * cpu_GB/s, GFLOP/s -> cpu_GFLOP/s, real_time -> cpu_path_ns; other metrics
 * have no CPU counterpart and are MISSING). CORRUPT naming what is malformed. */
optic_status report_analyze(report *r, optic_jv *run, const optic_jv *spec, const optic_machine *machine);
void report_free(report *r);

/* A --benchmark_filter alternation of every benchmark the spec names, with
 * {key} placeholders expanded from ctx (key -> value pairs, n of them).
 * Newly allocated (free()). */
optic_status report_spec_filter(const optic_jv *spec, const char *const *keys, const char *const *values, size_t n,
                                char **out);

/* ---- running (cmd_report.c, report_mpi.c) */

/* Progress of a run (report_progress.c). Cases finish when Google Benchmark
 * prints their first console line (it prints a case once all its repetitions
 * are done); optic_bench's start events ($OPTIC_BENCH_PROGRESS_FD, bench/shim)
 * say which case runs now and count repetitions started, for the ETA. On a
 * terminal one line on stderr is rewritten in place ("report: 12/100 cases
 * done, 1:05 elapsed, ETA 0:40, now NAME (rep 3/5)"), fitted to its width; otherwise
 * one line per finished case ("report: case 12/100 NAME done (...)"). */
typedef struct report_progress {
  char **names; /* the listed cases, in order (not owned) */
  size_t n_names;
  int reps;                      /* repetitions per case */
  bool *done;                    /* per case */
  int *started;                  /* per case: repetitions started (start events) */
  size_t n_done, units, current; /* current: index of the running case, n_names if unknown */
  bool events;                   /* start events arrived */
  uint64_t t0, last_draw;
  bool tty;
  int width; /* terminal columns */
} report_progress;

/* names: the listed cases (borrowed until report_progress_free). */
optic_status report_progress_init(report_progress *p, char **names, size_t n, int reps, bool tty);
void report_progress_console_line(report_progress *p, const char *line); /* a line of optic_bench's stdout */
void report_progress_event_line(report_progress *p, const char *line);   /* a line of the start events */
void report_progress_tick(report_progress *p);                           /* redraws the terminal line */
void report_progress_free(report_progress *p);                           /* ends the terminal line */

/* Runs argv (argv[0] a path) in a process group of its own, stdin from
 * /dev/null, stdout to a pipe read for progress and stderr to log_path; kills
 * it after timeout_s (0: never). On SIGINT/SIGTERM to the report it forwards
 * the signal and stops (report_stop_signal() then says which). Either way
 * every process the run started has ended and been reaped when it returns.
 * Start events go to prog through a second pipe ($OPTIC_BENCH_PROGRESS_FD).
 * Returns the exit status, or -1. */
int report_run_child(char **argv, const char *log_path, double timeout_s, report_progress *prog, bool *timed_out);

/* ---- the run's processes (report_proc.c) */

/* SIGINT or SIGTERM received while a run went on, else 0: the report then
 * exits with 128 + it. */
int report_stop_signal(void);
/* Around a run: makes this process a child subreaper (Linux) and catches
 * SIGINT/SIGTERM (unless ignored at start); finish restores them. */
void report_proc_begin(void);
void report_proc_finish(void);
/* In the forked child of report (its pid) before exec: own process group,
 * default SIGINT/SIGTERM, SIGTERM when the report dies (Linux), stdin from
 * /dev/null. */
void report_proc_child(pid_t report_pid);
/* Ends the run led by leader: sig 0 when it ended by itself (waits for the
 * leader, then SIGKILLs anything it left), else sends sig to its group,
 * waits up to 10 s, then SIGKILLs the group and every descendant. Drains fd
 * meanwhile. Reaps everything; the leader's exit status, or -1. */
int report_proc_end(pid_t leader, int sig, int fd);

/* The pod MPI benchmarks (bench/pod_mpi.c: optic_bench_pod_mpi next to
 * optic_bench, run by $OPTIC_MPIRUN, else the configured mpiexec, else mpirun
 * on PATH, -np 2 --oversubscribe, --allow-run-as-root as root, with
 * OMPI_MCA_btl=self,vader unless set): those filter selects (NULL: all).
 * Writes out_json; *ran is false (and *why says why) when MPI was not built
 * or no launcher is found: not an error. Errors: IO when the run fails,
 * TIMEOUT past timeout_s. */
optic_status report_run_pod_mpi(const char *bench, const char *filter, int reps, double timeout_s, const char *out_json,
                                const char *log_path, bool *ran, char *why, size_t why_size);
/* True when the --benchmark_filter regex (POSIX extended) selects one of the
 * pod MPI benchmarks. */
bool report_filter_selects_pod_mpi(const char *filter);
/* Appends extra's "benchmarks" entries to run's (moved: extra keeps none;
 * their family_index numbered after run's) and its context keys run's context
 * lacks. CORRUPT when either is malformed or an entry of extra lacks a field
 * Google Benchmark's readers need (name, run_name, run_type, repetitions,
 * iterations, real_time, cpu_time, time_unit; aggregate_name on aggregates). */
optic_status report_merge_run(optic_jv *run, optic_jv *extra);

/* ---- formatting (report_format.c), shared by the table and the HTML */

/* "1.23 ms", "850 ns", "-" for NaN. */
void report_fmt_time(char *buf, size_t size, double ns);
/* "5.72 MiB", "-" for NaN. */
void report_fmt_bytes(char *buf, size_t size, double bytes);
/* A figure of metric with its unit: "12.3 GB/s", "1.23 ms", "3.61 us/instruction", "110 k/s". */
void report_fmt_metric(char *buf, size_t size, const char *metric, double v);
/* True when a larger ours/peer is better for optic: the bar has only a
 * minimum; only a maximum: false; no bar or both: a rate metric (not a time). */
bool report_ratio_higher_better(const report_ratio *q);
/* ours/peer oriented so that above 1 is better for optic (peer/ours when a
 * smaller ratio is better); NaN when the ratio is. */
double report_ratio_oriented(const report_ratio *q);
/* The bar in the oriented terms: "-" (none), ">= 1.11", "<= 2", ">= 0.9 <= 1.1". */
void report_fmt_oriented_bar(char *buf, size_t size, const report_ratio *q);
/* Whether the report lists the bar: always, except with --filter a bar one of
 * whose benchmarks the run did not select. */
bool report_ratio_listed(const report *r, const report_ratio *q);
/* The case's measured peak memory (mem_peak_bytes, else peak_bytes, else
 * maxrss_delta_bytes), NaN when none; *any across the report. */
double report_case_measured_mem(const report_case *c);
bool report_any_measured_mem(const report *r);

const char *report_status_name(report_status s);
const char *report_bound_name(report_bound b);

/* The console table and summary line (report_table.c): 100 columns unless r->wide. */
void report_print(const report *r, FILE *out);
/* Google Benchmark's JSON with context.optic added (machine, ISA, OpenBLAS
 * core, versions, how the run was made, cases, ratios, summary). */
optic_status report_write_json(const report *r, const char *path);
/* For --input of an earlier report.json: the facts of the run that made it
 * (context.optic.run: mode, filter, repetitions, filtered), when present. */
void report_take_run_facts(report *r, const optic_jv *run);
/* Self-contained HTML with inline SVG plots. */
optic_status report_write_html(const report *r, const char *path);

#endif
