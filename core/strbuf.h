/* Internal: a growable string with printf-style appends, for text output
 * (HLO text, reports). Errors are sticky; check once at the end. */
#ifndef OPTIC_CORE_STRBUF_H
#define OPTIC_CORE_STRBUF_H

#include <optic/core.h>

typedef struct optic_strbuf {
  char *buf;
  size_t len, cap;
  optic_status err;
} optic_strbuf;

void optic_strbuf_printf(optic_strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* On success hands the NUL-terminated text to the caller (optic_string_free
 * it) and resets s; on error frees everything and returns the first error. */
optic_status optic_strbuf_take(optic_strbuf *s, char **out);
void optic_strbuf_free(optic_strbuf *s);

/* n bytes for a string or buffer returned to a caller, who frees it with
 * optic_string_free (core/alloc.c keeps its size and allocator in front of
 * it). OVERFLOW, OUT_OF_MEMORY (*out NULL). */
optic_status optic_string_alloc(size_t n, void **out);

#endif
