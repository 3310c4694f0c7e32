/* The streaming copy of kernels/stream.h: every ISA's body and the
 * dispatched call copy exactly the bytes asked for (compared with memcpy
 * into a second buffer), at byte sizes around the store widths and every
 * destination and source misalignment within a line; the bytes before and
 * after the destination stay untouched. */
#include <stdlib.h>
#include <string.h>

#include "kernels/stream.h"
#include "tests/kernels/kernel_test.h"
#if OPTIC_ARCH_X86_64
#include "kernels/x86/stream_x86.h"
#endif

typedef void (*copy_fn)(void *dst, const void *src, size_t bytes);

enum { GUARD = 96, MAX_BYTES = 1200 };

static void check_copy(optic_isa isa, copy_fn fn, const char *name) {
  if (isa != OPTIC_ISA_SCALAR && kt_skip_isa(isa)) return;
  static const size_t sizes[] = {0,   1,   2,   15,  16,  17,  31,  32,  33,  47,  63,  64,   65,  100,
                                 127, 128, 129, 191, 192, 255, 256, 257, 511, 512, 513, 1000, 1199};
  static const size_t offsets[] = {0, 1, 3, 4, 16, 31, 32, 33, 48, 60, 63};
  const size_t cap = (GUARD + 64 + MAX_BYTES + GUARD + 63) / 64 * 64; /* aligned_alloc: a multiple of 64 */
  unsigned char *src = aligned_alloc(64, cap), *got = aligned_alloc(64, cap), *want = aligned_alloc(64, cap);
  OT_CHECK(src && got && want);
  kt_rng r = {0x9e3779b97f4a7c15ull};
  for (size_t i = 0; src && i < cap; i++) src[i] = (unsigned char)kt_next(&r);
  int failures = 0;
  for (size_t si = 0; src && got && want && si < sizeof sizes / sizeof sizes[0] && failures < 5; si++) {
    for (size_t di = 0; di < sizeof offsets / sizeof offsets[0]; di++) {
      for (size_t so = 0; so < 64; so += 21) {
        const size_t n = sizes[si], d = GUARD + offsets[di];
        memset(got, 0xA5, cap);
        memset(want, 0xA5, cap);
        fn(got + d, src + GUARD + so, n);
        optic_stream_fence();
        memcpy(want + d, src + GUARD + so, n);
        if (memcmp(got, want, cap) != 0) {
          size_t k = 0;
          while (got[k] == want[k]) k++;
          OT_CHECK(false, "%s bytes=%zu dst+%zu src+%zu: first wrong byte at %ld", name, n, offsets[di], so,
                   (long)k - (long)d);
          failures++;
        }
      }
    }
  }
  free(src), free(got), free(want);
}

static void copy_dispatched(void) { check_copy(OPTIC_ISA_SCALAR, optic_stream_copy, "optic_stream_copy"); }

#if OPTIC_ARCH_X86_64
static void copy_avx2(void) { check_copy(OPTIC_ISA_AVX2, optic_stream_copy__avx2, "optic_stream_copy__avx2"); }
static void copy_avx512(void) { check_copy(OPTIC_ISA_AVX512, optic_stream_copy__avx512, "optic_stream_copy__avx512"); }
#endif

/* Capped at each ISA in turn, the dispatched copy takes that ISA's body. */
static void copy_each_cap(void) {
  static const char *const caps[] = {"scalar", "avx2", "avx512"};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    setenv("OPTIC_ISA", caps[i], 1);
    optic_isa_reselect();
    check_copy(OPTIC_ISA_SCALAR, optic_stream_copy, caps[i]);
  }
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
}

static const ot_case cases[] = {
    {"stream_copy_dispatched", copy_dispatched},
#if OPTIC_ARCH_X86_64
    {"stream_copy_avx2", copy_avx2},
    {"stream_copy_avx512", copy_avx512},
#endif
    {"stream_copy_each_isa_cap", copy_each_cap},
};
OT_MAIN(cases)
