/* Shared by optic's benchmark suites: cached typed arrays, the per-thread
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

/* Element types of benchmark arrays. BENCH_F32 is 0 so zeroed tables mean
 * float arrays. */
typedef enum bench_dtype { BENCH_F32 = 0, BENCH_F64, BENCH_S32, BENCH_U8, BENCH_U16, BENCH_DTYPE_COUNT } bench_dtype;

/* Bytes of one element of t (0 for an invalid type). */
size_t bench_dtype_bytes(bench_dtype t);

/* A 64-byte aligned array of at least n elements of type t for slot, kept for
 * the whole process so large benchmarks do not re-allocate and re-fault per
 * run. On first use, growth or a change of type it is filled with values that
 * differ per slot and never make a kernel slow or trap: f32/f64 in [1, 2),
 * s32 in [-510, 510], u8 an irregular 0/1 pattern (about half ones, so
 * predicate consumers cannot predict branches). Outputs keep whatever the
 * last benchmark wrote: a benchmark that reads an output slot (state arrays)
 * fills it itself. NULL when allocation fails (the optic error message says
 * why). Not thread-safe: call outside parallel regions. */
void *bench_array(int slot, size_t n, bench_dtype t);
/* bench_array(slot, n, BENCH_F32). */
float *bench_f32_array(int slot, size_t n);

/* x[i] = lo + (hi - lo) * (i mod 1021) / 1021 for i < n: deterministic values
 * in [lo, hi) (state arrays that must start in a given range). */
void bench_fill_f32(float *x, size_t n, float lo, float hi);

/* Thread t of nt gets [*lo, *hi) of [0, n): contiguous pieces whose starts are
 * multiples of `align` elements (align >= 1), so threads never share a cache
 * line when align elements span 64 bytes. */
void bench_split_aligned(size_t n, size_t align, int t, int nt, size_t *lo, size_t *hi);
/* bench_split_aligned with align = 16 (16 floats = 64 bytes). */
void bench_split(size_t n, int t, int nt, size_t *lo, size_t *hi);

/* Calls of a kernel per thread per parallel region for a range of n elements:
 * max(1, BENCH_REPEAT_ELEMENTS / n). Opening and closing an OpenMP region
 * costs about 1.3 us at 1 thread and 3-4 us at 2 on the development VM (an
 * empty region, measured), and reading a thread's CPU clock (cpu_path.h)
 * 0.5-2 us, while an in-cache kernel on 8192 floats takes 0.3-3 us; 512
 * calls per region (250 us to 1.5 ms of work) keep those costs near 1% of
 * what is timed. DRAM sizes (n >= BENCH_REPEAT_ELEMENTS) run once per region. */
#define BENCH_REPEAT_ELEMENTS ((size_t)1 << 22)
size_t bench_repeats(size_t n);

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
void bench_register_optim_steps(void);   /* optim.c: optic_optim_step through the public API */
void bench_register_stream(void);        /* peers/stream.c */
void bench_register_fma_peak(void);      /* peers/fma_peak.c */
void bench_register_sgemm(void);         /* peers/sgemm.c */
void bench_register_exec(void);          /* exec.c: runtime (issue 5) */
void bench_register_exec_contexts(void); /* exec_contexts.c: N contexts x 1 thread vs 1 x 2 */
void bench_register_exec_window(void);   /* exec_window.c: pad and reduce-window vs plain-C peers */
void bench_register_sgemm_slices(void);  /* peers/sgemm_slices.c */
void bench_register_sha256(void);        /* peers/sha256.c */
void bench_register_write_fsync(void);   /* peers/write_fsync.c */
void bench_register_ckpt(void);          /* ckpt.c: checkpoint save and restore */
void bench_register_graph_compile(void); /* graph_compile.c */
void bench_register_onednn_conv(void);   /* peers/onednn_conv.c, when oneDNN is found */
void bench_register_pod(void);           /* pod.c: all-reduce, barrier */
void bench_register_runtime_infra(void); /* runtime_infra.c: memory pool and profiler vs peers */
void bench_register_model_mlp(void);     /* model_mlp.c: the example trainer's MLP training step */
void bench_register_rows(void);          /* rows.c: softmax, layer norm, row/column sums */
void bench_register_torch(void);         /* peers/torch.c: PyTorch on the same work */
void bench_register_model_hlo(void);     /* model_hlo.c: real HLO modules (tests/data/hlo) */

/* Machine facts added to the report's context (context.c). */
void bench_add_machine_context(void);

#endif
