/* Load balancing: EWMA throughput, proportional splits that always sum to
 * the total, the least-loaded picker, and a pod run with an injected slow
 * core where the split converges to the cores' speeds and shortens the step. */
#include <math.h>
#include <stdlib.h>

#include "tests/pod/pod_test.h"

static void test_ewma(void) {
  optic_pod_balancer_t *b = NULL;
  OT_EXPECT_OK(optic_pod_balancer_create(2, 0.5, &b));
  OT_EXPECT_OK(optic_pod_balancer_record(b, 0, 1000, 1000000000)); /* 1000/s */
  OT_CHECK(optic_pod_balancer_rate(b, 0) == 1000);
  OT_EXPECT_OK(optic_pod_balancer_record(b, 0, 3000, 1000000000)); /* 0.5*3000 + 0.5*1000 */
  OT_CHECK(optic_pod_balancer_rate(b, 0) == 2000, "%g", optic_pod_balancer_rate(b, 0));
  OT_CHECK(optic_pod_balancer_rate(b, 1) == 0);
  OT_EXPECT_STATUS(optic_pod_balancer_record(b, 2, 1, 1), OPTIC_ERR_INVALID_ARGUMENT);
  optic_pod_balancer_destroy(b);
  OT_EXPECT_STATUS(optic_pod_balancer_create(0, 0, &b), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_pod_balancer_create(2, 1.5, &b), OPTIC_ERR_INVALID_ARGUMENT);
  optic_pod_balancer_destroy(NULL);
}

static void test_split_sums(void) {
  optic_pod_balancer_t *b = NULL;
  OT_EXPECT_OK(optic_pod_balancer_create(7, 0, &b));
  uint64_t off[8];
  /* unmeasured: even split */
  OT_EXPECT_OK(optic_pod_balancer_split(b, 70, off));
  for (int k = 0; k < 7; k++) OT_CHECK(off[k + 1] - off[k] == 10);
  for (int k = 0; k < 7; k++) OT_EXPECT_OK(optic_pod_balancer_record(b, k, (uint64_t)(k + 1) * 100, 1000000));
  const uint64_t totals[] = {0, 1, 6, 7, 8, 1000, 1000003, 1ull << 40};
  for (size_t t = 0; t < sizeof totals / sizeof *totals; t++) {
    OT_EXPECT_OK(optic_pod_balancer_split(b, totals[t], off));
    OT_CHECK(off[0] == 0 && off[7] == totals[t], "total %llu: ends at %llu", (unsigned long long)totals[t],
             (unsigned long long)off[7]);
    for (int k = 0; k < 7; k++) {
      OT_CHECK(off[k + 1] >= off[k]);
      double want = (double)totals[t] * (k + 1) / 28.0;
      OT_CHECK(fabs((double)(off[k + 1] - off[k]) - want) < 1.0 + 1e-9 * want, "total %llu core %d: %llu, want %.2f",
               (unsigned long long)totals[t], k, (unsigned long long)(off[k + 1] - off[k]), want);
    }
  }
  optic_pod_balancer_destroy(b);
}

static void test_pick_least_loaded(void) {
  optic_pod_balancer_t *b = NULL;
  OT_EXPECT_OK(optic_pod_balancer_create(3, 1, &b));
  OT_EXPECT_OK(optic_pod_balancer_record(b, 0, 100, 1000000000)); /* slow: 100/s */
  OT_EXPECT_OK(optic_pod_balancer_record(b, 1, 300, 1000000000));
  OT_EXPECT_OK(optic_pod_balancer_record(b, 2, 300, 1000000000));
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 700; i++) {
    int k;
    OT_EXPECT_OK(optic_pod_balancer_pick(b, 1, &k));
    counts[k]++;
  }
  /* finish times equalize: 100 : 300 : 300 */
  OT_CHECK(abs(counts[0] - 100) <= 1 && abs(counts[1] - 300) <= 1 && abs(counts[2] - 300) <= 1, "%d %d %d", counts[0],
           counts[1], counts[2]);
  OT_EXPECT_OK(optic_pod_balancer_done(b, 1, 300, 1000000000));
  int k;
  OT_EXPECT_OK(optic_pod_balancer_pick(b, 1, &k));
  OT_CHECK(k == 1, "picked %d after core 1 drained its queue", k);
  optic_pod_balancer_destroy(b);
}

/* --- a pod whose core 1 is 3x slower per item */
#define ITEMS 3000
#define ROUNDS 12

typedef struct balance_job {
  optic_pod_balancer_t *b;
  uint64_t offsets[OPTIC_POD_MAX_CORES + 1];
  uint64_t step_ns[ROUNDS];
  volatile double sink[OPTIC_POD_MAX_CORES];
} balance_job;

static void work_item(balance_job *j, int core, int reps) {
  double x = core;
  for (int r = 0; r < reps * 400; r++) x = x * 1.0000001 + 1e-9;
  j->sink[core] += x;
}

static optic_status balance_body(optic_pod_core_t *c, void *user) {
  balance_job *j = user;
  const int me = optic_pod_core_index(c);
  for (int round = 0; round < ROUNDS; round++) {
    optic_status st;
    if (me == 0) optic_pod_balancer_split(j->b, ITEMS, j->offsets);
    uint64_t round_start = optic_now_ns();
    if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
    uint64_t t0 = optic_now_ns(), lo = j->offsets[me], hi = j->offsets[me + 1];
    for (uint64_t i = lo; i < hi; i++) work_item(j, me, me == 1 ? 3 : 1);
    optic_pod_balancer_record(j->b, me, hi - lo, optic_now_ns() - t0);
    if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
    if (me == 0) j->step_ns[round] = optic_now_ns() - round_start;
  }
  return OPTIC_OK;
}

static void test_pod_slow_core(void) {
  balance_job *j = calloc(1, sizeof *j);
  OT_EXPECT_OK(optic_pod_balancer_create(2, 0.5, &j->b));
  optic_pod_options o = {.size = sizeof o, .cores = 2};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  OT_EXPECT_OK(optic_pod_run(pod, balance_body, j, NULL));
  /* the slow core's share converges toward 1/4 of the items (speeds 1 : 3) */
  uint64_t share1 = j->offsets[2] - j->offsets[1];
  OT_CHECK(share1 < ITEMS / 2, "slow core still gets %llu of %d items", (unsigned long long)share1, ITEMS);
  double r0 = optic_pod_balancer_rate(j->b, 0), r1 = optic_pod_balancer_rate(j->b, 1);
  OT_CHECK(r0 > r1 * 1.5, "measured rates %.0f and %.0f items/s", r0, r1);
  printf(
      "  slow core share %llu/%d (ideal %d at 1:3 speeds), rounds took %.2f then %.2f ms (loaded machine), rates "
      "%.0f/%.0f\n",
      (unsigned long long)share1, ITEMS, ITEMS / 4, j->step_ns[0] * 1e-6, j->step_ns[ROUNDS - 1] * 1e-6, r0, r1);
  optic_pod_destroy(pod);
  optic_pod_balancer_destroy(j->b);
  free(j);
}

static const ot_case cases[] = {
    {"ewma", test_ewma},
    {"split_sums", test_split_sums},
    {"pick_least_loaded", test_pick_least_loaded},
    {"pod_slow_core", test_pod_slow_core},
};

int main(int argc, char **argv) {
  pod_test_watchdog(60);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
