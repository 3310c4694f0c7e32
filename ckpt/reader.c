/* Opening a checkpoint (header, footer, index checked against the footer's
 * SHA-256, then every field validated), restoring entries by name into caller
 * tensors or library buffers with their hashes checked, and full verification.
 * Allocates only what the file's real size allows. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/internal.h"
#include "core/error.h"

struct optic_ckpt_reader_t {
  char *path;
  const optic_ckpt_io *io;
  int fd, threads;
  ckpt_layout layout;
  uint8_t *index;
  ckpt_entry *entries;
  ckpt_meta_item *meta;
  char *names;
  const ckpt_entry **sorted;
};

static const char *const OP = "ckpt read";

void optic_ckpt_reader_destroy(optic_ckpt_reader_t *r) {
  if (r == NULL) return;
  if (r->fd >= 0) (void)r->io->close(r->io->user, r->fd);
  free(r->sorted);
  free(r->names);
  free(r->meta);
  free(r->entries);
  free(r->index);
  free(r->path);
  free(r);
}

optic_ckpt_read_options optic_ckpt_read_options_default(void) {
  optic_ckpt_read_options o = {.size = sizeof o};
  return o;
}

static optic_status read_options(const optic_ckpt_read_options *opts, int *threads, const optic_ckpt_io **io) {
  optic_ckpt_read_options o = {.size = sizeof o};
  if (opts != NULL) {
    if (opts->size < sizeof(size_t) || opts->size > 4096)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: options size %zu is not a sizeof(optic_ckpt_read_options)", OP,
                        opts->size);
    memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
  }
  if (o.threads < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: threads is %d", OP, o.threads);
  if (o.io != NULL && o.io->size < sizeof(optic_ckpt_io))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: I/O table size %zu, expected %zu", OP, o.io->size,
                      sizeof(optic_ckpt_io));
  *threads = ckpt_threads(o.threads);
  *io = ckpt_io_or_default(o.io);
  return OPTIC_OK;
}

/* Version 2: the chunk hashes (covered by the index hash) are those the
 * entry hashes were made from. */
static optic_status check_chunk_table(const optic_ckpt_reader_t *r) {
  if (r->layout.version < 2) return OPTIC_OK;
  const uint8_t *table = r->index + r->layout.chunk_table_at;
  for (uint32_t i = 0; i < r->layout.entry_count; i++) {
    const ckpt_entry *e = &r->entries[i];
    uint8_t root[OPTIC_CKPT_DIGEST_BYTES];
    uint64_t chunks = ckpt_chunks_of(e->bytes, r->layout.chunk_log2);
    optic_status st =
        ckpt_sha256(table + e->first_chunk * OPTIC_CKPT_DIGEST_BYTES, (size_t)chunks * OPTIC_CKPT_DIGEST_BYTES, root);
    if (st != OPTIC_OK) return st;
    if (memcmp(root, e->sha256, sizeof root) != 0)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s': its %llu chunk hashes do not hash to its SHA-256",
                        r->path, i, e->name, (unsigned long long)chunks);
  }
  return OPTIC_OK;
}

static optic_status open_checked(optic_ckpt_reader_t *r) {
  const char *p = r->path;
  int fd = r->io->open(r->io->user, p, O_RDONLY, 0);
  if (fd < 0) return ckpt_io_fail(fd, OP, "cannot open", p);
  r->fd = fd;
  int64_t size = r->io->file_size(r->io->user, fd);
  if (size == -EISDIR) return optic_fail(OPTIC_ERR_IO, "%s: %s is a directory, not a checkpoint file", OP, p);
  if (size == -EINVAL)
    return optic_fail(OPTIC_ERR_IO, "%s: %s is not a regular file (a FIFO, socket or device), so not a checkpoint", OP,
                      p);
  if (size < 0) return ckpt_io_fail((int)size, OP, "cannot read the size of", p);
  uint64_t file_bytes = (uint64_t)size;
  if (file_bytes < CKPT_HEADER_BYTES + CKPT_FOOTER_BYTES) {
    uint8_t magic[8] = {0};
    size_t got = 0;
    optic_status st = ckpt_read_full(r->io, fd, magic, sizeof magic, 0, &got, OP, p);
    if (st != OPTIC_OK) return st;
    if (got < sizeof magic || memcmp(magic, CKPT_MAGIC, 8) != 0)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: bad magic (not an optic checkpoint; %llu bytes)", p,
                        (unsigned long long)file_bytes);
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: truncated at byte %llu (a checkpoint has at least %u bytes)", p,
                      (unsigned long long)file_bytes, CKPT_HEADER_BYTES + CKPT_FOOTER_BYTES);
  }
  uint8_t header[CKPT_HEADER_BYTES], footer[CKPT_FOOTER_BYTES];
  optic_status st = ckpt_read_exact(r->io, fd, header, sizeof header, 0, OP, p);
  if (st == OPTIC_OK) st = ckpt_parse_header(p, header, file_bytes, &r->layout);
  if (st == OPTIC_OK) st = ckpt_read_exact(r->io, fd, footer, sizeof footer, r->layout.payload_end, OP, p);
  if (st == OPTIC_OK) st = ckpt_parse_footer(p, footer, &r->layout);
  if (st != OPTIC_OK) return st;
  /* index_bytes <= payload_end < file_bytes: the allocation is bounded by the file. */
  const ckpt_layout *l = &r->layout;
  r->index = malloc(l->index_bytes);
  r->entries = calloc(l->entry_count > 0 ? l->entry_count : 1, sizeof *r->entries);
  r->meta = calloc(l->meta_count > 0 ? l->meta_count : 1, sizeof *r->meta);
  r->names = malloc(l->index_bytes + l->entry_count + 2 * (uint64_t)l->meta_count);
  r->sorted = calloc(l->entry_count > 0 ? l->entry_count : 1, sizeof *r->sorted);
  if (!r->index || !r->entries || !r->meta || !r->names || !r->sorted)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for an index of %llu bytes", p,
                      (unsigned long long)l->index_bytes);
  st = ckpt_read_exact(r->io, fd, r->index, l->index_bytes, 0, OP, p);
  if (st != OPTIC_OK) return st;
  uint8_t digest[OPTIC_CKPT_DIGEST_BYTES];
  st = ckpt_sha256(r->index, l->index_bytes, digest);
  if (st != OPTIC_OK) return st;
  if (memcmp(digest, l->root, sizeof digest) != 0)
    return optic_fail(OPTIC_ERR_CORRUPT,
                      "%s: index SHA-256 mismatch (header, entry table, metadata or chunk "
                      "hashes damaged: bytes 0..%llu)",
                      p, (unsigned long long)l->index_bytes);
  st = ckpt_parse_index(p, r->index, &r->layout, r->entries, r->meta, r->names, r->sorted);
  return st == OPTIC_OK ? check_chunk_table(r) : st;
}

optic_status optic_ckpt_reader_create(const char *path, const optic_ckpt_read_options *opts,
                                      optic_ckpt_reader_t **out) {
  if (path == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL path or out", OP);
  *out = NULL;
  optic_ckpt_reader_t *r = calloc(1, sizeof *r);
  if (r == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for a reader", OP);
  r->fd = -1;
  optic_status st = read_options(opts, &r->threads, &r->io);
  if (st == OPTIC_OK) {
    r->path = strdup(path);
    if (r->path == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", OP);
  }
  if (st == OPTIC_OK) st = open_checked(r);
  if (st != OPTIC_OK) {
    optic_ckpt_reader_destroy(r);
    return st;
  }
  *out = r;
  return OPTIC_OK;
}

size_t optic_ckpt_entry_count(const optic_ckpt_reader_t *r) { return r != NULL ? r->layout.entry_count : 0; }
size_t optic_ckpt_meta_count(const optic_ckpt_reader_t *r) { return r != NULL ? r->layout.meta_count : 0; }
uint64_t optic_ckpt_file_bytes(const optic_ckpt_reader_t *r) { return r != NULL ? r->layout.file_bytes : 0; }
uint32_t optic_ckpt_chunk_bytes(const optic_ckpt_reader_t *r) {
  return r != NULL ? (uint32_t)1 << r->layout.chunk_log2 : 0;
}
const uint8_t *optic_ckpt_root_sha256(const optic_ckpt_reader_t *r) { return r != NULL ? r->layout.root : NULL; }
uint32_t optic_ckpt_format_version(const optic_ckpt_reader_t *r) { return r != NULL ? r->layout.version : 0; }

optic_status optic_ckpt_step(const optic_ckpt_reader_t *r, uint64_t *step) {
  if (r == NULL || step == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt step: NULL reader or step");
  if (!r->layout.has_step)
    return optic_fail(OPTIC_ERR_NOT_FOUND, "ckpt: %s records no step (format version %u%s)", r->path, r->layout.version,
                      r->layout.version < 2 ? ", which has no step field" : "");
  *step = r->layout.step;
  return OPTIC_OK;
}

optic_status optic_ckpt_check_name(const optic_ckpt_reader_t *r) {
  if (r == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt check_name: NULL reader");
  uint64_t named;
  if (!r->layout.has_step || !ckpt_step_from_name(r->path, &named) || named == r->layout.step) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_CORRUPT,
                    "%s: named as step %llu but the checkpoint records step %llu (renamed or "
                    "copied from another step's file?)",
                    r->path, (unsigned long long)named, (unsigned long long)r->layout.step);
}

optic_status optic_ckpt_entry_at(const optic_ckpt_reader_t *r, size_t i, optic_ckpt_entry_info *out) {
  if (r == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt entry_at: NULL reader or out");
  if (i >= r->layout.entry_count)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt entry_at: index %zu, the checkpoint has %u entries", i,
                      r->layout.entry_count);
  const ckpt_entry *e = &r->entries[i];
  out->name = e->name;
  out->dtype = e->dtype;
  out->shape = e->shape;
  out->offset = e->offset;
  out->bytes = e->bytes;
  memcpy(out->sha256, e->sha256, OPTIC_CKPT_DIGEST_BYTES);
  return OPTIC_OK;
}

optic_status optic_ckpt_find(const optic_ckpt_reader_t *r, const char *name, size_t *index) {
  if (r == NULL || name == NULL || index == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt find: NULL reader, name or index");
  size_t lo = 0, hi = r->layout.entry_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->sorted[mid]->name, name);
    if (c == 0) {
      *index = (size_t)(r->sorted[mid] - r->entries);
      return OPTIC_OK;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return optic_fail(OPTIC_ERR_NOT_FOUND, "ckpt: %s has no entry '%s'", r->path, name);
}

optic_status optic_ckpt_meta_at(const optic_ckpt_reader_t *r, size_t i, const char **key, const void **value,
                                size_t *len) {
  if (r == NULL || key == NULL || value == NULL || len == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt meta_at: NULL argument");
  if (i >= r->layout.meta_count)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt meta_at: index %zu, the checkpoint has %u metadata items", i,
                      r->layout.meta_count);
  *key = r->meta[i].key;
  *value = r->meta[i].value;
  *len = r->meta[i].value_len;
  return OPTIC_OK;
}

optic_status optic_ckpt_meta_get(const optic_ckpt_reader_t *r, const char *key, const void **value, size_t *len) {
  if (r == NULL || key == NULL || value == NULL || len == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt meta_get: NULL argument");
  for (uint32_t i = 0; i < r->layout.meta_count; i++) {
    if (strcmp(r->meta[i].key, key) == 0) {
      *value = r->meta[i].value;
      *len = r->meta[i].value_len;
      return OPTIC_OK;
    }
  }
  return optic_fail(OPTIC_ERR_NOT_FOUND, "ckpt: %s has no metadata key '%s'", r->path, key);
}

/* CORRUPT for entry i whose data hashed to `got` chunk hashes: in a
 * version-2 file the first chunk that differs from the saved one, its byte
 * range and how many more differ; in version 1 (no chunk hashes) the entry's
 * whole range. `what` ends the message (e.g. " while copying"). */
static optic_status entry_mismatch(const optic_ckpt_reader_t *r, const char *op, size_t i,
                                   const uint8_t (*got)[OPTIC_CKPT_DIGEST_BYTES], const char *what) {
  const ckpt_entry *e = &r->entries[i];
  const uint64_t chunks = ckpt_chunks_of(e->bytes, r->layout.chunk_log2), size = (uint64_t)1 << r->layout.chunk_log2;
  if (r->layout.version < 2)
    return optic_fail(OPTIC_ERR_CORRUPT,
                      "%s: %s: entry %zu '%s' SHA-256 mismatch%s (somewhere in data bytes "
                      "%llu..%llu: a version-1 file records no per-chunk hashes)",
                      op, r->path, i, e->name, what, (unsigned long long)e->offset,
                      (unsigned long long)(e->offset + e->bytes));
  const uint8_t *saved = r->index + r->layout.chunk_table_at + e->first_chunk * OPTIC_CKPT_DIGEST_BYTES;
  uint64_t first = chunks, bad = 0;
  for (uint64_t k = 0; k < chunks; k++) {
    if (memcmp(got[k], saved + k * OPTIC_CKPT_DIGEST_BYTES, OPTIC_CKPT_DIGEST_BYTES) == 0) continue;
    if (bad++ == 0) first = k;
  }
  if (bad == 0) /* cannot happen: the chunk table hashes to the entry hash (checked at open) */
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: %s: entry %zu '%s' SHA-256 mismatch%s", op, r->path, i, e->name, what);
  uint64_t from = e->offset + first * size, to = first + 1 == chunks ? e->offset + e->bytes : from + size;
  char more[64] = "";
  if (bad > 1)
    snprintf(more, sizeof more, ", and %llu more chunk%s", (unsigned long long)(bad - 1), bad > 2 ? "s" : "");
  return optic_fail(OPTIC_ERR_CORRUPT,
                    "%s: %s: entry %zu '%s' SHA-256 mismatch in chunk %llu of %llu (data bytes "
                    "%llu..%llu damaged%s)%s",
                    op, r->path, i, e->name, (unsigned long long)first, (unsigned long long)chunks,
                    (unsigned long long)from, (unsigned long long)to, more, what);
}

/* Total hash chunks of spans[0..n). */
static uint64_t chunks_of_spans(const optic_ckpt_reader_t *r, const ckpt_span *spans, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += ckpt_chunks_of(spans[i].bytes, r->layout.chunk_log2);
  return total;
}

/* The first span whose hash differs from its entry's, as entry_mismatch; OK if none. */
static optic_status compare_spans(const optic_ckpt_reader_t *r, const char *op, const ckpt_span *spans, size_t n,
                                  const uint8_t (*digests)[OPTIC_CKPT_DIGEST_BYTES],
                                  const uint8_t (*chunks)[OPTIC_CKPT_DIGEST_BYTES], const char *what) {
  for (size_t i = 0; i < n; i++) {
    const ckpt_entry *e = &r->entries[spans[i].entry];
    if (memcmp(digests[i], e->sha256, OPTIC_CKPT_DIGEST_BYTES) != 0)
      return entry_mismatch(r, op, spans[i].entry, chunks, what);
    chunks += ckpt_chunks_of(spans[i].bytes, r->layout.chunk_log2);
  }
  return OPTIC_OK;
}

/* Reads spans (their entries' data) into mem (or scratch when NULL) with
 * their hashes checked against the index. */
static optic_status read_entries(optic_ckpt_reader_t *r, ckpt_span *spans, size_t n, const char *op) {
  uint8_t(*digests)[OPTIC_CKPT_DIGEST_BYTES] = malloc((n > 0 ? n : 1) * sizeof *digests);
  uint8_t(*chunks)[OPTIC_CKPT_DIGEST_BYTES] = malloc((size_t)(chunks_of_spans(r, spans, n) + 1) * sizeof *chunks);
  optic_status st = OPTIC_OK;
  if (digests == NULL || chunks == NULL)
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for %zu hashes", op, n);
  ckpt_pass pass = {.mode = CKPT_PASS_READ,
                    .io = r->io,
                    .fd = r->fd,
                    .out_fd = -1,
                    .op = op,
                    .path = r->path,
                    .chunk_log2 = r->layout.chunk_log2,
                    .threads = r->threads,
                    .nspans = n,
                    .spans = spans,
                    .digests = digests,
                    .chunk_digests = chunks};
  if (st == OPTIC_OK) st = ckpt_run_pass(&pass);
  if (st == OPTIC_OK)
    st = compare_spans(r, op, spans, n, (const uint8_t(*)[OPTIC_CKPT_DIGEST_BYTES])digests,
                       (const uint8_t(*)[OPTIC_CKPT_DIGEST_BYTES])chunks, "");
  free(chunks);
  free(digests);
  return st;
}

optic_status optic_ckpt_restore(optic_ckpt_reader_t *r, const optic_ckpt_entry *targets, size_t n) {
  const char *op = "ckpt restore";
  if (r == NULL || (n > 0 && targets == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL reader or targets", op);
  size_t *idx = malloc((n > 0 ? n : 1) * sizeof *idx);
  ckpt_span *spans = malloc((n > 0 ? n : 1) * sizeof *spans);
  optic_status st = OPTIC_OK;
  if (idx == NULL || spans == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for %zu targets", op, n);
  for (size_t i = 0; i < n && st == OPTIC_OK; i++) {
    const optic_ckpt_entry *t = &targets[i];
    if (t->name == NULL) {
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: target %zu has no name", op, i);
      break;
    }
    st = optic_ckpt_find(r, t->name, &idx[i]);
    if (st != OPTIC_OK) {
      st = optic_fail(OPTIC_ERR_NOT_FOUND, "%s: %s has no entry '%s' (target %zu)", op, r->path, t->name, i);
      break;
    }
    const ckpt_entry *e = &r->entries[idx[i]];
    if (t->tensor.dtype != e->dtype || !optic_shape_equal(&t->tensor.shape, &e->shape)) {
      char saved[128], want[128];
      optic_shape_format(&e->shape, e->dtype, saved, sizeof saved);
      optic_shape_format(&t->tensor.shape, t->tensor.dtype, want, sizeof want);
      st = optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: entry '%s' is %s in %s, the target is %s", op, t->name, saved,
                      r->path, want);
      break;
    }
    if (e->bytes > 0 && t->tensor.data == NULL) {
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: target '%s' has no data pointer", op, t->name);
      break;
    }
    spans[i] = (ckpt_span){.offset = e->offset, .bytes = e->bytes, .mem = t->tensor.data, .entry = idx[i]};
  }
  if (st == OPTIC_OK) st = read_entries(r, spans, n, op);
  free(spans);
  free(idx);
  return st;
}

optic_status optic_ckpt_restore_alloc(optic_ckpt_reader_t *r, const char *name, const optic_allocator *allocator,
                                      optic_tensor *out) {
  if (r == NULL || name == NULL || out == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt restore_alloc: NULL reader, name or out");
  size_t i;
  optic_status st = optic_ckpt_find(r, name, &i);
  if (st != OPTIC_OK) return st;
  const ckpt_entry *e = &r->entries[i];
  void *data = NULL;
  st = optic_alloc(allocator, (size_t)e->bytes, OPTIC_DEFAULT_ALIGNMENT, &data);
  if (st != OPTIC_OK) return st;
  ckpt_span span = {.offset = e->offset, .bytes = e->bytes, .mem = data, .entry = i};
  st = read_entries(r, &span, 1, "ckpt restore");
  if (st != OPTIC_OK) {
    optic_free(allocator, data, (size_t)e->bytes, OPTIC_DEFAULT_ALIGNMENT);
    return st;
  }
  out->dtype = e->dtype;
  out->shape = e->shape;
  out->data = data;
  return OPTIC_OK;
}

/* The bytes no entry covers (index end to payload, between entries, after the
 * last one) must be zero: nothing else hashes them. */
static optic_status check_gaps(optic_ckpt_reader_t *r) {
  const ckpt_layout *l = &r->layout;
  uint64_t at = l->index_bytes;
  for (uint32_t i = 0; i <= l->entry_count; i++) {
    uint64_t next = i < l->entry_count ? r->entries[i].offset : l->payload_end;
    if (next > at) {
      uint8_t gap[CKPT_ALIGN];
      if (next - at > sizeof gap) /* the canonical layout allows less than 64 bytes */
        return optic_fail(OPTIC_ERR_CORRUPT, "ckpt verify: %s: %llu unexplained bytes at byte %llu", r->path,
                          (unsigned long long)(next - at), (unsigned long long)at);
      size_t n = (size_t)(next - at);
      optic_status st = ckpt_read_exact(r->io, r->fd, gap, n, at, "ckpt verify", r->path);
      if (st != OPTIC_OK) return st;
      for (size_t k = 0; k < n; k++)
        if (gap[k] != 0)
          return optic_fail(OPTIC_ERR_CORRUPT, "ckpt verify: %s: padding byte %llu is 0x%02x, not zero", r->path,
                            (unsigned long long)(at + k), gap[k]);
    }
    if (i < l->entry_count) at = r->entries[i].offset + r->entries[i].bytes;
  }
  return OPTIC_OK;
}

optic_status optic_ckpt_verify(optic_ckpt_reader_t *r) {
  if (r == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt verify: NULL reader");
  size_t n = r->layout.entry_count;
  ckpt_span *spans = malloc((n > 0 ? n : 1) * sizeof *spans);
  optic_status st = optic_ckpt_check_name(r);
  if (st == OPTIC_OK && spans == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "ckpt verify: no memory");
  for (size_t i = 0; i < n && st == OPTIC_OK; i++)
    spans[i] = (ckpt_span){.offset = r->entries[i].offset, .bytes = r->entries[i].bytes, .mem = NULL, .entry = i};
  if (st == OPTIC_OK) st = check_gaps(r);
  if (st == OPTIC_OK) st = read_entries(r, spans, n, "ckpt verify");
  free(spans);
  return st;
}

optic_status optic_ckpt_verify_file(const char *path, const optic_ckpt_read_options *opts) {
  optic_ckpt_reader_t *r = NULL;
  optic_status st = optic_ckpt_reader_create(path, opts, &r);
  if (st == OPTIC_OK) st = optic_ckpt_verify(r);
  optic_ckpt_reader_destroy(r);
  return st;
}

optic_status ckpt_copy_verified(optic_ckpt_reader_t *r, int out_fd, const char *out_path, const optic_ckpt_io *out_io) {
  const char *op = "ckpt repair";
  const ckpt_layout *l = &r->layout;
  if (out_io != r->io)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: source and destination must use the same I/O layer", op);
  optic_status st = check_gaps(r);
  size_t n = l->entry_count;
  ckpt_span *spans = malloc((n > 0 ? n : 1) * sizeof *spans);
  uint8_t(*digests)[OPTIC_CKPT_DIGEST_BYTES] = malloc((n > 0 ? n : 1) * sizeof *digests);
  uint8_t(*chunks)[OPTIC_CKPT_DIGEST_BYTES] = malloc((size_t)(l->total_chunks + 1) * sizeof *chunks);
  if (st == OPTIC_OK && (spans == NULL || digests == NULL || chunks == NULL))
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
  for (size_t i = 0; i < n && st == OPTIC_OK; i++)
    spans[i] = (ckpt_span){.offset = r->entries[i].offset, .bytes = r->entries[i].bytes, .mem = NULL, .entry = i};
  if (st == OPTIC_OK) {
    ckpt_pass pass = {.mode = CKPT_PASS_COPY,
                      .io = r->io,
                      .fd = r->fd,
                      .out_fd = out_fd,
                      .op = op,
                      .path = r->path,
                      .out_path = out_path,
                      .chunk_log2 = l->chunk_log2,
                      .threads = r->threads,
                      .nspans = n,
                      .spans = spans,
                      .digests = digests,
                      .chunk_digests = chunks};
    st = ckpt_run_pass(&pass);
  }
  if (st == OPTIC_OK)
    st = compare_spans(r, op, spans, n, (const uint8_t(*)[OPTIC_CKPT_DIGEST_BYTES])digests,
                       (const uint8_t(*)[OPTIC_CKPT_DIGEST_BYTES])chunks, " while copying");
  /* The index and footer, byte for byte (the index hashed to the footer's root at open). */
  if (st == OPTIC_OK) st = ckpt_write_full(r->io, out_fd, r->index, l->index_bytes, 0, op, out_path);
  if (st == OPTIC_OK) {
    uint8_t footer[CKPT_FOOTER_BYTES];
    ckpt_encode_footer(l, footer);
    st = ckpt_write_full(r->io, out_fd, footer, sizeof footer, l->payload_end, op, out_path);
  }
  free(chunks);
  free(digests);
  free(spans);
  return st;
}
