/* Benchmark table of the select family, generated from its X-macro list
 * (kernels/list/select.inc): y = p[i] ? a : b reads a predicate byte and both
 * floats and writes one float (13 bytes per element, the predicates an
 * irregular 0/1 pattern); the scalar-predicate form copies one of a or b
 * (8 bytes). Calls kernels only through their declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/select.h"

static void call_vpred(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vselect_fn)fn)(n, arrays[0], arrays[1], arrays[2], arrays[3]);
}

static void call_spred(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_f32_vselect_spred_fn)fn)(n, 1, arrays[0], arrays[1], arrays[2]);
}

static const bench_elementwise entries[] = {
#define X_VPRED(op_, isa_, fn_) \
  {.function = #fn_,            \
   .isa = OPTIC_ISA_##isa_,     \
   .fn = (void (*)(void))fn_,   \
   .call = call_vpred,          \
   .inputs = 3,                 \
   .outputs = 1,                \
   .bytes_per_element = 13.0,   \
   .types = {BENCH_U8, BENCH_F32, BENCH_F32, BENCH_F32}},
#define X_SPRED(op_, isa_, fn_) \
  {.function = #fn_,            \
   .isa = OPTIC_ISA_##isa_,     \
   .fn = (void (*)(void))fn_,   \
   .call = call_spred,          \
   .inputs = 2,                 \
   .outputs = 1,                \
   .bytes_per_element = 8.0},
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
};

void bench_register_select_kernels(void) {
  bench_register_elementwise_table("select", entries, sizeof entries / sizeof *entries);
}
