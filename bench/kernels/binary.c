/* Benchmark table of the binary f32 family, generated from its X-macro list
 * (kernels/list/binary.inc): every (op, ISA) entry, y = a op b moving 12
 * bytes per element and y = a op s moving 8. Calls kernels only through their
 * declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/binary.h"

static void call_vv(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vbinary_fn)fn)(n, arrays[0], arrays[1], arrays[2]);
}

static void call_vs(void (*fn)(void), size_t n, void *const *arrays, float s) {
  ((optic_f32_vbinaryc_fn)fn)(n, arrays[0], s, arrays[1]);
}

static const bench_elementwise entries[] = {
#define X_VV(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vv,           \
   .inputs = 2,               \
   .outputs = 1,              \
   .bytes_per_element = 12.0},
#define X_VS(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vs,           \
   .inputs = 1,               \
   .outputs = 1,              \
   .bytes_per_element = 8.0},
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
};

void bench_register_binary_kernels(void) {
  bench_register_elementwise_table("binary", entries, sizeof entries / sizeof *entries);
}
