/* Every reference module of tests/data/hlo/ (except the parse-only one)
 * imported and run with random inputs through optic_program_run at NONE and
 * FULL on 1 and 2 threads, against the reference evaluator. Tolerance 1e-4
 * absolute and relative: dot and convolution run on OpenBLAS in f32 while
 * the evaluator accumulates in double. Modules above 1e8 flops
 * (conv_isolated_layout_3021.hlo: 1.85 GFLOP, ~35 s in the naive evaluator)
 * are checked against the runtime at NONE on 1 thread instead, unless
 * OPTIC_TEST_SLOW=1; the same convolution at small sizes is checked against
 * the evaluator in test_ops.c. */
#include <dirent.h>

#include "tests/exec/exec_util.h"

static void data_dir(char *path, size_t size) { snprintf(path, size, "%s/data/hlo", OPTIC_TEST_SOURCE_DIR); }

static void every_hlo_file(void) {
  char dir[1024];
  data_dir(dir, sizeof dir);
  DIR *d = opendir(dir);
  OT_CHECK(d != NULL, "cannot open %s", dir);
  if (d == NULL) return;
  int ran = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".hlo") != 0 || strstr(e->d_name, "parse_only")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_file(path, &m));
    if (m == NULL) continue;
    const char *slow = getenv("OPTIC_TEST_SLOW");
    double cap = (slow && *slow == '1') ? 1e300 : 1e8;
    OT_CHECK(ex_check_module_ex(m, 7, 1e-4, 1e-4, cap, e->d_name), "%s", e->d_name);
    printf("  %s\n", e->d_name);
    optic_module_destroy(m);
    ran++;
  }
  closedir(d);
  OT_CHECK(ran >= 12, "only %d files ran", ran);
}

static const ot_case cases[] = {{"every_hlo_file", every_hlo_file}};
OT_MAIN(cases)
