/* I/O error paths through the injectable layer: ENOSPC and EIO on open,
 * write, the payload fsync, the final fsync, close, rename and the directory
 * fsync; short writes; reads failing with EIO. (The three writes of a small
 * save: the payload, the index, the footer.) Every failing save returns
 * OPTIC_ERR_IO with a message naming the call and errno's text, leaves no
 * temporary file, and the previous checkpoint still restores bit-exact. */
#include <fcntl.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

typedef enum { OP_OPEN, OP_PWRITE, OP_FSYNC, OP_CLOSE, OP_RENAME, OP_FSYNC_DIR, OP_PREAD, OP_COUNT } op_kind;
static const char *op_names[OP_COUNT] = {"open", "pwrite", "fsync", "close", "rename", "fsync_dir", "pread"};

/* Fails the `nth` call (1-based) of `op` with -err; counts every call. */
typedef struct fault {
  op_kind op;
  int nth, err;
  bool short_writes; /* pwrite transfers at most 1000 bytes per call */
  int calls[OP_COUNT];
} fault;

static const optic_ckpt_io *posix(void) { return optic_ckpt_io_posix(); }
static int hit(fault *f, op_kind op) { return ++f->calls[op] == f->nth && f->op == op ? -f->err : 0; }

static int f_open(void *u, const char *p, int fl, int m) {
  int e = hit(u, OP_OPEN);
  return e ? e : posix()->open(NULL, p, fl, m);
}
static int64_t f_pwrite(void *u, int fd, const void *b, size_t n, uint64_t off) {
  fault *f = u;
  int e = hit(f, OP_PWRITE);
  if (e) return e;
  return posix()->pwrite(NULL, fd, b, f->short_writes && n > 1000 ? 1000 : n, off);
}
static int64_t f_pread(void *u, int fd, void *b, size_t n, uint64_t off) {
  int e = hit(u, OP_PREAD);
  return e ? e : posix()->pread(NULL, fd, b, n, off);
}
static int f_fsync(void *u, int fd) {
  int e = hit(u, OP_FSYNC);
  return e ? e : posix()->fsync(NULL, fd);
}
static int f_close(void *u, int fd) {
  int e = hit(u, OP_CLOSE);
  int rc = posix()->close(NULL, fd); /* the descriptor is gone either way, as with close(2) */
  return e ? e : rc;
}
static int f_rename(void *u, const char *a, const char *b) {
  int e = hit(u, OP_RENAME);
  return e ? e : posix()->rename(NULL, a, b);
}
static int f_fsync_dir(void *u, const char *d) {
  int e = hit(u, OP_FSYNC_DIR);
  return e ? e : posix()->fsync_dir(NULL, d);
}

static optic_ckpt_io faulty(fault *f) {
  optic_ckpt_io io = *posix();
  io.user = f;
  io.open = f_open;
  io.pwrite = f_pwrite;
  io.pread = f_pread;
  io.fsync = f_fsync;
  io.close = f_close;
  io.rename = f_rename;
  io.fsync_dir = f_fsync_dir;
  return io;
}

enum { FLOATS = 300000 }; /* 1.2 MB: several write pieces at a 64 KiB chunk */
static float *good, *other, *back;

static optic_status save_with(const char *dir, uint64_t step, float *data, const optic_ckpt_io *io) {
  optic_ckpt_entry e = {"w", {OPTIC_F32, {.rank = 1, .dims = {FLOATS}}, data}};
  optic_ckpt_meta m = optic_ckpt_meta_str("note", "io test");
  optic_ckpt_save_options o = {.size = sizeof o, .threads = 2, .chunk_log2 = 16, .keep = 1, .io = io};
  return optic_ckpt_save(&dir, 1, step, &e, 1, &m, 1, &o);
}

static void previous_restores(const char *dir, uint64_t want_step, const float *want) {
  optic_ckpt_entry t = {"w", {OPTIC_F32, {.rank = 1, .dims = {FLOATS}}, back}};
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  memset(back, 0, FLOATS * 4);
  OT_EXPECT_OK(optic_ckpt_restore_latest(&dir, 1, &t, 1, NULL, &rep));
  OT_CHECK(rep.step == want_step && memcmp(back, want, FLOATS * 4) == 0, "restored step %llu",
           (unsigned long long)rep.step);
}

static void save_failures_keep_the_old_checkpoint(void) {
  good = malloc(FLOATS * 4), other = malloc(FLOATS * 4), back = malloc(FLOATS * 4);
  ct_fill(good, FLOATS * 4, 1);
  ct_fill(other, FLOATS * 4, 2);
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  OT_EXPECT_OK(save_with(dir, 1, good, NULL));
  const struct {
    op_kind op;
    int nth;
    const char *words; /* in the message */
  } cases[] = {
      {OP_OPEN, 1, "cannot create"}, {OP_PWRITE, 1, "writing"}, {OP_PWRITE, 2, "writing"}, {OP_PWRITE, 3, "writing"},
      {OP_FSYNC, 1, "fsync of"},     {OP_FSYNC, 2, "fsync of"}, {OP_CLOSE, 1, "close of"}, {OP_RENAME, 1, "rename"},
  };
  const int errs[] = {ENOSPC, EIO};
  int runs = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (size_t e = 0; e < 2; e++) {
      fault f = {.op = cases[c].op, .nth = cases[c].nth, .err = errs[e]};
      optic_ckpt_io io = faulty(&f);
      optic_status st = save_with(dir, 2, other, &io);
      OT_CHECK(st == OPTIC_ERR_IO, "%s #%d: %s", op_names[cases[c].op], cases[c].nth, optic_status_name(st));
      OT_CHECK(strstr(optic_last_error(), cases[c].words) && strstr(optic_last_error(), strerror(errs[e])),
               "%s #%d message: %s", op_names[cases[c].op], cases[c].nth, optic_last_error());
      OT_CHECK(f.calls[cases[c].op] >= cases[c].nth, "%s #%d was never reached", op_names[cases[c].op], cases[c].nth);
      size_t hidden = 9;
      OT_CHECK(ct_count_files(dir, &hidden) == 1 && hidden == 0, "%s #%d: files left behind", op_names[cases[c].op],
               cases[c].nth);
      previous_restores(dir, 1, good);
      runs++;
    }
  }
  printf("  %d injected failures: all OPTIC_ERR_IO, old checkpoint intact, no temporary left\n", runs);
  /* Directory fsync failing after the rename: the new file is complete and says so. */
  fault f = {.op = OP_FSYNC_DIR, .nth = 1, .err = EIO};
  optic_ckpt_io io = faulty(&f);
  OT_EXPECT_STATUS(save_with(dir, 2, other, &io), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "fsync of the directory") && strstr(optic_last_error(), "is complete"), "%s",
           optic_last_error());
  previous_restores(dir, 2, other);
  /* Short writes are not errors. */
  fault s = {.op = OP_COUNT, .short_writes = true};
  io = faulty(&s);
  OT_EXPECT_OK(save_with(dir, 3, good, &io));
  OT_CHECK(s.calls[OP_PWRITE] > 1000, "%d writes", s.calls[OP_PWRITE]);
  previous_restores(dir, 3, good);
  OT_CHECK(ct_count_files(dir, NULL) == 1, "keep = 1 leaves one checkpoint");
  ct_rmdir(dir);
}

static void read_errors(void) {
  char dir[64], path[160];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  OT_EXPECT_OK(save_with(dir, 1, good, NULL));
  optic_ckpt_path(dir, 1, path, sizeof path);
  for (int nth = 1; nth <= 6; nth++) {
    fault f = {.op = OP_PREAD, .nth = nth, .err = EIO};
    optic_ckpt_io io = faulty(&f);
    optic_ckpt_read_options ro = {.size = sizeof ro, .threads = 2, .io = &io};
    optic_status st = optic_ckpt_verify_file(path, &ro);
    OT_CHECK(st == OPTIC_ERR_IO && strstr(optic_last_error(), "reading") && strstr(optic_last_error(), strerror(EIO)),
             "pread #%d: %s: %s", nth, optic_status_name(st), optic_last_error());
  }
  fault f = {.op = OP_OPEN, .nth = 1, .err = EACCES};
  optic_ckpt_io io = faulty(&f);
  optic_ckpt_read_options ro = {.size = sizeof ro, .io = &io};
  OT_EXPECT_STATUS(optic_ckpt_verify_file(path, &ro), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "cannot open") != NULL);
  /* Repair: a failing write into the replica leaves the old (missing) state and reports IO. */
  char dir2[64];
  OT_CHECK(ct_mkdtemp(dir2, sizeof dir2));
  const char *dirs[2] = {dir, dir2};
  fault w = {.op = OP_PWRITE, .nth = 2, .err = ENOSPC};
  io = faulty(&w);
  optic_ckpt_save_options so = {.size = sizeof so, .io = &io};
  optic_ckpt_repair_report rep = {.size = sizeof rep};
  OT_EXPECT_STATUS(optic_ckpt_repair(dirs, 2, &so, &rep), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), strerror(ENOSPC)) != NULL, "%s", optic_last_error());
  OT_CHECK(ct_count_files(dir2, NULL) == 0, "repair left a file behind");
  OT_EXPECT_OK(optic_ckpt_repair(dirs, 2, NULL, &rep));
  OT_CHECK(rep.repaired == 1 && rep.valid == 1);
  ct_rmdir(dir);
  ct_rmdir(dir2);
  free(good), free(other), free(back);
}

/* Paths that are not checkpoint files: the message says what they are, with
 * no errno text that does not apply; a FIFO is refused without blocking. */
static void not_a_regular_file(void) {
  char dir[64], fifo[128];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  OT_EXPECT_STATUS(optic_ckpt_verify_file(dir, NULL), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "is a directory") && !strstr(optic_last_error(), "Invalid argument"), "%s",
           optic_last_error());
  snprintf(fifo, sizeof fifo, "%s/pipe.optic", dir);
  OT_CHECK(mkfifo(fifo, 0600) == 0);
  alarm(20); /* watchdog: opening a FIFO for reading must not wait for a writer */
  OT_EXPECT_STATUS(optic_ckpt_verify_file(fifo, NULL), OPTIC_ERR_IO);
  alarm(0);
  OT_CHECK(strstr(optic_last_error(), "is not a regular file") && !strstr(optic_last_error(), "Invalid argument"), "%s",
           optic_last_error());
  ct_rmdir(dir);
}

static const ot_case cases[] = {
    {"save_failures_keep_the_old_checkpoint", save_failures_keep_the_old_checkpoint},
    {"read_errors", read_errors},
    {"not_a_regular_file", not_a_regular_file},
};
OT_MAIN(cases)
