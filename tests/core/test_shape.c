/* Shapes and dtypes: validation, element/byte counts with overflow detection
 * (never a wrapped size), strides, formatting, XLA dtype names. */
#include <optic/optic.h>

#include "tests/harness.h"

static void dtype_sizes_and_names(void) {
  OT_CHECK(optic_dtype_size(OPTIC_F32) == 4);
  OT_CHECK(optic_dtype_size(OPTIC_F64) == 8);
  OT_CHECK(optic_dtype_size(OPTIC_S32) == 4);
  OT_CHECK(optic_dtype_size(OPTIC_U8) == 1);
  OT_CHECK(optic_dtype_size(OPTIC_PRED) == 1);
  OT_CHECK(optic_dtype_size(OPTIC_DTYPE_INVALID) == 0);
  OT_CHECK(optic_dtype_size((optic_dtype)99) == 0);
  for (int d = 1; d < OPTIC_DTYPE_COUNT_; d++) {
    optic_dtype back;
    OT_EXPECT_OK(optic_dtype_from_name(optic_dtype_name((optic_dtype)d), &back));
    OT_CHECK(back == (optic_dtype)d, "round trip of %s", optic_dtype_name((optic_dtype)d));
  }
  OT_CHECK(strcmp(optic_dtype_name(OPTIC_PRED), "pred") == 0);
  optic_dtype d;
  OT_EXPECT_STATUS(optic_dtype_from_name("F32", &d), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dtype_from_name(NULL, &d), OPTIC_ERR_INVALID_ARGUMENT);
}

static void make_and_count(void) {
  optic_shape s;
  size_t n, bytes;
  OT_EXPECT_OK(optic_shape_make(0, NULL, &s));
  OT_EXPECT_OK(optic_shape_elements(&s, &n));
  OT_CHECK(n == 1, "scalar has %zu elements", n);
  int64_t d3[] = {2, 3, 5};
  OT_EXPECT_OK(optic_shape_make(3, d3, &s));
  OT_EXPECT_OK(optic_shape_elements(&s, &n));
  OT_CHECK(n == 30);
  OT_EXPECT_OK(optic_shape_bytes(&s, OPTIC_F64, &bytes));
  OT_CHECK(bytes == 240);
  int64_t dz[] = {7, 0, 9};
  OT_EXPECT_OK(optic_shape_make(3, dz, &s));
  OT_EXPECT_OK(optic_shape_elements(&s, &n));
  OT_CHECK(n == 0);
  int64_t d8[8] = {1, 2, 1, 2, 1, 2, 1, 2};
  OT_EXPECT_OK(optic_shape_make(8, d8, &s));
  OT_EXPECT_OK(optic_shape_elements(&s, &n));
  OT_CHECK(n == 16);
}

static void invalid_shapes(void) {
  optic_shape s;
  int64_t d[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  OT_EXPECT_STATUS(optic_shape_make(9, d, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_shape_make(-1, d, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_shape_make(2, NULL, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_shape_make(1, d, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  int64_t neg[] = {4, -3};
  OT_EXPECT_STATUS(optic_shape_make(2, neg, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "dim 1 is -3") != NULL, "message: %s", optic_last_error());
  /* A hand-built invalid shape is caught by every function that reads it. */
  optic_shape bad = {.rank = 2, .dims = {3, -1}};
  size_t n;
  OT_EXPECT_STATUS(optic_shape_elements(&bad, &n), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_shape_bytes(&bad, OPTIC_F32, &n), OPTIC_ERR_INVALID_ARGUMENT);
  int64_t st[8];
  OT_EXPECT_STATUS(optic_shape_strides(&bad, st), OPTIC_ERR_INVALID_ARGUMENT);
  optic_shape ok = {.rank = 1, .dims = {3}};
  OT_EXPECT_STATUS(optic_shape_bytes(&ok, OPTIC_DTYPE_INVALID, &n), OPTIC_ERR_INVALID_ARGUMENT);
}

static void overflow_detected(void) {
  optic_shape s;
  /* 2^31 * 2^31 * 2^2 = 2^64 elements: wraps to 0 in 64-bit arithmetic. */
  int64_t wrap[] = {INT64_C(1) << 31, INT64_C(1) << 31, 4};
  OT_EXPECT_STATUS(optic_shape_make(3, wrap, &s), OPTIC_ERR_OVERFLOW);
  OT_CHECK(strstr(optic_last_error(), "[2147483648,2147483648,4]") != NULL, "message: %s", optic_last_error());
  int64_t huge[] = {INT64_MAX};
  OT_EXPECT_STATUS(optic_shape_make(1, huge, &s), OPTIC_ERR_OVERFLOW);
  /* The largest accepted count, and one more. */
  int64_t limit = INT64_MAX / 8;
  int64_t at[] = {limit};
  OT_EXPECT_OK(optic_shape_make(1, at, &s));
  size_t bytes;
  OT_EXPECT_OK(optic_shape_bytes(&s, OPTIC_F64, &bytes));
  OT_CHECK(bytes == (size_t)limit * 8);
  int64_t over[] = {limit + 1};
  OT_EXPECT_STATUS(optic_shape_make(1, over, &s), OPTIC_ERR_OVERFLOW);
  /* Overflowing dims followed by a zero: an empty array, not an error. */
  int64_t zero_after[] = {INT64_MAX, INT64_MAX, 0};
  OT_EXPECT_OK(optic_shape_make(3, zero_after, &s));
  size_t n;
  OT_EXPECT_OK(optic_shape_elements(&s, &n));
  OT_CHECK(n == 0);
  /* Hand-built overflowing shapes are caught too. */
  optic_shape bad = {.rank = 2, .dims = {INT64_C(1) << 40, INT64_C(1) << 40}};
  OT_EXPECT_STATUS(optic_shape_elements(&bad, &n), OPTIC_ERR_OVERFLOW);
}

static void strides_row_major(void) {
  optic_shape s;
  int64_t d[] = {2, 3, 4};
  OT_EXPECT_OK(optic_shape_make(3, d, &s));
  int64_t st[3];
  OT_EXPECT_OK(optic_shape_strides(&s, st));
  OT_CHECK(st[0] == 12 && st[1] == 4 && st[2] == 1, "strides %lld %lld %lld", (long long)st[0], (long long)st[1],
           (long long)st[2]);
}

static void equal_and_format(void) {
  optic_shape a, b;
  int64_t d[] = {2, 3};
  int64_t e[] = {3, 2};
  OT_EXPECT_OK(optic_shape_make(2, d, &a));
  OT_EXPECT_OK(optic_shape_make(2, e, &b));
  OT_CHECK(!optic_shape_equal(&a, &b));
  OT_CHECK(optic_shape_equal(&a, &a));
  char buf[64];
  int n = optic_shape_format(&a, OPTIC_F32, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f32[2,3]") == 0 && n == 8, "got '%s'", buf);
  optic_shape_format(&a, OPTIC_DTYPE_INVALID, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "[2,3]") == 0, "got '%s'", buf);
  n = optic_shape_format(&a, OPTIC_PRED, buf, 4);
  OT_CHECK(n == 9 && strcmp(buf, "pre") == 0, "truncation: n=%d '%s'", n, buf);
  optic_shape scalar;
  OT_EXPECT_OK(optic_shape_make(0, NULL, &scalar));
  optic_shape_format(&scalar, OPTIC_F64, buf, sizeof buf);
  OT_CHECK(strcmp(buf, "f64[]") == 0, "got '%s'", buf);
}

static void tensor_views(void) {
  int64_t d[] = {3, 4};
  optic_shape s;
  OT_EXPECT_OK(optic_shape_make(2, d, &s));
  float buf[12];
  optic_tensor t;
  OT_EXPECT_OK(optic_tensor_make(OPTIC_F32, &s, buf, &t));
  size_t bytes = 0;
  OT_EXPECT_OK(optic_tensor_bytes(&t, &bytes));
  OT_CHECK(bytes == 48 && t.data == buf && t.dtype == OPTIC_F32 && optic_shape_equal(&t.shape, &s));
  OT_EXPECT_STATUS(optic_tensor_make(OPTIC_F32, &s, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_tensor_make(OPTIC_DTYPE_INVALID, &s, buf, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_tensor_make(OPTIC_F32, NULL, buf, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_tensor_make(OPTIC_F32, &s, buf, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  int64_t z[] = {0, 5};
  OT_EXPECT_OK(optic_shape_make(2, z, &s));
  OT_EXPECT_OK(optic_tensor_make(OPTIC_F64, &s, NULL, &t)); /* empty: NULL data is fine */
  OT_EXPECT_OK(optic_tensor_bytes(&t, &bytes));
  OT_CHECK(bytes == 0);
}

static const ot_case cases[] = {
    {"dtype_sizes_and_names", dtype_sizes_and_names},
    {"make_and_count", make_and_count},
    {"invalid_shapes", invalid_shapes},
    {"overflow_detected", overflow_detected},
    {"strides_row_major", strides_row_major},
    {"equal_and_format", equal_and_format},
    {"tensor_views", tensor_views},
};
OT_MAIN(cases)
