/* Layout kernels and plans: every entry of kernels/list/layout.inc against the
 * naive reference over edge sizes (0, 1, tile-1, tile, tile+1, odd, block
 * edges, 1000x3, 3x1000, 257x129), padded leading dims, misaligned starts (0,
 * 1, 3 elements), with guard bytes around every output; then XLA transposes
 * (all permutations of ranks 1-4, random ones of ranks 5-8) and broadcasts
 * (every dimensions= mapping of small ranks) planned with every ISA's table
 * and run in split unit ranges. Tolerance: none. Layout ops move bits, so
 * every output must equal the reference byte for byte, and every byte around
 * and between the output elements (guards, row gaps) must be untouched. */
#include <pthread.h>

#include "kernels/layout.h"
#include "kernels/stream.h"
#include "tests/kernels/kernel_test.h"

#define GUARD 64

/* A byte array `size` long starting `mis` bytes past a 64-byte boundary, with
 * GUARD bytes before and after; everything is filled from seed. Two regions
 * made with the same seed are identical, so a kernel writes into one, the
 * reference into the other, and the whole allocations must compare equal. */
typedef struct region {
  unsigned char *base, *p;
  size_t total;
} region;

static region region_make(size_t size, size_t mis, uint64_t seed) {
  region r;
  r.total = 64 + mis + size + GUARD;
  if (posix_memalign((void **)&r.base, 64, r.total) != 0) {
    fprintf(stderr, "test_layout: out of memory\n");
    exit(2);
  }
  kt_rng rng = {seed | 1};
  for (size_t i = 0; i < r.total; i++) r.base[i] = (unsigned char)(kt_next(&rng) >> 56);
  r.p = r.base + 64 + mis;
  return r;
}

static bool region_same(const region *a, const region *b) { return memcmp(a->base, b->base, a->total) == 0; }

/* First differing byte offset relative to p (negative: in the front guard). */
static long region_first_diff(const region *a, const region *b) {
  for (size_t i = 0; i < a->total; i++) {
    if (a->base[i] != b->base[i]) return (long)i - (long)(a->p - a->base);
  }
  return 0;
}

static void region_free(region *r) { free(r->base); }

static const size_t elem_offsets[] = {0, 1, 3};
#define NOFFSETS (sizeof elem_offsets / sizeof elem_offsets[0])

/* ------------------------------------------------------------- kernels */

static void check_copy(optic_isa isa, optic_copy_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  static const size_t sizes[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4097, 65537};
  int failures = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && failures < 5; si++) {
    for (size_t oi = 0; oi < NOFFSETS; oi++) {
      size_t n = sizes[si], xo = elem_offsets[oi], yo = elem_offsets[NOFFSETS - 1 - oi];
      region x = region_make(n, xo, 11 + n), x0 = region_make(n, xo, 11 + n);
      region y = region_make(n, yo, 97 + n), want = region_make(n, yo, 97 + n);
      fn(n, x.p, y.p);
      optic_ref_copy(n, x.p, want.p);
      if (!region_same(&y, &want) || !region_same(&x, &x0)) {
        OT_CHECK(false, "%s nbytes=%zu x+%zu y+%zu: first wrong byte at %ld", name, n, xo, yo,
                 region_first_diff(&y, &want));
        failures++;
      }
      region_free(&x), region_free(&x0), region_free(&y), region_free(&want);
    }
  }
}

static void check_copy2d(optic_isa isa, optic_copy2d_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  static const size_t rows_set[] = {0, 1, 2, 5, 17};
  static const size_t bytes_set[] = {0, 1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 257};
  int failures = 0;
  for (size_t ri = 0; ri < sizeof rows_set / sizeof rows_set[0]; ri++) {
    for (size_t bi = 0; bi < sizeof bytes_set / sizeof bytes_set[0] && failures < 5; bi++) {
      for (int variant = 0; variant < 6; variant++) {
        size_t rows = rows_set[ri], rb = bytes_set[bi];
        /* x rows: dense, padded, or one row repeated (ldx 0); y dense or padded */
        size_t ldx = variant % 3 == 0 ? rb : variant % 3 == 1 ? rb + 3 : 0;
        size_t ldy = variant < 3 ? rb : rb + 5;
        size_t xo = elem_offsets[variant % NOFFSETS], yo = elem_offsets[(variant + 1) % NOFFSETS];
        size_t xsize = rows == 0 ? 0 : (rows - 1) * ldx + rb, ysize = rows == 0 ? 0 : (rows - 1) * ldy + rb;
        region x = region_make(xsize, xo, 5 + rb), x0 = region_make(xsize, xo, 5 + rb);
        region y = region_make(ysize, yo, 77 + rb), want = region_make(ysize, yo, 77 + rb);
        fn(rows, rb, x.p, ldx, y.p, ldy);
        optic_ref_copy2d(rows, rb, x.p, ldx, want.p, ldy);
        if (!region_same(&y, &want) || !region_same(&x, &x0)) {
          OT_CHECK(false, "%s rows=%zu row_bytes=%zu ldx=%zu ldy=%zu x+%zu y+%zu: first wrong byte at %ld", name, rows,
                   rb, ldx, ldy, xo, yo, region_first_diff(&y, &want));
          failures++;
        }
        region_free(&x), region_free(&x0), region_free(&y), region_free(&want);
      }
    }
  }
}

static void add_unique(size_t *set, size_t *count, size_t v) {
  for (size_t i = 0; i < *count; i++) {
    if (set[i] == v) return;
  }
  set[(*count)++] = v;
}

/* One transpose, checked. Returns false on a mismatch. */
static bool transpose_case(optic_transpose_fn fn, const char *name, size_t es, size_t rows, size_t cols, size_t ldx,
                           size_t ldy, size_t xo, size_t yo) {
  size_t xsize = rows == 0 ? 0 : ((rows - 1) * ldx + cols) * es;
  size_t ysize = cols == 0 ? 0 : ((cols - 1) * ldy + rows) * es;
  uint64_t seed = rows * 1000003u + cols * 7919u + ldx;
  region x = region_make(xsize, xo * es, seed), x0 = region_make(xsize, xo * es, seed);
  region y = region_make(ysize, yo * es, ~seed), want = region_make(ysize, yo * es, ~seed);
  fn(rows, cols, x.p, ldx, y.p, ldy);
  optic_ref_transpose2d(es, rows, cols, x.p, ldx, want.p, ldy);
  bool ok = region_same(&y, &want) && region_same(&x, &x0);
  OT_CHECK(ok, "%s %zux%zu ldx=%zu ldy=%zu x+%zu y+%zu: first wrong byte at %ld", name, rows, cols, ldx, ldy, xo, yo,
           region_first_diff(&y, &want));
  region_free(&x), region_free(&x0), region_free(&y), region_free(&want);
  return ok;
}

static void check_transpose(optic_isa isa, optic_layout_width w, optic_transpose_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  size_t es = optic_layout_width_bytes(w);
  size_t tile = optic_isa_vector_floats(isa) * 4 / es;
  if (tile == 0) tile = 1;
  size_t block = 128 / es; /* the scalar kernels' block; x86 blocks are 16-64 elements */
  size_t set[32], ns = 0;
  size_t cand[] = {0,  1,  2,  tile - 1, tile, tile + 1,  2 * tile + 3, 31,
                   32, 33, 63, 64,       65,   block - 1, block,        block + 1};
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) add_unique(set, &ns, cand[i] == 0 && i != 0 ? 1 : cand[i]);
  int failures = 0;
  for (size_t a = 0; a < ns && failures < 5; a++) {
    for (size_t b = 0; b < ns && failures < 5; b++) {
      for (int variant = 0; variant < 4; variant++) {
        size_t rows = set[a], cols = set[b];
        size_t ldx = cols + (variant & 1 ? 3 : 0), ldy = rows + (variant & 2 ? 5 : 0);
        if (!transpose_case(fn, name, es, rows, cols, ldx, ldy, elem_offsets[variant % NOFFSETS],
                            elem_offsets[(variant + 2) % NOFFSETS])) {
          failures++;
        }
      }
    }
  }
  static const size_t special[][2] = {{1000, 3}, {3, 1000}, {257, 129}, {129, 257}};
  for (size_t s = 0; s < sizeof special / sizeof special[0]; s++) {
    size_t rows = special[s][0], cols = special[s][1];
    transpose_case(fn, name, es, rows, cols, cols, rows, 0, 0);
    transpose_case(fn, name, es, rows, cols, cols + 7, rows + 1, 1, 3);
  }
}

static void check_fill(optic_isa isa, optic_layout_width w, optic_fill_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  size_t es = optic_layout_width_bytes(w);
  size_t sizes[48], ns = kt_sizes(isa, sizes, 32);
  static const size_t more[] = {2, 3, 5, 7, 15, 17, 31, 33, 63, 65, 127, 129, 255, 257};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) add_unique(sizes, &ns, more[i]);
  int failures = 0;
  /* stream 1: the streaming-store threshold at 0, so the AVX2/AVX-512 fills
   * take their streaming path on every call (kernels/stream.h). */
  size_t saved = optic_stream_threshold_set(SIZE_MAX);
  for (int stream = 0; stream < 2; stream++) {
    optic_stream_threshold_set(stream ? 0 : SIZE_MAX);
    for (size_t si = 0; si < ns && failures < 5; si++) {
      for (size_t oi = 0; oi < NOFFSETS; oi++) {
        size_t n = sizes[si];
        region v = region_make(es, oi, 3 + n); /* value: random bits, NaN payloads included */
        region y = region_make(n * es, elem_offsets[oi] * es, 29 + n),
               want = region_make(n * es, elem_offsets[oi] * es, 29 + n);
        fn(n, v.p, y.p);
        optic_ref_fill(es, n, v.p, want.p);
        if (!region_same(&y, &want)) {
          OT_CHECK(false, "%s n=%zu y+%zu stream=%d: first wrong byte at %ld", name, n, elem_offsets[oi], stream,
                   region_first_diff(&y, &want));
          failures++;
        }
        region_free(&v), region_free(&y), region_free(&want);
      }
    }
  }
  optic_stream_threshold_set(saved);
}

#define X_COPY(op, isa, fn) \
  static void test_##fn(void) { check_copy(OPTIC_ISA_##isa, fn, #fn); }
#define X_COPY2D(op, isa, fn) \
  static void test_##fn(void) { check_copy2d(OPTIC_ISA_##isa, fn, #fn); }
#define X_TRANSPOSE(width, isa, fn) \
  static void test_##fn(void) { check_transpose(OPTIC_ISA_##isa, OPTIC_LAYOUT_##width, fn, #fn); }
#define X_FILL(width, isa, fn) \
  static void test_##fn(void) { check_fill(OPTIC_ISA_##isa, OPTIC_LAYOUT_##width, fn, #fn); }
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL

/* --------------------------------------------------------------- plans */

/* Tables of every ISA this machine can run. */
static size_t runnable_tables(const optic_layout_kernels **out, optic_isa *isas) {
  size_t n = 0;
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    if (optic_isa_built((optic_isa)i) && optic_isa_supported((optic_isa)i)) {
      isas[n] = (optic_isa)i;
      out[n++] = optic_layout_kernels_for((optic_isa)i);
    }
  }
  return n;
}

static size_t elements_of(const optic_shape *s) {
  size_t n = 1;
  for (int d = 0; d < s->rank; d++) n *= (size_t)s->dims[d];
  return n;
}

static void format_dims(char *buf, size_t size, const int64_t *v, int n) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, i ? ",%lld" : "%lld", (long long)v[i]);
}

/* Runs the plan in three unit ranges, the last one first and with an end
 * past plan->units (run clamps it), as threads of an executor would. */
static void run_split(const optic_layout_plan *p, const void *x, void *y, kt_rng *rng) {
  size_t u = p->units, a = kt_next(rng) % (u + 1), b = kt_next(rng) % (u + 1);
  if (a > b) {
    size_t t = a;
    a = b;
    b = t;
  }
  optic_layout_run(p, x, y, b, u + 5);
  optic_layout_run(p, x, y, 0, a);
  optic_layout_run(p, x, y, a, b);
}

static const char *const kind_names[] = {"empty", "copy", "fill", "rows", "fill_rows", "transpose"};

/* Plans, runs and checks one XLA transpose (or broadcast when dims != NULL)
 * against the reference; returns the plan kind (-1 on failure). */
static int check_plan(const optic_layout_kernels *k, optic_isa isa, size_t es, const optic_shape *in,
                      const optic_shape *out_shape, const int64_t *attr, kt_rng *rng, bool is_broadcast) {
  optic_layout_plan plan;
  optic_status st = is_broadcast ? optic_layout_plan_broadcast(k, in, out_shape, attr, (size_t)in->rank, es, &plan)
                                 : optic_layout_plan_transpose(k, in, attr, (size_t)in->rank, es, &plan);
  char sin[96], sattr[96];
  format_dims(sin, sizeof sin, in->dims, in->rank);
  format_dims(sattr, sizeof sattr, attr, in->rank);
  if (st != OPTIC_OK) {
    OT_CHECK(false, "%s plan [%s] attr {%s} es=%zu: %s", is_broadcast ? "broadcast" : "transpose", sin, sattr, es,
             optic_last_error());
    return -1;
  }
  optic_shape want_shape = {.rank = in->rank};
  if (is_broadcast) {
    want_shape = *out_shape;
  } else {
    for (int d = 0; d < in->rank; d++) want_shape.dims[d] = in->dims[attr[d]];
  }
  OT_CHECK(optic_shape_equal(&plan.out_shape, &want_shape), "plan out_shape wrong for [%s] {%s}", sin, sattr);
  size_t nx = elements_of(in), ny = elements_of(&want_shape);
  size_t xo = kt_next(rng) % NOFFSETS, yo = kt_next(rng) % NOFFSETS;
  uint64_t seed = kt_next(rng);
  region x = region_make(nx * es, elem_offsets[xo] * es, seed), x0 = region_make(nx * es, elem_offsets[xo] * es, seed);
  region y = region_make(ny * es, elem_offsets[yo] * es, ~seed),
         want = region_make(ny * es, elem_offsets[yo] * es, ~seed);
  run_split(&plan, x.p, y.p, rng);
  if (is_broadcast) {
    optic_ref_broadcast(es, in, out_shape, attr, x.p, want.p);
  } else {
    optic_ref_permute(es, in, attr, x.p, want.p);
  }
  bool ok = region_same(&y, &want) && region_same(&x, &x0);
  OT_CHECK(ok, "%s [%s] attr {%s} es=%zu isa=%s kind=%s units=%zu: first wrong byte at %ld",
           is_broadcast ? "broadcast" : "transpose", sin, sattr, es, optic_isa_name(isa), kind_names[plan.kind],
           plan.units, region_first_diff(&y, &want));
  region_free(&x), region_free(&x0), region_free(&y), region_free(&want);
  return ok ? (int)plan.kind : -1;
}

static bool next_permutation(int64_t *a, int n) {
  int i = n - 2;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return false;
  int j = n - 1;
  while (a[j] <= a[i]) j--;
  int64_t t = a[i];
  a[i] = a[j];
  a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) t = a[l], a[l] = a[r], a[r] = t;
  return true;
}

static const size_t widths_es[] = {1, 4, 8};

static void transpose_all_permutations(void) {
  static const struct {
    int rank;
    int64_t dims[4];
  } shapes[] = {
      {0, {0}},         {1, {7}},          {1, {1}},          {1, {0}},          {2, {5, 9}},        {2, {17, 33}},
      {2, {1, 5}},      {2, {0, 3}},       {3, {3, 5, 7}},    {3, {1, 5, 3}},    {3, {9, 1, 17}},    {3, {2, 0, 3}},
      {3, {19, 3, 21}}, {4, {3, 5, 2, 7}}, {4, {2, 1, 3, 5}}, {4, {5, 3, 1, 1}}, {4, {17, 3, 1, 9}}, {4, {3, 7, 5, 3}},
  };
  const optic_layout_kernels *tables[OPTIC_ISA_COUNT_];
  optic_isa isas[OPTIC_ISA_COUNT_];
  size_t nt = runnable_tables(tables, isas);
  kt_rng rng = {0x5EED5EEDull};
  int failures = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    optic_shape in;
    OT_EXPECT_OK(optic_shape_make(shapes[s].rank, shapes[s].dims, &in));
    int64_t perm[4] = {0, 1, 2, 3};
    do {
      for (size_t t = 0; t < nt; t++) {
        for (size_t w = 0; w < 3 && failures < 10; w++) {
          if (check_plan(tables[t], isas[t], widths_es[w], &in, NULL, perm, &rng, false) < 0) failures++;
        }
      }
    } while (next_permutation(perm, in.rank));
  }
}

static void transpose_random_high_rank(void) {
  const optic_layout_kernels *tables[OPTIC_ISA_COUNT_];
  optic_isa isas[OPTIC_ISA_COUNT_];
  size_t nt = runnable_tables(tables, isas);
  kt_rng rng = {0xC0FFEEull};
  int failures = 0;
  for (int rank = 5; rank <= 8; rank++) {
    for (int trial = 0; trial < 30 && failures < 10; trial++) {
      int64_t dims[8], perm[8];
      size_t count = 1;
      for (int d = 0; d < rank; d++) {
        dims[d] = 1 + (int64_t)(kt_next(&rng) % (count > 4000 ? 2 : 5));
        count *= (size_t)dims[d];
        perm[d] = d;
      }
      for (int d = rank - 1; d > 0; d--) { /* Fisher-Yates */
        int e = (int)(kt_next(&rng) % (uint64_t)(d + 1));
        int64_t t = perm[d];
        perm[d] = perm[e];
        perm[e] = t;
      }
      optic_shape in;
      OT_EXPECT_OK(optic_shape_make(rank, dims, &in));
      for (size_t t = 0; t < nt; t++) {
        if (check_plan(tables[t], isas[t], widths_es[trial % 3], &in, NULL, perm, &rng, false) < 0) failures++;
      }
    }
  }
}

/* Shapes that reach each plan kind, with several units per plan. */
static void transpose_plan_shapes(void) {
  static const struct {
    int rank;
    int64_t dims[4], perm[4];
    optic_layout_plan_kind kind;
    int nloops;
  } cases[] = {
      {1, {20000}, {0}, OPTIC_LAYOUT_PLAN_COPY, 0},
      {3, {2, 3, 4}, {0, 1, 2}, OPTIC_LAYOUT_PLAN_COPY, 0},
      {3, {4, 1, 6}, {1, 0, 2}, OPTIC_LAYOUT_PLAN_COPY, 0},
      {2, {8, 2100}, {1, 0}, OPTIC_LAYOUT_PLAN_TRANSPOSE, 0},
      {2, {300, 301}, {1, 0}, OPTIC_LAYOUT_PLAN_TRANSPOSE, 0},
      {3, {6, 4, 8}, {2, 0, 1}, OPTIC_LAYOUT_PLAN_TRANSPOSE, 0},
      {3, {5, 40, 33}, {0, 2, 1}, OPTIC_LAYOUT_PLAN_TRANSPOSE, 1},
      {4, {3, 20, 5, 18}, {3, 1, 0, 2}, OPTIC_LAYOUT_PLAN_TRANSPOSE, 2},
      {3, {5000, 3, 4}, {1, 0, 2}, OPTIC_LAYOUT_PLAN_ROWS, 1},
      {3, {3, 5000, 4}, {1, 0, 2}, OPTIC_LAYOUT_PLAN_ROWS, 1},
      {4, {3, 7, 5, 9}, {2, 0, 1, 3}, OPTIC_LAYOUT_PLAN_ROWS, 1}, /* dims 0,1 of x merge */
  };
  const optic_layout_kernels *tables[OPTIC_ISA_COUNT_];
  optic_isa isas[OPTIC_ISA_COUNT_];
  size_t nt = runnable_tables(tables, isas);
  kt_rng rng = {77};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    optic_shape in;
    OT_EXPECT_OK(optic_shape_make(cases[c].rank, cases[c].dims, &in));
    optic_layout_plan plan;
    OT_EXPECT_OK(optic_layout_plan_transpose(NULL, &in, cases[c].perm, (size_t)in.rank, 4, &plan));
    OT_CHECK(plan.kind == cases[c].kind && plan.nloops == cases[c].nloops, "case %zu: kind %s nloops %d", c,
             kind_names[plan.kind], plan.nloops);
    for (size_t t = 0; t < nt; t++) {
      for (size_t w = 0; w < 3; w++)
        check_plan(tables[t], isas[t], widths_es[w], &in, NULL, cases[c].perm, &rng, false);
    }
  }
  /* Large enough to be cut into several units. */
  optic_shape in;
  optic_layout_plan plan;
  OT_EXPECT_OK(optic_shape_make(2, (const int64_t[]){8, 2100}, &in));
  OT_EXPECT_OK(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){1, 0}, 2, 4, &plan));
  OT_CHECK(plan.units >= 2, "8x2100 transpose has %zu units", plan.units);
  OT_EXPECT_OK(optic_shape_make(3, (const int64_t[]){3, 5000, 4}, &in));
  OT_EXPECT_OK(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){1, 0, 2}, 3, 4, &plan));
  OT_CHECK(plan.units == 5000, "3x5000x4 (1,0,2) has %zu units", plan.units);
}

static void expect_failure(optic_status got, optic_status want, const char *needle, const char *what) {
  OT_CHECK(got == want, "%s: returned %s, expected %s", what, optic_status_name(got), optic_status_name(want));
  OT_CHECK(strstr(optic_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, optic_last_error(),
           needle);
  OT_CHECK(optic_last_error_status() == want, "%s: last error status", what);
}

static void transpose_invalid(void) {
  optic_shape in;
  optic_layout_plan plan;
  OT_EXPECT_OK(optic_shape_make(3, (const int64_t[]){2, 3, 4}, &in));
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){1, 0}, 2, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "transpose: permutation has 2 entries but the operand has rank 3",
                 "short permutation");
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){0, 3, 1}, 3, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "permutation[1] is 3; entries must be in [0, 3)", "entry too large");
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){0, 1, -1}, 3, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "permutation[2] is -1", "negative entry");
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){1, 0, 1}, 3, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "permutation[0] and permutation[2] are both 1", "repeated entry");
  expect_failure(optic_layout_plan_transpose(NULL, &in, NULL, 3, 4, &plan), OPTIC_ERR_INVALID_ARGUMENT,
                 "permutation is NULL", "NULL permutation");
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){0, 1, 2}, 3, 3, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "element size 3 bytes is not supported", "element size");
  expect_failure(optic_layout_plan_transpose(NULL, &in, (const int64_t[]){0, 1, 2}, 3, 4, NULL),
                 OPTIC_ERR_INVALID_ARGUMENT, "plan out is NULL", "NULL out");
  expect_failure(optic_layout_plan_transpose(NULL, NULL, (const int64_t[]){0}, 1, 4, &plan), OPTIC_ERR_INVALID_ARGUMENT,
                 "operand shape is NULL", "NULL shape");
  optic_shape bad = in;
  bad.dims[1] = -2;
  expect_failure(optic_layout_plan_transpose(NULL, &bad, (const int64_t[]){0, 1, 2}, 3, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "operand dim 1 is -2", "negative dim");
  bad.rank = 9;
  expect_failure(optic_layout_plan_transpose(NULL, &bad, (const int64_t[]){0, 1, 2}, 3, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "operand rank 9 is outside [0, 8]", "rank 9");
}

static void broadcast_all_mappings(void) {
  static const int64_t bases[][4] = {{3, 5, 2, 7}, {4, 1, 6, 1}};
  const optic_layout_kernels *tables[OPTIC_ISA_COUNT_];
  optic_isa isas[OPTIC_ISA_COUNT_];
  size_t nt = runnable_tables(tables, isas);
  kt_rng rng = {0xB0ADull};
  int failures = 0, cases = 0;
  for (size_t base = 0; base < 2; base++) {
    for (int orank = 0; orank <= 4; orank++) {
      optic_shape out;
      OT_EXPECT_OK(optic_shape_make(orank, bases[base], &out));
      for (int r = 0; r <= orank; r++) {
        /* every r-tuple of distinct output dims, in every order */
        size_t total = 1;
        for (int k = 0; k < r; k++) total *= (size_t)orank;
        for (size_t code = 0; code < total; code++) {
          int64_t dims[4];
          bool distinct = true;
          size_t c = code;
          for (int k = 0; k < r; k++, c /= (size_t)orank) {
            dims[k] = (int64_t)(c % (size_t)orank);
            for (int l = 0; l < k; l++) distinct = distinct && dims[l] != dims[k];
          }
          if (!distinct) continue;
          for (unsigned ones = 0; ones < (1u << r); ones++) { /* operand dims of size 1 (degenerate) */
            optic_shape operand = {.rank = r};
            for (int k = 0; k < r; k++) operand.dims[k] = (ones >> k) & 1 ? 1 : out.dims[dims[k]];
            for (size_t t = 0; t < nt && failures < 10; t++) {
              if (check_plan(tables[t], isas[t], widths_es[(code + ones) % 3], &operand, &out, dims, &rng, true) < 0) {
                failures++;
              }
            }
            cases++;
          }
        }
      }
    }
  }
  OT_CHECK(cases == 2 * (1 + 3 + 13 + 79 + 633), "enumerated %d mappings", cases);
}

static void broadcast_plan_shapes(void) {
  static const struct {
    int orank, rrank;
    int64_t operand[3], out[3], dims[3];
    optic_layout_plan_kind kind;
  } cases[] = {
      {1, 0, {0}, {40000}, {0}, OPTIC_LAYOUT_PLAN_FILL},
      {2, 1, {37}, {5, 37}, {1}, OPTIC_LAYOUT_PLAN_ROWS},
      {2, 1, {37}, {37, 19}, {0}, OPTIC_LAYOUT_PLAN_FILL_ROWS},
      {2, 1, {20000}, {20000, 2}, {0}, OPTIC_LAYOUT_PLAN_FILL_ROWS},
      {3, 2, {33, 17}, {17, 5, 33}, {2, 0}, OPTIC_LAYOUT_PLAN_TRANSPOSE},
      {3, 3, {3, 1, 5}, {3, 4, 5}, {0, 1, 2}, OPTIC_LAYOUT_PLAN_ROWS},
      {2, 2, {7, 9}, {7, 9}, {0, 1}, OPTIC_LAYOUT_PLAN_COPY},
      {2, 2, {7, 9}, {9, 7}, {1, 0}, OPTIC_LAYOUT_PLAN_TRANSPOSE},
      {2, 1, {5}, {0, 5}, {1}, OPTIC_LAYOUT_PLAN_EMPTY},
      {3, 2, {2, 3}, {2, 1000, 3}, {0, 2}, OPTIC_LAYOUT_PLAN_ROWS},
  };
  const optic_layout_kernels *tables[OPTIC_ISA_COUNT_];
  optic_isa isas[OPTIC_ISA_COUNT_];
  size_t nt = runnable_tables(tables, isas);
  kt_rng rng = {99};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    optic_shape operand, out;
    optic_layout_plan plan;
    OT_EXPECT_OK(optic_shape_make(cases[c].rrank, cases[c].operand, &operand));
    OT_EXPECT_OK(optic_shape_make(cases[c].orank, cases[c].out, &out));
    OT_EXPECT_OK(optic_layout_plan_broadcast(NULL, &operand, &out, cases[c].dims, (size_t)operand.rank, 4, &plan));
    OT_CHECK(plan.kind == cases[c].kind, "case %zu: kind %s", c, kind_names[plan.kind]);
    for (size_t t = 0; t < nt; t++) {
      for (size_t w = 0; w < 3; w++)
        check_plan(tables[t], isas[t], widths_es[w], &operand, &out, cases[c].dims, &rng, true);
    }
  }
}

static void broadcast_invalid(void) {
  optic_shape operand, out;
  optic_layout_plan plan;
  OT_EXPECT_OK(optic_shape_make(2, (const int64_t[]){3, 4}, &operand));
  OT_EXPECT_OK(optic_shape_make(3, (const int64_t[]){3, 5, 4}, &out));
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){0}, 1, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "broadcast: dimensions has 1 entries but the operand has rank 2",
                 "short dimensions");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){0, 3}, 2, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "dimensions[1] is 3; entries must be in [0, 3)", "entry too large");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){-1, 2}, 2, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "dimensions[0] is -1", "negative entry");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){2, 2}, 2, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "dimensions[0] and dimensions[1] both map to output dim 2",
                 "repeated entry");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){0, 1}, 2, 4, &plan),
                 OPTIC_ERR_SHAPE_MISMATCH, "operand dim 1 has size 4 but output dim 1 (dimensions[1]) has size 5",
                 "size mismatch");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, NULL, 2, 4, &plan), OPTIC_ERR_INVALID_ARGUMENT,
                 "dimensions is NULL", "NULL dimensions");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){0, 2}, 2, 2, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "element size 2 bytes is not supported", "element size");
  expect_failure(optic_layout_plan_broadcast(NULL, &out, &operand, (const int64_t[]){0, 1, 2}, 3, 4, &plan),
                 OPTIC_ERR_SHAPE_MISMATCH, "operand rank 3 is larger than output rank 2", "rank too large");
  expect_failure(optic_layout_plan_broadcast(NULL, &operand, NULL, (const int64_t[]){0, 2}, 2, 4, &plan),
                 OPTIC_ERR_INVALID_ARGUMENT, "broadcast: output shape is NULL", "NULL output shape");
  OT_EXPECT_OK(optic_layout_plan_broadcast(NULL, &operand, &out, (const int64_t[]){0, 2}, 2, 4, &plan));
}

/* Threads running disjoint unit ranges of one plan at once, as the executor
 * will (and as `make tsan` checks for races). */
typedef struct plan_job {
  const optic_layout_plan *plan;
  const void *x;
  void *y;
  size_t begin, end;
} plan_job;

static void *run_job(void *arg) {
  plan_job *j = arg;
  optic_layout_run(j->plan, j->x, j->y, j->begin, j->end);
  return NULL;
}

static void plan_run_threads(void) {
  enum { T = 4 };
  static const int64_t dims[3] = {300, 7, 301}, perm[3] = {2, 1, 0};
  optic_shape in;
  OT_EXPECT_OK(optic_shape_make(3, dims, &in));
  optic_layout_plan plan;
  OT_EXPECT_OK(optic_layout_plan_transpose(NULL, &in, perm, 3, 4, &plan));
  OT_CHECK(plan.units >= T, "only %zu units", plan.units);
  size_t n = elements_of(&in);
  region x = region_make(n * 4, 0, 1234), y = region_make(n * 4, 0, 42), want = region_make(n * 4, 0, 42);
  pthread_t tid[T];
  plan_job jobs[T];
  for (size_t t = 0; t < T; t++) {
    jobs[t] = (plan_job){&plan, x.p, y.p, plan.units * t / T, plan.units * (t + 1) / T};
    OT_CHECK(pthread_create(&tid[t], NULL, run_job, &jobs[t]) == 0);
  }
  for (size_t t = 0; t < T; t++) pthread_join(tid[t], NULL);
  optic_ref_permute(4, &in, perm, x.p, want.p);
  OT_CHECK(region_same(&y, &want), "threaded run differs at byte %ld", region_first_diff(&y, &want));
  region_free(&x), region_free(&y), region_free(&want);
}

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_layout_kernels *t = optic_layout_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    OT_CHECK(t->copy != NULL && t->copy2d != NULL, "%s copy hole", optic_isa_name((optic_isa)i));
    for (int w = 0; w < OPTIC_LAYOUT_WIDTH_COUNT; w++) {
      OT_CHECK(t->transpose[w] != NULL && t->fill[w] != NULL, "%s width %d has a hole", optic_isa_name((optic_isa)i),
               w);
      OT_CHECK(t->isa_of_transpose[w] == OPTIC_ISA_SCALAR || t->isa_of_transpose[w] == (optic_isa)i);
      OT_CHECK(t->isa_of_fill[w] == OPTIC_ISA_SCALAR || t->isa_of_fill[w] == (optic_isa)i);
    }
  }
#define X_COPY(op, isa, fn) OT_CHECK(optic_layout_kernels_for(OPTIC_ISA_##isa)->copy == fn, #fn " not in its table");
#define X_COPY2D(op, isa, fn) \
  OT_CHECK(optic_layout_kernels_for(OPTIC_ISA_##isa)->copy2d == fn, #fn " not in its table");
#define X_TRANSPOSE(width, isa, fn) \
  OT_CHECK(optic_layout_kernels_for(OPTIC_ISA_##isa)->transpose[OPTIC_LAYOUT_##width] == fn, #fn " not in its table");
#define X_FILL(width, isa, fn) \
  OT_CHECK(optic_layout_kernels_for(OPTIC_ISA_##isa)->fill[OPTIC_LAYOUT_##width] == fn, #fn " not in its table");
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_layout_kernels_get() == optic_layout_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_layout_kernels_get()->transpose[OPTIC_LAYOUT_X32] == optic_x32_transpose__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_layout_kernels_get() == optic_layout_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_COPY(op, isa, fn) {#fn, test_##fn},
#define X_COPY2D(op, isa, fn) {#fn, test_##fn},
#define X_TRANSPOSE(width, isa, fn) {#fn, test_##fn},
#define X_FILL(width, isa, fn) {#fn, test_##fn},
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL
    {"dispatch_tables", dispatch_tables},
    {"transpose_all_permutations_rank1to4", transpose_all_permutations},
    {"transpose_random_rank5to8", transpose_random_high_rank},
    {"transpose_plan_shapes", transpose_plan_shapes},
    {"transpose_invalid", transpose_invalid},
    {"broadcast_all_mappings", broadcast_all_mappings},
    {"broadcast_plan_shapes", broadcast_plan_shapes},
    {"broadcast_invalid", broadcast_invalid},
    {"plan_run_threads", plan_run_threads},
};
OT_MAIN(cases)
