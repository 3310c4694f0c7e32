/* The storage peer: write a file of 4 MiB, 256 MiB or 1 GiB in 1 MiB writes from
 * a resident source buffer of the same size (as a checkpoint's tensors are),
 * fsync it and close it, per iteration, in a private temporary directory (under
 * $OPTIC_BENCH_TMPDIR, else $TMPDIR, else /tmp) that is removed afterwards.
 * Reports GB/s of bytes made durable: the bound for checkpoint saves. Never
 * writes outside its own directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_util.h"

enum { CHUNK_BYTES = 1 << 20 };

static const char *temp_root(void) {
  const char *dir = getenv("OPTIC_BENCH_TMPDIR");
  if (dir == NULL || *dir == '\0') dir = getenv("TMPDIR");
  if (dir == NULL || *dir == '\0') dir = "/tmp";
  return dir;
}

/* Writes src[0, bytes) to path in CHUNK_BYTES writes, fsyncs and closes; 0 or
 * an errno value. */
static int write_file(const char *path, const unsigned char *src, size_t bytes) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  int err = 0;
  for (size_t done = 0; done < bytes && err == 0;) {
    size_t want = bytes - done < CHUNK_BYTES ? bytes - done : CHUNK_BYTES;
    ssize_t got = write(fd, src + done, want);
    if (got < 0 && errno != EINTR) err = errno;
    if (got > 0) done += (size_t)got;
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  return err;
}

static void run_write_fsync(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  char dir[4096], path[4160], msg[4300];
  snprintf(dir, sizeof dir, "%s/optic-bench-XXXXXX", temp_root());
  if (mkdtemp(dir) == NULL) {
    snprintf(msg, sizeof msg, "write_fsync: cannot create a directory under %s: %s", temp_root(), strerror(errno));
    optic_bench_skip_with_error(st, msg);
    return;
  }
  snprintf(path, sizeof path, "%s/data", dir);
  /* The whole source, not one chunk written again and again: a 1 MiB chunk
   * stays in cache and its process stays small, which on this VM left the
   * page cache the warm pages its previous iteration freed, while a real
   * save (and ckpt/save) copies every byte from memory. */
  const unsigned char *src = (const unsigned char *)bench_f32_array(BENCH_INPUT_SLOT0, bytes / sizeof(float));
  int err = src == NULL ? ENOMEM : 0;
  /* One untimed write first, as ckpt/save does (see there). */
  if (err == 0) err = write_file(path, src, bytes);
  unlink(path);
  while (err == 0 && optic_bench_keep_running(st)) {
    err = write_file(path, src, bytes);
    /* A fresh file each time: deleting the old one is not part of a save. */
    optic_bench_pause(st);
    unlink(path);
    optic_bench_resume(st);
  }
  if (err != 0) {
    /* The loop may have stopped early: finish it so Google Benchmark accepts
     * the run, which the error marks as failed. */
    snprintf(msg, sizeof msg, "write_fsync: writing %s: %s", path, strerror(err));
    optic_bench_skip_with_error(st, msg);
    while (optic_bench_keep_running(st)) {}
  }
  unlink(path);
  rmdir(dir);
  if (err != 0) return;
  bench_report_rates(st, (double)bytes, 0.0);
  optic_bench_set_label(st, temp_root());
}

void bench_register_write_fsync(void) {
  optic_bench *b = optic_bench_register("peer/write_fsync", run_write_fsync, NULL);
  OPTIC_BENCH_ARGS(b, (int64_t)4 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)256 << 20);
  OPTIC_BENCH_ARGS(b, (int64_t)1 << 30); /* the checkpoint save bar's size */
  OPTIC_BENCH_ARG_NAMES(b, "bytes");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
