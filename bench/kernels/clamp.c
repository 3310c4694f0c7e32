/* Benchmark table of the clamp family, generated from its X-macro list
 * (kernels/list/clamp.inc): y = min(max(x, lo), hi) with array bounds (read 3
 * floats, write 1: 16 bytes per element) or scalar bounds (8 bytes). Calls
 * kernels only through their declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/clamp.h"

/* Inside the inputs' range [1, 2), so both bounds clip some elements. */
static const float lo_bound = 1.25f, hi_bound = 1.75f;

static void call_vv(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vclamp_fn)fn)(n, arrays[0], arrays[1], arrays[2], arrays[3]);
}

static void call_vs(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vclampc_fn)fn)(n, arrays[0], lo_bound, hi_bound, arrays[1]);
}

static const bench_elementwise entries[] = {
#define X_VV(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vv,           \
   .inputs = 3,               \
   .outputs = 1,              \
   .bytes_per_element = 16.0},
#define X_VS(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vs,           \
   .inputs = 1,               \
   .outputs = 1,              \
   .bytes_per_element = 8.0},
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
};

void bench_register_clamp_kernels(void) {
  bench_register_elementwise_table("clamp", entries, sizeof entries / sizeof *entries);
}
