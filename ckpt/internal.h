/* Internal to ckpt/: the I/O helpers over the injectable layer, SHA-256
 * through OpenSSL EVP, and the one parallel pass that moves entry data
 * between memory and a file while hashing it in fixed-size chunks. */
#ifndef OPTIC_CKPT_INTERNAL_H
#define OPTIC_CKPT_INTERNAL_H

#include <stdint.h>

#include "ckpt/format.h"

/* Bytes moved per read or write call, and hashed per EVP update in a read
 * pass (small enough that a piece just read is still in L2 when hashed). */
#define CKPT_PIECE_BYTES ((size_t)256 << 10)
#define CKPT_MAX_THREADS 64

/* opts->io or the POSIX table. */
const optic_ckpt_io *ckpt_io_or_default(const optic_ckpt_io *io);
/* Writes all n bytes at off; IO error "<op>: writing PATH at byte X: <errno text>". */
optic_status ckpt_write_full(const optic_ckpt_io *io, int fd, const void *buf, size_t n, uint64_t off, const char *op,
                             const char *path);
/* Reads up to n bytes at off into buf, stopping early only at end of file;
 * *got receives the count. IO error on a failing read. */
optic_status ckpt_read_full(const optic_ckpt_io *io, int fd, void *buf, size_t n, uint64_t off, size_t *got,
                            const char *op, const char *path);
/* Reads exactly n bytes; CORRUPT "truncated at byte X" when the file ends first. */
optic_status ckpt_read_exact(const optic_ckpt_io *io, int fd, void *buf, size_t n, uint64_t off, const char *op,
                             const char *path);
/* optic_fail(OPTIC_ERR_IO, "<op>: <what> PATH: <strerror(-neg_errno)>"). */
optic_status ckpt_io_fail(int neg_errno, const char *op, const char *what, const char *path);

/* SHA-256 of n bytes (one shot). */
optic_status ckpt_sha256(const void *data, size_t n, uint8_t out[OPTIC_CKPT_DIGEST_BYTES]);

/* Threads to use for a requested count (0: OpenMP's max), within 1..64. */
int ckpt_threads(int requested);

/* One entry's data in a pass: where it lives in the file and in memory. */
typedef struct ckpt_span {
  uint64_t offset, bytes; /* in the file */
  uint8_t *mem;           /* save: the source; read: the destination, or NULL to read into scratch */
  size_t entry;           /* its entry number in the file (for messages) */
} ckpt_span;

typedef enum ckpt_pass_mode {
  CKPT_PASS_SAVE, /* write every span's mem to fd (one I/O thread) while the others hash mem */
  CKPT_PASS_READ, /* read every span from fd (into mem or scratch), hashing as it arrives */
  CKPT_PASS_COPY  /* as READ into scratch, and write each piece to out_fd at the same offset */
} ckpt_pass_mode;

typedef struct ckpt_pass {
  ckpt_pass_mode mode;
  const optic_ckpt_io *io;
  int fd, out_fd;
  const char *op, *path, *out_path; /* for messages */
  uint32_t chunk_log2;
  int threads;
  size_t nspans;
  const ckpt_span *spans;
  /* out: per span, SHA-256 over the SHA-256 of each of its chunks */
  uint8_t (*digests)[OPTIC_CKPT_DIGEST_BYTES];
  /* out, optional (NULL): every chunk's SHA-256, span by span in order
   * (sum over the spans of ckpt_chunks_of(bytes) digests) */
  uint8_t (*chunk_digests)[OPTIC_CKPT_DIGEST_BYTES];
} ckpt_pass;

/* Runs the pass. In SAVE mode the I/O thread also fsyncs fd once its writes
 * are done (while hashing goes on). READ/COPY mode reports a file that ends
 * early as CORRUPT "truncated at byte X". */
optic_status ckpt_run_pass(const ckpt_pass *pass);

/* The save and copy paths shared by save.c and dir.c. */
typedef struct ckpt_save_config {
  int threads;
  uint32_t chunk_log2, keep;
  const optic_ckpt_io *io;
  bool has_step; /* record step in the file */
  uint64_t step;
} ckpt_save_config;
optic_status ckpt_save_config_from(const optic_ckpt_save_options *opts, ckpt_save_config *out);
optic_status ckpt_save_file_with(const char *path, const optic_ckpt_entry *entries, size_t n,
                                 const optic_ckpt_meta *meta, size_t nmeta, const ckpt_save_config *cfg);
/* Temporary name for path: DIR/.BASE.tmp-PID-N (into buf of size). */
optic_status ckpt_temp_path(const char *path, char *buf, size_t size);
/* Copies an opened checkpoint to out_fd (same layout) with every chunk hashed
 * against its index as it goes and the padding checked: CORRUPT if the source
 * does not verify. out_io must be the reader's I/O layer. (reader.c) */
optic_status ckpt_copy_verified(optic_ckpt_reader_t *r, int out_fd, const char *out_path, const optic_ckpt_io *out_io);
/* The step in a file name of the naming scheme, "ckpt-<20 digits>.optic"
 * (the last path component of path); false for any other name. (dir.c) */
bool ckpt_step_from_name(const char *path, uint64_t *step);
/* fsyncs path's directory. */
optic_status ckpt_sync_parent(const optic_ckpt_io *io, const char *path, const char *op);

#endif
