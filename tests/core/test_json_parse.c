/* Strict JSON reader: every RFC 8259 construct, every rejection the header
 * promises, exact-size buffers (no NUL after the text, so an over-read shows
 * under ASan), truncations of a valid document, and a round trip through the
 * writer. */
#include <math.h>
#include <string.h>

#include <optic/optic.h>

#include "core/json.h"
#include "core/json_parse.h"
#include "tests/harness.h"

/* Parses a copy of s in a buffer of exactly strlen(s) bytes. */
static optic_status parse_exact(const char *s, bool nonfinite, optic_jv **out) {
  size_t n = strlen(s);
  char *copy = malloc(n ? n : 1);
  memcpy(copy, s, n);
  optic_json_parse_options o = {.size = sizeof o, .allow_nonfinite = nonfinite};
  optic_status st = optic_json_parse(copy, n, &o, out);
  free(copy);
  return st;
}

static void reads_every_kind(void) {
  optic_jv *v = NULL;
  OT_EXPECT_OK(
      parse_exact(" {\"a\": [1, -2.5e3, 0, -0, 1E+2, 0.125], \"b\": {\"c\": null, \"d\": true,"
                  " \"e\": false}, \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\","
                  " \"empty\": [], \"eo\": {}, \"big\": 9223372036854775807,"
                  " \"huge\": 9223372036854775808}\n",
                  false, &v));
  OT_CHECK(v && v->kind == OPTIC_JV_OBJECT && v->length == 7);
  const optic_jv *a = optic_jv_get(v, "a");
  OT_CHECK(a && a->kind == OPTIC_JV_ARRAY && a->length == 6);
  double x = 0;
  OT_CHECK(optic_jv_num(optic_jv_at(a, 0), &x) && x == 1.0 && optic_jv_at(a, 0)->is_integer &&
           optic_jv_at(a, 0)->integer == 1);
  OT_CHECK(optic_jv_num(optic_jv_at(a, 1), &x) && x == -2500.0 && !optic_jv_at(a, 1)->is_integer);
  OT_CHECK(optic_jv_num(optic_jv_at(a, 3), &x) && x == 0.0 && signbit(x));
  OT_CHECK(optic_jv_num(optic_jv_at(a, 4), &x) && x == 100.0);
  OT_CHECK(optic_jv_num(optic_jv_at(a, 5), &x) && x == 0.125);
  OT_CHECK(optic_jv_at(a, 6) == NULL);
  const optic_jv *b = optic_jv_get(v, "b");
  OT_CHECK(optic_jv_get(b, "c")->kind == OPTIC_JV_NULL);
  OT_CHECK(optic_jv_get(b, "d")->boolean && !optic_jv_get(b, "e")->boolean);
  const char *s = optic_jv_get_str(v, "s", NULL);
  OT_CHECK(s && strcmp(s, "x\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80") == 0, "got %s", s ? s : "(null)");
  OT_CHECK(optic_jv_get(v, "empty")->length == 0 && optic_jv_get(v, "eo")->kind == OPTIC_JV_OBJECT);
  const optic_jv *big = optic_jv_get(v, "big"), *huge = optic_jv_get(v, "huge");
  OT_CHECK(big->is_integer && big->integer == INT64_MAX);
  OT_CHECK(!huge->is_integer && huge->number == 9223372036854775808.0);
  OT_CHECK(optic_jv_get(v, "missing") == NULL && optic_jv_get_str(v, "a", "fb")[0] == 'f');
  OT_CHECK(!optic_jv_get_num(v, "s", &x));
  optic_jv_free(v);

  OT_EXPECT_OK(parse_exact("\"\\u0000x\"", false, &v)); /* embedded NUL keeps its length */
  OT_CHECK(v->kind == OPTIC_JV_STRING && v->length == 2 && v->string[0] == '\0' && v->string[1] == 'x');
  optic_jv_free(v);
  OT_EXPECT_OK(parse_exact("{\"k\":1,\"k\":2}", false, &v)); /* duplicates: the last wins, as in Python */
  OT_CHECK(optic_jv_get_num(v, "k", &x) && x == 2.0);
  optic_jv_free(v);
  OT_EXPECT_OK(parse_exact("7", false, &v));
  OT_CHECK(v->kind == OPTIC_JV_NUMBER && v->integer == 7);
  optic_jv_free(v);
}

static void rejects_what_rfc8259_rejects(void) {
  static const char *bad[] = {
      "",
      " ",
      "[1,]",
      "{\"a\":1,}",
      "[1 2]",
      "{\"a\" 1}",
      "{a:1}",
      "01",
      "1.",
      ".5",
      "1e",
      "+1",
      "-",
      "--1",
      "[",
      "{",
      "\"abc",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\\ud800\\u0041\"",
      "\"a\tb\"",
      "tru",
      "nul",
      "True",
      "NaN",
      "Infinity",
      "-Infinity",
      "[1]x",
      "// c\n1",
      "/*c*/1",
      "'a'",
      "\"\xc3\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "[] []",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    optic_jv *v = (optic_jv *)1;
    optic_status st = parse_exact(bad[i], false, &v);
    OT_CHECK(st == OPTIC_ERR_CORRUPT, "accepted bad JSON #%zu '%s' (status %s)", i, bad[i], optic_status_name(st));
    OT_CHECK(v == NULL, "out not NULL after an error on #%zu", i);
    OT_CHECK(strstr(optic_last_error(), "line 1 column") != NULL, "message lacks a position: %s", optic_last_error());
  }
  /* The position counts lines. */
  optic_jv *v = NULL;
  OT_EXPECT_STATUS(parse_exact("{\n  \"a\": [1,\n  2,,]}", false, &v), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "line 3 column 5") != NULL, "got: %s", optic_last_error());
  OT_EXPECT_STATUS(optic_json_parse("1", 1, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
}

static void nonfinite_only_when_asked(void) {
  optic_jv *v = NULL;
  OT_EXPECT_OK(parse_exact("[NaN, Infinity, -Infinity, 1, -NaN]", true, &v));
  OT_CHECK(isnan(v->items[0].number) && v->items[1].number == INFINITY && v->items[2].number == -INFINITY);
  OT_CHECK(isnan(v->items[4].number));
  optic_jv_free(v);
  OT_EXPECT_STATUS(parse_exact("[NaN]", false, &v), OPTIC_ERR_CORRUPT);
  OT_EXPECT_STATUS(parse_exact("[-NaN]", false, &v), OPTIC_ERR_CORRUPT);
  OT_EXPECT_STATUS(parse_exact("[--NaN]", true, &v), OPTIC_ERR_CORRUPT);
  OT_EXPECT_STATUS(parse_exact("[NaNa]", true, &v), OPTIC_ERR_CORRUPT);
  OT_EXPECT_STATUS(parse_exact("[Inf]", true, &v), OPTIC_ERR_CORRUPT);
}

static void depth_limit(void) {
  char deep[2 * (OPTIC_JSON_PARSE_MAX_DEPTH + 1) + 1];
  for (int n = OPTIC_JSON_PARSE_MAX_DEPTH; n <= OPTIC_JSON_PARSE_MAX_DEPTH + 1; n++) {
    for (int i = 0; i < n; i++) deep[i] = '[', deep[2 * n - 1 - i] = ']';
    deep[2 * n] = '\0';
    optic_jv *v = NULL;
    optic_status st = parse_exact(deep, false, &v);
    OT_CHECK((n <= OPTIC_JSON_PARSE_MAX_DEPTH) == (st == OPTIC_OK), "depth %d: %s", n, optic_status_name(st));
    if (st == OPTIC_OK) { /* the deepest document that parses writes back (the writer's limit is not lower) */
      optic_json j;
      optic_json_init(&j, false);
      optic_json_write_value(&j, v);
      const char *text = NULL;
      size_t len = 0;
      OT_EXPECT_OK(optic_json_finish(&j, &text, &len));
      OT_CHECK(len == (size_t)(2 * n) && text != NULL && memcmp(text, deep, len) == 0, "depth %d written back", n);
      optic_json_free(&j);
    }
    optic_jv_free(v);
  }
}

static const char *doc =
    "{\"context\":{\"date\":\"2026-12-01\",\"num_cpus\":2},\"benchmarks\":[{\"name\":\"a/b\","
    "\"iterations\":123456789012,\"real_time\":1.5e-3,\"GB/s\":12.25,\"label\":\"\\u00e9\"}]}";

static void every_truncation_fails_cleanly(void) {
  size_t n = strlen(doc);
  for (size_t cut = 0; cut < n; cut++) {
    optic_jv *v = NULL;
    char *copy = malloc(cut ? cut : 1);
    memcpy(copy, doc, cut);
    optic_status st = optic_json_parse(copy, cut, NULL, &v);
    free(copy);
    OT_CHECK(st == OPTIC_ERR_CORRUPT && v == NULL, "prefix of %zu bytes: %s", cut, optic_status_name(st));
    optic_jv_free(v);
  }
}

static void round_trips_through_the_writer(void) {
  optic_jv *v = NULL;
  OT_EXPECT_OK(parse_exact(doc, false, &v));
  optic_json j;
  optic_json_init(&j, false);
  optic_json_write_value(&j, v);
  const char *text = NULL;
  OT_EXPECT_OK(optic_json_finish(&j, &text, NULL));
  OT_CHECK(text && strcmp(text,
                          "{\"context\":{\"date\":\"2026-12-01\",\"num_cpus\":2},\"benchmarks\":[{\"name\":"
                          "\"a/b\",\"iterations\":123456789012,\"real_time\":0.0015,\"GB/s\":12.25,\"label\":"
                          "\"\xc3\xa9\"}]}") == 0,
           "got %s", text ? text : "(null)");
  optic_jv *again = NULL;
  OT_EXPECT_OK(optic_json_parse(text, strlen(text), NULL, &again));
  OT_CHECK(again && again->length == 2);
  optic_jv_free(again);
  optic_json_free(&j);
  optic_jv_free(v);
}

static void reads_files(void) {
  char path[] = "/tmp/optic_json_parse_XXXXXX";
  int fd = mkstemp(path);
  OT_CHECK(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("{\"x\": [1, 2,]}", f);
  fclose(f);
  optic_jv *v = NULL;
  OT_EXPECT_STATUS(optic_json_parse_file(path, NULL, &v), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), path) != NULL, "message lacks the path: %s", optic_last_error());
  f = fopen(path, "w");
  fputs("{\"x\": [1, 2]}", f);
  fclose(f);
  OT_EXPECT_OK(optic_json_parse_file(path, NULL, &v));
  OT_CHECK(v && optic_jv_get(v, "x")->length == 2);
  optic_jv_free(v);
  remove(path);
  OT_EXPECT_STATUS(optic_json_parse_file(path, NULL, &v), OPTIC_ERR_IO);
}

static const ot_case cases[] = {
    {"reads_every_kind", reads_every_kind},
    {"rejects_what_rfc8259_rejects", rejects_what_rfc8259_rejects},
    {"nonfinite_only_when_asked", nonfinite_only_when_asked},
    {"depth_limit", depth_limit},
    {"every_truncation_fails_cleanly", every_truncation_fails_cleanly},
    {"round_trips_through_the_writer", round_trips_through_the_writer},
    {"reads_files", reads_files},
};
OT_MAIN(cases)
