/* Internal: what every kernel file shares. Kernel contract, for all families
 * unless a family header says otherwise:
 *  - n (or any extent) may be 0; pointers need no alignment;
 *  - nothing is read or written outside [ptr, ptr + n) (no over-read);
 *  - an output may be exactly the same array as an input (in place) but must
 *    not overlap it partially;
 *  - a kernel never allocates, never spawns threads, never prints: the caller
 *    splits work across threads by giving each a sub-range. */
#ifndef OPTIC_KERNELS_COMMON_H
#define OPTIC_KERNELS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <optic/core.h>

#if defined(__x86_64__)
#define OPTIC_ARCH_X86_64 1
#else
#define OPTIC_ARCH_X86_64 0
#endif
#if defined(__aarch64__)
#define OPTIC_ARCH_AARCH64 1
#else
#define OPTIC_ARCH_AARCH64 0
#endif

/* Floats per vector register of an ISA (1 for scalar): the tile width tests
 * sweep around. */
static inline size_t optic_isa_vector_floats(optic_isa isa) {
  switch (isa) {
    case OPTIC_ISA_AVX2: return 8;
    case OPTIC_ISA_AVX512: return 16;
    case OPTIC_ISA_NEON: return 4;
    default: return 1;
  }
}

/* True if kernels for isa are compiled into this build (x86 ones on x86-64,
 * NEON on aarch64, scalar everywhere). */
static inline bool optic_isa_built(optic_isa isa) {
  switch (isa) {
    case OPTIC_ISA_SCALAR: return true;
    case OPTIC_ISA_AVX2:
    case OPTIC_ISA_AVX512: return OPTIC_ARCH_X86_64;
    case OPTIC_ISA_NEON: return OPTIC_ARCH_AARCH64;
    default: return false;
  }
}

#endif
