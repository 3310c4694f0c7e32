/* The kernel families the kernels suite benchmarks. Each family has one file
 * here, bench/kernels/<family>.c, that expands its X-macro list
 * (kernels/list/<family>.inc) into benchmarks, so every list entry is
 * benchmarked: elementwise families through the elementwise harness (a
 * bench_elementwise table, as binary.c), the others through the parallel-slice
 * harness (bench/parallel.h). Adding a family: write that file, declare its
 * register function below and add it to kernel_bench.c. */
#ifndef OPTIC_BENCH_KERNEL_FAMILIES_H
#define OPTIC_BENCH_KERNEL_FAMILIES_H

#include <stddef.h>

#include "bench/elementwise.h"

/* Each registers "kernel/<family>/<function>/n:N/threads:T/real_time" for
 * every list entry whose ISA this CPU supports (plus named configurations,
 * "kernel/<family>/<function>/<config>/n:N/...", where a family has them). */
void bench_register_binary_kernels(void);
void bench_register_unary_kernels(void);
void bench_register_compare_kernels(void);
void bench_register_select_kernels(void);
void bench_register_clamp_kernels(void);
void bench_register_chain_kernels(void);
void bench_register_convert_kernels(void);
void bench_register_reduce_kernels(void);
void bench_register_layout_kernels(void);
void bench_register_optim_kernels(void);
/* Not a list family: optic's planned convolution on the layers of
 * bench/conv_layers.h, "kernel/conv/<layer>/threads:T/real_time". */
void bench_register_conv_kernels(void);
/* Every convolution class the runtime can be handed, each next to the GEMM
 * its strategy reduces to: "kernel/conv_class/<class>/{plan,gemm}/...". */
void bench_register_conv_class_kernels(void);
void bench_register_dot_kernels(void);
/* dot_general dimension-number classes next to plain sgemm:
 * "kernel/dot_class/<class>/{plan,gemm}/...". */
void bench_register_dot_class_kernels(void);
/* bf16 GEMM per bf16 kernel, "kernel/dot_bf16/<kernel>/m:M/n:N/k:K/threads:T/real_time". */
void bench_register_dot_bf16_kernels(void);
/* bf16 convolution on the bf16 GEMM, "kernel/conv_bf16/<kernel>/<layer>/threads:T/real_time". */
void bench_register_conv_bf16_kernels(void);

/* Registers every entry of an elementwise table under "kernel/<family>". */
void bench_register_elementwise_table(const char *family, const bench_elementwise *entries, size_t count);

#endif
