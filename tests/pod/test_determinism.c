/* Determinism with data whose sums do round: random floats, all-reduce sum
 * and mean and reduce-scatter, 10 repeats per run and two runs. Every core's
 * result must be bitwise the first core's, every repeat bitwise the first,
 * and within the summation error bound of a double-precision reference. */
#include <math.h>
#include <stdlib.h>

#include "tests/pod/pod_test.h"

#define LEN 65537
#define REPEATS 10

typedef struct det_job {
  int n;
  optic_dtype dt;
  optic_pod_op op;
  bool scatter;
  float *in32; /* n * LEN inputs */
  double *in64;
  unsigned char *first; /* core 0's first result, bytes */
  unsigned char *out[OPTIC_POD_MAX_CORES];
  pod_test_notes notes;
} det_job;

static optic_status det_body(optic_pod_core_t *c, void *user) {
  det_job *j = user;
  const int me = optic_pod_core_index(c);
  const size_t es = optic_dtype_size(j->dt);
  void *buf = j->out[me];
  size_t off, len;
  optic_pod_shard(LEN, j->n, me, &off, &len);
  for (int r = 0; r < REPEATS; r++) {
    const void *src =
        j->dt == OPTIC_F32 ? (const void *)(j->in32 + (size_t)me * LEN) : (const void *)(j->in64 + (size_t)me * LEN);
    optic_status st = j->scatter ? optic_pod_reduce_scatter(c, src, (char *)buf + off * es, LEN, j->dt, j->op)
                                 : optic_pod_all_reduce(c, src, buf, LEN, j->dt, j->op);
    if (st != OPTIC_OK) {
      pod_note(&j->notes, me, "repeat %d: %s", r, optic_last_error());
      return st;
    }
    /* every core and repeat against the stored first result */
    if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
    size_t from = j->scatter ? off : 0, cnt = j->scatter ? len : LEN;
    if (memcmp((char *)buf + from * es, j->first + from * es, cnt * es) != 0) {
      pod_note(&j->notes, me, "repeat %d: result differs from the first result bitwise", r);
    }
    if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static optic_status first_body(optic_pod_core_t *c, void *user) {
  det_job *j = user;
  const int me = optic_pod_core_index(c);
  const size_t es = optic_dtype_size(j->dt);
  size_t off, len;
  optic_pod_shard(LEN, j->n, me, &off, &len);
  const void *src =
      j->dt == OPTIC_F32 ? (const void *)(j->in32 + (size_t)me * LEN) : (const void *)(j->in64 + (size_t)me * LEN);
  if (j->scatter) return optic_pod_reduce_scatter(c, src, j->first + off * es, LEN, j->dt, j->op);
  /* all cores write; then check they agree before the repeats */
  optic_status st = optic_pod_all_reduce(c, src, j->out[me], LEN, j->dt, j->op);
  if (st == OPTIC_OK) st = optic_pod_barrier(c);
  if (st != OPTIC_OK) return st;
  if (memcmp(j->out[me], j->out[0], LEN * es) != 0) pod_note(&j->notes, me, "differs bitwise from core 0");
  if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
  if (me == 0) memcpy(j->first, j->out[0], LEN * es);
  return OPTIC_OK;
}

static void run(const optic_topology *t, optic_dtype dt, optic_pod_op op, bool scatter) {
  det_job *j = calloc(1, sizeof *j);
  const int n = t->cores;
  j->n = n;
  j->dt = dt;
  j->op = op;
  j->scatter = scatter;
  j->in32 = malloc(sizeof(float) * (size_t)n * LEN);
  j->in64 = malloc(sizeof(double) * (size_t)n * LEN);
  j->first = malloc(8 * LEN);
  uint64_t s = 0x243F6A8885A308D3ull;
  for (size_t i = 0; i < (size_t)n * LEN; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    double u = (double)(s >> 11) / 9007199254740992.0 * 2 - 1; /* [-1, 1) */
    double v = u * exp2((double)(int)(s % 17) - 8);            /* magnitudes 2^-8 .. 2^8 */
    j->in32[i] = (float)v;
    j->in64[i] = v;
  }
  for (int k = 0; k < n; k++) j->out[k] = malloc(8 * LEN);
  optic_pod_options o = {.size = sizeof o, .topology = t, .chunk_bytes = 4096};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  OT_EXPECT_OK(optic_pod_run(pod, first_body, j, NULL));
  for (int runs = 0; runs < 2; runs++) OT_EXPECT_OK(optic_pod_run(pod, det_body, j, NULL));
  pod_notes_report(&j->notes, n, t->name);
  /* against a double reference: |err| <= (n-1) * eps * sum|x| (+ one rounding for mean) */
  const double eps = dt == OPTIC_F32 ? 0x1p-24 : 0x1p-53;
  for (size_t i = 0; i < LEN; i++) {
    double ref = 0, mag = 0;
    for (int k = 0; k < n; k++) {
      double x = dt == OPTIC_F32 ? (double)j->in32[(size_t)k * LEN + i] : j->in64[(size_t)k * LEN + i];
      ref += x;
      mag += fabs(x);
    }
    double got = dt == OPTIC_F32 ? (double)((float *)j->first)[i] : ((double *)j->first)[i];
    double scale = op == OPTIC_POD_MEAN ? 1.0 / n : 1.0;
    double tol = ((n - 1) * eps * mag + eps * fabs(ref)) * scale * 1.01;
    if (!(fabs(got - ref * scale) <= tol)) {
      OT_CHECK(false, "%s [%zu] = %.17g, reference %.17g, tolerance %.3g", t->name, i, got, ref * scale, tol);
      break;
    }
  }
  optic_pod_destroy(pod);
  for (int k = 0; k < n; k++) free(j->out[k]);
  free(j->in32);
  free(j->in64);
  free(j->first);
  free(j);
}

static void test_ring_3_f32_sum(void) {
  optic_topology t;
  optic_topology_ring(3, true, &t);
  run(&t, OPTIC_F32, OPTIC_POD_SUM, false);
}
static void test_ring_7_f64_mean(void) {
  optic_topology t;
  optic_topology_ring(7, true, &t);
  run(&t, OPTIC_F64, OPTIC_POD_MEAN, false);
}
static void test_ring_16_f32_mean(void) {
  optic_topology t;
  optic_topology_ring(16, true, &t);
  run(&t, OPTIC_F32, OPTIC_POD_MEAN, false);
}
static void test_torus_2x2x2_f32_sum(void) {
  optic_topology t;
  int d[3] = {2, 2, 2};
  optic_topology_torus(3, d, NULL, &t);
  run(&t, OPTIC_F32, OPTIC_POD_SUM, false);
}
static void test_reduce_scatter_5_f32(void) {
  optic_topology t;
  optic_topology_ring(5, true, &t);
  run(&t, OPTIC_F32, OPTIC_POD_SUM, true);
}

static const ot_case cases[] = {
    {"ring_3_f32_sum", test_ring_3_f32_sum},
    {"ring_7_f64_mean", test_ring_7_f64_mean},
    {"ring_16_f32_mean", test_ring_16_f32_mean},
    {"torus_2x2x2_f32_sum", test_torus_2x2x2_f32_sum},
    {"reduce_scatter_5_f32", test_reduce_scatter_5_f32},
};

int main(int argc, char **argv) {
  pod_test_watchdog(100);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
