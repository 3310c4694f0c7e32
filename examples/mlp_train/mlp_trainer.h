/* mlp_trainer: the trainer's state, shared by mlp_train.c (the loop),
 * models.c (the two models as the loop sees them) and mlp_gradcheck.c (the
 * finite-difference check of the gradient graph). */
#ifndef MLP_TRAINER_H
#define MLP_TRAINER_H

#include <optic/optic.h>

#include "conv_model.h"
#include "mlp_data.h"
#include "mlp_model.h"

#define SHARDS 4     /* the global batch is always 4 shards, whatever runs them */
#define MAX_PARAMS 6 /* parameter tensors of either model */

typedef enum model_kind { MODEL_MLP, MODEL_CONV } model_kind;

typedef struct options {
  model_kind model;
  int64_t steps, batch, hidden, channels, train_size, test_size, epoch_steps;
  int cores, threads, ckpt_every, keep;
  uint64_t seed;
  double lr, min_lr;
  int64_t warmup, kill_at_step;
  const char *ckpt_dir, *dump_hlo;
  optic_optim_kind optimizer;
  bool resume, mpi, gradcheck, hand_gradients;
} options;

/* The model as the loop sees it: n parameter tensors (the graphs' first n
 * parameters), samples of `in` floats, `classes` labels. */
typedef struct model {
  model_kind kind;
  mlp_dims dims;   /* MODEL_MLP */
  conv_dims cdims; /* MODEL_CONV */
  char summary[96];
  int n;
  int64_t in, classes;
  optic_shape shape[MAX_PARAMS];
  const char *name[MAX_PARAMS]; /* checkpoint entry names */
  size_t count[MAX_PARAMS], total;
  float *params; /* all parameters, one block */
  optic_tensor p[MAX_PARAMS];
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
  optic_tensor gt[MAX_PARAMS];
  float shard_loss[SHARDS];
  int first_shard, local_shards; /* this process's shards (all 4 unless --mpi) */
  /* what a checkpoint keeps besides the parameters and the optimizer */
  uint64_t step, rng;
  double epoch_loss;
} trainer;

/* models.c: describes the model o->model (shapes, names, sizes) and draws
 * its initial parameters (He normal for weights, zero biases) from rng. */
void model_init(model *md, const options *o, uint64_t *rng);
/* Views of md->n consecutive tensors over base (the parameters' layout). */
void tensors_over(const model *md, float *base, optic_tensor *out);
/* The model's training graph for shards of `batch` and its forward graph. */
optic_status model_build(const model *md, int64_t batch, int64_t test_batch, bool hand_gradients,
                         optic_module_t **train, optic_module_t **forward);
/* Generates the model's data set (mlp_data.h): teacher-labelled vectors for
 * the MLP, pattern images for the convnet. */
void model_data(const model *md, uint64_t seed, int64_t n_train, int64_t n_test, dataset *train, dataset *test);
/* Runs the gradient program on shard `shard` of the batch in t->xb/t->yb. */
optic_status shard_gradients(trainer *t, optic_exec_ctx_t *ctx, int shard, float *grad_out);
/* --gradcheck: the graph's gradients of shard 0 against central differences
 * of a double-precision host forward pass. 0 when all agree. */
int gradient_check(trainer *t);

#endif /* MLP_TRAINER_H */
