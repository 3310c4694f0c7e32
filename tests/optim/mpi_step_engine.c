/* The step engine over MPI (under mpirun -np 2 and -np 4, registered in
 * tests/CMakeLists.txt when MPI is built): every rank steps an AdamW
 * optimizer through an engine with the MPI handle, on its own gradients
 * (multiples of 2^-8, so their mean is exact in any order); each rank also
 * runs a local 1-core engine without MPI on the mean it computes itself.
 * Both must agree bitwise, so every rank ends with the same parameters.
 * Then the hierarchical path: a 2-core pod in each rank (cores x ranks
 * replicas) against the local engine on the mean over all of them. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tests/optim/optim_test_util.h"
#include "tests/pod/pod_test.h"

static int rank_, size_;
static optic_pod_mpi_t *m_;

enum { NT = 3 };
static const int64_t dims_[NT] = {1, 1000, 4099};

static void grad_of(int who, int step, size_t t, float *g, size_t n) {
  for (size_t i = 0; i < n; i++) g[i] = (float)((int)((who * 131 + step * 17 + t * 7 + i * 29) % 61) - 30) / 256.0f;
}

typedef struct model {
  float *p[NT], *g[NT];
  optic_tensor tp[NT], tg[NT];
  optic_shape s[NT];
} model;

static void model_make(model *m) {
  for (int i = 0; i < NT; i++) {
    optic_shape_make(1, &dims_[i], &m->s[i]);
    m->p[i] = malloc((size_t)dims_[i] * 4), m->g[i] = malloc((size_t)dims_[i] * 4);
    for (int64_t k = 0; k < dims_[i]; k++) m->p[i][k] = (float)(k % 13) / 8.0f - 0.75f;
    optic_tensor_make(OPTIC_F32, &m->s[i], m->p[i], &m->tp[i]);
    optic_tensor_make(OPTIC_F32, &m->s[i], m->g[i], &m->tg[i]);
  }
}

static void model_free(model *m) {
  for (int i = 0; i < NT; i++) free(m->p[i]), free(m->g[i]);
}

static optic_optim_t *make_opt(const model *m) {
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  optic_optim_hparams h;
  OT_EXPECT_OK(optic_optim_hparams_default(OPTIC_OPTIM_KIND_ADAMW, OPTIC_OPTIM_CONVENTION_PYTORCH, &h));
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, NT, m->s, NULL));
  return opt;
}

/* `cores` replicas per rank: the reference is the mean over cores x ranks. */
static void run(int cores) {
  model rep[2], ref;
  const optic_tensor *tp[2], *tg[2];
  for (int c = 0; c < cores; c++) {
    model_make(&rep[c]);
    tp[c] = rep[c].tp, tg[c] = rep[c].tg;
  }
  model_make(&ref);
  optic_optim_t *opt = make_opt(&rep[0]), *oref = make_opt(&ref);
  optic_step_engine_options o = optic_step_engine_options_default();
  o.mpi = m_;
  o.cores = cores;
  optic_machine mach;
  OT_EXPECT_OK(optic_machine_preset("host-default", &mach));
  o.machine = &mach;
  optic_step_engine_t *e = NULL, *eref = NULL;
  OT_EXPECT_OK(optic_step_engine_create(opt, &o, &e));
  optic_step_engine_options lo = optic_step_engine_options_default();
  lo.machine = &mach;
  OT_EXPECT_OK(optic_step_engine_create(oref, &lo, &eref));
  const int total = cores * size_;
  for (int s = 0; s < 4; s++) {
    for (size_t t = 0; t < NT; t++) {
      const size_t n = (size_t)dims_[t];
      for (int c = 0; c < cores; c++) grad_of(rank_ * cores + c, s, t, rep[c].g[t], n);
      for (size_t i = 0; i < n; i++) ref.g[t][i] = 0.0f;
      float *tmp = malloc(n * 4);
      for (int w = 0; w < total; w++) {
        grad_of(w, s, t, tmp, n);
        for (size_t i = 0; i < n; i++) ref.g[t][i] += tmp[i];
      }
      for (size_t i = 0; i < n; i++) ref.g[t][i] /= (float)total;
      free(tmp);
    }
    if (cores == 1) OT_EXPECT_OK(optic_step_engine_step(e, rep[0].tp, rep[0].tg, NT));
    else OT_EXPECT_OK(optic_step_engine_step_replicas(e, tp, tg, NT));
    OT_EXPECT_OK(optic_step_engine_step(eref, ref.tp, ref.tg, NT));
  }
  for (int c = 0; c < cores; c++)
    for (int t = 0; t < NT; t++)
      OT_CHECK(memcmp(rep[c].p[t], ref.p[t], (size_t)dims_[t] * 4) == 0,
               "rank %d core %d tensor %d differs from the mean reference", rank_, c, t);
  optic_step_engine_metrics mm;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &mm));
  OT_CHECK(mm.steps == 4 && mm.allreduce_bytes_per_step > 0 && mm.est_allreduce_ns > 0);
  optic_step_engine_destroy(e);
  optic_step_engine_destroy(eref);
  optic_optim_destroy(opt);
  optic_optim_destroy(oref);
  for (int c = 0; c < cores; c++) model_free(&rep[c]);
  model_free(&ref);
}

static void mpi_one_core_per_rank(void) { run(1); }
static void mpi_two_cores_per_rank(void) { run(2); }

static const ot_case cases[] = {
    {"mpi_one_core_per_rank", mpi_one_core_per_rank},
    {"mpi_two_cores_per_rank", mpi_two_cores_per_rank},
};

int main(int argc, char **argv) {
  pod_test_watchdog(120);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  optic_pod_mpi_options o = {.size = sizeof o, .timeout_ns = 60000000000ull};
  if (optic_pod_mpi_create(&o, &m_) != OPTIC_OK) {
    fprintf(stderr, "rank %d: %s\n", rank_, optic_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rc = ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
  optic_pod_mpi_destroy(m_);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
