/* optic checkpoint layer: a documented file format (docs/checkpoint-format.md)
 * with SHA-256 (OpenSSL EVP) integrity, atomic crash-safe saves, verified
 * restore by name, rollback to the newest valid checkpoint, replicas with
 * repair. Never trusts a size read from a file; never uses a name as a path;
 * never prints.
 *
 * Contents, in order:
 *   1. limits of the format
 *   2. the I/O layer (replaceable system calls)
 *   3. saving: entries, metadata, options, optic_ckpt_save_file / _save
 *   4. reading: the reader, entry and metadata access, restore, verify
 *   5. directories, rollback across replicas, repair, migration */
#ifndef OPTIC_CKPT_H
#define OPTIC_CKPT_H

#include <optic/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the OpenSSL libcrypto linked at run time, e.g. "OpenSSL 3.0.19
 * 27 Jan 2026". Static string. Thread-safe. */
OPTIC_API const char *optic_ckpt_crypto_version(void);

/* ------------------------------------------------------------- limits */

/* The format version a save writes; readers accept versions 1 to this one
 * (docs/checkpoint-format.md: 2 added the step and per-chunk hashes). */
#define OPTIC_CKPT_FORMAT_VERSION 2u
#define OPTIC_CKPT_MAX_NAME 255u /* bytes of an entry name or metadata key */
#define OPTIC_CKPT_MAX_ENTRIES 1000000u
#define OPTIC_CKPT_MAX_META_VALUE ((size_t)1 << 24) /* 16 MiB per metadata value */
#define OPTIC_CKPT_DIGEST_BYTES 32u

/* ------------------------------------------------------------- I/O layer */

/* The system calls a checkpoint goes through, replaceable so tests (and
 * callers with their own storage) can inject failures such as ENOSPC or EIO.
 * Every function returns >= 0 on success and a negated errno value on
 * failure; `user` is passed back unchanged. The table must stay valid for the
 * call it is given to. pread/pwrite may transfer fewer bytes than asked (the
 * library loops); pread and pwrite may be called from several threads at once
 * (the hashing threads; repair's copy).
 * optic_ckpt_io_posix() is the default; a wrapper may delegate to it. */
typedef struct optic_ckpt_io {
  size_t size; /* sizeof(optic_ckpt_io) */
  void *user;
  int (*open)(void *user, const char *path, int flags, int mode); /* fd */
  int64_t (*pread)(void *user, int fd, void *buf, size_t n, uint64_t offset);
  int64_t (*pwrite)(void *user, int fd, const void *buf, size_t n, uint64_t offset);
  /* Size of a regular file; -EISDIR for a directory, -EINVAL for anything
   * else that is not a regular file (FIFO, socket, device). */
  int64_t (*file_size)(void *user, int fd);
  int (*fsync)(void *user, int fd);
  int (*close)(void *user, int fd);
  int (*rename)(void *user, const char *from, const char *to);
  int (*unlink)(void *user, const char *path);
  int (*fsync_dir)(void *user, const char *dir);
  /* Optional (may be NULL): start writeback of [offset, offset+n) early so
   * the final fsync has less to do (Linux sync_file_range). Errors ignored. */
  int (*writeback)(void *user, int fd, uint64_t offset, uint64_t n);
} optic_ckpt_io;

/* The POSIX implementation (read-only opens use O_NONBLOCK, so opening a
 * FIFO never waits for a writer). Static; thread-safe. */
OPTIC_API const optic_ckpt_io *optic_ckpt_io_posix(void);

/* ------------------------------------------------------------- saving */

/* One tensor to save or to restore, by name. Names are 1..255 bytes of UTF-8
 * without control characters ('/' and '.' are fine: names are never used as
 * paths), unique within a checkpoint. */
typedef optic_named_tensor optic_ckpt_entry; /* the same struct as the optimizer's state uses */

/* One user metadata item: key (same rules as entry names, unique) and value
 * bytes (value_len <= OPTIC_CKPT_MAX_META_VALUE; any bytes, e.g. RNG state).
 * optic_ckpt_meta_str makes one from a C string. */
typedef struct optic_ckpt_meta {
  const char *key;
  const void *value;
  size_t value_len;
} optic_ckpt_meta;

static inline optic_ckpt_meta optic_ckpt_meta_str(const char *key, const char *value) {
  size_t n = 0;
  while (value[n] != '\0') n++;
  optic_ckpt_meta m = {key, value, n};
  return m;
}

typedef struct optic_ckpt_save_options {
  size_t size;             /* sizeof(optic_ckpt_save_options) */
  int32_t threads;         /* hashing threads; 0: omp_get_max_threads(), at most 64 */
  uint32_t chunk_log2;     /* hash chunk 2^k bytes, 16..28; 0: 20 (1 MiB) */
  uint32_t keep;           /* optic_ckpt_save*: keep the newest `keep` checkpoints per directory; 0: all */
  const optic_ckpt_io *io; /* NULL: optic_ckpt_io_posix() */
  /* optic_ckpt_save_file: record `step` in the file when record_step is
   * true (optic_ckpt_save always records its own step argument). */
  bool record_step;
  uint64_t step;
} optic_ckpt_save_options;

/* size set, threads 0, chunk_log2 20 (1 MiB), keep 0 (all), io NULL
 * (POSIX), record_step false, step 0: what NULL options mean. */
OPTIC_API optic_ckpt_save_options optic_ckpt_save_options_default(void);

/* Writes entries[0..n) and meta[0..nmeta) to `path` atomically: a temporary
 * file in path's directory, written and hashed in one pass (hashing on
 * `threads` threads overlaps the writing), fsynced, renamed over path, and the
 * directory fsynced. On any error the temporary file is removed and whatever
 * was at path before is untouched. opts may be NULL (defaults). The tensors'
 * memory must not change during the call. Errors: INVALID_ARGUMENT (names,
 * tensors, metadata, options), IO (message names the call, the path and the
 * errno text), OUT_OF_MEMORY. Thread-safe for distinct paths. */
OPTIC_API optic_status optic_ckpt_save_file(const char *path, const optic_ckpt_entry *entries, size_t n,
                                            const optic_ckpt_meta *meta, size_t nmeta,
                                            const optic_ckpt_save_options *opts);

/* Saves step `step` as DIR/ckpt-<step as 20 digits>.optic, with the step
 * recorded in the file too (the naming scheme
 * is the manifest: the directory lists completed checkpoints, temporary files
 * start with '.') in every directory of dirs[0..ndirs) (replicas), each
 * atomically as optic_ckpt_save_file, and then, only after the new file is
 * durable, deletes all but the newest opts->keep checkpoints of each
 * directory. Stale temporary files of earlier, interrupted saves are removed
 * (one writer per directory). If a replica fails the others are still
 * written; the first error is returned and its message names the directory.
 * Thread-safe for distinct directories. */
OPTIC_API optic_status optic_ckpt_save(const char *const *dirs, size_t ndirs, uint64_t step,
                                       const optic_ckpt_entry *entries, size_t n, const optic_ckpt_meta *meta,
                                       size_t nmeta, const optic_ckpt_save_options *opts);

/* ------------------------------------------------------------- reading */

typedef struct optic_ckpt_read_options {
  size_t size;             /* sizeof(optic_ckpt_read_options) */
  int32_t threads;         /* hashing threads; 0: omp_get_max_threads(), at most 64 */
  const optic_ckpt_io *io; /* NULL: POSIX */
} optic_ckpt_read_options;

/* size set, threads 0, io NULL (POSIX). */
OPTIC_API optic_ckpt_read_options optic_ckpt_read_options_default(void);

/* An opened checkpoint whose index (header, entry table, metadata) has been
 * checked against the footer's SHA-256 and validated; entry data is verified
 * when it is read. Not thread-safe: one thread at a time per reader. */
typedef struct optic_ckpt_reader_t optic_ckpt_reader_t;

/* Opens and checks path. Reads at most the index and the footer; allocates no
 * more than the file's size allows. Errors: IO (cannot open/read), CORRUPT
 * (message says what: bad magic, unsupported version, truncated at byte X,
 * footer missing, index hash mismatch, entry N's offset outside the file,
 * overlapping entries, absurd counts, invalid names...), OUT_OF_MEMORY. The
 * caller destroys the reader. */
OPTIC_API optic_status optic_ckpt_reader_create(const char *path, const optic_ckpt_read_options *opts,
                                                optic_ckpt_reader_t **out);
OPTIC_API void optic_ckpt_reader_destroy(optic_ckpt_reader_t *r); /* NULL-safe */

typedef struct optic_ckpt_entry_info {
  const char *name; /* owned by the reader */
  optic_dtype dtype;
  optic_shape shape;
  uint64_t offset, bytes;                  /* where the data is in the file */
  uint8_t sha256[OPTIC_CKPT_DIGEST_BYTES]; /* root of the entry's chunk hashes */
} optic_ckpt_entry_info;

OPTIC_API size_t optic_ckpt_entry_count(const optic_ckpt_reader_t *r);
/* Entry i (in file order); INVALID_ARGUMENT when i is out of range. */
OPTIC_API optic_status optic_ckpt_entry_at(const optic_ckpt_reader_t *r, size_t i, optic_ckpt_entry_info *out);
/* Index of the entry called name; NOT_FOUND otherwise. */
OPTIC_API optic_status optic_ckpt_find(const optic_ckpt_reader_t *r, const char *name, size_t *index);
OPTIC_API size_t optic_ckpt_meta_count(const optic_ckpt_reader_t *r);
/* Metadata item i; key and value point into the reader (value is followed by
 * a NUL byte not counted in len, so text values are C strings). */
OPTIC_API optic_status optic_ckpt_meta_at(const optic_ckpt_reader_t *r, size_t i, const char **key, const void **value,
                                          size_t *len);
/* Value of key; NOT_FOUND if absent. */
OPTIC_API optic_status optic_ckpt_meta_get(const optic_ckpt_reader_t *r, const char *key, const void **value,
                                           size_t *len);
OPTIC_API uint64_t optic_ckpt_file_bytes(const optic_ckpt_reader_t *r);
/* The file's format version (1 or 2); 0 for NULL. */
OPTIC_API uint32_t optic_ckpt_format_version(const optic_ckpt_reader_t *r);
/* The step recorded in the file: OK with *step, or NOT_FOUND when it records
 * none (a version-1 file, or optic_ckpt_save_file without record_step). */
OPTIC_API optic_status optic_ckpt_step(const optic_ckpt_reader_t *r, uint64_t *step);
/* Name against content: when the file's name follows the naming scheme
 * (ckpt-<20 digits>.optic) and the file records a step, the two must agree;
 * otherwise CORRUPT "PATH: named as step 3 but the checkpoint records step 2
 * (renamed or copied from another step's file?)". OK when they agree, when the
 * name is not of the scheme, or when the file records no step (version 1:
 * nothing to check against). Reads nothing. */
OPTIC_API optic_status optic_ckpt_check_name(const optic_ckpt_reader_t *r);
OPTIC_API uint32_t optic_ckpt_chunk_bytes(const optic_ckpt_reader_t *r);
/* SHA-256 of the index (header, entry table with the entries' hashes, metadata, and in
 * version 2 the chunk hash table), as in the footer. */
OPTIC_API const uint8_t *optic_ckpt_root_sha256(const optic_ckpt_reader_t *r);

/* Restores targets[0..n) by name into the caller's tensors: each must exist
 * in the checkpoint (NOT_FOUND), with the same dtype and shape
 * (SHAPE_MISMATCH; message names the entry, both shapes). Data is read
 * straight into the tensors and hashed on `threads` threads; OK means every
 * byte of every target matches its saved SHA-256. On CORRUPT (message names
 * the entry and, in a version-2 file, the first damaged chunk with its byte
 * range and how many more are damaged; a version-1 file records only the
 * entry's hash, so the message gives the entry's whole range) or IO the
 * targets' contents are unspecified and must not be used. Nothing is written before the name, dtype and shape checks of
 * all targets pass. */
OPTIC_API optic_status optic_ckpt_restore(optic_ckpt_reader_t *r, const optic_ckpt_entry *targets, size_t n);

/* Restores entry `name` into a buffer the library allocates from allocator
 * (NULL: default), 64-byte aligned; on OK *out views it and the caller frees
 * it with optic_free(allocator, out->data, bytes, OPTIC_DEFAULT_ALIGNMENT).
 * On error nothing is left allocated. */
OPTIC_API optic_status optic_ckpt_restore_alloc(optic_ckpt_reader_t *r, const char *name,
                                                const optic_allocator *allocator, optic_tensor *out);

/* Verifies the name against the content (optic_ckpt_check_name), every
 * entry's data and the zero padding between entries (the index was verified
 * at create). OK or CORRUPT/IO with the first problem. */
OPTIC_API optic_status optic_ckpt_verify(optic_ckpt_reader_t *r);
/* reader_create + verify + destroy. */
OPTIC_API optic_status optic_ckpt_verify_file(const char *path, const optic_ckpt_read_options *opts);

/* ----------------------------------------------- directories, rollback, replicas */

/* Steps of the completed checkpoints (files named ckpt-<20 digits>.optic) in
 * dir, ascending. Writes min(count, cap) steps into steps (may be NULL when
 * cap is 0) and the total into *count. Does not open the files. Errors: IO. */
OPTIC_API optic_status optic_ckpt_list(const char *dir, uint64_t *steps, size_t cap, size_t *count);
/* Path of step's checkpoint in dir, "DIR/ckpt-%020llu.optic", into buf;
 * returns the length needed (snprintf-like). */
OPTIC_API int optic_ckpt_path(const char *dir, uint64_t step, char *buf, size_t size);

typedef struct optic_ckpt_restore_report {
  size_t size;             /* sizeof(optic_ckpt_restore_report) */
  uint64_t step;           /* out: the step restored */
  size_t dir_index;        /* out: which of dirs it came from */
  size_t skipped;          /* out: checkpoint files tried and rejected (corrupt, unreadable, mismatched) */
  char first_skipped[512]; /* out: "PATH: message" of the newest rejected file ("" if none) */
} optic_ckpt_restore_report;

/* Rollback across replicas: tries the steps found in any of dirs from the
 * newest down, and for each step each directory in order, restoring targets
 * (optic_ckpt_restore) from the first file that opens and verifies; corrupt
 * or unreadable files are skipped and counted in report (may be NULL), and
 * so is a file whose recorded step differs from its name's (renamed or copied
 * from another step: optic_ckpt_check_name), so a misnamed file never passes
 * for the step its name claims.
 * Returns OK with report->step, NOT_FOUND when no directory holds a
 * checkpoint, CORRUPT when every one was rejected (message: how many, and the
 * newest one's problem); the targets are then unspecified. A file whose
 * entries do not match the targets (name, dtype, shape) is skipped too. */
OPTIC_API optic_status optic_ckpt_restore_latest(const char *const *dirs, size_t ndirs, const optic_ckpt_entry *targets,
                                                 size_t n, const optic_ckpt_read_options *opts,
                                                 optic_ckpt_restore_report *report);

typedef struct optic_ckpt_repair_report {
  size_t size;          /* sizeof(optic_ckpt_repair_report) */
  size_t checked;       /* out: checkpoint files verified */
  size_t valid;         /* out: of which valid */
  size_t repaired;      /* out: files rewritten (corrupt) or created (missing) from a valid replica */
  size_t unrecoverable; /* out: steps with no valid replica in any directory */
} optic_ckpt_repair_report;

/* Verifies every checkpoint of every directory (optic_ckpt_verify: a copy
 * whose recorded step differs from its name counts as corrupt); for each
 * step, a corrupt or missing copy is rewritten from a valid replica through the verified path:
 * the good file is copied into a temporary file beside the bad one with every
 * chunk hashed against its saved SHA-256 as it goes, fsynced, renamed over
 * the bad copy, and the directory fsynced. Steps older than the oldest step
 * of a directory are not re-created there (its keep-K window). Returns OK if
 * every step ends with a valid copy in every directory; CORRUPT if some step
 * has none; IO if a repair failed. report may be NULL. */
OPTIC_API optic_status optic_ckpt_repair(const char *const *dirs, size_t ndirs, const optic_ckpt_save_options *opts,
                                         optic_ckpt_repair_report *report);

/* Live migration of a running workload to another host is not possible with
 * checkpoints alone: always OPTIC_ERR_UNSUPPORTED with a message saying what
 * it would need. Save, start the job elsewhere and restore instead. */
OPTIC_API optic_status optic_ckpt_migrate_workload(const char *dir, const char *target_host);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_CKPT_H */
