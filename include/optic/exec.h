/* optic runtime layer (exec/): devices, memory pools, the profiler, and the
 * execution context that runs compiled programs. Nothing here blocks without
 * a bound, prints, or aborts; every fallible call returns an optic_status.
 * docs/runtime-memory-profiler.md describes pools, retry and the profiler.
 *
 * Contents, in order:
 *   1. devices
 *   2. memory pools: options, retry policy, statistics
 *   3. profiler: events, Chrome trace JSON, measured-vs-estimated summary
 *   4. execution context and optic_program_run */
#ifndef OPTIC_EXEC_H
#define OPTIC_EXEC_H

#include <optic/compile.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ====================================================== devices, memory pools, profiler
 * exec/device.c, exec/pool.c, exec/profile.c. */

/* ------------------------------------------------------------ devices
 * A device is a set of cores (threads) with an id. Today there is one: the
 * host, id 0, whose cores are the threads OpenMP would use
 * (omp_get_max_threads(), so OMP_NUM_THREADS limits it). Emulated pod cores
 * are not devices: they are the pod's (optic_pod_run, <optic/pod.h>). */
#define OPTIC_DEVICE_NAME_MAX 32

typedef enum optic_device_kind {
  OPTIC_DEVICE_HOST = 0, /* the CPUs of this process */
} optic_device_kind;

/* Plain value: copy it freely. */
typedef struct optic_device {
  int32_t id;                       /* index in optic_device_list's order */
  char name[OPTIC_DEVICE_NAME_MAX]; /* "host" */
  optic_device_kind kind;
  int32_t cores; /* threads a run on this device may use (>= 1) */
} optic_device;

/* Writes up to cap devices into out and the number that exist into *count
 * (which may exceed cap: call with cap 0 and out NULL to size the array).
 * Errors: INVALID_ARGUMENT for a NULL count, or NULL out with cap > 0.
 * Thread-safe. */
OPTIC_API optic_status optic_device_list(optic_device *out, size_t cap, size_t *count);
/* The device with that id; NOT_FOUND (naming the id and the count) if none. */
OPTIC_API optic_status optic_device_get(int32_t id, optic_device *out);

/* ------------------------------------------------------------ memory pools
 * An execution context owns a pool of arenas. An acquire of n bytes reuses
 * the smallest cached arena of at least n bytes (best fit); only when none
 * fits does it reserve a new one through the allocator (rounded up to 4 KiB,
 * or to 2 MiB from OPTIC_HUGE_ALLOC_THRESHOLD on, where the default allocator
 * maps transparent huge pages). A release returns the arena to the cache, so
 * running the same or a smaller program again allocates nothing and takes no
 * page faults.
 *
 * Retry policy: when the allocator returns NULL, the pool frees every cached
 * (unused) arena, waits backoff_ns (doubling per attempt, capped at
 * max_backoff_ns) and tries again, at most max_retries times; after the last
 * attempt the acquire fails with OPTIC_ERR_OUT_OF_MEMORY naming the bytes
 * asked for. Nothing else is retried. */

typedef struct optic_pool_options {
  size_t size;                      /* sizeof(optic_pool_options); fields beyond it take defaults */
  const optic_allocator *allocator; /* NULL: optic_default_allocator(); must outlive the pool
                                     * and be thread-safe if the pool is shared by threads */
  int32_t max_retries;              /* retries after a failed reservation (default 3; 0: none) */
  uint64_t backoff_ns;              /* wait before the first retry (default 1 ms; 0: none) */
  uint64_t max_backoff_ns;          /* cap of every wait (default 100 ms; 0: no waiting) */
  size_t max_cached_bytes;          /* a release that would leave more than this cached frees
                                     * the arena instead (0, the default: no limit) */
  size_t alignment;                 /* arena alignment, a power of two (0: 64) */
} optic_pool_options;

OPTIC_API optic_pool_options optic_pool_options_default(void);

/* Statistics of one pool; a snapshot, read with the context's accessor. */
typedef struct optic_pool_stats {
  size_t bytes_reserved;  /* bytes of every arena the pool holds (cached + in use) */
  size_t bytes_in_use;    /* bytes of arenas currently acquired */
  size_t peak_bytes;      /* highest bytes_reserved ever */
  size_t bytes_requested; /* sum of the sizes asked for by the acquires in use */
  int64_t arenas;         /* arenas held (cached + in use) */
  int64_t hits;           /* acquires served from the cache */
  int64_t misses;         /* acquires that reserved a new arena (allocator calls that succeeded) */
  int64_t retries;        /* retry attempts after the allocator returned NULL */
  int64_t failures;       /* acquires that ended in OUT_OF_MEMORY */
  int64_t trims;          /* arenas given back to the allocator (trim, retry, cache cap) */
} optic_pool_stats;

/* ------------------------------------------------------------ profiler
 * Records timed events: one per executed op (or fused loop) with its figures
 * and the cost model's estimate, one per run, compile events (the whole
 * compile and each pass) and pool reservations. Off by default; when off,
 * recording costs one branch in the executor. Capacity is fixed at creation:
 * events past it are dropped and counted (optic_profiler_dropped), never
 * reallocated while a run records.
 *
 * Thread safety: recording (optic_profiler_record and the executor) is
 * thread-safe and lock-free (one atomic index). Reading (events, trace,
 * summary), clear and destroy must not run concurrently with recording:
 * read after the run returned. enable may be called at any time. */

typedef enum optic_profile_kind {
  OPTIC_PROFILE_OP = 0,       /* one executed instruction; detail = opcode name */
  OPTIC_PROFILE_FUSION,       /* one executed fusion; detail = fusion kind ("loop", ...) */
  OPTIC_PROFILE_RUN,          /* one optic_program_run; detail = entry computation */
  OPTIC_PROFILE_COMPILE,      /* a whole optic_compile */
  OPTIC_PROFILE_COMPILE_PASS, /* one optimization pass; name = pass name */
  OPTIC_PROFILE_RESERVE,      /* a pool acquire that reserved memory; bytes = arena size */
  OPTIC_PROFILE_USER,         /* recorded by the caller */
  OPTIC_PROFILE_KIND_COUNT_
} optic_profile_kind;

/* "op", "fusion", "run", "compile", "compile_pass", "reserve", "user"; "?" outside. */
OPTIC_API const char *optic_profile_kind_name(optic_profile_kind kind);

#define OPTIC_PROFILE_NAME_MAX 64
#define OPTIC_PROFILE_DETAIL_MAX 32

/* One event: a plain value (names are copied in, truncated to fit). */
typedef struct optic_profile_event {
  char name[OPTIC_PROFILE_NAME_MAX];     /* instruction name, pass name, "run", ... */
  char detail[OPTIC_PROFILE_DETAIL_MAX]; /* opcode or fusion kind; "" if none */
  optic_profile_kind kind;
  int32_t device;            /* device id (Chrome trace pid - 1) */
  int32_t thread;            /* thread index within the run (Chrome trace tid - 1) */
  int64_t node;              /* instruction id, -1 if none */
  uint64_t run;              /* run sequence number (events of one run share it) */
  const void *program;       /* tag: the program it belongs to (never dereferenced) */
  uint64_t start_ns, end_ns; /* optic_now_ns() clock */
  double flops;              /* cost model figures of the instruction, 0 if none */
  double bytes;              /* bytes accessed (reserve: arena bytes) */
  double est_ns;             /* cost model estimate, 0 if none */
} optic_profile_event;

typedef struct optic_profiler optic_profiler_t;

typedef struct optic_profiler_options {
  size_t size;     /* sizeof(optic_profiler_options) */
  size_t capacity; /* events kept (default 65536); must be >= 1 */
  bool enabled;    /* start recording at once (default false) */
} optic_profiler_options;

OPTIC_API optic_profiler_options optic_profiler_options_default(void);

/* Creates a profiler (options may be NULL). The caller owns it and frees it
 * with optic_profiler_destroy (NULL-safe) after every context using it. */
OPTIC_API optic_status optic_profiler_create(const optic_profiler_options *options, optic_profiler_t **out);
OPTIC_API void optic_profiler_destroy(optic_profiler_t *p);
OPTIC_API void optic_profiler_enable(optic_profiler_t *p, bool on);
OPTIC_API bool optic_profiler_enabled(const optic_profiler_t *p);
/* Forgets every event and the dropped count. */
OPTIC_API void optic_profiler_clear(optic_profiler_t *p);

/* Adds a copy of *e if the profiler is enabled (OK and nothing recorded when
 * it is off; OK and one more dropped event when it is full). Thread-safe.
 * INVALID_ARGUMENT for NULL arguments, end_ns < start_ns, or a bad kind. */
OPTIC_API optic_status optic_profiler_record(optic_profiler_t *p, const optic_profile_event *e);

/* Records one compile as one COMPILE event of compile_seconds starting at
 * start_ns (0: ending now) and one COMPILE_PASS event per pass that ran
 * (passes->pass[i].runs > 0), laid end to end from start_ns with each pass's
 * summed wall time (passes interleave over rounds: the trace shows the pass
 * order and durations, not the exact instants). Take both figures from
 * optic_program_summary_get; program is the tag the events carry (may be
 * NULL). Honors the enabled flag. INVALID_ARGUMENT for NULL p or passes, or
 * a negative or non-finite compile_seconds. */
OPTIC_API optic_status optic_profiler_record_compile(optic_profiler_t *p, const optic_pass_stats *passes,
                                                     double compile_seconds, const void *program, uint64_t start_ns);

/* The timeline: the recorded events in recording order (per thread in time
 * order), owned by the profiler, valid until clear or destroy. */
OPTIC_API const optic_profile_event *optic_profiler_events(const optic_profiler_t *p, size_t *count);
/* Events dropped because the profiler was full. */
OPTIC_API uint64_t optic_profiler_dropped(const optic_profiler_t *p);

/* Chrome trace event JSON (loads in Perfetto and chrome://tracing):
 *   {"traceEvents":[{"name","cat","ph":"X","ts","dur","pid","tid","args"}...,
 *                   {"name":"process_name"|"thread_name","ph":"M","pid","tid","args":{"name"}}...],
 *    "displayTimeUnit":"ns","otherData":{"dropped":N,...}}
 * One "X" (complete) event per recorded event, in recording order, then one
 * "M" (metadata) event naming each device and each thread that has events.
 * ts and dur in microseconds (fractional), ts relative to the earliest event;
 * pid is the device + 1, tid the thread + 1 (some viewers treat 0 as the
 * idle task); args hold detail, node, run, flops, bytes and est_us. *out is newly allocated (free it with
 * optic_string_free); *len may be NULL. */
OPTIC_API optic_status optic_profiler_trace_json(const optic_profiler_t *p, char **out, size_t *len);
/* Writes that JSON to path (IO error naming the path on failure). */
OPTIC_API optic_status optic_profiler_write_trace(const optic_profiler_t *p, const char *path);

/* Measured vs estimated, per instruction (OP and FUSION events, by node id).
 * In one run, each thread's k-th event of an instruction is its part of the
 * instruction's k-th execution (every thread that takes part records once
 * per execution; an op run by one thread has one part). An execution lasts
 * from its parts' earliest start to their latest end; executions (a while
 * body's iterations) add up. An op event inside another op event of the same
 * program, run and thread is nested in it (depth); the totals add up the
 * top-level ops only, so no time is counted twice. */
typedef struct optic_profile_op_stat {
  char name[OPTIC_PROFILE_NAME_MAX];
  char detail[OPTIC_PROFILE_DETAIL_MAX];
  optic_profile_kind kind;
  int64_t node;
  int64_t executions;  /* executions over all runs */
  double measured_ns;  /* time of its executions per run (mean over the runs it ran in) */
  double est_ns;       /* estimate per run (est_ns of each execution, summed, mean over runs) */
  double flops, bytes; /* per execution, as recorded */
  int32_t depth;       /* op events of its thread and run containing its events (the least over its events):
                          0 at the top level; > 0 inside a fusion run as a sequence, a call, a while..., whose
                          times include its own */
} optic_profile_op_stat;

typedef struct optic_profile_summary {
  int64_t runs;       /* distinct run numbers among op events */
  double run_ns;      /* mean duration of RUN events (0 if none) */
  double measured_ns; /* sum of the depth-0 ops' measured_ns (nested ops are inside them) */
  double est_ns;      /* sum of the depth-0 ops' est_ns */
  size_t op_count;
  optic_profile_op_stat *ops; /* by decreasing measured_ns; owned by the summary */
} optic_profile_summary;

/* Summarizes the events tagged with program (NULL: every event). An empty
 * profiler gives an empty summary (OK). Free with optic_profile_summary_free. */
OPTIC_API optic_status optic_profiler_summary(const optic_profiler_t *p, const optic_program_t *program,
                                              optic_profile_summary *out);
/* NULL-safe; leaves *s empty. */
OPTIC_API void optic_profile_summary_free(optic_profile_summary *s);
/* A table, one line per op: name, detail, executions, measured us, estimated
 * us, measured/estimated; then the totals. *out newly allocated (free it with
 * optic_string_free). */
OPTIC_API optic_status optic_profile_summary_to_text(const optic_profile_summary *s, char **out);

/* ====================================================== execution context and run
 * exec/run.c, exec/bind.c, exec/ops_*.c, exec/ewprog.c; docs/runtime.md.
 *
 * A context holds what running needs besides the program: the threads, the
 * arenas of the program's buffer plans (from its memory pool, reused across
 * runs), scratch for dot/convolution packing and the fused loops' block
 * registers, and the binding of the last program run on it (its steps,
 * barrier placement and lowered fused loops; rebuilt when another program
 * is run).
 *
 * Thread safety: a context is used by one thread at a time (it runs one
 * program at a time, with its own OpenMP team inside). Distinct contexts are
 * independent, so one program may run concurrently on several contexts. */

typedef struct optic_exec_ctx optic_exec_ctx_t;

typedef struct optic_exec_options {
  size_t size;                      /* sizeof(optic_exec_options); fields beyond it take defaults */
  int32_t threads;                  /* threads of the one parallel region per run; 0 (default): the
                                   device's cores */
  int32_t device;                   /* device id (optic_device_list); default 0, the host */
  int64_t max_while_iterations;     /* a while whose body ran this many times and whose condition is
                                   still true fails with OPTIC_ERR_TIMEOUT; default 1,000,000 */
  const optic_allocator *allocator; /* NULL: optic_default_allocator(); outlives the context.
                                       Overrides pool->allocator when both are set */
  const optic_pool_options *pool;   /* the context's pool (retry policy, cache cap); NULL: defaults */
  optic_profiler_t *profiler;       /* events go here when it is enabled; caller-owned, outlives the
                                       context; NULL: the context's own (see profile) or none */
  bool profile;                     /* no profiler given: create one, enabled, owned by the context */
  int64_t split_min_elements;       /* 0 (default): an op is split across the threads only when the
                                       program's estimate of the time that saves (roofline on one
                                       thread x (1 - 1/threads)) beats one barrier (the machine's
                                       sync_ns, as optic_machine_resolve gives it); ops kept on one thread need no
                                       barriers between them. > 0: by size instead, an op touching
                                       fewer elements (operands + result) runs on one thread
                                       (1: split every op, for tests of the threaded paths) */
} optic_exec_options;

OPTIC_API optic_exec_options optic_exec_options_default(void);

/* Creates a context (options may be NULL). The caller owns it and frees it
 * with optic_exec_ctx_destroy (NULL-safe), which frees every buffer the
 * context lent out (context-allocated outputs included). Errors:
 * INVALID_ARGUMENT (bad options), NOT_FOUND (unknown device), OUT_OF_MEMORY. */
OPTIC_API optic_status optic_exec_ctx_create(const optic_exec_options *options, optic_exec_ctx_t **out);
OPTIC_API void optic_exec_ctx_destroy(optic_exec_ctx_t *ctx);
/* Threads a run uses. */
OPTIC_API int32_t optic_exec_ctx_threads(const optic_exec_ctx_t *ctx);
/* The profiler runs record into (the caller's, the context's own, or NULL).
 * Read its events after a run returned (see the profiler's thread safety). */
OPTIC_API optic_profiler_t *optic_exec_ctx_profiler(const optic_exec_ctx_t *ctx);
/* A snapshot of the context's pool: arenas, scratch, block registers and
 * context-allocated outputs all come from it. */
OPTIC_API optic_status optic_exec_ctx_pool_stats(const optic_exec_ctx_t *ctx, optic_pool_stats *out);

/* Runs the program's entry computation once.
 *
 * Inputs: inputs[i] is the i-th array leaf of the entry's parameters, in
 * parameter number order (a tuple parameter contributes its array leaves,
 * depth first); n_in must equal that count. Each must have exactly the
 * leaf's dtype and shape. They are only read.
 *
 * Outputs: outputs[j] is the j-th array leaf of the root's value (one output
 * for an array root); n_out must equal the leaf count. For each output:
 *  - data != NULL: the caller's buffer; dtype and shape must equal the leaf's.
 *    It must share no byte with an input, another output or a constant of
 *    the program (checked before anything runs: INVALID_ARGUMENT naming
 *    both; empty buffers never overlap). Inputs may share memory with each
 *    other. The runtime does not run in place: HLO input_output_alias
 *    (donated inputs) is kept only as a description (optic_program_output
 *    says which parameter an output belongs to), so no aliasing form is
 *    legal.
 *  - data == NULL: the context provides the buffer and writes dtype, shape
 *    and data into outputs[j]; that memory belongs to the context and stays
 *    valid until the next run on this context or its destruction. It may be
 *    passed as an input of that next run (the context then lends output j
 *    another buffer, so the input is not overwritten while it is read).
 *
 * Errors (the message names the position and the expected and given
 * values): INVALID_ARGUMENT (NULL arguments, wrong counts, overlap), SHAPE_MISMATCH
 * (dtype or shape of an input or output), TIMEOUT (a while loop over
 * max_while_iterations), UNSUPPORTED (an op/dtype pair the runtime does not
 * execute, e.g. dot on s32, named at bind time before anything runs),
 * OUT_OF_MEMORY. On error the outputs' contents are unspecified.
 *
 * Threads: one OpenMP parallel region of optic_exec_ctx_threads() threads
 * (one, when no op of the program is large enough to split). A 1-thread run
 * of a program with a dot or convolution holds OpenBLAS to one thread for its
 * duration (openblas_set_num_threads is process-wide; concurrent 1-thread
 * runs share the hold). The first run of a program on a context binds it
 * (docs/runtime.md); later runs of the same program reuse the binding. */
OPTIC_API optic_status optic_program_run(const optic_program_t *program, optic_exec_ctx_t *ctx,
                                         const optic_tensor *inputs, int32_t n_in, optic_tensor *outputs,
                                         int32_t n_out);

/* What a run of a program reserves, planned before it runs. The figures come
 * from the binding optic_program_run makes for the same options (the same
 * buffer plans, kernel plans and thread count), so a context that runs
 * only this program, with caller-provided outputs, reserves exactly
 * reserved_bytes from its pool (optic_pool_stats.peak_bytes). */
typedef struct optic_run_memory {
  size_t size;           /* sizeof(optic_run_memory); set by the caller, fields beyond it are not written */
  size_t arena_bytes;    /* the buffer plans' arenas of every sequence (entry, called and fused
                            computations), each 64-byte aligned, laid end to end */
  size_t scratch_bytes;  /* per-op scratch: dot packing, convolution columns, f16/bf16 operands
                            widened to f32, while-loop state, sort/top-k positions, batch-norm sums */
  size_t regs_bytes;     /* the fused loops' block registers and reduction work areas, all threads */
  size_t reserved_bytes; /* what the pool reserves for the three: each rounded up to whole 4 KiB
                            pages (2 MiB from OPTIC_HUGE_ALLOC_THRESHOLD on), a page at least */
  size_t io_bytes;       /* the entry's parameter and output leaves (the caller's tensors) */
  size_t constant_bytes; /* the module's constants (held by the program, not the context) */
  size_t peak_bytes;     /* reserved_bytes + io_bytes + constant_bytes */
} optic_run_memory;

/* Plans a run of program with options (NULL: defaults; threads 0 means the
 * device's cores, as for a context) and writes the figures above, without
 * running or reserving anything. Context-allocated outputs (outputs[j].data
 * == NULL) come on top: up to two buffers per output, each page-rounded.
 * Errors: INVALID_ARGUMENT (NULL arguments, out->size too small, bad
 * options), the binding's errors (UNSUPPORTED ops, OUT_OF_MEMORY), as
 * optic_program_run would return them. Thread-safe. */
OPTIC_API optic_status optic_program_run_memory(const optic_program_t *program, const optic_exec_options *options,
                                                optic_run_memory *out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_EXEC_H */
