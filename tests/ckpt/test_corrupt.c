/* Corruption: every single-byte flip, multi-byte flip, truncation and
 * extension of a checkpoint is rejected by verify with OPTIC_ERR_CORRUPT (never
 * OK, never a crash), and restore never returns OK with data that differs
 * from what was saved. Hand-made damage with a re-computed index hash reaches
 * each semantic check and its message. Mutations run on an in-memory file
 * (the I/O layer), a sample also on disk. Seeds are printed; `OPTIC_SEED=N`
 * repeats a run. */
#include <openssl/evp.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { N_ENTRIES = 3, SINGLE_FLIPS = 1200, MULTI_FLIPS = 600, TRUNCATIONS = 600, EXTENSIONS = 100, ON_DISK = 60 };

static const int64_t sizes[N_ENTRIES] = {1000, 33, 20000}; /* f32 elements; the last spans two 64 KiB chunks */
static float *data[N_ENTRIES];
static uint8_t *image; /* the saved file */
static size_t image_size;
static char dir[64], path[128];

static uint64_t seed_base(void) {
  const char *s = getenv("OPTIC_SEED");
  return s ? strtoull(s, NULL, 10) : 20261201;
}

static void make_image(void) {
  if (image != NULL) return;
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  snprintf(path, sizeof path, "%s/c.optic", dir);
  optic_ckpt_entry e[N_ENTRIES];
  const char *names[N_ENTRIES] = {"w", "b", "big"};
  for (int i = 0; i < N_ENTRIES; i++) {
    data[i] = malloc((size_t)sizes[i] * 4);
    ct_fill(data[i], (size_t)sizes[i] * 4, 7 + i);
    e[i] = (optic_ckpt_entry){names[i], {OPTIC_F32, {.rank = 1, .dims = {sizes[i]}}, data[i]}};
  }
  optic_ckpt_meta m[] = {optic_ckpt_meta_str("step", "42"), optic_ckpt_meta_str("optimizer", "sgd")};
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = 16, .record_step = true, .step = 42};
  OT_EXPECT_OK(optic_ckpt_save_file(path, e, N_ENTRIES, m, 2, &o));
  image = ct_read_file(path, &image_size);
  OT_CHECK(image != NULL && image_size > 80000);
}

/* verify on bytes; restore all entries: OK only with the saved data. */
static char verify_message[1024];
static int checks;

static optic_status check_bytes(const uint8_t *bytes, size_t n, bool *restored_wrong) {
  ct_memfile mf = {bytes, n};
  optic_ckpt_io io = ct_mem_io(&mf);
  /* Mostly one thread (fast on a loaded machine); every 8th check two. */
  optic_ckpt_read_options ro = {.size = sizeof ro, .threads = 1 + (checks++ % 8 == 0), .io = &io};
  optic_status st = optic_ckpt_verify_file("mem", &ro);
  snprintf(verify_message, sizeof verify_message, "%s", st == OPTIC_OK ? "" : optic_last_error());
  optic_ckpt_reader_t *r = NULL;
  *restored_wrong = false;
  if (optic_ckpt_reader_create("mem", &ro, &r) == OPTIC_OK) {
    float *out[N_ENTRIES];
    optic_ckpt_entry t[N_ENTRIES];
    const char *names[N_ENTRIES] = {"w", "b", "big"};
    for (int i = 0; i < N_ENTRIES; i++) {
      out[i] = calloc((size_t)sizes[i], 4);
      t[i] = (optic_ckpt_entry){names[i], {OPTIC_F32, {.rank = 1, .dims = {sizes[i]}}, out[i]}};
    }
    if (optic_ckpt_restore(r, t, N_ENTRIES) == OPTIC_OK)
      for (int i = 0; i < N_ENTRIES; i++) *restored_wrong |= memcmp(out[i], data[i], (size_t)sizes[i] * 4) != 0;
    for (int i = 0; i < N_ENTRIES; i++) free(out[i]);
  }
  optic_ckpt_reader_destroy(r);
  return st;
}

static void pristine_verifies(void) {
  make_image();
  bool wrong;
  OT_EXPECT_OK(check_bytes(image, image_size, &wrong));
  OT_CHECK(!wrong);
}

typedef enum { SINGLE, MULTI, TRUNCATE, EXTEND } mutation;

static size_t mutate(mutation kind, uint64_t *s, uint8_t *buf) {
  memcpy(buf, image, image_size);
  size_t n = image_size;
  switch (kind) {
    case SINGLE: buf[ct_next(s) % n] ^= (uint8_t)(1 + ct_next(s) % 255); break;
    case MULTI: {
      int k = 2 + (int)(ct_next(s) % 15);
      bool local = ct_next(s) & 1; /* a burst, or bytes anywhere */
      size_t at = ct_next(s) % n;
      for (int i = 0; i < k; i++) {
        size_t p = local ? (at + i) % n : ct_next(s) % n;
        buf[p] ^= (uint8_t)(1 + ct_next(s) % 255);
      }
      break;
    }
    case TRUNCATE: n = ct_next(s) % n; break;
    case EXTEND: {
      size_t extra = 1 + ct_next(s) % 200;
      for (size_t i = 0; i < extra; i++) buf[n + i] = (uint8_t)ct_next(s);
      n += extra;
      break;
    }
  }
  return n;
}

static void run_mutations(mutation kind, int count, const char *what) {
  make_image();
  uint8_t *buf = malloc(image_size + 256);
  uint64_t seed = seed_base() * 4 + (uint64_t)kind;
  printf("  %s: %d mutations, seed %llu (OPTIC_SEED=%llu)\n", what, count, (unsigned long long)seed,
         (unsigned long long)seed_base());
  uint64_t s = seed;
  int detected = 0, wrong_restores = 0;
  for (int i = 0; i < count; i++) {
    size_t n = mutate(kind, &s, buf);
    if (n == image_size && memcmp(buf, image, n) == 0) { /* a flip pair that cancelled out */
      detected++;
      continue;
    }
    bool wrong;
    optic_status st = check_bytes(buf, n, &wrong);
    if (st == OPTIC_ERR_CORRUPT) detected++;
    else OT_CHECK(false, "%s %d: verify returned %s: %s", what, i, optic_status_name(st), verify_message);
    if (wrong) wrong_restores++;
  }
  OT_CHECK(detected == count, "%s: %d of %d detected", what, detected, count);
  OT_CHECK(wrong_restores == 0, "%s: %d restores returned OK with wrong data", what, wrong_restores);
  printf("  %s: %d of %d detected, %d wrong restores\n", what, detected, count, wrong_restores);
  free(buf);
}

static void single_byte_flips(void) { run_mutations(SINGLE, SINGLE_FLIPS, "single-byte flips"); }
static void multi_byte_flips(void) { run_mutations(MULTI, MULTI_FLIPS, "multi-byte flips"); }
static void truncations(void) { run_mutations(TRUNCATE, TRUNCATIONS, "truncations"); }
static void extensions(void) { run_mutations(EXTEND, EXTENSIONS, "extensions"); }

/* A sample through real files and the POSIX layer. */
static void flips_on_disk(void) {
  make_image();
  uint8_t *buf = malloc(image_size + 256);
  char bad[160];
  snprintf(bad, sizeof bad, "%s/bad.optic", dir);
  uint64_t s = seed_base() * 4 + 17;
  for (int i = 0; i < ON_DISK; i++) {
    size_t n = mutate((mutation)(i % 3), &s, buf);
    OT_CHECK(ct_write_file(bad, buf, n));
    optic_status st = optic_ckpt_verify_file(bad, NULL);
    OT_CHECK(st == OPTIC_ERR_CORRUPT, "disk mutation %d: %s: %s", i, optic_status_name(st), optic_last_error());
  }
  unlink(bad);
  free(buf);
}

/* ------------------------------------------------ hand-made semantic damage */

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
/* Re-computes the footer's index hash so damage reaches the field checks. */
static void rehash(uint8_t *b) {
  uint64_t index = get64(b + 32), footer = get64(b + 48);
  unsigned int l;
  EVP_Digest(b, index, b + footer + 16, &l, EVP_sha256(), NULL);
}

static void expect_message(const uint8_t *b, size_t n, const char *want) {
  bool wrong;
  optic_status st = check_bytes(b, n, &wrong);
  OT_CHECK(st == OPTIC_ERR_CORRUPT && strstr(verify_message, want) != NULL, "want '%s', got %s: %s", want,
           optic_status_name(st), verify_message);
  OT_CHECK(!wrong);
}

/* Entry table: record 0 at 64 (name 'w', 1 byte -> 128 bytes), record 1 at 192, record 2 at 320. */
enum { REC0 = 64, REC1 = 64 + 128, REC2 = 64 + 256, OFF = 72, BYTES = 80, DIM0 = 8 };

static void messages_name_the_problem(void) {
  make_image();
  uint8_t *b = malloc(image_size + 64);
#define FRESH() memcpy(b, image, image_size)
  FRESH(), b[0] ^= 1, expect_message(b, image_size, "bad magic");
  FRESH(), b[8] = 3, rehash(b), expect_message(b, image_size, "unsupported format version 3");
  FRESH(), b[8] = 3, expect_message(b, image_size, "unsupported format version 3");
  FRESH(), b[8] = 0, rehash(b), expect_message(b, image_size, "unsupported format version 0");
  FRESH(), b[12] = 2, rehash(b), expect_message(b, image_size, "unknown header flags 0x2");
  FRESH(), b[12] = 0, rehash(b),
           expect_message(b, image_size, "reserved header bytes are not zero"); /* a step, no flag */
  FRESH(), b[get64(b + 32) - 1] ^= 1, rehash(b),
      expect_message(b, image_size, "entry 2 'big': its 2 chunk hashes do not hash to its SHA-256");
  FRESH(), expect_message(b, image_size / 2, "truncated at byte");
  FRESH(), expect_message(b, 100, "truncated at byte 100");
  FRESH(), expect_message(b, 0, "bad magic");
  FRESH(), memset(b + image_size - 64, 0, 64), expect_message(b, image_size, "footer missing");
  FRESH(), b[image_size - 64 + 20] ^= 4, expect_message(b, image_size, "index SHA-256 mismatch");
  FRESH(), b[REC0 + 120] = 'v', expect_message(b, image_size, "index SHA-256 mismatch");
  FRESH(), b[get64(b + 40) + 5] ^= 1, expect_message(b, image_size, "entry 0 'w' SHA-256 mismatch");
  /* One flipped bit names the damaged chunk, not the whole entry ('big' has two 64 KiB chunks). */
  char want[160];
  uint64_t big = get64(image + REC2 + OFF);
  snprintf(want, sizeof want, "entry 2 'big' SHA-256 mismatch in chunk 1 of 2 (data bytes %llu..%llu damaged)",
           (unsigned long long)(big + 65536), (unsigned long long)(big + 80000));
  FRESH(), b[big + 65536 + 7] ^= 0x20, expect_message(b, image_size, want);
  snprintf(want, sizeof want, "chunk 0 of 2 (data bytes %llu..%llu damaged", (unsigned long long)big,
           (unsigned long long)(big + 65536));
  FRESH(), b[big + 3] ^= 1, b[big + 70000] ^= 1, expect_message(b, image_size, want);
  FRESH(), b[big + 3] ^= 1, b[big + 70000] ^= 1, expect_message(b, image_size, "and 1 more chunk");
  FRESH(), b[get64(b + REC1 + OFF) + 132 + 3] ^= 1, expect_message(b, image_size, "padding byte");
  FRESH(), put64(b + REC1 + OFF, get64(b + REC0 + OFF) + 64), rehash(b),
      expect_message(b, image_size, "overlaps entry 0");
  FRESH(), put64(b + REC2 + DIM0, 1u << 30), put64(b + REC2 + BYTES, 4ull << 30), rehash(b),
      expect_message(b, image_size, "ends outside the payload");
  FRESH(), put64(b + REC2 + BYTES, 12), rehash(b),
      expect_message(b, image_size, "declares 12 bytes, its shape needs 80000");
  FRESH(), b[16] = 0x40, b[17] = 0x42, b[18] = 0x0f, rehash(b), expect_message(b, image_size, "absurd counts");
  FRESH(), b[16] = 0xff, b[17] = 0xff, b[18] = 0xff, b[19] = 0x7f, rehash(b),
           expect_message(b, image_size, "absurd entry count");
  FRESH(), b[REC1 + 120] = 'w', rehash(b), expect_message(b, image_size, "entry name 'w' appears twice");
  FRESH(), b[REC1 + 120] = '\n', rehash(b), expect_message(b, image_size, "holds a control character");
  FRESH(), b[REC1 + 2] = 14, rehash(b), expect_message(b, image_size, "unknown dtype code 14");
  FRESH(), b[REC1 + 3] = 9, rehash(b), expect_message(b, image_size, "rank 9");
  /* A dim is named by its index and its value. */
  FRESH(), put64(b + REC2 + DIM0, UINT64_MAX), rehash(b),
      expect_message(b, image_size, "entry 2 'big' dim 0 is 18446744073709551615 (more than 2^63-1)");
  FRESH(), put64(b + REC2 + DIM0 + 8, 5), rehash(b),
      expect_message(b, image_size, "entry 2 'big' dim 1 is 5 beyond its rank 1 (must be 0)");
  FRESH(), put64(b + 32, 1ull << 40), expect_message(b, image_size, "absurd index size");
  FRESH(), b[24] = 40, expect_message(b, image_size, "chunk size 2^40");
  FRESH(), memcpy(b + image_size, b + image_size - 64, 64), expect_message(b, image_size + 64, "after the footer");
#undef FRESH
  free(b);
}

static void cleanup(void) {
  for (int i = 0; i < N_ENTRIES; i++) free(data[i]);
  free(image);
  image = NULL;
  ct_rmdir(dir);
}

static const ot_case cases[] = {
    {"pristine_verifies", pristine_verifies},
    {"single_byte_flips", single_byte_flips},
    {"multi_byte_flips", multi_byte_flips},
    {"truncations", truncations},
    {"extensions", extensions},
    {"flips_on_disk", flips_on_disk},
    {"messages_name_the_problem", messages_name_the_problem},
    {"cleanup", cleanup},
};
OT_MAIN(cases)
