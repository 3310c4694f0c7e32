/* The compiler's machine model for benchmarks that do not run a compiled
 * program: kernels called directly, optimizer steps, checkpoints and
 * collectives. Every estimate comes from optic_machine_host() (the file
 * `optic calibrate` wrote, $OPTIC_MACHINE, else the host-default preset)
 * through optic_machine_for_threads, with the same roofline
 * (optic_machine_estimate_ns) and figures beyond it (gemm_efficiency,
 * hash_bandwidth, disk_write_bandwidth, sync_ns) that compiled programs use;
 * nothing is taken from a benchmark's own past timings. docs/cost-model.md
 * states each formula. Benchmark-only code. */
#ifndef OPTIC_BENCH_ESTIMATE_H
#define OPTIC_BENCH_ESTIMATE_H

#include <optic/compile.h>

#include <stdbool.h>

#include "bench/shim/gbench.h"

/* The host model for `threads` threads (resolved: no zero figure beyond the
 * roofline); false (and the benchmark reports no estimate) when the host
 * model cannot be had, e.g. a corrupt machine file. */
bool bench_machine(int threads, optic_machine *out);

/* Reports est_time_ns = est_ns and the counts (est_flops, est_bytes,
 * est_transcendentals; per iteration of the benchmark). */
void bench_report_estimate(optic_bench_state *st, double est_ns, const optic_cost *per_iteration);

/* A kernel called directly `calls` times per iteration, each call with
 * `per_call` counts on `threads` threads: calls x the roofline of one call
 * (no per-op dispatch: nothing dispatches), gemm selects the GEMM bound
 * (dot, convolution). Reports as bench_report_estimate. */
void bench_report_kernel_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                  bool gemm);
/* The same for a plain loop whose normal stores write `allocated_bytes` per
 * call to arrays it does not read: when a call's bytes do not fit the cache,
 * each written line is first read (write-allocate; the calibrated DRAM
 * figure is an in-place x += y, whose written lines were just read), so the
 * time counts those bytes once more. The reported counts stay the call's. */
void bench_report_allocating_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                      double allocated_bytes);
/* The same with a model time per call (a plan's class estimate), raised to
 * the per-call roofline where it is below it; flops_bound false: a roofline
 * of the bytes only (the bf16 matrix unit passes the f32 FMA peak, as the
 * compiler's bf16 estimates allow). */
void bench_report_model_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                 double model_ns, bool flops_bound);

/* `calls` cblas_sgemm calls of (M x K) . (K x N) on one core of m, as the
 * BLAS runs them whatever the shape: on the dot grid (format 7, timed with
 * cblas_sgemm calls; a dim below 4 costs what the size-4 call does, the
 * register tile the GEMM computes anyway), else optic_machine_estimate_dot_ns
 * (which, for the runtime, prices M or N of 1 as its GEMV path: a benchmark
 * calling sgemm with N = 1 does not take that path). 0 when no model. */
double bench_sgemm_calls_ns(const optic_machine *m, double calls, double M, double N, double K);

/* The link model of a ring all-reduce of `bytes` per core among `cores`
 * threads of this host (emulated pod cores, or MPI ranks on one host):
 * 2(cores - 1) steps, each one exchange (sync_ns of the model for `cores`
 * threads) plus its traffic, 5(cores - 1)/cores of the buffer per core in
 * all (reduce-scatter reads two segments and writes one, all-gather reads
 * one and writes one) at the model's bandwidth for that working set (cache
 * when cores x bytes fit, else DRAM). 0 when no model. */
double bench_ring_all_reduce_ns(int cores, double bytes);

/* A checkpoint of `bytes` on `threads` hashing threads: save writes and
 * hashes in one overlapped pass, max(bytes / disk_write_bandwidth,
 * bytes / (threads x hash_bandwidth)); restore copies from the page cache
 * (2 bytes moved per byte at the DRAM bandwidth for `threads`) and then
 * hashes. 0 when no model. */
double bench_ckpt_save_ns(int threads, double bytes);
double bench_ckpt_restore_ns(int threads, double bytes);

/* An all-reduce among `ranks` MPI processes of this host: through the
 * shared-memory ring (messages false) the ring model above; over MPI
 * messages (true) 2(n-1) exchanges of a segment on the calibrated MPI link
 * (machine format 10) plus the reduce-scatter's folds. Without link figures
 * each step instead copies into and out of MPI's buffers and pays a message
 * latency of MPI_STEP_SYNCS barriers (an ASSUMPTION; docs/cost-model.md).
 * 0 when no model. */
#define MPI_STEP_SYNCS 4.0
double bench_mpi_all_reduce_ns(int ranks, double bytes, bool messages);

#endif
