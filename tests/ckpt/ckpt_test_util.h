/* Helpers shared by the checkpoint tests: private temporary directories
 * under /tmp (removed afterwards), deterministic tensor contents from a seed,
 * whole-file reads and writes, and an in-memory file for the I/O layer. */
#ifndef OPTIC_TESTS_CKPT_UTIL_H
#define OPTIC_TESTS_CKPT_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optic/optic.h>

/* A fresh directory /tmp/optic-ckpt-test-XXXXXX (path into buf, >= 64 bytes). */
static inline bool ct_mkdtemp(char *buf, size_t size) {
  snprintf(buf, size, "/tmp/optic-ckpt-test-XXXXXX");
  return mkdtemp(buf) != NULL;
}

/* Removes dir and the plain files in it. */
static inline void ct_rmdir(const char *dir) {
  DIR *d = opendir(dir);
  if (d != NULL) {
    char path[4352];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Number of directory entries (files) in dir, and of those starting with '.'. */
static inline size_t ct_count_files(const char *dir, size_t *hidden) {
  size_t n = 0, h = 0;
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    n++;
    if (e->d_name[0] == '.') h++;
  }
  closedir(d);
  if (hidden) *hidden = h;
  return n;
}

/* splitmix64: a stream of pseudo-random numbers from a seed. */
static inline uint64_t ct_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline void ct_fill(void *p, size_t n, uint64_t seed) {
  uint8_t *b = p;
  uint64_t s = seed;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = ct_next(&s);
    memcpy(b + i, &v, 8);
  }
  for (uint64_t v = ct_next(&s); i < n; i++, v >>= 8) b[i] = (uint8_t)v;
}

static inline uint8_t *ct_read_file(const char *path, size_t *size) {
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static inline bool ct_write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* ------------------------------------------- an in-memory file for reading */

/* optic_ckpt_io whose every open returns fd 3 on the bytes in ct_memfile
 * (read-only). Lets corruption tests and the fuzzer parse thousands of
 * variants without touching the disk. */
typedef struct ct_memfile {
  const uint8_t *data;
  size_t size;
} ct_memfile;

static inline int ct_mem_open(void *user, const char *path, int flags, int mode) {
  (void)user, (void)path, (void)mode;
  return (flags & 3) == 0 ? 3 : -EROFS;
}
static inline int64_t ct_mem_pread(void *user, int fd, void *buf, size_t n, uint64_t off) {
  const ct_memfile *m = user;
  (void)fd;
  if (off >= m->size) return 0;
  size_t k = m->size - (size_t)off < n ? m->size - (size_t)off : n;
  memcpy(buf, m->data + off, k);
  return (int64_t)k;
}
static inline int64_t ct_mem_size(void *user, int fd) {
  (void)fd;
  return (int64_t)((const ct_memfile *)user)->size;
}
static inline int ct_mem_close(void *user, int fd) {
  (void)user, (void)fd;
  return 0;
}

static inline optic_ckpt_io ct_mem_io(ct_memfile *m) {
  optic_ckpt_io io = *optic_ckpt_io_posix();
  io.user = m;
  io.open = ct_mem_open;
  io.pread = ct_mem_pread;
  io.file_size = ct_mem_size;
  io.close = ct_mem_close;
  return io;
}

#endif
