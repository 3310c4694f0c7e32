/* Machine models: every preset valid, save/load round trip (exact doubles),
 * corrupt and incomplete files rejected with CORRUPT and a message naming the
 * file, NaN/negative figures rejected, the host lookup order ($OPTIC_MACHINE,
 * $XDG_CONFIG_HOME, defaults), the roofline arithmetic on hand-computed
 * cases, the optional per-core DRAM figure (files with and without it) and
 * the model of fewer threads (optic_machine_for_threads: scaling, clamping),
 * and malformed files (syntax, wrong kinds, positions, nesting, size limit).
 * Files live in a fresh temporary directory removed at the end. */
#include <optic/optic.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"

static char dir[256];

static void remove_dir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static const char *tmp_dir(void) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/optic_test_machine.XXXXXX");
    if (!mkdtemp(dir)) exit(2);
    atexit(remove_dir);
  }
  return dir;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) exit(2);
  fputs(text, f);
  fclose(f);
}

static optic_machine sample(void) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "host");
  m.peak_flops = 1.234567890123e11;
  m.peak_transcendentals = 3.3e9 / 7; /* not a short decimal: round trip must be exact */
  m.dram_bandwidth = 1.7e10;
  m.cache_bandwidth = 9.1e10;
  m.cache_bytes = 1048576;
  m.op_overhead_ns = 123.25;
  m.cores = 2;
  snprintf(m.source, sizeof m.source, "measured \"by\" test\\calibrate\n");
  m.core_dram_bandwidth = 1.1e10 / 3;
  return m;
}

static void presets_valid(void) {
  OT_CHECK(optic_machine_preset_count() == 7);
  OT_CHECK(optic_machine_preset_name(-1) == NULL && optic_machine_preset_name(7) == NULL);
  for (int32_t i = 0; i < optic_machine_preset_count(); i++) {
    const char *name = optic_machine_preset_name(i);
    optic_machine m;
    OT_EXPECT_OK(optic_machine_preset(name, &m));
    OT_EXPECT_OK(optic_machine_validate(&m));
    OT_CHECK(strcmp(m.name, name) == 0, "%s", name);
    OT_CHECK(m.source[0] != 0, "%s has no source", name);
  }
  optic_machine v4, v5e;
  OT_EXPECT_OK(optic_machine_preset("tpu-v4", &v4));
  OT_CHECK(fabs(v4.peak_flops - 275e12 / 3) < 1e3 && v4.dram_bandwidth == 1200e9, "v4 %g %g", v4.peak_flops,
           v4.dram_bandwidth);
  OT_CHECK(strstr(v4.source, "assumed") != NULL, "the f32 assumption is stated: %s", v4.source);
  OT_EXPECT_OK(optic_machine_preset("tpu-v5e", &v5e));
  OT_CHECK(v5e.dram_bandwidth == 819e9 && v5e.cores == 1);
  /* per-core HBM: the chip's bandwidth over its TensorCores */
  OT_CHECK(v4.core_dram_bandwidth == 600e9 && v5e.core_dram_bandwidth == 819e9, "%g %g", v4.core_dram_bandwidth,
           v5e.core_dram_bandwidth);
  OT_CHECK(strstr(v4.source, "HBM/cores") != NULL, "the per-core HBM assumption is stated: %s", v4.source);
  optic_machine hd;
  OT_EXPECT_OK(optic_machine_preset("host-default", &hd));
  OT_CHECK(hd.core_dram_bandwidth > 0 && hd.core_dram_bandwidth <= hd.dram_bandwidth);
  optic_machine x;
  OT_EXPECT_STATUS(optic_machine_preset("tpu-v9", &x), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(strstr(optic_last_error(), "tpu-v6e") != NULL, "known names listed: %s", optic_last_error());
}

static void round_trip(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/a/b/machine.json", tmp_dir()); /* parent directories created */
  optic_machine m = sample(), back;
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &back));
  OT_CHECK(memcmp(&m, &back, sizeof m) == 0 ||
               (strcmp(m.name, back.name) == 0 && m.peak_flops == back.peak_flops &&
                m.peak_transcendentals == back.peak_transcendentals && m.dram_bandwidth == back.dram_bandwidth &&
                m.cache_bandwidth == back.cache_bandwidth && m.cache_bytes == back.cache_bytes &&
                m.op_overhead_ns == back.op_overhead_ns && m.cores == back.cores &&
                m.core_dram_bandwidth == back.core_dram_bandwidth && strcmp(m.source, back.source) == 0),
           "round trip differs");
  /* Overwrite in place (atomic rename over the old file), no temporary left. */
  m.cores = 4;
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &back));
  OT_CHECK(back.cores == 4);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  OT_CHECK(access(tmp, F_OK) != 0, "temporary file left behind");
  /* Unknown keys (any JSON value) are skipped; \u escapes decode. */
  snprintf(path, sizeof path, "%s/extra.json", tmp_dir());
  write_file(path,
             "{\"name\":\"h\\u00e9\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10,"
             "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1,"
             "\"measured\":{\"runs\":[1,2,{\"x\":null}],\"ok\":true}}");
  OT_EXPECT_OK(optic_machine_load(path, &back));
  OT_CHECK(strcmp(back.name, "h\xc3\xa9") == 0 && back.source[0] == 0 && back.cores == 1);
  OT_CHECK(back.core_dram_bandwidth == 1e10, "no per-core key, 1 core: %g", back.core_dram_bandwidth);
}

/* The required fields of a machine file, without the closing brace: the
 * tests append format-specific keys to it. */
static const char MACHINE_HEAD[] =
    "{\"name\":\"h\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":3e10,"
    "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":40,\"cores\":4";

/* core_dram_bandwidth is optional: an older file (without it) loads with
 * dram_bandwidth / cores; present, it is read exactly and validated. */
static void core_dram_in_file(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/core.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  char text[1024];
  optic_machine m;
  snprintf(text, sizeof text, "%s}", head); /* as written before the field existed */
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.core_dram_bandwidth == 3e10 / 4, "default dram/cores: %g", m.core_dram_bandwidth);
  snprintf(text, sizeof text, "%s,\"core_dram_bandwidth\":1.25e10}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.core_dram_bandwidth == 1.25e10, "%g", m.core_dram_bandwidth);
  snprintf(text, sizeof text, "%s,\"core_dram_bandwidth\":0}", head); /* 0: not known */
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(optic_machine_core_dram_bandwidth(&m) == 3e10 / 4, "%g", optic_machine_core_dram_bandwidth(&m));
  static const struct {
    const char *value, *message;
  } bad[] = {
      {"-1", "core_dram_bandwidth is -1"},
      {"1e999", "core_dram_bandwidth is inf"},
      {"4e10", "core_dram_bandwidth 4e+10 exceeds dram_bandwidth 3e+10"},
      {"\"fast\"", "expected a number"},
      {"null", "expected a number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text, "%s,\"core_dram_bandwidth\":%s}", head, bad[i].value);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), bad[i].message) != NULL && strstr(optic_last_error(), path) != NULL,
             "case %zu: '%s', want '%s'", i, optic_last_error(), bad[i].message);
  }
  /* save writes it; load reads it back */
  optic_machine s = sample(), back;
  s.core_dram_bandwidth = 6.5e9;
  OT_EXPECT_OK(optic_machine_save(&s, path));
  OT_EXPECT_OK(optic_machine_load(path, &back));
  OT_CHECK(back.core_dram_bandwidth == 6.5e9, "%g", back.core_dram_bandwidth);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

static void for_threads(void) {
  optic_machine m = sample(), t;
  m.cores = 4;
  m.dram_bandwidth = 2e10;
  m.core_dram_bandwidth = 8e9; /* 3 cores saturate the memory */
  const int32_t threads[] = {1, 2, 3, 4};
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
    int32_t n = threads[i];
    OT_EXPECT_OK(optic_machine_for_threads(&m, n, &t));
    double f = n / 4.0, dram = fmin(2e10, 8e9 * n);
    OT_CHECK(t.cores == n && near(t.peak_flops, m.peak_flops * f) &&
                 near(t.peak_transcendentals, m.peak_transcendentals * f) &&
                 near(t.cache_bandwidth, m.cache_bandwidth * f) && near(t.cache_bytes, m.cache_bytes * f) &&
                 t.dram_bandwidth == dram && t.core_dram_bandwidth == 8e9 && t.op_overhead_ns == m.op_overhead_ns &&
                 strcmp(t.name, m.name) == 0 && strcmp(t.source, m.source) == 0,
             "threads %d: cores %d flops %g dram %g cache %g/%g", (int)n, (int)t.cores, t.peak_flops, t.dram_bandwidth,
             t.cache_bandwidth, t.cache_bytes);
    OT_EXPECT_OK(optic_machine_validate(&t));
  }
  /* all cores: the machine itself */
  OT_EXPECT_OK(optic_machine_for_threads(&m, 4, &t));
  optic_machine resolved;
  optic_machine_resolve(&m, &resolved);
  OT_CHECK(memcmp(&t, &resolved, sizeof m) == 0, "threads == cores changed the model");
  /* 0 means all; more than the cores: all; negative: error */
  OT_EXPECT_OK(optic_machine_for_threads(&m, 0, &t));
  OT_CHECK(t.cores == 4 && t.peak_flops == m.peak_flops);
  OT_EXPECT_OK(optic_machine_for_threads(&m, 64, &t));
  OT_CHECK(t.cores == 4 && t.peak_flops == m.peak_flops && t.dram_bandwidth == 2e10);
  OT_EXPECT_STATUS(optic_machine_for_threads(&m, -1, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "threads is -1") != NULL, "%s", optic_last_error());
  /* per-core figure not known: dram / cores per core, so DRAM scales linearly */
  m.core_dram_bandwidth = 0;
  OT_EXPECT_OK(optic_machine_for_threads(&m, 1, &t));
  OT_CHECK(t.dram_bandwidth == 5e9 && t.core_dram_bandwidth == 5e9, "%g %g", t.dram_bandwidth, t.core_dram_bandwidth);
  OT_EXPECT_OK(optic_machine_for_threads(&m, 4, &t));
  OT_CHECK(t.dram_bandwidth == 2e10 && t.core_dram_bandwidth == 5e9, "resolved: %g", t.core_dram_bandwidth);
  /* in place, and the estimate follows: a flop-bound op takes 4x on 1 of 4 cores */
  m.core_dram_bandwidth = 8e9;
  optic_cost c = {m.peak_flops * 1e-6, 0, 0}; /* 1 ms of flops on 4 cores */
  double all = optic_machine_estimate_ns(&m, &c);
  t = m;
  OT_EXPECT_OK(optic_machine_for_threads(&t, 1, &t));
  OT_CHECK(near(optic_machine_estimate_ns(&t, &c) - t.op_overhead_ns, 4.0 * (all - m.op_overhead_ns)), "%g vs %g",
           optic_machine_estimate_ns(&t, &c), all);
  /* a DRAM-bound op: 2e10 B/s on all, 8e9 on one (not 5e9: one core takes more than its share) */
  c = (optic_cost){0, 0, 1.6e9};
  OT_CHECK(near(optic_machine_estimate_ns(&t, &c) - t.op_overhead_ns, 2e8), "%g", optic_machine_estimate_ns(&t, &c));
  /* an invalid machine is rejected */
  m.peak_flops = NAN;
  OT_EXPECT_STATUS(optic_machine_for_threads(&m, 1, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_machine_for_threads(NULL, 1, &t), OPTIC_ERR_INVALID_ARGUMENT);
}

typedef struct bad_file {
  const char *text, *message; /* the file, and what the error message must contain */
} bad_file;

/* Each file, written as name in the temporary directory, fails to load with
 * CORRUPT and a message naming the file and containing its message. */
static void expect_corrupt(const char *name, const bad_file *bad, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp_dir(), name);
  for (size_t i = 0; i < n; i++) {
    write_file(path, bad[i].text);
    optic_machine m;
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    const char *msg = optic_last_error();
    OT_CHECK(strstr(msg, path) != NULL && strstr(msg, bad[i].message) != NULL, "case %zu: message '%s', want '%s'", i,
             msg, bad[i].message);
  }
}

static void corrupt_files(void) {
  static const bad_file bad[] = {
      {"", "expected '{'"},
      {"{\"name\":\"h\",", "expected a string"},
      {"{\"name\":\"h\" \"peak_flops\":1}", "expected ',' or '}'"},
      {"{\"name\":\"h\",\"peak_flops\":NaN}", "expected a number"},
      {"{\"name\":\"h\",\"peak_flops\":+1}", "expected a number"},
      {"{\"name\":\"h\",\"peak_flops\":1.}", "bad number"},
      {"{\"name\":\"h\",\"name\":\"g\"}", "duplicate key"},
      {"{\"name\":\"h\"} x", "text after the object"},
      {"[1,2]", "expected '{'"},
      {"{\"name\":\"h\",\"peak_flops\":1e11}", "missing field \"peak_transcendentals\""},
      {"{\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10,\"cache_bandwidth\":5e10,"
       "\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1}",
       "missing field \"name\""},
      {"{\"name\":\"h\",\"peak_flops\":-1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10,"
       "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1}",
       "peak_flops is -1e+11"},
      {"{\"name\":\"h\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e999,"
       "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1}",
       "dram_bandwidth is inf"},
      {"{\"name\":\"h\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10,"
       "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1.5}",
       "\"cores\" must be an integer"},
      {"{\"name\":\"h\",\"source\":\"abc", "unterminated string"},
      {"{\"name\":\"h\\q\"}", "bad escape"},
  };
  expect_corrupt("bad.json", bad, sizeof bad / sizeof bad[0]);
  char path[512];
  optic_machine m;
  snprintf(path, sizeof path, "%s/none.json", tmp_dir());
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_NOT_FOUND);
}

/* More malformed files: each is CORRUPT with a message naming the file, the
 * problem and (for what a file means, not only its syntax) the position. */
static void malformed_files(void) {
#define FULL                                                                                 \
  "\"name\":\"h\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10," \
  "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0"
  static const bad_file bad[] = {
      {" \n\t", "expected '{'"},
      {"\"host\"", "expected '{'"},
      {"{\"name\":\"h\"", "expected ',' or '}'"},
      {"{\"name\":\"h\",}", "expected a string key"},
      {"{\"name\":\"h\",\"x\":[1,]}", "expected a value"},
      {"{\"name\":\"h\",\"peak_flops\":01}", "bad number"},
      {"{\"name\":\"h\",\"peak_flops\":1e}", "bad number"},
      {"{\"name\":\"h\",\"peak_flops\":Infinity}", "expected a number"},
      {"{\"name\":\"h\",\"peak_flops\":true}", "expected a number"},
      {"{\"name\":\"h\",\"peak_flops\":[1]}", "expected a number"},
      {"{\"name\":1}", "expected a string"},
      {"{\"name\":\"h\",\"source\":null}", "expected a string"},
      {"{\"name\":\"h\\ud800\"}", "surrogate"},
      {"{\"name\":\"h\xff\"}", "invalid UTF-8"},
      {"{\"name\":\"a\tb\"}", "control character"},
      {"{\"name\":\"h\\u12\"}", "bad \\u escape"},
      {"{" FULL ",\"cores\":1e10}", "\"cores\" must be an integer in [1, 1000000], got 1e+10"},
      {"{" FULL ",\"cores\":-2}", "\"cores\" must be an integer"},
      {"{" FULL ",\"cores\":0}", "\"cores\" must be an integer"},
      {"{" FULL ",\"cores\":\"2\"}", "expected a number"},
      {"{" FULL "}", "missing field \"cores\""},
      {"{" FULL ",\"cores\":1,\"cores\":2}", "duplicate key \"cores\""},
      {"{" FULL ",\"cores\":1}]", "text after the object"},
      {"{\n\"name\":\"h\",\n  \"cores\":1.5}", "line 3 column 11: \"cores\" must be an integer"},
      {"{\"name\":\"h\",\n\"peak_flops\":+1}", "line 2 column 14"},
  };
#undef FULL
  expect_corrupt("malformed.json", bad, sizeof bad / sizeof bad[0]);
  char path[512];
  snprintf(path, sizeof path, "%s/malformed.json", tmp_dir());
  /* Nesting past the reader's limit inside an unknown key's value. */
  char deep[300];
  int n = snprintf(deep, sizeof deep, "{\"x\":");
  for (int d = 0; d < 70; d++) deep[n++] = '[';
  deep[n] = 0;
  write_file(path, deep);
  optic_machine m;
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "nesting deeper") != NULL, "%s", optic_last_error());
  /* A NUL byte after the object is text after it (the file is read by length). */
  FILE *f = fopen(path, "wb");
  OT_CHECK(f != NULL);
  fputs(
      "{"
      "\"name\":\"h\"}",
      f);
  fputc(0, f);
  fclose(f);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "text after the object") != NULL, "%s", optic_last_error());
  /* Larger than the 1 MiB limit: refused before parsing. */
  f = fopen(path, "wb");
  OT_CHECK(f != NULL);
  fputc('{', f);
  for (int i = 0; i < (1 << 20); i++) fputc(' ', f);
  fputc('}', f);
  fclose(f);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "larger than") != NULL, "%s", optic_last_error());
  /* A long name is cut at a character boundary, never inside a UTF-8 sequence. */
  char text[1024], name[200];
  size_t k = 0;
  while (k + 2 < sizeof name && k < OPTIC_MACHINE_NAME_MAX + 4) name[k++] = '\xc3', name[k++] = '\xa9';
  name[k] = 0;
  snprintf(text, sizeof text,
           "{\"name\":\"%s\",\"peak_flops\":1e11,\"peak_transcendentals\":2e9,\"dram_bandwidth\":1e10,"
           "\"cache_bandwidth\":5e10,\"cache_bytes\":0,\"op_overhead_ns\":0,\"cores\":1}",
           name);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  size_t got = strlen(m.name);
  OT_CHECK(got > 0 && got < OPTIC_MACHINE_NAME_MAX && got % 2 == 0 && memcmp(m.name, name, got) == 0,
           "name cut to %zu bytes", got);
}

static void validate_rejects(void) {
  optic_machine m = sample();
  OT_EXPECT_OK(optic_machine_validate(&m));
  double *figures[] = {&m.peak_flops, &m.peak_transcendentals, &m.dram_bandwidth, &m.cache_bandwidth};
  for (size_t i = 0; i < 4; i++) {
    double keep = *figures[i];
    double badv[] = {NAN, -1.0, 0.0, INFINITY};
    for (size_t k = 0; k < 4; k++) {
      *figures[i] = badv[k];
      OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
    }
    *figures[i] = keep;
  }
  m.cache_bytes = 0, m.op_overhead_ns = 0;
  OT_EXPECT_OK(optic_machine_validate(&m)); /* zero allowed for these two */
  m.op_overhead_ns = -1;
  OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
  m.op_overhead_ns = 0, m.cache_bytes = NAN;
  OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
  m.cache_bytes = 0;
  double badc[] = {NAN, -1.0, INFINITY, 1.8e10 /* > dram_bandwidth */};
  for (size_t k = 0; k < 4; k++) {
    m.core_dram_bandwidth = badc[k];
    OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(strstr(optic_last_error(), "core_dram_bandwidth") != NULL, "%s", optic_last_error());
  }
  m.core_dram_bandwidth = 0; /* not known: allowed */
  OT_EXPECT_OK(optic_machine_validate(&m));
  m.core_dram_bandwidth = m.dram_bandwidth; /* one core may take it all */
  OT_EXPECT_OK(optic_machine_validate(&m));
  m.cores = 0;
  OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
  m.cores = 1, m.name[0] = 0;
  OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
  m = sample();
  m.peak_flops = NAN;
  char path[512];
  snprintf(path, sizeof path, "%s/never.json", tmp_dir());
  OT_EXPECT_STATUS(optic_machine_save(&m, path), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(access(path, F_OK) != 0, "an invalid machine was written");
}

static void estimate_arithmetic(void) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "toy");
  m.peak_flops = 1e9;           /* 1 flop per ns */
  m.peak_transcendentals = 1e8; /* 10 ns each */
  m.dram_bandwidth = 1e9;       /* 1 byte per ns */
  m.cache_bandwidth = 4e9;      /* 4 bytes per ns */
  m.cache_bytes = 1000;
  m.op_overhead_ns = 5;
  m.cores = 1;
  OT_EXPECT_OK(optic_machine_validate(&m));
  /* matmul f32[10,5]x[5,30]: 3000 flops, 2000 bytes (in cache: 500 ns) -> 3000 + 5 */
  optic_cost c = {3000, 0, 2000};
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 3005 + 0 * 1.0, "%g", optic_machine_estimate_ns(&m, &c));
  /* bytes beyond the cache: 2000 flops vs 2000 bytes at 1 B/ns -> tie 2000 + 5 */
  c = (optic_cost){2000, 0, 2000};
  m.cache_bytes = 1999;
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 2005, "%g", optic_machine_estimate_ns(&m, &c));
  m.cache_bytes = 2000; /* the boundary counts as in cache: 500 ns of bytes, flops win */
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 2005, "%g", optic_machine_estimate_ns(&m, &c));
  c = (optic_cost){0, 0, 2000};
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 505, "%g", optic_machine_estimate_ns(&m, &c));
  /* the loop fusion: 16 flops, 4 transcendentals (40 ns), 64 bytes (16 ns) -> 40 + 5 */
  c = (optic_cost){16, 4, 64};
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 45, "%g", optic_machine_estimate_ns(&m, &c));
  c = (optic_cost){0, 0, 0};
  OT_CHECK(optic_machine_estimate_ns(&m, &c) == 5, "overhead only");
}

static void host_lookup(void) {
  char path[512], xdg[512];
  optic_machine m = sample(), got;
  snprintf(path, sizeof path, "%s/env.json", tmp_dir());
  OT_EXPECT_OK(optic_machine_save(&m, path));
  char *old_env = getenv("OPTIC_MACHINE") ? strdup(getenv("OPTIC_MACHINE")) : NULL;
  char *old_xdg = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
  setenv("OPTIC_MACHINE", path, 1);
  OT_EXPECT_OK(optic_machine_host(&got));
  OT_CHECK(got.peak_flops == m.peak_flops);
  setenv("OPTIC_MACHINE", "/nonexistent/optic/machine.json", 1);
  OT_EXPECT_STATUS(optic_machine_host(&got), OPTIC_ERR_NOT_FOUND);
  unsetenv("OPTIC_MACHINE");
  snprintf(xdg, sizeof xdg, "%s/xdg", tmp_dir());
  setenv("XDG_CONFIG_HOME", xdg, 1);
  char def[600];
  OT_EXPECT_OK(optic_machine_default_path(def, sizeof def));
  OT_CHECK(strstr(def, "/xdg/optic/machine.json") != NULL, "%s", def);
  OT_EXPECT_OK(optic_machine_host(&got)); /* no file: defaults */
  OT_CHECK(strcmp(got.name, "host-default") == 0 && strstr(got.source, "calibrate") != NULL);
  m.cores = 3;
  OT_EXPECT_OK(optic_machine_save(&m, def));
  OT_EXPECT_OK(optic_machine_host(&got));
  OT_CHECK(got.cores == 3);
  write_file(def, "{broken");
  OT_EXPECT_STATUS(optic_machine_host(&got), OPTIC_ERR_CORRUPT); /* never silently ignored */
  char tiny[8];
  OT_EXPECT_STATUS(optic_machine_default_path(tiny, sizeof tiny), OPTIC_ERR_OVERFLOW);
  if (old_env) setenv("OPTIC_MACHINE", old_env, 1);
  if (old_xdg) setenv("XDG_CONFIG_HOME", old_xdg, 1);
  else unsetenv("XDG_CONFIG_HOME");
  free(old_env), free(old_xdg);
}

/* Format 2: the figures beyond the roofline. A file without them (format 1)
 * loads with 0 and resolves to the documented defaults; with them they
 * round-trip exactly; a newer format and out-of-range figures are rejected;
 * for_threads scales sync_ns; the GEMM bound uses gemm_efficiency. */
static void beyond_roofline(void) {
  char path[512], text[1024];
  snprintf(path, sizeof path, "%s/v1.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gemm_efficiency == 0 && m.hash_bandwidth == 0 && m.disk_write_bandwidth == 0 && m.sync_ns == 0);
  optic_machine_resolve(&m, &r);
  OT_CHECK(r.gemm_efficiency == 1 && r.hash_bandwidth == 1e9 && r.disk_write_bandwidth == 1e9 && r.sync_ns == 100,
           "defaults: %g %g %g %g", r.gemm_efficiency, r.hash_bandwidth, r.disk_write_bandwidth, r.sync_ns);
  OT_CHECK(r.peak_flops == m.peak_flops && r.core_dram_bandwidth == 3e10 / 4);
  m.op_overhead_ns = 400; /* sync default: 2 ops' dispatch when that is above 100 ns */
  optic_machine_resolve(&m, &r);
  OT_CHECK(r.sync_ns == 800, "%g", r.sync_ns);
  m.cores = 1;
  optic_machine_resolve(&m, &r);
  OT_CHECK(r.sync_ns == 0, "one core: no barrier, %g", r.sync_ns);
  /* with the figures: exact round trip, and the format key is written */
  snprintf(text, sizeof text,
           "%s,\"format\":2,\"gemm_efficiency\":0.625,\"hash_bandwidth\":1.5e9,\"disk_write_bandwidth\":7e8,"
           "\"sync_ns\":300}",
           head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gemm_efficiency == 0.625 && m.hash_bandwidth == 1.5e9 && m.disk_write_bandwidth == 7e8 &&
           m.sync_ns == 300);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  FILE *f = fopen(path, "rb");
  OT_CHECK(f != NULL);
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
  char fmt_key[32];
  snprintf(fmt_key, sizeof fmt_key, "\"format\": %d", OPTIC_MACHINE_FORMAT);
  OT_CHECK(strstr(text, fmt_key) != NULL, "%s", text);
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-2 figures");
  /* sync_ns per thread count: (t - 1) / (cores - 1) of the all-core figure */
  const double want[] = {0, 100, 200, 300};
  for (int32_t k = 1; k <= 4; k++) {
    OT_EXPECT_OK(optic_machine_for_threads(&m, k, &t));
    OT_CHECK(near(t.sync_ns + 1, want[k - 1] + 1) && t.hash_bandwidth == 1.5e9 && t.gemm_efficiency == 0.625,
             "threads %d: sync %g", (int)k, t.sync_ns);
  }
  /* the GEMM bound: flops at 0.625 x peak; memory-bound costs unchanged */
  optic_cost c = {1e6, 0, 1000};
  OT_CHECK(near(optic_machine_estimate_gemm_ns(&m, &c), 1e6 / (1e11 * 0.625) * 1e9 + 40), "%g",
           optic_machine_estimate_gemm_ns(&m, &c));
  c = (optic_cost){10, 0, 3e9};
  OT_CHECK(optic_machine_estimate_gemm_ns(&m, &c) == optic_machine_estimate_ns(&m, &c));
  /* an op class bound: at least bytes / class bandwidth + the op overhead */
  c = (optic_cost){0, 0, 4000};
  OT_CHECK(optic_machine_estimate_class_ns(&m, &c, 1e9) == 4000 + 40, "%g",
           optic_machine_estimate_class_ns(&m, &c, 1e9));
  OT_CHECK(optic_machine_estimate_class_ns(&m, &c, 0) == optic_machine_estimate_ns(&m, &c));
  OT_CHECK(optic_machine_estimate_class_ns(&m, &c, 1e15) == optic_machine_estimate_ns(&m, &c));
  m.loop_bandwidth = 8e9;
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.loop_bandwidth == 4e9, "class bandwidths scale per core: %g", t.loop_bandwidth);
  m.loop_bandwidth = 0;
  /* a newer format, a bad format value, an efficiency above 1, negative figures */
  static const struct {
    const char *tail, *message;
  } bad[] = {
      {",\"format\":99}", "format 99 is newer than this optic reads"},
      {",\"format\":\"2\"}", "\"format\" must be a positive integer"},
      {",\"format\":0}", "\"format\" must be a positive integer"},
      {",\"gemm_efficiency\":1.5}", "gemm_efficiency is 1.5"},
      {",\"hash_bandwidth\":-1}", "hash_bandwidth is -1"},
      {",\"sync_ns\":1e999}", "sync_ns is inf"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text, "%s%s", head, bad[i].tail);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), bad[i].message) != NULL && strstr(optic_last_error(), path) != NULL, "%s: %s",
             bad[i].tail, optic_last_error());
  }
  /* presets: host-default assumes 0.8 of the FMA peak, TPUs the MXU peak */
  OT_EXPECT_OK(optic_machine_preset("host-default", &m));
  OT_CHECK(m.gemm_efficiency == 0.8, "%g", m.gemm_efficiency);
  OT_EXPECT_OK(optic_machine_preset("tpu-v4", &m));
  OT_CHECK(m.gemm_efficiency == 1, "%g", m.gemm_efficiency);
}

/* Format 3: the op classes. A format-2 file (none of them) loads with 0
 * (not known); a format-3 file round-trips every figure exactly; a negative
 * figure is rejected naming it; for_threads keeps the per-core ns figures and
 * scales the reduce_multi_bandwidth like the other class bandwidths. */
static void op_classes_format3(void) {
  char path[512], text[1400];
  snprintf(path, sizeof path, "%s/v3.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":2,\"gemm_efficiency\":0.5,\"loop_bandwidth\":2e10}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gemm_efficiency == 0.5 && m.loop_bandwidth == 2e10);
  OT_CHECK(m.gather_element_ns == 0 && m.scatter_element_ns == 0 && m.sort_compare_ns == 0 && m.topk_compare_ns == 0 &&
               m.bf16_element_ns == 0 && m.f16_element_ns == 0 && m.reduce_multi_bandwidth == 0 &&
               m.while_iteration_ns == 0 && m.reduce_step_ns == 0,
           "a format-2 file has no op classes");
  snprintf(text, sizeof text,
           "%s,\"format\":3,\"gather_element_ns\":1.25,\"scatter_element_ns\":2.5,\"sort_compare_ns\":3.75,"
           "\"topk_compare_ns\":4.5,\"bf16_element_ns\":0.5,\"f16_element_ns\":0.75,\"reduce_multi_bandwidth\":8e9,"
           "\"while_iteration_ns\":12,\"reduce_step_ns\":60}",
           head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gather_element_ns == 1.25 && m.scatter_element_ns == 2.5 && m.sort_compare_ns == 3.75 &&
           m.topk_compare_ns == 4.5 && m.bf16_element_ns == 0.5 && m.f16_element_ns == 0.75 &&
           m.reduce_multi_bandwidth == 8e9 && m.while_iteration_ns == 12 && m.reduce_step_ns == 60);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-3 figures");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.gather_element_ns == 1.25 && t.sort_compare_ns == 3.75 && t.f16_element_ns == 0.75 &&
               t.reduce_step_ns == 60 && t.reduce_multi_bandwidth == 4e9,
           "per-core ns kept, bandwidth scaled: %g %g", t.gather_element_ns, t.reduce_multi_bandwidth);
  static const char *const negative[] = {"gather_element_ns", "topk_compare_ns", "f16_element_ns", "reduce_step_ns"};
  for (size_t i = 0; i < sizeof negative / sizeof negative[0]; i++) {
    snprintf(text, sizeof text, "%s,\"format\":3,\"%s\":-2}", head, negative[i]);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), negative[i]) != NULL, "%s", optic_last_error());
  }
  /* the runtime's split rule */
  OT_CHECK(!optic_split_op(1, 0, 1e9, 1e9, 100), "one thread never splits");
  OT_CHECK(optic_split_op(2, 0, 10, 201, 100) && !optic_split_op(2, 0, 1e9, 200, 100), "by cost: saves t1/2 > barrier");
  OT_CHECK(optic_split_op(2, 5, 5, 0, 1e9) && !optic_split_op(2, 5, 4, 1e9, 0), "by size: touched >= threshold");
}

/* Format 4: the convolution strategies and the dot figures. A format-3 file
 * (none of them) loads with 0 (not known: the GEMM figure); a format-4 file
 * round-trips every figure exactly under its documented key; an efficiency
 * above 1 or a negative figure is rejected naming it; for_threads keeps them
 * (fractions of peak_flops, per-core ns); a format-5 file is refused. */
static void conv_classes_format4(void) {
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v4.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":3,\"gemm_efficiency\":0.5,\"gather_element_ns\":2}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gemm_efficiency == 0.5 && m.gather_element_ns == 2 && m.dot_call_ns == 0 && m.dot_efficiency == 0 &&
           m.dot_element_ns == 0 && m.dot_pack_element_ns == 0 && m.loop_leaf_element_ns == 0 &&
           m.loop_leaf_run_ns == 0);
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++)
    OT_CHECK(m.conv_efficiency[c] == 0 && m.conv_element_ns[c] == 0, "a format-3 file has no class %d", c);
  /* every class under its own key */
  int len = snprintf(text, sizeof text,
                     "%s,\"format\":4,\"dot_call_ns\":35,\"dot_efficiency\":0.75,\"dot_element_ns\":0.5,"
                     "\"dot_pack_element_ns\":1.5,\"loop_leaf_element_ns\":0.125,\"loop_leaf_run_ns\":2.5",
                     head);
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++)
    len += snprintf(text + len, sizeof text - (size_t)len, ",\"conv_%s_efficiency\":%g,\"conv_%s_element_ns\":%g",
                    optic_conv_class_name(c), 0.125 * (c + 1), optic_conv_class_name(c), 0.25 + c);
  snprintf(text + len, sizeof text - (size_t)len, "}");
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.dot_call_ns == 35 && m.dot_efficiency == 0.75 && m.dot_element_ns == 0.5 && m.dot_pack_element_ns == 1.5 &&
           m.loop_leaf_element_ns == 0.125 && m.loop_leaf_run_ns == 2.5);
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++)
    OT_CHECK(m.conv_efficiency[c] == 0.125 * (c + 1) && m.conv_element_ns[c] == 0.25 + c, "class %s: %g %g",
             optic_conv_class_name(c), m.conv_efficiency[c], m.conv_element_ns[c]);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-4 figures");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.conv_efficiency[3] == 0.5 && t.conv_element_ns[3] == 3.25 && t.dot_call_ns == 35, "kept: %g %g %g",
           t.conv_efficiency[3], t.conv_element_ns[3], t.dot_call_ns);
  OT_CHECK(optic_conv_class_name(OPTIC_CONV_CLASS_COUNT) == NULL && optic_conv_class_name(-1) == NULL);
  static const struct {
    const char *tail, *message;
  } bad[] = {
      {",\"format\":99}", "format 99 is newer than this optic reads"},
      {",\"conv_direct_efficiency\":1.5}", "conv_direct_efficiency is 1.5"},
      {",\"conv_grouped_rows_element_ns\":-1}", "conv_grouped_rows_element_ns is -1"},
      {",\"conv_gemm_efficiency\":-0.5}", "conv_gemm_efficiency is -0.5"},
      {",\"dot_call_ns\":-3}", "dot_call_ns is -3"},
      {",\"dot_efficiency\":2}", "dot_efficiency is 2"},
      {",\"dot_pack_element_ns\":-1}", "dot_pack_element_ns is -1"},
      {",\"loop_leaf_run_ns\":-1}", "loop_leaf_run_ns is -1"},
      {",\"conv_im2col_km_efficiency\":\"x\"}", "expected a number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text, "%s%s", head, bad[i].tail);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), bad[i].message) != NULL && strstr(optic_last_error(), path) != NULL, "%s: %s",
             bad[i].tail, optic_last_error());
  }
}

static double figure(const optic_machine *m, size_t offset) {
  double v;
  memcpy(&v, (const char *)m + offset, sizeof v);
  return v;
}

/* Format 5: the runtime's own paths. A format-4 file loads with them 0
 * (the format-4 rules); every one round-trips under its documented key; a
 * negative one is rejected naming it; for_threads keeps them (per-core ns). */
static void paths_format5(void);

/* Format 6: cpu_clock_ns. A format-5 file loads with it 0 (not known); a
 * format-6 file round-trips it; a negative one is rejected naming it;
 * for_threads keeps it (per read, per thread); a format-7 file is refused. */
static void clock_format6(void) {
  char path[512], text[1024];
  snprintf(path, sizeof path, "%s/v6.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":5,\"gather_run_ns\":3}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gather_run_ns == 3 && m.cpu_clock_ns == 0, "format 5: %g %g", m.gather_run_ns, m.cpu_clock_ns);
  snprintf(text, sizeof text, "%s,\"format\":6,\"cpu_clock_ns\":1250.5}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.cpu_clock_ns == 1250.5, "%g", m.cpu_clock_ns);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of cpu_clock_ns");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.cpu_clock_ns == 1250.5, "kept per thread: %g", t.cpu_clock_ns);
  snprintf(text, sizeof text, "%s,\"format\":6,\"cpu_clock_ns\":-1}", head);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "cpu_clock_ns") != NULL, "%s", optic_last_error());
  snprintf(text, sizeof text, "%s,\"format\":%d}", head, OPTIC_MACHINE_FORMAT + 1);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
}

/* Format 8: the small-op fixed costs. Files of formats 6 and 7 load with
 * them 0 (not known: the format-6 rule); a format-8 file round-trips each
 * under its documented key; a negative one is rejected naming it;
 * for_threads keeps them (one core's ns); a newer file is refused. */
static void small_ops_format8(void) {
#define F8(NAME) \
  { #NAME, offsetof(optic_machine, NAME) }
  static const struct {
    const char *key;
    size_t offset;
  } figs[] = {F8(reduce_cols_call_ns),       F8(reduce_gather_output_ns),        F8(reduce_row_ns),
              F8(batch_norm_run_ns),         F8(batch_norm_training_element_ns), F8(batch_norm_inference_element_ns),
              F8(batch_norm_grad_element_ns)};
#undef F8
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v8.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  for (int fmt = 6; fmt <= 7; fmt++) {
    snprintf(text, sizeof text, "%s,\"format\":%d,\"cpu_clock_ns\":7}", head, fmt);
    write_file(path, text);
    OT_EXPECT_OK(optic_machine_load(path, &m));
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
      OT_CHECK(figure(&m, figs[i].offset) == 0, "format %d: %s = %g", fmt, figs[i].key, figure(&m, figs[i].offset));
    OT_CHECK(m.cpu_clock_ns == 7, "format %d keeps its own figures", fmt);
  }
  int len = snprintf(text, sizeof text, "%s,\"format\":8", head);
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
    len += snprintf(text + len, sizeof text - (size_t)len, ",\"%s\":%g", figs[i].key, 1.25 + (double)i);
  snprintf(text + len, sizeof text - (size_t)len, "}");
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
    OT_CHECK(figure(&m, figs[i].offset) == 1.25 + (double)i, "%s: %g", figs[i].key, figure(&m, figs[i].offset));
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-8 figures");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
    OT_CHECK(figure(&t, figs[i].offset) == figure(&m, figs[i].offset), "kept per core: %s", figs[i].key);
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    snprintf(text, sizeof text, "%s,\"format\":8,\"%s\":-1}", head, figs[i].key);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), figs[i].key) != NULL, "%s", optic_last_error());
  }
  snprintf(text, sizeof text, "%s,\"format\":%d}", head, OPTIC_MACHINE_FORMAT + 1);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
}

/* A figure of the machine file by its documented key. */
typedef struct figure_key {
  const char *key;
  size_t offset;
} figure_key;
#define FIGURE_KEY(NAME) \
  { #NAME, offsetof(optic_machine, NAME) }

/* The optional figures figs[0..n) that format fmt added: files of the two
 * formats before it load with them 0 (not known); a format-fmt file
 * round-trips each under its key; a negative, infinite or non-number one is
 * rejected naming it; for_threads keeps them (not scaled by threads); a
 * newer file is refused. */
static void optional_figures(int fmt, const figure_key *figs, size_t n) {
  static const char *const bad_values[] = {"-1", "-0.001", "1e999", "\"0.4\"", "null"};
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v%d.json", tmp_dir(), fmt);
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  for (int old = fmt - 2; old < fmt; old++) {
    snprintf(text, sizeof text, "%s,\"format\":%d,\"reduce_row_ns\":5}", head, old);
    write_file(path, text);
    OT_EXPECT_OK(optic_machine_load(path, &m));
    for (size_t i = 0; i < n; i++)
      OT_CHECK(figure(&m, figs[i].offset) == 0, "format %d: %s = %g", old, figs[i].key, figure(&m, figs[i].offset));
    OT_CHECK(m.reduce_row_ns == 5, "format %d keeps its own figures", old);
  }
  int len = snprintf(text, sizeof text, "%s,\"format\":%d", head, fmt);
  for (size_t i = 0; i < n; i++)
    len += snprintf(text + len, sizeof text - (size_t)len, ",\"%s\":%g", figs[i].key, 0.125 + 0.25 * (double)i);
  snprintf(text + len, sizeof text - (size_t)len, "}");
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  for (size_t i = 0; i < n; i++)
    OT_CHECK(figure(&m, figs[i].offset) == 0.125 + 0.25 * (double)i, "%s: %g", figs[i].key, figure(&m, figs[i].offset));
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-%d figures", fmt);
  for (int threads = 1; threads <= 2; threads++) {
    OT_EXPECT_OK(optic_machine_for_threads(&m, threads, &t));
    for (size_t i = 0; i < n; i++)
      OT_CHECK(figure(&t, figs[i].offset) == figure(&m, figs[i].offset), "kept on %d threads: %s", threads,
               figs[i].key);
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t b = 0; b < sizeof bad_values / sizeof bad_values[0]; b++) {
      snprintf(text, sizeof text, "%s,\"format\":%d,\"%s\":%s}", head, fmt, figs[i].key, bad_values[b]);
      write_file(path, text);
      OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
      OT_CHECK(strstr(optic_last_error(), figs[i].key) != NULL, "%s = %s: %s", figs[i].key, bad_values[b],
               optic_last_error());
    }
  }
  snprintf(text, sizeof text, "%s,\"format\":%d}", head, OPTIC_MACHINE_FORMAT + 1);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
}

/* Format 9: the optimizer steps' ns per element (one core's), one key per kind. */
static void optim_steps_format9(void) {
  static const figure_key figs[] = {FIGURE_KEY(optim_sgd_element_ns),     FIGURE_KEY(optim_adam_element_ns),
                                    FIGURE_KEY(optim_adamw_element_ns),   FIGURE_KEY(optim_rmsprop_element_ns),
                                    FIGURE_KEY(optim_adagrad_element_ns), FIGURE_KEY(optim_lamb_element_ns),
                                    FIGURE_KEY(optim_lion_element_ns)};
  optional_figures(9, figs, sizeof figs / sizeof figs[0]);
}

/* Format 10: the MPI link between two ranks of the host. */
static void mpi_link_format10(void) {
  static const figure_key figs[] = {FIGURE_KEY(mpi_link_latency_ns), FIGURE_KEY(mpi_link_bandwidth)};
  optional_figures(10, figs, sizeof figs / sizeof figs[0]);
}

/* Format 12: a loop fusion's parts and an optimizer step's fixed cost. The
 * flop's and the transcendental's ns and the step's are one core's (kept
 * per thread count); the streams' bandwidth is all cores' and scales with
 * the threads like the other class bandwidths. */
static void loop_parts_format12(void) {
  static const figure_key figs[] = {FIGURE_KEY(loop_flop_ns), FIGURE_KEY(loop_transcendental_ns),
                                    FIGURE_KEY(optim_step_ns)};
  optional_figures(12, figs, sizeof figs / sizeof figs[0]);
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v12s.json", tmp_dir());
  optic_machine m, t;
  snprintf(text, sizeof text, "%s,\"format\":11,\"loop_bandwidth\":4e9}", MACHINE_HEAD);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.loop_stream_bandwidth == 0 && m.loop_bandwidth == 4e9, "format 11: %g %g", m.loop_stream_bandwidth,
           m.loop_bandwidth);
  snprintf(text, sizeof text, "%s,\"format\":12,\"loop_stream_bandwidth\":8e10,\"loop_flop_ns\":0.25}", MACHINE_HEAD);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.loop_stream_bandwidth == 8e10, "%g", m.loop_stream_bandwidth);
  OT_EXPECT_OK(optic_machine_for_threads(&m, 1, &t));
  OT_CHECK(t.loop_stream_bandwidth == 2e10 && t.loop_flop_ns == 0.25, "1 of 4 cores: %g B/s, %g ns",
           t.loop_stream_bandwidth, t.loop_flop_ns);
  snprintf(text, sizeof text, "%s,\"format\":12,\"loop_stream_bandwidth\":-5}", MACHINE_HEAD);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
  OT_CHECK(strstr(optic_last_error(), "loop_stream_bandwidth") != NULL, "%s", optic_last_error());
}

/* Format 13: the pad's and reduce-window's figures, one core's ns (kept per
 * thread count). */
static void window_ops_format13(void) {
  static const figure_key figs[] = {FIGURE_KEY(pad_element_ns), FIGURE_KEY(pad_run_ns),
                                    FIGURE_KEY(reduce_window_element_ns), FIGURE_KEY(reduce_window_run_ns)};
  optional_figures(13, figs, sizeof figs / sizeof figs[0]);
}

/* Format 14: the runtime's and the compiler's costs beyond any op, one
 * core's ns (kept per thread count). */
static void runtime_costs_format14(void) {
  static const figure_key figs[] = {FIGURE_KEY(clock_read_ns),
                                    FIGURE_KEY(profile_record_ns),
                                    FIGURE_KEY(page_touch_ns),
                                    FIGURE_KEY(compile_instruction_ns),
                                    FIGURE_KEY(compile_instruction_10k_ns),
                                    FIGURE_KEY(compile_instruction_100k_ns),
                                    FIGURE_KEY(conv_call_ns)};
  optional_figures(14, figs, sizeof figs / sizeof figs[0]);
}

/* optic_machine_estimate_compile_ns: instructions x the per-instruction
 * figure, linear in log10(instructions) between 1000, 10000 and 100000,
 * held outside; a missing larger size takes the one below; none: 0. */
static void compile_time_estimate(void) {
  optic_machine m;
  OT_EXPECT_OK(optic_machine_preset("host-default", &m));
  m.compile_instruction_ns = m.compile_instruction_10k_ns = m.compile_instruction_100k_ns = 0;
  OT_CHECK(optic_machine_estimate_compile_ns(&m, 5000) == 0, "not known: 0");
  OT_CHECK(optic_machine_estimate_compile_ns(NULL, 5000) == 0, "NULL machine: 0");
  m.compile_instruction_ns = 1000, m.compile_instruction_10k_ns = 2000, m.compile_instruction_100k_ns = 4000;
  static const struct {
    double n, per;
  } want[] = {{0, 0},
              {1, 1000},
              {500, 1000},
              {1000, 1000},
              {3162.2776601683795, 1500},
              {10000, 2000},
              {31622.776601683792, 3000},
              {100000, 4000},
              {1e6, 4000}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const double got = optic_machine_estimate_compile_ns(&m, want[i].n), exp = want[i].n * want[i].per;
    OT_CHECK(fabs(got - exp) <= 1e-9 * exp, "%g instructions: %g ns, want %g", want[i].n, got, exp);
  }
  m.compile_instruction_100k_ns = 0;
  OT_CHECK(optic_machine_estimate_compile_ns(&m, 50000) == 50000 * 2000.0, "no 100k figure: the 10k one");
  m.compile_instruction_10k_ns = 0;
  OT_CHECK(optic_machine_estimate_compile_ns(&m, 50000) == 50000 * 1000.0, "only the 1k figure");
}

/* Writes text to path and loads it into *m, which must succeed. */
static void load_text(const char *path, const char *text, optic_machine *m) {
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, m));
}

/* Format 13: the last-level cache as a third tier and the wide column
 * kernel's class. Older files load without them (bytes beyond cache_bytes at
 * dram_bandwidth); a format-13 file's figures round-trip (the class scales
 * with the threads as the other classes); bytes in (cache_bytes, llc_bytes]
 * take llc_bandwidth (on t threads min(llc_bandwidth, t x
 * core_llc_bandwidth), llc_bytes kept whole), beyond it dram_bandwidth, and a
 * tier no faster than DRAM is not used; half-given or inconsistent figures
 * are refused naming them. */
static void llc_tier_format13(void) {
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v13.json", tmp_dir());
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":12,\"reduce_row_ns\":5}", MACHINE_HEAD);
  load_text(path, text, &m);
  OT_CHECK(m.llc_bytes == 0 && m.llc_bandwidth == 0 && m.core_llc_bandwidth == 0 && m.reduce_cols_stream_bandwidth == 0,
           "format 12: no tier, no wide-column class");
  optic_cost mid = {0, 0, 4e6}; /* 4 MB: beyond cache_bytes 0 */
  OT_CHECK(fabs(optic_machine_estimate_ns(&m, &mid) - (4e6 / 3e10 * 1e9 + 40)) < 1e-6, "no tier: DRAM");
  snprintf(text, sizeof text,
           "%s,\"format\":13,\"llc_bytes\":33554432,\"llc_bandwidth\":9e10,\"core_llc_bandwidth\":4e10,"
           "\"reduce_cols_stream_bandwidth\":6e10}",
           MACHINE_HEAD);
  load_text(path, text, &m);
  OT_CHECK(m.llc_bytes == 33554432 && m.llc_bandwidth == 9e10 && m.core_llc_bandwidth == 4e10 &&
           m.reduce_cols_stream_bandwidth == 6e10);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-13 figures");
  const struct { double bytes, bandwidth; } tiers[] = {{1, 5e10}, {4e6, 9e10}, {33554432, 9e10}, {33554433, 3e10}};
  for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
    optic_cost c = {0, 0, tiers[i].bytes};
    double want = tiers[i].bytes / tiers[i].bandwidth * 1e9 + 40;
    m.cache_bytes = 1;
    OT_CHECK(fabs(optic_machine_estimate_ns(&m, &c) - want) < 1e-6 * want, "%g bytes: %g ns, want %g", tiers[i].bytes,
             optic_machine_estimate_ns(&m, &c), want);
  }
  m.cache_bytes = 0;
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.llc_bandwidth == 8e10 && t.llc_bytes == 33554432 && t.core_llc_bandwidth == 4e10 &&
               t.reduce_cols_stream_bandwidth == 3e10,
           "2 of 4: %g %g", t.llc_bandwidth, t.reduce_cols_stream_bandwidth);
  OT_EXPECT_OK(optic_machine_for_threads(&m, 1, &t));
  OT_CHECK(t.llc_bandwidth == 4e10, "1 of 4: %g", t.llc_bandwidth);
  m.core_llc_bandwidth = 5e9; /* one core's LLC figure under its DRAM figure (3e10 / 4): no tier */
  OT_EXPECT_OK(optic_machine_for_threads(&m, 1, &t));
  OT_CHECK(fabs(optic_machine_estimate_ns(&t, &mid) - (4e6 / 7.5e9 * 1e9 + 40)) < 1e-6, "slower tier unused: %g",
           optic_machine_estimate_ns(&t, &mid));
  const struct {
    double llc, core;
    const char *want;
  } bad[] = {{0, 4e10, "llc_bandwidth is 0"}, {9e10, 0, "core_llc_bandwidth 0"}, {4e10, 9e10, "exceeds llc_bandwidth"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    m.llc_bandwidth = bad[i].llc, m.core_llc_bandwidth = bad[i].core;
    OT_EXPECT_STATUS(optic_machine_validate(&m), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(strstr(optic_last_error(), bad[i].want) != NULL, "%s", optic_last_error());
  }
  m.llc_bytes = 0; /* no tier: the bandwidths are not looked at */
  OT_EXPECT_OK(optic_machine_validate(&m));
  static const char *const keys[] = {"llc_bytes", "reduce_cols_stream_bandwidth"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(text, sizeof text, "%s,\"format\":13,\"%s\":-1}", MACHINE_HEAD, keys[i]);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    char want[64];
    snprintf(want, sizeof want, "%s is -1", keys[i]);
    OT_CHECK(strstr(optic_last_error(), want) != NULL, "%s", optic_last_error());
  }
}

/* A grid whose entry at indices (i, j, l) is distinct per point, in (0, 1]
 * and increasing along every axis: a multiple of 1/256, so no compiler's
 * contraction of the arithmetic (clang folds constant calls with one
 * rounding) can change the value a test compares against. */
static double grid_value(int i, int j, int l) { return (double)(OPTIC_DOT_GRID_INDEX(i, j, l) + 1) / 256.0; }

static void fill_grid(optic_machine *m) {
  for (int i = 0; i < OPTIC_DOT_GRID_AXIS; i++)
    for (int j = 0; j < OPTIC_DOT_GRID_AXIS; j++)
      for (int l = 0; l < OPTIC_DOT_GRID_AXIS; l++)
        m->dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(i, j, l)] = grid_value(i, j, l);
}

/* "dot_grid_efficiency": [...] with entry `bad` replaced by bad_text (NULL: none) and n entries. */
static int grid_text(char *buf, size_t size, const char *head, int n, int bad, const char *bad_text) {
  int len = snprintf(buf, size, "%s,\"format\":7,\"dot_grid_efficiency\":[", head);
  for (int x = 0; x < n; x++) {
    int i = x / 36 % 6, j = x / 6 % 6, l = x % 6;
    if (x == bad && bad_text) len += snprintf(buf + len, size - (size_t)len, "%s%s", x ? "," : "", bad_text);
    else len += snprintf(buf + len, size - (size_t)len, "%s%.17g", x ? "," : "", grid_value(i, j, l));
  }
  return len + snprintf(buf + len, size - (size_t)len, "]");
}

/* Format 7: the dot efficiency grid. A format-6 file loads without one (the
 * single dot_efficiency); a format-7 file round-trips every entry exactly
 * under its index (M-major); a wrong length, a value outside (0, 1], a
 * partial grid or other axis sizes are refused naming the problem; for_threads
 * keeps it (fractions of one core's peak). */
static void dot_grid_format7(void) {
  char path[512];
  static char text[16384];
  snprintf(path, sizeof path, "%s/v7.json", tmp_dir());
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":6,\"dot_efficiency\":0.5,\"cpu_clock_ns\":3}", MACHINE_HEAD);
  write_file(path, text);
  int32_t format = 0;
  OT_EXPECT_OK(optic_machine_load_format(path, &m, &format));
  OT_CHECK(format == 6 && m.dot_efficiency == 0.5 && !optic_machine_has_dot_grid(&m), "format %d", (int)format);
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) OT_CHECK(m.dot_grid_efficiency[i] == 0, "entry %d", i);
  int len = grid_text(text, sizeof text, MACHINE_HEAD, OPTIC_DOT_GRID_POINTS, -1, NULL);
  snprintf(text + len, sizeof text - (size_t)len, ",\"dot_grid_sizes\":[4,16,64,256,1024,4096]}");
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load_format(path, &m, &format));
  OT_CHECK(format == 7 && optic_machine_has_dot_grid(&m));
  OT_CHECK(m.dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(1, 2, 3)] == grid_value(1, 2, 3) &&
               m.dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(5, 0, 4)] == grid_value(5, 0, 4),
           "M-major order: %g", m.dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(1, 2, 3)]);
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load_format(path, &r, &format));
  OT_CHECK(format == OPTIC_MACHINE_FORMAT && memcmp(&r, &m, sizeof m) == 0, "round trip of the grid");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(memcmp(t.dot_grid_efficiency, m.dot_grid_efficiency, sizeof m.dot_grid_efficiency) == 0, "kept");
  static const struct {
    int n, bad;
    const char *value, *tail, *message;
  } bad[] = {
      {OPTIC_DOT_GRID_POINTS - 1, -1, NULL, "}", "must be an array of 216 numbers"},
      {OPTIC_DOT_GRID_POINTS, 7, "1.5", "}", "dot_grid_efficiency[7] (M 4 N 16 K 16) is 1.5"},
      {OPTIC_DOT_GRID_POINTS, 215, "-0.25", "}", "dot_grid_efficiency[215] (M 4096 N 4096 K 4096) is -0.25"},
      {OPTIC_DOT_GRID_POINTS, 40, "0", "}", "dot_grid_efficiency[40] (M 16 N 4 K 1024) is 0"},
      {OPTIC_DOT_GRID_POINTS, 3, "\"x\"", "}", "expected a number"},
      {OPTIC_DOT_GRID_POINTS, -1, NULL, ",\"dot_grid_sizes\":[4,16,64,256,1024,2048]}", "\"dot_grid_sizes\" must be"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    len = grid_text(text, sizeof text, MACHINE_HEAD, bad[i].n, bad[i].bad, bad[i].value);
    snprintf(text + len, sizeof text - (size_t)len, "%s", bad[i].tail);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    OT_CHECK(strstr(optic_last_error(), bad[i].message) != NULL && strstr(optic_last_error(), path) != NULL, "%zu: %s",
             i, optic_last_error());
  }
  snprintf(text, sizeof text, "%s,\"format\":7,\"dot_grid_efficiency\":3}", MACHINE_HEAD);
  write_file(path, text);
  OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
}

static optic_machine grid_machine(void) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "grid");
  m.peak_flops = 2e11, m.peak_transcendentals = 1e9, m.dram_bandwidth = 1e10, m.cache_bandwidth = 4e10;
  m.cores = 2, m.dot_efficiency = 0.5, m.dot_element_ns = 0.25, m.dot_call_ns = 100, m.dot_pack_element_ns = 2;
  fill_grid(&m);
  return m;
}

/* The grid's reading: exact at every grid point; between two points along
 * each axis (the others on the grid or between) it moves monotonically from
 * one to the other, at the log-midpoint their mean; beyond 4096 the edge;
 * below 4 the edge scaled by size / 4; 0 without a grid. */
static void dot_grid_interpolation(void) {
  optic_machine m = grid_machine();
  OT_EXPECT_OK(optic_machine_validate(&m));
  for (int i = 0; i < OPTIC_DOT_GRID_AXIS; i++)
    for (int j = 0; j < OPTIC_DOT_GRID_AXIS; j++)
      for (int l = 0; l < OPTIC_DOT_GRID_AXIS; l++) {
        double e = optic_machine_dot_grid_efficiency(&m, (double)OPTIC_DOT_GRID_SIZE(i), (double)OPTIC_DOT_GRID_SIZE(j),
                                                     (double)OPTIC_DOT_GRID_SIZE(l));
        OT_CHECK(e == grid_value(i, j, l), "at (%d %d %d): %.17g vs %.17g", i, j, l, e, grid_value(i, j, l));
      }
  /* a non-separable grid: entries that fall, then rise, along M */
  m.dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(2, 3, 1)] = 0.9,
                                                   m.dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(3, 3, 1)] = 0.1;
  for (int axis = 0; axis < 3; axis++) {
    for (int lo = 0; lo + 1 < OPTIC_DOT_GRID_AXIS; lo++) {
      double at[3] = {64, 256, 16};
      at[axis] = (double)OPTIC_DOT_GRID_SIZE(lo);
      double a = optic_machine_dot_grid_efficiency(&m, at[0], at[1], at[2]), prev = a;
      at[axis] = (double)OPTIC_DOT_GRID_SIZE(lo + 1);
      double b = optic_machine_dot_grid_efficiency(&m, at[0], at[1], at[2]);
      OT_CHECK(a != b, "axis %d from %d: the two points differ", axis, lo);
      for (int step = 1; step <= 64; step++) {
        at[axis] = (double)OPTIC_DOT_GRID_SIZE(lo) * pow(4.0, step / 64.0);
        double e = optic_machine_dot_grid_efficiency(&m, at[0], at[1], at[2]);
        OT_CHECK((e - prev) * (b - a) >= -1e-15 && fmin(a, b) - 1e-15 <= e && e <= fmax(a, b) + 1e-15,
                 "axis %d from %d: not monotone at step %d (%g after %g, from %g to %g)", axis, lo, step, e, prev, a,
                 b);
        if (step == 32) OT_CHECK(fabs(e - 0.5 * (a + b)) < 1e-12, "axis %d from %d: log-midpoint %g", axis, lo, e);
        prev = e;
      }
      OT_CHECK(fabs(prev - b) < 1e-12, "axis %d from %d: reaches the upper point", axis, lo);
    }
  }
  OT_CHECK(fabs(optic_machine_dot_grid_efficiency(&m, 128, 256, 16) - 0.5) < 1e-12, "between 0.9 and 0.1: %g",
           optic_machine_dot_grid_efficiency(&m, 128, 256, 16));
  double edge = optic_machine_dot_grid_efficiency(&m, 4096, 4096, 4096);
  OT_CHECK(optic_machine_dot_grid_efficiency(&m, 1e6, 5e4, 8192) == edge, "clamped above 4096");
  double small = optic_machine_dot_grid_efficiency(&m, 4, 64, 4);
  OT_CHECK(fabs(optic_machine_dot_grid_efficiency(&m, 2, 64, 1) - small / 8) < 1e-15, "below 4: scaled by size / 4");
  OT_CHECK(optic_machine_dot_grid_efficiency(&m, 0, 64, 4) == 0 &&
           optic_machine_dot_grid_efficiency(NULL, 4, 4, 4) == 0);
  memset(m.dot_grid_efficiency, 0, sizeof m.dot_grid_efficiency);
  OT_CHECK(!optic_machine_has_dot_grid(&m) && optic_machine_dot_grid_efficiency(&m, 64, 64, 64) == 0, "no grid");
}

/* The dot estimate on the grid, recomputed here from its definition: the
 * GEMM path takes the grid's efficiency against one core's peak, the pack
 * term, no element or call terms, over the threads; the GEMV path (M or N
 * 1) and a machine without a grid keep the single figure and its terms. */
static void dot_grid_estimate(void) {
  optic_machine m = grid_machine();
  double core_peak = m.peak_flops / m.cores;
  static const double shapes[][5] = {
      {1, 64, 256, 16, 0}, {8, 128, 128, 64, 0}, {3, 3136, 64, 576, 500}, {1, 9, 16, 4096, 0}, {2, 5000, 2, 3, 7}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    double b = shapes[s][0], M = shapes[s][1], N = shapes[s][2], K = shapes[s][3], packed = shapes[s][4];
    double eff = optic_machine_dot_grid_efficiency(&m, M, N, K);
    double want = (2 * b * M * N * K / (eff * core_peak) * 1e9 + packed * 2) / (b * M >= 2 ? 2 : 1);
    double got = optic_machine_estimate_dot_ns(&m, b, M, N, K, packed, b * M);
    OT_CHECK(eff > 0 && fabs(got - want) <= 1e-9 * want, "shape %zu: %.17g vs %.17g", s, got, want);
  }
  double gemv = optic_machine_estimate_dot_ns(&m, 1, 1, 512, 256, 0, 1);
  double single = 2.0 * 512 * 256 / (0.5 * core_peak) * 1e9 + (256 + 256 * 512 + 512) * 0.25 + 100;
  OT_CHECK(fabs(gemv - single) <= 1e-9 * single, "GEMV keeps the single figure: %g vs %g", gemv, single);
  optic_machine none = m;
  memset(none.dot_grid_efficiency, 0, sizeof none.dot_grid_efficiency);
  double plain = optic_machine_estimate_dot_ns(&none, 1, 64, 64, 64, 0, 1);
  double want = 2.0 * 64 * 64 * 64 / (0.5 * core_peak) * 1e9 + 3 * 64 * 64 * 0.25 + 100;
  OT_CHECK(fabs(plain - want) <= 1e-9 * want, "no grid: the single figure: %g vs %g", plain, want);
  none.dot_efficiency = 0;
  OT_CHECK(optic_machine_estimate_dot_ns(&none, 1, 64, 64, 64, 0, 1) == 0, "neither: 0");
}

static void paths_format5(void) {
#define F5(NAME) \
  { #NAME, offsetof(optic_machine, NAME) }
  static const struct {
    const char *key;
    size_t offset;
  } figs[] = {F5(gather_run_ns),
              F5(topk_select_element_ns),
              F5(convert_from_bf16_ns),
              F5(convert_from_f16_ns),
              F5(convert_to_bf16_ns),
              F5(convert_to_f16_ns),
              F5(reduce_fold_bf16_ns),
              F5(reduce_fold_f16_ns),
              F5(reduce_fold_bf16_minmax_ns),
              F5(reduce_fold_f16_minmax_ns)};
#undef F5
  enum { N = sizeof figs / sizeof figs[0] };
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/v5.json", tmp_dir());
  const char *head = MACHINE_HEAD;
  optic_machine m, r, t;
  snprintf(text, sizeof text, "%s,\"format\":4,\"gather_element_ns\":2,\"loop_leaf_run_ns\":2.5}", head);
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  OT_CHECK(m.gather_element_ns == 2 && m.loop_leaf_run_ns == 2.5);
  for (int i = 0; i < N; i++)
    OT_CHECK(figure(&m, figs[i].offset) == 0, "a format-4 file has no %s: %g", figs[i].key, figure(&m, figs[i].offset));
  int len = snprintf(text, sizeof text, "%s,\"format\":5", head);
  for (int i = 0; i < N; i++)
    len += snprintf(text + len, sizeof text - (size_t)len, ",\"%s\":%g", figs[i].key, 0.5 + i);
  snprintf(text + len, sizeof text - (size_t)len, "}");
  write_file(path, text);
  OT_EXPECT_OK(optic_machine_load(path, &m));
  for (int i = 0; i < N; i++)
    OT_CHECK(figure(&m, figs[i].offset) == 0.5 + i, "%s: %g", figs[i].key, figure(&m, figs[i].offset));
  OT_EXPECT_OK(optic_machine_save(&m, path));
  OT_EXPECT_OK(optic_machine_load(path, &r));
  OT_CHECK(memcmp(&r, &m, sizeof m) == 0, "round trip of the format-5 figures");
  OT_EXPECT_OK(optic_machine_for_threads(&m, 2, &t));
  OT_CHECK(t.gather_run_ns == 0.5 && t.reduce_fold_f16_minmax_ns == 0.5 + N - 1, "kept per core: %g %g",
           t.gather_run_ns, t.reduce_fold_f16_minmax_ns);
  for (int i = 0; i < N; i++) {
    snprintf(text, sizeof text, "%s,\"format\":5,\"%s\":-1}", head, figs[i].key);
    write_file(path, text);
    OT_EXPECT_STATUS(optic_machine_load(path, &m), OPTIC_ERR_CORRUPT);
    char want[96];
    snprintf(want, sizeof want, "%s is -1", figs[i].key);
    OT_CHECK(strstr(optic_last_error(), want) != NULL, "%s", optic_last_error());
  }
}

static const ot_case cases[] = {
    {"paths_format5", paths_format5},
    {"clock_format6", clock_format6},
    {"small_ops_format8", small_ops_format8},
    {"optim_steps_format9", optim_steps_format9},
    {"mpi_link_format10", mpi_link_format10},
    {"loop_parts_format12", loop_parts_format12},
    {"llc_tier_format13", llc_tier_format13},
    {"window_ops_format13", window_ops_format13},
    {"runtime_costs_format14", runtime_costs_format14},
    {"compile_time_estimate", compile_time_estimate},
    {"dot_grid_format7", dot_grid_format7},
    {"dot_grid_interpolation", dot_grid_interpolation},
    {"dot_grid_estimate", dot_grid_estimate},
    {"conv_classes_format4", conv_classes_format4},
    {"op_classes_format3", op_classes_format3},
    {"beyond_roofline", beyond_roofline},
    {"presets_valid", presets_valid},
    {"round_trip", round_trip},
    {"corrupt_files", corrupt_files},
    {"validate_rejects", validate_rejects},
    {"estimate_arithmetic", estimate_arithmetic},
    {"host_lookup", host_lookup},
    {"core_dram_in_file", core_dram_in_file},
    {"for_threads", for_threads},
    {"malformed_files", malformed_files},
};
OT_MAIN(cases)
