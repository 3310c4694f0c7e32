/* optic optimizer layer: SGD (momentum, Nesterov), Adam (AMSGrad), AdamW,
 * RMSprop, Adagrad, LAMB and Lion over any number of f32 tensors in parameter
 * groups, with PyTorch, optax or Keras semantics, learning-rate schedules,
 * global-norm gradient clipping, non-finite gradient detection and state
 * export/import as named tensors. Updates run the fused kernels of the
 * kernels layer (kernels/optim.h). Semantics: docs/optim.md.
 *
 * Contents, in order:
 *   1. kinds and conventions
 *   2. learning-rate schedules
 *   3. hyperparameters (optic_optim_hparams)
 *   4. the optimizer: options, groups, steps, queries
 *   5. state export and import
 *   6. the step engine: compile, all-reduce, update, profile */
#ifndef OPTIC_OPTIM_H
#define OPTIC_OPTIM_H

#include <optic/ckpt.h>
#include <optic/core.h>
#include <optic/exec.h>
#include <optic/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ kinds */

/* X(NAME, name) */
#define OPTIC_OPTIM_KIND_LIST(X) \
  X(SGD, "sgd")                  \
  X(ADAM, "adam")                \
  X(ADAMW, "adamw")              \
  X(RMSPROP, "rmsprop")          \
  X(ADAGRAD, "adagrad")          \
  X(LAMB, "lamb")                \
  X(LION, "lion")

typedef enum optic_optim_kind {
#define OPTIC_OPTIM_KIND_ENUM_(name, str) OPTIC_OPTIM_KIND_##name,
  OPTIC_OPTIM_KIND_LIST(OPTIC_OPTIM_KIND_ENUM_)
#undef OPTIC_OPTIM_KIND_ENUM_
      OPTIC_OPTIM_KIND_COUNT_
} optic_optim_kind;

/* Whose update rule an optimizer follows where the libraries differ
 * (docs/optim.md has the table):
 *   PYTORCH  ε outside the square root, L2 weight decay (AdamW: decoupled),
 *            lr outside the momentum buffer, SGD's first buffer b₁ = g.
 *   OPTAX    ε inside the root for RMSprop and Adagrad, lr inside RMSprop's
 *            momentum trace, buffers start at 0, LAMB decay inside the trust
 *            ratio.
 *   KERAS    Keras 3: ε-hat Adam/AdamW (ε·√(1−β2^t) in effect), ε inside the
 *            root for RMSprop and Adagrad, lr inside every momentum buffer,
 *            every weight decay decoupled (θ ← θ − γλθ before the step, so
 *            LAMB's decay is outside the trust ratio).
 * DEFAULT is PYTORCH for SGD, Adam, AdamW, RMSprop, Adagrad and OPTAX for
 * LAMB and Lion. PYTORCH with LAMB or Lion (torch.optim has neither) is
 * OPTIC_ERR_UNSUPPORTED. */
typedef enum optic_optim_convention {
  OPTIC_OPTIM_CONVENTION_DEFAULT = 0,
  OPTIC_OPTIM_CONVENTION_PYTORCH,
  OPTIC_OPTIM_CONVENTION_OPTAX,
  OPTIC_OPTIM_CONVENTION_KERAS,
  OPTIC_OPTIM_CONVENTION_COUNT_
} optic_optim_convention;

OPTIC_API const char *optic_optim_kind_name(optic_optim_kind kind);          /* "adamw"; "invalid" */
OPTIC_API const char *optic_optim_convention_name(optic_optim_convention c); /* "pytorch"; "invalid" */
/* The inverses: "adamw" -> OPTIC_OPTIM_KIND_ADAMW, "keras" -> ..._KERAS
 * ("default" too). Exact lower-case names; INVALID_ARGUMENT (message lists
 * the names) for anything else or NULL. */
OPTIC_API optic_status optic_optim_kind_from_name(const char *name, optic_optim_kind *out);
OPTIC_API optic_status optic_optim_convention_from_name(const char *name, optic_optim_convention *out);

/* -------------------------------------------------------- schedules */

/* The learning rate at step t (t = steps the group has taken before this
 * one: 0 on the first step), from the base rate γ of the group:
 *   CONSTANT       γ
 *   STEP           γ·gamma^⌊t/step_size⌋                       (torch StepLR)
 *   EXPONENTIAL    γ·gamma^t                                  (torch ExponentialLR)
 *   COSINE         m + (γ−m)·(1 + cos(π·min(t,T)/T))/2,  T = decay_steps, m = min_lr
 *                                                             (torch CosineAnnealingLR, closed form,
 *                                                              held at m after T)
 *   WARMUP_COSINE  γ·(t+1)/W for t < W (W = warmup_steps), then COSINE of
 *                  t−W over T−W steps (T = decay_steps > W)
 * Computed in double and rounded to float once per step. */
typedef enum optic_lr_schedule_kind {
  OPTIC_LR_CONSTANT = 0,
  OPTIC_LR_STEP,
  OPTIC_LR_EXPONENTIAL,
  OPTIC_LR_COSINE,
  OPTIC_LR_WARMUP_COSINE,
  OPTIC_LR_SCHEDULE_COUNT_
} optic_lr_schedule_kind;

typedef struct optic_lr_schedule {
  optic_lr_schedule_kind kind;
  uint64_t step_size;    /* STEP: > 0 */
  double gamma;          /* STEP, EXPONENTIAL: in (0, 1] */
  uint64_t decay_steps;  /* COSINE: > 0; WARMUP_COSINE: > warmup_steps */
  uint64_t warmup_steps; /* WARMUP_COSINE: > 0 */
  double min_lr;         /* COSINE, WARMUP_COSINE: in [0, γ] */
} optic_lr_schedule;

/* The rate the schedule gives base_lr at step t (validated as for a group:
 * INVALID_ARGUMENT with a message for bad parameters). Thread-safe. */
OPTIC_API optic_status optic_lr_schedule_value(const optic_lr_schedule *schedule, double base_lr, uint64_t t,
                                               double *out);

/* -------------------------------------------------- hyperparameters */

/* One parameter group's hyperparameters. Fill with optic_optim_hparams_default
 * (which sets size and the convention's defaults), then change fields. The
 * fields a kind does not use must keep the defaults optic_optim_hparams_default
 * gives them: optic_optim_add_group fails (INVALID_ARGUMENT naming the field)
 * for, e.g., Adam with nesterov or SGD with an eps. Values are doubles here and are
 * rounded to float (the kernels' precision) when a step runs. */
typedef struct optic_optim_hparams {
  size_t size; /* sizeof(optic_optim_hparams) */
  optic_optim_kind kind;
  optic_optim_convention convention;
  double lr;           /* γ >= 0 (base rate of the schedule) */
  double weight_decay; /* λ >= 0; how it enters: see the convention */
  /* SGD; RMSprop's momentum */
  double momentum;  /* μ >= 0 */
  double dampening; /* τ in [0, 1] (SGD) */
  bool nesterov;    /* SGD: needs μ > 0 and τ == 0 */
  /* Adam, AdamW, LAMB, Lion */
  double beta1, beta2; /* in [0, 1) */
  bool amsgrad;        /* Adam, AdamW (max of the raw v; UNSUPPORTED with OPTAX, whose max is of v̂) */
  /* Adam, AdamW, RMSprop, Adagrad, LAMB */
  double eps;      /* > 0; placed by the convention */
  double eps_root; /* >= 0, always inside the root (optax's eps_root), added to the convention's */
  /* RMSprop */
  double alpha; /* smoothing constant in [0, 1) (optax decay, Keras rho) */
  bool centered;
  /* Adagrad: γ_t = γ/(1 + (t−1)·lr_decay); the sum S and RMSprop's square
   * average start at initial_accumulator_value (optax's initial_scale). */
  double lr_decay;                  /* >= 0 */
  double initial_accumulator_value; /* >= 0 */
  optic_lr_schedule schedule;
  /* Adam, AdamW (else INVALID_ARGUMENT): the group's parameters and gradients
   * are bf16 tensors, and the optimizer keeps f32 master weights (state slot
   * "master", exported and checkpointed with the others). The group's first
   * step copies the parameters into the master exactly; every step updates
   * the master and the state in f32 from the exactly widened gradient (the
   * f32 kernel's arithmetic) and writes each parameter as its master rounded
   * once to bf16 (nearest even). Not with clip_global_norm or
   * skip_nonfinite (UNSUPPORTED at the step). */
  bool bf16_master;
} optic_optim_hparams;

/* The library's defaults for kind under convention (that library's own
 * defaults: PyTorch Adam lr 1e-3, eps 1e-8; Keras Adam eps 1e-7; optax LAMB
 * eps 1e-6; Adagrad's initial accumulator 0 for PyTorch, 0.1 for optax and
 * Keras; ...; table in docs/optim.md), constant schedule. The convention is
 * resolved (DEFAULT becomes PYTORCH or OPTAX). Errors: INVALID_ARGUMENT for
 * a bad kind or convention or NULL; UNSUPPORTED for PYTORCH LAMB/Lion. */
OPTIC_API optic_status optic_optim_hparams_default(optic_optim_kind kind, optic_optim_convention convention,
                                                   optic_optim_hparams *out);

/* Sets every field hp->kind does not use back to the default of its kind
 * and convention (for code that fills hyperparameters generically, e.g.
 * from a config). INVALID_ARGUMENT / UNSUPPORTED as
 * optic_optim_hparams_default. */
OPTIC_API optic_status optic_optim_hparams_clear_unused(optic_optim_hparams *hp);

/* ------------------------------------------------------ the optimizer */

typedef struct optic_optim optic_optim_t;

typedef struct optic_optim_options {
  size_t size; /* sizeof(optic_optim_options) */
  /* OpenMP threads for a step (0: omp_get_max_threads()). Results are
   * bitwise the same for every thread count. */
  int32_t threads;
  /* > 0: before the update, scale all gradients (every group) by
   * max_norm/(‖g‖ + 1e-6) when that is < 1, ‖g‖ the L2 norm over all of them
   * (torch.nn.utils.clip_grad_norm_). The gradient arrays are scaled in
   * place. 0: no clipping. */
  double clip_global_norm;
  /* true: scan all gradients before the update; if any element is NaN or
   * ±inf, skip the step (parameters, state and step counts untouched) and
   * say so in the step report. */
  bool skip_nonfinite;
  /* Allocator for the optimizer and its state (NULL: the default). Must
   * outlive the optimizer. */
  const optic_allocator *allocator;
  /* true: time the update region of every step (step report fields
   * update_wall_ns, update_cpu_ns); costs two clock reads per thread. */
  bool profile;
} optic_optim_options;

/* size set, every other field zero (threads 0, no clipping, no non-finite
 * skip, the default allocator, no profiling): what NULL options mean. */
OPTIC_API optic_optim_options optic_optim_options_default(void);

/* Creates an optimizer with no groups. options may be NULL (defaults: all
 * zero). The caller owns *out and frees it with optic_optim_destroy. Errors:
 * INVALID_ARGUMENT (NULL out, bad size, negative threads or norm). */
OPTIC_API optic_status optic_optim_create(const optic_optim_options *options, optic_optim_t **out);
/* NULL-safe. Frees all state. */
OPTIC_API void optic_optim_destroy(optic_optim_t *opt);

/* Adds a parameter group of `count` f32 tensors with the given shapes and
 * hyperparameters (validated: negative lr, betas outside [0,1), eps <= 0, ...
 * are INVALID_ARGUMENT with a message naming the field and value; PYTORCH
 * LAMB/Lion UNSUPPORTED). Allocates and initialises the group's state; its
 * step count starts at 0. Tensors are numbered across groups in the order
 * they were added: the step's params[i] and grads[i] are tensor i.
 * *group_index (may be NULL) receives the group's index. */
OPTIC_API optic_status optic_optim_add_group(optic_optim_t *opt, const optic_optim_hparams *hparams, size_t count,
                                             const optic_shape *shapes, size_t *group_index);

/* What a step did. */
typedef struct optic_optim_step_report {
  bool skipped;       /* a non-finite gradient was found: nothing changed */
  size_t bad_tensor;  /* skipped: the first tensor with one (global index) */
  size_t bad_element; /* skipped: the first such element in it */
  double grad_norm;   /* ‖g‖ over all gradients before clipping; NaN when
                          neither clipping nor skip_nonfinite computed it */
  double clip_scale;  /* the factor the gradients were scaled by (1: none) */
  /* options.profile (else 0): wall time of the update region, and the largest
   * CPU time (CLOCK_THREAD_CPUTIME_ID) a thread spent on its share of it —
   * what the update costs when threads are not descheduled. The gradient
   * norm pass, when on, is outside both. */
  uint64_t update_wall_ns;
  uint64_t update_cpu_ns;
} optic_optim_step_report;

/* One step of every group: params[i], grads[i] for every tensor i (count
 * must equal optic_optim_tensor_count) must be f32 (bf16 in a bf16_master
 * group) with the registered shape; a parameter may share no byte with another parameter or any
 * gradient, and with clip_global_norm on (it scales gradients in place) no
 * two gradients may share one either. Parameters and state
 * are updated in place; gradients are only written when clipping scales
 * them. report may be NULL. Errors (nothing is changed): INVALID_ARGUMENT
 * (NULL, count, dtype, overlap), SHAPE_MISMATCH (a shape differs from the
 * registered one). A skipped step returns OK with report->skipped set. */
OPTIC_API optic_status optic_optim_step(optic_optim_t *opt, const optic_tensor *params, const optic_tensor *grads,
                                        size_t count, optic_optim_step_report *report);

/* Estimated time in ns of one step's fused update of n f32 parameters of
 * `kind` (one group, no clipping, no non-finite check) asked to run on
 * `threads` threads, on machine m (the all-core model, e.g.
 * optic_machine_host): the step runs on at most one thread per 65536-element
 * block (docs/optim.md), `used` threads (at most m's cores). The update takes the larger of
 * `bytes` (its real bytes, e.g. 28 per element for Adam) at the roofline of
 * `used` threads and the largest thread's share of elements x the kind's
 * per-element figure (format 9, optim_<kind>_element_ns: one core's
 * arithmetic, LAMB's two passes together; 0 leaves bytes alone); each pass
 * over the blocks (LAMB makes two) adds op_overhead_ns and, when used > 1,
 * one barrier (sync_ns of `used` threads); profiled adds the profile's two
 * CPU-clock reads per pass (cpu_clock_ns; LAMB's trust ratios, timed on the
 * calling thread, two more).
 * docs/cost-model.md, "Optimizer steps". Errors: INVALID_ARGUMENT (NULL,
 * a bad kind, threads < 1, bytes negative or not finite, an invalid m).
 * Thread-safe (pure). */
OPTIC_API optic_status optic_optim_step_estimate_ns(const optic_machine *m, optic_optim_kind kind, size_t n,
                                                    double bytes, int32_t threads, bool profiled, double *out_ns);

/* Number of groups and of tensors (all groups). */
OPTIC_API size_t optic_optim_group_count(const optic_optim_t *opt);
OPTIC_API size_t optic_optim_tensor_count(const optic_optim_t *opt);
/* Steps group g has taken; the learning rate its next step will use (the
 * schedule's value, before Adagrad's lr_decay); its hyperparameters (with
 * the convention resolved). Errors: INVALID_ARGUMENT (NULL, g out of range). */
OPTIC_API optic_status optic_optim_group_step(const optic_optim_t *opt, size_t g, uint64_t *out);
OPTIC_API optic_status optic_optim_group_lr(const optic_optim_t *opt, size_t g, double *out);
OPTIC_API optic_status optic_optim_group_hparams(const optic_optim_t *opt, size_t g, optic_optim_hparams *out);
/* Steps skipped for non-finite gradients since creation (or import). */
OPTIC_API uint64_t optic_optim_skipped_steps(const optic_optim_t *opt);

/* ------------------------------------------------- state export/import */

#define OPTIC_OPTIM_STATE_VERSION 1

/* optic_named_tensor (core.h) is also optic_ckpt_entry: export's tensors are
 * checkpoint entries as they are. */
typedef struct optic_named_scalar {
  const char *name;
  int64_t value;
} optic_named_scalar;

/* An optimizer's state as named tensors plus integer metadata, for
 * checkpoints. Names: tensors "group.<g>/tensor.<i>/<slot>" (i counts within
 * the group; slot is PyTorch's state name: momentum_buffer, exp_avg,
 * exp_avg_sq, max_exp_avg_sq, square_avg, grad_avg, sum); scalars
 * "group.<g>/step", "group.<g>/kind" (optic_optim_kind), "group.<g>/tensors"
 * and "skipped_steps". docs/optim.md lists which slots each kind has. */
typedef struct optic_optim_state {
  uint32_t version; /* OPTIC_OPTIM_STATE_VERSION */
  size_t tensor_count;
  const optic_named_tensor *tensors;
  size_t scalar_count;
  const optic_named_scalar *scalars;
} optic_optim_state;

/* Describes opt's state in a new *out that the caller frees with
 * optic_optim_state_destroy. The tensors are views of the optimizer's own
 * buffers (no copy): valid until the next step, import or destroy of opt.
 * Not thread-safe with a concurrent step. */
OPTIC_API optic_status optic_optim_state_export(const optic_optim_t *opt, optic_optim_state **out);
/* NULL-safe. Frees what export allocated (never the optimizer's buffers). */
OPTIC_API void optic_optim_state_destroy(optic_optim_state *state);
/* Copies a state (from export, or built by the caller from a checkpoint) into
 * opt, which must have the same groups (kinds, tensor counts and shapes; the
 * hyperparameters are the caller's and are not checked). Every expected name
 * must be present exactly once with its shape and f32; unknown names are an
 * error. All-or-nothing: on any error opt is unchanged. Errors:
 * INVALID_ARGUMENT (NULL, version, missing/unknown/duplicate name, kind or
 * count mismatch), SHAPE_MISMATCH. */
OPTIC_API optic_status optic_optim_state_import(optic_optim_t *opt, const optic_optim_state *state);

/* ------------------------------------------------------- checkpoints
 * The whole optimizer state in a checkpoint, beside the caller's own
 * entries, with no conversion by the caller: export's tensors are entries
 * "optim/<name>"; its scalars (step counts, kinds, tensor counts, skipped
 * steps) and every group's hyperparameters (kind, convention, every field
 * and the schedule, doubles bit-exact) are metadata under "optim/". A
 * restore followed by the same steps gives bitwise the same parameters and
 * state as a run that never stopped. */

/* What a restore does with the hyperparameters in the checkpoint. CHECK
 * (default): each group's must equal the optimizer's, else INVALID_ARGUMENT
 * naming the group and the field with both values. KEEP: the optimizer's
 * own are kept (e.g. a new learning rate after a resume); kinds, slots and
 * shapes are still checked. */
typedef enum optic_optim_hparams_policy {
  OPTIC_OPTIM_HPARAMS_CHECK = 0,
  OPTIC_OPTIM_HPARAMS_KEEP = 1
} optic_optim_hparams_policy;

typedef struct optic_optim_restore_options {
  size_t size; /* sizeof(optic_optim_restore_options) */
  optic_optim_hparams_policy hparams;
  optic_ckpt_read_options read; /* read.size 0: the checkpoint reader's defaults */
} optic_optim_restore_options;

/* Saves opt's state and extra[0..nextra) (the caller's tensors: parameters,
 * RNG state ...; names must not start with "optim/") and meta[0..nmeta) as
 * step `step` in every directory of dirs, exactly as optic_ckpt_save (atomic,
 * replicas, keep-K). Not concurrent with a step of opt. Errors: those of
 * optic_ckpt_save; INVALID_ARGUMENT for a name or key under "optim/". */
OPTIC_API optic_status optic_optim_save(const optic_optim_t *opt, const char *const *dirs, size_t ndirs, uint64_t step,
                                        const optic_named_tensor *extra, size_t nextra, const optic_ckpt_meta *meta,
                                        size_t nmeta, const optic_ckpt_save_options *opts);
/* The same into one file, as optic_ckpt_save_file. */
OPTIC_API optic_status optic_optim_save_file(const optic_optim_t *opt, const char *path,
                                             const optic_named_tensor *extra, size_t nextra,
                                             const optic_ckpt_meta *meta, size_t nmeta,
                                             const optic_ckpt_save_options *opts);
/* Restores opt's state from an opened checkpoint, and targets[0..n) as
 * optic_ckpt_restore. opt must have the groups it was saved with (same
 * kinds, tensor counts, shapes; hyperparameters per ro->hparams). Every byte
 * read is verified against its SHA-256 before opt is touched: on any error
 * opt is unchanged (the targets are then unspecified). ro may be NULL
 * (CHECK). Errors: NOT_FOUND (the file holds no optimizer state),
 * INVALID_ARGUMENT (format version, group count, kind, hyperparameter,
 * tensor count or name mismatch: the message says which), SHAPE_MISMATCH,
 * CORRUPT, IO; and those of optic_ckpt_check_name. */
OPTIC_API optic_status optic_optim_restore(optic_optim_t *opt, optic_ckpt_reader_t *r,
                                           const optic_named_tensor *targets, size_t n,
                                           const optic_optim_restore_options *ro);
/* Rollback across replicas as optic_ckpt_restore_latest: the newest step
 * whose file restores (optic_optim_restore) wins; files that do not (corrupt,
 * unreadable, mismatched) are skipped and counted in report (may be NULL).
 * NOT_FOUND when no directory holds a checkpoint; CORRUPT when all were
 * rejected (message: the newest one's path and problem). */
OPTIC_API optic_status optic_optim_restore_latest(optic_optim_t *opt, const char *const *dirs, size_t ndirs,
                                                  const optic_named_tensor *targets, size_t n,
                                                  const optic_optim_restore_options *ro,
                                                  optic_ckpt_restore_report *report);

/* Thread safety: an optimizer is not thread-safe (one step at a time; a step
 * uses OpenMP threads itself). Distinct optimizers are independent. */

/* ------------------------------------------------------ the step engine
 * optim/step_engine*.c; docs/optim.md "Step engine".
 *
 * Wraps an optimizer: per step it (1) makes sure every parameter group has a
 * compiled program (on the first step for a group's shapes it builds the
 * group's update as one elementwise graph over the group's flattened
 * elements and compiles it with optic_compile; programs are cached by the
 * group's shapes plus the hyperparameters the graph bakes in), (2) all-reduces
 * (mean) the gradients over the pod cores and/or MPI ranks, (3) runs the
 * update, and (4) records compile / all-reduce / update events with their
 * estimates on a profiler and updates its metrics.
 *
 * What executes the update: the wrapped optimizer's fused kernels
 * (optic_optim_step), not optic_program_run of the compiled graph. The graph
 * has no fused multiply-add and no per-ISA contraction, so it cannot give the
 * kernels' bits. So the update's time estimate (metrics, the profile's
 * "estimated" column) is the model of those kernels: per group,
 * optic_optim_step_estimate_ns of its kind, its element count, its real
 * bytes and the optimizer's threads; the compiled programs supply the cost
 * counts (est_bytes_per_step, their flops through optic_step_engine_program).
 * Results are bitwise those of calling the optimizer directly. docs/optim.md
 * says why. */

typedef struct optic_step_engine optic_step_engine_t;

/* Updated parameters and state: the caller's parameter arrays and the
 * optimizer's state buffers are updated in place (the fused kernels'
 * read-modify-write); there is no out-of-place mode. */

typedef struct optic_step_engine_options {
  size_t size; /* sizeof(optic_step_engine_options); fields beyond it take defaults */
  /* Emulated pod cores holding a replica each (1..64; 0, the default: the
   * pod's core count when a pod is given, else 1). With cores > 1 use
   * optic_step_engine_step_replicas or _step_core. */
  int32_t cores;
  /* The pod to run on (cores must equal optic_pod_cores(pod)); caller-owned,
   * outlives the engine. NULL with cores > 1: the engine creates a ring pod. */
  optic_pod_t *pod;
  /* MPI communicator handle (caller-owned, outlives the engine): gradients
   * are also averaged over its ranks (hierarchically when cores > 1). NULL:
   * none. */
  optic_pod_mpi_t *mpi;
  /* Mean of the gradients over cores (and ranks) before the update (default
   * true). false: each replica steps on its own gradients. */
  bool average_gradients;
  /* Machine model for the estimates (copied). NULL: optic_machine_host().
   * The estimates and the programs are for the wrapped optimizer's thread count
   * (optic_optim_options.threads, 0: omp_get_max_threads()) through
   * optic_compile_options.threads. */
  const optic_machine *machine;
  optic_opt_level level; /* optic_compile level (default OPTIC_OPT_FULL) */
  /* Events go to this profiler when it is enabled (caller-owned, outlives the
   * engine). NULL and profile: the engine creates its own, enabled. */
  optic_profiler_t *profiler;
  bool profile;
} optic_step_engine_options;

OPTIC_API optic_step_engine_options optic_step_engine_options_default(void);

/* Creates an engine around opt (borrowed: caller-owned, must outlive the
 * engine; step it only through the engine from now on, or replicas go out of
 * sync). options may be NULL (defaults). With cores > 1 the engine creates
 * cores - 1 replica optimizers (same groups, hyperparameters and options,
 * state copied from opt) when a step first needs them. Errors:
 * INVALID_ARGUMENT (NULL, bad size, cores, level, pod core count),
 * the errors of optic_machine_host and
 * optic_pod_create. */
OPTIC_API optic_status optic_step_engine_create(optic_optim_t *opt, const optic_step_engine_options *options,
                                                optic_step_engine_t **out);
/* NULL-safe. Frees programs, replicas, the engine's own pod and profiler. */
OPTIC_API void optic_step_engine_destroy(optic_step_engine_t *e);

/* One step on one replica (an engine of 1 core): params[i], grads[i] as for
 * optic_optim_step (count == optic_optim_tensor_count). With an MPI handle
 * the gradients are first replaced by their mean over the ranks (in place:
 * the grads' data is overwritten; also when clipping scales them). Errors:
 * those of optic_optim_step, of compiling, and of the all-reduce;
 * INVALID_ARGUMENT for an engine of more than one core. */
OPTIC_API optic_status optic_step_engine_step(optic_step_engine_t *e, const optic_tensor *params,
                                              const optic_tensor *grads, size_t count);
/* One step of every core: params[c] and grads[c] are core c's arrays of
 * count tensors (replicas). Runs the engine's pod: every core all-reduces
 * (mean) its gradients in place, then updates its replica. With equal
 * starting parameters every core ends with bitwise identical parameters.
 * Returns the lowest failing core's status. */
OPTIC_API optic_status optic_step_engine_step_replicas(optic_step_engine_t *e, const optic_tensor *const *params,
                                                       const optic_tensor *const *grads, size_t count);
/* The same from inside the caller's own optic_pod_run on the engine's pod
 * (options.pod): every core calls it once per step with its own arrays.
 * Core 0 compiles (the others wait at a pod barrier). */
OPTIC_API optic_status optic_step_engine_step_core(optic_step_engine_t *e, optic_pod_core_t *core,
                                                   const optic_tensor *params, const optic_tensor *grads, size_t count);

typedef struct optic_step_engine_metrics {
  uint64_t steps;                      /* engine steps that ran (a replica step counts once) */
  uint64_t skipped_steps;              /* of those, skipped for non-finite gradients */
  double last_step_ns;                 /* wall time of the last step (core 0) */
  double mean_step_ns;                 /* mean over the steps */
  double last_allreduce_ns;            /* its all-reduce part (0: none) */
  double last_update_ns;               /* its update part */
  double est_step_ns;                  /* estimate of one step: update + all-reduce */
  double est_update_ns;                /* sum over groups of optic_optim_step_estimate_ns (kind, elements,
                                          update bytes, the optimizer's threads and profile flag) */
  double est_allreduce_ns;             /* docs/optim.md: ring model on the machine's DRAM bandwidth */
  double measured_over_estimated;      /* mean_step_ns / est_step_ns (0 before the first step) */
  double update_bytes_per_step;        /* real bytes the update moves (Adam: 28 per element) */
  double est_bytes_per_step;           /* bytes accessed by the compiled programs (cost model) */
  double allreduce_bytes_per_step;     /* gradient bytes all-reduced per core */
  double bytes_moved;                  /* update + all-reduce bytes over all steps (core 0) */
  uint64_t cache_hits, cache_misses;   /* program lookups: one per group per step */
  double cache_hit_rate;               /* hits / (hits + misses); 0 before any lookup */
  uint64_t programs;                   /* distinct compiled programs held */
  double compile_ns;                   /* total wall time of the compiles */
  optic_optim_step_report last_report; /* core 0's optimizer report of the last step */
} optic_step_engine_metrics;

/* Snapshot of the metrics. INVALID_ARGUMENT for NULL. Not concurrent with a step. */
OPTIC_API optic_status optic_step_engine_metrics_get(const optic_step_engine_t *e, optic_step_engine_metrics *out);
/* The compiled program group g ran with in the last step (owned by the
 * engine's cache, valid until destroy); INVALID_ARGUMENT before the first
 * step or for g out of range. */
OPTIC_API optic_status optic_step_engine_program(const optic_step_engine_t *e, size_t g, const optic_program_t **out);
/* The profiler events go to (caller's, the engine's own, or NULL). */
OPTIC_API optic_profiler_t *optic_step_engine_profiler(const optic_step_engine_t *e);
/* The wrapped optimizer's state (core 0's: every replica holds the same),
 * as optic_optim_state_export: views valid until the next step. */
OPTIC_API optic_status optic_step_engine_state_export(const optic_step_engine_t *e, optic_optim_state **out);
/* Imports into the wrapped optimizer and every replica (all-or-nothing per
 * optimizer; validated on the wrapped one first). */
OPTIC_API optic_status optic_step_engine_state_import(optic_step_engine_t *e, const optic_optim_state *state);

/* The engine's state through a checkpoint: the wrapped optimizer's (as
 * optic_optim_save) plus the engine's step counters (metadata
 * "engine/steps", "engine/skipped_steps"). Restore imports into the wrapped
 * optimizer and every replica (all or none) and sets the counters; a file
 * written by optic_optim_save restores too (counters then unchanged). Same
 * arguments, errors and guarantees as the optimizer's calls. */
OPTIC_API optic_status optic_step_engine_save(const optic_step_engine_t *e, const char *const *dirs, size_t ndirs,
                                              uint64_t step, const optic_named_tensor *extra, size_t nextra,
                                              const optic_ckpt_meta *meta, size_t nmeta,
                                              const optic_ckpt_save_options *opts);
OPTIC_API optic_status optic_step_engine_restore(optic_step_engine_t *e, optic_ckpt_reader_t *r,
                                                 const optic_named_tensor *targets, size_t n,
                                                 const optic_optim_restore_options *ro);
OPTIC_API optic_status optic_step_engine_restore_latest(optic_step_engine_t *e, const char *const *dirs, size_t ndirs,
                                                        const optic_named_tensor *targets, size_t n,
                                                        const optic_optim_restore_options *ro,
                                                        optic_ckpt_restore_report *report);

/* Thread safety: an engine is used by one thread at a time, except
 * optic_step_engine_step_core, which every core thread of one optic_pod_run
 * calls concurrently. */

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_OPTIM_H */
