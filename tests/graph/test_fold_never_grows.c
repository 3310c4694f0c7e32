/* Optimizing never grows the program: on every reference module under
 * tests/data/hlo (subdirectories included) that loads, the optimized module
 * prints no longer and holds no more constant bytes than without folding
 * (with fusion, which adds fused computations' text by design) and than
 * the unoptimized one (without fusion); a broadcast of a
 * scalar stays a broadcast (one_matmul_train_step used to print a 65,710
 * character constant, p * broadcast(0.5) on f32[256,1024] used to gain a
 * 1 MiB constant and a worse time estimate). */
#include <dirent.h>
#include <sys/stat.h>

#include <optic/optic.h>

#include "tests/harness.h"

static optic_machine machine;

static void tests_dir(char *buf, size_t size, const char *rel) {
  snprintf(buf, size, "%s/%s", OPTIC_TEST_SOURCE_DIR, rel);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  *len = text ? fread(text, 1, (size_t)n, f) : 0;
  if (text) text[*len] = 0;
  fclose(f);
  return text;
}

/* What one compile produced: printed module length, bytes of the optimized
 * module's array constants (more than one element, in any computation: a
 * one-element constant is an operand written in place, which fusion copies
 * into every fused computation that reads it), the entry plan's constant
 * bytes (every constant of the entry, what `optic compile` prints), the
 * entry's estimated time, the longest printed line. */
typedef struct figures {
  size_t text, constants, entry_constants, longest_line;
  double est_ns;
} figures;

/* Optimizes a copy of m with o (none: not at all), compiles it without
 * further passes and measures it. */
static bool compile_figures(const optic_module_t *m, const optic_optimize_options *o, figures *out) {
  optic_module_t *opt = NULL;
  if (optic_module_clone(m, &opt) != OPTIC_OK) return false;
  if (o != NULL && optic_graph_optimize(opt, o, NULL) != OPTIC_OK) {
    optic_module_destroy(opt);
    return false;
  }
  optic_compile_options co = optic_compile_options_default();
  co.level = OPTIC_OPT_NONE, co.machine = &machine, co.fusion = 0;
  optic_program_t *p = NULL;
  optic_status cst = optic_compile(opt, &co, &p);
  optic_module_destroy(opt);
  if (cst != OPTIC_OK) return false;
  optic_program_summary s;
  char *text = NULL;
  optic_module_t *copy = NULL;
  bool ok = optic_program_summary_get(p, &s) == OPTIC_OK &&
            optic_module_to_hlo_text(optic_program_module(p), &text) == OPTIC_OK &&
            optic_module_clone(optic_program_module(p), &copy) == OPTIC_OK;
  if (ok) {
    *out = (figures){.text = strlen(text), .entry_constants = s.memory.constant_bytes, .est_ns = s.est_ns};
    for (const char *line = text; *line;) {
      const char *end = strchr(line, '\n');
      size_t n = end ? (size_t)(end - line) : strlen(line);
      if (n > out->longest_line) out->longest_line = n;
      line += n + (end != NULL);
    }
    for (int32_t c = 0; c < optic_module_computation_count(copy); c++) {
      int32_t n = 0;
      const optic_node_id *ids = optic_computation_instructions(copy, c, &n);
      for (int32_t i = 0; i < n; i++) {
        size_t bytes = 0, elements = 0;
        if (optic_node_opcode(copy, ids[i]) != OPTIC_OP_CONSTANT) continue;
        optic_node_constant_data(copy, ids[i], &bytes);
        optic_shape_elements(&optic_node_type(copy, ids[i])->shape, &elements);
        if (elements > 1) out->constants += bytes;
      }
    }
  }
  optic_string_free(text);
  optic_module_destroy(copy);
  optic_program_destroy(p);
  return ok;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int checked_modules, skipped_modules;

static void check_module(const char *path) {
  size_t len = 0;
  char *text = read_file(path, &len);
  optic_module_t *m = NULL;
  if (text == NULL || optic_module_from_hlo_text(text, len, &m) != OPTIC_OK) {
    skipped_modules++; /* a module this build cannot load yet (dtype, opcode) */
    free(text);
    return;
  }
  free(text);
  /* none; full; full without fold (what folding adds to a fused program);
   * full without fusion (fusion adds fused computations' text by design);
   * neither fold nor fusion. Printed text is compared with fusion off on both
   * sides: a folded scalar constant is printed again inside every fusion that
   * takes it (as XLA prints fusions), which is not growth of the program. */
  optic_optimize_options full = optic_optimize_options_default(), nofold = full, nofuse = full;
  nofold.passes[OPTIC_PASS_FOLD] = OPTIC_PASS_DISABLE;
  nofuse.passes[OPTIC_PASS_FUSION] = OPTIC_PASS_DISABLE;
  optic_optimize_options neither = nofuse;
  neither.passes[OPTIC_PASS_FOLD] = OPTIC_PASS_DISABLE;
  figures f_none, f_full, f_nofold, f_nofuse, f_neither;
  bool ok = compile_figures(m, NULL, &f_none) && compile_figures(m, &full, &f_full) &&
            compile_figures(m, &nofold, &f_nofold) && compile_figures(m, &nofuse, &f_nofuse) &&
            compile_figures(m, &neither, &f_neither);
  OT_CHECK(ok, "%s: compile failed: %s", path, optic_last_error());
  if (ok) {
    checked_modules++;
    const figures *opt[3] = {&f_full, &f_nofuse, &f_nofuse}, *base[3] = {&f_nofold, &f_none, &f_neither};
    const char *what[3] = {"full vs full without fold", "full without fusion vs none",
                           "without fusion: fold vs no fold"};
    for (int i = 0; i < 3; i++) {
      OT_CHECK(i == 0 || opt[i]->text <= base[i]->text, "%s: %s: prints %zu characters, not more than %zu", path,
               what[i], opt[i]->text, base[i]->text);
      OT_CHECK(opt[i]->constants <= base[i]->constants && opt[i]->entry_constants <= base[i]->entry_constants,
               "%s: %s: %zu constant bytes (entry plan %zu), not more than %zu (%zu)", path, what[i], opt[i]->constants,
               opt[i]->entry_constants, base[i]->constants, base[i]->entry_constants);
    }
    OT_CHECK(f_full.entry_constants <= f_none.entry_constants, "%s: full: entry constant_bytes %zu, none %zu", path,
             f_full.entry_constants, f_none.entry_constants);
  }
  optic_module_destroy(m);
}

static void walk(const char *dir, int depth) {
  DIR *d = opendir(dir);
  OT_CHECK(d != NULL || depth > 0, "cannot open %s", dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth < 4) walk(path, depth + 1);
    else if (S_ISREG(st.st_mode) && ends_with(e->d_name, ".hlo")) check_module(path);
  }
  closedir(d);
}

static void reference_modules_do_not_grow(void) {
  char dir[1024];
  tests_dir(dir, sizeof dir, "data/hlo");
  walk(dir, 0);
  printf("     %d modules checked, %d that do not load skipped\n", checked_modules, skipped_modules);
  OT_CHECK(checked_modules >= 13, "only %d reference modules loaded", checked_modules);
}

static void train_step_keeps_its_broadcasts(void) {
  char path[1024];
  tests_dir(path, sizeof path, "data/hlo/one_matmul_train_step.hlo");
  size_t len = 0;
  char *text = read_file(path, &len);
  optic_module_t *m = NULL;
  OT_CHECK(text != NULL, "cannot read %s", path);
  if (text) OT_EXPECT_OK(optic_module_from_hlo_text(text, len, &m));
  free(text);
  figures none, full;
  optic_optimize_options o = optic_optimize_options_default();
  if (m && compile_figures(m, NULL, &none) && compile_figures(m, &o, &full)) {
    /* --opt none's longest line is an instruction with its attributes
     * (94 characters); a folded f32[32,128] splat printed 65,710 */
    OT_CHECK(full.longest_line <= 2 * none.longest_line, "longest line %zu, --opt none %zu", full.longest_line,
             none.longest_line);
    OT_CHECK(full.entry_constants <= none.entry_constants, "entry constant bytes %zu, --opt none %zu",
             full.entry_constants, none.entry_constants);
  } else {
    OT_CHECK(false, "compile failed: %s", optic_last_error());
  }
  optic_module_destroy(m);
}

static void scaled_parameter_keeps_a_scalar(void) {
  static const char hlo[] =
      "HloModule scale\n"
      "ENTRY main {\n"
      "  p = f32[256,1024] parameter(0)\n"
      "  half = f32[] constant(0.5)\n"
      "  b = f32[256,1024] broadcast(half), dimensions={}\n"
      "  ROOT y = f32[256,1024] multiply(p, b)\n"
      "}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(hlo, strlen(hlo), &m));
  figures none, full;
  optic_optimize_options o = optic_optimize_options_default();
  if (m && compile_figures(m, NULL, &none) && compile_figures(m, &o, &full)) {
    OT_CHECK(full.constants == 0 && full.entry_constants <= none.entry_constants,
             "array constant bytes %zu, entry plan %zu (none: %zu)", full.constants, full.entry_constants,
             none.entry_constants);
    OT_CHECK(full.est_ns <= none.est_ns, "estimate %.1f ns, --opt none %.1f ns", full.est_ns, none.est_ns);
  } else {
    OT_CHECK(false, "compile failed: %s", optic_last_error());
  }
  optic_module_destroy(m);
}

static void setup(void) {
  if (optic_machine_preset("host-default", &machine) != OPTIC_OK) exit(2);
}

static void run_reference(void) { setup(), reference_modules_do_not_grow(); }
static void run_train_step(void) { setup(), train_step_keeps_its_broadcasts(); }
static void run_scaled(void) { setup(), scaled_parameter_keeps_a_scalar(); }

static const ot_case cases[] = {
    {"reference_modules_do_not_grow", run_reference},
    {"train_step_keeps_its_broadcasts", run_train_step},
    {"scaled_parameter_keeps_a_scalar", run_scaled},
};
OT_MAIN(cases)
