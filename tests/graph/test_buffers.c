/* Buffer assignment: hand-computed plans (ping-pong chains, in-place reuse,
 * fan-out, aliases, caller buffers, tuple-valued and called computations),
 * the verifier catching corrupted plans, and a randomized property test over
 * 1,000 seeded random graphs, each plan checked by the verifier and by a
 * brute-force pairwise overlap check written here from the definitions. */
#include <optic/optic.h>

#include "graph/buffer_internal.h"
#include "tests/graph/random_graph.h"
#include "tests/harness.h"

#define ALIGN OPTIC_BUFFER_ALIGNMENT

static optic_shape shp(int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t n, int32_t rank, const int64_t *dims) {
  optic_shape s = shp(rank, dims);
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_parameter(m, c, n, &t, NULL, &id));
  return id;
}

static optic_node_id unary(optic_module_t *m, optic_comp_id c, optic_opcode op, optic_node_id x) {
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_unary(m, c, op, x, NULL, &id));
  return id;
}

static optic_node_id binary(optic_module_t *m, optic_comp_id c, optic_opcode op, optic_node_id x, optic_node_id y) {
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_binary(m, c, op, x, y, NULL, &id));
  return id;
}

static optic_node_id transpose2(optic_module_t *m, optic_comp_id c, optic_node_id x) {
  int64_t perm[] = {1, 0};
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_transpose(m, c, x, perm, NULL, &id));
  return id;
}

static optic_comp_id scalar_adder(optic_module_t *m, const char *name) {
  optic_comp_id c;
  optic_node_id r;
  if (optic_module_add_computation(m, name, &c) != OPTIC_OK) exit(2);
  optic_node_id x = param(m, c, 0, 0, NULL), y = param(m, c, 1, 0, NULL);
  if (optic_graph_binary(m, c, OPTIC_OP_ADD, x, y, NULL, &r) || optic_computation_set_root(m, c, r)) exit(2);
  return c;
}

static optic_buffer_slot slot(const optic_buffer_plan_t *p, optic_node_id id, int32_t leaf) {
  optic_buffer_slot s = {.kind = OPTIC_BUFFER_ARENA, .offset = (size_t)-1};
  OT_EXPECT_OK(optic_buffer_plan_slot(p, id, leaf, &s));
  return s;
}

/* Schedules comp, assigns, verifies; NULL (after a failure) if any step fails. */
static optic_buffer_plan_t *plan_of(optic_module_t *m, optic_comp_id comp) {
  optic_schedule_t *s = NULL;
  optic_buffer_plan_t *p = NULL;
  OT_EXPECT_OK(optic_schedule_create(m, comp, &s));
  if (s) OT_EXPECT_OK(optic_buffer_plan_create(m, s, &p));
  optic_schedule_destroy(s);
  if (p) OT_EXPECT_OK(optic_buffer_plan_verify(m, p));
  return p;
}

/* Transposes of a square matrix cannot run in place: a chain ping-pongs
 * between two blocks, the root goes to the caller. */
static void chain_two_blocks(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("chain", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {16, 16};
  optic_node_id p = param(m, c, 0, 2, d);
  optic_node_id a = transpose2(m, c, p), b = transpose2(m, c, a), cc = transpose2(m, c, b), e = transpose2(m, c, cc);
  OT_EXPECT_OK(optic_computation_set_root(m, c, e));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot sa = slot(plan, a, 0), sb = slot(plan, b, 0), sc = slot(plan, cc, 0), se = slot(plan, e, 0);
    OT_CHECK(sa.kind == OPTIC_BUFFER_ARENA && sa.size == 1024 && sa.offset == 0, "a at %zu", sa.offset);
    OT_CHECK(sb.offset == 1024 && sc.offset == 0, "b at %zu, c at %zu", sb.offset, sc.offset);
    OT_CHECK(se.kind == OPTIC_BUFFER_OUTPUT && se.output_leaf == 0);
    OT_CHECK(slot(plan, p, 0).kind == OPTIC_BUFFER_PARAMETER);
    OT_CHECK(optic_buffer_plan_arena_bytes(plan) == 2048, "arena %zu", optic_buffer_plan_arena_bytes(plan));
    OT_CHECK(optic_schedule_peak_bytes(optic_buffer_plan_schedule(plan)) == 2048);
    optic_memory_estimate est;
    OT_EXPECT_OK(optic_buffer_plan_memory(plan, &est));
    OT_CHECK(est.arena_bytes == 2048 && est.parameter_bytes == 1024 && est.output_bytes == 1024 &&
             est.constant_bytes == 0 && est.total_bytes == 4096);
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* Elementwise results take over the block of an operand dying at them: the
 * whole chain uses one block. */
static void chain_in_place(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("inplace", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {256};
  optic_node_id p = param(m, c, 0, 1, d);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, p), b = unary(m, c, OPTIC_OP_NEGATE, a);
  optic_node_id t = unary(m, c, OPTIC_OP_TANH, b), r = unary(m, c, OPTIC_OP_LOG, t);
  OT_EXPECT_OK(optic_computation_set_root(m, c, r));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot sa = slot(plan, a, 0), sb = slot(plan, b, 0), st = slot(plan, t, 0);
    OT_CHECK(sa.in_place_of == OPTIC_NO_NODE, "a reuses a parameter's block");
    OT_CHECK(sb.in_place_of == a && st.in_place_of == b, "in place of %d, %d", (int)sb.in_place_of,
             (int)st.in_place_of);
    OT_CHECK(sa.offset == sb.offset && sb.offset == st.offset);
    OT_CHECK(optic_buffer_plan_arena_bytes(plan) == 1024, "arena %zu", optic_buffer_plan_arena_bytes(plan));
    OT_CHECK(optic_schedule_peak_bytes(optic_buffer_plan_schedule(plan)) == 1024);
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* a feeds a chain and the last op: it stays put until then, while the chain
 * ping-pongs in two other blocks. Also: an operand still needed later is not
 * overwritten in place, and multiply(a, a) may reuse a only at a's last use. */
static void fan_out(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("fanout", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {16, 16};
  optic_node_id p = param(m, c, 0, 2, d);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, p);
  optic_node_id b = transpose2(m, c, a), b2 = transpose2(m, c, b), b3 = transpose2(m, c, b2);
  optic_node_id sq = binary(m, c, OPTIC_OP_MULTIPLY, b3, b3);
  optic_node_id e = binary(m, c, OPTIC_OP_ADD, sq, a);
  optic_node_id f = binary(m, c, OPTIC_OP_MULTIPLY, e, a);
  OT_EXPECT_OK(optic_computation_set_root(m, c, f));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot sa = slot(plan, a, 0), sb = slot(plan, b, 0), sb2 = slot(plan, b2, 0), sb3 = slot(plan, b3, 0);
    optic_buffer_slot ssq = slot(plan, sq, 0), se = slot(plan, e, 0);
    OT_CHECK(sa.offset != sb.offset && sa.offset != sb2.offset && sa.offset != sb3.offset && sa.offset != ssq.offset);
    OT_CHECK(ssq.in_place_of == b3 && se.in_place_of == sq, "sq in place of %d, e of %d", (int)ssq.in_place_of,
             (int)se.in_place_of);
    OT_CHECK(se.offset != sa.offset, "e overwrote a, which f still reads");
    OT_CHECK(optic_buffer_plan_arena_bytes(plan) == 3 * 1024, "arena %zu", optic_buffer_plan_arena_bytes(plan));
    const optic_schedule_t *s = optic_buffer_plan_schedule(plan);
    OT_CHECK(optic_schedule_position(s, f) == 7 && optic_schedule_position(s, a) < optic_schedule_position(s, b));
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* reshape, tuple and get-tuple-element alias: same slot, no new bytes, and
 * they keep what they alias alive. */
static void aliases(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("alias", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {4, 4}, flat[] = {16};
  optic_node_id p = param(m, c, 0, 2, d);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, p), b = unary(m, c, OPTIC_OP_NEGATE, p);
  optic_shape fs = shp(1, flat);
  optic_node_id r, t, g, g2, h, root, pair[2];
  OT_EXPECT_OK(optic_graph_reshape(m, c, a, &fs, NULL, &r));
  pair[0] = r, pair[1] = b;
  OT_EXPECT_OK(optic_graph_tuple(m, c, pair, 2, NULL, &t));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, c, t, 0, NULL, &g));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, c, t, 1, NULL, &g2));
  h = unary(m, c, OPTIC_OP_EXPONENTIAL, g); /* a dies here: h takes its block through two aliases */
  optic_node_id b2 = transpose2(m, c, g2);
  optic_node_id hs;
  OT_EXPECT_OK(optic_graph_reshape(m, c, h, &(optic_shape){.rank = 2, .dims = {4, 4}}, NULL, &hs));
  root = binary(m, c, OPTIC_OP_ADD, hs, b2);
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot sa = slot(plan, a, 0), sr = slot(plan, r, 0), sg = slot(plan, g, 0), sh = slot(plan, h, 0);
    OT_CHECK(sr.source == a && sg.source == a && sr.offset == sa.offset && sg.offset == sa.offset);
    OT_CHECK(optic_buffer_plan_leaf_count(plan, t) == 2 && slot(plan, t, 1).source == b &&
             slot(plan, t, 0).source == a);
    OT_CHECK(sh.in_place_of == a && sh.offset == sa.offset, "h in place of %d", (int)sh.in_place_of);
    OT_CHECK(slot(plan, hs, 0).source == h && slot(plan, g2, 0).source == b);
    OT_CHECK(slot(plan, b, 0).offset != sa.offset);
    /* a, b live together; b2 needs b alive (transpose): three blocks at most. */
    OT_CHECK(optic_buffer_plan_arena_bytes(plan) <= 3 * 64, "arena %zu", optic_buffer_plan_arena_bytes(plan));
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* What the root holds is the caller's (outputs, parameters) or the module's
 * (constants); a value appearing twice names its first output leaf. */
static void caller_buffers(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("outs", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {8};
  optic_node_id p0 = param(m, c, 0, 1, d), p1 = param(m, c, 1, 1, d), x = unary(m, c, OPTIC_OP_EXPONENTIAL, p1), k;
  float vals[8] = {0};
  optic_shape s8 = shp(1, d);
  OT_EXPECT_OK(optic_graph_constant(m, c, OPTIC_F32, &s8, vals, sizeof vals, NULL, &k));
  optic_node_id y = binary(m, c, OPTIC_OP_ADD, x, k), z = unary(m, c, OPTIC_OP_NEGATE, y), root;
  optic_node_id els[] = {p0, x, x, k, z};
  OT_EXPECT_OK(optic_graph_tuple(m, c, els, 5, NULL, &root));
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot r0 = slot(plan, root, 0), r1 = slot(plan, root, 1), r2 = slot(plan, root, 2);
    optic_buffer_slot r3 = slot(plan, root, 3), r4 = slot(plan, root, 4), sy = slot(plan, y, 0);
    OT_CHECK(r0.kind == OPTIC_BUFFER_PARAMETER && r0.source == p0);
    OT_CHECK(r1.kind == OPTIC_BUFFER_OUTPUT && r1.output_leaf == 1 && r2.output_leaf == 1 && r2.source == x);
    OT_CHECK(r3.kind == OPTIC_BUFFER_CONSTANT && r3.source == k);
    OT_CHECK(r4.kind == OPTIC_BUFFER_OUTPUT && r4.output_leaf == 4 && r4.source == z);
    OT_CHECK(sy.kind == OPTIC_BUFFER_ARENA && sy.in_place_of == OPTIC_NO_NODE && sy.offset == 0);
    optic_memory_estimate e;
    OT_EXPECT_OK(optic_buffer_plan_memory(plan, &e));
    OT_CHECK(e.arena_bytes == 64 && e.parameter_bytes == 64 && e.output_bytes == 5 * 32 && e.constant_bytes == 32 &&
                 e.total_bytes == 64 + 64 + 160,
             "arena %zu params %zu outs %zu consts %zu", e.arena_bytes, e.parameter_bytes, e.output_bytes,
             e.constant_bytes);
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* Tuple-valued results get one block per leaf; while, conditional, call,
 * fusion and their computations are planned one computation at a time. */
static void called_computations(void) {
  optic_module_t *m;
  optic_comp_id c, body, cond, other, fused;
  OT_EXPECT_OK(optic_module_create("control", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_comp_id add = scalar_adder(m, "add");
  int64_t d[] = {8}, d2[] = {2, 8};
  OT_EXPECT_OK(optic_module_add_computation(m, "body", &body));
  optic_node_id bx = param(m, body, 0, 1, d), bt = unary(m, body, OPTIC_OP_TANH, bx);
  OT_EXPECT_OK(optic_computation_set_root(m, body, unary(m, body, OPTIC_OP_NEGATE, bt)));
  OT_EXPECT_OK(optic_module_add_computation(m, "cond", &cond));
  optic_node_id cx = param(m, cond, 0, 1, d), cs, cr, cc;
  int64_t st[] = {0}, li[] = {1}, sd[] = {1};
  OT_EXPECT_OK(optic_graph_slice(m, cond, cx, st, li, sd, NULL, &cs));
  OT_EXPECT_OK(optic_graph_reshape(m, cond, cs, &(optic_shape){.rank = 0}, NULL, &cr));
  OT_EXPECT_OK(optic_graph_compare(m, cond, OPTIC_CMP_LT, cr, cr, NULL, &cc));
  OT_EXPECT_OK(optic_computation_set_root(m, cond, cc));
  OT_EXPECT_OK(optic_module_add_computation(m, "other", &other));
  optic_node_id ox = param(m, other, 0, 1, d);
  OT_EXPECT_OK(optic_computation_set_root(m, other, unary(m, other, OPTIC_OP_ABS, ox)));
  OT_EXPECT_OK(optic_module_add_computation(m, "fused", &fused));
  optic_node_id f0 = param(m, fused, 0, 1, d), f1 = param(m, fused, 1, 1, d);
  OT_EXPECT_OK(optic_computation_set_root(m, fused, binary(m, fused, OPTIC_OP_MULTIPLY, f0, f1)));

  optic_node_id x = param(m, c, 0, 2, d2), z, w, sel, cnd, call, fu, red, g0, g1, root, zero;
  float zf = 0;
  OT_EXPECT_OK(optic_graph_constant(m, c, OPTIC_F32, &(optic_shape){.rank = 0}, &zf, 4, NULL, &zero));
  optic_node_id ins[] = {x, x}, inits[] = {zero, zero};
  optic_comp_id add2;
  OT_EXPECT_OK(optic_module_add_computation(m, "add2", &add2));
  {
    optic_node_id a0 = param(m, add2, 0, 0, NULL), a1 = param(m, add2, 1, 0, NULL), v0 = param(m, add2, 2, 0, NULL),
                  v1 = param(m, add2, 3, 0, NULL), s0 = binary(m, add2, OPTIC_OP_ADD, a0, v0),
                  s1 = binary(m, add2, OPTIC_OP_MAXIMUM, a1, v1), pr[] = {s0, s1}, tr;
    OT_EXPECT_OK(optic_graph_tuple(m, add2, pr, 2, NULL, &tr));
    OT_EXPECT_OK(optic_computation_set_root(m, add2, tr));
  }
  int64_t rdims[] = {0};
  OT_EXPECT_OK(optic_graph_reduce(m, c, ins, inits, 2, rdims, 1, add2, NULL, &red)); /* (f32[8], f32[8]) */
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, c, red, 0, NULL, &g0));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, c, red, 1, NULL, &g1));
  OT_EXPECT_OK(optic_graph_while(m, c, g0, cond, body, NULL, &w));
  optic_type tp = optic_type_array(OPTIC_PRED, &(optic_shape){.rank = 0});
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &tp, NULL, &sel));
  optic_node_id ops[] = {w, g1};
  optic_comp_id br[] = {body, other};
  OT_EXPECT_OK(optic_graph_conditional(m, c, sel, ops, br, 2, NULL, &cnd));
  OT_EXPECT_OK(optic_graph_call(m, c, other, &cnd, 1, NULL, &call));
  optic_node_id fops[] = {call, g1};
  OT_EXPECT_OK(optic_graph_fusion(m, c, OPTIC_FUSION_LOOP, fops, 2, fused, NULL, &fu));
  int64_t one[] = {0};
  OT_EXPECT_OK(optic_graph_reduce(m, c, &fu, &zero, 1, one, 1, add, NULL, &z));
  root = z;
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    optic_buffer_slot r0 = slot(plan, red, 0), r1 = slot(plan, red, 1);
    OT_CHECK(optic_buffer_plan_leaf_count(plan, red) == 2 && r0.source == red && r1.source == red &&
             r0.source_leaf == 0 && r1.source_leaf == 1 && r0.offset != r1.offset);
    OT_CHECK(slot(plan, g1, 0).offset == r1.offset && slot(plan, w, 0).kind == OPTIC_BUFFER_ARENA);
    OT_CHECK(slot(plan, z, 0).kind == OPTIC_BUFFER_OUTPUT && slot(plan, zero, 0).kind == OPTIC_BUFFER_CONSTANT);
    OT_CHECK(optic_buffer_plan_leaf_count(plan, bx) == 0, "an instruction of another computation");
  }
  optic_buffer_plan_destroy(plan);
  optic_comp_id each[] = {body, cond, other, fused, add, add2};
  for (size_t i = 0; i < sizeof each / sizeof each[0]; i++) {
    optic_buffer_plan_t *q = plan_of(m, each[i]);
    OT_CHECK(q != NULL, "computation %d", (int)each[i]);
    if (q && each[i] == cond) {
      OT_CHECK(slot(q, cr, 0).source == cs && slot(q, cs, 0).kind == OPTIC_BUFFER_ARENA);
    }
    optic_buffer_plan_destroy(q);
  }
  optic_module_destroy(m);
}

/* Zero-element arrays take no arena space. */
static void zero_sized(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("zero", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {0, 4}, d4[] = {4};
  optic_node_id p = param(m, c, 0, 2, d), q = param(m, c, 1, 1, d4);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, p), b = transpose2(m, c, a), e = unary(m, c, OPTIC_OP_ABS, q);
  optic_node_id f = unary(m, c, OPTIC_OP_SQRT, e), els[] = {b, f}, root;
  OT_EXPECT_OK(optic_graph_tuple(m, c, els, 2, NULL, &root));
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan) {
    OT_CHECK(slot(plan, a, 0).size == 0 && slot(plan, a, 0).offset == 0);
    OT_CHECK(optic_buffer_plan_arena_bytes(plan) == 64, "arena %zu", optic_buffer_plan_arena_bytes(plan));
  }
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* The verifier rejects corrupted plans, naming both instructions, and a plan
 * of a module that changed since. */
static void verifier_rejects(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("bad", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {16, 16};
  optic_node_id p = param(m, c, 0, 2, d);
  optic_node_id a = transpose2(m, c, p), b = transpose2(m, c, a), e = unary(m, c, OPTIC_OP_NEGATE, b);
  optic_node_id f = unary(m, c, OPTIC_OP_NEGATE, e), g = unary(m, c, OPTIC_OP_ABS, f);
  OT_EXPECT_OK(optic_computation_set_root(m, c, g));
  optic_buffer_plan_t *plan = plan_of(m, c);
  if (plan == NULL) {
    optic_module_destroy(m);
    return;
  }
  optic_buffer_plan_t *q = plan; /* corrupt in place, restore after each case */
  int32_t la = q->leaf_start[gs_local_index(q->schedule.ids, q->schedule.n, a)];
  int32_t lb = q->leaf_start[gs_local_index(q->schedule.ids, q->schedule.n, b)];
  int32_t lf = q->leaf_start[gs_local_index(q->schedule.ids, q->schedule.n, f)];
  optic_buffer_slot keep = q->slots[lb], keep_a = q->slots[la];
  q->slots[la].offset = q->slots[lb].offset; /* a is still read when b is written */
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  const char *msg = optic_last_error();
  printf("verifier_rejects: %s\n", msg);
  OT_CHECK(strstr(msg, optic_node_name(m, a)) && strstr(msg, optic_node_name(m, b)) && strstr(msg, "overlaps"), "%s",
           msg);
  q->slots[la] = keep_a;
  q->slots[lb].offset = keep.offset + 32;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  OT_CHECK(strstr(optic_last_error(), "aligned") != NULL, "%s", optic_last_error());
  q->slots[lb].offset = q->arena_bytes;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  OT_CHECK(strstr(optic_last_error(), "past the arena") != NULL, "%s", optic_last_error());
  q->slots[lb] = keep;
  /* f legally took e's block; claiming b's instead is caught. */
  optic_buffer_slot kf = q->slots[lf];
  OT_CHECK(kf.in_place_of == e, "f in place of %d", (int)kf.in_place_of);
  q->slots[lf].in_place_of = b;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  OT_CHECK(strstr(optic_last_error(), "claims the block") != NULL, "%s", optic_last_error());
  /* ... and sharing e's block without claiming it is an overlap. */
  q->slots[lf].in_place_of = OPTIC_NO_NODE;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  q->slots[lf] = kf;
  q->arena_bytes += 32; /* not a multiple of the alignment */
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  q->arena_bytes -= 32;
  OT_EXPECT_OK(optic_buffer_plan_verify(m, q));
  /* An output moved into the arena. */
  int32_t lg = q->leaf_start[gs_local_index(q->schedule.ids, q->schedule.n, g)];
  q->slots[lg].kind = OPTIC_BUFFER_ARENA;
  q->slots[lg].output_leaf = -1;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  q->slots[lg].kind = OPTIC_BUFFER_OUTPUT;
  q->slots[lg].output_leaf = 0;
  OT_EXPECT_OK(optic_buffer_plan_verify(m, q));
  /* A schedule running b before a. */
  int32_t pa = q->schedule.pos[gs_local_index(q->schedule.ids, q->schedule.n, a)];
  int32_t pb = q->schedule.pos[gs_local_index(q->schedule.ids, q->schedule.n, b)];
  q->schedule.order[pa] = b, q->schedule.order[pb] = a;
  q->schedule.pos[gs_local_index(q->schedule.ids, q->schedule.n, a)] = pb;
  q->schedule.pos[gs_local_index(q->schedule.ids, q->schedule.n, b)] = pa;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, q), OPTIC_ERR_INTERNAL);
  OT_CHECK(strstr(optic_last_error(), "not after its operand") != NULL, "%s", optic_last_error());
  optic_buffer_plan_destroy(plan);
  /* The module changed after planning. */
  plan = plan_of(m, c);
  optic_node_id extra = unary(m, c, OPTIC_OP_ABS, g);
  (void)extra;
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, plan), OPTIC_ERR_INVALID_ARGUMENT);
  optic_schedule_t *old = NULL;
  optic_buffer_plan_t *none = NULL;
  int32_t n_old;
  const optic_node_id *old_order = optic_schedule_order(optic_buffer_plan_schedule(plan), &n_old);
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, old_order, n_old, &old), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_create(m, optic_buffer_plan_schedule(plan), &none), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(none == NULL && old == NULL);
  optic_buffer_plan_destroy(plan);
  optic_module_destroy(m);
}

/* The allocator alone: best fit (lowest offset among equal sizes), splitting,
 * coalescing on both sides, growth from a free block at the top, double-free
 * detection; then random alloc/free sequences against a brute-force model. */
static void allocator(void) {
  gs_arena *a = NULL;
  OT_EXPECT_OK(gs_arena_create(2, &a));
  if (a == NULL) return;
  size_t o[8];
  OT_EXPECT_OK(gs_arena_alloc(a, 128, &o[0]));
  OT_EXPECT_OK(gs_arena_alloc(a, 64, &o[1]));
  OT_EXPECT_OK(gs_arena_alloc(a, 256, &o[2]));
  OT_EXPECT_OK(gs_arena_alloc(a, 64, &o[3]));
  OT_CHECK(o[0] == 0 && o[1] == 128 && o[2] == 192 && o[3] == 448 && gs_arena_high_water(a) == 512);
  OT_EXPECT_OK(gs_arena_free(a, o[1], 64));
  OT_EXPECT_OK(gs_arena_free(a, o[3], 64));
  OT_EXPECT_OK(gs_arena_alloc(a, 64, &o[4])); /* two 64-byte holes: the lower one */
  OT_CHECK(o[4] == 128, "got %zu", o[4]);
  OT_EXPECT_OK(gs_arena_free(a, o[0], 128));
  OT_EXPECT_OK(gs_arena_free(a, o[4], 64)); /* coalesces with [0, 128) */
  OT_EXPECT_OK(gs_arena_alloc(a, 192, &o[5]));
  OT_CHECK(o[5] == 0, "got %zu", o[5]);
  OT_EXPECT_OK(gs_arena_alloc(a, 128, &o[6])); /* no hole fits: grow from the free block at the top */
  OT_CHECK(o[6] == 448 && gs_arena_high_water(a) == 576, "got %zu, high water %zu", o[6], gs_arena_high_water(a));
  OT_EXPECT_OK(gs_arena_free(a, o[2], 256));
  OT_EXPECT_STATUS(gs_arena_free(a, o[2], 256), OPTIC_ERR_INTERNAL);
  OT_EXPECT_STATUS(gs_arena_free(a, 640, 64), OPTIC_ERR_INTERNAL); /* beyond the high water */
  gs_arena_destroy(a);

  rg_rng r = {rg_seed(0xa110c)};
  for (int round = 0; round < 50; round++) {
    OT_EXPECT_OK(gs_arena_create(4, &a));
    if (a == NULL) return;
    enum { N = 64 };
    size_t off[N], size[N];
    bool live[N] = {false};
    for (int step = 0; step < 400; step++) {
      int k = (int)rg_int(&r, 0, N - 1);
      if (live[k]) {
        OT_EXPECT_OK(gs_arena_free(a, off[k], size[k]));
        live[k] = false;
        continue;
      }
      size[k] = (size_t)rg_int(&r, 1, 16) * ALIGN;
      OT_EXPECT_OK(gs_arena_alloc(a, size[k], &off[k]));
      live[k] = true;
      OT_CHECK(off[k] % ALIGN == 0 && off[k] + size[k] <= gs_arena_high_water(a));
      for (int j = 0; j < N; j++) {
        if (j != k && live[j]) {
          OT_CHECK(off[j] + size[j] <= off[k] || off[k] + size[k] <= off[j], "round %d step %d: blocks overlap", round,
                   step);
        }
      }
    }
    for (int j = 0; j < N; j++) {
      if (live[j]) OT_EXPECT_OK(gs_arena_free(a, off[j], size[j]));
    }
    /* Everything coalesced back into one block spanning the arena. */
    size_t whole;
    size_t hw = gs_arena_high_water(a);
    OT_EXPECT_OK(gs_arena_alloc(a, hw, &whole));
    OT_CHECK(whole == 0 && gs_arena_high_water(a) == hw, "round %d: free list did not coalesce", round);
    gs_arena_destroy(a);
  }
}

static void api_errors(void) {
  optic_buffer_plan_destroy(NULL);
  optic_schedule_destroy(NULL);
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("api", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {4};
  optic_node_id p = param(m, c, 0, 1, d), a = unary(m, c, OPTIC_OP_EXPONENTIAL, p);
  optic_schedule_t *s = NULL;
  optic_buffer_plan_t *plan = NULL;
  OT_EXPECT_STATUS(optic_schedule_create(m, c, &s), OPTIC_ERR_INVALID_ARGUMENT); /* no root */
  OT_CHECK(strstr(optic_last_error(), "no root") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_schedule_create(m, 7, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_create(m, NULL, &plan), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_computation_set_root(m, c, a));
  OT_EXPECT_OK(optic_schedule_create(m, c, &s));
  OT_EXPECT_OK(optic_buffer_plan_create(m, s, &plan));
  optic_buffer_slot sl;
  OT_EXPECT_STATUS(optic_buffer_plan_slot(plan, a, 1, &sl), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_slot(plan, 99, 0, &sl), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_slot(NULL, a, 0, &sl), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_memory(plan, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_buffer_plan_verify(m, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_buffer_plan_leaf_count(NULL, a) == 0 && optic_buffer_plan_arena_bytes(NULL) == 0);
  OT_CHECK(optic_schedule_position(s, 99) == -1 && optic_schedule_computation(s) == c);
  OT_EXPECT_OK(optic_buffer_plan_verify(m, plan));
  optic_buffer_plan_destroy(plan);
  optic_schedule_destroy(s);
  optic_module_destroy(m);
}

/* ------------------------------------------------------------ random graphs */

typedef struct value_info {
  optic_node_id source;
  int32_t leaf, def, last;
  optic_buffer_slot slot;
} value_info;

typedef struct random_stats {
  long graphs, instructions, arena_values, in_place, corrupted;
  double arena_sum, peak_sum, creation_peak_sum;
} random_stats;

static bool is_alias(optic_opcode op) {
  return op == OPTIC_OP_TUPLE || op == OPTIC_OP_GET_TUPLE_ELEMENT || op == OPTIC_OP_RESHAPE;
}

/* Arena values with their live ranges, computed here from the definitions
 * (quadratic, for small graphs). Returns the count. */
static int32_t arena_values(optic_module_t *m, optic_comp_id comp, const optic_buffer_plan_t *p, value_info *vals,
                            int32_t cap) {
  const optic_schedule_t *s = optic_buffer_plan_schedule(p);
  int32_t n, nv = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  for (int32_t i = 0; i < n; i++) {
    int32_t until = optic_schedule_position(s, ids[i]);
    for (int32_t u = 0; u < optic_node_user_count(m, ids[i]); u++) {
      optic_node_id user = optic_node_user(m, ids[i], u);
      int32_t at = optic_schedule_position(s, user);
      if (!is_alias(optic_node_opcode(m, user)) && at > until) until = at;
    }
    for (int32_t k = 0; k < optic_buffer_plan_leaf_count(p, ids[i]); k++) {
      optic_buffer_slot sl = slot(p, ids[i], k);
      if (sl.kind != OPTIC_BUFFER_ARENA) continue;
      int32_t v = 0;
      while (v < nv && !(vals[v].source == sl.source && vals[v].leaf == sl.source_leaf)) v++;
      if (v == nv) {
        if (nv == cap) return -1;
        vals[nv++] = (value_info){
            .source = sl.source, .leaf = sl.source_leaf, .def = optic_schedule_position(s, sl.source), .last = -1};
      }
      if (sl.source == ids[i]) vals[v].slot = sl;
      if (vals[v].last < until) vals[v].last = until;
    }
  }
  return nv;
}

static bool shares_legally(const value_info *x, const value_info *y) {
  return x->slot.in_place_of == y->source && x->def == y->last && x->slot.offset == y->slot.offset &&
         x->slot.size == y->slot.size;
}

/* Plans one schedule of a random graph and checks every property. */
static void check_random_plan(optic_module_t *m, optic_comp_id comp, optic_schedule_t *s, const char *what,
                              uint64_t gseed, random_stats *stats) {
  optic_buffer_plan_t *p = NULL, *again = NULL;
  OT_EXPECT_OK(optic_buffer_plan_create(m, s, &p));
  OT_EXPECT_OK(optic_buffer_plan_create(m, s, &again));
  if (p == NULL || again == NULL) {
    fprintf(stderr, "  graph seed %#llx (%s)\n", (unsigned long long)gseed, what);
    optic_buffer_plan_destroy(p);
    optic_buffer_plan_destroy(again);
    return;
  }
  optic_status vst = optic_buffer_plan_verify(m, p);
  OT_CHECK(vst == OPTIC_OK, "graph seed %#llx (%s): %s", (unsigned long long)gseed, what, optic_last_error());
  static value_info vals[4096];
  int32_t nv = arena_values(m, comp, p, vals, 4096);
  size_t arena = optic_buffer_plan_arena_bytes(p), peak = optic_schedule_peak_bytes(s), sum = 0;
  for (int32_t i = 0; i < nv; i++) sum += (vals[i].slot.size + ALIGN - 1) / ALIGN * ALIGN;
  OT_CHECK(arena >= peak && arena <= sum, "graph seed %#llx (%s): arena %zu, peak %zu, sum %zu",
           (unsigned long long)gseed, what, arena, peak, sum);
  OT_CHECK(p->leaf_start[p->schedule.n] == again->leaf_start[again->schedule.n] &&
               memcmp(p->slots, again->slots, (size_t)p->leaf_start[p->schedule.n] * sizeof *p->slots) == 0,
           "graph seed %#llx (%s): two plans of one schedule differ", (unsigned long long)gseed, what);
  /* Brute force: byte ranges of values live at a common step are disjoint,
   * unless one legally took over the other's block. */
  int32_t victim = -1, onto = -1;
  for (int32_t i = 0; i < nv; i++) {
    stats->in_place += vals[i].slot.in_place_of != OPTIC_NO_NODE;
    for (int32_t j = i + 1; j < nv; j++) {
      const value_info *a = &vals[i], *b = &vals[j];
      if (a->slot.size == 0 || b->slot.size == 0) continue;
      bool time = a->def <= b->last && b->def <= a->last;
      bool space = a->slot.offset < b->slot.offset + b->slot.size && b->slot.offset < a->slot.offset + a->slot.size;
      if (time && space && !shares_legally(a, b) && !shares_legally(b, a)) {
        ot_fail_(__FILE__, __LINE__, "graph seed %#llx (%s): %s and %s overlap", (unsigned long long)gseed, what,
                 optic_node_name(m, a->source), optic_node_name(m, b->source));
      }
      if (time && victim < 0 && !shares_legally(a, b) && !shares_legally(b, a) && a->slot.offset != b->slot.offset) {
        victim = j, onto = i;
      }
    }
  }
  /* The verifier is not vacuous: put one of two co-live values onto the other. */
  if (victim >= 0) {
    int32_t loc = gs_local_index(p->schedule.ids, p->schedule.n, vals[victim].source);
    optic_buffer_slot *sl = &p->slots[p->leaf_start[loc] + vals[victim].leaf];
    size_t keep = sl->offset;
    sl->offset = vals[onto].slot.offset;
    OT_CHECK(optic_buffer_plan_verify(m, p) == OPTIC_ERR_INTERNAL, "graph seed %#llx (%s): corruption missed",
             (unsigned long long)gseed, what);
    sl->offset = keep;
    stats->corrupted++;
  }
  stats->arena_values += nv;
  optic_buffer_plan_destroy(p);
  optic_buffer_plan_destroy(again);
}

/* 1,000 random graphs: heuristic and creation-order schedules both plan,
 * verify, bound the arena by [peak, sum of blocks], and pass brute force. */
static void random_graphs(void) {
  uint64_t seed = rg_seed(0x0971c5eedull);
  printf("random_graphs: seed %#llx (repeat with OPTIC_TEST_SEED=%#llx %s random_graphs)\n", (unsigned long long)seed,
         (unsigned long long)seed, ot_prog_);
  rg_rng r = {seed};
  random_stats stats = {0};
  for (int it = 0; it < 1000; it++) {
    uint64_t gseed = rg_next(&r);
    rg_graph g;
    if (!rg_build(gseed, (int32_t)rg_int(&r, 1, 60), &g)) {
      ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
      optic_module_destroy(g.m);
      continue;
    }
    optic_schedule_t *s = NULL, *creation = NULL;
    OT_EXPECT_OK(optic_schedule_create(g.m, g.main, &s));
    int32_t n;
    const optic_node_id *ids = optic_computation_instructions(g.m, g.main, &n);
    OT_EXPECT_OK(optic_schedule_from_order(g.m, g.main, ids, n, &creation));
    if (s && creation) {
      check_random_plan(g.m, g.main, s, "memory-aware schedule", gseed, &stats);
      check_random_plan(g.m, g.main, creation, "creation order", gseed, &stats);
      stats.graphs++;
      stats.instructions += n;
      stats.peak_sum += (double)optic_schedule_peak_bytes(s);
      stats.creation_peak_sum += (double)optic_schedule_peak_bytes(creation);
    }
    optic_schedule_destroy(s);
    optic_schedule_destroy(creation);
    optic_module_destroy(g.m);
  }
  printf(
      "random_graphs: %ld graphs, %ld instructions, %ld arena values, %ld in-place reuses, %ld corrupted plans "
      "rejected; summed peak %.0f bytes (creation order %.0f)\n",
      stats.graphs, stats.instructions, stats.arena_values, stats.in_place, stats.corrupted, stats.peak_sum,
      stats.creation_peak_sum);
  OT_CHECK(stats.graphs == 1000 && stats.corrupted > 500 && stats.in_place > 100);
}

static const ot_case cases[] = {
    {"chain_two_blocks", chain_two_blocks},
    {"chain_in_place", chain_in_place},
    {"fan_out", fan_out},
    {"aliases", aliases},
    {"caller_buffers", caller_buffers},
    {"called_computations", called_computations},
    {"zero_sized", zero_sized},
    {"verifier_rejects", verifier_rejects},
    {"allocator", allocator},
    {"api_errors", api_errors},
    {"random_graphs", random_graphs},
};
OT_MAIN(cases)
