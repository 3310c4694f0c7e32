/* Benchmark table of the binary f32 family, generated from its X-macro list
 * (kernels/list/binary.inc): every (op, ISA) entry, y = a op b moving 12
 * bytes per element and y = a op s moving 8. Calls kernels only through their
 * declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/binary.h"

static void call_vv(void (*fn)(void), size_t n, float *const *arrays, float s) {
  (void)s;
  ((optic_f32_vbinary_fn)fn)(n, arrays[0], arrays[1], arrays[2]);
}

static void call_vs(void (*fn)(void), size_t n, float *const *arrays, float s) {
  ((optic_f32_vbinaryc_fn)fn)(n, arrays[0], s, arrays[1]);
}

const bench_elementwise bench_binary_kernels[] = {
#define X_VV(op, isa, fn) {#fn, OPTIC_ISA_##isa, (void (*)(void))fn, call_vv, 2, 1, 12.0},
#define X_VS(op, isa, fn) {#fn, OPTIC_ISA_##isa, (void (*)(void))fn, call_vs, 1, 1, 8.0},
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
};

const size_t bench_binary_kernel_count = sizeof bench_binary_kernels / sizeof *bench_binary_kernels;
