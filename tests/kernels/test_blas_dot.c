/* dot_general on OpenBLAS (kernels/dot.h) against the naive double-precision
 * reference: every assignment of dims to batch / contracting / free in every
 * order for operands up to rank 4, the dots of the reference HLO files, edge
 * sizes (0, 1, odd), copy-free and packed layouts (asserting which the plan
 * chose), thread slicing, and invalid dimension numbers.
 * Tolerance, per output element: |got - want| <= (K + 2) * 2^-24 * sum_k |a*b|,
 * the worst-case bound for a float dot product of K terms in any summation
 * order (Higham's gamma_K) plus the rounding of the double reference to float.
 * Every output and scratch buffer has guard floats after it; outputs start as
 * NaN, so an element the dot forgets to write fails. */
#include <cblas.h>
#include <omp.h>

#include "kernels/dot.h"
#include "tests/kernels/kernel_test.h"

/* ---------------------------------------------------------------- helpers */

typedef struct dims_spec {
  int nb, nc;
  int lb[OPTIC_MAX_RANK], rb[OPTIC_MAX_RANK], lc[OPTIC_MAX_RANK], rc[OPTIC_MAX_RANK];
} dims_spec;

static optic_dot_dims to_dims(const dims_spec *s) {
  optic_dot_dims d = {.lhs_batch_count = s->nb,
                      .rhs_batch_count = s->nb,
                      .lhs_contracting_count = s->nc,
                      .rhs_contracting_count = s->nc};
  for (int i = 0; i < s->nb; i++) d.lhs_batch[i] = s->lb[i], d.rhs_batch[i] = s->rb[i];
  for (int i = 0; i < s->nc; i++) d.lhs_contracting[i] = s->lc[i], d.rhs_contracting[i] = s->rc[i];
  return d;
}

static optic_shape shape_of(int rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static size_t elements(const optic_shape *s) {
  size_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

static const char *path_name(optic_dot_path p) {
  switch (p) {
    case OPTIC_DOT_PATH_EMPTY: return "empty";
    case OPTIC_DOT_PATH_ZEROS: return "zeros";
    case OPTIC_DOT_PATH_GEMV: return "gemv";
    case OPTIC_DOT_PATH_GEMM: return "gemm";
  }
  return "?";
}

static int append_list(char *buf, size_t size, int n, const char *label, const int32_t *list, int32_t count) {
  n += snprintf(buf + n, size - (size_t)n, " %s={", label);
  for (int32_t i = 0; i < count; i++) n += snprintf(buf + n, size - (size_t)n, "%s%d", i ? "," : "", (int)list[i]);
  return n + snprintf(buf + n, size - (size_t)n, "}");
}

/* "f32[2,3] . f32[3,4] lb={} rb={} lc={1} rc={0}": names a failing dot. */
static void describe(char *buf, size_t size, const optic_shape *l, const optic_shape *r, const optic_dot_dims *d) {
  char ls[128], rs[128];
  optic_shape_format(l, OPTIC_F32, ls, sizeof ls);
  optic_shape_format(r, OPTIC_F32, rs, sizeof rs);
  int n = snprintf(buf, size, "%s . %s", ls, rs);
  n = append_list(buf, size, n, "lb", d->lhs_batch, d->lhs_batch_count);
  n = append_list(buf, size, n, "rb", d->rhs_batch, d->rhs_batch_count);
  n = append_list(buf, size, n, "lc", d->lhs_contracting, d->lhs_contracting_count);
  append_list(buf, size, n, "rc", d->rhs_contracting, d->rhs_contracting_count);
}

/* Tallies over all checked dots, so the sweeps can assert that both the
 * copy-free and the packed paths ran. */
static struct { int copy_free, lhs_packed, rhs_packed, paths[4]; } tally;

/* How a dot is run in check_dot: whole (optic_dot_run), or as nthreads slices
 * called in turn from this thread (pack of every thread, then compute of every
 * thread, as the executor's barrier orders them). */
static void run_sliced(const struct optic_dot_plan *p, const float *a, const float *b, float *out, void *scratch,
                       int nthreads) {
  for (int t = 0; t < nthreads; t++) OT_EXPECT_OK(optic_dot_pack(p, a, b, scratch, t, nthreads));
  for (int t = 0; t < nthreads; t++) OT_EXPECT_OK(optic_dot_compute(p, a, b, out, scratch, t, nthreads));
}

/* Plans, runs whole and sliced (nthreads 2 and 3), and compares each result
 * with the reference. Returns the plan for path assertions. */
static struct optic_dot_plan check_dot(const optic_shape *ls, const optic_shape *rs, const optic_dot_dims *d,
                                       uint64_t seed) {
  struct optic_dot_plan p;
  memset(&p, 0, sizeof p);
  char what[512];
  describe(what, sizeof what, ls, rs, d);
  optic_status st = optic_dot_plan(ls, rs, d, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan failed: %s", what, optic_last_error());
  if (st != OPTIC_OK) return p;
  size_t na = elements(ls), nb = elements(rs), no = elements(&p.out_shape);
  kt_rng rng = {seed | 1};
  kt_buf a = kt_buf_make(na, 1), b = kt_buf_make(nb, 3);
  kt_fill(&rng, a.p, na, -1.0f, 1.0f, 0);
  kt_fill(&rng, b.p, nb, -1.0f, 1.0f, 0);
  float *a_copy = malloc(na * sizeof(float) + 4), *b_copy = malloc(nb * sizeof(float) + 4);
  float *abs_a = malloc(na * sizeof(float) + 4), *abs_b = malloc(nb * sizeof(float) + 4);
  float *want = malloc(no * sizeof(float) + 4), *bound = malloc(no * sizeof(float) + 4);
  memcpy(a_copy, a.p, na * sizeof(float));
  memcpy(b_copy, b.p, nb * sizeof(float));
  for (size_t i = 0; i < na; i++) abs_a[i] = fabsf(a.p[i]);
  for (size_t i = 0; i < nb; i++) abs_b[i] = fabsf(b.p[i]);
  OT_EXPECT_OK(optic_ref_f32_dot(ls, rs, d, a.p, b.p, want));
  OT_EXPECT_OK(optic_ref_f32_dot(ls, rs, d, abs_a, abs_b, bound));
  double rel = (double)(p.k + 2) * 0x1p-24;
  size_t scratch_floats = (p.scratch_bytes + 3) / 4;
  for (int variant = 0; variant < 3; variant++) {
    kt_buf out = kt_buf_make(no, (size_t)variant), scratch = kt_buf_make(scratch_floats, (size_t)variant % 2);
    if (variant == 0) {
      OT_EXPECT_OK(optic_dot_run(&p, a.p, b.p, out.p, scratch_floats ? scratch.p : NULL));
    } else {
      run_sliced(&p, a.p, b.p, out.p, scratch_floats ? scratch.p : NULL, variant + 1);
    }
    for (size_t i = 0; i < no; i++) {
      double err = fabs((double)out.p[i] - (double)want[i]);
      if (!(err <= rel * (double)bound[i])) {
        OT_CHECK(false, "%s (%s%s%s, %s): out[%zu] = %.9g, want %.9g, bound %.3g", what, path_name(p.path),
                 p.lhs.packed ? ", lhs packed" : "", p.rhs.packed ? ", rhs packed" : "",
                 variant == 0   ? "run"
                 : variant == 1 ? "2 slices"
                                : "3 slices",
                 i, out.p[i], want[i], rel * (double)bound[i]);
        break;
      }
    }
    OT_CHECK(kt_buf_guard_ok(&out), "%s: wrote past the output", what);
    OT_CHECK(kt_buf_guard_ok(&scratch), "%s: wrote past the scratch (%zu bytes)", what, p.scratch_bytes);
    kt_buf_free(&out), kt_buf_free(&scratch);
  }
  OT_CHECK(memcmp(a_copy, a.p, na * sizeof(float)) == 0 && memcmp(b_copy, b.p, nb * sizeof(float)) == 0,
           "%s: an input was modified", what);
  OT_CHECK(kt_buf_guard_ok(&a) && kt_buf_guard_ok(&b));
  free(a_copy), free(b_copy), free(abs_a), free(abs_b), free(want), free(bound);
  kt_buf_free(&a), kt_buf_free(&b);
  tally.paths[p.path]++;
  if (p.path >= OPTIC_DOT_PATH_GEMV) {
    tally.lhs_packed += p.lhs.packed, tally.rhs_packed += p.rhs.packed;
    tally.copy_free += !p.lhs.packed && !p.rhs.packed;
  }
  return p;
}

/* ------------------------------------------------------ permutation sweep */

/* Every injective sequence of `len` dims out of [0, rank), in every order. */
static void extend(int rank, int len, int depth, int *seq, bool *used, int out[][OPTIC_MAX_RANK], int *count) {
  if (depth == len) {
    memcpy(out[(*count)++], seq, sizeof(int) * OPTIC_MAX_RANK);
    return;
  }
  for (int d = 0; d < rank; d++) {
    if (used[d]) continue;
    used[d] = true, seq[depth] = d;
    extend(rank, len, depth + 1, seq, used, out, count);
    used[d] = false;
  }
}

static int sequences(int rank, int len, int out[][OPTIC_MAX_RANK]) {
  int seq[OPTIC_MAX_RANK] = {0}, count = 0;
  bool used[OPTIC_MAX_RANK] = {0};
  extend(rank, len, 0, seq, used, out, &count);
  return count;
}

/* Sizes come from a short cycle that includes 1 (size-1 dims are skipped
 * when the plan merges dims, so they must be covered) and differs per case. */
static int64_t pick_size(int case_index, int slot) {
  static const int64_t pool[] = {2, 3, 1, 4, 3, 2, 5};
  return pool[(case_index + slot) % (int)(sizeof pool / sizeof pool[0])];
}

static int sweep_ranks(int rl, int rr) {
  static int lseq[1024][OPTIC_MAX_RANK], rseq[1024][OPTIC_MAX_RANK];
  int cases = 0;
  for (int s = 0; s <= (rl < rr ? rl : rr); s++) {
    int nl = sequences(rl, s, lseq), nr = sequences(rr, s, rseq);
    for (int nb = 0; nb <= s; nb++) {
      for (int i = 0; i < nl; i++) {
        for (int j = 0; j < nr; j++, cases++) {
          dims_spec spec = {.nb = nb, .nc = s - nb};
          int64_t ld[OPTIC_MAX_RANK], rd[OPTIC_MAX_RANK];
          int slot = 0;
          for (int q = 0; q < s; q++) { /* paired dims share a size */
            int64_t size = pick_size(cases, slot++);
            ld[lseq[i][q]] = size, rd[rseq[j][q]] = size;
            if (q < nb) {
              spec.lb[q] = lseq[i][q], spec.rb[q] = rseq[j][q];
            } else {
              spec.lc[q - nb] = lseq[i][q], spec.rc[q - nb] = rseq[j][q];
            }
          }
          for (int q = 0; q < rl; q++) {
            bool listed = false;
            for (int t = 0; t < s; t++) listed |= lseq[i][t] == q;
            if (!listed) ld[q] = pick_size(cases, slot++);
          }
          for (int q = 0; q < rr; q++) {
            bool listed = false;
            for (int t = 0; t < s; t++) listed |= rseq[j][t] == q;
            if (!listed) rd[q] = pick_size(cases, slot++);
          }
          optic_shape ls = shape_of(rl, ld), rs = shape_of(rr, rd);
          optic_dot_dims d = to_dims(&spec);
          int before = ot_failures_;
          check_dot(&ls, &rs, &d, (uint64_t)cases * 7919u + (uint64_t)(rl * 10 + rr));
          if (ot_failures_ - before > 0 && ot_failures_ > 20) return cases;
        }
      }
    }
  }
  return cases;
}

/* Ordered selections of s dims out of r: r! / (r - s)!. */
static int arrangements(int r, int s) {
  int n = 1;
  for (int i = 0; i < s; i++) n *= r - i;
  return n;
}

static void permutations(void) {
  memset(&tally, 0, sizeof tally);
  int total = 0, expected = 0;
  for (int rl = 0; rl <= 4; rl++) {
    for (int rr = 0; rr <= 4; rr++) {
      total += sweep_ranks(rl, rr);
      for (int s = 0; s <= rl && s <= rr; s++) expected += (s + 1) * arrangements(rl, s) * arrangements(rr, s);
    }
  }
  printf(
      "  %d dimension-number cases: %d copy-free, %d with lhs packed, %d with rhs packed; "
      "paths empty %d, zeros %d, gemv %d, gemm %d\n",
      total, tally.copy_free, tally.lhs_packed, tally.rhs_packed, tally.paths[0], tally.paths[1], tally.paths[2],
      tally.paths[3]);
  OT_CHECK(total == expected, "%d cases, expected %d", total, expected);
  OT_CHECK(tally.copy_free > 0 && tally.lhs_packed > 0 && tally.rhs_packed > 0);
  OT_CHECK(tally.paths[OPTIC_DOT_PATH_GEMV] > 0 && tally.paths[OPTIC_DOT_PATH_GEMM] > 0);
}

/* ------------------------------------------------- dots of the HLO files */

/* What the plan must decide for a known layout. ld 0 means "packed". */
typedef struct expect_operand {
  bool packed, trans, vector;
  int64_t ld;
} expect_operand;

static void expect_mapping(const char *what, const struct optic_dot_plan *p, optic_dot_path path, expect_operand l,
                           expect_operand r) {
  OT_CHECK(p->path == path, "%s: path %s, want %s", what, path_name(p->path), path_name(path));
  const optic_dot_operand *ops[2] = {&p->lhs, &p->rhs};
  const expect_operand *want[2] = {&l, &r};
  for (int i = 0; i < 2; i++) {
    const char *side = i ? "rhs" : "lhs";
    OT_CHECK(ops[i]->packed == want[i]->packed, "%s: %s packed=%d, want %d", what, side, ops[i]->packed,
             want[i]->packed);
    OT_CHECK(ops[i]->trans == want[i]->trans, "%s: %s trans=%d, want %d", what, side, ops[i]->trans, want[i]->trans);
    OT_CHECK(ops[i]->vector == want[i]->vector, "%s: %s vector=%d, want %d", what, side, ops[i]->vector,
             want[i]->vector);
    if (want[i]->ld) {
      OT_CHECK(ops[i]->ld == want[i]->ld, "%s: %s ld=%lld, want %lld", what, side, (long long)ops[i]->ld,
               (long long)want[i]->ld);
    }
  }
  OT_CHECK((p->scratch_bytes == 0) == (!p->lhs.packed && !p->rhs.packed), "%s: scratch %zu bytes", what,
           p->scratch_bytes);
}

typedef struct hlo_dot {
  const char *source;
  int rl, rr, ro;
  int64_t l[OPTIC_MAX_RANK], r[OPTIC_MAX_RANK], o[OPTIC_MAX_RANK];
  dims_spec spec;
  optic_dot_path path;
  expect_operand el, er;
} hlo_dot;

#define DIRECT(trans, ld) \
  { false, trans, false, ld }
#define VECTOR(inc) \
  { false, false, true, inc }
#define PACKED(trans, ld) \
  { true, trans, false, ld }

/* Shapes and dimension numbers as written in /work/shared/reference/hlo. */
static const hlo_dot hlo_dots[] = {
    {"dot_batch_reordered_dims.hlo %dot",
     4,
     5,
     5,
     {7, 17, 10, 13},
     {7, 9, 10, 13, 6},
     {10, 7, 17, 9, 6},
     {.nb = 2, .nc = 1, .lb = {2, 0}, .rb = {2, 0}, .lc = {3}, .rc = {3}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 130),
     PACKED(false, 54)},
    {"dot_batch_with_metadata.hlo dot.3",
     3,
     3,
     3,
     {4, 3, 5},
     {3, 5, 6},
     {5, 4, 6},
     {.nb = 1, .nc = 1, .lb = {2}, .rb = {1}, .lc = {1}, .rc = {0}},
     OPTIC_DOT_PATH_GEMM,
     PACKED(false, 3),
     DIRECT(false, 30)},
    {"dot_no_dnums_outer_product.hlo %dot",
     2,
     2,
     4,
     {2, 3},
     {4, 5},
     {2, 3, 4, 5},
     {.nb = 0, .nc = 0},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 1),
     DIRECT(false, 20)},
    {"dot_reshape_divide.hlo dot_0",
     2,
     2,
     2,
     {20, 40},
     {40, 1},
     {20, 1},
     {.nc = 1, .lc = {1}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     DIRECT(false, 40),
     VECTOR(1)},
    {"dot_reshape_divide.hlo dot_1",
     2,
     2,
     2,
     {1, 40},
     {20, 40},
     {1, 20},
     {.nc = 1, .lc = {1}, .rc = {1}},
     OPTIC_DOT_PATH_GEMV,
     VECTOR(1),
     DIRECT(true, 40)},
    {"dot_transpose_output.hlo dot",
     2,
     2,
     2,
     {32, 32},
     {32, 64},
     {32, 64},
     {.nc = 1, .lc = {0}, .rc = {0}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(true, 32),
     DIRECT(false, 64)},
    {"one_matmul_train_step.hlo dot.0",
     2,
     2,
     2,
     {4, 32},
     {32, 128},
     {4, 128},
     {.nc = 1, .lc = {1}, .rc = {0}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 32),
     DIRECT(false, 128)},
    {"one_matmul_train_step.hlo dot.2",
     2,
     2,
     2,
     {4, 32},
     {4, 128},
     {32, 128},
     {.nc = 1, .lc = {0}, .rc = {0}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(true, 32),
     DIRECT(false, 128)},
};

static void hlo_shapes(void) {
  for (size_t i = 0; i < sizeof hlo_dots / sizeof hlo_dots[0]; i++) {
    const hlo_dot *h = &hlo_dots[i];
    optic_shape ls = shape_of(h->rl, h->l), rs = shape_of(h->rr, h->r), os = shape_of(h->ro, h->o), got;
    optic_dot_dims d = to_dims(&h->spec);
    OT_EXPECT_OK(optic_dot_infer_shape(&ls, &rs, &d, &got));
    char gs[128], ws[128];
    optic_shape_format(&got, OPTIC_F32, gs, sizeof gs);
    optic_shape_format(&os, OPTIC_F32, ws, sizeof ws);
    OT_CHECK(optic_shape_equal(&got, &os), "%s: output %s, the HLO says %s", h->source, gs, ws);
    struct optic_dot_plan p = check_dot(&ls, &rs, &d, 0xC0FFEEu + i);
    OT_CHECK(optic_shape_equal(&p.out_shape, &os), "%s: plan output shape", h->source);
    expect_mapping(h->source, &p, h->path, h->el, h->er);
  }
}

/* ------------------------------------------------------------ edge sizes */

/* Plain and batched matmuls in all four storage orders over sizes 0, 1 and
 * odd ones: all are copy-free, and the path follows M, N, K. */
static void edge_sizes(void) {
  static const int64_t sizes[] = {0, 1, 2, 7, 17, 33};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  int count = 0;
  for (int bi = 0; bi < 3; bi++) {
    int64_t batch = bi == 0 ? -1 : bi == 1 ? 3 : 0; /* -1: no batch dim */
    for (int layout = 0; layout < 4; layout++) {
      bool lt = layout & 1, rt = layout & 2;
      for (int mi = 0; mi < ns; mi++) {
        for (int ni = 0; ni < ns; ni++) {
          for (int ki = 0; ki < ns; ki++) {
            if (batch == 0 && (mi + ni + ki) % 5 != 0) continue; /* a sample is enough when nothing runs */
            int64_t m = sizes[mi], n = sizes[ni], k = sizes[ki];
            int o = batch >= 0;
            int64_t l[3] = {batch, 0, 0}, r[3] = {batch, 0, 0};
            l[o] = lt ? k : m, l[o + 1] = lt ? m : k;
            r[o] = rt ? n : k, r[o + 1] = rt ? k : n;
            dims_spec spec = {.nb = o, .nc = 1, .lc = {o + !lt}, .rc = {o + rt}};
            optic_shape ls = shape_of(2 + o, l), rs = shape_of(2 + o, r);
            optic_dot_dims d = to_dims(&spec);
            struct optic_dot_plan p = check_dot(&ls, &rs, &d, (uint64_t)(count++));
            optic_dot_path want = (batch == 0 || m == 0 || n == 0) ? OPTIC_DOT_PATH_EMPTY
                                  : k == 0                         ? OPTIC_DOT_PATH_ZEROS
                                  : (m == 1 || n == 1)             ? OPTIC_DOT_PATH_GEMV
                                                                   : OPTIC_DOT_PATH_GEMM;
            char what[512];
            describe(what, sizeof what, &ls, &rs, &d);
            OT_CHECK(p.path == want, "%s: path %s, want %s", what, path_name(p.path), path_name(want));
            OT_CHECK(p.scratch_bytes == 0, "%s: packs %zu bytes, should be copy-free", what, p.scratch_bytes);
          }
        }
      }
    }
  }
}

/* Packed operands whose contiguous runs are short or long: the rhs
 * [n1, batch, k, n2] has free dims n1 and n2 that do not merge, so it is
 * packed with runs of n2 floats, copied element by element below the pack's
 * memcpy threshold (16) and by memcpy from it on: 2, 6 (as in
 * dot_batch_reordered_dims.hlo), 15, 16, 17 and 33, with batch 1 and 3. */
static void pack_runs(void) {
  static const int64_t runs[] = {2, 6, 15, 16, 17, 33};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    for (int64_t batch = 1; batch <= 3; batch += 2) {
      const int64_t l[3] = {batch, 5, 7}, r[4] = {3, batch, 7, runs[i]};
      dims_spec spec = {.nb = 1, .nc = 1, .lb = {0}, .rb = {1}, .lc = {2}, .rc = {2}};
      optic_shape ls = shape_of(3, l), rs = shape_of(4, r);
      optic_dot_dims d = to_dims(&spec);
      struct optic_dot_plan p = check_dot(&ls, &rs, &d, 0xBEEFu + (uint64_t)i);
      char what[512];
      describe(what, sizeof what, &ls, &rs, &d);
      OT_CHECK(p.rhs.packed && p.rhs.pack_sizes[p.rhs.pack_rank - 1] == runs[i],
               "%s: rhs packed=%d with runs of %lld, want runs of %lld", what, p.rhs.packed,
               (long long)p.rhs.pack_sizes[p.rhs.pack_rank - 1], (long long)runs[i]);
    }
  }
}

/* --------------------------------------------------------------- layouts */

typedef struct layout_case {
  const char *name;
  int rl, rr;
  int64_t l[OPTIC_MAX_RANK], r[OPTIC_MAX_RANK];
  dims_spec spec;
  optic_dot_path path;
  expect_operand el, er;
} layout_case;

static const layout_case layout_cases[] = {
    /* A batch dim between free and contracting dims: still one lda. */
    {"batch in the middle",
     3,
     3,
     {5, 3, 4},
     {3, 4, 6},
     {.nb = 1, .nc = 1, .lb = {1}, .rb = {0}, .lc = {2}, .rc = {1}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 12),
     DIRECT(false, 6)},
    /* Innermost batch dim: no unit stride left for the matrix. */
    {"batch innermost",
     3,
     3,
     {5, 4, 3},
     {3, 4, 6},
     {.nb = 1, .nc = 1, .lb = {2}, .rb = {0}, .lc = {1}, .rc = {1}},
     OPTIC_DOT_PATH_GEMM,
     PACKED(false, 4),
     DIRECT(false, 6)},
    /* Contracting dims around a free dim cannot form one index. */
    {"split contracting",
     3,
     3,
     {3, 5, 4},
     {3, 4, 6},
     {.nc = 2, .lc = {0, 2}, .rc = {0, 1}},
     OPTIC_DOT_PATH_GEMM,
     PACKED(false, 12),
     DIRECT(false, 6)},
    /* Free dims around a contracting dim; the innermost is free, so the
     * packed copy is column-major (transposed). */
    {"split free",
     3,
     2,
     {2, 4, 3},
     {4, 6},
     {.nc = 1, .lc = {1}, .rc = {0}},
     OPTIC_DOT_PATH_GEMM,
     PACKED(true, 6),
     DIRECT(false, 6)},
    /* Pairs listed against memory order in both operands: summing in memory
     * order is copy-free. */
    {"reversed pairs",
     3,
     3,
     {5, 3, 4},
     {3, 4, 6},
     {.nc = 2, .lc = {2, 1}, .rc = {1, 0}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 12),
     DIRECT(false, 6)},
    /* Pair orders that conflict: the smaller operand is packed. */
    {"conflicting pairs, lhs smaller",
     3,
     3,
     {2, 3, 4},
     {4, 3, 5},
     {.nc = 2, .lc = {2, 1}, .rc = {0, 1}},
     OPTIC_DOT_PATH_GEMM,
     PACKED(false, 12),
     DIRECT(false, 5)},
    {"conflicting pairs, rhs smaller",
     3,
     3,
     {20, 3, 4},
     {4, 3, 5},
     {.nc = 2, .lc = {2, 1}, .rc = {0, 1}},
     OPTIC_DOT_PATH_GEMM,
     DIRECT(false, 12),
     PACKED(false, 5)},
    /* GEMV whose vector's contracting dims conflict with the matrix's. */
    {"gemv packed vector",
     2,
     3,
     {3, 4},
     {4, 3, 7},
     {.nc = 2, .lc = {1, 0}, .rc = {0, 1}},
     OPTIC_DOT_PATH_GEMV,
     {true, false, true, 1},
     DIRECT(false, 7)},
    /* GEMV vectors with a stride: BLAS takes the increment, no copy. */
    {"matrix . strided vector",
     3,
     2,
     {2, 9, 5},
     {5, 2},
     {.nb = 1, .nc = 1, .lb = {0}, .rb = {1}, .lc = {2}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     DIRECT(false, 5),
     VECTOR(2)},
    {"strided vector . matrix",
     2,
     3,
     {5, 4},
     {4, 5, 2},
     {.nb = 1, .nc = 1, .lb = {1}, .rb = {0}, .lc = {0}, .rc = {1}},
     OPTIC_DOT_PATH_GEMV,
     VECTOR(4),
     DIRECT(false, 2)},
    {"column vector . matrix",
     2,
     2,
     {5, 1},
     {5, 8},
     {.nc = 1, .lc = {0}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     VECTOR(1),
     DIRECT(false, 8)},
    {"matrix . column",
     2,
     2,
     {6, 5},
     {5, 1},
     {.nc = 1, .lc = {1}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     DIRECT(false, 5),
     VECTOR(1)},
    {"transposed matrix . vector",
     2,
     1,
     {5, 6},
     {5},
     {.nc = 1, .lc = {0}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     DIRECT(true, 6),
     VECTOR(1)},
    {"batched row . matrix",
     3,
     3,
     {4, 1, 5},
     {4, 5, 3},
     {.nb = 1, .nc = 1, .lb = {0}, .rb = {0}, .lc = {2}, .rc = {1}},
     OPTIC_DOT_PATH_GEMV,
     VECTOR(1),
     DIRECT(false, 3)},
    {"vector . vector",
     1,
     1,
     {7},
     {7},
     {.nc = 1, .lc = {0}, .rc = {0}},
     OPTIC_DOT_PATH_GEMV,
     VECTOR(1),
     DIRECT(false, 1)},
};

static void layouts(void) {
  for (size_t i = 0; i < sizeof layout_cases / sizeof layout_cases[0]; i++) {
    const layout_case *c = &layout_cases[i];
    optic_shape ls = shape_of(c->rl, c->l), rs = shape_of(c->rr, c->r);
    optic_dot_dims d = to_dims(&c->spec);
    struct optic_dot_plan p = check_dot(&ls, &rs, &d, 0xABCDu + i);
    expect_mapping(c->name, &p, c->path, c->el, c->er);
  }
}

/* --------------------------------------------- threads and model shapes */

/* The executor's protocol in a real OpenMP region: every thread packs its
 * share, a barrier, every thread computes its share. Inside the region
 * OpenBLAS runs single-threaded per call. */
static void openmp_region(void) {
  static const layout_case shapes[] = {
      {"mlp 96x300 . 300x200",
       2,
       2,
       {96, 300},
       {300, 200},
       {.nc = 1, .lc = {1}, .rc = {0}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(false, 300),
       DIRECT(false, 200)},
      {"tall 300x64 . 64x40 (split M)",
       2,
       2,
       {300, 64},
       {64, 40},
       {.nc = 1, .lc = {1}, .rc = {0}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(false, 64),
       DIRECT(false, 40)},
      {"batched 7 x (33x50 . 50x29)",
       3,
       3,
       {7, 33, 50},
       {7, 50, 29},
       {.nb = 1, .nc = 1, .lb = {0}, .rb = {0}, .lc = {2}, .rc = {1}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(false, 50),
       DIRECT(false, 29)},
      {"packed both",
       3,
       3,
       {9, 40, 11},
       {7, 40, 13},
       {.nc = 1, .lc = {1}, .rc = {1}},
       OPTIC_DOT_PATH_GEMM,
       PACKED(true, 99),
       PACKED(false, 91)},
      {"gemv 1x500 . 500x300",
       2,
       2,
       {1, 500},
       {500, 300},
       {.nc = 1, .lc = {1}, .rc = {0}},
       OPTIC_DOT_PATH_GEMV,
       VECTOR(1),
       DIRECT(false, 300)},
      {"zeros 20x0 . 0x30",
       2,
       2,
       {20, 0},
       {0, 30},
       {.nc = 1, .lc = {1}, .rc = {0}},
       OPTIC_DOT_PATH_ZEROS,
       DIRECT(false, 0),
       DIRECT(false, 0)},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const layout_case *c = &shapes[i];
    optic_shape ls = shape_of(c->rl, c->l), rs = shape_of(c->rr, c->r);
    optic_dot_dims d = to_dims(&c->spec);
    struct optic_dot_plan p;
    OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &d, &p));
    expect_mapping(c->name, &p, c->path, c->el, c->er);
    size_t na = elements(&ls), nb = elements(&rs), no = elements(&p.out_shape);
    kt_rng rng = {0x5EEDu + i};
    kt_buf a = kt_buf_make(na, 0), b = kt_buf_make(nb, 0), out = kt_buf_make(no, 0);
    kt_buf scratch = kt_buf_make((p.scratch_bytes + 3) / 4, 0);
    kt_fill(&rng, a.p, na, -1.0f, 1.0f, 0);
    kt_fill(&rng, b.p, nb, -1.0f, 1.0f, 0);
    float *want = malloc(no * sizeof(float) + 4), *bound = malloc(no * sizeof(float) + 4);
    float *abs_a = malloc(na * sizeof(float) + 4), *abs_b = malloc(nb * sizeof(float) + 4);
    for (size_t j = 0; j < na; j++) abs_a[j] = fabsf(a.p[j]);
    for (size_t j = 0; j < nb; j++) abs_b[j] = fabsf(b.p[j]);
    OT_EXPECT_OK(optic_ref_f32_dot(&ls, &rs, &d, a.p, b.p, want));
    OT_EXPECT_OK(optic_ref_f32_dot(&ls, &rs, &d, abs_a, abs_b, bound));
    optic_status status[2] = {OPTIC_OK, OPTIC_OK};
    int threads_seen = 0;
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      optic_status st = optic_dot_pack(&p, a.p, b.p, scratch.p, t, nt);
#pragma omp barrier
      if (st == OPTIC_OK) st = optic_dot_compute(&p, a.p, b.p, out.p, scratch.p, t, nt);
      status[t] = st;
#pragma omp single
      threads_seen = nt;
    }
    OT_CHECK(status[0] == OPTIC_OK && status[1] == OPTIC_OK, "%s: %s", c->name, optic_last_error());
    if (threads_seen < 2) printf("  note: the OpenMP runtime gave %d thread(s)\n", threads_seen);
    double rel = (double)(p.k + 2) * 0x1p-24;
    for (size_t j = 0; j < no; j++) {
      if (!(fabs((double)out.p[j] - (double)want[j]) <= rel * (double)bound[j])) {
        OT_CHECK(false, "%s: out[%zu] = %.9g, want %.9g", c->name, j, out.p[j], want[j]);
        break;
      }
    }
    OT_CHECK(kt_buf_guard_ok(&out) && kt_buf_guard_ok(&scratch), "%s: wrote past a buffer", c->name);
    free(want), free(bound), free(abs_a), free(abs_b);
    kt_buf_free(&a), kt_buf_free(&b), kt_buf_free(&out), kt_buf_free(&scratch);
  }
}

/* MLP layer shapes (scaled down so the double reference stays quick): forward
 * x.W, the weight gradient x^T.dy and the input gradient dy.W^T. */
static void mlp_shapes(void) {
  static const layout_case shapes[] = {
      {"forward 64x256 . 256x1024",
       2,
       2,
       {64, 256},
       {256, 1024},
       {.nc = 1, .lc = {1}, .rc = {0}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(false, 256),
       DIRECT(false, 1024)},
      {"weight grad (64x256)^T . 64x1024",
       2,
       2,
       {64, 256},
       {64, 1024},
       {.nc = 1, .lc = {0}, .rc = {0}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(true, 256),
       DIRECT(false, 1024)},
      {"input grad 64x1024 . (256x1024)^T",
       2,
       2,
       {64, 1024},
       {256, 1024},
       {.nc = 1, .lc = {1}, .rc = {1}},
       OPTIC_DOT_PATH_GEMM,
       DIRECT(false, 1024),
       DIRECT(true, 1024)},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const layout_case *c = &shapes[i];
    optic_shape ls = shape_of(c->rl, c->l), rs = shape_of(c->rr, c->r);
    optic_dot_dims d = to_dims(&c->spec);
    struct optic_dot_plan p = check_dot(&ls, &rs, &d, 0x3141u + i);
    expect_mapping(c->name, &p, c->path, c->el, c->er);
  }
}

/* --------------------------------------------------------- invalid input */

typedef struct invalid_case {
  const char *name;
  int rl, rr;
  int64_t l[OPTIC_MAX_RANK + 1], r[OPTIC_MAX_RANK + 1];
  optic_dot_dims dims;
  optic_status status;
  const char *message;
} invalid_case;

static const invalid_case invalid_cases[] = {
    {"lhs rank 9", 9, 1, {1}, {1}, {0}, OPTIC_ERR_INVALID_ARGUMENT, "dot: lhs rank 9 is outside [0, 8]"},
    {"negative size",
     2,
     2,
     {2, 3},
     {3, -1},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: rhs dim 1 has size -1"},
    {"batch counts differ",
     2,
     2,
     {2, 3},
     {2, 3},
     {.lhs_batch_count = 1, .lhs_batch = {0}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: lhs has 1 batch dims but rhs has 0"},
    {"contracting counts differ",
     2,
     2,
     {2, 3},
     {3, 2},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 2, .lhs_contracting = {1}, .rhs_contracting = {0, 1}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: lhs has 1 contracting dims but rhs has 2"},
    {"more batch dims than rank",
     2,
     3,
     {2, 3},
     {2, 3, 4},
     {.lhs_batch_count = 3, .rhs_batch_count = 3, .lhs_batch = {0, 1, 2}, .rhs_batch = {0, 1, 2}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: lhs has 3 batch dims but rank 2"},
    {"contracting dim out of range",
     2,
     2,
     {2, 3},
     {3, 4},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {2}, .rhs_contracting = {0}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: lhs contracting dim 2 is out of range for rank 2"},
    {"negative batch dim",
     2,
     2,
     {2, 3},
     {2, 4},
     {.lhs_batch_count = 1, .rhs_batch_count = 1, .lhs_batch = {0}, .rhs_batch = {-1}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: rhs batch dim -1 is out of range for rank 2"},
    {"contracting dim twice",
     2,
     2,
     {3, 3},
     {3, 3},
     {.lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 1}, .rhs_contracting = {0, 1}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: lhs dim 1 is listed twice (as contracting and as contracting)"},
    {"batch and contracting",
     2,
     2,
     {3, 3},
     {3, 3},
     {.lhs_batch_count = 1,
      .rhs_batch_count = 1,
      .lhs_batch = {0},
      .rhs_batch = {0},
      .lhs_contracting_count = 1,
      .rhs_contracting_count = 1,
      .lhs_contracting = {1},
      .rhs_contracting = {0}},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: rhs dim 0 is listed twice (as batch and as contracting)"},
    {"batch sizes differ",
     3,
     3,
     {2, 3, 4},
     {3, 4, 5},
     {.lhs_batch_count = 1, .rhs_batch_count = 1, .lhs_batch = {0}, .rhs_batch = {0}},
     OPTIC_ERR_SHAPE_MISMATCH,
     "dot: lhs batch dim 0 has size 2 but rhs batch dim 0 has size 3"},
    {"contracting sizes differ",
     2,
     2,
     {2, 3},
     {4, 5},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}},
     OPTIC_ERR_SHAPE_MISMATCH,
     "dot: lhs contracting dim 1 has size 3 but rhs contracting dim 0 has size 4"},
    {"second contracting pair differs",
     3,
     3,
     {2, 3, 4},
     {3, 5, 4},
     {.lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 2}, .rhs_contracting = {0, 1}},
     OPTIC_ERR_SHAPE_MISMATCH,
     "dot: lhs contracting dim 2 has size 4 but rhs contracting dim 1 has size 5"},
    {"output rank 9",
     5,
     4,
     {1, 2, 1, 2, 1},
     {2, 1, 2, 1},
     {0},
     OPTIC_ERR_INVALID_ARGUMENT,
     "dot: output rank 9 (0 batch + 5 lhs free + 4 rhs free dims) exceeds 8"},
    {"output too large",
     1,
     1,
     {(int64_t)1 << 31},
     {(int64_t)1 << 31},
     {0},
     OPTIC_ERR_OVERFLOW,
     "dot: output f32[2147483648,2147483648] has too many elements"},
};

static void invalid_dims(void) {
  for (size_t i = 0; i < sizeof invalid_cases / sizeof invalid_cases[0]; i++) {
    const invalid_case *c = &invalid_cases[i];
    optic_shape ls = {.rank = c->rl}, rs = {.rank = c->rr}, out;
    for (int j = 0; j < c->rl && j < OPTIC_MAX_RANK; j++) ls.dims[j] = c->l[j];
    for (int j = 0; j < c->rr && j < OPTIC_MAX_RANK; j++) rs.dims[j] = c->r[j];
    struct optic_dot_plan p;
    float x[4] = {0}, y[64];
    for (int api = 0; api < 3; api++) {
      optic_clear_error();
      optic_status st = api == 0   ? optic_dot_infer_shape(&ls, &rs, &c->dims, &out)
                        : api == 1 ? optic_dot_plan(&ls, &rs, &c->dims, &p)
                                   : optic_ref_f32_dot(&ls, &rs, &c->dims, x, x, y);
      const char *api_name = api == 0 ? "infer_shape" : api == 1 ? "plan" : "ref";
      OT_CHECK(st == c->status, "%s (%s): got %s, want %s (%s)", c->name, api_name, optic_status_name(st),
               optic_status_name(c->status), optic_last_error());
      OT_CHECK(strstr(optic_last_error(), c->message) != NULL, "%s (%s): message \"%s\", want \"%s\"", c->name,
               api_name, optic_last_error(), c->message);
    }
  }
}

/* NULL pointers, bad thread indices and missing scratch are rejected with a
 * status; an empty dot needs no buffers at all. */
static void invalid_run_args(void) {
  optic_shape ls = {2, {3, 4}}, rs = {2, {4, 5}}, bad_t = {3, {2, 4, 3}}, empty = {2, {0, 4}};
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_dot_dims dt = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  struct optic_dot_plan p, packed, none;
  float a[64] = {0}, b[64] = {0}, out[64];
  float scratch[64];
  OT_EXPECT_STATUS(optic_dot_plan(&ls, &rs, &d, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_plan(NULL, &rs, &d, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_plan(&ls, &rs, NULL, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &d, &p));
  OT_EXPECT_STATUS(optic_dot_run(NULL, a, b, out, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_run(&p, NULL, b, out, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_run(&p, a, NULL, out, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_run(&p, a, b, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_compute(&p, a, b, out, NULL, 2, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "thread 2 is outside [0, 2)") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_dot_pack(&p, a, b, NULL, -1, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_pack(&p, a, b, NULL, 0, 0), OPTIC_ERR_INVALID_ARGUMENT);
  /* The free dims 0 and 2 of [2,4,3] are split by the contracting dim 1: packed. */
  OT_EXPECT_OK(optic_dot_plan(&bad_t, &(optic_shape){2, {4, 5}}, &dt, &packed));
  OT_CHECK(packed.lhs.packed && packed.scratch_bytes == 2 * 4 * 3 * sizeof(float), "scratch %zu", packed.scratch_bytes);
  OT_EXPECT_STATUS(optic_dot_run(&packed, a, b, out, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "needs 96 bytes of float-aligned scratch") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_dot_run(&packed, a, b, out, (char *)scratch + 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_dot_run(&packed, a, b, out, scratch));
  OT_EXPECT_OK(optic_dot_plan(&empty, &rs, &d, &none));
  OT_CHECK(none.path == OPTIC_DOT_PATH_EMPTY && none.scratch_bytes == 0);
  OT_EXPECT_OK(optic_dot_run(&none, NULL, NULL, NULL, NULL));
}

/* Sizes beyond OpenBLAS's 32-bit indices: a leading dimension that does not
 * fit is packed around; M, N or K that do not fit are UNSUPPORTED. Plans
 * only: these tensors would need tens of GiB. */
static void index_limits(void) {
  if (sizeof(blasint) >= 8) {
    printf("  skipped: this OpenBLAS has 64-bit indices\n");
    return;
  }
  struct optic_dot_plan p;
  optic_dot_dims mid = {.lhs_batch_count = 1,
                        .rhs_batch_count = 1,
                        .lhs_batch = {1},
                        .rhs_batch = {0},
                        .lhs_contracting_count = 1,
                        .rhs_contracting_count = 1,
                        .lhs_contracting = {2},
                        .rhs_contracting = {1}};
  optic_shape ls = {3, {2, (int64_t)1 << 30, 4}}, rs = {3, {(int64_t)1 << 30, 4, 2}};
  OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &mid, &p));
  OT_CHECK(p.lhs.packed && p.lhs.ld == 4, "lda 2^32 must be packed around (packed=%d ld=%lld)", p.lhs.packed,
           (long long)p.lhs.ld);
  OT_CHECK(!p.rhs.packed);
  optic_dot_dims mm = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_shape big_m = {2, {(int64_t)1 << 31, 1}}, small = {2, {1, 2}};
  OT_EXPECT_STATUS(optic_dot_plan(&big_m, &small, &mm, &p), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "M=2147483648, N=2, K=1 exceeds the 32-bit index range") != NULL, "%s",
           optic_last_error());
  optic_shape big_k_l = {2, {2, (int64_t)1 << 31}}, big_k_r = {2, {(int64_t)1 << 31, 2}};
  OT_EXPECT_STATUS(optic_dot_plan(&big_k_l, &big_k_r, &mm, &p), OPTIC_ERR_UNSUPPORTED);
}

static const ot_case cases[] = {
    {"permutations", permutations},   {"hlo_shapes", hlo_shapes},
    {"edge_sizes", edge_sizes},       {"layouts", layouts},
    {"openmp_region", openmp_region}, {"mlp_shapes", mlp_shapes},
    {"invalid_dims", invalid_dims},   {"invalid_run_args", invalid_run_args},
    {"index_limits", index_limits},   {"pack_runs", pack_runs},
};
OT_MAIN(cases)
