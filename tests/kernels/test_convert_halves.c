/* The f32/bf16/f16 convert kernels of every ISA built here (the tables of
 * optic_convert_kernels_for, which optic_convert_halves dispatches to: the
 * runtime's convert ops, in-fusion widening and the dot/conv operand
 * widening; an ISA this CPU cannot run is skipped) against optic_convert_elements (the scalar converter of
 * core/half.h), bit for bit: every f16 and bf16 pattern widened; for narrowing, every f32 pattern
 * whose low 16 bits are one of a set that holds the f16 and bf16 ties and
 * their neighbours (so each exponent, each high mantissa, subnormal results,
 * overflow to inf and NaN payloads), plus random patterns; lengths 0, 1,
 * 15, 16, 17, 33 at misaligned starts with guards after the output. */
#include <string.h>

#include "kernels/convert.h"
#include "tests/kernels/kernel_test.h"

static const optic_isa isas[] = {OPTIC_ISA_SCALAR, OPTIC_ISA_AVX2, OPTIC_ISA_AVX512, OPTIC_ISA_NEON};

/* One of the four conversions through isa's table. */
static void convert_isa(optic_isa isa, optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n) {
  const optic_convert_kernels *t = optic_convert_kernels_for(isa);
  if (from == OPTIC_F16) t->f16_f32(n, src, dst);
  else if (from == OPTIC_BF16) t->bf16_f32(n, src, dst);
  else if (to == OPTIC_F16) t->f32_f16(n, src, dst);
  else t->f32_bf16(n, src, dst);
}

/* Converts n elements from src with isa and with the scalar converter and
 * compares the bytes; false (and a message) on the first difference. */
static bool same_as_scalar(optic_isa isa, optic_dtype from, const void *src, optic_dtype to, size_t n) {
  size_t es = optic_dtype_size(to);
  unsigned char *got = malloc(n * es + 64), *want = malloc(n * es + 64);
  memset(got, 0xA5, n * es + 64);
  convert_isa(isa, from, src, to, got, n);
  OT_EXPECT_OK(optic_convert_elements(from, src, to, want, n));
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    if (memcmp(got + i * es, want + i * es, es) != 0) {
      uint32_t s = 0, g = 0, w = 0;
      memcpy(&s, (const unsigned char *)src + i * optic_dtype_size(from), optic_dtype_size(from));
      memcpy(&g, got + i * es, es), memcpy(&w, want + i * es, es);
      OT_CHECK(false, "%s %s -> %s: element %zu of %zu (0x%08x) gives 0x%x, the scalar converter 0x%x",
               optic_isa_name(isa), optic_dtype_name(from), optic_dtype_name(to), i, n, s, g, w);
      ok = false;
    }
  }
  for (size_t i = n * es; i < n * es + 64 && ok; i++) {
    if (got[i] != 0xA5) {
      OT_CHECK(false, "%s %s -> %s, n = %zu: wrote past the output", optic_isa_name(isa), optic_dtype_name(from),
               optic_dtype_name(to), n);
      ok = false;
    }
  }
  free(got), free(want);
  return ok;
}

static void widen_all_patterns(void) {
  uint16_t *h = malloc(65536 * sizeof *h);
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
    if (!optic_isa_built(isas[k]) || kt_skip_isa(isas[k])) continue;
    same_as_scalar(isas[k], OPTIC_F16, h, OPTIC_F32, 65536);
    same_as_scalar(isas[k], OPTIC_BF16, h, OPTIC_F32, 65536);
  }
  free(h);
}

static void narrow_patterns(void) {
  static const uint16_t lows[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x3000,
                                  0x7FFF, 0x8000, 0x8001, 0xBFFF, 0xC000, 0xE000, 0xF000, 0xFFFF};
  const size_t nl = sizeof lows / sizeof lows[0], n = 65536 * nl + 4096;
  uint32_t *b = malloc(n * sizeof *b);
  for (uint32_t hi = 0; hi < 65536; hi++) {
    for (size_t j = 0; j < nl; j++) b[hi * nl + j] = hi << 16 | lows[j];
  }
  kt_rng rng = {0x5EEDu};
  for (size_t i = 65536 * nl; i < n; i++) b[i] = (uint32_t)kt_next(&rng);
  for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
    if (!optic_isa_built(isas[k]) || kt_skip_isa(isas[k])) continue;
    same_as_scalar(isas[k], OPTIC_F32, b, OPTIC_F16, n);
    same_as_scalar(isas[k], OPTIC_F32, b, OPTIC_BF16, n);
  }
  free(b);
}

/* Short lengths around the 16-lane step at misaligned starts: the masked
 * remainder reads and writes nothing past n. */
static void lengths(void) {
  static const size_t ns[] = {0, 1, 15, 16, 17, 33};
  kt_rng rng = {0xC0DEu};
  uint32_t src[64 + 8];
  for (size_t i = 0; i < sizeof src / sizeof src[0]; i++) src[i] = (uint32_t)kt_next(&rng);
  for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
    if (!optic_isa_built(isas[k]) || kt_skip_isa(isas[k])) continue;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      for (size_t off = 0; off < 3; off++) {
        const unsigned char *s = (const unsigned char *)src + 2 * off;
        same_as_scalar(isas[k], OPTIC_F16, s, OPTIC_F32, ns[i]);
        same_as_scalar(isas[k], OPTIC_BF16, s, OPTIC_F32, ns[i]);
        same_as_scalar(isas[k], OPTIC_F32, (const unsigned char *)(src + off), OPTIC_F16, ns[i]);
        same_as_scalar(isas[k], OPTIC_F32, (const unsigned char *)(src + off), OPTIC_BF16, ns[i]);
      }
    }
  }
}

/* optic_convert_halves takes only the four pairs: any other is refused
 * (false) with nothing written, so its callers fall back to
 * optic_convert_elements. */
static void other_pairs(void) {
  int8_t s8[5] = {-128, -1, 0, 1, 127};
  float f[5] = {7, 7, 7, 7, 7};
  OT_CHECK(!optic_convert_halves(OPTIC_S8, s8, OPTIC_F32, f, 5));
  OT_CHECK(!optic_convert_halves(OPTIC_F16, s8, OPTIC_BF16, f, 2));
  OT_CHECK(f[0] == 7.0f && f[4] == 7.0f, "a refused pair wrote its output");
  uint16_t h[2] = {0x3C00, 0xC000}; /* f16 1 and -2 */
  OT_CHECK(optic_convert_halves(OPTIC_F16, h, OPTIC_F32, f, 2) && f[0] == 1.0f && f[1] == -2.0f);
}

static const ot_case cases[] = {
    {"widen_all_patterns", widen_all_patterns},
    {"narrow_patterns", narrow_patterns},
    {"lengths", lengths},
    {"other_pairs", other_pairs},
};
OT_MAIN(cases)
