/* Measured memory counters (contract in memory.h). */
#include "bench/memory.h"

#include <stdio.h>
#include <sys/resource.h>

double bench_maxrss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

double bench_tensor_bytes(const optic_tensor *t, int32_t n) {
  double b = 0;
  for (int32_t i = 0; i < n; i++) {
    double e = 1;
    for (int32_t d = 0; d < t[i].shape.rank; d++) e *= (double)t[i].shape.dims[d];
    b += e * (double)optic_dtype_size(t[i].dtype);
  }
  return b;
}

/* The estimate for n contexts of ctx's threads, each running p on its own
 * inputs and outputs; false (nothing reported) when it cannot be planned. */
static bool report_estimate(optic_bench_state *st, const optic_exec_ctx_t *ctx, int32_t n, const optic_program_t *p,
                            int64_t split_min_elements, optic_run_memory *rm) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = optic_exec_ctx_threads(ctx);
  eo.split_min_elements = split_min_elements;
  optic_program_summary s;
  *rm = (optic_run_memory){.size = sizeof *rm};
  if (p == NULL || optic_program_run_memory(p, &eo, rm) != OPTIC_OK || optic_program_summary_get(p, &s) != OPTIC_OK)
    return false;
  const double each = (double)(rm->reserved_bytes + rm->io_bytes);
  optic_bench_counter(st, "est_peak_bytes", n * each + (double)rm->constant_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_buffer_bytes", (double)s.peak_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_arena_bytes", (double)rm->arena_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_scratch_bytes", (double)rm->scratch_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "est_regs_bytes", (double)rm->regs_bytes, OPTIC_BENCH_COUNTER_PLAIN);
  return true;
}

void bench_report_memory_n(optic_bench_state *st, const optic_exec_ctx_t *const *ctx, int32_t n,
                           const optic_program_t *p, double io_bytes, double rss0, int64_t split_min_elements) {
  optic_run_memory rm;
  double constants =
      n > 0 && report_estimate(st, ctx[0], n, p, split_min_elements, &rm) ? (double)rm.constant_bytes : 0;
  double pools = 0;
  bool any = false;
  for (int32_t i = 0; i < n; i++) {
    optic_pool_stats ps;
    if (ctx[i] == NULL || optic_exec_ctx_pool_stats(ctx[i], &ps) != OPTIC_OK) continue;
    pools += (double)ps.peak_bytes;
    any = true;
  }
  if (any) {
    optic_bench_counter(st, "peak_bytes", pools, OPTIC_BENCH_COUNTER_PLAIN);
    optic_bench_counter(st, "mem_peak_bytes", pools + io_bytes + constants, OPTIC_BENCH_COUNTER_PLAIN);
  }
  double now = bench_maxrss_bytes();
  optic_bench_counter(st, "maxrss_delta_bytes", now > rss0 ? now - rss0 : 0, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_report_memory(optic_bench_state *st, const optic_exec_ctx_t *ctx, const optic_program_t *p, double io_bytes,
                         double rss0, int64_t split_min_elements) {
  bench_report_memory_n(st, &ctx, ctx != NULL ? 1 : 0, p, io_bytes, rss0, split_min_elements);
}

static void *counting_alloc(void *user, size_t size, size_t alignment) {
  bench_counting_allocator *c = user;
  const optic_allocator *d = optic_default_allocator();
  void *p = d->alloc(d->user, size, alignment);
  if (p == NULL) return NULL;
  size_t now = atomic_fetch_add(&c->live, size) + size, peak = atomic_load(&c->peak);
  while (now > peak && !atomic_compare_exchange_weak(&c->peak, &peak, now)) {}
  return p;
}

static void counting_free(void *user, void *ptr, size_t size, size_t alignment) {
  bench_counting_allocator *c = user;
  const optic_allocator *d = optic_default_allocator();
  if (ptr == NULL) return;
  d->free(d->user, ptr, size, alignment);
  atomic_fetch_sub(&c->live, size);
}

void bench_counting_allocator_init(bench_counting_allocator *c) {
  c->allocator = (optic_allocator){counting_alloc, counting_free, c};
  atomic_init(&c->live, 0);
  atomic_init(&c->peak, 0);
}

void bench_report_op_times(optic_bench_state *st, const optic_profiler_t *prof, const optic_program_t *p, size_t top) {
  optic_profile_summary sum;
  if (optic_profiler_summary(prof, p, &sum) != OPTIC_OK) return;
  for (size_t i = 0; i < sum.op_count && i < top; i++) {
    char key[96];
    snprintf(key, sizeof key, "op_ns:%s", sum.ops[i].name);
    optic_bench_counter(st, key, sum.ops[i].measured_ns, OPTIC_BENCH_COUNTER_PLAIN);
    snprintf(key, sizeof key, "op_est_ns:%s", sum.ops[i].name);
    optic_bench_counter(st, key, sum.ops[i].est_ns, OPTIC_BENCH_COUNTER_PLAIN);
  }
  optic_profile_summary_free(&sum);
}
