/* Measured memory beside the compiler's peak_bytes: the execution context's
 * own high-water mark (its pool's peak: arenas, scratch, block registers) and
 * the growth of the process's peak RSS across the case, as a cross-check.
 * Benchmark-only code. */
#ifndef OPTIC_BENCH_MEMORY_H
#define OPTIC_BENCH_MEMORY_H

#include <optic/exec.h>

#include "bench/shim/gbench.h"

/* The process's peak RSS in bytes so far (getrusage ru_maxrss), 0 if unknown. */
double bench_maxrss_bytes(void);

/* Reports peak_bytes (ctx's pool peak) and maxrss_delta_bytes (peak RSS now
 * minus rss0, from bench_maxrss_bytes before the case allocated anything;
 * 0 when the case stayed under an earlier peak). */
void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, double rss0);

#endif
