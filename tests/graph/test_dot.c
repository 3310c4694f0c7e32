/* Graph dot: shape inference through the kernels' dot rules, errors, HLO
 * text, and XLA's counts (the matmul: f32[10,5] . f32[5,30] = 3000
 * flops and 2000 bytes). */
#include <optic/optic.h>

#include "tests/harness.h"

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t n, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id;
  if (optic_graph_parameter(m, c, n, &t, NULL, &id)) exit(2);
  return id;
}

static void matmul(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("dot", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t a[] = {10, 5}, b[] = {5, 30};
  optic_node_id x = param(m, c, 0, 2, a), w = param(m, c, 1, 2, b), y;
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  OT_EXPECT_OK(optic_graph_dot(m, c, x, w, &d, "y", &y));
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, y, &cost));
  OT_CHECK(cost.flops == 3000 && cost.transcendentals == 0 && cost.bytes_accessed == 2000, "flops %g bytes %g",
           cost.flops, cost.bytes_accessed);
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text,
                          "ROOT y = f32[10,30] dot(parameter.0, parameter.1), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={0}\n"),
           "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

static void batch_and_errors(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("dot", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t a[] = {4, 3, 2}, b[] = {2, 4, 7}, bad[] = {4, 4, 7};
  optic_node_id x = param(m, c, 0, 3, a), w = param(m, c, 1, 3, b), v = param(m, c, 2, 3, bad), y;
  /* batch lhs 0 with rhs 1; contract lhs 2 with rhs 0: out [4, 3, 7] */
  optic_dot_dims d = {.lhs_batch_count = 1,
                      .rhs_batch_count = 1,
                      .lhs_batch = {0},
                      .rhs_batch = {1},
                      .lhs_contracting_count = 1,
                      .rhs_contracting_count = 1,
                      .lhs_contracting = {2},
                      .rhs_contracting = {0}};
  OT_EXPECT_OK(optic_graph_dot(m, c, x, w, &d, "y", &y));
  char buf[64];
  optic_type_format(optic_node_type(m, y), buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[4,3,7]") == 0, "got %s", buf);
  optic_cost cost;
  OT_EXPECT_OK(optic_node_cost(m, y, &cost));
  OT_CHECK(cost.flops == 2.0 * 4 * 3 * 7 * 2, "flops %g", cost.flops);
  optic_node_id z;
  OT_EXPECT_STATUS(optic_graph_dot(m, c, x, v, &d, NULL, &z), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "lhs contracting dim 2 has size 2 but rhs contracting dim 0 has size 4"), "%s",
           optic_last_error());
  optic_dot_dims out_of_range = d;
  out_of_range.lhs_contracting[0] = 3;
  OT_EXPECT_STATUS(optic_graph_dot(m, c, x, w, &out_of_range, NULL, &z), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  char *text = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &text));
  OT_CHECK(text && strstr(text,
                          "dot(parameter.0, parameter.1), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                          "rhs_batch_dims={1}, rhs_contracting_dims={0}\n"),
           "%s", text);
  optic_string_free(text);
  optic_module_destroy(m);
}

/* The reference evaluator runs dot: a batched dot checked against loops. */
static void evaluate(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("dot", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t a[] = {2, 3, 4}, b[] = {2, 4, 5};
  optic_node_id x = param(m, c, 0, 3, a), w = param(m, c, 1, 3, b), y;
  optic_dot_dims d = {.lhs_batch_count = 1,
                      .rhs_batch_count = 1,
                      .lhs_batch = {0},
                      .rhs_batch = {0},
                      .lhs_contracting_count = 1,
                      .rhs_contracting_count = 1,
                      .lhs_contracting = {2},
                      .rhs_contracting = {1}};
  OT_EXPECT_OK(optic_graph_dot(m, c, x, w, &d, "y", &y));
  OT_EXPECT_OK(optic_computation_set_root(m, c, y));
  optic_literal_t *la, *lb, *out = NULL;
  OT_EXPECT_OK(optic_literal_create(optic_node_type(m, x), &la));
  OT_EXPECT_OK(optic_literal_create(optic_node_type(m, w), &lb));
  float *pa = optic_literal_mutable_data(la, NULL), *pb = optic_literal_mutable_data(lb, NULL);
  for (int i = 0; i < 24; i++) pa[i] = (float)(i % 7) - 3;
  for (int i = 0; i < 40; i++) pb[i] = (float)(i % 5) * 0.5f;
  const optic_literal_t *args[] = {la, lb};
  OT_EXPECT_OK(optic_evaluate(m, c, args, 2, NULL, &out));
  const float *py = out ? optic_literal_data(out, NULL) : NULL;
  for (int bi = 0; py && bi < 2; bi++) {
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 5; j++) {
        float want = 0; /* small integers and halves: exact in any order */
        for (int k = 0; k < 4; k++) want += pa[bi * 12 + i * 4 + k] * pb[bi * 20 + k * 5 + j];
        OT_CHECK(py[bi * 15 + i * 5 + j] == want, "y[%d,%d,%d] = %g, want %g", bi, i, j, py[bi * 15 + i * 5 + j], want);
      }
    }
  }
  optic_literal_destroy(la), optic_literal_destroy(lb), optic_literal_destroy(out);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"evaluate", evaluate},
    {"matmul", matmul},
    {"batch_and_errors", batch_and_errors},
};
OT_MAIN(cases)
