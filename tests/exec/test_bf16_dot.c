/* Real bf16 modules through the runtime, where a dot of two bf16 operands
 * runs on the best bf16 kernel here (AMX-BF16, vdpbf16ps; the f32 fallback
 * under OPTIC_ISA=avx2, a second ctest entry), against the naive evaluator.
 * Inputs are small integers and halves, so every partial sum is exact in
 * f32 and the bf16 dot result rounds once in both: any layout, packing,
 * padding or rounding mistake shows as a difference far above the f32
 * epilogue tolerance (abs and rel 1e-5). */
#include <stdio.h>

#include "kernels/dot_bf16.h"
#include "tests/exec/exec_util.h"

static void run_file(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/data/hlo/realworld/%s", OPTIC_TEST_SOURCE_DIR, name);
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_file(path, &m));
  if (m == NULL) return;
  printf("  %s: bf16 dot kernel %s (ISA %s)\n", name, optic_dot_bf16_kernel_name(optic_dot_bf16_kernel()),
         optic_isa_name(optic_isa_selected()));
  ex_check_module(m, 11, 1e-5, 1e-5, name);
  optic_module_destroy(m);
}

static void dense_bias_gelu_erf_bf16(void) { run_file("dense_bias_gelu_erf_bf16.hlo"); }
static void dense_bias_elu_bf16(void) { run_file("dense_bias_elu_bf16.hlo"); }

static const ot_case cases[] = {
    {"dense_bias_gelu_erf_bf16", dense_bias_gelu_erf_bf16},
    {"dense_bias_elu_bf16", dense_bias_elu_bf16},
};

OT_MAIN(cases)
