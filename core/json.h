/* Internal: a small streaming JSON writer into a growable buffer, for the CLI,
 * reports and trace export. Errors are sticky: write freely, check once at
 * optic_json_finish. Not thread-safe per writer. */
#ifndef OPTIC_CORE_JSON_H
#define OPTIC_CORE_JSON_H

#include <optic/core.h>

/* Levels of nesting the writer takes: as many as the reader (core/json_parse.h)
 * accepts, so whatever parses can be written back. */
#define OPTIC_JSON_MAX_DEPTH 64

typedef struct optic_json {
  char *buf;
  size_t len, cap;
  int depth;
  bool pretty;
  bool has_items[OPTIC_JSON_MAX_DEPTH + 1]; /* per level: an item was written */
  bool is_object[OPTIC_JSON_MAX_DEPTH + 1];
  bool after_key;
  optic_status err;
} optic_json;

/* pretty: newline and two-space indentation per level. */
void optic_json_init(optic_json *j, bool pretty);
void optic_json_free(optic_json *j);

void optic_json_begin_object(optic_json *j);
void optic_json_end_object(optic_json *j);
void optic_json_begin_array(optic_json *j);
void optic_json_end_array(optic_json *j);
/* Inside an object: the key of the next value. */
void optic_json_key(optic_json *j, const char *key);
/* Strings are escaped (quotes, backslash, control characters); NULL writes null. */
void optic_json_string(optic_json *j, const char *s);
void optic_json_int(optic_json *j, int64_t v);
void optic_json_uint(optic_json *j, uint64_t v);
/* Shortest of %.15g/%.16g/%.17g that reads back exactly; NaN and infinities become null (JSON has none). */
void optic_json_double(optic_json *j, double v);
void optic_json_bool(optic_json *j, bool v);
void optic_json_null(optic_json *j);

/* OK and the text (NUL-terminated, owned by j) if everything written was
 * well-formed and complete; otherwise the first error. */
optic_status optic_json_finish(optic_json *j, const char **text, size_t *len);

#endif
