/* Benchmark table of the unary f32 family, generated from its X-macro list
 * (kernels/list/unary.inc): y = op(x), 8 bytes per element (read x, write y).
 * exp also reports GFLOP/s in flop-equivalents (below), the figure issue 3
 * compares with the FMA peak. Calls kernels only through their declared type. */
#include "bench/kernels/kernel_families.h"
#include "kernels/unary.h"

static void call_unary(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vunary_fn)fn)(n, arrays[0], arrays[1]);
}

/* Flop-equivalents per element: the floating-point arithmetic of optic's
 * SIMD exp (kernels/x86/avx512/unary_avx512.c exp16, the same in AVX2 and
 * NEON), counted as the FMA peak counts it: 9 FMAs (n = x log2e rounded via
 * the magic constant, 2 for r = x - n ln2 in two parts, 6 for the degree-6
 * polynomial) at 2 each, plus the subtract of the rounding constant and the
 * final scaling by 2^n at 1 each = 20. The clamps (min/max) are not counted.
 * Every ISA's exp entry reports elements/s x 20, also the scalar one (libm
 * expf, another algorithm): the figure says how fast exp is in units of the
 * vector algorithm's work. Other ops report no GFLOP/s. */
#define FLOPS_EXP 20.0
#define FLOPS_OTHER 0.0
#define FLOPS_NEG FLOPS_OTHER
#define FLOPS_ABS FLOPS_OTHER
#define FLOPS_LOG FLOPS_OTHER
#define FLOPS_SQRT FLOPS_OTHER
#define FLOPS_RSQRT FLOPS_OTHER
#define FLOPS_TANH FLOPS_OTHER
#define FLOPS_LOGISTIC FLOPS_OTHER
#define FLOPS_SIGN FLOPS_OTHER
#define FLOPS_FLOOR FLOPS_OTHER
#define FLOPS_CEIL FLOPS_OTHER
#define FLOPS_SQUARE FLOPS_OTHER
#define FLOPS_RELU FLOPS_OTHER
#define FLOPS_ERF FLOPS_OTHER
#define FLOPS_EXPM1 FLOPS_OTHER
#define FLOPS_LOG1P FLOPS_OTHER

/* XLA's transcendental count (graph/cost.c): exp, log, sqrt, rsqrt, tanh and
 * logistic are transcendental, the rest are not. */
#define TRANSC_EXP 1.0
#define TRANSC_LOG 1.0
#define TRANSC_SQRT 1.0
#define TRANSC_RSQRT 1.0
#define TRANSC_TANH 1.0
#define TRANSC_LOGISTIC 1.0
#define TRANSC_ERF 1.0
#define TRANSC_EXPM1 1.0
#define TRANSC_LOG1P 1.0
#define TRANSC_NEG 0.0
#define TRANSC_ABS 0.0
#define TRANSC_SIGN 0.0
#define TRANSC_FLOOR 0.0
#define TRANSC_CEIL 0.0
#define TRANSC_SQUARE 0.0
#define TRANSC_RELU 0.0

static const bench_elementwise entries[] = {
#define X(op_, isa_, fn_)            \
  {.function = #fn_,                 \
   .isa = OPTIC_ISA_##isa_,          \
   .fn = (void (*)(void))fn_,        \
   .call = call_unary,               \
   .inputs = 1,                      \
   .outputs = 1,                     \
   .bytes_per_element = 8.0,         \
   .flops_per_element = FLOPS_##op_, \
   .transcendentals_per_element = TRANSC_##op_},
#include "kernels/list/unary.inc"
#undef X
};

void bench_register_unary_kernels(void) {
  bench_register_elementwise_table("unary", entries, sizeof entries / sizeof *entries);
}
