/* Runtime benchmarks (issue 5): compiled programs through optic_program_run.
 *  - exec/chain100/fusion:0/threads:T/split:S: 100 dependent elementwise ops
 *    on 16 elements with fusion off: per-op overhead (counter ns_per_op; bars
 *    <= 1000 ns at 1 thread, <= 3000 ns at 2), beside peer/chain100_direct,
 *    the same 100 ops as plain loops. S=0: the default split threshold (tiny
 *    ops are not split, so the 2-thread run stays on one thread); S=1: every
 *    op split across both threads with a barrier after each (the cost of the
 *    barrier itself).
 *  - exec/relu_affine/n:16M/fusion:F/threads:T: y = relu(a*x + b)*s - c (a, s
 *    scalars; x, b, c arrays) fused into one blockwise loop (F=1) or run op by
 *    op (F=0): fused must be >= 2.5x faster.
 *  - exec/mlp/batch:256/threads:T: an MLP 1024-4096-1024 forward and backward
 *    (6 GEMMs + bias, relu, relu mask) vs peer/mlp_cblas, the same 6 GEMMs
 *    called directly with cblas_sgemm (>= 0.95 of its GFLOP/s).
 * Every exec benchmark reports the program's estimates (est_flops, est_bytes,
 * est_time_ns; est_peak_bytes from bench_report_memory), compiled for the context's T threads
 * (optic_compile_options.threads), est_ratio = measured / estimated time and
 * omp_threads = T.
 * Compilation and binding are untimed. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include <time.h>

#include "bench/bench_util.h"
#include "bench/cpu_path.h"
#include "bench/memory.h"
#include <optic/optic.h>

/* The process's CPU time: the executor's threads live inside
 * optic_program_run, so the benchmarks cannot read each thread's clock as
 * bench/parallel.c does; process CPU time / T stands in for the critical
 * path (exact at T = 1; for balanced splits at T = 2). Reported as
 * cpu_path_ns / cpu_GFLOP/s / cpu_GB/s so `ratios.py --clock cpu` reads it;
 * the peers below are measured the same way. */
static uint64_t process_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void report_cpu(optic_bench_state *st, uint64_t cpu_ns, int threads, double bytes, double flops) {
  bench_cpu_path c = {.total_ns = (double)cpu_ns / (threads > 0 ? threads : 1)};
  bench_cpu_path_report(st, &c, bytes, flops);
  /* the report's machine bound for this thread count, as the estimate */
  optic_bench_counter(st, "omp_threads", (double)threads, OPTIC_BENCH_COUNTER_PLAIN);
}

typedef struct exec_case {
  optic_module_t *m;
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_tensor in[8], out[4];
  int32_t n_in, n_out;
  float *bufs[12];
  int n_bufs;
  uint64_t cpu_ns; /* process CPU time of the timed loop */
  double rss0;     /* peak RSS before the case compiled (bench_maxrss_bytes) */
  int64_t split;   /* the context's split_min_elements */
} exec_case;

static void case_free(exec_case *c) {
  optic_exec_ctx_destroy(c->ctx);
  optic_program_destroy(c->p);
  optic_module_destroy(c->m);
  for (int i = 0; i < c->n_bufs; i++) free(c->bufs[i]);
}

static float *alloc_f32(exec_case *c, size_t n, float v0) {
  float *p = NULL;
  if (posix_memalign((void **)&p, 64, (n ? n : 1) * sizeof *p)) return NULL;
  for (size_t i = 0; i < n; i++) p[i] = v0 + (float)(i % 7) * 0.125f - 0.375f;
  c->bufs[c->n_bufs++] = p;
  return p;
}

static optic_node_id param(exec_case *c, optic_comp_id comp, int32_t k, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id = OPTIC_NO_NODE;
  optic_graph_parameter(c->m, comp, k, &t, NULL, &id);
  return id;
}

/* Compiles c->m and binds the inputs/outputs (buffers from the entry's types). */
static bool case_compile_split(optic_bench_state *st, exec_case *c, int fusion, int threads, int64_t split);
static bool case_compile(optic_bench_state *st, exec_case *c, int fusion, int threads) {
  return case_compile_split(st, c, fusion, threads, 0);
}

static bool case_compile_split(optic_bench_state *st, exec_case *c, int fusion, int threads, int64_t split) {
  c->rss0 = bench_maxrss_bytes();
  c->split = split;
  optic_compile_options co = optic_compile_options_default();
  co.fusion = fusion;
  co.threads = threads; /* the estimates are for the context's threads */
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = split;
  co.split_min_elements = split; /* the estimate follows the same split policy */
  if (optic_compile(c->m, &co, &c->p) != OPTIC_OK || optic_exec_ctx_create(&eo, &c->ctx) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return false;
  }
  const optic_module_t *m = optic_program_module(c->p);
  optic_comp_id e = optic_program_entry(c->p);
  c->n_in = optic_computation_parameter_count(m, e);
  for (int32_t i = 0; i < c->n_in; i++) {
    const optic_type *t = optic_node_type(m, optic_computation_parameter(m, e, i));
    size_t n = 1;
    for (int32_t d = 0; d < t->shape.rank; d++) n *= (size_t)t->shape.dims[d];
    c->in[i] = (optic_tensor){OPTIC_F32, t->shape, alloc_f32(c, n, 0.5f)};
  }
  const optic_type *rt = optic_node_type(m, optic_computation_root(m, e));
  c->n_out = optic_type_is_tuple(rt) ? rt->tuple_size : 1;
  for (int32_t i = 0; i < c->n_out; i++) {
    const optic_type *t = optic_type_is_tuple(rt) ? &rt->elements[i] : rt;
    size_t n = 1;
    for (int32_t d = 0; d < t->shape.rank; d++) n *= (size_t)t->shape.dims[d];
    c->out[i] = (optic_tensor){OPTIC_F32, t->shape, alloc_f32(c, n, 0.0f)};
  }
  /* Untimed: binding, arenas, OpenMP team and OpenBLAS buffers. */
  if (optic_program_run(c->p, c->ctx, c->in, c->n_in, c->out, c->n_out) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return false;
  }
  return true;
}

static void report_estimates(optic_bench_state *st, exec_case *c, double measured_ns) {
  optic_program_summary s;
  if (optic_program_summary_get(c->p, &s) != OPTIC_OK) return;
  optic_bench_counter(st, "est_flops", s.cost.flops, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_bytes", s.cost.bytes_accessed, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_time_ns", s.est_ns, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_ratio", s.est_ns > 0 ? measured_ns / s.est_ns : 0.0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "fusions", (double)s.fusions, OPTIC_BENCH_COUNTER_PLAIN);
  bench_report_memory(st, c->ctx, c->p, bench_tensor_bytes(c->in, c->n_in) + bench_tensor_bytes(c->out, c->n_out),
                      c->rss0, c->split);
}

/* Runs the program until the benchmark stops; returns ns per run. */
static double run_loop(optic_bench_state *st, exec_case *c) {
  uint64_t t0 = optic_now_ns(), c0 = process_cpu_ns();
  while (optic_bench_keep_running(st)) {
    if (optic_program_run(c->p, c->ctx, c->in, c->n_in, c->out, c->n_out) != OPTIC_OK) {
      optic_bench_skip_with_error(st, optic_last_error());
      return 0;
    }
  }
  c->cpu_ns = process_cpu_ns() - c0;
  int64_t it = optic_bench_iterations(st);
  return it > 0 ? (double)(optic_now_ns() - t0) / (double)it : 0.0;
}

/* ------------------------------------------------------------ chain of 100 tiny ops */

#define CHAIN 100

static void run_chain(optic_bench_state *st, void *user) {
  (void)user;
  int threads = (int)optic_bench_range(st, 0);
  int64_t split = optic_bench_range(st, 1);
  exec_case c = {0};
  optic_comp_id e;
  optic_module_create("chain", &c.m);
  optic_module_add_computation(c.m, "main", &e);
  const int64_t n[] = {16};
  optic_node_id x = param(&c, e, 0, 1, n), w = param(&c, e, 1, 1, n), y = x;
  for (int i = 0; i < CHAIN; i++) {
    optic_graph_binary(c.m, e, i % 2 ? OPTIC_OP_MULTIPLY : OPTIC_OP_ADD, y, w, NULL, &y);
  }
  optic_computation_set_root(c.m, e, y);
  if (case_compile_split(st, &c, 0, threads, split)) {
    double ns = run_loop(st, &c);
    optic_bench_counter(st, "ns_per_op", ns / CHAIN, OPTIC_BENCH_COUNTER_PLAIN);
    report_estimates(st, &c, ns);
    report_cpu(st, c.cpu_ns, threads, 0, 0);
  }
  case_free(&c);
}

/* The same 100 kernel calls without the runtime (one thread). */
static void run_chain_direct(optic_bench_state *st, void *user) {
  (void)user;
  exec_case c = {0};
  float *x = alloc_f32(&c, 16, 0.5f), *w = alloc_f32(&c, 16, 0.5f), *y = alloc_f32(&c, 16, 0.f);
  uint64_t t0 = optic_now_ns(), c0 = process_cpu_ns();
  while (optic_bench_keep_running(st)) {
    cblas_scopy(16, x, 1, y, 1);
    for (int i = 0; i < CHAIN; i++) {
      if (i % 2) {
        for (int k = 0; k < 16; k++) y[k] *= w[k];
      } else {
        for (int k = 0; k < 16; k++) y[k] += w[k];
      }
      optic_bench_do_not_optimize(y);
    }
  }
  int64_t it = optic_bench_iterations(st);
  optic_bench_counter(st, "ns_per_op", it ? (double)(optic_now_ns() - t0) / (double)it / CHAIN : 0,
                      OPTIC_BENCH_COUNTER_PLAIN);
  report_cpu(st, process_cpu_ns() - c0, 1, 0, 0);
  case_free(&c);
}

/* ------------------------------------------------------------ relu(a*x + b)*s - c */

static void run_relu_affine(optic_bench_state *st, void *user) {
  (void)user;
  int64_t n = optic_bench_range(st, 0);
  int fusion = (int)optic_bench_range(st, 1), threads = (int)optic_bench_range(st, 2);
  exec_case c = {0};
  optic_comp_id e;
  optic_module_create("relu_affine", &c.m);
  optic_module_add_computation(c.m, "main", &e);
  optic_node_id x = param(&c, e, 0, 1, &n), b = param(&c, e, 1, 1, &n), cc = param(&c, e, 2, 1, &n);
  optic_node_id a = param(&c, e, 3, 0, NULL), s = param(&c, e, 4, 0, NULL);
  optic_shape sh = {.rank = 1, .dims = {n}};
  optic_node_id ab, sb, ax, axb, zero, zb, r, rs, y;
  float z = 0;
  optic_graph_broadcast(c.m, e, a, &sh, NULL, 0, NULL, &ab);
  optic_graph_broadcast(c.m, e, s, &sh, NULL, 0, NULL, &sb);
  optic_graph_binary(c.m, e, OPTIC_OP_MULTIPLY, ab, x, NULL, &ax);
  optic_graph_binary(c.m, e, OPTIC_OP_ADD, ax, b, NULL, &axb);
  optic_graph_constant(c.m, e, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
  optic_graph_broadcast(c.m, e, zero, &sh, NULL, 0, NULL, &zb);
  optic_graph_binary(c.m, e, OPTIC_OP_MAXIMUM, axb, zb, NULL, &r);
  optic_graph_binary(c.m, e, OPTIC_OP_MULTIPLY, r, sb, NULL, &rs);
  optic_graph_binary(c.m, e, OPTIC_OP_SUBTRACT, rs, cc, NULL, &y);
  optic_computation_set_root(c.m, e, y);
  if (case_compile(st, &c, fusion, threads)) {
    double ns = run_loop(st, &c);
    bench_report_rates(st, 16.0 * (double)n, 5.0 * (double)n);
    report_estimates(st, &c, ns);
    report_cpu(st, c.cpu_ns, threads, 16.0 * (double)n, 5.0 * (double)n);
  }
  case_free(&c);
}

/* ------------------------------------------------------------ MLP forward + backward */

enum { MLP_B = 256, MLP_IN = 1024, MLP_H = 4096, MLP_OUT = 1024 };

static optic_node_id dot2(exec_case *c, optic_comp_id e, optic_node_id l, optic_node_id r, int32_t lc, int32_t rc) {
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {lc}, .rhs_contracting = {rc}};
  optic_node_id y = OPTIC_NO_NODE;
  optic_graph_dot(c->m, e, l, r, &d, NULL, &y);
  return y;
}

static optic_node_id bias(exec_case *c, optic_comp_id e, optic_node_id y, optic_node_id b, int64_t rows, int64_t cols) {
  optic_shape sh = {.rank = 2, .dims = {rows, cols}};
  const int64_t bd[] = {1};
  optic_node_id bb, out;
  optic_graph_broadcast(c->m, e, b, &sh, bd, 1, NULL, &bb);
  optic_graph_binary(c->m, e, OPTIC_OP_ADD, y, bb, NULL, &out);
  return out;
}

static void run_mlp(optic_bench_state *st, void *user) {
  (void)user;
  int threads = (int)optic_bench_range(st, 1);
  exec_case c = {0};
  optic_comp_id e;
  optic_module_create("mlp", &c.m);
  optic_module_add_computation(c.m, "main", &e);
  optic_node_id x = param(&c, e, 0, 2, (int64_t[]){MLP_B, MLP_IN});
  optic_node_id w1 = param(&c, e, 1, 2, (int64_t[]){MLP_IN, MLP_H}), b1 = param(&c, e, 2, 1, (int64_t[]){MLP_H});
  optic_node_id w2 = param(&c, e, 3, 2, (int64_t[]){MLP_H, MLP_OUT}), b2 = param(&c, e, 4, 1, (int64_t[]){MLP_OUT});
  optic_node_id dy = param(&c, e, 5, 2, (int64_t[]){MLP_B, MLP_OUT});
  /* forward */
  optic_node_id pre = bias(&c, e, dot2(&c, e, x, w1, 1, 0), b1, MLP_B, MLP_H);
  optic_shape hs = {.rank = 2, .dims = {MLP_B, MLP_H}};
  float z = 0;
  optic_node_id zero, zb, h, y, mask, dh, dhm, zeros_b;
  optic_graph_constant(c.m, e, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
  optic_graph_broadcast(c.m, e, zero, &hs, NULL, 0, NULL, &zb);
  optic_graph_binary(c.m, e, OPTIC_OP_MAXIMUM, pre, zb, NULL, &h);
  y = bias(&c, e, dot2(&c, e, h, w2, 1, 0), b2, MLP_B, MLP_OUT);
  /* backward from dy (the loss gradient, given) */
  optic_node_id dw2 = dot2(&c, e, h, dy, 0, 0); /* [H, OUT] = h^T dy */
  dh = dot2(&c, e, dy, w2, 1, 1);               /* [B, H] = dy W2^T */
  optic_graph_compare(c.m, e, OPTIC_CMP_GT, pre, zb, NULL, &mask);
  optic_graph_broadcast(c.m, e, zero, &hs, NULL, 0, NULL, &zeros_b);
  optic_graph_select(c.m, e, mask, dh, zeros_b, NULL, &dhm);
  optic_node_id dw1 = dot2(&c, e, x, dhm, 0, 0); /* [IN, H] = x^T dh */
  optic_node_id dx = dot2(&c, e, dhm, w1, 1, 1); /* [B, IN] = dh W1^T */
  optic_node_id els[4] = {y, dw1, dw2, dx}, root;
  optic_graph_tuple(c.m, e, els, 4, NULL, &root);
  optic_computation_set_root(c.m, e, root);
  if (case_compile(st, &c, -1, threads)) {
    double ns = run_loop(st, &c);
    bench_report_rates(st, 0.0, 6.0 * 2.0 * MLP_B * (double)MLP_IN * MLP_H);
    report_estimates(st, &c, ns);
    report_cpu(st, c.cpu_ns, threads, 0.0, 6.0 * 2.0 * MLP_B * (double)MLP_IN * MLP_H);
  }
  case_free(&c);
}

/* The same six GEMMs, called directly (OpenBLAS threads = T). */
static void run_mlp_cblas(optic_bench_state *st, void *user) {
  (void)user;
  int threads = (int)optic_bench_range(st, 1);
  exec_case c = {0};
  float *x = alloc_f32(&c, (size_t)MLP_B * MLP_IN, 0.5f), *w1 = alloc_f32(&c, (size_t)MLP_IN * MLP_H, 0.5f);
  float *w2 = alloc_f32(&c, (size_t)MLP_H * MLP_OUT, 0.5f), *dy = alloc_f32(&c, (size_t)MLP_B * MLP_OUT, 0.5f);
  float *h = alloc_f32(&c, (size_t)MLP_B * MLP_H, 0.f), *y = alloc_f32(&c, (size_t)MLP_B * MLP_OUT, 0.f);
  float *dw1 = alloc_f32(&c, (size_t)MLP_IN * MLP_H, 0.f), *dw2 = alloc_f32(&c, (size_t)MLP_H * MLP_OUT, 0.f);
  float *dh = alloc_f32(&c, (size_t)MLP_B * MLP_H, 0.f), *dx = alloc_f32(&c, (size_t)MLP_B * MLP_IN, 0.f);
  if (dx == NULL) {
    optic_bench_skip_with_error(st, "out of memory");
    case_free(&c);
    return;
  }
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(threads);
  const CBLAS_ORDER R = CblasRowMajor;
  const CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;
  uint64_t c0 = 0;
  for (int warm = 0; warm < 2; warm++) {
    if (warm == 1) c0 = process_cpu_ns();
    while (warm == 1 && optic_bench_keep_running(st)) {
      cblas_sgemm(R, N, N, MLP_B, MLP_H, MLP_IN, 1.f, x, MLP_IN, w1, MLP_H, 0.f, h, MLP_H);
      cblas_sgemm(R, N, N, MLP_B, MLP_OUT, MLP_H, 1.f, h, MLP_H, w2, MLP_OUT, 0.f, y, MLP_OUT);
      cblas_sgemm(R, T, N, MLP_H, MLP_OUT, MLP_B, 1.f, h, MLP_H, dy, MLP_OUT, 0.f, dw2, MLP_OUT);
      cblas_sgemm(R, N, T, MLP_B, MLP_H, MLP_OUT, 1.f, dy, MLP_OUT, w2, MLP_OUT, 0.f, dh, MLP_H);
      cblas_sgemm(R, T, N, MLP_IN, MLP_H, MLP_B, 1.f, x, MLP_IN, dh, MLP_H, 0.f, dw1, MLP_H);
      cblas_sgemm(R, N, T, MLP_B, MLP_IN, MLP_H, 1.f, dh, MLP_H, w1, MLP_H, 0.f, dx, MLP_IN);
    }
    if (warm == 0) cblas_sgemm(R, N, N, MLP_B, MLP_H, MLP_IN, 1.f, x, MLP_IN, w1, MLP_H, 0.f, h, MLP_H);
  }
  uint64_t cpu = process_cpu_ns() - c0;
  openblas_set_num_threads(saved);
  bench_report_rates(st, 0.0, 6.0 * 2.0 * MLP_B * (double)MLP_IN * MLP_H);
  report_cpu(st, cpu, threads, 0.0, 6.0 * 2.0 * MLP_B * (double)MLP_IN * MLP_H);
  optic_bench_set_label(st, openblas_get_corename());
  case_free(&c);
}

void bench_register_exec(void) {
  optic_bench *b = optic_bench_register("exec/chain100/fusion:0", run_chain, NULL);
  for (int64_t t = 1; t <= 2; t++) OPTIC_BENCH_ARGS(b, t, 0);
  OPTIC_BENCH_ARGS(b, 2, 1); /* split:1: every op split over 2 threads, a barrier between each */
  OPTIC_BENCH_ARG_NAMES(b, "threads", "split");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
  b = optic_bench_register("peer/chain100_direct/threads:1", run_chain_direct, NULL);
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
  b = optic_bench_register("exec/relu_affine", run_relu_affine, NULL);
  for (int64_t t = 1; t <= 2; t++) {
    for (int64_t f = 0; f <= 1; f++) OPTIC_BENCH_ARGS(b, 16 << 20, f, t);
  }
  OPTIC_BENCH_ARG_NAMES(b, "n", "fusion", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
  b = optic_bench_register("exec/mlp", run_mlp, NULL);
  for (int64_t t = 1; t <= 2; t++) OPTIC_BENCH_ARGS(b, MLP_B, t);
  OPTIC_BENCH_ARG_NAMES(b, "batch", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
  b = optic_bench_register("peer/mlp_cblas", run_mlp_cblas, NULL);
  for (int64_t t = 1; t <= 2; t++) OPTIC_BENCH_ARGS(b, MLP_B, t);
  OPTIC_BENCH_ARG_NAMES(b, "batch", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
