/* Internal: how library code reports a failure. Every fallible function returns
 * optic_fail(code, "op: what is wrong ...") so the message and code travel
 * together. Never used for success. */
#ifndef OPTIC_CORE_ERROR_H
#define OPTIC_CORE_ERROR_H

#include <optic/core.h>

/* Sets this thread's last error message (printf-style, truncated to fit) and
 * returns code, so callers write `return optic_fail(...)`. */
optic_status optic_fail(optic_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
