/* AVX2 streaming copy (kernels/stream.h's optic_stream_copy on AVX2):
 * 32-byte non-temporal stores, two per line. AVX2 flags only. */
#include <immintrin.h>
#include <string.h>

#include "kernels/x86/stream_x86.h"

void optic_stream_copy__avx2(void *dst, const void *src, size_t bytes) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  size_t head = (32 - ((uintptr_t)d & 31)) & 31;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32));
    _mm256_stream_si256((__m256i *)(void *)(d + i), a);
    _mm256_stream_si256((__m256i *)(void *)(d + i + 32), b);
  }
  if (i + 32 <= bytes) {
    _mm256_stream_si256((__m256i *)(void *)(d + i), _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
    i += 32;
  }
  memcpy(d + i, s + i, bytes - i);
}
