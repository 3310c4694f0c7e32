/* Reverse-mode autodiff of sort and topk against central finite
 * differences in f64 (random values: no ties, where the result is
 * differentiable), over sizes 0, 1, 2, 7, 33, both dims of a matrix,
 * ascending and descending, several operands sorted together, a
 * lexicographic comparator with an integer key, JAX's argsort shape (an
 * iota operand already there) and unstable sorts. With ties the gradient
 * is checked exactly against the rule: each seed element goes back to the
 * element the stable order moved there (a permutation computed here by
 * insertion sort); topk's ties go to the lower index. */
#include "tests/graph/autodiff_util.h"

/* comparator over n operands of dtypes dts: operand 0 compared with dir;
 * with lex, ties of operand 0 broken by operand 1 with LT. */
static optic_comp_id comparator(const optic_dtype *dts, int32_t n, optic_compare_dir dir, bool lex) {
  optic_comp_id c = ev_comp("less");
  optic_node_id p[8], r, eq, r2;
  for (int32_t i = 0; i < 2 * n; i++) p[i] = ev_param(c, i, dts[i / 2], 0, NULL);
  OT_EXPECT_OK(optic_graph_compare(ev_m, c, dir, p[0], p[1], NULL, &r));
  if (lex) {
    OT_EXPECT_OK(optic_graph_compare(ev_m, c, OPTIC_CMP_EQ, p[0], p[1], NULL, &eq));
    OT_EXPECT_OK(optic_graph_compare(ev_m, c, OPTIC_CMP_LT, p[2], p[3], NULL, &r2));
    OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_AND, eq, r2, NULL, &r2));
    OT_EXPECT_OK(optic_graph_binary(ev_m, c, OPTIC_OP_OR, r, r2, NULL, &r));
  }
  ev_root(c, r);
  return c;
}

static optic_node_id sort1(optic_node_id x, int64_t dim, optic_compare_dir dir, bool stable) {
  optic_dtype dt = OPTIC_F64;
  optic_node_id y;
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, &x, 1, dim, stable, comparator(&dt, 1, dir, false), NULL, &y));
  return y;
}

static void test_one_operand(void) {
  const int64_t sizes[] = {0, 1, 2, 7, 33};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    for (int dir = 0; dir < 2; dir++) {
      ev_fresh();
      optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &sizes[i]);
      ev_root(ev_main, sort1(x, 0, dir ? OPTIC_CMP_GT : OPTIC_CMP_LT, dir == 0));
      char what[64];
      snprintf(what, sizeof what, "sort [%lld] %s", (long long)sizes[i], dir ? "descending" : "ascending");
      OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "%s", what);
    }
  }
}

/* [3, 5] along each dim, [0, 4] and [4, 1]; the result squared. */
static void test_matrix(void) {
  const int64_t shapes[][2] = {{3, 5}, {0, 4}, {4, 1}};
  for (int s = 0; s < 3; s++) {
    for (int64_t dim = 0; dim < 2; dim++) {
      ev_fresh();
      optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 2, shapes[s]), y = sort1(x, dim, OPTIC_CMP_LT, true), sq;
      OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, y, y, NULL, &sq));
      ev_root(ev_main, sq);
      char what[64];
      snprintf(what, sizeof what, "sort [%lld, %lld] dim %lld", (long long)shapes[s][0], (long long)shapes[s][1],
               (long long)dim);
      OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "%s", what);
    }
  }
}

/* keys and values sorted together by the keys (descending); the result
 * keys * values + values, so both outputs carry gradient to both inputs. */
static void test_key_value(void) {
  ev_fresh();
  int64_t dims[2] = {4, 6};
  optic_node_id xs[2] = {ev_param(ev_main, 0, OPTIC_F64, 2, dims), ev_param(ev_main, 1, OPTIC_F64, 2, dims)}, s, k, v,
                r;
  optic_dtype dts[2] = {OPTIC_F64, OPTIC_F64};
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, xs, 2, 1, false, comparator(dts, 2, OPTIC_CMP_GT, false), NULL, &s));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, s, 0, NULL, &k));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, s, 1, NULL, &v));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, k, v, NULL, &r));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_ADD, r, v, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(adf_check("key-value sort", ev_main, -1, 1, 1e-6));
}

/* (s32 bucket with ties, f64 x) sorted lexicographically; then x only. */
static void test_lexicographic(void) {
  ev_fresh();
  int64_t n = 12;
  int32_t bucket[12] = {2, 0, 1, 2, 0, 1, 1, 2, 0, 0, 2, 1};
  optic_node_id xs[2] = {ev_const(ev_main, OPTIC_S32, 1, &n, bucket), ev_param(ev_main, 0, OPTIC_F64, 1, &n)}, s, v;
  optic_dtype dts[2] = {OPTIC_S32, OPTIC_F64};
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, xs, 2, 0, true, comparator(dts, 2, OPTIC_CMP_LT, true), NULL, &s));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, s, 1, NULL, &v));
  ev_root(ev_main, v);
  OT_CHECK(adf_check("lexicographic sort", ev_main, -1, 1, 1e-6));
}

/* JAX's argsort: sort(x, iota) then the sorted x times the permutation. */
static void test_argsort_shape(void) {
  ev_fresh();
  int64_t dims[2] = {3, 9};
  optic_shape sh = ev_shape(2, dims);
  optic_node_id xs[2] = {ev_param(ev_main, 0, OPTIC_F64, 2, dims)}, s, v, p, r;
  OT_EXPECT_OK(optic_graph_iota(ev_m, ev_main, OPTIC_S32, &sh, 1, NULL, &xs[1]));
  optic_dtype dts[2] = {OPTIC_F64, OPTIC_S32};
  OT_EXPECT_OK(optic_graph_sort(ev_m, ev_main, xs, 2, 1, true, comparator(dts, 2, OPTIC_CMP_LT, false), NULL, &s));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, s, 0, NULL, &v));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, s, 1, NULL, &p));
  OT_EXPECT_OK(optic_graph_convert(ev_m, ev_main, p, OPTIC_F64, NULL, &p));
  OT_EXPECT_OK(optic_graph_binary(ev_m, ev_main, OPTIC_OP_MULTIPLY, v, p, NULL, &r));
  ev_root(ev_main, r);
  OT_CHECK(adf_check("argsort shape", ev_main, -1, 1, 1e-6));
  int32_t sorts = 0; /* the iota already there is the permutation: no second forward sort */
  for (optic_comp_id c = 0; c < optic_module_computation_count(ev_m); c++) {
    const char *name = optic_computation_name(ev_m, c);
    sorts += strstr(name, ".with_iota") != NULL;
  }
  OT_CHECK(sorts == 0, "%d comparators widened", (int)sorts);
}

/* The gradient of <seed, f(x)> at x (f: ev_main of one f64 parameter). */
static optic_literal_t *vjp(const optic_literal_t *x, const optic_literal_t *seed) {
  optic_grad_options o = optic_grad_options_default();
  o.seeded = true;
  optic_comp_id g;
  int32_t wrt = 0;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(ev_m, ev_main, &wrt, 1, &o, &g));
  const optic_literal_t *args[2] = {x, seed};
  optic_literal_t *r = ev_run(g, args, 2), *out = NULL;
  if (r != NULL) OT_EXPECT_OK(optic_literal_clone(optic_literal_element(r, 1), &out));
  optic_literal_destroy(r);
  return out;
}

/* Stable order of v[0..n) (ascending or descending): perm[j] = source of
 * result j. */
static void stable_order(const double *v, int64_t n, bool descending, int64_t *perm) {
  for (int64_t i = 0; i < n; i++) {
    int64_t j = i;
    while (j > 0 && (descending ? v[perm[j - 1]] < v[i] : v[perm[j - 1]] > v[i])) perm[j] = perm[j - 1], j--;
    perm[j] = i;
  }
}

/* Ties: x = {3, 1, 3, 2, 1, 3, 2}; grad[perm[j]] must be seed[j], exactly. */
static void test_ties(void) {
  double xv[7] = {3, 1, 3, 2, 1, 3, 2}, sv[7] = {0.5, -1, 2, 4, -8, 16, 0.25}, want[7];
  int64_t n = 7, perm[7];
  for (int stable = 0; stable < 2; stable++) {
    for (int desc = 0; desc < 2; desc++) {
      ev_fresh();
      optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &n);
      ev_root(ev_main, sort1(x, 0, desc ? OPTIC_CMP_GT : OPTIC_CMP_LT, stable));
      stable_order(xv, n, desc, perm);
      for (int64_t j = 0; j < n; j++) want[perm[j]] = sv[j];
      optic_literal_t *xl = ev_lit(OPTIC_F64, 1, &n, xv), *sl = ev_lit(OPTIC_F64, 1, &n, sv),
                      *wl = ev_lit(OPTIC_F64, 1, &n, want);
      optic_literal_t *got = vjp(xl, sl);
      OT_CHECK(got && ev_same(wl, got, OPTIC_MATCH_BITWISE), "ties, stable %d descending %d", stable, desc);
      optic_literal_destroy(xl), optic_literal_destroy(sl), optic_literal_destroy(wl), optic_literal_destroy(got);
    }
  }
}

static void topk_case(int32_t rank, const int64_t *dims, int64_t k, bool largest) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, rank, dims), t, v;
  OT_EXPECT_OK(optic_graph_topk(ev_m, ev_main, x, k, largest, NULL, &t));
  OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, t, 0, NULL, &v));
  ev_root(ev_main, v);
  char what[96];
  snprintf(what, sizeof what, "topk rank %d last %lld k %lld %s", (int)rank, (long long)dims[rank - 1], (long long)k,
           largest ? "largest" : "smallest");
  OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "%s", what);
}

static void test_topk(void) {
  topk_case(1, (int64_t[]){1}, 1, true);
  topk_case(1, (int64_t[]){7}, 0, true);
  topk_case(1, (int64_t[]){7}, 3, true);
  topk_case(1, (int64_t[]){7}, 7, false);
  topk_case(2, (int64_t[]){1, 50}, 10, true);
  topk_case(2, (int64_t[]){3, 9}, 4, false);
  topk_case(2, (int64_t[]){0, 9}, 4, true);
  topk_case(3, (int64_t[]){2, 3, 5}, 2, true);
}

/* topk with ties: the seed goes to the positions the indices output names
 * (the lower index first), exactly. */
static void test_topk_ties(void) {
  double xv[8] = {1, 5, 2, 5, 0, 5, 2, 1}, sv[4] = {1, 2, 4, 8};
  int64_t n = 8, k = 4;
  for (int largest = 0; largest < 2; largest++) {
    ev_fresh();
    optic_node_id x = ev_param(ev_main, 0, OPTIC_F64, 1, &n), t, v;
    OT_EXPECT_OK(optic_graph_topk(ev_m, ev_main, x, k, largest, NULL, &t));
    OT_EXPECT_OK(optic_graph_get_tuple_element(ev_m, ev_main, t, 0, NULL, &v));
    ev_root(ev_main, v);
    int64_t perm[8];
    stable_order(xv, n, largest, perm);
    double want[8] = {0};
    for (int64_t j = 0; j < k; j++) want[perm[j]] = sv[j];
    optic_literal_t *xl = ev_lit(OPTIC_F64, 1, &n, xv), *sl = ev_lit(OPTIC_F64, 1, &k, sv),
                    *wl = ev_lit(OPTIC_F64, 1, &n, want);
    optic_literal_t *got = vjp(xl, sl);
    OT_CHECK(got && ev_same(wl, got, OPTIC_MATCH_BITWISE), "topk ties, largest %d", largest);
    optic_literal_destroy(xl), optic_literal_destroy(sl), optic_literal_destroy(wl), optic_literal_destroy(got);
  }
}

static const ot_case cases[] = {
    {"one_operand", test_one_operand},
    {"matrix", test_matrix},
    {"key_value", test_key_value},
    {"lexicographic", test_lexicographic},
    {"argsort_shape", test_argsort_shape},
    {"ties", test_ties},
    {"topk", test_topk},
    {"topk_ties", test_topk_ties},
};
OT_MAIN(cases)
