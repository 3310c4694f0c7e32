/* Constant folding: constant chains collapse into one constant whose bytes
 * are what the reference evaluator computes (checked by evaluating the
 * module before and after); instructions with a non-constant operand,
 * parameters, all-reduce, tuple results and dead code are left alone; the
 * size cap and the work budget; evaluation errors (a while loop over the
 * iteration limit) leave the instruction and do not fail the pass; calls
 * (reduce, while) fold; the result is deterministic. */
#include <math.h>
#include <stddef.h>

#include "tests/graph/pass_fixture.h"

static optic_optimize_options fold_opts(unsigned mask, int64_t max_bytes) {
  optic_optimize_options o = fx_only(mask);
  o.fold_max_bytes = max_bytes;
  return o;
}

/* The entry's value for the given arguments (caller destroys). */
static optic_literal_t *eval(fixture *f, const optic_literal_t *const *args, int32_t n) {
  optic_literal_t *out = NULL;
  BUILD(optic_evaluate(f->m, f->main, args, n, NULL, &out));
  return out;
}

static bool same(const optic_literal_t *a, const optic_literal_t *b) {
  char why[256];
  if (optic_literal_match(a, b, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why)) return true;
  fprintf(stderr, "  before/after differ: %s\n", why);
  return false;
}

static optic_node_id constant_f32(fixture *f, int32_t rank, const int64_t *dims, const float *v) {
  optic_shape s = fx_shape(rank, dims);
  size_t n = 1;
  for (int32_t i = 0; i < rank; i++) n *= (size_t)dims[i];
  optic_node_id id;
  BUILD(optic_graph_constant(f->m, f->main, OPTIC_F32, &s, v, n * 4, NULL, &id));
  return id;
}

/* exp(-(a + b)) / (a - a): infs and a NaN, all folded into one constant with the evaluator's bits. */
static void chain_folds_to_one_constant(void) {
  fixture f = fx_setup();
  int64_t d[] = {4};
  const float av[] = {1.5f, -0.0f, 0.0f, 3e38f}, bv[] = {2.0f, 0.0f, -0.0f, 3e38f};
  optic_node_id a = constant_f32(&f, 1, d, av), b = constant_f32(&f, 1, d, bv);
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL,
                          fx_un(&f, f.main, OPTIC_OP_NEGATE, fx_bin(&f, f.main, OPTIC_OP_ADD, a, b)));
  optic_node_id q = fx_bin(&f, f.main, OPTIC_OP_DIVIDE, e, fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, a, a));
  BUILD(optic_computation_set_root(f.m, f.main, q));
  optic_literal_t *before = eval(&f, NULL, 0);
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(FOLD) | ONLY(DCE), &st));
  optic_node_id root = optic_computation_root(f.m, f.main);
  OT_CHECK(optic_node_opcode(f.m, root) == OPTIC_OP_CONSTANT && fx_count(f.m, f.main) == 1, "%d instructions",
           fx_count(f.m, f.main));
  /* add, negate, exp, subtract, divide */
  OT_CHECK(st.pass[OPTIC_PASS_FOLD].replaced == 5 && st.pass[OPTIC_PASS_FOLD].added == 5 && st.rounds == 2,
           "replaced %lld rounds %d", (long long)st.pass[OPTIC_PASS_FOLD].replaced, st.rounds);
  optic_literal_t *after = eval(&f, NULL, 0);
  OT_CHECK(same(before, after));
  const float *v = optic_literal_data(after, NULL);
  /* a + b overflows to inf in the last lane: exp(-inf) / 0 is 0/0 */
  OT_CHECK(isinf(v[0]) && v[1] == INFINITY && isnan(v[3]), "x/0 is inf, 0/0 is NaN");
  optic_literal_destroy(before);
  optic_literal_destroy(after);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

/* Only the all-constant part folds: p + exp(c) keeps the add. Dead
 * constant work is DCE's: fold alone leaves it. */
static void partial_and_dead(void) {
  fixture f = fx_setup();
  int64_t d[] = {3};
  const float cv[] = {0.5f, -1.0f, 2.0f};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), c = constant_f32(&f, 1, d, cv);
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, c);
  optic_node_id dead = fx_un(&f, f.main, OPTIC_OP_TANH, c);
  optic_node_id s = fx_bin(&f, f.main, OPTIC_OP_ADD, p, e);
  BUILD(optic_computation_set_root(f.m, f.main, s));
  optic_literal_t *arg;
  const float pv[] = {1.0f, 2.0f, -3.0f};
  optic_shape sh = fx_shape(1, d);
  BUILD(optic_literal_create_array(OPTIC_F32, &sh, pv, sizeof pv, &arg));
  const optic_literal_t *args[] = {arg};
  optic_literal_t *before = eval(&f, args, 1);
  OT_EXPECT_OK(fx_run(&f, ONLY(FOLD), NULL));
  optic_node_id folded = optic_node_operand(f.m, s, 1);
  OT_CHECK(optic_computation_root(f.m, f.main) == s && optic_node_operand(f.m, s, 0) == p &&
           optic_node_opcode(f.m, folded) == OPTIC_OP_CONSTANT);
  OT_CHECK(fx_exists(f.m, dead) && optic_node_user_count(f.m, e) == 0, "dead tanh untouched, exp left for dce");
  optic_literal_t *after = eval(&f, args, 1);
  OT_CHECK(same(before, after));
  OT_CHECK(fx_well_formed(f.m));
  optic_literal_destroy(arg);
  optic_literal_destroy(before);
  optic_literal_destroy(after);
  optic_module_destroy(f.m);
}

/* Folding never grows the program: a result may be no larger than the
 * constant operands it frees, except a one-element result. A broadcast of a
 * scalar and an iota stay as they are under any cap; a one-element
 * broadcast folds; a negate of an unshared constant folds under the cap
 * (1.2 MB: kept under the default 1 MiB, folded under 4 MiB); a negate of a
 * constant something else still reads does not (it would add a copy); a
 * widening convert does not (f32 -> f64 doubles the bytes); a slice does. */
static void never_grows(void) {
  for (int big_cap = 0; big_cap < 2; big_cap++) {
    fixture f = fx_setup();
    int64_t d2[] = {1024, 512}, d1[] = {300000}, small[] = {8}, one[] = {1};
    optic_node_id bc = fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 2.5), 2, d2);
    optic_node_id bc1 = fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 3.5), 1, one);
    optic_shape si = fx_shape(1, d1), ss = fx_shape(1, small);
    optic_node_id io, io_small, big_c, shared_c, p, els[8];
    BUILD(optic_graph_iota(f.m, f.main, OPTIC_S32, &si, 0, NULL, &io));
    BUILD(optic_graph_iota(f.m, f.main, OPTIC_S32, &ss, 0, NULL, &io_small));
    float *zeros = calloc(300000, sizeof *zeros);
    if (zeros == NULL) exit(2);
    BUILD(optic_graph_constant(f.m, f.main, OPTIC_F32, &si, zeros, 1200000, NULL, &big_c));
    free(zeros);
    const float v8[] = {1, 2, 3, 4, 5, 6, 7, 8};
    shared_c = constant_f32(&f, 1, small, v8);
    p = fx_param(&f, f.main, 0, OPTIC_F32, 1, small);
    optic_node_id widen, sl, neg_big = fx_un(&f, f.main, OPTIC_OP_NEGATE, big_c);
    BUILD(optic_graph_convert(f.m, f.main, constant_f32(&f, 1, small, v8), OPTIC_F64, NULL, &widen));
    int64_t st0[] = {2}, li[] = {5}, sd[] = {1};
    BUILD(optic_graph_slice(f.m, f.main, constant_f32(&f, 1, small, v8), st0, li, sd, NULL, &sl));
    els[0] = bc, els[1] = io, els[2] = io_small, els[3] = bc1, els[4] = neg_big;
    els[5] = fx_bin(&f, f.main, OPTIC_OP_ADD, fx_un(&f, f.main, OPTIC_OP_NEGATE, shared_c),
                    fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, p, shared_c));
    els[6] = widen, els[7] = sl;
    optic_node_id t;
    BUILD(optic_graph_tuple(f.m, f.main, els, 8, NULL, &t));
    BUILD(optic_computation_set_root(f.m, f.main, t));
    optic_optimize_options o = fold_opts(ONLY(FOLD), big_cap ? 4 << 20 : 0); /* 0: the default, 1 MiB */
    optic_pass_stats st = {.size = sizeof st};
    OT_EXPECT_OK(optic_graph_optimize(f.m, &o, &st));
    const char *cap = big_cap ? "4 MiB" : "1 MiB";
    OT_CHECK(optic_node_operand(f.m, t, 0) == bc && optic_node_operand(f.m, t, 1) == io &&
                 optic_node_operand(f.m, t, 2) == io_small,
             "cap %s: broadcast of a scalar and iotas stay", cap);
    optic_node_id c1 = optic_node_operand(f.m, t, 3);
    OT_CHECK(optic_node_opcode(f.m, c1) == OPTIC_OP_CONSTANT &&
                 *(const float *)optic_node_constant_data(f.m, c1, NULL) == 3.5f,
             "cap %s: a one-element broadcast folds", cap);
    OT_CHECK((optic_node_opcode(f.m, optic_node_operand(f.m, t, 4)) == OPTIC_OP_CONSTANT) == big_cap,
             "cap %s: the 1.2 MB negate folds only under the larger cap", cap);
    optic_node_id sum = optic_node_operand(f.m, t, 5);
    OT_CHECK(optic_node_opcode(f.m, optic_node_operand(f.m, sum, 0)) == OPTIC_OP_NEGATE,
             "cap %s: a negate of a shared constant stays", cap);
    OT_CHECK(optic_node_operand(f.m, t, 6) == widen, "cap %s: a widening convert stays", cap);
    optic_node_id c7 = optic_node_operand(f.m, t, 7);
    size_t bytes = 0;
    const float *sv = optic_node_constant_data(f.m, c7, &bytes);
    OT_CHECK(optic_node_opcode(f.m, c7) == OPTIC_OP_CONSTANT && bytes == 12 && sv[0] == 3 && sv[2] == 5,
             "cap %s: a slice folds", cap);
    OT_CHECK(st.pass[OPTIC_PASS_FOLD].added == (big_cap ? 3 : 2), "added %lld",
             (long long)st.pass[OPTIC_PASS_FOLD].added);
    optic_module_destroy(f.m);
  }
}

/* A caller built before fold_max_bytes existed passes a shorter size: the
 * cap is the default then, whatever lies past its struct. */
static void older_options_get_the_default_cap(void) {
  int64_t d[] = {64};
  float v[64] = {0};
  for (int with_size = 0; with_size < 2; with_size++) {
    fixture f = fx_setup();
    optic_node_id neg = fx_un(&f, f.main, OPTIC_OP_NEGATE, constant_f32(&f, 1, d, v));
    BUILD(optic_computation_set_root(f.m, f.main, neg));
    optic_optimize_options o = fold_opts(ONLY(FOLD), 1); /* a 1-byte cap would keep the negate */
    o.size = with_size ? sizeof o : offsetof(optic_optimize_options, fold_max_bytes);
    OT_EXPECT_OK(optic_graph_optimize(f.m, &o, NULL));
    if (with_size) {
      OT_CHECK(optic_computation_root(f.m, f.main) == neg, "256 bytes > a 1-byte cap");
    } else {
      OT_CHECK(optic_node_opcode(f.m, optic_computation_root(f.m, f.main)) == OPTIC_OP_CONSTANT);
    }
    optic_module_destroy(f.m);
  }
}

/* The work budget counts what the evaluator does, not XLA's count: a
 * reduce-window that reduces one dim of f32[1,n] and broadcasts it back
 * (size 2n-1, pads n-1) is n/n + n-1 combiner runs by XLA's rule but n x
 * (2n-1) window positions to evaluate. n = 16 folds (to the running sums'
 * total in every lane: 136); n = 8192 (33 million positions) does not. */
static void window_work_is_the_evaluators(void) {
  for (int big = 0; big < 2; big++) {
    fixture f = fx_setup();
    int64_t n = big ? 8192 : 16, d[] = {1, n};
    float *v = malloc((size_t)n * sizeof *v);
    if (v == NULL) exit(2);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(i + 1);
    optic_comp_id sum;
    BUILD(optic_module_add_computation(f.m, "sum", &sum));
    optic_node_id x = fx_param(&f, sum, 0, OPTIC_F32, 0, NULL), y = fx_param(&f, sum, 1, OPTIC_F32, 0, NULL);
    BUILD(optic_computation_set_root(f.m, sum, fx_bin(&f, sum, OPTIC_OP_ADD, x, y)));
    optic_window_dim w[2] = {{.size = 1, .stride = 1, .base_dilation = 1, .window_dilation = 1},
                             {.size = 2 * n - 1,
                              .stride = 1,
                              .pad_low = n - 1,
                              .pad_high = n - 1,
                              .base_dilation = 1,
                              .window_dilation = 1}};
    optic_node_id c = constant_f32(&f, 2, d, v), z = fx_scalar(&f, f.main, OPTIC_F32, 0), rw;
    BUILD(optic_graph_reduce_window(f.m, f.main, &c, &z, 1, w, sum, NULL, &rw));
    BUILD(optic_computation_set_root(f.m, f.main, rw));
    OT_EXPECT_OK(fx_run(&f, ONLY(FOLD), NULL));
    optic_node_id root = optic_computation_root(f.m, f.main);
    if (big) {
      OT_CHECK(root == rw, "n = 8192: over the evaluation budget, kept");
    } else {
      const float *r = optic_node_constant_data(f.m, root, NULL);
      OT_CHECK(optic_node_opcode(f.m, root) == OPTIC_OP_CONSTANT && r[0] == 136 && r[15] == 136);
    }
    free(v);
    optic_module_destroy(f.m);
  }
}

/* Work budget: 16 x the cap in flops + transcendentals + bytes. With a 1 KiB
 * cap a 4x4 dot folds, a 16x256 . 256x16 one (1 KiB out, 131,072 flops)
 * does not. */
static void work_budget(void) {
  fixture f = fx_setup();
  int64_t d44[] = {4, 4}, da[] = {16, 256}, db[] = {256, 16};
  float *buf = calloc(4096, sizeof *buf);
  if (buf == NULL) exit(2);
  for (int i = 0; i < 4096; i++) buf[i] = (float)(i % 7) - 3.0f;
  optic_node_id s4 = constant_f32(&f, 2, d44, buf), a = constant_f32(&f, 2, da, buf), b = constant_f32(&f, 2, db, buf);
  optic_dot_dims dd = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}};
  optic_node_id small, big, t;
  BUILD(optic_graph_dot(f.m, f.main, s4, s4, &dd, NULL, &small));
  BUILD(optic_graph_dot(f.m, f.main, a, b, &dd, NULL, &big));
  optic_node_id els[] = {small, big};
  BUILD(optic_graph_tuple(f.m, f.main, els, 2, NULL, &t));
  BUILD(optic_computation_set_root(f.m, f.main, t));
  optic_literal_t *before = eval(&f, NULL, 0);
  optic_optimize_options o = fold_opts(ONLY(FOLD) | ONLY(DCE), 1024);
  OT_EXPECT_OK(optic_graph_optimize(f.m, &o, NULL));
  OT_CHECK(optic_node_opcode(f.m, optic_node_operand(f.m, t, 0)) == OPTIC_OP_CONSTANT);
  OT_CHECK(optic_node_operand(f.m, t, 1) == big, "over budget: kept");
  optic_literal_t *after = eval(&f, NULL, 0);
  OT_CHECK(same(before, after));
  optic_literal_destroy(before);
  optic_literal_destroy(after);
  free(buf);
  optic_module_destroy(f.m);
}

/* A scalar computation: s32 x -> x + 1 (body) or x < limit (condition). */
static optic_comp_id loop_comp(fixture *f, const char *name, bool cond, int32_t limit) {
  optic_comp_id c;
  BUILD(optic_module_add_computation(f->m, name, &c));
  optic_node_id x = fx_param(f, c, 0, OPTIC_S32, 0, NULL), r;
  optic_node_id k = fx_scalar(f, c, OPTIC_S32, cond ? limit : 1);
  if (cond) BUILD(optic_graph_compare(f->m, c, OPTIC_CMP_LT, x, k, NULL, &r));
  else r = fx_bin(f, c, OPTIC_OP_ADD, x, k);
  BUILD(optic_computation_set_root(f->m, c, r));
  return c;
}

/* Calls fold: a while loop that ends in 10 iterations, a reduce. A loop
 * that runs past the folding limit (1024 body runs) fails to evaluate: it
 * stays, and the pass succeeds. An all-reduce of a constant never folds. */
static void calls_errors_and_effects(void) {
  fixture f = fx_setup();
  optic_comp_id body = loop_comp(&f, "body", false, 0), short_cond = loop_comp(&f, "short", true, 10);
  optic_comp_id long_cond = loop_comp(&f, "long", true, 1 << 30);
  optic_comp_id sum;
  BUILD(optic_module_add_computation(f.m, "sum", &sum));
  optic_node_id x = fx_param(&f, sum, 0, OPTIC_F32, 0, NULL), y = fx_param(&f, sum, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f.m, sum, fx_bin(&f, sum, OPTIC_OP_ADD, x, y)));
  optic_node_id zero = fx_scalar(&f, f.main, OPTIC_S32, 0);
  optic_node_id w_short, w_long, red, ar, t;
  BUILD(optic_graph_while(f.m, f.main, zero, short_cond, body, NULL, &w_short));
  BUILD(optic_graph_while(f.m, f.main, zero, long_cond, body, NULL, &w_long));
  int64_t d[] = {2, 3}, rd[] = {1};
  const float cv[] = {1, 2, 3, 4, 5, 6};
  BUILD(optic_graph_reduce(f.m, f.main, (optic_node_id[]){constant_f32(&f, 2, d, cv)},
                           (optic_node_id[]){fx_scalar(&f, f.main, OPTIC_F32, 0)}, 1, rd, 1, sum, NULL, &red));
  optic_node_id rc = fx_scalar(&f, f.main, OPTIC_F32, 1.0);
  BUILD(optic_graph_all_reduce(f.m, f.main, &rc, 1, sum, NULL, NULL, 0, NULL, &ar));
  optic_node_id ar_user = fx_un(&f, f.main, OPTIC_OP_NEGATE, ar);
  optic_node_id els[] = {w_short, w_long, red, ar_user};
  BUILD(optic_graph_tuple(f.m, f.main, els, 4, NULL, &t));
  BUILD(optic_computation_set_root(f.m, f.main, t));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(FOLD), &st));
  optic_node_id c0 = optic_node_operand(f.m, t, 0), c2 = optic_node_operand(f.m, t, 2);
  OT_CHECK(optic_node_opcode(f.m, c0) == OPTIC_OP_CONSTANT &&
           *(const int32_t *)optic_node_constant_data(f.m, c0, NULL) == 10);
  OT_CHECK(optic_node_operand(f.m, t, 1) == w_long, "the long loop stays");
  OT_CHECK(optic_node_opcode(f.m, c2) == OPTIC_OP_CONSTANT);
  const float *rv = optic_node_constant_data(f.m, c2, NULL);
  OT_CHECK(rv[0] == 6 && rv[1] == 15);
  OT_CHECK(optic_node_operand(f.m, t, 3) == ar_user && optic_node_operand(f.m, ar_user, 0) == ar,
           "all-reduce and its user stay");
  OT_CHECK(st.pass[OPTIC_PASS_FOLD].replaced == 2 && st.rounds == 2);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

/* The budget counts a while loop's body up to 1,024 times per level of
 * nesting (XLA's cost counts it once): a loop of 10 scalar iterations folds,
 * the same loop run by the body of another loop (up to 1024 x 1024 inner
 * runs for the budget) does not under the default cap, and does under a
 * cap 1024 times larger. */
static void nested_loops_count_their_iterations(void) {
  for (int big_cap = 0; big_cap < 2; big_cap++) {
    fixture f = fx_setup();
    optic_comp_id body = loop_comp(&f, "body", false, 0), cond = loop_comp(&f, "cond", true, 10);
    optic_comp_id outer_body, outer_cond = loop_comp(&f, "outer_cond", true, 3);
    BUILD(optic_module_add_computation(f.m, "outer_body", &outer_body));
    optic_node_id x = fx_param(&f, outer_body, 0, OPTIC_S32, 0, NULL), inner;
    BUILD(optic_graph_while(f.m, outer_body, x, cond, body, NULL, &inner));
    BUILD(optic_computation_set_root(f.m, outer_body, fx_bin(&f, outer_body, OPTIC_OP_ADD, inner, x)));
    optic_node_id zero = fx_scalar(&f, f.main, OPTIC_S32, 0), w;
    BUILD(optic_graph_while(f.m, f.main, zero, outer_cond, outer_body, NULL, &w));
    BUILD(optic_computation_set_root(f.m, f.main, w));
    optic_optimize_options o = fold_opts(ONLY(FOLD), big_cap ? INT64_C(1) << 30 : 0);
    OT_EXPECT_OK(optic_graph_optimize(f.m, &o, NULL));
    optic_node_id root = optic_computation_root(f.m, f.main);
    if (big_cap) {
      /* x: 0 -> 10 + 0 = 10 (10 < 3 is false: done) */
      OT_CHECK(optic_node_opcode(f.m, root) == OPTIC_OP_CONSTANT &&
                   *(const int32_t *)optic_node_constant_data(f.m, root, NULL) == 10,
               "1 GiB cap: the nested loop folds");
    } else {
      OT_CHECK(root == w, "default cap: the nested loop stays");
    }
    optic_module_destroy(f.m);
  }
}

/* Integer and pred semantics are the evaluator's: s32 x / 0 = -1, wrapping
 * add, compare and select fold too. */
static void integers_and_pred(void) {
  fixture f = fx_setup();
  optic_node_id a = fx_scalar(&f, f.main, OPTIC_S32, 7), z = fx_scalar(&f, f.main, OPTIC_S32, 0);
  optic_node_id big = fx_scalar(&f, f.main, OPTIC_S32, 2147483647.0);
  optic_node_id q = fx_bin(&f, f.main, OPTIC_OP_DIVIDE, a, z), w = fx_bin(&f, f.main, OPTIC_OP_ADD, big, a);
  optic_node_id lt, sel, t;
  BUILD(optic_graph_compare(f.m, f.main, OPTIC_CMP_LT, w, q, NULL, &lt));
  BUILD(optic_graph_select(f.m, f.main, lt, w, q, NULL, &sel));
  optic_node_id els[] = {q, w, lt, sel};
  BUILD(optic_graph_tuple(f.m, f.main, els, 4, NULL, &t));
  BUILD(optic_computation_set_root(f.m, f.main, t));
  optic_literal_t *before = eval(&f, NULL, 0);
  OT_EXPECT_OK(fx_run(&f, ONLY(FOLD) | ONLY(DCE), NULL));
  int32_t vq = *(const int32_t *)optic_node_constant_data(f.m, optic_node_operand(f.m, t, 0), NULL);
  int32_t vw = *(const int32_t *)optic_node_constant_data(f.m, optic_node_operand(f.m, t, 1), NULL);
  unsigned char vl = *(const unsigned char *)optic_node_constant_data(f.m, optic_node_operand(f.m, t, 2), NULL);
  int32_t vs = *(const int32_t *)optic_node_constant_data(f.m, optic_node_operand(f.m, t, 3), NULL);
  OT_CHECK(vq == -1 && vw == INT32_MIN + 6 && vl == 1 && vs == INT32_MIN + 6, "%d %d %d %d", vq, vw, vl, vs);
  optic_literal_t *after = eval(&f, NULL, 0);
  OT_CHECK(same(before, after));
  OT_CHECK(fx_count(f.m, f.main) == 5, "four constants and the tuple: %d", fx_count(f.m, f.main));
  optic_literal_destroy(before);
  optic_literal_destroy(after);
  optic_module_destroy(f.m);
}

/* Folding inside a called computation (it is needed, so it is visited). */
static void inside_callee(void) {
  fixture f = fx_setup();
  optic_comp_id callee;
  BUILD(optic_module_add_computation(f.m, "callee", &callee));
  optic_node_id x = fx_param(&f, callee, 0, OPTIC_F32, 0, NULL);
  optic_node_id k = fx_un(&f, callee, OPTIC_OP_LOG, fx_scalar(&f, callee, OPTIC_F32, 8.0));
  BUILD(optic_computation_set_root(f.m, callee, fx_bin(&f, callee, OPTIC_OP_MULTIPLY, x, k)));
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 0, NULL), c;
  BUILD(optic_graph_call(f.m, f.main, callee, &p, 1, NULL, &c));
  BUILD(optic_computation_set_root(f.m, f.main, c));
  OT_EXPECT_OK(fx_run(&f, ONLY(FOLD), NULL));
  optic_node_id root = optic_computation_root(f.m, callee);
  optic_node_id kk = optic_node_operand(f.m, root, 1);
  OT_CHECK(optic_node_opcode(f.m, kk) == OPTIC_OP_CONSTANT);
  float v = *(const float *)optic_node_constant_data(f.m, kk, NULL);
  OT_CHECK(v == (float)log(8.0), "%.9g", v);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

static optic_module_t *build_for_determinism(void) {
  fixture f = fx_setup();
  int64_t d[] = {3, 2}, perm[] = {1, 0};
  const float cv[] = {1, -2, 3, -4, 5, -6};
  optic_node_id c = constant_f32(&f, 2, d, cv);
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 2, d);
  optic_node_id t = fx_transpose(&f, f.main, fx_un(&f, f.main, OPTIC_OP_TANH, c), perm);
  optic_node_id t2 = fx_transpose(&f, f.main, fx_un(&f, f.main, OPTIC_OP_ABS, p), perm);
  BUILD(optic_computation_set_root(f.m, f.main, fx_bin(&f, f.main, OPTIC_OP_ADD, t, t2)));
  return f.m;
}

static void deterministic(void) {
  optic_module_t *a = build_for_determinism(), *b = build_for_determinism();
  OT_EXPECT_OK(optic_graph_optimize(a, NULL, NULL));
  OT_EXPECT_OK(optic_graph_optimize(b, NULL, NULL));
  char *ta = fx_hlo(a), *tb = fx_hlo(b);
  OT_CHECK(strcmp(ta, tb) == 0 && strstr(ta, "tanh") == NULL && strstr(ta, "abs") != NULL, "%s\n---\n%s", ta, tb);
  optic_string_free(ta);
  optic_string_free(tb);
  optic_module_destroy(a);
  optic_module_destroy(b);
}

static const ot_case cases[] = {
    {"chain_folds_to_one_constant", chain_folds_to_one_constant},
    {"partial_and_dead", partial_and_dead},
    {"never_grows", never_grows},
    {"window_work_is_the_evaluators", window_work_is_the_evaluators},
    {"older_options_get_the_default_cap", older_options_get_the_default_cap},
    {"work_budget", work_budget},
    {"calls_errors_and_effects", calls_errors_and_effects},
    {"nested_loops_count_their_iterations", nested_loops_count_their_iterations},
    {"integers_and_pred", integers_and_pred},
    {"inside_callee", inside_callee},
    {"deterministic", deterministic},
};
OT_MAIN(cases)
