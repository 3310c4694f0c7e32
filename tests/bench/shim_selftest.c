/* Benchmarks written in C against the Google Benchmark shim, run by
 * check_shim.py: each exercises part of bench/shim/gbench.h and leaves
 * figures whose exact values the checker knows (never speeds). */
#include <stdio.h>
#include <string.h>

#include "bench/shim/gbench.h"

static volatile unsigned sink;

static unsigned work(unsigned n) {
  unsigned h = 2166136261u;
  for (unsigned i = 0; i < n; i++) h = (h ^ i) * 16777619u;
  return h;
}

/* Arguments, pause/resume, items/bytes, the counter kinds and a label. */
static void bm_counters(optic_bench_state *st, void *user) {
  const int *tag = user;
  if (*tag != 7 || optic_bench_range(st, 0) != 64 || optic_bench_range(st, 1) != 2) {
    optic_bench_skip_with_error(st, "arguments or user pointer not passed through");
    return;
  }
  unsigned n = (unsigned)optic_bench_range(st, 0);
  while (optic_bench_keep_running(st)) {
    sink = work(n);
    optic_bench_pause(st);
    sink = work(1);
    optic_bench_resume(st);
  }
  int64_t it = optic_bench_iterations(st);
  optic_bench_set_items_processed(st, it * n);
  optic_bench_set_bytes_processed(st, it * n * 4);
  optic_bench_counter(st, "plain", 42.0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "per_iteration", 3.0 * (double)it, OPTIC_BENCH_COUNTER_PER_ITERATION);
  optic_bench_counter(st, "rate", 1000.0, OPTIC_BENCH_COUNTER_RATE);
  optic_bench_counter(st, "rate_per_iteration", (double)n, OPTIC_BENCH_COUNTER_RATE_PER_ITERATION);
  optic_bench_counter(st, "kib", 2048.0, OPTIC_BENCH_COUNTER_BASE_1024);
  optic_bench_set_label(st, "shim label");
}

/* Two Google Benchmark threads: index/count and per-thread counters. */
static void bm_threads(optic_bench_state *st, void *user) {
  (void)user;
  int t = optic_bench_thread_index(st);
  if (optic_bench_thread_count(st) != 2 || t < 0 || t > 1) {
    optic_bench_skip_with_error(st, "thread index or count wrong");
    return;
  }
  while (optic_bench_keep_running(st)) sink = work(32);
  optic_bench_counter(st, "thread_sum", 1.0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "thread_avg", (double)(t + 1), OPTIC_BENCH_COUNTER_AVG_THREADS);
}

/* Range, dense range, real time, min time, unit and do_not_optimize. */
static void bm_sized(optic_bench_state *st, void *user) {
  (void)user;
  unsigned n = (unsigned)optic_bench_range(st, 0);
  unsigned r = 0;
  while (optic_bench_keep_running(st)) r += work(n);
  optic_bench_do_not_optimize(&r);
  optic_bench_counter(st, "n", (double)n, OPTIC_BENCH_COUNTER_PLAIN);
}

/* Manual time: every iteration reports exactly 250 us, whatever it took. */
static void bm_manual(optic_bench_state *st, void *user) {
  (void)user;
  while (optic_bench_keep_running(st)) {
    sink = work(16);
    optic_bench_set_iteration_time(st, 250e-6);
  }
}

static void bm_error(optic_bench_state *st, void *user) {
  (void)user;
  optic_bench_skip_with_error(st, "deliberate failure");
}

int main(int argc, char **argv) {
  static int tag = 7;
  optic_bench_add_context("shim_test_key", "shim test value");

  optic_bench *b = optic_bench_register("shim/counters", bm_counters, &tag);
  OPTIC_BENCH_ARGS(b, 64, 2);
  OPTIC_BENCH_ARG_NAMES(b, "n", "k");

  b = optic_bench_register("shim/threads", bm_threads, NULL);
  optic_bench_threads(b, 2);

  b = optic_bench_register("shim/range", bm_sized, NULL);
  optic_bench_range_of(b, 8, 64);
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);

  b = optic_bench_register("shim/dense", bm_sized, NULL);
  optic_bench_dense_range(b, 1, 3, 1);
  optic_bench_min_time(b, 0.002);
  optic_bench_repetitions(b, 2);

  b = optic_bench_register("shim/manual", bm_manual, NULL);
  optic_bench_use_manual_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);

  optic_bench_register("shim/error", bm_error, NULL);
  return optic_bench_main(argc, argv);
}
