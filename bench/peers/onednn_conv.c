/* The convolution peer: oneDNN (benchmark-only dependency, Debian libdnnl-dev)
 * forward inference, direct algorithm, f32, layouts of oneDNN's choosing, on
 * ResNet-50 layers, at 1 and 2 OpenMP threads; GFLOP/s = 2*N*K*C*R*S*OH*OW
 * per call. optic's convolution is measured against these figures. Compiled
 * only when oneDNN is found; restores the OpenMP thread count it changes. */
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_util.h"
#include "bench/conv_layers.h"
#include "core/unconst.h"

typedef struct conv_run {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_memory_t mem[3]; /* src, weights, dst */
} conv_run;

static void conv_run_destroy(conv_run *r) {
  for (int i = 0; i < 3; i++) {
    if (r->mem[i]) dnnl_memory_destroy(r->mem[i]);
  }
  if (r->prim) dnnl_primitive_destroy(r->prim);
  if (r->pd) dnnl_primitive_desc_destroy(r->pd);
  if (r->stream) dnnl_stream_destroy(r->stream);
  if (r->engine) dnnl_engine_destroy(r->engine);
}

/* Builds the primitive and its memories (filled with values in [1, 2)); the
 * failing step's name, or NULL on success. */
static const char *conv_run_create(conv_run *r, const bench_conv_layer *l) {
  int64_t oh = bench_conv_out_h(l), ow = bench_conv_out_w(l);
  dnnl_dims_t src_dims = {l->n, l->c, l->h, l->w}, wei_dims = {l->k, l->c, l->r, l->s};
  dnnl_dims_t dst_dims = {l->n, l->k, oh, ow}, strides = {1, 1}, pad = {l->pad, l->pad};
  dnnl_memory_desc_t src_md, wei_md, dst_md;
  dnnl_convolution_desc_t cd;
  if (dnnl_engine_create(&r->engine, dnnl_cpu, 0) != dnnl_success) return "dnnl_engine_create";
  if (dnnl_stream_create(&r->stream, r->engine, dnnl_stream_default_flags) != dnnl_success) return "dnnl_stream_create";
  if (dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
      dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
      dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success) {
    return "dnnl_memory_desc_init_by_tag";
  }
  if (dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &wei_md, NULL,
                                         &dst_md, strides, pad, pad) != dnnl_success) {
    return "dnnl_convolution_forward_desc_init";
  }
  if (dnnl_primitive_desc_create(&r->pd, &cd, NULL, r->engine, NULL) != dnnl_success)
    return "dnnl_primitive_desc_create";
  const dnnl_query_t what[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
  for (int i = 0; i < 3; i++) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(r->pd, what[i], 0);
    if (md == NULL || dnnl_memory_create(&r->mem[i], md, r->engine, DNNL_MEMORY_ALLOCATE) != dnnl_success) {
      return "dnnl_memory_create";
    }
    void *data = NULL;
    if (dnnl_memory_get_data_handle(r->mem[i], &data) != dnnl_success || data == NULL)
      return "dnnl_memory_get_data_handle";
    float *f = data;
    size_t count = dnnl_memory_desc_get_size(md) / sizeof(float);
    for (size_t j = 0; j < count; j++) f[j] = 1.0f + (float)(j % 1021) / 1040.0f;
  }
  if (dnnl_primitive_create(&r->prim, r->pd) != dnnl_success) return "dnnl_primitive_create";
  return NULL;
}

static void run_conv(optic_bench_state *st, void *user) {
  const bench_conv_layer *l = user;
  int threads = (int)optic_bench_range(st, 0);
  int saved = omp_get_max_threads();
  /* oneDNN's OpenMP runtime sizes its work split when the primitive is made. */
  omp_set_num_threads(threads);
  conv_run r;
  memset(&r, 0, sizeof r);
  const char *failed = conv_run_create(&r, l);
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, NULL}, {DNNL_ARG_WEIGHTS, NULL}, {DNNL_ARG_DST, NULL}};
  for (int i = 0; i < 3; i++) args[i].memory = r.mem[i];
  /* Untimed call: JIT code and scratchpad are ready before timing. */
  if (failed == NULL && (dnnl_primitive_execute(r.prim, r.stream, 3, args) != dnnl_success ||
                         dnnl_stream_wait(r.stream) != dnnl_success)) {
    failed = "dnnl_primitive_execute";
  }
  while (failed == NULL && optic_bench_keep_running(st)) {
    if (dnnl_primitive_execute(r.prim, r.stream, 3, args) != dnnl_success ||
        dnnl_stream_wait(r.stream) != dnnl_success) {
      failed = "dnnl_primitive_execute";
    }
  }
  const char *impl = NULL;
  if (r.pd != NULL) dnnl_primitive_desc_query(r.pd, dnnl_query_impl_info_str, 0, &impl);
  char label[128];
  snprintf(label, sizeof label, "%s", impl != NULL ? impl : "unknown");
  conv_run_destroy(&r);
  omp_set_num_threads(saved);
  if (failed != NULL) {
    char msg[160];
    snprintf(msg, sizeof msg, "onednn_conv: %s failed", failed);
    optic_bench_skip_with_error(st, msg);
    while (optic_bench_keep_running(st)) {}
    return;
  }
  bench_report_rates(st, 0.0, bench_conv_flops(l));
  optic_bench_set_label(st, label);
}

void bench_register_onednn_conv(void) {
  for (size_t i = 0; i < BENCH_CONV_LAYER_COUNT; i++) {
    optic_bench *b = optic_bench_register(bench_name("peer/onednn_conv/%s", bench_conv_layers[i].name), run_conv,
                                          OPTIC_UNCONST(void *, &bench_conv_layers[i]));
    OPTIC_BENCH_ARGS(b, 1);
    OPTIC_BENCH_ARGS(b, 2);
    OPTIC_BENCH_ARG_NAMES(b, "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_MS);
  }
}
