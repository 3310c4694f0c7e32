/* Semantics preservation: random graphs (tests/graph/random_graph.h, with
 * random-valued constants so that folding fires) are evaluated on random
 * inputs with the reference evaluator, then rebuilt from the same seed,
 * optimized at every level (none, basic, full) and evaluated again on the
 * same inputs. The results must match bitwise, except that any NaN matches
 * any NaN (OPTIC_MATCH_NAN_AWARE): the simplifier may pass a signaling NaN
 * through where x*1 would have quieted it (docs/graph-passes.md), the only
 * documented difference. Folding computes with the same evaluator, so it
 * changes no bit. Each optimized module must also be well formed and reach
 * its fixed point.
 *
 * OPTIC_TEST_SEED sets the seed (printed), OPTIC_TEST_GRAPHS the number of
 * graphs (default 2000: see the figures in docs/graph-passes.md). */
#include "tests/graph/pass_fixture.h"
#include "tests/graph/random_graph.h"

typedef struct sem_totals {
  long graphs, evaluated, unevaluable, instructions_before, instructions_after;
  int64_t folded, simplified, merged;
} sem_totals;

/* Random arguments for the entry's parameters (the caller destroys them). */
static int32_t random_args(rg_rng *r, optic_module_t *m, optic_comp_id comp, optic_literal_t **args) {
  int32_t n = optic_computation_parameter_count(m, comp);
  for (int32_t i = 0; i < n; i++) {
    const optic_type *t = optic_node_type(m, optic_computation_parameter(m, comp, i));
    BUILD(optic_literal_create(t, &args[i]));
    size_t bytes;
    float *v = optic_literal_mutable_data(args[i], &bytes);
    for (size_t k = 0; k < bytes / sizeof *v; k++) v[k] = rg_float(r);
  }
  return n;
}

static bool build(uint64_t gseed, int32_t n_ops, int32_t n_consts, rg_graph *g) {
  if (rg_build_with(gseed, n_ops, n_consts, g)) return true;
  ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
  optic_module_destroy(g->m);
  return false;
}

/* One graph: reference value, then each level on a fresh build. */
static void check_graph(uint64_t gseed, int32_t n_ops, int32_t n_consts, sem_totals *tot) {
  rg_graph ref;
  if (!build(gseed, n_ops, n_consts, &ref)) return;
  rg_rng ar = {gseed ^ 0x5eed0fa65ull};
  optic_literal_t *args[4] = {NULL};
  int32_t nargs = random_args(&ar, ref.m, ref.main, args);
  optic_literal_t *expected = NULL;
  optic_status est = optic_evaluate(ref.m, ref.main, (const optic_literal_t *const *)args, nargs, NULL, &expected);
  tot->graphs++;
  if (est != OPTIC_OK) {
    /* The generator only builds ops the evaluator defines: a failure here is
     * a bug in one of them. */
    ot_fail_(__FILE__, __LINE__, "graph seed %#llx: the unoptimized graph does not evaluate: %s",
             (unsigned long long)gseed, optic_last_error());
    tot->unevaluable++;
  }
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL && est == OPTIC_OK; level++) {
    rg_graph g;
    if (!build(gseed, n_ops, n_consts, &g)) break;
    optic_optimize_options o = optic_optimize_options_default();
    o.level = (optic_opt_level)level;
    optic_pass_stats st = {.size = sizeof st};
    optic_status ost = optic_graph_optimize(g.m, &o, &st);
    OT_CHECK(ost == OPTIC_OK, "graph seed %#llx level %d: optimize failed: %s", (unsigned long long)gseed, level,
             optic_last_error());
    OT_CHECK(fx_well_formed(g.m), "graph seed %#llx level %d: malformed after optimization", (unsigned long long)gseed,
             level);
    optic_literal_t *actual = NULL;
    if (ost == OPTIC_OK) {
      optic_status ast = optic_evaluate(g.m, g.main, (const optic_literal_t *const *)args, nargs, NULL, &actual);
      OT_CHECK(ast == OPTIC_OK, "graph seed %#llx level %d: the optimized graph does not evaluate: %s",
               (unsigned long long)gseed, level, optic_last_error());
    }
    if (actual != NULL) {
      char why[512];
      bool ok = optic_literal_match(expected, actual, OPTIC_MATCH_NAN_AWARE, 0, 0, why, sizeof why);
      if (!ok) {
        char *text = fx_hlo(g.m);
        ot_fail_(__FILE__, __LINE__, "graph seed %#llx (%d ops, %d constants) level %d changed the result: %s\n%s",
                 (unsigned long long)gseed, n_ops, n_consts, level, why, text);
        optic_string_free(text);
      }
      tot->evaluated++;
    }
    if (level == OPTIC_OPT_FULL) {
      tot->instructions_before += st.instructions_before;
      tot->instructions_after += st.instructions_after;
      tot->folded += st.pass[OPTIC_PASS_FOLD].replaced;
      tot->simplified += st.pass[OPTIC_PASS_SIMPLIFY].replaced;
      tot->merged += st.pass[OPTIC_PASS_CSE].replaced;
    }
    optic_literal_destroy(actual);
    optic_module_destroy(g.m);
  }
  optic_literal_destroy(expected);
  for (int32_t i = 0; i < nargs; i++) optic_literal_destroy(args[i]);
  optic_module_destroy(ref.m);
}

static void random_graphs_keep_their_values(void) {
  uint64_t seed = rg_seed(0x5e3a471c5ull);
  const char *e = getenv("OPTIC_TEST_GRAPHS");
  long n = (e && *e) ? strtol(e, NULL, 10) : 2000;
  printf(
      "random_graphs_keep_their_values: seed %#llx, %ld graphs (repeat with OPTIC_TEST_SEED=%#llx "
      "OPTIC_TEST_GRAPHS=%ld %s random_graphs_keep_their_values)\n",
      (unsigned long long)seed, n, (unsigned long long)seed, n, ot_prog_);
  rg_rng r = {seed};
  sem_totals tot = {0};
  for (long it = 0; it < n; it++) {
    uint64_t gseed = rg_next(&r);
    int32_t n_ops = (int32_t)rg_int(&r, 1, 60), n_consts = (int32_t)rg_int(&r, 0, 6);
    check_graph(gseed, n_ops, n_consts, &tot);
  }
  printf(
      "random_graphs_keep_their_values: %ld graphs, %ld optimized results compared; at level full %ld -> %ld "
      "instructions, %lld folded, %lld simplified, %lld merged by cse\n",
      tot.graphs, tot.evaluated, tot.instructions_before, tot.instructions_after, (long long)tot.folded,
      (long long)tot.simplified, (long long)tot.merged);
  OT_CHECK(tot.graphs == n && tot.evaluated == 3 * n && tot.unevaluable == 0);
  /* the generator must exercise the passes, or the comparison proves little */
  if (n >= 100) OT_CHECK(tot.folded > n && tot.simplified > 0 && tot.merged > 0);
}

static const ot_case cases[] = {
    {"random_graphs_keep_their_values", random_graphs_keep_their_values},
};
OT_MAIN(cases)
