/* Instruction names the caller gives are made unique as XLA's NameUniquer
 * makes them (a name another computation, or this one, already has gets the
 * smallest free ".k" on its stem, a numeric suffix split off first) instead
 * of failing; the module prints, parses back with the same names and runs. */
#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void expect_name(const optic_module_t *m, optic_node_id id, const char *want) {
  const char *got = optic_node_name(m, id);
  OT_CHECK(got && strcmp(got, want) == 0, "named '%s', expected '%s'", got ? got : "(null)", want);
}

static void reducer_and_entry_share_names(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_create("names", &m));
  optic_comp_id add, main;
  OT_EXPECT_OK(optic_module_add_computation(m, "add", &add));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  optic_shape s0, s4;
  int64_t four = 4;
  optic_shape_make(0, NULL, &s0);
  optic_shape_make(1, &four, &s4);
  optic_type ts = optic_type_array(OPTIC_F32, &s0), t4 = optic_type_array(OPTIC_F32, &s4);
  optic_node_id a, b, sum;
  OT_EXPECT_OK(optic_graph_parameter(m, add, 0, &ts, "a", &a));
  OT_EXPECT_OK(optic_graph_parameter(m, add, 1, &ts, "b", &b));
  OT_EXPECT_OK(optic_graph_binary(m, add, OPTIC_OP_ADD, a, b, "sum", &sum));
  OT_EXPECT_OK(optic_computation_set_root(m, add, sum));
  /* The entry reuses the reducer's names: b, b again, b.1 (taken), x.y twice, v.07. */
  optic_node_id x, y, z, w, u, v, zero, r;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &t4, "b", &x));
  expect_name(m, x, "b.1");
  OT_EXPECT_OK(optic_graph_unary(m, main, OPTIC_OP_NEGATE, x, "b", &y));
  expect_name(m, y, "b.2");
  OT_EXPECT_OK(optic_graph_unary(m, main, OPTIC_OP_NEGATE, y, "b.1", &z));
  expect_name(m, z, "b.3");
  OT_EXPECT_OK(optic_graph_unary(m, main, OPTIC_OP_NEGATE, z, "x.y", &w));
  expect_name(m, w, "x.y");
  OT_EXPECT_OK(optic_graph_unary(m, main, OPTIC_OP_NEGATE, w, "x.y", &u));
  expect_name(m, u, "x.y.1");
  OT_EXPECT_OK(optic_graph_unary(m, main, OPTIC_OP_NEGATE, u, "sum.07", &v));
  expect_name(m, v, "sum.07"); /* free: kept as written */
  float zf = 0;
  OT_EXPECT_OK(optic_graph_constant(m, main, OPTIC_F32, &s0, &zf, sizeof zf, "a", &zero));
  expect_name(m, zero, "a.1");
  int64_t dim0 = 0;
  OT_EXPECT_OK(optic_graph_reduce(m, main, &v, &zero, 1, &dim0, 1, add, "sum", &r));
  expect_name(m, r, "sum.1");
  OT_EXPECT_OK(optic_computation_set_root(m, main, r));
  OT_EXPECT_OK(optic_module_set_entry(m, main));
  /* An empty name is still an error. */
  optic_node_id bad;
  OT_EXPECT_STATUS(optic_graph_unary(m, main, OPTIC_OP_NEGATE, v, "", &bad), OPTIC_ERR_INVALID_ARGUMENT);

  /* print -> parse -> print keeps every name */
  char *t1 = NULL, *t2 = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &t1));
  optic_module_t *m2 = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(t1, t1 ? strlen(t1) : 0, &m2));
  OT_EXPECT_OK(optic_module_to_hlo_text(m2, &t2));
  OT_CHECK(t1 && t2 && strcmp(t1, t2) == 0, "round trip differs:\n%s\n---\n%s", t1, t2);
  OT_CHECK(t1 && strstr(t1, "b.3 = f32[4]") && strstr(t1, "x.y.1 = f32[4]"), "%s", t1);

  /* and it runs: sum over (-(-(-(-(-x))))) with x = 1..4 = -10 */
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, NULL, &p));
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  float in[4] = {1, 2, 3, 4}, out = 0;
  optic_tensor ti = {OPTIC_F32, s4, in}, to = {OPTIC_F32, s0, &out};
  OT_EXPECT_OK(optic_program_run(p, ctx, &ti, 1, &to, 1));
  OT_CHECK(out == -10.0f, "got %g", (double)out);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_string_free(t1), optic_string_free(t2);
  optic_module_destroy(m2);
  optic_module_destroy(m);
}

static const ot_case cases[] = {{"reducer_and_entry_share_names", reducer_and_entry_share_names}};
OT_MAIN(cases)
