/* Convolution descriptors and the naive reference, without BLAS (so this also
 * runs in the kernels-only cross build under qemu): dim-label parsing, layout
 * rewriting, shape inference with its error statuses and messages, and
 * hand-computed reference results (exact: small integers). */
#include "kernels/conv.h"
#include "tests/kernels/conv_test.h"

static void expect_floats(const float *got, const float *want, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) OT_CHECK(got[i] == want[i], "%s[%zu] = %g, want %g", what, i, got[i], want[i]);
}

static void test_parse_labels(void) {
  optic_conv_dnums dn;
  OT_EXPECT_OK(optic_conv_parse_dim_labels("b01f_01io->b01f", &dn));
  OT_CHECK(dn.nspatial == 2 && dn.in_batch == 0 && dn.in_feature == 3 && dn.in_spatial[0] == 1 &&
           dn.in_spatial[1] == 2);
  OT_CHECK(dn.k_in == 2 && dn.k_out == 3 && dn.k_spatial[0] == 0 && dn.k_spatial[1] == 1);
  OT_EXPECT_OK(optic_conv_parse_dim_labels("bf_io->bf", &dn));
  OT_CHECK(dn.nspatial == 0 && dn.in_batch == 0 && dn.in_feature == 1 && dn.k_in == 0 && dn.k_out == 1);
  OT_EXPECT_OK(optic_conv_parse_dim_labels("0bf1_0oi1->0bf1", &dn));
  OT_CHECK(dn.in_spatial[0] == 0 && dn.in_batch == 1 && dn.in_feature == 2 && dn.in_spatial[1] == 3);
  OT_CHECK(dn.k_out == 1 && dn.k_in == 2 && dn.out_feature == 2);
  static const char *const bad[][2] = {
      {"b01f01io->b01f", "not of the form"},    {"b01x_01io->b01f", "has 'x'"},
      {"b01f_01io->b0f", "spatial dims"},       {"bb1f_01io->b01f", "repeats 'b'"},
      {"b02f_01io->b01f", "not spatial dim 1"}, {"b01_01io->b01f", "lacks 'f'"},
      {"b01f_01ii->b01f", "repeats 'i'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    OT_EXPECT_STATUS(optic_conv_parse_dim_labels(bad[i][0], &dn), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(strstr(optic_last_error(), bad[i][1]) != NULL, "'%s': message '%s' lacks '%s'", bad[i][0],
             optic_last_error(), bad[i][1]);
  }
}

static void expect_shape(const optic_conv_desc *d, int32_t rank, const int64_t *want) {
  optic_shape s;
  OT_EXPECT_OK(optic_conv_infer_shape(d, &s));
  OT_CHECK(s.rank == rank);
  for (int32_t i = 0; i < rank && i < s.rank; i++) {
    OT_CHECK(s.dims[i] == want[i], "dim %d is %lld, want %lld", i, (long long)s.dims[i], (long long)want[i]);
  }
}

static void test_infer_shapes(void) {
  /* conv_lhs_dilate_parse_only.hlo: window={size=32x128 stride=31x1 lhs_dilate=32x1}. */
  optic_conv_desc d = kt_conv_desc("0bf1_0oi1->0bf1", 4, (int64_t[]){32, 24, 64, 128}, (int64_t[]){32, 1024, 64, 128});
  d.stride[0] = 31;
  d.lhs_dilation[0] = 32;
  expect_shape(&d, 4, (int64_t[]){32, 24, 1024, 1});
  /* conv0d_as_matmul.hlo */
  d = kt_conv_desc("bf_io->bf", 2, (int64_t[]){10, 5}, (int64_t[]){5, 7});
  expect_shape(&d, 2, (int64_t[]){10, 7});
  /* conv2d_nhwc_bias_relu.hlo */
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){8, 5, 5, 1}, (int64_t[]){3, 3, 1, 32});
  d.pad_lo[0] = d.pad_hi[0] = d.pad_lo[1] = d.pad_hi[1] = 1;
  expect_shape(&d, 4, (int64_t[]){8, 5, 5, 32});
  /* negative padding, window larger than the padded input, empty input */
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){2, 9, 3}, (int64_t[]){3, 3, 4});
  d.pad_lo[0] = -2, d.pad_hi[0] = -1, d.stride[0] = 2;
  expect_shape(&d, 3, (int64_t[]){2, 2, 4}); /* padded 6, window 3: (6-3)/2+1 */
  d.pad_lo[0] = -5, d.pad_hi[0] = -3;
  expect_shape(&d, 3, (int64_t[]){2, 0, 4});
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){2, 0, 3}, (int64_t[]){1, 3, 4});
  expect_shape(&d, 3, (int64_t[]){2, 0, 4});
  /* batch groups divide the batch; feature groups the features */
  d = kt_conv_desc("bf0_oi0->bf0", 3, (int64_t[]){6, 4, 5}, (int64_t[]){6, 4, 2});
  d.batch_group_count = 3;
  expect_shape(&d, 3, (int64_t[]){2, 6, 4});
}

static void test_apply_layouts(void) {
  /* conv_isolated_layout_3021.hlo: f32[16,28,28,128]{3,0,2,1} is stored as
   * [28,28,16,128] with labels 01bf. */
  optic_conv_desc d = kt_conv_desc("b01f_01oi->b01f", 4, (int64_t[]){16, 28, 28, 128}, (int64_t[]){3, 3, 128, 128});
  d.pad_lo[0] = d.pad_hi[0] = d.pad_lo[1] = d.pad_hi[1] = 1;
  optic_conv_desc p;
  OT_EXPECT_OK(
      optic_conv_apply_layouts(&d, (int64_t[]){3, 0, 2, 1}, (int64_t[]){3, 2, 1, 0}, (int64_t[]){3, 0, 2, 1}, &p));
  OT_CHECK(p.input.dims[0] == 28 && p.input.dims[1] == 28 && p.input.dims[2] == 16 && p.input.dims[3] == 128);
  OT_CHECK(p.dn.in_batch == 2 && p.dn.in_feature == 3 && p.dn.in_spatial[0] == 0 && p.dn.in_spatial[1] == 1);
  OT_CHECK(p.dn.out_batch == 2 && p.dn.out_feature == 3 && p.dn.k_out == 2 && p.dn.k_in == 3);
  expect_shape(&p, 4, (int64_t[]){28, 28, 16, 128});
  OT_EXPECT_STATUS(optic_conv_apply_layouts(&d, (int64_t[]){3, 0, 0, 1}, NULL, NULL, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "input layout is not a permutation") != NULL, "%s", optic_last_error());
}

typedef struct bad_case {
  const char *what;
  optic_status status;
  const char *message;
} bad_case;

static void test_invalid(void) {
  static const bad_case cases[] = {
      {"features", OPTIC_ERR_SHAPE_MISMATCH,
       "input feature dim has size 3 but kernel input feature dim has size 4 (feature_group_count 1)"},
      {"groups_features", OPTIC_ERR_SHAPE_MISMATCH, "(feature_group_count 2)"},
      {"groups_out", OPTIC_ERR_SHAPE_MISMATCH, "not a multiple of feature_group_count 2"},
      {"both_groups", OPTIC_ERR_INVALID_ARGUMENT, "cannot both exceed 1"},
      {"batch_groups", OPTIC_ERR_SHAPE_MISMATCH, "input batch dim has size 2, not a multiple of batch_group_count 4"},
      {"zero_groups", OPTIC_ERR_INVALID_ARGUMENT, "must be >= 1"},
      {"stride", OPTIC_ERR_INVALID_ARGUMENT, "spatial dim 1 has stride 0"},
      {"dilation", OPTIC_ERR_INVALID_ARGUMENT, "lhs_dilation -1"},
      {"window", OPTIC_ERR_INVALID_ARGUMENT, "window (kernel spatial dim 0, shape dim 0) has size 0"},
      {"rank", OPTIC_ERR_SHAPE_MISMATCH, "need rank-4 operands; input has rank 3"},
      {"roles", OPTIC_ERR_INVALID_ARGUMENT, "output dim 3 is given two roles"},
      {"range", OPTIC_ERR_INVALID_ARGUMENT, "kernel input feature dim number 7 is outside rank 4"},
      {"overflow", OPTIC_ERR_OVERFLOW, "overflows"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 5, 5, 3}, (int64_t[]){3, 3, 3, 8});
    const char *w = cases[i].what;
    if (!strcmp(w, "features")) d.kernel.dims[2] = 4;
    if (!strcmp(w, "groups_features")) d.feature_group_count = 2, d.input.dims[3] = 6, d.kernel.dims[2] = 4;
    if (!strcmp(w, "groups_out")) d.feature_group_count = 2, d.input.dims[3] = 6, d.kernel.dims[3] = 7;
    if (!strcmp(w, "both_groups")) d.feature_group_count = 3, d.batch_group_count = 2, d.input.dims[3] = 9;
    if (!strcmp(w, "batch_groups")) d.batch_group_count = 4;
    if (!strcmp(w, "zero_groups")) d.feature_group_count = 0;
    if (!strcmp(w, "stride")) d.stride[1] = 0;
    if (!strcmp(w, "dilation")) d.lhs_dilation[0] = -1;
    if (!strcmp(w, "window")) d.kernel.dims[0] = 0;
    if (!strcmp(w, "rank")) d.input.rank = 3;
    if (!strcmp(w, "roles")) d.dn.out_spatial[1] = 3;
    if (!strcmp(w, "range")) d.dn.k_in = 7;
    if (!strcmp(w, "overflow")) d.pad_hi[0] = INT64_MAX - 2;
    optic_shape s;
    OT_EXPECT_STATUS(optic_conv_infer_shape(&d, &s), cases[i].status);
    OT_CHECK(strstr(optic_last_error(), cases[i].message) != NULL, "%s: message '%s' lacks '%s'", w, optic_last_error(),
             cases[i].message);
    float x = 0;
    OT_EXPECT_STATUS(optic_ref_f32_conv(&d, &x, &x, &x), cases[i].status);
  }
}

/* StableHLO spec example: stride 4, lhs_dilation 2, 3x3 window of ones. */
static void test_ref_spec_example(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){1, 4, 4, 1}, (int64_t[]){3, 3, 1, 1});
  d.stride[0] = d.stride[1] = 4;
  d.lhs_dilation[0] = d.lhs_dilation[1] = 2;
  const float in[16] = {1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17};
  float k[9], out[4];
  for (int i = 0; i < 9; i++) k[i] = 1;
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in, k, out));
  expect_floats(out, (const float[]){10, 26, 46, 62}, 4, "out");
}

/* 1-D, window [1, 10], pad 1_0: out[y] = in[y-1] + 10 in[y]; reversed, the
 * window is [10, 1]. Gradients for grad_output of ones by hand. */
static void test_ref_1d(void) {
  optic_conv_desc d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){1, 4, 1}, (int64_t[]){2, 1, 1});
  d.pad_lo[0] = 1;
  const float in[4] = {1, 2, 3, 4}, k[2] = {1, 10}, ones[4] = {1, 1, 1, 1};
  float out[4], gi[4], gk[2];
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in, k, out));
  expect_floats(out, (const float[]){10, 21, 32, 43}, 4, "out");
  OT_EXPECT_OK(optic_ref_f32_conv_backward_input(&d, ones, k, gi));
  expect_floats(gi, (const float[]){11, 11, 11, 10}, 4, "grad_input");
  OT_EXPECT_OK(optic_ref_f32_conv_backward_kernel(&d, in, ones, gk));
  expect_floats(gk, (const float[]){6, 10}, 2, "grad_kernel");
  d.reverse[0] = true;
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in, k, out));
  expect_floats(out, (const float[]){1, 12, 23, 34}, 4, "reversed out");
  /* rhs dilation 2: out[y] = in[y] + in[y+2] */
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){1, 5, 1}, (int64_t[]){2, 1, 1});
  d.rhs_dilation[0] = 2;
  const float in5[5] = {1, 2, 3, 4, 5}, k11[2] = {1, 1};
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in5, k11, out));
  expect_floats(out, (const float[]){4, 6, 8}, 3, "rhs dilated out");
  /* negative padding crops: pad -1_-2 with a 1-wide window */
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){1, 5, 1}, (int64_t[]){1, 1, 1});
  d.pad_lo[0] = -1, d.pad_hi[0] = -2;
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in5, k11, out));
  expect_floats(out, (const float[]){2, 3}, 2, "cropped out");
}

/* Groups on a 0-D convolution (a matmul): feature groups pair input feature
 * g with output group g; batch groups pair input batch g with output group g. */
static void test_ref_groups(void) {
  optic_conv_desc d = kt_conv_desc("bf_io->bf", 2, (int64_t[]){1, 2}, (int64_t[]){1, 2});
  d.feature_group_count = 2;
  const float in[2] = {3, 5}, k[2] = {2, 7};
  float out[2], gi[2], gk[2];
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in, k, out));
  expect_floats(out, (const float[]){6, 35}, 2, "feature groups");
  OT_EXPECT_OK(optic_ref_f32_conv_backward_input(&d, (const float[]){1, 2}, k, gi));
  expect_floats(gi, (const float[]){2, 14}, 2, "feature groups grad_input");
  OT_EXPECT_OK(optic_ref_f32_conv_backward_kernel(&d, in, (const float[]){1, 2}, gk));
  expect_floats(gk, (const float[]){3, 10}, 2, "feature groups grad_kernel");
  d = kt_conv_desc("bf_io->bf", 2, (int64_t[]){2, 1}, (int64_t[]){1, 2});
  d.batch_group_count = 2;
  OT_EXPECT_OK(optic_ref_f32_conv(&d, in, k, out));
  expect_floats(out, (const float[]){6, 35}, 2, "batch groups");
  OT_EXPECT_OK(optic_ref_f32_conv_backward_input(&d, (const float[]){1, 2}, k, gi));
  expect_floats(gi, (const float[]){2, 14}, 2, "batch groups grad_input");
}

static const ot_case cases[] = {
    {"parse_labels", test_parse_labels},
    {"infer_shapes", test_infer_shapes},
    {"apply_layouts", test_apply_layouts},
    {"invalid", test_invalid},
    {"ref_spec_example", test_ref_spec_example},
    {"ref_1d", test_ref_1d},
    {"ref_groups", test_ref_groups},
};
OT_MAIN(cases)
