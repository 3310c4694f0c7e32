/* Shared by the kernel family tests: edge sizes around an ISA's tile width,
 * guarded buffers that catch writes past the end, deterministic random data
 * with special values, and float comparison by ULP distance. */
#ifndef OPTIC_TESTS_KERNEL_TEST_H
#define OPTIC_TESTS_KERNEL_TEST_H

#include <math.h>
#include <stdint.h>

#include "kernels/common.h"
#include "tests/harness.h"

/* Sizes every elementwise kernel is swept over: 0, 1, tile-1, tile, tile+1 for
 * the vector and the unrolled (x2, x4) tiles, and large odd sizes. Returns the count. */
size_t kt_sizes(optic_isa isa, size_t *out, size_t max);
/* Misaligned starts, in floats from a 64-byte boundary. */
extern const size_t kt_offsets[];
extern const size_t kt_noffsets;

/* A float array of n elements starting `offset` floats past a 64-byte
 * boundary, followed by guard floats holding a sentinel pattern. */
typedef struct kt_buf {
  float *base; /* allocation */
  float *p;    /* the array */
  size_t n;
} kt_buf;
kt_buf kt_buf_make(size_t n, size_t offset);
/* True if no guard float was overwritten. */
bool kt_buf_guard_ok(const kt_buf *b);
void kt_buf_free(kt_buf *b);

/* xorshift64*: deterministic per seed. */
typedef struct kt_rng {
  uint64_t s;
} kt_rng;
uint64_t kt_next(kt_rng *r);
/* Uniform in [lo, hi). */
float kt_uniform(kt_rng *r, float lo, float hi);
/* Fills x with uniform values in [lo, hi); with special != 0, about 1 in 16
 * values is one of ±0, ±inf, NaN, a subnormal, FLT_MAX, FLT_MIN. */
void kt_fill(kt_rng *r, float *x, size_t n, float lo, float hi, int special);

/* Distance in units in the last place between two floats (0 if both NaN,
 * UINT32_MAX if only one is). */
uint32_t kt_ulp_distance(float a, float b);
/* Bitwise equality with every NaN equal to every NaN. */
bool kt_same(float a, float b);

/* Skips (prints and returns true) when this CPU cannot run isa's kernels. */
bool kt_skip_isa(optic_isa isa);

/* Elements of shape s (0 for an invalid shape). */
size_t kt_elements(const optic_shape *s);

/* Guarded arrays of any element type (compare, select, clamp, convert tests):
 * n elements of elem_size bytes starting offset elements past a 64-byte
 * boundary; the offset * elem_size bytes before the array and KT_MEM_GUARD
 * bytes after it hold a sentinel, so stray writes on either side are caught. */
#define KT_MEM_GUARD 64
typedef struct kt_mem {
  unsigned char *base; /* allocation */
  void *p;             /* the array */
  size_t n, elem, offset;
} kt_mem;
kt_mem kt_mem_make(size_t n, size_t elem_size, size_t offset);
/* True if no sentinel byte before or after the array was overwritten. */
bool kt_mem_guard_ok(const kt_mem *m);
void kt_mem_free(kt_mem *m);

#endif
