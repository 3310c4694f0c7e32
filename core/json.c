/* Streaming JSON writer: structure is checked as it is written (keys only in
 * objects, values after keys, balanced nesting), so a malformed document is an
 * error at finish rather than bad output. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

void optic_json_init(optic_json *j, bool pretty) {
  memset(j, 0, sizeof *j);
  j->pretty = pretty;
}

void optic_json_free(optic_json *j) {
  free(j->buf);
  memset(j, 0, sizeof *j);
}

static void put(optic_json *j, const char *s, size_t n) {
  if (j->err) return;
  if (j->len + n + 1 > j->cap) {
    size_t cap = j->cap ? j->cap : 256;
    while (cap < j->len + n + 1) cap *= 2;
    char *b = realloc(j->buf, cap);
    if (b == NULL) {
      j->err = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "json: cannot grow buffer to %zu bytes", cap);
      return;
    }
    j->buf = b;
    j->cap = cap;
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
  j->buf[j->len] = '\0';
}

static void puts_(optic_json *j, const char *s) { put(j, s, strlen(s)); }

static void newline(optic_json *j) {
  if (!j->pretty) return;
  put(j, "\n", 1);
  for (int i = 0; i < j->depth; i++) put(j, "  ", 2);
}

/* Called before every value or key: commas, indentation, structure checks. */
static void before_item(optic_json *j, bool is_key) {
  if (j->err) return;
  bool in_object = j->depth > 0 && j->is_object[j->depth];
  if (j->after_key) {
    if (is_key) j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: key after key");
    j->after_key = false;
    return;
  }
  if (in_object && !is_key) {
    j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: value in an object without a key");
    return;
  }
  if (!in_object && is_key) {
    j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: key outside an object");
    return;
  }
  if (j->depth == 0 && j->has_items[0]) {
    j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: more than one top-level value");
    return;
  }
  if (j->has_items[j->depth]) put(j, ",", 1);
  if (j->depth > 0) newline(j);
  j->has_items[j->depth] = true;
}

static void open_(optic_json *j, bool object) {
  before_item(j, false);
  if (j->err) return;
  if (j->depth == OPTIC_JSON_MAX_DEPTH) {
    j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: nesting deeper than %d", OPTIC_JSON_MAX_DEPTH);
    return;
  }
  put(j, object ? "{" : "[", 1);
  j->depth++;
  j->is_object[j->depth] = object;
  j->has_items[j->depth] = false;
}

static void close_(optic_json *j, bool object) {
  if (j->err) return;
  if (j->depth == 0 || j->is_object[j->depth] != object || j->after_key) {
    j->err = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: unbalanced %s", object ? "}" : "]");
    return;
  }
  bool had = j->has_items[j->depth];
  j->depth--;
  if (had) newline(j);
  put(j, object ? "}" : "]", 1);
}

void optic_json_begin_object(optic_json *j) { open_(j, true); }
void optic_json_end_object(optic_json *j) { close_(j, true); }
void optic_json_begin_array(optic_json *j) { open_(j, false); }
void optic_json_end_array(optic_json *j) { close_(j, false); }

static void quoted(optic_json *j, const char *s) {
  put(j, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
      case '"': puts_(j, "\\\""); break;
      case '\\': puts_(j, "\\\\"); break;
      case '\n': puts_(j, "\\n"); break;
      case '\r': puts_(j, "\\r"); break;
      case '\t': puts_(j, "\\t"); break;
      default:
        if (*p < 0x20) {
          snprintf(esc, sizeof esc, "\\u%04x", *p);
          puts_(j, esc);
        } else {
          put(j, (const char *)p, 1);
        }
    }
  }
  put(j, "\"", 1);
}

void optic_json_key(optic_json *j, const char *key) {
  before_item(j, true);
  if (j->err) return;
  quoted(j, key ? key : "");
  put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
  j->after_key = true;
}

void optic_json_string(optic_json *j, const char *s) {
  if (s == NULL) {
    optic_json_null(j);
    return;
  }
  before_item(j, false);
  quoted(j, s);
}

static void scalar(optic_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void scalar(optic_json *j, const char *fmt, ...) {
  char tmp[40];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  before_item(j, false);
  puts_(j, tmp);
}

void optic_json_int(optic_json *j, int64_t v) { scalar(j, "%lld", (long long)v); }
void optic_json_uint(optic_json *j, uint64_t v) { scalar(j, "%llu", (unsigned long long)v); }
void optic_json_double(optic_json *j, double v) {
  if (!isfinite(v)) {
    optic_json_null(j);
    return;
  }
  char tmp[40];
  for (int prec = 15; prec <= 17; prec++) { /* shortest that reads back exactly */
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v) break;
  }
  scalar(j, "%s", tmp);
}
void optic_json_bool(optic_json *j, bool v) { scalar(j, "%s", v ? "true" : "false"); }
void optic_json_null(optic_json *j) { scalar(j, "%s", "null"); }

optic_status optic_json_finish(optic_json *j, const char **text, size_t *len) {
  if (j->err) return j->err;
  if (j->depth != 0 || j->after_key || !j->has_items[0]) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "json: document is incomplete (depth %d)", j->depth);
  }
  if (text) *text = j->buf;
  if (len) *len = j->len;
  return OPTIC_OK;
}
