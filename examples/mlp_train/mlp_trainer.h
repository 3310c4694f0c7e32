/* mlp_trainer: the trainer's state, shared by mlp_train.c (the loop) and
 * mlp_gradcheck.c (the finite-difference check of the gradient graph). */
#ifndef MLP_TRAINER_H
#define MLP_TRAINER_H

#include <optic/optic.h>

#include "mlp_data.h"
#include "mlp_model.h"

#define SHARDS 4 /* the global batch is always 4 shards, whatever runs them */

typedef struct options {
  int64_t steps, batch, hidden, train_size, test_size, epoch_steps;
  int cores, threads, ckpt_every, keep;
  uint64_t seed;
  double lr, min_lr;
  int64_t warmup, kill_at_step;
  const char *ckpt_dir, *dump_hlo;
  optic_optim_kind optimizer;
  bool resume, mpi, gradcheck, hand_gradients;
} options;

typedef struct model {
  mlp_dims dims;
  size_t count[MLP_PARAMS], total;
  float *params; /* all parameters, one block */
  optic_tensor p[MLP_PARAMS];
} model;

typedef struct trainer {
  options o;
  int rank, ranks;
  model md;
  dataset train, test;
  optic_module_t *train_mod, *fwd_mod;
  optic_program_t *train_prog, *fwd_prog;
  optic_exec_ctx_t *ctx[SHARDS]; /* one per pod core (or one) */
  optic_pod_t *pod;              /* NULL with one core */
  optic_pod_mpi_t *mpi;          /* --mpi */
  optic_optim_t *opt;
  optic_step_engine_t *engine;
  int64_t shard_batch;
  float grad_scale; /* 1 / global batch: the gradient program's seed input */
  float *xb, *yb;   /* the global batch: batch x in, batch x classes (one-hot) */
  float *gathered;  /* per core: SHARDS x total gradients */
  float *grad;      /* the reduced gradient */
  optic_tensor gt[MLP_PARAMS];
  float shard_loss[SHARDS];
  int first_shard, local_shards; /* this process's shards (all 4 unless --mpi) */
  /* what a checkpoint keeps besides the parameters and the optimizer */
  uint64_t step, rng;
  double epoch_loss;
} trainer;

extern const char *const mlp_param_names[MLP_PARAMS];

/* Views of MLP_PARAMS consecutive tensors over base (the parameters' layout). */
void tensors_over(const model *md, float *base, optic_tensor *out);
/* Runs the gradient program on shard `shard` of the batch in t->xb/t->yb. */
optic_status shard_gradients(trainer *t, optic_exec_ctx_t *ctx, int shard, float *grad_out);
/* --gradcheck: the graph's gradients of shard 0 against central differences
 * of a double-precision host forward pass. 0 when all agree. */
int gradient_check(trainer *t);

#endif /* MLP_TRAINER_H */
