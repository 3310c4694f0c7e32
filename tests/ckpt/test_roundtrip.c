/* Checkpoint save/restore round trips: every dtype, scalars, empty tensors,
 * entries of chunk size n-1, n, n+1 and many chunks, metadata (text, binary,
 * empty), restore by name in any order or subset, library-owned buffers,
 * the entry hash against an independent SHA-256, identical files at 1 and 2
 * threads, and every argument error. */
#include <openssl/evp.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

#define CHUNK_LOG2 16u
#define CHUNK ((size_t)1 << CHUNK_LOG2)

typedef struct fixture {
  char dir[64], path[128];
  optic_ckpt_entry e[8];
  void *data[8];
  size_t bytes[8];
  size_t n;
} fixture;

static void add(fixture *f, const char *name, optic_dtype dt, int32_t rank, const int64_t *dims) {
  optic_shape s;
  OT_EXPECT_OK(optic_shape_make(rank, dims, &s));
  size_t bytes = 0;
  OT_EXPECT_OK(optic_shape_bytes(&s, dt, &bytes));
  void *p = bytes ? malloc(bytes) : NULL;
  if (dt == OPTIC_PRED) {
    for (size_t i = 0; i < bytes; i++) ((uint8_t *)p)[i] = (uint8_t)(i % 3 == 0);
  } else {
    ct_fill(p, bytes, 1000 + f->n);
  }
  f->e[f->n] = (optic_ckpt_entry){name, {dt, s, p}};
  f->data[f->n] = p;
  f->bytes[f->n] = bytes;
  f->n++;
}

static void fixture_make(fixture *f) {
  memset(f, 0, sizeof *f);
  OT_CHECK(ct_mkdtemp(f->dir, sizeof f->dir));
  snprintf(f->path, sizeof f->path, "%s/model.optic", f->dir);
  int64_t d1[] = {(int64_t)(CHUNK / 4 - 1)}, d2[] = {(int64_t)(CHUNK / 4)}, d3[] = {(int64_t)(CHUNK / 4 + 1)};
  int64_t d4[] = {3, 5, 7}, d5[] = {0, 4}, d6[] = {37}, d7[] = {2, 2, 2, 2, 2, 2, 2, 2},
          d8[] = {5 * (int64_t)CHUNK / 8 + 3};
  add(f, "layer0/w", OPTIC_F32, 1, d1);
  add(f, "layer0/b", OPTIC_F32, 1, d2);
  add(f, "layer1/w", OPTIC_F32, 1, d3);
  add(f, "step", OPTIC_S32, 0, NULL);
  add(f, "empty", OPTIC_F64, 2, d5);
  add(f, "mask ü", OPTIC_PRED, 1, d6);
  add(f, "rank8", OPTIC_U8, 8, d7);
  add(f, "../../etc/passwd", OPTIC_F64, 1, d8);
  (void)d4;
}

static void fixture_free(fixture *f) {
  for (size_t i = 0; i < f->n; i++) free(f->data[i]);
  ct_rmdir(f->dir);
}

static const uint8_t rng_state[5] = {0, 1, 2, 0xff, 0};

static optic_status save(fixture *f, int threads) {
  optic_ckpt_meta meta[] = {optic_ckpt_meta_str("optimizer", "adamw"),
                            optic_ckpt_meta_str("step", "1200"),
                            {"rng", rng_state, sizeof rng_state},
                            {"empty", NULL, 0}};
  optic_ckpt_save_options o = {.size = sizeof o, .threads = threads, .chunk_log2 = CHUNK_LOG2};
  return optic_ckpt_save_file(f->path, f->e, f->n, meta, 4, &o);
}

static void roundtrip_all_entries(void) {
  fixture f;
  fixture_make(&f);
  OT_EXPECT_OK(save(&f, 2));
  OT_EXPECT_OK(optic_ckpt_verify_file(f.path, NULL));
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(f.path, NULL, &r));
  OT_CHECK(optic_ckpt_entry_count(r) == f.n);
  OT_CHECK(optic_ckpt_chunk_bytes(r) == CHUNK);
  /* Restore in reverse order into fresh buffers. */
  optic_ckpt_entry t[8];
  void *out[8];
  for (size_t i = 0; i < f.n; i++) {
    size_t k = f.n - 1 - i;
    out[i] = f.bytes[k] ? malloc(f.bytes[k]) : NULL;
    if (out[i]) memset(out[i], 0xa5, f.bytes[k]);
    t[i] = f.e[k];
    t[i].tensor.data = out[i];
  }
  OT_EXPECT_OK(optic_ckpt_restore(r, t, f.n));
  for (size_t i = 0; i < f.n; i++) {
    size_t k = f.n - 1 - i;
    OT_CHECK(f.bytes[k] == 0 || memcmp(out[i], f.data[k], f.bytes[k]) == 0, "entry %s differs", f.e[k].name);
    free(out[i]);
  }
  /* Library-owned buffer. */
  optic_tensor got;
  OT_EXPECT_OK(optic_ckpt_restore_alloc(r, "layer1/w", NULL, &got));
  OT_CHECK(got.dtype == OPTIC_F32 && optic_shape_equal(&got.shape, &f.e[2].tensor.shape));
  OT_CHECK(memcmp(got.data, f.data[2], f.bytes[2]) == 0);
  OT_CHECK(((uintptr_t)got.data & 63) == 0);
  optic_free(NULL, got.data, f.bytes[2], OPTIC_DEFAULT_ALIGNMENT);
  OT_EXPECT_STATUS(optic_ckpt_restore_alloc(r, "nope", NULL, &got), OPTIC_ERR_NOT_FOUND);
  /* Metadata. */
  const void *v;
  size_t len;
  OT_EXPECT_OK(optic_ckpt_meta_get(r, "optimizer", &v, &len));
  OT_CHECK(len == 5 && strcmp(v, "adamw") == 0);
  OT_EXPECT_OK(optic_ckpt_meta_get(r, "rng", &v, &len));
  OT_CHECK(len == sizeof rng_state && memcmp(v, rng_state, len) == 0);
  OT_EXPECT_OK(optic_ckpt_meta_get(r, "empty", &v, &len));
  OT_CHECK(len == 0 && ((const char *)v)[0] == '\0');
  OT_EXPECT_STATUS(optic_ckpt_meta_get(r, "missing", &v, &len), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(optic_ckpt_meta_count(r) == 4);
  /* Names were never used as paths: only the checkpoint is in the directory. */
  size_t hidden = 0;
  OT_CHECK(ct_count_files(f.dir, &hidden) == 1 && hidden == 0);
  optic_ckpt_reader_destroy(r);
  fixture_free(&f);
}

/* An entry's hash is SHA-256 over its chunks' SHA-256s (docs/checkpoint-format.md). */
static void entry_hash_is_the_documented_tree(void) {
  fixture f;
  fixture_make(&f);
  OT_EXPECT_OK(save(&f, 1));
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(f.path, NULL, &r));
  for (size_t i = 0; r && i < f.n; i++) {
    optic_ckpt_entry_info info;
    OT_EXPECT_OK(optic_ckpt_entry_at(r, i, &info));
    OT_CHECK(strcmp(info.name, f.e[i].name) == 0 && info.bytes == f.bytes[i] && info.offset % 64 == 0);
    size_t chunks = (f.bytes[i] + CHUNK - 1) / CHUNK;
    uint8_t *leaves = malloc(chunks * 32 + 1), want[32];
    unsigned int l;
    for (size_t c = 0; c < chunks; c++) {
      size_t len = f.bytes[i] - c * CHUNK < CHUNK ? f.bytes[i] - c * CHUNK : CHUNK;
      EVP_Digest((uint8_t *)f.data[i] + c * CHUNK, len, leaves + 32 * c, &l, EVP_sha256(), NULL);
    }
    EVP_Digest(leaves, chunks * 32, want, &l, EVP_sha256(), NULL);
    OT_CHECK(memcmp(want, info.sha256, 32) == 0, "entry %zu hash", i);
    free(leaves);
  }
  optic_ckpt_entry_info info;
  OT_EXPECT_STATUS(optic_ckpt_entry_at(r, f.n, &info), OPTIC_ERR_INVALID_ARGUMENT);
  optic_ckpt_reader_destroy(r);
  fixture_free(&f);
}

static void same_bytes_at_1_and_2_threads(void) {
  fixture f;
  fixture_make(&f);
  OT_EXPECT_OK(save(&f, 1));
  size_t n1 = 0, n2 = 0;
  uint8_t *a = ct_read_file(f.path, &n1);
  OT_EXPECT_OK(save(&f, 2));
  uint8_t *b = ct_read_file(f.path, &n2);
  OT_CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
  free(a);
  free(b);
  fixture_free(&f);
}

static void restore_subset_and_mismatches(void) {
  fixture f;
  fixture_make(&f);
  OT_EXPECT_OK(save(&f, 2));
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(f.path, NULL, &r));
  int32_t step = -1;
  optic_ckpt_entry t = {"step", {OPTIC_S32, {.rank = 0}, &step}};
  OT_EXPECT_OK(optic_ckpt_restore(r, &t, 1));
  OT_CHECK(memcmp(&step, f.data[3], 4) == 0);
  float wrong[4];
  optic_ckpt_entry bad = {"step", {OPTIC_F32, {.rank = 0}, wrong}};
  OT_EXPECT_STATUS(optic_ckpt_restore(r, &bad, 1), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "entry 'step' is s32[] in") != NULL, "%s", optic_last_error());
  bad = (optic_ckpt_entry){"layer0/b", {OPTIC_F32, {.rank = 1, .dims = {4}}, wrong}};
  OT_EXPECT_STATUS(optic_ckpt_restore(r, &bad, 1), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "f32[4]") != NULL, "%s", optic_last_error());
  /* A missing name fails before anything is written. */
  step = 77;
  optic_ckpt_entry two[2] = {t, {"ghost", {OPTIC_F32, {.rank = 0}, wrong}}};
  OT_EXPECT_STATUS(optic_ckpt_restore(r, two, 2), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(step == 77 && strstr(optic_last_error(), "'ghost'") != NULL);
  OT_EXPECT_OK(optic_ckpt_restore(r, NULL, 0));
  optic_ckpt_reader_destroy(r);
  fixture_free(&f);
}

/* The 1-, 2- and 8-byte dtypes save and restore bit-exactly (halves with NaN
 * and subnormal patterns); a token entry is refused by name. */
static void every_new_dtype(void) {
  static const optic_dtype ds[] = {OPTIC_S8,  OPTIC_S16, OPTIC_S64, OPTIC_U16,
                                   OPTIC_U32, OPTIC_U64, OPTIC_F16, OPTIC_BF16};
  enum { N = 8, LEN = 37 };
  fixture f;
  fixture_make(&f);
  optic_ckpt_entry e[N];
  unsigned char data[N][LEN * 8], back[N][LEN * 8];
  for (int i = 0; i < N; i++) {
    size_t es = optic_dtype_size(ds[i]);
    for (size_t b = 0; b < LEN * es; b++) data[i][b] = (unsigned char)(b * 73 + (size_t)i * 11 + 0x7F);
    e[i] = (optic_ckpt_entry){optic_dtype_name(ds[i]), {ds[i], {.rank = 1, .dims = {LEN}}, data[i]}};
  }
  OT_EXPECT_OK(optic_ckpt_save_file(f.path, e, N, NULL, 0, NULL));
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(f.path, NULL, &r));
  optic_ckpt_entry t[N];
  for (int i = 0; i < N; i++) t[i] = (optic_ckpt_entry){e[i].name, {ds[i], {.rank = 1, .dims = {LEN}}, back[i]}};
  OT_EXPECT_OK(optic_ckpt_restore(r, t, N));
  for (int i = 0; i < N; i++) {
    OT_CHECK(memcmp(back[i], data[i], LEN * optic_dtype_size(ds[i])) == 0, "%s", optic_dtype_name(ds[i]));
  }
  /* a u16 target does not take a bf16 entry of the same size */
  t[0] = (optic_ckpt_entry){"bf16", {OPTIC_U16, {.rank = 1, .dims = {LEN}}, back[0]}};
  OT_EXPECT_STATUS(optic_ckpt_restore(r, t, 1), OPTIC_ERR_SHAPE_MISMATCH);
  optic_ckpt_reader_destroy(r);
  optic_ckpt_entry tok = {"tok", {OPTIC_TOKEN, {.rank = 0}, NULL}};
  OT_EXPECT_STATUS(optic_ckpt_save_file(f.path, &tok, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "entry 'tok' is a token") != NULL, "%s", optic_last_error());
  fixture_free(&f);
}

static void empty_checkpoint(void) {
  char dir[64], path[128];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  snprintf(path, sizeof path, "%s/e.optic", dir);
  OT_EXPECT_OK(optic_ckpt_save_file(path, NULL, 0, NULL, 0, NULL));
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  OT_CHECK(optic_ckpt_entry_count(r) == 0 && optic_ckpt_meta_count(r) == 0 && optic_ckpt_file_bytes(r) == 128);
  OT_EXPECT_OK(optic_ckpt_verify(r));
  optic_ckpt_reader_destroy(r);
  ct_rmdir(dir);
}

static void argument_errors(void) {
  char dir[64], path[128];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  snprintf(path, sizeof path, "%s/a.optic", dir);
  float x[2] = {1, 2};
  optic_tensor t = {OPTIC_F32, {.rank = 1, .dims = {2}}, x};
  char long_name[300];
  memset(long_name, 'a', 256);
  long_name[256] = '\0';
  const char *bad_names[] = {"", "tab\there", "nul\x7f", "\xc3(", "\xe0\x80\x80", "\xed\xa0\x80", long_name};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
    optic_ckpt_entry e = {bad_names[i], t};
    OT_EXPECT_STATUS(optic_ckpt_save_file(path, &e, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
    optic_ckpt_meta m = optic_ckpt_meta_str(bad_names[i], "v");
    OT_EXPECT_STATUS(optic_ckpt_save_file(path, NULL, 0, &m, 1, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  }
  optic_ckpt_entry dup[2] = {{"w", t}, {"w", t}};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, dup, 2, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "'w' appears twice") != NULL, "%s", optic_last_error());
  optic_ckpt_meta mdup[2] = {optic_ckpt_meta_str("k", "1"), optic_ckpt_meta_str("k", "2")};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, NULL, 0, mdup, 2, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_ckpt_entry nodata = {"w", {OPTIC_F32, {.rank = 1, .dims = {2}}, NULL}};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, &nodata, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_ckpt_entry badtype = {"w", {OPTIC_DTYPE_INVALID, {.rank = 1, .dims = {2}}, x}};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, &badtype, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = 12};
  optic_ckpt_entry ok = {"w", t};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, &ok, 1, NULL, 0, &o), OPTIC_ERR_INVALID_ARGUMENT);
  o = (optic_ckpt_save_options){.size = 0};
  OT_EXPECT_STATUS(optic_ckpt_save_file(path, &ok, 1, NULL, 0, &o), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_ckpt_save_file(NULL, &ok, 1, NULL, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  /* Nothing was written by any failed save; a path in a missing directory is an I/O error. */
  OT_CHECK(ct_count_files(dir, NULL) == 0);
  char missing[160];
  snprintf(missing, sizeof missing, "%s/no/such/dir/a.optic", dir);
  OT_EXPECT_STATUS(optic_ckpt_save_file(missing, &ok, 1, NULL, 0, NULL), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "No such file or directory") != NULL, "%s", optic_last_error());
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_STATUS(optic_ckpt_reader_create(missing, NULL, &r), OPTIC_ERR_IO);
  OT_EXPECT_STATUS(optic_ckpt_reader_create(dir, NULL, &r), OPTIC_ERR_IO); /* a directory */
  OT_CHECK(r == NULL);
  optic_ckpt_reader_destroy(NULL);
  ct_rmdir(dir);
}

static void migrate_is_unsupported(void) {
  OT_EXPECT_STATUS(optic_ckpt_migrate_workload("/tmp/x", "host-b"), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "host-b") != NULL && strstr(optic_last_error(), "restore") != NULL);
}

static const ot_case cases[] = {
    {"roundtrip_all_entries", roundtrip_all_entries},
    {"entry_hash_is_the_documented_tree", entry_hash_is_the_documented_tree},
    {"same_bytes_at_1_and_2_threads", same_bytes_at_1_and_2_threads},
    {"restore_subset_and_mismatches", restore_subset_and_mismatches},
    {"empty_checkpoint", empty_checkpoint},
    {"every_new_dtype", every_new_dtype},
    {"argument_errors", argument_errors},
    {"migrate_is_unsupported", migrate_is_unsupported},
};
OT_MAIN(cases)
