/* optic graph layer, compiler: machine models, time estimates and the
 * compiler entry point. optic_compile copies a module, optimizes the copy,
 * schedules and plans buffers for every computation that runs as a sequence
 * of instructions, and attaches each instruction's cost and estimated time.
 * The result, an optic_program_t, is what the runtime (exec/) executes.
 * docs/compile.md describes the machine models and the annotated dump.
 *
 * Contents, in order:
 *   1. machine models: presets, the host model and its file, per-thread
 *      models, roofline estimates
 *   2. compile: options, optic_compile, the program's module, schedules,
 *      buffers, estimates, summary and annotated text */
#ifndef OPTIC_COMPILE_H
#define OPTIC_COMPILE_H

#include <optic/passes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ machine models
 * A roofline model of one device: time(op) = max(flops / peak_flops,
 * transcendentals / peak_transcendentals, bytes / bandwidth) + op_overhead_ns,
 * where bandwidth is cache_bandwidth when the op's bytes fit in cache_bytes,
 * llc_bandwidth when they fit in llc_bytes (a machine with that tier, format
 * 13) and dram_bandwidth otherwise. A plain value: copy it freely.
 * The figures are for all `cores`; optic_machine_for_threads gives the model
 * of fewer of them (what a run on fewer threads can reach), which is what
 * optic_compile_options.threads selects for a program's estimates. */
#define OPTIC_MACHINE_NAME_MAX 32

/* The convolution strategies of the runtime's planner the machine model
 * has figures for (machine format 4): GEMM (a pointwise window, the input
 * is the GEMM operand), blocked im2col + GEMM with feature-contiguous
 * input (IM2COL_MK) or spatial-contiguous input (IM2COL_KM, also the
 * tap-wise copy), the direct AVX-512 loops, and the group-vectorised loops
 * across adjacent groups (GROUPED, depthwise NHWC) or along output rows
 * (GROUPED_ROWS, depthwise NCHW); BF16: two bf16 operands on the bf16 GEMM
 * (im2col in bf16, kernels/conv_bf16.h), where the runtime chooses it. */
typedef enum optic_conv_class {
  OPTIC_CONV_CLASS_GEMM = 0,
  OPTIC_CONV_CLASS_IM2COL_MK,
  OPTIC_CONV_CLASS_IM2COL_KM,
  OPTIC_CONV_CLASS_DIRECT,
  OPTIC_CONV_CLASS_GROUPED,
  OPTIC_CONV_CLASS_GROUPED_ROWS,
  OPTIC_CONV_CLASS_BF16,
  OPTIC_CONV_CLASS_COUNT
} optic_conv_class;
/* The bf16 class's efficiency is a fraction of the f32 peak_flops, which a
 * bf16 matrix unit (AMX) passes: at most this. */
#define OPTIC_CONV_BF16_MAX_EFFICIENCY 64.0
/* Its name as in the machine file's keys ("gemm", "im2col_mk", ...), NULL
 * out of range. */
OPTIC_API const char *optic_conv_class_name(int32_t c);
#define OPTIC_MACHINE_SOURCE_MAX 160
/* The dot efficiency grid of machine format 7: M, N and K each take the
 * OPTIC_DOT_GRID_AXIS sizes 4, 16, 64, 256, 1024, 4096 (powers of 4). */
#define OPTIC_DOT_GRID_AXIS 6
#define OPTIC_DOT_GRID_POINTS (OPTIC_DOT_GRID_AXIS * OPTIC_DOT_GRID_AXIS * OPTIC_DOT_GRID_AXIS)
#define OPTIC_DOT_GRID_SIZE(i) ((int64_t)4 << (2 * (i)))
#define OPTIC_DOT_GRID_INDEX(i, j, l) (((i)*OPTIC_DOT_GRID_AXIS + (j)) * OPTIC_DOT_GRID_AXIS + (l))

typedef struct optic_machine {
  char name[OPTIC_MACHINE_NAME_MAX];     /* "host", "tpu-v4", ... */
  double peak_flops;                     /* FLOP/s of the whole device, f32 (an FMA = 2) */
  double peak_transcendentals;           /* exp/log/tanh/... per second, whole device */
  double dram_bandwidth;                 /* bytes/s from main memory (HBM on a TPU), all cores */
  double cache_bandwidth;                /* bytes/s when the op's bytes fit in cache_bytes */
  double cache_bytes;                    /* working-set size below which cache_bandwidth applies */
  double op_overhead_ns;                 /* fixed cost per executed instruction */
  int32_t cores;                         /* threads (host) or TensorCores (TPU) */
  char source[OPTIC_MACHINE_SOURCE_MAX]; /* where the figures come from */
  /* bytes/s from main memory that ONE core reaches (host: one thread
   * streaming, as `optic calibrate` measures it; TPU: the chip's HBM
   * bandwidth / TensorCores). DRAM bandwidth does not grow linearly with
   * cores: a run on t cores gets min(dram_bandwidth, t x this). 0 (e.g. a
   * zero-initialized struct from before this field existed): not known,
   * taken as dram_bandwidth / cores. Kept last so older initializers that
   * stop at `source` still compile and mean "not known". */
  double core_dram_bandwidth;
  /* Figures beyond the roofline (machine file format 2; `optic calibrate`
   * measures them on a host). 0 means not known: optic_machine_for_threads
   * and the estimates then use the documented model defaults of
   * optic_machine_resolve (docs/cost-model.md). Kept after
   * core_dram_bandwidth so older initializers still mean "not known". */
  double gemm_efficiency;      /* fraction of peak_flops an f32 dot or convolution reaches, (0, 1] */
  double hash_bandwidth;       /* bytes/s of SHA-256 on ONE core (checkpoint hashing) */
  double disk_write_bandwidth; /* bytes/s of write + fsync to a new file (checkpoint save) */
  double sync_ns;              /* one barrier / exchange step among all `cores` threads */
  /* Op classes (per core; scaled by threads like cache_bandwidth): the XLA
   * bytes per second an op of the class reaches beyond its dispatch cost on
   * small in-cache shapes; a class op takes at least bytes / this. 0: not
   * known, the roofline alone. run_overhead_ns is added once per program
   * run (the summary's est_ns), not per op. */
  double run_overhead_ns;          /* fixed cost of one program run beyond its ops */
  double reduce_bandwidth;         /* reduce over the minor dim (and input fusions) */
  double reduce_strided_bandwidth; /* reduce over other dims only */
  double loop_bandwidth;           /* loop fusions (fused elementwise loops) */
  /* Op classes of format 3: the runtime's cost per unit of work the XLA
   * counts do not see, in ns on ONE core (not scaled by
   * optic_machine_for_threads; an op split over t threads takes 1/t of it).
   * 0: not known, the op stays on the roofline. docs/cost-model.md. */
  double gather_element_ns;      /* gather: per output element (index lookup + copy) */
  double scatter_element_ns;     /* scatter: per update element (combiner run), one thread */
  double sort_compare_ns;        /* sort: per comparator call of the merge sort */
  double topk_compare_ns;        /* topk: per comparison of the row's merge sort */
  double bf16_element_ns;        /* per element per elementwise instruction on bf16 */
  double f16_element_ns;         /* the same on f16 (its own conversions) */
  double reduce_multi_bandwidth; /* bytes/s, all cores as the classes above: reduce over 2+ dims */
  double while_iteration_ns;     /* one while iteration beyond its body and condition ops */
  double reduce_step_ns;         /* reduce through its reducer's program (not f32 add/mul/max/min):
                                    per reduced position per block of up to 512 outputs */
  /* Format 4: convolution per strategy of the runtime's planner (the
   * estimate plans each convolution as the runtime does and takes its
   * strategy's figures), and the per-call cost of the dot path. Per
   * strategy, time on one core = 2 x executed multiply-adds /
   * (conv_efficiency x peak_flops / cores) + moved elements (per output
   * position: contraction rows + output features) x conv_element_ns;
   * split over the threads the plan's work units allow. 0: not known,
   * the strategy takes the GEMM figure (gemm_efficiency) on XLA's flops.
   * A dot likewise from the dot planner's GEMM view: batch items x (M x N
   * x K) on one core = flops / (dot_efficiency x peak_flops / cores) +
   * batch x (MK + KN + MN) x dot_element_ns + batch x dot_call_ns, plus
   * dot_pack_element_ns per element of an operand the plan packs first;
   * split over the threads. dot_efficiency 0: the GEMM figure. */
  double conv_efficiency[OPTIC_CONV_CLASS_COUNT]; /* fraction of peak_flops, (0, 1]; bf16: up to 64 */
  double conv_element_ns[OPTIC_CONV_CLASS_COUNT]; /* ns per moved element, one core */
  double dot_efficiency;                          /* fraction of peak_flops, (0, 1] */
  double dot_element_ns;                          /* per element of the operands and result, one core */
  double dot_call_ns;                             /* one BLAS call (per batch item), one core */
  double dot_pack_element_ns;                     /* per element of a packed operand's copy, one core */
  /* Loop fusions: each operand read through a broadcast or transpose of a
   * non-scalar (a leaf the runtime gathers block by block) adds its
   * elements x loop_leaf_element_ns + its runs along the last dim x
   * loop_leaf_run_ns, one core. 0: not known (nothing added). */
  double loop_leaf_element_ns;
  double loop_leaf_run_ns;
  /* Format 5: the runtime's own paths the figures above priced wrongly, ns
   * on ONE core (not scaled by threads). 0: not known, the format-4 rule. */
  double gather_run_ns;              /* gather: per contiguous run it copies (a row, or one element);
                                      gather_element_ns is then per element beyond its run */
  double topk_select_element_ns;     /* topk with k <= 64: per element of a row (block selection) */
  double convert_from_bf16_ns;       /* convert bf16 -> another type, per element */
  double convert_from_f16_ns;        /* convert f16 -> another type, per element */
  double convert_to_bf16_ns;         /* convert another type -> bf16, per element */
  double convert_to_f16_ns;          /* convert another type -> f16, per element */
  double reduce_fold_bf16_ns;        /* direct fold of a one-op bf16 add/multiply reduce, per input element */
  double reduce_fold_f16_ns;         /* the same on f16 */
  double reduce_fold_bf16_minmax_ns; /* the same for a maximum/minimum reducer (no rounding per step) */
  double reduce_fold_f16_minmax_ns;
  double cpu_clock_ns; /* format 6: one read of the calling thread's CPU-time clock (CLOCK_THREAD_CPUTIME_ID:
                          a system call on Linux), as a profiled optimizer step makes twice per thread */
  /* Format 7: the fraction of ONE core's peak (peak_flops / cores) that one
   * single-threaded sgemm call of the dot path reaches on dense operands,
   * call and element costs included, over a grid of shapes: entry
   * OPTIC_DOT_GRID_INDEX(i, j, l) is M x K by K x N with M, N, K =
   * OPTIC_DOT_GRID_SIZE(i), (j), (l). All 0: no grid (files before format
   * 7, presets): a dot takes dot_efficiency and the terms above. Otherwise
   * every entry is in (0, 1] and a GEMM-path dot (M, N >= 2) is priced by
   * optic_machine_dot_grid_efficiency, the element and call terms left out
   * (the grid's times include them); dot_pack_element_ns still adds. */
  double dot_grid_efficiency[OPTIC_DOT_GRID_POINTS];
  /* Format 8: fixed costs of small ops the roofline and the classes above
   * miss, ns on ONE core (not scaled by threads). 0: not known, the format-6
   * rule (nothing added). docs/cost-model.md, "Small-op fixed costs". */
  double reduce_cols_call_ns;             /* f32 reduce over one strided dim: per group of contiguous kept outputs
                                     (one column-kernel call; a group is the innermost kept dim) */
  double reduce_gather_output_ns;         /* f32 reduce whose reduced dims do not merge into one: per output */
  double reduce_row_ns;                   /* f32 reduce (or input fusion) over contiguous rows: per row */
  double batch_norm_run_ns;               /* batch-norm-training/-inference/-grad: per op beyond its dispatch */
  double batch_norm_training_element_ns;  /* batch-norm-training: per element of the operand */
  double batch_norm_inference_element_ns; /* batch-norm-inference: per element of the operand */
  double batch_norm_grad_element_ns;      /* batch-norm-grad: per element of the operand */
  /* Format 9: a fused optimizer step's own arithmetic, ns per parameter
   * element on ONE core (not scaled by threads) with the kind's library
   * defaults, measured on cache-resident buffers. A step takes the larger
   * of its bytes at the roofline and elements x this figure / threads
   * (optic_optim_step_estimate_ns). 0: not known, bytes only.
   * docs/cost-model.md, "Optimizer steps". */
  double optim_sgd_element_ns;     /* SGD with momentum */
  double optim_adam_element_ns;    /* Adam */
  double optim_adamw_element_ns;   /* AdamW */
  double optim_rmsprop_element_ns; /* RMSprop */
  double optim_adagrad_element_ns; /* Adagrad */
  double optim_lamb_element_ns;    /* LAMB: both passes */
  double optim_lion_element_ns;    /* Lion */
  /* Format 10: the MPI link between two ranks of this host, as `optic
   * calibrate` measures it (tools/mpi_probe: mpiexec -np 2 with the
   * report's settings): an exchange of n bytes each way between two ranks
   * takes mpi_link_latency_ns + n / mpi_link_bandwidth ns. 0: not measured
   * (no MPI build, no launcher, or the probe failed): collectives over MPI
   * messages are then priced by the assumption of docs/cost-model.md. */
  double mpi_link_latency_ns; /* ns of an 8-byte exchange */
  double mpi_link_bandwidth;  /* bytes/s of each direction of a 4 MiB exchange */
  /* Format 12: a loop fusion as the runtime runs it (a block program: one
   * kernel call per instruction per block of elements held in cache): its
   * XLA bytes at loop_stream_bandwidth (bytes/s, all cores, scaled by
   * threads as the classes above; at least the roofline's memory time) plus,
   * for its f32 instructions, loop_flop_ns per XLA flop and
   * loop_transcendental_ns per transcendental, ns on ONE core (split over
   * the threads). loop_flop_ns 0 (files before format 12, presets): the
   * format-11 rule, bytes / loop_bandwidth. docs/cost-model.md. */
  double loop_stream_bandwidth;
  double loop_flop_ns;
  double loop_transcendental_ns;
  /* Format 12: a fused optimizer step's fixed cost beyond its elements
   * (checks, per-step scalars, dispatch), ns on one thread, per pass; 0: not
   * known, op_overhead_ns. Format 12 also measures cpu_clock_ns inside a
   * profiled step (older files: back to back). */
  double optim_step_ns;
  /* Format 13: the last-level cache as a third tier of the roofline. An op
   * whose XLA bytes exceed cache_bytes but not llc_bytes moves them at
   * llc_bandwidth (bytes/s, all cores; a run on t cores gets
   * min(llc_bandwidth, t x core_llc_bandwidth)) instead of dram_bandwidth.
   * llc_bytes is the whole shared cache (not scaled by threads), as far as
   * `optic calibrate` measured it running faster than main memory. 0 (files
   * before format 13, presets): no third tier. docs/cost-model.md. */
  double llc_bytes;
  double llc_bandwidth;
  double core_llc_bandwidth;
  /* Format 13: an f32 column reduce whose calls read more than 1 MiB of rows
   * (the wide kernel, optic_f32_reduce_cols_streams): XLA bytes per second,
   * all cores, scaled by threads as the classes above (at least the
   * roofline's memory time). 0: not known, reduce_bandwidth. */
  double reduce_cols_stream_bandwidth;
  /* Format 13: ns on ONE core (split over the threads as the op is): a pad
   * per output element and per run of it along the last dim (the whole last
   * dim when it is not padded, else every element); a reduce-window per
   * window element (outputs x window size) and per run of outputs along the
   * last dim (the whole last dim when the window does not move along it,
   * else every output). The op takes at least that beside its roofline.
   * 0: not known, the roofline alone. */
  double pad_element_ns;
  double pad_run_ns;
  double reduce_window_element_ns;
  double reduce_window_run_ns;
  /* Format 14, ns on ONE core: costs beyond any op. clock_read_ns: one
   * optic_now_ns (an enabled profiler reads it twice per executed op);
   * profile_record_ns: one event recorded into an enabled profiler; so a
   * profiled run costs its estimate plus, per event it records (each
   * executed op and the run), 2 x clock_read_ns + profile_record_ns.
   * page_touch_ns: one byte written per 4 KiB page of a mapped set larger
   * than the caches' page reach (the first use of a cached arena).
   * compile_instruction_ns,
   * compile_instruction_10k_ns, compile_instruction_100k_ns: optic_compile
   * at level full per instruction of a module of 1000, 10000 and 100000
   * instructions (the compiler's data leaves the caches as modules grow;
   * optic_machine_estimate_compile_ns). conv_call_ns: what one planned
   * convolution costs beyond its class's time (the plan's dispatch, its
   * BLAS call), whatever its class; optic_machine_estimate_conv_ns adds it.
   * 0: not known. */
  double clock_read_ns;
  double profile_record_ns;
  double page_touch_ns;
  double compile_instruction_ns;
  double compile_instruction_10k_ns;
  double compile_instruction_100k_ns;
  double conv_call_ns;
} optic_machine;

/* Format version optic_machine_save writes ("format" key). Files without the
 * key are format 1 (before the figures beyond the roofline) and still load,
 * as do format-2 files (before the op classes gather_element_ns ...
 * while_iteration_ns, which load as 0: not known) and format-3 files
 * (before the convolution strategies and the dot figures, which load as 0:
 * the GEMM figure) and format-4 files (before gather_run_ns ...
 * reduce_fold_f16_minmax_ns, which load as 0: the format-4 rules) and format-5 files (before cpu_clock_ns, which
 * loads as 0: a profiled step's clock reads not counted), format-6 files (before dot_grid_efficiency, which
 * loads as all 0: the single dot_efficiency) and files of formats 6 and 7 (before reduce_cols_call_ns ...
 * batch_norm_grad_element_ns, which load as 0: no small-op fixed costs) and format-8 files (before
 * optim_sgd_element_ns ... optim_lion_element_ns, which load as 0: optimizer steps priced by their bytes alone)
 * and format-9 files (before mpi_link_latency_ns and mpi_link_bandwidth, which load as 0: the MPI link assumed)
 * and format-10 files (whose sync_ns is one OpenMP barrier, not the runtime's own barrier after a split op: they
 * load as they are) and format-11 files (before loop_stream_bandwidth, loop_flop_ns, loop_transcendental_ns and
 * optim_step_ns, which load as 0: loop fusions priced by their bytes at loop_bandwidth, optimizer steps'
 * fixed cost by op_overhead_ns) and format-12 files (before llc_bytes, llc_bandwidth, core_llc_bandwidth,
 * reduce_cols_stream_bandwidth and the pad and reduce-window figures, which load as 0: no
 * last-level-cache tier, streamed column reduces at reduce_bandwidth, pads and reduce-windows on the
 * roofline) and format-13 files (before clock_read_ns, profile_record_ns, page_touch_ns, the
 * compile_instruction figures and conv_call_ns, which load as 0: not known);
 * a file of a newer format fails to load with CORRUPT naming the versions. */
#define OPTIC_MACHINE_FORMAT 14

/* Presets by name: "host-default" (conservative figures for a 2-core x86-64
 * when nothing was calibrated) and "tpu-v2", "tpu-v3", "tpu-v4", "tpu-v5e",
 * "tpu-v5p", "tpu-v6e" (per chip, published figures; f32 peak is an assumed
 * fraction of the bf16 peak, stated in `source` and docs/compile.md).
 * NOT_FOUND for an unknown name (the message lists the known ones). */
OPTIC_API optic_status optic_machine_preset(const char *name, optic_machine *out);
OPTIC_API int32_t optic_machine_preset_count(void);
/* i-th preset name (static string), NULL out of range. */
OPTIC_API const char *optic_machine_preset_name(int32_t i);

/* The host model: the file named by $OPTIC_MACHINE if set, else
 * $XDG_CONFIG_HOME/optic/machine.json (~/.config/optic/machine.json), as
 * written by `optic calibrate`; when no file exists, the "host-default"
 * preset with source saying so. A file that exists but does not parse is an
 * error (CORRUPT, naming the file and the problem), never silently ignored. */
OPTIC_API optic_status optic_machine_host(optic_machine *out);
/* The default path optic_machine_host reads (no file check). */
OPTIC_API optic_status optic_machine_default_path(char *buf, size_t size);
/* Reads / writes the JSON machine file (flat object with the fields above;
 * every field but "source" and "core_dram_bandwidth" is required, unknown
 * keys are skipped; a file without "core_dram_bandwidth", as written before
 * it existed, loads with dram_bandwidth / cores). Load:
 * NOT_FOUND if the file does not exist, IO if it cannot be read, CORRUPT
 * (naming the file, line:column and the problem) for bad JSON, a missing
 * field or a figure optic_machine_validate rejects. Save validates first,
 * then writes atomically (temporary file + fsync + rename), creating the
 * parent directories. Both are thread-safe (no shared state). */
OPTIC_API optic_status optic_machine_load(const char *path, optic_machine *out);
/* optic_machine_load, and the file's format in *format (1 for a file without
 * the key): a caller can tell a model that lacks this version's figures
 * (format < OPTIC_MACHINE_FORMAT) and measure it again. */
OPTIC_API optic_status optic_machine_load_format(const char *path, optic_machine *out, int32_t *format);
OPTIC_API optic_status optic_machine_save(const optic_machine *m, const char *path);
/* Checks every figure is finite and > 0, except cache_bytes and
 * op_overhead_ns, which may be 0 (no cache level; no per-op cost), and
 * core_dram_bandwidth, which may be 0 (not known: dram_bandwidth / cores)
 * and may not exceed dram_bandwidth; cores >= 1; name non-empty.
 * INVALID_ARGUMENT naming the field and value. */
OPTIC_API optic_status optic_machine_validate(const optic_machine *m);
/* core_dram_bandwidth as used: the field, or dram_bandwidth / cores when it
 * is 0. Expects a valid machine. */
OPTIC_API double optic_machine_core_dram_bandwidth(const optic_machine *m);
/* m with every figure beyond the roofline that is 0 (not known) replaced by
 * its model default: gemm_efficiency 1 (the plain roofline, as machine
 * files of format 1 meant; the host-default preset carries 0.8),
 * hash_bandwidth = 1 GB/s per core,
 * disk_write_bandwidth = 1 GB/s, sync_ns = 2 x op_overhead_ns (at least
 * 100 ns) when cores > 1, else 0; core_dram_bandwidth resolved as above.
 * Assumptions stated in docs/cost-model.md. out may alias m. Expects a valid
 * machine. */
OPTIC_API void optic_machine_resolve(const optic_machine *m, optic_machine *out);
/* Estimate of one f32 dot or convolution with these counts: as
 * optic_machine_estimate_ns, with the flops bound at gemm_efficiency x
 * peak_flops (the compiler's estimate for dot and convolution). */
OPTIC_API double optic_machine_estimate_gemm_ns(const optic_machine *m, const optic_cost *cost);
/* As optic_machine_estimate_ns, with the time at least bytes / class_bandwidth
 * (class_bandwidth <= 0: no class bound): one of the op-class figures. */
OPTIC_API double optic_machine_estimate_class_ns(const optic_machine *m, const optic_cost *cost,
                                                 double class_bandwidth);
/* The model of `threads` of m's cores: what a run on that many threads (the
 * executor's, OpenMP's or OpenBLAS's) can reach. threads 0 means all cores;
 * otherwise it is clamped to [1, m->cores] (threads beyond the cores share
 * them). With f = threads / cores: peak_flops, peak_transcendentals,
 * cache_bandwidth and cache_bytes (per-core units: FMA pipes, private
 * caches) scale by f; dram_bandwidth = min(dram_bandwidth, threads x
 * core_dram_bandwidth) (a few cores already saturate the memory), and
 * llc_bandwidth likewise min(llc_bandwidth, threads x core_llc_bandwidth)
 * (llc_bytes, a shared cache, is kept); core_dram_bandwidth is the resolved per-core figure; op_overhead_ns, name
 * and source are kept; the figures beyond the roofline are resolved
 * (optic_machine_resolve) and kept per core (hash_bandwidth), per device
 * (disk_write_bandwidth, gemm_efficiency) or scaled to the threads (sync_ns
 * by (threads - 1) / (cores - 1): no barrier cost on one thread); the op
 * class bandwidths scale by f; cores = threads. threads == cores gives m back (with
 * core_dram_bandwidth resolved). out may alias m. INVALID_ARGUMENT for an
 * invalid m or threads < 0. Thread-safe (pure). */
OPTIC_API optic_status optic_machine_for_threads(const optic_machine *m, int32_t threads, optic_machine *out);
/* The runtime's decision to split one op (not a dot or convolution, which
 * always split) across `threads` threads; exec/ and the compiler's estimates
 * both call it. split_min_elements > 0: by size, split when the op touches
 * (operands + result elements; reduce-window x 4) at least that many
 * elements. 0: by cost, split when threads > 1 and the time splitting saves,
 * t1_ns x (1 - 1/threads), exceeds barrier_ns (t1_ns: the op's roofline on
 * one thread without op_overhead_ns; barrier_ns: the machine's sync_ns).
 * Pure. */
OPTIC_API bool optic_split_op(int32_t threads, int64_t split_min_elements, double touched_elements, double t1_ns,
                              double barrier_ns);
/* Roofline estimate of one instruction's time in ns (see above); bytes up to
 * and including cache_bytes use cache_bandwidth, then up to llc_bytes
 * llc_bandwidth (when it exceeds dram_bandwidth). Expects a valid machine. */
OPTIC_API double optic_machine_estimate_ns(const optic_machine *m, const optic_cost *cost);
/* The wall time of optic_compile at level full on a module of
 * `instructions` instructions (one core: the compiler is single-threaded):
 * instructions x the per-instruction figure at that size, interpolated
 * linearly in log10(instructions) between the calibrated sizes 1000, 10000
 * and 100000 (a figure of 0 takes the one of the size below) and held
 * beyond them; 0 when compile_instruction_ns is not known (or m is NULL).
 * Calibrated on a chain of layer-norm blocks: the per-instruction cost of
 * other modules differs with their op mix. */
OPTIC_API double optic_machine_estimate_compile_ns(const optic_machine *m, double instructions);

/* ------------------------------------------------------------ compile
 * Thread safety: optic_compile only reads the module (several threads may
 * compile one module at once while nobody mutates it). A program is immutable
 * after creation: any number of threads may read it and run it at once (each
 * with its own execution context). */

typedef struct optic_compile_options {
  size_t size;                  /* sizeof(optic_compile_options); fields beyond it take defaults */
  optic_opt_level level;        /* default OPTIC_OPT_FULL */
  const optic_machine *machine; /* NULL: optic_machine_host(); copied into the program */
  int32_t fusion;               /* -1 (default) by level, 0 off, 1 on */
  int64_t fold_max_bytes;       /* 0: 1 MiB, as optic_optimize_options */
  int32_t max_fusion_size;      /* 0: 64 */
  bool verify_buffers;          /* run optic_buffer_plan_verify on every plan (default false) */
  /* Threads the program will run on: its estimates (node est_ns, summary
   * est_ns) use optic_machine_for_threads(machine, threads), and so does
   * optic_program_machine. 0 (default): all the machine's cores; more than
   * the machine has: all of them. Negative: INVALID_ARGUMENT. Set it to the
   * execution context's thread count (optic_exec_ctx_threads). */
  int32_t threads;
  /* The split policy the program will run with (optic_exec_options'
   * split_min_elements): 0 (default) by cost, > 0 by size. The estimates
   * follow the runtime's decision for each op (optic_split_op): an op split
   * over the threads is estimated on all of them plus one barrier (sync_ns),
   * an op kept on one thread on one thread. Negative: INVALID_ARGUMENT. */
  int64_t split_min_elements;
} optic_compile_options;

OPTIC_API optic_compile_options optic_compile_options_default(void);

typedef struct optic_program optic_program_t;

/* Compiles module m (not modified: the program owns an optimized copy).
 * options may be NULL. Errors: those of optic_graph_optimize, schedule and
 * buffer planning, and of optic_machine_host; INVALID_ARGUMENT for bad
 * options. On error *out is NULL. */
OPTIC_API optic_status optic_compile(const optic_module_t *m, const optic_compile_options *options,
                                     optic_program_t **out);
OPTIC_API void optic_program_destroy(optic_program_t *p);

/* The optimized module (owned by the program; read it, never change it) and
 * its entry computation. Its instruction ids are its own: after the passes
 * the module is renumbered so that every operand's id is below its users'
 * (removed instructions dropped), so look instructions up by name, not by the
 * ids of the module given to optic_compile. Computation ids are kept. */
OPTIC_API const optic_module_t *optic_program_module(const optic_program_t *p);
OPTIC_API optic_comp_id optic_program_entry(const optic_program_t *p);
/* The model the estimates use: options.machine (or the host model) for
 * options.threads threads (optic_machine_for_threads; cores = those threads). */
OPTIC_API const optic_machine *optic_program_machine(const optic_program_t *p);
/* Schedule and buffer plan of a computation that runs instruction by
 * instruction: the entry, every computation reached from it through call,
 * while (condition and body) and conditional branches, and the fused
 * computation of a fusion the runtime runs as a sequence (docs/compile.md,
 * "Sequences": a custom fusion, for one). NULL for any other computation
 * (other fused computations and to_apply reducers run as one op of their
 * caller). Owned by the program. */
OPTIC_API const optic_schedule_t *optic_program_schedule(const optic_program_t *p, optic_comp_id comp);
OPTIC_API const optic_buffer_plan_t *optic_program_buffers(const optic_program_t *p, optic_comp_id comp);

/* One instruction's figures in the program (scheduled instructions only). */
typedef struct optic_node_estimate {
  optic_cost cost; /* optic_node_cost of the optimized instruction */
  double est_ns;   /* optic_machine_estimate_ns(machine, cost); 0 for instructions that run
                       no code: parameter, constant, tuple, get-tuple-element, reshape (aliases) */
} optic_node_estimate;
/* INVALID_ARGUMENT for an instruction that is not scheduled (the fused
 * computations of fusions that run as one op, to_apply computations,
 * unknown ids). */
OPTIC_API optic_status optic_program_node_estimate(const optic_program_t *p, optic_node_id id,
                                                   optic_node_estimate *out);

/* How the runtime runs convolution `id` of p's module, from the plan the
 * runtime's planner makes for it on the program's threads (the estimate
 * prices this plan): the planner's strategy (kernels' OPTIC_CONV_STRATEGY_*,
 * for tests; 0 for the bf16 GEMM plan), its class of the machine model, the multiply-adds its loops
 * execute (padding taps included where the strategy computes them), the
 * elements it moves (per output position: contraction rows + output
 * features), its work units (what the threads split) and the f16/bf16
 * elements widened to f32 around it. INVALID_ARGUMENT when id is not a
 * convolution; the planner's error when it cannot plan it. */
typedef struct optic_conv_work {
  int32_t strategy, conv_class;
  double macs, moved, units, widened;
} optic_conv_work;
OPTIC_API optic_status optic_program_conv_work(const optic_program_t *p, optic_node_id id, optic_conv_work *out);
/* The same from a plan of the kernels' convolution planner (struct
 * optic_conv_plan, kernels/conv.h: for the library's own benchmarks and
 * tests); xla_flops: XLA's count, which the loop strategies execute. */
struct optic_conv_plan;
OPTIC_API void optic_conv_plan_work(const struct optic_conv_plan *plan, double xla_flops, optic_conv_work *out);
/* The work of the same convolution on the bf16 GEMM (im2col in bf16 over
 * the f32 plan's geometry, as optic_program_conv_work prices it where the
 * runtime chooses that kernel): class BF16, every multiply-add of the plan's
 * GEMM, nothing widened. */
OPTIC_API void optic_conv_plan_bf16_work(const struct optic_conv_plan *plan, optic_conv_work *out);
/* One planned convolution on m (its cores; no op_overhead_ns, no widening):
 * (2 x macs / (conv_efficiency x peak_flops / cores) + moved x
 * conv_element_ns) / min(cores, units) + conv_call_ns, for w's class; 0
 * when m has no figure for the class. */
OPTIC_API double optic_machine_estimate_conv_ns(const optic_machine *m, const optic_conv_work *w);
/* `batch` f32 products (M x K) . (K x N) through BLAS on m (no
 * op_overhead_ns): (2 batch M N K / (dot_efficiency x peak_flops / cores) +
 * batch (MK + KN + MN) dot_element_ns + batch dot_call_ns + packed_elements
 * dot_pack_element_ns) / min(cores, units); 0 when dot_efficiency is 0.
 * With a grid (format 7) and M, N >= 2 (the GEMM path): (2 batch M N K /
 * (optic_machine_dot_grid_efficiency x peak_flops / cores) +
 * packed_elements dot_pack_element_ns) / min(cores, units). */
OPTIC_API double optic_machine_estimate_dot_ns(const optic_machine *m, double batch, double M, double N, double K,
                                               double packed_elements, double units);
/* `batch` products (M x K) . (K x N) of two bf16 operands on the runtime's
 * bf16 GEMM kernel, where it is the kernel the bf16 convolution class was
 * measured on (optic_dot_bf16_kernel() == optic_conv_bf16_kernel(), not
 * NONE), with that class's figures (no op_overhead_ns, no result rounding):
 * (2 batch M N K / (conv_efficiency[BF16] x peak_flops / cores) + batch (MK
 * + KN + MN) conv_element_ns[BF16] + batch dot_call_ns) / min(cores, units);
 * 0 when m has no bf16 class figure or the kernels differ. */
OPTIC_API double optic_machine_estimate_bf16_dot_ns(const optic_machine *m, double batch, double M, double N, double K,
                                                    double units);
/* Whether m carries a dot efficiency grid (any entry > 0). */
OPTIC_API bool optic_machine_has_dot_grid(const optic_machine *m);
/* The grid's efficiency of one M x K by K x N sgemm call: linear in log M,
 * log N and log K between the grid sizes (exact at them); above 4096 the
 * edge's figure; below 4 each short dim scales it by size / 4 (the call
 * takes the time of the size-4 call: fixed costs dominate there). 0
 * without a grid or for a size <= 0. */
OPTIC_API double optic_machine_dot_grid_efficiency(const optic_machine *m, double M, double N, double K);

typedef struct optic_program_summary {
  optic_cost cost;              /* entry computation totals */
  double est_ns;                /* sum of the entry schedule's estimates */
  optic_memory_estimate memory; /* entry buffer plan totals */
  size_t peak_bytes;            /* memory.total_bytes + arenas of called sequences + constants */
  int64_t instructions;         /* live instructions of the entry after optimization */
  int64_t fusions;              /* fusion instructions in the entry */
  optic_pass_stats passes;      /* what optimization did (size set by the program) */
  double compile_seconds;       /* wall time of optic_compile */
} optic_program_summary;
OPTIC_API optic_status optic_program_summary_get(const optic_program_t *p, optic_program_summary *out);

/* ------------------------------------------------------------ signature
 * What optic_program_run takes and gives, read from the program: inputs are
 * the array leaves of the entry's parameters in parameter number order
 * (tuple parameters depth first), outputs the array leaves of its result.
 * Described from the module given to optic_compile, so the names are the
 * caller's (not the optimized module's). */

/* HLO input_output_alias (JAX's donated arguments): an output may (or must)
 * reuse the buffer of an input. The runtime does not run in place: it reads
 * the inputs and writes separate outputs (optic_program_run), so this only
 * says which parameter an output belongs to, e.g. for a trainer that feeds
 * the outputs back as the next step's inputs. */
typedef enum optic_io_alias_kind {
  OPTIC_IO_ALIAS_NONE = 0,
  OPTIC_IO_ALIAS_MAY, /* may-alias */
  OPTIC_IO_ALIAS_MUST /* must-alias */
} optic_io_alias_kind;

typedef struct optic_program_io {
  /* Input: the parameter instruction's name. Output: the instruction that
   * makes the leaf (the root, or the operand of the root tuple at the leaf's
   * index). Owned by the program. */
  const char *name;
  const char *index; /* the leaf's shape index in its parameter or in the result: "{}" for an array, "{1,0}" */
  optic_dtype dtype;
  optic_shape shape;
  /* Input: its parameter number. Output: the parameter whose buffer it is
   * declared to reuse (input_output_alias), -1 when none. */
  int32_t parameter;
  /* Input: the output it is donated to; output: the input (index in
   * optic_program_run's order) it aliases; -1 when none. */
  int32_t alias;
  optic_io_alias_kind alias_kind;
} optic_program_io;

/* Leaf counts (0 for NULL): n_in and n_out of optic_program_run. */
OPTIC_API int32_t optic_program_input_count(const optic_program_t *p);
OPTIC_API int32_t optic_program_output_count(const optic_program_t *p);
/* Input or output i. INVALID_ARGUMENT for NULL or i out of range. */
OPTIC_API optic_status optic_program_input(const optic_program_t *p, int32_t i, optic_program_io *out);
OPTIC_API optic_status optic_program_output(const optic_program_t *p, int32_t i, optic_program_io *out);

/* The optimized module in HLO syntax, every scheduled instruction followed by
 * a comment with its flops, transcendentals, bytes, estimated time and buffer
 * (arena offset and size, or parameter/constant/output), then the totals
 * (costs, estimated time, arena, peak memory, machine). Newly allocated
 * string; the caller frees it with optic_string_free. */
OPTIC_API optic_status optic_program_to_text(const optic_program_t *p, char **out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_COMPILE_H */
