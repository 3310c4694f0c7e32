/* Evaluator, data movement: broadcast mappings, reshape, transpose of rank
 * 4, slice with strides, concatenate (with an empty operand), pad with
 * negative edges and interior padding, reverse, iota; hand-computed. */
#include "tests/graph/evaluate_util.h"

/* main(x) = the node built by `build` from parameter x (dtype dt, dims). */
typedef optic_status (*build_fn)(optic_node_id x, optic_node_id *out);

static bool run_one(build_fn build, optic_dtype dt, int32_t rank, const int64_t *dims, const void *xdata,
                    optic_dtype out_dt, int32_t out_rank, const int64_t *out_dims, const void *want) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, dt, rank, dims), r;
  if (build(x, &r)) ev_die("build");
  ev_root(ev_main, r);
  optic_literal_t *lx = ev_lit(dt, rank, dims, xdata);
  const optic_literal_t *args[] = {lx};
  bool ok = ev_check(ev_main, args, 1, out_dt, out_rank, out_dims, want);
  optic_literal_destroy(lx);
  return ok;
}

static optic_status bcast_mid(optic_node_id x, optic_node_id *out) {
  optic_shape s = {.rank = 3, .dims = {2, 3, 4}};
  int64_t dims[] = {1};
  return optic_graph_broadcast(ev_m, ev_main, x, &s, dims, 1, NULL, out);
}
static optic_status bcast_outer_inner(optic_node_id x, optic_node_id *out) {
  optic_shape s = {.rank = 3, .dims = {2, 4, 3}};
  int64_t dims[] = {0, 2};
  return optic_graph_broadcast(ev_m, ev_main, x, &s, dims, 2, NULL, out);
}
static optic_status bcast_scalar(optic_node_id x, optic_node_id *out) {
  optic_shape s = {.rank = 2, .dims = {2, 2}};
  return optic_graph_broadcast(ev_m, ev_main, x, &s, NULL, 0, NULL, out);
}

static void broadcast(void) {
  int64_t d3[] = {3}, d23[] = {2, 3}, d234[] = {2, 3, 4}, d243[] = {2, 4, 3}, d22[] = {2, 2};
  float x[] = {1, 2, 3};
  float want[24] = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  OT_CHECK(run_one(bcast_mid, OPTIC_F32, 1, d3, x, OPTIC_F32, 3, d234, want));
  /* y[i, j, k] = x[i, k]: operand dims 0 and 1 land on output dims 0 and 2. */
  int32_t xi[] = {1, 2, 3, 4, 5, 6}, wi[24];
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 4; j++) {
      for (int k = 0; k < 3; k++) wi[(i * 4 + j) * 3 + k] = xi[i * 3 + k];
    }
  }
  OT_CHECK(wi[3] == 1 && wi[14] == 6);
  OT_CHECK(run_one(bcast_outer_inner, OPTIC_S32, 2, d23, xi, OPTIC_S32, 3, d243, wi));
  double s = 2.5;
  OT_CHECK(run_one(bcast_scalar, OPTIC_F64, 0, NULL, &s, OPTIC_F64, 2, d22, (double[]){2.5, 2.5, 2.5, 2.5}));
}

static optic_status reshape32(optic_node_id x, optic_node_id *out) {
  optic_shape s = {.rank = 2, .dims = {3, 2}};
  return optic_graph_reshape(ev_m, ev_main, x, &s, NULL, out);
}
static optic_status transpose4(optic_node_id x, optic_node_id *out) {
  int64_t perm[] = {3, 1, 0, 2};
  return optic_graph_transpose(ev_m, ev_main, x, perm, NULL, out);
}
static optic_status transpose2(optic_node_id x, optic_node_id *out) {
  int64_t perm[] = {1, 0};
  return optic_graph_transpose(ev_m, ev_main, x, perm, NULL, out);
}
static optic_status copy_node(optic_node_id x, optic_node_id *out) {
  return optic_graph_unary(ev_m, ev_main, OPTIC_OP_COPY, x, NULL, out);
}

static void reshape_transpose(void) {
  int64_t d23[] = {2, 3}, d32[] = {3, 2};
  float x[] = {0, 1, 2, 3, 4, 5};
  OT_CHECK(run_one(reshape32, OPTIC_F32, 2, d23, x, OPTIC_F32, 2, d32, x));
  OT_CHECK(run_one(copy_node, OPTIC_F32, 2, d23, x, OPTIC_F32, 2, d23, x));
  /* x[a, b, 0, d] = 6a + 3b + d; y = transpose(x, {3, 1, 0, 2}) has dims
   * [3, 2, 2, 1] and y[i, j, k, 0] = x[k, j, 0, i] = 6k + 3j + i. */
  int64_t d4[] = {2, 2, 1, 3}, o4[] = {3, 2, 2, 1};
  int32_t xi[12];
  for (int i = 0; i < 12; i++) xi[i] = i;
  OT_CHECK(
      run_one(transpose4, OPTIC_S32, 4, d4, xi, OPTIC_S32, 4, o4, (int32_t[]){0, 6, 3, 9, 1, 7, 4, 10, 2, 8, 5, 11}));
  uint8_t p[] = {1, 0, 0, 1, 1, 0};
  OT_CHECK(run_one(transpose2, OPTIC_PRED, 2, d23, p, OPTIC_PRED, 2, d32, (uint8_t[]){1, 1, 0, 1, 0, 0}));
}

static optic_status slice_strided(optic_node_id x, optic_node_id *out) {
  int64_t start[] = {0, 1}, limit[] = {3, 5}, stride[] = {2, 3};
  return optic_graph_slice(ev_m, ev_main, x, start, limit, stride, NULL, out);
}
static optic_status reverse_both(optic_node_id x, optic_node_id *out) {
  int64_t dims[] = {1, 0};
  return optic_graph_reverse(ev_m, ev_main, x, dims, 2, NULL, out);
}
static optic_status reverse_minor(optic_node_id x, optic_node_id *out) {
  int64_t dims[] = {1};
  return optic_graph_reverse(ev_m, ev_main, x, dims, 1, NULL, out);
}

static void slice_and_reverse(void) {
  int64_t d35[] = {3, 5}, d22[] = {2, 2}, d23[] = {2, 3};
  float x[15];
  for (int i = 0; i < 15; i++) x[i] = (float)i;
  /* Rows 0 and 2, columns 1 and 4. */
  OT_CHECK(run_one(slice_strided, OPTIC_F32, 2, d35, x, OPTIC_F32, 2, d22, (float[]){1, 4, 11, 14}));
  OT_CHECK(run_one(reverse_both, OPTIC_F32, 2, d23, x, OPTIC_F32, 2, d23, (float[]){5, 4, 3, 2, 1, 0}));
  OT_CHECK(run_one(reverse_minor, OPTIC_F32, 2, d23, x, OPTIC_F32, 2, d23, (float[]){2, 1, 0, 5, 4, 3}));
}

static void concatenate(void) {
  ev_fresh();
  int64_t d21[] = {2, 1}, d22[] = {2, 2}, d20[] = {2, 0}, d23[] = {2, 3};
  optic_node_id a = ev_param(ev_main, 0, OPTIC_S32, 2, d21), b = ev_param(ev_main, 1, OPTIC_S32, 2, d22);
  optic_node_id c = ev_param(ev_main, 2, OPTIC_S32, 2, d20), r, r0, t;
  optic_node_id xs[] = {a, c, b};
  OT_EXPECT_OK(optic_graph_concatenate(ev_m, ev_main, xs, 3, 1, NULL, &r));
  optic_node_id ys[] = {b, b};
  OT_EXPECT_OK(optic_graph_concatenate(ev_m, ev_main, ys, 2, 0, NULL, &r0));
  optic_node_id both[] = {r, r0};
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, both, 2, NULL, &t));
  ev_root(ev_main, t);
  optic_literal_t *la = ev_lit(OPTIC_S32, 2, d21, (int32_t[]){1, 2}),
                  *lb = ev_lit(OPTIC_S32, 2, d22, (int32_t[]){3, 4, 5, 6});
  optic_literal_t *lc = ev_lit(OPTIC_S32, 2, d20, NULL);
  const optic_literal_t *args[] = {la, lb, lc};
  optic_literal_t *got = ev_run(ev_main, args, 3);
  optic_literal_t *w1 = ev_lit(OPTIC_S32, 2, d23, (int32_t[]){1, 3, 4, 2, 5, 6});
  optic_literal_t *w2 = ev_lit(OPTIC_S32, 2, (int64_t[]){4, 2}, (int32_t[]){3, 4, 5, 6, 3, 4, 5, 6});
  const optic_literal_t *ws[] = {w1, w2};
  optic_literal_t *want;
  OT_EXPECT_OK(optic_literal_create_tuple(ws, 2, &want));
  OT_CHECK(got && ev_same(want, got, OPTIC_MATCH_BITWISE));
  optic_literal_t *ls[] = {la, lb, lc, got, w1, w2, want};
  for (int i = 0; i < 7; i++) optic_literal_destroy(ls[i]);
}

static void pad(void) {
  /* f32[4] {1,2,3,4}, low -1, high 2, interior 1, value 9:
   * interior gives 1 9 2 9 3 9 4; low -1 drops the 1; high adds 9 9. */
  ev_fresh();
  int64_t d4[] = {4}, d8[] = {8};
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 1, d4), v = ev_param(ev_main, 1, OPTIC_F32, 0, NULL), r;
  optic_pad_dim cfg[] = {{.low = -1, .high = 2, .interior = 1}};
  OT_EXPECT_OK(optic_graph_pad(ev_m, ev_main, x, v, cfg, NULL, &r));
  ev_root(ev_main, r);
  float nine = 9;
  optic_literal_t *lx = ev_lit(OPTIC_F32, 1, d4, (float[]){1, 2, 3, 4}), *lv = ev_lit(OPTIC_F32, 0, NULL, &nine);
  const optic_literal_t *args[] = {lx, lv};
  OT_CHECK(ev_check(ev_main, args, 2, OPTIC_F32, 1, d8, (float[]){9, 2, 9, 3, 9, 4, 9, 9}));
  optic_literal_destroy(lx);
  optic_literal_destroy(lv);

  /* 2-D s32 [2,2] {1,2,3,4}: dim 0 low 1 high -1 (row 1 cropped), dim 1
   * interior 2 and high 1: each row a b becomes a p p b p. */
  ev_fresh();
  int64_t d22[] = {2, 2}, d25[] = {2, 5};
  x = ev_param(ev_main, 0, OPTIC_S32, 2, d22), v = ev_param(ev_main, 1, OPTIC_S32, 0, NULL);
  optic_pad_dim cfg2[] = {{.low = 1, .high = -1}, {.low = 0, .high = 1, .interior = 2}};
  OT_EXPECT_OK(optic_graph_pad(ev_m, ev_main, x, v, cfg2, NULL, &r));
  ev_root(ev_main, r);
  int32_t p9 = 9;
  lx = ev_lit(OPTIC_S32, 2, d22, (int32_t[]){1, 2, 3, 4}), lv = ev_lit(OPTIC_S32, 0, NULL, &p9);
  const optic_literal_t *args2[] = {lx, lv};
  OT_CHECK(ev_check(ev_main, args2, 2, OPTIC_S32, 2, d25, (int32_t[]){9, 9, 9, 9, 9, 1, 9, 9, 2, 9}));
  optic_literal_destroy(lx);
  optic_literal_destroy(lv);

  /* Negative edges that eat into interior padding: [1,2,3] interior 2 is
   * 1 p p 2 p p 3; low -2 and high -3 leave p 2. */
  ev_fresh();
  int64_t d3[] = {3}, d2[] = {2};
  x = ev_param(ev_main, 0, OPTIC_F32, 1, d3), v = ev_param(ev_main, 1, OPTIC_F32, 0, NULL);
  optic_pad_dim cfg3[] = {{.low = -2, .high = -3, .interior = 2}};
  OT_EXPECT_OK(optic_graph_pad(ev_m, ev_main, x, v, cfg3, NULL, &r));
  ev_root(ev_main, r);
  lx = ev_lit(OPTIC_F32, 1, d3, (float[]){1, 2, 3}), lv = ev_lit(OPTIC_F32, 0, NULL, &nine);
  const optic_literal_t *args3[] = {lx, lv};
  OT_CHECK(ev_check(ev_main, args3, 2, OPTIC_F32, 1, d2, (float[]){9, 2}));
  optic_literal_destroy(lx);
  optic_literal_destroy(lv);
}

static void iota(void) {
  ev_fresh();
  int64_t d23[] = {2, 3}, d300[] = {300};
  optic_shape s23 = ev_shape(2, d23), s300 = ev_shape(1, d300);
  optic_node_id a, b, c, d, t;
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_F32, &s23, 1, NULL, &a));
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_S32, &s23, 0, NULL, &b));
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_U8, &s300, 0, NULL, &c));
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_F64, &s23, 1, NULL, &d));
  optic_node_id xs[] = {a, b, c, d};
  OT_EXPECT_OK(optic_graph_tuple(ev_m, ev_main, xs, 4, NULL, &t));
  ev_root(ev_main, t);
  optic_literal_t *r = ev_run(ev_main, NULL, 0);
  if (r) {
    const float *fa = optic_literal_data(optic_literal_element(r, 0), NULL);
    const int32_t *ib = optic_literal_data(optic_literal_element(r, 1), NULL);
    const uint8_t *uc = optic_literal_data(optic_literal_element(r, 2), NULL);
    const double *dd = optic_literal_data(optic_literal_element(r, 3), NULL);
    OT_CHECK(fa[0] == 0 && fa[2] == 2 && fa[3] == 0 && fa[5] == 2);
    OT_CHECK(ib[0] == 0 && ib[2] == 0 && ib[3] == 1 && ib[5] == 1);
    OT_CHECK(uc[255] == 255 && uc[256] == 0 && uc[299] == 43); /* u8 wraps */
    OT_CHECK(dd[4] == 1.0);
  }
  optic_literal_destroy(r);
}

static const ot_case cases[] = {
    {"broadcast", broadcast},
    {"reshape_transpose", reshape_transpose},
    {"slice_and_reverse", slice_and_reverse},
    {"concatenate", concatenate},
    {"pad", pad},
    {"iota", iota},
};
OT_MAIN(cases)
