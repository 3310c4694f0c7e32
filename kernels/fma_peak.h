/* FMA peak loops, the compute bound that `optic calibrate` measures and the
 * benchmark peer peer/fma_peak runs: one loop per ISA, each in that ISA's
 * folder so it gets that ISA's flags only. Each runs `reps` rounds of
 * independent multiply-adds on accumulators held in registers, enough of them
 * to cover FMA latency times throughput (Zen 4/5 and Skylake-X: 4 cycles x 2
 * per cycle = 8 in flight), and returns a sum of the accumulators so nothing
 * is optimized away. Never allocates, never spawns threads; call a loop only
 * when optic_isa_supported(loop->isa). */
#ifndef OPTIC_KERNELS_FMA_PEAK_H
#define OPTIC_KERNELS_FMA_PEAK_H

#include <stddef.h>
#include <stdint.h>

#include <optic/core.h>

/* Floating-point operations per rep: accumulators x lanes x 2 (mul + add). */
#define OPTIC_FMA_SCALAR_ACCUMULATORS 8
#define OPTIC_FMA_SCALAR_FLOPS_PER_REP (OPTIC_FMA_SCALAR_ACCUMULATORS * 2)
#define OPTIC_FMA_AVX2_ACCUMULATORS 12
#define OPTIC_FMA_AVX2_FLOPS_PER_REP (OPTIC_FMA_AVX2_ACCUMULATORS * 8 * 2)
#define OPTIC_FMA_AVX512_ACCUMULATORS 16
#define OPTIC_FMA_AVX512_FLOPS_PER_REP (OPTIC_FMA_AVX512_ACCUMULATORS * 16 * 2)

/* Plain C multiply-adds (the compiler may or may not contract or vectorize
 * them: the figure is what the portable build reaches). */
float optic_fma_peak_scalar(uint64_t reps);
float optic_fma_peak_avx2(uint64_t reps);
float optic_fma_peak_avx512(uint64_t reps);

typedef struct optic_fma_peak_loop {
  optic_isa isa;
  float (*run)(uint64_t reps);
  double flops_per_rep;
} optic_fma_peak_loop;

/* Every loop built for this architecture, scalar first, then in increasing
 * ISA order; *count gets their number. Static storage. */
const optic_fma_peak_loop *optic_fma_peak_loops(size_t *count);

#endif
