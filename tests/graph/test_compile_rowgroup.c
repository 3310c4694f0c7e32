/* Row groups (the runtime's exec/rowgroup.c: reduce -> broadcast ->
 * elementwise -> reduce over the same rows, run a tile at a time) are priced
 * as the runtime runs them: the group costs the larger of its members'
 * estimates with their bytes in cache and its own traffic (its input read
 * and its result written) at the roofline, plus one dispatch and, split over
 * two threads, one barrier. On the toy machine (tests/toy_machine.h: 4 B/ns
 * in a 1 MiB cache, 1 B/ns from DRAM per core) a softmax over f32[512,1024]
 * (2 MiB) is traffic-bound as a group, where op by op every member would
 * read and write DRAM; a pattern that reads a member's result across rows
 * (a broadcast along dim 1) is not a group and keeps the per-op prices.
 * Reproduce: build/release/tests/graph_compile_rowgroup */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/compile_text.h"
#include "tests/harness.h"
#include "tests/toy_machine.h"

static const char *const softmax_hlo =
    "HloModule softmax\n"
    "max_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
    "add_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  x = f32[512,1024] parameter(0)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  mx = f32[512] reduce(x, ninf), dimensions={1}, to_apply=max_c\n"
    "  bm = f32[512,1024] broadcast(mx), dimensions={0}\n"
    "  d = f32[512,1024] subtract(x, bm)\n"
    "  e = f32[512,1024] exponential(d)\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[512] reduce(e, zero), dimensions={1}, to_apply=add_c\n"
    "  bs = f32[512,1024] broadcast(s), dimensions={0}\n"
    "  ROOT y = f32[512,1024] divide(e, bs)\n"
    "}\n";

/* The row sums broadcast along dim 1: the second reduce's rows read every
 * row's sum, so no tile can run alone. */
static const char *const across_hlo =
    "HloModule across\n"
    "add_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  x = f32[1024,1024] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  r = f32[1024] reduce(x, zero), dimensions={1}, to_apply=add_c\n"
    "  b = f32[1024,1024] broadcast(r), dimensions={1}\n"
    "  d = f32[1024,1024] subtract(x, b)\n"
    "  ROOT t = f32[1024] reduce(d, zero), dimensions={1}, to_apply=add_c\n"
    "}\n";

/* The program's estimate of text for mc on `threads` threads (default
 * fusion, split rule `split`), without its once-per-run overhead; -1 on
 * failure. */
static double program_ns(const char *text, const optic_machine *mc, int32_t threads, int64_t split) {
  optic_program_t *p = ot_compile_text(text, mc, threads, split, -1);
  optic_program_summary s;
  double est = p && optic_program_summary_get(p, &s) == OPTIC_OK ? s.est_ns - mc->run_overhead_ns : -1;
  optic_program_destroy(p);
  return est;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-6; }

/* With every byte in cache the group is the members' in-cache sum (plus
 * its dispatch and barrier); on the toy it is its 4 MiB of traffic from
 * DRAM instead, once. */
static void softmax_group_traffic_bound(void) {
  const double traffic = 2.0 * 512 * 1024 * 4 + 2 * 4; /* x read, y written, the two reduces' inits */
  for (int32_t threads = 1; threads <= 2; threads++) {
    optic_machine toy = ot_toy_machine(2), cached = toy;
    cached.cache_bytes = 1e30;
    const double fixed = toy.op_overhead_ns + (threads > 1 ? toy.sync_ns : 0);
    const double in_cache = program_ns(softmax_hlo, &cached, threads, 0) - fixed;
    const double got = program_ns(softmax_hlo, &toy, threads, 0);
    const double dram = traffic / (1e9 * threads) * 1e9; /* 1 B/ns per core */
    OT_CHECK(in_cache > 0 && in_cache < dram, "%d threads: the members in cache %g ns, under the traffic's %g",
             (int)threads, in_cache, dram);
    OT_CHECK(near(got, dram + fixed), "%d threads: softmax est %g ns, want the group's traffic %g + %g", (int)threads,
             got, dram, fixed);
  }
}

/* A by-size split rule that finds the group small keeps it on one thread:
 * no barrier, one core's DRAM rate, as on one thread. */
static void small_group_stays_on_one_thread(void) {
  optic_machine toy = ot_toy_machine(2);
  const double one = program_ns(softmax_hlo, &toy, 1, 0);
  const double solo = program_ns(softmax_hlo, &toy, 2, (int64_t)1 << 40);
  const double split = program_ns(softmax_hlo, &toy, 2, 1);
  OT_CHECK(near(solo, one), "2 threads, group under the split minimum: %g ns, want one thread's %g", solo, one);
  OT_CHECK(split < solo, "split by size: %g ns, under the solo %g", split, solo);
}

/* Not a group: each reduce reads x's 4 MiB from DRAM on its own. */
static void across_rows_is_not_a_group(void) {
  optic_machine toy = ot_toy_machine(1);
  const double x = 1024.0 * 1024 * 4;
  const double got = program_ns(across_hlo, &toy, 1, 0);
  OT_CHECK(got >= 2 * x, "est %g ns: both passes over x (%g B each at 1 B/ns) are paid", got, x);
}

static const ot_case cases[] = {{"softmax_group_traffic_bound", softmax_group_traffic_bound},
                                {"small_group_stays_on_one_thread", small_group_stays_on_one_thread},
                                {"across_rows_is_not_a_group", across_rows_is_not_a_group}};
OT_MAIN(cases)
