/* ISA-neutral part of the window-tap loops (kernels/conv_taps.h). */
#include "kernels/conv_taps.h"

const char *optic_conv_taps_unfit(const optic_conv_geom *g, optic_isa isa) {
  if ((isa != OPTIC_ISA_AVX512 && isa != OPTIC_ISA_AVX2) || !OPTIC_ARCH_X86_64)
    return "the selected ISA is neither avx512 nor avx2";
  if (g->nsp < 1 || g->nsp > 2) return "it needs 1 or 2 spatial dims";
  if (g->groups != 1) return "it has feature or batch groups";
  if (g->k_so != 1 && g->cout > 1) return "kernel output features are not contiguous";
  if (g->out_so != 1 && g->cout > 1) return "output features are not contiguous";
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->lhs_dil[s] != 1) return "lhs (input) dilation is not 1";
  }
  return NULL;
}

bool optic_conv_taps_preferred(const optic_conv_geom *g) {
  int64_t taps = 1, positions = g->batch;
  for (int32_t s = 0; s < g->nsp; s++) taps *= g->k_size[s], positions *= g->out_size[s];
  /* Each position re-reads the whole kernel operand: with many positions
   * (a kernel gradient of many input features) im2col + GEMM wins, measured
   * 1.8-4.5x at 576 positions (bench kernel/conv_class/dkernel_nhwc*). */
  return taps >= 16 && positions <= taps && positions <= 64;
}

void optic_conv_taps_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                         int64_t u1) {
#if OPTIC_ARCH_X86_64
  if (p->loops_isa == OPTIC_ISA_AVX512) {
    optic_conv_taps_avx512(p, input, kernel, output, u0, u1);
  } else {
    optic_conv_taps_avx2(p, input, kernel, output, u0, u1);
  }
#else
  (void)p, (void)input, (void)kernel, (void)output, (void)u0, (void)u1; /* never planned off x86-64 */
#endif
}
