/* Messages of programs the runtime declines at bind time: a map or reduce
 * whose computation cannot run as an elementwise loop names the op, its
 * computation and the instruction that stops it, each once (the bind wraps
 * the lowering's reason with its own context). */
#include "tests/exec/exec_util.h"

/* Compiles text at NONE and runs it once on zero inputs; returns the status
 * and leaves the message in optic_last_error(). */
static optic_status run_text(const char *text) {
  optic_module_t *m = NULL;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &m);
  OT_CHECK(st == OPTIC_OK, "parse: %s", optic_last_error());
  if (st != OPTIC_OK) return st;
  optic_compile_options o = optic_compile_options_default();
  o.level = OPTIC_OPT_NONE;
  optic_program_t *p = NULL;
  st = optic_compile(m, &o, &p);
  OT_CHECK(st == OPTIC_OK, "compile: %s", optic_last_error());
  optic_exec_ctx_t *ctx = NULL;
  if (st == OPTIC_OK) st = optic_exec_ctx_create(NULL, &ctx);
  float x[4] = {1, 2, 3, 4};
  optic_tensor in = {OPTIC_F32, {.rank = 1, .dims = {4}}, x}, out = {0};
  if (st == OPTIC_OK) st = optic_program_run(p, ctx, &in, 1, &out, 1);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
  return st;
}

static void expect_message(const char *text, const char *want) {
  OT_EXPECT_STATUS(run_text(text), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strcmp(optic_last_error(), want) == 0, "got '%s'\n  want '%s'", optic_last_error(), want);
}

static void map_declined(void) {
  expect_message(
      "HloModule m\n"
      "f {\n  a = f32[] parameter(0)\n"
      "  ROOT d = f32[] dot(a, a), lhs_contracting_dims={}, rhs_contracting_dims={}\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] map(x), dimensions={0}, to_apply=f\n}\n",
      "runtime: map r: its computation 'f' does not run as an elementwise loop: dot d is not elementwise");
}

static void reduce_declined(void) {
  expect_message(
      "HloModule m\n"
      "comb {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT d = f32[] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=comb\n}\n",
      "runtime: reduce r: its computation 'comb' does not run as an elementwise loop: dot d is not "
      "elementwise");
}

static const ot_case cases[] = {
    {"map_declined", map_declined},
    {"reduce_declined", reduce_declined},
};
OT_MAIN(cases)
