/* Internal, x86 kernels only: the streaming-store prologue shared by the AVX2
 * and AVX-512 elementwise kernels (policy in kernels/stream.h). */
#ifndef OPTIC_KERNELS_X86_STREAM_X86_H
#define OPTIC_KERNELS_X86_STREAM_X86_H

#include <stdint.h>

#include "kernels/stream.h"

/* For a call of n floats written to y with the given footprint: SIZE_MAX when
 * the call must use normal stores, else the number of leading floats (< the
 * vector width, at most n) to store normally before y + head is aligned to
 * `align` bytes, as streaming stores require. A y that is not float-aligned
 * never streams. */
static inline size_t optic_x86_stream_head(const float *y, size_t n, size_t footprint, size_t align) {
  uintptr_t addr = (uintptr_t)y;
  if ((addr & 3u) != 0 || !optic_stream_use(footprint)) return SIZE_MAX;
  size_t head = ((align - (addr & (align - 1))) & (align - 1)) / sizeof(float);
  return head < n ? head : n;
}

#endif
