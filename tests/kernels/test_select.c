/* Select kernels: every entry of kernels/list/select.inc against the naive
 * reference over edge sizes, misaligned starts and in place (y == a, y == b),
 * with guards around every buffer. Tolerance: none, outputs must match the
 * reference bit for bit (values are moved, so NaN payloads, signalling NaNs
 * and signed zeros must survive). Predicates mix 0, 1 and other nonzero bytes. */
#include "kernels/select.h"
#include "tests/kernels/kernel_test.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Specials plus NaNs with payloads (quiet, signalling, negative). */
static void fill_values(kt_rng *r, float *x, size_t n) {
  const float nans[] = {from_bits(0x7fc12345u), from_bits(0x7f800001u), from_bits(0xffc00007u), -0.0f};
  kt_fill(r, x, n, -8.0f, 8.0f, 1);
  for (size_t i = 0; i < n; i++) {
    if ((kt_next(r) & 15) == 0) x[i] = nans[kt_next(r) % 4];
  }
}

/* Half zeros, a quarter ones, a quarter other nonzero bytes (2..255). */
static void fill_pred(kt_rng *r, uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u = kt_next(r);
    p[i] = (u & 3) < 2 ? 0 : (u & 3) == 2 ? 1 : (uint8_t)(2 + (u >> 8) % 254);
  }
}

static const uint8_t scalar_preds[] = {0, 1, 2, 0x80, 0xFF};

/* mode 0: y separate; 1: y == a; 2: y == b. spred tries every scalar_preds. */
static void check(optic_isa isa, optic_f32_vselect_fn vpred, optic_f32_vselect_spred_fn spred, const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0x5E1EC7ull};
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      size_t off = kt_offsets[oi];
      for (size_t pi = 0; pi < (vpred ? 1 : sizeof scalar_preds); pi++) {
        for (int mode = 0; mode < 3; mode++) {
          kt_mem p = kt_mem_make(n, 1, (off + 2) % 4), a = kt_mem_make(n, 4, off), b = kt_mem_make(n, 4, (off + 1) % 4),
                 y = kt_mem_make(n, 4, off);
          fill_pred(&rng, p.p, n);
          fill_values(&rng, a.p, n);
          fill_values(&rng, b.p, n);
          float *want = malloc((n + 1) * sizeof(float));
          if (vpred) {
            optic_ref_f32_select(n, p.p, a.p, b.p, want);
          } else {
            optic_ref_f32_select_spred(n, scalar_preds[pi], a.p, b.p, want);
          }
          float *dst = mode == 1 ? a.p : mode == 2 ? b.p : y.p;
          if (vpred) {
            vpred(n, p.p, a.p, b.p, dst);
          } else {
            spred(n, scalar_preds[pi], a.p, b.p, dst);
          }
          for (size_t i = 0; i < n; i++) {
            if (memcmp(&dst[i], &want[i], 4) != 0) {
              uint32_t g, w;
              memcpy(&g, &dst[i], 4), memcpy(&w, &want[i], 4);
              OT_CHECK(false, "%s n=%zu offset=%zu mode=%d: y[%zu]=0x%08x want 0x%08x (p=%u)", fn_name, n, off, mode, i,
                       g, w, vpred ? ((uint8_t *)p.p)[i] : scalar_preds[pi]);
              failures++;
              break;
            }
          }
          OT_CHECK(kt_mem_guard_ok(&p) && kt_mem_guard_ok(&a) && kt_mem_guard_ok(&b) && kt_mem_guard_ok(&y),
                   "%s n=%zu offset=%zu mode=%d wrote outside its arrays", fn_name, n, off, mode);
          free(want);
          kt_mem_free(&p), kt_mem_free(&a), kt_mem_free(&b), kt_mem_free(&y);
        }
      }
    }
  }
}

#define X_VPRED(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_ISA_##isa, fn, NULL, #fn); }
#define X_SPRED(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_ISA_##isa, NULL, fn, #fn); }
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED

/* The oracle itself: every nonzero byte is true. */
static void reference_known_answers(void) {
  const uint8_t p[5] = {0, 1, 2, 0x80, 0xFF};
  const float a[5] = {1, 2, 3, 4, 5}, b[5] = {-1, -2, -3, -4, -5}, want[5] = {-1, 2, 3, 4, 5};
  float y[5];
  optic_ref_f32_select(5, p, a, b, y);
  OT_CHECK(memcmp(y, want, sizeof y) == 0);
  optic_ref_f32_select_spred(5, 0x40, a, b, y);
  OT_CHECK(memcmp(y, a, sizeof y) == 0);
  optic_ref_f32_select_spred(5, 0, a, b, y);
  OT_CHECK(memcmp(y, b, sizeof y) == 0);
}

static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_select_kernels *t = optic_select_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    OT_CHECK(t->vpred != NULL && t->spred != NULL, "%s has a hole", optic_isa_name((optic_isa)i));
    OT_CHECK(t->isa_of_vpred == OPTIC_ISA_SCALAR || t->isa_of_vpred == (optic_isa)i);
    OT_CHECK(t->isa_of_spred == OPTIC_ISA_SCALAR || t->isa_of_spred == (optic_isa)i);
  }
#define X_VPRED(op, isa, fn) OT_CHECK(optic_select_kernels_for(OPTIC_ISA_##isa)->vpred == fn, #fn " not in its table");
#define X_SPRED(op, isa, fn) OT_CHECK(optic_select_kernels_for(OPTIC_ISA_##isa)->spred == fn, #fn " not in its table");
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_select_kernels_get() == optic_select_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_select_kernels_get()->vpred == optic_f32_vselect__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_select_kernels_get() == optic_select_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_VPRED(op, isa, fn) {#fn, test_##fn},
#define X_SPRED(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
    {"reference_known_answers", reference_known_answers},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
