/* Status codes: every code has a distinct name and description, OK is 0,
 * out-of-range codes are named as unknown; last-error is per thread. */
#include <pthread.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tests/harness.h"

static void every_code_named(void) {
  OT_CHECK(OPTIC_OK == 0, "OK must be 0");
  for (int a = 0; a < OPTIC_STATUS_COUNT_; a++) {
    const char *name = optic_status_name((optic_status)a);
    const char *desc = optic_status_str((optic_status)a);
    OT_CHECK(strncmp(name, "OPTIC_", 6) == 0, "code %d name %s", a, name);
    OT_CHECK(strcmp(name, "OPTIC_STATUS_UNKNOWN") != 0, "code %d unnamed", a);
    OT_CHECK(strcmp(desc, "unknown status") != 0 && desc[0] != '\0', "code %d has no description", a);
    for (int b = 0; b < a; b++) {
      OT_CHECK(strcmp(name, optic_status_name((optic_status)b)) != 0, "codes %d and %d share a name", a, b);
      OT_CHECK(strcmp(desc, optic_status_str((optic_status)b)) != 0, "codes %d and %d share a description", a, b);
    }
  }
  OT_CHECK(strcmp(optic_status_name(OPTIC_ERR_UNSUPPORTED), "OPTIC_ERR_UNSUPPORTED") == 0);
  OT_CHECK(strcmp(optic_status_str(OPTIC_ERR_TIMEOUT), "timed out") == 0);
}

static void unknown_codes(void) {
  OT_CHECK(strcmp(optic_status_name((optic_status)-1), "OPTIC_STATUS_UNKNOWN") == 0);
  OT_CHECK(strcmp(optic_status_name(OPTIC_STATUS_COUNT_), "OPTIC_STATUS_UNKNOWN") == 0);
  OT_CHECK(strcmp(optic_status_str((optic_status)12345), "unknown status") == 0);
}

static void last_error_set_and_cleared(void) {
  optic_clear_error();
  OT_CHECK(optic_last_error()[0] == '\0');
  OT_CHECK(optic_last_error_status() == OPTIC_OK);
  OT_CHECK(optic_fail(OPTIC_ERR_IO, "write %s: %d", "x.bin", 28) == OPTIC_ERR_IO);
  OT_CHECK(strcmp(optic_last_error(), "write x.bin: 28") == 0, "got '%s'", optic_last_error());
  OT_CHECK(optic_last_error_status() == OPTIC_ERR_IO);
  /* A real failing call sets a message naming the operation. */
  optic_dtype d;
  OT_EXPECT_STATUS(optic_dtype_from_name("f16x", &d), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "f16x") != NULL, "message '%s' lacks the bad name", optic_last_error());
  optic_clear_error();
  OT_CHECK(optic_last_error()[0] == '\0');
}

static void long_message_truncated(void) {
  char big[4096];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  optic_fail(OPTIC_ERR_INTERNAL, "%s", big);
  size_t n = strlen(optic_last_error());
  OT_CHECK(n > 0 && n < sizeof big, "message length %zu", n);
}

/* A message may wrap the previous one: optic_fail("%s", optic_last_error())
 * reads the buffer it writes. The result must be exactly the concatenation
 * (formatting in place would read bytes it already overwrote: observed as a
 * message repeating its own prefix). Long inner messages, several
 * arguments from the buffer and a tail of it (a pointer inside it, not at
 * its start) are covered too. */
static void message_wrapping_its_own_buffer(void) {
  optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape: dim 1 is -3; dims must be >= 0");
  optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: tensor %zu: %s", "optim_add_group", (size_t)1, optic_last_error());
  const char *want = "optim_add_group: tensor 1: shape: dim 1 is -3; dims must be >= 0";
  OT_CHECK(strcmp(optic_last_error(), want) == 0, "got '%s', want '%s'", optic_last_error(), want);
  OT_CHECK(optic_last_error_status() == OPTIC_ERR_SHAPE_MISMATCH);

  /* The same buffer twice, and a pointer into its middle. */
  optic_fail(OPTIC_ERR_IO, "abcdef");
  optic_fail(OPTIC_ERR_IO, "%s|%s|%s", optic_last_error(), optic_last_error(), optic_last_error() + 3);
  OT_CHECK(strcmp(optic_last_error(), "abcdef|abcdef|def") == 0, "got '%s'", optic_last_error());

  /* A long inner message: the wrapped result is truncated to the buffer,
   * never garbled; its start is the prefix, then the inner message. */
  char big[900];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  optic_fail(OPTIC_ERR_INTERNAL, "%s", big);
  for (int round = 0; round < 3; round++) {
    optic_fail(OPTIC_ERR_INTERNAL, "wrap%d: %s", round, optic_last_error());
  }
  const char *m = optic_last_error();
  OT_CHECK(strncmp(m, "wrap2: wrap1: wrap0: xxx", 24) == 0, "got '%.40s...'", m);
  size_t n = strlen(m);
  OT_CHECK(n == 21 + sizeof big - 1, "length %zu, expected %zu", n, 21 + sizeof big - 1);
  for (size_t i = 21; i < n; i++) {
    if (m[i] != 'x') {
      OT_CHECK(false, "byte %zu of the wrapped message is '%c', expected 'x'", i, m[i]);
      break;
    }
  }
}

static void *other_thread(void *arg) {
  (void)arg;
  optic_fail(OPTIC_ERR_TIMEOUT, "from the other thread");
  return NULL;
}

static void last_error_is_per_thread(void) {
  optic_fail(OPTIC_ERR_IO, "main thread");
  pthread_t t;
  pthread_create(&t, NULL, other_thread, NULL);
  pthread_join(t, NULL);
  OT_CHECK(strcmp(optic_last_error(), "main thread") == 0, "got '%s'", optic_last_error());
  OT_CHECK(optic_last_error_status() == OPTIC_ERR_IO);
}

static void version_matches_header(void) {
  OT_CHECK(strcmp(optic_version(), OPTIC_VERSION_STRING) == 0);
  OT_CHECK(optic_build_compiler()[0] != '\0');
}

static const ot_case cases[] = {
    {"every_code_named", every_code_named},
    {"unknown_codes", unknown_codes},
    {"last_error_set_and_cleared", last_error_set_and_cleared},
    {"long_message_truncated", long_message_truncated},
    {"message_wrapping_its_own_buffer", message_wrapping_its_own_buffer},
    {"last_error_is_per_thread", last_error_is_per_thread},
    {"version_matches_header", version_matches_header},
};
OT_MAIN(cases)
