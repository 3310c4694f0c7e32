/* The single-ring all-reduce's chunk-level pipelining (the all-gather half
 * starts on a chunk as soon as the predecessor has reduced it, with no
 * barrier between the halves): back-to-back in-place all-reduces where every
 * core writes a fresh input each round, with tiny chunks (many pipeline
 * units) and one core made late in turn, so a chunk read before its owner
 * wrote it, or overwritten before the successor read it, shows up as a wrong
 * sum. Quarter-integer inputs make every sum exact. */
#include <stdlib.h>

#include "tests/pod/pod_test.h"

#define ROUNDS 60

typedef struct pipe_job {
  int n;
  size_t len;
  optic_pod_op op;
  float *buf[OPTIC_POD_MAX_CORES];
  pod_test_notes notes;
} pipe_job;

static float input(int core, int round, size_t i) {
  return (float)(((size_t)core * 7 + i * 3 + (size_t)round * 5) % 64) * 0.25f;
}

/* Keeps a core busy for a while without sleeping (a late core). */
static void dawdle(unsigned iters) {
  for (unsigned i = 0; i < iters; i++) __asm__ __volatile__("" ::: "memory");
}

static optic_status pipe_body(optic_pod_core_t *c, void *user) {
  pipe_job *j = user;
  const int me = optic_pod_core_index(c);
  float *x = j->buf[me];
  for (int r = 0; r < ROUNDS; r++) {
    if (r % j->n == me) dawdle(20000u * (unsigned)(r % 3));
    for (size_t i = 0; i < j->len; i++) x[i] = input(me, r, i);
    optic_status st = optic_pod_all_reduce(c, x, x, j->len, OPTIC_F32, j->op);
    if (st != OPTIC_OK) {
      pod_note(&j->notes, me, "round %d: %s", r, optic_last_error());
      return st;
    }
    for (size_t i = 0; i < j->len; i++) {
      float want = 0.0f;
      for (int k = 0; k < j->n; k++) {
        float v = input(k, r, i);
        want = j->op == OPTIC_POD_MAX ? (k == 0 || v > want ? v : want) : want + v;
      }
      if (x[i] != want) {
        pod_note(&j->notes, me, "round %d element %zu: %g, want %g", r, i, (double)x[i], (double)want);
        break;
      }
    }
  }
  return OPTIC_OK;
}

static void run(int n, size_t len, size_t chunk_bytes, optic_pod_op op) {
  pipe_job *j = calloc(1, sizeof *j);
  j->n = n;
  j->len = len;
  j->op = op;
  for (int k = 0; k < n; k++) j->buf[k] = calloc(len + 1, sizeof(float));
  optic_pod_options o = {.size = sizeof o, .cores = n, .chunk_bytes = chunk_bytes};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  if (pod != NULL) {
    OT_EXPECT_OK(optic_pod_run(pod, pipe_body, j, NULL));
    pod_notes_report(&j->notes, n, "pipeline");
  }
  optic_pod_destroy(pod);
  for (int k = 0; k < n; k++) free(j->buf[k]);
  free(j);
}

/* 2 cores: predecessor and successor are the same core */
static void test_two_cores_tiny_chunks(void) { run(2, 4099, 64, OPTIC_POD_SUM); }
static void test_two_cores_one_chunk(void) { run(2, 1000, 1 << 20, OPTIC_POD_SUM); }
/* more cores: the all-gather also waits for the successor */
static void test_three_cores(void) { run(3, 4099, 64, OPTIC_POD_SUM); }
static void test_five_cores_max(void) { run(5, 1001, 128, OPTIC_POD_MAX); }

static const ot_case cases[] = {
    {"two_cores_tiny_chunks", test_two_cores_tiny_chunks},
    {"two_cores_one_chunk", test_two_cores_one_chunk},
    {"three_cores", test_three_cores},
    {"five_cores_max", test_five_cores_max},
};

int main(int argc, char **argv) {
  pod_test_watchdog(100);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
