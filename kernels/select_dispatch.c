/* Dispatch table of the select family, built from kernels/list/select.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/select.h"

static optic_select_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  optic_select_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_VPRED(op, isa, fn)                 \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->vpred = fn;                      \
    scalar->isa_of_vpred = OPTIC_ISA_SCALAR; \
  }
#define X_SPRED(op, isa, fn)                 \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->spred = fn;                      \
    scalar->isa_of_spred = OPTIC_ISA_SCALAR; \
  }
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_VPRED(op, isa, fn)                                \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                \
    tables[OPTIC_ISA_##isa].vpred = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_vpred = OPTIC_ISA_##isa; \
  }
#define X_SPRED(op, isa, fn)                                \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                \
    tables[OPTIC_ISA_##isa].spred = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_spred = OPTIC_ISA_##isa; \
  }
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
}

const optic_select_kernels *optic_select_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_select_kernels *optic_select_kernels_get(void) { return optic_select_kernels_for(optic_isa_selected()); }
