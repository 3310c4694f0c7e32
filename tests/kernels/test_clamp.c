/* Clamp kernels: every entry of kernels/list/clamp.inc against the naive
 * reference over edge sizes, misaligned starts and in place (y == x, and
 * y == lo / y == hi for array bounds), with guards around every buffer.
 * Tolerance: none, outputs must match the reference bit for bit, NaN payloads
 * included. Inputs include ±0, ±inf, NaNs with payloads, subnormals, x equal
 * to a bound, lo > hi and NaN bounds. */
#include <float.h>

#include "kernels/binary.h"
#include "kernels/clamp.h"
#include "tests/kernels/kernel_test.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Scalar bound pairs: ordinary, lo > hi, NaN bounds, signed zeros,
 * infinities, degenerate; the last pair is two NaNs with distinct payloads
 * (set by init_bounds), so the test sees that lo's wins. */
static float scalar_bounds[][2] = {
    {-1.0f, 1.0f},         {1.0f, -1.0f}, {NAN, 1.0f},  {-1.0f, NAN},       {-0.0f, 0.0f}, {0.0f, -0.0f},
    {-INFINITY, INFINITY}, {0.0f, 0.0f},  {2.0f, 2.0f}, {-FLT_MAX, 1e-40f}, {0.0f, 0.0f},
};
#define NBOUNDS (sizeof scalar_bounds / sizeof scalar_bounds[0])

static void init_bounds(void) {
  scalar_bounds[NBOUNDS - 1][0] = from_bits(0x7fc00011u);
  scalar_bounds[NBOUNDS - 1][1] = from_bits(0xffc00022u);
}

static void fill_x(kt_rng *r, float *x, size_t n) {
  kt_fill(r, x, n, -8.0f, 8.0f, 1);
  for (size_t i = 0; i < n; i++) {
    if ((kt_next(r) & 31) == 0) x[i] = from_bits(0x7fc0abcdu);
  }
}

/* Array bounds: mostly lo in [-4, 0) and hi in [0, 4); some swapped (lo > hi),
 * NaN, ±0, or equal to x. */
static void fill_bounds(kt_rng *r, const float *x, float *lo, float *hi, size_t n) {
  for (size_t i = 0; i < n; i++) {
    lo[i] = kt_uniform(r, -4.0f, 0.0f);
    hi[i] = kt_uniform(r, 0.0f, 4.0f);
    switch (kt_next(r) & 15) {
      case 0: {
        float t = lo[i];
        lo[i] = hi[i], hi[i] = t;
      } break;
      case 1: lo[i] = from_bits(0x7fc00111u); break;
      case 2: hi[i] = from_bits(0xffc00222u); break;
      case 3: lo[i] = x[i]; break;
      case 4: hi[i] = x[i]; break;
      case 5: lo[i] = 0.0f, hi[i] = -0.0f; break;
      case 6: lo[i] = -0.0f, hi[i] = 0.0f; break;
      case 7: lo[i] = -INFINITY, hi[i] = INFINITY; break;
      default: break;
    }
  }
}

static void mix_scalar_bounds(kt_rng *r, float *x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u = kt_next(r) & 15;
    if (u == 0) x[i] = lo;
    if (u == 1) x[i] = hi;
    if (u == 2) x[i] = -0.0f;
    if (u == 3) x[i] = 0.0f;
  }
}

static int compare(const char *fn_name, size_t n, size_t off, int mode, const float *got, const float *want) {
  for (size_t i = 0; i < n; i++) {
    if (bits(got[i]) != bits(want[i])) {
      OT_CHECK(false, "%s n=%zu offset=%zu mode=%d: y[%zu]=%.9g (0x%08x) want %.9g (0x%08x)", fn_name, n, off, mode, i,
               got[i], bits(got[i]), want[i], bits(want[i]));
      return 1;
    }
  }
  return 0;
}

/* vv modes: 0 y separate, 1 y == x, 2 y == lo, 3 y == hi. */
static void check_vv(optic_isa isa, optic_f32_vclamp_fn fn, const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0xC1A3Bull};
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      size_t off = kt_offsets[oi];
      for (int mode = 0; mode < 4; mode++) {
        kt_mem x = kt_mem_make(n, 4, off), lo = kt_mem_make(n, 4, (off + 1) % 4), hi = kt_mem_make(n, 4, (off + 2) % 4),
               y = kt_mem_make(n, 4, off);
        fill_x(&rng, x.p, n);
        fill_bounds(&rng, x.p, lo.p, hi.p, n);
        float *want = malloc((n + 1) * sizeof(float));
        optic_ref_f32_clamp(n, x.p, lo.p, hi.p, want);
        float *dst = mode == 1 ? x.p : mode == 2 ? lo.p : mode == 3 ? hi.p : y.p;
        fn(n, x.p, lo.p, hi.p, dst);
        failures += compare(fn_name, n, off, mode, dst, want);
        OT_CHECK(kt_mem_guard_ok(&x) && kt_mem_guard_ok(&lo) && kt_mem_guard_ok(&hi) && kt_mem_guard_ok(&y),
                 "%s n=%zu offset=%zu mode=%d wrote outside its arrays", fn_name, n, off, mode);
        free(want);
        kt_mem_free(&x), kt_mem_free(&lo), kt_mem_free(&hi), kt_mem_free(&y);
      }
    }
  }
}

/* vs modes: 0 y separate, 1 y == x; every scalar bound pair. */
static void check_vs(optic_isa isa, optic_f32_vclampc_fn fn, const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  init_bounds();
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0xC1A3Cull};
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      size_t off = kt_offsets[oi];
      for (size_t bi = 0; bi < NBOUNDS; bi++) {
        for (int mode = 0; mode < 2; mode++) {
          float blo = scalar_bounds[bi][0], bhi = scalar_bounds[bi][1];
          kt_mem x = kt_mem_make(n, 4, off), y = kt_mem_make(n, 4, off);
          fill_x(&rng, x.p, n);
          mix_scalar_bounds(&rng, x.p, n, blo, bhi);
          float *want = malloc((n + 1) * sizeof(float));
          optic_ref_f32_clampc(n, x.p, blo, bhi, want);
          float *dst = mode == 1 ? x.p : y.p;
          fn(n, x.p, blo, bhi, dst);
          if (compare(fn_name, n, off, mode, dst, want)) {
            failures++;
            printf("  bounds lo=0x%08x hi=0x%08x\n", bits(blo), bits(bhi));
          }
          OT_CHECK(kt_mem_guard_ok(&x) && kt_mem_guard_ok(&y), "%s n=%zu offset=%zu mode=%d wrote outside its arrays",
                   fn_name, n, off, mode);
          free(want);
          kt_mem_free(&x), kt_mem_free(&y);
        }
      }
    }
  }
}

#define X_VV(op, isa, fn) \
  static void test_##fn(void) { check_vv(OPTIC_ISA_##isa, fn, #fn); }
#define X_VS(op, isa, fn) \
  static void test_##fn(void) { check_vs(OPTIC_ISA_##isa, fn, #fn); }
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS

/* The oracle itself against hand-written answers for the documented rules. */
static void reference_known_answers(void) {
  const float qnan = from_bits(0x7fc00001u), lnan = from_bits(0x7fc00002u), hnan = from_bits(0x7fc00003u);
  const struct {
    float lo, x, hi, want;
  } rows[] = {
      {-1, 5, 1, 1},
      {-1, -5, 1, -1},
      {-1, 0.5f, 1, 0.5f},
      {-1, qnan, 1, qnan},
      {lnan, 0, 1, lnan},
      {-1, 0, hnan, hnan},
      {lnan, 0, hnan, lnan},
      {lnan, qnan, hnan, qnan},
      {2, 0, 1, 1},
      {2, 3, 1, 1},
      {2, 1.5f, 1, 1},
      {0.0f, -0.0f, 1, 0.0f},
      {-0.0f, 0.0f, 1, -0.0f},
      {-1, 1, 1, 1},
      {-1, -INFINITY, 1, -1},
      {-INFINITY, 1e-40f, INFINITY, 1e-40f},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    float got, gotc;
    optic_ref_f32_clamp(1, &rows[r].x, &rows[r].lo, &rows[r].hi, &got);
    optic_ref_f32_clampc(1, &rows[r].x, rows[r].lo, rows[r].hi, &gotc);
    OT_CHECK(bits(got) == bits(rows[r].want) && bits(gotc) == bits(rows[r].want),
             "clamp(%g, %g, %g) gave 0x%08x/0x%08x, want 0x%08x", rows[r].lo, rows[r].x, rows[r].hi, bits(got),
             bits(gotc), bits(rows[r].want));
    OT_CHECK(bits(optic_clamp_f32(rows[r].x, rows[r].lo, rows[r].hi)) == bits(rows[r].want), "optic_clamp_f32 row %zu",
             r);
  }
}

/* The documented identity: clamp == binary minimum(maximum(x, lo), hi), bitwise. */
static void equals_binary_max_then_min(void) {
  enum { N = 4096 };
  static float x[N], lo[N], hi[N], t[N], want[N], got[N];
  kt_rng rng = {7};
  fill_x(&rng, x, N);
  fill_bounds(&rng, x, lo, hi, N);
  optic_ref_f32_binary(OPTIC_BINARY_MAX, N, x, lo, t);
  optic_ref_f32_binary(OPTIC_BINARY_MIN, N, t, hi, want);
  optic_ref_f32_clamp(N, x, lo, hi, got);
  OT_CHECK(memcmp(got, want, sizeof got) == 0, "vv differs from binary maximum then minimum");
  init_bounds();
  for (size_t b = 0; b < NBOUNDS; b++) {
    optic_ref_f32_binaryc(OPTIC_BINARY_MAX, N, x, scalar_bounds[b][0], t);
    optic_ref_f32_binaryc(OPTIC_BINARY_MIN, N, t, scalar_bounds[b][1], want);
    optic_ref_f32_clampc(N, x, scalar_bounds[b][0], scalar_bounds[b][1], got);
    OT_CHECK(memcmp(got, want, sizeof got) == 0, "vs differs from binary maximum then minimum, bounds %zu", b);
  }
}

static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_clamp_kernels *t = optic_clamp_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    OT_CHECK(t->vv != NULL && t->vs != NULL, "%s has a hole", optic_isa_name((optic_isa)i));
    OT_CHECK(t->isa_of_vv == OPTIC_ISA_SCALAR || t->isa_of_vv == (optic_isa)i);
    OT_CHECK(t->isa_of_vs == OPTIC_ISA_SCALAR || t->isa_of_vs == (optic_isa)i);
  }
#define X_VV(op, isa, fn) OT_CHECK(optic_clamp_kernels_for(OPTIC_ISA_##isa)->vv == fn, #fn " not in its table");
#define X_VS(op, isa, fn) OT_CHECK(optic_clamp_kernels_for(OPTIC_ISA_##isa)->vs == fn, #fn " not in its table");
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_clamp_kernels_get() == optic_clamp_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_clamp_kernels_get()->vv == optic_f32_vclamp__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_clamp_kernels_get() == optic_clamp_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_VV(op, isa, fn) {#fn, test_##fn},
#define X_VS(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
    {"reference_known_answers", reference_known_answers},
    {"equals_binary_max_then_min", equals_binary_max_then_min},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
