/* Status names and descriptions (generated from OPTIC_STATUS_LIST) and the
 * thread-local last-error message. Never prints. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

#define OPTIC_ERROR_MESSAGE_MAX 1024

static _Thread_local char last_message[OPTIC_ERROR_MESSAGE_MAX];
static _Thread_local optic_status last_status;

const char *optic_status_name(optic_status code) {
  switch (code) {
#define NAME_CASE(name, desc) \
  case OPTIC_##name: return "OPTIC_" #name;
    OPTIC_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    default: return "OPTIC_STATUS_UNKNOWN";
  }
}

const char *optic_status_str(optic_status code) {
  switch (code) {
#define DESC_CASE(name, desc) \
  case OPTIC_##name: return desc;
    OPTIC_STATUS_LIST(DESC_CASE)
#undef DESC_CASE
    default: return "unknown status";
  }
}

/* Formats into a scratch buffer, then copies: an argument may point into
 * last_message itself (a caller wrapping optic_last_error() with context),
 * and vsnprintf must never read bytes it is writing (C11 7.21.6.12: copying
 * between overlapping objects is undefined). */
optic_status optic_fail(optic_status code, const char *fmt, ...) {
  char formatted[OPTIC_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(formatted, sizeof formatted, fmt, ap);
  va_end(ap);
  if (n < 0) {
    snprintf(last_message, sizeof last_message, "(the error message could not be formatted)");
  } else {
    size_t len = (size_t)n < sizeof formatted ? (size_t)n : sizeof formatted - 1;
    memcpy(last_message, formatted, len);
    last_message[len] = '\0';
  }
  last_status = code;
  return code;
}

const char *optic_last_error(void) { return last_message; }

optic_status optic_last_error_status(void) { return last_status; }

void optic_clear_error(void) {
  last_message[0] = '\0';
  last_status = OPTIC_OK;
}
