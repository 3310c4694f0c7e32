/* DCE: removes what no root needs, keeps parameters and collectives, cleans
 * inside called computations, leaves computations that are no longer called
 * alone, and refuses (changing nothing) when a needed computation has no
 * root: never "no root, so delete everything". */
#include "graph/internal.h"
#include "tests/graph/pass_fixture.h"

static bool msg_has(const char *needle) {
  if (strstr(optic_last_error(), needle)) return true;
  fprintf(stderr, "  message '%s' lacks '%s'\n", optic_last_error(), needle);
  return false;
}

static void removes_what_the_root_does_not_need(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 2};
  optic_node_id a = fx_param(&f, f.main, 0, OPTIC_F32, 2, d);
  optic_node_id unused = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, a);
  optic_node_id dead1 = fx_un(&f, f.main, OPTIC_OP_LOG, e);
  optic_node_id dead2 = fx_bin(&f, f.main, OPTIC_OP_ADD, dead1, unused);
  optic_node_id r = fx_un(&f, f.main, OPTIC_OP_NEGATE, e);
  optic_node_id dead3 = fx_un(&f, f.main, OPTIC_OP_ABS, r); /* uses the root, is not the root */
  BUILD(optic_computation_set_root(f.m, f.main, r));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(DCE), &st));
  OT_CHECK(!fx_exists(f.m, dead1) && !fx_exists(f.m, dead2) && !fx_exists(f.m, dead3));
  OT_CHECK(fx_exists(f.m, a) && fx_exists(f.m, unused) && fx_exists(f.m, e) && fx_exists(f.m, r),
           "the root's operands and every parameter stay");
  OT_CHECK(optic_computation_parameter_count(f.m, f.main) == 2 && optic_node_user_count(f.m, r) == 0 &&
           optic_node_user_count(f.m, unused) == 0);
  OT_CHECK(st.pass[OPTIC_PASS_DCE].removed == 3 && st.rounds == 2 && st.instructions_before == 7 &&
               st.instructions_after == 4,
           "removed %lld rounds %d before %lld after %lld", (long long)st.pass[OPTIC_PASS_DCE].removed, st.rounds,
           (long long)st.instructions_before, (long long)st.instructions_after);
  OT_CHECK(fx_well_formed(f.m));
  optic_module_destroy(f.m);
}

/* Inside a called computation DCE works from that computation's root; a
 * computation whose only caller died stays in the module, untouched. */
static void called_computations(void) {
  fixture f = fx_setup();
  int64_t d[] = {4};
  optic_comp_id body, orphan;
  BUILD(optic_module_add_computation(f.m, "body", &body));
  optic_node_id bp = fx_param(&f, body, 0, OPTIC_F32, 1, d);
  optic_node_id bdead = fx_un(&f, body, OPTIC_OP_EXPONENTIAL, bp);
  BUILD(optic_computation_set_root(f.m, body, fx_un(&f, body, OPTIC_OP_NEGATE, bp)));
  BUILD(optic_module_add_computation(f.m, "orphan", &orphan));
  optic_node_id op = fx_param(&f, orphan, 0, OPTIC_F32, 1, d);
  optic_node_id odead = fx_un(&f, orphan, OPTIC_OP_EXPONENTIAL, op);
  BUILD(optic_computation_set_root(f.m, orphan, fx_un(&f, orphan, OPTIC_OP_NEGATE, op)));
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), live_call, dead_call;
  BUILD(optic_graph_call(f.m, f.main, body, &p, 1, NULL, &live_call));
  BUILD(optic_graph_call(f.m, f.main, orphan, &p, 1, NULL, &dead_call));
  BUILD(optic_computation_set_root(f.m, f.main, live_call));
  OT_EXPECT_OK(fx_run(&f, ONLY(DCE), NULL));
  OT_CHECK(!fx_exists(f.m, bdead), "dead code inside a called computation goes");
  OT_CHECK(!fx_exists(f.m, dead_call) && fx_exists(f.m, odead) && fx_count(f.m, orphan) == 3,
           "a computation no longer called is left as it was");
  optic_module_destroy(f.m);
}

/* A dead all-reduce is a collective the other participants will enter: it
 * stays, with what it reads, and so does a dead call into code that holds one. */
static void collectives_stay(void) {
  fixture f = fx_setup();
  optic_comp_id sum, wrap;
  BUILD(optic_module_add_computation(f.m, "sum", &sum));
  optic_node_id x = fx_param(&f, sum, 0, OPTIC_F32, 0, NULL), y = fx_param(&f, sum, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f.m, sum, fx_bin(&f, sum, OPTIC_OP_ADD, x, y)));
  int64_t d[] = {4};
  BUILD(optic_module_add_computation(f.m, "wrap", &wrap));
  optic_node_id wp = fx_param(&f, wrap, 0, OPTIC_F32, 1, d), war;
  BUILD(optic_graph_all_reduce(f.m, wrap, &wp, 1, sum, NULL, NULL, 0, NULL, &war));
  BUILD(optic_computation_set_root(f.m, wrap, fx_un(&f, wrap, OPTIC_OP_NEGATE, wp))); /* war is unused */
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id e = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, p), ar, call, gone = fx_un(&f, f.main, OPTIC_OP_LOG, p);
  BUILD(optic_graph_all_reduce(f.m, f.main, &e, 1, sum, NULL, NULL, 0, NULL, &ar));
  BUILD(optic_graph_call(f.m, f.main, wrap, &p, 1, NULL, &call));
  BUILD(optic_computation_set_root(f.m, f.main, p));
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(DCE), &st));
  OT_CHECK(fx_exists(f.m, ar) && fx_exists(f.m, e) && fx_exists(f.m, call) && fx_exists(f.m, war));
  OT_CHECK(!fx_exists(f.m, gone) && st.pass[OPTIC_PASS_DCE].removed == 1);
  optic_module_destroy(f.m);
}

static void rootless_entry_is_an_error(void) {
  fixture f = fx_setup();
  int64_t d[] = {2};
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  fx_un(&f, f.main, OPTIC_OP_NEGATE, fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, p));
  char *before = fx_hlo(f.m);
  for (unsigned mask = 0; mask < (1u << OPTIC_PASS_COUNT_); mask++) {
    OT_EXPECT_STATUS(fx_run(&f, mask, NULL), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(msg_has("entry computation 'main' has no root"));
  }
  optic_optimize_options o = optic_optimize_options_default();
  OT_EXPECT_STATUS(optic_graph_optimize(f.m, &o, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  char *after = fx_hlo(f.m);
  OT_CHECK(strcmp(before, after) == 0 && fx_count(f.m, f.main) == 3, "nothing was removed");
  optic_string_free(before);
  optic_string_free(after);
  optic_module_destroy(f.m);
}

/* The builders refuse rootless callees, so the test takes the root away
 * behind their back (the state a buggy importer or pass could leave). */
static void rootless_called_computation_is_an_error(void) {
  fixture f = fx_setup();
  int64_t d[] = {2};
  optic_comp_id body, spare;
  BUILD(optic_module_add_computation(f.m, "body", &body));
  optic_node_id bp = fx_param(&f, body, 0, OPTIC_F32, 1, d);
  BUILD(optic_computation_set_root(f.m, body, fx_un(&f, body, OPTIC_OP_NEGATE, bp)));
  BUILD(optic_module_add_computation(f.m, "spare", &spare));
  optic_node_id sp = fx_param(&f, spare, 0, OPTIC_F32, 1, d);
  BUILD(optic_computation_set_root(f.m, spare, fx_un(&f, spare, OPTIC_OP_NEGATE, sp)));
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d), call, dead_call;
  BUILD(optic_graph_call(f.m, f.main, body, &p, 1, "the_call", &call));
  BUILD(optic_graph_call(f.m, f.main, spare, &p, 1, NULL, &dead_call));
  fx_un(&f, f.main, OPTIC_OP_ABS, p); /* dead */
  BUILD(optic_computation_set_root(f.m, f.main, call));
  f.m->comps[body].root = OPTIC_NO_NODE;
  char *before = fx_hlo(f.m);
  OT_EXPECT_STATUS(fx_run(&f, ONLY(DCE), NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("computation 'body' has no root") && msg_has("the_call in 'main'"));
  char *after = fx_hlo(f.m);
  OT_CHECK(strcmp(before, after) == 0, "the module is untouched:\n%s", after);
  optic_string_free(before);
  optic_string_free(after);
  /* a rootless computation that only a dead instruction calls is not needed */
  f.m->comps[body].root = optic_node_user(f.m, bp, 0);
  f.m->comps[spare].root = OPTIC_NO_NODE;
  optic_pass_stats st;
  OT_EXPECT_OK(fx_run(&f, ONLY(DCE), &st));
  OT_CHECK(!fx_exists(f.m, dead_call) && st.pass[OPTIC_PASS_DCE].removed == 2);
  optic_module_destroy(f.m);
}

static void no_entry_is_an_error(void) {
  optic_module_t *m;
  BUILD(optic_module_create("empty", &m));
  OT_EXPECT_STATUS(optic_graph_optimize(m, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("no entry computation"));
  OT_EXPECT_STATUS(optic_graph_optimize(NULL, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_module_destroy(m);
}

/* The builders allow a call cycle (a calls b, then b is given a root that
 * calls a). Running it would never end, but analysing it must. */
static void call_cycle_terminates(void) {
  fixture f = fx_setup();
  int64_t d[] = {2};
  optic_comp_id a, b;
  BUILD(optic_module_add_computation(f.m, "a", &a));
  BUILD(optic_module_add_computation(f.m, "b", &b));
  optic_node_id bp = fx_param(&f, b, 0, OPTIC_F32, 1, d);
  BUILD(optic_computation_set_root(f.m, b, bp));
  optic_node_id ap = fx_param(&f, a, 0, OPTIC_F32, 1, d), acall, bcall, mcall;
  BUILD(optic_graph_call(f.m, a, b, &ap, 1, NULL, &acall));
  BUILD(optic_computation_set_root(f.m, a, acall));
  BUILD(optic_graph_call(f.m, b, a, &bp, 1, NULL, &bcall));
  BUILD(optic_computation_set_root(f.m, b, bcall));
  fx_un(&f, b, OPTIC_OP_ABS, bp); /* dead */
  optic_node_id p = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  BUILD(optic_graph_call(f.m, f.main, a, &p, 1, NULL, &mcall));
  BUILD(optic_computation_set_root(f.m, f.main, mcall));
  BUILD(optic_module_set_entry(f.m, f.main));
  optic_pass_stats st = {.size = sizeof st};
  OT_EXPECT_OK(optic_graph_optimize(f.m, NULL, &st));
  OT_CHECK(st.pass[OPTIC_PASS_DCE].removed == 1 && fx_count(f.m, a) == 2 && fx_count(f.m, b) == 2);
  optic_module_destroy(f.m);
}

static const ot_case cases[] = {
    {"call_cycle_terminates", call_cycle_terminates},
    {"removes_what_the_root_does_not_need", removes_what_the_root_does_not_need},
    {"called_computations", called_computations},
    {"collectives_stay", collectives_stay},
    {"rootless_entry_is_an_error", rootless_entry_is_an_error},
    {"rootless_called_computation_is_an_error", rootless_called_computation_is_an_error},
    {"no_entry_is_an_error", no_entry_is_an_error},
};
OT_MAIN(cases)
