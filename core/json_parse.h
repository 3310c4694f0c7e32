/* Internal: a small strict JSON reader (RFC 8259) into a tree of values, for
 * the CLI (benchmark runs, ratio specs) and machine files. Never reads past the
 * given length; rejects anything RFC 8259 does not allow (trailing commas,
 * comments, leading zeros, bad escapes, invalid UTF-8, unpaired surrogates),
 * except NaN/-NaN/Infinity/-Infinity when asked (Google Benchmark writes them).
 * A parsed tree is immutable: any number of threads may read it. */
#ifndef OPTIC_CORE_JSON_PARSE_H
#define OPTIC_CORE_JSON_PARSE_H

#include <optic/core.h>

#include "core/json.h"

/* Nesting deeper than this is rejected (CORRUPT), so hostile input cannot
 * exhaust the stack. */
#define OPTIC_JSON_PARSE_MAX_DEPTH 64

typedef enum optic_jv_kind {
  OPTIC_JV_NULL,
  OPTIC_JV_BOOL,
  OPTIC_JV_NUMBER,
  OPTIC_JV_STRING,
  OPTIC_JV_ARRAY,
  OPTIC_JV_OBJECT
} optic_jv_kind;

typedef struct optic_jv optic_jv;
struct optic_jv {
  optic_jv_kind kind;
  bool boolean;    /* BOOL */
  double number;   /* NUMBER (NaN/infinities only with allow_nonfinite) */
  bool is_integer; /* NUMBER written without fraction or exponent that fits int64 */
  int64_t integer; /* its value when is_integer */
  char *string;    /* STRING: UTF-8, NUL-terminated; may hold NUL (\u0000): see length */
  size_t length;   /* STRING: bytes; ARRAY/OBJECT: number of items */
  optic_jv *items; /* ARRAY: the items; OBJECT: the values, in file order */
  char **keys;     /* OBJECT: the keys (NUL-terminated UTF-8), in file order */
  size_t offset;   /* byte offset of the value's first character in the parsed text */
};

typedef struct optic_json_parse_options {
  size_t size;          /* sizeof(optic_json_parse_options) */
  bool allow_nonfinite; /* accept NaN, -NaN, Infinity, -Infinity as numbers (Google Benchmark writes them) */
} optic_json_parse_options;

/* Parses text[0..len) (one value, surrounded by optional whitespace) into a
 * new tree; the caller frees it with optic_jv_free. options may be NULL
 * (strict). Errors: CORRUPT with the line, column and what was expected;
 * OUT_OF_MEMORY; INVALID_ARGUMENT for NULL text or out. On error *out is NULL. */
optic_status optic_json_parse(const char *text, size_t len, const optic_json_parse_options *options, optic_jv **out);
/* Reads and parses a whole file (IO naming the file if it cannot be read;
 * CORRUPT messages start with the path). */
optic_status optic_json_parse_file(const char *path, const optic_json_parse_options *options, optic_jv **out);
/* NULL-safe. */
void optic_jv_free(optic_jv *v);
/* The 1-based line and column of byte `offset` of text[0..len) (a value's
 * offset, for messages about what a parsed file means); line/col may be NULL. */
void optic_json_line_col(const char *text, size_t len, size_t offset, int *line, int *col);

/* Lookups; all NULL-safe and return NULL/false on a kind mismatch.
 * optic_jv_get returns the LAST value with that key (as Python's json does
 * with duplicate keys). */
const optic_jv *optic_jv_get(const optic_jv *object, const char *key);
const optic_jv *optic_jv_at(const optic_jv *array, size_t i);
/* The string, or NULL when v is not a string. */
const char *optic_jv_str(const optic_jv *v);
/* The string of object[key], or fallback. */
const char *optic_jv_get_str(const optic_jv *object, const char *key, const char *fallback);
/* True and *out when v is a number. */
bool optic_jv_num(const optic_jv *v, double *out);
bool optic_jv_get_num(const optic_jv *object, const char *key, double *out);

/* Writes v through a JSON writer (integers stay integers; non-finite numbers
 * become null, as optic_json_double writes them). */
void optic_json_write_value(optic_json *j, const optic_jv *v);

#endif
