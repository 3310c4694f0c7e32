/* The generic element family's fast paths for the halves (kernels/elem.h):
 * convert between f32 and f16/bf16, 8- and 16-bit integers to f16/bf16
 * (through the convert kernels), and 2-byte select, against core's
 * optic_convert_elements (the scalar converter) and a naive select, bit for
 * bit. Sizes 0, 1, 255, 256, 257 (the chunk), 1000 and every 16-bit pattern;
 * starts one element off alignment; scalar (broadcast) operands; select in
 * place. A failure prints the case to rerun. */
#include "kernels/elem.h"
#include "tests/kernels/kernel_test.h"

static const size_t sizes[] = {0, 1, 255, 256, 257, 1000, 65536};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* Source bits for dtype dt, n elements: every pattern in order for 8/16-bit
 * dtypes (wrapping), f32 random bits with every third a half tie. */
static void fill_src(optic_dtype dt, kt_rng *r, unsigned char *p, size_t n) {
  size_t es = optic_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    if (es == 4) {
      uint32_t u = (uint32_t)kt_next(r);
      if (i % 3 == 0) u = (u & 0xFFFF0000u) | 0x8000u;
      if (i % 3 == 1) u = (u & 0xFFFFE000u) | 0x1000u;
      memcpy(p + 4 * i, &u, 4);
    } else if (es == 2) {
      uint16_t h = (uint16_t)i;
      memcpy(p + 2 * i, &h, 2);
    } else {
      p[i] = (unsigned char)i;
    }
  }
}

static void check_convert(optic_dtype in, optic_dtype out) {
  kt_rng rng = {0x5EEDull ^ ((uint64_t)in << 8) ^ out};
  size_t ies = optic_dtype_size(in), oes = optic_dtype_size(out);
  for (size_t k = 0; k < N_SIZES; k++) {
    size_t n = sizes[k];
    unsigned char *x = malloc((n + 1) * ies), *got = malloc((n + 1) * oes + 8), *want = malloc((n + 1) * oes);
    fill_src(in, &rng, x + ies, n);
    memset(got, 0xA5, (n + 1) * oes + 8);
    const void *src[1] = {x + ies};
    optic_elem_generic(OPTIC_ELEM_CONVERT, OPTIC_COMPARE_EQ, in, out, n, src, 0, got + oes, NULL, NULL);
    OT_EXPECT_OK(optic_convert_elements(in, x + ies, out, want, n));
    for (size_t i = 0; i < n; i++) {
      if (memcmp(got + oes * (i + 1), want + oes * i, oes) != 0) {
        OT_CHECK(false, "%s->%s n=%zu: element %zu differs from optic_convert_elements", optic_dtype_name(in),
                 optic_dtype_name(out), n, i);
        break;
      }
    }
    OT_CHECK(got[0] == 0xA5 && got[(n + 1) * oes] == 0xA5, "%s->%s n=%zu wrote outside y", optic_dtype_name(in),
             optic_dtype_name(out), n);
    if (n > 0) { /* a scalar source: element 0 repeated */
      optic_elem_generic(OPTIC_ELEM_CONVERT, OPTIC_COMPARE_EQ, in, out, n, src, 1u, got, NULL, NULL);
      bool same = true;
      for (size_t i = 0; i < n && same; i++) same = memcmp(got + oes * i, want, oes) == 0;
      OT_CHECK(same, "%s->%s n=%zu scalar source", optic_dtype_name(in), optic_dtype_name(out), n);
    }
    free(x), free(got), free(want);
  }
}

static void convert_matches_core(void) {
  static const optic_dtype halves[] = {OPTIC_BF16, OPTIC_F16};
  static const optic_dtype ints[] = {OPTIC_S8, OPTIC_U8, OPTIC_S16, OPTIC_U16};
  for (int h = 0; h < 2; h++) {
    check_convert(OPTIC_F32, halves[h]);
    check_convert(halves[h], OPTIC_F32);
    for (int i = 0; i < 4; i++) check_convert(ints[i], halves[h]);
  }
}

static void select_two_bytes(void) {
  kt_rng rng = {0x5E1Eull};
  static const optic_dtype dts[] = {OPTIC_BF16, OPTIC_F16};
  for (int d = 0; d < 2; d++) {
    for (size_t k = 0; k < N_SIZES; k++) {
      size_t n = sizes[k];
      uint8_t *p = malloc(n + 1);
      uint16_t *a = malloc(2 * (n + 1)), *b = malloc(2 * (n + 1)), *y = malloc(2 * (n + 2)),
               *want = malloc(2 * (n + 1));
      for (size_t i = 0; i < n; i++) {
        uint64_t r = kt_next(&rng);
        p[i] = (uint8_t)(r % 3 == 0 ? 0 : r % 3 == 1 ? 1 : (r >> 8) | 1u); /* 0, 1 and other nonzero bytes */
        a[i] = (uint16_t)(r >> 16), b[i] = (uint16_t)(r >> 32);
        want[i] = p[i] ? a[i] : b[i];
      }
      y[n + 1] = 0xBEEF;
      const void *src[3] = {p, a, b};
      optic_elem_generic(OPTIC_ELEM_SELECT, OPTIC_COMPARE_EQ, dts[d], dts[d], n, src, 0, y + 1, NULL, NULL);
      OT_CHECK(n == 0 || memcmp(y + 1, want, 2 * n) == 0, "select %s n=%zu", optic_dtype_name(dts[d]), n);
      OT_CHECK(y[n + 1] == 0xBEEF, "select n=%zu wrote past the end", n);
      optic_elem_generic(OPTIC_ELEM_SELECT, OPTIC_COMPARE_EQ, dts[d], dts[d], n, src, 0, a, NULL, NULL); /* y == a */
      OT_CHECK(n == 0 || memcmp(a, want, 2 * n) == 0, "select in place %s n=%zu", optic_dtype_name(dts[d]), n);
      if (n > 0) { /* a scalar predicate: all of b (p[0] false) */
        uint8_t zero = 0;
        const void *s2[3] = {&zero, want, b};
        optic_elem_generic(OPTIC_ELEM_SELECT, OPTIC_COMPARE_EQ, dts[d], dts[d], n, s2, 1u, y, NULL, NULL);
        OT_CHECK(memcmp(y, b, 2 * n) == 0, "select scalar predicate n=%zu", n);
      }
      free(p), free(a), free(b), free(y), free(want);
    }
  }
}

static const ot_case cases[] = {
    {"convert_matches_core", convert_matches_core},
    {"select_two_bytes", select_two_bytes},
};
OT_MAIN(cases)
