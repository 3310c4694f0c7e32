/* ISA-neutral part of the direct forward convolution: whether it can run a
 * geometry, whether the automatic plan should prefer it, its work units, and
 * the call into the ISA's loops. */
#include "kernels/conv_direct.h"

const char *optic_conv_direct_unfit(const optic_conv_geom *g, optic_isa isa) {
  if (isa != OPTIC_ISA_AVX512 || !OPTIC_ARCH_X86_64) return "the selected ISA is not avx512";
  if (g->nsp < 1 || g->nsp > 2) return "it needs 1 or 2 spatial dims";
  if (g->in_sc != 1 && g->cin > 1) return "input features are not contiguous";
  if (g->k_so != 1 && g->cout > 1) return "kernel output features are not contiguous";
  if (g->out_so != 1 && g->cout > 1) return "output features are not contiguous";
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->lhs_dil[s] != 1) return "lhs (input) dilation is not 1";
  }
  return NULL;
}

bool optic_conv_direct_preferred(const optic_conv_geom *g) {
  /* Measured single-threaded against im2col + OpenBLAS on NHWC layers (see
   * docs/kernels-conv.md): direct wins 1.1-4.6x for windows of more than one
   * tap with >= 16 output features, most where few input features make the
   * GEMM thin (3 or 4: 3-4x), and stays >= 1.0x on deep layers (7x7 and 14x14
   * images, 512-1024 features) thanks to input-feature blocking. It loses
   * with one input feature (0.8x), below 16 output features (0.6-1.0x) and
   * for 1x1 windows with wide outputs (0.76-0.95x against a plain GEMM). */
  int64_t taps = 1;
  for (int32_t s = 0; s < g->nsp; s++) taps *= g->k_size[s];
  return taps > 1 && g->cout >= 16 && g->cin >= 2;
}

/* Bytes of the kernel slice (taps x input-feature block x 64 output
 * features) the loops keep reusing: half the 1 MiB L2 of the benchmark
 * machine, leaving room for the input rows and the output. */
#define DIRECT_KERNEL_SLICE_BYTES ((int64_t)512 * 1024)

int64_t optic_conv_direct_cin_block(const optic_conv_geom *g) {
  int64_t taps = 1;
  for (int32_t s = 0; s < g->nsp; s++) taps *= g->k_size[s];
  int64_t per_feature = taps * 64 * (int64_t)sizeof(float);
  int64_t block = DIRECT_KERNEL_SLICE_BYTES / (per_feature > 0 ? per_feature : 1);
  if (block < 1) block = 1;
  return block < g->cin ? block : (g->cin > 0 ? g->cin : 1);
}

int64_t optic_conv_direct_units(const optic_conv_geom *g) {
  int64_t rows = g->nsp == 2 ? g->out_size[0] : 1;
  return g->groups * g->batch * rows;
}

void optic_conv_direct_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                           int64_t u1) {
#if OPTIC_ARCH_X86_64
  optic_conv_direct_rows_avx512(p, input, kernel, output, u0, u1);
#else
  (void)p, (void)input, (void)kernel, (void)output, (void)u0, (void)u1; /* never planned off x86-64 */
#endif
}
