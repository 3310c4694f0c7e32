/* optic_optim_step_estimate_ns against the rule written in its header and in
 * docs/cost-model.md, recomputed here from the machine's raw figures (no
 * library estimate call): block-limited threads, the roofline of those
 * threads, the largest share's arithmetic, per-pass dispatch and barrier,
 * the profile's clock reads; the per-pass fixed cost is the step's own
 * (format 12) when the machine has it, else one dispatch. Sizes sweep the block edges (0, 1, 65535,
 * 65536, 65537, several blocks, fewer blocks than threads), every kind, 1
 * to 3 threads on a 2-core model, figures 0 (bytes only) and large (the
 * arithmetic bound), and the errors.
 *
 * Reproduce one case: ./build/release/tests/optim_step_estimate NAME */
#include <math.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"

#define BLOCK 65536.0

static optic_machine two_cores(double element_ns) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  strcpy(m.name, "two");
  m.peak_flops = 1e11;
  m.peak_transcendentals = 1e9;
  m.dram_bandwidth = 2e10;
  m.core_dram_bandwidth = 1.25e10;
  m.cache_bandwidth = 1e11;
  m.cache_bytes = 4194304;
  m.op_overhead_ns = 50;
  m.cores = 2;
  m.sync_ns = 300;
  m.cpu_clock_ns = 40;
  double *e[] = {&m.optim_sgd_element_ns,     &m.optim_adam_element_ns,    &m.optim_adamw_element_ns,
                 &m.optim_rmsprop_element_ns, &m.optim_adagrad_element_ns, &m.optim_lamb_element_ns,
                 &m.optim_lion_element_ns};
  for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) *e[k] = element_ns * (1.0 + 0.125 * (double)k);
  return m;
}

/* The documented rule on two_cores's figures. */
static double expected(const optic_machine *m, int kind, double n, double bytes, int threads, bool profiled) {
  const double element[] = {m->optim_sgd_element_ns,     m->optim_adam_element_ns,    m->optim_adamw_element_ns,
                            m->optim_rmsprop_element_ns, m->optim_adagrad_element_ns, m->optim_lamb_element_ns,
                            m->optim_lion_element_ns};
  const double blocks = ceil(n / BLOCK);
  double used = blocks <= 1 ? 1 : fmin(fmin(threads, m->cores), blocks);
  const double f = used / m->cores;
  const double cache_bw = m->cache_bandwidth * f, cache_bytes = m->cache_bytes * f;
  const double dram = fmin(m->dram_bandwidth, used * m->core_dram_bandwidth);
  const double bw = bytes <= cache_bytes ? cache_bw : dram;
  const double share = fmin(n, ceil(blocks / used) * BLOCK);
  const bool lamb = kind == OPTIC_OPTIM_KIND_LAMB;
  const double sync = used > 1 ? m->sync_ns * (used - 1) / (m->cores - 1) : 0;
  const double fixed = m->optim_step_ns > 0 ? m->optim_step_ns : m->op_overhead_ns; /* format 12, else dispatch */
  return fmax(bytes / bw * 1e9, share * element[kind]) + (lamb ? 2 : 1) * (fixed + sync) +
         (profiled ? (lamb ? 6 : 2) * m->cpu_clock_ns : 0);
}

static void matches_rule(void) {
  static const size_t sizes[] = {0, 1, 8192, 65535, 65536, 65537, 131072, 131073, 200000, 16777216};
  static const double figures[] = {0, 0.43, 40};
  for (size_t fi = 0; fi < 2 * sizeof figures / sizeof figures[0]; fi++) {
    optic_machine m = two_cores(figures[fi / 2]);
    m.optim_step_ns = fi % 2 ? 700 : 0; /* the step's own fixed cost (format 12), or not known */
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      for (int kind = 0; kind < OPTIC_OPTIM_KIND_COUNT_; kind++) {
        for (int threads = 1; threads <= 3; threads++) {
          for (int prof = 0; prof <= 1; prof++) {
            const double n = (double)sizes[si], bytes = 28 * n, want = expected(&m, kind, n, bytes, threads, prof);
            double got = -1;
            OT_EXPECT_OK(
                optic_optim_step_estimate_ns(&m, (optic_optim_kind)kind, sizes[si], bytes, threads, prof, &got));
            OT_CHECK(fabs(got - want) <= 1e-9 * want,
                     "figure %g step %g n %zu %s threads %d profiled %d: %.9g, rule %.9g", figures[fi / 2],
                     m.optim_step_ns, sizes[si], optic_optim_kind_name((optic_optim_kind)kind), threads, prof, got,
                     want);
          }
        }
      }
    }
  }
}

/* With the figures 0 the estimate is the bytes-only rule the benchmark used
 * before format 9 (one fused op at the roofline of the threads it runs on,
 * its dispatch, a barrier beyond one thread, two clock reads); the figure
 * only ever raises it, and a large one makes it linear in the share. */
static void bounds(void) {
  const optic_machine none = two_cores(0), slow = two_cores(10);
  double a = 0, b = 0, c = 0;
  OT_EXPECT_OK(optic_optim_step_estimate_ns(&none, OPTIC_OPTIM_KIND_ADAM, 8192, 28 * 8192.0, 1, true, &a));
  OT_CHECK(fabs(a - (28 * 8192.0 / 5e10 * 1e9 + 50 + 80)) < 1e-9, "bytes only: %.9g", a);
  OT_EXPECT_OK(optic_optim_step_estimate_ns(&slow, OPTIC_OPTIM_KIND_ADAM, 8192, 28 * 8192.0, 1, true, &b));
  OT_CHECK(b > a && fabs(b - (8192 * 10 * 1.125 + 50 + 80)) < 1e-6, "arithmetic bound: %.9g", b);
  /* 4 blocks on 2 threads: each thread two blocks, one barrier */
  OT_EXPECT_OK(optic_optim_step_estimate_ns(&slow, OPTIC_OPTIM_KIND_SGD, 4 * 65536, 20 * 4 * 65536.0, 2, false, &c));
  OT_CHECK(fabs(c - (2 * 65536 * 10.0 + 50 + 300)) < 1e-6, "two threads: %.9g", c);
}

static void errors(void) {
  const optic_machine m = two_cores(1);
  double ns = 0;
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(NULL, OPTIC_OPTIM_KIND_ADAM, 8, 8, 1, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&m, OPTIC_OPTIM_KIND_ADAM, 8, 8, 1, false, NULL),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&m, OPTIC_OPTIM_KIND_COUNT_, 8, 8, 1, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "kind") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&m, OPTIC_OPTIM_KIND_ADAM, 8, 8, 0, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "threads") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&m, OPTIC_OPTIM_KIND_ADAM, 8, -1, 1, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&m, OPTIC_OPTIM_KIND_ADAM, 8, NAN, 1, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  optic_machine bad = m;
  bad.optim_adam_element_ns = -1;
  OT_EXPECT_STATUS(optic_optim_step_estimate_ns(&bad, OPTIC_OPTIM_KIND_ADAM, 8, 8, 1, false, &ns),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "optim_adam_element_ns") != NULL, "%s", optic_last_error());
}

static const ot_case cases[] = {
    {"matches_rule", matches_rule},
    {"bounds", bounds},
    {"errors", errors},
};
OT_MAIN(cases)
