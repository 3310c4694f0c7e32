/* optic_program_input/_output: a compiled program describes what
 * optic_program_run takes and gives. Oracle: the HLO text itself, read by a
 * line scanner written here (the ENTRY block's parameter(N) lines, the ROOT
 * tuple's operands and type, the header's input_output_alias pairs), not by
 * optic's parser. Real modules from tests/data/hlo (one_matmul_train_step,
 * two_matmuls_train_step when present, every realworld module with
 * input_output_alias), a builder module with a tuple parameter, HLO print ->
 * parse round trips of the aliases, and bad alias tables. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void tests_dir(char *buf, size_t size, const char *rel) {
  snprintf(buf, size, "%s/%s", OPTIC_TEST_SOURCE_DIR, rel);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  size_t got = fread(t, 1, (size_t)n, f);
  t[got] = '\0';
  fclose(f);
  return t;
}

/* "f32[4,32]{1,0}" -> "f32[4,32]" (layout dropped). */
static void strip_layout(const char *type, size_t n, char *out, size_t size) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < size; i++) {
    if (type[i] == '{') {
      while (i < n && type[i] != '}') i++;
      continue;
    }
    out[k++] = type[i];
  }
  out[k] = '\0';
}

typedef struct text_param {
  char name[128], type[96];
  int number;
} text_param;

/* Scans the ENTRY block: parameters (name, type, number) and the ROOT line. */
static int scan_entry(const char *text, text_param *ps, int cap, char *root, size_t root_size) {
  const char *e = strstr(text, "\nENTRY ");
  int n = 0;
  root[0] = '\0';
  if (e == NULL) return -1;
  for (const char *line = strchr(e + 1, '\n'); line && line[1] && line[1] != '}'; line = strchr(line + 1, '\n')) {
    const char *l = line + 1, *end = strchr(l, '\n');
    size_t len = end ? (size_t)(end - l) : strlen(l);
    const char *par = strstr(l, " parameter(");
    if (strncmp(l, "  ROOT ", 7) == 0) snprintf(root, root_size, "%.*s", (int)len, l);
    if (par == NULL || par > l + len || n == cap) continue;
    const char *eq = strstr(l, " = ");
    while (*l == ' ') l++;
    if (strncmp(l, "ROOT ", 5) == 0) l += 5;
    snprintf(ps[n].name, sizeof ps[n].name, "%.*s", (int)(eq - l), l);
    if (ps[n].name[0] == '%') memmove(ps[n].name, ps[n].name + 1, strlen(ps[n].name));
    strip_layout(eq + 3, (size_t)(par - eq - 3), ps[n].type, sizeof ps[n].type);
    ps[n].number = atoi(par + 11);
    n++;
  }
  return n;
}

/* The header's "{k}: (p, {}, may-alias)" pairs: out[k] = p, must[k]. */
static int scan_aliases(const char *text, int *param_of, bool *must, int cap) {
  const char *a = strstr(text, "input_output_alias={");
  const char *nl = a ? strchr(a, '\n') : NULL;
  int n = 0;
  for (const char *p = a; p && p < nl; p++) {
    int k = 0, q = 0, used = 0;
    if (*p == '{' && sscanf(p, "{%d}: (%d, {}, %n", &k, &q, &used) == 2 && used > 0 && k < cap) {
      param_of[k] = q;
      must[k] = strncmp(p + used, "must-alias", 10) == 0;
      n++;
    }
  }
  return n;
}

static const optic_program_t *compile_text(const char *text, optic_module_t **m, optic_program_t **p) {
  *m = NULL, *p = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), m));
  if (*m == NULL) return NULL;
  optic_compile_options o = optic_compile_options_default();
  o.level = OPTIC_OPT_NONE; /* the signature does not depend on the passes */
  OT_EXPECT_OK(optic_compile(*m, &o, p));
  return *p;
}

static void check_inputs(const char *file, const optic_program_t *p, const text_param *ps, int n) {
  OT_CHECK(optic_program_input_count(p) == n, "%s: %d inputs, the text has %d parameters", file,
           optic_program_input_count(p), n);
  for (int i = 0; i < n && i < optic_program_input_count(p); i++) {
    const text_param *want = NULL;
    for (int k = 0; k < n; k++)
      if (ps[k].number == i) want = &ps[k];
    optic_program_io io;
    OT_EXPECT_OK(optic_program_input(p, i, &io));
    char type[96];
    optic_shape_format(&io.shape, io.dtype, type, sizeof type);
    OT_CHECK(want && strcmp(io.name, want->name) == 0 && strcmp(type, want->type) == 0 && io.parameter == i &&
                 strcmp(io.index, "{}") == 0,
             "%s: input %d is %s %s (parameter %d), the text says %s %s", file, i, io.name, type, io.parameter,
             want ? want->name : "?", want ? want->type : "?");
  }
}

/* Drops layouts {..}, comments and '%' from a line. */
static void clean(const char *in, char *out, size_t size) {
  size_t k = 0;
  for (const char *p = in; *p && k + 1 < size; p++) {
    if (*p == '{') {
      int depth = 0;
      for (; *p; p++) {
        depth += *p == '{';
        depth -= *p == '}';
        if (depth == 0) break;
      }
      if (!*p) break;
      continue;
    }
    if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p, "*/");
      if (!e) break;
      p = e + 1;
      continue;
    }
    if (*p != '%') out[k++] = *p;
  }
  out[k] = '\0';
}

/* Item i of a comma list (commas inside [] or () do not split). */
static bool item(const char *list, int i, char *out, size_t size) {
  int depth = 0, at = 0;
  const char *start = list;
  for (const char *p = list;; p++) {
    if (*p == '[' || *p == '(') depth++;
    if (*p == ']' || *p == ')') depth--;
    if ((*p == ',' && depth == 0) || *p == '\0') {
      if (at == i) {
        while (*start == ' ') start++;
        size_t n = (size_t)(p - start);
        while (n > 0 && start[n - 1] == ' ') n--;
        snprintf(out, size, "%.*s", (int)n, start);
        return true;
      }
      if (*p == '\0') return false;
      at++;
      start = p + 1;
    }
  }
}

/* ROOT tuple.109 = (f32[32,128]{1,0}, f32[]) tuple(add.93, reduce.43): outputs add.93 {0}, reduce.43 {1}. */
static void check_outputs(const char *file, const optic_program_t *p, const char *root_line) {
  static char root[1 << 16], types[1 << 16], names[1 << 16];
  clean(root_line, root, sizeof root);
  const char *eq = strstr(root, " = ("), *tup = strstr(root, ") tuple(");
  OT_CHECK(eq && tup, "%s: no ROOT tuple line", file);
  if (!eq || !tup) return;
  snprintf(types, sizeof types, "%.*s", (int)(tup - eq - 4), eq + 4);
  const char *close = strchr(tup + 8, ')');
  snprintf(names, sizeof names, "%.*s", (int)(close - tup - 8), tup + 8);
  int j = 0;
  char tt[256], nn[256];
  for (; item(types, j, tt, sizeof tt); j++) {
    OT_CHECK(item(names, j, nn, sizeof nn), "%s: fewer names than types", file);
    char *sp = strrchr(nn, ' '); /* newer XLA prints operands with their types: "s32[] reshape.1" */
    if (sp) memmove(nn, sp + 1, strlen(sp));
    optic_program_io io;
    OT_EXPECT_OK(optic_program_output(p, j, &io));
    char type[96], index[16];
    optic_shape_format(&io.shape, io.dtype, type, sizeof type);
    snprintf(index, sizeof index, "{%d}", j);
    OT_CHECK(strcmp(io.name, nn) == 0 && strcmp(type, tt) == 0 && strcmp(io.index, index) == 0,
             "%s: output %d is %s %s %s, the text says %s %s", file, j, io.name, io.index, type, nn, tt);
  }
  OT_CHECK(optic_program_output_count(p) == j, "%s: %d outputs, the ROOT tuple has %d", file,
           optic_program_output_count(p), j);
}

/* A module whose root is an array: one output named after the root. */
static void check_array_root(const char *file, const optic_program_t *p, const char *root_line) {
  char root[1024], name[256];
  clean(root_line, root, sizeof root);
  const char *eq = strstr(root, " = ");
  snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - root - 7) : 0, root + 7);
  optic_program_io io;
  OT_CHECK(optic_program_output_count(p) == 1, "%s", file);
  OT_EXPECT_OK(optic_program_output(p, 0, &io));
  OT_CHECK(strcmp(io.name, name) == 0 && strcmp(io.index, "{}") == 0, "%s: output %s %s, the text says %s", file,
           io.name, io.index, name);
}

static void real_module(const char *rel, bool required) {
  char path[1024];
  tests_dir(path, sizeof path, rel);
  char *text = read_file(path);
  OT_CHECK(text || !required, "cannot read %s", path);
  if (!text) return;
  text_param ps[512];
  static char root[1 << 16];
  int n = scan_entry(text, ps, 512, root, sizeof root);
  optic_module_t *m;
  optic_program_t *p;
  if (compile_text(text, &m, &p)) {
    check_inputs(rel, p, ps, n);
    if (strstr(root, ") tuple(")) check_outputs(rel, p, root);
    else check_array_root(rel, p, root);
    int param_of[512];
    bool must[512];
    for (int k = 0; k < 512; k++) param_of[k] = -1;
    int na = scan_aliases(text, param_of, must, 512), seen = 0;
    for (int j = 0; j < optic_program_output_count(p); j++) {
      optic_program_io io, in;
      OT_EXPECT_OK(optic_program_output(p, j, &io));
      OT_CHECK(io.parameter == (j < 512 ? param_of[j] : -1), "%s: output %d belongs to parameter %d, the text says %d",
               rel, j, io.parameter, j < 512 ? param_of[j] : -1);
      if (io.parameter < 0) {
        OT_CHECK(io.alias == -1 && io.alias_kind == OPTIC_IO_ALIAS_NONE, "%s: output %d", rel, j);
        continue;
      }
      seen++;
      OT_CHECK(io.alias_kind == (must[j] ? OPTIC_IO_ALIAS_MUST : OPTIC_IO_ALIAS_MAY), "%s: output %d kind", rel, j);
      OT_EXPECT_OK(optic_program_input(p, io.alias, &in));
      OT_CHECK(in.parameter == io.parameter && in.alias == j && in.dtype == io.dtype &&
                   optic_shape_equal(&in.shape, &io.shape),
               "%s: output %d -> input %d (parameter %d, donated to %d)", rel, j, io.alias, in.parameter, in.alias);
    }
    OT_CHECK(seen == na, "%s: %d aliased outputs, the text lists %d", rel, seen, na);
    printf("     %s: %d inputs, %d outputs, %d donated\n", rel, optic_program_input_count(p),
           optic_program_output_count(p), seen);
  }
  optic_program_destroy(p);
  optic_module_destroy(m);
  free(text);
}

static void train_steps(void) {
  real_module("data/hlo/one_matmul_train_step.hlo", true);
  real_module("data/hlo/two_matmuls_train_step.hlo", false);
  real_module("data/hlo/softmax_f32.hlo", true);
}

static void donated_real_modules(void) { real_module("data/hlo/realworld/maxtext_train_step_1n1g.hlo", true); }

/* A tuple parameter and a nested tuple root, built with the graph API. */
static void builder_tuples(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_create("sig", &m));
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d2[2] = {2, 3};
  optic_shape s23, s0;
  optic_shape_make(2, d2, &s23);
  optic_shape_make(0, NULL, &s0);
  optic_type el[2] = {optic_type_array(OPTIC_F32, &s23), optic_type_array(OPTIC_S32, &s0)};
  optic_type tup = {.tuple_size = 2, .elements = el};
  optic_type arr = optic_type_array(OPTIC_F32, &s23);
  optic_node_id p0, p1, g0, sum, t_inner, root;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &tup, "state", &p0));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &arr, "x", &p1));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, c, p0, 0, "w", &g0));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, g0, p1, "sum", &sum));
  optic_node_id ops[2] = {sum, p1};
  OT_EXPECT_OK(optic_graph_tuple(m, c, ops, 2, "inner", &t_inner));
  optic_node_id ops2[2] = {t_inner, g0};
  OT_EXPECT_OK(optic_graph_tuple(m, c, ops2, 2, "out", &root));
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  OT_EXPECT_OK(optic_module_set_entry(m, c));
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, NULL, &p));
  OT_CHECK(optic_program_input_count(p) == 3 && optic_program_output_count(p) == 3);
  const char *in_names[3] = {"state", "state", "x"}, *in_idx[3] = {"{0}", "{1}", "{}"};
  const int in_par[3] = {0, 0, 1};
  const optic_dtype in_dt[3] = {OPTIC_F32, OPTIC_S32, OPTIC_F32};
  for (int i = 0; i < 3; i++) {
    optic_program_io io;
    OT_EXPECT_OK(optic_program_input(p, i, &io));
    OT_CHECK(strcmp(io.name, in_names[i]) == 0 && strcmp(io.index, in_idx[i]) == 0 && io.parameter == in_par[i] &&
                 io.dtype == in_dt[i] && io.alias == -1,
             "input %d: %s %s parameter %d", i, io.name, io.index, io.parameter);
  }
  const char *out_names[3] = {"sum", "x", "w"}, *out_idx[3] = {"{0,0}", "{0,1}", "{1}"};
  for (int j = 0; j < 3; j++) {
    optic_program_io io;
    OT_EXPECT_OK(optic_program_output(p, j, &io));
    OT_CHECK(strcmp(io.name, out_names[j]) == 0 && strcmp(io.index, out_idx[j]) == 0 && io.parameter == -1,
             "output %d: %s %s", j, io.name, io.index);
  }
  optic_program_io io;
  OT_EXPECT_STATUS(optic_program_input(p, 3, &io), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_program_output(p, -1, &io), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_program_output(NULL, 0, &io), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_program_input_count(NULL) == 0);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static const char *aliased =
    "HloModule step, input_output_alias={ {0}: (1, {}, may-alias), {1,1}: (0, {1}, must-alias) }\n"
    "ENTRY main {\n"
    "  s = (f32[4], f32[2,2]) parameter(0)\n"
    "  w = f32[3] parameter(1)\n"
    "  n = f32[3] negate(w)\n"
    "  a = f32[4] get-tuple-element(s), index=0\n"
    "  b = f32[2,2] get-tuple-element(s), index=1\n"
    "  i = (f32[4], f32[2,2]) tuple(a, b)\n"
    "  ROOT r = (f32[3], (f32[4], f32[2,2])) tuple(n, i)\n"
    "}\n";

static void aliases_round_trip(void) {
  optic_module_t *m;
  optic_program_t *p;
  if (!compile_text(aliased, &m, &p)) return;
  optic_program_io io;
  OT_EXPECT_OK(optic_program_output(p, 0, &io));
  OT_CHECK(io.parameter == 1 && io.alias == 2 && io.alias_kind == OPTIC_IO_ALIAS_MAY && strcmp(io.name, "n") == 0);
  OT_EXPECT_OK(optic_program_output(p, 2, &io));
  OT_CHECK(io.parameter == 0 && io.alias == 1 && io.alias_kind == OPTIC_IO_ALIAS_MUST &&
               strcmp(io.index, "{1,1}") == 0 && strcmp(io.name, "b") == 0,
           "%d %d %s %s", io.parameter, io.alias, io.index, io.name);
  OT_EXPECT_OK(optic_program_input(p, 1, &io));
  OT_CHECK(io.alias == 2 && strcmp(io.index, "{1}") == 0);
  OT_EXPECT_OK(optic_program_input(p, 0, &io));
  OT_CHECK(io.alias == -1 && io.alias_kind == OPTIC_IO_ALIAS_NONE);
  /* print -> parse -> print is stable and keeps the table */
  char *t1 = NULL, *t2 = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &t1));
  OT_CHECK(t1 && strstr(t1, "input_output_alias={ {0}: (1, {}, may-alias), {1,1}: (0, {1}, must-alias) }"), "%s", t1);
  optic_module_t *m2 = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(t1, strlen(t1), &m2));
  OT_EXPECT_OK(optic_module_to_hlo_text(m2, &t2));
  OT_CHECK(t1 && t2 && strcmp(t1, t2) == 0);
  /* the optimized copy keeps it as well */
  char *t3 = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(optic_program_module(p), &t3));
  OT_CHECK(t3 && strstr(t3, "input_output_alias="));
  optic_string_free(t1), optic_string_free(t2), optic_string_free(t3);
  optic_module_destroy(m2);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static void bad_aliases(void) {
  static const struct {
    const char *header, *needle;
  } cases[] = {
      {"input_output_alias={ {5}: (1, {}, may-alias) }", "output {5} is not an array leaf"},
      {"input_output_alias={ {0}: (7, {}, may-alias) }", "no parameter 7"},
      {"input_output_alias={ {0}: (0, {0}, may-alias) }", "output {0} is f32[3] but parameter 0 {0} is f32[4]"},
      {"input_output_alias={ {0}: (0, {}, may-alias) }", "{} is not an array leaf of parameter 0"},
      {"input_output_alias={ {0}: (1, {}, may-alias), {0}: (1, {}) }", "aliased twice"},
      {"input_output_alias={ {0}: (1, {}, perhaps-alias) }", "may-alias or must-alias"},
      {"input_output_alias={ {0} (1, {}) }", "':' after the output index"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[2048];
    snprintf(text, sizeof text, "HloModule bad, %s\n%s", cases[i].header, strchr(aliased, '\n') + 1);
    optic_module_t *m = NULL;
    OT_EXPECT_STATUS(optic_module_from_hlo_text(text, strlen(text), &m), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(m == NULL && strstr(optic_last_error(), cases[i].needle), "case %zu: %s", i, optic_last_error());
    optic_module_destroy(m);
  }
}

static const ot_case cases[] = {{"train_steps", train_steps},
                                {"donated_real_modules", donated_real_modules},
                                {"builder_tuples", builder_tuples},
                                {"aliases_round_trip", aliases_round_trip},
                                {"bad_aliases", bad_aliases}};
OT_MAIN(cases)
