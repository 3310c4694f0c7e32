/* Strict RFC 8259 JSON reader into an optic_jv tree (see json_parse.h).
 * Recursive descent with an explicit depth limit; every read is bounds-checked
 * against the given length, so unterminated input is an error, never an
 * over-read. Never prints or aborts. */
#include "core/json_parse.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

_Static_assert(OPTIC_JSON_PARSE_MAX_DEPTH <= OPTIC_JSON_MAX_DEPTH, "a parsed document must be writable back");

typedef struct parser {
  const char *p, *end, *start;
  int depth;
  bool allow_nonfinite;
  optic_status err;
} parser;

void optic_json_line_col(const char *text, size_t len, size_t offset, int *line, int *col) {
  int l = 1, c = 1;
  for (size_t i = 0; text && i < offset && i < len; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  if (line) *line = l;
  if (col) *col = c;
}

static optic_status fail_at(parser *ps, const char *what) {
  if (ps->err != OPTIC_OK) return ps->err;
  int line, col;
  optic_json_line_col(ps->start, (size_t)(ps->end - ps->start), (size_t)(ps->p - ps->start), &line, &col);
  if (ps->p >= ps->end) {
    ps->err = optic_fail(OPTIC_ERR_CORRUPT, "json: line %d column %d: %s (at end of input)", line, col, what);
  } else {
    ps->err = optic_fail(OPTIC_ERR_CORRUPT, "json: line %d column %d: %s (found '%c')", line, col, what,
                         (*ps->p >= 0x20 && *ps->p < 0x7f) ? *ps->p : '?');
  }
  return ps->err;
}

static optic_status oom(parser *ps, size_t bytes) {
  if (ps->err == OPTIC_OK) ps->err = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "json: cannot allocate %zu bytes", bytes);
  return ps->err;
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static bool literal(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return false;
  ps->p += n;
  return true;
}

/* ----------------------------------------------------------------- strings */

typedef struct sbuf {
  char *b;
  size_t len, cap;
} sbuf;

static bool sbuf_put(sbuf *s, const char *src, size_t n) {
  if (s->len + n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 32;
    while (cap < s->len + n + 1) cap *= 2;
    char *b = realloc(s->b, cap);
    if (!b) return false;
    s->b = b;
    s->cap = cap;
  }
  memcpy(s->b + s->len, src, n);
  s->len += n;
  s->b[s->len] = '\0';
  return true;
}

static size_t utf8_encode(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), 0 if it is not one. */
static size_t utf8_valid(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  uint32_t cp, min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if ((size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

static bool hex4(parser *ps, uint32_t *out) {
  if (ps->end - ps->p < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char c = ps->p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= (uint32_t)(c - 'A' + 10);
    } else {
      return false;
    }
  }
  ps->p += 4;
  *out = v;
  return true;
}

/* At the opening quote. On success *out is a malloc'ed NUL-terminated string. */
/* long: one scanner: escapes, \u surrogate pairs and UTF-8 checks share the cursor and the output buffer */
static optic_status parse_string(parser *ps, char **out, size_t *len) {
  sbuf s = {NULL, 0, 0};
  ps->p++; /* the quote */
  for (;;) {
    if (ps->p >= ps->end) {
      free(s.b);
      return fail_at(ps, "unterminated string");
    }
    unsigned char c = (unsigned char)*ps->p;
    if (c == '"') {
      ps->p++;
      break;
    }
    if (c < 0x20) {
      free(s.b);
      return fail_at(ps, "control character in a string (must be escaped)");
    }
    if (c == '\\') {
      ps->p++;
      if (ps->p >= ps->end) {
        free(s.b);
        return fail_at(ps, "unterminated escape");
      }
      char e = *ps->p++, ch;
      switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(ps, &cp)) {
            free(s.b);
            return fail_at(ps, "bad \\u escape: needs four hex digits");
          }
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(s.b);
            return fail_at(ps, "unpaired low surrogate in \\u escape");
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (!(ps->end - ps->p >= 2 && ps->p[0] == '\\' && ps->p[1] == 'u')) {
              free(s.b);
              return fail_at(ps, "high surrogate not followed by a \\u low surrogate");
            }
            ps->p += 2;
            if (!hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
              free(s.b);
              return fail_at(ps, "high surrogate not followed by a low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          char u[4];
          size_t n = utf8_encode(cp, u);
          if (!sbuf_put(&s, u, n)) {
            free(s.b);
            return oom(ps, s.cap * 2);
          }
          continue;
        }
        default:
          ps->p--;
          free(s.b);
          return fail_at(ps, "bad escape in a string");
      }
      if (!sbuf_put(&s, &ch, 1)) {
        free(s.b);
        return oom(ps, s.cap * 2);
      }
      continue;
    }
    size_t n = utf8_valid((const unsigned char *)ps->p, (const unsigned char *)ps->end);
    if (n == 0) {
      free(s.b);
      return fail_at(ps, "invalid UTF-8 in a string");
    }
    if (!sbuf_put(&s, ps->p, n)) {
      free(s.b);
      return oom(ps, s.cap * 2);
    }
    ps->p += n;
  }
  if (!s.b && !sbuf_put(&s, "", 0)) return oom(ps, 32);
  *out = s.b;
  if (len) *len = s.len;
  return OPTIC_OK;
}

/* ----------------------------------------------------------------- numbers */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static optic_status parse_number(parser *ps, optic_jv *v) {
  const char *begin = ps->p;
  bool integer = true;
  if (ps->p < ps->end && *ps->p == '-') ps->p++;
  if (ps->allow_nonfinite && literal(ps, "Infinity")) {
    v->kind = OPTIC_JV_NUMBER;
    v->number = (*begin == '-') ? -(double)INFINITY : (double)INFINITY;
    return OPTIC_OK;
  }
  /* Google Benchmark writes a negative NaN as -NaN. */
  if (ps->allow_nonfinite && *begin == '-' && literal(ps, "NaN")) {
    v->kind = OPTIC_JV_NUMBER;
    v->number = (double)NAN;
    return OPTIC_OK;
  }
  if (ps->p >= ps->end || !is_digit(*ps->p)) return fail_at(ps, "bad number: expected a digit");
  if (*ps->p == '0') {
    ps->p++;
    if (ps->p < ps->end && is_digit(*ps->p)) return fail_at(ps, "bad number: leading zero");
  } else {
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  if (ps->p < ps->end && *ps->p == '.') {
    integer = false;
    ps->p++;
    if (ps->p >= ps->end || !is_digit(*ps->p)) return fail_at(ps, "bad number: expected a digit after '.'");
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    integer = false;
    ps->p++;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
    if (ps->p >= ps->end || !is_digit(*ps->p)) return fail_at(ps, "bad number: expected a digit in the exponent");
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  /* strtod needs a terminated copy: the input need not be NUL-terminated. */
  size_t n = (size_t)(ps->p - begin);
  char small[64], *copy = n < sizeof small ? small : malloc(n + 1);
  if (!copy) return oom(ps, n + 1);
  memcpy(copy, begin, n);
  copy[n] = '\0';
  v->kind = OPTIC_JV_NUMBER;
  v->number = strtod(copy, NULL); /* overflow gives +-HUGE_VAL, as Python's float() */
  if (integer) {
    errno = 0;
    long long i = strtoll(copy, NULL, 10);
    if (errno == 0) {
      v->is_integer = true;
      v->integer = (int64_t)i;
    }
  }
  if (copy != small) free(copy);
  return OPTIC_OK;
}

/* ------------------------------------------------------------------ values */

static optic_status parse_value(parser *ps, optic_jv *v);

static optic_status grow(parser *ps, void **arr, size_t elem, size_t *cap, size_t need) {
  if (need <= *cap) return OPTIC_OK;
  size_t cap2 = *cap ? *cap * 2 : 4;
  void *a = realloc(*arr, cap2 * elem);
  if (!a) return oom(ps, cap2 * elem);
  *arr = a;
  *cap = cap2;
  return OPTIC_OK;
}

static optic_status parse_array(parser *ps, optic_jv *v) {
  size_t cap = 0;
  v->kind = OPTIC_JV_ARRAY;
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    return OPTIC_OK;
  }
  for (;;) {
    if (grow(ps, (void **)&v->items, sizeof *v->items, &cap, v->length + 1) != OPTIC_OK) return ps->err;
    optic_jv *item = &v->items[v->length];
    memset(item, 0, sizeof *item);
    v->length++;
    skip_ws(ps);
    if (parse_value(ps, item) != OPTIC_OK) return ps->err;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == ']') {
      ps->p++;
      return OPTIC_OK;
    }
    return fail_at(ps, "expected ',' or ']' in an array");
  }
}

static optic_status parse_object(parser *ps, optic_jv *v) {
  size_t cap = 0, kcap = 0;
  v->kind = OPTIC_JV_OBJECT;
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    return OPTIC_OK;
  }
  for (;;) {
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') return fail_at(ps, "expected a string key in an object");
    if (grow(ps, (void **)&v->items, sizeof *v->items, &cap, v->length + 1) != OPTIC_OK) return ps->err;
    if (grow(ps, (void **)&v->keys, sizeof *v->keys, &kcap, v->length + 1) != OPTIC_OK) return ps->err;
    optic_jv *item = &v->items[v->length];
    memset(item, 0, sizeof *item);
    v->keys[v->length] = NULL;
    v->length++;
    if (parse_string(ps, &v->keys[v->length - 1], NULL) != OPTIC_OK) return ps->err;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') return fail_at(ps, "expected ':' after an object key");
    ps->p++;
    skip_ws(ps);
    if (parse_value(ps, item) != OPTIC_OK) return ps->err;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      return OPTIC_OK;
    }
    return fail_at(ps, "expected ',' or '}' in an object");
  }
}

static optic_status parse_value(parser *ps, optic_jv *v) {
  if (ps->p >= ps->end) return fail_at(ps, "expected a value");
  v->offset = (size_t)(ps->p - ps->start);
  switch (*ps->p) {
    case '{':
    case '[': {
      if (++ps->depth > OPTIC_JSON_PARSE_MAX_DEPTH) return fail_at(ps, "nesting deeper than 64 levels");
      optic_status s = *ps->p == '{' ? parse_object(ps, v) : parse_array(ps, v);
      ps->depth--;
      return s;
    }
    case '"': v->kind = OPTIC_JV_STRING; return parse_string(ps, &v->string, &v->length);
    case 't':
      if (!literal(ps, "true")) break;
      v->kind = OPTIC_JV_BOOL;
      v->boolean = true;
      return OPTIC_OK;
    case 'f':
      if (!literal(ps, "false")) break;
      v->kind = OPTIC_JV_BOOL;
      return OPTIC_OK;
    case 'n':
      if (!literal(ps, "null")) break;
      v->kind = OPTIC_JV_NULL;
      return OPTIC_OK;
    case 'N':
      if (!ps->allow_nonfinite || !literal(ps, "NaN")) break;
      v->kind = OPTIC_JV_NUMBER;
      v->number = (double)NAN;
      return OPTIC_OK;
    default:
      if (*ps->p == '-' || is_digit(*ps->p) || (ps->allow_nonfinite && *ps->p == 'I')) return parse_number(ps, v);
      break;
  }
  if (*ps->p == '+' || *ps->p == '.') return fail_at(ps, "expected a number (JSON has no leading '+' or '.')");
  if (*ps->p == 'N' || *ps->p == 'I') return fail_at(ps, "expected a number (NaN and Infinity are not JSON)");
  return fail_at(ps, "expected a value");
}

static void free_children(optic_jv *v) {
  if (v->kind == OPTIC_JV_STRING) free(v->string);
  if (v->kind == OPTIC_JV_ARRAY || v->kind == OPTIC_JV_OBJECT) {
    for (size_t i = 0; i < v->length; i++) {
      free_children(&v->items[i]);
      if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
  }
}

void optic_jv_free(optic_jv *v) {
  if (!v) return;
  free_children(v);
  free(v);
}

optic_status optic_json_parse(const char *text, size_t len, const optic_json_parse_options *options, optic_jv **out) {
  if (!out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_json_parse: out is NULL");
  *out = NULL;
  if (!text && len > 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_json_parse: text is NULL");
  if (!text) text = "";
  parser ps = {.p = text, .end = text + len, .start = text, .depth = 0, .err = OPTIC_OK};
  if (options && options->size >= offsetof(optic_json_parse_options, allow_nonfinite) + sizeof(bool)) {
    ps.allow_nonfinite = options->allow_nonfinite;
  }
  optic_jv *root = calloc(1, sizeof *root);
  if (!root) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "optic_json_parse: cannot allocate the root");
  skip_ws(&ps);
  if (parse_value(&ps, root) == OPTIC_OK) {
    skip_ws(&ps);
    if (ps.p != ps.end)
      fail_at(&ps, root->kind == OPTIC_JV_OBJECT  ? "text after the object"
                   : root->kind == OPTIC_JV_ARRAY ? "text after the array"
                                                  : "text after the value");
  }
  if (ps.err != OPTIC_OK) {
    optic_jv_free(root);
    return ps.err;
  }
  *out = root;
  return OPTIC_OK;
}

optic_status optic_json_parse_file(const char *path, const optic_json_parse_options *options, optic_jv **out) {
  if (!out || !path) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_json_parse_file: NULL argument");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return optic_fail(OPTIC_ERR_IO, "json: cannot open %s: %s", path, strerror(errno));
  sbuf s = {NULL, 0, 0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (!sbuf_put(&s, chunk, n)) {
      fclose(f);
      free(s.b);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "json: cannot hold %s in memory", path);
    }
  }
  bool bad = ferror(f) != 0;
  fclose(f);
  if (bad) {
    free(s.b);
    return optic_fail(OPTIC_ERR_IO, "json: error reading %s", path);
  }
  optic_status st = optic_json_parse(s.b ? s.b : "", s.len, options, out);
  free(s.b);
  if (st == OPTIC_ERR_CORRUPT) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", optic_last_error());
    return optic_fail(st, "%s: %s", path, msg);
  }
  return st;
}

/* ----------------------------------------------------------------- lookups */

const optic_jv *optic_jv_get(const optic_jv *object, const char *key) {
  if (!object || object->kind != OPTIC_JV_OBJECT || !key) return NULL;
  for (size_t i = object->length; i-- > 0;) {
    if (strcmp(object->keys[i], key) == 0) return &object->items[i];
  }
  return NULL;
}

const optic_jv *optic_jv_at(const optic_jv *array, size_t i) {
  if (!array || array->kind != OPTIC_JV_ARRAY || i >= array->length) return NULL;
  return &array->items[i];
}

const char *optic_jv_str(const optic_jv *v) { return v && v->kind == OPTIC_JV_STRING ? v->string : NULL; }

const char *optic_jv_get_str(const optic_jv *object, const char *key, const char *fallback) {
  const char *s = optic_jv_str(optic_jv_get(object, key));
  return s ? s : fallback;
}

bool optic_jv_num(const optic_jv *v, double *out) {
  if (!v || v->kind != OPTIC_JV_NUMBER) return false;
  if (out) *out = v->number;
  return true;
}

bool optic_jv_get_num(const optic_jv *object, const char *key, double *out) {
  return optic_jv_num(optic_jv_get(object, key), out);
}

void optic_json_write_value(optic_json *j, const optic_jv *v) {
  if (!v) {
    optic_json_null(j);
    return;
  }
  switch (v->kind) {
    case OPTIC_JV_NULL: optic_json_null(j); break;
    case OPTIC_JV_BOOL: optic_json_bool(j, v->boolean); break;
    case OPTIC_JV_NUMBER:
      if (v->is_integer) {
        optic_json_int(j, v->integer);
      } else {
        optic_json_double(j, v->number);
      }
      break;
    case OPTIC_JV_STRING: optic_json_string(j, v->string); break;
    case OPTIC_JV_ARRAY:
      optic_json_begin_array(j);
      for (size_t i = 0; i < v->length; i++) optic_json_write_value(j, &v->items[i]);
      optic_json_end_array(j);
      break;
    case OPTIC_JV_OBJECT:
      optic_json_begin_object(j);
      for (size_t i = 0; i < v->length; i++) {
        optic_json_key(j, v->keys[i]);
        optic_json_write_value(j, &v->items[i]);
      }
      optic_json_end_object(j);
      break;
  }
}
