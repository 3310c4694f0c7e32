/* Shared by optic's benchmark suites: cached float arrays, the per-thread
 * split of a range, the rate counters every suite reports, and the suites'
 * registration entry points. Benchmark-only code: never linked into liboptic. */
#ifndef OPTIC_BENCH_UTIL_H
#define OPTIC_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <optic/core.h>

#include "bench/shim/gbench.h"

/* Input arrays are slots 0..7 (never written by a benchmark), outputs slots
 * 8..15 (written, and read by read-modify-write kernels). */
enum { BENCH_INPUT_SLOT0 = 0, BENCH_OUTPUT_SLOT0 = 8, BENCH_SLOTS = 16 };

/* A 64-byte aligned array of at least n floats for slot, kept for the whole
 * process so large benchmarks do not re-allocate and re-fault per run. On first
 * use (or growth) it is filled with values in [1, 2) that differ per slot, so no
 * kernel sees zeros, subnormals or NaN. NULL when allocation fails (the optic
 * error message says why). Not thread-safe: call outside parallel regions. */
float *bench_f32_array(int slot, size_t n);

/* Thread t of nt gets [*lo, *hi) of [0, n): contiguous pieces whose starts are
 * multiples of 16 floats (64 bytes), so threads never share a cache line. */
void bench_split(size_t n, int t, int nt, size_t *lo, size_t *hi);

/* Standard figures of a run in which every iteration moved `bytes` bytes and
 * did `flops` floating-point operations (either may be 0 to leave it out):
 * "GB/s" and "GFLOP/s" (decimal, per second of the run's time), plus Google
 * Benchmark's bytes_per_second. Call after the timed loop. */
void bench_report_rates(optic_bench_state *st, double bytes, double flops);

/* A benchmark name from a printf format (static buffer, valid until the next
 * call; optic_bench_register copies it). */
const char *bench_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Suites (one file each); main.c registers them all. */
void bench_register_kernels(void);       /* kernels/kernel_bench.c */
void bench_register_stream(void);        /* peers/stream.c */
void bench_register_fma_peak(void);      /* peers/fma_peak.c */
void bench_register_sgemm(void);         /* peers/sgemm.c */
void bench_register_sha256(void);        /* peers/sha256.c */
void bench_register_write_fsync(void);   /* peers/write_fsync.c */
void bench_register_onednn_conv(void);   /* peers/onednn_conv.c, when oneDNN is found */

/* Machine facts added to the report's context (context.c). */
void bench_add_machine_context(void);

#endif
