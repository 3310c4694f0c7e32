/* Dispatch table of the clamp family, built from kernels/list/clamp.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/clamp.h"

static optic_clamp_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  optic_clamp_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_VV(op, isa, fn)                    \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->vv = fn;                         \
    scalar->isa_of_vv = OPTIC_ISA_SCALAR;    \
  }
#define X_VS(op, isa, fn)                    \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->vs = fn;                         \
    scalar->isa_of_vs = OPTIC_ISA_SCALAR;    \
  }
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_VV(op, isa, fn)                                \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {             \
    tables[OPTIC_ISA_##isa].vv = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_vv = OPTIC_ISA_##isa; \
  }
#define X_VS(op, isa, fn)                                \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {             \
    tables[OPTIC_ISA_##isa].vs = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_vs = OPTIC_ISA_##isa; \
  }
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
}

const optic_clamp_kernels *optic_clamp_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_clamp_kernels *optic_clamp_kernels_get(void) { return optic_clamp_kernels_for(optic_isa_selected()); }
