/* Benchmark table of the chain family, generated from its X-macro list
 * (kernels/list/chain.inc): a layer norm's tail, y = (a * s) * g + b, as
 * one chain call (read 3 floats, write 1: 16 bytes per element; the binary
 * kernels take three passes for it). Calls kernels only through their
 * declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/chain.h"

static void call_chain(void (*fn)(void), size_t n, void *const *arrays, float s) {
  const optic_f32_chain_step steps[3] = {
      {.op = OPTIC_BINARY_MUL, .flags = OPTIC_CHAIN_ACC_FIRST | OPTIC_CHAIN_SCALAR, .s = s},
      {.op = OPTIC_BINARY_MUL, .flags = OPTIC_CHAIN_ACC_FIRST, .b = arrays[1]},
      {.op = OPTIC_BINARY_ADD, .flags = OPTIC_CHAIN_ACC_FIRST, .b = arrays[2]},
  };
  ((optic_f32_chain_fn)fn)(n, arrays[0], steps, 3, arrays[3], false);
}

static const bench_elementwise entries[] = {
#define X_CHAIN(op_, isa_, fn_) \
  {.function = #fn_,            \
   .isa = OPTIC_ISA_##isa_,     \
   .fn = (void (*)(void))fn_,   \
   .call = call_chain,          \
   .inputs = 3,                 \
   .outputs = 1,                \
   .bytes_per_element = 16.0},
#include "kernels/list/chain.inc"
#undef X_CHAIN
};

void bench_register_chain_kernels(void) {
  bench_register_elementwise_table("chain", entries, sizeof entries / sizeof *entries);
}
