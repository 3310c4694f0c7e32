/* Internal: the optimizer object shared by the optim/ sources — groups, per-tensor
 * state buffers and the fixed work blocks a step is split into. Never
 * exposed in a public header. */
#ifndef OPTIC_OPTIM_INTERNAL_H
#define OPTIC_OPTIM_INTERNAL_H

#include <optic/optim.h>

#include "core/error.h"
#include "core/ranges.h"
#include "kernels/optim.h"

/* Work is split into blocks of this many elements (a multiple of 16 floats,
 * 64 bytes) at fixed offsets inside each tensor, whatever the thread count:
 * the elementwise kernels give the same bits for any split, and every sum
 * (LAMB norms, the global gradient norm) adds per-block partials in block
 * order, so results do not depend on the thread count. */
#define OPTIM_BLOCK_ELEMENTS ((size_t)1 << 16)
/* The share [*lo, *hi) of nb blocks for thread t of nt (contiguous, the
 * first nb % nt threads one more): the step's split (optim/step.c), also
 * what its estimate (optim/step_estimate.c) prices. */
void optim_block_share(long nb, int t, int nt, long *lo, long *hi);

/* State slots per tensor, in export order; which ones a group has depends on
 * its kind and options (optim_group_has_slot). */
typedef enum optim_slot {
  OPTIM_SLOT_MOMENTUM_BUFFER = 0, /* SGD, RMSprop momentum */
  OPTIM_SLOT_EXP_AVG,             /* Adam, AdamW, LAMB, Lion m */
  OPTIM_SLOT_EXP_AVG_SQ,          /* Adam, AdamW, LAMB v */
  OPTIM_SLOT_MAX_EXP_AVG_SQ,      /* AMSGrad */
  OPTIM_SLOT_SQUARE_AVG,          /* RMSprop */
  OPTIM_SLOT_GRAD_AVG,            /* centered RMSprop */
  OPTIM_SLOT_SUM,                 /* Adagrad */
  OPTIM_SLOT_MASTER,              /* bf16_master groups: the f32 master weights */
  OPTIM_SLOT_COUNT
} optim_slot;

const char *optim_slot_name(optim_slot s);

typedef struct optim_tensor {
  optic_shape shape;
  size_t n;
  float *state[OPTIM_SLOT_COUNT];  /* NULL for slots the group does not use */
  size_t first_block, block_count; /* its blocks in optic_optim_t.blocks */
} optim_tensor;

typedef struct optim_group {
  optic_optim_hparams hp; /* convention resolved */
  uint64_t step;          /* steps taken */
  size_t first_tensor;    /* global index of its tensor 0 */
  size_t count;
  optim_tensor *tensors;
} optim_group;

/* One block of work: elements [lo, hi) of global tensor `tensor`, with the
 * partial sums a step writes for it. */
typedef struct optim_block {
  size_t group, tensor, lo, hi;
  double grad_sq;         /* Σ g² over the block (clipping, non-finite check) */
  optic_lamb_norms norms; /* LAMB pass 1 */
} optim_block;

struct optic_optim {
  optic_optim_options opts;
  const optic_allocator *alloc;
  optim_group *groups;
  size_t group_count, group_cap;
  size_t tensor_count;
  optim_block *blocks; /* every tensor's blocks, tensor by tensor */
  size_t block_count, block_cap;
  float *ratios; /* per tensor: LAMB trust ratio of the current step */
  size_t ratio_cap;
  optic_range *ranges; /* 2 per tensor: a step's overlap check (core/ranges.h) */
  size_t range_cap;
  uint64_t skipped_steps;
};

bool optim_group_has_slot(const optic_optim_hparams *hp, optim_slot s);
/* The value a slot starts at (Adagrad's sum and RMSprop's square average:
 * initial_accumulator_value; everything else 0). */
float optim_slot_initial(const optic_optim_hparams *hp, optim_slot s);

/* Validates hp (kind, convention, ranges) and resolves DEFAULT into *out.
 * `what` names the caller in messages. */
optic_status optim_hparams_check(const optic_optim_hparams *hp, const char *what, optic_optim_hparams *out);

/* The schedule's rate at step t (no validation: hparams were checked). */
double optim_schedule_rate(const optic_lr_schedule *s, double base_lr, uint64_t t);
optic_status optim_schedule_check(const optic_lr_schedule *s, double base_lr, const char *what);

/* ------------------------------------------------ checkpoints (optim_ckpt.c) */

/* Writes opt's hyperparameters with `state` (opt's or the engine's export),
 * the caller's extra entries and metadata and `more` metadata (the engine's)
 * to path (when not NULL, optic_ckpt_save_file) or to dirs as step. */
optic_status optim_ckpt_save(const optic_optim_t *opt, const optic_optim_state *state, const char *path,
                             const char *const *dirs, size_t ndirs, uint64_t step, const optic_named_tensor *extra,
                             size_t nextra, const optic_ckpt_meta *meta, size_t nmeta, const optic_ckpt_meta *more,
                             size_t nmore, const optic_ckpt_save_options *opts, const char *op);

/* An optimizer state read from a checkpoint into library buffers. */
typedef struct optim_ckpt_loaded {
  optic_optim_state state; /* views of the arrays below */
  optic_named_tensor *tensors;
  optic_named_scalar *scalars;
  char *names;
  size_t ntensors, nscalars;
} optim_ckpt_loaded;

void optim_ckpt_loaded_free(optim_ckpt_loaded *l);
/* Name check, optimizer state checked against opt (format, groups,
 * hyperparameters per ro) and read verified into *l, then the targets
 * restored. On OK the caller imports l->state and frees *l; on error nothing
 * is left allocated (targets unspecified). */
optic_status optim_ckpt_restore_one(const optic_optim_t *opt, optic_ckpt_reader_t *r, const optic_named_tensor *targets,
                                    size_t n, const optic_optim_restore_options *ro, optim_ckpt_loaded *l,
                                    const char *op);
typedef optic_status (*optim_ckpt_restore_fn)(void *user, optic_ckpt_reader_t *r,
                                              const optic_optim_restore_options *ro);
/* Rollback across dirs (newest step first, replicas in order) with fn
 * restoring from each candidate until one succeeds. */
optic_status optim_ckpt_restore_latest(const char *const *dirs, size_t ndirs, const optic_optim_restore_options *ro,
                                       optic_ckpt_restore_report *report, optim_ckpt_restore_fn fn, void *user,
                                       const char *op);

#endif
