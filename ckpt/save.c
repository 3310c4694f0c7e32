/* Atomic, crash-safe save of named tensors and metadata to one file: a
 * temporary file beside the target, written and hashed in one overlapped
 * pass, fsynced, renamed over the target, the directory fsynced. Whatever was
 * at the target before stays untouched until the rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/internal.h"
#include "core/error.h"

static const char *const OP = "ckpt save";

optic_ckpt_save_options optic_ckpt_save_options_default(void) {
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = CKPT_DEFAULT_CHUNK_LOG2};
  return o;
}

optic_status ckpt_save_config_from(const optic_ckpt_save_options *opts, ckpt_save_config *out) {
  optic_ckpt_save_options o = {.size = sizeof o};
  if (opts != NULL) {
    if (opts->size < sizeof(size_t) || opts->size > 4096)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: options size %zu is not a sizeof(optic_ckpt_save_options)", OP,
                        opts->size);
    memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
  }
  if (o.threads < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: threads is %d", OP, o.threads);
  uint32_t chunk = o.chunk_log2 == 0 ? CKPT_DEFAULT_CHUNK_LOG2 : o.chunk_log2;
  if (chunk < CKPT_MIN_CHUNK_LOG2 || chunk > CKPT_MAX_CHUNK_LOG2)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: chunk_log2 %u is outside %u..%u", OP, chunk, CKPT_MIN_CHUNK_LOG2,
                      CKPT_MAX_CHUNK_LOG2);
  if (o.io != NULL && o.io->size < sizeof(optic_ckpt_io))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: I/O table size %zu, expected %zu", OP, o.io->size,
                      sizeof(optic_ckpt_io));
  out->threads = ckpt_threads(o.threads);
  out->chunk_log2 = chunk;
  out->keep = o.keep;
  out->io = ckpt_io_or_default(o.io);
  out->has_step = o.record_step;
  out->step = o.step;
  return OPTIC_OK;
}

optic_status ckpt_temp_path(const char *path, char *buf, size_t size) {
  static atomic_uint counter;
  const char *slash = strrchr(path, '/');
  int dir_len = slash != NULL ? (int)(slash - path) + 1 : 0;
  const char *base = path + dir_len;
  if (*base == '\0') return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: path '%s' names a directory", OP, path);
  int n = snprintf(buf, size, "%.*s.%s.tmp-%ld-%u", dir_len, path, base, (long)getpid(), atomic_fetch_add(&counter, 1));
  if (n < 0 || (size_t)n >= size) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: path '%s' is too long", OP, path);
  return OPTIC_OK;
}

optic_status ckpt_sync_parent(const optic_ckpt_io *io, const char *path, const char *op) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (slash == NULL) {
    snprintf(dir, sizeof dir, ".");
  } else if (slash == path) {
    snprintf(dir, sizeof dir, "/");
  } else if ((size_t)(slash - path) < sizeof dir) {
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  } else {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: path '%s' is too long", op, path);
  }
  int rc = io->fsync_dir(io->user, dir);
  if (rc < 0) return ckpt_io_fail(rc, op, "fsync of the directory", dir);
  return OPTIC_OK;
}

static int cmp_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Checks the caller's entries and metadata and fills the internal tables. */
static optic_status gather(const optic_ckpt_entry *entries, size_t n, const optic_ckpt_meta *meta, size_t nmeta,
                           ckpt_entry *es, ckpt_meta_item *ms, ckpt_span *spans) {
  if (n > OPTIC_CKPT_MAX_ENTRIES)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %zu entries (limit %u)", OP, n, OPTIC_CKPT_MAX_ENTRIES);
  if (nmeta > UINT32_MAX) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %zu metadata items", OP, nmeta);
  for (size_t i = 0; i < n; i++) {
    const optic_ckpt_entry *e = &entries[i];
    if (e->name == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry %zu has no name", OP, i);
    size_t len = strnlen(e->name, OPTIC_CKPT_MAX_NAME + 1);
    const char *why = ckpt_name_problem((const uint8_t *)e->name, len);
    if (why != NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry %zu's name %s", OP, i, why);
    size_t bytes = 0;
    if (e->tensor.dtype == OPTIC_TOKEN)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry '%s' is a token, which holds no values", OP, e->name);
    if (ckpt_dtype_code(e->tensor.dtype) == 0)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry '%s' has an invalid dtype %d", OP, e->name,
                        (int)e->tensor.dtype);
    optic_status st = optic_tensor_bytes(&e->tensor, &bytes);
    if (st != OPTIC_OK) {
      char cause[512];
      snprintf(cause, sizeof cause, "%s", optic_last_error());
      return optic_fail(st, "%s: entry '%s' has an invalid tensor: %s", OP, e->name, cause);
    }
    if (bytes > 0 && e->tensor.data == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry '%s' has %zu bytes and no data", OP, e->name, bytes);
    es[i] = (ckpt_entry){
        .name = e->name, .name_len = (uint32_t)len, .dtype = e->tensor.dtype, .shape = e->tensor.shape, .bytes = bytes};
    spans[i].bytes = bytes;
    spans[i].mem = e->tensor.data;
    spans[i].entry = i;
  }
  for (size_t i = 0; i < nmeta; i++) {
    const optic_ckpt_meta *m = &meta[i];
    if (m->key == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: metadata item %zu has no key", OP, i);
    size_t len = strnlen(m->key, OPTIC_CKPT_MAX_NAME + 1);
    const char *why = ckpt_name_problem((const uint8_t *)m->key, len);
    if (why != NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: metadata key %zu %s", OP, i, why);
    if (m->value_len > OPTIC_CKPT_MAX_META_VALUE || (m->value_len > 0 && m->value == NULL))
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: metadata '%s' has a value of %zu bytes%s (limit %zu)", OP,
                        m->key, m->value_len, m->value == NULL ? " and no pointer" : "", OPTIC_CKPT_MAX_META_VALUE);
    ms[i] = (ckpt_meta_item){
        .key = m->key, .key_len = (uint32_t)len, .value = m->value, .value_len = (uint32_t)m->value_len};
  }
  /* Unique names and keys: sort pointers, compare neighbours. */
  optic_status st = OPTIC_OK;
  size_t most = n > nmeta ? n : nmeta;
  const char **sorted = malloc((most > 0 ? most : 1) * sizeof *sorted);
  if (sorted == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory to check %zu names", OP, most);
  for (size_t i = 0; i < n; i++) sorted[i] = es[i].name;
  qsort(sorted, n, sizeof *sorted, cmp_strings);
  for (size_t i = 1; i < n && st == OPTIC_OK; i++)
    if (strcmp(sorted[i - 1], sorted[i]) == 0)
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entry name '%s' appears twice", OP, sorted[i]);
  for (size_t i = 0; i < nmeta; i++) sorted[i] = ms[i].key;
  qsort(sorted, nmeta, sizeof *sorted, cmp_strings);
  for (size_t i = 1; i < nmeta && st == OPTIC_OK; i++)
    if (strcmp(sorted[i - 1], sorted[i]) == 0)
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: metadata key '%s' appears twice", OP, sorted[i]);
  free(sorted);
  return st;
}

/* Writes the file body to fd (already created) and fsyncs it. */
static optic_status write_body(int fd, const char *tmp, ckpt_entry *es, size_t n, const ckpt_meta_item *ms,
                               size_t nmeta, ckpt_span *spans, const ckpt_save_config *cfg) {
  ckpt_layout layout = {.has_step = cfg->has_step, .step = cfg->has_step ? cfg->step : 0};
  optic_status st = ckpt_plan_layout(es, n, ms, nmeta, cfg->chunk_log2, &layout);
  if (st != OPTIC_OK) return st;
  for (size_t i = 0; i < n; i++) spans[i].offset = es[i].offset;
  uint8_t(*digests)[OPTIC_CKPT_DIGEST_BYTES] = malloc((n > 0 ? n : 1) * sizeof *digests);
  uint8_t(*chunks)[OPTIC_CKPT_DIGEST_BYTES] = malloc((size_t)(layout.total_chunks + 1) * sizeof *chunks);
  uint8_t *index = malloc(layout.index_bytes);
  if (digests == NULL || chunks == NULL || index == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for an index of %llu bytes", OP,
                    (unsigned long long)layout.index_bytes);
  } else {
    ckpt_pass pass = {.mode = CKPT_PASS_SAVE,
                      .io = cfg->io,
                      .fd = fd,
                      .out_fd = -1,
                      .op = OP,
                      .path = tmp,
                      .chunk_log2 = cfg->chunk_log2,
                      .threads = cfg->threads,
                      .nspans = n,
                      .spans = spans,
                      .digests = digests,
                      .chunk_digests = chunks};
    st = ckpt_run_pass(&pass);
  }
  if (st == OPTIC_OK) {
    for (size_t i = 0; i < n; i++) memcpy(es[i].sha256, digests[i], OPTIC_CKPT_DIGEST_BYTES);
    ckpt_encode_index(&layout, es, ms, (const uint8_t(*)[OPTIC_CKPT_DIGEST_BYTES])chunks, index);
    st = ckpt_sha256(index, layout.index_bytes, layout.root);
  }
  if (st == OPTIC_OK) st = ckpt_write_full(cfg->io, fd, index, layout.index_bytes, 0, OP, tmp);
  if (st == OPTIC_OK) {
    uint8_t footer[CKPT_FOOTER_BYTES];
    ckpt_encode_footer(&layout, footer);
    st = ckpt_write_full(cfg->io, fd, footer, sizeof footer, layout.payload_end, OP, tmp);
  }
  if (st == OPTIC_OK) {
    int rc = cfg->io->fsync(cfg->io->user, fd);
    if (rc < 0) st = ckpt_io_fail(rc, OP, "fsync of", tmp);
  }
  free(index);
  free(chunks);
  free(digests);
  return st;
}

optic_status ckpt_save_file_with(const char *path, const optic_ckpt_entry *entries, size_t n,
                                 const optic_ckpt_meta *meta, size_t nmeta, const ckpt_save_config *cfg) {
  if (path == NULL || (n > 0 && entries == NULL) || (nmeta > 0 && meta == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL path, entries or metadata", OP);
  ckpt_entry *es = calloc(n > 0 ? n : 1, sizeof *es);
  ckpt_meta_item *ms = calloc(nmeta > 0 ? nmeta : 1, sizeof *ms);
  ckpt_span *spans = calloc(n > 0 ? n : 1, sizeof *spans);
  optic_status st = OPTIC_OK;
  if (es == NULL || ms == NULL || spans == NULL)
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for %zu entries", OP, n);
  if (st == OPTIC_OK) st = gather(entries, n, meta, nmeta, es, ms, spans);
  char tmp[4352];
  if (st == OPTIC_OK) st = ckpt_temp_path(path, tmp, sizeof tmp);
  int fd = -1;
  bool created = false, renamed = false;
  if (st == OPTIC_OK) {
    fd = cfg->io->open(cfg->io->user, tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) st = ckpt_io_fail(fd, OP, "cannot create", tmp);
    else created = true;
  }
  if (st == OPTIC_OK) st = write_body(fd, tmp, es, n, ms, nmeta, spans, cfg);
  if (created) {
    int rc = cfg->io->close(cfg->io->user, fd);
    if (rc < 0 && st == OPTIC_OK) st = ckpt_io_fail(rc, OP, "close of", tmp);
  }
  if (st == OPTIC_OK) {
    int rc = cfg->io->rename(cfg->io->user, tmp, path);
    if (rc < 0) st = optic_fail(OPTIC_ERR_IO, "%s: rename %s -> %s: %s", OP, tmp, path, strerror(-rc));
    else renamed = true;
  }
  /* Best effort: the first error's message is the one reported. */
  if (st != OPTIC_OK && created && !renamed) (void)cfg->io->unlink(cfg->io->user, tmp);
  if (st == OPTIC_OK) {
    st = ckpt_sync_parent(cfg->io, path, OP);
    if (st != OPTIC_OK) {
      char why[768];
      snprintf(why, sizeof why, "%s", optic_last_error());
      st = optic_fail(st, "%s (the checkpoint %s is complete, but its name may not survive a crash)", why, path);
    }
  }
  free(spans);
  free(ms);
  free(es);
  return st;
}

optic_status optic_ckpt_save_file(const char *path, const optic_ckpt_entry *entries, size_t n,
                                  const optic_ckpt_meta *meta, size_t nmeta, const optic_ckpt_save_options *opts) {
  ckpt_save_config cfg;
  optic_status st = ckpt_save_config_from(opts, &cfg);
  if (st != OPTIC_OK) return st;
  return ckpt_save_file_with(path, entries, n, meta, nmeta, &cfg);
}
