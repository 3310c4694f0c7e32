/* Literals: creation (zeroed, from data, tuples), deep copies, accessors,
 * XLA text, the three comparison modes, and their errors. */
#include <math.h>

#include "tests/graph/evaluate_util.h"

static void create_and_access(void) {
  optic_literal_destroy(NULL);
  int64_t d[] = {2, 2};
  float v[] = {1, 2, 3, 4};
  optic_literal_t *a = ev_lit(OPTIC_F32, 2, d, v);
  size_t bytes = 0;
  const float *p = optic_literal_data(a, &bytes);
  OT_CHECK(bytes == 16 && p[3] == 4.0f);
  OT_CHECK(optic_literal_tuple_size(a) == 0 && optic_literal_element(a, 0) == NULL);
  OT_CHECK(optic_literal_type(a)->dtype == OPTIC_F32 && optic_literal_type(a)->shape.dims[1] == 2);
  float *w = optic_literal_mutable_data(a, NULL);
  w[0] = 9;
  /* Tuples copy their elements deeply. */
  int32_t k = 7;
  optic_literal_t *s = ev_lit(OPTIC_S32, 0, NULL, &k);
  const optic_literal_t *els[] = {a, s};
  optic_literal_t *t, *c;
  OT_EXPECT_OK(optic_literal_create_tuple(els, 2, &t));
  w[0] = 10;
  OT_CHECK(optic_literal_tuple_size(t) == 2);
  OT_CHECK(((const float *)optic_literal_data(optic_literal_element(t, 0), NULL))[0] == 9.0f);
  OT_CHECK(optic_literal_data(t, &bytes) == NULL && bytes == 0);
  OT_EXPECT_OK(optic_literal_clone(t, &c));
  OT_CHECK(ev_same(t, c, OPTIC_MATCH_BITWISE));
  OT_CHECK(optic_type_is_tuple(optic_literal_type(c)) && optic_literal_type(c)->elements[1].dtype == OPTIC_S32);
  optic_literal_destroy(a);
  optic_literal_destroy(s);
  optic_literal_destroy(t);
  optic_literal_destroy(c);
}

static void zero_filled_from_type(void) {
  optic_shape s3 = {.rank = 1, .dims = {3}}, s0 = {.rank = 0};
  optic_type inner[] = {optic_type_array(OPTIC_F64, &s3), optic_type_array(OPTIC_PRED, &s0)};
  optic_type nested[] = {optic_type_array(OPTIC_U8, &s0),
                         {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = inner}};
  optic_type t = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = nested};
  optic_literal_t *l;
  OT_EXPECT_OK(optic_literal_create(&t, &l));
  OT_CHECK(optic_type_equal(optic_literal_type(l), &t));
  const optic_literal_t *in = optic_literal_element(l, 1);
  const double *z = optic_literal_data(optic_literal_element(in, 0), NULL);
  OT_CHECK(z[0] == 0 && z[2] == 0);
  char buf[128];
  optic_literal_format(l, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "(u8[] 0, (f64[3] {0, 0, 0}, pred[] 0))") == 0, "%s", buf);
  optic_literal_destroy(l);
  /* An empty tuple and an empty array. */
  optic_type empty = {.dtype = OPTIC_DTYPE_INVALID};
  OT_EXPECT_OK(optic_literal_create(&empty, &l));
  OT_CHECK(optic_literal_tuple_size(l) == 0);
  optic_literal_destroy(l);
  int64_t d0[] = {0};
  l = ev_lit(OPTIC_F32, 1, d0, NULL);
  OT_CHECK(optic_literal_data(l, NULL) == NULL);
  optic_literal_format(l, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[0] {}") == 0, "%s", buf);
  optic_literal_destroy(l);
}

static void format_text(void) {
  int64_t d[] = {2, 2}, d3[] = {2, 1, 2};
  float v[] = {1, 2.5f, -3, 4};
  optic_literal_t *a = ev_lit(OPTIC_F32, 2, d, v), *b = ev_lit(OPTIC_F32, 3, d3, v);
  char buf[128];
  int n = optic_literal_format(a, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[2,2] {{1, 2.5}, {-3, 4}}") == 0 && n == (int)strlen(buf), "%s", buf);
  optic_literal_format(b, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[2,1,2] {{{1, 2.5}}, {{-3, 4}}}") == 0, "%s", buf);
  char tiny[8];
  n = optic_literal_format(a, tiny, sizeof tiny);
  OT_CHECK(n == (int)strlen("f32[2,2] {{1, 2.5}, {-3, 4}}") && strlen(tiny) == 7, "%d '%s'", n, tiny);
  OT_CHECK(optic_literal_format(a, NULL, 0) == n);
  double x = 0.1;
  optic_literal_t *s = ev_lit(OPTIC_F64, 0, NULL, &x);
  optic_literal_format(s, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f64[] 0.10000000000000001") == 0, "%s", buf);
  optic_literal_destroy(a);
  optic_literal_destroy(b);
  optic_literal_destroy(s);
}

static void match_modes(void) {
  int64_t d[] = {4};
  float x[] = {1.0f, NAN, -0.0f, INFINITY};
  float y[] = {1.0000001f, -NAN, 0.0f, INFINITY};
  float z[] = {1.0f, NAN, -0.0f, INFINITY};
  optic_literal_t *a = ev_lit(OPTIC_F32, 1, d, x), *b = ev_lit(OPTIC_F32, 1, d, y), *c = ev_lit(OPTIC_F32, 1, d, z);
  char why[160];
  OT_CHECK(optic_literal_match(a, c, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why));
  OT_CHECK(!optic_literal_match(a, b, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why));
  OT_CHECK(strstr(why, "element 0 (index [0]): expected 1, got 1.00000012") != NULL, "%s", why);
  /* NaN-aware: the NaNs match, but 1 vs 1.0000001 and -0 vs +0 do not. */
  OT_CHECK(!optic_literal_match(a, b, OPTIC_MATCH_NAN_AWARE, 0, 0, NULL, 0));
  float x2[] = {1.0f, NAN, -0.0f, INFINITY}, y2[] = {1.0f, -NAN, -0.0f, INFINITY};
  optic_literal_t *a2 = ev_lit(OPTIC_F32, 1, d, x2), *b2 = ev_lit(OPTIC_F32, 1, d, y2);
  OT_CHECK(optic_literal_match(a2, b2, OPTIC_MATCH_NAN_AWARE, 0, 0, NULL, 0));
  OT_CHECK(!optic_literal_match(a2, b2, OPTIC_MATCH_BITWISE, 0, 0, NULL, 0));
  /* Tolerance: -0 == +0, NaN with NaN, 1e-7 relative. */
  OT_CHECK(optic_literal_match(a, b, OPTIC_MATCH_TOLERANCE, 0, 1e-6, why, sizeof why), "%s", why);
  OT_CHECK(!optic_literal_match(a, b, OPTIC_MATCH_TOLERANCE, 0, 1e-8, why, sizeof why));
  OT_CHECK(!optic_literal_match(a, b, OPTIC_MATCH_TOLERANCE, -1, 0, why, sizeof why));
  /* Integers are exact in every mode; types must be equal. */
  int32_t i1[] = {1, 2, 3, 4}, i2[] = {1, 2, 3, 5};
  optic_literal_t *s1 = ev_lit(OPTIC_S32, 1, d, i1), *s2 = ev_lit(OPTIC_S32, 1, d, i2);
  OT_CHECK(!optic_literal_match(s1, s2, OPTIC_MATCH_TOLERANCE, 10, 10, why, sizeof why));
  OT_CHECK(strstr(why, "index [3]): expected 4, got 5") != NULL, "%s", why);
  OT_CHECK(!optic_literal_match(s1, a, OPTIC_MATCH_TOLERANCE, 10, 10, why, sizeof why));
  OT_CHECK(strstr(why, "type: expected s32[4], got f32[4]") != NULL, "%s", why);
  OT_CHECK(!optic_literal_match(NULL, a, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why));
  /* Inside tuples the path is named. */
  const optic_literal_t *e1[] = {s1, a}, *e2[] = {s2, a};
  optic_literal_t *t1, *t2;
  OT_EXPECT_OK(optic_literal_create_tuple(e1, 2, &t1));
  OT_EXPECT_OK(optic_literal_create_tuple(e2, 2, &t2));
  OT_CHECK(!optic_literal_match(t1, t2, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why));
  OT_CHECK(strncmp(why, "tuple element 0: element 3", 26) == 0, "%s", why);
  optic_literal_t *ls[] = {a, b, c, a2, b2, s1, s2, t1, t2};
  for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) optic_literal_destroy(ls[i]);
}

static void errors(void) {
  optic_literal_t *l = (optic_literal_t *)&l;
  optic_shape s = {.rank = 1, .dims = {3}};
  float v[3] = {0};
  OT_EXPECT_STATUS(optic_literal_create_array(OPTIC_F32, &s, v, 8, &l), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(l == NULL);
  OT_CHECK(strstr(optic_last_error(), "needs 12 bytes, 8 given") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_literal_create_array(OPTIC_DTYPE_INVALID, &s, NULL, 0, &l), OPTIC_ERR_INVALID_ARGUMENT);
  optic_shape huge = {.rank = 2, .dims = {INT64_C(1) << 40, INT64_C(1) << 40}};
  OT_EXPECT_STATUS(optic_literal_create_array(OPTIC_F32, &huge, NULL, 0, &l), OPTIC_ERR_OVERFLOW);
  optic_shape neg = {.rank = 1, .dims = {-1}};
  OT_EXPECT_STATUS(optic_literal_create_array(OPTIC_F32, &neg, NULL, 0, &l), OPTIC_ERR_INVALID_ARGUMENT);
  optic_type bad = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = NULL};
  OT_EXPECT_STATUS(optic_literal_create(&bad, &l), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_literal_create(NULL, &l), OPTIC_ERR_INVALID_ARGUMENT);
  const optic_literal_t *none[] = {NULL};
  OT_EXPECT_STATUS(optic_literal_create_tuple(none, 1, &l), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_literal_clone(NULL, &l), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_literal_type(NULL) == NULL && optic_literal_data(NULL, NULL) == NULL);
}

static const ot_case cases[] = {
    {"create_and_access", create_and_access},
    {"zero_filled_from_type", zero_filled_from_type},
    {"format_text", format_text},
    {"match_modes", match_modes},
    {"errors", errors},
};
OT_MAIN(cases)
