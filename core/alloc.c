/* Aligned allocation through a pluggable allocator. The default allocator maps
 * large blocks with transparent huge pages: first touch of fresh memory is the
 * dominant cost of big arenas on many hosts (~13 us per 4 KiB page here). */
#include <stdlib.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/strbuf.h"

#define HUGE_PAGE ((size_t)2 << 20)

static bool is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* Maps size + HUGE_PAGE bytes, trims to a 2 MiB-aligned block of size bytes
 * rounded up to whole huge pages, and asks for THP. */
static void *huge_alloc(size_t size) {
  size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  if (len < size || len + HUGE_PAGE < len) return NULL;
  size_t map_len = len + HUGE_PAGE;
  char *raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *aligned = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  size_t head = (size_t)(aligned - raw);
  size_t tail = map_len - head - len;
  if (head) munmap(raw, head);
  if (tail) munmap(aligned + len, tail);
#ifdef MADV_HUGEPAGE
  madvise(aligned, len, MADV_HUGEPAGE); /* advisory: failure only costs speed */
#endif
  return aligned;
}

static void *default_alloc(void *user, size_t size, size_t alignment) {
  (void)user;
  if (size >= OPTIC_HUGE_ALLOC_THRESHOLD && alignment <= HUGE_PAGE) return huge_alloc(size);
  void *p = NULL;
  if (posix_memalign(&p, alignment, size) != 0) return NULL;
  return p;
}

static void default_free(void *user, void *ptr, size_t size, size_t alignment) {
  (void)user;
  if (size >= OPTIC_HUGE_ALLOC_THRESHOLD && alignment <= HUGE_PAGE) {
    munmap(ptr, (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
  } else {
    free(ptr);
  }
}

static const optic_allocator default_allocator = {default_alloc, default_free, NULL};

const optic_allocator *optic_default_allocator(void) { return &default_allocator; }

optic_status optic_alloc(const optic_allocator *allocator, size_t size, size_t alignment, void **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "alloc: out is NULL");
  *out = NULL;
  if (alignment == 0) alignment = OPTIC_DEFAULT_ALIGNMENT;
  if (!is_pow2(alignment) || alignment < sizeof(void *)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "alloc: alignment %zu is not a power of two >= %zu", alignment,
                      sizeof(void *));
  }
  if (allocator == NULL) allocator = &default_allocator;
  if (allocator->alloc == NULL || allocator->free == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "alloc: allocator has a NULL alloc or free function");
  }
  if (size == 0) return OPTIC_OK;
  void *p = allocator->alloc(allocator->user, size, alignment);
  if (p == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "alloc: could not allocate %zu bytes (alignment %zu)", size, alignment);
  }
  if (((uintptr_t)p & (alignment - 1)) != 0) {
    allocator->free(allocator->user, p, size, alignment);
    return optic_fail(OPTIC_ERR_INTERNAL, "alloc: allocator returned %p, not aligned to %zu", p, alignment);
  }
  *out = p;
  return OPTIC_OK;
}

void optic_free(const optic_allocator *allocator, void *ptr, size_t size, size_t alignment) {
  if (ptr == NULL) return;
  if (alignment == 0) alignment = OPTIC_DEFAULT_ALIGNMENT;
  if (allocator == NULL) allocator = &default_allocator;
  allocator->free(allocator->user, ptr, size, alignment);
}

/* Strings and byte buffers handed to callers (core/strbuf.h): a header of
 * two words before the bytes records the block's size and its allocator, so
 * optic_string_free needs nothing but the pointer. */
typedef struct string_header {
  size_t block; /* bytes of the whole block, header included */
  const optic_allocator *allocator;
} string_header;
#define STRING_ALIGN 16 /* >= alignof(max_align_t) on the targets optic builds for */
#define STRING_HEAD ((sizeof(string_header) + STRING_ALIGN - 1) & ~(size_t)(STRING_ALIGN - 1))

optic_status optic_string_alloc(size_t n, void **out) {
  *out = NULL;
  if (n > SIZE_MAX - STRING_HEAD) return optic_fail(OPTIC_ERR_OVERFLOW, "string: %zu bytes do not fit", n);
  void *block = NULL;
  optic_status st = optic_alloc(&default_allocator, STRING_HEAD + n, STRING_ALIGN, &block);
  if (st != OPTIC_OK) return st;
  string_header *h = block;
  h->block = STRING_HEAD + n;
  h->allocator = &default_allocator;
  *out = (char *)block + STRING_HEAD;
  return OPTIC_OK;
}

void optic_string_free(void *s) {
  if (s == NULL) return;
  string_header *h = (string_header *)(void *)((char *)s - STRING_HEAD);
  optic_free(h->allocator, h, h->block, STRING_ALIGN);
}
