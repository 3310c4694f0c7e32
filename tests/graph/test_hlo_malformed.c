/* HLO text import, more malformed input beyond test_hlo_parse_errors.c:
 * sizes that overflow through every op that computes an output shape, nesting
 * at and past each limit (tuple types, literal braces, parentheses, skipped
 * attribute values, get-tuple-element chains), unknown attributes in every
 * value form (ignored, and dropped by the printer), and byte mutations whose
 * every error message carries "line L:C". Runs under ASan/UBSan in make asan. */
#include <ctype.h>

#include <optic/optic.h>

#include "tests/harness.h"
#include "tests/hlo_files.h"

#define HEAD "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"

static void expect_error(const char *text, size_t len, optic_status want, const char *needle) {
  optic_module_t *m = (optic_module_t *)&m;
  optic_status st = optic_module_from_hlo_text(text, len, &m);
  OT_CHECK(st == want && m == NULL && strstr(optic_last_error(), needle) != NULL,
           "got %s \"%s\", want %s containing \"%s\"\n  in: %.300s", optic_status_name(st), optic_last_error(),
           optic_status_name(want), needle, text);
  if (st == OPTIC_OK) optic_module_destroy(m);
}
#define EXPECT_ERROR(text, want, needle) expect_error(text, strlen(text), want, needle)

static optic_module_t *expect_ok(const char *text) {
  optic_module_t *m = NULL;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &m);
  OT_CHECK(st == OPTIC_OK, "%s: %s\n  in: %.300s", optic_status_name(st), optic_last_error(), text);
  return m;
}

typedef struct bad_case {
  const char *text;
  optic_status status;
  const char *needle;
} bad_case;

/* Shapes whose byte size does not fit, written or inferred, in every op that
 * computes an output size from its attributes. */
static void huge_dimensions(void) {
  static const bad_case cases[] = {
      {"HloModule m\nENTRY e {\n  p = f32[9223372036854775807] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
       "line 3:7: shape f32[9223372036854775807] has too many elements"},
      {"HloModule m\nENTRY e {\n  p = f32[9223372036854775808] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
       "line 3:11: integer '9223372036854775808' does not fit in 64 bits"},
      {"HloModule m\nENTRY e {\n  p = f64[1152921504606846976] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
       "has too many elements"}, /* 2^60 elements x 8 bytes = 2^63 */
      {"HloModule m\nENTRY e {\n  p = pred[3037000500,3037000500,2] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
       "has too many elements"},
      {"HloModule m\nENTRY e {\n  p = (f32[2], f32[4611686018427387904]) parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
       "f32[4611686018427387904] has too many elements"},
      {"HloModule m\nENTRY e {\n  ROOT i = s32[4611686018427387904] iota(), iota_dimension=0\n}\n", OPTIC_ERR_OVERFLOW,
       "line 3:12: shape s32[4611686018427387904]"},
      {"HloModule m\nENTRY e {\n  c = f32[] constant(0)\n  ROOT b = f32[4294967296,4294967296] broadcast(c), "
       "dimensions={}\n}\n",
       OPTIC_ERR_OVERFLOW, "line 4:12: shape f32[4294967296,4294967296] has too many elements"},
      {"HloModule m\nENTRY e {\n  a = f32[2147483648,1] parameter(0)\n  b = f32[1,2147483648] parameter(1)\n"
       "  ROOT d = f32[2147483648,2147483648] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
       OPTIC_ERR_OVERFLOW, "has too many elements"},
      {HEAD "  z = f32[] constant(0)\n  ROOT r = f32[2] pad(p, z), padding=4611686018427387904_0\n}\n",
       OPTIC_ERR_OVERFLOW,
       "line 5:8: instruction 'r': pad: dim 0 has low 4611686018427387904, high 0, interior 0 "
       "(each must be within +-2^60)"},
      {HEAD "  z = f32[] constant(0)\n  ROOT r = f32[2] pad(p, z), padding=0_0_1152921504606846976\n}\n",
       OPTIC_ERR_OVERFLOW, "shape [1152921504606846978] has more than"},
      {HEAD "  z = f32[] constant(0)\n  ROOT r = f32[2] pad(p, z), padding=0_0_-1\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
       "(interior must be >= 0)"},
      {HEAD "  ROOT r = f32[2] slice(p), slice={[0:9223372036854775807:9223372036854775807]}\n}\n",
       OPTIC_ERR_INVALID_ARGUMENT, "need 0 <= start <= limit <= 2 and stride >= 1"},
      {HEAD "  ROOT r = f32[2] slice(p), slice={[0:99999999999999999999]}\n}\n", OPTIC_ERR_OVERFLOW,
       "does not fit in 64 bits"},
      {HEAD "  ROOT r = f32[4611686018427387904] reshape(p)\n}\n", OPTIC_ERR_OVERFLOW, "has too many elements"},
      {"HloModule m\nsum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
       "ENTRY e {\n  p = f32[2] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(p, z), "
       "window={size=9223372036854775807 pad=4611686018427387904_4611686018427387904}, to_apply=sum\n}\n",
       OPTIC_ERR_INVALID_ARGUMENT,
       "line 10:8: instruction 'r': reduce-window: window dim 0 has size 9223372036854775807"},
      {"HloModule m\nENTRY e {\n  c = f32[4611686018427387904] constant({1})\n}\n", OPTIC_ERR_OVERFLOW,
       "has too many elements"},
      {HEAD "  ROOT r = f32[2] add(p, p), window={size=2x2x2x2x2x2x2x2x2}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
       "line 4:43: more than 8 dimensions in '2x2x2x2x2x2x2x2x2'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    EXPECT_ERROR(cases[i].text, cases[i].status, cases[i].needle);
  /* Large but representable: imports, and the cost model counts it in doubles. */
  optic_module_t *m = expect_ok(
      "HloModule m\nENTRY e {\n  c = f32[] constant(1)\n  ROOT b = f32[100000,100000,100000] broadcast(c), "
      "dimensions={}\n}\n");
  if (m) {
    optic_cost c;
    OT_EXPECT_OK(optic_computation_cost(m, optic_module_entry(m), &c));
    OT_CHECK(c.bytes_accessed == 4e15 + 4, "bytes_accessed %.17g", c.bytes_accessed);
  }
  optic_module_destroy(m);
}

static char *repeat(const char *head, const char *unit, int n, const char *tail) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = malloc(hl + ul * (size_t)n + tl + 1);
  memcpy(s, head, hl);
  for (int i = 0; i < n; i++) memcpy(s + hl + ul * (size_t)i, unit, ul);
  memcpy(s + hl + ul * (size_t)n, tail, tl + 1);
  return s;
}

/* open^n middle close^n between head and tail. */
static char *nest(const char *head, const char *open, int n, const char *middle, const char *close, const char *tail) {
  char *a = repeat(head, open, n, middle);
  char *b = repeat(a, close, n, tail);
  free(a);
  return b;
}

static void nesting_limits(void) {
  /* tuple types: 32 levels import, 33 do not (in a parameter and in an operand prefix) */
  char *t = nest("HloModule m\nENTRY e {\n  p = ", "(", 32, "f32[]", ")", " parameter(0)\n}\n");
  optic_module_t *m = expect_ok(t);
  optic_module_destroy(m);
  free(t);
  t = nest("HloModule m\nENTRY e {\n  p = ", "(", 33, "f32[]", ")", " parameter(0)\n}\n");
  EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "tuple shapes nest deeper than 32");
  free(t);
  t = nest(HEAD "  ROOT r = f32[2] negate(", "(", 5000, "f32[2]", ")", " p)\n}\n");
  EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "tuple shapes nest deeper than 32");
  free(t);
  /* tuple types inside entry_computation_layout */
  t = nest("HloModule m, entry_computation_layout={(", "(", 3000, "f32[2]", ")",
           ")->f32[2]}\n"
           "ENTRY e {\n  p = f32[2] parameter(0)\n}\n");
  EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "line 1:");
  free(t);
  /* literal braces 100,000 deep: an error, not a stack overflow */
  t = nest("HloModule m\nENTRY e {\n  c = f32[1] constant(", "{", 100000, "1", "}", ")\n}\n");
  EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "line 3:");
  free(t);
  /* operand lists with parentheses where an operand belongs */
  t = nest(HEAD "  ROOT r = f32[2] add(", "(", 100000, "p", ")", ", p)\n}\n");
  EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "line 4:");
  free(t);
  /* skipped values: sharding, metadata, backend_config and unknown attributes nest freely */
  static const char *const skipped[] = {"sharding=", "metadata=", "backend_config=", "frontend_attributes=", "zzz="};
  for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++) {
    char head[160];
    snprintf(head, sizeof head, HEAD "  ROOT r = f32[2] negate(p), %s", skipped[i]);
    t = nest(head, "{", 50000, "devices=[2,1]0,1", "}", "\n}\n");
    m = expect_ok(t);
    optic_module_destroy(m);
    free(t);
    t = nest(head, "{", 50000, "", "}", "}\n}\n"); /* one '}' too many closes the computation early */
    EXPECT_ERROR(t, OPTIC_ERR_INVALID_ARGUMENT, "line 5:1: expected a computation name, found '}'");
    free(t);
  }
  /* a 20,000-long get-tuple-element / tuple chain imports without recursion */
  {
    const int n = 20000;
    char *s = malloc((size_t)n * 128 + 256);
    size_t k = (size_t)sprintf(s, "HloModule m\nENTRY e {\n  t0 = (f32[2], f32[2]) parameter(0)\n");
    for (int i = 1; i <= n; i++) {
      k += (size_t)sprintf(
          s + k, "  g%d = f32[2] get-tuple-element(t%d), index=%d\n  t%d = (f32[2], f32[2]) tuple(g%d, g%d)\n", i,
          i - 1, i % 2, i, i, i);
    }
    k += (size_t)sprintf(s + k, "  ROOT r = f32[2] get-tuple-element(t%d), index=0\n}\n", n);
    m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(s, k, &m));
    char *text = NULL;
    if (m) OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
    optic_string_free(text);
    optic_module_destroy(m);
    free(s);
  }
  /* comments do not nest: the text after the first closing is parsed */
  EXPECT_ERROR(HEAD "  /* a /* b */ c */\n  ROOT r = f32[2] negate(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
               "line 4:18: expected '=' after the instruction name, found '*'");
}

/* Unknown attributes are parsed past (any value form) and ignored; the printer
 * does not reproduce them, and the printed module imports to the same text. */
static void unknown_attributes(void) {
  static const char *const values[] = {
      "bar",       "{a=1, b={c=2}}", "\"str, with } and \\\" inside\"",
      "[1,2,3]",   "1x2x3",          "{{}, {}}",
      "-1.5e-3",   "true",           "{devices=[2,1]0,1}",
      "0_1_2x3_4", "(a, (b, c))",
  };
  char *first = NULL;
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    char text[512];
    snprintf(text, sizeof text, HEAD "  ROOT r = f32[2] negate(p), unknown_attr_%zu=%s, other=%s\n}\n", i, values[i],
             values[i]);
    optic_module_t *m = expect_ok(text);
    if (m == NULL) continue;
    char *printed = NULL;
    OT_EXPECT_OK(optic_module_to_hlo_text(m, &printed));
    OT_CHECK(printed && strstr(printed, "unknown_attr") == NULL, "printed: %s", printed);
    if (first == NULL) {
      first = printed;
    } else {
      OT_CHECK(strcmp(first, printed) == 0, "value %s changes the module:\n%s\nvs\n%s", values[i], printed, first);
      optic_string_free(printed);
    }
    optic_module_destroy(m);
  }
  optic_string_free(first);
  /* ...but a malformed value is still an error at its position */
  EXPECT_ERROR(HEAD "  ROOT r = f32[2] negate(p), foo=\"never closed\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
               "line 4:34: unterminated string");
  EXPECT_ERROR(HEAD "  ROOT r = f32[2] negate(p), foo={a=(1}\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "line 6:1:");
  EXPECT_ERROR(HEAD "  ROOT r = f32[2] negate(p), =1\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
               "line 4:30: expected an attribute name, found '='");
  /* module-header attributes too */
  optic_module_t *m = expect_ok(
      "HloModule m, is_scheduled=true, some_future_flag={x=[1]}, alias_passthrough_params=true\n"
      "ENTRY e {\n  p = f32[2] parameter(0)\n}\n");
  optic_module_destroy(m);
}

/* Random token-level damage to the reference modules: every failure names a
 * line and column. */
static void errors_have_positions(void) {
  static const char *const files[] = {"softmax_f32.hlo", "one_matmul_train_step.hlo", "conv2d_nhwc_bias_relu.hlo",
                                      "dot_batch_with_metadata.hlo", "conv_isolated_layout_3021.hlo"};
  static const char *const tokens[] = {
      "(",     ")",  "{",  "}",       ",",     "=", "ROOT", "%x",        "f32[]", "s64[2]", "add", "dimensions={9}",
      "1e400", "\"", "/*", "index=7", "ENTRY", "-", "[-1]", "to_apply=x"};
  uint64_t rng = 12345;
  int errors = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[1024];
    ot_hlo_data_path(files[f], path, sizeof path);
    FILE *fp = fopen(path, "rb");
    OT_CHECK(fp != NULL, "%s", path);
    if (!fp) continue;
    char *text = malloc(1 << 16);
    size_t len = fread(text, 1, 1 << 16, fp);
    fclose(fp);
    char *buf = malloc(len + 64);
    for (int k = 0; k < 300; k++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)(rng >> 33) % len;
      const char *tok = tokens[(rng >> 20) % (sizeof tokens / sizeof tokens[0])];
      size_t tl = strlen(tok), n;
      memcpy(buf, text, at);
      memcpy(buf + at, tok, tl);
      if ((rng >> 8) % 2) { /* replace the next word, or insert */
        size_t skip = at;
        while (skip < len && (isalnum((unsigned char)text[skip]) || text[skip] == '.' || text[skip] == '_')) skip++;
        memcpy(buf + at + tl, text + skip, len - skip);
        n = at + tl + len - skip;
      } else {
        memcpy(buf + at + tl, text + at, len - at);
        n = len + tl;
      }
      optic_module_t *m = NULL;
      char *exact = malloc(n);
      memcpy(exact, buf, n);
      optic_status st = optic_module_from_hlo_text(exact, n, &m);
      free(exact);
      if (st == OPTIC_OK) {
        optic_module_destroy(m);
        continue;
      }
      errors++;
      OT_CHECK(strncmp(optic_last_error(), "line ", 5) == 0, "%s with '%s' at byte %zu: %s: %s", files[f], tok, at,
               optic_status_name(st), optic_last_error());
    }
    free(buf);
    free(text);
  }
  printf("  %d damaged modules rejected, every message with its line and column\n", errors);
}

static const ot_case cases[] = {
    {"huge_dimensions", huge_dimensions},
    {"nesting_limits", nesting_limits},
    {"unknown_attributes", unknown_attributes},
    {"errors_have_positions", errors_have_positions},
};

OT_MAIN(cases)
