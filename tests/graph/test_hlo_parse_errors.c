/* HLO text import, malformed input: every error names its line and column
 * and the offending token or instruction with the right status; valid XLA
 * that optic cannot represent is UNSUPPORTED; every prefix of every
 * reference file and thousands of byte mutations give an error or a module,
 * never a crash (run under ASan/UBSan by `make asan`); nesting is bounded;
 * a 100,000-instruction module imports in linear time. */
#include <time.h>

#include <optic/optic.h>

#include "tests/harness.h"
#include "tests/hlo_files.h"

/* Parses text; expects status `want` and a message containing `needle`. */
static void expect_error(const char *text, size_t len, optic_status want, const char *needle) {
  optic_module_t *m = (optic_module_t *)&m; /* must come back NULL */
  optic_status st = optic_module_from_hlo_text(text, len, &m);
  OT_CHECK(st == want && m == NULL && strstr(optic_last_error(), needle) != NULL,
           "got %s \"%s\", want %s containing \"%s\"\n  in:\n%.*s", optic_status_name(st), optic_last_error(),
           optic_status_name(want), needle, (int)len, text);
  if (st == OPTIC_OK) optic_module_destroy(m);
}

#define EXPECT_ERROR(text, want, needle) expect_error(text, strlen(text), want, needle)
#define HEAD "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
#define SUM "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"

typedef struct bad_case {
  const char *text;
  optic_status status;
  const char *needle;
} bad_case;

static const bad_case corpus[] = {
    {HEAD "  ROOT r = f32[2] foo(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "line 4:19: unknown opcode 'foo'"},
    {HEAD "  ROOT r = f33[2] add(p, p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "line 4:12: unknown element type 'f33'"},
    {HEAD "  ROOT r = f8e4m3fn[2] convert(p)\n}\n", OPTIC_ERR_UNSUPPORTED,
     "line 4:12: element type 'f8e4m3fn' is not supported"},
    {"HloModule m\nENTRY e {\n  p = c64[] parameter(0)\n}\n", OPTIC_ERR_UNSUPPORTED, "line 3:7: element type 'c64'"},
    {"HloModule m\nENTRY e {\n  ROOT t = token[] constant(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "a token has no literal"},
    {"HloModule m\nENTRY e {\n  ROOT c = s8[] constant(128)\n}\n", OPTIC_ERR_OVERFLOW,
     "literal 128 is out of range for s8"},
    {"HloModule m\nENTRY e {\n  ROOT c = u64[] constant(18446744073709551616)\n}\n", OPTIC_ERR_OVERFLOW,
     "out of range for u64"},
    {"HloModule m\nENTRY e {\n  ROOT c = f16[] constant(65520)\n}\n", OPTIC_ERR_OVERFLOW,
     "literal '65520' is out of range for f16"},
    {"HloModule m\nENTRY e {\n  p = token[] parameter(0)\n  ROOT n = token[] negate(p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "is a token token[]; an array is needed"},
    {"HloModule m\nENTRY e {\n  p = f32[99999999999999999999] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
     "line 3:11: integer '99999999999999999999' does not fit in 64 bits"},
    {"HloModule m\nENTRY e {\n  p = f32[4294967296,4294967296] parameter(0)\n}\n", OPTIC_ERR_OVERFLOW,
     "line 3:7: shape f32[4294967296,4294967296] has too many elements"},
    {"HloModule m\nENTRY e {\n  p = f32[1,1,1,1,1,1,1,1,1] parameter(0)\n}\n", OPTIC_ERR_UNSUPPORTED,
     "more than 8 dimensions"},
    {"HloModule m\nENTRY e {\n  p = f32[<=4] parameter(0)\n}\n", OPTIC_ERR_UNSUPPORTED,
     "line 3:11: dynamic dimension '<='"},
    {"HloModule m\nENTRY e {\n  p = f32[-1] parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "dimension -1 is negative"},
    {HEAD "  ROOT r = f32[] reduce(p, p), dimensions={0}, to_apply=nowhere\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:57: unknown computation 'nowhere' in to_apply of 'r'"},
    {HEAD "  ROOT r = f32[2] add(p, q)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:26: unknown operand 'q' (computation 'e' has no instruction of that name)"},
    {HEAD "  a = f32[2] add(b, p)\n  b = f32[2] add(a, p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "depends on itself"},
    {"HloModule m\na {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=b\n}\n"
     "b {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=a\n}\n"
     "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "which calls it back (a cycle)"},
    {"HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=e\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "line 4:36: computation 'e' calls itself"},
    {HEAD "  p = f32[2] negate(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:3: instruction 'p' is defined twice in computation 'e' (first at line 3:3)"},
    {"HloModule m\n" SUM SUM "ENTRY e {\n  p = f32[] parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 7:1: computation 'sum' is defined twice (first at line 2:1)"},
    {"HloModule m\nENTRY a {\n  p = f32[] parameter(0)\n}\nENTRY b {\n  p = f32[] parameter(0)\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "line 5:7: computation 'b' is a second ENTRY"},
    {HEAD "  ROOT a = f32[2] negate(p)\n  ROOT b = f32[2] negate(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 5:8: computation 'e' has a second ROOT 'b'"},
    {HEAD "  ROOT r = f32[3] add(p, p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "line 4:8: instruction 'r' is written as f32[3] but add gives f32[2]"},
    {HEAD "  ROOT r = f32[2] add(f32[3] p, p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "line 4:30: operand 'p' of 'r' is written as f32[3]"},
    {HEAD "  ROOT r = f32[2] add(p, s32[2] p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "operand 'p' of 'r' is written as s32[2] but it has type f32[2]"},
    {HEAD "  ROOT r = (f32[2], f32[]) tuple(p, p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "is written as (f32[2], f32[]) but tuple gives (f32[2], f32[2])"},
    {HEAD "  ROOT r = f32[2,2] add(p, p)\n}\n", OPTIC_ERR_SHAPE_MISMATCH, "written as f32[2,2]"},
    {"HloModule m\nENTRY e {\n  p = f32[2,3]{0,0} parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 3:15: layout lists dimension 0 twice"},
    {"HloModule m\nENTRY e {\n  p = f32[2,3]{0} parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "layout has 1 entries for a rank-2 shape"},
    {"HloModule m\nENTRY e {\n  p = f32[2,3]{2,0} parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "layout does not fit rank 2"},
    {HEAD "  ROOT b = f32[2,2] broadcast(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:8: broadcast 'b': attribute 'dimensions' is missing"},
    {HEAD "  ROOT t = f32[2] transpose(p), dimensions={0,1}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "dimensions has 2 entries for an operand of rank 1"},
    {HEAD "  ROOT b = f32[2,2] broadcast(p), dimensions={5}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:8: instruction 'b': broadcast: dimensions[0] = 5 is outside the output rank 2"},
    {HEAD "  ROOT c = pred[2] compare(p, p), direction=XX\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "unknown direction 'XX'"},
    {HEAD "  ROOT c = pred[2] compare(p, p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "attribute 'direction' is missing"},
    {HEAD "  ROOT a = f32[2] add(p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "add 'a': takes 2 operands, 1 given"},
    {HEAD "  ROOT r = f32[2] add(p, p), dimensions={0}, dimensions={0}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:46: attribute 'dimensions' is given twice (first at line 4:30)"},
    {HEAD "  ROOT r = f32[2] add(p, p), metadata={op_name=\"oops}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:48: unterminated string"},
    {HEAD "  /* note\n  ROOT r = f32[2] add(p, p)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:3: unterminated /* comment"},
    {HEAD "  ROOT r = f32[2] add(p, p), foo={{\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:34: value of attribute 'foo' is not closed"},
    {HEAD "  ROOT r = f32[2] add(p, p), foo=\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "expected a value for attribute 'foo'"},
    {"", OPTIC_ERR_INVALID_ARGUMENT, "line 1:1: expected 'HloModule' or a computation, found end of input"},
    {"// only a comment\n", OPTIC_ERR_INVALID_ARGUMENT, "line 2:1: expected 'HloModule'"},
    {"HloModule m\n", OPTIC_ERR_INVALID_ARGUMENT, "module 'm' has no computations"},
    {"HloModule m\nENTRY e {\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "computation 'e' has no instructions"},
    {"HloModule m\nENTRY e {\n  c = f32[2,2] constant({...})\n}\n", OPTIC_ERR_UNSUPPORTED,
     "line 3:26: the literal was elided"},
    {"HloModule m\nENTRY e {\n  c = f32[3] constant({1, 2})\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "literal dimension 0 has 2 elements but the shape says 3"},
    {"HloModule m\nENTRY e {\n  c = f32[1] constant({1, 2})\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "has more than the 1 elements"},
    {"HloModule m\nENTRY e {\n  c = f32[2,1] constant({1, 2})\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "fewer nesting levels"},
    {"HloModule m\nENTRY e {\n  c = f32[1000000000] constant({1})\n}\n", OPTIC_ERR_SHAPE_MISMATCH,
     "the text is too short"},
    {"HloModule m\nENTRY e {\n  c = u8[] constant(256)\n}\n", OPTIC_ERR_OVERFLOW, "literal 256 is out of range for u8"},
    {"HloModule m\nENTRY e {\n  c = f32[] constant(1e39)\n}\n", OPTIC_ERR_OVERFLOW, "'1e39' is out of range for f32"},
    {"HloModule m\nENTRY e {\n  c = s32[] constant(1.5)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "expected an integer, found '1.5'"},
    {"HloModule m\nENTRY e {\n  c = pred[] constant(2)\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "expected true or false"},
    {"HloModule m\nENTRY e {\n  c = (f32[], f32[]) constant((1, 2))\n}\n", OPTIC_ERR_UNSUPPORTED, "tuple constants"},
    {"HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(2)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "computation 'e' has parameters up to 2 but no parameter 1"},
    {"HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "already has parameter 0"},
    {"HloModule m\nf {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n"
     "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p), kind=kWhatever, calls=f\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "unknown fusion kind 'kWhatever' (kLoop, kInput, kOutput, kCustom)"},
    {"= f32[2] parameter(0)\n", OPTIC_ERR_INVALID_ARGUMENT, "expected 'HloModule' or a computation"},
    {HEAD "  ROOT r = f32[] reduce(p, p), dimensions={0}, to_apply=e\n}\n", OPTIC_ERR_INVALID_ARGUMENT, "calls itself"},
    {"HloModule m, entry_computation_layout={(f32[2]{0}, f32[]{})->f32[2]{0}}\nENTRY e {\n  p = f32[2] "
     "parameter(0)\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "line 1:14: entry_computation_layout lists 2 parameters but the entry has 1"},
    {"HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\nENTRY e {\n  p = f32[2] parameter(0)\n}\n",
     OPTIC_ERR_SHAPE_MISMATCH, "parameter 'p' has shape f32[2] but entry_computation_layout gives f32[3]"},
    {HEAD "  ROOT d = f32[2] dot(p, p), lhs_contracting_dims={9}\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "lhs_contracting_dims has dimension 9"},
    {HEAD "  ROOT r = f32[2] add(p, p) extra\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
     "line 5:1: expected '=' after the instruction name, found '}'"},
    {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p), window={size=2 bogus=1}\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT,
     "line 4:45: expected size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal or '}' in the window"},
    {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p), window={size=2x3 stride=1}\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "window stride has 1 dimensions but size has 2"},
    {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p), padding=1_2_3_4\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "each dimension needs 2 to 3 numbers"},
    {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p), replica_groups=[2,2]<=[5]\n}\n",
     OPTIC_ERR_INVALID_ARGUMENT, "replica_groups: iota form"},
};

static void error_corpus(void) {
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    EXPECT_ERROR(corpus[i].text, corpus[i].status, corpus[i].needle);
  }
  /* a NUL byte inside the text (length-delimited input) */
  static const char nul[] = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\0\n}\n";
  expect_error(nul, sizeof nul - 1, OPTIC_ERR_INVALID_ARGUMENT,
               "line 3:26: expected an instruction name, found '\\x00'");
  optic_module_t *m;
  OT_EXPECT_STATUS(optic_module_from_hlo_text("x", 1, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_module_from_hlo_text(NULL, 3, &m), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_module_from_hlo_file("/nonexistent/x.hlo", &m), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "/nonexistent/x.hlo: cannot open") != NULL, "%s", optic_last_error());
}

/* Valid XLA that optic's IR cannot hold: UNSUPPORTED naming the op. */
static void unsupported_ops(void) {
  static const char *const ops[] = {"send",  "recv",   "rng",   "sinh", "asin", "cosh", "sinh", "cholesky",
                                    "atanh", "domain", "trace", "real", "acos", "fft",  "mulhi"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char text[256], needle[96];
    snprintf(text, sizeof text, HEAD "  ROOT r = f32[2] %s(p), custom_call_target=\"x\"\n}\n", ops[i]);
    snprintf(needle, sizeof needle, "line 4:19: opcode '%s' (instruction 'r') is not supported", ops[i]);
    EXPECT_ERROR(text, OPTIC_ERR_UNSUPPORTED, needle);
  }
}

/* The last character that is neither blank nor inside a // comment. */
static char last_significant(const char *t, size_t n) {
  char last = '\0';
  for (size_t i = 0; i < n; i++) {
    if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') i++;
    } else if (t[i] != ' ' && t[i] != '\n' && t[i] != '\t' && t[i] != '\r') {
      last = t[i];
    }
  }
  return last;
}

/* Every prefix of every reference file: an error, unless the cut falls right
 * after a complete computation (then the shorter module is valid). */
static void truncated_files(void) {
  for (size_t f = 0; f < OT_REFERENCE_HLO_COUNT; f++) {
    size_t len;
    char *text = ot_hlo_read(ot_reference_hlo[f], &len);
    if (!text) continue;
    int oks = 0;
    for (size_t cut = 0; cut < len; cut++) {
      optic_module_t *m = NULL;
      char *exact = malloc(cut + 1); /* exactly cut bytes past which ASan sees any read */
      memcpy(exact + 1, text, cut);
      optic_status st = optic_module_from_hlo_text(exact + 1, cut, &m);
      free(exact);
      if (st == OPTIC_OK) {
        oks++;
        OT_CHECK(last_significant(text, cut) == '}', "%s cut at %zu parses", ot_reference_hlo[f], cut);
        optic_module_destroy(m);
      } else {
        OT_CHECK(m == NULL && strncmp(optic_last_error(), "line ", 5) == 0, "%s cut at %zu: %s", ot_reference_hlo[f],
                 cut, optic_last_error());
      }
    }
    OT_CHECK(oks < 16, "%s: %d prefixes parse", ot_reference_hlo[f], oks);
    free(text);
  }
}

/* Deterministic byte mutations (flips, deletions, insertions of syntax
 * characters): any status, but no crash, leak or undefined behaviour. */
static void mutations(void) {
  static const char syntax[] = "{}[]()=,:%\"/*-<>x_0123456789 \nfROOTENTRY";
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  int parsed = 0, total = 0;
  for (size_t f = 0; f < OT_REFERENCE_HLO_COUNT; f++) {
    size_t len;
    char *text = ot_hlo_read(ot_reference_hlo[f], &len);
    char *buf = text ? malloc(len + 8) : NULL;
    for (int k = 0; buf && k < 400; k++) {
      memcpy(buf, text, len);
      size_t n = len;
      for (int e = 0; e < 1 + k % 3; e++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(rng >> 33) % n;
        char c = syntax[(rng >> 20) % (sizeof syntax - 1)];
        switch ((rng >> 12) % 3) {
          case 0: buf[at] = c; break;
          case 1: memmove(buf + at, buf + at + 1, n - at - 1), n--; break;
          default: memmove(buf + at + 1, buf + at, n - at), buf[at] = c, n++; break;
        }
      }
      optic_module_t *m = NULL;
      char *exact = malloc(n);
      memcpy(exact, buf, n);
      optic_status st = optic_module_from_hlo_text(exact, n, &m);
      free(exact);
      if (st == OPTIC_OK) {
        parsed++;
        char *t = NULL; /* what parses must print and cost */
        OT_EXPECT_OK(optic_module_to_hlo_text(m, &t));
        optic_string_free(t);
        optic_cost c;
        optic_computation_cost(m, optic_module_entry(m), &c);
        optic_module_destroy(m);
      }
      total++;
    }
    free(buf);
    free(text);
  }
  printf("  mutations: %d of %d still parse\n", parsed, total);
}

static char *repeat(const char *head, const char *unit, int n, const char *tail) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = malloc(hl + ul * (size_t)n + tl + 1);
  memcpy(s, head, hl);
  for (int i = 0; i < n; i++) memcpy(s + hl + ul * (size_t)i, unit, ul);
  memcpy(s + hl + ul * (size_t)n, tail, tl + 1);
  return s;
}

static void deep_nesting(void) {
  /* tuple shapes 1000 deep: bounded, no stack overflow */
  char *open = repeat("HloModule m\nENTRY e {\n  p = ", "(", 1000, "f32[]");
  char *text = repeat(open, ")", 1000, " parameter(0)\n}\n");
  EXPECT_ERROR(text, OPTIC_ERR_INVALID_ARGUMENT, "tuple shapes nest deeper than 32");
  free(open);
  free(text);
  /* 200,000 nested braces inside a skipped attribute: skipped iteratively */
  open = repeat(HEAD "  ROOT r = f32[2] add(p, p), junk=", "{", 200000, "");
  text = repeat(open, "}", 200000, "\n}\n");
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  optic_module_destroy(m);
  free(open);
  free(text);
  /* deeper literal braces than the rank */
  EXPECT_ERROR("HloModule m\nENTRY e {\n  c = f32[1] constant({{1}})\n}\n", OPTIC_ERR_INVALID_ARGUMENT,
               "expected a number");
  /* call chains: 64 levels import, 65 do not */
  for (int depth = 64; depth <= 65; depth++) {
    char *s = malloc((size_t)depth * 160 + 256);
    size_t k = (size_t)sprintf(s, "HloModule chain\nc0 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n");
    for (int i = 1; i < depth; i++) {
      k += (size_t)sprintf(s + k, "c%d {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c%d\n}\n", i,
                           i - 1);
    }
    if (depth == 64) {
      OT_EXPECT_OK(optic_module_from_hlo_text(s, k, &m));
      optic_module_destroy(m);
    } else {
      expect_error(s, k, OPTIC_ERR_INVALID_ARGUMENT, "computation 'c64' nests calls 65 deep; at most 64 are supported");
    }
    free(s);
  }
}

/* 100,000 chained instructions, written in reverse order (every operand is
 * defined later): the explicit-stack build and the hash maps keep it linear. */
static void large_module(void) {
  const int n = 100000;
  char *s = malloc((size_t)n * 48 + 128);
  size_t k = (size_t)sprintf(s, "HloModule big\nENTRY e {\n  ROOT a%d = f32[4] negate(a%d)\n", n, n - 1);
  for (int i = n - 1; i >= 1; i--) k += (size_t)sprintf(s + k, "  a%d = f32[4] add(a%d, a%d)\n", i, i - 1, i - 1);
  k += (size_t)sprintf(s + k, "  a0 = f32[4] parameter(0)\n}\n");
  optic_module_t *m = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  OT_EXPECT_OK(optic_module_from_hlo_text(s, k, &m));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  int32_t count = 0;
  if (m) optic_computation_instructions(m, optic_module_entry(m), &count);
  OT_CHECK(count == n + 1, "%d instructions", (int)count);
  printf("  %d instructions imported in %.1f ms\n", n + 1, ms);
  OT_CHECK(ms < 10000, "import took %.0f ms (quadratic?)", ms);
  optic_module_destroy(m);
  free(s);
}

static const ot_case cases[] = {
    {"error_corpus", error_corpus}, {"unsupported_ops", unsupported_ops}, {"truncated_files", truncated_files},
    {"mutations", mutations},       {"deep_nesting", deep_nesting},       {"large_module", large_module},
};

OT_MAIN(cases)
