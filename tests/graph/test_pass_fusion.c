/* Fusion pass: loop, input and output fusion on hand-built graphs (printed
 * HLO, XLA's cost counts, bitwise-equal evaluation before and after), the
 * non-cases (a producer with an outside user, a diamond that would make a
 * cycle, the size cap), cheap duplication, determinism and the fixed point,
 * a seeded random-graph property test and linear work growth. */
#include <math.h>

#include "tests/graph/pass_fixture.h"
#include "tests/graph/random_graph.h"

/* ------------------------------------------------------------ helpers */

/* Deterministic arguments for comp's parameters (floats in [-3, 3] with a
 * few special values; other dtypes random bytes, pred 0/1). */
static optic_literal_t **make_args(optic_module_t *m, optic_comp_id c, uint64_t seed, int32_t *n) {
  rg_rng r = {seed};
  *n = optic_computation_parameter_count(m, c);
  optic_literal_t **args = calloc((size_t)(*n ? *n : 1), sizeof *args);
  if (args == NULL) exit(2);
  for (int32_t i = 0; i < *n; i++) {
    const optic_type *t = optic_node_type(m, optic_computation_parameter(m, c, i));
    BUILD(optic_literal_create(t, &args[i]));
    size_t bytes = 0;
    unsigned char *p = optic_literal_mutable_data(args[i], &bytes);
    size_t es = optic_dtype_size(t->dtype);
    for (size_t k = 0; p != NULL && k < bytes; k += es) {
      if (t->dtype == OPTIC_F32) {
        static const float special[] = {0.0f, -0.0f, 1.0f, 0.5f};
        int64_t pick = rg_int(&r, 0, 9);
        float v = pick < 4 ? special[pick] : (float)rg_int(&r, -3000, 3000) / 1000.0f;
        memcpy(p + k, &v, 4);
      } else if (t->dtype == OPTIC_PRED) {
        p[k] = (unsigned char)rg_int(&r, 0, 1);
      } else {
        for (size_t b = 0; b < es; b++) p[k + b] = (unsigned char)rg_int(&r, 0, 255);
      }
    }
  }
  return args;
}

static void free_args(optic_literal_t **args, int32_t n) {
  for (int32_t i = 0; i < n; i++) optic_literal_destroy(args[i]);
  free(args);
}

static optic_literal_t *eval(optic_module_t *m, optic_literal_t **args, int32_t n) {
  optic_literal_t *out = NULL;
  optic_status st = optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)args, n, NULL, &out);
  if (st != OPTIC_OK) {
    fprintf(stderr, "  evaluate failed: %s\n", optic_last_error());
    return NULL;
  }
  return out;
}

static bool same_bits(const optic_literal_t *want, const optic_literal_t *got) {
  char why[256] = "";
  if (want == NULL || got == NULL) return false;
  bool ok = optic_literal_match(want, got, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why);
  if (!ok) fprintf(stderr, "  results differ: %s\n", why);
  return ok;
}

/* Runs fusion alone (with mask's other passes) and checks that the entry
 * computes bit-identical results on two argument sets. */
static bool fuse_and_compare(fixture *f, unsigned mask, int32_t max_size, optic_pass_stats *stats) {
  int32_t n;
  optic_literal_t **a1 = make_args(f->m, f->main, 1, &n), **a2 = make_args(f->m, f->main, 2, &n);
  optic_literal_t *before1 = eval(f->m, a1, n), *before2 = eval(f->m, a2, n);
  optic_optimize_options o = fx_only(mask | ONLY(FUSION));
  o.max_fusion_size = max_size;
  optic_pass_stats local = {.size = sizeof local};
  if (stats == NULL) stats = &local;
  stats->size = sizeof *stats;
  bool ok = optic_graph_optimize(f->m, &o, stats) == OPTIC_OK;
  if (!ok) fprintf(stderr, "  optimize failed: %s\n", optic_last_error());
  optic_literal_t *after1 = eval(f->m, a1, n), *after2 = eval(f->m, a2, n);
  ok = ok && same_bits(before1, after1) && same_bits(before2, after2) && fx_well_formed(f->m);
  optic_literal_destroy(before1);
  optic_literal_destroy(before2);
  optic_literal_destroy(after1);
  optic_literal_destroy(after2);
  free_args(a1, n);
  free_args(a2, n);
  return ok;
}

/* Fusion instructions in comp, and the most non-parameter instructions one
 * of their fused computations holds. */
static int32_t count_fusions(optic_module_t *m, optic_comp_id c, int32_t *largest) {
  int32_t n, k = 0, big = 0;
  const optic_node_id *ids = optic_computation_instructions(m, c, &n);
  for (int32_t i = 0; i < n; i++) {
    if (optic_node_opcode(m, ids[i]) != OPTIC_OP_FUSION) continue;
    k++;
    optic_comp_id fc = optic_node_called(m, ids[i], 0);
    int32_t nf;
    optic_computation_instructions(m, fc, &nf);
    nf -= optic_computation_parameter_count(m, fc);
    big = nf > big ? nf : big;
  }
  if (largest) *largest = big;
  return k;
}

/* Occurrences of needle in the module's HLO text. */
static int count_in_hlo(const optic_module_t *m, const char *needle) {
  char *text = NULL;
  if (optic_module_to_hlo_text(m, &text) != OPTIC_OK) exit(2);
  int k = 0;
  for (size_t at = 0; strstr(text + at, needle) != NULL; k++) at = (size_t)(strstr(text + at, needle) - text) + 1;
  optic_string_free(text);
  return k;
}

static bool has_user(optic_module_t *m, optic_node_id id, optic_node_id user) {
  for (int32_t u = 0; u < optic_node_user_count(m, id); u++) {
    if (optic_node_user(m, id, u) == user) return true;
  }
  return false;
}

static optic_comp_id scalar_adder(fixture *f) {
  optic_comp_id c;
  BUILD(optic_module_add_computation(f->m, "add", &c));
  optic_node_id x = fx_param(f, c, 0, OPTIC_F32, 0, NULL), y = fx_param(f, c, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f->m, c, fx_bin(f, c, OPTIC_OP_ADD, x, y)));
  return c;
}

/* ------------------------------------------------------------ loop fusion */

/* XLA's FusionCostAnalysis.LoopFusion graph, built unfused: the pass makes
 * the one fusion of the cost test (16 flops, 4 transcendentals, 64 bytes). */
static void loop_fusion_xla_example(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 2};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), b = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id c = fx_param(&f, f.main, 2, OPTIC_F32, 2, d), add, clamp;
  add = fx_bin(&f, f.main, OPTIC_OP_ADD, a, b);
  BUILD(optic_graph_clamp(f.m, f.main, b, add, add, NULL, &clamp));
  optic_node_id mul = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, add), c);
  BUILD(optic_computation_set_root(f.m, f.main, fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, mul, clamp)));
  optic_cost before;
  OT_EXPECT_OK(optic_computation_cost(f.m, f.main, &before));
  OT_CHECK(before.bytes_accessed == 16 * (3 + 4 + 2 + 3 + 3), "unfused bytes %g", before.bytes_accessed);
  optic_pass_stats st;
  OT_CHECK(fuse_and_compare(&f, 0, 0, &st));
  optic_node_id fu = optic_computation_root(f.m, f.main);
  OT_CHECK(optic_node_opcode(f.m, fu) == OPTIC_OP_FUSION && fx_count(f.m, f.main) == 4, "3 parameters and the fusion");
  OT_CHECK(optic_node_operand_count(f.m, fu) == 3 && optic_node_operand(f.m, fu, 0) == a &&
           optic_node_operand(f.m, fu, 1) == b && optic_node_operand(f.m, fu, 2) == c);
  optic_cost after;
  OT_EXPECT_OK(optic_node_cost(f.m, fu, &after));
  OT_CHECK(after.flops == 16 && after.transcendentals == 4 && after.bytes_accessed == 64, "%g %g %g", after.flops,
           after.transcendentals, after.bytes_accessed);
  OT_EXPECT_OK(optic_computation_cost(f.m, f.main, &after));
  OT_CHECK(after.bytes_accessed == 64 && after.flops == before.flops);
  char *text = fx_hlo(f.m);
  OT_CHECK(strstr(text, "fusion(") && strstr(text, "kind=kLoop") && strstr(text, "calls=fused_computation.0") &&
               strstr(text, "fused_computation.0 {") != NULL,
           "%s", text);
  optic_string_free(text);
  const optic_pass_stat *fs = &st.pass[OPTIC_PASS_FUSION];
  OT_CHECK(fs->added == 1 && fs->removed == 5 && st.rounds == 2, "added %lld removed %lld rounds %d",
           (long long)fs->added, (long long)fs->removed, st.rounds);
  optic_module_destroy(f.m);
}

/* Bias add through a broadcast, scale by a broadcast scalar constant,
 * reshape and transpose in the same iteration space: one fusion; the scalar
 * constant is copied inside, the bias enters as a parameter read once per
 * broadcast (XLA's FusionParameterReadBytes). */
static void loop_fusion_layout_ops(void) {
  fixture f = fx_setup();
  int64_t d34[] = {3, 4}, d4[] = {4}, d12[] = {12}, d43[] = {4, 3}, swap[] = {1, 0};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d34), bias = fx_param(&f, f.main, 1, OPTIC_F32, 1, d4);
  optic_node_id y = fx_param(&f, f.main, 2, OPTIC_F32, 1, d12), bb, two;
  optic_shape s34 = fx_shape(2, d34);
  BUILD(optic_graph_broadcast(f.m, f.main, bias, &s34, (int64_t[]){1}, 1, NULL, &bb));
  two = fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 2.0), 2, d34);
  optic_node_id h = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, fx_bin(&f, f.main, OPTIC_OP_ADD, x, bb), two);
  optic_node_id yr = fx_reshape(&f, f.main, fx_un(&f, f.main, OPTIC_OP_TANH, y), 2, d34);
  optic_node_id t = fx_transpose(&f, f.main, fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, h, yr), swap);
  BUILD(optic_computation_set_root(f.m, f.main, fx_un(&f, f.main, OPTIC_OP_NEGATE, t)));
  (void)d43;
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  optic_node_id fu = optic_computation_root(f.m, f.main);
  OT_CHECK(optic_node_opcode(f.m, fu) == OPTIC_OP_FUSION && fx_count(f.m, f.main) == 4);
  OT_CHECK(optic_node_operand_count(f.m, fu) == 3, "x, bias, y: the constant is inside");
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(f.m, fu, &c));
  OT_CHECK(c.bytes_accessed == 48 + 48 + 16 + 48, "out + x + bias + y: %g", c.bytes_accessed);
  OT_CHECK(c.flops == 12 * 4 && c.transcendentals == 12, "%g %g", c.flops, c.transcendentals);
  optic_module_destroy(f.m);
}

/* ------------------------------------------------------------ non-cases */

/* exp(x) is used by the group and by the tuple: it stays outside and enters
 * as a parameter; a broadcast of a parameter with an outside user is cheap
 * and is duplicated inside instead (the original stays for the tuple). */
static void multi_user_producer_not_swallowed(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 3};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), y = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id s = fx_param(&f, f.main, 2, OPTIC_F32, 0, NULL);
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, x), bs = fx_splat(&f, f.main, s, 2, d);
  optic_node_id a = fx_bin(&f, f.main, OPTIC_OP_ADD, fx_un(&f, f.main, OPTIC_OP_NEGATE, e), y);
  optic_node_id r = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, a, bs), t;
  BUILD(optic_graph_tuple(f.m, f.main, (optic_node_id[]){r, e, bs}, 3, NULL, &t));
  BUILD(optic_computation_set_root(f.m, f.main, t));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  optic_node_id fu = optic_node_operand(f.m, t, 0);
  OT_CHECK(optic_node_opcode(f.m, fu) == OPTIC_OP_FUSION);
  OT_CHECK(fx_exists(f.m, e) && optic_node_operand(f.m, t, 1) == e && has_user(f.m, e, fu), "exp kept, used by both");
  OT_CHECK(fx_exists(f.m, bs) && optic_node_operand(f.m, t, 2) == bs && !has_user(f.m, bs, fu),
           "the broadcast is duplicated inside, its parameter feeds the fusion");
  OT_CHECK(has_user(f.m, s, fu) && optic_node_operand_count(f.m, fu) == 3, "e, y, s");
  OT_CHECK(count_fusions(f.m, f.main, NULL) == 1 && fx_count(f.m, f.main) == 7, "x y s exp broadcast fusion tuple");
  optic_module_destroy(f.m);
}

/* root = negate(add(a, reverse(a))) with a = exp(x): fusing a into the
 * add/negate group would need reverse(a) inside too (reverse is not fused),
 * i.e. a path out of the group and back: a cycle. a stays outside. */
static void diamond_not_fused_into_cycle(void) {
  fixture f = fx_setup();
  int64_t d[] = {5};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), a = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, x), rv;
  BUILD(optic_graph_reverse(f.m, f.main, a, (int64_t[]){0}, 1, NULL, &rv));
  optic_node_id root = fx_un(&f, f.main, OPTIC_OP_NEGATE, fx_bin(&f, f.main, OPTIC_OP_ADD, a, rv));
  BUILD(optic_computation_set_root(f.m, f.main, root));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  optic_node_id fu = optic_computation_root(f.m, f.main);
  OT_CHECK(optic_node_opcode(f.m, fu) == OPTIC_OP_FUSION && fx_exists(f.m, a) && fx_exists(f.m, rv));
  OT_CHECK(optic_node_operand_count(f.m, fu) == 2 && optic_node_operand(f.m, fu, 0) == a &&
           optic_node_operand(f.m, fu, 1) == rv);
  int32_t largest;
  OT_CHECK(count_fusions(f.m, f.main, &largest) == 1 && largest == 2, "add and negate only");
  optic_module_destroy(f.m);
}

/* An elementwise producer behind a growing broadcast would be recomputed per
 * output element: not fused. A lone elementwise op is not a fusion. */
static void no_recompute_no_singletons(void) {
  fixture f = fx_setup();
  int64_t d4[] = {4}, d34[] = {3, 4};
  optic_node_id v = fx_param(&f, f.main, 0, OPTIC_F32, 1, d4), x = fx_param(&f, f.main, 1, OPTIC_F32, 2, d34), b;
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, v);
  optic_shape s34 = fx_shape(2, d34);
  BUILD(optic_graph_broadcast(f.m, f.main, e, &s34, (int64_t[]){1}, 1, NULL, &b));
  optic_node_id root = fx_bin(&f, f.main, OPTIC_OP_ADD, x, b);
  BUILD(optic_computation_set_root(f.m, f.main, root));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  optic_node_id fu = optic_computation_root(f.m, f.main);
  OT_CHECK(fx_exists(f.m, e) && optic_node_operand(f.m, fu, 0) == e, "exp stays a parameter of {broadcast, add}");
  fixture g = fx_setup();
  optic_node_id p = fx_param(&g, g.main, 0, OPTIC_F32, 1, d4);
  BUILD(optic_computation_set_root(g.m, g.main, fx_un(&g, g.main, OPTIC_OP_TANH, p)));
  optic_pass_stats st;
  OT_CHECK(fuse_and_compare(&g, 0, 0, &st));
  OT_CHECK(count_fusions(g.m, g.main, NULL) == 0 && st.rounds == 1);
  optic_module_destroy(f.m);
  optic_module_destroy(g.m);
}

/* A chain of 10 elementwise ops under caps 4 and 3: no fused computation
 * holds more than the cap. */
static void size_cap_respected(void) {
  for (int32_t cap = 3; cap <= 4; cap++) {
    fixture f = fx_setup();
    int64_t d[] = {6};
    optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), h = x;
    for (int i = 0; i < 10; i++) h = fx_un(&f, f.main, i % 2 ? OPTIC_OP_NEGATE : OPTIC_OP_TANH, h);
    BUILD(optic_computation_set_root(f.m, f.main, h));
    OT_CHECK(fuse_and_compare(&f, 0, cap, NULL));
    int32_t largest, k = count_fusions(f.m, f.main, &largest);
    /* groups of cap from the root back; a last group of one op is no fusion */
    OT_CHECK(largest == cap && k == 10 / cap + (10 % cap >= 2), "cap %d: %d fusions, largest %d", cap, k, largest);
    optic_module_destroy(f.m);
  }
  /* cap 1: nothing can be fused */
  fixture f = fx_setup();
  int64_t d[] = {2};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  BUILD(
      optic_computation_set_root(f.m, f.main, fx_un(&f, f.main, OPTIC_OP_NEGATE, fx_un(&f, f.main, OPTIC_OP_ABS, x))));
  OT_CHECK(fuse_and_compare(&f, 0, 1, NULL));
  OT_CHECK(count_fusions(f.m, f.main, NULL) == 0);
  optic_optimize_options o = optic_optimize_options_default();
  o.max_fusion_size = -1;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_module_destroy(f.m);
}

/* ------------------------------------------------------------ input and output fusion */

static void input_fusion_reduce(void) {
  fixture f = fx_setup();
  optic_comp_id add = scalar_adder(&f);
  int64_t d[] = {3, 5};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), y = fx_param(&f, f.main, 1, OPTIC_F32, 2, d), r;
  optic_node_id p = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, x), y);
  optic_node_id zero = fx_scalar(&f, f.main, OPTIC_F32, 0.0);
  BUILD(optic_graph_reduce(f.m, f.main, &p, &zero, 1, (int64_t[]){1}, 1, add, NULL, &r));
  BUILD(optic_computation_set_root(f.m, f.main, fx_un(&f, f.main, OPTIC_OP_NEGATE, r)));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  char *text = fx_hlo(f.m);
  OT_CHECK(strstr(text, "kind=kInput") != NULL, "%s", text);
  optic_string_free(text);
  optic_node_id root = optic_computation_root(f.m, f.main);
  OT_CHECK(optic_node_opcode(f.m, root) == OPTIC_OP_NEGATE, "the negate after the reduce is not fused into it");
  optic_node_id fu = optic_node_operand(f.m, root, 0);
  OT_CHECK(optic_node_opcode(f.m, fu) == OPTIC_OP_FUSION && optic_node_operand_count(f.m, fu) == 2);
  OT_CHECK(!fx_exists(f.m, zero), "the init constant was copied in and its original removed");
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(f.m, fu, &c));
  OT_CHECK(c.bytes_accessed == 12 + 60 + 60 && c.flops == 15 + 12 && c.transcendentals == 15, "%g %g %g", c.flops,
           c.transcendentals, c.bytes_accessed);
  optic_module_destroy(f.m);
}

/* relu(dot(a, w) + broadcast(bias)) as maximum with a broadcast zero, and a
 * convolution scaled by a constant: output fusions; the dot's own operands
 * (here a transpose) stay outside. */
static void output_fusion_dot_and_conv(void) {
  fixture f = fx_setup();
  int64_t da[] = {5, 4}, dw[] = {3, 5}, dout[] = {4, 3}, db[] = {3}, swap[] = {1, 0};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 2, da), w = fx_param(&f, f.main, 1, OPTIC_F32, 2, dw);
  optic_node_id bias = fx_param(&f, f.main, 2, OPTIC_F32, 1, db), at = fx_transpose(&f, f.main, a, swap), dot, bb;
  optic_dot_dims dd = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  BUILD(optic_graph_dot(f.m, f.main, at, fx_transpose(&f, f.main, w, swap), &dd, NULL, &dot));
  optic_shape so = fx_shape(2, dout);
  BUILD(optic_graph_broadcast(f.m, f.main, bias, &so, (int64_t[]){1}, 1, NULL, &bb));
  optic_node_id zero = fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 0.0), 2, dout);
  optic_node_id relu = fx_bin(&f, f.main, OPTIC_OP_MAXIMUM, fx_bin(&f, f.main, OPTIC_OP_ADD, dot, bb), zero);
  /* convolution "bf_io->bf" is a matmul: relu [4,3] x kernel [3,2] */
  int64_t dk[] = {3, 2}, dc[] = {4, 2};
  optic_node_id k = fx_param(&f, f.main, 3, OPTIC_F32, 2, dk), conv, t;
  BUILD(optic_graph_convolution(f.m, f.main, relu, k, "bf_io->bf", NULL, 1, 1, NULL, &conv));
  optic_node_id scaled =
      fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, conv, fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 0.25), 2, dc));
  BUILD(optic_graph_tuple(f.m, f.main, (optic_node_id[]){scaled}, 1, NULL, &t));
  BUILD(optic_computation_set_root(f.m, f.main, t));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  OT_CHECK(count_in_hlo(f.m, "kind=kOutput") == 2 && count_in_hlo(f.m, "kind=kLoop") == 0);
  optic_node_id f2 = optic_node_operand(f.m, t, 0), f1 = optic_node_operand(f.m, f2, 0);
  OT_CHECK(optic_node_opcode(f.m, f2) == OPTIC_OP_FUSION && optic_node_opcode(f.m, f1) == OPTIC_OP_FUSION);
  OT_CHECK(optic_node_operand_count(f.m, f1) == 3 && optic_node_operand(f.m, f1, 0) == at, "at, w^T, bias");
  OT_CHECK(optic_node_operand_count(f.m, f2) == 2 && optic_node_operand(f.m, f2, 1) == k, "f1, k");
  optic_cost c;
  OT_EXPECT_OK(optic_node_cost(f.m, f1, &c));
  OT_CHECK(c.flops == 2 * 12 * 5 + 12 + 12 && c.bytes_accessed == 48 + 80 + 60 + 12, "%g %g", c.flops,
           c.bytes_accessed);
  optic_module_destroy(f.m);
}

/* A reduce's combiner (a scalar function) is never fused; a called
 * computation's body is. */
static void combiners_skipped_bodies_fused(void) {
  fixture f = fx_setup();
  optic_comp_id comb, body;
  BUILD(optic_module_add_computation(f.m, "comb", &comb));
  optic_node_id acc = fx_param(&f, comb, 0, OPTIC_F32, 0, NULL), v = fx_param(&f, comb, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f.m, comb, fx_bin(&f, comb, OPTIC_OP_ADD, acc, fx_un(&f, comb, OPTIC_OP_ABS, v))));
  int64_t d[] = {3, 4};
  BUILD(optic_module_add_computation(f.m, "body", &body));
  optic_node_id bx = fx_param(&f, body, 0, OPTIC_F32, 2, d);
  BUILD(optic_computation_set_root(f.m, body, fx_un(&f, body, OPTIC_OP_NEGATE, fx_un(&f, body, OPTIC_OP_TANH, bx))));
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), c, r;
  BUILD(optic_graph_call(f.m, f.main, body, &x, 1, NULL, &c));
  optic_node_id zero = fx_scalar(&f, f.main, OPTIC_F32, 0.0);
  BUILD(optic_graph_reduce(f.m, f.main, &c, &zero, 1, (int64_t[]){0, 1}, 2, comb, NULL, &r));
  BUILD(optic_computation_set_root(f.m, f.main, r));
  OT_CHECK(fuse_and_compare(&f, 0, 0, NULL));
  OT_CHECK(count_fusions(f.m, comb, NULL) == 0 && fx_count(f.m, comb) == 4, "the combiner is untouched");
  OT_CHECK(count_fusions(f.m, body, NULL) == 1 && fx_count(f.m, body) == 2, "parameter and fusion");
  optic_module_destroy(f.m);
}

/* ------------------------------------------------------------ whole-manager properties */

/* A dense layer per step (own weights and bias): dot, bias add through a broadcast, tanh, scale by
 * a broadcast 0.5, and in odd layers a relu-style max(h, 0) + h (h used twice
 * inside the group). Each layer becomes one output fusion. */
static void build_mlp(fixture *f, int layers) {
  int64_t d[] = {4, 8}, dw[] = {8, 8}, db[] = {8};
  optic_node_id h = fx_param(f, f->main, 0, OPTIC_F32, 2, d);
  optic_shape s = fx_shape(2, d);
  optic_node_id half = fx_scalar(f, f->main, OPTIC_F32, 0.5);
  optic_dot_dims dd = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  for (int i = 0; i < layers; i++) {
    optic_node_id w = fx_param(f, f->main, 1 + 2 * i, OPTIC_F32, 2, dw);
    optic_node_id bias = fx_param(f, f->main, 2 + 2 * i, OPTIC_F32, 1, db);
    optic_node_id bb, mm, scale = fx_splat(f, f->main, half, 2, d);
    BUILD(optic_graph_dot(f->m, f->main, h, w, &dd, NULL, &mm));
    BUILD(optic_graph_broadcast(f->m, f->main, bias, &s, (int64_t[]){1}, 1, NULL, &bb));
    optic_node_id a = fx_un(f, f->main, OPTIC_OP_TANH, fx_bin(f, f->main, OPTIC_OP_ADD, mm, bb));
    h = fx_bin(f, f->main, OPTIC_OP_MULTIPLY, a, scale);
    if (i % 2) {
      optic_node_id lo = fx_splat(f, f->main, fx_scalar(f, f->main, OPTIC_F32, 0.0), 2, d);
      h = fx_bin(f, f->main, OPTIC_OP_ADD, fx_bin(f, f->main, OPTIC_OP_MAXIMUM, h, lo), h);
    }
  }
  BUILD(optic_computation_set_root(f->m, f->main, h));
}

/* Same module twice: identical HLO; the result is a fixed point (a second
 * optimize changes nothing); full level runs fusion by default. */
static void deterministic_fixed_point(void) {
  fixture a = fx_setup(), b = fx_setup();
  build_mlp(&a, 6);
  build_mlp(&b, 6);
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(a.m, NULL, &st));
  OT_EXPECT_OK(optic_graph_optimize(b.m, NULL, NULL));
  OT_CHECK(st.pass[OPTIC_PASS_FUSION].runs > 0 && st.pass[OPTIC_PASS_FUSION].added == 6 && st.rounds == 2, "rounds %d",
           st.rounds);
  char *ta = fx_hlo(a.m), *tb = fx_hlo(b.m);
  OT_CHECK(strcmp(ta, tb) == 0);
  optic_string_free(tb);
  OT_EXPECT_OK(optic_graph_optimize(a.m, NULL, &st));
  OT_CHECK(st.rounds == 1, "already optimized: %d rounds", st.rounds);
  tb = fx_hlo(a.m);
  OT_CHECK(strcmp(ta, tb) == 0);
  optic_string_free(ta);
  optic_string_free(tb);
  OT_CHECK(fx_well_formed(a.m));
  /* semantics through the whole manager */
  fixture c = fx_setup();
  build_mlp(&c, 6);
  OT_CHECK(fuse_and_compare(&c, ONLY(SIMPLIFY) | ONLY(CSE) | ONLY(DCE), 0, NULL));
  OT_CHECK(count_fusions(c.m, c.main, NULL) == 6, "one fusion per layer: %d", count_fusions(c.m, c.main, NULL));
  optic_module_destroy(a.m);
  optic_module_destroy(b.m);
  optic_module_destroy(c.m);
}

/* Seeded random graphs (caps and pass mixes vary with the seed): full
 * optimization keeps every result bit for bit,
 * the module stays well formed (operands before users in every computation,
 * users mirror operands), and fusion does happen. OPTIC_TEST_SEED varies it. */
static void random_graphs_keep_results(void) {
  uint64_t seed0 = rg_seed(0xf05e);
  int64_t fusions = 0;
  for (uint64_t s = 0; s < 300; s++) {
    rg_graph g;
    if (!rg_build(seed0 + s, 10 + (int32_t)(s % 60), &g)) {
      OT_CHECK(false, "seed %llu: generator failed", (unsigned long long)(seed0 + s));
      optic_module_destroy(g.m);
      continue;
    }
    int32_t n;
    optic_literal_t **args = make_args(g.m, g.main, seed0 + s, &n);
    optic_literal_t *before = eval(g.m, args, n);
    optic_pass_stats st = {.size = sizeof st};
    optic_optimize_options o = optic_optimize_options_default();
    if (s % 2) o.max_fusion_size = 2 + (int32_t)(s % 5);           /* small caps: split groups, fewer copies */
    if (s % 3 == 0) o.passes[OPTIC_PASS_CSE] = OPTIC_PASS_DISABLE; /* duplicates left for fusion to meet */
    /* Folding would turn the generator's constant subtrees into constants and
     * leave fusion less to group; test_optimize_semantics covers all passes. */
    o.passes[OPTIC_PASS_FOLD] = OPTIC_PASS_DISABLE;
    optic_status rc = optic_graph_optimize(g.m, &o, &st);
    OT_CHECK(rc == OPTIC_OK, "seed %llu: %s", (unsigned long long)(seed0 + s), optic_last_error());
    optic_literal_t *after = eval(g.m, args, n);
    OT_CHECK(same_bits(before, after), "seed %llu", (unsigned long long)(seed0 + s));
    OT_CHECK(fx_well_formed(g.m), "seed %llu", (unsigned long long)(seed0 + s));
    fusions += st.pass[OPTIC_PASS_FUSION].added;
    optic_literal_destroy(before);
    optic_literal_destroy(after);
    free_args(args, n);
    optic_module_destroy(g.m);
  }
  printf("  300 random graphs: %lld fusions\n", (long long)fusions);
  OT_CHECK(fusions > 300);
}

/* Fusion's work grows linearly with the graph (MLP chains of 1x, 2x, 10x). */
static void scales_linearly(void) {
  int64_t work[3];
  const int layers[3] = {1000, 2000, 10000};
  for (int i = 0; i < 3; i++) {
    fixture f = fx_setup();
    build_mlp(&f, layers[i]);
    optic_pass_stats st = {.size = sizeof st};
    OT_EXPECT_OK(optic_graph_optimize(f.m, NULL, &st));
    work[i] = st.pass[OPTIC_PASS_FUSION].work;
    printf("  %lld instructions: %.1f ms in all, fusion %.1f ms, %lld fusions\n", (long long)st.instructions_before,
           st.seconds * 1e3, st.pass[OPTIC_PASS_FUSION].seconds * 1e3, (long long)st.pass[OPTIC_PASS_FUSION].added);
    OT_CHECK(count_fusions(f.m, f.main, NULL) == layers[i]);
    optic_module_destroy(f.m);
  }
  double r2 = (double)work[1] / (double)work[0], r10 = (double)work[2] / (double)work[0];
  OT_CHECK(r2 > 1.9 && r2 < 2.1 && r10 > 9.5 && r10 < 10.5, "fusion work ratios %.3f %.3f", r2, r10);
}

static const ot_case cases[] = {
    {"loop_fusion_xla_example", loop_fusion_xla_example},
    {"loop_fusion_layout_ops", loop_fusion_layout_ops},
    {"multi_user_producer_not_swallowed", multi_user_producer_not_swallowed},
    {"diamond_not_fused_into_cycle", diamond_not_fused_into_cycle},
    {"no_recompute_no_singletons", no_recompute_no_singletons},
    {"size_cap_respected", size_cap_respected},
    {"input_fusion_reduce", input_fusion_reduce},
    {"output_fusion_dot_and_conv", output_fusion_dot_and_conv},
    {"combiners_skipped_bodies_fused", combiners_skipped_bodies_fused},
    {"deterministic_fixed_point", deterministic_fixed_point},
    {"random_graphs_keep_results", random_graphs_keep_results},
    {"scales_linearly", scales_linearly},
};
OT_MAIN(cases)
