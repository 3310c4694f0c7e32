/* Dispatch table of the chain family, built from kernels/list/chain.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernel
 * where the list has one. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/chain.h"

static optic_chain_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  optic_chain_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_CHAIN(op, isa, fn)                 \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->chain = fn;                      \
    scalar->isa_of_chain = OPTIC_ISA_SCALAR; \
  }
#include "kernels/list/chain.inc"
#undef X_CHAIN
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_CHAIN(op, isa, fn)                                \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                \
    tables[OPTIC_ISA_##isa].chain = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_chain = OPTIC_ISA_##isa; \
  }
#include "kernels/list/chain.inc"
#undef X_CHAIN
}

const optic_chain_kernels *optic_chain_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_chain_kernels *optic_chain_kernels_get(void) { return optic_chain_kernels_for(optic_isa_selected()); }
