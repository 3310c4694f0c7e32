/* Internal: the memory pool an execution context owns (public options and
 * statistics in <optic/exec.h>). Arenas are cached and reused best fit;
 * reservations go through the pluggable allocator with a bounded retry.
 * Never retries anything but a failed reservation, never sleeps unbounded. */
#ifndef OPTIC_EXEC_POOL_H
#define OPTIC_EXEC_POOL_H

#include <optic/exec.h>

typedef struct exec_pool exec_pool;

/* One acquired arena. data is aligned to the pool's alignment and holds at
 * least `bytes` writable bytes (capacity >= bytes). Hand the same struct
 * back to exec_pool_release. data is NULL only for a 0-byte acquire. */
typedef struct exec_arena {
  void *data;
  size_t bytes;    /* what the acquire asked for */
  size_t capacity; /* size of the arena */
} exec_arena;

/* Thread safety: every function below may be called from any number of
 * threads at once on one pool (a mutex guards the arena table; new arenas
 * are reserved and the backoff waited outside it), except destroy.
 * Ownership: the caller owns the pool; arenas belong to the pool and are
 * lent out between acquire and release. */

/* options may be NULL (defaults). Copies the options. Errors:
 * INVALID_ARGUMENT (bad alignment, negative retries, allocator with a NULL
 * function), OUT_OF_MEMORY. */
optic_status exec_pool_create(const optic_pool_options *options, exec_pool **out);
/* Frees every arena, cached or still acquired (using an arena after destroy
 * is the caller's bug). NULL-safe. Not concurrent with anything else. */
void exec_pool_destroy(exec_pool *p);

/* The size of the arena a reservation of bytes gets (rounded up to whole
 * pages as the acquire rounds: 4 KiB, or 2 MiB from
 * OPTIC_HUGE_ALLOC_THRESHOLD on); 0 for 0 bytes or on overflow. */
size_t exec_pool_arena_size(size_t bytes);
/* Lends an arena of at least bytes bytes (see <optic/exec.h> for best fit,
 * rounding and the retry policy). bytes 0 gives data NULL and OK. When
 * profiler is non-NULL and enabled, a reservation (a miss) records a RESERVE
 * event on thread `thread`. Errors: OUT_OF_MEMORY after the last retry
 * (message: bytes asked, attempts, bytes the pool still holds), OVERFLOW when
 * rounding bytes up overflows, INVALID_ARGUMENT for NULL arguments. On error
 * *out is zeroed. */
optic_status exec_pool_acquire(exec_pool *p, size_t bytes, optic_profiler_t *profiler, int32_t thread, exec_arena *out);
/* Returns an arena to the cache (or frees it past max_cached_bytes) and
 * zeroes *a. A zeroed arena is ignored. An arena not lent by this pool is
 * ignored too (returns false; true when it was released). */
bool exec_pool_release(exec_pool *p, exec_arena *a);
/* Frees every cached arena; acquired ones stay. Returns the bytes freed. */
size_t exec_pool_trim(exec_pool *p);
void exec_pool_stats(exec_pool *p, optic_pool_stats *out);
/* The options the pool was created with (defaults filled in). */
const optic_pool_options *exec_pool_options(const exec_pool *p);

#endif
