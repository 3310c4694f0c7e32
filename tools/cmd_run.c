/* `optic run FILE.hlo [--input NAME_OR_INDEX=FILE.npy]... [--random-inputs SEED]
 * [--output FILE.npy | --output-dir DIR] [--json] [--profile trace.json]
 * [--repeat N] [--threads N] [--engine runtime|evaluate]`: executes an HLO module's entry computation on .npy or
 * generated inputs and writes the outputs as .npy files, JSON or a summary.
 * Exit 0 ok, 1 parse/runtime error, 2 usage (including a command line that
 * does not fit the module). docs/hlo-text.md "optic run" is the contract. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <optic/optic.h>

#include "tools/cli.h"
#include "tools/run_engine.h"
#include "tools/run_values.h"

#define MAX_INPUTS 256

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic run FILE.hlo [--input NAME_OR_INDEX=FILE.npy]... [--random-inputs SEED]\n"
          "                 [--output FILE.npy | --output-dir DIR] [--json] [--profile trace.json]\n"
          "                 [--repeat N] [--threads N] [--engine runtime|evaluate]\n"
          "       optic run --help\n\n"
          "Executes the entry computation of an XLA HLO text module (FILE '-' reads stdin).\n"
          "  --input P=F.npy     value of entry parameter P (its name, or its number 0, 1, ...)\n"
          "  --random-inputs S   every parameter without --input gets deterministic values from\n"
          "                      seed S (floats uniform in [-1,1), s32 in [-8,8], u8, pred 0/1)\n"
          "  --output F.npy      write the result (a single array) to F.npy\n"
          "  --output-dir D      write each output (tuples flattened in order) to D/output_<i>.npy\n"
          "  --json              print {\"outputs\":[{\"shape\":[...],\"dtype\":\"f32\",\"data\":[...]}]}\n"
          "                      (row-major; NaN and infinities as \"nan\", \"inf\", \"-inf\")\n"
          "  --profile T.json    write a Chrome trace of the compile and the runs\n"
          "  --repeat N          run N times (default 1); the first (cold) run is reported apart\n"
          "                      from the median of the other N-1 (steady state)\n"
          "  --threads N         threads per run (runtime engine; default all cores); the\n"
          "                      estimate is compiled for N threads\n"
          "  --engine E          runtime (default: optic_compile + optic_program_run) or evaluate\n"
          "                      (the reference evaluator); overrides $OPTIC_RUN_ENGINE\n"
          "Without --json a summary of each output and the timing is printed, with the\n"
          "compiler's estimate beside the measured time (runtime engine).\n"
          "Exit codes: 0 ok, 1 parse or runtime error (message on stderr), 2 usage error.\n");
}

typedef struct run_args {
  const char *path;
  const char *input_key[MAX_INPUTS];
  const char *input_file[MAX_INPUTS];
  int ninputs;
  bool random;
  uint64_t seed;
  const char *output, *output_dir, *profile;
  bool json;
  int64_t repeat;
  int32_t threads;    /* 0: the engine's default */
  const char *engine; /* NULL: $OPTIC_RUN_ENGINE, else the runtime */
} run_args;

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
  fputs("optic run: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  usage(stderr);
  return OPTIC_EXIT_USAGE;
}

/* Decimal, no sign, no junk, fits in uint64. */
static bool parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

/* Returns -1 to go on, else the exit code. Accepts "--opt VALUE" and "--opt=VALUE". */
static int parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  static const char *const with_value[] = {"--input",   "--random-inputs", "--output",  "--output-dir",
                                           "--profile", "--repeat",        "--threads", "--engine"};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return OPTIC_EXIT_OK;
    }
    if (strcmp(arg, "--json") == 0) {
      a->json = true;
      continue;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (a->path) return usage_error("more than one file ('%s' and '%s')", a->path, arg);
      a->path = arg;
      continue;
    }
    size_t opt_len = strcspn(arg, "=");
    int which = -1;
    for (int k = 0; k < (int)(sizeof with_value / sizeof with_value[0]); k++) {
      if (strlen(with_value[k]) == opt_len && strncmp(arg, with_value[k], opt_len) == 0) which = k;
    }
    if (which < 0) return usage_error("unknown option '%s'%s", arg, "");
    if (arg[opt_len] == '=') {
      value = arg + opt_len + 1;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return usage_error("option '%s' needs a value%s", arg, "");
    }
    switch (which) {
      case 0: {
        const char *eq = strchr(value, '=');
        if (eq == NULL || eq == value || eq[1] == '\0') {
          return usage_error("--input '%s': expected NAME_OR_INDEX=FILE.npy%s", value, "");
        }
        if (a->ninputs == MAX_INPUTS) return usage_error("more than 256 --input options%s%s", "", "");
        a->input_key[a->ninputs] = value;
        a->input_file[a->ninputs++] = eq + 1;
        break;
      }
      case 1:
        if (!parse_u64(value, &a->seed))
          return usage_error("--random-inputs '%s': expected an unsigned integer%s", value, "");
        a->random = true;
        break;
      case 2: a->output = value; break;
      case 3: a->output_dir = value; break;
      case 4: a->profile = value; break;
      case 6: {
        uint64_t n;
        if (!parse_u64(value, &n) || n < 1 || n > 4096) {
          return usage_error("--threads '%s': expected an integer from 1 to 4096%s", value, "");
        }
        a->threads = (int32_t)n;
        break;
      }
      case 7:
        if (*value == '\0') return usage_error("--engine needs a name (runtime or evaluate)%s%s", "", "");
        a->engine = value;
        break;
      default: {
        uint64_t n;
        if (!parse_u64(value, &n) || n < 1 || n > 1000000) {
          return usage_error("--repeat '%s': expected an integer from 1 to 1000000%s", value, "");
        }
        a->repeat = (int64_t)n;
      }
    }
  }
  if (a->path == NULL) return usage_error("no HLO file given%s%s", "", "");
  if (a->output && a->output_dir) return usage_error("give --output or --output-dir, not both%s%s", "", "");
  return -1;
}

static int runtime_error(const char *what) {
  optic_status st = optic_last_error_status();
  if (what) {
    fprintf(stderr, "optic run: %s: %s (%s)\n", what, optic_last_error(), optic_status_name(st));
  } else {
    fprintf(stderr, "optic run: %s (%s)\n", optic_last_error(), optic_status_name(st));
  }
  return OPTIC_EXIT_ERROR;
}

/* Which parameter a --input key names: a number, or an instruction name
 * (a leading '%' is ignored). -1 if none. */
static int32_t find_parameter(const optic_module_t *m, optic_comp_id entry, int32_t nparams, const char *key,
                              size_t key_len) {
  uint64_t index;
  char buf[256];
  if (key_len >= sizeof buf) return -1;
  memcpy(buf, key, key_len);
  buf[key_len] = '\0';
  if (parse_u64(buf, &index)) return index < (uint64_t)nparams ? (int32_t)index : -1;
  const char *name = buf[0] == '%' ? buf + 1 : buf;
  for (int32_t i = 0; i < nparams; i++) {
    if (strcmp(optic_node_name(m, optic_computation_parameter(m, entry, i)), name) == 0) return i;
  }
  return -1;
}

static void list_parameters(const optic_module_t *m, optic_comp_id entry, int32_t nparams) {
  fprintf(stderr, "  the entry computation '%s' has %d parameter%s:\n", optic_computation_name(m, entry), (int)nparams,
          nparams == 1 ? "" : "s");
  for (int32_t i = 0; i < nparams; i++) {
    optic_node_id p = optic_computation_parameter(m, entry, i);
    char type[256];
    optic_type_format(optic_node_type(m, p), type, sizeof type);
    fprintf(stderr, "    %d  %s  %s\n", (int)i, optic_node_name(m, p), type);
  }
}

/* Builds every argument; returns -1 on success, else the exit code. */
static int make_arguments(const run_args *a, const optic_module_t *m, optic_comp_id entry, int32_t nparams,
                          optic_literal_t **args) {
  const char **file_of = calloc((size_t)nparams + 1, sizeof *file_of);
  if (file_of == NULL) return OPTIC_EXIT_ERROR;
  int rc = -1;
  for (int k = 0; k < a->ninputs && rc < 0; k++) {
    const char *key = a->input_key[k];
    size_t key_len = (size_t)(a->input_file[k] - 1 - key);
    int32_t i = find_parameter(m, entry, nparams, key, key_len);
    if (i < 0) {
      fprintf(stderr, "optic run: --input %.*s: no such parameter\n", (int)key_len, key);
      list_parameters(m, entry, nparams);
      rc = OPTIC_EXIT_USAGE;
    } else if (file_of[i]) {
      fprintf(stderr, "optic run: parameter %d '%s' is given twice (%s and %s)\n", (int)i,
              optic_node_name(m, optic_computation_parameter(m, entry, i)), file_of[i], a->input_file[k]);
      rc = OPTIC_EXIT_USAGE;
    } else {
      file_of[i] = a->input_file[k];
    }
  }
  for (int32_t i = 0; i < nparams && rc < 0; i++) {
    optic_node_id p = optic_computation_parameter(m, entry, i);
    const optic_type *type = optic_node_type(m, p);
    if (file_of[i]) {
      if (run_npy_literal(file_of[i], type, optic_node_name(m, p), &args[i]) != OPTIC_OK) rc = OPTIC_EXIT_ERROR;
    } else if (a->random) {
      if (run_random_literal(type, a->seed, i, &args[i]) != OPTIC_OK) rc = runtime_error("random input");
    } else {
      fprintf(stderr, "optic run: parameter %d '%s' has no value: give --input %s=FILE.npy or --random-inputs SEED\n",
              (int)i, optic_node_name(m, p), optic_node_name(m, p));
      list_parameters(m, entry, nparams);
      rc = OPTIC_EXIT_USAGE;
    }
  }
  free(file_of);
  return rc;
}

static int write_outputs(const run_args *a, const optic_literal_t *const *leaves, int32_t n) {
  if (a->output) {
    if (n != 1) {
      fprintf(stderr, "optic run: the result has %d outputs; --output writes one array, use --output-dir DIR\n",
              (int)n);
      return OPTIC_EXIT_USAGE;
    }
    if (run_write_npy(leaves[0], a->output) != OPTIC_OK) return runtime_error(NULL);
  }
  if (a->output_dir) {
    if (mkdir(a->output_dir, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "optic run: %s: cannot create the directory: %s (OPTIC_ERR_IO)\n", a->output_dir,
              strerror(errno));
      return OPTIC_EXIT_ERROR;
    }
    for (int32_t k = 0; k < n; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%d.npy", a->output_dir, (int)k);
      if (run_write_npy(leaves[k], path) != OPTIC_OK) return runtime_error(NULL);
    }
  }
  return -1;
}

/* "850 ns", "12.5 us", "3.125 ms", "2.500 s". */
static void print_time(double ns) {
  if (ns < 1e3) {
    printf("%.0f ns", ns);
  } else if (ns < 1e6) {
    printf("%.1f us", ns / 1e3);
  } else if (ns < 1e9) {
    printf("%.3f ms", ns / 1e6);
  } else {
    printf("%.3f s", ns / 1e9);
  }
}

static int compare_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* The timing lines of the summary: the first run apart (it pays first-touch
 * page faults, cold caches and the pool's first allocations), the median of
 * the others, and the compiler's estimate beside the figure it estimates. */
static void print_timing(const run_engine *engine, void *state, uint64_t prep_ns, uint64_t *times, int64_t repeat) {
  if (engine->threads) printf("threads %d\n", (int)engine->threads(state));
  printf("prepare ");
  print_time((double)prep_ns);
  printf("\nfirst   ");
  print_time((double)times[0]);
  printf(" (cold: the first run after prepare)\n");
  double measured = (double)times[0];
  const char *which = "the cold run";
  if (repeat > 1) {
    qsort(times + 1, (size_t)(repeat - 1), sizeof *times, compare_u64);
    int64_t n = repeat - 1;
    measured = n % 2 ? (double)times[1 + n / 2] : ((double)times[n / 2] + (double)times[1 + n / 2]) / 2;
    which = "steady median";
    printf("time    ");
    print_time(measured);
    printf(" median of %" PRId64 " run%s after the first (min ", n, n == 1 ? "" : "s");
    print_time((double)times[1]);
    printf(", max ");
    print_time((double)times[repeat - 1]);
    printf(")\n");
  } else {
    printf("time    one run only: --repeat N gives the steady-state median of runs 2..N\n");
  }
  if (engine->estimate_ns == NULL) {
    printf("est     none (the %s engine has no cost model; --engine runtime estimates the compiled program)\n",
           engine->name);
    return;
  }
  double est = engine->estimate_ns(state);
  printf("est     ");
  print_time(est);
  printf(", measured ");
  print_time(measured);
  printf(" (%s)", which);
  if (est > 0) {
    double x = measured / est;
    printf(x >= 10 ? ", %.0fx the estimate" : ", %.2gx the estimate", x);
  }
  putchar('\n');
  if (engine->memory) {
    double meas = 0, est_peak = 0;
    engine->memory(state, &meas, &est_peak);
    printf(
        "memory  %.0f B measured (pool peak + inputs, outputs, constants), %.0f B planned (optic_program_run_memory)",
        meas, est_peak);
    if (est_peak > 0) printf(", %.2fx", meas / est_peak);
    putchar('\n');
  }
}

/* long: the command's options, then its steps in order, with one exit path */
int optic_cmd_run(int argc, char **argv) {
  run_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  const char *known = "", *asked = NULL;
  const run_engine *engine = run_engine_select(a.engine, &asked, &known);
  if (engine == NULL) {
    fprintf(stderr, "optic run: %s '%s' names no engine (known: %s)\n", a.engine ? "--engine" : "OPTIC_RUN_ENGINE",
            asked, known);
    return OPTIC_EXIT_USAGE;
  }
  if (a.threads > 0 && engine->threads == NULL) {
    fprintf(stderr, "optic run: --threads applies to the runtime engine; the '%s' engine runs on one thread\n",
            engine->name);
    return OPTIC_EXIT_USAGE;
  }
  if (a.profile && engine->write_profile == NULL) {
    fprintf(stderr,
            "optic run: --profile needs the runtime (optic_compile + optic_program_run); the '%s' engine "
            "cannot profile (OPTIC_ERR_UNSUPPORTED)\n",
            engine->name);
    return OPTIC_EXIT_ERROR;
  }
  optic_module_t *m = NULL;
  if (optic_cli_load_hlo(a.path, &m) != OPTIC_OK) return runtime_error(NULL);
  optic_comp_id entry = optic_module_entry(m);
  int32_t nparams = optic_computation_parameter_count(m, entry);
  optic_literal_t **args = calloc((size_t)nparams + 1, sizeof *args);
  uint64_t *times = calloc((size_t)a.repeat, sizeof *times);
  void *state = NULL;
  optic_literal_t *result = NULL;
  const optic_literal_t **leaves = NULL;
  rc = args && times ? make_arguments(&a, m, entry, nparams, args) : OPTIC_EXIT_ERROR;
  uint64_t prep0 = optic_now_ns();
  const run_engine_options eo = {.profile = a.profile != NULL, .threads = a.threads};
  if (rc < 0 && engine->prepare(m, &eo, &state) != OPTIC_OK) rc = runtime_error("preparing the module");
  uint64_t prep_ns = optic_now_ns() - prep0;
  for (int64_t r = 0; r < a.repeat && rc < 0; r++) { /* the engine may reuse the last result's storage */
    uint64_t t0 = optic_now_ns();
    if (engine->run(state, (const optic_literal_t *const *)args, nparams, &result) != OPTIC_OK) {
      rc = runtime_error(NULL);
    }
    times[r] = optic_now_ns() - t0;
  }
  int32_t n = 0;
  if (rc < 0) {
    n = run_literal_leaves(result, NULL, 0);
    leaves = calloc((size_t)n + 1, sizeof *leaves);
    if (leaves == NULL) rc = OPTIC_EXIT_ERROR;
  }
  if (rc < 0) {
    run_literal_leaves(result, leaves, n);
    rc = write_outputs(&a, leaves, n);
  }
  if (rc < 0 && a.profile && engine->write_profile(state, a.profile) != OPTIC_OK) rc = runtime_error("--profile");
  if (rc < 0 && a.json && !run_print_json(stdout, leaves, n)) rc = OPTIC_EXIT_ERROR;
  if (rc < 0 && !a.json) {
    printf("module  %s (entry %s, %d parameters)\n", optic_module_name(m), optic_computation_name(m, entry),
           (int)nparams);
    printf("engine  %s: %s\n", engine->name, engine->description);
    run_print_summary(stdout, leaves, n);
    print_timing(engine, state, prep_ns, times, a.repeat);
  }
  if (rc < 0 && a.profile && engine->profile_table) {
    /* per-op truth: measured vs estimated per op (stderr under --json) */
    char *table = NULL;
    if (engine->profile_table(state, &table) != OPTIC_OK) {
      rc = runtime_error("--profile");
    } else {
      fprintf(a.json ? stderr : stdout, "profile per op (measured vs estimated, per run):\n%s", table);
    }
    optic_string_free(table);
  }
  if (rc < 0 && fflush(stdout) != 0) {
    fprintf(stderr, "optic run: cannot write the output\n");
    rc = OPTIC_EXIT_ERROR;
  }
  free(leaves);
  optic_literal_destroy(result);
  if (state) engine->destroy(state);
  for (int32_t i = 0; args && i < nparams; i++) optic_literal_destroy(args[i]);
  free(args);
  free(times);
  optic_module_destroy(m);
  return rc < 0 ? OPTIC_EXIT_OK : rc;
}
