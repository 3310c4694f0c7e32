/* pad and reduce-window through optic_program_run, each beside a peer doing
 * the same work as plain C in the same run:
 *  - exec/pad_interior/n:N/threads:1: f32[N,4,4,8] padded to f32[N,9,9,8]
 *    (edges 1 and interior 1 on the two middle dims, the upsampling a
 *    max-pool gradient pads with) vs peer/copy_bytes/n:N, one memcpy of the
 *    output's bytes: GB/s counts input + output bytes for the pad and
 *    2 x output bytes for the copy, so the ratio is the pad's share of a copy.
 *  - exec/maxpool2x2/n:N/threads:1: a 2x2 stride-2 max reduce-window on
 *    f32[N,8,8,8] (NHWC) vs peer/maxpool2x2_loop/n:N, the same pooling as a
 *    plain loop (same bytes counted for both: the GB/s ratio is the time
 *    ratio).
 * N = 16 (the convnet's size: per-run cost shows) and 256 (L2-sized).
 * Memory: measured and planned as bench/memory.h reports them; the time
 * estimate is the compiled program's (one run per iteration).
 * Compilation and binding are untimed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"
#include "bench/memory.h"
#include <optic/optic.h>

typedef struct window_case {
  optic_module_t *m;
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_tensor in, out;
} window_case;

static float *alloc_floats(size_t n) {
  float *p = NULL;
  if (posix_memalign((void **)&p, 64, (n ? n : 1) * sizeof *p)) return NULL;
  for (size_t i = 0; i < n; i++) p[i] = (float)(i % 13) * 0.25f - 1.5f;
  return p;
}

static void case_free(window_case *c) {
  optic_exec_ctx_destroy(c->ctx);
  optic_program_destroy(c->p);
  optic_module_destroy(c->m);
  free(c->in.data);
  free(c->out.data);
}

static bool case_make(optic_bench_state *st, window_case *c, const char *hlo) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  optic_compile_options co = optic_compile_options_default();
  co.threads = 1;
  if (optic_module_from_hlo_text(hlo, strlen(hlo), &c->m) != OPTIC_OK || optic_compile(c->m, &co, &c->p) != OPTIC_OK ||
      optic_exec_ctx_create(&eo, &c->ctx) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return false;
  }
  const optic_module_t *m = optic_program_module(c->p);
  optic_comp_id e = optic_program_entry(c->p);
  const optic_type *it = optic_node_type(m, optic_computation_parameter(m, e, 0));
  const optic_type *rt = optic_node_type(m, optic_computation_root(m, e));
  size_t ni = 1, no = 1;
  for (int32_t d = 0; d < it->shape.rank; d++) ni *= (size_t)it->shape.dims[d];
  for (int32_t d = 0; d < rt->shape.rank; d++) no *= (size_t)rt->shape.dims[d];
  c->in = (optic_tensor){OPTIC_F32, it->shape, alloc_floats(ni)};
  c->out = (optic_tensor){OPTIC_F32, rt->shape, alloc_floats(no)};
  if (c->in.data == NULL || c->out.data == NULL ||
      optic_program_run(c->p, c->ctx, &c->in, 1, &c->out, 1) != OPTIC_OK) { /* untimed: binding, arenas */
    optic_bench_skip_with_error(st, optic_last_error());
    return false;
  }
  return true;
}

static void run_case(optic_bench_state *st, const char *hlo, double bytes) {
  window_case c = {0};
  const double rss0 = bench_maxrss_bytes();
  if (case_make(st, &c, hlo)) {
    while (optic_bench_keep_running(st)) {
      if (optic_program_run(c.p, c.ctx, &c.in, 1, &c.out, 1) != OPTIC_OK) {
        optic_bench_skip_with_error(st, optic_last_error());
        break;
      }
    }
    bench_report_rates(st, bytes, 0);
    bench_report_memory(st, c.ctx, c.p, bench_tensor_bytes(&c.in, 1) + bench_tensor_bytes(&c.out, 1), rss0, 0);
    optic_program_summary s;
    if (optic_program_summary_get(c.p, &s) == OPTIC_OK) bench_report_estimate(st, s.est_ns, &s.cost);
  }
  case_free(&c);
}

static void run_pad(optic_bench_state *st, void *user) {
  (void)user;
  int64_t n = optic_bench_range(st, 0);
  char hlo[512];
  snprintf(hlo, sizeof hlo,
           "HloModule pad\n\nENTRY main {\n  x = f32[%lld,4,4,8] parameter(0)\n  z = f32[] constant(0)\n"
           "  ROOT p = f32[%lld,9,9,8] pad(x, z), padding=0_0x1_1_1x1_1_1x0_0\n}\n",
           (long long)n, (long long)n);
  run_case(st, hlo, 4.0 * (double)n * (128 + 648));
}

static void run_copy(optic_bench_state *st, void *user) {
  (void)user;
  size_t n = (size_t)optic_bench_range(st, 0) * 648;
  float *a = alloc_floats(n), *b = alloc_floats(n);
  if (a == NULL || b == NULL) {
    optic_bench_skip_with_error(st, "out of memory");
  } else {
    while (optic_bench_keep_running(st)) {
      memcpy(b, a, n * sizeof(float));
      optic_bench_do_not_optimize(b);
    }
    bench_report_rates(st, 8.0 * (double)n, 0);
  }
  free(a);
  free(b);
}

static void run_pool(optic_bench_state *st, void *user) {
  (void)user;
  int64_t n = optic_bench_range(st, 0);
  char hlo[640];
  snprintf(hlo, sizeof hlo,
           "HloModule pool\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY main {\n  x = f32[%lld,8,8,8] parameter(0)\n"
           "  ninf = f32[] constant(-inf)\n  ROOT r = f32[%lld,4,4,8] reduce-window(x, ninf), "
           "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n}\n",
           (long long)n, (long long)n);
  run_case(st, hlo, 4.0 * (double)n * (512 + 128));
}

/* The plain loop: y[b,i,j,c] = max over the 2x2 window of x (NHWC). */
static void pool_loop(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t b = 0; b < n; b++) {
    for (int64_t i = 0; i < 4; i++) {
      for (int64_t j = 0; j < 4; j++) {
        const float *p = x + ((b * 8 + 2 * i) * 8 + 2 * j) * 8;
        float *q = y + ((b * 4 + i) * 4 + j) * 8;
        for (int64_t c = 0; c < 8; c++) {
          float m = p[c] > p[8 + c] ? p[c] : p[8 + c];
          float m2 = p[64 + c] > p[72 + c] ? p[64 + c] : p[72 + c];
          q[c] = m > m2 ? m : m2;
        }
      }
    }
  }
}

static void run_pool_loop(optic_bench_state *st, void *user) {
  (void)user;
  int64_t n = optic_bench_range(st, 0);
  float *x = alloc_floats((size_t)n * 512), *y = alloc_floats((size_t)n * 128);
  if (x == NULL || y == NULL) {
    optic_bench_skip_with_error(st, "out of memory");
  } else {
    while (optic_bench_keep_running(st)) {
      pool_loop(x, y, n);
      optic_bench_do_not_optimize(y);
    }
    bench_report_rates(st, 4.0 * (double)n * (512 + 128), 0);
  }
  free(x);
  free(y);
}

void bench_register_exec_window(void) {
  static const struct {
    const char *name;
    void (*fn)(optic_bench_state *, void *);
  } sets[] = {{"exec/pad_interior", run_pad},
              {"peer/copy_bytes", run_copy},
              {"exec/maxpool2x2", run_pool},
              {"peer/maxpool2x2_loop", run_pool_loop}};
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    optic_bench *b = optic_bench_register(sets[i].name, sets[i].fn, NULL);
    for (int64_t n = 16; n <= 256; n *= 16) OPTIC_BENCH_ARGS(b, n, 1);
    OPTIC_BENCH_ARG_NAMES(b, "n", "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
