/* The kernels suite: every entry of every family's X-macro list, registered as
 * "kernel/<family>/<function>/n:N/threads:T/real_time" through the same
 * elementwise harness as the STREAM peers. Entries whose ISA this CPU lacks
 * are left out. */
#include "bench/bench_util.h"
#include "bench/kernels/kernel_families.h"

static const struct {
  const char *prefix;
  const bench_elementwise *entries;
  const size_t *count;
} families[] = {
    {"kernel/binary", bench_binary_kernels, &bench_binary_kernel_count},
};

void bench_register_kernels(void) {
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
    for (size_t i = 0; i < *families[f].count; i++) bench_register_elementwise(families[f].prefix, &families[f].entries[i]);
  }
}
