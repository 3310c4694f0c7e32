/* Binary f32 kernels: every (op, ISA) entry of kernels/list/binary.inc against
 * the naive reference, over edge sizes, misaligned starts and in place, with
 * guards after every output. Tolerance: add/sub/mul/div/max/min must match
 * bitwise (IEEE ops are exactly rounded); pow within 2 ULP of the double-
 * precision reference rounded to float. Inputs include ±0, ±inf, NaN and
 * subnormals. */
#include "kernels/binary.h"
#include "tests/kernels/kernel_test.h"

static uint32_t tolerance_ulp(optic_binary_op op) { return op == OPTIC_BINARY_POW ? 2 : 0; }

static void fill_operands(kt_rng *r, optic_binary_op op, float *a, float *b, size_t n) {
  if (op == OPTIC_BINARY_POW) { /* keep pow in a range where its results are finite and interesting */
    kt_fill(r, a, n, 0.0f, 8.0f, 0);
    kt_fill(r, b, n, -6.0f, 6.0f, 0);
    if (n > 2) a[0] = -2.0f, b[0] = 3.0f, a[1] = 0.0f, b[1] = -1.0f; /* odd power of a negative; 0^-1 = inf */
  } else {
    kt_fill(r, a, n, -100.0f, 100.0f, 1);
    kt_fill(r, b, n, -100.0f, 100.0f, 1);
  }
}

static bool close_enough(optic_binary_op op, float got, float want) {
  uint32_t tol = tolerance_ulp(op);
  return tol == 0 ? kt_same(got, want) : kt_ulp_distance(got, want) <= tol;
}

/* mode 0: y separate; 1: y == a; 2: y == b (vv only). */
static void check(optic_binary_op op, optic_isa isa, optic_f32_vbinary_fn vv, optic_f32_vbinaryc_fn vs,
                  const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  kt_rng rng = {0x9E3779B97F4A7C15ull ^ (uint64_t)op};
  int failures = 0;
  for (size_t si = 0; si < nsizes && failures < 5; si++) {
    size_t n = sizes[si];
    for (size_t oi = 0; oi < kt_noffsets; oi++) {
      for (int mode = 0; mode < (vv ? 3 : 2); mode++) {
        size_t off = kt_offsets[oi];
        kt_buf a = kt_buf_make(n, off), b = kt_buf_make(n, (off + 1) % 4), y = kt_buf_make(n, off);
        fill_operands(&rng, op, a.p, b.p, n);
        float s = kt_uniform(&rng, -3.0f, 3.0f);
        if (op == OPTIC_BINARY_POW) s = kt_uniform(&rng, 0.5f, 2.5f);
        float *want = malloc((n + 1) * sizeof(float));
        if (vv) {
          optic_ref_f32_binary(op, n, a.p, b.p, want);
        } else {
          optic_ref_f32_binaryc(op, n, a.p, s, want);
        }
        float *dst = mode == 1 ? a.p : mode == 2 ? b.p : y.p;
        if (vv) {
          vv(n, a.p, b.p, dst);
        } else {
          vs(n, a.p, s, dst);
        }
        for (size_t i = 0; i < n; i++) {
          if (!close_enough(op, dst[i], want[i])) {
            OT_CHECK(false, "%s n=%zu offset=%zu mode=%d: y[%zu]=%.9g (0x%08x) want %.9g, ulp %u", fn_name, n, off,
                     mode, i, dst[i], *(uint32_t *)&dst[i], want[i], kt_ulp_distance(dst[i], want[i]));
            failures++;
            break;
          }
        }
        OT_CHECK(kt_buf_guard_ok(&a) && kt_buf_guard_ok(&b) && kt_buf_guard_ok(&y),
                 "%s n=%zu offset=%zu mode=%d wrote past the end", fn_name, n, off, mode);
        free(want);
        kt_buf_free(&a), kt_buf_free(&b), kt_buf_free(&y);
      }
    }
  }
}

#define X_VV(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_BINARY_##op, OPTIC_ISA_##isa, fn, NULL, #fn); }
#define X_VS(op, isa, fn) \
  static void test_##fn(void) { check(OPTIC_BINARY_##op, OPTIC_ISA_##isa, NULL, fn, #fn); }
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS

/* The table for each ISA holds that ISA's kernel wherever the list has one,
 * the scalar one elsewhere; OPTIC_ISA changes what _get returns. */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_binary_kernels *t = optic_binary_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    for (int op = 0; op < OPTIC_BINARY_OP_COUNT; op++) {
      OT_CHECK(t->vv[op] != NULL && t->vs[op] != NULL, "%s %s has a hole", optic_isa_name((optic_isa)i),
               optic_binary_op_name((optic_binary_op)op));
      OT_CHECK(t->isa_of_vv[op] == OPTIC_ISA_SCALAR || t->isa_of_vv[op] == (optic_isa)i);
    }
  }
#define X_VV(op, isa, fn) \
  OT_CHECK(optic_binary_kernels_for(OPTIC_ISA_##isa)->vv[OPTIC_BINARY_##op] == fn, #fn " not in its table");
#define X_VS(op, isa, fn) \
  OT_CHECK(optic_binary_kernels_for(OPTIC_ISA_##isa)->vs[OPTIC_BINARY_##op] == fn, #fn " not in its table");
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_binary_kernels_get() == optic_binary_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_binary_kernels_get()->vv[OPTIC_BINARY_ADD] == optic_f32_vadd__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_binary_kernels_get() == optic_binary_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define X_VV(op, isa, fn) {#fn, test_##fn},
#define X_VS(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
