/* The table of FMA peak loops built for this architecture (kernels/fma_peak.h).
 * Generic file: no ISA flags; it only names the per-ISA functions. */
#include "kernels/fma_peak.h"

#include "kernels/common.h"

static const optic_fma_peak_loop loops[] = {
    {OPTIC_ISA_SCALAR, optic_fma_peak_scalar, OPTIC_FMA_SCALAR_FLOPS_PER_REP},
#if OPTIC_ARCH_X86_64
    {OPTIC_ISA_AVX2, optic_fma_peak_avx2, OPTIC_FMA_AVX2_FLOPS_PER_REP},
    {OPTIC_ISA_AVX512, optic_fma_peak_avx512, OPTIC_FMA_AVX512_FLOPS_PER_REP},
#endif
};

const optic_fma_peak_loop *optic_fma_peak_loops(size_t *count) {
  if (count) *count = sizeof loops / sizeof loops[0];
  return loops;
}
