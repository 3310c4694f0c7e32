/* The streaming-store threshold (see kernels/stream.h). */
#include "kernels/stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <optic/core.h>

#include "kernels/common.h"
#if OPTIC_ARCH_X86_64
#include <emmintrin.h>

#include "kernels/x86/stream_x86.h"
#endif

_Atomic size_t optic_stream_min_bytes_ = OPTIC_STREAM_UNSET_;
static const char *threshold_source = "default";
static pthread_once_t stream_once = PTHREAD_ONCE_INIT;

enum { DEFAULT_LLC_BYTES = 32 << 20, L2S_PER_CPU = 4 };

/* The cache rule: the last-level cache, counted at most L2S_PER_CPU L2
 * caches per online CPU (virtual machines may report the host's whole LLC
 * to a guest of a few CPUs: 480 MiB for 2 CPUs here, of which the guest
 * keeps far less; real CPUs have at most a few L2s of LLC per core). */
static size_t cache_bytes(const char **source) {
  const optic_cpu_info *ci = optic_cpu_info_get();
  size_t bytes = ci->llc_bytes > 0 ? (size_t)ci->llc_bytes : (size_t)DEFAULT_LLC_BYTES;
  *source = ci->llc_bytes > 0 ? "llc" : "default";
  if (ci->l2_bytes > 0 && ci->logical_cpus > 0) {
    size_t cap = (size_t)ci->l2_bytes * L2S_PER_CPU * (size_t)ci->logical_cpus;
    if (cap < bytes) bytes = cap, *source = "l2";
  }
  return bytes;
}

static void init_once(void) {
  size_t bytes = cache_bytes(&threshold_source);
  const char *env = getenv("OPTIC_STREAM_STORES");
  if (env != NULL && env[0] != '\0') {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (strcmp(env, "off") == 0) {
      bytes = SIZE_MAX, threshold_source = "env";
    } else if (env[0] >= '0' && env[0] <= '9' && *end == '\0' && errno == 0 && v < OPTIC_STREAM_UNSET_) {
      bytes = (size_t)v, threshold_source = "env";
    } else {
      threshold_source = "env-invalid";
    }
  }
  atomic_store(&optic_stream_min_bytes_, bytes);
}

void optic_stream_init(void) { pthread_once(&stream_once, init_once); }

size_t optic_stream_threshold(const char **source) {
  optic_stream_init();
  if (source != NULL) *source = threshold_source;
  return atomic_load(&optic_stream_min_bytes_);
}

size_t optic_stream_threshold_set(size_t bytes) {
  optic_stream_init();
  if (bytes == OPTIC_STREAM_UNSET_) bytes = SIZE_MAX;
  return atomic_exchange(&optic_stream_min_bytes_, bytes);
}

/* The selected ISA's copy (OPTIC_ISA caps it; one acquire load per call):
 * whole-line 64-byte stores on AVX-512, 32-byte on AVX2, else SSE2's 16. */
void optic_stream_copy(void *dst, const void *src, size_t bytes) {
#if OPTIC_ARCH_X86_64
  switch (optic_isa_selected()) {
    case OPTIC_ISA_AVX512: optic_stream_copy__avx512(dst, src, bytes); return;
    case OPTIC_ISA_AVX2: optic_stream_copy__avx2(dst, src, bytes); return;
    default: break;
  }
  unsigned char *d = dst;
  const unsigned char *sp = src;
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > bytes) head = bytes;
  memcpy(d, sp, head);
  d += head, sp += head, bytes -= head;
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128((__m128i *)(void *)(d + i), _mm_loadu_si128((const __m128i *)(const void *)(sp + i)));
  }
  memcpy(d + i, sp + i, bytes - i);
#else
  memcpy(dst, src, bytes);
#endif
}

void optic_stream_fence(void) {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}
