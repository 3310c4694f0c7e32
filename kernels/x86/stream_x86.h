/* Internal, x86 kernels only: the streaming-store prologue shared by the AVX2
 * and AVX-512 elementwise kernels (policy in kernels/stream.h). */
#ifndef OPTIC_KERNELS_X86_STREAM_X86_H
#define OPTIC_KERNELS_X86_STREAM_X86_H

#include <stdint.h>

#include "kernels/stream.h"

/* optic_stream_copy's per-ISA bodies (kernels/x86/avx2/stream_avx2.c,
 * kernels/x86/avx512/stream_avx512.c): the same bytes, wider stores. */
void optic_stream_copy__avx2(void *dst, const void *src, size_t bytes);
void optic_stream_copy__avx512(void *dst, const void *src, size_t bytes);

/* For a call writing n elements of elem_size bytes (a power of two) to y with
 * the given footprint: SIZE_MAX when the call must use normal stores, else
 * the number of leading elements (fewer than align / elem_size, at most n) to
 * store normally before y + head is aligned to `align` bytes, as streaming
 * stores require. A y not aligned to its element size never streams. */
static inline size_t optic_x86_stream_head_elems(const void *y, size_t n, size_t elem_size, size_t footprint,
                                                 size_t align) {
  uintptr_t addr = (uintptr_t)y;
  if ((addr & (elem_size - 1u)) != 0 || !optic_stream_use(footprint)) return SIZE_MAX;
  size_t head = ((align - (addr & (align - 1))) & (align - 1)) / elem_size;
  return head < n ? head : n;
}

/* The float case of optic_x86_stream_head_elems. */
static inline size_t optic_x86_stream_head(const float *y, size_t n, size_t footprint, size_t align) {
  return optic_x86_stream_head_elems(y, n, sizeof(float), footprint, align);
}

/* Defines fn(n, value, y), a fill of elements of type T that streams when
 * large: the unaligned head through FILL(count, vector, ptr) (normal stores),
 * whole vectors through STREAM(ptr, vector), the tail through FILL, then
 * SFENCE. VEC is the vector type, ALIGN its size in bytes, SET1 broadcasts a
 * T. Expanded in each ISA's file (which includes <immintrin.h> and
 * <string.h>), so the intrinsics get that file's flags. */
#define OPTIC_X86_FILL_STREAMED(fn, T, VEC, ALIGN, SET1, STREAM, FILL)              \
  void fn(size_t n, const void *value, void *yv) {                                  \
    T v;                                                                            \
    memcpy(&v, value, sizeof v);                                                    \
    const VEC vv = SET1(v);                                                         \
    T *y = yv;                                                                      \
    size_t head = optic_x86_stream_head_elems(y, n, sizeof v, n * sizeof v, ALIGN); \
    if (head == SIZE_MAX) {                                                         \
      FILL(n, vv, y);                                                               \
      return;                                                                       \
    }                                                                               \
    FILL(head, vv, y);                                                              \
    size_t i = head;                                                                \
    for (; i + (ALIGN) / sizeof v <= n; i += (ALIGN) / sizeof v) STREAM(y + i, vv); \
    FILL(n - i, vv, y + i);                                                         \
    _mm_sfence();                                                                   \
  }

#endif
