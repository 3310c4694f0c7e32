/* Measured memory beside the compiler's peak_bytes: the execution context's
 * own high-water mark (its pool's peak: arenas, scratch, block registers) and
 * the growth of the process's peak RSS across the case, as a cross-check.
 * Benchmark-only code. */
#ifndef OPTIC_BENCH_MEMORY_H
#define OPTIC_BENCH_MEMORY_H

#include <stdatomic.h>

#include <optic/compile.h>
#include <optic/exec.h>

#include "bench/shim/gbench.h"

/* The process's peak RSS in bytes so far (getrusage ru_maxrss), 0 if unknown. */
double bench_maxrss_bytes(void);

/* Bytes of n tensors' data (dtype size x elements). */
double bench_tensor_bytes(const optic_tensor *t, int32_t n);

/* Reports the measured memory: peak_bytes (ctx's pool peak: arenas,
 * scratch, block registers, each page-rounded), mem_peak_bytes (that peak +
 * io_bytes, the caller's bound input and output tensors, + the program's
 * constants) and maxrss_delta_bytes (peak RSS now minus rss0, from
 * bench_maxrss_bytes before the case allocated anything; 0 when the case
 * stayed under an earlier peak); and the estimate beside it, planned before
 * any run by optic_program_run_memory for ctx's threads and split rule
 * split_min_elements (the context's option): est_peak_bytes (what the run
 * reserves + io + constants), est_buffer_bytes (the compiler's peak_bytes:
 * buffer plans and constants), est_arena_bytes, est_scratch_bytes and
 * est_regs_bytes (optic_run_memory's parts). p NULL:
 * neither constants nor an estimate. */
void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, const optic_program_t *p, double io_bytes,
                         double rss0, int64_t split_min_elements);

/* The same over n contexts, each running p on its own tensors (io_bytes:
 * all of them): measured peak_bytes sums the pools' peaks; est_peak_bytes
 * is n x (reserved + io) + constants. */
void bench_report_memory_n(optic_bench_state *st, const optic_exec_ctx_t *const *ctx, int32_t n,
                           const optic_program_t *p, double io_bytes, double rss0, int64_t split_min_elements);

/* An allocator that counts: it hands every call to optic_default_allocator()
 * and keeps the bytes live now and their high-water mark (atomics: any
 * thread may call it). Set up with bench_counting_allocator_init. */
typedef struct bench_counting_allocator {
  optic_allocator allocator; /* pass &this->allocator to the code under test */
  _Atomic size_t live, peak;
} bench_counting_allocator;
void bench_counting_allocator_init(bench_counting_allocator *c);

/* Per-op truth from profiled runs already recorded in prof: counters
 * op_ns:<op> and op_est_ns:<op> (measured and estimated ns per run) for the
 * program's `top` slowest instructions (optic report's per-op plot). */
void bench_report_op_times(optic_bench_state *st, const optic_profiler_t *prof, const optic_program_t *p, size_t top);

#endif
