/* The pass manager: levels and per-pass toggles, option and stats
 * validation and growth (size field), fixed point and its round cap,
 * determinism (same graph built twice gives the same HLO text), passes
 * feeding each other, and work that grows linearly on an MLP-like chain. */
#include <stddef.h>

#include "tests/graph/pass_fixture.h"

static bool msg_has(const char *needle) {
  if (strstr(optic_last_error(), needle)) return true;
  fprintf(stderr, "  message '%s' lacks '%s'\n", optic_last_error(), needle);
  return false;
}

/* An MLP-like chain with something for every pass in each layer:
 *   h' = tanh(h + b) + tanh(h + b)   (b: a broadcast of -(-0.5), repeated per
 *                                     layer: the negate folds; the second
 *                                     tanh a duplicate)
 *   multiplied by a broadcast 1, reshaped there and back, transposed twice
 *   to the identity, plus a dead exp. 15 instructions per layer. */
static void build_mlp(fixture *f, int32_t layers) {
  int64_t d[] = {4, 8}, flat[] = {32}, swap[] = {1, 0};
  optic_node_id h = fx_param(f, f->main, 0, OPTIC_F32, 2, d);
  for (int32_t i = 0; i < layers; i++) {
    optic_node_id half = fx_un(f, f->main, OPTIC_OP_NEGATE, fx_scalar(f, f->main, OPTIC_F32, -0.5));
    optic_node_id b = fx_splat(f, f->main, half, 2, d);
    optic_node_id a = fx_bin(f, f->main, OPTIC_OP_ADD, h, b);
    optic_node_id one = fx_splat(f, f->main, fx_scalar(f, f->main, OPTIC_F32, 1.0), 2, d);
    optic_node_id m = fx_bin(f, f->main, OPTIC_OP_MULTIPLY, a, one);
    optic_node_id t1 = fx_un(f, f->main, OPTIC_OP_TANH, m), t2 = fx_un(f, f->main, OPTIC_OP_TANH, m);
    optic_node_id s = fx_bin(f, f->main, OPTIC_OP_ADD, t1, t2);
    optic_node_id r = fx_reshape(f, f->main, fx_reshape(f, f->main, s, 1, flat), 2, d);
    h = fx_transpose(f, f->main, fx_transpose(f, f->main, r, swap), swap);
    fx_un(f, f->main, OPTIC_OP_EXPONENTIAL, s);
  }
  BUILD(optic_computation_set_root(f->m, f->main, h));
}

/* Full level without fusion: the cases below check how simplify, cse and
 * dce work together (tests/graph/test_pass_fusion.c covers fusion). */
static const optic_optimize_options unfused = {.size = sizeof(optic_optimize_options),
                                               .level = OPTIC_OPT_FULL,
                                               .passes = {[OPTIC_PASS_FUSION] = OPTIC_PASS_DISABLE}};
/* ... and without folding either, for exact counts of the other three. */
static const optic_optimize_options unfolded_unfused = {
    .size = sizeof(optic_optimize_options),
    .level = OPTIC_OPT_FULL,
    .passes = {[OPTIC_PASS_FUSION] = OPTIC_PASS_DISABLE, [OPTIC_PASS_FOLD] = OPTIC_PASS_DISABLE}};

static void levels_and_toggles(void) {
  struct {
    optic_opt_level level;
    optic_pass force_on, force_off;
    bool runs[OPTIC_PASS_COUNT_]; /* simplify, cse, dce, fold, fusion */
  } cases[] = {
      {OPTIC_OPT_NONE, OPTIC_PASS_COUNT_, OPTIC_PASS_COUNT_, {false, false, false, false, false}},
      {OPTIC_OPT_BASIC, OPTIC_PASS_COUNT_, OPTIC_PASS_COUNT_, {false, true, true, false, false}},
      {OPTIC_OPT_FULL, OPTIC_PASS_COUNT_, OPTIC_PASS_COUNT_, {true, true, true, true, true}},
      {OPTIC_OPT_NONE, OPTIC_PASS_SIMPLIFY, OPTIC_PASS_COUNT_, {true, false, false, false, false}},
      {OPTIC_OPT_FULL, OPTIC_PASS_COUNT_, OPTIC_PASS_CSE, {true, false, true, true, true}},
      {OPTIC_OPT_BASIC, OPTIC_PASS_SIMPLIFY, OPTIC_PASS_DCE, {true, true, false, false, false}},
      {OPTIC_OPT_FULL, OPTIC_PASS_COUNT_, OPTIC_PASS_FOLD, {true, true, true, false, true}},
      {OPTIC_OPT_NONE, OPTIC_PASS_FOLD, OPTIC_PASS_COUNT_, {false, false, false, true, false}},
      {OPTIC_OPT_FULL, OPTIC_PASS_COUNT_, OPTIC_PASS_FUSION, {true, true, true, true, false}},
      {OPTIC_OPT_NONE, OPTIC_PASS_FUSION, OPTIC_PASS_COUNT_, {false, false, false, false, true}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fixture f = fx_setup();
    build_mlp(&f, 3);
    optic_optimize_options o = optic_optimize_options_default();
    o.level = cases[i].level;
    if (cases[i].force_on != OPTIC_PASS_COUNT_) o.passes[cases[i].force_on] = OPTIC_PASS_ENABLE;
    if (cases[i].force_off != OPTIC_PASS_COUNT_) o.passes[cases[i].force_off] = OPTIC_PASS_DISABLE;
    optic_pass_stats st = {.size = sizeof st};
    OT_EXPECT_OK(optic_graph_optimize(f.m, &o, &st));
    bool any = false;
    for (int p = 0; p < OPTIC_PASS_COUNT_; p++) {
      OT_CHECK((st.pass[p].runs > 0) == cases[i].runs[p], "case %zu: %s ran %d times", i, optic_pass_name(p),
               st.pass[p].runs);
      any |= cases[i].runs[p];
    }
    OT_CHECK(any ? st.rounds >= 2 : st.rounds == 0, "case %zu: %d rounds", i, st.rounds);
    OT_CHECK(st.instructions_before == 1 + 15 * 3 && fx_well_formed(f.m));
    optic_module_destroy(f.m);
  }
  OT_CHECK(strcmp(optic_pass_name(OPTIC_PASS_DCE), "dce") == 0 && strcmp(optic_pass_name(OPTIC_PASS_CSE), "cse") == 0 &&
           strcmp(optic_pass_name(OPTIC_PASS_SIMPLIFY), "simplify") == 0 &&
           strcmp(optic_pass_name(OPTIC_PASS_FOLD), "fold") == 0 &&
           strcmp(optic_pass_name(OPTIC_PASS_COUNT_), "invalid") == 0);
}

static void bad_options(void) {
  fixture f = fx_setup();
  build_mlp(&f, 1);
  char *before = fx_hlo(f.m);
  optic_optimize_options o = optic_optimize_options_default();
  o.size = 0;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("options.size is 0"));
  o.size = sizeof o + 8;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_optimize_options_default();
  o.level = (optic_opt_level)7;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("level 7"));
  o = optic_optimize_options_default();
  o.passes[OPTIC_PASS_CSE] = (optic_pass_toggle)9;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_optimize_options_default();
  o.max_rounds = -1;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_optimize_options_default();
  o.fold_max_bytes = -1;
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("fold_max_bytes is -1"));
  optic_pass_stats st = {0};
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, NULL, &st), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("stats.size"));
  char *after = fx_hlo(f.m);
  OT_CHECK(strcmp(before, after) == 0, "rejected options change nothing");
  optic_string_free(before);
  optic_string_free(after);
  optic_module_destroy(f.m);
}

/* A caller built against an older, shorter layout: fields past its size keep
 * the defaults (options) or are not written (stats). */
static void size_field_growth(void) {
  fixture f = fx_setup();
  build_mlp(&f, 2);
  optic_optimize_options o = optic_optimize_options_default();
  o.level = OPTIC_OPT_BASIC;
  o.max_rounds = 1; /* would fail: but it lies past the size given */
  o.size = offsetof(optic_optimize_options, max_rounds);
  struct {
    optic_pass_stats st;
    unsigned char guard[64];
  } out;
  memset(&out, 0xAB, sizeof out);
  out.st.size = offsetof(optic_pass_stats, instructions_after);
  OT_EXPECT_OK(optic_graph_optimize(f.m, &o, &out.st));
  OT_CHECK(out.st.rounds == 2 && out.st.instructions_before == 31, "rounds %d before %lld", out.st.rounds,
           (long long)out.st.instructions_before);
  unsigned char *tail = (unsigned char *)&out.st + offsetof(optic_pass_stats, instructions_after);
  bool untouched = true;
  for (size_t i = 0; i < sizeof out - offsetof(optic_pass_stats, instructions_after); i++) untouched &= tail[i] == 0xAB;
  OT_CHECK(untouched, "nothing written past the caller's size");
  optic_module_destroy(f.m);
}

static void fixed_point_and_round_cap(void) {
  fixture f = fx_setup();
  build_mlp(&f, 4);
  optic_optimize_options o = optic_optimize_options_default();
  o.max_rounds = 1;
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, &st), OPTIC_ERR_INTERNAL);
  OT_CHECK(msg_has("no fixed point after 1 rounds") && msg_has("dce ") && st.rounds == 1);
  OT_CHECK(fx_well_formed(f.m), "the module stays valid after the cap");
  /* one round did everything; the next confirms it */
  OT_EXPECT_OK(optic_graph_optimize(f.m, NULL, &st));
  int64_t changes = 0;
  for (int p = 0; p < OPTIC_PASS_COUNT_; p++) changes += st.pass[p].removed + st.pass[p].replaced + st.pass[p].added;
  OT_CHECK(st.rounds == 1 && changes == 0, "rounds %d, changes %lld", st.rounds, (long long)changes);
  /* and an optimized module passes a cap of one round */
  OT_EXPECT_OK(optic_graph_optimize(f.m, &o, &st));
  optic_module_destroy(f.m);

  f = fx_setup();
  build_mlp(&f, 4);
  o.max_rounds = 2;
  OT_EXPECT_OK(optic_graph_optimize(f.m, &o, &st));
  OT_CHECK(st.rounds == 2);
  optic_module_destroy(f.m);
}

/* Exact counts on the MLP chain, and the resulting program, without
 * folding (which would turn each -(-0.5) into a constant 0.5:
 * fold_feeds_simplify_and_cse has that). */
static void passes_cooperate(void) {
  fixture f = fx_setup();
  const int32_t layers = 5;
  build_mlp(&f, layers);
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfolded_unfused, &st));
  const optic_pass_stat *simp = &st.pass[OPTIC_PASS_SIMPLIFY], *cse = &st.pass[OPTIC_PASS_CSE],
                        *dce = &st.pass[OPTIC_PASS_DCE];
  /* simplify per layer: x*1, the reshape pair (round trip), the transpose pair */
  OT_CHECK(simp->replaced == 3 * layers && simp->added == 0, "simplify %lld/%lld", (long long)simp->replaced,
           (long long)simp->added);
  /* cse: the second tanh per layer; the -0.5 constant, its negate and the
   * broadcast after the first layer (the 1s are dead once x*1 is gone: cse
   * leaves them) */
  OT_CHECK(cse->replaced == layers + 3 * (layers - 1), "cse %lld", (long long)cse->replaced);
  /* left: parameter, -0.5, its negate and broadcast, and per layer add, tanh, add */
  OT_CHECK(st.instructions_after == 4 + 3 * layers && dce->removed == 15 * layers + 1 - st.instructions_after,
           "after %lld removed %lld", (long long)st.instructions_after, (long long)dce->removed);
  OT_CHECK(st.rounds == 2 && simp->runs == 2 && cse->runs == 2 && dce->runs == 2);
  for (int p = 0; p < OPTIC_PASS_COUNT_; p++) {
    bool off = p == OPTIC_PASS_FOLD || p == OPTIC_PASS_FUSION;
    OT_CHECK(st.pass[p].seconds >= 0 && (off ? st.pass[p].runs == 0 : st.pass[p].work > 0));
  }
  OT_CHECK(st.seconds >= st.pass[0].seconds);
  char *text = fx_hlo(f.m);
  OT_CHECK(strstr(text, "tanh") && !strstr(text, "multiply") && !strstr(text, "reshape") &&
               !strstr(text, "transpose") && !strstr(text, "exponential"),
           "%s", text);
  optic_string_free(text);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

/* The same chain with folding: each -(-0.5) folds to a constant 0.5 (the
 * broadcasts of it stay broadcasts: folding never grows the program), cse
 * merges the equal constants and then the equal broadcasts, and one round
 * does all of it. Fold feeds simplify too: p * broadcast(-(-1)) is p once
 * the negate folds to 1. */
static void fold_feeds_simplify_and_cse(void) {
  fixture f = fx_setup();
  const int32_t layers = 5;
  build_mlp(&f, layers);
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfused, &st));
  const optic_pass_stat *fold = &st.pass[OPTIC_PASS_FOLD], *simp = &st.pass[OPTIC_PASS_SIMPLIFY];
  const optic_pass_stat *cse = &st.pass[OPTIC_PASS_CSE];
  OT_CHECK(fold->replaced == layers && fold->added == layers, "fold %lld/%lld", (long long)fold->replaced,
           (long long)fold->added);
  OT_CHECK(simp->replaced == 3 * layers, "simplify %lld", (long long)simp->replaced);
  /* the second tanh per layer; the folded 0.5s and their broadcasts after the first layer */
  OT_CHECK(cse->replaced == layers + 2 * (layers - 1), "cse %lld", (long long)cse->replaced);
  /* left: parameter, one constant 0.5, its broadcast, and per layer add, tanh, add */
  OT_CHECK(st.instructions_after == 3 + 3 * layers && st.rounds == 2, "after %lld rounds %d",
           (long long)st.instructions_after, st.rounds);
  char *text = fx_hlo(f.m);
  OT_CHECK(strstr(text, "f32[4,8] broadcast(") && !strstr(text, "negate") && !strstr(text, "multiply") &&
               !strstr(text, "f32[4,8] constant("),
           "%s", text);
  optic_string_free(text);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);

  f = fx_setup();
  int64_t d[] = {3};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id one =
      fx_splat(&f, f.main, fx_un(&f, f.main, OPTIC_OP_NEGATE, fx_scalar(&f, f.main, OPTIC_F32, -1)), 1, d);
  BUILD(optic_computation_set_root(f.m, f.main, fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, p, one)));
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfolded_unfused, &st));
  OT_CHECK(optic_node_opcode(f.m, optic_computation_root(f.m, f.main)) == OPTIC_OP_MULTIPLY, "unfolded: kept");
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfused, &st));
  OT_CHECK(optic_computation_root(f.m, f.main) == p, "folded: p * 1 is p");
  optic_module_destroy(f.m);
}

/* Simplify makes a reshape equal to one already there; cse merges them. */
static void simplify_feeds_cse(void) {
  fixture f = fx_setup();
  int64_t d23[] = {2, 3}, d6[] = {6}, d32[] = {3, 2};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 2, d23);
  optic_node_id direct = fx_reshape(&f, f.main, p, 2, d32);
  optic_node_id via = fx_reshape(&f, f.main, fx_reshape(&f, f.main, p, 1, d6), 2, d32);
  optic_node_id s = fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, direct, via);
  BUILD(optic_computation_set_root(f.m, f.main, s));
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfused, &st));
  OT_CHECK(optic_node_operand(f.m, s, 0) == direct && optic_node_operand(f.m, s, 1) == direct);
  OT_CHECK(fx_count(f.m, f.main) == 3 && st.pass[OPTIC_PASS_SIMPLIFY].added == 1 &&
           st.pass[OPTIC_PASS_CSE].replaced == 1);
  optic_module_destroy(f.m);
}

/* A module with a called computation, built the same way twice. */
static optic_module_t *build_twice_case(void) {
  fixture f = fx_setup();
  optic_comp_id body;
  BUILD(optic_module_add_computation(f.m, "body", &body));
  int64_t d[] = {4, 8};
  optic_node_id bp = fx_param(&f, body, 0, OPTIC_F32, 2, d);
  optic_node_id zero = fx_splat(&f, body, fx_scalar(&f, body, OPTIC_F32, -0.0), 2, d);
  optic_node_id bt = fx_un(&f, body, OPTIC_OP_TANH, fx_bin(&f, body, OPTIC_OP_ADD, bp, zero));
  optic_node_id bt2 = fx_un(&f, body, OPTIC_OP_TANH, fx_bin(&f, body, OPTIC_OP_ADD, bp, zero));
  BUILD(optic_computation_set_root(f.m, body, fx_bin(&f, body, OPTIC_OP_MULTIPLY, bt, bt2)));
  BUILD(optic_module_set_entry(f.m, f.main));
  build_mlp(&f, 6);
  optic_node_id h = optic_computation_root(f.m, f.main), c1, c2;
  BUILD(optic_graph_call(f.m, f.main, body, &h, 1, NULL, &c1));
  BUILD(optic_graph_call(f.m, f.main, body, &h, 1, NULL, &c2));
  int64_t perm[] = {1, 0}, d84[] = {8, 4}, d32[] = {32};
  optic_node_id t = fx_transpose(&f, f.main, fx_bin(&f, f.main, OPTIC_OP_ADD, c1, c2), perm);
  optic_node_id r = fx_reshape(&f, f.main, fx_reshape(&f, f.main, t, 1, d32), 2, d84);
  (void)r;
  BUILD(optic_computation_set_root(f.m, f.main, fx_reshape(&f, f.main, r, 1, d32)));
  return f.m;
}

static void deterministic(void) {
  optic_module_t *a = build_twice_case(), *b = build_twice_case();
  OT_EXPECT_OK(optic_graph_optimize(a, NULL, NULL));
  OT_EXPECT_OK(optic_graph_optimize(b, NULL, NULL));
  char *ta = fx_hlo(a), *tb = fx_hlo(b);
  OT_CHECK(strcmp(ta, tb) == 0, "two builds optimize to different text:\n%s\n---\n%s", ta, tb);
  OT_CHECK(strstr(ta, "ROOT reshape") != NULL && strstr(ta, "call(") != NULL, "%s", ta);
  OT_CHECK(fx_well_formed(a));
  optic_string_free(ta);
  optic_string_free(tb);
  optic_module_destroy(a);
  optic_module_destroy(b);
}

/* Work units and time for a chain of `layers` MLP layers. */
static void optimize_chain(int32_t layers, int64_t *work, double *seconds, int64_t *instructions) {
  fixture f = fx_setup();
  build_mlp(&f, layers);
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(f.m, &unfused, &st));
  for (int p = 0; p < OPTIC_PASS_COUNT_; p++) work[p] = st.pass[p].work;
  *seconds = st.seconds;
  *instructions = st.instructions_before;
  OT_CHECK(st.instructions_after == 3 + 3 * layers && st.rounds == 2);
  optic_module_destroy(f.m);
}

/* 10,000, 20,000 and 100,000 instructions: each pass's work grows by 2x and
 * 10x (a quadratic pass would show 4x and 100x). Times are printed, not
 * asserted. */
static void scales_linearly(void) {
  const int32_t sizes[] = {667, 1334, 6670};
  int64_t work[3][OPTIC_PASS_COUNT_], n[3];
  double secs[3];
  for (int i = 0; i < 3; i++) {
    optimize_chain(sizes[i], work[i], &secs[i], &n[i]);
    printf("  %lld instructions: %.1f ms (work simplify %lld, cse %lld, dce %lld, fold %lld)\n", (long long)n[i],
           secs[i] * 1e3, (long long)work[i][OPTIC_PASS_SIMPLIFY], (long long)work[i][OPTIC_PASS_CSE],
           (long long)work[i][OPTIC_PASS_DCE], (long long)work[i][OPTIC_PASS_FOLD]);
  }
  /* One constant repeated per layer: after cse, one instruction has every
   * layer as a user, the case where user-list upkeep could go quadratic. */
  for (int32_t layers = 3333; layers <= 33333; layers *= 10) {
    fixture f = fx_setup();
    int64_t d[] = {4};
    optic_node_id h = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
    for (int32_t i = 0; i < layers; i++) {
      h = fx_bin(&f, f.main, OPTIC_OP_ADD, h, fx_splat(&f, f.main, fx_scalar(&f, f.main, OPTIC_F32, 0.5), 1, d));
    }
    BUILD(optic_computation_set_root(f.m, f.main, h));
    optic_pass_stats st = {.size = sizeof st};
    OT_EXPECT_OK(optic_graph_optimize(f.m, &unfused, &st));
    printf("  %lld instructions sharing one constant: %.1f ms\n", (long long)st.instructions_before, st.seconds * 1e3);
    OT_CHECK(st.instructions_after == 3 + layers); /* cse merges the broadcasts; they are not folded */
    optic_module_destroy(f.m);
  }
  for (int p = 0; p <= OPTIC_PASS_DCE; p++) { /* fusion: tests/graph/test_pass_fusion.c */
    double r2 = (double)work[1][p] / (double)work[0][p], r10 = (double)work[2][p] / (double)work[0][p];
    OT_CHECK(r2 > 1.9 && r2 < 2.1 && r10 > 9.5 && r10 < 10.5, "%s work ratios %.3f (2x) %.3f (10x)", optic_pass_name(p),
             r2, r10);
  }
}

static const ot_case cases[] = {
    {"levels_and_toggles", levels_and_toggles}, {"bad_options", bad_options},
    {"size_field_growth", size_field_growth},   {"fixed_point_and_round_cap", fixed_point_and_round_cap},
    {"passes_cooperate", passes_cooperate},     {"fold_feeds_simplify_and_cse", fold_feeds_simplify_and_cse},
    {"simplify_feeds_cse", simplify_feeds_cse}, {"deterministic", deterministic},
    {"scales_linearly", scales_linearly},
};
OT_MAIN(cases)
