/* The one harness every elementwise benchmark runs through, optic's kernels
 * and the STREAM-style peers alike, so both are measured the same way: arrays
 * from bench_array, n split across OpenMP threads by bench_split_aligned
 * inside ONE parallel region per iteration, each thread calling the function
 * on its sub-range (bench_repeats(n) times in a row: in-cache sizes repeat the
 * call so the region's own cost does not swamp it). Benchmark-only code. */
#ifndef OPTIC_BENCH_ELEMENTWISE_H
#define OPTIC_BENCH_ELEMENTWISE_H

#include <stddef.h>

#include <optic/core.h>

#include "bench/bench_util.h"

/* Calls `fn` (stored as void (*)(void); the caller knows its real type) on n
 * elements: arrays[0 .. inputs-1] are the inputs, then the outputs, each
 * pointing at this thread's first element in the array's own type. s is the
 * scalar operand for kernels that take one. */
typedef void (*bench_elementwise_call)(void (*fn)(void), size_t n, void *const *arrays, float s);

enum { BENCH_ELEMENTWISE_MAX_ARRAYS = 8 };

typedef struct bench_elementwise {
  const char *function; /* name as in the kernel list, or the peer's name */
  optic_isa isa;        /* registered only if this CPU supports it */
  void (*fn)(void);
  bench_elementwise_call call;
  int inputs;  /* read-only arrays, from input slots */
  int outputs; /* written (or read-modify-written) arrays, from output slots */
  /* Real bytes moved per element: what the function must read plus what it
   * writes (STREAM's counting; write-allocate traffic is not counted). */
  double bytes_per_element;
  /* Element type of each array, inputs then outputs (zero: all f32). */
  bench_dtype types[BENCH_ELEMENTWISE_MAX_ARRAYS];
  /* Floating-point operations per element for a "GFLOP/s" counter (0: none);
   * where the figure comes from is documented next to the table. */
  double flops_per_element;
  /* Transcendental evaluations per element as XLA counts them (exp, log,
   * tanh, logistic, sqrt, rsqrt, ...: 1), for the estimate (estimate.h). */
  double transcendentals_per_element;
  /* Bytes per element written with normal stores to arrays the function
   * does not read (plain C peers; optic's kernels stream such outputs at
   * DRAM sizes): out of cache each written line is read first, which the
   * estimate's time counts (bench_report_allocating_estimate). */
  double allocated_per_element;
} bench_elementwise;

/* Element counts every elementwise benchmark runs at: one in cache (32 KiB
 * per f32 array, L2-resident) and one in DRAM (64 MiB per f32 array). */
#define BENCH_N_IN_CACHE ((size_t)8192)
#define BENCH_N_DRAM ((size_t)16 << 20)

/* Registers "<prefix>/<function>/n:N/threads:T/real_time" for both sizes and
 * 1 and 2 threads. e must stay valid for the whole run (static tables). */
void bench_register_elementwise(const char *prefix, const bench_elementwise *e);

#endif
