/* The kernel families the kernels suite benchmarks. Each family has one file
 * here, bench/kernels/<family>.c, that turns its X-macro list
 * (kernels/list/<family>.inc) into a table of bench_elementwise entries, so
 * every list entry is benchmarked. Adding a family: write that file (copy
 * binary.c), declare its table below and add one line to kernel_bench.c. */
#ifndef OPTIC_BENCH_KERNEL_FAMILIES_H
#define OPTIC_BENCH_KERNEL_FAMILIES_H

#include <stddef.h>

#include "bench/elementwise.h"

extern const bench_elementwise bench_binary_kernels[];
extern const size_t bench_binary_kernel_count;

#endif
