/* The test harness's runner and failure reporting (see harness.h). */
#include "tests/harness.h"

#include <stdarg.h>

int ot_failures_;
const char *ot_prog_;
const char *ot_current_;

void ot_fail_(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s (%s:%d): ", ot_current_, file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n  reproduce: %s %s\n", ot_prog_, ot_current_);
  va_end(ap);
  ot_failures_++;
}

void ot_check_failed_(const char *file, int line, const char *cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s (%s:%d): check failed: %s", ot_current_, file, line, cond);
  if (fmt[0]) {
    fprintf(stderr, "; ");
    vfprintf(stderr, fmt, ap);
  }
  fprintf(stderr, "\n  reproduce: %s %s\n", ot_prog_, ot_current_);
  va_end(ap);
  ot_failures_++;
}

static int run_case(const ot_case *c) {
  int before = ot_failures_;
  ot_current_ = c->name;
  c->fn();
  bool ok = ot_failures_ == before;
  printf("%s %s\n", ok ? "ok  " : "FAIL", c->name);
  return ok ? 0 : 1;
}

int ot_main_(int argc, char **argv, const ot_case *cases, size_t ncases) {
  ot_prog_ = argv[0];
  int failed = 0, ran = 0;
  if (argc < 2) {
    for (size_t i = 0; i < ncases; i++, ran++) failed += run_case(&cases[i]);
  } else {
    for (int a = 1; a < argc; a++) {
      size_t i = 0;
      while (i < ncases && strcmp(cases[i].name, argv[a]) != 0) i++;
      if (i == ncases) {
        fprintf(stderr, "%s: no case named '%s'\n", argv[0], argv[a]);
        return 2;
      }
      failed += run_case(&cases[i]);
      ran++;
    }
  }
  printf("%d passed, %d failed\n", ran - failed, failed);
  return failed ? 1 : 0;
}
