/* Opcode kinds: the kind column of OPTIC_OPCODE_LIST is the one list of
 * opcode classes, so every consumer must agree with it: the unary and binary
 * builders accept exactly the UNARY (and copy) and BINARY opcodes, the HLO
 * importer builds each of them from text, the elementwise test is "kind is
 * not OTHER", buffer reuse in place follows the kinds (with the kernels'
 * stated exceptions), and the element ops of kernels/elem.h (the semantics
 * table the evaluator and the runtime share) are exactly the elementwise
 * opcodes and copy, with the same names and kinds. */
#include <string.h>

#include <optic/optic.h>

#include "graph/buffer_internal.h"
#include "graph/opcode_kernels.h"
#include "kernels/elem.h"
#include "tests/harness.h"

static const optic_dtype dtypes[] = {OPTIC_F32, OPTIC_S32, OPTIC_PRED};
#define N_DTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

typedef struct kind_fixture {
  optic_module_t *m;
  optic_comp_id c;
  optic_node_id p[N_DTYPES]; /* one f32[4], s32[4], pred[4] parameter each */
} kind_fixture;

static kind_fixture setup(void) {
  kind_fixture f = {0};
  OT_EXPECT_OK(optic_module_create("kinds", &f.m));
  OT_EXPECT_OK(optic_module_add_computation(f.m, "main", &f.c));
  for (int d = 0; d < N_DTYPES; d++) {
    optic_type t = optic_type_array(dtypes[d], &(optic_shape){.rank = 1, .dims = {4}});
    OT_EXPECT_OK(optic_graph_parameter(f.m, f.c, d, &t, NULL, &f.p[d]));
  }
  return f;
}

/* The first dtype the builder takes op on, or -1; *id the instruction. */
static int unary_dtype(kind_fixture *f, optic_opcode op, optic_node_id *id) {
  for (int d = 0; d < N_DTYPES; d++) {
    if (optic_graph_unary(f->m, f->c, op, f->p[d], NULL, id) == OPTIC_OK) return d;
  }
  return -1;
}

static int binary_dtype(kind_fixture *f, optic_opcode op, optic_node_id *id) {
  for (int d = 0; d < N_DTYPES; d++) {
    if (optic_graph_binary(f->m, f->c, op, f->p[d], f->p[d], NULL, id) == OPTIC_OK) return d;
  }
  return -1;
}

static void builders_follow_the_kinds(void) {
  kind_fixture f = setup();
  int unary = 0, binary = 0;
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    optic_opcode op = (optic_opcode)i;
    graph_opcode_kind k = graph_opcode_kind_of(op);
    optic_node_id id;
    bool want_unary = k == GRAPH_OPCODE_UNARY || op == OPTIC_OP_COPY;
    int du = unary_dtype(&f, op, &id), db = binary_dtype(&f, op, &id);
    OT_CHECK((du >= 0) == want_unary, "%s: unary builder %s it", optic_opcode_name(op), du >= 0 ? "takes" : "refuses");
    OT_CHECK((db >= 0) == (k == GRAPH_OPCODE_BINARY), "%s: binary builder %s it", optic_opcode_name(op),
             db >= 0 ? "takes" : "refuses");
    OT_CHECK(graph_opcode_is_elementwise(op) == (k != GRAPH_OPCODE_OTHER), "%s", optic_opcode_name(op));
    unary += du >= 0;
    binary += db >= 0;
  }
  OT_CHECK(graph_opcode_kind_of(OPTIC_OPCODE_COUNT_) == GRAPH_OPCODE_OTHER);
  OT_CHECK(unary == 24 && binary == 15, "%d unary, %d binary opcodes", unary, binary);
  optic_module_destroy(f.m);
}

/* Every UNARY/BINARY opcode (and copy) imports from HLO text. */
static void hlo_import_follows_the_kinds(void) {
  kind_fixture f = setup();
  static const char *const dt_names[] = {"f32", "s32", "pred"};
  int imported = 0;
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    optic_opcode op = (optic_opcode)i;
    graph_opcode_kind k = graph_opcode_kind_of(op);
    optic_node_id id;
    int d = k == GRAPH_OPCODE_BINARY                           ? binary_dtype(&f, op, &id)
            : (k == GRAPH_OPCODE_UNARY || op == OPTIC_OP_COPY) ? unary_dtype(&f, op, &id)
                                                               : -1;
    if (d < 0) continue;
    char text[512];
    const char *t = dt_names[d];
    if (k == GRAPH_OPCODE_BINARY) {
      snprintf(text, sizeof text,
               "HloModule m\n\nENTRY e {\n  a = %s[4] parameter(0)\n  b = %s[4] parameter(1)\n  ROOT r = %s[4] %s(a, "
               "b)\n}\n",
               t, t, t, optic_opcode_name(op));
    } else {
      snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n  a = %s[4] parameter(0)\n  ROOT r = %s[4] %s(a)\n}\n", t,
               t, optic_opcode_name(op));
    }
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m) {
      optic_comp_id e = optic_module_entry(m);
      OT_CHECK(optic_node_opcode(m, optic_computation_root(m, e)) == op, "%s", optic_opcode_name(op));
      imported++;
    }
    optic_module_destroy(m);
  }
  OT_CHECK(imported == 39, "%d opcodes imported", imported);
  optic_module_destroy(f.m);
}

/* In place: every UNARY and BINARY op, clamp, and select's two value
 * operands; never compare, convert, copy or select's predicate. */
static void in_place_follows_the_kinds(void) {
  kind_fixture f = setup();
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    optic_opcode op = (optic_opcode)i;
    graph_opcode_kind k = graph_opcode_kind_of(op);
    optic_node_id id;
    int d = k == GRAPH_OPCODE_BINARY                           ? binary_dtype(&f, op, &id)
            : (k == GRAPH_OPCODE_UNARY || op == OPTIC_OP_COPY) ? unary_dtype(&f, op, &id)
                                                               : -1;
    if (d < 0) continue;
    const optic_instr *in = graph_instr(f.m, id);
    bool want = op != OPTIC_OP_COPY;
    OT_CHECK(gs_in_place_operand(in, 0, optic_node_type(f.m, f.p[d])) == want, "%s", optic_opcode_name(op));
  }
  optic_node_id x = f.p[0], pr = f.p[2], id;
  OT_EXPECT_OK(optic_graph_select(f.m, f.c, pr, x, x, NULL, &id));
  const optic_type *tf = optic_node_type(f.m, x);
  OT_CHECK(!gs_in_place_operand(graph_instr(f.m, id), 0, optic_node_type(f.m, pr)));
  OT_CHECK(gs_in_place_operand(graph_instr(f.m, id), 1, tf) && gs_in_place_operand(graph_instr(f.m, id), 2, tf));
  OT_EXPECT_OK(optic_graph_clamp(f.m, f.c, x, x, x, NULL, &id));
  OT_CHECK(gs_in_place_operand(graph_instr(f.m, id), 1, tf));
  OT_EXPECT_OK(optic_graph_compare(f.m, f.c, OPTIC_CMP_LT, x, x, NULL, &id));
  OT_CHECK(!gs_in_place_operand(graph_instr(f.m, id), 0, tf));
  OT_EXPECT_OK(optic_graph_convert(f.m, f.c, x, OPTIC_F32, NULL, &id));
  OT_CHECK(!gs_in_place_operand(graph_instr(f.m, id), 0, tf));
  optic_module_destroy(f.m);
}

/* Every elementwise opcode (kind not OTHER) and copy maps to the element op
 * of its name, UNARY to UNARY, BINARY to BINARY, ELEMENTWISE to OTHER; no
 * other opcode maps; every element op has an opcode. */
static void element_ops_follow_the_kinds(void) {
  int mapped = 0;
  bool hit[OPTIC_ELEM_OP_COUNT_] = {false};
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    optic_opcode op = (optic_opcode)i;
    graph_opcode_kind k = graph_opcode_kind_of(op);
    optic_elem_op e = OPTIC_ELEM_OP_COUNT_;
    bool is_elem = graph_opcode_elem(op, &e);
    OT_CHECK(is_elem == (k != GRAPH_OPCODE_OTHER || op == OPTIC_OP_COPY), "%s: element op %s", optic_opcode_name(op),
             is_elem ? "exists" : "missing");
    if (!is_elem) continue;
    mapped++;
    hit[e] = true;
    OT_CHECK(strcmp(optic_elem_op_name(e), optic_opcode_name(op)) == 0, "%s maps to %s", optic_opcode_name(op),
             optic_elem_op_name(e));
    optic_elem_kind want = k == GRAPH_OPCODE_UNARY    ? OPTIC_ELEM_KIND_UNARY
                           : k == GRAPH_OPCODE_BINARY ? OPTIC_ELEM_KIND_BINARY
                                                      : OPTIC_ELEM_KIND_OTHER;
    OT_CHECK(optic_elem_kind_of(e) == want, "%s: element kind %d, opcode kind %d", optic_opcode_name(op),
             (int)optic_elem_kind_of(e), (int)k);
  }
  OT_CHECK(mapped == OPTIC_ELEM_OP_COUNT_, "%d opcodes map, %d element ops", mapped, (int)OPTIC_ELEM_OP_COUNT_);
  for (int e = 0; e < OPTIC_ELEM_OP_COUNT_; e++) OT_CHECK(hit[e], "element op %s has no opcode", optic_elem_op_name(e));
  OT_CHECK(strcmp(optic_elem_op_name(OPTIC_ELEM_OP_COUNT_), "invalid") == 0);
  OT_CHECK(optic_elem_kind_of(OPTIC_ELEM_OP_COUNT_) == OPTIC_ELEM_KIND_OTHER);
}

static const ot_case cases[] = {
    {"element_ops_follow_the_kinds", element_ops_follow_the_kinds},
    {"builders_follow_the_kinds", builders_follow_the_kinds},
    {"hlo_import_follows_the_kinds", hlo_import_follows_the_kinds},
    {"in_place_follows_the_kinds", in_place_follows_the_kinds},
};
OT_MAIN(cases)
