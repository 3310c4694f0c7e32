/* Shared by the convolution kernel tests: a descriptor from dim labels and
 * the input and kernel shapes (window defaults: stride 1, no padding). */
#ifndef OPTIC_TESTS_KERNELS_CONV_TEST_H
#define OPTIC_TESTS_KERNELS_CONV_TEST_H

#include "kernels/conv.h"
#include "tests/kernels/kernel_test.h"

static inline optic_conv_desc kt_conv_desc(const char *labels, int32_t rank, const int64_t *in, const int64_t *k) {
  optic_conv_desc d;
  optic_conv_desc_init(&d);
  OT_EXPECT_OK(optic_conv_parse_dim_labels(labels, &d.dn));
  OT_EXPECT_OK(optic_shape_make(rank, in, &d.input));
  OT_EXPECT_OK(optic_shape_make(rank, k, &d.kernel));
  return d;
}

#endif
