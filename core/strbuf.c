/* Growable string with printf-style appends (see strbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strbuf.h"

void optic_strbuf_printf(optic_strbuf *s, const char *fmt, ...) {
  if (s->err) return;
  for (int attempt = 0; attempt < 2; attempt++) {
    size_t room = s->cap - s->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      s->err = optic_fail(OPTIC_ERR_INTERNAL, "strbuf: bad format");
      return;
    }
    if ((size_t)n < room) {
      s->len += (size_t)n;
      return;
    }
    size_t cap = s->cap ? s->cap : 256;
    while (cap - s->len <= (size_t)n) cap *= 2;
    void *b = NULL;
    if (optic_string_alloc(cap, &b) != OPTIC_OK) {
      s->err = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "strbuf: cannot grow to %zu bytes", cap);
      return;
    }
    if (s->len) memcpy(b, s->buf, s->len);
    optic_string_free(s->buf);
    s->buf = b;
    s->cap = cap;
  }
}

optic_status optic_strbuf_take(optic_strbuf *s, char **out) {
  if (s->err) {
    optic_status st = s->err;
    optic_strbuf_free(s);
    return st;
  }
  if (s->buf == NULL) {
    void *b = NULL;
    if (optic_string_alloc(1, &b) != OPTIC_OK) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "strbuf: out of memory");
    s->buf = b;
    s->buf[0] = '\0';
  }
  *out = s->buf;
  memset(s, 0, sizeof *s);
  return OPTIC_OK;
}

void optic_strbuf_free(optic_strbuf *s) {
  optic_string_free(s->buf);
  memset(s, 0, sizeof *s);
}
