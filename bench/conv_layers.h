/* The convolution layers optic's convolution and its peers (oneDNN, the same
 * GEMM alone) are measured on, so every benchmark of a layer uses one
 * definition. ResNet-50 stage-2 layers at batch 8 (He et al. 2015, table 1):
 * the 3x3 bottleneck conv (64 -> 64, pad 1) and the 1x1 expansion (64 -> 256),
 * 56x56, stride 1. Benchmark-only. */
#ifndef OPTIC_BENCH_CONV_LAYERS_H
#define OPTIC_BENCH_CONV_LAYERS_H

#include <stdint.h>

typedef struct bench_conv_layer {
  const char *name;
  int64_t n, c, k, h, w, r, s, pad;
} bench_conv_layer;

static const bench_conv_layer bench_conv_layers[] = {
    {"resnet50_3x3_n8_c64_k64_56x56_pad1", 8, 64, 64, 56, 56, 3, 3, 1},
    {"resnet50_1x1_n8_c64_k256_56x56", 8, 64, 256, 56, 56, 1, 1, 0},
};
enum { BENCH_CONV_LAYER_COUNT = sizeof bench_conv_layers / sizeof bench_conv_layers[0] };

static inline int64_t bench_conv_out_h(const bench_conv_layer *l) { return l->h + 2 * l->pad - l->r + 1; }
static inline int64_t bench_conv_out_w(const bench_conv_layer *l) { return l->w + 2 * l->pad - l->s + 1; }
/* The layer as one GEMM (NHWC input, HWIO kernel): [m x kk] x [kk x k]. */
static inline int64_t bench_conv_gemm_m(const bench_conv_layer *l) {
  return l->n * bench_conv_out_h(l) * bench_conv_out_w(l);
}
static inline int64_t bench_conv_gemm_k(const bench_conv_layer *l) { return l->c * l->r * l->s; }
/* 2 * N * K * C * R * S * OH * OW: multiply-adds of the direct definition. */
static inline double bench_conv_flops(const bench_conv_layer *l) {
  return 2.0 * (double)bench_conv_gemm_m(l) * (double)bench_conv_gemm_k(l) * (double)l->k;
}

#endif
