/* Byte-range overlap helpers (core/ranges.h) against a brute-force oracle:
 * pairwise overlap at the edges (adjacent, one shared byte, empty), and on
 * random sets of ranges (1..12, and 31..1000 ranges) whether a conflict
 * exists (a written range sharing a byte with any other), that the reported
 * pair truly conflicts, and the sorted hit lookup. And the header's promise
 * that they never allocate, for a set as large as a big training step's
 * (glibc builds without a sanitizer: malloc and qsort are interposed). */
#include <stdint.h>

#include "core/ranges.h"
#include "tests/harness.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define NO_MALLOC_COUNT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__)
#define NO_MALLOC_COUNT 1
#endif

#ifndef NO_MALLOC_COUNT
#include <dlfcn.h>
/* While `counting`: the mallocs the code under test makes, and its qsort
 * calls, since glibc's qsort mallocs a scratch buffer for 1 KiB or more
 * through an internal call no interposed malloc sees. */
extern void *__libc_malloc(size_t);
static long mallocs, qsorts;
static bool counting;
void *malloc(size_t n) {
  if (counting) mallocs++;
  return __libc_malloc(n);
}
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (counting) qsorts++;
  void (*libc_qsort)(void *, size_t, size_t, int (*)(const void *, const void *));
  *(void **)&libc_qsort = dlsym(RTLD_NEXT, "qsort");
  libc_qsort(base, n, size, cmp);
}
#endif

static void pairwise_edges(void) {
  char buf[64] = {0};
  OT_CHECK(optic_ranges_overlap(buf, 8, buf, 8), "same range");
  OT_CHECK(optic_ranges_overlap(buf, 8, buf + 7, 8), "one shared byte at the end");
  OT_CHECK(optic_ranges_overlap(buf + 7, 8, buf, 8), "one shared byte at the start");
  OT_CHECK(!optic_ranges_overlap(buf, 8, buf + 8, 8), "adjacent after");
  OT_CHECK(!optic_ranges_overlap(buf + 8, 8, buf, 8), "adjacent before");
  OT_CHECK(optic_ranges_overlap(buf, 64, buf + 10, 1), "inside");
  OT_CHECK(!optic_ranges_overlap(buf, 0, buf, 8) && !optic_ranges_overlap(buf, 8, buf + 3, 0), "empty");
  /* Ends near the top of the address space must not wrap. */
  const void *top = (const void *)(UINTPTR_MAX - 15);
  OT_CHECK(optic_ranges_overlap(top, 16, top, 16) && !optic_ranges_overlap(top, 16, buf, 16), "top of memory");
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

static bool shares(const optic_range *a, const optic_range *b) { return a->lo < b->hi && b->lo < a->hi; }

enum { BIG = 1000 };

/* trials sets of 1..max_n ranges starting in [1000, 1000 + span). */
static void random_sets(int trials, size_t min_n, size_t max_n, uintptr_t span, const char *label) {
  int with_conflict = 0;
  static optic_range r[BIG];
  static uintptr_t max_hi[BIG];
  for (int trial = 0; trial < trials; trial++) {
    size_t n = min_n + rnd() % (max_n - min_n + 1);
    for (size_t i = 0; i < n; i++) {
      uintptr_t lo = 1000 + rnd() % span, len = 1 + rnd() % 24;
      r[i] = (optic_range){
          .lo = lo, .hi = lo + len, .kind = (int32_t)(rnd() % 3), .index = (int32_t)i, .written = rnd() % 3 == 0};
    }
    bool want = false;
    for (size_t i = 0; i < n && !want; i++) {
      for (size_t j = i + 1; j < n && !want; j++) want = (r[i].written || r[j].written) && shares(&r[i], &r[j]);
    }
    size_t a = 0, b = 0;
    bool got = optic_ranges_find_conflict(r, n, &a, &b);
    OT_CHECK(got == want, "%s trial %d (%zu ranges): conflict %d, brute force %d", label, trial, n, got, want);
    if (got) {
      with_conflict++;
      OT_CHECK(a != b && a < n && b < n && (r[a].written || r[b].written) && shares(&r[a], &r[b]),
               "%s trial %d: reported pair does not conflict", label, trial);
    }
    for (size_t i = 1; i < n; i++) OT_CHECK(r[i - 1].lo <= r[i].lo, "%s trial %d: not sorted", label, trial);
    optic_ranges_index(r, n, max_hi);
    uintptr_t qlo = 990 + rnd() % (span + 40), qhi = qlo + rnd() % 20;
    bool hit_want = false;
    optic_range q = {.lo = qlo, .hi = qhi};
    for (size_t i = 0; i < n; i++) hit_want = hit_want || (qlo < qhi && shares(&r[i], &q));
    ptrdiff_t h = optic_ranges_hit(r, max_hi, n, qlo, qhi);
    OT_CHECK((h >= 0) == hit_want, "%s trial %d: hit %td, brute force %d", label, trial, h, hit_want);
    if (h >= 0) OT_CHECK(shares(&r[h], &q), "%s trial %d: hit %td does not share a byte", label, trial, h);
    if (ot_failures_ > 0) return;
  }
  OT_CHECK(with_conflict > trials / 20 && with_conflict < trials - trials / 20, "%s: %d of %d sets had a conflict",
           label, with_conflict, trials);
}

static void random_sets_against_brute_force(void) { random_sets(20000, 1, 12, 200, "small"); }

/* Past glibc qsort's 1 KiB in-stack limit (32 ranges), up to 1000 ranges,
 * sparse enough that about half the sets hold no conflict. */
static void large_sets_against_brute_force(void) { random_sets(400, 31, BIG, 2000000, "large"); }

/* 1000 ranges, none conflicting (the case a valid call pays for): sorting,
 * the sweep, the index and a lookup call no malloc. */
static void never_allocates(void) {
#ifdef NO_MALLOC_COUNT
  printf("  skipped: malloc is not counted in a sanitizer build or without glibc\n");
#else
  static optic_range r[BIG];
  static uintptr_t max_hi[BIG];
  for (size_t i = 0; i < BIG; i++) {
    uintptr_t lo = 4096 + 64 * (uintptr_t)((i * 389) % BIG); /* a permutation: sorting has work to do */
    r[i] = (optic_range){.lo = lo, .hi = lo + 64, .kind = (int32_t)(i % 2), .index = (int32_t)i, .written = i % 2};
  }
  size_t a, b;
  mallocs = qsorts = 0;
  counting = true;
  bool conflict = optic_ranges_find_conflict(r, BIG, &a, &b);
  optic_ranges_index(r, BIG, max_hi);
  ptrdiff_t h = optic_ranges_hit(r, max_hi, BIG, 4096 + 64 * 500, 4096 + 64 * 500 + 1);
  counting = false;
  OT_CHECK(!conflict && h >= 0 && r[h].lo == 4096 + 64 * 500, "conflict %d, hit %td", conflict, h);
  OT_CHECK(mallocs == 0 && qsorts == 0,
           "%ld mallocs and %ld qsort calls (glibc's mallocs) sorting and searching %d ranges; core/ranges.h "
           "promises no allocation",
           mallocs, qsorts, BIG);
#endif
}

static const ot_case cases[] = {
    {"pairwise_edges", pairwise_edges},
    {"random_sets_against_brute_force", random_sets_against_brute_force},
    {"large_sets_against_brute_force", large_sets_against_brute_force},
    {"never_allocates", never_allocates},
};
OT_MAIN(cases)
