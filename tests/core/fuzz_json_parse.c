/* libFuzzer target for the strict JSON reader (core/json_parse.h), which reads
 * machine files, benchmark runs and ratio specs. Any input parses or fails
 * cleanly (CORRUPT with a line and column, out NULL); strict acceptance
 * implies lenient acceptance of the same tree; every value's offset points at
 * its first character; strings are NUL-terminated at their length; and what
 * parses writes back (core/json.h) to text that parses to the same tree, up
 * to what the writer cannot express (non-finite numbers become null, a string
 * ends at an embedded NUL). Built by the fuzz preset and, elsewhere, as the
 * replay test fuzz_json_parse_replay. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/json.h"
#include "core/json_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool digit(char c) { return c >= '0' && c <= '9'; }

/* The first character of each value matches its kind; strings are terminated. */
static void check_tree(const optic_jv *v, const char *text, size_t size, int depth) {
  if (depth > OPTIC_JSON_PARSE_MAX_DEPTH + 1 || v->offset >= size) abort();
  char c = text[v->offset];
  switch (v->kind) {
    case OPTIC_JV_NULL:
      if (c != 'n') abort();
      break;
    case OPTIC_JV_BOOL:
      if (c != (v->boolean ? 't' : 'f')) abort();
      break;
    case OPTIC_JV_NUMBER:
      if (!(c == '-' || digit(c) || c == 'N' || c == 'I')) abort();
      break;
    case OPTIC_JV_STRING:
      if (c != '"' || v->string == NULL || v->string[v->length] != '\0') abort();
      break;
    case OPTIC_JV_ARRAY:
    case OPTIC_JV_OBJECT:
      if (c != (v->kind == OPTIC_JV_ARRAY ? '[' : '{') || (v->length > 0 && v->items == NULL)) abort();
      for (size_t i = 0; i < v->length; i++) {
        if (v->kind == OPTIC_JV_OBJECT && (v->keys == NULL || v->keys[i] == NULL)) abort();
        if (i > 0 && v->items[i].offset <= v->items[i - 1].offset) abort();
        check_tree(&v->items[i], text, size, depth + 1);
      }
      /* optic_jv_get finds the last value of a key */
      if (v->kind == OPTIC_JV_OBJECT && v->length > 0) {
        const char *k = v->keys[v->length - 1];
        if (optic_jv_get(v, k) != &v->items[v->length - 1]) abort();
      }
      break;
  }
}

/* a as written by the writer and read back is b. */
static bool same_after_writing(const optic_jv *a, const optic_jv *b) {
  if (a->kind == OPTIC_JV_NUMBER && !isfinite(a->number)) return b->kind == OPTIC_JV_NULL;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case OPTIC_JV_NULL: return true;
    case OPTIC_JV_BOOL: return a->boolean == b->boolean;
    case OPTIC_JV_NUMBER:
      if (a->is_integer && !(b->is_integer && b->integer == a->integer)) return false;
      return a->number == b->number;
    case OPTIC_JV_STRING: return strcmp(a->string, b->string) == 0;
    case OPTIC_JV_ARRAY:
    case OPTIC_JV_OBJECT:
      if (a->length != b->length) return false;
      for (size_t i = 0; i < a->length; i++) {
        if (a->kind == OPTIC_JV_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0) return false;
        if (!same_after_writing(&a->items[i], &b->items[i])) return false;
      }
      return true;
  }
  return false;
}

/* The same parse of the same text (strict vs lenient). */
static bool identical(const optic_jv *a, const optic_jv *b) {
  if (a->kind != b->kind || a->offset != b->offset || a->length != b->length) return false;
  if (a->kind == OPTIC_JV_NUMBER)
    return a->is_integer == b->is_integer && a->integer == b->integer &&
           memcmp(&a->number, &b->number, sizeof a->number) == 0;
  if (a->kind == OPTIC_JV_STRING) return memcmp(a->string, b->string, a->length) == 0;
  if (a->kind == OPTIC_JV_BOOL) return a->boolean == b->boolean;
  for (size_t i = 0; (a->kind == OPTIC_JV_ARRAY || a->kind == OPTIC_JV_OBJECT) && i < a->length; i++) {
    if (a->kind == OPTIC_JV_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0) return false;
    if (!identical(&a->items[i], &b->items[i])) return false;
  }
  return true;
}

static void round_trip(const optic_jv *v) {
  optic_json j;
  optic_json_init(&j, (v->length & 1) != 0); /* pretty or not, by the input */
  optic_json_write_value(&j, v);
  const char *text = NULL;
  size_t len = 0;
  if (optic_json_finish(&j, &text, &len) != OPTIC_OK) abort();
  optic_jv *back = NULL;
  if (optic_json_parse(text, len, NULL, &back) != OPTIC_OK) abort();
  if (!same_after_writing(v, back)) abort();
  optic_jv_free(back);
  optic_json_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  const optic_json_parse_options lenient = {.size = sizeof lenient, .allow_nonfinite = true};
  optic_jv *strict = (optic_jv *)1, *loose = (optic_jv *)1;
  optic_status ss = optic_json_parse(text, size, NULL, &strict);
  optic_status ls = optic_json_parse(text, size, &lenient, &loose);
  if ((ss != OPTIC_OK) != (strict == NULL) || (ls != OPTIC_OK) != (loose == NULL)) abort();
  if (ss != OPTIC_OK && ss != OPTIC_ERR_OUT_OF_MEMORY) {
    if (ss != OPTIC_ERR_CORRUPT || strstr(optic_last_error(), "line ") == NULL) abort();
  }
  if (ss == OPTIC_OK && (ls != OPTIC_OK || !identical(strict, loose))) abort();
  if (ls == OPTIC_OK) {
    check_tree(loose, text, size, 0);
    round_trip(loose);
  }
  optic_jv_free(strict);
  optic_jv_free(loose);
  return 0;
}
