/* Checkpoint benchmarks: optic_ckpt_save_file and reader + restore (every
 * byte hashed and checked) of B bytes in 64 f32 tensors, B = 16 MiB (smoke),
 * 256 MiB (optic report's default set) and 1 GiB (--full), in a private temporary directory under $OPTIC_BENCH_TMPDIR (else
 * $TMPDIR, else /tmp) that is removed afterwards. Their peers in the same run:
 * peer/write_fsync (same bytes, write + fsync) for save and peer/sha256 at 2
 * threads for restore (the file is in the page cache). Reports GB/s. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optic/ckpt.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"

enum { TENSORS = 64 };

/* The hashing threads of default options (0: OpenMP's max, at most 64). */
static int omp_max_threads(void) {
  int t = omp_get_max_threads();
  return t < 1 ? 1 : t > 64 ? 64 : t;
}

static const char *temp_root(void) {
  const char *dir = getenv("OPTIC_BENCH_TMPDIR");
  if (dir == NULL || *dir == '\0') dir = getenv("TMPDIR");
  if (dir == NULL || *dir == '\0') dir = "/tmp";
  return dir;
}

/* The source tensors and restore targets, kept across runs of one size so
 * each run does not fault in a fresh GiB. */
static struct {
  size_t bytes;
  float *src, *dst;
} cache;

static bool buffers(size_t bytes) {
  if (cache.bytes == bytes) return true;
  optic_free(NULL, cache.src, cache.bytes, 0);
  optic_free(NULL, cache.dst, cache.bytes, 0);
  cache.bytes = 0;
  if (optic_alloc(NULL, bytes, 0, (void **)&cache.src) != OPTIC_OK) return false;
  if (optic_alloc(NULL, bytes, 0, (void **)&cache.dst) != OPTIC_OK) {
    optic_free(NULL, cache.src, bytes, 0);
    return false;
  }
  cache.bytes = bytes;
  bench_fill_f32(cache.src, bytes / 4, 1.0f, 2.0f);
  memset(cache.dst, 0, bytes);
  return true;
}

static char names[TENSORS][16];

static void entries(float *base, size_t bytes, optic_ckpt_entry *e) {
  int64_t per = (int64_t)(bytes / 4 / TENSORS);
  for (int i = 0; i < TENSORS; i++) {
    snprintf(names[i], sizeof names[i], "param%02d", i);
    e[i] = (optic_ckpt_entry){names[i], {OPTIC_F32, {.rank = 1, .dims = {per}}, base + (size_t)i * (size_t)per}};
  }
}

static void fail(optic_bench_state *st, const char *what, const char *dir) {
  char msg[1024];
  snprintf(msg, sizeof msg, "ckpt %s: %s", what, optic_last_error());
  optic_bench_skip_with_error(st, msg);
  while (optic_bench_keep_running(st)) {}
  if (dir != NULL) rmdir(dir);
}

static void run_save(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  char dir[4096], path[4160];
  snprintf(dir, sizeof dir, "%s/optic-bench-ckpt-XXXXXX", temp_root());
  if (mkdtemp(dir) == NULL || !buffers(bytes)) {
    fail(st, "setup (temp dir or memory)", NULL);
    return;
  }
  snprintf(path, sizeof path, "%s/save.optic", dir);
  optic_ckpt_entry e[TENSORS];
  entries(cache.src, bytes, e);
  optic_ckpt_meta m = optic_ckpt_meta_str("bench", "save");
  /* One untimed save first, as the peer writes once untimed: on this VM the
   * first large write of a run can take 2-5x longer (page-cache pages the
   * hypervisor has not backed yet fault in during the copy), at random, for
   * either side; the timed saves then measure the steady state a trainer
   * that checkpoints repeatedly sees. */
  if (optic_ckpt_save_file(path, e, TENSORS, &m, 1, NULL) != OPTIC_OK) {
    unlink(path);
    fail(st, "save", dir);
    return;
  }
  unlink(path);
  while (optic_bench_keep_running(st)) {
    if (optic_ckpt_save_file(path, e, TENSORS, &m, 1, NULL) != OPTIC_OK) {
      unlink(path);
      fail(st, "save", dir);
      return;
    }
    optic_bench_pause(st);
    unlink(path); /* a fresh file each time, as the write+fsync peer */
    optic_bench_resume(st);
  }
  rmdir(dir);
  bench_report_rates(st, (double)bytes, 0.0);
  optic_bench_set_label(st, temp_root());
  /* Saved with default options: hashing on OpenMP's threads. */
  bench_report_estimate(st, bench_ckpt_save_ns(omp_max_threads(), (double)bytes), &(optic_cost){0, 0, (double)bytes});
}

static void run_restore(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  char dir[4096], path[4160];
  snprintf(dir, sizeof dir, "%s/optic-bench-ckpt-XXXXXX", temp_root());
  if (mkdtemp(dir) == NULL || !buffers(bytes)) {
    fail(st, "setup (temp dir or memory)", NULL);
    return;
  }
  snprintf(path, sizeof path, "%s/restore.optic", dir);
  optic_ckpt_entry src[TENSORS], dst[TENSORS];
  entries(cache.src, bytes, src);
  entries(cache.dst, bytes, dst);
  optic_ckpt_save_options so = {.size = sizeof so, .threads = 2};
  if (optic_ckpt_save_file(path, src, TENSORS, NULL, 0, &so) != OPTIC_OK) {
    fail(st, "save", dir);
    return;
  }
  bool ok = true;
  while (ok && optic_bench_keep_running(st)) {
    optic_ckpt_reader_t *r = NULL;
    ok = optic_ckpt_reader_create(path, NULL, &r) == OPTIC_OK && optic_ckpt_restore(r, dst, TENSORS) == OPTIC_OK;
    optic_ckpt_reader_destroy(r);
  }
  if (ok && memcmp(cache.src, cache.dst, bytes) != 0) {
    optic_bench_skip_with_error(st, "ckpt restore: restored bytes differ from the saved ones");
    ok = false;
  }
  if (!ok) fail(st, "restore", NULL);
  unlink(path);
  rmdir(dir);
  if (!ok) return;
  bench_report_rates(st, (double)bytes, 0.0);
  bench_report_estimate(st, bench_ckpt_restore_ns(omp_max_threads(), (double)bytes),
                        &(optic_cost){0, 0, (double)bytes});
}

void bench_register_ckpt(void) {
  optic_bench *b = optic_bench_register("ckpt/save/tensors:64", run_save, NULL);
  OPTIC_BENCH_ARGS(b, (int64_t)16 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)256 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)1 << 30);
  OPTIC_BENCH_ARG_NAMES(b, "bytes");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
  b = optic_bench_register("ckpt/restore_verify/tensors:64", run_restore, NULL);
  OPTIC_BENCH_ARGS(b, (int64_t)16 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)256 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)1 << 30);
  OPTIC_BENCH_ARG_NAMES(b, "bytes");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
