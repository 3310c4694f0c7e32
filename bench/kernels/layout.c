/* Benchmarks of the layout family, generated from its X-macro list
 * (kernels/list/layout.inc). n counts elements moved:
 *  - copy: n floats (4n bytes) through the elementwise harness, 8 B/element;
 *  - fill: n elements of the kernel's width, write only: width B/element;
 *  - copy2d: n / 1024 rows of 1000 floats out of 1024-float rows (ldx = ldy =
 *    4 KiB: slicing a padded matrix), split by rows, 8 B per float copied;
 *  - transpose: rows x cols with cols the power of two >= sqrt(n), rows =
 *    n / cols (64 x 128 in cache, 4096 x 4096 in DRAM), split by rows in
 *    pieces of 64 bytes' worth of rows (so threads write separate lines of y;
 *    the 1-byte in-cache case is then one piece: one thread works), read +
 *    write: 2 x width B/element.
 * Calls kernels only through their declared types. */
#include <string.h>

#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/layout.h"

/* ------------------------------------------------ copy, fill: elementwise */

static void call_copy(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_copy_fn)fn)(n * sizeof(float), arrays[0], arrays[1]);
}

static const uint8_t fill_x8 = 0x5a;
static const float fill_x32 = 1.5f;
static const double fill_x64 = 1.5;

static void call_fill_x8(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_fill_fn)fn)(n, &fill_x8, arrays[0]);
}
static void call_fill_x32(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_fill_fn)fn)(n, &fill_x32, arrays[0]);
}
static void call_fill_x64(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((optic_fill_fn)fn)(n, &fill_x64, arrays[0]);
}

/* Per width: the fill adapter, the output type and bytes per element. */
#define FILL_X8 .call = call_fill_x8, .types = {BENCH_U8}, .bytes_per_element = 1.0
#define FILL_X32 .call = call_fill_x32, .types = {BENCH_F32}, .bytes_per_element = 4.0
#define FILL_X64 .call = call_fill_x64, .types = {BENCH_F64}, .bytes_per_element = 8.0

static const bench_elementwise elementwise_entries[] = {
#define X_COPY(op_, isa_, fn_) \
  {.function = #fn_,           \
   .isa = OPTIC_ISA_##isa_,    \
   .fn = (void (*)(void))fn_,  \
   .call = call_copy,          \
   .inputs = 1,                \
   .outputs = 1,               \
   .bytes_per_element = 8.0},
#define X_FILL(width_, isa_, fn_) \
  {.function = #fn_, .isa = OPTIC_ISA_##isa_, .fn = (void (*)(void))fn_, .inputs = 0, .outputs = 1, FILL_##width_},
#define X_COPY2D(op_, isa_, fn_)
#define X_TRANSPOSE(width_, isa_, fn_)
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_FILL
#undef X_COPY2D
#undef X_TRANSPOSE
};

/* -------------------------------------------- copy2d, transpose: by rows */

enum { ROW_FLOATS = 1024, COPY_FLOATS = 1000 };

typedef struct strided_entry {
  const char *function;
  optic_isa isa;
  optic_copy2d_fn copy2d;       /* X_COPY2D entries */
  optic_transpose_fn transpose; /* X_TRANSPOSE entries */
  bench_dtype type;             /* transpose element type */
} strided_entry;

#define WIDTH_TYPE_X8 BENCH_U8
#define WIDTH_TYPE_X32 BENCH_F32
#define WIDTH_TYPE_X64 BENCH_F64

static const strided_entry strided_entries[] = {
#define X_COPY(op_, isa_, fn_)
#define X_FILL(width_, isa_, fn_)
#define X_COPY2D(op_, isa_, fn_) {#fn_, OPTIC_ISA_##isa_, fn_, NULL, BENCH_F32},
#define X_TRANSPOSE(width_, isa_, fn_) {#fn_, OPTIC_ISA_##isa_, NULL, fn_, WIDTH_TYPE_##width_},
#include "kernels/list/layout.inc"
#include "core/unconst.h"
#undef X_COPY
#undef X_FILL
#undef X_COPY2D
#undef X_TRANSPOSE
};

typedef struct strided_job {
  const strided_entry *e;
  const unsigned char *x;
  unsigned char *y;
  size_t rows, cols, width, align_rows;
} strided_job;

static bool copy2d_slice(void *job, int t, int nt) {
  const strided_job *j = job;
  size_t lo, hi;
  bench_split_aligned(j->rows, 1, t, nt, &lo, &hi);
  const size_t ld = ROW_FLOATS * sizeof(float);
  j->e->copy2d(hi - lo, COPY_FLOATS * sizeof(float), j->x + lo * ld, ld, j->y + lo * ld, ld);
  return true;
}

/* Rows [lo, hi) of x (rows x cols, ldx = cols) land in columns [lo, hi) of y
 * (cols x rows, ldy = rows). */
static bool transpose_slice(void *job, int t, int nt) {
  const strided_job *j = job;
  size_t lo, hi;
  bench_split_aligned(j->rows, j->align_rows, t, nt, &lo, &hi);
  j->e->transpose(hi - lo, j->cols, j->x + lo * j->cols * j->width, j->cols, j->y + lo * j->width, j->rows);
  return true;
}

static void run_strided(optic_bench_state *st, void *user) {
  const strided_entry *e = user;
  size_t n = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  strided_job j = {.e = e};
  bench_parallel p = {.job = &j, .repeats = bench_repeats(n), .items_per_iteration = (int64_t)n};
  size_t elems;
  bench_dtype type;
  if (e->copy2d != NULL) {
    j.rows = n / ROW_FLOATS;
    j.width = sizeof(float);
    elems = j.rows * ROW_FLOATS;
    type = BENCH_F32;
    p.slice = copy2d_slice;
    p.bytes_per_iteration = 8.0 * (double)(j.rows * COPY_FLOATS);
    p.items_per_iteration = (int64_t)(j.rows * COPY_FLOATS);
  } else {
    j.cols = 1;
    while (j.cols * j.cols < n) j.cols *= 2;
    j.rows = n / j.cols;
    j.width = bench_dtype_bytes(e->type);
    j.align_rows = 64 / j.width;
    elems = j.rows * j.cols;
    type = e->type;
    p.slice = transpose_slice;
    p.bytes_per_iteration = 2.0 * (double)j.width * (double)elems;
  }
  j.x = bench_array(BENCH_INPUT_SLOT0, elems, type);
  j.y = bench_array(BENCH_OUTPUT_SLOT0, elems, type);
  if (j.x == NULL || j.y == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_run_parallel(st, threads, &p, e->function);
}

void bench_register_layout_kernels(void) {
  bench_register_elementwise_table("layout", elementwise_entries,
                                   sizeof elementwise_entries / sizeof *elementwise_entries);
  for (size_t i = 0; i < sizeof strided_entries / sizeof *strided_entries; i++) {
    if (!optic_isa_supported(strided_entries[i].isa)) continue;
    bench_register_n_threads(bench_name("kernel/layout/%s", strided_entries[i].function), run_strided,
                             OPTIC_UNCONST(void *, &strided_entries[i]), (int64_t)BENCH_N_IN_CACHE,
                             (int64_t)BENCH_N_DRAM);
  }
}
