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
  OPTIM_SLOT_COUNT
} optim_slot;

const char *optim_slot_name(optim_slot s);

typedef struct optim_tensor {
  optic_shape shape;
  size_t n;
  float *state[OPTIM_SLOT_COUNT]; /* NULL for slots the group does not use */
  size_t first_block, block_count; /* its blocks in optic_optim.blocks */
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

#endif
