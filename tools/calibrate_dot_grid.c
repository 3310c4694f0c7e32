/* `optic calibrate`'s dot efficiency grid of machine format 7
 * (calibrate_measure.h): one single-threaded sgemm call through the
 * runtime's dot path (optic_dot_plan, optic_dot_compute on one thread, dense
 * row-major operands BLAS reads in place) timed at M, N, K in
 * {4, 16, 64, 256, 1024, 4096}, the fastest of a few short trials. The sizes
 * are a generic cover of the range (powers of 4, the first where every call
 * cost is fixed cost, the last where sgemm has long reached its blocked
 * rate), not shapes of any workload. Points above CAP_MACS multiply-adds
 * are not timed (they would cost most of the grid's time): each takes the
 * figure of the point one size smaller in its largest dim, sgemm's
 * efficiency having levelled off there. Never prints. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "kernels/dot.h"
#include "tools/calibrate_measure.h"

/* 2^28 multiply-adds (about 3 ms on one core at 200 GFLOP/s): the points
 * whose grid indices sum to at most 11. */
#define MAX_INDEX_SUM 11
/* The largest operand or result a timed point has: 4096 x 4096 floats. */
#define MAX_ELEMENTS ((size_t)4096 * 4096)

typedef struct grid_job {
  struct optic_dot_plan plan;
  const float *a, *b;
  float *c;
} grid_job;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU ns of `runs` calls on this thread (one-thread OpenBLAS runs on it). */
static optic_status run_calls(grid_job *j, uint64_t runs, double *ns) {
  optic_status st = OPTIC_OK;
  uint64_t t0 = cpu_ns();
  for (uint64_t r = 0; r < runs && st == OPTIC_OK; r++) st = optic_dot_compute(&j->plan, j->a, j->b, j->c, NULL, 0, 1);
  *ns = (double)(cpu_ns() - t0);
  return st;
}

/* The fastest call of `trials` batches of about target_ns of CPU time:
 * another job's time slices are not counted, and the best batch skips
 * those whose caches it flushed. */
static optic_status best_call_ns(grid_job *j, int trials, double target_ns, double *best) {
  uint64_t runs = 1;
  double ns = 0;
  optic_status st;
  while ((st = run_calls(j, runs, &ns)) == OPTIC_OK && ns < target_ns / 10 && runs < ((uint64_t)1 << 24)) runs *= 2;
  double scaled = ns > 0 ? (double)runs * target_ns / ns : (double)runs;
  runs = scaled < 1 ? 1 : (uint64_t)scaled;
  *best = 0;
  for (int t = 0; t < trials && st == OPTIC_OK; t++) {
    st = run_calls(j, runs, &ns);
    if (t == 0 || ns / (double)runs < *best) *best = ns / (double)runs;
  }
  return st;
}

/* [m, k] x [k, n], contracting lhs dim 1 with rhs dim 0: copy-free sgemm. */
static optic_status plan_gemm(int64_t m, int64_t n, int64_t k, struct optic_dot_plan *plan) {
  optic_shape l, r;
  int64_t ld[2] = {m, k}, rd[2] = {k, n};
  optic_dot_dims dims = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}};
  optic_status st = optic_shape_make(2, ld, &l);
  if (st == OPTIC_OK) st = optic_shape_make(2, rd, &r);
  if (st == OPTIC_OK) st = optic_dot_plan(&l, &r, &dims, plan);
  if (st == OPTIC_OK && (plan->path != OPTIC_DOT_PATH_GEMM || plan->scratch_bytes != 0))
    st = optic_fail(OPTIC_ERR_INTERNAL, "calibrate: the grid's %lld x %lld x %lld dot is not a copy-free GEMM",
                    (long long)m, (long long)n, (long long)k);
  return st;
}

/* The untimed points (index sum above MAX_INDEX_SUM), in increasing index
 * sum so the point each copies from is already set. */
static void fill_untimed(double *grid) {
  for (int sum = MAX_INDEX_SUM + 1; sum <= 3 * (OPTIC_DOT_GRID_AXIS - 1); sum++) {
    for (int i = 0; i < OPTIC_DOT_GRID_AXIS; i++) {
      for (int j = 0; j < OPTIC_DOT_GRID_AXIS; j++) {
        int l = sum - i - j;
        if (l < 0 || l >= OPTIC_DOT_GRID_AXIS) continue;
        int at[3] = {i, j, l}, big = 0;
        for (int d = 1; d < 3; d++) big = at[d] > at[big] ? d : big;
        at[big]--;
        grid[OPTIC_DOT_GRID_INDEX(i, j, l)] = grid[OPTIC_DOT_GRID_INDEX(at[0], at[1], at[2])];
      }
    }
  }
}

/* One point: 2 m n k / (core_peak x the fastest call), at most 1. */
static optic_status time_point(grid_job *j, int i, int jn, int l, const calib_ops_plan *plan, double core_peak,
                               double *eff) {
  int64_t m = OPTIC_DOT_GRID_SIZE(i), n = OPTIC_DOT_GRID_SIZE(jn), k = OPTIC_DOT_GRID_SIZE(l);
  optic_status st = plan_gemm(m, n, k, &j->plan);
  double ns = 0;
  int trials = plan->trials / 3 > 2 ? plan->trials / 3 : 2;
  if (st == OPTIC_OK) st = best_call_ns(j, trials, plan->target_ns / 16, &ns);
  if (st != OPTIC_OK) return st;
  double e = ns > 0 ? 2.0 * (double)m * (double)n * (double)k / (core_peak * ns * 1e-9) : 1;
  *eff = e > 1 ? 1 : e;
  return OPTIC_OK;
}

static optic_status time_grid(grid_job *j, const calib_ops_plan *plan, double core_peak, double *grid) {
  optic_status st = OPTIC_OK;
  for (int i = 0; i < OPTIC_DOT_GRID_AXIS && st == OPTIC_OK; i++)
    for (int jn = 0; jn < OPTIC_DOT_GRID_AXIS && st == OPTIC_OK; jn++)
      for (int l = 0; l < OPTIC_DOT_GRID_AXIS && st == OPTIC_OK; l++)
        if (i + jn + l <= MAX_INDEX_SUM)
          st = time_point(j, i, jn, l, plan, core_peak, &grid[OPTIC_DOT_GRID_INDEX(i, jn, l)]);
  return st;
}

optic_status calib_measure_dot_grid(const calib_ops_plan *plan, double core_peak, double *grid) {
  memset(grid, 0, sizeof(double) * OPTIC_DOT_GRID_POINTS);
  if (!(core_peak > 0)) return OPTIC_OK;
  float *buf = malloc(3 * MAX_ELEMENTS * sizeof(float));
  if (!buf) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the dot grid's operands");
  for (size_t e = 0; e < 3 * MAX_ELEMENTS; e++) buf[e] = 0.5f + (float)(e % 7) * 0.0625f;
  grid_job j = {.a = buf, .b = buf + MAX_ELEMENTS, .c = buf + 2 * MAX_ELEMENTS};
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1); /* as inside the runtime's parallel region */
  optic_status st = time_grid(&j, plan, core_peak, grid);
  openblas_set_num_threads(saved);
  free(buf);
  if (st != OPTIC_OK) {
    memset(grid, 0, sizeof(double) * OPTIC_DOT_GRID_POINTS);
    return st;
  }
  fill_untimed(grid);
  return OPTIC_OK;
}
