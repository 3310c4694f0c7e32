/* Internal: the pieces of the reduction evaluation order (kernels/reduce.h)
 * that every ISA file shares, so all ISAs combine leaves identically: the
 * binary counter that builds the canonical pairwise tree, and the exact
 * NaN/zero rules of max/min. Static inline only; never allocates or prints. */
#ifndef OPTIC_KERNELS_REDUCE_TREE_H
#define OPTIC_KERNELS_REDUCE_TREE_H

#include "kernels/reduce.h"

/* The kernels pass the op as a constant: inlining turns the op switches into
 * straight-line code. */
#define OPTIC_REDUCE_INLINE static inline __attribute__((always_inline))

/* Binary counter over leaves: after pushing m leaves, level[] holds perfect
 * subtrees for the set bits of m, largest first, and folding them from the
 * smallest up yields T(m) = T(p) op T(m - p), p the largest power of two
 * below m (T as in kernels/reduce.h). Operands of op are swapped freely:
 * IEEE + and * are commutative bitwise, NaN bits aside. */
typedef struct optic_reduce_tree {
  size_t count;   /* leaves pushed */
  unsigned depth; /* entries of level[] in use */
  float level[OPTIC_REDUCE_TREE_LEVELS];
} optic_reduce_tree;

OPTIC_REDUCE_INLINE float optic_reduce_tree_op(optic_reduce_op op, float a, float b) {
  return op == OPTIC_REDUCE_PROD ? a * b : a + b;
}

OPTIC_REDUCE_INLINE void optic_reduce_tree_push(optic_reduce_op op, optic_reduce_tree *t, float leaf) {
  for (size_t c = t->count++; c & 1; c >>= 1) leaf = optic_reduce_tree_op(op, t->level[--t->depth], leaf);
  t->level[t->depth++] = leaf;
}

/* Levels of the leaf counter for r values (leaves of OPTIC_REDUCE_BLOCK):
 * popcount of the leaf count, at most floor(log2(leaves)) + 1. */
OPTIC_REDUCE_INLINE size_t optic_reduce_leaf_levels(size_t r) {
  size_t leaves = (r + OPTIC_REDUCE_BLOCK - 1) / OPTIC_REDUCE_BLOCK, n = 1;
  while (leaves > 1) leaves >>= 1, n++;
  return n;
}

/* The root; the identity when nothing was pushed. */
OPTIC_REDUCE_INLINE float optic_reduce_tree_root(optic_reduce_op op, const optic_reduce_tree *t) {
  if (t->depth == 0) return op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  unsigned d = t->depth - 1;
  float v = t->level[d];
  while (d > 0) v = optic_reduce_tree_op(op, t->level[--d], v);
  return v;
}

/* max/min of a contiguous array computed in any order (lanes) gives the
 * right value but not the fold's bits: with a NaN the fold returns the first
 * NaN, and a zero extremum has the sign of the last zero (+0 == -0 compare
 * equal, and the binary max/min return their second operand on ties). Both
 * scans run only in those cases. */
OPTIC_REDUCE_INLINE float optic_reduce_extremum_bits(float m, bool has_nan, size_t n, const float *x) {
  if (has_nan) {
    for (size_t i = 0; i < n; i++) {
      if (x[i] != x[i]) return x[i];
    }
  }
  if (m == 0.0f) {
    for (size_t i = n; i-- > 0;) {
      if (x[i] == 0.0f) return x[i];
    }
  }
  return m;
}

#endif
