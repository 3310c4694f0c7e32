/* Benchmark table of the compare family, generated from its X-macro list
 * (kernels/list/compare.inc): y = a op b (read 2 floats, write 1 byte: 9 bytes
 * per element) and y = a op s (5 bytes). Calls kernels only through their
 * declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/compare.h"

/* Inside the inputs' range [1, 2), so about half the predicates are true. */
static const float threshold = 1.5f;

static void call_vv(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vcompare_fn)fn)(n, arrays[0], arrays[1], arrays[2]);
}

static void call_vs(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vcomparec_fn)fn)(n, arrays[0], threshold, arrays[1]);
}

static const bench_elementwise entries[] = {
#define X_VV(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vv,           \
   .inputs = 2,               \
   .outputs = 1,              \
   .bytes_per_element = 9.0,  \
   .types = {BENCH_F32, BENCH_F32, BENCH_U8}},
#define X_VS(op_, isa_, fn_)  \
  {.function = #fn_,          \
   .isa = OPTIC_ISA_##isa_,   \
   .fn = (void (*)(void))fn_, \
   .call = call_vs,           \
   .inputs = 1,               \
   .outputs = 1,              \
   .bytes_per_element = 5.0,  \
   .types = {BENCH_F32, BENCH_U8}},
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
};

void bench_register_compare_kernels(void) {
  bench_register_elementwise_table("compare", entries, sizeof entries / sizeof *entries);
}
