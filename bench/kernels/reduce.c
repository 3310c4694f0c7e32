/* Benchmarks of the reduction family, generated from its X-macro list
 * (kernels/list/reduce.inc), split across threads the way an executor splits
 * them: chunks of optic_reduce_chunk_size (so the result is bitwise the
 * single call's), one partial per thread, combined after the parallel region
 * with optic_f32_reduce_combine (timed: it is part of a threaded reduction).
 * Contiguous (X_R): n floats to one. Axis (X_RD): x viewed as
 * [1, n / 256, 256], reduced over the middle axis to 256 values (a bias
 * gradient: a sum over batch rows of 256 features), split over that axis.
 * Bytes counted: what one call must move, read x (4 B per element) and write
 * the result (partials, at most 2 KiB, are not counted). */
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/reduce.h"

enum { AXIS_INNER = 256, PART_STRIDE = 16 /* floats: one cache line per partial */, MAX_THREADS = 2 };

typedef struct reduce_entry {
  const char *function;
  optic_isa isa;
  optic_reduce_op op;
  optic_f32_reduce_fn contiguous; /* X_R entries */
  optic_f32_reduce_axis_fn axis;  /* X_RD entries */
} reduce_entry;

static const reduce_entry entries[] = {
#define X_R(op_, isa_, fn_) {#fn_, OPTIC_ISA_##isa_, OPTIC_REDUCE_##op_, fn_, NULL},
#define X_RD(op_, isa_, fn_) {#fn_, OPTIC_ISA_##isa_, OPTIC_REDUCE_##op_, NULL, fn_},
#include "kernels/list/reduce.inc"
#include "core/unconst.h"
#undef X_R
#undef X_RD
};

typedef struct reduce_job {
  const reduce_entry *e;
  const float *x;
  size_t n;     /* contiguous: elements; axis: the reduced extent r */
  size_t chunk; /* of n, from optic_reduce_chunk_size for the threads asked */
  float *parts; /* contiguous: MAX_THREADS * PART_STRIDE; axis: MAX_THREADS * AXIS_INNER */
  float *y;     /* axis: AXIS_INNER results */
  float result; /* contiguous result */
} reduce_job;

static size_t parts_of(const reduce_job *j) { return j->n == 0 ? 0 : (j->n - 1) / j->chunk + 1; }

/* Thread t reduces chunks t, t + nt, ...: one chunk each when OpenMP gives
 * the threads asked for, and still every chunk when it gives fewer. */
static bool contiguous_slice(void *job, int t, int nt) {
  reduce_job *j = job;
  for (size_t c = (size_t)t; c < parts_of(j); c += (size_t)nt) {
    size_t lo = c * j->chunk, len = j->n - lo < j->chunk ? j->n - lo : j->chunk;
    j->parts[c * PART_STRIDE] = j->e->contiguous(len, j->x + lo);
  }
  return true;
}

static void contiguous_finish(void *job, int nt) {
  reduce_job *j = job;
  (void)nt;
  optic_f32_reduce_combine(j->e->op, parts_of(j), 1, j->parts, PART_STRIDE, &j->result);
}

static bool axis_slice(void *job, int t, int nt) {
  reduce_job *j = job;
  for (size_t c = (size_t)t; c < parts_of(j); c += (size_t)nt) {
    size_t lo = c * j->chunk, len = j->n - lo < j->chunk ? j->n - lo : j->chunk;
    j->e->axis(1, len, AXIS_INNER, j->x + lo * AXIS_INNER, j->parts + c * AXIS_INNER);
  }
  return true;
}

static void axis_finish(void *job, int nt) {
  reduce_job *j = job;
  (void)nt;
  optic_f32_reduce_combine(j->e->op, parts_of(j), AXIS_INNER, j->parts, AXIS_INNER, j->y);
}

static void run_reduce(optic_bench_state *st, void *user) {
  const reduce_entry *e = user;
  size_t n = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  if (threads < 1 || threads > MAX_THREADS) {
    optic_bench_skip_with_error(st, "reduce: threads must be 1 or 2");
    return;
  }
  reduce_job j = {.e = e, .x = bench_f32_array(BENCH_INPUT_SLOT0, n)};
  j.parts = bench_f32_array(BENCH_OUTPUT_SLOT0, MAX_THREADS * AXIS_INNER);
  j.y = bench_f32_array(BENCH_OUTPUT_SLOT0 + 1, AXIS_INNER);
  if (j.x == NULL || j.parts == NULL || j.y == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_parallel p = {.job = &j, .repeats = bench_repeats(n), .items_per_iteration = (int64_t)n};
  /* Chunks are cut for the threads asked, as an executor cuts them for its team. */
  if (e->contiguous != NULL) {
    j.n = n;
    j.chunk = optic_reduce_chunk_size(n, (size_t)threads, OPTIC_REDUCE_BLOCK);
    p.slice = contiguous_slice;
    p.finish = contiguous_finish;
    p.bytes_per_iteration = 4.0 * (double)n + 4.0;
  } else {
    j.n = n / AXIS_INNER;
    j.chunk = optic_reduce_chunk_size(j.n, (size_t)threads, OPTIC_REDUCE_AXIS_BLOCK);
    p.slice = axis_slice;
    p.finish = axis_finish;
    p.bytes_per_iteration = 4.0 * (double)(j.n * AXIS_INNER) + 4.0 * AXIS_INNER;
  }
  bench_run_parallel(st, threads, &p, e->function);
  optic_bench_do_not_optimize(&j.result);
}

void bench_register_reduce_kernels(void) {
  for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
    if (!optic_isa_supported(entries[i].isa)) continue;
    bench_register_n_threads(bench_name("kernel/reduce/%s", entries[i].function), run_reduce,
                             OPTIC_UNCONST(void *, &entries[i]), (int64_t)BENCH_N_IN_CACHE, (int64_t)BENCH_N_DRAM);
  }
}
