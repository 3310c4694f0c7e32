/* Row-wise programs through optic_program_run (docs/runtime.md, "Row
 * groups"; the reductions of kernels/reduce.h):
 *  - exec/softmax/m:M/n:N/threads:T: softmax over the rows of f32[M,N]
 *    (tests/data/hlo/softmax_f32.hlo at that shape);
 *  - exec/layer_norm/m:M/n:N/threads:T: layer norm over the rows with scale
 *    and bias f32[N], eps 1e-5 (tests/data/hlo/layernorm_f32.hlo);
 *  - exec/reduce_rows/m:M/n:N/threads:T: x.sum(1) (f32[M,N] -> f32[M]);
 *  - exec/reduce_cols/m:M/n:N/threads:T: x.sum(0) (f32[M,N] -> f32[N]).
 * Bytes counted: what must move at least (STREAM's counting): the input read
 * once and the result written once (softmax, layer norm 8 B per element, plus
 * 8 B per column for scale and bias; reductions 4 B per element plus the
 * result), so GB/s over peer/stream_copy's GB/s at the same threads is the
 * fraction of the bandwidth bound (bench/ratios.json). M,N = 127,125 (in
 * cache, the shape) and 4096,1024 (16 MiB, DRAM). The peers are
 * PyTorch's (bench/peers/torch.c). Compilation and binding are untimed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "bench/memory.h"
#include <optic/optic.h>

enum { ROW_SOFTMAX, ROW_LAYER_NORM, ROW_SUM_ROWS, ROW_SUM_COLS };

static const char SOFTMAX[] =
    "HloModule softmax\n\nmax_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT m = f32[] maximum(a, b)\n}\n\nadd_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  ninf = f32[] constant(-inf)\n"
    "  r = f32[%ld] reduce(x, ninf), dimensions={1}, to_apply=max_c\n"
    "  rb = f32[%ld,%ld] broadcast(r), dimensions={0}\n  d = f32[%ld,%ld] subtract(x, rb)\n"
    "  e = f32[%ld,%ld] exponential(d)\n  zero = f32[] constant(0)\n"
    "  s = f32[%ld] reduce(e, zero), dimensions={1}, to_apply=add_c\n"
    "  sb = f32[%ld,%ld] broadcast(s), dimensions={0}\n  ROOT y = f32[%ld,%ld] divide(e, sb)\n}\n";

static const char LAYER_NORM[] =
    "HloModule ln\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  zero = f32[] constant(0)\n"
    "  s1 = f32[%ld] reduce(x, zero), dimensions={1}, to_apply=add\n  n = f32[] constant(%ld)\n"
    "  nb = f32[%ld] broadcast(n), dimensions={}\n  mean = f32[%ld] divide(s1, nb)\n"
    "  mb = f32[%ld,%ld] broadcast(mean), dimensions={0}\n"
    "  c = f32[%ld,%ld] subtract(x, mb)\n  sq = f32[%ld,%ld] multiply(c, c)\n"
    "  s2 = f32[%ld] reduce(sq, zero), dimensions={1}, to_apply=add\n  var = f32[%ld] divide(s2, nb)\n"
    "  eps = f32[] constant(1e-05)\n  eb = f32[%ld] broadcast(eps), dimensions={}\n  ve = f32[%ld] add(var, eb)\n"
    "  rs = f32[%ld] rsqrt(ve)\n  rb = f32[%ld,%ld] broadcast(rs), dimensions={0}\n  xn = f32[%ld,%ld] multiply(c, "
    "rb)\n"
    "  g = f32[%ld] parameter(1)\n  gb = f32[%ld,%ld] broadcast(g), dimensions={1}\n  xg = f32[%ld,%ld] multiply(xn, "
    "gb)\n"
    "  b = f32[%ld] parameter(2)\n  bb = f32[%ld,%ld] broadcast(b), dimensions={1}\n"
    "  ROOT y = f32[%ld,%ld] add(xg, bb)\n}\n";

static const char SUM[] =
    "HloModule sum\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  zero = f32[] constant(0)\n"
    "  ROOT r = f32[%ld] reduce(x, zero), dimensions={%d}, to_apply=add\n}\n";

static optic_status module_for(int kind, long m, long n, optic_module_t **out) {
  char text[4096];
  switch (kind) {
    case ROW_SOFTMAX: snprintf(text, sizeof text, SOFTMAX, m, n, m, m, n, m, n, m, n, m, m, n, m, n); break;
    case ROW_LAYER_NORM:
      snprintf(text, sizeof text, LAYER_NORM, m, n, m, n, m, m, m, n, m, n, m, n, m, m, m, m, m, m, n, m, n, n, m, n, m,
               n, n, m, n, m, n);
      break;
    default: snprintf(text, sizeof text, SUM, m, n, kind == ROW_SUM_ROWS ? m : n, kind == ROW_SUM_ROWS ? 1 : 0); break;
  }
  return optic_module_from_hlo_text(text, strlen(text), out);
}

/* Minimum bytes moved by one run (see the header comment). */
static double bytes_for(int kind, double m, double n) {
  switch (kind) {
    case ROW_SOFTMAX: return 8.0 * m * n;
    case ROW_LAYER_NORM: return 8.0 * m * n + 8.0 * n;
    case ROW_SUM_ROWS: return 4.0 * m * n + 4.0 * m;
    default: return 4.0 * m * n + 4.0 * n;
  }
}

static void run_rows(optic_bench_state *st, void *user) {
  const int kind = (int)(intptr_t)user;
  const long m = (long)optic_bench_range(st, 0), n = (long)optic_bench_range(st, 1);
  const int threads = (int)optic_bench_range(st, 2);
  const double rss0 = bench_maxrss_bytes();
  optic_module_t *mod = NULL;
  optic_program_t *p = NULL;
  optic_exec_ctx_t *ctx = NULL;
  optic_tensor in[3], out;
  float *bufs[4] = {NULL};
  int32_t n_in = 0;
  optic_compile_options co = optic_compile_options_default();
  co.threads = threads;
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  bool ok = module_for(kind, m, n, &mod) == OPTIC_OK && optic_compile(mod, &co, &p) == OPTIC_OK &&
            optic_exec_ctx_create(&eo, &ctx) == OPTIC_OK;
  if (ok) {
    const optic_module_t *pm = optic_program_module(p);
    optic_comp_id e = optic_program_entry(p);
    n_in = optic_computation_parameter_count(pm, e);
    for (int32_t i = 0; i <= n_in && ok; i++) {
      const optic_type *t = i < n_in ? optic_node_type(pm, optic_computation_parameter(pm, e, i))
                                     : optic_node_type(pm, optic_computation_root(pm, e));
      size_t k = 1;
      for (int32_t d = 0; d < t->shape.rank; d++) k *= (size_t)t->shape.dims[d];
      ok = posix_memalign((void **)&bufs[i], 64, k * sizeof(float)) == 0;
      for (size_t j = 0; ok && j < k; j++) bufs[i][j] = (float)((j * 2654435761u) % 1000) * 0.002f - 1.0f;
      if (i < n_in) in[i] = (optic_tensor){OPTIC_F32, t->shape, bufs[i]};
      else out = (optic_tensor){OPTIC_F32, t->shape, bufs[i]};
    }
    ok = ok && optic_program_run(p, ctx, in, n_in, &out, 1) == OPTIC_OK; /* untimed: binding, arenas */
  }
  if (!ok) {
    optic_bench_skip_with_error(st, optic_last_error());
  } else {
    uint64_t t0 = optic_now_ns();
    while (optic_bench_keep_running(st)) {
      if (optic_program_run(p, ctx, in, n_in, &out, 1) != OPTIC_OK) {
        optic_bench_skip_with_error(st, optic_last_error());
        break;
      }
    }
    int64_t it = optic_bench_iterations(st);
    double ns = it > 0 ? (double)(optic_now_ns() - t0) / (double)it : 0.0;
    bench_report_rates(st, bytes_for(kind, (double)m, (double)n), 0.0);
    optic_bench_counter(st, "ns_per_call", ns, OPTIC_BENCH_COUNTER_PLAIN); /* the PyTorch peer's unit */
    optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
    optic_program_summary sum;
    if (optic_program_summary_get(p, &sum) == OPTIC_OK) { /* the compiler's estimates, as bench/exec.c reports them */
      optic_bench_counter(st, "est_flops", sum.cost.flops, OPTIC_BENCH_COUNTER_PLAIN);
      optic_bench_counter(st, "est_bytes", sum.cost.bytes_accessed, OPTIC_BENCH_COUNTER_PLAIN);
      optic_bench_counter(st, "est_time_ns", sum.est_ns, OPTIC_BENCH_COUNTER_PLAIN);
      optic_bench_counter(st, "est_ratio", sum.est_ns > 0 ? ns / sum.est_ns : 0.0, OPTIC_BENCH_COUNTER_PLAIN);
      optic_bench_counter(st, "fusions", (double)sum.fusions, OPTIC_BENCH_COUNTER_PLAIN);
    }
    bench_report_memory(st, ctx, p, bench_tensor_bytes(in, n_in) + bench_tensor_bytes(&out, 1), rss0, 0);
  }
  for (int i = 0; i < 4; i++) free(bufs[i]);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(mod);
}

void bench_register_rows(void) {
  static const char *const names[] = {"exec/softmax", "exec/layer_norm", "exec/reduce_rows", "exec/reduce_cols"};
  for (int k = 0; k < 4; k++) {
    optic_bench *b = optic_bench_register(names[k], run_rows, (void *)(intptr_t)k);
    for (int64_t t = 1; t <= 2; t++) {
      OPTIC_BENCH_ARGS(b, 127, 125, t);
      OPTIC_BENCH_ARGS(b, 4096, 1024, t);
    }
    OPTIC_BENCH_ARG_NAMES(b, "m", "n", "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
