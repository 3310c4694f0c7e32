/* The execution context's memory pool: a table of arenas, each cached or lent
 * out, reused best fit. Only a failed reservation is retried (after freeing
 * the cache, with a bounded doubling wait); everything else fails at once. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "exec/pool.h"
#include "exec/profile.h"

#define SMALL_GRAIN ((size_t)4096)
#define HUGE_GRAIN ((size_t)2 << 20)

typedef struct arena_slot {
  void *ptr;
  size_t capacity;
  size_t requested; /* bytes asked by the current borrower; 0 when cached */
  bool in_use;
} arena_slot;

struct exec_pool {
  optic_pool_options opts;
  const optic_allocator *alloc;
  pthread_mutex_t mu;
  arena_slot *slots;
  size_t nslots, slot_cap;
  optic_pool_stats stats;
};

optic_pool_options optic_pool_options_default(void) {
  optic_pool_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.allocator = NULL;
  o.max_retries = 3;
  o.backoff_ns = 1000000;
  o.max_backoff_ns = 100000000;
  o.max_cached_bytes = 0;
  o.alignment = 0;
  return o;
}

/* Copies the fields a caller's (possibly older, shorter) struct has. */
static optic_pool_options options_from(const optic_pool_options *in) {
  optic_pool_options o = optic_pool_options_default();
  if (in == NULL) return o;
  size_t n = in->size < sizeof o ? in->size : sizeof o;
  if (n > sizeof(size_t)) memcpy((char *)&o + sizeof(size_t), (const char *)in + sizeof(size_t), n - sizeof(size_t));
  o.size = sizeof o;
  return o;
}

const optic_pool_options *exec_pool_options(const exec_pool *p) { return &p->opts; }

optic_status exec_pool_create(const optic_pool_options *options, exec_pool **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_create: out is NULL");
  *out = NULL;
  if (options != NULL && options->size < sizeof(size_t)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "pool_create: options.size is %zu; set it to sizeof(optic_pool_options)", options->size);
  }
  optic_pool_options o = options_from(options);
  if (o.alignment == 0) o.alignment = OPTIC_DEFAULT_ALIGNMENT;
  if ((o.alignment & (o.alignment - 1)) != 0 || o.alignment < sizeof(void *)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_create: alignment %zu is not a power of two >= %zu",
                      o.alignment, sizeof(void *));
  }
  if (o.max_retries < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_create: max_retries is %d; must be >= 0", (int)o.max_retries);
  }
  const optic_allocator *a = o.allocator ? o.allocator : optic_default_allocator();
  if (a->alloc == NULL || a->free == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_create: allocator has a NULL alloc or free function");
  }
  exec_pool *p = calloc(1, sizeof *p);
  if (p == NULL)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "pool_create: no memory for the pool (%zu bytes)", sizeof *p);
  if (pthread_mutex_init(&p->mu, NULL) != 0) {
    free(p);
    return optic_fail(OPTIC_ERR_INTERNAL, "pool_create: pthread_mutex_init failed");
  }
  p->opts = o;
  p->alloc = a;
  *out = p;
  return OPTIC_OK;
}

void exec_pool_destroy(exec_pool *p) {
  if (p == NULL) return;
  for (size_t i = 0; i < p->nslots; i++)
    p->alloc->free(p->alloc->user, p->slots[i].ptr, p->slots[i].capacity, p->opts.alignment);
  free(p->slots);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* Arena size for a request: whole 4 KiB pages, or whole 2 MiB huge pages
 * from the huge-page threshold on (the default allocator maps those anyway),
 * so nearby sizes share arenas. false on overflow. */
static bool arena_capacity(size_t bytes, size_t *cap) {
  size_t grain = bytes >= OPTIC_HUGE_ALLOC_THRESHOLD ? HUGE_GRAIN : SMALL_GRAIN;
  if (bytes > SIZE_MAX - (grain - 1)) return false;
  *cap = (bytes + grain - 1) & ~(grain - 1);
  return true;
}

size_t exec_pool_arena_size(size_t bytes) {
  size_t cap = 0;
  return bytes > 0 && arena_capacity(bytes, &cap) ? cap : 0;
}

static void slot_remove(exec_pool *p, size_t i) {
  p->slots[i] = p->slots[p->nslots - 1];
  p->nslots--;
}

/* Frees every cached arena; caller holds the lock. Returns bytes freed. */
static size_t free_cached_locked(exec_pool *p) {
  size_t freed = 0;
  for (size_t i = 0; i < p->nslots;) {
    if (p->slots[i].in_use) {
      i++;
      continue;
    }
    p->alloc->free(p->alloc->user, p->slots[i].ptr, p->slots[i].capacity, p->opts.alignment);
    freed += p->slots[i].capacity;
    p->stats.bytes_reserved -= p->slots[i].capacity;
    p->stats.arenas--;
    p->stats.trims++;
    slot_remove(p, i);
  }
  return freed;
}

/* Waits ns nanoseconds (bounded: the caller caps ns), resuming after signals. */
static void backoff_wait(uint64_t ns) {
  if (ns == 0) return;
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void arena_hand_out(exec_arena *out, void *ptr, size_t bytes, size_t cap) {
  out->data = ptr;
  out->bytes = bytes;
  out->capacity = cap;
}

/* long: best fit, then reserve with a bounded retry, under one lock */
optic_status exec_pool_acquire(exec_pool *p, size_t bytes, optic_profiler_t *profiler, int32_t thread,
                               exec_arena *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_acquire: out is NULL");
  memset(out, 0, sizeof *out);
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pool_acquire: pool is NULL");
  if (bytes == 0) return OPTIC_OK;
  size_t cap;
  if (!arena_capacity(bytes, &cap)) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "pool_acquire: %zu bytes cannot be rounded up to whole pages", bytes);
  }

  /* Best fit among the cached arenas. */
  pthread_mutex_lock(&p->mu);
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < p->nslots; i++) {
    const arena_slot *s = &p->slots[i];
    if (!s->in_use && s->capacity >= bytes && (best == SIZE_MAX || s->capacity < p->slots[best].capacity)) best = i;
  }
  if (best != SIZE_MAX) {
    arena_slot *s = &p->slots[best];
    s->in_use = true;
    s->requested = bytes;
    p->stats.hits++;
    p->stats.bytes_in_use += s->capacity;
    p->stats.bytes_requested += bytes;
    arena_hand_out(out, s->ptr, bytes, s->capacity);
    pthread_mutex_unlock(&p->mu);
    return OPTIC_OK;
  }
  pthread_mutex_unlock(&p->mu);

  /* Reserve a new arena; on failure free the cache, wait, retry (bounded). */
  uint64_t t0 = optic_now_ns();
  uint64_t wait = p->opts.backoff_ns < p->opts.max_backoff_ns ? p->opts.backoff_ns : p->opts.max_backoff_ns;
  int32_t attempts = 0;
  void *ptr = NULL;
  for (;;) {
    attempts++;
    ptr = p->alloc->alloc(p->alloc->user, cap, p->opts.alignment);
    if (ptr != NULL || attempts > p->opts.max_retries) break;
    pthread_mutex_lock(&p->mu);
    free_cached_locked(p);
    p->stats.retries++;
    pthread_mutex_unlock(&p->mu);
    backoff_wait(wait);
    wait = wait > p->opts.max_backoff_ns / 2 ? p->opts.max_backoff_ns : wait * 2;
  }
  if (ptr == NULL) {
    pthread_mutex_lock(&p->mu);
    p->stats.failures++;
    size_t held = p->stats.bytes_reserved, in_use = p->stats.bytes_in_use;
    pthread_mutex_unlock(&p->mu);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY,
                      "pool_acquire: could not reserve %zu bytes (an arena of %zu bytes): the allocator failed "
                      "%d time%s (max_retries %d); the pool holds %zu bytes, %zu of them in use",
                      bytes, cap, (int)attempts, attempts == 1 ? "" : "s", (int)p->opts.max_retries, held, in_use);
  }
  if (((uintptr_t)ptr & (p->opts.alignment - 1)) != 0) {
    p->alloc->free(p->alloc->user, ptr, cap, p->opts.alignment);
    return optic_fail(OPTIC_ERR_INTERNAL, "pool_acquire: allocator returned %p, not aligned to %zu", ptr,
                      p->opts.alignment);
  }

  pthread_mutex_lock(&p->mu);
  if (p->nslots == p->slot_cap) {
    size_t ncap = p->slot_cap ? p->slot_cap * 2 : 16;
    arena_slot *grown = realloc(p->slots, ncap * sizeof *grown);
    if (grown == NULL) {
      p->stats.failures++;
      pthread_mutex_unlock(&p->mu);
      p->alloc->free(p->alloc->user, ptr, cap, p->opts.alignment);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "pool_acquire: no memory to track a %zu-byte arena (%zu arenas)", cap,
                        p->nslots + 1);
    }
    p->slots = grown;
    p->slot_cap = ncap;
  }
  p->slots[p->nslots++] = (arena_slot){ptr, cap, bytes, true};
  p->stats.misses++;
  p->stats.arenas++;
  p->stats.bytes_reserved += cap;
  p->stats.bytes_in_use += cap;
  p->stats.bytes_requested += bytes;
  if (p->stats.bytes_reserved > p->stats.peak_bytes) p->stats.peak_bytes = p->stats.bytes_reserved;
  pthread_mutex_unlock(&p->mu);
  arena_hand_out(out, ptr, bytes, cap);

  optic_profiler_t *prof = exec_profiler_active(profiler);
  if (prof) {
    exec_profiler_record_span(prof, OPTIC_PROFILE_RESERVE, "reserve", attempts > 1 ? "retried" : "", NULL, 0, thread,
                              -1, 0, t0, optic_now_ns(), 0.0, (double)cap, 0.0);
  }
  return OPTIC_OK;
}

bool exec_pool_release(exec_pool *p, exec_arena *a) {
  if (p == NULL || a == NULL || a->data == NULL) return false;
  bool found = false;
  void *to_free = NULL;
  size_t free_cap = 0;
  pthread_mutex_lock(&p->mu);
  for (size_t i = 0; i < p->nslots; i++) {
    arena_slot *s = &p->slots[i];
    if (s->ptr != a->data || !s->in_use) continue;
    found = true;
    p->stats.bytes_in_use -= s->capacity;
    p->stats.bytes_requested -= s->requested;
    s->in_use = false;
    s->requested = 0;
    size_t cached = p->stats.bytes_reserved - p->stats.bytes_in_use;
    if (p->opts.max_cached_bytes != 0 && cached > p->opts.max_cached_bytes) {
      to_free = s->ptr;
      free_cap = s->capacity;
      p->stats.bytes_reserved -= s->capacity;
      p->stats.arenas--;
      p->stats.trims++;
      slot_remove(p, i);
    }
    break;
  }
  pthread_mutex_unlock(&p->mu);
  if (to_free) p->alloc->free(p->alloc->user, to_free, free_cap, p->opts.alignment);
  if (found) memset(a, 0, sizeof *a);
  return found;
}

size_t exec_pool_trim(exec_pool *p) {
  if (p == NULL) return 0;
  pthread_mutex_lock(&p->mu);
  size_t freed = free_cached_locked(p);
  pthread_mutex_unlock(&p->mu);
  return freed;
}

void exec_pool_stats(exec_pool *p, optic_pool_stats *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (p == NULL) return;
  pthread_mutex_lock(&p->mu);
  *out = p->stats;
  pthread_mutex_unlock(&p->mu);
}
