/* The tests' way to compile an HLO text module for a machine model: parse,
 * compile with the given threads, split rule and fusion (a failure is a
 * test failure), and free the module. NULL when either step failed.
 * Header-only, test code. */
#ifndef OPTIC_TESTS_COMPILE_TEXT_H
#define OPTIC_TESTS_COMPILE_TEXT_H

#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"

static inline optic_program_t *ot_compile_text(const char *text, const optic_machine *mc, int32_t threads,
                                               int64_t split_min_elements, int fusion) {
  optic_module_t *m = NULL;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  optic_compile_options o = optic_compile_options_default();
  o.machine = mc;
  o.threads = threads;
  o.split_min_elements = split_min_elements;
  o.fusion = fusion;
  if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
  optic_module_destroy(m);
  return p;
}

#endif
