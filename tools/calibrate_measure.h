/* Tools-internal: the measurements behind `optic calibrate` (FMA peak per ISA,
 * vectorized exp throughput, in-place add bandwidth in L1, in L2 and from
 * DRAM, the runtime's per-op overhead), each on 1 thread and on all OpenMP
 * threads, and how they become an optic_machine. Runs kernels and, for the
 * overhead, a compiled program; never prints. */
#ifndef OPTIC_TOOLS_CALIBRATE_MEASURE_H
#define OPTIC_TOOLS_CALIBRATE_MEASURE_H

#include <optic/compile.h>
#include <optic/core.h>
#include <optic/optim.h>
#include <sched.h>
#include <stdio.h>

#define CALIB_WHY_MAX 1024 /* a message naming paths (longer ones are cut) */

/* One figure on 1 thread ([0]) and on all threads ([1]). */
typedef struct calib_pair {
  double one, all;
} calib_pair;

/* Figures beyond the roofline (tools/calibrate_beyond.c). */
typedef struct calib_beyond {
  calib_pair gemm;   /* FLOP/s of 256x512x512 sgemm, one per thread (1-thread OpenBLAS) */
  double hash_bw;    /* SHA-256 bytes/s, one thread */
  double disk_bw;    /* write + fsync bytes/s of a new file in $TMPDIR (else /tmp) */
  double barrier_ns; /* one OpenMP barrier among all threads (0 on one thread) */
  double clock_ns;   /* format 6: one read of the thread CPU-time clock, one thread */
} calib_beyond;

/* Op classes (tools/calibrate_classes.c), one thread. */
typedef struct calib_classes {
  double run_overhead_ns;              /* a 1-op program's run minus one op's dispatch */
  double reduce_bandwidth;             /* XLA bytes/s of sum over the minor dim of f32[256,256] */
  double reduce_strided_bandwidth;     /* ... over dim 0 */
  double reduce_cols_stream_bandwidth; /* format 13: ... of f32[512,1024] over dim 0 (the wide column kernel) */
  double loop_bandwidth;               /* ... of the fused loop exp(x - y) * y + x */
  /* format 3 (tools/calibrate_ops.c), each on one thread */
  double gather_element_ns;      /* ns per gathered element */
  double scatter_element_ns;     /* ns per scattered update element */
  double sort_compare_ns;        /* ns per comparison of sort's merge sort */
  double topk_compare_ns;        /* ns per comparison of topk's row sort */
  double bf16_element_ns;        /* ns per bf16 element per fused instruction */
  double f16_element_ns;         /* ... f16 */
  double reduce_multi_bandwidth; /* XLA bytes/s of a sum over dims {0, 2} */
  double reduce_step_ns;         /* ns per block step of a reduce through its reducer's program */
  double while_iteration_ns;     /* ns per while trip beyond its ops */
  double loop_leaf_element_ns;   /* ns per element of a gathered broadcast leaf of a loop fusion */
  double loop_leaf_run_ns;       /* ns per run (along the last dim) of such a leaf */
  /* format 5 (tools/calibrate_paths.c), each on one thread */
  double gather_run_ns;          /* ns per contiguous run a gather copies */
  double topk_select_element_ns; /* ns per row element of topk's block selection (k <= 64) */
  double convert_ns[4];          /* ns per element: from bf16, from f16, to bf16, to f16 (f32 the other side) */
  double fold_ns[4];             /* ns per input element of the direct one-op reduce fold:
                                    bf16 add, f16 add, bf16 maximum, f16 maximum */
  /* format 8 (tools/calibrate_small.c), each on one thread */
  double reduce_cols_call_ns;      /* ns per column-kernel call of a strided f32 reduce */
  double reduce_gather_output_ns;  /* ns per output of an f32 reduce over unmergeable dims */
  double reduce_row_ns;            /* ns per contiguous row of an f32 reduce */
  double batch_norm_run_ns;        /* ns per batch-norm op beyond its dispatch */
  double batch_norm_element_ns[3]; /* ns per operand element: training, inference, grad */
  /* format 12 (tools/calibrate_classes.c), one thread */
  double loop_stream_bandwidth;  /* XLA bytes/s of a fused loop beyond its flops */
  double loop_flop_ns;           /* ns per XLA flop of a fused loop's f32 instruction */
  double loop_transcendental_ns; /* ns per transcendental of the same */
  /* format 13 (tools/calibrate_window.c), one thread */
  double pad_element_ns;           /* ns per output element of a pad */
  double pad_run_ns;               /* ns per run of its outputs along the last dim */
  double reduce_window_element_ns; /* ns per window element (outputs x window size) of a reduce-window */
  double reduce_window_run_ns;     /* ns per run of its outputs along the last dim */
  /* format 14 (tools/calibrate_runtime.c), one thread */
  double clock_read_ns;               /* one optic_now_ns */
  double profile_record_ns;           /* one event recorded into an enabled profiler */
  double page_touch_ns;               /* one byte written per 4 KiB page of a mapped set */
  double compile_instruction_ns;      /* optic_compile at level full, per instruction of a 1000-instruction module */
  double compile_instruction_10k_ns;  /* the same at 10000 instructions */
  double compile_instruction_100k_ns; /* the same at 100000 instructions */
} calib_classes;

/* What calib_measure_ops needs: trials of about target_ns, and the tiny
 * program's run and the per-op figure already measured. */
typedef struct calib_ops_plan {
  int trials;
  double target_ns, tiny_ns, op_overhead_ns;
} calib_ops_plan;

/* The format-3 op classes into out's fields above (the others untouched). */
optic_status calib_measure_ops(const calib_ops_plan *plan, calib_classes *out);

/* The format-5 paths into out (gather_element_ns refitted beside
 * gather_run_ns, topk_compare_ns on the merge-sort path). */
optic_status calib_measure_paths(const calib_ops_plan *plan, calib_classes *out);

/* The format-8 small-op fixed costs into out (tools/calibrate_small.c). */
optic_status calib_measure_small(const calib_ops_plan *plan, calib_classes *out);

/* The format-13 pad and reduce-window figures into out (tools/calibrate_window.c). */
optic_status calib_measure_window(const calib_ops_plan *plan, calib_classes *out);

/* The format-14 runtime and compiler figures into out (tools/calibrate_runtime.c). */
optic_status calib_measure_runtime(const calib_ops_plan *plan, calib_classes *out);

/* The fastest trial's ns per run of HLO text beyond plan->tiny_ns (the
 * one-add program's), 0 when not above it (tools/calibrate_paths.c). */
optic_status calib_beyond_tiny(const calib_ops_plan *plan, const char *text, double *ns);

/* The optimizer figures (tools/calibrate_optim.c), one thread. Format 9:
 * one core's ns per element of each kind's fused step,
 * element_ns[OPTIC_OPTIM_KIND_COUNT_] indexed by optic_optim_kind (0 when
 * the larger tensor was not slower). Format 12 (each 0 when not positive):
 * *step_ns, a step's fixed cost beyond its elements (the median over the
 * kinds), and *clock_ns, one read of the thread CPU-time clock inside a
 * profiled step (half of what profiling adds to an SGD step). */
typedef struct calib_optim {
  double element_ns[OPTIC_OPTIM_KIND_COUNT_];
  double step_ns, clock_ns;
} calib_optim;
optic_status calib_measure_optim(const calib_ops_plan *plan, calib_optim *out);

/* Format 10 (tools/calibrate_mpi.c): runs optic_mpi_probe under the MPI
 * launcher with 2 ranks. true with both figures > 0; false with both 0 and
 * why filled when MPI, the launcher or the probe is missing or failed. */
bool calib_measure_mpi_link(double *latency_ns, double *bandwidth, char *why, size_t why_size);

/* The core the one-thread figures are measured on (tools/calibrate_pin.c):
 * the runtime's tiny-op chain per op on each CPU of the process's mask
 * (probe_ns, in probe_cpu order), the calling thread pinned to the fastest
 * (cpu; pinned stays true) until calib_unpin gives it the saved mask back. */
enum { CALIB_PIN_MAX_CPUS = 64 };
typedef struct calib_pin {
  bool pinned;
  int cpu;
  int n_probed;
  int probe_cpu[CALIB_PIN_MAX_CPUS];
  double probe_ns[CALIB_PIN_MAX_CPUS];
  cpu_set_t saved;
} calib_pin;
/* false (nothing pinned) with fewer than two CPUs, when no CPU's probe is
 * clearly slower than the fastest's (probe_ns still filled) or when the
 * system refuses an affinity; trials and target_ns as
 * calib_runtime_overhead's. */
bool calib_pin_fastest(int trials, double target_ns, calib_pin *pin);
void calib_unpin(const calib_pin *pin);

/* The median of v[0..n) (sorts v; 0 when n <= 0; tools/calibrate_beyond.c). */
double calib_median(double *v, int n);

/* Called with the compiled program before it is timed. */
typedef optic_status (*calib_inspect_fn)(const optic_program_t *p, void *arg);
/* Median ns per run of HLO text's program compiled for and run on one
 * thread (inputs from seed 1), after inspect(program, arg) when not NULL;
 * calib_best_program: the fastest trial's. */
optic_status calib_time_program(const char *text, int trials, double target_ns, calib_inspect_fn inspect, void *arg,
                                double *ns_out);
optic_status calib_best_program(const char *text, int trials, double target_ns, calib_inspect_fn inspect, void *arg,
                                double *ns_out);

/* Format 4 (tools/calibrate_conv.c), one thread: per convolution class of
 * the runtime's planner, the fraction of the one-thread FMA peak its
 * executed multiply-adds reach (0: not measured) and ns per moved element,
 * fitted over a small grid of its own shapes; shapes[c] says how many of
 * them the planner ran with that class. The dot figures as
 * optic_machine's, fitted over a grid of batched products. */
typedef struct calib_conv {
  double efficiency[OPTIC_CONV_CLASS_COUNT], element_ns[OPTIC_CONV_CLASS_COUNT];
  int shapes[OPTIC_CONV_CLASS_COUNT];
  double dot_efficiency, dot_element_ns, dot_call_ns, dot_pack_element_ns;
  double call_ns; /* format 14: a tiny convolution beyond its class's time */
  /* Format 7: optic_machine's dot_grid_efficiency (all 0: not measured), and its seconds */
  double dot_grid[OPTIC_DOT_GRID_POINTS], dot_grid_seconds;
} calib_conv;
/* core_peak: FLOP/s of one thread's FMA loop. */
optic_status calib_measure_conv(const calib_ops_plan *plan, double core_peak, calib_conv *out);
/* The format-7 dot grid (tools/calibrate_dot_grid.c) into grid[OPTIC_DOT_GRID_POINTS]:
 * one sgemm call per grid point through the dot path on one thread, the
 * best of a few trials of about plan->target_ns / 16 of CPU time; all 0 on error or
 * without core_peak. OUT_OF_MEMORY without its operands (192 MiB). */
optic_status calib_measure_dot_grid(const calib_ops_plan *plan, double core_peak, double *grid);

#define CALIB_LLC_FIRST ((size_t)4 << 20)
#define CALIB_LLC_MAX ((size_t)256 << 20)
#define CALIB_LLC_SETS 8

typedef struct calib_result {
  int threads;                      /* "all": omp_get_max_threads() */
  calib_pair fma[OPTIC_ISA_COUNT_]; /* FLOP/s per ISA (0: not supported/built) */
  calib_pair exp_rate;              /* exp evaluations/s, the selected ISA's vexp */
  calib_pair l1_bw, l2_bw, dram_bw; /* bytes/s (read + write) of x += y in place */
  size_t l1_set, l2_set, dram_set;  /* working set per thread, bytes */
  size_t l2_bytes;                  /* per-core L2 size used (sysconf, or 1 MiB) */
  calib_pair op_overhead_ns;        /* ns per op of optic_program_run on a chain of tiny ops */
  double split_barrier_ns;          /* format 11: the runtime's barrier after a split op, all threads */
  calib_beyond beyond;              /* GEMM efficiency, hash, disk, barrier */
  calib_classes classes;            /* run overhead and op classes */
  calib_conv conv;                  /* convolution classes and the dot call */
  double seconds;                   /* wall time of the whole calibration */
  /* format 13: x += y on shared sets between L2 and the LLC (CALIB_LLC_FIRST,
   * doubling): the ladder measured, and the tier it gives (llc_bytes 0: none) */
  size_t llc_sets[CALIB_LLC_SETS];
  calib_pair llc_ladder[CALIB_LLC_SETS];
  int n_llc;
  size_t llc_bytes;
  calib_pair llc_bw;
  /* formats 9 and 12: the optimizer steps' figures, one core */
  calib_optim optim;
  calib_pin pin; /* the core the one-thread op classes, convolutions and steps were measured on */
  /* format 10: the MPI link between two ranks (0: not measured, mpi_why says why) */
  double mpi_latency_ns, mpi_bandwidth;
  char mpi_why[CALIB_WHY_MAX];
} calib_result;

/* quick: fewer, shorter trials (about 1 s on a quiet machine) and a
 * smaller DRAM working set. OUT_OF_MEMORY if the buffers cannot be had. */
optic_status calib_measure(bool quick, calib_result *out);

/* The machine model: name "host"; peak_flops = FMA peak of the selected ISA,
 * peak_transcendentals = exp rate, dram_bandwidth, core_dram_bandwidth =
 * the 1-thread DRAM figure, cache_bandwidth = L2 figure, cache_bytes = L2
 * size x threads, llc_bytes / llc_bandwidth / core_llc_bandwidth = the LLC
 * tier (when it is larger than cache_bytes and faster than DRAM), op_overhead_ns = the smaller of the 1-thread and
 * all-thread runtime figures (the same path: tiny ops are not split), cores =
 * threads. Device-wide figures take the larger of the 1-thread and
 * all-thread measurement (a loaded machine can make "all" the slower one,
 * and the device can at least do what one thread does). source says when
 * and how. */
void calib_to_machine(const calib_result *r, optic_machine *m);

/* The figures beyond the roofline on 1 and `threads` threads. IO when the
 * temporary directory cannot be written, OUT_OF_MEMORY without buffers. */
optic_status calib_measure_beyond(bool quick, int threads, calib_beyond *out);

/* The op classes on one thread: median of `trials` trials of about
 * target_ns each; op_overhead_ns is the per-op figure already measured. */
optic_status calib_measure_classes(int trials, double target_ns, double op_overhead_ns, calib_classes *out);

/* Runs a measured workload `runs` times. */
typedef optic_status (*calib_run_fn)(void *arg, uint64_t runs);
/* Median ns per run of run(arg, ...): runs per trial double until a batch
 * takes a tenth of target_ns, then scale to about target_ns; `trials` (1 to
 * 32) batches are timed on the wall clock. */
optic_status calib_median_ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, double *ns_out);
/* The same, the fastest batch: for the fitted class grids, which describe
 * the machine and not the load other jobs put on it. */
optic_status calib_best_ns_per_run(calib_run_fn run, void *arg, int trials, double target_ns, double *ns_out);

/* Ops in the overhead chain (tools/calibrate_overhead.c). */
#define CALIB_CHAIN_OPS 100
/* The runtime's per-op overhead: a chain of CALIB_CHAIN_OPS dependent tiny
 * elementwise ops (fusion off) run with optic_program_run at the default
 * split policy on 1 thread (out->one) and on `threads` (out->all); each the
 * median over `trials` trials of about target_ns of wall time, per op.
 * *split_ns: the same chain with every op split over `threads`, per op,
 * beyond out->all: the runtime's barrier after a split op (0 on one thread
 * or when it did not come out positive). */
optic_status calib_runtime_overhead(int threads, int trials, double target_ns, calib_pair *out, double *split_ns);

#endif

/* Implemented in cmd_calibrate.c, shared with `optic report`: measures, fills
 * the model and saves it to path (NULL: optic_machine_default_path), printing
 * the figures to out (NULL: silent). The saved model is returned in *m and
 * the path used in path_out (size path_size). */
optic_status calib_calibrate_and_save(bool quick, const char *path, FILE *out, optic_machine *m, char *path_out,
                                      size_t path_size);
