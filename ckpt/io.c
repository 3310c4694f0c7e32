/* The POSIX I/O layer checkpoints go through by default, the helpers that
 * loop over short reads and writes, and SHA-256 through OpenSSL EVP. Every
 * failure becomes an optic status with the call, the path and errno's text. */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/internal.h"
#include "core/error.h"

static int neg_errno(void) { return errno > 0 ? -errno : -EIO; }

static int posix_open(void *user, const char *path, int flags, int mode) {
  (void)user;
  /* Read-only: O_NONBLOCK so a FIFO opens at once (and is then refused by
   * file_size) instead of waiting for a writer; no effect on regular files. */
  if ((flags & O_ACCMODE) == O_RDONLY) flags |= O_NONBLOCK;
  int fd = open(path, flags | O_CLOEXEC, mode);
  return fd < 0 ? neg_errno() : fd;
}
static int64_t posix_pread(void *user, int fd, void *buf, size_t n, uint64_t off) {
  (void)user;
  for (;;) {
    ssize_t got = pread(fd, buf, n, (off_t)off);
    if (got >= 0) return got;
    if (errno != EINTR) return neg_errno();
  }
}
static int64_t posix_pwrite(void *user, int fd, const void *buf, size_t n, uint64_t off) {
  (void)user;
  for (;;) {
    ssize_t got = pwrite(fd, buf, n, (off_t)off);
    if (got >= 0) return got;
    if (errno != EINTR) return neg_errno();
  }
}
static int64_t posix_file_size(void *user, int fd) {
  (void)user;
  struct stat st;
  if (fstat(fd, &st) != 0) return neg_errno();
  if (S_ISDIR(st.st_mode)) return -EISDIR;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  return (int64_t)st.st_size;
}
static int posix_fsync(void *user, int fd) {
  (void)user;
  return fsync(fd) == 0 ? 0 : neg_errno();
}
static int posix_close(void *user, int fd) {
  (void)user;
  return close(fd) == 0 ? 0 : neg_errno();
}
static int posix_rename(void *user, const char *from, const char *to) {
  (void)user;
  return rename(from, to) == 0 ? 0 : neg_errno();
}
static int posix_unlink(void *user, const char *path) {
  (void)user;
  return unlink(path) == 0 ? 0 : neg_errno();
}
static int posix_fsync_dir(void *user, const char *dir) {
  (void)user;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return neg_errno();
  int rc = fsync(fd) == 0 ? 0 : neg_errno();
  close(fd);
  return rc;
}
static int posix_writeback(void *user, int fd, uint64_t off, uint64_t n) {
  (void)user;
#if defined(__linux__)
  return sync_file_range(fd, (off_t)off, (off_t)n, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : neg_errno();
#else
  (void)fd, (void)off, (void)n;
  return 0;
#endif
}

static const optic_ckpt_io posix_io = {
    .size = sizeof(optic_ckpt_io),
    .user = NULL,
    .open = posix_open,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .file_size = posix_file_size,
    .fsync = posix_fsync,
    .close = posix_close,
    .rename = posix_rename,
    .unlink = posix_unlink,
    .fsync_dir = posix_fsync_dir,
    .writeback = posix_writeback,
};

const optic_ckpt_io *optic_ckpt_io_posix(void) { return &posix_io; }

const optic_ckpt_io *ckpt_io_or_default(const optic_ckpt_io *io) { return io != NULL ? io : &posix_io; }

optic_status ckpt_io_fail(int err, const char *op, const char *what, const char *path) {
  return optic_fail(OPTIC_ERR_IO, "%s: %s %s: %s", op, what, path, strerror(err < 0 ? -err : err));
}

optic_status ckpt_write_full(const optic_ckpt_io *io, int fd, const void *buf, size_t n, uint64_t off, const char *op,
                             const char *path) {
  const uint8_t *p = buf;
  while (n > 0) {
    int64_t got = io->pwrite(io->user, fd, p, n, off);
    if (got < 0)
      return optic_fail(OPTIC_ERR_IO, "%s: writing %s at byte %llu: %s", op, path, (unsigned long long)off,
                        strerror((int)-got));
    if (got == 0)
      return optic_fail(OPTIC_ERR_IO,
                        "%s: writing %s at byte %llu: the write made no progress (0 of %zu bytes "
                        "written, no error reported)",
                        op, path, (unsigned long long)off, n);
    if ((uint64_t)got > n)
      return optic_fail(OPTIC_ERR_IO, "%s: writing %s: the I/O layer wrote more than asked", op, path);
    p += got, n -= (size_t)got, off += (uint64_t)got;
  }
  return OPTIC_OK;
}

optic_status ckpt_read_full(const optic_ckpt_io *io, int fd, void *buf, size_t n, uint64_t off, size_t *got_out,
                            const char *op, const char *path) {
  uint8_t *p = buf;
  size_t done = 0;
  while (done < n) {
    int64_t got = io->pread(io->user, fd, p + done, n - done, off + done);
    if (got < 0)
      return optic_fail(OPTIC_ERR_IO, "%s: reading %s at byte %llu: %s", op, path, (unsigned long long)(off + done),
                        strerror((int)-got));
    if (got == 0) break;
    if ((uint64_t)got > n - done)
      return optic_fail(OPTIC_ERR_IO, "%s: reading %s: the I/O layer read more than asked", op, path);
    done += (size_t)got;
  }
  *got_out = done;
  return OPTIC_OK;
}

optic_status ckpt_read_exact(const optic_ckpt_io *io, int fd, void *buf, size_t n, uint64_t off, const char *op,
                             const char *path) {
  size_t got = 0;
  optic_status st = ckpt_read_full(io, fd, buf, n, off, &got, op, path);
  if (st != OPTIC_OK) return st;
  if (got < n)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: %s: truncated at byte %llu", op, path, (unsigned long long)(off + got));
  return OPTIC_OK;
}

optic_status ckpt_sha256(const void *data, size_t n, uint8_t out[OPTIC_CKPT_DIGEST_BYTES]) {
  unsigned int len = 0;
  if (EVP_Digest(data, n, out, &len, EVP_sha256(), NULL) != 1 || len != OPTIC_CKPT_DIGEST_BYTES)
    return optic_fail(OPTIC_ERR_INTERNAL, "ckpt: OpenSSL EVP SHA-256 failed");
  return OPTIC_OK;
}

int ckpt_threads(int requested) {
  int t = requested > 0 ? requested : omp_get_max_threads();
  if (t < 1) t = 1;
  if (t > CKPT_MAX_THREADS) t = CKPT_MAX_THREADS;
  return t;
}
