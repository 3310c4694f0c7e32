/* The 1,000 random graphs of tests/graph/random_graph.h (values include
 * ±0, ±inf, NaN, 3e38 and subnormals) run unoptimized (NONE, 1 thread) and
 * optimized (FULL, 2 threads; FULL, 1 thread every fourth graph) against the
 * reference evaluator. Tolerance: NaN matches NaN, else |got - want| <=
 * 1e-5 + 1e-5 |want|; the evaluator computes exp/tanh/logistic in double and
 * rounds once, the kernels are within 2 ULP, and ops after them may amplify
 * that (x - y of near values), which the absolute part covers.
 * OPTIC_TEST_SEED and OPTIC_TEST_GRAPHS override the seed and count. */
#include "tests/exec/exec_util.h"
#include "tests/graph/random_graph.h"

static void random_graphs(void) {
  uint64_t seed = rg_seed(0xe7ec0ull);
  const char *e = getenv("OPTIC_TEST_GRAPHS");
  long n = (e && *e) ? strtol(e, NULL, 10) : 1000;
  printf("random_graphs: seed %#llx, %ld graphs (repeat with OPTIC_TEST_SEED=%#llx OPTIC_TEST_GRAPHS=%ld %s)\n",
         (unsigned long long)seed, n, (unsigned long long)seed, n, ot_prog_);
  rg_rng r = {seed};
  long runs = 0, failed = 0;
  for (long it = 0; it < n && failed < 5; it++) {
    uint64_t gseed = rg_next(&r);
    int32_t n_ops = (int32_t)rg_int(&r, 1, 60), n_consts = (int32_t)rg_int(&r, 0, 6);
    rg_graph g;
    if (!rg_build_with(gseed, n_ops, n_consts, &g)) {
      ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
      optic_module_destroy(g.m);
      continue;
    }
    rg_rng ar = {gseed ^ 0x5eed0fa65ull};
    int32_t np = optic_computation_parameter_count(g.m, g.main);
    optic_literal_t *args[8] = {NULL};
    for (int32_t i = 0; i < np; i++) {
      optic_literal_create(optic_node_type(g.m, optic_computation_parameter(g.m, g.main, i)), &args[i]);
      size_t bytes;
      float *v = optic_literal_mutable_data(args[i], &bytes);
      for (size_t k = 0; k < bytes / sizeof *v; k++) v[k] = rg_float(&ar);
    }
    optic_literal_t *want = NULL;
    OT_EXPECT_OK(optic_evaluate(g.m, g.main, (const optic_literal_t *const *)args, np, NULL, &want));
    char label[64];
    snprintf(label, sizeof label, "graph seed %#llx", (unsigned long long)gseed);
    if (want) {
      bool ok = ex_run_compare(g.m, OPTIC_OPT_NONE, 1, (const optic_literal_t *const *)args, np, want, 1e-5, 1e-5,
                               false, label);
      ok = ok && ex_run_compare(g.m, OPTIC_OPT_FULL, 2, (const optic_literal_t *const *)args, np, want, 1e-5, 1e-5,
                                true, label);
      if (ok && it % 4 == 0) {
        ok = ex_run_compare(g.m, OPTIC_OPT_FULL, 1, (const optic_literal_t *const *)args, np, want, 1e-5, 1e-5, false,
                            label);
      }
      runs += 2 + (it % 4 == 0);
      if (!ok) {
        failed++;
        char *text = NULL;
        optic_module_to_hlo_text(g.m, &text);
        fprintf(stderr, "%s\n", text ? text : "");
        optic_string_free(text);
      }
    }
    optic_literal_destroy(want);
    for (int32_t i = 0; i < np; i++) optic_literal_destroy(args[i]);
    optic_module_destroy(g.m);
  }
  printf("random_graphs: %ld program runs compared\n", runs);
}

static const ot_case cases[] = {{"random_graphs", random_graphs}};
OT_MAIN(cases)
