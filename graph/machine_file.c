/* The machine file: a flat JSON object with optic_machine's fields, written
 * by `optic calibrate` and read back for time estimates. It is read with the
 * strict JSON reader (core/json_parse.h, RFC 8259); values of unknown keys may
 * be any JSON value and are ignored. A file that is there but wrong is an
 * error naming the file and the problem, never silently replaced by defaults. */
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
#include "core/json_parse.h"

#define MAX_FILE_BYTES (1 << 20)

/* The text being read, for messages: "machine file PATH: line L column C: what". */
typedef struct source {
  const char *path, *text;
  size_t len;
} source;

static optic_status corrupt_at(const source *src, size_t offset, const char *what) {
  int line, col;
  optic_json_line_col(src->text, src->len, offset, &line, &col);
  return optic_fail(OPTIC_ERR_CORRUPT, "machine file %s: line %d column %d: %s", src->path, line, col, what);
}

/* Copies a string value into dst[size], cut at a UTF-8 character boundary. */
static void copy_string(char *dst, size_t size, const char *s) {
  size_t n = strlen(s);
  if (n >= size) {
    n = size - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  }
  memcpy(dst, s, n);
  dst[n] = 0;
}

typedef struct field {
  const char *key;
  size_t offset;
  enum { F_DOUBLE, F_INT, F_NAME, F_SOURCE, F_GRID } kind;
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
    /* Format 2 (optional: format-1 files load with 0, "not known"). */
    {"gemm_efficiency", offsetof(optic_machine, gemm_efficiency), F_DOUBLE, false},
    {"hash_bandwidth", offsetof(optic_machine, hash_bandwidth), F_DOUBLE, false},
    {"disk_write_bandwidth", offsetof(optic_machine, disk_write_bandwidth), F_DOUBLE, false},
    {"sync_ns", offsetof(optic_machine, sync_ns), F_DOUBLE, false},
    {"run_overhead_ns", offsetof(optic_machine, run_overhead_ns), F_DOUBLE, false},
    {"reduce_bandwidth", offsetof(optic_machine, reduce_bandwidth), F_DOUBLE, false},
    {"reduce_strided_bandwidth", offsetof(optic_machine, reduce_strided_bandwidth), F_DOUBLE, false},
    {"loop_bandwidth", offsetof(optic_machine, loop_bandwidth), F_DOUBLE, false},
    /* Format 3 (optional: older files load with 0, "not known"). */
    {"gather_element_ns", offsetof(optic_machine, gather_element_ns), F_DOUBLE, false},
    {"scatter_element_ns", offsetof(optic_machine, scatter_element_ns), F_DOUBLE, false},
    {"sort_compare_ns", offsetof(optic_machine, sort_compare_ns), F_DOUBLE, false},
    {"topk_compare_ns", offsetof(optic_machine, topk_compare_ns), F_DOUBLE, false},
    {"bf16_element_ns", offsetof(optic_machine, bf16_element_ns), F_DOUBLE, false},
    {"f16_element_ns", offsetof(optic_machine, f16_element_ns), F_DOUBLE, false},
    {"reduce_multi_bandwidth", offsetof(optic_machine, reduce_multi_bandwidth), F_DOUBLE, false},
    {"while_iteration_ns", offsetof(optic_machine, while_iteration_ns), F_DOUBLE, false},
    {"reduce_step_ns", offsetof(optic_machine, reduce_step_ns), F_DOUBLE, false},
/* Format 4 (optional: older files load with 0, "not known": the GEMM figure). */
#define CONV_FIELDS(C, NAME)                                                                    \
  {"conv_" NAME "_efficiency", offsetof(optic_machine, conv_efficiency[C]), F_DOUBLE, false}, { \
    "conv_" NAME "_element_ns", offsetof(optic_machine, conv_element_ns[C]), F_DOUBLE, false    \
  }
    CONV_FIELDS(OPTIC_CONV_CLASS_GEMM, "gemm"),
    CONV_FIELDS(OPTIC_CONV_CLASS_IM2COL_MK, "im2col_mk"),
    CONV_FIELDS(OPTIC_CONV_CLASS_IM2COL_KM, "im2col_km"),
    CONV_FIELDS(OPTIC_CONV_CLASS_DIRECT, "direct"),
    CONV_FIELDS(OPTIC_CONV_CLASS_GROUPED, "grouped"),
    CONV_FIELDS(OPTIC_CONV_CLASS_GROUPED_ROWS, "grouped_rows"),
    CONV_FIELDS(OPTIC_CONV_CLASS_BF16, "bf16"),
    {"dot_efficiency", offsetof(optic_machine, dot_efficiency), F_DOUBLE, false},
    {"dot_element_ns", offsetof(optic_machine, dot_element_ns), F_DOUBLE, false},
    {"dot_call_ns", offsetof(optic_machine, dot_call_ns), F_DOUBLE, false},
    {"dot_pack_element_ns", offsetof(optic_machine, dot_pack_element_ns), F_DOUBLE, false},
    {"loop_leaf_element_ns", offsetof(optic_machine, loop_leaf_element_ns), F_DOUBLE, false},
    {"loop_leaf_run_ns", offsetof(optic_machine, loop_leaf_run_ns), F_DOUBLE, false},
    /* Format 5 (optional: older files load with 0, "not known": the format-4 rules). */
    {"gather_run_ns", offsetof(optic_machine, gather_run_ns), F_DOUBLE, false},
    {"topk_select_element_ns", offsetof(optic_machine, topk_select_element_ns), F_DOUBLE, false},
    {"convert_from_bf16_ns", offsetof(optic_machine, convert_from_bf16_ns), F_DOUBLE, false},
    {"convert_from_f16_ns", offsetof(optic_machine, convert_from_f16_ns), F_DOUBLE, false},
    {"convert_to_bf16_ns", offsetof(optic_machine, convert_to_bf16_ns), F_DOUBLE, false},
    {"convert_to_f16_ns", offsetof(optic_machine, convert_to_f16_ns), F_DOUBLE, false},
    {"reduce_fold_bf16_ns", offsetof(optic_machine, reduce_fold_bf16_ns), F_DOUBLE, false},
    {"reduce_fold_f16_ns", offsetof(optic_machine, reduce_fold_f16_ns), F_DOUBLE, false},
    {"reduce_fold_bf16_minmax_ns", offsetof(optic_machine, reduce_fold_bf16_minmax_ns), F_DOUBLE, false},
    {"reduce_fold_f16_minmax_ns", offsetof(optic_machine, reduce_fold_f16_minmax_ns), F_DOUBLE, false},
    /* Format 6 (optional: older files load with 0, "not known"). */
    {"cpu_clock_ns", offsetof(optic_machine, cpu_clock_ns), F_DOUBLE, false},
    /* Format 7 (optional: older files load with all 0, no grid): OPTIC_DOT_GRID_POINTS numbers, M-major
     * (OPTIC_DOT_GRID_INDEX), beside the sizes of each axis ("dot_grid_sizes", checked when present). */
    {"dot_grid_efficiency", offsetof(optic_machine, dot_grid_efficiency), F_GRID, false},
    /* Format 8 (optional: format <= 7 files load with 0, "not known": no small-op fixed costs). */
    {"reduce_cols_call_ns", offsetof(optic_machine, reduce_cols_call_ns), F_DOUBLE, false},
    {"reduce_gather_output_ns", offsetof(optic_machine, reduce_gather_output_ns), F_DOUBLE, false},
    {"reduce_row_ns", offsetof(optic_machine, reduce_row_ns), F_DOUBLE, false},
    {"batch_norm_run_ns", offsetof(optic_machine, batch_norm_run_ns), F_DOUBLE, false},
    {"batch_norm_training_element_ns", offsetof(optic_machine, batch_norm_training_element_ns), F_DOUBLE, false},
    {"batch_norm_inference_element_ns", offsetof(optic_machine, batch_norm_inference_element_ns), F_DOUBLE, false},
    {"batch_norm_grad_element_ns", offsetof(optic_machine, batch_norm_grad_element_ns), F_DOUBLE, false},
    /* Format 9 (optional: format <= 8 files load with 0, "not known": optimizer steps by their bytes). */
    {"optim_sgd_element_ns", offsetof(optic_machine, optim_sgd_element_ns), F_DOUBLE, false},
    {"optim_adam_element_ns", offsetof(optic_machine, optim_adam_element_ns), F_DOUBLE, false},
    {"optim_adamw_element_ns", offsetof(optic_machine, optim_adamw_element_ns), F_DOUBLE, false},
    {"optim_rmsprop_element_ns", offsetof(optic_machine, optim_rmsprop_element_ns), F_DOUBLE, false},
    {"optim_adagrad_element_ns", offsetof(optic_machine, optim_adagrad_element_ns), F_DOUBLE, false},
    {"optim_lamb_element_ns", offsetof(optic_machine, optim_lamb_element_ns), F_DOUBLE, false},
    {"optim_lion_element_ns", offsetof(optic_machine, optim_lion_element_ns), F_DOUBLE, false},
    /* Format 10 (optional: format <= 9 files load with 0, "not measured": the MPI link assumed). */
    {"mpi_link_latency_ns", offsetof(optic_machine, mpi_link_latency_ns), F_DOUBLE, false},
    {"mpi_link_bandwidth", offsetof(optic_machine, mpi_link_bandwidth), F_DOUBLE, false},
    /* Format 12 (optional: format <= 11 files load with 0: loop fusions by their bytes at loop_bandwidth,
     * optimizer steps' fixed cost by op_overhead_ns). */
    {"loop_stream_bandwidth", offsetof(optic_machine, loop_stream_bandwidth), F_DOUBLE, false},
    {"loop_flop_ns", offsetof(optic_machine, loop_flop_ns), F_DOUBLE, false},
    {"loop_transcendental_ns", offsetof(optic_machine, loop_transcendental_ns), F_DOUBLE, false},
    {"optim_step_ns", offsetof(optic_machine, optim_step_ns), F_DOUBLE, false},
    /* Format 13 (optional: format <= 12 files load with 0: no last-level-cache tier, streamed column
     * reduces at reduce_bandwidth). */
    {"llc_bytes", offsetof(optic_machine, llc_bytes), F_DOUBLE, false},
    {"llc_bandwidth", offsetof(optic_machine, llc_bandwidth), F_DOUBLE, false},
    {"core_llc_bandwidth", offsetof(optic_machine, core_llc_bandwidth), F_DOUBLE, false},
    {"reduce_cols_stream_bandwidth", offsetof(optic_machine, reduce_cols_stream_bandwidth), F_DOUBLE, false},
    {"pad_element_ns", offsetof(optic_machine, pad_element_ns), F_DOUBLE, false},
    {"pad_run_ns", offsetof(optic_machine, pad_run_ns), F_DOUBLE, false},
    {"reduce_window_element_ns", offsetof(optic_machine, reduce_window_element_ns), F_DOUBLE, false},
    {"reduce_window_run_ns", offsetof(optic_machine, reduce_window_run_ns), F_DOUBLE, false},
    {"clock_read_ns", offsetof(optic_machine, clock_read_ns), F_DOUBLE, false},
    {"profile_record_ns", offsetof(optic_machine, profile_record_ns), F_DOUBLE, false},
    {"page_touch_ns", offsetof(optic_machine, page_touch_ns), F_DOUBLE, false},
    {"compile_instruction_ns", offsetof(optic_machine, compile_instruction_ns), F_DOUBLE, false},
    {"compile_instruction_10k_ns", offsetof(optic_machine, compile_instruction_10k_ns), F_DOUBLE, false},
    {"compile_instruction_100k_ns", offsetof(optic_machine, compile_instruction_100k_ns), F_DOUBLE, false},
    {"conv_call_ns", offsetof(optic_machine, conv_call_ns), F_DOUBLE, false},
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

/* The grid's array of OPTIC_DOT_GRID_POINTS numbers (their range is
 * optic_machine_validate's). */
static optic_status store_grid(const source *src, const field *f, const optic_jv *v, double *dst) {
  char msg[192];
  if (v->kind != OPTIC_JV_ARRAY || v->length != OPTIC_DOT_GRID_POINTS) {
    snprintf(msg, sizeof msg, "\"%s\" must be an array of %d numbers", f->key, OPTIC_DOT_GRID_POINTS);
    return corrupt_at(src, v->offset, msg);
  }
  for (size_t i = 0; i < v->length; i++) {
    const optic_jv *x = optic_jv_at(v, i);
    if (x->kind != OPTIC_JV_NUMBER) return corrupt_at(src, x->offset, "expected a number");
    dst[i] = x->number;
  }
  return OPTIC_OK;
}

/* "dot_grid_sizes", when present, must name this optic's grid sizes. */
static optic_status check_grid_sizes(const source *src, const optic_jv *v) {
  bool ok = v->kind == OPTIC_JV_ARRAY && v->length == OPTIC_DOT_GRID_AXIS;
  for (size_t i = 0; ok && i < v->length; i++) {
    const optic_jv *x = optic_jv_at(v, i);
    ok = x->kind == OPTIC_JV_NUMBER && x->number == (double)OPTIC_DOT_GRID_SIZE(i);
  }
  if (ok) return OPTIC_OK;
  char msg[192];
  snprintf(msg, sizeof msg, "\"dot_grid_sizes\" must be [4, 16, 64, 256, 1024, 4096], the sizes this optic reads");
  return corrupt_at(src, v->offset, msg);
}

/* Stores the value of field f from v, or says what is wrong with it. */
static optic_status store_field(const source *src, const field *f, const optic_jv *v, optic_machine *m) {
  char *dst = (char *)m + f->offset;
  char msg[192];
  switch (f->kind) {
    case F_NAME:
    case F_SOURCE:
      if (v->kind != OPTIC_JV_STRING) return corrupt_at(src, v->offset, "expected a string");
      copy_string(dst, f->kind == F_NAME ? OPTIC_MACHINE_NAME_MAX : OPTIC_MACHINE_SOURCE_MAX, v->string);
      return OPTIC_OK;
    case F_DOUBLE:
      if (v->kind != OPTIC_JV_NUMBER) {
        snprintf(msg, sizeof msg, "\"%s\": expected a number", f->key);
        return corrupt_at(src, v->offset, msg);
      }
      memcpy(dst, &v->number, sizeof v->number);
      return OPTIC_OK;
    case F_INT: {
      if (v->kind != OPTIC_JV_NUMBER) return corrupt_at(src, v->offset, "expected a number");
      double x = v->number;
      if (!(x >= 1 && x <= 1e6) || x != (double)(int32_t)x) {
        snprintf(msg, sizeof msg, "\"%s\" must be an integer in [1, 1000000], got %g", f->key, x);
        return corrupt_at(src, v->offset, msg);
      }
      int32_t iv = (int32_t)x;
      memcpy(dst, &iv, sizeof iv);
      return OPTIC_OK;
    }
    case F_GRID: return store_grid(src, f, v, (double *)(void *)dst);
  }
  return corrupt_at(src, v->offset, "unknown field kind");
}

/* The machine from a parsed object: every required field once, the known
 * fields of the right kind; unknown keys are ignored. */
static optic_status machine_from_json(const source *src, const optic_jv *root, optic_machine *m, int32_t *format) {
  bool seen[N_FIELDS] = {false};
  memset(m, 0, sizeof *m);
  *format = 1; /* no "format" key: format 1 */
  char msg[192];
  for (size_t i = 0; i < root->length; i++) {
    if (strcmp(root->keys[i], "format") == 0) {
      const optic_jv *v = &root->items[i];
      if (v->kind != OPTIC_JV_NUMBER || !(v->number >= 1) || v->number != (double)(int32_t)v->number)
        return corrupt_at(src, v->offset, "\"format\" must be a positive integer");
      if (v->number > OPTIC_MACHINE_FORMAT) {
        snprintf(msg, sizeof msg, "format %d is newer than this optic reads (%d): calibrate again or upgrade optic",
                 (int)v->number, OPTIC_MACHINE_FORMAT);
        return corrupt_at(src, v->offset, msg);
      }
      *format = (int32_t)v->number;
      continue;
    }
    if (strcmp(root->keys[i], "dot_grid_sizes") == 0) {
      optic_status st = check_grid_sizes(src, &root->items[i]);
      if (st != OPTIC_OK) return st;
      continue;
    }
    size_t f = 0;
    while (f < N_FIELDS && strcmp(fields[f].key, root->keys[i]) != 0) f++;
    if (f == N_FIELDS) continue;
    if (seen[f]) {
      snprintf(msg, sizeof msg, "duplicate key \"%s\"", fields[f].key);
      return corrupt_at(src, root->items[i].offset, msg);
    }
    seen[f] = true;
    optic_status st = store_field(src, &fields[f], &root->items[i], m);
    if (st != OPTIC_OK) return st;
  }
  for (size_t f = 0; f < N_FIELDS; f++) {
    if (fields[f].required && !seen[f]) {
      snprintf(msg, sizeof msg, "missing field \"%s\"", fields[f].key);
      return corrupt_at(src, src->len, msg);
    }
  }
  /* An older file without the per-core figure: the documented default (an
   * invalid dram_bandwidth or cores is reported by validation afterwards). */
  if (m->core_dram_bandwidth == 0 && m->cores >= 1) m->core_dram_bandwidth = m->dram_bandwidth / m->cores;
  return OPTIC_OK;
}

/* Parses text[0..len) (the contents of path) as a machine file. */
static optic_status parse_machine(const source *src, optic_machine *m, int32_t *format) {
  size_t i = 0;
  while (i < src->len && (src->text[i] == ' ' || src->text[i] == '\t' || src->text[i] == '\r' || src->text[i] == '\n'))
    i++;
  if (i == src->len || src->text[i] != '{') return corrupt_at(src, i, "expected '{' (a JSON object)");
  optic_jv *root = NULL;
  optic_status st = optic_json_parse(src->text, src->len, NULL, &root);
  if (st == OPTIC_ERR_CORRUPT) {
    char why[256]; /* copied: optic_fail rewrites the buffer optic_last_error returns */
    const char *msg = optic_last_error();
    snprintf(why, sizeof why, "%s", strncmp(msg, "json: ", 6) == 0 ? msg + 6 : msg);
    return optic_fail(st, "machine file %s: %s", src->path, why);
  }
  if (st != OPTIC_OK) return st;
  st = machine_from_json(src, root, m, format);
  optic_jv_free(root);
  return st;
}

optic_status optic_machine_load(const char *path, optic_machine *out) {
  int32_t format;
  return optic_machine_load_format(path, out, &format);
}

optic_status optic_machine_load_format(const char *path, optic_machine *out, int32_t *format) {
  if (!path || !out || !format) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_load: NULL argument");
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
    source src = {.path = path, .text = text, .len = n};
    optic_machine m;
    int32_t fmt = 1;
    st = parse_machine(&src, &m, &fmt);
    if (!st && optic_machine_validate(&m) != OPTIC_OK) {
      char why[256]; /* copied: optic_fail rewrites the buffer optic_last_error returns */
      snprintf(why, sizeof why, "%s", optic_last_error());
      st = optic_fail(OPTIC_ERR_CORRUPT, "machine file %s: %s", path, why);
    }
    if (!st) *out = m, *format = fmt;
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
  for (char *q = dir + 1;; q++) {
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

/* The grid's numbers, then (for readers of the file) the sizes of each axis. */
static void write_grid(optic_json *j, const double *grid) {
  optic_json_begin_array(j);
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) optic_json_double(j, grid[i]);
  optic_json_end_array(j);
  optic_json_key(j, "dot_grid_sizes");
  optic_json_begin_array(j);
  for (int i = 0; i < OPTIC_DOT_GRID_AXIS; i++) optic_json_int(j, OPTIC_DOT_GRID_SIZE(i));
  optic_json_end_array(j);
}

optic_status optic_machine_save(const optic_machine *m, const char *path) {
  if (!m || !path) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_save: NULL argument");
  optic_status st = optic_machine_validate(m);
  if (st) return st;
  optic_json j;
  optic_json_init(&j, true);
  optic_json_begin_object(&j);
  optic_json_key(&j, "format");
  optic_json_int(&j, OPTIC_MACHINE_FORMAT);
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
      case F_GRID: write_grid(&j, (const double *)(const void *)src); break;
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
