/* Collectives in a single-replica program and custom-call: all-gather and
 * reduce-scatter over one replica and collective-permute (0 -> 0) are the
 * identity, collective-permute with no source for replica 0 gives zeros
 * (XLA), in the evaluator and the runtime alike; over more replicas, and
 * custom-call always, they parse, print, cost (XLA's rules) and compile,
 * and evaluate/run return OPTIC_ERR_UNSUPPORTED naming the op or target. */
#include "tests/exec/exec_util.h"

#define ADD "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"

static void single_replica_runs(void) {
  static const char *const text =
      "HloModule c\n\n" ADD
      "ENTRY e {\n  x = f32[3,17] parameter(0)\n"
      "  g = f32[3,17] all-gather(x), replica_groups={{0}}, dimensions={1}\n"
      "  r = f32[3,17] reduce-scatter(g), replica_groups={{0}}, dimensions={0}, to_apply=add\n"
      "  p = f32[3,17] collective-permute(r), source_target_pairs={{0,0}}\n"
      "  z = f32[3,17] collective-permute(x), source_target_pairs={{0,1},{2,3}}\n"
      "  ROOT t = (f32[3,17], f32[3,17]) tuple(p, z)\n}\n";
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  ex_round_trips(m);
  /* the identity and zeros, whatever the inputs: check the evaluator directly */
  optic_comp_id e = optic_module_entry(m);
  optic_literal_t *x = NULL, *got = NULL;
  optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, 0)), &x);
  ex_rng r = {9};
  ex_fill(x, &r);
  OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)&x, 1, NULL, &got));
  if (got) {
    size_t b1, b2;
    const void *xv = optic_literal_data(x, &b1), *pv = optic_literal_data(optic_literal_element(got, 0), &b2);
    OT_CHECK(b1 == b2 && memcmp(xv, pv, b1) == 0, "one replica: identity");
    const float *zv = optic_literal_data(optic_literal_element(got, 1), &b2);
    bool zero = true;
    for (size_t i = 0; i < b2 / 4; i++) zero &= zv[i] == 0.0f;
    OT_CHECK(zero, "no source for replica 0: zeros");
  }
  optic_literal_destroy(got);
  optic_literal_destroy(x);
  OT_CHECK(ex_check_module(m, 4, 0, 0, "single replica"), "runtime vs evaluator");
  /* XLA: all-gather, reduce-scatter and collective-permute cost default bytes, no flops */
  optic_cost c;
  OT_EXPECT_OK(optic_computation_cost(m, e, &c));
  OT_CHECK(c.flops == 0 && c.bytes_accessed == 4 * (51 * 4 * 2) + 16, "cost %g flops %g bytes", c.flops,
           c.bytes_accessed);
  optic_module_destroy(m);
}

/* Compiles, then expects evaluate and run to refuse with UNSUPPORTED naming `what`. */
static void refused(const char *text, const char *what, double want_flops, double want_bytes) {
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  ex_round_trips(m);
  optic_comp_id e = optic_module_entry(m);
  optic_cost c;
  OT_EXPECT_OK(optic_computation_cost(m, e, &c));
  OT_CHECK(c.flops == want_flops && c.bytes_accessed == want_bytes, "%s: cost %g flops %g bytes, want %g %g", what,
           c.flops, c.bytes_accessed, want_flops, want_bytes);
  ex_expect_refused(m, what, 0);
  optic_module_destroy(m);
}

static void multi_replica_and_custom_call_refused(void) {
  refused(
      "HloModule c\n\nENTRY e {\n  x = f32[2,4] parameter(0)\n"
      "  ROOT g = f32[4,4] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n}\n",
      "all-gather", 0, 32 + 64);
  refused("HloModule c\n\n" ADD
          "ENTRY e {\n  x = f32[4,4] parameter(0)\n"
          "  ROOT r = f32[2,4] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add\n}\n",
          "reduce-scatter", 0, 64 + 32);
  refused(
      "HloModule c\n\nENTRY e {\n  x = f32[4] parameter(0)\n"
      "  ROOT p = f32[4] collective-permute(x), source_target_pairs={{1,0},{0,1}}\n}\n",
      "collective-permute", 0, 32);
  /* XLA HandleCustomCall: flops and bytes are -1 (unknown) */
  refused(
      "HloModule c\n\nENTRY e {\n  x = f32[4] parameter(0)\n"
      "  ROOT k = (f32[4], s32[4]) custom-call(x), custom_call_target=\"TopK\", backend_config=\"{}\"\n}\n",
      "'TopK'", -1, -1);
}

static const ot_case cases[] = {{"single_replica_runs", single_replica_runs},
                                {"multi_replica_and_custom_call_refused", multi_replica_and_custom_call_refused}};
OT_MAIN(cases)
