/* The arena allocator behind buffer assignment: best fit from a free list,
 * coalescing of adjacent free blocks, growth at the top. Free blocks sit in
 * two treaps over one node pool, one ordered by (size, offset) for best fit
 * and one by offset for coalescing, so every operation is O(log n) expected.
 * Deterministic (priorities are a fixed hash of the node number). Never
 * touches memory: it only hands out offsets. */
#include <stdlib.h>

#include "graph/buffer_internal.h"

enum { BY_SIZE = 0, BY_OFFSET = 1 };

struct gs_arena {
  size_t *off, *size;
  uint64_t *prio;
  int32_t *left[2], *right[2];
  int32_t root[2];
  int32_t *spare; /* unused node numbers */
  int32_t n_spare, cap;
  size_t high_water;
};

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Node x's key against (off, size) in tree t: <0, 0, >0. */
static int cmp_key(const gs_arena *a, int t, int32_t x, size_t off, size_t size) {
  if (t == BY_SIZE && a->size[x] != size) return a->size[x] < size ? -1 : 1;
  return (a->off[x] > off) - (a->off[x] < off);
}

/* Splits tree x into keys < (off, size) and the rest. */
static void split(gs_arena *a, int t, int32_t x, size_t off, size_t size, int32_t *lo, int32_t *hi) {
  if (x < 0) {
    *lo = *hi = -1;
  } else if (cmp_key(a, t, x, off, size) < 0) {
    split(a, t, a->right[t][x], off, size, &a->right[t][x], hi);
    *lo = x;
  } else {
    split(a, t, a->left[t][x], off, size, lo, &a->left[t][x]);
    *hi = x;
  }
}

/* Every key of x precedes every key of y. */
static int32_t merge(gs_arena *a, int t, int32_t x, int32_t y) {
  if (x < 0) return y;
  if (y < 0) return x;
  if (a->prio[x] > a->prio[y]) {
    a->right[t][x] = merge(a, t, a->right[t][x], y);
    return x;
  }
  a->left[t][y] = merge(a, t, x, a->left[t][y]);
  return y;
}

static int32_t insert(gs_arena *a, int t, int32_t x, int32_t node) {
  if (x < 0) return node;
  if (a->prio[node] > a->prio[x]) {
    split(a, t, x, a->off[node], a->size[node], &a->left[t][node], &a->right[t][node]);
    return node;
  }
  if (cmp_key(a, t, x, a->off[node], a->size[node]) > 0) a->left[t][x] = insert(a, t, a->left[t][x], node);
  else a->right[t][x] = insert(a, t, a->right[t][x], node);
  return x;
}

static int32_t erase(gs_arena *a, int t, int32_t x, int32_t node) {
  if (x == node) return merge(a, t, a->left[t][x], a->right[t][x]);
  if (cmp_key(a, t, x, a->off[node], a->size[node]) > 0) a->left[t][x] = erase(a, t, a->left[t][x], node);
  else a->right[t][x] = erase(a, t, a->right[t][x], node);
  return x;
}

/* Smallest key >= (off, size), or -1. */
static int32_t lower_bound(const gs_arena *a, int t, size_t off, size_t size) {
  int32_t x = a->root[t], best = -1;
  while (x >= 0) {
    if (cmp_key(a, t, x, off, size) >= 0) {
      best = x;
      x = a->left[t][x];
    } else {
      x = a->right[t][x];
    }
  }
  return best;
}

/* Largest offset < off in the offset tree, or -1. */
static int32_t before(const gs_arena *a, size_t off) {
  int32_t x = a->root[BY_OFFSET], best = -1;
  while (x >= 0) {
    if (a->off[x] < off) {
      best = x;
      x = a->right[BY_OFFSET][x];
    } else {
      x = a->left[BY_OFFSET][x];
    }
  }
  return best;
}

/* Grows the node pool to cap nodes, all spare. */
static optic_status grow(gs_arena *a, int32_t cap) {
  size_t *o = realloc(a->off, (size_t)cap * sizeof *o);
  if (o) a->off = o;
  size_t *s = realloc(a->size, (size_t)cap * sizeof *s);
  if (s) a->size = s;
  uint64_t *p = realloc(a->prio, (size_t)cap * sizeof *p);
  if (p) a->prio = p;
  int32_t *sp = realloc(a->spare, (size_t)cap * sizeof *sp);
  if (sp) a->spare = sp;
  bool ok = o && s && p && sp;
  for (int t = 0; t < 2; t++) {
    int32_t *l = realloc(a->left[t], (size_t)cap * sizeof *l);
    if (l) a->left[t] = l;
    int32_t *r = realloc(a->right[t], (size_t)cap * sizeof *r);
    if (r) a->right[t] = r;
    ok = ok && l && r;
  }
  if (!ok) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_assign: out of memory for the free list");
  for (int32_t i = cap - 1; i >= a->cap; i--) a->spare[a->n_spare++] = i;
  a->cap = cap;
  return OPTIC_OK;
}

static optic_status new_node(gs_arena *a, size_t off, size_t size, int32_t *out) {
  if (a->n_spare == 0) {
    if (a->cap == INT32_MAX) return optic_fail(OPTIC_ERR_OVERFLOW, "buffer_assign: too many free blocks");
    optic_status st = grow(a, a->cap > INT32_MAX / 2 ? INT32_MAX : a->cap * 2);
    if (st != OPTIC_OK) return st;
  }
  int32_t x = a->spare[--a->n_spare];
  a->off[x] = off;
  a->size[x] = size;
  a->prio[x] = mix((uint64_t)x);
  *out = x;
  return OPTIC_OK;
}

static void unlink_node(gs_arena *a, int32_t x) {
  a->root[BY_SIZE] = erase(a, BY_SIZE, a->root[BY_SIZE], x);
  a->root[BY_OFFSET] = erase(a, BY_OFFSET, a->root[BY_OFFSET], x);
}

static void link_node(gs_arena *a, int32_t x) {
  for (int t = 0; t < 2; t++) a->left[t][x] = a->right[t][x] = -1;
  a->root[BY_SIZE] = insert(a, BY_SIZE, a->root[BY_SIZE], x);
  a->root[BY_OFFSET] = insert(a, BY_OFFSET, a->root[BY_OFFSET], x);
}

optic_status gs_arena_create(int32_t max_blocks, gs_arena **out) {
  gs_arena *a = calloc(1, sizeof *a);
  if (a == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_assign: out of memory");
  a->root[BY_SIZE] = a->root[BY_OFFSET] = -1;
  /* Free blocks are separated by live ones, so there are at most as many as
   * live blocks + 1; start there and grow only if that ever changes. */
  optic_status st = grow(a, max_blocks < 4 ? 4 : max_blocks);
  if (st != OPTIC_OK) {
    gs_arena_destroy(a);
    return st;
  }
  *out = a;
  return OPTIC_OK;
}

void gs_arena_destroy(gs_arena *a) {
  if (a == NULL) return;
  free(a->off);
  free(a->size);
  free(a->prio);
  free(a->spare);
  for (int t = 0; t < 2; t++) {
    free(a->left[t]);
    free(a->right[t]);
  }
  free(a);
}

optic_status gs_arena_alloc(gs_arena *a, size_t size, size_t *offset) {
  int32_t x = lower_bound(a, BY_SIZE, 0, size);
  if (x >= 0) {
    unlink_node(a, x);
    *offset = a->off[x];
    if (a->size[x] > size) {
      a->off[x] += size;
      a->size[x] -= size;
      link_node(a, x);
    } else {
      a->spare[a->n_spare++] = x;
    }
    return OPTIC_OK;
  }
  /* Nothing fits: grow the arena, starting inside a free block at the top. */
  size_t start = a->high_water;
  int32_t top = before(a, SIZE_MAX);
  if (top >= 0 && a->off[top] + a->size[top] == a->high_water) {
    start = a->off[top];
    unlink_node(a, top);
    a->spare[a->n_spare++] = top;
  }
  if (start > SIZE_MAX - size) return optic_fail(OPTIC_ERR_OVERFLOW, "buffer_assign: arena size overflows size_t");
  *offset = start;
  a->high_water = start + size;
  return OPTIC_OK;
}

optic_status gs_arena_free(gs_arena *a, size_t offset, size_t size) {
  size_t end = offset + size;
  int32_t p = before(a, offset + 1);
  if (end > a->high_water || (p >= 0 && a->off[p] + a->size[p] > offset)) {
    return optic_fail(OPTIC_ERR_INTERNAL, "buffer_assign: block [%zu, %zu) freed twice or never allocated", offset,
                      end);
  }
  int32_t s = lower_bound(a, BY_OFFSET, offset, 0);
  if (s >= 0 && a->off[s] < end) {
    return optic_fail(OPTIC_ERR_INTERNAL, "buffer_assign: block [%zu, %zu) overlaps a free block", offset, end);
  }
  if (p >= 0 && a->off[p] + a->size[p] == offset) {
    unlink_node(a, p);
    offset = a->off[p];
    a->spare[a->n_spare++] = p;
  }
  if (s >= 0 && a->off[s] == end) {
    unlink_node(a, s);
    end += a->size[s];
    a->spare[a->n_spare++] = s;
  }
  int32_t x = -1;
  optic_status st = new_node(a, offset, end - offset, &x);
  if (st != OPTIC_OK) return st;
  link_node(a, x);
  return OPTIC_OK;
}

size_t gs_arena_high_water(const gs_arena *a) { return a->high_water; }
