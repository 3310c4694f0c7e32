/* Chooses the conversion loops of kernels/dot_convert.h: the AVX-512 ones
 * when that ISA is selected, optic_convert_elements otherwise. */
#include "kernels/dot_convert.h"

optic_status optic_dot_convert_isa(optic_isa isa, optic_dtype from, const void *src, optic_dtype to, void *dst,
                                   size_t n) {
#if OPTIC_ARCH_X86_64
  if (isa == OPTIC_ISA_AVX512 && n > 0 && src != NULL && dst != NULL &&
      optic_dot_convert__avx512(from, src, to, dst, n))
    return OPTIC_OK;
#else
  (void)isa;
#endif
  return optic_convert_elements(from, src, to, dst, n);
}

optic_status optic_dot_convert(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n) {
  return optic_dot_convert_isa(optic_isa_selected(), from, src, to, dst, n);
}
