/* The machine file: a flat JSON object with optic_machine's fields, written
 * by `optic calibrate` and read back for time estimates. The reader accepts
 * exactly JSON (RFC 8259) for a flat object; values of unknown keys may be
 * any JSON value and are skipped. A file that is there but wrong is an error
 * naming the file and the problem, never silently replaced by defaults. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optic/compile.h>

#include "core/error.h"
#include "core/json.h"

#define MAX_FILE_BYTES (1 << 20)
#define MAX_NESTING 32

typedef struct reader {
  const char *path;
  const char *text, *p, *end;
} reader;

/* Line:column of the reader's position, for messages. */
static void position(const reader *r, int *line, int *col) {
  *line = 1, *col = 1;
  for (const char *q = r->text; q < r->p; q++) {
    if (*q == '\n') ++*line, *col = 1;
    else ++*col;
  }
}

static optic_status corrupt(const reader *r, const char *what) {
  int line, col;
  position(r, &line, &col);
  return optic_fail(OPTIC_ERR_CORRUPT, "machine file %s: line %d:%d: %s", r->path, line, col, what);
}

static void skip_ws(reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static bool take(reader *r, char c) {
  skip_ws(r);
  if (r->p < r->end && *r->p == c) {
    r->p++;
    return true;
  }
  return false;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads a string into buf (truncated to size - 1 bytes, always terminated;
 * buf may be NULL to skip). Escapes \uXXXX become UTF-8 (surrogate pairs
 * joined). */
static optic_status read_string(reader *r, char *buf, size_t size) {
  skip_ws(r);
  if (r->p >= r->end || *r->p != '"') return corrupt(r, "expected a string");
  r->p++;
  size_t n = 0;
  for (;;) {
    if (r->p >= r->end) return corrupt(r, "unterminated string");
    unsigned char c = (unsigned char)*r->p++;
    char out[4];
    int nout = 1;
    if (c == '"') break;
    if (c < 0x20) return corrupt(r, "control character in a string");
    if (c != '\\') {
      out[0] = (char)c;
    } else {
      if (r->p >= r->end) return corrupt(r, "unterminated escape");
      char e = *r->p++;
      switch (e) {
        case '"': out[0] = '"'; break;
        case '\\': out[0] = '\\'; break;
        case '/': out[0] = '/'; break;
        case 'b': out[0] = '\b'; break;
        case 'f': out[0] = '\f'; break;
        case 'n': out[0] = '\n'; break;
        case 'r': out[0] = '\r'; break;
        case 't': out[0] = '\t'; break;
        case 'u': {
          unsigned cp = 0;
          for (int k = 0; k < 4; k++) {
            int d = r->p < r->end ? hex_digit(*r->p++) : -1;
            if (d < 0) return corrupt(r, "bad \\u escape");
            cp = cp * 16 + (unsigned)d;
          }
          if (cp >= 0xD800 && cp < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
            unsigned lo = 0;
            int k;
            for (k = 0; k < 4; k++) {
              int d = hex_digit(r->p[2 + k]);
              if (d < 0) break;
              lo = lo * 16 + (unsigned)d;
            }
            if (k == 4 && lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              r->p += 6;
            }
          }
          if (cp < 0x80) {
            out[0] = (char)cp;
          } else if (cp < 0x800) {
            out[0] = (char)(0xC0 | (cp >> 6)), out[1] = (char)(0x80 | (cp & 0x3F)), nout = 2;
          } else if (cp < 0x10000) {
            out[0] = (char)(0xE0 | (cp >> 12)), out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[2] = (char)(0x80 | (cp & 0x3F)), nout = 3;
          } else {
            out[0] = (char)(0xF0 | (cp >> 18)), out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[3] = (char)(0x80 | (cp & 0x3F)), nout = 4;
          }
          break;
        }
        default: r->p--; return corrupt(r, "bad escape in a string");
      }
    }
    if (buf && n + (size_t)nout < size) {
      memcpy(buf + n, out, (size_t)nout);
      n += (size_t)nout;
    }
  }
  if (buf && size) buf[n] = 0;
  return OPTIC_OK;
}

/* A JSON number (strict grammar: no leading '+', no "nan"/"inf", no hex). */
static optic_status read_number(reader *r, double *out) {
  skip_ws(r);
  const char *s = r->p, *q = s;
  if (q < r->end && *q == '-') q++;
  if (q >= r->end || *q < '0' || *q > '9') return corrupt(r, "expected a number");
  if (*q == '0') q++;
  else
    while (q < r->end && *q >= '0' && *q <= '9') q++;
  if (q < r->end && *q == '.') {
    q++;
    if (q >= r->end || *q < '0' || *q > '9') return corrupt(r, "bad number");
    while (q < r->end && *q >= '0' && *q <= '9') q++;
  }
  if (q < r->end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < r->end && (*q == '+' || *q == '-')) q++;
    if (q >= r->end || *q < '0' || *q > '9') return corrupt(r, "bad number");
    while (q < r->end && *q >= '0' && *q <= '9') q++;
  }
  char tmp[64];
  if ((size_t)(q - s) >= sizeof tmp) return corrupt(r, "number too long");
  memcpy(tmp, s, (size_t)(q - s));
  tmp[q - s] = 0;
  *out = strtod(tmp, NULL);
  r->p = q;
  return OPTIC_OK;
}

static bool take_word(reader *r, const char *w) {
  size_t n = strlen(w);
  skip_ws(r);
  if ((size_t)(r->end - r->p) >= n && memcmp(r->p, w, n) == 0) {
    r->p += n;
    return true;
  }
  return false;
}

/* Skips any JSON value (for unknown keys). */
static optic_status skip_value(reader *r, int depth) {
  if (depth > MAX_NESTING) return corrupt(r, "nesting too deep");
  skip_ws(r);
  if (r->p >= r->end) return corrupt(r, "expected a value");
  double d;
  switch (*r->p) {
    case '"': return read_string(r, NULL, 0);
    case '{':
    case '[': {
      char close = *r->p == '{' ? '}' : ']';
      bool object = close == '}';
      r->p++;
      if (take(r, close)) return OPTIC_OK;
      do {
        optic_status st;
        if (object) {
          if ((st = read_string(r, NULL, 0))) return st;
          if (!take(r, ':')) return corrupt(r, "expected ':'");
        }
        if ((st = skip_value(r, depth + 1))) return st;
      } while (take(r, ','));
      if (!take(r, close)) return corrupt(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
      return OPTIC_OK;
    }
    default:
      if (take_word(r, "true") || take_word(r, "false") || take_word(r, "null")) return OPTIC_OK;
      return read_number(r, &d);
  }
}

typedef struct field {
  const char *key;
  size_t offset;
  enum { F_DOUBLE, F_INT, F_NAME, F_SOURCE } kind;
  bool required;
} field;

static const field fields[] = {
    {"name", offsetof(optic_machine, name), F_NAME, true},
    {"peak_flops", offsetof(optic_machine, peak_flops), F_DOUBLE, true},
    {"peak_transcendentals", offsetof(optic_machine, peak_transcendentals), F_DOUBLE, true},
    {"dram_bandwidth", offsetof(optic_machine, dram_bandwidth), F_DOUBLE, true},
    /* Optional: files written before it existed load with dram_bandwidth / cores. */
    {"core_dram_bandwidth", offsetof(optic_machine, core_dram_bandwidth), F_DOUBLE, false},
    {"cache_bandwidth", offsetof(optic_machine, cache_bandwidth), F_DOUBLE, true},
    {"cache_bytes", offsetof(optic_machine, cache_bytes), F_DOUBLE, true},
    {"op_overhead_ns", offsetof(optic_machine, op_overhead_ns), F_DOUBLE, true},
    {"cores", offsetof(optic_machine, cores), F_INT, true},
    {"source", offsetof(optic_machine, source), F_SOURCE, false},
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

static optic_status parse_machine(reader *r, optic_machine *m) {
  bool seen[N_FIELDS] = {false};
  memset(m, 0, sizeof *m);
  if (!take(r, '{')) return corrupt(r, "expected '{' (a JSON object)");
  if (!take(r, '}')) {
    do {
      char key[64];
      optic_status st = read_string(r, key, sizeof key);
      if (st) return st;
      if (!take(r, ':')) return corrupt(r, "expected ':'");
      size_t f = 0;
      while (f < N_FIELDS && strcmp(fields[f].key, key) != 0) f++;
      if (f == N_FIELDS) {
        if ((st = skip_value(r, 1))) return st;
        continue;
      }
      if (seen[f]) {
        char msg[192];
        snprintf(msg, sizeof msg, "duplicate key \"%s\"", key);
        return corrupt(r, msg);
      }
      seen[f] = true;
      char *dst = (char *)m + fields[f].offset;
      double v;
      switch (fields[f].kind) {
        case F_NAME: st = read_string(r, dst, OPTIC_MACHINE_NAME_MAX); break;
        case F_SOURCE: st = read_string(r, dst, OPTIC_MACHINE_SOURCE_MAX); break;
        case F_DOUBLE:
          if (!(st = read_number(r, &v))) memcpy(dst, &v, sizeof v);
          break;
        case F_INT:
          if (!(st = read_number(r, &v))) {
            if (v != (double)(int32_t)v || v < 1 || v > 1e6) {
              char msg[192];
              snprintf(msg, sizeof msg, "\"%s\" must be an integer in [1, 1000000], got %g", key, v);
              return corrupt(r, msg);
            }
            int32_t iv = (int32_t)v;
            memcpy(dst, &iv, sizeof iv);
          }
          break;
      }
      if (st) return st;
    } while (take(r, ','));
    if (!take(r, '}')) return corrupt(r, "expected ',' or '}'");
  }
  skip_ws(r);
  if (r->p != r->end) return corrupt(r, "text after the object");
  for (size_t f = 0; f < N_FIELDS; f++) {
    if (fields[f].required && !seen[f]) {
      char msg[192];
      snprintf(msg, sizeof msg, "missing field \"%s\"", fields[f].key);
      return corrupt(r, msg);
    }
  }
  /* An older file without the per-core figure: the documented default (an
   * invalid dram_bandwidth or cores is reported by validation afterwards). */
  if (m->core_dram_bandwidth == 0 && m->cores >= 1) m->core_dram_bandwidth = m->dram_bandwidth / m->cores;
  return OPTIC_OK;
}

optic_status optic_machine_load(const char *path, optic_machine *out) {
  if (!path || !out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_load: NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f)
    return optic_fail(errno == ENOENT ? OPTIC_ERR_NOT_FOUND : OPTIC_ERR_IO, "optic_machine_load: cannot open %s: %s",
                      path, strerror(errno));
  char *text = malloc(MAX_FILE_BYTES + 1);
  if (!text) {
    fclose(f);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "optic_machine_load: no memory to read %s", path);
  }
  size_t n = fread(text, 1, MAX_FILE_BYTES + 1, f);
  bool failed = ferror(f) != 0;
  fclose(f);
  optic_status st = OPTIC_OK;
  if (failed) {
    st = optic_fail(OPTIC_ERR_IO, "optic_machine_load: cannot read %s", path);
  } else if (n > MAX_FILE_BYTES) {
    st = optic_fail(OPTIC_ERR_CORRUPT, "machine file %s: larger than %d bytes", path, MAX_FILE_BYTES);
  } else {
    text[n] = 0;
    reader r = {.path = path, .text = text, .p = text, .end = text + n};
    optic_machine m;
    st = parse_machine(&r, &m);
    if (!st && optic_machine_validate(&m) != OPTIC_OK) {
      char why[256]; /* copied: optic_fail rewrites the buffer optic_last_error returns */
      snprintf(why, sizeof why, "%s", optic_last_error());
      st = optic_fail(OPTIC_ERR_CORRUPT, "machine file %s: %s", path, why);
    }
    if (!st) *out = m;
  }
  free(text);
  return st;
}

/* mkdir -p of path's parent directory. */
static optic_status make_parent(const char *path) {
  char dir[4096];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_save: path too long");
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return OPTIC_OK;
  *slash = 0;
  for (char *q = dir + 1; ; q++) {
    if (*q == '/' || *q == 0) {
      char c = *q;
      *q = 0;
      if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return optic_fail(OPTIC_ERR_IO, "optic_machine_save: cannot create directory %s: %s", dir, strerror(errno));
      *q = c;
      if (c == 0) break;
    }
  }
  return OPTIC_OK;
}

optic_status optic_machine_save(const optic_machine *m, const char *path) {
  if (!m || !path) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_save: NULL argument");
  optic_status st = optic_machine_validate(m);
  if (st) return st;
  optic_json j;
  optic_json_init(&j, true);
  optic_json_begin_object(&j);
  for (size_t f = 0; f < N_FIELDS; f++) {
    const char *src = (const char *)m + fields[f].offset;
    optic_json_key(&j, fields[f].key);
    double v;
    int32_t iv;
    switch (fields[f].kind) {
      case F_NAME:
      case F_SOURCE: optic_json_string(&j, src); break;
      case F_DOUBLE: memcpy(&v, src, sizeof v), optic_json_double(&j, v); break;
      case F_INT: memcpy(&iv, src, sizeof iv), optic_json_int(&j, iv); break;
    }
  }
  optic_json_end_object(&j);
  const char *text;
  size_t len;
  if ((st = optic_json_finish(&j, &text, &len)) != OPTIC_OK) {
    optic_json_free(&j);
    return optic_fail(st, "optic_machine_save: cannot format the machine file");
  }
  if ((st = make_parent(path)) != OPTIC_OK) {
    optic_json_free(&j);
    return st;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    optic_json_free(&j);
    return optic_fail(OPTIC_ERR_IO, "optic_machine_save: cannot create %s: %s", tmp, strerror(errno));
  }
  bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  optic_json_free(&j);
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return optic_fail(OPTIC_ERR_IO, "optic_machine_save: cannot write %s: %s", path, strerror(e));
  }
  return OPTIC_OK;
}

optic_status optic_machine_default_path(char *buf, size_t size) {
  if (!buf || size == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_default_path: no buffer");
  const char *xdg = getenv("XDG_CONFIG_HOME");
  int n;
  if (xdg && xdg[0] == '/') {
    n = snprintf(buf, size, "%s/optic/machine.json", xdg);
  } else {
    const char *home = getenv("HOME");
    if (!home || !home[0])
      return optic_fail(OPTIC_ERR_NOT_FOUND, "optic_machine_default_path: neither XDG_CONFIG_HOME nor HOME is set");
    n = snprintf(buf, size, "%s/.config/optic/machine.json", home);
  }
  if (n < 0 || (size_t)n >= size)
    return optic_fail(OPTIC_ERR_OVERFLOW, "optic_machine_default_path: path needs %d bytes, buffer has %zu", n, size);
  return OPTIC_OK;
}

optic_status optic_machine_host(optic_machine *out) {
  if (!out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_host: NULL argument");
  const char *env = getenv("OPTIC_MACHINE");
  if (env && env[0]) {
    optic_status st = optic_machine_load(env, out);
    if (st == OPTIC_ERR_NOT_FOUND)
      return optic_fail(st, "optic_machine_host: OPTIC_MACHINE names %s, which does not exist", env);
    return st;
  }
  char path[4096];
  if (optic_machine_default_path(path, sizeof path) == OPTIC_OK) {
    optic_status st = optic_machine_load(path, out);
    if (st != OPTIC_ERR_NOT_FOUND) return st;
  }
  optic_machine_preset("host-default", out);
  snprintf(out->source, sizeof out->source, "uncalibrated defaults: no machine file (run `optic calibrate`)");
  return OPTIC_OK;
}
