/* The kernels suite: every entry of every family's X-macro list, registered as
 * "kernel/<family>/<function>/n:N/threads:T/real_time" (elementwise families
 * through the same harness as the STREAM peers), and optic's convolution.
 * Entries whose ISA this CPU lacks are left out. */
#include <stdio.h>

#include "bench/bench_util.h"
#include "bench/kernels/kernel_families.h"

void bench_register_elementwise_table(const char *family, const bench_elementwise *entries, size_t count) {
  /* Its own buffer: bench_register_elementwise formats names with bench_name. */
  char prefix[64];
  snprintf(prefix, sizeof prefix, "kernel/%s", family);
  for (size_t i = 0; i < count; i++) bench_register_elementwise(prefix, &entries[i]);
}

void bench_register_kernels(void) {
  static void (*const families[])(void) = {
      bench_register_binary_kernels,    bench_register_unary_kernels,     bench_register_compare_kernels,
      bench_register_select_kernels,    bench_register_clamp_kernels,     bench_register_chain_kernels,
      bench_register_convert_kernels,   bench_register_reduce_kernels,    bench_register_layout_kernels,
      bench_register_optim_kernels,     bench_register_conv_kernels,      bench_register_conv_class_kernels,
      bench_register_dot_kernels,       bench_register_dot_class_kernels, bench_register_dot_bf16_kernels,
      bench_register_conv_bf16_kernels,
  };
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) families[f]();
}
