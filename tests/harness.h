/* A tiny test harness: a file lists its cases in a table and ends with
 * OT_MAIN(cases). `prog` runs all cases, `prog NAME...` runs the named ones.
 * A failed check prints where, why, and the command that reproduces it. */
#ifndef OPTIC_TESTS_HARNESS_H
#define OPTIC_TESTS_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ot_case {
  const char *name;
  void (*fn)(void);
} ot_case;

extern int ot_failures_;
extern const char *ot_prog_;
extern const char *ot_current_;

void ot_fail_(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ot_check_failed_(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int ot_main_(int argc, char **argv, const ot_case *cases, size_t ncases);

/* Checks cond; on failure prints the message (printf-style) and goes on. */
#define OT_CHECK(cond, ...)                                                   \
  do {                                                                        \
    if (!(cond)) ot_check_failed_(__FILE__, __LINE__, #cond, "" __VA_ARGS__); \
  } while (0)

/* Checks that an optic call returns the expected status. */
#define OT_EXPECT_STATUS(call, expected)                                                                             \
  do {                                                                                                               \
    optic_status ot_st_ = (call);                                                                                    \
    if (ot_st_ != (expected))                                                                                        \
      ot_fail_(__FILE__, __LINE__, "%s returned %s, expected %s (last error: %s)", #call, optic_status_name(ot_st_), \
               optic_status_name(expected), optic_last_error());                                                     \
  } while (0)
#define OT_EXPECT_OK(call) OT_EXPECT_STATUS(call, OPTIC_OK)

/* 1 under ThreadSanitizer, which cannot start threads in the child of a
 * multi-threaded fork (it stops the process). */
#if defined(__SANITIZE_THREAD__)
#define OT_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OT_UNDER_TSAN 1
#endif
#endif
#ifndef OT_UNDER_TSAN
#define OT_UNDER_TSAN 0
#endif

#define OT_MAIN(cases) \
  int main(int argc, char **argv) { return ot_main_(argc, argv, cases, sizeof(cases) / sizeof(cases[0])); }

#endif
