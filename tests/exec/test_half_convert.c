/* The f16/bf16 <-> f32 steps of widened block programs (exec/ewhalf.c)
 * against core/half.h's element converters (the op-by-op path's rule),
 * bitwise: widening and exact narrowing over every 16-bit pattern; rounding
 * and rounding narrowing over every f32 pattern near a half value or a
 * midpoint between two (+-2 ulps), and a stride through all 2^32 patterns
 * (NaNs, infinities, subnormals, both signs included); lengths 0, 1, 15, 17
 * and long runs (the vector loops' tails).
 * Reproduce a failure: ctest --preset release -R exec_half_convert */
#include "core/half.h"
#include "exec/exec_internal.h"
#include "tests/harness.h"

static uint16_t ref_narrow(optic_dtype dt, float x) {
  return dt == OPTIC_BF16 ? optic_half_from_f32_bf16(x) : optic_half_from_f32_f16(x);
}

static float ref_widen(optic_dtype dt, uint16_t h) {
  return dt == OPTIC_BF16 ? optic_half_to_f32_bf16(h) : optic_half_to_f32_f16(h);
}

static const char *name(optic_dtype dt) { return dt == OPTIC_BF16 ? "bf16" : "f16"; }

static void every_half(void) {
  static uint16_t h[65536], back[65536];
  static float w[65536];
  for (int dti = 0; dti < 2; dti++) {
    optic_dtype dt = dti ? OPTIC_BF16 : OPTIC_F16;
    for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    ew_half_widen(dt, 65536, h, w);
    ew_half_narrow_exact(dt, 65536, w, back);
    int bad = 0;
    for (uint32_t i = 0; i < 65536 && bad < 5; i++) {
      float r = ref_widen(dt, (uint16_t)i);
      if (optic_half_f32_bits(r) != optic_half_f32_bits(w[i])) {
        OT_CHECK(false, "%s widen 0x%04x: got 0x%08x, want 0x%08x", name(dt), i, optic_half_f32_bits(w[i]),
                 optic_half_f32_bits(r));
        bad++;
      }
      if (back[i] != i) {
        OT_CHECK(false, "%s exact narrow of 0x%04x's image: got 0x%04x", name(dt), i, back[i]);
        bad++;
      }
    }
  }
}

/* Rounds n floats both ways and compares with the element converters. */
static int check_rounding(optic_dtype dt, const float *x, size_t n) {
  float r[1024];
  uint16_t h[1024];
  memcpy(r, x, n * sizeof *r);
  ew_half_round(dt, n, r);
  ew_half_narrow(dt, n, x, h);
  int bad = 0;
  for (size_t i = 0; i < n && bad < 5; i++) {
    uint16_t want = ref_narrow(dt, x[i]);
    uint32_t want_r = optic_half_f32_bits(ref_widen(dt, want));
    if (h[i] != want || optic_half_f32_bits(r[i]) != want_r) {
      OT_CHECK(false, "%s x = 0x%08x: narrow 0x%04x (want 0x%04x), round 0x%08x (want 0x%08x)", name(dt),
               optic_half_f32_bits(x[i]), h[i], want, optic_half_f32_bits(r[i]), want_r);
      bad++;
    }
  }
  return bad;
}

/* Checks x[0..n) in chunks of the lengths of the vector loops' edges. */
static int check_chunked(optic_dtype dt, const float *x, size_t n) {
  static const size_t lens[] = {1, 15, 0, 17, 1024, 16, 1000};
  int bad = 0;
  for (size_t at = 0, li = 0; at < n && bad == 0; li++) {
    size_t len = lens[li % 7] < n - at ? lens[li % 7] : n - at;
    bad += check_rounding(dt, x + at, len);
    at += len;
  }
  return bad;
}

static void rounding(void) {
  enum { NEAR = 65536 * 10 };
  static float buf[NEAR];
  for (int dti = 0; dti < 2; dti++) {
    optic_dtype dt = dti ? OPTIC_BF16 : OPTIC_F16;
    size_t at = 0;
    /* near every half value and every midpoint (the image plus half its ulp) */
    for (uint32_t i = 0; i < 65536; i++) {
      uint32_t img = optic_half_f32_bits(ref_widen(dt, (uint16_t)i));
      uint32_t mid = img + (dt == OPTIC_BF16 ? 0x8000u : 0x1000u);
      for (int d = -2; d <= 2; d++) {
        buf[at++] = optic_half_bits_f32(img + (uint32_t)d);
        buf[at++] = optic_half_bits_f32(mid + (uint32_t)d);
      }
    }
    int bad = check_chunked(dt, buf, at);
    /* a stride through every pattern */
    at = 0;
    for (uint64_t b = 0; b < ((uint64_t)1 << 32); b += 65521) buf[at++] = optic_half_bits_f32((uint32_t)b);
    bad += check_chunked(dt, buf, at);
    OT_CHECK(bad == 0, "%s rounding differs from core/half.h", name(dt));
  }
}

static const ot_case cases[] = {{"every_half", every_half}, {"rounding", rounding}};
OT_MAIN(cases)
