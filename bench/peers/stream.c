/* Bandwidth peers: STREAM-style copy, scale, add, triad and the
 * read-modify-write y += s*b (no write-allocate traffic: every line written
 * was just read), as plain C loops. This file is compiled with -O3
 * -fno-math-errno and no -m flags (bench/CMakeLists.txt): the bound a plain
 * compiler gives, which optic's hand-vectorized kernels must match. Never
 * hand-vectorize here. Run through the same harness as the kernels. */
#include "bench/bench_util.h"
#include "bench/elementwise.h"

static void stream_copy(size_t n, const float *restrict a, float *restrict y) {
  for (size_t i = 0; i < n; i++) y[i] = a[i];
}

static void stream_scale(size_t n, const float *restrict a, float s, float *restrict y) {
  for (size_t i = 0; i < n; i++) y[i] = s * a[i];
}

static void stream_add(size_t n, const float *restrict a, const float *restrict b, float *restrict y) {
  for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

static void stream_triad(size_t n, const float *restrict a, const float *restrict b, float s, float *restrict y) {
  for (size_t i = 0; i < n; i++) y[i] = a[i] + s * b[i];
}

static void rmw_axpy(size_t n, const float *restrict b, float s, float *restrict y) {
  for (size_t i = 0; i < n; i++) y[i] += s * b[i];
}

typedef void (*copy_fn)(size_t, const float *, float *);
typedef void (*scale_fn)(size_t, const float *, float, float *);
typedef void (*add_fn)(size_t, const float *, const float *, float *);
typedef void (*triad_fn)(size_t, const float *, const float *, float, float *);

static void call_copy(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((copy_fn)fn)(n, arrays[0], arrays[1]);
}
static void call_scale(void (*fn)(void), size_t n, void *const *arrays, float s) {
  ((scale_fn)fn)(n, arrays[0], s, arrays[1]);
}
static void call_add(void (*fn)(void), size_t n, void *const *arrays, float s) {
  (void)s;
  ((add_fn)fn)(n, arrays[0], arrays[1], arrays[2]);
}
static void call_triad(void (*fn)(void), size_t n, void *const *arrays, float s) {
  ((triad_fn)fn)(n, arrays[0], arrays[1], s, arrays[2]);
}

/* Bytes per element in STREAM's counting: copy/scale read 1 and write 1
 * array, add/triad read 2 and write 1; rmw reads b and y and writes y. The
 * loops' normal stores to the array they write but do not read allocate
 * its lines (4 bytes per element read first out of cache), rmw's do not. */
static const bench_elementwise peers[] = {
    {.function = "stream_copy",
     .isa = OPTIC_ISA_SCALAR,
     .fn = (void (*)(void))stream_copy,
     .call = call_copy,
     .inputs = 1,
     .outputs = 1,
     .bytes_per_element = 8.0,
     .allocated_per_element = 4.0},
    {.function = "stream_scale",
     .isa = OPTIC_ISA_SCALAR,
     .fn = (void (*)(void))stream_scale,
     .call = call_scale,
     .inputs = 1,
     .outputs = 1,
     .bytes_per_element = 8.0,
     .allocated_per_element = 4.0},
    {.function = "stream_add",
     .isa = OPTIC_ISA_SCALAR,
     .fn = (void (*)(void))stream_add,
     .call = call_add,
     .inputs = 2,
     .outputs = 1,
     .bytes_per_element = 12.0,
     .allocated_per_element = 4.0},
    {.function = "stream_triad",
     .isa = OPTIC_ISA_SCALAR,
     .fn = (void (*)(void))stream_triad,
     .call = call_triad,
     .inputs = 2,
     .outputs = 1,
     .bytes_per_element = 12.0,
     .allocated_per_element = 4.0},
    {.function = "rmw_axpy",
     .isa = OPTIC_ISA_SCALAR,
     .fn = (void (*)(void))rmw_axpy,
     .call = call_scale,
     .inputs = 1,
     .outputs = 1,
     .bytes_per_element = 12.0},
};

void bench_register_stream(void) {
  for (size_t i = 0; i < sizeof peers / sizeof *peers; i++) bench_register_elementwise("peer", &peers[i]);
}
