/* Shared by the tests that read HLO text: the reference modules in
 * tests/data/hlo that every parser test walks, the path of a data file,
 * reading one whole, and the print -> parse -> print round trip. */
#ifndef OPTIC_TESTS_HLO_FILES_H
#define OPTIC_TESTS_HLO_FILES_H

#include <optic/optic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"

/* The XLA reference modules (each file names its source and licence in its
 * first lines). */
static const char *const ot_reference_hlo[] = {
    "add_f32_2x2.hlo",
    "conv0d_as_matmul.hlo",
    "conv2d_nhwc_bias_relu.hlo",
    "conv_isolated_layout_3021.hlo",
    "conv_lhs_dilate_parse_only.hlo",
    "dot_batch_reordered_dims.hlo",
    "dot_batch_with_metadata.hlo",
    "dot_no_dnums_outer_product.hlo",
    "dot_reshape_divide.hlo",
    "dot_transpose_output.hlo",
    "one_matmul_train_step.hlo",
    "reduce_dim1_with_copy.hlo",
    "softmax_f32.hlo",
};
#define OT_REFERENCE_HLO_COUNT (sizeof ot_reference_hlo / sizeof ot_reference_hlo[0])

/* tests/data/hlo/NAME (OPTIC_TEST_SOURCE_DIR: tests/CMakeLists.txt). */
static inline void ot_hlo_data_path(const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/data/hlo/%s", OPTIC_TEST_SOURCE_DIR, name);
}

/* The whole file, NUL-terminated (free() it), and its length; NULL (and a
 * failed check) if it cannot be read. */
static inline char *ot_hlo_read(const char *name, size_t *len) {
  char path[1024];
  ot_hlo_data_path(name, path, sizeof path);
  FILE *f = fopen(path, "rb");
  OT_CHECK(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  char *text = calloc(1, 1 << 20);
  *len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
  fclose(f);
  return text;
}

/* Prints m, parses that print and prints again, and checks the two prints
 * are equal. Returns the first print (free it with optic_string_free). */
static inline char *ot_print_round_trip(const optic_module_t *m) {
  char *t1 = NULL, *t2 = NULL;
  optic_module_t *m2 = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &t1));
  if (t1) OT_EXPECT_OK(optic_module_from_hlo_text(t1, strlen(t1), &m2));
  if (m2) OT_EXPECT_OK(optic_module_to_hlo_text(m2, &t2));
  OT_CHECK(t1 && t2 && strcmp(t1, t2) == 0, "print -> parse -> print differs:\n%s\n---\n%s", t1 ? t1 : "",
           t2 ? t2 : "");
  optic_string_free(t2);
  optic_module_destroy(m2);
  return t1;
}

#endif
