/* FMA peak loops, one per ISA, each in its own file compiled with that ISA's
 * flags only (bench/CMakeLists.txt). Each runs `reps` rounds of independent
 * fused multiply-adds on accumulators held in registers, enough of them to
 * cover FMA latency times throughput (Zen 4/5 and Skylake-X: 4 cycles x 2
 * per cycle = 8 in flight), and returns a sum of the accumulators so nothing
 * is optimized away. Call only on a CPU that supports the ISA. */
#ifndef OPTIC_BENCH_FMA_LOOPS_H
#define OPTIC_BENCH_FMA_LOOPS_H

#include <stdint.h>

/* Floating-point operations per rep: accumulators x lanes x 2 (mul + add). */
#define BENCH_FMA_AVX2_ACCUMULATORS 12
#define BENCH_FMA_AVX2_FLOPS_PER_REP (BENCH_FMA_AVX2_ACCUMULATORS * 8 * 2)
#define BENCH_FMA_AVX512_ACCUMULATORS 16
#define BENCH_FMA_AVX512_FLOPS_PER_REP (BENCH_FMA_AVX512_ACCUMULATORS * 16 * 2)

float bench_fma_avx2(uint64_t reps);
float bench_fma_avx512(uint64_t reps);

#endif
