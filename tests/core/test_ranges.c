/* Byte-range overlap helpers (core/ranges.h) against a brute-force oracle:
 * pairwise overlap at the edges (adjacent, one shared byte, empty), and on
 * random sets of ranges whether a conflict exists (a written range sharing
 * a byte with any other), that the reported pair truly conflicts, and the
 * sorted hit lookup. */
#include <stdint.h>

#include "core/ranges.h"
#include "tests/harness.h"

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

static void random_sets_against_brute_force(void) {
  int with_conflict = 0;
  for (int trial = 0; trial < 20000; trial++) {
    size_t n = 1 + rnd() % 12;
    optic_range r[12];
    for (size_t i = 0; i < n; i++) {
      uintptr_t lo = 1000 + rnd() % 200, len = 1 + rnd() % 24;
      r[i] = (optic_range){.lo = lo, .hi = lo + len, .kind = (int32_t)(rnd() % 3), .index = (int32_t)i,
                           .written = rnd() % 3 == 0};
    }
    bool want = false;
    for (size_t i = 0; i < n && !want; i++) {
      for (size_t j = i + 1; j < n && !want; j++) want = (r[i].written || r[j].written) && shares(&r[i], &r[j]);
    }
    size_t a = 0, b = 0;
    bool got = optic_ranges_find_conflict(r, n, &a, &b);
    OT_CHECK(got == want, "trial %d: conflict %d, brute force %d", trial, got, want);
    if (got) {
      with_conflict++;
      OT_CHECK(a != b && a < n && b < n && (r[a].written || r[b].written) && shares(&r[a], &r[b]),
               "trial %d: reported pair does not conflict", trial);
    }
    for (size_t i = 1; i < n; i++) OT_CHECK(r[i - 1].lo <= r[i].lo, "trial %d: not sorted", trial);
    uintptr_t max_hi[12];
    optic_ranges_index(r, n, max_hi);
    uintptr_t qlo = 990 + rnd() % 240, qhi = qlo + rnd() % 20;
    bool hit_want = false;
    optic_range q = {.lo = qlo, .hi = qhi};
    for (size_t i = 0; i < n; i++) hit_want = hit_want || (qlo < qhi && shares(&r[i], &q));
    ptrdiff_t h = optic_ranges_hit(r, max_hi, n, qlo, qhi);
    OT_CHECK((h >= 0) == hit_want, "trial %d: hit %td, brute force %d", trial, h, hit_want);
    if (h >= 0) OT_CHECK(shares(&r[h], &q), "trial %d: hit %td does not share a byte", trial, h);
    if (ot_failures_ > 0) return;
  }
  OT_CHECK(with_conflict > 1000 && with_conflict < 19000, "only %d of 20000 sets had a conflict", with_conflict);
}

static const ot_case cases[] = {
    {"pairwise_edges", pairwise_edges},
    {"random_sets_against_brute_force", random_sets_against_brute_force},
};
OT_MAIN(cases)
