/* Checkpoint directories: the naming scheme and listing, keep-newest-K (old
 * files deleted only after the new one is durable), stale temporaries of
 * interrupted saves removed, rollback past corrupt checkpoints (reported),
 * replicas (restore from any valid one) and repair of corrupt and missing
 * copies, unrecoverable steps, pruned steps not re-created, and a
 * checkpoint renamed or copied to another step's name: not valid, skipped by
 * rollback (the previous good one restored), rewritten by repair. */
#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { N = 5000 };
static float data[N], back[N];

static optic_ckpt_entry entry(float *p) { return (optic_ckpt_entry){"p", {OPTIC_F32, {.rank = 1, .dims = {N}}, p}}; }

static optic_status save(const char *const *dirs, size_t nd, uint64_t step, uint32_t keep) {
  ct_fill(data, sizeof data, step);
  optic_ckpt_entry e = entry(data);
  optic_ckpt_save_options o = {.size = sizeof o, .keep = keep};
  return optic_ckpt_save(dirs, nd, step, &e, 1, NULL, 0, &o);
}

/* Restores the newest valid step and checks its bits. */
static uint64_t rollback(const char *const *dirs, size_t nd, size_t *skipped) {
  optic_ckpt_entry t = entry(back);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  optic_status st = optic_ckpt_restore_latest(dirs, nd, &t, 1, NULL, &rep);
  if (st != OPTIC_OK) return UINT64_MAX;
  ct_fill(data, sizeof data, rep.step);
  OT_CHECK(memcmp(back, data, sizeof data) == 0, "step %llu restored with different bits",
           (unsigned long long)rep.step);
  if (skipped) *skipped = rep.skipped;
  return rep.step;
}

static void flip(const char *dir, uint64_t step, size_t at) {
  char path[160];
  optic_ckpt_path(dir, step, path, sizeof path);
  size_t n;
  uint8_t *b = ct_read_file(path, &n);
  OT_CHECK(b != NULL && at < n);
  if (b == NULL) return;
  b[at] ^= 0x10;
  OT_CHECK(ct_write_file(path, b, n));
  free(b);
}

static void remove_step(const char *dir, uint64_t step) {
  char path[160];
  optic_ckpt_path(dir, step, path, sizeof path);
  OT_CHECK(unlink(path) == 0);
}

static void naming_listing_and_keep(void) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  char path[160];
  OT_CHECK(optic_ckpt_path(dir, 7, path, sizeof path) > 0 && strstr(path, "/ckpt-00000000000000000007.optic"));
  size_t count = 99;
  OT_EXPECT_OK(optic_ckpt_list(dir, NULL, 0, &count));
  OT_CHECK(count == 0);
  OT_EXPECT_STATUS(rollback(dirs, 1, NULL) == UINT64_MAX ? optic_last_error_status() : OPTIC_OK, OPTIC_ERR_NOT_FOUND);
  for (uint64_t s = 10; s <= 60; s += 10) OT_EXPECT_OK(save(dirs, 1, s, 3));
  uint64_t steps[8];
  OT_EXPECT_OK(optic_ckpt_list(dir, steps, 8, &count));
  OT_CHECK(count == 3 && steps[0] == 40 && steps[1] == 50 && steps[2] == 60);
  /* Foreign files, a stale temporary, and names that only look like checkpoints. */
  char other[160];
  snprintf(other, sizeof other, "%s/.ckpt-00000000000000000070.optic.tmp-1-0", dir);
  OT_CHECK(ct_write_file(other, "partial", 7));
  snprintf(other, sizeof other, "%s/ckpt-0000000000000000007.optic", dir); /* 19 digits */
  OT_CHECK(ct_write_file(other, "x", 1));
  snprintf(other, sizeof other, "%s/notes.txt", dir);
  OT_CHECK(ct_write_file(other, "x", 1));
  OT_EXPECT_OK(optic_ckpt_list(dir, steps, 8, &count));
  OT_CHECK(count == 3);
  OT_CHECK(rollback(dirs, 1, NULL) == 60);
  OT_EXPECT_OK(save(dirs, 1, 70, 3));
  size_t hidden = 9;
  OT_CHECK(ct_count_files(dir, &hidden) == 5 && hidden == 0, "stale temporary removed, foreign files kept");
  /* keep = 0 keeps everything; an older step saved later is never pruned away at once. */
  OT_EXPECT_OK(save(dirs, 1, 5, 0));
  OT_EXPECT_OK(optic_ckpt_list(dir, steps, 8, &count));
  OT_CHECK(count == 4 && steps[0] == 5);
  OT_EXPECT_OK(save(dirs, 1, 1, 1));
  OT_EXPECT_OK(optic_ckpt_list(dir, steps, 8, &count));
  OT_CHECK(count == 2 && steps[0] == 1 && steps[1] == 70, "count %zu", count);
  ct_rmdir(dir);
}

static void rollback_skips_corrupt(void) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  for (uint64_t s = 1; s <= 3; s++) OT_EXPECT_OK(save(dirs, 1, s, 0));
  flip(dir, 3, 5000); /* payload of the newest */
  size_t skipped = 0;
  OT_CHECK(rollback(dirs, 1, &skipped) == 2 && skipped == 1);
  optic_ckpt_entry t = entry(back);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, &t, 1, NULL, &rep));
  OT_CHECK(
      strstr(rep.first_skipped, "ckpt-00000000000000000003.optic") && strstr(rep.first_skipped, "SHA-256 mismatch"),
      "%s", rep.first_skipped);
  flip(dir, 2, 2);  /* header */
  flip(dir, 1, 70); /* index */
  OT_EXPECT_STATUS(optic_ckpt_restore_latest(dirs, 1, &t, 1, NULL, &rep), OPTIC_ERR_CORRUPT);
  OT_CHECK(rep.skipped == 3 && strstr(optic_last_error(), "all 3 checkpoint files were rejected"), "%s",
           optic_last_error());
  /* A checkpoint whose entries do not match the targets is skipped too. */
  float small[3];
  optic_ckpt_entry other = {"p", {OPTIC_F32, {.rank = 1, .dims = {3}}, small}};
  OT_EXPECT_OK(save(dirs, 1, 4, 0));
  OT_EXPECT_STATUS(optic_ckpt_restore_latest(dirs, 1, &other, 1, NULL, &rep), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(rep.first_skipped, "the target is f32[3]") != NULL, "%s", rep.first_skipped);
  ct_rmdir(dir);
}

static void replicas_and_repair(void) {
  char a[64], b[64], c[64];
  OT_CHECK(ct_mkdtemp(a, sizeof a) && ct_mkdtemp(b, sizeof b) && ct_mkdtemp(c, sizeof c));
  const char *dirs[3] = {a, b, c};
  for (uint64_t s = 1; s <= 3; s++) OT_EXPECT_OK(save(dirs, 3, s, 2));
  /* Newest step: corrupt in a, missing in b, fine in c. */
  flip(a, 3, 9000);
  remove_step(b, 3);
  optic_ckpt_entry t = entry(back);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 3, &t, 1, NULL, &rep));
  OT_CHECK(rep.step == 3 && rep.dir_index == 2 && rep.skipped == 1);
  optic_ckpt_repair_report rr = {.size = sizeof rr};
  OT_EXPECT_OK(optic_ckpt_repair(dirs, 3, NULL, &rr));
  OT_CHECK(rr.checked == 5 && rr.valid == 4 && rr.repaired == 2 && rr.unrecoverable == 0,
           "checked %zu valid %zu repaired %zu", rr.checked, rr.valid, rr.repaired);
  for (int d = 0; d < 3; d++) {
    size_t count, hidden = 9;
    uint64_t steps[4];
    OT_EXPECT_OK(optic_ckpt_list(dirs[d], steps, 4, &count));
    OT_CHECK(count == 2 && steps[0] == 2 && steps[1] == 3, "dir %d: step 1 was pruned and stays pruned", d);
    OT_CHECK(ct_count_files(dirs[d], &hidden) == 2 && hidden == 0);
    for (size_t i = 0; i < count; i++) {
      char path[160];
      optic_ckpt_path(dirs[d], steps[i], path, sizeof path);
      OT_EXPECT_OK(optic_ckpt_verify_file(path, NULL));
    }
  }
  OT_CHECK(rollback(dirs, 1, NULL) == 3);
  /* Nothing to do the second time. */
  OT_EXPECT_OK(optic_ckpt_repair(dirs, 3, NULL, &rr));
  OT_CHECK(rr.repaired == 0 && rr.valid == 6);
  /* A step corrupt everywhere is unrecoverable; the others still get repaired. */
  for (int d = 0; d < 3; d++) flip(dirs[d], 3, 200);
  flip(b, 2, 300);
  OT_EXPECT_STATUS(optic_ckpt_repair(dirs, 3, NULL, &rr), OPTIC_ERR_CORRUPT);
  OT_CHECK(rr.unrecoverable == 1 && rr.repaired == 1, "unrecoverable %zu repaired %zu", rr.unrecoverable, rr.repaired);
  OT_CHECK(strstr(optic_last_error(), "1 step(s) have no valid copy") != NULL, "%s", optic_last_error());
  OT_CHECK(rollback(dirs, 3, NULL) == 2);
  /* A whole replica lost: everything comes back. */
  ct_rmdir(c);
  OT_CHECK(mkdir(c, 0700) == 0);
  OT_EXPECT_STATUS(optic_ckpt_repair(dirs, 3, NULL, &rr), OPTIC_ERR_CORRUPT);
  size_t count;
  OT_EXPECT_OK(optic_ckpt_list(c, NULL, 0, &count));
  OT_CHECK(count == 1 && rr.repaired == 1, "the valid step 2 re-created in the empty replica");
  const char *missing[2] = {a, "/nonexistent/optic/dir"};
  OT_EXPECT_STATUS(optic_ckpt_repair(missing, 2, NULL, &rr), OPTIC_ERR_IO);
  ct_rmdir(a);
  ct_rmdir(b);
  ct_rmdir(c);
}

static void copy_step(const char *from_dir, uint64_t from, const char *to_dir, uint64_t to) {
  char a[160], b[160];
  optic_ckpt_path(from_dir, from, a, sizeof a);
  optic_ckpt_path(to_dir, to, b, sizeof b);
  size_t n;
  uint8_t *bytes = ct_read_file(a, &n);
  OT_CHECK(bytes != NULL && ct_write_file(b, bytes, n), "copy %s -> %s", a, b);
  free(bytes);
}

/* A file's name says its step; the file says it too, and they must agree. */
static void renamed_or_copied_is_rejected(void) {
  char dir[64], path[160], other[160];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  OT_EXPECT_OK(save(dirs, 1, 1, 0));
  OT_EXPECT_OK(save(dirs, 1, 2, 0));
  /* Step 2 copied to step 3's name: not valid, and the message names both steps. */
  copy_step(dir, 2, dir, 3);
  optic_ckpt_path(dir, 3, path, sizeof path);
  OT_EXPECT_STATUS(optic_ckpt_verify_file(path, NULL), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "step 3") && strstr(optic_last_error(), "step 2"), "%s", optic_last_error());
  /* Rollback skips it (counted, reported) and restores the real newest step, 2. */
  size_t skipped = 0;
  OT_CHECK(rollback(dirs, 1, &skipped) == 2 && skipped == 1, "skipped %zu", skipped);
  optic_ckpt_entry t = entry(back);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, &t, 1, NULL, &rep));
  OT_CHECK(strstr(rep.first_skipped, "ckpt-00000000000000000003.optic") && strstr(rep.first_skipped, "step 2"), "%s",
           rep.first_skipped);
  /* Step 2 renamed to step 9's name (the real step 2 gone): step 1 is the newest good one. */
  OT_CHECK(unlink(path) == 0);
  optic_ckpt_path(dir, 2, path, sizeof path);
  optic_ckpt_path(dir, 9, other, sizeof other);
  OT_CHECK(rename(path, other) == 0);
  OT_CHECK(rollback(dirs, 1, &skipped) == 1 && skipped == 1, "skipped %zu", skipped);
  /* Renamed to an older name (step 2 -> 0): rejected the same way. */
  optic_ckpt_path(dir, 0, path, sizeof path);
  OT_CHECK(rename(other, path) == 0);
  OT_EXPECT_STATUS(optic_ckpt_verify_file(path, NULL), OPTIC_ERR_CORRUPT);
  OT_CHECK(rollback(dirs, 1, &skipped) == 1 && skipped == 0, "the misnamed step 0 is older than step 1");
  OT_CHECK(unlink(path) == 0);
  /* Repair rewrites a misnamed copy from a replica that holds the real step. */
  char b[64];
  OT_CHECK(ct_mkdtemp(b, sizeof b));
  const char *both[2] = {dir, b};
  const char *only_b[1] = {b};
  OT_EXPECT_OK(save(only_b, 1, 1, 0));
  OT_EXPECT_OK(save(only_b, 1, 4, 0));
  copy_step(dir, 1, dir, 4);
  optic_ckpt_repair_report rr = {.size = sizeof rr};
  OT_EXPECT_OK(optic_ckpt_repair(both, 2, NULL, &rr));
  OT_CHECK(rr.checked == 4 && rr.valid == 3 && rr.repaired == 1, "checked %zu valid %zu repaired %zu", rr.checked,
           rr.valid, rr.repaired);
  OT_CHECK(rollback(dirs, 1, &skipped) == 4 && skipped == 0, "repaired step 4 restores from the first directory");
  ct_rmdir(dir);
  ct_rmdir(b);
}

static const ot_case cases[] = {
    {"naming_listing_and_keep", naming_listing_and_keep},
    {"rollback_skips_corrupt", rollback_skips_corrupt},
    {"replicas_and_repair", replicas_and_repair},
    {"renamed_or_copied_is_rejected", renamed_or_copied_is_rejected},
};
OT_MAIN(cases)
