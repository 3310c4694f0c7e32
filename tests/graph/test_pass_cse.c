/* CSE: duplicates merge into the first occurrence (operands made canonical
 * as it goes, so whole duplicate chains merge in one run); anything that
 * differs in opcode, operand order, attributes, called computation, type or
 * constant bytes stays apart; parameters and collectives never merge; hash
 * probes grow linearly with the graph. */
#include "tests/graph/pass_fixture.h"

static void duplicate_chains_merge(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 3};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), b = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id s1 = fx_bin(&f, f.main, OPTIC_OP_ADD, a, b), e1 = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, s1);
  optic_node_id s2 = fx_bin(&f, f.main, OPTIC_OP_ADD, a, b), e2 = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, s2);
  optic_node_id m = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, e1, e2);
  optic_node_id m2 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, e2, e1); /* operand order differs: kept */
  optic_node_id r = fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, m, m2);
  BUILD(optic_computation_set_root(f.m, f.main, r));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE), &st));
  OT_CHECK(optic_node_operand(f.m, m, 0) == e1 && optic_node_operand(f.m, m, 1) == e1, "e2 became e1");
  OT_CHECK(optic_node_user_count(f.m, s2) == 0 && optic_node_user_count(f.m, e2) == 0);
  OT_CHECK(optic_node_operand(f.m, r, 0) == m && optic_node_operand(f.m, r, 1) == m,
           "once e2 is e1, multiply(e2, e1) equals multiply(e1, e1)");
  OT_CHECK(st.pass[OPTIC_PASS_CSE].replaced == 3, "s2, e2, m2: %lld", (long long)st.pass[OPTIC_PASS_CSE].replaced);
  OT_CHECK(st.rounds == 2 && fx_exists(f.m, s2), "one changing round, one to confirm; dead code stays for dce");
  OT_CHECK(fx_well_formed(f.m));
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE) | ONLY(DCE), &st));
  OT_CHECK(fx_count(f.m, f.main) == 6 && st.pass[OPTIC_PASS_DCE].removed == 3);
  optic_module_destroy(f.m);
}

/* Pairs that must not merge, and pairs that must. */
static void what_counts_as_equal(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 2}, d3[] = {3};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), b = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id p2 = fx_param(&f, f.main, 2, OPTIC_F32, 2, d); /* same type as b: parameters never merge */
  optic_node_id keep[32], twin[32];
  int nk = 0, nt = 0;
  optic_node_id x, y;
  /* differ: compare direction */
  BUILD(optic_graph_compare(f.m, f.main, OPTIC_CMP_LT, a, b, NULL, &x));
  BUILD(optic_graph_compare(f.m, f.main, OPTIC_CMP_LE, a, b, NULL, &y));
  keep[nk++] = x, keep[nk++] = y;
  /* differ: broadcast dims */
  optic_node_id v = fx_param(&f, f.main, 3, OPTIC_F32, 1, (int64_t[]){2});
  optic_shape s = fx_shape(2, d);
  BUILD(optic_graph_broadcast(f.m, f.main, v, &s, (int64_t[]){0}, 1, NULL, &x));
  BUILD(optic_graph_broadcast(f.m, f.main, v, &s, (int64_t[]){1}, 1, NULL, &y));
  keep[nk++] = x, keep[nk++] = y;
  /* differ: slice bounds */
  BUILD(optic_graph_slice(f.m, f.main, a, (int64_t[]){0, 0}, (int64_t[]){1, 2}, (int64_t[]){1, 1}, NULL, &x));
  BUILD(optic_graph_slice(f.m, f.main, a, (int64_t[]){1, 0}, (int64_t[]){2, 2}, (int64_t[]){1, 1}, NULL, &y));
  keep[nk++] = x, keep[nk++] = y;
  /* differ: constant bytes +0 and -0, and equal bytes of different dtypes */
  keep[nk++] = fx_scalar(&f, f.main, OPTIC_F32, 0.0);
  keep[nk++] = fx_scalar(&f, f.main, OPTIC_F32, -0.0);
  float one = 1.0f;
  int32_t one_bits;
  memcpy(&one_bits, &one, 4);
  keep[nk++] = fx_scalar(&f, f.main, OPTIC_F32, 1.0);
  keep[nk++] = fx_scalar(&f, f.main, OPTIC_S32, (double)one_bits);
  /* differ: convert target, iota dimension */
  BUILD(optic_graph_convert(f.m, f.main, a, OPTIC_F64, NULL, &x));
  BUILD(optic_graph_convert(f.m, f.main, a, OPTIC_S32, NULL, &y));
  keep[nk++] = x, keep[nk++] = y;
  BUILD(optic_graph_iota(f.m, f.main, OPTIC_S32, &s, 0, NULL, &x));
  BUILD(optic_graph_iota(f.m, f.main, OPTIC_S32, &s, 1, NULL, &y));
  keep[nk++] = x, keep[nk++] = y;
  /* equal: same constant bytes (a NaN too), iota, reshape, pad */
  float qnan_bits = __builtin_nanf("");
  optic_shape sc = fx_shape(0, NULL);
  BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &sc, &qnan_bits, 4, NULL, &x));
  BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &sc, &qnan_bits, 4, NULL, &y));
  twin[nt++] = x, twin[nt++] = y;
  BUILD(optic_graph_iota(f.m, f.main, OPTIC_S32, &s, 1, NULL, &x)); /* equal to the iota above */
  twin[nt++] = keep[nk - 1], twin[nt++] = x;
  optic_node_id r1 = fx_reshape(&f, f.main, a, 1, (int64_t[]){4}), r2 = fx_reshape(&f, f.main, a, 1, (int64_t[]){4});
  twin[nt++] = r1, twin[nt++] = r2;
  optic_pad_dim pd[2] = {{1, 0, 0}, {0, 1, 1}};
  optic_node_id zero = fx_scalar(&f, f.main, OPTIC_F32, 2.5), zero2 = fx_scalar(&f, f.main, OPTIC_F32, 2.5);
  BUILD(optic_graph_pad(f.m, f.main, a, zero, pd, NULL, &x));
  BUILD(optic_graph_pad(f.m, f.main, a, zero2, pd, NULL, &y));
  twin[nt++] = x, twin[nt++] = y;
  keep[nk++] = b, keep[nk++] = p2;
  (void)d3;
  /* everything is an output, so nothing is dead */
  optic_node_id all[64];
  int na = 0;
  for (int i = 0; i < nk; i++) all[na++] = keep[i];
  for (int i = 0; i < nt; i++) all[na++] = twin[i];
  optic_node_id tup;
  BUILD(optic_graph_tuple(f.m, f.main, all, na, NULL, &tup));
  BUILD(optic_computation_set_root(f.m, f.main, tup));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE), &st));
  for (int i = 0; i < nk; i++) {
    OT_CHECK(optic_node_operand(f.m, tup, i) == keep[i], "%s was merged", optic_node_name(f.m, keep[i]));
  }
  for (int i = 0; i < nt; i += 2) {
    optic_node_id got = optic_node_operand(f.m, tup, nk + i + 1);
    OT_CHECK(got == twin[i], "%s was not merged into %s (got %s)", optic_node_name(f.m, twin[i + 1]),
             optic_node_name(f.m, twin[i]), optic_node_name(f.m, got));
  }
  /* the NaN constants, iota, reshape, the 2.5 constants and then the pads */
  OT_CHECK(st.pass[OPTIC_PASS_CSE].replaced == 5, "replaced %lld", (long long)st.pass[OPTIC_PASS_CSE].replaced);
  OT_CHECK(fx_well_formed(f.m), "the tuple took both twins' uses and is listed once by each survivor");
  optic_module_destroy(f.m);
}

/* Computations with an all-reduce inside: the collective and calls into it
 * never merge; calls of pure computations do, but only with the same callee. */
static void collectives_and_calls(void) {
  fixture f = fx_setup();
  optic_comp_id sum, sum2, pure, effect;
  BUILD(optic_module_add_computation(f.m, "sum", &sum));
  BUILD(optic_module_add_computation(f.m, "sum2", &sum2));
  optic_comp_id sums[2] = {sum, sum2};
  for (int i = 0; i < 2; i++) {
    optic_node_id x = fx_param(&f, sums[i], 0, OPTIC_F32, 0, NULL), y = fx_param(&f, sums[i], 1, OPTIC_F32, 0, NULL);
    BUILD(optic_computation_set_root(f.m, sums[i], fx_bin(&f, sums[i], OPTIC_OP_ADD, x, y)));
  }
  int64_t d[] = {4};
  BUILD(optic_module_add_computation(f.m, "pure", &pure));
  optic_node_id pp = fx_param(&f, pure, 0, OPTIC_F32, 1, d);
  BUILD(optic_computation_set_root(f.m, pure, fx_un(&f, pure, OPTIC_OP_NEGATE, pp)));
  BUILD(optic_module_add_computation(f.m, "effect", &effect));
  optic_node_id ep = fx_param(&f, effect, 0, OPTIC_F32, 1, d), ar;
  BUILD(optic_graph_all_reduce(f.m, effect, &ep, 1, sum, NULL, NULL, 0, NULL, &ar));
  BUILD(optic_computation_set_root(f.m, effect, ar));

  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id ar1, ar2, c1, c2, e1, e2, r1, r2, r3;
  BUILD(optic_graph_all_reduce(f.m, f.main, &p, 1, sum, NULL, NULL, 0, NULL, &ar1));
  BUILD(optic_graph_all_reduce(f.m, f.main, &p, 1, sum, NULL, NULL, 0, NULL, &ar2));
  BUILD(optic_graph_call(f.m, f.main, pure, &p, 1, NULL, &c1));
  BUILD(optic_graph_call(f.m, f.main, pure, &p, 1, NULL, &c2));
  BUILD(optic_graph_call(f.m, f.main, effect, &p, 1, NULL, &e1));
  BUILD(optic_graph_call(f.m, f.main, effect, &p, 1, NULL, &e2));
  optic_node_id zero = fx_scalar(&f, f.main, OPTIC_F32, 0.0);
  BUILD(optic_graph_reduce(f.m, f.main, &p, &zero, 1, (int64_t[]){0}, 1, sum, NULL, &r1));
  BUILD(optic_graph_reduce(f.m, f.main, &p, &zero, 1, (int64_t[]){0}, 1, sum, NULL, &r2));
  BUILD(optic_graph_reduce(f.m, f.main, &p, &zero, 1, (int64_t[]){0}, 1, sum2, NULL, &r3));
  optic_node_id all[] = {ar1, ar2, c1, c2, e1, e2, r1, r2, r3}, tup;
  BUILD(optic_graph_tuple(f.m, f.main, all, 9, NULL, &tup));
  BUILD(optic_computation_set_root(f.m, f.main, tup));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE), &st));
  optic_node_id want[] = {ar1, ar2, c1, c1, e1, e2, r1, r1, r3};
  for (int i = 0; i < 9; i++) {
    OT_CHECK(optic_node_operand(f.m, tup, i) == want[i], "tuple operand %d is %s, want %s", i,
             optic_node_name(f.m, optic_node_operand(f.m, tup, i)), optic_node_name(f.m, want[i]));
  }
  OT_CHECK(st.pass[OPTIC_PASS_CSE].replaced == 2);
  optic_module_destroy(f.m);
}

/* The root itself a duplicate: the root moves to the first occurrence. A
 * first occurrence the root does not need is dead and is not kept over the
 * root; here an all-reduce (kept for its effect) needs it. */
static void root_duplicate(void) {
  fixture f = fx_setup();
  optic_comp_id sum;
  BUILD(optic_module_add_computation(f.m, "sum", &sum));
  optic_node_id x = fx_param(&f, sum, 0, OPTIC_F32, 0, NULL), y = fx_param(&f, sum, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f.m, sum, fx_bin(&f, sum, OPTIC_OP_ADD, x, y)));
  int64_t d[] = {3};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), ar;
  optic_node_id t1 = fx_un(&f, f.main, OPTIC_OP_TANH, a);
  BUILD(optic_graph_all_reduce(f.m, f.main, &t1, 1, sum, NULL, NULL, 0, NULL, &ar));
  optic_node_id t2 = fx_un(&f, f.main, OPTIC_OP_TANH, a);
  BUILD(optic_computation_set_root(f.m, f.main, t2));
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE) | ONLY(DCE), NULL));
  OT_CHECK(optic_computation_root(f.m, f.main) == t1 && !fx_exists(f.m, t2) && fx_exists(f.m, ar));
  optic_module_destroy(f.m);

  /* without the all-reduce the first tanh is dead: dce removes it, cse
   * leaves the root alone */
  f = fx_setup();
  a = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  t1 = fx_un(&f, f.main, OPTIC_OP_TANH, a);
  t2 = fx_un(&f, f.main, OPTIC_OP_TANH, a);
  BUILD(optic_computation_set_root(f.m, f.main, t2));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE) | ONLY(DCE), &st));
  OT_CHECK(optic_computation_root(f.m, f.main) == t2 && !fx_exists(f.m, t1) && st.pass[OPTIC_PASS_CSE].replaced == 0);
  optic_module_destroy(f.m);
}

/* n layers of (two equal tanh, their sum): probes grow linearly in n. */
static int64_t chain_probes(int32_t layers, int64_t *replaced) {
  fixture f = fx_setup();
  int64_t d[] = {8};
  optic_node_id h = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  for (int32_t i = 0; i < layers; i++) {
    optic_node_id t1 = fx_un(&f, f.main, OPTIC_OP_TANH, h), t2 = fx_un(&f, f.main, OPTIC_OP_TANH, h);
    optic_node_id c = fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 0.5), 1, d);
    h = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, fx_bin(&f, f.main, OPTIC_OP_ADD, t1, t2), c);
  }
  BUILD(optic_computation_set_root(f.m, f.main, h));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(CSE), &st));
  *replaced = st.pass[OPTIC_PASS_CSE].replaced;
  optic_module_destroy(f.m);
  return st.pass[OPTIC_PASS_CSE].work;
}

static void probes_grow_linearly(void) {
  int64_t rep1, rep2;
  int64_t w1 = chain_probes(1000, &rep1), w2 = chain_probes(2000, &rep2);
  printf("  cse work: %lld for 1000 layers, %lld for 2000 (ratio %.3f)\n", (long long)w1, (long long)w2,
         (double)w2 / (double)w1);
  /* per layer: one tanh, and from the second layer on the constant and its broadcast */
  OT_CHECK(rep1 == 1000 + 2 * 999 && rep2 == 2000 + 2 * 1999, "replaced %lld, %lld", (long long)rep1, (long long)rep2);
  OT_CHECK((double)w2 / (double)w1 > 1.8 && (double)w2 / (double)w1 < 2.2, "work is linear in the graph size");
}

static const ot_case cases[] = {
    {"duplicate_chains_merge", duplicate_chains_merge}, {"what_counts_as_equal", what_counts_as_equal},
    {"collectives_and_calls", collectives_and_calls},   {"root_duplicate", root_duplicate},
    {"probes_grow_linearly", probes_grow_linearly},
};
OT_MAIN(cases)
