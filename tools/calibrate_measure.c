/* `optic calibrate`'s measurements (calibrate_measure.h). Every rate is the
 * best of several trials of one OpenMP region in which each thread runs its
 * share, timed by the threads' own CPU clocks: the model wants what the
 * hardware does when it gets its cores, and a shared machine only ever makes
 * a trial slower. (The per-op overhead, tools/calibrate_overhead.c, is the
 * runtime's own cost per executed op and is timed on the wall clock.)
 * Kernels come through the dispatch tables, so the figures are what optic's
 * own kernels reach at the ISA they dispatch to. */
#include "tools/calibrate_measure.h"

#include <math.h>
#include <stdint.h>
#include <omp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "kernels/binary.h"
#include "kernels/fma_peak.h"
#include "kernels/stream.h"
#include "kernels/unary.h"

#define MAX_THREADS 256

/* A workload: thread tid runs reps units of work. */
typedef void (*work_fn)(void *ctx, uint64_t reps, int tid, int nthreads);

typedef struct trial_plan {
  double target_ns; /* length of one trial */
  int trials;
} trial_plan;

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Critical-path CPU time of one region of `threads` threads each running fn:
 * the largest of the threads' own CPU times, so time a thread spends
 * descheduled by other jobs is not counted (on a quiet machine this equals
 * the wall time). shared: the threads share what is measured (memory
 * bandwidth), so they must run at the same time: the region's wall time
 * when that is longer: a thread's CPU clock leaves out time it waited (in
 * a guest, also while its vCPU was preempted), and threads that ran one
 * after the other would look as if each had the memory alone.
 * *got gets the number of threads OpenMP really gave. */
static uint64_t run_region(work_fn fn, void *ctx, int threads, uint64_t reps, bool shared, int *got) {
  uint64_t cpu[MAX_THREADS] = {0}, w0 = optic_now_ns();
#pragma omp parallel num_threads(threads)
  {
    int n = omp_get_num_threads(), t = omp_get_thread_num();
    uint64_t t0 = thread_cpu_ns();
    fn(ctx, reps, t, n);
    if (t < MAX_THREADS) cpu[t] = thread_cpu_ns() - t0;
#pragma omp single nowait
    *got = n;
  }
  uint64_t longest = 1, wall = optic_now_ns() - w0;
  for (int t = 0; t < MAX_THREADS; t++) {
    if (cpu[t] > longest) longest = cpu[t];
  }
  return shared && threads > 1 && wall > longest ? wall : longest;
}

/* Reps so that one region takes about plan->target_ns (doubling from 1). */
static uint64_t size_reps(work_fn fn, void *ctx, int threads, const trial_plan *plan) {
  uint64_t reps = 1;
  int got;
  run_region(fn, ctx, threads, reps, false, &got); /* warm: thread start, page faults, caches */
  for (;;) {
    uint64_t t = run_region(fn, ctx, threads, reps, false, &got);
    if ((double)t >= plan->target_ns / 8 || reps >= ((uint64_t)1 << 40)) {
      double scaled = (double)reps * plan->target_ns / (double)t;
      return scaled < 1 ? 1 : (uint64_t)scaled;
    }
    reps *= 2;
  }
}

/* Trials stop early once they have taken this long in all (a loaded machine
 * can stretch a multi-thread trial by whole time slices). */
static double budget_ns(const trial_plan *plan) { return 3.0 * plan->target_ns * plan->trials; }

/* Best rate (units per second over all threads) of plan->trials regions.
 * Each thread's share is sized on one thread, where a busy machine distorts
 * the timing least; all threads then run that same share. */
static double best_rate(work_fn fn, void *ctx, int threads, double units_per_rep, const trial_plan *plan, bool shared) {
  uint64_t reps = size_reps(fn, ctx, 1, plan), start = optic_now_ns();
  double best = 0;
  for (int i = 0; i < plan->trials && (i == 0 || (double)(optic_now_ns() - start) < budget_ns(plan)); i++) {
    int got = 1;
    uint64_t t = run_region(fn, ctx, threads, reps, shared, &got);
    double rate = units_per_rep * (double)reps * got / ((double)t * 1e-9);
    if (rate > best) best = rate;
  }
  return best;
}

/* ------------------------------------------------------------- workloads */

typedef struct fma_ctx {
  const optic_fma_peak_loop *loop;
  volatile float sink[MAX_THREADS];
} fma_ctx;

static void fma_work(void *p, uint64_t reps, int tid, int nthreads) {
  (void)nthreads;
  fma_ctx *c = p;
  float r = c->loop->run(reps);
  if (tid < MAX_THREADS) c->sink[tid] += r;
}

/* Per-thread arrays of n floats each (a, b), 64-byte aligned. */
typedef struct array_ctx {
  float *a[MAX_THREADS], *b[MAX_THREADS];
  size_t n;
  optic_f32_vbinary_fn add;
  optic_f32_vunary_fn exp;
} array_ctx;

static void add_work(void *p, uint64_t reps, int tid, int nthreads) {
  (void)nthreads;
  array_ctx *c = p;
  for (uint64_t r = 0; r < reps; r++) c->add(c->n, c->a[tid], c->b[tid], c->a[tid]);
}

static void exp_work(void *p, uint64_t reps, int tid, int nthreads) {
  (void)nthreads;
  array_ctx *c = p;
  for (uint64_t r = 0; r < reps; r++) c->exp(c->n, c->b[tid], c->a[tid]);
}

static void free_arrays(array_ctx *c, int threads) {
  for (int t = 0; t < threads; t++) {
    optic_free(NULL, c->a[t], c->n * sizeof(float), 64);
    optic_free(NULL, c->b[t], c->n * sizeof(float), 64);
    c->a[t] = c->b[t] = NULL;
  }
}

/* Allocates and first-touches each thread's arrays on that thread; b holds
 * small values in [-1, 1) so exp and repeated adds stay finite. */
static optic_status alloc_arrays(array_ctx *c, int threads, size_t n) {
  memset(c->a, 0, sizeof c->a);
  memset(c->b, 0, sizeof c->b);
  c->n = n;
  for (int t = 0; t < threads; t++) {
    optic_status st = optic_alloc(NULL, n * sizeof(float), 64, (void **)&c->a[t]);
    if (st == OPTIC_OK) st = optic_alloc(NULL, n * sizeof(float), 64, (void **)&c->b[t]);
    if (st != OPTIC_OK) {
      free_arrays(c, threads);
      return st;
    }
  }
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num();
    for (size_t i = 0; i < n; i++) {
      c->a[t][i] = 0.0f;
      c->b[t][i] = (float)((int)(i % 2000) - 1000) * 1e-3f;
    }
  }
  return OPTIC_OK;
}

/* Bandwidth of a += b in place (12 bytes per element: read a, b; write a) on
 * a working set of `set` bytes per thread, with normal stores: a's lines are
 * in cache when they are written, so each element moves exactly its 12
 * bytes, the traffic of the runtime's read-modify-write kernels (optimizer
 * updates, in-place accumulations, the read-modify-write peer). Streaming
 * stores (kernels/stream.h), which the add would take on a DRAM-sized set,
 * would write back lines that were just read: a pattern no DRAM-bound
 * kernel of the runtime runs in place, and slower than theirs. */
static optic_status measure_bandwidth(size_t set, int threads, const trial_plan *plan, calib_pair *out) {
  array_ctx c = {.add = optic_binary_kernels_get()->vv[OPTIC_BINARY_ADD]};
  size_t n = set / (2 * sizeof(float));
  n -= n % 16;
  if (n < 16) n = 16;
  optic_status st = alloc_arrays(&c, threads, n);
  if (st != OPTIC_OK) return st;
  const size_t saved = optic_stream_threshold_set(SIZE_MAX);
  out->one = best_rate(add_work, &c, 1, 12.0 * (double)n, plan, false);
  out->all = threads > 1 ? best_rate(add_work, &c, threads, 12.0 * (double)n, plan, true) : out->one;
  optic_stream_threshold_set(saved);
  free_arrays(&c, threads);
  return OPTIC_OK;
}

static double larger(calib_pair p) { return p.one > p.all ? p.one : p.all; }

/* The last-level-cache tier: x += y on shared working sets of
 * CALIB_LLC_FIRST, twice that, ... up to the LLC the CPU reports (at most
 * CALIB_LLC_MAX: a guest may be shown its host's whole cache), one thread
 * on the whole set, then all threads sharing it. The tier reaches as far
 * as the sets run LLC_FASTER times the DRAM figure on one thread; its
 * figures are the lowest rate any such set reached, one thread and all
 * threads each (near its capacity a cache already loses lines to other
 * cores and jobs). No set
 * that fast (or no LLC reported): no tier, llc_bytes 0. */
#define LLC_FASTER 1.2
static optic_status measure_llc(int threads, const trial_plan *plan, calib_result *out) {
  const optic_cpu_info *ci = optic_cpu_info_get();
  const size_t most = ci->llc_bytes > 0 ? (size_t)ci->llc_bytes : 0;
  out->llc_bytes = 0, out->llc_bw = (calib_pair){0, 0};
  for (size_t set = CALIB_LLC_FIRST; set <= most && set <= CALIB_LLC_MAX && out->n_llc < CALIB_LLC_SETS; set *= 2) {
    calib_pair one, all = {0, 0};
    optic_status st = measure_bandwidth(set, 1, plan, &one);
    if (st == OPTIC_OK && threads > 1) st = measure_bandwidth(set / (size_t)threads, threads, plan, &all);
    if (st != OPTIC_OK) return st;
    calib_pair p = {one.one, threads > 1 ? all.all : one.one};
    out->llc_sets[out->n_llc] = set, out->llc_ladder[out->n_llc++] = p;
    if (p.one < LLC_FASTER * out->dram_bw.one) break;
    out->llc_bytes = set;
    if (out->llc_bw.one == 0 || p.one < out->llc_bw.one) out->llc_bw.one = p.one;
    if (out->llc_bw.all == 0 || p.all < out->llc_bw.all) out->llc_bw.all = p.all;
  }
  return OPTIC_OK;
}

/* The one-thread op classes, convolutions and optimizer steps, pinned to
 * the fastest core when another is clearly slower (calibrate_pin.c; the
 * per-op overhead on one thread is then that core's probe), the thread's
 * mask given back after. */
static optic_status measure_one_thread(const trial_plan *plan, calib_result *out) {
  if (calib_pin_fastest(plan->trials, plan->target_ns, &out->pin)) {
    for (int i = 0; i < out->pin.n_probed; i++)
      if (out->pin.probe_cpu[i] == out->pin.cpu) out->op_overhead_ns.one = out->pin.probe_ns[i];
  }
  optic_status st = calib_measure_classes(plan->trials, plan->target_ns, out->op_overhead_ns.one, &out->classes);
  /* the one-add program's run, as the op classes take it off */
  calib_ops_plan ops = {plan->trials, plan->target_ns, out->classes.run_overhead_ns + out->op_overhead_ns.one,
                        out->op_overhead_ns.one};
  if (st == OPTIC_OK) st = calib_measure_conv(&ops, out->fma[optic_isa_selected()].one, &out->conv);
  if (st == OPTIC_OK) st = calib_measure_optim(&ops, &out->optim);
  calib_unpin(&out->pin);
  return st;
}

/* The runtime barrier once more, seconds after the first: on the 2-vCPU VM
 * a split op's barrier measured 380-400 ns in some passes and 60-90 ns in
 * others a few seconds apart, and passes close together tend to agree. The
 * faster figure counts. */
static optic_status remeasure_split_barrier(int threads, const trial_plan *plan, calib_result *out) {
  if (threads < 2) return OPTIC_OK;
  calib_pair per_op;
  double split = 0;
  optic_status st = calib_runtime_overhead(threads, plan->trials, plan->target_ns, &per_op, &split);
  if (st == OPTIC_OK && split > 0 && (out->split_barrier_ns <= 0 || split < out->split_barrier_ns))
    out->split_barrier_ns = split;
  return st;
}

optic_status calib_measure(bool quick, calib_result *out) {
  memset(out, 0, sizeof *out);
  uint64_t t0 = optic_now_ns();
  /* Short trials: CPU-clock timing already leaves out descheduled time; the
   * best of several also skips trials whose caches another job flushed. */
  const trial_plan plan = quick ? (trial_plan){2e6, 5} : (trial_plan){5e6, 9};
  int threads = omp_get_max_threads();
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads < 1) threads = 1;
  out->threads = threads;

  size_t nloops = 0;
  const optic_fma_peak_loop *loops = optic_fma_peak_loops(&nloops);
  for (size_t i = 0; i < nloops; i++) {
    if (!optic_isa_supported(loops[i].isa)) continue;
    fma_ctx c = {.loop = &loops[i]};
    calib_pair *p = &out->fma[loops[i].isa];
    p->one = best_rate(fma_work, &c, 1, loops[i].flops_per_rep, &plan, false);
    p->all = threads > 1 ? best_rate(fma_work, &c, threads, loops[i].flops_per_rep, &plan, false) : p->one;
  }

  /* exp: 2048 floats in, 2048 out per thread (16 KiB: in L1). */
  array_ctx c = {.add = optic_binary_kernels_get()->vv[OPTIC_BINARY_ADD],
                 .exp = optic_unary_kernels_get()->kernel[OPTIC_UNARY_EXP]};
  optic_status st = alloc_arrays(&c, threads, 2048);
  if (st != OPTIC_OK) return st;
  out->exp_rate.one = best_rate(exp_work, &c, 1, (double)c.n, &plan, false);
  out->exp_rate.all = threads > 1 ? best_rate(exp_work, &c, threads, (double)c.n, &plan, false) : out->exp_rate.one;
  free_arrays(&c, threads);
  /* Per-op overhead: the median (not the best) of the trials, on the wall
   * clock: the executor's dispatch is the cost, and a median is robust to
   * the few trials another job took the core. */
  if ((st = calib_runtime_overhead(threads, plan.trials, plan.target_ns, &out->op_overhead_ns,
                                   &out->split_barrier_ns)) != OPTIC_OK)
    return st;

  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  out->l2_bytes = l2 > 0 ? (size_t)l2 : (size_t)1 << 20;
  out->l1_set = (l1 > 0 ? (size_t)l1 : 32768) / 2;
  out->l2_set = out->l2_bytes / 2;
  /* DRAM: far beyond any L2 and the L3 slice a core sees (32 MiB on one
   * Zen CCD); a VM often reports the whole socket's L3, so sysconf's figure
   * is not used. Per thread: a share of a total, but never under the minimum. */
  size_t total = (size_t)(quick ? 192 : 512) << 20, minimum = (size_t)(quick ? 96 : 128) << 20;
  out->dram_set = total / (size_t)threads > minimum ? total / (size_t)threads : minimum;
  if ((st = measure_bandwidth(out->l1_set, threads, &plan, &out->l1_bw)) != OPTIC_OK) return st;
  if ((st = measure_bandwidth(out->l2_set, threads, &plan, &out->l2_bw)) != OPTIC_OK) return st;
  /* A DRAM trial is one or a few passes; the rep sizing keeps it near target. */
  if ((st = measure_bandwidth(out->dram_set, threads, &plan, &out->dram_bw)) != OPTIC_OK) return st;
  /* An L2 figure below DRAM's can only mean other jobs took the cores during
   * every L2 trial: measure it again (a few times at most), keeping the best. */
  for (int again = 0; again < 3 && larger(out->l2_bw) <= larger(out->dram_bw); again++) {
    calib_pair retry;
    if ((st = measure_bandwidth(out->l2_set, threads, &plan, &retry)) != OPTIC_OK) return st;
    if (retry.one > out->l2_bw.one) out->l2_bw.one = retry.one;
    if (retry.all > out->l2_bw.all) out->l2_bw.all = retry.all;
  }
  if ((st = measure_llc(threads, &plan, out)) != OPTIC_OK) return st;
  if ((st = calib_measure_beyond(quick, threads, &out->beyond)) != OPTIC_OK) return st;
  if ((st = measure_one_thread(&plan, out)) != OPTIC_OK) return st;
  if ((st = remeasure_split_barrier(threads, &plan, out)) != OPTIC_OK) return st;
  calib_measure_mpi_link(&out->mpi_latency_ns, &out->mpi_bandwidth, out->mpi_why, sizeof out->mpi_why);
  out->seconds = (double)(optic_now_ns() - t0) * 1e-9;
  return OPTIC_OK;
}

/* The op classes into m: bandwidths per device (measured on one thread,
 * times the threads), ns per unit on one core. */
static void classes_to_machine(const calib_classes *c, int threads, optic_machine *m) {
  /* op classes: per core (measured on one thread) */
  m->run_overhead_ns = c->run_overhead_ns;
  m->reduce_bandwidth = c->reduce_bandwidth * threads;
  m->reduce_strided_bandwidth = c->reduce_strided_bandwidth * threads;
  m->loop_bandwidth = c->loop_bandwidth * threads;
  m->loop_stream_bandwidth = c->loop_stream_bandwidth * threads;
  m->loop_flop_ns = c->loop_flop_ns;
  m->loop_transcendental_ns = c->loop_transcendental_ns;
  m->reduce_multi_bandwidth = c->reduce_multi_bandwidth * threads;
  m->reduce_cols_stream_bandwidth = c->reduce_cols_stream_bandwidth * threads;
  m->pad_element_ns = c->pad_element_ns;
  m->pad_run_ns = c->pad_run_ns;
  m->reduce_window_element_ns = c->reduce_window_element_ns;
  m->reduce_window_run_ns = c->reduce_window_run_ns;
  m->clock_read_ns = c->clock_read_ns;
  m->profile_record_ns = c->profile_record_ns;
  m->page_touch_ns = c->page_touch_ns;
  m->compile_instruction_ns = c->compile_instruction_ns;
  m->compile_instruction_10k_ns = c->compile_instruction_10k_ns;
  m->compile_instruction_100k_ns = c->compile_instruction_100k_ns;
  /* ns per unit on one core (the estimates divide by the threads an op splits over) */
  m->gather_element_ns = c->gather_element_ns;
  m->scatter_element_ns = c->scatter_element_ns;
  m->sort_compare_ns = c->sort_compare_ns;
  m->topk_compare_ns = c->topk_compare_ns;
  m->bf16_element_ns = c->bf16_element_ns;
  m->f16_element_ns = c->f16_element_ns;
  m->reduce_step_ns = c->reduce_step_ns;
  m->while_iteration_ns = c->while_iteration_ns;
  m->loop_leaf_element_ns = c->loop_leaf_element_ns;
  m->loop_leaf_run_ns = c->loop_leaf_run_ns;
  m->gather_run_ns = c->gather_run_ns;
  m->topk_select_element_ns = c->topk_select_element_ns;
  m->convert_from_bf16_ns = c->convert_ns[0];
  m->convert_from_f16_ns = c->convert_ns[1];
  m->convert_to_bf16_ns = c->convert_ns[2];
  m->convert_to_f16_ns = c->convert_ns[3];
  m->reduce_fold_bf16_ns = c->fold_ns[0];
  m->reduce_fold_f16_ns = c->fold_ns[1];
  m->reduce_fold_bf16_minmax_ns = c->fold_ns[2];
  m->reduce_fold_f16_minmax_ns = c->fold_ns[3];
  m->reduce_cols_call_ns = c->reduce_cols_call_ns;
  m->reduce_gather_output_ns = c->reduce_gather_output_ns;
  m->reduce_row_ns = c->reduce_row_ns;
  m->batch_norm_run_ns = c->batch_norm_run_ns;
  m->batch_norm_training_element_ns = c->batch_norm_element_ns[0];
  m->batch_norm_inference_element_ns = c->batch_norm_element_ns[1];
  m->batch_norm_grad_element_ns = c->batch_norm_element_ns[2];
}

/* The optimizer figures into m (one core's ns per element, format 9; the
 * step's fixed cost, format 12). */
static void optim_to_machine(const calib_result *r, optic_machine *m) {
  const double *e = r->optim.element_ns;
  m->optim_step_ns = r->optim.step_ns;
  m->optim_sgd_element_ns = e[OPTIC_OPTIM_KIND_SGD];
  m->optim_adam_element_ns = e[OPTIC_OPTIM_KIND_ADAM];
  m->optim_adamw_element_ns = e[OPTIC_OPTIM_KIND_ADAMW];
  m->optim_rmsprop_element_ns = e[OPTIC_OPTIM_KIND_RMSPROP];
  m->optim_adagrad_element_ns = e[OPTIC_OPTIM_KIND_ADAGRAD];
  m->optim_lamb_element_ns = e[OPTIC_OPTIM_KIND_LAMB];
  m->optim_lion_element_ns = e[OPTIC_OPTIM_KIND_LION];
}

/* The convolution classes, the dot figures and the dot grid into m (after
 * peak_flops and cores). */
static void contractions_to_machine(const calib_result *r, optic_isa isa, optic_machine *m) {
  /* convolution classes: fractions of the one-thread peak, which is the
   * device peak per core; ns per element and per call on one core */
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) {
    m->conv_efficiency[c] = r->conv.efficiency[c];
    m->conv_element_ns[c] = r->conv.element_ns[c];
  }
  m->dot_efficiency = r->conv.dot_efficiency;
  m->dot_element_ns = r->conv.dot_element_ns;
  m->dot_call_ns = r->conv.dot_call_ns;
  m->dot_pack_element_ns = r->conv.dot_pack_element_ns;
  m->conv_call_ns = r->conv.call_ns;
  /* the grid's times against the core peak the estimate divides by
   * (peak_flops / cores, which load can make differ from the 1-thread FMA
   * figure the grid was taken against) */
  double core_peak = m->peak_flops / m->cores, to_core = core_peak > 0 ? r->fma[isa].one / core_peak : 0;
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) {
    double e = r->conv.dot_grid[i] * to_core;
    m->dot_grid_efficiency[i] = e > 1 ? 1 : e;
  }
}

void calib_to_machine(const calib_result *r, optic_machine *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "host");
  optic_isa isa = optic_isa_selected();
  m->peak_flops = larger(r->fma[isa]);
  if (m->peak_flops <= 0) m->peak_flops = larger(r->fma[OPTIC_ISA_SCALAR]);
  m->peak_transcendentals = larger(r->exp_rate);
  m->dram_bandwidth = larger(r->dram_bw);
  m->core_dram_bandwidth = r->dram_bw.one; /* <= dram_bandwidth: that is the larger of one and all */
  m->cache_bandwidth = larger(r->l2_bw);
  m->cache_bytes = (double)r->l2_bytes * r->threads;
  if (r->llc_bytes > m->cache_bytes && larger(r->llc_bw) > m->dram_bandwidth) {
    m->llc_bytes = (double)r->llc_bytes;
    m->llc_bandwidth = larger(r->llc_bw);
    m->core_llc_bandwidth = r->llc_bw.one;
  }
  /* Both figures time the same path: at the default split policy tiny ops
   * run on one thread whatever the context's thread count, so they differ
   * only by the load other jobs put on the machine; keep the smaller (as
   * device-wide rates keep the larger). */
  m->op_overhead_ns = r->op_overhead_ns.one < r->op_overhead_ns.all ? r->op_overhead_ns.one : r->op_overhead_ns.all;
  m->cores = r->threads;
  /* GEMM: the all-thread rate against the all-thread FMA peak (the larger
   * of the two ratios: load only ever lowers one), capped at 1. */
  double eff1 = r->fma[isa].one > 0 ? r->beyond.gemm.one / r->fma[isa].one : 0;
  double effn = r->fma[isa].all > 0 ? r->beyond.gemm.all / r->fma[isa].all : 0;
  m->gemm_efficiency = eff1 > effn ? eff1 : effn;
  if (m->gemm_efficiency > 1) m->gemm_efficiency = 1;
  m->hash_bandwidth = r->beyond.hash_bw;
  m->disk_write_bandwidth = r->beyond.disk_bw;
  /* format 11: the runtime's own barrier, which split ops, the pod's steps and
   * the optimizer's passes wait on; the OpenMP barrier when it is not known */
  m->sync_ns = r->split_barrier_ns > 0 ? r->split_barrier_ns : r->beyond.barrier_ns;
  /* format 12: a clock read inside a profiled step (back to back when not known) */
  m->cpu_clock_ns = r->optim.clock_ns > 0 ? r->optim.clock_ns : r->beyond.clock_ns;
  classes_to_machine(&r->classes, r->threads, m);
  contractions_to_machine(r, isa, m);
  optim_to_machine(r, m);
  m->mpi_link_latency_ns = r->mpi_latency_ns;
  m->mpi_link_bandwidth = r->mpi_bandwidth;
  char when[32] = "unknown time";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%MZ", &tm);
  snprintf(m->source, sizeof m->source, "optic calibrate %s: %s FMA loop, vexp, in-place vadd, %d threads, %s", when,
           optic_isa_name(isa), r->threads, optic_cpu_info_get()->model);
}

static int cmp_ns(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static optic_status ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, bool best, double *ns_out);

optic_status calib_median_ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, double *ns_out) {
  return ns_per_run(run, arg, trials, target_ns, false, ns_out);
}

optic_status calib_best_ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, double *ns_out) {
  return ns_per_run(run, arg, trials, target_ns, true, ns_out);
}

static optic_status ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, bool best, double *ns_out) {
  enum { MAX_BATCHES = 32 };
  uint64_t runs = 1;
  optic_status st = OPTIC_OK;
  while (st == OPTIC_OK) {
    uint64_t t0 = optic_now_ns();
    st = run(arg, runs);
    double ns = (double)(optic_now_ns() - t0);
    if (ns >= target_ns / 10 || runs >= ((uint64_t)1 << 24)) {
      double scaled = ns > 0 ? (double)runs * target_ns / ns : (double)runs;
      runs = scaled < 1 ? 1 : (uint64_t)scaled;
      break;
    }
    runs *= 2;
  }
  double v[MAX_BATCHES];
  int k = trials < 1 ? 1 : trials > MAX_BATCHES ? MAX_BATCHES : trials;
  for (int i = 0; i < k && st == OPTIC_OK; i++) {
    uint64_t t0 = optic_now_ns();
    st = run(arg, runs);
    v[i] = (double)(optic_now_ns() - t0) / (double)runs;
  }
  if (st != OPTIC_OK) return st;
  qsort(v, (size_t)k, sizeof v[0], cmp_ns);
  *ns_out = best ? v[0] : k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  return OPTIC_OK;
}
