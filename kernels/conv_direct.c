/* ISA-neutral part of the direct forward convolution: whether it can run a
 * geometry, whether the automatic plan should prefer it, its packing and work
 * units, and the call into the ISA's loops. */
#include "kernels/conv_direct.h"

/* Bytes of one slice's ring of packed rows beyond which the direct strategy
 * is not planned (a very wide 1-D signal): im2col blocks run it instead. */
#define DIRECT_MAX_RING_BYTES ((int64_t)16 * 1024 * 1024)

/* Bytes of the kernel slice (taps x input-feature group x output features)
 * and of the ring that the loops keep reusing: half and a quarter
 * of the 2 MiB L2 of the benchmark machine. */
#define DIRECT_KERNEL_SLICE_BYTES ((int64_t)1024 * 1024)
#define DIRECT_RING_BYTES ((int64_t)512 * 1024)

static int64_t taps_of(const optic_conv_geom *g) {
  int64_t taps = 1;
  for (int32_t s = 0; s < g->nsp; s++) taps *= g->k_size[s];
  return taps;
}

/* The packing with `group` input features per pass (overflow is excluded by
 * the caller's size checks: every factor is bounded by an operand's size). */
static optic_conv_direct_packing packing_with(const optic_conv_geom *g, int64_t group) {
  optic_conv_direct_packing k = {0};
  const int32_t w = g->nsp - 1;
  k.span = g->nsp == 2 ? (g->k_size[0] - 1) * g->rhs_dil[0] + 1 : 1;
  k.phases = g->stride[w];
  k.wspan = g->out_size[w] > 0 ? (g->out_size[w] - 1) * g->stride[w] + (g->k_size[w] - 1) * g->rhs_dil[w] + 1 : 0;
  k.wq = (k.wspan + k.phases - 1) / k.phases;
  k.cin_group = group;
  int64_t blocks = (group + OPTIC_CONV_DIRECT_CB - 1) / OPTIC_CONV_DIRECT_CB;
  k.row_floats = blocks * k.phases * k.wq * OPTIC_CONV_DIRECT_CB;
  /* a tag (int64) per ring row, rounded to a 64-byte line */
  int64_t head = (2 * k.span + 15) / 16 * 16;
  k.floats = (size_t)(head + k.span * k.row_floats);
  return k;
}

optic_conv_direct_packing optic_conv_direct_packing_of(const optic_conv_geom *g) {
  const int64_t cb = OPTIC_CONV_DIRECT_CB;
  int64_t per_feature = taps_of(g) * (g->cout > 0 ? g->cout : 1) * (int64_t)sizeof(float);
  int64_t group = DIRECT_KERNEL_SLICE_BYTES / (per_feature > 0 ? per_feature : 1) / cb * cb;
  optic_conv_direct_packing one = packing_with(g, cb);
  int64_t ring_per_block = one.span * one.phases * one.wq * cb * (int64_t)sizeof(float);
  int64_t by_ring = DIRECT_RING_BYTES / (ring_per_block > 0 ? ring_per_block : 1) * cb;
  if (by_ring < group) group = by_ring;
  if (group < cb) group = cb;
  if (group >= g->cin) group = g->cin;
  return packing_with(g, group);
}

const char *optic_conv_direct_unfit(const optic_conv_geom *g, optic_isa isa) {
  if ((isa != OPTIC_ISA_AVX512 && isa != OPTIC_ISA_AVX2) || !OPTIC_ARCH_X86_64)
    return "the selected ISA is neither avx512 nor avx2";
  if (g->nsp < 1 || g->nsp > 2) return "it needs 1 or 2 spatial dims";
  if (g->in_sc != 1 && g->cin > 1) return "input features are not contiguous";
  if (g->k_so != 1 && g->cout > 1) return "kernel output features are not contiguous";
  if (g->out_so != 1 && g->cout > 1) return "output features are not contiguous";
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->lhs_dil[s] != 1) return "lhs (input) dilation is not 1";
  }
  /* the smallest ring (one feature block), in doubles: no overflow */
  const int32_t w = g->nsp - 1;
  double span = g->nsp == 2 ? (double)(g->k_size[0] - 1) * (double)g->rhs_dil[0] + 1.0 : 1.0;
  double wspan = (double)(g->out_size[w] > 0 ? g->out_size[w] - 1 : 0) * (double)g->stride[w] +
                 (double)(g->k_size[w] - 1) * (double)g->rhs_dil[w] + 1.0;
  double ring = span * (wspan + (double)g->stride[w]) * OPTIC_CONV_DIRECT_CB * sizeof(float);
  if (ring > (double)DIRECT_MAX_RING_BYTES) return "its packed input rows exceed 16 MiB";
  return NULL;
}

bool optic_conv_direct_preferred(const optic_conv_geom *g) {
  /* Measured single-threaded against im2col + OpenBLAS on NHWC layers (see
   * docs/kernels-conv.md): direct wins for windows of more than one tap with
   * >= 16 output features, most where few input features make the GEMM thin,
   * and stays ahead on deep layers (7x7 and 14x14 images, 512-1024 features)
   * thanks to input-feature groups. It loses with one input feature, below
   * 16 output features and for 1x1 windows (a plain GEMM). */
  return taps_of(g) > 1 && g->cout >= 16 && g->cin >= 2;
}

int64_t optic_conv_direct_units(const optic_conv_geom *g) {
  int64_t rows = g->nsp == 2 ? g->out_size[0] : 1;
  return g->groups * g->batch * rows;
}

void optic_conv_direct_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                           float *scratch, int64_t u0, int64_t u1) {
#if OPTIC_ARCH_X86_64
  if (p->loops_isa == OPTIC_ISA_AVX512) {
    optic_conv_direct_rows_avx512(p, input, kernel, output, scratch, u0, u1);
  } else {
    optic_conv_direct_rows_avx2(p, input, kernel, output, scratch, u0, u1);
  }
#else
  (void)p, (void)input, (void)kernel, (void)output, (void)scratch, (void)u0, (void)u1; /* never planned off x86-64 */
#endif
}
