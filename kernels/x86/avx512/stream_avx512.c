/* AVX-512 streaming copy (kernels/stream.h's optic_stream_copy on AVX-512):
 * 64-byte non-temporal stores, one whole line each, so no write-combining
 * buffer waits for the other parts of a line. AVX-512 flags only. */
#include <immintrin.h>
#include <string.h>

#include "kernels/x86/stream_x86.h"

void optic_stream_copy__avx512(void *dst, const void *src, size_t bytes) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  size_t i = head;
  for (; i + 128 <= bytes; i += 128) {
    const __m512i a = _mm512_loadu_si512((const void *)(s + i)), b = _mm512_loadu_si512((const void *)(s + i + 64));
    _mm512_stream_si512((void *)(d + i), a);
    _mm512_stream_si512((void *)(d + i + 64), b);
  }
  if (i + 64 <= bytes) {
    _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
    i += 64;
  }
  memcpy(d + i, s + i, bytes - i);
}
