/* Dispatch table of the compare family, built from kernels/list/compare.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/compare.h"

static optic_compare_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static const char *const op_names[OPTIC_COMPARE_OP_COUNT] = {
#define OP_NAME(op, name) name,
    OPTIC_COMPARE_OP_LIST(OP_NAME)
#undef OP_NAME
};

const char *optic_compare_op_name(optic_compare_op op) {
  return (unsigned)op < OPTIC_COMPARE_OP_COUNT ? op_names[op] : "invalid";
}

optic_compare_op optic_compare_op_mirror(optic_compare_op op) {
  switch (op) {
    case OPTIC_COMPARE_LT: return OPTIC_COMPARE_GT;
    case OPTIC_COMPARE_LE: return OPTIC_COMPARE_GE;
    case OPTIC_COMPARE_GT: return OPTIC_COMPARE_LT;
    case OPTIC_COMPARE_GE: return OPTIC_COMPARE_LE;
    default: return op; /* EQ and NE are symmetric */
  }
}

static void build_tables(void) {
  optic_compare_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_VV(op, isa, fn)                                     \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) {                  \
    scalar->vv[OPTIC_COMPARE_##op] = fn;                      \
    scalar->isa_of_vv[OPTIC_COMPARE_##op] = OPTIC_ISA_SCALAR; \
  }
#define X_VS(op, isa, fn)                                     \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) {                  \
    scalar->vs[OPTIC_COMPARE_##op] = fn;                      \
    scalar->isa_of_vs[OPTIC_COMPARE_##op] = OPTIC_ISA_SCALAR; \
  }
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_VV(op, isa, fn)                                                    \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                                 \
    tables[OPTIC_ISA_##isa].vv[OPTIC_COMPARE_##op] = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_vv[OPTIC_COMPARE_##op] = OPTIC_ISA_##isa; \
  }
#define X_VS(op, isa, fn)                                                    \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                                 \
    tables[OPTIC_ISA_##isa].vs[OPTIC_COMPARE_##op] = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_vs[OPTIC_COMPARE_##op] = OPTIC_ISA_##isa; \
  }
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
}

const optic_compare_kernels *optic_compare_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_compare_kernels *optic_compare_kernels_get(void) { return optic_compare_kernels_for(optic_isa_selected()); }
