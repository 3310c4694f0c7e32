/* The MPI backend under mpirun (-np 2 and -np 4, registered in
 * tests/CMakeLists.txt when MPI is built): every collective x op x dtype x
 * lengths {0,1,n-1,n+1,1000,65537} against a serial reference with exact
 * data; random data bitwise equal across ranks and to an emulated pod of as
 * many cores; the timeout path (a rank that never joins) returns TIMEOUT
 * and then PEER_FAILED instead of hanging. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "tests/pod/pod_test.h"

static int rank_, size_;
/* m_ has the shared-memory window (its all-reduces of up to 65538 doubles
 * take the shared-memory ring), msg_ sends messages only. */
static optic_pod_mpi_t *m_, *msg_;

static double value_of(int r, size_t i) { return (double)((int)((r * 131 + i * 29) % 61) - 30) * 0.25; }
static double get(const void *p, optic_dtype dt, size_t i) {
  return dt == OPTIC_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void put(void *p, optic_dtype dt, size_t i, double v) {
  if (dt == OPTIC_F32) {
    ((float *)p)[i] = (float)v;
  } else {
    ((double *)p)[i] = v;
  }
}

static double reference(optic_pod_op op, optic_dtype dt, size_t i) {
  double acc = value_of(0, i);
  for (int r = 1; r < size_; r++) {
    double v = value_of(r, i);
    acc = op == OPTIC_POD_MAX ? fmax(acc, v) : op == OPTIC_POD_MIN ? fmin(acc, v) : acc + v;
  }
  if (op == OPTIC_POD_MEAN) acc = dt == OPTIC_F32 ? (double)((float)acc / (float)size_) : acc / size_;
  return acc;
}

static void sweep(optic_pod_mpi_t *h) {
  const size_t lens[6] = {0, 1, (size_t)size_ - 1, (size_t)size_ + 1, 1000, 65537};
  const optic_pod_op ops[4] = {OPTIC_POD_SUM, OPTIC_POD_MEAN, OPTIC_POD_MAX, OPTIC_POD_MIN};
  char *a = malloc(65538 * 8), *b = malloc(65538 * 8);
  for (int di = 0; di < 2; di++) {
    optic_dtype dt = di ? OPTIC_F64 : OPTIC_F32;
    size_t es = optic_dtype_size(dt);
    for (int li = 0; li < 6; li++) {
      size_t len = lens[li], off, slen;
      optic_pod_shard(len, size_, rank_, &off, &slen);
      for (int inplace = 0; inplace < 2; inplace++) {
        for (int o = 0; o < 4; o++) {
          for (size_t i = 0; i < len; i++) put(a, dt, i, value_of(rank_, i));
          void *out = inplace ? a : b;
          OT_EXPECT_OK(optic_pod_mpi_all_reduce(h, a, out, len, dt, ops[o]));
          for (size_t i = 0; i < len; i++) {
            if (get(out, dt, i) != reference(ops[o], dt, i)) {
              OT_CHECK(false, "all_reduce %s %s len %zu [%zu] = %g, want %g", optic_pod_op_name(ops[o]),
                       optic_dtype_name(dt), len, i, get(out, dt, i), reference(ops[o], dt, i));
              break;
            }
          }
          for (size_t i = 0; i < len; i++) put(a, dt, i, value_of(rank_, i));
          char *sh = inplace ? a + off * es : b;
          OT_EXPECT_OK(optic_pod_mpi_reduce_scatter(h, a, sh, len, dt, ops[o]));
          for (size_t i = 0; i < slen; i++) {
            if (get(sh, dt, i) != reference(ops[o], dt, off + i)) {
              OT_CHECK(false, "reduce_scatter %s len %zu shard[%zu]", optic_pod_op_name(ops[o]), len, i);
              break;
            }
          }
        }
        /* all-gather of g(i) = 3 value_of(0, i) */
        char *src = inplace ? b + off * es : a;
        for (size_t i = 0; i < slen; i++) put(src, dt, i, 3 * value_of(0, off + i));
        OT_EXPECT_OK(optic_pod_mpi_all_gather(h, src, b, len, dt));
        for (size_t i = 0; i < len; i++) {
          if (get(b, dt, i) != 3 * value_of(0, i)) {
            OT_CHECK(false, "all_gather %s len %zu [%zu]", optic_dtype_name(dt), len, i);
            break;
          }
        }
        int root = (int)((len + (size_t)inplace) % (size_t)size_);
        for (size_t i = 0; i < len; i++) put(a, dt, i, rank_ == root ? value_of(root, i) : NAN);
        OT_EXPECT_OK(optic_pod_mpi_broadcast(h, a, len, dt, root));
        for (size_t i = 0; i < len; i++) {
          if (get(a, dt, i) != value_of(root, i)) {
            OT_CHECK(false, "broadcast len %zu root %d [%zu]", len, root, i);
            break;
          }
        }
      }
    }
  }
  free(a);
  free(b);
}

static void test_sweep_shm(void) {
  OT_CHECK(optic_pod_mpi_window(m_, NULL) != NULL, "the shared-memory window is off");
  sweep(m_);
}
static void test_sweep_messages(void) {
  OT_CHECK(optic_pod_mpi_window(msg_, NULL) == NULL);
  sweep(msg_);
}

/* random data: bitwise equal on every rank and to an emulated pod's ring */
#define RLEN 100003
typedef struct emu {
  float *in;
  float *out0;
} emu;

static float rnd(int r, size_t i) {
  uint64_t x = (uint64_t)r * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 32;
  return (float)((double)(x % 2000001) / 1000000.0 - 1.0) * (float)(1 + (x >> 40) % 100);
}

static optic_status emu_body(optic_pod_core_t *c, void *user) {
  emu *e = user;
  int me = optic_pod_core_index(c);
  float *buf = malloc(RLEN * sizeof(float));
  for (size_t i = 0; i < RLEN; i++) buf[i] = rnd(me, i);
  optic_status st = optic_pod_all_reduce(c, buf, buf, RLEN, OPTIC_F32, OPTIC_POD_MEAN);
  if (me == 0) memcpy(e->out0, buf, RLEN * sizeof(float));
  free(buf);
  return st;
}

static void bitwise(optic_pod_mpi_t *h, bool in_window) {
  size_t wbytes = 0;
  float *win = optic_pod_mpi_window(h, &wbytes);
  float *x = in_window ? win : malloc(RLEN * sizeof(float)), *all = malloc(RLEN * sizeof(float) * (size_t)size_);
  OT_CHECK(!in_window || wbytes >= RLEN * sizeof(float));
  for (size_t i = 0; i < RLEN; i++) x[i] = rnd(rank_, i);
  optic_tensor t;
  optic_shape s;
  int64_t dims[1] = {RLEN};
  OT_EXPECT_OK(optic_shape_make(1, dims, &s));
  OT_EXPECT_OK(optic_tensor_make(OPTIC_F32, &s, x, &t));
  OT_EXPECT_OK(optic_pod_mpi_all_reduce_mean(h, &t));
  MPI_Allgather(x, RLEN, MPI_FLOAT, all, RLEN, MPI_FLOAT, MPI_COMM_WORLD);
  for (int r = 1; r < size_; r++) {
    OT_CHECK(memcmp(all, all + (size_t)r * RLEN, RLEN * sizeof(float)) == 0, "rank %d differs from rank 0", r);
  }
  if (rank_ == 0) {
    emu e = {NULL, malloc(RLEN * sizeof(float))};
    optic_pod_options o = {.size = sizeof o, .cores = size_};
    optic_pod_t *pod = NULL;
    OT_EXPECT_OK(optic_pod_create(&o, &pod));
    OT_EXPECT_OK(optic_pod_run(pod, emu_body, &e, NULL));
    OT_CHECK(memcmp(e.out0, x, RLEN * sizeof(float)) == 0, "the MPI ring and the emulated pod differ");
    optic_pod_destroy(pod);
    free(e.out0);
  }
  if (!in_window) free(x);
  free(all);
}

static void test_bitwise(void) {
  bitwise(m_, true);  /* gradients kept in the shared window: no copies */
  bitwise(m_, false); /* user buffer through the shared-memory ring */
  bitwise(msg_, false);
}

/* In place in the window at lengths around the 64 KiB chunk of the shared-
 * memory paths (segments of chunk-1, chunk, chunk+1 and 2 chunks + 1 at two
 * ranks), every op and dtype, back to back: every element the serial
 * reference, and the window's bytes past the length untouched. */
static void test_window_edges(void) {
  size_t wbytes = 0;
  char *win = optic_pod_mpi_window(m_, &wbytes);
  OT_CHECK(win != NULL, "the shared-memory window is off");
  if (win == NULL) return;
  const optic_pod_op ops[4] = {OPTIC_POD_SUM, OPTIC_POD_MEAN, OPTIC_POD_MAX, OPTIC_POD_MIN};
  for (int di = 0; di < 2; di++) {
    const optic_dtype dt = di ? OPTIC_F64 : OPTIC_F32;
    const size_t es = optic_dtype_size(dt), ce = ((size_t)64 << 10) / es;
    const size_t lens[7] = {2 * ce - 2, 2 * ce - 1, 2 * ce, 2 * ce + 1, 2 * ce + 2, 4 * ce + 2, 4 * ce + 3};
    for (int li = 0; li < 7; li++) {
      const size_t len = lens[li];
      OT_CHECK((len + 4) * es <= wbytes, "window of %zu bytes too small for %zu elements", wbytes, len + 4);
      if ((len + 4) * es > wbytes) return;
      for (int o = 0; o < 4; o++) {
        for (size_t i = 0; i < len; i++) put(win, dt, i, value_of(rank_, i));
        for (size_t i = len; i < len + 4; i++) put(win, dt, i, -1000.0 - (double)i);
        OT_EXPECT_OK(optic_pod_mpi_all_reduce(m_, win, win, len, dt, ops[o]));
        for (size_t i = 0; i < len + 4; i++) {
          double want = i < len ? reference(ops[o], dt, i) : -1000.0 - (double)i;
          if (get(win, dt, i) != want) {
            OT_CHECK(false, "window all_reduce %s %s len %zu [%zu] = %g, want %g (rerun: mpirun -np %d %s)",
                     optic_pod_op_name(ops[o]), optic_dtype_name(dt), len, i, get(win, dt, i), want, size_,
                     "tests/pod_mpi_collectives");
            break;
          }
        }
      }
    }
  }
}

/* A rank that never joins: rank 0 times out, then the handle refuses calls. */
static void timeout(size_t shm_bytes) {
  optic_pod_mpi_options o = {.size = sizeof o, .timeout_ns = 200000000ull, .shm_bytes = shm_bytes};
  optic_pod_mpi_t *h = NULL;
  OT_EXPECT_OK(optic_pod_mpi_create(&o, &h));
  if (rank_ == 0) {
    float v[4] = {1, 2, 3, 4};
    uint64_t t0 = optic_now_ns();
    OT_EXPECT_STATUS(optic_pod_mpi_all_reduce(h, v, v, 4, OPTIC_F32, OPTIC_POD_SUM), OPTIC_ERR_TIMEOUT);
    uint64_t dt = optic_now_ns() - t0;
    OT_CHECK(dt >= 200000000ull && dt < 5000000000ull, "timed out after %.1f ms", dt * 1e-6);
    OT_EXPECT_STATUS(optic_pod_mpi_barrier(h), OPTIC_ERR_PEER_FAILED);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  optic_pod_mpi_destroy(h);
}

static void test_timeout(void) {
  timeout(0);    /* message ring */
  timeout(4096); /* shared-memory ring */
}

static void test_barrier_and_errors(void) {
  for (int i = 0; i < 50; i++) OT_EXPECT_OK(optic_pod_mpi_barrier(m_));
  float v = 0;
  OT_EXPECT_STATUS(optic_pod_mpi_all_reduce(m_, &v, &v, 1, OPTIC_S32, OPTIC_POD_SUM), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_pod_mpi_broadcast(m_, &v, 1, OPTIC_F32, size_), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_pod_mpi_rank(m_) == rank_ && optic_pod_mpi_size(m_) == size_);
  /* zero elements with NULL buffers are legal everywhere */
  OT_EXPECT_OK(optic_pod_mpi_all_reduce(m_, NULL, NULL, 0, OPTIC_F32, OPTIC_POD_SUM));
  OT_EXPECT_OK(optic_pod_mpi_reduce_scatter(m_, NULL, NULL, 0, OPTIC_F64, OPTIC_POD_MEAN));
  OT_EXPECT_OK(optic_pod_mpi_all_gather(m_, NULL, NULL, 0, OPTIC_F32));
  OT_EXPECT_OK(optic_pod_mpi_broadcast(m_, NULL, 0, OPTIC_F32, 0));
  OT_EXPECT_OK(optic_pod_mpi_barrier(m_));
}

/* A pod of 2 cores inside every rank: hierarchical all-reduce over all of them. */
typedef struct hier {
  pod_test_notes notes;
} hier;

static optic_status hier_body(optic_pod_core_t *c, void *user) {
  hier *h = user;
  const int me = optic_pod_core_index(c), P = optic_pod_core_count(c), R = size_;
  const size_t lens[4] = {0, 1, 1000, 65537};
  const optic_pod_op ops[4] = {OPTIC_POD_SUM, OPTIC_POD_MEAN, OPTIC_POD_MAX, OPTIC_POD_MIN};
  double *x = malloc(65537 * sizeof(double)), *y = malloc(65537 * sizeof(double));
  optic_status st = OPTIC_OK;
  for (int di = 0; di < 2 && st == OPTIC_OK; di++) {
    optic_dtype dt = di ? OPTIC_F64 : OPTIC_F32;
    for (int li = 0; li < 4 && st == OPTIC_OK; li++) {
      for (int o = 0; o < 4 && st == OPTIC_OK; o++) {
        size_t len = lens[li];
        for (size_t i = 0; i < len; i++) put(x, dt, i, value_of(rank_ * P + me, i));
        st = optic_pod_hier_all_reduce(c, m_, x, y, len, dt, ops[o]);
        if (st != OPTIC_OK) {
          pod_note(&h->notes, me, "%s", optic_last_error());
          break;
        }
        for (size_t i = 0; i < len; i++) {
          double acc = value_of(0, i);
          for (int k = 1; k < R * P; k++) {
            double v = value_of(k, i);
            acc = ops[o] == OPTIC_POD_MAX ? fmax(acc, v) : ops[o] == OPTIC_POD_MIN ? fmin(acc, v) : acc + v;
          }
          if (ops[o] == OPTIC_POD_MEAN) acc = dt == OPTIC_F32 ? (double)((float)acc / (float)(R * P)) : acc / (R * P);
          if (get(y, dt, i) != acc) {
            pod_note(&h->notes, me, "hier %s %s len %zu [%zu] = %g, want %g", optic_pod_op_name(ops[o]),
                     optic_dtype_name(dt), len, i, get(y, dt, i), acc);
            break;
          }
        }
      }
    }
  }
  free(x);
  free(y);
  return st;
}

static void test_hierarchical(void) {
  hier *h = calloc(1, sizeof *h);
  optic_pod_options o = {.size = sizeof o, .cores = 2};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  OT_EXPECT_OK(optic_pod_run(pod, hier_body, h, NULL));
  pod_notes_report(&h->notes, 2, "hierarchical");
  optic_pod_destroy(pod);
  free(h);
}

/* One rank late by more than the pod's heartbeat timeout (what a loaded
 * machine does to a descheduled rank): core 0 of the others waits inside
 * the MPI all-reduce meanwhile, and its pod peers must not take that
 * silence for a failure. Every core gets the right sum. */
static optic_status late_body(optic_pod_core_t *c, void *user) {
  int *bad = user;
  const int me = optic_pod_core_index(c), P = optic_pod_core_count(c);
  float x[3] = {1, (float)(rank_ * P + me), 2}, y[3];
  optic_status st = optic_pod_hier_all_reduce(c, m_, x, y, 3, OPTIC_F32, OPTIC_POD_SUM);
  const int n = size_ * P;
  if (st != OPTIC_OK) {
    fprintf(stderr, "rank %d core %d: %s\n", rank_, me, optic_last_error());
    bad[me] = 1;
  } else if (y[0] != (float)n || y[1] != (float)(n * (n - 1) / 2) || y[2] != (float)(2 * n)) {
    bad[me] = 2;
  }
  return st;
}

static void test_late_rank(void) {
  optic_pod_options o = {.size = sizeof o, .cores = 2, .heartbeat_timeout_ns = 100000000ull};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  if (rank_ == size_ - 1) {
    struct timespec ts = {0, 400000000L}; /* 4 heartbeat timeouts late */
    nanosleep(&ts, NULL);
  }
  int bad[2] = {0, 0};
  OT_EXPECT_OK(optic_pod_run(pod, late_body, bad, NULL));
  OT_CHECK(bad[0] == 0 && bad[1] == 0, "rank %d: core results %d %d (1: failed, 2: wrong sum)", rank_, bad[0], bad[1]);
  optic_pod_destroy(pod);
  MPI_Barrier(MPI_COMM_WORLD);
}

static const ot_case cases[] = {
    {"hierarchical", test_hierarchical}, {"late_rank", test_late_rank},
    {"sweep_shm", test_sweep_shm},       {"sweep_messages", test_sweep_messages},
    {"bitwise", test_bitwise},           {"barrier_and_errors", test_barrier_and_errors},
    {"timeout", test_timeout},           {"window_edges", test_window_edges},
};

int main(int argc, char **argv) {
  pod_test_watchdog(120);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  optic_pod_mpi_options o = {
      .size = sizeof o, .chunk_bytes = 4096, .timeout_ns = 60000000000ull, .shm_bytes = 65538 * 8};
  optic_pod_mpi_options mo = {.size = sizeof mo, .chunk_bytes = 4096, .timeout_ns = 60000000000ull};
  if (optic_pod_mpi_create(&o, &m_) != OPTIC_OK || optic_pod_mpi_create(&mo, &msg_) != OPTIC_OK) {
    fprintf(stderr, "rank %d: %s\n", rank_, optic_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rc = ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
  optic_pod_mpi_destroy(m_);
  optic_pod_mpi_destroy(msg_);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
