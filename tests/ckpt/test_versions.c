/* Format versions and the recorded step. A version-1 file (committed:
 * tests/data/ckpt/v1_step7.optic, written by ckpt_write_fixture before the
 * step field and the chunk hash table existed) still opens, verifies,
 * restores bit-exact, rolls back from a directory and is repaired verbatim;
 * its damage is reported for the whole entry (it has no chunk hashes), and
 * having no step it is never rejected for its name. Version 2 records the
 * step: optic_ckpt_save always, optic_ckpt_save_file when asked; a re-save
 * of the version-1 contents writes version 2 with the same data. */
#include "tests/ckpt/ckpt_fixture.h"
#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

/* tests/data/<name> (OPTIC_TEST_SOURCE_DIR: tests/CMakeLists.txt). */
static void data_path(const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/data/%s", OPTIC_TEST_SOURCE_DIR, name);
}

/* Restores every fixture entry from r and compares it with the fixture of step 7. */
static void restores_the_fixture(optic_ckpt_reader_t *r, const char *what) {
  static ckpt_fixture want, got;
  ckpt_fixture_fill(&want, 7);
  ckpt_fixture_fill(&got, 0);
  memset(got.emb, 0, sizeof got.emb), memset(got.w, 0, sizeof got.w), memset(got.b, 0, sizeof got.b);
  memset(got.mask, 0xff, sizeof got.mask);
  OT_EXPECT_OK(optic_ckpt_restore(r, got.e, FIXTURE_ENTRIES));
  OT_CHECK(memcmp(got.emb, want.emb, sizeof want.emb) == 0 && memcmp(got.w, want.w, sizeof want.w) == 0 &&
               memcmp(got.b, want.b, sizeof want.b) == 0 && got.step == 7 &&
               memcmp(got.mask, want.mask, sizeof want.mask) == 0,
           "%s: restored entries differ from the fixture of step 7", what);
  const void *v;
  size_t len;
  OT_EXPECT_OK(optic_ckpt_meta_get(r, "step", &v, &len));
  OT_CHECK(len == 1 && memcmp(v, "7", 1) == 0, "%s: metadata step", what);
  OT_EXPECT_OK(optic_ckpt_meta_get(r, "rng", &v, &len));
  OT_CHECK(len == 8 && memcmp(v, ckpt_fixture_rng, 8) == 0, "%s: metadata rng", what);
}

static void version_1_file_still_reads(void) {
  char v1[1024];
  data_path("ckpt/v1_step7.optic", v1, sizeof v1);
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(v1, NULL, &r));
  if (r == NULL) return;
  OT_CHECK(optic_ckpt_format_version(r) == 1 && optic_ckpt_entry_count(r) == 5 && optic_ckpt_meta_count(r) == 3);
  uint64_t step = 99;
  OT_EXPECT_STATUS(optic_ckpt_step(r, &step), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(step == 99 && strstr(optic_last_error(), "records no step (format version 1"), "%s", optic_last_error());
  OT_EXPECT_OK(optic_ckpt_check_name(r));
  OT_EXPECT_OK(optic_ckpt_verify(r));
  restores_the_fixture(r, "version 1");
  optic_ckpt_reader_destroy(r);

  /* In a directory: rollback restores it; with no step recorded its name is taken as it is. */
  char a[64], b[64], path[160];
  OT_CHECK(ct_mkdtemp(a, sizeof a) && ct_mkdtemp(b, sizeof b));
  size_t n = 0;
  uint8_t *bytes = ct_read_file(v1, &n);
  OT_CHECK(bytes != NULL && n == 6208, "fixture %s: %zu bytes", v1, n);
  optic_ckpt_path(a, 7, path, sizeof path);
  OT_CHECK(ct_write_file(path, bytes, n));
  static ckpt_fixture t;
  ckpt_fixture_fill(&t, 0);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  const char *dirs[2] = {a, b};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, t.e, FIXTURE_ENTRIES, NULL, &rep));
  OT_CHECK(rep.step == 7 && rep.skipped == 0 && t.step == 7);
  /* Repair copies it verbatim into an empty replica: still version 1, still valid. */
  optic_ckpt_repair_report rr = {.size = sizeof rr};
  OT_EXPECT_OK(optic_ckpt_repair(dirs, 2, NULL, &rr));
  OT_CHECK(rr.repaired == 1, "repaired %zu", rr.repaired);
  size_t m = 0;
  optic_ckpt_path(b, 7, path, sizeof path);
  uint8_t *copy = ct_read_file(path, &m);
  OT_CHECK(copy != NULL && m == n && memcmp(copy, bytes, n) == 0, "the repaired replica is the same bytes");
  free(copy);
  /* Damage: the whole entry's range, and the message says why no chunk is named. */
  bytes[1000] ^= 0x40;
  ct_memfile mf = {bytes, n};
  optic_ckpt_io io = ct_mem_io(&mf);
  optic_ckpt_read_options ro = {.size = sizeof ro, .io = &io};
  OT_EXPECT_STATUS(optic_ckpt_verify_file("v1-damaged", &ro), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "entry 0 'embedding' SHA-256 mismatch (somewhere in data bytes") &&
               strstr(optic_last_error(), "a version-1 file records no per-chunk hashes"),
           "%s", optic_last_error());
  free(bytes);
  ct_rmdir(a);
  ct_rmdir(b);
}

static void version_1_resaves_as_version_2(void) {
  char v1[1024], dir[64], path[160];
  data_path("ckpt/v1_step7.optic", v1, sizeof v1);
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  static ckpt_fixture f;
  ckpt_fixture_fill(&f, 0);
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(v1, NULL, &r));
  OT_EXPECT_OK(optic_ckpt_restore(r, f.e, FIXTURE_ENTRIES));
  optic_ckpt_reader_destroy(r);
  ckpt_fixture_fill(&f, 7); /* the metadata of step 7 (the entries were restored equal to it) */
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = 16};
  const char *dirs[1] = {dir};
  OT_EXPECT_OK(optic_ckpt_save(dirs, 1, 7, f.e, FIXTURE_ENTRIES, f.m, FIXTURE_META, &o));
  optic_ckpt_path(dir, 7, path, sizeof path);
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  uint64_t step = 0;
  OT_CHECK(r != NULL && optic_ckpt_format_version(r) == OPTIC_CKPT_FORMAT_VERSION && OPTIC_CKPT_FORMAT_VERSION == 2);
  OT_EXPECT_OK(optic_ckpt_step(r, &step));
  OT_CHECK(step == 7);
  OT_EXPECT_OK(optic_ckpt_verify(r));
  restores_the_fixture(r, "re-saved");
  optic_ckpt_reader_destroy(r);
  ct_rmdir(dir);
}

static void save_file_records_a_step_when_asked(void) {
  char dir[64], path[160];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  float x[3] = {1, 2, 3};
  optic_ckpt_entry e = {"x", {OPTIC_F32, {.rank = 1, .dims = {3}}, x}};
  /* No step asked for: none recorded, and a scheme name cannot be checked, so it is accepted. */
  optic_ckpt_path(dir, 5, path, sizeof path);
  OT_EXPECT_OK(optic_ckpt_save_file(path, &e, 1, NULL, 0, NULL));
  optic_ckpt_reader_t *r = NULL;
  uint64_t step = 0;
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  OT_EXPECT_STATUS(optic_ckpt_step(r, &step), OPTIC_ERR_NOT_FOUND);
  OT_EXPECT_OK(optic_ckpt_verify(r));
  optic_ckpt_reader_destroy(r);
  /* Asked: recorded, and checked against the name. */
  optic_ckpt_save_options o = {.size = sizeof o, .record_step = true, .step = 6};
  OT_EXPECT_OK(optic_ckpt_save_file(path, &e, 1, NULL, 0, &o));
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  OT_EXPECT_OK(optic_ckpt_step(r, &step));
  OT_CHECK(step == 6);
  OT_EXPECT_STATUS(optic_ckpt_check_name(r), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "named as step 5 but the checkpoint records step 6"), "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_ckpt_verify(r), OPTIC_ERR_CORRUPT);
  optic_ckpt_reader_destroy(r);
  /* Outside the naming scheme nothing is checked. */
  snprintf(path, sizeof path, "%s/mine.optic", dir);
  OT_EXPECT_OK(optic_ckpt_save_file(path, &e, 1, NULL, 0, &o));
  OT_EXPECT_OK(optic_ckpt_verify_file(path, NULL));
  /* The largest step survives the round trip. */
  o.step = UINT64_MAX;
  optic_ckpt_path(dir, UINT64_MAX, path, sizeof path);
  OT_EXPECT_OK(optic_ckpt_save_file(path, &e, 1, NULL, 0, &o));
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  OT_EXPECT_OK(optic_ckpt_step(r, &step));
  OT_CHECK(step == UINT64_MAX);
  OT_EXPECT_OK(optic_ckpt_verify(r));
  optic_ckpt_reader_destroy(r);
  OT_EXPECT_STATUS(optic_ckpt_step(NULL, &step), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_ckpt_check_name(NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_ckpt_format_version(NULL) == 0);
  ct_rmdir(dir);
}

static const ot_case cases[] = {
    {"version_1_file_still_reads", version_1_file_still_reads},
    {"version_1_resaves_as_version_2", version_1_resaves_as_version_2},
    {"save_file_records_a_step_when_asked", save_file_records_a_step_when_asked},
};
OT_MAIN(cases)
