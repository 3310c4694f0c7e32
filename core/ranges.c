/* Byte-range overlap checks (see ranges.h): a sort by start and one sweep,
 * so a call with many buffers pays O(n log n), not O(n^2). The sort is an
 * in-place heapsort, not qsort: glibc's qsort mallocs a scratch buffer once
 * the array reaches 1 KiB (32 ranges), and these run on every
 * optic_program_run and optic_optim_step. */

#include "core/ranges.h"

bool optic_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b; /* differences: no end address can wrap */
  if (a_bytes == 0 || b_bytes == 0) return false;
  return x >= y ? x - y < b_bytes : y - x < a_bytes;
}

/* Start order; ties by kind, then index, so the order is total. */
static bool before(const optic_range *a, const optic_range *b) {
  if (a->lo != b->lo) return a->lo < b->lo;
  if (a->kind != b->kind) return a->kind < b->kind;
  return a->index < b->index;
}

static void sift_down(optic_range *r, size_t i, size_t n) {
  for (size_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && before(&r[c], &r[c + 1])) c++;
    if (!before(&r[i], &r[c])) return;
    optic_range t = r[i];
    r[i] = r[c], r[c] = t;
  }
}

static void sort_by_lo(optic_range *r, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift_down(r, i, n);
  for (size_t end = n; end-- > 1;) {
    optic_range t = r[0];
    r[0] = r[end], r[end] = t;
    sift_down(r, 0, end);
  }
}

/* In start order, a range shares a byte with an earlier one exactly when an
 * earlier hi exceeds its lo. So: a written range conflicts when the largest
 * earlier hi of any range does; a read-only one when the largest earlier hi
 * of a written range does. Each report names a pair that truly overlaps. */
bool optic_ranges_find_conflict(optic_range *r, size_t n, size_t *first, size_t *second) {
  sort_by_lo(r, n);
  uintptr_t any_hi = 0, written_hi = 0;
  size_t any_at = 0, written_at = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].written && any_hi > r[i].lo) {
      *first = any_at, *second = i;
      return true;
    }
    if (!r[i].written && written_hi > r[i].lo) {
      *first = written_at, *second = i;
      return true;
    }
    if (r[i].hi > any_hi) any_hi = r[i].hi, any_at = i;
    if (r[i].written && r[i].hi > written_hi) written_hi = r[i].hi, written_at = i;
  }
  return false;
}

void optic_ranges_index(const optic_range *r, size_t n, uintptr_t *max_hi) {
  uintptr_t m = 0;
  for (size_t i = 0; i < n; i++) max_hi[i] = m = r[i].hi > m ? r[i].hi : m;
}

ptrdiff_t optic_ranges_hit(const optic_range *r, const uintptr_t *max_hi, size_t n, uintptr_t lo, uintptr_t hi) {
  if (lo >= hi || n == 0) return -1;
  /* k = number of ranges starting below hi: only they can reach [lo, hi). */
  size_t a = 0, b = n;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (r[mid].lo < hi) a = mid + 1;
    else b = mid;
  }
  size_t k = a;
  if (k == 0 || max_hi[k - 1] <= lo) return -1;
  for (size_t i = k; i-- > 0;) {
    if (r[i].hi > lo) return (ptrdiff_t)i;
  }
  return -1; /* not reached: max_hi[k - 1] > lo means some r[i].hi > lo */
}
