/* HLO text import: every reference module (tests/data/hlo/, copied from
 * ../shared/reference/hlo) parses with the expected entry, root and shapes;
 * import(export(m)) exports the same text; hand-checked XLA costs; entry and
 * root detection; layouts made explicit; literals; skipped attributes; every
 * opcode through export and import. Malformed input: test_hlo_parse_errors.c. */
#include <math.h>

#include <optic/optic.h>

#include "tests/harness.h"
#include "tests/hlo_files.h"

#define S(x) ((x) ? (x) : "(null)")

static optic_module_t *load(const char *name) {
  char path[1024];
  optic_module_t *m = NULL;
  ot_hlo_data_path(name, path, sizeof path);
  OT_EXPECT_OK(optic_module_from_hlo_file(path, &m));
  return m;
}

static optic_module_t *parse(const char *text) {
  optic_module_t *m = NULL;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &m);
  OT_CHECK(st == OPTIC_OK, "%s\n  in:\n%s", optic_last_error(), text);
  return m;
}

static char *export(const optic_module_t *m) {
  char *t = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &t));
  return t;
}

static const char *type_str(const optic_module_t *m, optic_node_id id, char *buf, size_t n) {
  optic_type_format(optic_node_type(m, id), buf, n);
  return buf;
}

/* The node of that name in the entry computation, or OPTIC_NO_NODE. */
static optic_node_id find(optic_module_t *m, const char *name) {
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    for (int32_t i = 0; i < n; i++) {
      if (strcmp(optic_node_name(m, ids[i]), name) == 0) return ids[i];
    }
  }
  return OPTIC_NO_NODE;
}

typedef struct expectation {
  const char *file, *entry, *root, *root_type, *param0_type;
  int32_t n_comps, n_instrs;
} expectation;

static const expectation expected[] = {
    {"add_f32_2x2.hlo", "f", "add_result", "f32[2,2]", "f32[2,2]", 1, 2},
    {"conv0d_as_matmul.hlo", "TestComputation", "convolution.3", "f32[10,7]", "f32[10,5]", 1, 3},
    {"conv2d_nhwc_bias_relu.hlo", "TestComputation", "relu", "f32[8,5,5,32]", "f32[8,5,5,1]", 1, 9},
    /* layout {3,0,2,1}: physical dims 1,2,0,3 */
    {"conv_isolated_layout_3021.hlo", "convolution.167", "convolution.167", "f32[28,28,16,128]", "f32[28,28,16,128]", 1,
     3},
    {"conv_lhs_dilate_parse_only.hlo", "hlo_runner_test_0.1", "conv", "f32[32,24,1024,1]", "f32[32,24,64,128]", 1, 3},
    {"dot_batch_reordered_dims.hlo", "test", "dot", "f32[10,7,17,9,6]", "f32[7,17,10,13]", 1, 3},
    {"dot_batch_with_metadata.hlo", "main.4", "dot.3", "f32[5,4,6]", "f32[4,3,5]", 1, 3},
    {"dot_no_dnums_outer_product.hlo", "test", "dot", "f32[2,3,4,5]", "f32[2,3]", 1, 3},
    {"dot_reshape_divide.hlo", "main", "result", "f32[20]", "f32[20,40]", 1, 9},
    {"dot_transpose_output.hlo", "TransposeOutput", "tr", "f32[64,32]", "f32[32,32]", 1, 4},
    {"one_matmul_train_step.hlo", "entry", "tuple.109", "(f32[32,128], f32[])", "f32[32,128]", 2, 18},
    {"reduce_dim1_with_copy.hlo", "reduce.1", "copy", "f32[2,2,3]", "f32[2,2,2,3]", 2, 4},
    {"softmax_f32.hlo", "main", "divide", "f32[127,125]", "f32[127,125]", 3, 10},
};

static void every_file_parses(void) {
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    const expectation *e = &expected[i];
    optic_module_t *m = load(e->file);
    if (m == NULL) continue;
    char buf[128];
    optic_comp_id entry = optic_module_entry(m);
    int32_t n;
    optic_computation_instructions(m, entry, &n);
    optic_node_id root = optic_computation_root(m, entry), p0 = optic_computation_parameter(m, entry, 0);
    OT_CHECK(strcmp(optic_computation_name(m, entry), e->entry) == 0, "%s: entry %s", e->file,
             optic_computation_name(m, entry));
    OT_CHECK(optic_module_computation_count(m) == e->n_comps, "%s: %d computations", e->file,
             (int)optic_module_computation_count(m));
    OT_CHECK(n == e->n_instrs, "%s: %d entry instructions", e->file, (int)n);
    OT_CHECK(strcmp(optic_node_name(m, root), e->root) == 0, "%s: root %s", e->file, optic_node_name(m, root));
    OT_CHECK(strcmp(type_str(m, root, buf, sizeof buf), e->root_type) == 0, "%s: root type %s", e->file, buf);
    OT_CHECK(strcmp(type_str(m, p0, buf, sizeof buf), e->param0_type) == 0, "%s: parameter 0 type %s", e->file, buf);
    optic_module_destroy(m);
  }
  /* softmax writes 'maximum' in two computations: the second becomes maximum.1 */
  optic_module_t *m = load("softmax_f32.hlo");
  if (m) {
    optic_comp_id add = -1;
    for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
      if (strcmp(optic_computation_name(m, c), "add_computation") == 0) add = c;
    }
    OT_CHECK(add >= 0 && strcmp(optic_node_name(m, optic_computation_root(m, add)), "maximum.1") == 0);
    optic_node_id ninf = find(m, "constant_neg_inf");
    size_t bytes;
    const float *v = optic_node_constant_data(m, ninf, &bytes);
    OT_CHECK(v && bytes == 4 && isinf(v[0]) && v[0] < 0, "constant(-inf)");
  }
  optic_module_destroy(m);
}

static void round_trip(void) {
  for (size_t i = 0; i < OT_REFERENCE_HLO_COUNT; i++) {
    optic_module_t *m1 = load(ot_reference_hlo[i]), *m2 = NULL, *m3 = NULL;
    if (m1 == NULL) continue;
    char *t1 = export(m1);
    m2 = t1 ? parse(t1) : NULL;
    char *t2 = m2 ? export(m2) : NULL;
    OT_CHECK(t1 && t2 && strcmp(t1, t2) == 0, "%s: export(import(export(m))) differs:\n%s\n---\n%s",
             ot_reference_hlo[i], S(t1), S(t2));
    /* and once more, through the file's text itself printed back */
    m3 = t2 ? parse(t2) : NULL;
    OT_CHECK(m3 && optic_module_computation_count(m3) == optic_module_computation_count(m1));
    optic_string_free(t1);
    optic_string_free(t2);
    optic_module_destroy(m1);
    optic_module_destroy(m2);
    optic_module_destroy(m3);
  }
}

static bool cost_of(optic_module_t *m, const char *node, double flops, double trans, double bytes) {
  optic_cost c;
  optic_status st = node ? optic_node_cost(m, find(m, node), &c) : optic_computation_cost(m, optic_module_entry(m), &c);
  if (st != OPTIC_OK) return false;
  if (c.flops == flops && c.transcendentals == trans && c.bytes_accessed == bytes) return true;
  fprintf(stderr, "  %s: flops %.17g trans %.17g bytes %.17g; want %.17g %.17g %.17g\n", node ? node : "total", c.flops,
          c.transcendentals, c.bytes_accessed, flops, trans, bytes);
  return false;
}

/* Worked out by hand from COST_ANALYSIS.md's rules. */
static void hand_checked_costs(void) {
  optic_module_t *m = load("one_matmul_train_step.hlo");
  if (m) {
    /* dot.0: f32[4,32] . f32[32,128]: 2 * 512 * 32 flops; 4 * (128 + 4096 + 512) bytes */
    OT_CHECK(cost_of(m, "dot.0", 32768, 0, 4 * (128 + 4096 + 512)));
    /* dot.2 contracts the batch of 4: f32[32,128] out, 2 * 4096 * 4 */
    OT_CHECK(cost_of(m, "dot.2", 32768, 0, 4 * (128 + 512 + 4096)));
    /* reduce of 512 elements to a scalar with an add: 511 flops; reads 512 + 1 floats, writes 1 */
    OT_CHECK(cost_of(m, "reduce.43", 511, 0, 4 * (512 + 1 + 1)));
    OT_CHECK(cost_of(m, "tuple.109", 0, 0, 16));
    /* 2 dots + maximum, compare, select (512 each) + multiply, add (4096 each) + reduce */
    OT_CHECK(cost_of(m, NULL, 65536 + 3 * 512 + 2 * 4096 + 511, 0, 177188));
  }
  optic_module_destroy(m);
  m = load("conv0d_as_matmul.hlo"); /* the issue's matmul as a 0-D convolution: 2*10*7*5 */
  if (m) OT_CHECK(cost_of(m, NULL, 700, 0, 4 * (50 + 35 + 70)));
  optic_module_destroy(m);
  m = load("softmax_f32.hlo"); /* exp: 15875 transcendentals; reduces 125 -> 1 per row: 127 * 124 flops each */
  if (m) {
    OT_CHECK(cost_of(m, "exponential", 0, 127 * 125, 2 * 4 * 127 * 125));
    OT_CHECK(cost_of(m, "reduce", 127 * 124, 0, 4 * (127 * 125 + 1 + 127)));
    OT_CHECK(cost_of(m, NULL, 2 * 127 * 124 + 2 * 127 * 125, 127 * 125, 764040));
  }
  optic_module_destroy(m);
  /* NHWC 3x3 pad 1 on 5x5: 13 valid (kernel, output) pairs per spatial dim */
  m = load("conv2d_nhwc_bias_relu.hlo");
  if (m) OT_CHECK(cost_of(m, "conv", 2.0 * 1 * 32 * 8 * 13 * 13, 0, 4 * (200 + 288 + 6400)));
  optic_module_destroy(m);
  /* the layouts fold into the convolution: XLA's count, no transposes */
  m = load("conv_isolated_layout_3021.hlo");
  if (m) OT_CHECK(cost_of(m, NULL, 2.0 * 128 * 128 * 16 * 82 * 82, 0, 4.0 * (2 * 16 * 28 * 28 * 128 + 9 * 128 * 128)));
  optic_module_destroy(m);
}

static void entry_and_root_detection(void) {
  /* ENTRY not last; ROOT not last; computations and operands used before their definition */
  optic_module_t *m = parse(
      "HloModule m\n"
      "ENTRY main {\n"
      "  ROOT r = f32[] call(s), to_apply=twice\n"
      "  s = f32[] add(p, p)\n"
      "  p = f32[] parameter(0)\n"
      "  unused = f32[] negate(p)\n"
      "}\n"
      "twice {\n"
      "  x = f32[] parameter(0)\n"
      "  ROOT y = f32[] add(x, x)\n"
      "}\n");
  if (m) {
    optic_comp_id e = optic_module_entry(m);
    OT_CHECK(strcmp(optic_computation_name(m, e), "main") == 0);
    OT_CHECK(strcmp(optic_node_name(m, optic_computation_root(m, e)), "r") == 0);
    char *t = export(m);
    OT_CHECK(t && strstr(t, "\ntwice {\n  x = f32[] parameter(0)\n  ROOT y = f32[] add(x, x)\n}\n\nENTRY main {\n"),
             "%s", S(t));
    optic_string_free(t);
  }
  optic_module_destroy(m);
  /* no ENTRY: the last computation; no ROOT: the last instruction; '%' names */
  m = parse(
      "HloModule m\n"
      "%a {\n  %x = f32[] parameter(0)\n  %n = f32[] negate(%x)\n}\n"
      "b {\n  x.1 = f32[] parameter(0)\n  c = f32[] call(x.1), to_apply=%a\n  d = f32[] abs(c)\n}\n");
  if (m) {
    optic_comp_id e = optic_module_entry(m);
    OT_CHECK(strcmp(optic_computation_name(m, e), "b") == 0);
    OT_CHECK(strcmp(optic_node_name(m, optic_computation_root(m, e)), "d") == 0);
    OT_CHECK(strcmp(optic_node_name(m, optic_computation_root(m, 0)), "n") == 0);
  }
  optic_module_destroy(m);
  /* no HloModule line (XLA's parser takes bare computations; the module is
   * named "_"), and a kCustom fusion, which runs as a call and prints back */
  m = parse(
      "f {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n"
      "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p), kind=kCustom, calls=f\n}\n");
  if (m) {
    OT_CHECK(strcmp(optic_module_name(m), "_") == 0, "module name '%s'", optic_module_name(m));
    char *t = export(m);
    OT_CHECK(t && strncmp(t, "HloModule _", 11) == 0 && strstr(t, "kind=kCustom, calls=f"), "%s", S(t));
    optic_string_free(t);
  }
  optic_module_destroy(m);
}

/* Entry layouts become explicit transposes; everything else is logical. */
static void layouts(void) {
  char buf[128];
  optic_module_t *m = parse(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[2,3]{0,1} parameter(0)\n"
      "  q = f32[2,3]{1,0:T(8,128)} parameter(1)\n"
      "  s = f32[2,3]{0,1} add(p, q)\n"
      "  ROOT n = f32[2,3]{0,1} negate(s)\n"
      "}\n");
  if (m) {
    optic_comp_id e = optic_module_entry(m);
    optic_node_id p = optic_computation_parameter(m, e, 0), root = optic_computation_root(m, e);
    OT_CHECK(strcmp(type_str(m, p, buf, sizeof buf), "f32[3,2]") == 0, "physical parameter %s", buf);
    OT_CHECK(strcmp(type_str(m, optic_computation_parameter(m, e, 1), buf, sizeof buf), "f32[2,3]") == 0, "%s", buf);
    optic_node_id pl = find(m, "p.logical");
    OT_CHECK(optic_node_opcode(m, pl) == OPTIC_OP_TRANSPOSE && optic_node_operand(m, pl, 0) == p);
    OT_CHECK(strcmp(optic_node_name(m, root), "n.physical") == 0 && optic_node_opcode(m, root) == OPTIC_OP_TRANSPOSE);
    OT_CHECK(strcmp(type_str(m, root, buf, sizeof buf), "f32[3,2]") == 0, "physical root %s", buf);
    int32_t n;
    const int64_t *perm = optic_node_dims(m, root, &n);
    OT_CHECK(n == 2 && perm[0] == 1 && perm[1] == 0);
  }
  optic_module_destroy(m);
  /* rank 3 {0,2,1}: physical order is dims 1, 2, 0; entry_computation_layout wins over the instructions */
  m = parse(
      "HloModule m, entry_computation_layout={(f32[2,3,4]{0,2,1}, (f32[5,6]{0,1}, s32[]))->f32[2,3,4]{2,1,0}}\n"
      "ENTRY e {\n"
      "  p = f32[2,3,4] parameter(0)\n"
      "  t = (f32[5,6], s32[]) parameter(1)\n"
      "  g = f32[5,6] get-tuple-element(t), index=0\n"
      "  ROOT c = f32[2,3,4]{0,1,2} copy(p)\n"
      "}\n");
  if (m) {
    optic_comp_id e = optic_module_entry(m);
    OT_CHECK(strcmp(type_str(m, optic_computation_parameter(m, e, 0), buf, sizeof buf), "f32[3,4,2]") == 0, "%s", buf);
    OT_CHECK(strcmp(type_str(m, optic_computation_parameter(m, e, 1), buf, sizeof buf), "(f32[6,5], s32[])") == 0, "%s",
             buf);
    optic_node_id pl = find(m, "p.logical"), g = find(m, "g"), root = optic_computation_root(m, e);
    int32_t n;
    const int64_t *perm = optic_node_dims(m, pl, &n);
    OT_CHECK(n == 3 && perm[0] == 2 && perm[1] == 0 && perm[2] == 1, "perm %lld %lld %lld", (long long)perm[0],
             (long long)perm[1], (long long)perm[2]);
    OT_CHECK(strcmp(type_str(m, g, buf, sizeof buf), "f32[5,6]") == 0, "%s", buf);
    OT_CHECK(optic_node_opcode(m, optic_node_operand(m, g, 0)) == OPTIC_OP_TUPLE, "tuple rebuilt in logical form");
    OT_CHECK(strcmp(optic_node_name(m, root), "c") == 0, "the layout says row-major: no root transpose");
  }
  optic_module_destroy(m);
  /* a tuple root with a column-major element: taken apart, transposed, rebuilt */
  m = parse(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT t = (f32[2,3]{0,1}, f32[]) tuple(a, b)\n}\n");
  if (m) {
    optic_node_id root = optic_computation_root(m, optic_module_entry(m));
    OT_CHECK(strcmp(optic_node_name(m, root), "t.physical") == 0, "%s", optic_node_name(m, root));
    OT_CHECK(strcmp(type_str(m, root, buf, sizeof buf), "(f32[3,2], f32[])") == 0, "%s", buf);
    OT_CHECK(optic_node_opcode(m, find(m, "t.0.physical")) == OPTIC_OP_TRANSPOSE);
  }
  optic_module_destroy(m);
  /* entry_computation_layout decides the convolution's physical operand and result orders */
#define CONV_TEXT                                                                                \
  "HloModule m%s\nENTRY e {\n  x = f32[1,4,4,2] parameter(0)\n  k = f32[2,2,2,3] parameter(1)\n" \
  "  ROOT y = f32[1,3,3,3] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f\n}\n"
  char text[512];
  snprintf(text, sizeof text, CONV_TEXT,
           ", entry_computation_layout={(f32[1,4,4,2]{0,3,2,1}, f32[2,2,2,3]{3,2,1,0})->f32[1,3,3,3]{2,1,0,3}}");
  m = parse(text);
  snprintf(text, sizeof text, CONV_TEXT, "");
#undef CONV_TEXT
  optic_module_t *plain = parse(text);
  if (m && plain) {
    optic_comp_id e = optic_module_entry(m);
    optic_node_id root = optic_computation_root(m, e);
    int32_t n;
    optic_computation_instructions(m, e, &n);
    OT_CHECK(n == 3, "%d instructions: the layout transposes fold away", (int)n);
    OT_CHECK(strcmp(type_str(m, optic_computation_parameter(m, e, 0), buf, sizeof buf), "f32[4,4,2,1]") == 0, "%s",
             buf);
    OT_CHECK(
        strcmp(optic_node_name(m, root), "y") == 0 && strcmp(type_str(m, root, buf, sizeof buf), "f32[3,1,3,3]") == 0,
        "%s", buf);
    optic_cost a, b;
    OT_EXPECT_OK(optic_computation_cost(m, e, &a));
    OT_EXPECT_OK(optic_computation_cost(plain, optic_module_entry(plain), &b));
    OT_CHECK(a.flops == b.flops && a.bytes_accessed == b.bytes_accessed && a.flops > 0);
  }
  optic_module_destroy(m);
  optic_module_destroy(plain);
  /* the reference module with layout {3,0,2,1}: the convolution reads and writes the physical orders */
  m = load("conv_isolated_layout_3021.hlo");
  if (m) {
    char *t = export(m);
    OT_CHECK(t && strstr(t,
                         "ROOT convolution.167 = f32[28,28,16,128] convolution(parameter.0, parameter.1), "
                         "window={size=3x3 pad=1_1x1_1}, dim_labels=01bf_01oi->01bf\n"),
             "%s", S(t));
    optic_string_free(t);
  }
  optic_module_destroy(m);
}

static void literals(void) {
  optic_module_t *m = parse(
      "HloModule m\nENTRY e {\n"
      "  a = f32[2,1,2]{2,1,0} constant({ { { 1, 0 } }, { { -2.5e-1, 3 } } })\n"
      "  b = f32[4] constant({inf, -inf, nan, -0})\n"
      "  c = pred[3] constant({true, false, 1})\n"
      "  d = s32[2] constant({-2147483648, 2147483647})\n"
      "  u = u8[] constant(255)\n"
      "  f = f64[2] constant({0.1, 1e300})\n"
      "  z = f32[0,3] constant({})\n"
      "  y = f32[2,0] constant({ {}, {} })\n"
      "  ROOT t = (f32[2,1,2], f32[4]) tuple(a, b)\n"
      "}\n");
  if (m) {
    size_t n;
    const float *a = optic_node_constant_data(m, find(m, "a"), &n);
    OT_CHECK(n == 16 && a[0] == 1 && a[1] == 0 && a[2] == -0.25f && a[3] == 3);
    const float *b = optic_node_constant_data(m, find(m, "b"), &n);
    OT_CHECK(n == 16 && isinf(b[0]) && b[0] > 0 && isinf(b[1]) && b[1] < 0 && isnan(b[2]) && b[3] == 0 &&
             signbit(b[3]));
    const unsigned char *c = optic_node_constant_data(m, find(m, "c"), &n);
    OT_CHECK(n == 3 && c[0] == 1 && c[1] == 0 && c[2] == 1);
    const int32_t *d = optic_node_constant_data(m, find(m, "d"), &n);
    OT_CHECK(n == 8 && d[0] == INT32_MIN && d[1] == INT32_MAX);
    const unsigned char *u = optic_node_constant_data(m, find(m, "u"), &n);
    OT_CHECK(n == 1 && u[0] == 255);
    const double *f = optic_node_constant_data(m, find(m, "f"), &n);
    OT_CHECK(n == 16 && f[0] == 0.1 && f[1] == 1e300);
    optic_node_constant_data(m, find(m, "z"), &n);
    OT_CHECK(n == 0);
  }
  optic_module_destroy(m);
  /* the reference input literal (24 values, rank 4) as a constant */
  size_t len = 0;
  char *text = ot_hlo_read("reduce_dim1_with_copy.input.txt", &len);
  const char *brace = text ? strchr(strstr(text, "f32[2,2,2,3]"), '{') : NULL;
  const char *end = brace ? strstr(brace, "\n#") : NULL;
  if (brace && end) {
    char *hlo = calloc(1, len + 128);
    snprintf(hlo, len + 128, "HloModule in\nENTRY e {\n  ROOT c = f32[2,2,2,3] constant(%.*s)\n}\n", (int)(end - brace),
             brace);
    m = parse(hlo);
    size_t n = 0;
    const float *v = m ? optic_node_constant_data(m, find(m, "c"), &n) : NULL;
    OT_CHECK(v && n == 96 && v[0] == -0.246092796f && v[5] == -0.198156f && v[23] == -0.121976733f);
    optic_module_destroy(m);
    free(hlo);
  } else {
    OT_CHECK(false, "reduce_dim1_with_copy.input.txt has no literal");
  }
  free(text);
}

/* metadata, sharding, backend_config, ... and unknown attributes are skipped, whatever they hold. */
static void skipped_attributes(void) {
  const char *plain = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p)\n}\n";
  optic_module_t
      *m0 = parse(plain),
      *m1 = parse(
          "HloModule m, is_scheduled=true, frontend_attributes={a=\"{,}\"}, alias_passthrough_params=true\n"
          "ENTRY e {\n"
          "  p = f32[2]{0} parameter(0), sharding={devices=[2,1]0,1 last_tile_dim_replicate}, "
          "metadata={op_name=\"a,b}{c=d\" "
          "source_file=\"x.py\" source_line=3}\n"
          "  ROOT r = f32[2] add(f32[2]{0} p, f32[2] %p), foo=bar, baz={a={b=\"x,}{=\\\"\"}}, "
          "backend_config=\"{\\\"x\\\":1}\", "
          "frontend_attributes={_xla=\"1\"}, control-predecessors={p}, operand_precision={highest,highest}, "
          "statistics={visualizing_index=1,stat-val=0.5}, odd=[2,2]<=[4]T(1,0), n=-3, backend_config={\"k\":[]}\n"
          "}, execution_thread=\"main\"\n");
  char *t0 = m0 ? export(m0) : NULL, *t1 = m1 ? export(m1) : NULL;
  OT_CHECK(t0 && t1 && strcmp(t0, t1) == 0, "%s\n---\n%s", S(t0), S(t1));
  optic_string_free(t0);
  optic_string_free(t1);
  optic_module_destroy(m0);
  optic_module_destroy(m1);
}

/* Every opcode, written as optic prints it: import then export gives the text back. */
static const char all_ops[] =
    "HloModule all_ops\n"
    "\n"
    "sum {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "\n"
    "cond {\n"
    "  c.p = (s32[], f32[3]) parameter(0)\n"
    "  c.i = s32[] get-tuple-element(c.p), index=0\n"
    "  c.n = s32[] constant(4)\n"
    "  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT\n"
    "}\n"
    "\n"
    "body {\n"
    "  b.p = (s32[], f32[3]) parameter(0)\n"
    "  b.i = s32[] get-tuple-element(b.p), index=0\n"
    "  b.v = f32[3] get-tuple-element(b.p), index=1\n"
    "  b.one = s32[] constant(1)\n"
    "  b.next = s32[] add(b.i, b.one)\n"
    "  b.e = f32[3] exponential(b.v)\n"
    "  ROOT b.t = (s32[], f32[3]) tuple(b.next, b.e)\n"
    "}\n"
    "\n"
    "neg {\n"
    "  n.p = f32[3] parameter(0)\n"
    "  ROOT n.r = f32[3] negate(n.p)\n"
    "}\n"
    "\n"
    "fused {\n"
    "  f.p = f32[3] parameter(0)\n"
    "  f.q = f32[3] parameter(1)\n"
    "  f.m = f32[3] multiply(f.p, f.q)\n"
    "  ROOT f.t = f32[3] tanh(f.m)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  v = f32[3] parameter(0)\n"
    "  k = s32[] parameter(1)\n"
    "  w = f32[2,3] parameter(2)\n"
    "  io = s32[2,3] iota(), iota_dimension=1\n"
    "  cv = f32[2,3] convert(io)\n"
    "  sl = f32[1,2] slice(w), slice={[1:2:1], [0:3:2]}\n"
    "  z = f32[] constant(0)\n"
    "  pd = f32[4,6] pad(w, z), padding=1_1x0_1_1\n"
    "  cc = f32[4,3] concatenate(w, cv), dimensions={0}\n"
    "  rv = f32[4,3] reverse(cc), dimensions={0,1}\n"
    "  tr = f32[3,4] transpose(rv), dimensions={1,0}\n"
    "  rs = f32[12] reshape(tr)\n"
    "  bc = f32[2,12] broadcast(rs), dimensions={1}\n"
    "  rw = f32[1,5] reduce-window(bc, z), window={size=2x4 stride=1x2 pad=0_0x1_0}, to_apply=sum\n"
    "  rd = f32[2] reduce(w, z), dimensions={1}, to_apply=sum\n"
    "  mp = f32[3] map(v, v), dimensions={0}, to_apply=sum\n"
    "  mx = f32[3] maximum(mp, v)\n"
    "  mn = f32[3] minimum(mx, v)\n"
    "  pw = f32[3] power(mn, v)\n"
    "  sb = f32[3] subtract(pw, v)\n"
    "  dv = f32[3] divide(sb, v)\n"
    "  lg = f32[3] log(dv)\n"
    "  sq = f32[3] sqrt(lg)\n"
    "  rq = f32[3] rsqrt(sq)\n"
    "  lo = f32[3] logistic(rq)\n"
    "  sg = f32[3] sign(lo)\n"
    "  fl = f32[3] floor(sg)\n"
    "  ce = f32[3] ceil(fl)\n"
    "  ab = f32[3] abs(ce)\n"
    "  cp = f32[3] copy(ab)\n"
    "  cl = f32[3] clamp(z, cp, z)\n"
    "  cm = pred[3] compare(cl, v), direction=GE\n"
    "  nt = pred[3] not(cm)\n"
    "  an = pred[3] and(nt, cm)\n"
    "  or = pred[3] or(an, cm)\n"
    "  se = f32[3] select(or, v, cl)\n"
    "  d = f32[2] dot(w, se), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  i0 = s32[] constant(0)\n"
    "  init = (s32[], f32[3]) tuple(i0, se)\n"
    "  wh = (s32[], f32[3]) while(init), condition=cond, body=body\n"
    "  wv = f32[3] get-tuple-element(wh), index=1\n"
    "  cd = f32[3] conditional(k, wv, wv), branch_computations={neg, neg}\n"
    "  pr = pred[] constant(true)\n"
    "  cd2 = f32[3] conditional(pr, cd, wv), true_computation=neg, false_computation=neg\n"
    "  fu = f32[3] fusion(cd2, v), kind=kLoop, calls=fused\n"
    "  ca = f32[3] call(fu), to_apply=neg\n"
    "  ar = f32[3] all-reduce(ca), replica_groups={{0,1},{2,3}}, to_apply=sum\n"
    "  ar2 = (f32[3], f32[2]) all-reduce(ar, d), replica_groups={}, to_apply=sum\n"
    "  img = f32[1,4,4,1] parameter(3)\n"
    "  ker = f32[2,2,1,2] parameter(4)\n"
    "  conv = f32[1,2,2,4] convolution(img, ker), window={size=2x2 stride=2x1 pad=0_0x1_0 rhs_reversal=0x1}, "
    "dim_labels=b01f_01io->bf01\n"
    "  ROOT out = (f32[1,5], f32[2], (f32[3], f32[2]), f32[1,2,2,4], f32[1,2], f32[4,6]) tuple(rw, rd, ar2, conv, sl, "
    "pd)\n"
    "}\n";

static void every_opcode(void) {
  optic_module_t *m = parse(all_ops);
  char *t = m ? export(m) : NULL;
  OT_CHECK(t && strcmp(t, all_ops) == 0, "printed back differently:\n%s", S(t));
  optic_string_free(t);
  optic_module_destroy(m);
  /* defaults written out are printed away, as XLA does */
  m = parse(
      "HloModule d\nENTRY e {\n  img = f32[1,4,4,1] parameter(0)\n  ker = f32[2,2,1,2] parameter(1)\n"
      "  ROOT conv = f32[1,2,2,4] convolution(f32[1,4,4,1]{3,2,1,0} img, ker), window={rhs_reversal=0x1 "
      "lhs_dilate=1x1 size=2x2 pad=0_0x1_0 stride=2x1 rhs_dilate=1x1}, dim_labels=b01f_01io->bf01, "
      "feature_group_count=1, batch_group_count=1\n}\n");
  t = m ? export(m) : NULL;
  OT_CHECK(t && strstr(t, "window={size=2x2 stride=2x1 pad=0_0x1_0 rhs_reversal=0x1}, dim_labels=b01f_01io->bf01\n"),
           "%s", S(t));
  optic_string_free(t);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"every_file_parses", every_file_parses},
    {"round_trip", round_trip},
    {"hand_checked_costs", hand_checked_costs},
    {"entry_and_root_detection", entry_and_root_detection},
    {"layouts", layouts},
    {"literals", literals},
    {"skipped_attributes", skipped_attributes},
    {"every_opcode", every_opcode},
};

OT_MAIN(cases)
