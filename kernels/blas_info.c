/* Reports which OpenBLAS build and core optic runs on, and whether that core
 * uses less of the CPU than it could (OPENBLAS_CORETYPE may force a weaker one). */
#include <cblas.h>
#include <string.h>
#include <strings.h>

#include <optic/kernels.h>

#include "core/error.h"

/* OpenBLAS core names (DYNAMIC_ARCH targets) by the widest vectors they use. */
static optic_isa isa_of_core(const char *core) {
  static const char *const avx512_cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids", "Zen4", "Zen5"};
  static const char *const avx2_cores[] = {"Haswell", "Zen", "SkylakeX_avx2", "Excavator"};
  static const char *const neon_cores[] = {"ARMV8",  "CortexA", "NeoverseN", "NeoverseV", "ThunderX",
                                           "Falkor", "TSV110",  "EMAG",      "A64FX",     "VORTEX"};
  if (core == NULL) return OPTIC_ISA_SCALAR;
  for (size_t i = 0; i < sizeof avx512_cores / sizeof *avx512_cores; i++) {
    if (strcasecmp(core, avx512_cores[i]) == 0) return OPTIC_ISA_AVX512;
  }
  for (size_t i = 0; i < sizeof avx2_cores / sizeof *avx2_cores; i++) {
    if (strcasecmp(core, avx2_cores[i]) == 0) return OPTIC_ISA_AVX2;
  }
  for (size_t i = 0; i < sizeof neon_cores / sizeof *neon_cores; i++) {
    if (strncasecmp(core, neon_cores[i], strlen(neon_cores[i])) == 0) return OPTIC_ISA_NEON;
  }
  return OPTIC_ISA_SCALAR;
}

optic_status optic_blas_get_info(optic_blas_info *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "blas_get_info: out is NULL");
  memset(out, 0, sizeof *out);
  out->config = openblas_get_config();
  out->corename = openblas_get_corename();
  switch (openblas_get_parallel()) {
    case 0: out->parallel = "sequential"; break;
    case 1: out->parallel = "pthreads"; break;
    case 2: out->parallel = "openmp"; break;
    default: out->parallel = "unknown"; break;
  }
  out->threads = openblas_get_num_threads();
  out->core_isa = isa_of_core(out->corename);
  out->core_weaker_than_cpu = out->core_isa < optic_isa_best();
  return OPTIC_OK;
}
