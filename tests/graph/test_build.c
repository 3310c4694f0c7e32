/* Graph builder: shape inference for every opcode built so far, each error
 * with its status and a message naming op, operand and dims; users kept in
 * sync with operands; names unique; HLO text printing. */
#include <optic/optic.h>

#include "tests/harness.h"

typedef struct fixture {
  optic_module_t *m;
  optic_comp_id main;
} fixture;

static fixture setup(void) {
  fixture f = {0};
  if (optic_module_create("test", &f.m) != OPTIC_OK || optic_module_add_computation(f.m, "main", &f.main) != OPTIC_OK) {
    fprintf(stderr, "setup failed: %s\n", optic_last_error());
    exit(2);
  }
  return f;
}

static optic_shape shp(int32_t rank, const int64_t *dims) {
  optic_shape s;
  if (optic_shape_make(rank, dims, &s) != OPTIC_OK) exit(2);
  return s;
}

static optic_node_id param(fixture *f, int32_t n, optic_dtype dt, int32_t rank, const int64_t *dims) {
  optic_shape s = shp(rank, dims);
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id = OPTIC_NO_NODE;
  if (optic_graph_parameter(f->m, f->main, n, &t, NULL, &id) != OPTIC_OK) {
    fprintf(stderr, "param failed: %s\n", optic_last_error());
    exit(2);
  }
  return id;
}

static bool msg_has(const char *needle) {
  if (strstr(optic_last_error(), needle)) return true;
  fprintf(stderr, "  message '%s' lacks '%s'\n", optic_last_error(), needle);
  return false;
}

static bool type_is(const optic_module_t *m, optic_node_id id, const char *want) {
  char buf[256];
  optic_type_format(optic_node_type(m, id), buf, sizeof buf);
  if (strcmp(buf, want) == 0) return true;
  fprintf(stderr, "  type of %s is %s, want %s\n", optic_node_name(m, id), buf, want);
  return false;
}

static void elementwise_types_and_users(void) {
  fixture f = setup();
  int64_t d[] = {2, 3};
  optic_node_id a = param(&f, 0, OPTIC_F32, 2, d), b = param(&f, 1, OPTIC_F32, 2, d);
  optic_node_id add, e, c, sel, cv;
  OT_EXPECT_OK(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, a, b, NULL, &add));
  OT_EXPECT_OK(optic_graph_unary(f.m, f.main, OPTIC_OP_EXPONENTIAL, add, "e", &e));
  OT_EXPECT_OK(optic_graph_compare(f.m, f.main, OPTIC_CMP_LT, a, e, NULL, &c));
  OT_EXPECT_OK(optic_graph_select(f.m, f.main, c, a, e, NULL, &sel));
  OT_EXPECT_OK(optic_graph_convert(f.m, f.main, sel, OPTIC_S32, NULL, &cv));
  OT_CHECK(type_is(f.m, add, "f32[2,3]") && type_is(f.m, c, "pred[2,3]") && type_is(f.m, cv, "s32[2,3]"));
  OT_CHECK(strcmp(optic_node_name(f.m, e), "e") == 0);
  /* users mirror operands: a is used by add, compare, select (each once) */
  OT_CHECK(optic_node_user_count(f.m, a) == 3, "a has %d users", optic_node_user_count(f.m, a));
  optic_node_id sq;
  OT_EXPECT_OK(optic_graph_binary(f.m, f.main, OPTIC_OP_MULTIPLY, b, b, NULL, &sq));
  OT_CHECK(optic_node_user_count(f.m, b) == 2, "b used twice by one op is listed once");
  for (optic_node_id id = 0; id <= sq; id++) {
    for (int32_t i = 0; i < optic_node_operand_count(f.m, id); i++) {
      optic_node_id op = optic_node_operand(f.m, id, i);
      bool found = false;
      for (int32_t u = 0; u < optic_node_user_count(f.m, op); u++) found |= optic_node_user(f.m, op, u) == id;
      OT_CHECK(found, "%s missing from users of %s", optic_node_name(f.m, id), optic_node_name(f.m, op));
    }
  }
  optic_module_destroy(f.m);
}

static void elementwise_errors(void) {
  fixture f = setup();
  int64_t d23[] = {2, 3}, d32[] = {3, 2};
  optic_node_id a = param(&f, 0, OPTIC_F32, 2, d23), b = param(&f, 1, OPTIC_F32, 2, d32);
  optic_node_id p = param(&f, 2, OPTIC_PRED, 2, d23), s = param(&f, 3, OPTIC_S32, 2, d23);
  optic_node_id x;
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, a, b, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("add: operand 1 (") && msg_has("f32[3,2]") && msg_has("f32[2,3]"));
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, a, s, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_NEGATE, a, a, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_unary(f.m, f.main, OPTIC_OP_EXPONENTIAL, s, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("dtype s32"));
  OT_EXPECT_STATUS(optic_graph_unary(f.m, f.main, OPTIC_OP_NOT, a, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_AND, a, a, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_OK(optic_graph_binary(f.m, f.main, OPTIC_OP_AND, p, p, NULL, &x));
  OT_EXPECT_STATUS(optic_graph_select(f.m, f.main, a, a, a, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("predicate"));
  OT_EXPECT_STATUS(optic_graph_select(f.m, f.main, p, a, s, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  optic_node_id lo = param(&f, 4, OPTIC_F32, 0, NULL), lo_bad = param(&f, 5, OPTIC_F32, 1, d23);
  OT_EXPECT_OK(optic_graph_clamp(f.m, f.main, lo, a, lo, NULL, &x));
  OT_EXPECT_STATUS(optic_graph_clamp(f.m, f.main, lo_bad, a, lo, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("clamp: min (operand 0)"));
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, a, 999, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("operand 1 is id 999"));
  /* an operand from another computation */
  optic_comp_id other;
  OT_EXPECT_OK(optic_module_add_computation(f.m, "other", &other));
  OT_EXPECT_STATUS(optic_graph_unary(f.m, other, OPTIC_OP_NEGATE, a, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("belongs to computation 'main'"));
  int32_t before = 0;
  for (optic_node_id id = 0; optic_node_name(f.m, id); id++) before++;
  OT_EXPECT_STATUS(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, a, b, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  int32_t after = 0;
  for (optic_node_id id = 0; optic_node_name(f.m, id); id++) after++;
  OT_CHECK(before == after, "a failed builder added an instruction");
  OT_CHECK(optic_node_user_count(f.m, b) == 0, "a failed builder left a user behind");
  optic_module_destroy(f.m);
}

static void leaves(void) {
  fixture f = setup();
  int64_t d[] = {2, 2};
  optic_shape s = shp(2, d);
  float data[4] = {1, 2, 3, 4};
  optic_node_id c, io, x;
  OT_EXPECT_OK(optic_graph_constant(f.m, f.main, OPTIC_F32, &s, data, sizeof data, NULL, &c));
  size_t bytes;
  const float *back = optic_node_constant_data(f.m, c, &bytes);
  OT_CHECK(bytes == 16 && back && back[3] == 4.0f && back != data, "constant bytes are copied");
  OT_EXPECT_STATUS(optic_graph_constant(f.m, f.main, OPTIC_F32, &s, data, 12, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("needs 16 bytes, 12 given"));
  OT_EXPECT_OK(optic_graph_iota(f.m, f.main, OPTIC_S32, &s, 1, NULL, &io));
  OT_EXPECT_STATUS(optic_graph_iota(f.m, f.main, OPTIC_S32, &s, 2, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id p0;
  OT_EXPECT_OK(optic_graph_parameter(f.m, f.main, 0, &t, "p0", &p0));
  OT_EXPECT_STATUS(optic_graph_parameter(f.m, f.main, 0, &t, "p0b", &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("already has parameter 0"));
  OT_CHECK(optic_computation_parameter_count(f.m, f.main) == 1 && optic_computation_parameter(f.m, f.main, 0) == p0);
  /* an auto name never collides with a user's name */
  optic_node_id n1, n2;
  char next[32];
  snprintf(next, sizeof next, "negate.%d", (int)p0 + 1);
  OT_EXPECT_OK(optic_graph_unary(f.m, f.main, OPTIC_OP_NEGATE, p0, next, &n1));
  OT_EXPECT_OK(optic_graph_unary(f.m, f.main, OPTIC_OP_NEGATE, p0, NULL, &n2));
  OT_CHECK(strcmp(optic_node_name(f.m, n1), optic_node_name(f.m, n2)) != 0);
  optic_module_destroy(f.m);
}

static void layout_ops(void) {
  fixture f = setup();
  int64_t d3[] = {3}, d23[] = {2, 3}, d234[] = {2, 3, 4};
  optic_node_id v = param(&f, 0, OPTIC_F32, 1, d3), a = param(&f, 1, OPTIC_F32, 3, d234);
  optic_node_id zero = param(&f, 2, OPTIC_F32, 0, NULL), x;
  optic_shape s234 = shp(3, d234), s23 = shp(2, d23);
  int64_t bd[] = {1};
  OT_EXPECT_OK(optic_graph_broadcast(f.m, f.main, v, &s234, bd, 1, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[2,3,4]"));
  int64_t bd_bad[] = {2};
  OT_EXPECT_STATUS(optic_graph_broadcast(f.m, f.main, v, &s234, bd_bad, 1, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("operand dim 0 has size 3 but output dim 2 has size 4"));
  int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40, 3};
  optic_shape big = {.rank = 3, .dims = {huge[0], huge[1], huge[2]}};
  int64_t bd2[] = {2};
  OT_EXPECT_STATUS(optic_graph_broadcast(f.m, f.main, v, &big, bd2, 1, NULL, &x), OPTIC_ERR_OVERFLOW);
  optic_shape s64 = {.rank = 2, .dims = {6, 4}};
  OT_EXPECT_OK(optic_graph_reshape(f.m, f.main, a, &s64, NULL, &x));
  OT_EXPECT_STATUS(optic_graph_reshape(f.m, f.main, a, &s23, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("has 24 elements but f32[2,3] has 6"));
  int64_t perm[] = {2, 0, 1};
  OT_EXPECT_OK(optic_graph_transpose(f.m, f.main, a, perm, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[4,2,3]"));
  int64_t perm_bad[] = {2, 2, 1};
  OT_EXPECT_STATUS(optic_graph_transpose(f.m, f.main, a, perm_bad, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("twice"));
  int64_t st[] = {0, 1, 0}, li[] = {2, 3, 4}, sd[] = {1, 1, 3};
  OT_EXPECT_OK(optic_graph_slice(f.m, f.main, a, st, li, sd, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[2,2,2]"));
  int64_t li_bad[] = {2, 3, 5};
  OT_EXPECT_STATUS(optic_graph_slice(f.m, f.main, a, st, li_bad, sd, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("dim 2 has [0:5:3]"));
  optic_node_id parts[] = {a, a};
  OT_EXPECT_OK(optic_graph_concatenate(f.m, f.main, parts, 2, 1, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[2,6,4]"));
  optic_node_id mixed[] = {a, v};
  OT_EXPECT_STATUS(optic_graph_concatenate(f.m, f.main, mixed, 2, 0, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  optic_pad_dim pad[] = {{1, 2, 0}, {-1, 0, 1}, {0, 0, 2}};
  OT_EXPECT_OK(optic_graph_pad(f.m, f.main, a, zero, pad, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[5,4,10]")); /* 2+3; 3+2-1; 4+3*2 */
  optic_pad_dim pad_neg[] = {{-2, -1, 0}, {0, 0, 0}, {0, 0, 0}};
  OT_EXPECT_STATUS(optic_graph_pad(f.m, f.main, a, zero, pad_neg, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_EXPECT_STATUS(optic_graph_pad(f.m, f.main, a, v, pad, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("padding value"));
  int64_t rv[] = {0, 2};
  OT_EXPECT_OK(optic_graph_reverse(f.m, f.main, a, rv, 2, NULL, &x));
  int64_t rv_bad[] = {3};
  OT_EXPECT_STATUS(optic_graph_reverse(f.m, f.main, a, rv_bad, 1, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  optic_module_destroy(f.m);
}

/* add(f32[], f32[]) as a reduction combiner in its own computation. */
static optic_comp_id make_adder(optic_module_t *m, const char *name) {
  optic_comp_id c;
  optic_node_id x, y, r;
  optic_type t = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 0});
  if (optic_module_add_computation(m, name, &c) || optic_graph_parameter(m, c, 0, &t, NULL, &x) ||
      optic_graph_parameter(m, c, 1, &t, NULL, &y) || optic_graph_binary(m, c, OPTIC_OP_ADD, x, y, NULL, &r) ||
      optic_computation_set_root(m, c, r)) {
    fprintf(stderr, "make_adder: %s\n", optic_last_error());
    exit(2);
  }
  return c;
}

static void structure_ops(void) {
  fixture f = setup();
  int64_t d23[] = {2, 3};
  optic_node_id a = param(&f, 0, OPTIC_F32, 2, d23), z = param(&f, 1, OPTIC_F32, 0, NULL);
  optic_node_id s = param(&f, 2, OPTIC_S32, 0, NULL), x, tup, g;
  optic_node_id els[] = {a, s};
  OT_EXPECT_OK(optic_graph_tuple(f.m, f.main, els, 2, NULL, &tup));
  OT_CHECK(type_is(f.m, tup, "(f32[2,3], s32[])"));
  OT_EXPECT_OK(optic_graph_get_tuple_element(f.m, f.main, tup, 1, NULL, &g));
  OT_CHECK(type_is(f.m, g, "s32[]"));
  OT_EXPECT_STATUS(optic_graph_get_tuple_element(f.m, f.main, tup, 2, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_graph_get_tuple_element(f.m, f.main, a, 0, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  optic_comp_id add = make_adder(f.m, "add_f32");
  int64_t dims[] = {1};
  OT_EXPECT_OK(optic_graph_reduce(f.m, f.main, &a, &z, 1, dims, 1, add, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[2]"));
  OT_EXPECT_STATUS(optic_graph_reduce(f.m, f.main, &a, &s, 1, dims, 1, add, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("init value 0"));
  int64_t dims_bad[] = {1, 1};
  OT_EXPECT_STATUS(optic_graph_reduce(f.m, f.main, &a, &z, 1, dims_bad, 2, add, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  optic_node_id pair[] = {a, a};
  OT_EXPECT_OK(optic_graph_map(f.m, f.main, pair, 2, add, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[2,3]"));
  OT_EXPECT_STATUS(optic_graph_map(f.m, f.main, &a, 1, add, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("takes 2 parameters, 1 given"));
  optic_node_id args[] = {z, z};
  OT_EXPECT_OK(optic_graph_call(f.m, f.main, add, args, 2, NULL, &x));
  OT_CHECK(type_is(f.m, x, "f32[]"));
  optic_node_id wrong[] = {z, s};
  OT_EXPECT_STATUS(optic_graph_call(f.m, f.main, add, wrong, 2, NULL, &x), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(msg_has("parameter 1 of 'add_f32' has type f32[] but s32[] is passed"));
  OT_EXPECT_STATUS(optic_graph_call(f.m, f.main, f.main, args, 2, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  optic_comp_id rootless;
  OT_EXPECT_OK(optic_module_add_computation(f.m, "rootless", &rootless));
  OT_EXPECT_STATUS(optic_graph_call(f.m, f.main, rootless, NULL, 0, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(msg_has("has no root"));
  optic_module_destroy(f.m);
}

static void hlo_text(void) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_create("tiny", &m));
  optic_comp_id add = make_adder(m, "sum");
  optic_comp_id main;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &main));
  OT_EXPECT_OK(optic_module_set_entry(m, main));
  int64_t d[] = {2, 2};
  optic_shape s = optic_shape_make(2, d, &s) == OPTIC_OK ? s : s;
  optic_type t = optic_type_array(OPTIC_F32, &s);
  float k[4] = {1.5f, -2, 0.25f, 3};
  float zero = 0;
  optic_node_id p, c, mul, z, r;
  OT_EXPECT_OK(optic_graph_parameter(m, main, 0, &t, "x", &p));
  OT_EXPECT_OK(optic_graph_constant(m, main, OPTIC_F32, &s, k, sizeof k, "k", &c));
  OT_EXPECT_OK(optic_graph_binary(m, main, OPTIC_OP_MULTIPLY, p, c, "mul", &mul));
  OT_EXPECT_OK(optic_graph_constant(m, main, OPTIC_F32, &(optic_shape){.rank = 0}, &zero, 4, "zero", &z));
  int64_t dims[] = {0};
  OT_EXPECT_OK(optic_graph_reduce(m, main, &mul, &z, 1, dims, 1, add, "r", &r));
  OT_EXPECT_OK(optic_computation_set_root(m, main, r));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  const char *want =
      "HloModule tiny\n\nsum {\n"
      "  parameter.0 = f32[] parameter(0)\n  parameter.1 = f32[] parameter(1)\n"
      "  ROOT add.2 = f32[] add(parameter.0, parameter.1)\n}\n\n"
      "ENTRY main {\n  x = f32[2,2] parameter(0)\n  k = f32[2,2] constant({{1.5, -2}, {0.25, 3}})\n"
      "  mul = f32[2,2] multiply(x, k)\n  zero = f32[] constant(0)\n"
      "  ROOT r = f32[2] reduce(mul, zero), dimensions={0}, to_apply=sum\n}\n";
  OT_CHECK(text && strcmp(text, want) == 0, "got:\n%s", text ? text : "(null)");
  optic_string_free(text);
  optic_module_destroy(m);
}

static void mutation(void) {
  fixture f = setup();
  int64_t d[] = {4};
  optic_node_id a = param(&f, 0, OPTIC_F32, 1, d), b = param(&f, 1, OPTIC_F32, 1, d);
  optic_node_id n1, n2, add, mul, x;
  OT_EXPECT_OK(optic_graph_unary(f.m, f.main, OPTIC_OP_NEGATE, a, "n1", &n1));
  OT_EXPECT_OK(optic_graph_unary(f.m, f.main, OPTIC_OP_NEGATE, a, "n2", &n2)); /* a duplicate of n1 */
  OT_EXPECT_OK(optic_graph_binary(f.m, f.main, OPTIC_OP_ADD, n1, n2, "add", &add));
  OT_EXPECT_OK(optic_graph_binary(f.m, f.main, OPTIC_OP_MULTIPLY, n2, b, "mul", &mul));
  OT_EXPECT_OK(optic_computation_set_root(f.m, f.main, n2));
  /* replace n2 by n1 everywhere, the root included */
  OT_EXPECT_OK(optic_node_replace_all_uses(f.m, n2, n1));
  OT_CHECK(optic_computation_root(f.m, f.main) == n1, "the root follows the replacement");
  OT_EXPECT_OK(optic_computation_set_root(f.m, f.main, mul));
  OT_CHECK(optic_node_operand(f.m, add, 0) == n1 && optic_node_operand(f.m, add, 1) == n1);
  OT_CHECK(optic_node_operand(f.m, mul, 0) == n1 && optic_node_user_count(f.m, n2) == 0);
  OT_CHECK(optic_node_user_count(f.m, n1) == 2, "n1 has %d users", optic_node_user_count(f.m, n1));
  OT_EXPECT_STATUS(optic_node_remove(f.m, n1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "still has 2 user(s)") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_node_remove(f.m, mul), OPTIC_ERR_INVALID_ARGUMENT); /* root */
  OT_EXPECT_STATUS(optic_node_remove(f.m, a), OPTIC_ERR_INVALID_ARGUMENT);   /* parameter */
  OT_EXPECT_OK(optic_node_remove(f.m, n2));
  OT_EXPECT_OK(optic_node_remove(f.m, add));
  OT_CHECK(optic_node_user_count(f.m, n1) == 1 && optic_node_type(f.m, n2) == NULL &&
           optic_node_name(f.m, add) == NULL);
  OT_EXPECT_STATUS(optic_graph_unary(f.m, f.main, OPTIC_OP_NEGATE, n2, NULL, &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "was removed") != NULL, "%s", optic_last_error());
  int32_t count;
  const optic_node_id *ids = optic_computation_instructions(f.m, f.main, &count);
  OT_CHECK(count == 4 && ids[0] == a && ids[1] == b && ids[2] == n1 && ids[3] == mul, "count %d", count);
  optic_node_id other_type;
  OT_EXPECT_OK(optic_graph_convert(f.m, f.main, n1, OPTIC_S32, NULL, &other_type));
  OT_EXPECT_STATUS(optic_node_replace_all_uses(f.m, n1, other_type), OPTIC_ERR_SHAPE_MISMATCH);
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(f.m, &text));
  OT_CHECK(text && strstr(text, "n2") == NULL && strstr(text, "ROOT mul = f32[4] multiply(n1, parameter.1)"), "%s",
           text);
  optic_string_free(text);
  optic_module_destroy(f.m);
}

static const ot_case cases[] = {
    {"mutation", mutation},
    {"elementwise_types_and_users", elementwise_types_and_users},
    {"elementwise_errors", elementwise_errors},
    {"leaves", leaves},
    {"layout_ops", layout_ops},
    {"structure_ops", structure_ops},
    {"hlo_text", hlo_text},
};
OT_MAIN(cases)
