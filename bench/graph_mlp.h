/* The deep MLP chain of the compile-time benchmark (bench/graph_compile.c)
 * and of the compile-time test (tests/graph/test_compile.c): x[4,8], then per
 * layer a weight [8,8] and a bias [8] parameter, dot, bias broadcast, add and
 * relu as maximum with one shared broadcast zero (6 instructions a layer).
 * Header-only so both can build exactly the same module. */
#ifndef OPTIC_BENCH_GRAPH_MLP_H
#define OPTIC_BENCH_GRAPH_MLP_H

#include <optic/optic.h>

enum { GRAPH_MLP_BATCH = 4, GRAPH_MLP_WIDTH = 8 };

/* A chain with at least n instructions in its entry; NULL on a builder error. */
static inline optic_module_t *graph_mlp_build(int64_t n, int64_t *instructions) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  if (optic_module_create("mlp", &m) != OPTIC_OK || optic_module_add_computation(m, "main", &c) != OPTIC_OK) {
    optic_module_destroy(m);
    return NULL;
  }
  optic_shape act = {.rank = 2, .dims = {GRAPH_MLP_BATCH, GRAPH_MLP_WIDTH}};
  optic_shape wsh = {.rank = 2, .dims = {GRAPH_MLP_WIDTH, GRAPH_MLP_WIDTH}};
  optic_shape bsh = {.rank = 1, .dims = {GRAPH_MLP_WIDTH}}, scalar = {.rank = 0};
  optic_type ta = optic_type_array(OPTIC_F32, &act), tw = optic_type_array(OPTIC_F32, &wsh);
  optic_type tb = optic_type_array(OPTIC_F32, &bsh);
  optic_dot_dims dd = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  const int64_t bias_dims[] = {1};
  float zero = 0.0f;
  optic_node_id x, z, zeros;
  int32_t param = 0;
  bool ok = optic_graph_parameter(m, c, param++, &ta, "x", &x) == OPTIC_OK &&
            optic_graph_constant(m, c, OPTIC_F32, &scalar, &zero, sizeof zero, "zero", &z) == OPTIC_OK &&
            optic_graph_broadcast(m, c, z, &act, NULL, 0, "zeros", &zeros) == OPTIC_OK;
  int64_t count = 3;
  while (ok && count < n) {
    optic_node_id w, b, d, bb, s, r = OPTIC_NO_NODE;
    ok = optic_graph_parameter(m, c, param++, &tw, NULL, &w) == OPTIC_OK &&
         optic_graph_parameter(m, c, param++, &tb, NULL, &b) == OPTIC_OK &&
         optic_graph_dot(m, c, x, w, &dd, NULL, &d) == OPTIC_OK &&
         optic_graph_broadcast(m, c, b, &act, bias_dims, 1, NULL, &bb) == OPTIC_OK &&
         optic_graph_binary(m, c, OPTIC_OP_ADD, d, bb, NULL, &s) == OPTIC_OK &&
         optic_graph_binary(m, c, OPTIC_OP_MAXIMUM, s, zeros, NULL, &r) == OPTIC_OK;
    x = r;
    count += 6;
  }
  if (!ok || optic_computation_set_root(m, c, x) != OPTIC_OK) {
    optic_module_destroy(m);
    return NULL;
  }
  *instructions = count;
  return m;
}

#endif
