/* Allocation: alignment of every size class (small, huge-page path), bad
 * alignments rejected, size 0, a pluggable allocator is really used and sees
 * matching sizes, and an allocator failure becomes OUT_OF_MEMORY. */
#include <stdint.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void default_alignment(void) {
  size_t sizes[] = {1,
                    3,
                    63,
                    64,
                    65,
                    4095,
                    4096,
                    1 << 20,
                    OPTIC_HUGE_ALLOC_THRESHOLD - 1,
                    OPTIC_HUGE_ALLOC_THRESHOLD,
                    OPTIC_HUGE_ALLOC_THRESHOLD + 12345,
                    (size_t)9 << 20};
  size_t aligns[] = {0, 8, 64, 256, 4096};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    for (size_t k = 0; k < sizeof aligns / sizeof *aligns; k++) {
      void *p = NULL;
      OT_EXPECT_OK(optic_alloc(NULL, sizes[i], aligns[k], &p));
      size_t want = aligns[k] ? aligns[k] : OPTIC_DEFAULT_ALIGNMENT;
      OT_CHECK(p != NULL && ((uintptr_t)p % want) == 0, "size %zu align %zu -> %p", sizes[i], want, p);
      if (p) {
        /* The whole block is writable (ASan checks the small ones' bounds). */
        memset(p, 0xA5, sizes[i]);
        OT_CHECK(((unsigned char *)p)[sizes[i] - 1] == 0xA5);
      }
      optic_free(NULL, p, sizes[i], aligns[k]);
    }
  }
}

static void huge_blocks_are_2mib_aligned(void) {
  void *p = NULL;
  size_t size = OPTIC_HUGE_ALLOC_THRESHOLD;
  OT_EXPECT_OK(optic_alloc(optic_default_allocator(), size, 64, &p));
  OT_CHECK(((uintptr_t)p % ((size_t)2 << 20)) == 0, "huge block %p not 2 MiB aligned", p);
  optic_free(optic_default_allocator(), p, size, 64);
}

static void bad_arguments(void) {
  void *p = (void *)1;
  OT_EXPECT_STATUS(optic_alloc(NULL, 16, 3, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(p == NULL, "out not cleared on error");
  OT_EXPECT_STATUS(optic_alloc(NULL, 16, 4, &p), OPTIC_ERR_INVALID_ARGUMENT); /* below sizeof(void*) */
  OT_EXPECT_STATUS(optic_alloc(NULL, 16, 64, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_alloc(NULL, 0, 64, &p));
  OT_CHECK(p == NULL, "size 0 gives NULL");
  optic_free(NULL, NULL, 0, 0); /* NULL-safe */
  optic_allocator broken = {NULL, NULL, NULL};
  OT_EXPECT_STATUS(optic_alloc(&broken, 16, 64, &p), OPTIC_ERR_INVALID_ARGUMENT);
}

typedef struct counting {
  int allocs, frees;
  size_t live_bytes;
  size_t fail_above; /* requests larger than this fail */
  size_t misalign;   /* add to the pointer returned, to test the check */
} counting;

static void *counting_alloc(void *user, size_t size, size_t alignment) {
  counting *c = user;
  if (size > c->fail_above) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, alignment, size + c->misalign) != 0) return NULL;
  c->allocs++;
  c->live_bytes += size;
  return (char *)p + c->misalign;
}

static void counting_free(void *user, void *ptr, size_t size, size_t alignment) {
  counting *c = user;
  (void)alignment;
  c->frees++;
  c->live_bytes -= size;
  free((char *)ptr - c->misalign);
}

static void pluggable_allocator_used(void) {
  counting c = {.fail_above = SIZE_MAX};
  optic_allocator a = {counting_alloc, counting_free, &c};
  void *p = NULL, *q = NULL;
  OT_EXPECT_OK(optic_alloc(&a, 100, 0, &p));
  OT_EXPECT_OK(optic_alloc(&a, 5000, 128, &q));
  OT_CHECK(c.allocs == 2 && c.live_bytes == 5100, "allocs %d live %zu", c.allocs, c.live_bytes);
  OT_CHECK(((uintptr_t)q % 128) == 0);
  optic_free(&a, p, 100, 0);
  optic_free(&a, q, 5000, 128);
  OT_CHECK(c.frees == 2 && c.live_bytes == 0, "frees %d live %zu", c.frees, c.live_bytes);
}

static void allocator_failure_is_out_of_memory(void) {
  counting c = {.fail_above = 1000};
  optic_allocator a = {counting_alloc, counting_free, &c};
  void *p = (void *)1;
  OT_EXPECT_STATUS(optic_alloc(&a, 123456, 0, &p), OPTIC_ERR_OUT_OF_MEMORY);
  OT_CHECK(p == NULL);
  OT_CHECK(strstr(optic_last_error(), "123456") != NULL, "message '%s' lacks the size", optic_last_error());
  /* An absurd request through the default allocator fails cleanly too. */
  OT_EXPECT_STATUS(optic_alloc(NULL, SIZE_MAX - 4096, 64, &p), OPTIC_ERR_OUT_OF_MEMORY);
}

static void misaligned_allocator_rejected(void) {
  counting c = {.fail_above = SIZE_MAX, .misalign = 8};
  optic_allocator a = {counting_alloc, counting_free, &c};
  void *p = (void *)1;
  OT_EXPECT_STATUS(optic_alloc(&a, 256, 64, &p), OPTIC_ERR_INTERNAL);
  OT_CHECK(p == NULL && c.frees == 1 && c.live_bytes == 0, "bad block not returned to the allocator");
}

static const ot_case cases[] = {
    {"default_alignment", default_alignment},
    {"huge_blocks_are_2mib_aligned", huge_blocks_are_2mib_aligned},
    {"bad_arguments", bad_arguments},
    {"pluggable_allocator_used", pluggable_allocator_used},
    {"allocator_failure_is_out_of_memory", allocator_failure_is_out_of_memory},
    {"misaligned_allocator_rejected", misaligned_allocator_rejected},
};
OT_MAIN(cases)
