/* Internal: when elementwise kernels write with non-temporal ("streaming")
 * stores. A normal store to a line not in cache first reads the line from
 * memory (write-allocate), so y = a + b moves 16 bytes per element instead of
 * 12. Streaming stores skip that read, but leave nothing in cache; they pay
 * off only when the output would be evicted before anyone reads it again.
 *
 * Rule: a kernel call streams when its footprint (bytes it reads plus bytes
 * it writes) is at least the threshold, by default the last-level cache size
 * (optic_cpu_info.llc_bytes; 32 MiB when unknown) but at most 4 L2 caches per
 * online CPU (a guest may be shown the host's whole LLC): by the end of such
 * a call its first output lines are gone from cache anyway. The environment variable
 * OPTIC_STREAM_STORES overrides it: "off" (never stream) or a byte count
 * (0 = always). Read once, when a dispatch table is first built (or, for a
 * kernel called directly before that, by its first call).
 *
 * Which kernels stream: binary (vv, vs) and unary, AVX2 and AVX-512. Scalar
 * and NEON kernels never do. The runtime's loop fusions follow the same rule
 * for their footprint (optic_stream_copy below). A streaming call ends with SFENCE, so its stores
 * are ordered before whatever synchronisation the caller does next. */
#ifndef OPTIC_KERNELS_STREAM_H
#define OPTIC_KERNELS_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The current threshold in bytes (SIZE_MAX = never, OPTIC_STREAM_UNSET_
 * before the first use); do not write directly. */
#define OPTIC_STREAM_UNSET_ (SIZE_MAX - 1)
extern _Atomic size_t optic_stream_min_bytes_;

/* Sets the threshold from the environment and the cache size, once
 * (thread-safe); the dispatch-table builders call it, and optic_stream_use
 * does if nothing did. */
void optic_stream_init(void);

static inline bool optic_stream_use(size_t footprint_bytes) {
  size_t v = atomic_load_explicit(&optic_stream_min_bytes_, memory_order_relaxed);
  if (v == OPTIC_STREAM_UNSET_) {
    optic_stream_init();
    v = atomic_load_explicit(&optic_stream_min_bytes_, memory_order_relaxed);
  }
  return footprint_bytes >= v;
}

/* The threshold now (after init), and where it came from: "llc", "l2" (the
 * L2 cap applied), "default" (cache size unknown), "env", or "env-invalid" (OPTIC_STREAM_STORES held
 * something else than off or a byte count; the cache rule applies). */
size_t optic_stream_threshold(const char **source);

/* Replaces the threshold (tests, benchmarks); returns the previous one.
 * Kernels running concurrently see either value. */
size_t optic_stream_threshold_set(size_t bytes);

/* dst[0, bytes) = src[0, bytes) with streaming stores where the ISA has
 * them (x86-64: the selected ISA's widest, 64 bytes on AVX-512, 32 on AVX2,
 * else SSE2's 16; plain memcpy elsewhere), for callers that decided with
 * optic_stream_use; optic_stream_fence orders them before
 * later loads and stores of other threads (call it before the barrier that
 * publishes the data). */
void optic_stream_copy(void *dst, const void *src, size_t bytes);
void optic_stream_fence(void);

#endif
