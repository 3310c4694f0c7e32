/* RFC 5905 clock sync: the on-wire formulas on synthetic exchanges (the true
 * offset always lies within offset +- delay/2), the clock filter (minimum-
 * delay choice, dispersion weights, jitter, convergence as samples arrive),
 * and the pod collective between cores with injected offset, skew and
 * asymmetric jittery delays. */
#include <math.h>
#include <stdlib.h>

#include "tests/pod/pod_test.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void test_on_wire_bound(void) {
  for (int i = 0; i < 100000; i++) {
    int64_t offset = (int64_t)(rng() % 20000001) - 10000000; /* server - client, ns */
    int64_t d1 = (int64_t)(rng() % 100000), d2 = (int64_t)(rng() % 100000), proc = (int64_t)(rng() % 5000);
    int64_t t1 = 1000000000 + (int64_t)(rng() % 1000000);
    int64_t t2 = t1 + d1 + offset, t3 = t2 + proc, t4 = t3 - offset + d2;
    optic_clock_sample s;
    optic_clock_on_wire(t1, t2, t3, t4, 1.0, &s);
    OT_CHECK(s.delay_ns == (double)(d1 + d2), "delay %g, expected %lld", s.delay_ns, (long long)(d1 + d2));
    OT_CHECK(fabs(s.offset_ns - (double)offset) <= s.delay_ns / 2, "offset %g true %lld delay %g", s.offset_ns,
             (long long)offset, s.delay_ns);
    if (d1 == d2) OT_CHECK(s.offset_ns == (double)offset);
    if (ot_failures_) return;
  }
}

static void test_filter_picks_min_delay(void) {
  optic_clock_filter f;
  optic_clock_filter_init(&f);
  const double delays[8] = {50, 20, 80, 10, 30, 70, 60, 40};
  for (int i = 0; i < 8; i++) {
    optic_clock_sample s = {.offset_ns = 100 + i, .delay_ns = delays[i], .dispersion_ns = 4, .time_ns = 1000};
    optic_clock_filter_add(&f, &s);
  }
  OT_CHECK(f.count == 8);
  OT_CHECK(f.delay_ns == 10 && f.offset_ns == 103, "chose delay %g offset %g", f.delay_ns, f.offset_ns);
  /* equal dispersions e and no ageing: sum e/2^(i+1) = e(1 - 2^-8) */
  OT_CHECK(fabs(f.dispersion_ns - 4 * (1 - 1.0 / 256)) < 1e-12, "dispersion %.17g", f.dispersion_ns);
  /* jitter: RMS of (103 - offset_i) over the 7 others */
  double sum = 0;
  for (int i = 0; i < 8; i++) sum += (103.0 - (100 + i)) * (103.0 - (100 + i));
  OT_CHECK(fabs(f.jitter_ns - sqrt(sum / 7)) < 1e-9, "jitter %g", f.jitter_ns);
  /* a ninth sample pushes out the oldest; the newest small delay wins */
  optic_clock_sample s = {.offset_ns = 7, .delay_ns = 5, .dispersion_ns = 4, .time_ns = 2000};
  optic_clock_filter_add(&f, &s);
  OT_CHECK(f.offset_ns == 7 && f.delay_ns == 5);
  /* ageing: older stages gained PHI * 1000 ns */
  OT_CHECK(fabs(f.stage[1].dispersion_ns - (4 + 15e-6 * 1000)) < 1e-12, "%.17g", f.stage[1].dispersion_ns);
  /* one sample: partly empty register weighs the empty stages at 16 s */
  optic_clock_filter_init(&f);
  optic_clock_filter_add(&f, &s);
  OT_CHECK(f.offset_ns == 7 && f.dispersion_ns > 1e9);
}

/* Convergence: on a link with random delays and a fixed offset, the filter's
 * error bound (chosen delay / 2) never grows while the register fills, the
 * error stays inside it, and after 8 samples it is at most the first's. */
static void test_filter_converges(void) {
  for (int trial = 0; trial < 200; trial++) {
    optic_clock_filter f;
    optic_clock_filter_init(&f);
    const int64_t offset = (int64_t)(rng() % 2000001) - 1000000;
    double prev_bound = INFINITY, first_err = 0;
    for (int i = 0; i < 8; i++) {
      int64_t d1 = 1000 + (int64_t)(rng() % 50000), d2 = 1000 + (int64_t)(rng() % 50000);
      int64_t t1 = 1000000 * (i + 1), t2 = t1 + d1 + offset, t3 = t2 + 200, t4 = t3 - offset + d2;
      optic_clock_sample s;
      optic_clock_on_wire(t1, t2, t3, t4, 1.0, &s);
      optic_clock_filter_add(&f, &s);
      double err = fabs(f.offset_ns - (double)offset), bound = f.delay_ns / 2;
      if (i == 0) first_err = err;
      OT_CHECK(err <= bound, "trial %d sample %d: error %g > delay/2 %g", trial, i, err, bound);
      OT_CHECK(bound <= prev_bound, "trial %d: bound grew from %g to %g", trial, prev_bound, bound);
      prev_bound = bound;
    }
    double min_delay = INFINITY;
    for (int i = 0; i < 8; i++) min_delay = fmin(min_delay, f.stage[i].delay_ns);
    OT_CHECK(f.delay_ns == min_delay, "chose delay %g, minimum %g", f.delay_ns, min_delay);
    OT_CHECK(fabs(f.offset_ns - (double)offset) <= first_err || fabs(f.offset_ns - (double)offset) <= f.delay_ns / 2);
    if (ot_failures_) return;
  }
}

/* --- the collective with injected clocks */
typedef struct clocks {
  int64_t t0;
  double offset_ns[OPTIC_POD_MAX_CORES], skew[OPTIC_POD_MAX_CORES];
  _Atomic uint64_t counter;
  uint64_t max_jitter_ns;
  optic_clock_filter result[OPTIC_POD_MAX_CORES];
} clocks;

static int64_t fake_clock(void *user, int core) {
  clocks *c = user;
  int64_t t = (int64_t)optic_now_ns() - c->t0;
  return c->t0 + t + (int64_t)llround(c->offset_ns[core] + c->skew[core] * (double)t);
}

static uint64_t fake_delay(void *user, int from, int to) {
  clocks *c = user;
  uint64_t x = atomic_fetch_add(&c->counter, 1) * 0x9E3779B97F4A7C15ull + (uint64_t)(from * 64 + to);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x % (c->max_jitter_ns + 1) + (from == 0 ? 20000 : 0); /* asymmetric: away from root is slower */
}

/* true root-minus-core offset when core's clock read `local` */
static double true_offset(const clocks *c, int core, double local) {
  double t = (local - (double)c->t0 - c->offset_ns[core]) / (1 + c->skew[core]);
  return (c->offset_ns[0] + c->skew[0] * t) - (c->offset_ns[core] + c->skew[core] * t);
}

static optic_status sync_body(optic_pod_core_t *core, void *user) {
  clocks *c = user;
  optic_pod_clock_options o = {
      .size = sizeof o, .root = 0, .rounds = 8, .clock_ns = fake_clock, .delay_ns = fake_delay, .user = c};
  return optic_pod_clock_sync(core, &o, &c->result[optic_pod_core_index(core)]);
}

static void run_sync(int n, uint64_t jitter_ns) {
  clocks *c = calloc(1, sizeof *c);
  c->t0 = (int64_t)optic_now_ns();
  c->max_jitter_ns = jitter_ns;
  for (int k = 0; k < n; k++) {
    c->offset_ns[k] = (double)((int64_t)(rng() % 10000001) - 5000000);
    c->skew[k] = ((double)(rng() % 401) - 200) * 1e-6; /* +-200 ppm */
  }
  /* Heartbeat timeout 10 s, not the default 2 s: these cases test the clock
   * filter, not failure detection (test_coordinator does that), and a CI run
   * under TSan once saw a core not scheduled for 2 s on the shared VM at the
   * start of a run (PEER_FAILED, all clients with 0 samples; not reproduced
   * in 15 further runs). */
  optic_pod_options po = {.size = sizeof po, .cores = n, .heartbeat_timeout_ns = 10000000000ull};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&po, &pod));
  OT_EXPECT_OK(optic_pod_run(pod, sync_body, c, NULL));
  OT_CHECK(c->result[0].offset_ns == 0);
  for (int k = 1; k < n; k++) {
    const optic_clock_filter *f = &c->result[k];
    OT_CHECK(f->count == 8, "core %d: %d samples", k, f->count);
    /* the chosen sample: its T4 is the time_ns of the stage with that delay */
    double local = 0;
    for (int i = 0; i < f->count; i++) {
      if (f->stage[i].delay_ns == f->delay_ns && f->stage[i].offset_ns == f->offset_ns) local = f->stage[i].time_ns;
    }
    double truth = true_offset(c, k, local), err = fabs(f->offset_ns - truth);
    /* RFC bound delta/2, plus the drift of the offset during the exchange */
    double drift = fabs(c->skew[0] - c->skew[k]) * 2 * f->delay_ns + 2;
    OT_CHECK(err <= f->delay_ns / 2 + drift,
             "core %d: error %.1f ns > delay/2 %.1f + drift %.1f (offset %.0f skew %.0f ppm)", k, err, f->delay_ns / 2,
             drift, c->offset_ns[k], c->skew[k] * 1e6);
    /* convergence: the chosen delay is the minimum of the eight */
    for (int i = 0; i < f->count; i++) OT_CHECK(f->delay_ns <= f->stage[i].delay_ns);
    OT_CHECK(f->dispersion_ns > 0 && f->jitter_ns >= 1);
  }
  optic_pod_destroy(pod);
  free(c);
}

static void test_pod_sync_no_jitter(void) { run_sync(4, 0); }
static void test_pod_sync_jitter(void) { run_sync(5, 50000); }
static void test_pod_sync_twice(void) {
  run_sync(3, 10000);
  run_sync(2, 100000);
}

static optic_status bad_root(optic_pod_core_t *core, void *user) {
  (void)user;
  optic_pod_clock_options o = {.size = sizeof o, .root = 9};
  optic_clock_filter f;
  return optic_pod_clock_sync(core, &o, &f);
}

static void test_pod_sync_bad_root(void) {
  optic_pod_options po = {.size = sizeof po, .cores = 2};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&po, &pod));
  OT_EXPECT_STATUS(optic_pod_run(pod, bad_root, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_pod_destroy(pod);
}

static const ot_case cases[] = {
    {"on_wire_bound", test_on_wire_bound},         {"filter_picks_min_delay", test_filter_picks_min_delay},
    {"filter_converges", test_filter_converges},   {"pod_sync_no_jitter", test_pod_sync_no_jitter},
    {"pod_sync_jitter", test_pod_sync_jitter},     {"pod_sync_twice", test_pod_sync_twice},
    {"pod_sync_bad_root", test_pod_sync_bad_root},
};

int main(int argc, char **argv) {
  pod_test_watchdog(60);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
