/* Algebraic simplification: every rewrite before/after on small graphs, and
 * the non-cases that would not be exact (x*0, x+(+0), x-(-0), 1/x, partial
 * slices, non-identity transposes of square arrays). Also checks, on this
 * machine's FPU, the IEEE facts the rules rest on. */
#include <math.h>

#include "tests/graph/pass_fixture.h"

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The IEEE facts behind the rules, computed at run time (volatile keeps the
 * compiler from folding them). */
static void ieee_facts(void) {
  volatile double pz = 0.0, nz = -0.0, one = 1.0;
  const double xs[] = {-0.0, 0.0, 1.5, -2.25, INFINITY, -INFINITY, 4.9e-324, -4.9e-324, 1e308};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    volatile double x = xs[i];
    OT_CHECK(same_bits(x * one, x) && same_bits(x / one, x), "x*1 and x/1 are x for %g", xs[i]);
    OT_CHECK(same_bits(x + nz, x) && same_bits(nz + x, x), "x+(-0) is x for %g", xs[i]);
    OT_CHECK(same_bits(x - pz, x), "x-(+0) is x for %g", xs[i]);
    volatile float xf = (float)xs[i], onef = 1.0f, nzf = -0.0f, pzf = 0.0f;
    float r1 = xf * onef, r2 = xf + nzf, r3 = xf - pzf, xv = xf;
    OT_CHECK(memcmp(&r1, &xv, 4) == 0 && memcmp(&r2, &xv, 4) == 0 && memcmp(&r3, &xv, 4) == 0, "f32 %g", xs[i]);
  }
  volatile double nan_in = NAN;
  OT_CHECK(isnan(nan_in * one) && isnan(nan_in + nz) && isnan(nan_in - pz));
  /* why the others are left alone */
  OT_CHECK(same_bits(nz + pz, 0.0), "-0 + +0 is +0: x+(+0) is not exact");
  OT_CHECK(same_bits(nz - nz, 0.0), "-0 - -0 is +0: x-(-0) is not exact");
  volatile double inf = INFINITY;
  OT_CHECK(isnan(inf * pz), "inf * 0 is NaN: x*0 is not 0");
}

static void reshape_of_reshape(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d6[] = {6}, d32[] = {3, 2}, d16[] = {1, 6};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id r1 = fx_reshape(&f, f.main, p, 1, d6);
  optic_node_id r2 = fx_reshape(&f, f.main, r1, 2, d16);
  optic_node_id r3 = fx_reshape(&f, f.main, r2, 2, d32);
  optic_node_id neg = fx_un(&f, f.main, OPTIC_OP_NEGATE, r3);
  BUILD(optic_computation_set_root(f.m, f.main, neg));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY), &st));
  optic_node_id merged = optic_node_operand(f.m, neg, 0);
  OT_CHECK(optic_node_opcode(f.m, merged) == OPTIC_OP_RESHAPE && optic_node_operand(f.m, merged, 0) == p,
           "negate reads one reshape of p, got %s", optic_node_name(f.m, merged));
  char buf[64];
  optic_type_format(optic_node_type(f.m, merged), buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[3,2]") == 0, "%s", buf);
  /* r2 became reshape(p) first, then r3 merged with that: two new, three replaced */
  OT_CHECK(st.pass[OPTIC_PASS_SIMPLIFY].replaced == 2 && st.pass[OPTIC_PASS_SIMPLIFY].added == 2,
           "replaced %lld added %lld", (long long)st.pass[OPTIC_PASS_SIMPLIFY].replaced,
           (long long)st.pass[OPTIC_PASS_SIMPLIFY].added);
  OT_CHECK(fx_exists(f.m, r1) && fx_exists(f.m, r3), "simplify leaves the dead ones to dce");
  OT_CHECK(fx_well_formed(f.m));
  OT_EXPECT_OK(fx_run(&f, ONLY(DCE), NULL));
  OT_CHECK(fx_count(f.m, f.main) == 3, "p, reshape, negate remain; %d", fx_count(f.m, f.main));
  optic_module_destroy(f.m);
}

static void reshape_round_trip_is_removed(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d6[] = {6};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id r1 = fx_reshape(&f, f.main, p, 1, d6);
  optic_node_id r2 = fx_reshape(&f, f.main, r1, 2, d23);
  optic_node_id same = fx_reshape(&f, f.main, r2, 2, d23); /* identity reshape */
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, same);
  BUILD(optic_computation_set_root(f.m, f.main, e));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY) | ONLY(DCE), &st));
  OT_CHECK(optic_node_operand(f.m, e, 0) == p && fx_count(f.m, f.main) == 2);
  OT_CHECK(st.pass[OPTIC_PASS_SIMPLIFY].added == 0, "no instruction needed");
  optic_module_destroy(f.m);
}

static void transpose_of_transpose(void) {
  fixture f = fx_setup();
  int64_t d234[] = {2, 3, 4}, p1[] = {1, 2, 0}, p2[] = {1, 0, 2}, back[] = {2, 0, 1};
  optic_node_id z = fx_param(&f, f.main, 0, OPTIC_F32, 3, d234);
  optic_node_id t1 = fx_transpose(&f, f.main, z, p1);    /* [3,4,2] */
  optic_node_id t2 = fx_transpose(&f, f.main, t1, p2);   /* [4,3,2] */
  optic_node_id t3 = fx_transpose(&f, f.main, t1, back); /* identity overall: [2,3,4] */
  optic_node_id a = fx_un(&f, f.main, OPTIC_OP_ABS, t2), b = fx_un(&f, f.main, OPTIC_OP_ABS, t3);
  optic_node_id tup;
  optic_node_id xs[] = {a, b};
  BUILD(optic_graph_tuple(f.m, f.main, xs, 2, NULL, &tup));
  BUILD(optic_computation_set_root(f.m, f.main, tup));
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY) | ONLY(DCE), NULL));
  optic_node_id m2 = optic_node_operand(f.m, a, 0);
  int32_t n;
  const int64_t *perm = optic_node_dims(f.m, m2, &n);
  /* out dim i = z dim p1[p2[i]] = {2, 1, 0} */
  OT_CHECK(optic_node_opcode(f.m, m2) == OPTIC_OP_TRANSPOSE && optic_node_operand(f.m, m2, 0) == z && n == 3 &&
               perm[0] == 2 && perm[1] == 1 && perm[2] == 0,
           "one transpose of z with {2,1,0}");
  OT_CHECK(optic_node_operand(f.m, b, 0) == z, "the identity composition reads z directly");
  OT_CHECK(!fx_exists(f.m, t1) && !fx_exists(f.m, t2) && !fx_exists(f.m, t3));
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

static void identities_and_their_non_cases(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d33[] = {3, 3}, d41[] = {4, 1}, d3[] = {3}, id2[] = {0, 1}, swap[] = {1, 0};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id sq = fx_param(&f, f.main, 1, OPTIC_F32, 2, d33);
  optic_node_id col = fx_param(&f, f.main, 2, OPTIC_F32, 2, d41);
  optic_node_id v = fx_param(&f, f.main, 3, OPTIC_F32, 1, d3);
  optic_node_id users[16];
  int nu = 0;
  optic_node_id t_id = fx_transpose(&f, f.main, x, id2);
  optic_node_id t_sq = fx_transpose(&f, f.main, sq, swap); /* same type, not the identity */
  optic_shape s23 = fx_shape(2, d23);
  int64_t bdims[] = {0, 1}, bd1[] = {1};
  optic_node_id b_id, b_real, cv_id, cv_real, sl_full, sl_part, sl_stride1, sl_stride4;
  BUILD(optic_graph_broadcast(f.m, f.main, x, &s23, bdims, 2, NULL, &b_id));
  BUILD(optic_graph_broadcast(f.m, f.main, v, &s23, bd1, 1, NULL, &b_real));
  BUILD(optic_graph_convert(f.m, f.main, x, OPTIC_F32, NULL, &cv_id));
  BUILD(optic_graph_convert(f.m, f.main, x, OPTIC_F64, NULL, &cv_real));
  int64_t z2[] = {0, 0}, one2[] = {1, 1}, lim_part[] = {2, 2};
  BUILD(optic_graph_slice(f.m, f.main, x, z2, d23, one2, NULL, &sl_full));
  BUILD(optic_graph_slice(f.m, f.main, x, z2, lim_part, one2, NULL, &sl_part));
  int64_t st_1[] = {1, 5}, lim41[] = {4, 1}, st_4[] = {4, 1};
  BUILD(optic_graph_slice(f.m, f.main, col, z2, lim41, st_1, NULL, &sl_stride1)); /* stride 5 on a size-1 dim */
  BUILD(optic_graph_slice(f.m, f.main, col, z2, lim41, st_4, NULL, &sl_stride4)); /* f32[1,1] */
  optic_node_id all[] = {t_id, t_sq, b_id, b_real, cv_id, cv_real, sl_full, sl_part, sl_stride1, sl_stride4};
  for (int i = 0; i < 10; i++) users[nu++] = fx_un(&f, f.main, OPTIC_OP_COPY, all[i]);
  optic_node_id tup;
  BUILD(optic_graph_tuple(f.m, f.main, users, nu, NULL, &tup));
  BUILD(optic_computation_set_root(f.m, f.main, tup));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY), &st));
  optic_node_id want[] = {x, t_sq, x, b_real, x, cv_real, x, sl_part, col, sl_stride4};
  for (int i = 0; i < 10; i++) {
    OT_CHECK(optic_node_operand(f.m, users[i], 0) == want[i], "case %d: copy reads %s, want %s", i,
             optic_node_name(f.m, optic_node_operand(f.m, users[i], 0)), optic_node_name(f.m, want[i]));
  }
  /* the 5 identities, then the 10 copies themselves (a copy is the identity on values) */
  OT_CHECK(st.pass[OPTIC_PASS_SIMPLIFY].replaced == 15 && st.pass[OPTIC_PASS_SIMPLIFY].added == 0, "replaced %lld",
           (long long)st.pass[OPTIC_PASS_SIMPLIFY].replaced);
  for (int i = 0; i < nu; i++) {
    OT_CHECK(optic_node_operand(f.m, tup, i) == want[i], "tuple element %d reads %s, want %s (the copy is gone)", i,
             optic_node_name(f.m, optic_node_operand(f.m, tup, i)), optic_node_name(f.m, want[i]));
  }
  optic_module_destroy(f.m);
}

/* One case of the arithmetic table: x OP c (or c OP x when const_first)
 * where c is `value` of dtype dt broadcast to x's shape; expect_x says
 * whether the result must become x. */
typedef struct arith_case {
  optic_opcode op;
  optic_dtype dt;
  double value;
  bool const_first;
  bool expect_x;
  const char *what;
} arith_case;

static void arithmetic_identities(void) {
  const arith_case cases[] = {
      {OPTIC_OP_MULTIPLY, OPTIC_F32, 1.0, false, true, "x*1"},
      {OPTIC_OP_MULTIPLY, OPTIC_F32, 1.0, true, true, "1*x"},
      {OPTIC_OP_DIVIDE, OPTIC_F32, 1.0, false, true, "x/1"},
      {OPTIC_OP_DIVIDE, OPTIC_F32, 1.0, true, false, "1/x"},
      {OPTIC_OP_MULTIPLY, OPTIC_F32, 0.0, false, false, "x*0"},
      {OPTIC_OP_MULTIPLY, OPTIC_F32, -0.0, true, false, "-0*x"},
      {OPTIC_OP_MULTIPLY, OPTIC_F32, 2.0, false, false, "x*2"},
      {OPTIC_OP_ADD, OPTIC_F32, -0.0, false, true, "x+(-0)"},
      {OPTIC_OP_ADD, OPTIC_F32, -0.0, true, true, "(-0)+x"},
      {OPTIC_OP_ADD, OPTIC_F32, 0.0, false, false, "x+(+0)"},
      {OPTIC_OP_ADD, OPTIC_F32, 0.0, true, false, "(+0)+x"},
      {OPTIC_OP_SUBTRACT, OPTIC_F32, 0.0, false, true, "x-(+0)"},
      {OPTIC_OP_SUBTRACT, OPTIC_F32, -0.0, false, false, "x-(-0)"},
      {OPTIC_OP_SUBTRACT, OPTIC_F32, 0.0, true, false, "0-x"},
      {OPTIC_OP_ADD, OPTIC_F32, NAN, false, false, "x+nan"},
      {OPTIC_OP_MULTIPLY, OPTIC_F64, 1.0, false, true, "f64 x*1"},
      {OPTIC_OP_ADD, OPTIC_F64, -0.0, true, true, "f64 (-0)+x"},
      {OPTIC_OP_ADD, OPTIC_F64, 0.0, false, false, "f64 x+(+0)"},
      {OPTIC_OP_SUBTRACT, OPTIC_F64, 0.0, false, true, "f64 x-(+0)"},
      {OPTIC_OP_ADD, OPTIC_S32, 0.0, false, true, "s32 x+0"},
      {OPTIC_OP_ADD, OPTIC_S32, 0.0, true, true, "s32 0+x"},
      {OPTIC_OP_SUBTRACT, OPTIC_S32, 0.0, false, true, "s32 x-0"},
      {OPTIC_OP_SUBTRACT, OPTIC_S32, 0.0, true, false, "s32 0-x"},
      {OPTIC_OP_MULTIPLY, OPTIC_S32, 1.0, true, true, "s32 1*x"},
      {OPTIC_OP_MULTIPLY, OPTIC_S32, 0.0, false, false, "s32 x*0 (exact, but not an identity rewrite)"},
      {OPTIC_OP_DIVIDE, OPTIC_S32, 1.0, false, true, "s32 x/1"},
      {OPTIC_OP_ADD, OPTIC_U8, 0.0, false, true, "u8 x+0"},
      {OPTIC_OP_MULTIPLY, OPTIC_U8, 1.0, false, true, "u8 x*1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const arith_case *k = &cases[i];
    for (int scalar = 0; scalar < 2; scalar++) {
      fixture f = fx_setup();
      int64_t d[] = {2, 3};
      int32_t rank = scalar ? 0 : 2;
      optic_node_id x = fx_param(&f, f.main, 0, k->dt, rank, d);
      optic_node_id c = fx_scalar(&f, f.main, k->dt, k->value);
      if (!scalar) c = fx_splat(&f, f.main, c, rank, d);
      optic_node_id y = k->const_first ? fx_bin(&f, f.main, k->op, c, x) : fx_bin(&f, f.main, k->op, x, c);
      optic_node_id use = fx_un(&f, f.main, OPTIC_OP_COPY, y);
      BUILD(optic_computation_set_root(f.m, f.main, use));
      OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY), NULL));
      optic_node_id got = optic_node_operand(f.m, use, 0);
      OT_CHECK(got == (k->expect_x ? x : y), "%s (%s): the copy reads %s", k->what, scalar ? "scalar" : "broadcast",
               optic_node_name(f.m, got));
      optic_module_destroy(f.m);
    }
  }
}

/* Constants seen through reshapes and broadcasts, splat arrays, non-splat
 * arrays, and the root itself being rewritten. */
static void constant_forms(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d6[] = {6}, d2[] = {2};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id one = fx_scalar(&f, f.main, OPTIC_F32, 1.0);
  optic_node_id one6 = fx_splat(&f, f.main, one, 1, d6);
  optic_node_id one23 = fx_reshape(&f, f.main, one6, 2, d23);
  optic_node_id y1 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, x, one23);
  float ones[6] = {1, 1, 1, 1, 1, 1}, mixed[6] = {1, 1, 1, 1, 1, 2};
  optic_shape s23 = fx_shape(2, d23);
  optic_node_id c_ones, c_mixed;
  BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &s23, ones, sizeof ones, NULL, &c_ones));
  BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &s23, mixed, sizeof mixed, NULL, &c_mixed));
  optic_node_id y2 = fx_bin(&f, f.main, OPTIC_OP_DIVIDE, y1, c_ones);
  optic_node_id y3 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, y2, c_mixed);
  /* a broadcast of a non-scalar splat: f32[2] of -0 broadcast to [2,3] */
  float nz[2] = {-0.0f, -0.0f};
  optic_shape s2 = fx_shape(1, d2);
  optic_node_id c_nz, nz23;
  int64_t bd[] = {0};
  BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &s2, nz, sizeof nz, NULL, &c_nz));
  BUILD(optic_graph_broadcast(f.m, f.main, c_nz, &s23, bd, 1, NULL, &nz23));
  optic_node_id y4 = fx_bin(&f, f.main, OPTIC_OP_ADD, y3, nz23);
  BUILD(optic_computation_set_root(f.m, f.main, y4));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY) | ONLY(DCE), &st));
  OT_CHECK(optic_computation_root(f.m, f.main) == y3, "the root x+(-0) became its operand");
  OT_CHECK(optic_node_operand(f.m, y3, 0) == x && optic_node_operand(f.m, y3, 1) == c_mixed,
           "x*1 via reshape(broadcast) and x/[1,1,...] are gone; x*[1,..,2] stays");
  OT_CHECK(fx_count(f.m, f.main) == 3, "x, the mixed constant, the multiply: %d", fx_count(f.m, f.main));
  OT_CHECK(st.pass[OPTIC_PASS_SIMPLIFY].replaced == 3);
  optic_module_destroy(f.m);
}

/* Rewrites inside a called computation; its root may change. */
static void inside_called_computation(void) {
  fixture f = fx_setup();
  optic_comp_id body;
  BUILD(optic_module_add_computation(f.m, "body", &body));
  int64_t d[] = {4};
  optic_node_id bp = fx_param(&f, body, 0, OPTIC_F32, 1, d);
  optic_node_id bone = fx_splat(&f, body, fx_scalar(&f, body, OPTIC_F32, 1.0), 1, d);
  optic_node_id bm = fx_bin(&f, body, OPTIC_OP_MULTIPLY, bone, bp);
  BUILD(optic_computation_set_root(f.m, body, bm));
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), call;
  BUILD(optic_graph_call(f.m, f.main, body, &p, 1, NULL, &call));
  BUILD(optic_computation_set_root(f.m, f.main, call));
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY) | ONLY(DCE), NULL));
  OT_CHECK(optic_computation_root(f.m, body) == bp, "body returns its parameter");
  OT_CHECK(fx_count(f.m, body) == 1);
  optic_module_destroy(f.m);
}

/* A merged reshape is appended last but feeds earlier users: the list is
 * put back in operands-before-users order, and the HLO shows it there. */
static void order_after_new_instructions(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d6[] = {6}, d32[] = {3, 2};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id r1 = fx_reshape(&f, f.main, p, 1, d6);
  optic_node_id r2 = fx_reshape(&f, f.main, r1, 2, d32);
  optic_node_id n1 = fx_un(&f, f.main, OPTIC_OP_NEGATE, r2);
  optic_node_id n2 = fx_un(&f, f.main, OPTIC_OP_ABS, n1);
  BUILD(optic_computation_set_root(f.m, f.main, n2));
  OT_EXPECT_OK(fx_run(&f, ONLY(SIMPLIFY) | ONLY(DCE), NULL));
  OT_CHECK(fx_well_formed(f.m));
  /* the HLO printer prints in this list's order */
  int32_t n;
  const optic_node_id *ids = optic_computation_instructions(f.m, f.main, &n);
  int32_t at_reshape = -1, at_negate = -1;
  for (int32_t i = 0; i < n; i++) {
    if (optic_node_opcode(f.m, ids[i]) == OPTIC_OP_RESHAPE) at_reshape = i;
    if (ids[i] == n1) at_negate = i;
  }
  OT_CHECK(at_reshape >= 0 && at_reshape < at_negate, "reshape at %d, negate at %d", at_reshape, at_negate);
  optic_module_destroy(f.m);
}

static const ot_case cases[] = {
    {"ieee_facts", ieee_facts},
    {"reshape_of_reshape", reshape_of_reshape},
    {"reshape_round_trip_is_removed", reshape_round_trip_is_removed},
    {"transpose_of_transpose", transpose_of_transpose},
    {"identities_and_their_non_cases", identities_and_their_non_cases},
    {"arithmetic_identities", arithmetic_identities},
    {"constant_forms", constant_forms},
    {"inside_called_computation", inside_called_computation},
    {"order_after_new_instructions", order_after_new_instructions},
};
OT_MAIN(cases)
