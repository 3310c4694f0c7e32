/* Tokens, host transfers, replica ids and rng-bit-generator: after-all
 * joins tokens and runs as nothing, replica-id and partition-id are 0
 * (evaluator and runtime agree); infeed, outfeed and
 * rng-bit-generator parse, print (round trip), cost with XLA's rules and
 * compile, and evaluate/run return OPTIC_ERR_UNSUPPORTED naming the op;
 * XLA's shape rules refuse bad operands and results with messages. */
#include "tests/exec/exec_util.h"

static bool cost_is(const optic_module_t *m, double flops, double trans, double bytes) {
  optic_cost c;
  if (optic_computation_cost(m, optic_module_entry(m), &c) != OPTIC_OK) {
    fprintf(stderr, "  cost failed: %s\n", optic_last_error());
    return false;
  }
  if (c.flops == flops && c.transcendentals == trans && c.bytes_accessed == bytes) return true;
  fprintf(stderr, "  cost: flops %g trans %g bytes %g, want %g %g %g\n", c.flops, c.transcendentals, c.bytes_accessed,
          flops, trans, bytes);
  return false;
}

/* after-all() and after-all of two tokens run as nothing next to real work:
 * the runtime matches the evaluator at NONE and FULL on 1 and 2 threads.
 * Cost: negate of 5 floats 5 flops, 20 + 20 bytes; after-all 0; the root
 * tuple's pointer table 16. */
static void after_all_runs(void) {
  optic_module_t *m = ex_parse(
      "HloModule t\n\nENTRY e {\n  x = f32[5] parameter(0)\n  a = token[] after-all()\n"
      "  b = token[] after-all(a, a)\n  y = f32[5] negate(x)\n"
      "  ROOT t = (f32[5], token[]) tuple(y, b)\n}\n");
  if (m == NULL) return;
  ex_round_trips(m);
  OT_CHECK(cost_is(m, 5, 0, 40 + 16));
  OT_CHECK(ex_check_module(m, 3, 0, 0, "after-all"), "runtime vs evaluator");
  optic_module_destroy(m);
}

/* replica-id and partition-id are 0 in a single-replica program: the
 * evaluator gives x + 0 and 0, and the runtime matches it. Cost: replica-id
 * and partition-id write u32[] (4 bytes each), broadcast 16 + 4, add 4
 * flops and 48 bytes, the tuple 16: 92 bytes. */
static void replica_ids_run(void) {
  optic_module_t *m = ex_parse(
      "HloModule r\n\nENTRY e {\n  x = u32[4] parameter(0)\n  r = u32[] replica-id()\n"
      "  q = u32[] partition-id()\n  b = u32[4] broadcast(r), dimensions={}\n"
      "  y = u32[4] add(b, x)\n  ROOT t = (u32[4], u32[]) tuple(y, q)\n}\n");
  if (m == NULL) return;
  ex_round_trips(m);
  OT_CHECK(cost_is(m, 4, 0, 4 + 4 + 20 + 48 + 16));
  optic_comp_id e = optic_module_entry(m);
  optic_literal_t *x = NULL, *got = NULL;
  optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, 0)), &x);
  uint32_t *xv = optic_literal_mutable_data(x, NULL);
  for (int i = 0; xv && i < 4; i++) xv[i] = 0xfffffff0u + (uint32_t)i;
  OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)&x, 1, NULL, &got));
  if (got) {
    const uint32_t *yv = optic_literal_data(optic_literal_element(got, 0), NULL);
    const uint32_t *qv = optic_literal_data(optic_literal_element(got, 1), NULL);
    OT_CHECK(yv[0] == 0xfffffff0u && yv[3] == 0xfffffff3u && qv[0] == 0, "replica 0, partition 0");
  }
  optic_literal_destroy(got);
  optic_literal_destroy(x);
  OT_CHECK(ex_check_module(m, 5, 0, 0, "replica-id"), "runtime vs evaluator");
  optic_module_destroy(m);
}

/* Compiles (at FULL too), then expects evaluate and run to refuse with
 * UNSUPPORTED naming `what`. */
static void refused(const char *text, const char *what, double flops, double trans, double bytes) {
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  ex_round_trips(m);
  OT_CHECK(cost_is(m, flops, trans, bytes), "%s", what);
  ex_expect_refused(m, what, 2);
  optic_module_destroy(m);
}

static void transfers_and_rng_refused(void) {
  /* XLA HandleInfeed: every leaf of (f32[2,5], token[]) = 40 + 0; the
   * result is f32[2,5] negated: 10 flops, 40 + 40 bytes. Total 120. */
  refused(
      "HloModule i\n\nENTRY e {\n  x = f32[3] parameter(0)\n  t = token[] after-all()\n"
      "  i = (f32[2,5], token[]) infeed(t), infeed_config=\"cfg\"\n  d = f32[2,5] get-tuple-element(i), index=0\n"
      "  ROOT n = f32[2,5] negate(d)\n}\n",
      "infeed", 10, 0, 120);
  /* XLA HandleOutfeed: every leaf of each operand, f32[3] 12 + token 0; the
   * root negate 3 flops, 12 + 12. Total 36. */
  refused(
      "HloModule o\n\nENTRY e {\n  x = f32[3] parameter(0)\n  t = token[] after-all()\n"
      "  o = token[] outfeed(x, t), outfeed_shape=f32[3]{0}, outfeed_config=\"\"\n"
      "  ROOT n = f32[3] negate(x)\n}\n",
      "outfeed", 3, 0, 36);
  /* A tuple outfeed: leaves f32[3] 12 + s32[2] 8 = 20; the tuple 16. */
  refused(
      "HloModule o\n\nENTRY e {\n  x = f32[3] parameter(0)\n  c = s32[2] constant({1, 2})\n"
      "  v = (f32[3], s32[2]) tuple(x, c)\n  t = token[] after-all()\n  ROOT o = token[] outfeed(v, t)\n}\n",
      "outfeed", 0, 0, 36);
  /* XLA HandleRngBitGenerator: ElementsInRecursive of (u64[2], u32[4,8]) =
   * 2 + 32 transcendentals; default bytes: the result's pointer table 16 +
   * the state 16 = 32. */
  refused(
      "HloModule r\n\nENTRY e {\n  s = u64[2] parameter(0)\n"
      "  ROOT r = (u64[2], u32[4,8]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
      "rng-bit-generator", 0, 34, 32);
  /* philox with 3 state words, 64-bit bits: 3 + 6 transcendentals, bytes 16 + 24. */
  refused(
      "HloModule r\n\nENTRY e {\n  s = u64[3] parameter(0)\n"
      "  ROOT r = (u64[3], u64[6]) rng-bit-generator(s), algorithm=rng_philox\n}\n",
      "rng-bit-generator", 0, 9, 40);
  refused(
      "HloModule r\n\nENTRY e {\n  s = u64[2] parameter(0)\n"
      "  ROOT r = (u64[2], s32[7]) rng-bit-generator(s), algorithm=rng_default\n}\n",
      "rng-bit-generator", 0, 9, 32);
}

/* Parses text; expects status `want` and a message containing `needle`. */
static void expect_error(const char *body, optic_status want, const char *needle) {
  char text[768];
  snprintf(text, sizeof text,
           "HloModule m\n\nENTRY e {\n  x = f32[3] parameter(0)\n  t = token[] after-all()\n"
           "  s = u64[2] parameter(1)\n%s}\n",
           body);
  optic_module_t *m = NULL;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &m);
  OT_CHECK(st == want && m == NULL && strstr(optic_last_error(), needle) != NULL,
           "got %s \"%s\", want %s containing \"%s\"\n  in:\n%s", optic_status_name(st), optic_last_error(),
           optic_status_name(want), needle, text);
  optic_module_destroy(m);
}

static void shape_errors(void) {
  expect_error("  ROOT r = u32[] replica-id(x)\n", OPTIC_ERR_INVALID_ARGUMENT, "takes 0 operands, 1 given");
  expect_error("  ROOT r = s32[] partition-id()\n", OPTIC_ERR_SHAPE_MISMATCH, "is written as");
  expect_error("  ROOT a = token[] after-all(t, x)\n", OPTIC_ERR_SHAPE_MISMATCH,
               "after-all: operand 1 (x) must be a token, not f32");
  expect_error("  ROOT i = (f32[3], token[]) infeed(x)\n", OPTIC_ERR_SHAPE_MISMATCH,
               "infeed: operand 0 (x) must be a token");
  expect_error("  ROOT i = f32[3] infeed(t)\n", OPTIC_ERR_SHAPE_MISMATCH,
               "infeed 'i': the result must be the tuple (data, token[])");
  expect_error("  ROOT i = ((f32[3], token[]), token[]) infeed(t)\n", OPTIC_ERR_SHAPE_MISMATCH,
               "the data shape holds a token");
  expect_error("  ROOT i = (f32[3], f32[1]) infeed(t)\n", OPTIC_ERR_SHAPE_MISMATCH, "is written as");
  expect_error("  ROOT i = (f32[3], token[]) infeed(t, t)\n", OPTIC_ERR_INVALID_ARGUMENT, "takes 1 operand, 2 given");
  expect_error("  ROOT o = token[] outfeed(x, x)\n", OPTIC_ERR_SHAPE_MISMATCH,
               "outfeed: operand 1 (x) must be a token");
  expect_error("  ROOT o = token[] outfeed(t, t)\n", OPTIC_ERR_SHAPE_MISMATCH, "outfeed: operand 0 (t) holds a token");
  expect_error("  ROOT o = token[] outfeed(x)\n", OPTIC_ERR_INVALID_ARGUMENT, "takes 2 operands, 1 given");
  expect_error("  ROOT o = f32[3] outfeed(x, t)\n", OPTIC_ERR_SHAPE_MISMATCH, "is written as");
  expect_error(
      "  c = u32[2] constant({1, 2})\n  ROOT r = (u32[2], u32[4]) rng-bit-generator(c), algorithm=rng_philox\n",
      OPTIC_ERR_SHAPE_MISMATCH, "the state must be a u64 vector, not u32");
  expect_error(
      "  c = u64[3] constant({1, 2, 3})\n"
      "  ROOT r = (u64[3], u32[4]) rng-bit-generator(c), algorithm=rng_three_fry\n",
      OPTIC_ERR_SHAPE_MISMATCH, "a state of 3 u64 values does not suit three-fry");
  expect_error(
      "  c = u64[4] constant({1, 2, 3, 4})\n"
      "  ROOT r = (u64[4], u32[4]) rng-bit-generator(c), algorithm=rng_philox\n",
      OPTIC_ERR_SHAPE_MISMATCH, "does not suit philox");
  expect_error("  ROOT r = (u64[2], f32[4]) rng-bit-generator(s), algorithm=rng_philox\n", OPTIC_ERR_SHAPE_MISMATCH,
               "the bits must be an integer array, not f32");
  expect_error("  ROOT r = (u64[2], pred[4]) rng-bit-generator(s), algorithm=rng_philox\n", OPTIC_ERR_SHAPE_MISMATCH,
               "not pred");
  expect_error("  ROOT r = (u64[2], u32[4]) rng-bit-generator(s)\n", OPTIC_ERR_INVALID_ARGUMENT,
               "attribute 'algorithm' is missing");
  expect_error("  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_mt\n", OPTIC_ERR_INVALID_ARGUMENT,
               "unknown algorithm 'rng_mt'");
  expect_error("  ROOT r = u32[4] rng-bit-generator(s), algorithm=rng_philox\n", OPTIC_ERR_SHAPE_MISMATCH,
               "the result must be the tuple (state, bits)");
  expect_error("  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_philox\n", OPTIC_ERR_SHAPE_MISMATCH,
               "is written as");
}

/* The builders directly: bad arguments get statuses and messages. */
static void builder_errors(void) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  optic_node_id s, t, r;
  OT_EXPECT_OK(optic_module_create("b", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "e", &c));
  optic_type st = optic_type_array(OPTIC_U64, &(optic_shape){.rank = 1, .dims = {2}});
  optic_type bits = optic_type_array(OPTIC_U32, &(optic_shape){.rank = 1, .dims = {4}});
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &st, NULL, &s));
  OT_EXPECT_STATUS(optic_graph_rng_bit_generator(m, c, s, (optic_rng_algorithm)7, &bits, NULL, &r),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "unknown algorithm 7") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_graph_rng_bit_generator(m, c, s, OPTIC_RNG_PHILOX, NULL, NULL, &r),
                   OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_after_all(m, c, NULL, 1, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_graph_after_all(m, c, NULL, 0, NULL, &t));
  OT_EXPECT_STATUS(optic_graph_infeed(m, c, t, NULL, NULL, &r), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_outfeed(m, c, s, t, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_graph_infeed(m, c, t, &bits, NULL, &r));
  const optic_type *rt = optic_node_type(m, r);
  OT_CHECK(optic_type_is_tuple(rt) && rt->tuple_size == 2 && optic_type_equal(&rt->elements[0], &bits) &&
               rt->elements[1].dtype == OPTIC_TOKEN,
           "infeed's result is (data, token[])");
  OT_EXPECT_OK(optic_graph_rng_bit_generator(m, c, s, OPTIC_RNG_THREE_FRY, &bits, NULL, &r));
  rt = optic_node_type(m, r);
  OT_CHECK(
      optic_type_is_tuple(rt) && optic_type_equal(&rt->elements[0], &st) && optic_type_equal(&rt->elements[1], &bits),
      "rng-bit-generator's result is (state, bits)");
  optic_module_destroy(m);
}

static const ot_case cases[] = {{"after_all_runs", after_all_runs},
                                {"replica_ids_run", replica_ids_run},
                                {"transfers_and_rng_refused", transfers_and_rng_refused},
                                {"shape_errors", shape_errors},
                                {"builder_errors", builder_errors}};
OT_MAIN(cases)
