/* Autodiff over every module in tests/data/hlo and tests/data/hlo/realworld
 * (real XLA/JAX programs): each array output of the entry's root,
 * differentiated (seeded) w.r.t. every floating-point parameter, either
 * builds a computation that optic_graph_optimize then optimizes and the
 * cost model costs, or fails with UNSUPPORTED naming a custom-call or a
 * loop whose trip count is data; any other outcome (a rule building an
 * ill-typed instruction, another op refused, a crash) fails.
 * Prints what each module gave. */
#include <dirent.h>
#include <math.h>

#include "tests/graph/autodiff_util.h"

static void data_dir(const char *sub, char *path, size_t size) {
  snprintf(path, size, "%s/data/hlo/%s", OPTIC_TEST_SOURCE_DIR, sub);
}

static int built, unsupported;

/* Differentiates output `out` of module `m` (a fresh copy per output). */
static void one_output(const char *file, const optic_module_t *orig, int32_t k) {
  optic_module_t *m;
  OT_EXPECT_OK(optic_module_clone(orig, &m));
  optic_comp_id entry = optic_module_entry(m);
  optic_node_id root = optic_computation_root(m, entry), out = root;
  if (optic_node_opcode(m, root) == OPTIC_OP_TUPLE) out = optic_node_operand(m, root, k);
  int32_t wrt[64], n = 0, np = optic_computation_parameter_count(m, entry);
  for (int32_t i = 0; i < np && n < 64; i++) {
    optic_node_id p = optic_computation_parameter(m, entry, i);
    if (p != OPTIC_NO_NODE && !optic_type_is_tuple(optic_node_type(m, p)) &&
        optic_dtype_is_float(optic_node_type(m, p)->dtype)) {
      wrt[n++] = i;
    }
  }
  const optic_type *t = optic_node_type(m, out);
  if (optic_type_is_tuple(t) || !optic_dtype_is_float(t->dtype)) {
    optic_module_destroy(m);
    return;
  }
  optic_grad_options o = optic_grad_options_default();
  o.output = out;
  o.seeded = true;
  optic_comp_id g;
  optic_status st = optic_autodiff_value_and_grad(m, entry, wrt, n, &o, &g);
  if (st == OPTIC_ERR_UNSUPPORTED) {
    unsupported++;
    printf("  %s output %d: %s\n", file, (int)k, optic_last_error());
    OT_CHECK(strstr(optic_last_error(), "autodiff: cannot differentiate") != NULL, "%s", optic_last_error());
    /* Only ops that have no rule by design may stop a module: custom-calls
     * (opaque) and loops whose trip count is data. */
    OT_CHECK(strstr(optic_last_error(), "cannot differentiate custom-call") != NULL ||
                 strstr(optic_last_error(), "cannot differentiate while") != NULL,
             "%s output %d refused for another reason: %s", file, (int)k, optic_last_error());
  } else {
    OT_CHECK(st == OPTIC_OK, "%s output %d: %s: %s", file, (int)k, optic_status_name(st), optic_last_error());
  }
  if (st == OPTIC_OK) {
    built++;
    optic_cost before = {0}, after = {0};
    OT_EXPECT_OK(optic_computation_cost(m, g, &before));
    OT_EXPECT_OK(optic_module_set_entry(m, g));
    OT_EXPECT_OK(optic_graph_optimize(m, NULL, NULL));
    OT_EXPECT_OK(optic_computation_cost(m, g, &after));
    printf("  %s output %d: d/d %d parameters, %.4g flops (%.4g after optimize)\n", file, (int)k, (int)n, before.flops,
           after.flops);
    OT_CHECK(isfinite(after.flops), "%s: flops %g", file, after.flops); /* custom-calls count -1, as XLA */
  }
  optic_module_destroy(m);
}

static void sweep(const char *sub) {
  char dir[1024];
  data_dir(sub, dir, sizeof dir);
  DIR *d = opendir(dir);
  OT_CHECK(d != NULL, "cannot open %s", dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    optic_module_t *m = NULL;
    if (optic_module_from_hlo_file(path, &m) != OPTIC_OK) continue; /* modules optic refuses to load */
    optic_comp_id entry = optic_module_entry(m);
    optic_node_id root = optic_computation_root(m, entry);
    int32_t outs = optic_node_opcode(m, root) == OPTIC_OP_TUPLE ? optic_node_operand_count(m, root) : 1;
    for (int32_t k = 0; k < outs && k < 8; k++) one_output(e->d_name, m, k);
    optic_module_destroy(m);
  }
  closedir(d);
}

static void test_every_module(void) {
  sweep("");
  sweep("realworld");
  printf("  %d outputs differentiated, %d refused with UNSUPPORTED\n", built, unsupported);
  /* 71 of the 88 outputs today; the 17 refused: custom-calls and one data-dependent loop. */
  OT_CHECK(built >= 71, "only %d outputs differentiated (71 expected)", built);
}

static const ot_case cases[] = {
    {"every_module", test_every_module},
};
OT_MAIN(cases)
