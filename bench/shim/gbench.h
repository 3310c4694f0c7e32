/* C API over Google Benchmark (implemented in gbench.cc, the only C++ in optic)
 * so optic's benchmarks are written in C and still produce Google Benchmark's
 * own console output and JSON. It never changes how Google Benchmark measures.
 *
 * Use:
 *   static void bm_copy(optic_bench_state *st, void *user) {
 *     size_t n = (size_t)optic_bench_range(st, 0);
 *     ...setup, untimed...
 *     while (optic_bench_keep_running(st)) { ...timed work... }
 *     optic_bench_counter(st, "GB/s", 8.0 * n * 1e-9, OPTIC_BENCH_COUNTER_RATE_PER_ITERATION);
 *   }
 *   optic_bench *b = optic_bench_register("copy", bm_copy, NULL);
 *   OPTIC_BENCH_ARGS(b, 1024, 1);
 *   OPTIC_BENCH_ARG_NAMES(b, "n", "threads");
 *   optic_bench_use_real_time(b);
 *   return optic_bench_main(argc, argv);
 *
 * Thread safety: registration and optic_bench_add_context run on one thread
 * before optic_bench_main. A state belongs to the benchmark thread that
 * received it (Google Benchmark runs each thread of a Threads(n) benchmark with
 * its own state). */
#ifndef OPTIC_BENCH_SHIM_GBENCH_H
#define OPTIC_BENCH_SHIM_GBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* No C++ exception may unwind into C frames: the implementation is noexcept
 * (an allocation failure inside Google Benchmark ends the program). */
#define OPTIC_BENCH_NOEXCEPT noexcept
extern "C" {
#else
#define OPTIC_BENCH_NOEXCEPT
#endif

/* A registered benchmark (Google Benchmark's Benchmark object; owned by it,
 * valid until the process ends). */
typedef struct optic_bench optic_bench;
/* One benchmark thread's run state (Google Benchmark's State). */
typedef struct optic_bench_state optic_bench_state;

/* The benchmark body. user is the pointer given at registration. */
typedef void (*optic_bench_fn)(optic_bench_state *state, void *user);

/* ------------------------------------------------------------ registration */

/* Registers fn under name (copied). Returns the benchmark for the setters
 * below; never NULL (Google Benchmark owns it). */
optic_bench *optic_bench_register(const char *name, optic_bench_fn fn, void *user) OPTIC_BENCH_NOEXCEPT;

/* One run with these argument values (Google Benchmark's Args); call again for
 * more runs. The values are read in the body with optic_bench_range(i). */
void optic_bench_args(optic_bench *b, const int64_t *args, size_t count) OPTIC_BENCH_NOEXCEPT;
#define OPTIC_BENCH_ARGS(b, ...) \
  optic_bench_args((b), (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* Runs for powers of the range multiplier (default 8) from lo to hi, both
 * included, as the single argument (Google Benchmark's Range). */
void optic_bench_range_of(optic_bench *b, int64_t lo, int64_t hi) OPTIC_BENCH_NOEXCEPT;
/* lo, lo+step, ..., hi as the single argument (DenseRange). */
void optic_bench_dense_range(optic_bench *b, int64_t lo, int64_t hi, int step) OPTIC_BENCH_NOEXCEPT;
/* Names shown in the benchmark name, "name/n:1024/threads:2" (ArgNames). */
void optic_bench_arg_names(optic_bench *b, const char *const *names, size_t count) OPTIC_BENCH_NOEXCEPT;
#define OPTIC_BENCH_ARG_NAMES(b, ...)                            \
  optic_bench_arg_names((b), (const char *const[]){__VA_ARGS__}, \
                        sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
/* Runs the body in `threads` Google Benchmark threads at once, each with its
 * own state ("/threads:N" in the name). Benchmarks that split work with OpenMP
 * inside one body use one Google Benchmark thread and optic_bench_use_real_time. */
void optic_bench_threads(optic_bench *b, int threads) OPTIC_BENCH_NOEXCEPT;
/* Wall-clock time decides the iteration count and the rates ("/real_time").
 * Needed whenever the body runs threads of its own (OpenMP, OpenBLAS, I/O). */
void optic_bench_use_real_time(optic_bench *b) OPTIC_BENCH_NOEXCEPT;
/* The body times each iteration itself (optic_bench_set_iteration_time):
 * for work measured elsewhere, e.g. by a peer process ("/manual_time"). */
void optic_bench_use_manual_time(optic_bench *b) OPTIC_BENCH_NOEXCEPT;
/* Minimum seconds per run (overrides --benchmark_min_time for this benchmark). */
void optic_bench_min_time(optic_bench *b, double seconds) OPTIC_BENCH_NOEXCEPT;
/* Repetitions of this benchmark (overrides --benchmark_repetitions). */
void optic_bench_repetitions(optic_bench *b, int n) OPTIC_BENCH_NOEXCEPT;

typedef enum optic_bench_unit { OPTIC_BENCH_NS = 0, OPTIC_BENCH_US, OPTIC_BENCH_MS, OPTIC_BENCH_S } optic_bench_unit;
/* Time unit of the reported times. */
void optic_bench_set_unit(optic_bench *b, optic_bench_unit unit) OPTIC_BENCH_NOEXCEPT;

/* ------------------------------------------------------------- in the body */

/* True while another timed iteration should run; the first call starts the
 * timer, the last one stops it. Every body must loop on it until false. */
bool optic_bench_keep_running(optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;
/* Stop / restart the timer inside the loop (costly: use only around work that
 * is much longer than a microsecond). */
void optic_bench_pause(optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;
void optic_bench_resume(optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;

/* With optic_bench_use_manual_time: the time of the iteration that just ran. */
void optic_bench_set_iteration_time(optic_bench_state *st, double seconds) OPTIC_BENCH_NOEXCEPT;

/* Argument i of this run (0-based; i must be < the number of arguments). */
int64_t optic_bench_range(const optic_bench_state *st, int i) OPTIC_BENCH_NOEXCEPT;
/* This thread's index (0-based) among optic_bench_thread_count() threads. */
int optic_bench_thread_index(const optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;
int optic_bench_thread_count(const optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;
/* Iterations so far (after the loop: the total this run made). */
int64_t optic_bench_iterations(const optic_bench_state *st) OPTIC_BENCH_NOEXCEPT;

/* Totals for the whole run, reported as per-second rates
 * ("items_per_second", "bytes_per_second"); call after the loop. */
void optic_bench_set_items_processed(optic_bench_state *st, int64_t items) OPTIC_BENCH_NOEXCEPT;
void optic_bench_set_bytes_processed(optic_bench_state *st, int64_t bytes) OPTIC_BENCH_NOEXCEPT;

/* How a user counter's value is turned into the reported figure (bits of
 * Google Benchmark's Counter::Flags). Without flags the value is reported as
 * is, summed over the benchmark's threads. */
enum {
  OPTIC_BENCH_COUNTER_PLAIN = 0,
  OPTIC_BENCH_COUNTER_RATE = 1 << 0,                /* divided by the run's seconds */
  OPTIC_BENCH_COUNTER_AVG_THREADS = 1 << 1,         /* averaged over threads, not summed */
  OPTIC_BENCH_COUNTER_ITERATION_INVARIANT = 1 << 2, /* value is per iteration: times iterations */
  OPTIC_BENCH_COUNTER_PER_ITERATION = 1 << 3,       /* divided by the iteration count */
  OPTIC_BENCH_COUNTER_BASE_1024 = 1 << 4,           /* console shows Ki/Mi/Gi, not k/M/G */
  /* The common case: value is an amount per iteration (bytes, flops), the
   * report is that amount per second. */
  OPTIC_BENCH_COUNTER_RATE_PER_ITERATION = (1 << 0) | (1 << 2)
};
/* Sets user counter name (copied) to value with OPTIC_BENCH_COUNTER_* flags;
 * it appears under that name in the console and the JSON. Call after the loop. */
void optic_bench_counter(optic_bench_state *st, const char *name, double value, unsigned flags) OPTIC_BENCH_NOEXCEPT;
/* Free text shown after the figures ("label" in the JSON). */
void optic_bench_set_label(optic_bench_state *st, const char *label) OPTIC_BENCH_NOEXCEPT;
/* Marks the run as failed with msg ("error_occurred", "error_message" in the
 * JSON). The body must then leave without running the timed loop again; if
 * the loop already started it ends at the next optic_bench_keep_running. */
void optic_bench_skip_with_error(optic_bench_state *st, const char *msg) OPTIC_BENCH_NOEXCEPT;

/* Makes the compiler assume p's memory is read and written here, so work that
 * produces it cannot be optimized away (an opaque call). */
void optic_bench_do_not_optimize(const void *p) OPTIC_BENCH_NOEXCEPT;

/* ------------------------------------------------------------------ running */

/* Adds key: value (both copied) to the "context" object of the JSON and the
 * console header: machine facts the report is read against. A key given twice
 * keeps its first value. Call before optic_bench_main. */
void optic_bench_add_context(const char *key, const char *value) OPTIC_BENCH_NOEXCEPT;

/* Initializes Google Benchmark with argv (every --benchmark_* flag works,
 * including --benchmark_out=FILE --benchmark_out_format=json), runs the
 * benchmarks the filter selects and shuts down. Returns 0 on success; 1 for
 * an unrecognized argument (listed on stdout), 2 when the filter matched no
 * benchmark, 3 when any run called optic_bench_skip_with_error. */
int optic_bench_main(int argc, char **argv) OPTIC_BENCH_NOEXCEPT;

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_BENCH_SHIM_GBENCH_H */
