/* Compare kernels: every (op, ISA) entry of kernels/list/compare.inc against
 * the naive reference over edge sizes and misaligned starts, with guards
 * around every buffer (in place is impossible: floats in, bytes out).
 * Tolerance: none, every predicate byte must equal the reference's. Inputs
 * include ±0, ±inf, NaN, subnormals and many equal pairs, so each direction
 * sees true, false, tie and unordered cases. */
#include <float.h>

#include "kernels/compare.h"
#include "tests/kernels/kernel_test.h"

/* Scalars the vs form is tried with. */
static const float scalars[] = {0.5f, 0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1e-40f, -3.25f};
#define NSCALARS (sizeof scalars / sizeof scalars[0])

/* Random operands with specials; about a quarter of the pairs equal (ties,
 * NaN with NaN) and some ±0 pairs. */
static void fill_pair(kt_rng *r, float *a, float *b, size_t n) {
  kt_fill(r, a, n, -4.0f, 4.0f, 1);
  kt_fill(r, b, n, -4.0f, 4.0f, 1);
  for (size_t i = 0; i < n; i++) {
    uint64_t u = kt_next(r) & 15;
    if (u < 4) b[i] = a[i];
    if (u == 4) a[i] = 0.0f, b[i] = -0.0f;
  }
}

/* Makes about a quarter of a equal to s and some equal to -s. */
static void mix_scalar(kt_rng *r, float *a, size_t n, float s) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u = kt_next(r) & 15;
    if (u < 4) a[i] = s;
    if (u == 4) a[i] = -s;
  }
}

static int compare_bytes(const char *fn_name, size_t n, size_t off, float s, const uint8_t *got, const uint8_t *want,
                         const float *a, const float *b) {
  for (size_t i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      OT_CHECK(false, "%s n=%zu offset=%zu: y[%zu]=%u want %u (a=%.9g b=%.9g)", fn_name, n, off, i, got[i], want[i],
               a[i], b ? b[i] : s);
      return 1;
    }
  }
  return 0;
}

static void check(optic_compare_op op, optic_isa isa, optic_f32_vcompare_fn vv, optic_f32_vcomparec_fn vs,
                  const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0xC0FFEE123456789ull ^ (uint64_t)op};
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      size_t off = kt_offsets[oi];
      for (size_t sc = 0; sc < (vv ? 1 : NSCALARS); sc++) {
        kt_mem a = kt_mem_make(n, sizeof(float), off), b = kt_mem_make(n, sizeof(float), (off + 1) % 4);
        kt_mem y = kt_mem_make(n, 1, off);
        uint8_t *want = malloc(n + 1);
        float *pa = a.p, *pb = b.p;
        if (vv) {
          fill_pair(&rng, pa, pb, n);
          optic_ref_f32_compare(op, n, pa, pb, want);
          vv(n, pa, pb, y.p);
        } else {
          kt_fill(&rng, pa, n, -4.0f, 4.0f, 1);
          mix_scalar(&rng, pa, n, scalars[sc]);
          optic_ref_f32_comparec(op, n, pa, scalars[sc], want);
          vs(n, pa, scalars[sc], y.p);
        }
        failures += compare_bytes(fn_name, n, off, scalars[sc], y.p, want, pa, vv ? pb : NULL);
        OT_CHECK(kt_mem_guard_ok(&a) && kt_mem_guard_ok(&b) && kt_mem_guard_ok(&y),
                 "%s n=%zu offset=%zu wrote outside its arrays", fn_name, n, off);
        free(want);
        kt_mem_free(&a), kt_mem_free(&b), kt_mem_free(&y);
      }
    }
  }
}

#define X_VV(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_COMPARE_##op, OPTIC_ISA_##isa, fn, NULL, #fn); }
#define X_VS(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_COMPARE_##op, OPTIC_ISA_##isa, NULL, fn, #fn); }
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS

/* The oracle itself against hand-written IEEE answers (EQ NE LT LE GT GE). */
static void reference_known_answers(void) {
  static const struct {
    float a, b;
    uint8_t want[OPTIC_COMPARE_OP_COUNT];
  } rows[] = {
      {1.0f, 2.0f, {0, 1, 1, 1, 0, 0}},
      {2.0f, 1.0f, {0, 1, 0, 0, 1, 1}},
      {NAN, 1.0f, {0, 1, 0, 0, 0, 0}},
      {1.0f, NAN, {0, 1, 0, 0, 0, 0}},
      {NAN, NAN, {0, 1, 0, 0, 0, 0}},
      {-0.0f, 0.0f, {1, 0, 0, 1, 0, 1}},
      {INFINITY, INFINITY, {1, 0, 0, 1, 0, 1}},
      {1e-40f, 0.0f, {0, 1, 0, 0, 1, 1}},
      {-INFINITY, -FLT_MAX, {0, 1, 1, 1, 0, 0}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    for (int op = 0; op < OPTIC_COMPARE_OP_COUNT; op++) {
      uint8_t got = 9, gotc = 9;
      optic_ref_f32_compare((optic_compare_op)op, 1, &rows[r].a, &rows[r].b, &got);
      optic_ref_f32_comparec((optic_compare_op)op, 1, &rows[r].a, rows[r].b, &gotc);
      OT_CHECK(got == rows[r].want[op] && gotc == rows[r].want[op], "%g %s %g gave %u/%u, want %u", rows[r].a,
               optic_compare_op_name((optic_compare_op)op), rows[r].b, got, gotc, rows[r].want[op]);
    }
  }
}

/* s op a == a mirror(op) s for every op, including NaN and signed zeros. */
static void mirror_is_exact(void) {
  enum { N = 512 };
  float a[N], s_arr[N];
  uint8_t direct[N], mirrored[N];
  kt_rng rng = {42};
  for (size_t sc = 0; sc < NSCALARS; sc++) {
    kt_fill(&rng, a, N, -4.0f, 4.0f, 1);
    mix_scalar(&rng, a, N, scalars[sc]);
    for (size_t i = 0; i < N; i++) s_arr[i] = scalars[sc];
    for (int op = 0; op < OPTIC_COMPARE_OP_COUNT; op++) {
      optic_ref_f32_compare((optic_compare_op)op, N, s_arr, a, direct);
      optic_ref_f32_comparec(optic_compare_op_mirror((optic_compare_op)op), N, a, scalars[sc], mirrored);
      OT_CHECK(memcmp(direct, mirrored, N) == 0, "mirror of %s wrong for s=%g",
               optic_compare_op_name((optic_compare_op)op), scalars[sc]);
    }
  }
}

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_compare_kernels *t = optic_compare_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    for (int op = 0; op < OPTIC_COMPARE_OP_COUNT; op++) {
      OT_CHECK(t->vv[op] != NULL && t->vs[op] != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i),
               optic_compare_op_name((optic_compare_op)op));
      OT_CHECK(t->isa_of_vv[op] == OPTIC_ISA_SCALAR || t->isa_of_vv[op] == (optic_isa)i);
      OT_CHECK(t->isa_of_vs[op] == OPTIC_ISA_SCALAR || t->isa_of_vs[op] == (optic_isa)i);
    }
  }
#define X_VV(op, isa, fn) \
  OT_CHECK(optic_compare_kernels_for(OPTIC_ISA_##isa)->vv[OPTIC_COMPARE_##op] == fn, #fn " not in its table");
#define X_VS(op, isa, fn) \
  OT_CHECK(optic_compare_kernels_for(OPTIC_ISA_##isa)->vs[OPTIC_COMPARE_##op] == fn, #fn " not in its table");
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_compare_kernels_get() == optic_compare_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_compare_kernels_get()->vv[OPTIC_COMPARE_LT] == optic_f32_vcmplt__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_compare_kernels_get() == optic_compare_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_VV(op, isa, fn) {#fn, test_##fn},
#define X_VS(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
    {"reference_known_answers", reference_known_answers},
    {"mirror_is_exact", mirror_is_exact},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
