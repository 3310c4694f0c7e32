/* bf16 convolutions through the runtime (optic_compile + optic_program_run,
 * levels NONE and FULL, 1 and 2 threads) against the naive evaluator: on the
 * bf16 kernels where the runtime picks them (kernels/conv_bf16.h: AMX, or
 * the vdpbf16ps direct rows for NHWC with even feature counts >= 16),
 * depthwise ones read in place by the grouped vector loops (avx512), else
 * widened to f32. Each module runs uncapped and under OPTIC_ISA=scalar,
 * avx2 and avx512, set by the test itself (setenv + optic_isa_reselect
 * before each compile), so both the bf16 kernel and the exact f32 fallback
 * run in one process. Inputs are small integers and halves (exec_util.h):
 * every partial sum is exact in f32 and the bf16 result rounds once in
 * every path, so any gather, layout, padding, group or rounding mistake
 * shows far above the tolerance (abs and rel 1e-5). */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/conv_bf16.h"
#include "tests/exec/exec_util.h"

static const char nhwc_s2[] =
    "HloModule nhwc_s2\n\nENTRY main {\n"
    "  x = bf16[3,9,8,33]{3,2,1,0} parameter(0)\n"
    "  w = bf16[3,3,33,17]{3,2,1,0} parameter(1)\n"
    "  ROOT c = bf16[3,5,4,17]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 "
    "pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
static const char nchw_f32[] =
    "HloModule nchw_f32\n\nENTRY main {\n"
    "  x = bf16[2,64,14,14]{3,2,1,0} parameter(0)\n"
    "  w = bf16[64,64,3,3]{3,2,1,0} parameter(1)\n"
    "  ROOT c = f32[2,64,14,14]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
    "dim_labels=bf01_oi01->bf01\n}\n";
static const char nhwc_direct[] =
    "HloModule nhwc_direct\n\nENTRY main {\n"
    "  x = bf16[2,10,15,32]{3,2,1,0} parameter(0)\n"
    "  w = bf16[3,3,32,40]{3,2,1,0} parameter(1)\n"
    "  ROOT c = f32[2,10,15,40]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
    "dim_labels=b01f_01io->b01f\n}\n";
static const char grouped_1x1[] =
    "HloModule grouped_1x1\n\nENTRY main {\n"
    "  x = bf16[1,7,7,32]{3,2,1,0} parameter(0)\n"
    "  w = bf16[1,1,16,48]{3,2,1,0} parameter(1)\n"
    "  ROOT c = bf16[1,7,7,48]{3,2,1,0} convolution(x, w), window={size=1x1}, "
    "dim_labels=b01f_01io->b01f, feature_group_count=2\n}\n";
static const char depthwise[] =
    "HloModule depthwise\n\nENTRY main {\n"
    "  x = bf16[1,16,12,12]{3,2,1,0} parameter(0)\n"
    "  w = bf16[16,1,3,3]{3,2,1,0} parameter(1)\n"
    "  ROOT c = bf16[1,16,12,12]{3,2,1,0} convolution(x, w), window={size=3x3 "
    "pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=16\n}\n";

static const char depthwise_nhwc[] =
    "HloModule depthwise_nhwc\n\nENTRY main {\n"
    "  x = bf16[2,9,7,53]{3,2,1,0} parameter(0)\n"
    "  w = bf16[3,3,1,53]{3,2,1,0} parameter(1)\n"
    "  ROOT c = f32[2,15,7,53]{3,2,1,0} convolution(x, w), window={size=3x3 "
    "pad=4_4x2_2 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=53\n}\n";

static void run_text(const char *name, const char *text) {
  static const char *const caps[] = {NULL, "scalar", "avx2", "avx512"};
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  for (int i = 0; i < 4; i++) {
    if (i == 2 && optic_isa_best() < OPTIC_ISA_AVX2) continue;
    if (i == 3 && optic_isa_best() < OPTIC_ISA_AVX512) continue;
    if (caps[i]) setenv("OPTIC_ISA", caps[i], 1);
    optic_isa_reselect();
    optic_bf16_kernel k = optic_conv_bf16_kernel();
    bool vdp = optic_isa_selected() == OPTIC_ISA_AVX512 && optic_dot_bf16_kernel_usable(OPTIC_BF16_AVX512);
    OT_CHECK(caps[i] == NULL || k == (vdp ? OPTIC_BF16_AVX512 : OPTIC_BF16_NONE), "%s: OPTIC_ISA=%s picks %s", name,
             caps[i], optic_dot_bf16_kernel_name(k));
    if (caps[i] == NULL) {
      optic_bf16_kernel want = optic_dot_bf16_kernel() == OPTIC_BF16_AMX ? OPTIC_BF16_AMX
                               : vdp                                     ? OPTIC_BF16_AVX512
                                                                         : OPTIC_BF16_NONE;
      OT_CHECK(k == want, "%s: the convolution picks %s, not %s", name, optic_dot_bf16_kernel_name(k),
               optic_dot_bf16_kernel_name(want));
    }
    char label[128];
    snprintf(label, sizeof label, "%s, OPTIC_ISA=%s, conv kernel %s", name, caps[i] ? caps[i] : "(unset)",
             optic_dot_bf16_kernel_name(k));
    printf("  %s\n", label);
    bool ok = ex_check_module(m, 7, 1e-5, 1e-5, label);
    unsetenv("OPTIC_ISA");
    optic_isa_reselect();
    if (!ok) {
      fprintf(stderr, "  reproduce: exec_bf16_conv %s\n", name);
      break;
    }
  }
  optic_module_destroy(m);
}

static void nhwc_stride2_bf16(void) { run_text("nhwc_stride2_bf16", nhwc_s2); }
static void nchw_f32_result(void) { run_text("nchw_f32_result", nchw_f32); }
static void grouped_1x1_bf16(void) { run_text("grouped_1x1_bf16", grouped_1x1); }
static void nhwc_direct_f32(void) { run_text("nhwc_direct_f32", nhwc_direct); }
static void depthwise_widened(void) { run_text("depthwise_widened", depthwise); }
static void depthwise_nhwc_f32(void) { run_text("depthwise_nhwc_f32", depthwise_nhwc); }

static const ot_case cases[] = {
    {"nhwc_stride2_bf16", nhwc_stride2_bf16},   {"nchw_f32_result", nchw_f32_result},
    {"grouped_1x1_bf16", grouped_1x1_bf16},     {"depthwise_widened", depthwise_widened},
    {"depthwise_nhwc_f32", depthwise_nhwc_f32}, {"nhwc_direct_f32", nhwc_direct_f32},
};

OT_MAIN(cases)
