/* Internal: byte ranges of caller buffers, and the overlap rule of calls that
 * read some buffers and write others (a written range may share no byte with
 * any other range; read-only ranges may share freely). Addresses compare as
 * integers (uintptr_t), so ranges of unrelated objects are fine. Never
 * allocates. */
#ifndef OPTIC_CORE_RANGES_H
#define OPTIC_CORE_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct optic_range {
  uintptr_t lo, hi; /* bytes [lo, hi); the helpers below take non-empty ranges only */
  int32_t kind;     /* the caller's tag (input, output, constant, ...) */
  int32_t index;    /* the caller's position of the buffer */
  bool written;
} optic_range;

/* True when [a, a + a_bytes) and [b, b + b_bytes) share a byte (never for
 * an empty range). */
bool optic_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* Sorts r (n non-empty ranges) by lo, then finds two that share a byte with
 * at least one of them written: true with *first and *second (positions in
 * the sorted r; r[*first].lo <= r[*second].lo), false if there is none.
 * O(n log n). */
bool optic_ranges_find_conflict(optic_range *r, size_t n, size_t *first, size_t *second);

/* For r sorted by lo (as find_conflict leaves it): max_hi[i] = the largest
 * hi of r[0..i]. Then optic_ranges_hit finds, in O(log n) when there is
 * none, a range sharing a byte with [lo, hi): its position, or -1. */
void optic_ranges_index(const optic_range *r, size_t n, uintptr_t *max_hi);
ptrdiff_t optic_ranges_hit(const optic_range *r, const uintptr_t *max_hi, size_t n, uintptr_t lo, uintptr_t hi);

#endif
