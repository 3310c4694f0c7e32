/* .npy files: files written by NumPy (tests/data/npy/, made by make_npy.py)
 * decode to the values NumPy was given; our encoder writes the same bytes as
 * NumPy; round trips of every dtype and ranks 0..8; hand-made byte-level
 * files for each refusal (big-endian, Fortran order, other dtypes, bad magic,
 * versions, headers, truncation at every byte, sizes that lie, bad bools). */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void data_path(const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/data/npy/%s", OPTIC_TEST_SOURCE_DIR, name);
}

static unsigned char *slurp(const char *name, size_t *len) {
  char path[1024];
  data_path(name, path, sizeof path);
  FILE *f = fopen(path, "rb");
  OT_CHECK(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  unsigned char *buf = malloc(1 << 16);
  *len = fread(buf, 1, 1 << 16, f);
  fclose(f);
  return buf;
}

/* Reads a NumPy-written file by path and by bytes; checks dtype and shape. */
static bool read_numpy(const char *name, optic_dtype dtype, int32_t rank, const int64_t *dims, optic_tensor *t) {
  char path[1024];
  data_path(name, path, sizeof path);
  optic_status st = optic_npy_read(path, NULL, t);
  OT_CHECK(st == OPTIC_OK, "%s: %s", name, optic_last_error());
  if (st != OPTIC_OK) return false;
  bool ok = t->dtype == dtype && t->shape.rank == rank;
  for (int32_t i = 0; ok && i < rank; i++) ok = t->shape.dims[i] == dims[i];
  char got[64];
  optic_shape_format(&t->shape, t->dtype, got, sizeof got);
  OT_CHECK(ok, "%s: read as %s", name, got);
  /* the in-memory decoder agrees byte for byte */
  size_t len = 0;
  unsigned char *bytes = slurp(name, &len);
  optic_tensor m;
  OT_EXPECT_OK(optic_npy_decode(bytes, len, NULL, &m));
  size_t nb = 0;
  optic_tensor_bytes(t, &nb);
  OT_CHECK(
      m.dtype == t->dtype && optic_shape_equal(&m.shape, &t->shape) && (nb == 0 || memcmp(m.data, t->data, nb) == 0),
      "%s: decode differs from read", name);
  optic_npy_free(NULL, &m);
  free(bytes);
  return ok;
}

static void numpy_files(void) {
  optic_tensor t;
  if (read_numpy("f32_2x3.npy", OPTIC_F32, 2, (int64_t[]){2, 3}, &t)) {
    for (int i = 0; i < 6; i++) OT_CHECK(((float *)t.data)[i] == (float)i * 0.5f - 1, "f32[%d]", i);
  }
  optic_npy_free(NULL, &t);
  OT_CHECK(t.data == NULL, "free zeroes the tensor");
  if (read_numpy("f64_scalar.npy", OPTIC_F64, 0, NULL, &t)) OT_CHECK(*(double *)t.data == 3.141592653589793);
  optic_npy_free(NULL, &t);
  if (read_numpy("s32_4.npy", OPTIC_S32, 1, (int64_t[]){4}, &t)) {
    const int32_t want[] = {INT32_MIN, -1, 0, INT32_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("bool_2x2.npy", OPTIC_PRED, 2, (int64_t[]){2, 2}, &t)) {
    OT_CHECK(memcmp(t.data, "\1\0\0\1", 4) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("u8_5.npy", OPTIC_U8, 1, (int64_t[]){5}, &t)) OT_CHECK(memcmp(t.data, "\0\1\177\200\377", 5) == 0);
  optic_npy_free(NULL, &t);
  if (read_numpy("f32_0x3.npy", OPTIC_F32, 2, (int64_t[]){0, 3}, &t)) OT_CHECK(t.data == NULL);
  optic_npy_free(NULL, &t);
  if (read_numpy("f32_2x3x4_v2.npy", OPTIC_F32, 3, (int64_t[]){2, 3, 4}, &t)) {
    for (int i = 0; i < 24; i++) OT_CHECK(((float *)t.data)[i] == (float)i, "v2 [%d]", i);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("f64_3_v3.npy", OPTIC_F64, 1, (int64_t[]){3}, &t)) {
    const double *d = t.data;
    OT_CHECK(d[0] == 1.0 && d[1] == 0.0 && signbit(d[1]) && d[2] == 1e300);
  }
  optic_npy_free(NULL, &t);
  /* the wider integer types at their limits, f16 specials (NumPy wrote them) */
  if (read_numpy("s8_5.npy", OPTIC_S8, 1, (int64_t[]){5}, &t)) {
    const int8_t want[] = {INT8_MIN, -1, 0, 1, INT8_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("s16_4.npy", OPTIC_S16, 1, (int64_t[]){4}, &t)) {
    const int16_t want[] = {INT16_MIN, -1, 0, INT16_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("s64_4.npy", OPTIC_S64, 1, (int64_t[]){4}, &t)) {
    const int64_t want[] = {INT64_MIN, -1, 0, INT64_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("u16_3.npy", OPTIC_U16, 1, (int64_t[]){3}, &t)) {
    const uint16_t want[] = {0, 1, UINT16_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("u32_3.npy", OPTIC_U32, 1, (int64_t[]){3}, &t)) {
    const uint32_t want[] = {0, 1, UINT32_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("u64_3.npy", OPTIC_U64, 1, (int64_t[]){3}, &t)) {
    const uint64_t want[] = {0, 1, UINT64_MAX};
    OT_CHECK(memcmp(t.data, want, sizeof want) == 0);
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("f16_6.npy", OPTIC_F16, 1, (int64_t[]){6}, &t)) {
    const uint16_t *h = t.data;
    float f[6];
    for (int i = 0; i < 6; i++) f[i] = optic_f16_to_f32(h[i]);
    OT_CHECK(isinf(f[0]) && f[0] > 0 && isinf(f[1]) && f[1] < 0 && isnan(f[2]) && f[3] == 0x1p-24f &&
             f[4] == 65504.0f && f[5] == 0 && signbit(f[5]));
  }
  optic_npy_free(NULL, &t);
  if (read_numpy("f32_special.npy", OPTIC_F32, 1, (int64_t[]){5}, &t)) {
    const float *f = t.data;
    OT_CHECK(isinf(f[0]) && f[0] > 0 && isinf(f[1]) && f[1] < 0 && isnan(f[2]) && f[3] == 1e-45f &&
             f[4] == 3.4028235e38f);
  }
  optic_npy_free(NULL, &t);
}

static void expect_read_error(const char *name, optic_status want, const char *needle) {
  char path[1024];
  data_path(name, path, sizeof path);
  optic_tensor t = {.data = (void *)&t};
  optic_status st = optic_npy_read(path, NULL, &t);
  OT_CHECK(st == want && strstr(optic_last_error(), needle) != NULL && t.data == NULL,
           "%s: got %s \"%s\", want %s containing \"%s\"", name, optic_status_name(st), optic_last_error(),
           optic_status_name(want), needle);
  if (st == OPTIC_OK) optic_npy_free(NULL, &t);
  OT_CHECK(strstr(optic_last_error(), name) != NULL || st == OPTIC_OK, "message names the file: %s",
           optic_last_error());
}

static void numpy_refusals(void) {
  expect_read_error("bad_big_endian_f32.npy", OPTIC_ERR_UNSUPPORTED, "dtype '>f4' is big-endian");
  expect_read_error("bad_fortran_2x3.npy", OPTIC_ERR_UNSUPPORTED, "Fortran order");
  expect_read_error("bad_c8.npy", OPTIC_ERR_UNSUPPORTED, "dtype '<c8' is not supported");
  expect_read_error("bad_f16.npy", OPTIC_ERR_UNSUPPORTED, "dtype '<f16' is not supported");
  expect_read_error("bad_structured.npy", OPTIC_ERR_UNSUPPORTED, "structured dtypes");
  expect_read_error("no_such_file.npy", OPTIC_ERR_IO, "cannot open");
  expect_read_error("make_npy.py", OPTIC_ERR_CORRUPT, "not a .npy file");
}

/* Our encoder writes NumPy's exact bytes (same header text and padding). */
static void encoder_matches_numpy(void) {
  static const char *const names[] = {"f32_2x3.npy", "f64_scalar.npy",  "s32_4.npy", "bool_2x2.npy", "u8_5.npy",
                                      "f32_0x3.npy", "f32_special.npy", "s8_5.npy",  "s16_4.npy",    "s64_4.npy",
                                      "u16_3.npy",   "u32_3.npy",       "u64_3.npy", "f16_6.npy"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    size_t len = 0;
    unsigned char *want = slurp(names[i], &len);
    optic_tensor t;
    OT_EXPECT_OK(optic_npy_decode(want, len, NULL, &t));
    void *got = NULL;
    size_t got_len = 0;
    OT_EXPECT_OK(optic_npy_encode(&t, &got, &got_len));
    OT_CHECK(got_len == len && memcmp(got, want, len) == 0, "%s: encoded %zu bytes, NumPy wrote %zu", names[i], got_len,
             len);
    optic_string_free(got);
    optic_npy_free(NULL, &t);
    free(want);
  }
}

/* Every dtype, ranks 0..8 (rank 1 prints "(n,)"), odd sizes: write a file,
 * read it back (new buffer and into a caller tensor), compare bytes. */
static void round_trips(void) {
  char path[] = "/tmp/optic_test_npy_XXXXXX";
  int fd = mkstemp(path);
  OT_CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  for (int d = 1; d < OPTIC_DTYPE_COUNT_; d++) {
    if (d == OPTIC_TOKEN) continue; /* no values: refused below */
    for (int32_t rank = 0; rank <= OPTIC_MAX_RANK; rank++) {
      int64_t dims[OPTIC_MAX_RANK];
      for (int32_t i = 0; i < rank; i++) dims[i] = 1 + (i * 3 + d) % 3; /* 1..3 */
      if (rank == 2 && d == 1) dims[1] = 0;                             /* an empty one */
      optic_shape s;
      OT_EXPECT_OK(optic_shape_make(rank, dims, &s));
      optic_tensor t = {.dtype = (optic_dtype)d, .shape = s};
      size_t bytes = 0;
      OT_EXPECT_OK(optic_tensor_bytes(&t, &bytes));
      unsigned char *data = malloc(bytes + 1);
      for (size_t i = 0; i < bytes; i++)
        data[i] = t.dtype == OPTIC_PRED ? (unsigned char)(i % 2) : (unsigned char)(i * 37 + 11);
      t.data = bytes ? data : NULL;
      OT_EXPECT_OK(optic_npy_write(path, &t));
      optic_tensor back;
      OT_EXPECT_OK(optic_npy_read(path, NULL, &back));
      /* bf16 is stored as '<u2' bit patterns and comes back as u16 */
      optic_dtype want_dt = t.dtype == OPTIC_BF16 ? OPTIC_U16 : t.dtype;
      OT_CHECK(back.dtype == want_dt && optic_shape_equal(&back.shape, &s) &&
                   (bytes == 0 || memcmp(back.data, data, bytes) == 0),
               "round trip %s rank %d", optic_dtype_name(t.dtype), (int)rank);
      optic_npy_free(NULL, &back);
      unsigned char *into = malloc(bytes + 1);
      optic_tensor dst = {.dtype = t.dtype, .shape = s, .data = bytes ? into : NULL};
      OT_EXPECT_OK(optic_npy_read_into(path, &dst));
      OT_CHECK(bytes == 0 || memcmp(into, data, bytes) == 0, "read_into %s rank %d", optic_dtype_name(t.dtype),
               (int)rank);
      /* header lands the data on a 64-byte boundary, as NumPy's does */
      void *enc = NULL;
      size_t enc_len = 0;
      optic_npy_info info;
      OT_EXPECT_OK(optic_npy_encode(&t, &enc, &enc_len));
      OT_EXPECT_OK(optic_npy_parse_header(enc, enc_len, &info));
      OT_CHECK(info.data_offset % 64 == 0 && info.data_bytes == bytes && info.version_major == 1);
      optic_string_free(enc);
      free(into);
      free(data);
    }
  }
  /* read_into with the wrong shape or dtype names both */
  float f6[6] = {0};
  optic_tensor t = {.dtype = OPTIC_F32, .shape = {2, {2, 3}}, .data = f6};
  OT_EXPECT_OK(optic_npy_write(path, &t));
  optic_tensor dst = {.dtype = OPTIC_F32, .shape = {2, {3, 2}}, .data = f6};
  OT_EXPECT_STATUS(optic_npy_read_into(path, &dst), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "holds f32[2,3] but f32[3,2] is expected") != NULL, "%s", optic_last_error());
  dst = (optic_tensor){.dtype = OPTIC_S32, .shape = {2, {2, 3}}, .data = f6};
  OT_EXPECT_STATUS(optic_npy_read_into(path, &dst), OPTIC_ERR_SHAPE_MISMATCH);
  /* writing: bad arguments and an unwritable path */
  OT_EXPECT_STATUS(optic_npy_write("/nonexistent/dir/x.npy", &t), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "/nonexistent/dir/x.npy: cannot create") != NULL, "%s", optic_last_error());
  t.dtype = OPTIC_DTYPE_INVALID;
  OT_EXPECT_STATUS(optic_npy_write(path, &t), OPTIC_ERR_INVALID_ARGUMENT);
  t.dtype = OPTIC_TOKEN;
  OT_EXPECT_STATUS(optic_npy_write(path, &t), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "token") != NULL, "%s", optic_last_error());
  t.dtype = OPTIC_F32;
  t.data = NULL;
  OT_EXPECT_STATUS(optic_npy_write(path, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_npy_write(NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_npy_read(path, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_npy_read("/tmp", NULL, &dst), OPTIC_ERR_IO);
  OT_CHECK(strstr(optic_last_error(), "/tmp: is a directory") != NULL, "%s", optic_last_error());
  unlink(path);
}

/* A hand-made v1 file: header text padded to 64 bytes, then data. */
static size_t make_file(unsigned char *buf, int major, const char *dict, const void *data, size_t n) {
  size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
  size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)hlen;
  buf[9] = (unsigned char)(hlen >> 8);
  if (major != 1) buf[10] = buf[11] = 0;
  memcpy(buf + pre, dict, dl);
  memset(buf + pre + dl, ' ', hlen - dl - 1);
  buf[total - 1] = '\n';
  if (n) memcpy(buf + total, data, n);
  return total + n;
}

static void expect_decode(const unsigned char *buf, size_t len, optic_status want, const char *needle) {
  optic_tensor t = {.data = (void *)&t};
  optic_status st = optic_npy_decode(buf, len, NULL, &t);
  OT_CHECK(st == want && (needle == NULL || strstr(optic_last_error(), needle) != NULL) &&
               (st == OPTIC_OK || t.data == NULL),
           "got %s \"%s\", want %s containing \"%s\" for header %.*s", optic_status_name(st),
           st == OPTIC_OK ? "" : optic_last_error(), optic_status_name(want), needle ? needle : "",
           (int)(len < 120 ? len : 120), (const char *)buf);
  if (st == OPTIC_OK) optic_npy_free(NULL, &t);
}

typedef struct header_case {
  const char *dict;
  size_t data_bytes;
  optic_status status;
  const char *needle;
} header_case;

static void hand_made_headers(void) {
  static const header_case cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, OPTIC_OK, NULL},
      {"{\"shape\": (2,), \"descr\": \"<f4\", \"fortran_order\": False}", 8, OPTIC_OK, NULL}, /* any order, " quotes */
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }", 8, OPTIC_OK, NULL},   /* Python 2 longs */
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 1), }", 8, OPTIC_OK, NULL},   /* F == C here */
      {"{'descr': '>u1', 'fortran_order': False, 'shape': (), }", 1, OPTIC_OK, NULL},         /* 1 byte: order moot */
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, OPTIC_ERR_UNSUPPORTED, "Fortran order"},
      {"{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", 8, OPTIC_ERR_UNSUPPORTED, "'>f8' is big-endian"},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", 4, OPTIC_ERR_UNSUPPORTED,
       "does not state its byte order"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, OPTIC_ERR_UNSUPPORTED, "'<c8' is not supported"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 8, OPTIC_ERR_UNSUPPORTED, "'|O' is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, OPTIC_ERR_UNSUPPORTED, "structured"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, OPTIC_ERR_UNSUPPORTED,
       "more than 8 dimensions"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0, OPTIC_ERR_OVERFLOW,
       "shape f32[4294967296,4294967296] is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0, OPTIC_ERR_OVERFLOW,
       "shape dimension 0 is 99999999999999999999, more than 2^63-1"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 9223372036854775808), }", 0, OPTIC_ERR_OVERFLOW,
       "shape dimension 1 is 9223372036854775808, more than 2^63-1"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0, OPTIC_ERR_CORRUPT, "non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 4, OPTIC_ERR_CORRUPT,
       "f32[2] needs 8 data bytes but the file has 4 (truncated)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, OPTIC_ERR_CORRUPT, "(trailing bytes)"},
      {"{'descr': '<f4', 'fortran_order': False}", 0, OPTIC_ERR_CORRUPT, "missing key 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': ()}", 4, OPTIC_ERR_CORRUPT, "appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", 4, OPTIC_ERR_CORRUPT,
       "unknown key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", 4, OPTIC_ERR_CORRUPT, "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8, OPTIC_ERR_CORRUPT,
       "expected '(' to open the shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8, OPTIC_ERR_CORRUPT, "expected ',' or ')'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': ()}", 4, OPTIC_ERR_CORRUPT, "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4, OPTIC_ERR_CORRUPT, "text after the closing"},
      {"['descr']", 4, OPTIC_ERR_CORRUPT, "expected '{' to open the header dict"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4, OPTIC_ERR_CORRUPT, "after the value of 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (", 4, OPTIC_ERR_CORRUPT, "in the shape"},
  };
  unsigned char buf[1024], zeros[64] = {0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len = make_file(buf, 1, cases[i].dict, zeros, cases[i].data_bytes);
    expect_decode(buf, len, cases[i].status, cases[i].needle);
    len = make_file(buf, 2, cases[i].dict, zeros, cases[i].data_bytes); /* the same under version 2.0 */
    expect_decode(buf, len, cases[i].status, cases[i].needle);
  }
  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  size_t len = make_file(buf, 1, ok, zeros, 8);
  buf[6] = 4;
  expect_decode(buf, len, OPTIC_ERR_UNSUPPORTED, "format version 4.0 is not supported");
  buf[6] = 1, buf[7] = 1;
  expect_decode(buf, len, OPTIC_ERR_UNSUPPORTED, "format version 1.1");
  buf[7] = 0, buf[0] = 'x';
  expect_decode(buf, len, OPTIC_ERR_CORRUPT, "not a .npy file");
  buf[0] = 0x93;
  /* header length that points past the end, and an absurd one (v2) */
  buf[8] = 0xff, buf[9] = 0x7f;
  expect_decode(buf, len, OPTIC_ERR_CORRUPT, "the header says 32767 header bytes");
  len = make_file(buf, 2, ok, zeros, 8);
  buf[11] = 0x40;
  expect_decode(buf, len, OPTIC_ERR_CORRUPT, "is implausible");
  /* bools must be 0 or 1 */
  len = make_file(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", "\1\0\2", 3);
  expect_decode(buf, len, OPTIC_ERR_CORRUPT, "bool element 2 is 2, not 0 or 1");
  /* every prefix of a valid file is a clean CORRUPT error (exact-size buffers for ASan) */
  len = make_file(buf, 1, ok, "\0\0\200\77\0\0\0\100", 8);
  for (size_t cut = 0; cut < len; cut++) {
    unsigned char *exact = malloc(cut ? cut : 1);
    memcpy(exact, buf, cut);
    optic_tensor t;
    optic_status st = optic_npy_decode(exact, cut, NULL, &t);
    OT_CHECK(st == OPTIC_ERR_CORRUPT && t.data == NULL, "prefix %zu: %s %s", cut, optic_status_name(st),
             optic_last_error());
    free(exact);
  }
  optic_tensor t;
  OT_EXPECT_OK(optic_npy_decode(buf, len, NULL, &t));
  OT_CHECK(t.data && ((float *)t.data)[0] == 1.0f && ((float *)t.data)[1] == 2.0f);
  optic_npy_free(NULL, &t);
  optic_npy_free(NULL, NULL);
  OT_EXPECT_STATUS(optic_npy_decode(NULL, 4, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_npy_parse_header(buf, len, NULL), OPTIC_ERR_INVALID_ARGUMENT);
}

/* Truncated and lying files on disk: the file reader checks the size before
 * allocating, so a header claiming terabytes fails fast with CORRUPT. */
static void files_on_disk(void) {
  char path[] = "/tmp/optic_test_npy_XXXXXX";
  int fd = mkstemp(path);
  OT_CHECK(fd >= 0);
  if (fd < 0) return;
  unsigned char buf[256];
  size_t len = make_file(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000, 100), }", NULL, 0);
  OT_CHECK(write(fd, buf, len) == (ssize_t)len);
  close(fd);
  optic_tensor t;
  OT_EXPECT_STATUS(optic_npy_read(path, NULL, &t), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "needs 8000000000000 data bytes but the file has 0 (truncated)") != NULL, "%s",
           optic_last_error());
  for (size_t cut = 0; cut < 70; cut += 3) { /* prefixes of a real file */
    FILE *f = fopen(path, "wb");
    fwrite(buf, 1, cut, f);
    fclose(f);
    OT_EXPECT_STATUS(optic_npy_read(path, NULL, &t), OPTIC_ERR_CORRUPT);
  }
  unlink(path);
}

/* A FIFO is refused at once (no wait for a writer), with a message that says what it is. */
static void fifo_is_refused(void) {
  char dir[] = "/tmp/optic_test_npy_fifo_XXXXXX", path[64];
  OT_CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/p.npy", dir);
  OT_CHECK(mkfifo(path, 0600) == 0);
  optic_tensor t;
  alarm(20); /* watchdog */
  OT_EXPECT_STATUS(optic_npy_read(path, NULL, &t), OPTIC_ERR_IO);
  alarm(0);
  OT_CHECK(strstr(optic_last_error(), "is not a regular file") != NULL, "%s", optic_last_error());
  unlink(path);
  rmdir(dir);
}

/* Encoded buffers come from optic_string_alloc and go back through
 * optic_string_free: sizes from an empty array to past the default
 * allocator's huge-page threshold (a mapping, unmapped by the recorded
 * size), 16-byte aligned, every byte as decoded back; NULL is a no-op. */
static void encoded_buffers_free_through_optic(void) {
  static const int64_t sizes[] = {0, 1, 15, 16, 17, 4095, (int64_t)(OPTIC_HUGE_ALLOC_THRESHOLD / 4) + 3};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    optic_shape sh;
    OT_EXPECT_OK(optic_shape_make(1, &sizes[i], &sh));
    float *data = malloc((size_t)(sizes[i] ? sizes[i] : 1) * sizeof *data);
    if (data == NULL) exit(2);
    for (int64_t k = 0; k < sizes[i]; k++) data[k] = (float)k * 0.5f - 3.0f;
    optic_tensor t, back;
    OT_EXPECT_OK(optic_tensor_make(OPTIC_F32, &sh, data, &t));
    void *enc = NULL;
    size_t len = 0;
    OT_EXPECT_OK(optic_npy_encode(&t, &enc, &len));
    OT_CHECK(enc != NULL && ((uintptr_t)enc & 15) == 0, "%lld elements: buffer %p", (long long)sizes[i], enc);
    if (enc && optic_npy_decode(enc, len, NULL, &back) == OPTIC_OK) {
      OT_CHECK(optic_shape_equal(&back.shape, &sh) &&
                   (sizes[i] == 0 || memcmp(back.data, data, (size_t)sizes[i] * sizeof *data) == 0),
               "%lld elements do not decode back", (long long)sizes[i]);
      optic_npy_free(NULL, &back);
    } else {
      OT_CHECK(false, "%lld elements: %s", (long long)sizes[i], optic_last_error());
    }
    optic_string_free(enc);
    free(data);
  }
  optic_string_free(NULL);
}

static const ot_case cases[] = {
    {"encoded_buffers_free_through_optic", encoded_buffers_free_through_optic},
    {"numpy_files", numpy_files},
    {"numpy_refusals", numpy_refusals},
    {"encoder_matches_numpy", encoder_matches_numpy},
    {"round_trips", round_trips},
    {"hand_made_headers", hand_made_headers},
    {"files_on_disk", files_on_disk},
    {"fifo_is_refused", fifo_is_refused},
};

OT_MAIN(cases)
