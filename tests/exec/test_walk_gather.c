/* walk_gather (exec/exec_internal.h), the copy every fused loop's gathered
 * operand goes through, against a plain loop that computes each element's
 * offset from its multi-index (row-major over the walk's dims), byte for
 * byte: ranks 0-4 (rank 2 has its own path: row and column broadcasts,
 * transposes), dims 1-7 and 125-129, strides 0, 1, negative and large,
 * elements of 1, 2, 4 and 8 bytes, every start lo and length in a sweep
 * (runs cut at the first, inside and at the last element), and the walk
 * merged by walk_merged (the form the fused loops pass) giving the same bytes.
 * Reproduce a failure: ctest --preset release -R exec_walk_gather */
#include "exec/exec_internal.h"
#include "tests/exec/exec_util.h"

enum { SRC_BYTES = 1 << 16 };

/* The offset (in elements) of element i of w, by its multi-index. */
static int64_t naive_offset(const exec_walk *w, size_t i) {
  int64_t off = w->base;
  for (int32_t d = w->rank - 1; d >= 0; d--) {
    size_t dim = (size_t)w->dims[d];
    off += (int64_t)(i % dim) * w->strides[d];
    i /= dim;
  }
  return off;
}

static size_t walk_elems(const exec_walk *w) {
  size_t n = 1;
  for (int32_t d = 0; d < w->rank; d++) n *= (size_t)w->dims[d];
  return n;
}

/* Compares walk_gather of w (and of its merged form) with the plain loop for
 * a sweep of [lo, lo + len) ranges; src holds SRC_BYTES bytes and w reads
 * inside it. */
static void check_walk(const exec_walk *w, size_t es, const unsigned char *src, const char *what) {
  const size_t n = walk_elems(w);
  unsigned char *got = malloc(n * es + 1), *want = malloc(n * es + 1);
  const exec_walk merged = walk_merged(w);
  const size_t starts[] = {0, 1, n / 3, n / 2, n > 2 ? n - 2 : 0, n - 1};
  for (size_t a = 0; got && want && a < sizeof starts / sizeof *starts; a++) {
    const size_t lo = starts[a] < n ? starts[a] : 0;
    const size_t lens[] = {1, 2, n - lo > 7 ? 7 : n - lo, (n - lo) / 2, n - lo};
    for (size_t b = 0; b < sizeof lens / sizeof *lens; b++) {
      const size_t len = lens[b] == 0 ? 1 : lens[b] > n - lo ? n - lo : lens[b];
      for (size_t k = 0; k < len; k++) memcpy(want + k * es, src + naive_offset(w, lo + k) * (int64_t)es, es);
      for (int form = 0; form < 2; form++) {
        memset(got, 0xA5, n * es + 1);
        walk_gather(form ? &merged : w, es, src, lo, len, got);
        OT_CHECK(memcmp(got, want, len * es) == 0 && got[len * es] == 0xA5,
                 "%s (%s walk, rank %d, es %zu): walk_gather(lo %zu, len %zu) differs from the plain loop%s", what,
                 form ? "merged" : "given", (form ? &merged : w)->rank, es, lo, len,
                 got[len * es] == 0xA5 ? "" : " (wrote past len)");
      }
    }
  }
  free(got), free(want);
}

/* A walk of `rank` dims and strides (element units), its base placed so
 * every offset is inside [0, SRC_BYTES / es). */
static bool make_walk(int32_t rank, const int64_t *dims, const int64_t *strides, size_t es, exec_walk *w) {
  *w = (exec_walk){.rank = rank};
  int64_t lo = 0, hi = 0;
  for (int32_t d = 0; d < rank; d++) {
    w->dims[d] = dims[d], w->strides[d] = strides[d];
    int64_t span = (dims[d] - 1) * strides[d];
    if (span < 0) lo += span;
    else hi += span;
  }
  w->base = -lo;
  return (hi - lo + 1) * (int64_t)es <= SRC_BYTES;
}

static void sweep(void) {
  unsigned char *src = malloc(SRC_BYTES);
  if (src == NULL) return;
  for (size_t i = 0; i < SRC_BYTES; i++) src[i] = (unsigned char)(i * 131u + (i >> 8) * 7u);
  static const size_t sizes[] = {1, 2, 4, 8};
  static const int64_t dims2[][2] = {{1, 1}, {3, 1}, {1, 5}, {4, 7}, {127, 125}, {3, 129}, {2, 256}};
  for (size_t e = 0; e < 4; e++) {
    const size_t es = sizes[e];
    for (size_t i = 0; i < sizeof dims2 / sizeof *dims2; i++) {
      const int64_t R = dims2[i][0], W = dims2[i][1];
      /* row broadcast, column broadcast, contiguous, transpose, reversed, both broadcast */
      const int64_t strides[][2] = {{1, 0}, {0, 1}, {W, 1}, {1, R}, {-W, -1}, {0, 0}, {2 * W + 3, 2}};
      for (size_t s = 0; s < sizeof strides / sizeof *strides; s++) {
        exec_walk w;
        if (make_walk(2, dims2[i], strides[s], es, &w)) check_walk(&w, es, src, "rank 2");
      }
    }
    const int64_t d0[] = {0}, s0[] = {0};
    exec_walk w;
    if (make_walk(0, d0, s0, es, &w)) check_walk(&w, es, src, "rank 0");
    const int64_t d1[] = {17}, s1[] = {-3};
    if (make_walk(1, d1, s1, es, &w)) check_walk(&w, es, src, "rank 1");
    const int64_t d3[] = {3, 1, 17}, s3[] = {17, 5, 1}; /* merges to rank 2 */
    if (make_walk(3, d3, s3, es, &w)) check_walk(&w, es, src, "rank 3 (1 dim)");
    const int64_t d4[] = {2, 3, 4, 5}, s4[] = {1, 0, 40, -8};
    if (make_walk(4, d4, s4, es, &w)) check_walk(&w, es, src, "rank 4");
  }
  free(src);
}

static const ot_case cases[] = {
    {"sweep", sweep},
};
OT_MAIN(cases)
