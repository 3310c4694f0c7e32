/* Internal: the on-disk checkpoint format (docs/checkpoint-format.md) as
 * constants, the canonical layout of a file, and the index codec. The parser
 * treats every byte as hostile: it never allocates more than the index it was
 * handed, and it checks every count, size, offset and name. */
#ifndef OPTIC_CKPT_FORMAT_H
#define OPTIC_CKPT_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include <optic/ckpt.h>

#define CKPT_MAGIC "OPTICKPT"
#define CKPT_FOOTER_MAGIC "OPTICEND"
#define CKPT_HEADER_BYTES 64u
#define CKPT_FOOTER_BYTES 64u
#define CKPT_ALIGN 64u
#define CKPT_ENTRY_FIXED 120u /* table record without its name */
#define CKPT_FLAG_STEP 1u     /* version 2 header flag: bytes 56..63 hold the step */
#define CKPT_META_FIXED 8u    /* metadata record without key and value */
#define CKPT_DEFAULT_CHUNK_LOG2 20u
#define CKPT_MIN_CHUNK_LOG2 16u
#define CKPT_MAX_CHUNK_LOG2 28u
/* An index (header + table + metadata + chunk hashes) larger than this is rejected as
 * absurd before anything is allocated for it. */
#define CKPT_MAX_INDEX_BYTES ((uint64_t)1 << 30)

/* One entry as the library holds it (parsed or about to be written). */
typedef struct ckpt_entry {
  const char *name; /* NUL-terminated */
  uint32_t name_len;
  optic_dtype dtype;
  optic_shape shape;
  uint64_t offset, bytes;
  uint64_t first_chunk; /* number of the entry's first hash chunk, counting every entry's chunks in file order */
  uint8_t sha256[OPTIC_CKPT_DIGEST_BYTES];
} ckpt_entry;

typedef struct ckpt_meta_item {
  const char *key; /* NUL-terminated */
  uint32_t key_len;
  const uint8_t *value; /* followed by a NUL byte (parsed indexes) */
  uint32_t value_len;
} ckpt_meta_item;

/* Everything the header and footer say, plus the parsed index. */
typedef struct ckpt_layout {
  uint32_t version; /* 1 or 2 (OPTIC_CKPT_FORMAT_VERSION, what a save writes) */
  uint32_t entry_count, meta_count, chunk_log2;
  bool has_step; /* version 2 with CKPT_FLAG_STEP */
  uint64_t step;
  uint64_t index_bytes, payload_offset, payload_end, file_bytes;
  uint64_t total_chunks;   /* hash chunks of all entries */
  uint64_t chunk_table_at; /* version 2: offset in the index of the chunk hash table; 0 in version 1 */
  uint8_t root[OPTIC_CKPT_DIGEST_BYTES];
} ckpt_layout;

static inline uint64_t ckpt_align_up(uint64_t x) { return (x + CKPT_ALIGN - 1) & ~(uint64_t)(CKPT_ALIGN - 1); }

/* File code of a dtype (stable, documented) and back; 0 / INVALID if unknown. */
uint8_t ckpt_dtype_code(optic_dtype d);
optic_dtype ckpt_dtype_from_code(uint8_t code);

/* A name or key is 1..255 bytes of valid UTF-8 (no overlongs, no surrogates)
 * without C0 controls or DEL. Returns NULL if fine, else why not (static). */
const char *ckpt_name_problem(const uint8_t *s, size_t len);

/* Fills entries' offsets and first chunks and the layout (version 2,
 * index_bytes with the chunk hash table, payload_offset, payload_end,
 * file_bytes, total_chunks) for the given entries (names, bytes set) and
 * metadata; has_step and step are left as they are. OVERFLOW if the sizes do
 * not fit. */
optic_status ckpt_plan_layout(ckpt_entry *entries, size_t n, const ckpt_meta_item *meta, size_t nmeta,
                              uint32_t chunk_log2, ckpt_layout *layout);

/* Serializes header + table + metadata + the chunk hash table
 * (chunk_digests[layout->total_chunks]) into buf (layout->index_bytes bytes). */
void ckpt_encode_index(const ckpt_layout *layout, const ckpt_entry *entries, const ckpt_meta_item *meta,
                       const uint8_t (*chunk_digests)[OPTIC_CKPT_DIGEST_BYTES], uint8_t *buf);
/* Serializes the footer (CKPT_FOOTER_BYTES) with layout->root and file_bytes. */
void ckpt_encode_footer(const ckpt_layout *layout, uint8_t *buf);

/* Checks the header (first CKPT_HEADER_BYTES of a file of file_bytes bytes)
 * and fills the layout's header fields. CORRUPT with the reason; `what`
 * prefixes the message (usually the path). */
optic_status ckpt_parse_header(const char *what, const uint8_t *hdr, uint64_t file_bytes, ckpt_layout *layout);
/* Checks the footer against the layout; fills layout->root. */
optic_status ckpt_parse_footer(const char *what, const uint8_t *ftr, ckpt_layout *layout);
/* Parses and validates the table and metadata of index (layout->index_bytes
 * bytes, hash already checked) into entries[entry_count] and
 * meta[meta_count], and sets layout->total_chunks and (version 2, whose
 * index ends with one SHA-256 per chunk) layout->chunk_table_at. Names, keys and values are copied NUL-terminated into
 * `names`, an arena of index_bytes + entry_count + 2 * meta_count bytes.
 * sorted[entry_count] receives the entries ordered by name (for lookups).
 * CORRUPT with the entry or item and the reason (bad dtype, shape, sizes,
 * offsets outside the payload, overlaps, invalid or duplicate names). */
optic_status ckpt_parse_index(const char *what, const uint8_t *index, ckpt_layout *layout, ckpt_entry *entries,
                              ckpt_meta_item *meta, char *names, const ckpt_entry **sorted);

/* Number of hash chunks of an entry of `bytes` bytes. */
static inline uint64_t ckpt_chunks_of(uint64_t bytes, uint32_t chunk_log2) {
  return (bytes >> chunk_log2) + ((bytes & (((uint64_t)1 << chunk_log2) - 1)) != 0);
}

#endif
