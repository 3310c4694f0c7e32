/* The checkpoint index codec: layout planning, encoding, and the hostile-input
 * parser of headers, footers, entry tables and metadata. Never trusts a count
 * or size before checking it against the bytes actually present. */
#include "ckpt/format.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* ------------------------------------------------------------ little endian */

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0) return false;
  return true;
}
static uint64_t pad8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

/* ------------------------------------------------------------------ dtypes */

/* Stable file codes; never renumber (docs/checkpoint-format.md). */
static const struct {
  optic_dtype dtype;
  uint8_t code;
} dtype_codes[] = {{OPTIC_F32, 1},  {OPTIC_F64, 2},  {OPTIC_S32, 3},  {OPTIC_U8, 4},  {OPTIC_PRED, 5},
                   {OPTIC_S8, 6},   {OPTIC_S16, 7},  {OPTIC_S64, 8},  {OPTIC_U16, 9}, {OPTIC_U32, 10},
                   {OPTIC_U64, 11}, {OPTIC_F16, 12}, {OPTIC_BF16, 13}}; /* a token holds no values: none */

uint8_t ckpt_dtype_code(optic_dtype d) {
  for (size_t i = 0; i < sizeof dtype_codes / sizeof dtype_codes[0]; i++)
    if (dtype_codes[i].dtype == d) return dtype_codes[i].code;
  return 0;
}

optic_dtype ckpt_dtype_from_code(uint8_t code) {
  for (size_t i = 0; i < sizeof dtype_codes / sizeof dtype_codes[0]; i++)
    if (dtype_codes[i].code == code) return dtype_codes[i].dtype;
  return OPTIC_DTYPE_INVALID;
}

/* ------------------------------------------------------------------- names */

const char *ckpt_name_problem(const uint8_t *s, size_t len) {
  if (len == 0) return "is empty";
  if (len > OPTIC_CKPT_MAX_NAME) return "is longer than 255 bytes";
  for (size_t i = 0; i < len;) {
    uint8_t c = s[i];
    if (c < 0x20 || c == 0x7f) return "holds a control character";
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) {
      k = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      k = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      k = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return "is not valid UTF-8";
    }
    if (len - i < k) return "is not valid UTF-8";
    for (size_t j = 1; j < k; j++) {
      if ((s[i + j] & 0xc0) != 0x80) return "is not valid UTF-8";
      cp = (cp << 6) | (s[i + j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return "is not valid UTF-8";
    if (cp >= 0x80 && cp < 0xa0) return "holds a control character";
    i += k;
  }
  return NULL;
}

/* ------------------------------------------------------------------ layout */

optic_status ckpt_plan_layout(ckpt_entry *entries, size_t n, const ckpt_meta_item *meta, size_t nmeta,
                              uint32_t chunk_log2, ckpt_layout *layout) {
  uint64_t index = CKPT_HEADER_BYTES, chunks = 0;
  for (size_t i = 0; i < n; i++) {
    index += CKPT_ENTRY_FIXED + pad8(entries[i].name_len);
    entries[i].first_chunk = chunks;
    chunks += ckpt_chunks_of(entries[i].bytes, chunk_log2);
    if (chunks > CKPT_MAX_INDEX_BYTES / OPTIC_CKPT_DIGEST_BYTES) break; /* reported below, before any overflow */
  }
  if (chunks > CKPT_MAX_INDEX_BYTES / OPTIC_CKPT_DIGEST_BYTES)
    return optic_fail(OPTIC_ERR_OVERFLOW,
                      "ckpt save: %llu hash chunks of 2^%u bytes do not fit in an index of at most "
                      "%llu bytes (use a larger chunk_log2)",
                      (unsigned long long)chunks, chunk_log2, (unsigned long long)CKPT_MAX_INDEX_BYTES);
  uint64_t table_bytes = chunks * OPTIC_CKPT_DIGEST_BYTES;
  for (size_t i = 0; i < nmeta; i++) {
    index += CKPT_META_FIXED + pad8((uint64_t)meta[i].key_len + meta[i].value_len);
    if (index > CKPT_MAX_INDEX_BYTES)
      return optic_fail(OPTIC_ERR_OVERFLOW, "ckpt save: the index (names and metadata) exceeds %llu bytes",
                        (unsigned long long)CKPT_MAX_INDEX_BYTES);
  }
  if (index > CKPT_MAX_INDEX_BYTES - table_bytes)
    return optic_fail(OPTIC_ERR_OVERFLOW,
                      "ckpt save: the index (names, metadata and %llu chunk hashes) exceeds %llu "
                      "bytes",
                      (unsigned long long)chunks, (unsigned long long)CKPT_MAX_INDEX_BYTES);
  layout->version = OPTIC_CKPT_FORMAT_VERSION;
  layout->chunk_table_at = index;
  layout->total_chunks = chunks;
  index += table_bytes;
  uint64_t at = ckpt_align_up(index);
  layout->index_bytes = index;
  layout->payload_offset = at;
  for (size_t i = 0; i < n; i++) {
    at = ckpt_align_up(at);
    entries[i].offset = at;
    if (entries[i].bytes > UINT64_MAX / 2 - at)
      return optic_fail(OPTIC_ERR_OVERFLOW, "ckpt save: entry %zu '%s' does not fit in a file", i, entries[i].name);
    at += entries[i].bytes;
  }
  layout->payload_end = ckpt_align_up(at);
  layout->file_bytes = layout->payload_end + CKPT_FOOTER_BYTES;
  layout->entry_count = (uint32_t)n;
  layout->meta_count = (uint32_t)nmeta;
  layout->chunk_log2 = chunk_log2;
  return OPTIC_OK;
}

/* ---------------------------------------------------------------- encoding */

void ckpt_encode_index(const ckpt_layout *layout, const ckpt_entry *entries, const ckpt_meta_item *meta,
                       const uint8_t (*chunk_digests)[OPTIC_CKPT_DIGEST_BYTES], uint8_t *buf) {
  memset(buf, 0, layout->index_bytes);
  memcpy(buf, CKPT_MAGIC, 8);
  put_u32(buf + 8, OPTIC_CKPT_FORMAT_VERSION);
  put_u32(buf + 12, layout->has_step ? CKPT_FLAG_STEP : 0);
  put_u64(buf + 56, layout->has_step ? layout->step : 0);
  put_u32(buf + 16, layout->entry_count);
  put_u32(buf + 20, layout->meta_count);
  put_u32(buf + 24, layout->chunk_log2);
  put_u64(buf + 32, layout->index_bytes);
  put_u64(buf + 40, layout->payload_offset);
  put_u64(buf + 48, layout->payload_end);
  uint8_t *p = buf + CKPT_HEADER_BYTES;
  for (uint32_t i = 0; i < layout->entry_count; i++) {
    const ckpt_entry *e = &entries[i];
    put_u16(p, (uint16_t)e->name_len);
    p[2] = ckpt_dtype_code(e->dtype);
    p[3] = (uint8_t)e->shape.rank;
    for (int32_t d = 0; d < e->shape.rank; d++) put_u64(p + 8 + 8 * d, (uint64_t)e->shape.dims[d]);
    put_u64(p + 72, e->offset);
    put_u64(p + 80, e->bytes);
    memcpy(p + 88, e->sha256, OPTIC_CKPT_DIGEST_BYTES);
    memcpy(p + CKPT_ENTRY_FIXED, e->name, e->name_len);
    p += CKPT_ENTRY_FIXED + pad8(e->name_len);
  }
  for (uint32_t i = 0; i < layout->meta_count; i++) {
    put_u16(p, (uint16_t)meta[i].key_len);
    put_u32(p + 4, meta[i].value_len);
    memcpy(p + CKPT_META_FIXED, meta[i].key, meta[i].key_len);
    if (meta[i].value_len > 0) memcpy(p + CKPT_META_FIXED + meta[i].key_len, meta[i].value, meta[i].value_len);
    p += CKPT_META_FIXED + pad8((uint64_t)meta[i].key_len + meta[i].value_len);
  }
  if (layout->total_chunks > 0) memcpy(p, chunk_digests, (size_t)layout->total_chunks * OPTIC_CKPT_DIGEST_BYTES);
}

void ckpt_encode_footer(const ckpt_layout *layout, uint8_t *buf) {
  memset(buf, 0, CKPT_FOOTER_BYTES);
  memcpy(buf, CKPT_FOOTER_MAGIC, 8);
  put_u64(buf + 8, layout->file_bytes);
  memcpy(buf + 16, layout->root, OPTIC_CKPT_DIGEST_BYTES);
  memcpy(buf + 56, CKPT_MAGIC, 8);
}

/* ----------------------------------------------------------------- parsing */

optic_status ckpt_parse_header(const char *what, const uint8_t *h, uint64_t file_bytes, ckpt_layout *l) {
  if (memcmp(h, CKPT_MAGIC, 8) != 0)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: bad magic (not an optic checkpoint)", what);
  uint32_t version = get_u32(h + 8), flags = get_u32(h + 12);
  if (version < 1 || version > OPTIC_CKPT_FORMAT_VERSION)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: unsupported format version %u (this library reads versions 1 to %u)",
                      what, version, OPTIC_CKPT_FORMAT_VERSION);
  uint32_t known = version >= 2 ? CKPT_FLAG_STEP : 0;
  if ((flags & ~known) != 0)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: unknown header flags 0x%x (version %u)", what, flags & ~known, version);
  l->version = version;
  l->has_step = (flags & CKPT_FLAG_STEP) != 0;
  l->step = get_u64(h + 56);
  if (get_u32(h + 28) != 0 || (!l->has_step && l->step != 0))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: reserved header bytes are not zero", what);
  l->entry_count = get_u32(h + 16);
  l->meta_count = get_u32(h + 20);
  l->chunk_log2 = get_u32(h + 24);
  l->index_bytes = get_u64(h + 32);
  l->payload_offset = get_u64(h + 40);
  l->payload_end = get_u64(h + 48);
  l->file_bytes = file_bytes;
  if (l->chunk_log2 < CKPT_MIN_CHUNK_LOG2 || l->chunk_log2 > CKPT_MAX_CHUNK_LOG2)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: chunk size 2^%u is outside 2^%u..2^%u", what, l->chunk_log2,
                      CKPT_MIN_CHUNK_LOG2, CKPT_MAX_CHUNK_LOG2);
  if (l->entry_count > OPTIC_CKPT_MAX_ENTRIES)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: absurd entry count %u (limit %u)", what, l->entry_count,
                      OPTIC_CKPT_MAX_ENTRIES);
  if (l->index_bytes < CKPT_HEADER_BYTES || l->index_bytes > CKPT_MAX_INDEX_BYTES)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: absurd index size %llu (a valid one is %u..%llu bytes)", what,
                      (unsigned long long)l->index_bytes, CKPT_HEADER_BYTES, (unsigned long long)CKPT_MAX_INDEX_BYTES);
  uint64_t room = l->index_bytes - CKPT_HEADER_BYTES;
  if ((uint64_t)l->entry_count * CKPT_ENTRY_FIXED + (uint64_t)l->meta_count * CKPT_META_FIXED > room)
    return optic_fail(OPTIC_ERR_CORRUPT,
                      "%s: absurd counts: %u entries and %u metadata items cannot fit in an "
                      "index of %llu bytes",
                      what, l->entry_count, l->meta_count, (unsigned long long)l->index_bytes);
  if (l->payload_offset != ckpt_align_up(l->index_bytes))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: payload offset %llu, expected %llu (index end aligned to 64)", what,
                      (unsigned long long)l->payload_offset, (unsigned long long)ckpt_align_up(l->index_bytes));
  if (l->payload_end < l->payload_offset || l->payload_end % CKPT_ALIGN != 0)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: payload end %llu is before the payload start %llu or unaligned", what,
                      (unsigned long long)l->payload_end, (unsigned long long)l->payload_offset);
  if (file_bytes < CKPT_HEADER_BYTES + CKPT_FOOTER_BYTES || l->payload_end > file_bytes - CKPT_FOOTER_BYTES)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: truncated at byte %llu (the header says the footer is at byte %llu)",
                      what, (unsigned long long)file_bytes, (unsigned long long)l->payload_end);
  if (l->payload_end + CKPT_FOOTER_BYTES != file_bytes)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: %llu bytes after the footer at byte %llu (file has %llu bytes)", what,
                      (unsigned long long)(file_bytes - l->payload_end - CKPT_FOOTER_BYTES),
                      (unsigned long long)l->payload_end, (unsigned long long)file_bytes);
  return OPTIC_OK;
}

optic_status ckpt_parse_footer(const char *what, const uint8_t *f, ckpt_layout *l) {
  if (memcmp(f, CKPT_FOOTER_MAGIC, 8) != 0 || memcmp(f + 56, CKPT_MAGIC, 8) != 0)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: footer missing at byte %llu (no footer magic)", what,
                      (unsigned long long)l->payload_end);
  if (get_u64(f + 8) != l->file_bytes)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: footer records %llu file bytes, the file has %llu", what,
                      (unsigned long long)get_u64(f + 8), (unsigned long long)l->file_bytes);
  if (!all_zero(f + 48, 8)) return optic_fail(OPTIC_ERR_CORRUPT, "%s: reserved footer bytes are not zero", what);
  memcpy(l->root, f + 16, OPTIC_CKPT_DIGEST_BYTES);
  return OPTIC_OK;
}

static int cmp_entry_names(const void *a, const void *b) {
  const ckpt_entry *x = *(const ckpt_entry *const *)a, *y = *(const ckpt_entry *const *)b;
  return strcmp(x->name, y->name);
}
static int cmp_meta_keys(const void *a, const void *b) {
  const ckpt_meta_item *x = *(const ckpt_meta_item *const *)a, *y = *(const ckpt_meta_item *const *)b;
  return strcmp(x->key, y->key);
}

/* Entry i of the index at byte *at (advanced past it); its name is copied
 * to *names (advanced), *expect is where its payload must start. */
static optic_status parse_entry(const char *what, const uint8_t *index, uint64_t *at_io, uint32_t i, ckpt_layout *l,
                                ckpt_entry *entries, char **names_io, uint64_t *expect_io) {
  const uint64_t end = l->index_bytes, at = *at_io;
  uint64_t expect = *expect_io;
  char *names = *names_io;
  if (end - at < CKPT_ENTRY_FIXED)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry table truncated at entry %u (index has %llu bytes)", what, i,
                      (unsigned long long)end);
  const uint8_t *p = index + at;
  ckpt_entry *e = &entries[i];
  uint32_t name_len = get_u16(p);
  if (end - at - CKPT_ENTRY_FIXED < pad8(name_len))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u's name (%u bytes) runs past the index", what, i, name_len);
  const uint8_t *name = p + CKPT_ENTRY_FIXED;
  const char *why = ckpt_name_problem(name, name_len);
  if (why != NULL) return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u's name %s", what, i, why);
  if (!all_zero(name + name_len, pad8(name_len) - name_len) || !all_zero(p + 4, 4))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u has nonzero padding", what, i);
  memcpy(names, name, name_len);
  names[name_len] = '\0';
  e->name = names;
  e->name_len = name_len;
  names += name_len + 1;
  e->dtype = ckpt_dtype_from_code(p[2]);
  if (e->dtype == OPTIC_DTYPE_INVALID)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' has unknown dtype code %u", what, i, e->name, p[2]);
  int32_t rank = p[3];
  if (rank > OPTIC_MAX_RANK)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' has rank %d (limit %d)", what, i, e->name, (int)rank,
                      OPTIC_MAX_RANK);
  int64_t dims[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < OPTIC_MAX_RANK; d++) {
    uint64_t v = get_u64(p + 8 + 8 * d);
    if (d >= rank && v != 0)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' dim %d is %llu beyond its rank %d (must be 0)", what, i,
                        e->name, (int)d, (unsigned long long)v, (int)rank);
    if (v > (uint64_t)INT64_MAX)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' dim %d is %llu (more than 2^63-1)", what, i, e->name,
                        (int)d, (unsigned long long)v);
    if (d < rank) dims[d] = (int64_t)v;
  }
  size_t want = 0;
  if (optic_shape_make(rank, dims, &e->shape) != OPTIC_OK || optic_shape_bytes(&e->shape, e->dtype, &want) != OPTIC_OK)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' has an absurd shape (size overflows)", what, i, e->name);
  e->offset = get_u64(p + 72);
  e->bytes = get_u64(p + 80);
  if (e->bytes != (uint64_t)want)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' declares %llu bytes, its shape needs %llu", what, i,
                      e->name, (unsigned long long)e->bytes, (unsigned long long)want);
  expect = ckpt_align_up(expect);
  if (e->offset != expect) {
    if (i > 0 && e->offset < entries[i - 1].offset + entries[i - 1].bytes)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' at byte %llu overlaps entry %u", what, i, e->name,
                        (unsigned long long)e->offset, i - 1);
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' at byte %llu, expected %llu", what, i, e->name,
                      (unsigned long long)e->offset, (unsigned long long)expect);
  }
  if (e->bytes > l->payload_end - e->offset)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry %u '%s' (bytes %llu..%llu) ends outside the payload (ends at %llu)",
                      what, i, e->name, (unsigned long long)e->offset, (unsigned long long)(e->offset + e->bytes),
                      (unsigned long long)l->payload_end);
  expect = e->offset + e->bytes;
  e->first_chunk = l->total_chunks;
  l->total_chunks += ckpt_chunks_of(e->bytes, l->chunk_log2); /* bytes < file size: no overflow */
  memcpy(e->sha256, p + 88, OPTIC_CKPT_DIGEST_BYTES);
  *at_io = at + CKPT_ENTRY_FIXED + pad8(name_len);
  *names_io = names;
  *expect_io = expect;
  return OPTIC_OK;
}

/* Metadata item i at byte *at (advanced past it); key and value are
 * copied to *names (advanced), each NUL-terminated. */
static optic_status parse_meta(const char *what, const uint8_t *index, uint64_t *at_io, uint64_t end, uint32_t i,
                               ckpt_meta_item *meta, char **names_io) {
  const uint64_t at = *at_io;
  char *names = *names_io;
  if (end - at < CKPT_META_FIXED) return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata truncated at item %u", what, i);
  const uint8_t *p = index + at;
  uint32_t key_len = get_u16(p), value_len = get_u32(p + 4);
  if (get_u16(p + 2) != 0) return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata item %u has nonzero padding", what, i);
  if (value_len > OPTIC_CKPT_MAX_META_VALUE || end - at - CKPT_META_FIXED < pad8((uint64_t)key_len + value_len))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata item %u (key %u bytes, value %u bytes) runs past the index",
                      what, i, key_len, value_len);
  const uint8_t *key = p + CKPT_META_FIXED;
  const char *why = ckpt_name_problem(key, key_len);
  if (why != NULL) return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata item %u's key %s", what, i, why);
  uint64_t used = (uint64_t)key_len + value_len;
  if (!all_zero(key + used, pad8(used) - used))
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata item %u has nonzero padding", what, i);
  memcpy(names, key, key_len);
  names[key_len] = '\0';
  meta[i].key = names;
  meta[i].key_len = key_len;
  names += key_len + 1;
  if (value_len > 0) memcpy(names, key + key_len, value_len);
  names[value_len] = '\0';
  meta[i].value = (const uint8_t *)names;
  meta[i].value_len = value_len;
  names += value_len + 1;
  *at_io = at + CKPT_META_FIXED + pad8(used);
  *names_io = names;
  return OPTIC_OK;
}

/* Names and keys unique: sort pointers, compare neighbours. */
static optic_status check_unique(const char *what, const ckpt_layout *l, const ckpt_entry *entries,
                                 const ckpt_meta_item *meta, const ckpt_entry **sorted) {
  for (uint32_t i = 0; i < l->entry_count; i++) sorted[i] = &entries[i];
  if (l->entry_count > 1) qsort(sorted, l->entry_count, sizeof *sorted, cmp_entry_names);
  for (uint32_t i = 1; i < l->entry_count; i++)
    if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: entry name '%s' appears twice", what, sorted[i]->name);
  if (l->meta_count > 1) {
    const ckpt_meta_item **ms = malloc(l->meta_count * sizeof *ms);
    if (ms == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory to check metadata keys", what);
    for (uint32_t i = 0; i < l->meta_count; i++) ms[i] = &meta[i];
    qsort(ms, l->meta_count, sizeof *ms, cmp_meta_keys);
    for (uint32_t i = 1; i < l->meta_count; i++) {
      if (strcmp(ms[i - 1]->key, ms[i]->key) == 0) {
        optic_status st = optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata key '%s' appears twice", what, ms[i]->key);
        free(ms);
        return st;
      }
    }
    free(ms);
  }
  return OPTIC_OK;
}

optic_status ckpt_parse_index(const char *what, const uint8_t *index, ckpt_layout *l, ckpt_entry *entries,
                              ckpt_meta_item *meta, char *names, const ckpt_entry **sorted) {
  const uint64_t end = l->index_bytes;
  l->total_chunks = 0;
  uint64_t at = CKPT_HEADER_BYTES, expect = l->payload_offset;
  for (uint32_t i = 0; i < l->entry_count; i++) {
    optic_status st = parse_entry(what, index, &at, i, l, entries, &names, &expect);
    if (st != OPTIC_OK) return st;
  }
  if (ckpt_align_up(expect) != l->payload_end)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: payload ends at byte %llu, the entries end at %llu", what,
                      (unsigned long long)l->payload_end, (unsigned long long)expect);
  for (uint32_t i = 0; i < l->meta_count; i++) {
    optic_status st = parse_meta(what, index, &at, end, i, meta, &names);
    if (st != OPTIC_OK) return st;
  }
  l->chunk_table_at = 0;
  if (l->version >= 2) {
    if ((end - at) / OPTIC_CKPT_DIGEST_BYTES != l->total_chunks || (end - at) % OPTIC_CKPT_DIGEST_BYTES != 0)
      return optic_fail(OPTIC_ERR_CORRUPT,
                        "%s: the chunk hash table has %llu bytes, the entries' %llu chunks need "
                        "%llu",
                        what, (unsigned long long)(end - at), (unsigned long long)l->total_chunks,
                        (unsigned long long)(l->total_chunks * OPTIC_CKPT_DIGEST_BYTES));
    l->chunk_table_at = at;
    at = end;
  }
  if (at != end)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: %llu unexplained bytes at the end of the index", what,
                      (unsigned long long)(end - at));
  return check_unique(what, l, entries, meta, sorted);
}
