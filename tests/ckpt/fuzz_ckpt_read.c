/* libFuzzer target for the checkpoint reader: the input is a checkpoint file
 * served from memory through the I/O layer. The reader must never crash,
 * leak or allocate more than the input allows. Invariants (abort on a
 * break): a file that verifies restores every entry (into library buffers
 * and into caller tensors) with OK, and saving what it restored, with its
 * metadata, chunk size and step, reproduces the input byte for byte (the
 * format is canonical) when the input has the current format version; an
 * older version's re-save (in the current version) verifies instead. Each input is tried as is and, when its header's sizes fit, with
 * the footer's index SHA-256 recomputed, so mutations get past the hash into
 * the table and metadata validation. Seeds: tests/data/fuzz/ckpt_read/
 * (docs/fuzzing.md). */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/ckpt/ckpt_test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A write-only in-memory file for the re-save (one file at a time). */
typedef struct memout {
  uint8_t *buf;
  size_t size, cap;
} memout;

static int out_open(void *u, const char *p, int f, int m) {
  (void)u, (void)p, (void)f, (void)m;
  return 4;
}
static int64_t out_pwrite(void *u, int fd, const void *b, size_t n, uint64_t off) {
  memout *o = u;
  (void)fd;
  if (off + n > o->cap) {
    size_t cap = (size_t)(off + n) * 2;
    uint8_t *g = realloc(o->buf, cap);
    if (g == NULL) return -12;
    memset(g + o->cap, 0, cap - o->cap);
    o->buf = g, o->cap = cap;
  }
  memcpy(o->buf + off, b, n);
  if (off + n > o->size) o->size = (size_t)(off + n);
  return (int64_t)n;
}
static int out_ok_fd(void *u, int fd) {
  (void)u, (void)fd;
  return 0;
}
static int out_ok_path(void *u, const char *p) {
  (void)u, (void)p;
  return 0;
}
static int out_rename(void *u, const char *a, const char *b) {
  (void)u, (void)a, (void)b;
  return 0;
}

static void read_one(const uint8_t *data, size_t size);

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_one(data, size);
  if (size < 128) return 0;
  uint64_t index = le64(data + 32), footer = le64(data + 48);
  if (index > size || footer > size - 64) return 0;
  uint8_t *copy = malloc(size);
  memcpy(copy, data, size);
  unsigned int len = 0;
  EVP_Digest(copy, (size_t)index, copy + footer + 16, &len, EVP_sha256(), NULL);
  read_one(copy, size);
  free(copy);
  return 0;
}

static void read_one(const uint8_t *data, size_t size) {
  ct_memfile mf = {data, size};
  optic_ckpt_io io = ct_mem_io(&mf);
  optic_ckpt_read_options ro = {.size = sizeof ro, .threads = 1, .io = &io};
  optic_ckpt_reader_t *r = NULL;
  if (optic_ckpt_reader_create("fuzz", &ro, &r) != OPTIC_OK) return;
  size_t n = optic_ckpt_entry_count(r), nm = optic_ckpt_meta_count(r);
  bool valid = optic_ckpt_verify(r) == OPTIC_OK;
  optic_ckpt_entry *e = calloc(n + 1, sizeof *e);
  optic_ckpt_meta *m = calloc(nm + 1, sizeof *m);
  uint64_t bytes_total = 0;
  for (size_t i = 0; i < n; i++) {
    optic_ckpt_entry_info info;
    size_t back = 0;
    if (optic_ckpt_entry_at(r, i, &info) != OPTIC_OK || optic_ckpt_find(r, info.name, &back) != OPTIC_OK || back != i)
      abort();
    if (info.bytes > size) abort(); /* a declared size larger than the file got through */
    bytes_total += info.bytes;
    optic_tensor t;
    optic_status st = optic_ckpt_restore_alloc(r, info.name, NULL, &t);
    if (valid && st != OPTIC_OK) abort();
    if (st == OPTIC_OK) {
      e[i].name = info.name;
      e[i].tensor = t;
    }
  }
  if (bytes_total > size) abort();
  for (size_t i = 0; i < nm; i++) {
    const void *v;
    size_t len;
    if (optic_ckpt_meta_at(r, i, &m[i].key, &v, &len) != OPTIC_OK) abort();
    m[i].value = v;
    m[i].value_len = len;
  }
  if (valid) {
    /* Into caller tensors too, then the canonical re-save. */
    if (optic_ckpt_restore(r, e, n) != OPTIC_OK) abort();
    memout out = {0};
    optic_ckpt_io wio = *optic_ckpt_io_posix();
    wio.user = &out;
    wio.open = out_open;
    wio.pwrite = out_pwrite;
    wio.fsync = out_ok_fd;
    wio.close = out_ok_fd;
    wio.rename = out_rename;
    wio.unlink = out_ok_path;
    wio.fsync_dir = out_ok_path;
    wio.writeback = NULL;
    uint32_t chunk = optic_ckpt_chunk_bytes(r), log2 = 0;
    while ((1u << log2) < chunk) log2++;
    optic_ckpt_save_options so = {.size = sizeof so, .threads = 1, .chunk_log2 = log2, .io = &wio};
    so.record_step = optic_ckpt_step(r, &so.step) == OPTIC_OK;
    if (optic_ckpt_save_file("fuzz.optic", e, n, m, nm, &so) != OPTIC_OK) abort();
    if (optic_ckpt_format_version(r) == OPTIC_CKPT_FORMAT_VERSION) {
      if (out.size != size || memcmp(out.buf, data, size) != 0) abort();
    } else {
      ct_memfile again = {out.buf, out.size};
      optic_ckpt_io aio = ct_mem_io(&again);
      optic_ckpt_read_options aro = {.size = sizeof aro, .threads = 1, .io = &aio};
      if (optic_ckpt_verify_file("fuzz-resaved", &aro) != OPTIC_OK) abort();
    }
    free(out.buf);
  }
  for (size_t i = 0; i < n; i++) {
    size_t b = 0;
    if (e[i].name != NULL && optic_tensor_bytes(&e[i].tensor, &b) == OPTIC_OK)
      optic_free(NULL, e[i].tensor.data, b, OPTIC_DEFAULT_ALIGNMENT);
  }
  free(m);
  free(e);
  optic_ckpt_reader_destroy(r);
}
