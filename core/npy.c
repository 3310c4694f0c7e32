/* NumPy .npy files: header parsing (a small reader for the Python dict literal
 * NumPy writes), decode/read into new or caller buffers, encode/write. Strict:
 * a file is accepted only if every byte is accounted for. Never trusts the
 * header's sizes before checking them against the bytes actually there. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/strbuf.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "core/npy.c assumes a little-endian host (x86-64, aarch64)"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER ((size_t)1 << 20) /* far above any real header; bounds a lying length */

/* ------------------------------------------------------------ header text */

typedef struct npy_cursor {
  const char *p, *end;
  const char *what; /* the file name or "<memory>", for messages */
} npy_cursor;

static void skip_blank(npy_cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static optic_status expect_char(npy_cursor *c, char ch, const char *where) {
  skip_blank(c);
  if (c->p >= c->end || *c->p != ch) {
    if (c->p >= c->end) {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected '%c' %s, found the end of the header", c->what, ch,
                        where);
    }
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected '%c' %s, found '%c'", c->what, ch, where, *c->p);
  }
  c->p++;
  return OPTIC_OK;
}

/* A Python string literal in ' or " quotes without escapes (NumPy never
 * writes any in the keys and descr we accept). */
static optic_status read_string(npy_cursor *c, char *buf, size_t cap, const char *where) {
  skip_blank(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) {
    if (c->p < c->end && *c->p == '[' && strcmp(where, "descr") == 0) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: npy: structured dtypes (descr is a list) are not supported",
                        c->what);
    }
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected a quoted string for %s", c->what, where);
  }
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || *c->p == '\n' || n + 1 >= cap) {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: unexpected string for %s", c->what, where);
    }
    buf[n++] = *c->p++;
  }
  if (c->p >= c->end) return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: unterminated string", c->what);
  c->p++;
  buf[n] = '\0';
  return OPTIC_OK;
}

static optic_status read_bool(npy_cursor *c, bool *out) {
  skip_blank(c);
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
    *out = true;
    c->p += 4;
  } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
    *out = false;
    c->p += 5;
  } else {
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: fortran_order must be True or False", c->what);
  }
  return OPTIC_OK;
}

/* '(' [int {',' int} [',']] ')', ints non-negative decimal (a Python 2 'L'
 * suffix is accepted). Ranks above OPTIC_MAX_RANK are UNSUPPORTED. */
static optic_status read_shape(npy_cursor *c, int32_t *rank, int64_t *dims) {
  optic_status st = expect_char(c, '(', "to open the shape");
  if (st != OPTIC_OK) return st;
  *rank = 0;
  for (;;) {
    skip_blank(c);
    if (c->p < c->end && *c->p == ')') {
      c->p++;
      return OPTIC_OK;
    }
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected a non-negative integer or ')' in the shape",
                        c->what);
    }
    int64_t v = 0;
    const char *digits = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      int digit = *c->p++ - '0';
      if (v > (INT64_MAX - digit) / 10) {
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
        int len = (int)(c->p - digits);
        return optic_fail(OPTIC_ERR_OVERFLOW, "%s: npy: shape dimension %d is %.*s%s, more than 2^63-1", c->what,
                          (int)*rank, len > 40 ? 40 : len, digits, len > 40 ? "..." : "");
      }
      v = v * 10 + digit;
    }
    if (c->p < c->end && *c->p == 'L') c->p++;
    if (*rank == OPTIC_MAX_RANK) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: npy: the shape has more than %d dimensions", c->what,
                        OPTIC_MAX_RANK);
    }
    dims[(*rank)++] = v;
    skip_blank(c);
    if (c->p < c->end && *c->p == ',') {
      c->p++;
    } else if (c->p >= c->end || *c->p != ')') {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected ',' or ')' in the shape", c->what);
    }
  }
}

/* NumPy's type strings: byte order, kind, size. */
static optic_status dtype_from_descr(const char *descr, const char *what, optic_dtype *out) {
  char order = descr[0];
  const char *type = descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    type = descr;
  }
  static const struct {
    const char *type;
    optic_dtype dtype;
  } known[] = {{"f4", OPTIC_F32}, {"f8", OPTIC_F64}, {"i4", OPTIC_S32}, {"b1", OPTIC_PRED},
               {"u1", OPTIC_U8},  {"f2", OPTIC_F16}, {"i1", OPTIC_S8},  {"i2", OPTIC_S16},
               {"i8", OPTIC_S64}, {"u2", OPTIC_U16}, {"u4", OPTIC_U32}, {"u8", OPTIC_U64}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (strcmp(type, known[i].type) != 0) continue;
    bool one_byte = optic_dtype_size(known[i].dtype) == 1;
    if (order == '>' && !one_byte) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED,
                        "%s: npy: dtype '%s' is big-endian; only little-endian files are supported "
                        "(in NumPy: a.astype(a.dtype.newbyteorder('<')))",
                        what, descr);
    }
    if ((order == '|' || order == '=') && !one_byte) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: npy: dtype '%s' does not state its byte order", what, descr);
    }
    *out = known[i].dtype;
    return OPTIC_OK;
  }
  return optic_fail(OPTIC_ERR_UNSUPPORTED,
                    "%s: npy: dtype '%s' is not supported (supported: '<f4' f32, '<f8' f64, '<i4' s32, "
                    "'|b1' bool, '|u1' u8)",
                    what, descr);
}

/* long: the .npy header checked field by field in file order, each check with its own message */
static optic_status parse_header(const void *bytes, size_t size, const char *what, optic_npy_info *out) {
  const unsigned char *b = bytes;
  if (size < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    if (size >= NPY_MAGIC_LEN + 2 ||
        (size > 0 && memcmp(b, NPY_MAGIC, size < NPY_MAGIC_LEN ? size : NPY_MAGIC_LEN) != 0)) {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: not a .npy file (no \\x93NUMPY magic)", what);
    }
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: truncated in the magic (%zu bytes)", what, size);
  }
  int major = b[6], minor = b[7];
  size_t len_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || minor != 0) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: npy: format version %d.%d is not supported (1.0, 2.0, 3.0 are)", what,
                      major, minor);
  }
  size_t pre = NPY_MAGIC_LEN + 2 + len_bytes;
  if (size < pre) return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: truncated in the header length", what);
  size_t hlen = major == 1 ? (size_t)b[8] | (size_t)b[9] << 8
                           : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (hlen > NPY_MAX_HEADER) {
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: header length %zu is implausible (more than %zu)", what, hlen,
                      NPY_MAX_HEADER);
  }
  if (size - pre < hlen) {
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: truncated: the header says %zu header bytes, %zu are there", what,
                      hlen, size - pre);
  }
  npy_cursor c = {(const char *)b + pre, (const char *)b + pre + hlen, what};
  optic_status st = expect_char(&c, '{', "to open the header dict");
  if (st != OPTIC_OK) return st;
  char descr[64] = "";
  bool fortran = false, have_descr = false, have_fortran = false, have_shape = false;
  int32_t rank = 0;
  int64_t dims[OPTIC_MAX_RANK] = {0};
  for (;;) {
    skip_blank(&c);
    if (c.p < c.end && *c.p == '}') {
      c.p++;
      break;
    }
    char key[32];
    if ((st = read_string(&c, key, sizeof key, "a key")) != OPTIC_OK) return st;
    if ((st = expect_char(&c, ':', "after a key")) != OPTIC_OK) return st;
    bool *seen = strcmp(key, "descr") == 0           ? &have_descr
                 : strcmp(key, "fortran_order") == 0 ? &have_fortran
                 : strcmp(key, "shape") == 0         ? &have_shape
                                                     : NULL;
    if (seen == NULL) return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: unknown key '%s'", what, key);
    if (*seen) return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: key '%s' appears twice", what, key);
    *seen = true;
    if (seen == &have_descr) {
      st = read_string(&c, descr, sizeof descr, "descr");
    } else if (seen == &have_fortran) {
      st = read_bool(&c, &fortran);
    } else {
      st = read_shape(&c, &rank, dims);
    }
    if (st != OPTIC_OK) return st;
    skip_blank(&c);
    if (c.p < c.end && *c.p == ',') {
      c.p++;
    } else if (c.p >= c.end || *c.p != '}') {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: expected ',' or '}' after the value of '%s'", what, key);
    }
  }
  skip_blank(&c);
  if (c.p != c.end) return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: text after the closing '}'", what);
  if (!have_descr || !have_fortran || !have_shape) {
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy header: missing key '%s'", what,
                      !have_descr     ? "descr"
                      : !have_fortran ? "fortran_order"
                                      : "shape");
  }
  optic_dtype dtype = OPTIC_DTYPE_INVALID;
  if ((st = dtype_from_descr(descr, what, &dtype)) != OPTIC_OK) return st;
  if (fortran) { /* the same bytes as C order when at most one dimension exceeds 1 */
    int big = 0;
    for (int32_t i = 0; i < rank; i++) big += dims[i] > 1;
    if (big > 1) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED,
                        "%s: npy: the array is in Fortran order; only C order is supported "
                        "(in NumPy: np.save(path, np.ascontiguousarray(a)))",
                        what);
    }
  }
  optic_shape shape;
  st = optic_shape_make(rank, dims, &shape);
  size_t data_bytes = 0;
  if (st == OPTIC_OK) st = optic_shape_bytes(&shape, dtype, &data_bytes);
  if (st != OPTIC_OK) {
    char text[160];
    optic_shape sh = {.rank = rank};
    memcpy(sh.dims, dims, sizeof dims);
    optic_shape_format(&sh, dtype, text, sizeof text);
    return optic_fail(st, "%s: npy: shape %s is too large", what, text);
  }
  out->dtype = dtype;
  out->shape = shape;
  out->data_offset = pre + hlen;
  out->data_bytes = data_bytes;
  out->version_major = major;
  return OPTIC_OK;
}

optic_status optic_npy_parse_header(const void *bytes, size_t size, optic_npy_info *out) {
  if ((bytes == NULL && size != 0) || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_parse_header: NULL argument");
  }
  return parse_header(bytes, size, "<memory>", out);
}

/* ------------------------------------------------------------------ reading */

static optic_status check_data_size(const optic_npy_info *info, size_t total, const char *what) {
  size_t have = total - info->data_offset;
  if (have == info->data_bytes) return OPTIC_OK;
  char text[160];
  optic_shape_format(&info->shape, info->dtype, text, sizeof text);
  return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: %s needs %zu data bytes but the file has %zu (%s)", what, text,
                    info->data_bytes, have, have < info->data_bytes ? "truncated" : "trailing bytes");
}

static optic_status check_pred(const optic_npy_info *info, const unsigned char *data, const char *what) {
  if (info->dtype != OPTIC_PRED) return OPTIC_OK;
  for (size_t i = 0; i < info->data_bytes; i++) {
    if (data[i] > 1) {
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: npy: bool element %zu is %u, not 0 or 1", what, i, data[i]);
    }
  }
  return OPTIC_OK;
}

static optic_status decode_named(const void *bytes, size_t size, const optic_allocator *allocator, const char *what,
                                 optic_tensor *out) {
  optic_npy_info info;
  optic_status st = parse_header(bytes, size, what, &info);
  if (st == OPTIC_OK) st = check_data_size(&info, size, what);
  if (st == OPTIC_OK) st = check_pred(&info, (const unsigned char *)bytes + info.data_offset, what);
  void *data = NULL;
  if (st == OPTIC_OK) st = optic_alloc(allocator, info.data_bytes, 0, &data);
  if (st != OPTIC_OK) return st;
  if (info.data_bytes) memcpy(data, (const unsigned char *)bytes + info.data_offset, info.data_bytes);
  out->dtype = info.dtype;
  out->shape = info.shape;
  out->data = data;
  return OPTIC_OK;
}

optic_status optic_npy_decode(const void *bytes, size_t size, const optic_allocator *allocator, optic_tensor *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_decode: out is NULL");
  memset(out, 0, sizeof *out);
  if (bytes == NULL && size != 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_decode: bytes is NULL");
  return decode_named(bytes, size, allocator, "<memory>", out);
}

/* Opens path and reads its header: on success *f is open just past the header
 * and the file's size has been checked against the header's data size. */
static optic_status open_and_read_header(const char *path, FILE **f, optic_npy_info *info) {
  /* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return optic_fail(OPTIC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  optic_status st = OPTIC_OK;
  if (fstat(fd, &sb) != 0) {
    st = optic_fail(OPTIC_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
  } else if (S_ISDIR(sb.st_mode)) {
    st = optic_fail(OPTIC_ERR_IO, "%s: is a directory, not a .npy file", path);
  } else if (!S_ISREG(sb.st_mode)) {
    st = optic_fail(OPTIC_ERR_IO, "%s: is not a regular file (a FIFO, socket or device)", path);
  }
  *f = st == OPTIC_OK ? fdopen(fd, "rb") : NULL;
  if (st == OPTIC_OK && *f == NULL) st = optic_fail(OPTIC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (*f == NULL) {
    close(fd);
    return st;
  }
  unsigned char pre[12];
  size_t got = st == OPTIC_OK ? fread(pre, 1, sizeof pre, *f) : 0;
  size_t hlen = 0;
  if (st == OPTIC_OK && got >= 10) {
    hlen = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
           : got == 12 ? (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24
                       : 0;
  }
  unsigned char *head = NULL;
  size_t total = got + (hlen <= NPY_MAX_HEADER ? hlen : 0);
  if (st == OPTIC_OK) {
    head = malloc(total ? total : 1);
    if (head == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: npy: no memory for the header", path);
  }
  if (st == OPTIC_OK) {
    memcpy(head, pre, got);
    total = got + fread(head + got, 1, total - got, *f);
    if (ferror(*f)) st = optic_fail(OPTIC_ERR_IO, "%s: read error: %s", path, strerror(errno));
  }
  if (st == OPTIC_OK) st = parse_header(head, total, path, info);
  free(head);
  if (st == OPTIC_OK && fseek(*f, (long)info->data_offset, SEEK_SET) != 0) {
    st = optic_fail(OPTIC_ERR_IO, "%s: cannot seek: %s", path, strerror(errno));
  }
  if (st == OPTIC_OK) st = check_data_size(info, (size_t)sb.st_size, path);
  if (st != OPTIC_OK) {
    fclose(*f);
    *f = NULL;
  }
  return st;
}

static optic_status read_data(FILE *f, const char *path, const optic_npy_info *info, void *data) {
  if (info->data_bytes && fread(data, 1, info->data_bytes, f) != info->data_bytes) {
    return optic_fail(ferror(f) ? OPTIC_ERR_IO : OPTIC_ERR_CORRUPT, "%s: npy: short read of the data", path);
  }
  return check_pred(info, data, path);
}

optic_status optic_npy_read(const char *path, const optic_allocator *allocator, optic_tensor *out) {
  if (out == NULL || path == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_read: NULL argument");
  memset(out, 0, sizeof *out);
  FILE *f;
  optic_npy_info info;
  optic_status st = open_and_read_header(path, &f, &info);
  if (st != OPTIC_OK) return st;
  void *data = NULL;
  st = optic_alloc(allocator, info.data_bytes, 0, &data);
  if (st == OPTIC_OK) st = read_data(f, path, &info, data);
  fclose(f);
  if (st != OPTIC_OK) {
    optic_free(allocator, data, info.data_bytes, 0);
    return st;
  }
  out->dtype = info.dtype;
  out->shape = info.shape;
  out->data = data;
  return OPTIC_OK;
}

optic_status optic_npy_read_into(const char *path, const optic_tensor *dst) {
  if (dst == NULL || path == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_read_into: NULL argument");
  size_t want;
  optic_status st = optic_tensor_bytes(dst, &want);
  if (st != OPTIC_OK) return st;
  FILE *f;
  optic_npy_info info;
  if ((st = open_and_read_header(path, &f, &info)) != OPTIC_OK) return st;
  /* bf16 travels as its 16-bit patterns in a '<u2' file (docs/npy.md). */
  if (dst->dtype == OPTIC_BF16 && info.dtype == OPTIC_U16) info.dtype = OPTIC_BF16;
  if (info.dtype != dst->dtype || !optic_shape_equal(&info.shape, &dst->shape)) {
    char have[160], need[160];
    optic_shape_format(&info.shape, info.dtype, have, sizeof have);
    optic_shape_format(&dst->shape, dst->dtype, need, sizeof need);
    fclose(f);
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: npy: the file holds %s but %s is expected", path, have, need);
  }
  /* Read through a staging buffer only for pred (validated before writing). */
  void *stage = dst->data;
  if (info.dtype == OPTIC_PRED && info.data_bytes) {
    stage = malloc(info.data_bytes);
    if (stage == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: npy: no memory", path);
  }
  if (st == OPTIC_OK) st = read_data(f, path, &info, stage);
  fclose(f);
  if (stage != dst->data) {
    if (st == OPTIC_OK) memcpy(dst->data, stage, info.data_bytes);
    free(stage);
  }
  return st;
}

void optic_npy_free(const optic_allocator *allocator, optic_tensor *t) {
  if (t == NULL) return;
  size_t bytes = 0;
  if (t->data != NULL && optic_shape_bytes(&t->shape, t->dtype, &bytes) == OPTIC_OK) {
    optic_free(allocator, t->data, bytes, 0);
  }
  memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ writing */

static const char *descr_of(optic_dtype dtype) {
  switch (dtype) {
    case OPTIC_F32: return "<f4";
    case OPTIC_F64: return "<f8";
    case OPTIC_S32: return "<i4";
    case OPTIC_PRED: return "|b1";
    case OPTIC_U8: return "|u1";
    case OPTIC_F16: return "<f2";
    case OPTIC_S8: return "|i1";
    case OPTIC_S16: return "<i2";
    case OPTIC_S64: return "<i8";
    case OPTIC_U16: return "<u2";
    case OPTIC_U32: return "<u4";
    case OPTIC_U64: return "<u8";
    case OPTIC_BF16: return "<u2"; /* NumPy has no bfloat16: the 16-bit patterns (docs/npy.md) */
    default: return NULL;
  }
}

/* Writes the preamble and padded header into buf (at least 64 + 256 bytes
 * for any shape of rank <= 8); returns its length. */
static size_t encode_header(const optic_tensor *t, unsigned char *buf) {
  char dict[256];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr_of(t->dtype));
  for (int32_t i = 0; i < t->shape.rank; i++) {
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%" PRId64, i ? ", " : "", t->shape.dims[i]);
  }
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->shape.rank == 1 ? "," : "");
  size_t pre = 10; /* version 1.0: a rank-8 header is far below 65535 bytes */
  size_t total = (pre + (size_t)n + 1 + 63) / 64 * 64;
  memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  size_t hlen = total - pre;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  memcpy(buf + pre, dict, (size_t)n);
  memset(buf + pre + n, ' ', total - pre - (size_t)n - 1);
  buf[total - 1] = '\n';
  return total;
}

static optic_status check_writable(const optic_tensor *t, const char *fn, size_t *bytes) {
  if (t == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", fn);
  if (t->dtype == OPTIC_TOKEN) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: a token holds no values; .npy has no token type", fn);
  }
  if (descr_of(t->dtype) == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dtype %d is not an optic dtype", fn, (int)t->dtype);
  }
  optic_status st = optic_tensor_bytes(t, bytes);
  if (st != OPTIC_OK) return st;
  if (t->data == NULL && *bytes != 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
  return OPTIC_OK;
}

optic_status optic_npy_encode(const optic_tensor *t, void **out, size_t *size) {
  if (out == NULL || size == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_encode: NULL argument");
  size_t bytes;
  optic_status st = check_writable(t, "npy_encode", &bytes);
  if (st != OPTIC_OK) return st;
  unsigned char head[384];
  size_t hl = encode_header(t, head);
  if (bytes > SIZE_MAX - hl) return optic_fail(OPTIC_ERR_OVERFLOW, "npy_encode: %zu bytes do not fit", bytes);
  void *mem = NULL;
  if (optic_string_alloc(hl + bytes, &mem) != OPTIC_OK) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "npy_encode: cannot allocate %zu bytes", hl + bytes);
  }
  unsigned char *buf = mem;
  memcpy(buf, head, hl);
  if (bytes) memcpy(buf + hl, t->data, bytes);
  *out = buf;
  *size = hl + bytes;
  return OPTIC_OK;
}

optic_status optic_npy_write(const char *path, const optic_tensor *t) {
  if (path == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "npy_write: path is NULL");
  size_t bytes;
  optic_status st = check_writable(t, "npy_write", &bytes);
  if (st != OPTIC_OK) return st;
  unsigned char head[384];
  size_t hl = encode_header(t, head);
  FILE *f = fopen(path, "wb");
  if (f == NULL) return optic_fail(OPTIC_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  errno = 0;
  bool ok = fwrite(head, 1, hl, f) == hl && (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
  int saved = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok)
    return optic_fail(OPTIC_ERR_IO, "%s: write failed: %s", path,
                      saved != 0 ? strerror(saved) : "short write, no error reported");
  return OPTIC_OK;
}
