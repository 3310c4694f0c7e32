/* Cost, compile and print take time by the module's size, not by its
 * tensors' sizes or its call paths: XLA's convolution valid(d) in closed form
 * (graph/cost_window.c) against a literal transcription of XLA's pair loop
 * on a random sweep, hand-counted huge windows, the time a cost query on a
 * huge window takes, a callee reached by 2^40 call paths, and a constant
 * with no elements but a 10^12 dim. */
#include <time.h>

#include <optic/optic.h>

#include "graph/internal.h"
#include "tests/harness.h"

/* XLA's GetConvolutionFlops inner loop, one dimension: every (kernel,
 * output) pair, C division toward zero as XLA does. */
static double xla_loop(int64_t in, int64_t k, int64_t out, int64_t stride, int64_t lo, int64_t ldil, int64_t rdil) {
  double n = 0;
  for (int64_t j = 0; j < k; j++) {
    for (int64_t o = 0; o < out; o++) {
      int64_t u = o * stride - lo + j * rdil;
      int64_t q = ldil > 1 ? u / ldil : u;
      if (u != q * ldil) continue;
      if (q < 0 || q >= in) continue;
      n++;
    }
  }
  return n;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static int64_t pick(int64_t lo, int64_t hi) { /* uniform-ish in [lo, hi] (xorshift) */
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return lo + (int64_t)(rng_state % (uint64_t)(hi - lo + 1));
}

static void random_sweep_matches_xla_loop(void) {
  int bad = 0;
  for (int i = 0; i < 20000 && bad < 5; i++) {
    /* output sizes are free here (not derived from the pads), so the sweep
     * also covers intervals clipped by the output range at either end */
    int64_t in = pick(1, 12), k = pick(1, 14), out = pick(1, 14), stride = pick(1, 6), lo = pick(-25, 25);
    int64_t ldil = pick(1, 6), rdil = pick(1, 6);
    if (i % 4 == 0) in = pick(1, 60), k = pick(1, 60), out = pick(1, 60);
    double got = -1, want = xla_loop(in, k, out, stride, lo, ldil, rdil);
    OT_EXPECT_OK(graph_conv_valid_pairs(in, k, out, stride, lo, ldil, rdil, &got));
    if (got != want) {
      bad++;
      OT_CHECK(got == want,
               "in %lld k %lld out %lld stride %lld pad_lo %lld ldil %lld rdil %lld: %.0f, XLA's loop %.0f",
               (long long)in, (long long)k, (long long)out, (long long)stride, (long long)lo, (long long)ldil,
               (long long)rdil, got, want);
    }
  }
}

/* Large strides, pads and dilations with small counts: still the loop's value. */
static void large_parameters_match_xla_loop(void) {
  int64_t big = INT64_C(1) << 40;
  int64_t cases[][7] = {
      {3, 5, 7, big, 0, 1, 1},         {3, 5, 7, 1, -big, 1, 1},        {3, 5, 7, 1, big, 1, 1},
      {9, 40, 50, 3, 30, big, 1},      {9, 40, 50, big - 1, 5, 7, big}, {2, 2, 2, big, big - 1, big, big},
      {1000, 300, 900, 7, 123, 5, 11}, {17, 1, 1, 1, 0, big, big},      {5, 800, 900, 1, 799, 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t *c = cases[i];
    double got = -1, want = xla_loop(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
    OT_EXPECT_OK(graph_conv_valid_pairs(c[0], c[1], c[2], c[3], c[4], c[5], c[6], &got));
    OT_CHECK(got == want, "case %zu: %.0f, XLA's loop %.0f", i, got, want);
  }
}

/* Windows far too long to loop over, counted by hand. */
static void huge_windows_by_hand(void) {
  const int64_t n = INT64_C(1) << 20, t = INT64_C(1) << 40;
  double v = -1;
  /* "Full" convolution: in = window = N, stride 1, pads N-1 on both sides,
   * out = 2N-1. For kernel index k the outputs o with 0 <= o + k - (N-1) <= N-1
   * are N consecutive ones inside [0, 2N-2]: N x N = 2^40 pairs. */
  OT_EXPECT_OK(graph_conv_valid_pairs(n, n, 2 * n - 1, 1, n - 1, 1, 1, &v));
  OT_CHECK(v == (double)n * (double)n, "full conv: %.0f", v);
  /* XLA's second shortcut: in = 1, window = out = 2^40, pads 2^40-1: each
   * output sees the one input element through exactly one kernel index, so
   * valid = out = 2^40. */
  OT_EXPECT_OK(graph_conv_valid_pairs(1, t, t, 1, t - 1, 1, 1, &v));
  OT_CHECK(v == (double)t, "single input: %.0f", v);
  /* XLA's first shortcut: in = out = window = base_dilation = 2^40,
   * stride 2^40-1, no padding: valid = in = 2^40. */
  OT_EXPECT_OK(graph_conv_valid_pairs(t, t, t, t - 1, 0, t, 1, &v));
  OT_CHECK(v == (double)t, "dilated input: %.0f", v);
  /* Window 2^39 with window dilation 2 over in = N = 2^20, out N, no
   * padding: y = o + 2k must lie in [0, N-1], so kernel index k < N/2 pairs
   * with the N - 2k outputs o <= N-1-2k, and larger k with none:
   * sum_{k<N/2} (N - 2k) = N^2/2 - (N/2)(N/2 - 1) = N^2/4 + N/2. */
  OT_EXPECT_OK(graph_conv_valid_pairs(n, t / 2, n, 1, 0, 1, 2, &v));
  OT_CHECK(v == (double)n * n / 4 + n / 2, "dilated window: %.0f", v);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A convolution with a 2^40-long window (the kernel is a parameter, so
 * nothing is allocated) costs in well under a second; before the closed
 * form this query looped over every window position (over ten minutes). */
static void huge_window_conv_costs_fast(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("huge", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  const int64_t w = INT64_C(1) << 40;
  optic_shape sx = {.rank = 3, .dims = {1, w, 2}}, sk = {.rank = 3, .dims = {w, 2, 3}};
  optic_type tx = optic_type_array(OPTIC_F32, &sx), tk = optic_type_array(OPTIC_F32, &sk);
  optic_node_id x, k, y;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &tx, NULL, &x));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &tk, NULL, &k));
  optic_window_dim wd = {
      .size = w, .stride = 1, .pad_low = w - 1, .pad_high = w - 1, .base_dilation = 1, .window_dilation = 1};
  OT_EXPECT_OK(optic_graph_convolution(m, c, x, k, "b0f_0io->b0f", &wd, 1, 1, NULL, &y));
  double t0 = now();
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, y, &cost));
  double secs = now() - t0;
  /* valid = w^2 (the full convolution above); flops = 2 x C_in 2 x C_out 3
   * x N 1 x w^2 = 12 x 2^80; bytes = 4 x (in 2^41 + kernel 6 x 2^40 + out
   * 3 x (2^41 - 1)) */
  OT_CHECK(cost.flops == 12.0 * 0x1p80, "flops %g", cost.flops);
  OT_CHECK(cost.bytes_accessed == 4.0 * (0x1p41 + 6 * 0x1p40 + 3 * (0x1p41 - 1)), "bytes %g", cost.bytes_accessed);
  OT_CHECK(secs < 0.5, "cost of a 2^40-long window took %.3f s", secs);
  optic_module_destroy(m);
}

/* 41 computations, each calling the next twice: 2^40 paths to the last.
 * A query visits each computation once: c40 = negate (4 flops, 32 bytes);
 * c_i = two calls of c_{i+1} + an add (4 flops, 48 bytes), so
 * flops(i) = 2 flops(i+1) + 4 = 8 x 2^(40-i) - 4 and bytes(i) =
 * 80 x 2^(40-i) - 48: at the entry's call, 8 x 2^40 - 4 and 80 x 2^40 - 48. */
static void shared_callees_cost_once(void) {
  optic_module_t *m;
  optic_comp_id entry, next = -1;
  OT_EXPECT_OK(optic_module_create("nest", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &entry));
  optic_shape s4 = {.rank = 1, .dims = {4}};
  optic_type t4 = optic_type_array(OPTIC_F32, &s4);
  for (int i = 40; i >= 0; i--) {
    char name[16];
    snprintf(name, sizeof name, "c%d", i);
    optic_comp_id c;
    optic_node_id x, a, b, y;
    OT_EXPECT_OK(optic_module_add_computation(m, name, &c));
    OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t4, NULL, &x));
    if (i == 40) {
      OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_NEGATE, x, NULL, &y));
    } else {
      OT_EXPECT_OK(optic_graph_call(m, c, next, &x, 1, NULL, &a));
      OT_EXPECT_OK(optic_graph_call(m, c, next, &a, 1, NULL, &b));
      OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, a, b, NULL, &y));
    }
    OT_EXPECT_OK(optic_computation_set_root(m, c, y));
    next = c;
  }
  optic_node_id p, r;
  OT_EXPECT_OK(optic_graph_parameter(m, entry, 0, &t4, NULL, &p));
  OT_EXPECT_OK(optic_graph_call(m, entry, next, &p, 1, NULL, &r));
  double t0 = now();
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, r, &cost));
  double secs = now() - t0;
  OT_CHECK(cost.flops == 8 * 0x1p40 - 4 && cost.bytes_accessed == 80 * 0x1p40 - 48, "flops %.0f bytes %.0f", cost.flops,
           cost.bytes_accessed);
  OT_CHECK(secs < 0.5, "took %.3f s", secs);
  optic_module_destroy(m);
}

/* A constant without elements whose dims before the first 0 multiply to
 * 10^12 prints as "{}" (nested braces would be 10^12 pairs), the importer
 * takes "{}" for it back, and compiling a broadcast to that shape (which
 * folding turns into such a constant) takes no time either. Small empty
 * shapes keep their nested braces. */
static void empty_constants_print_short(void) {
  static const char hlo[] =
      "HloModule empty\n"
      "ENTRY main {\n"
      "  z = f32[] constant(0)\n"
      "  small = f32[2,0] constant({ {}, {} })\n"
      "  b = f32[1000000000000,0] broadcast(z), dimensions={}\n"
      "  ROOT t = (f32[2,0], f32[1000000000000,0]) tuple(small, b)\n"
      "}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(hlo, strlen(hlo), &m));
  optic_machine machine;
  OT_EXPECT_OK(optic_machine_preset("host-default", &machine));
  optic_compile_options o = optic_compile_options_default();
  o.machine = &machine;
  optic_program_t *p = NULL;
  double t0 = now();
  OT_EXPECT_OK(optic_compile(m, &o, &p));
  char *text = NULL, *again = NULL;
  if (p) OT_EXPECT_OK(optic_module_to_hlo_text(optic_program_module(p), &text));
  double secs = now() - t0;
  OT_CHECK(secs < 0.5, "compile and print took %.3f s", secs);
  OT_CHECK(text && strstr(text, "f32[1000000000000,0] constant({})") && strstr(text, "f32[2,0] constant({{}, {}})"),
           "%s", text ? text : "");
  optic_module_t *back = NULL;
  if (text) OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &back));
  if (back) OT_EXPECT_OK(optic_module_to_hlo_text(back, &again));
  OT_CHECK(text && again && strcmp(text, again) == 0, "round trip:\n%s\n---\n%s", text ? text : "", again ? again : "");
  optic_string_free(text);
  optic_string_free(again);
  optic_module_destroy(back);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"random_sweep_matches_xla_loop", random_sweep_matches_xla_loop},
    {"large_parameters_match_xla_loop", large_parameters_match_xla_loop},
    {"huge_windows_by_hand", huge_windows_by_hand},
    {"huge_window_conv_costs_fast", huge_window_conv_costs_fast},
    {"shared_callees_cost_once", shared_callees_cost_once},
    {"empty_constants_print_short", empty_constants_print_short},
};
OT_MAIN(cases)
