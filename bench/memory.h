/* Measured memory beside the compiler's peak_bytes: the execution context's
 * own high-water mark (its pool's peak: arenas, scratch, block registers) and
 * the growth of the process's peak RSS across the case, as a cross-check.
 * Benchmark-only code. */
#ifndef OPTIC_BENCH_MEMORY_H
#define OPTIC_BENCH_MEMORY_H

#include <optic/compile.h>
#include <optic/exec.h>

#include "bench/shim/gbench.h"

/* The process's peak RSS in bytes so far (getrusage ru_maxrss), 0 if unknown. */
double bench_maxrss_bytes(void);

/* Bytes of n tensors' data (dtype size x elements). */
double bench_tensor_bytes(const optic_tensor *t, int32_t n);

/* Reports peak_bytes (ctx's pool peak: arenas, scratch), mem_peak_bytes
 * (that peak + io_bytes, the caller's bound input and output tensors, + the
 * program's constants: what the compiler's peak_bytes counts) and
 * maxrss_delta_bytes (peak RSS now minus rss0, from bench_maxrss_bytes
 * before the case allocated anything; 0 when the case stayed under an
 * earlier peak). p NULL: no constants. */
void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, const optic_program_t *p, double io_bytes,
                         double rss0);

/* Per-op truth from profiled runs already recorded in prof: counters
 * op_ns:<op> and op_est_ns:<op> (measured and estimated ns per run) for the
 * program's `top` slowest instructions (optic report's per-op plot). */
void bench_report_op_times(optic_bench_state *st, const optic_profiler_t *prof, const optic_program_t *p, size_t top);

#endif
