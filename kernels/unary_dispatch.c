/* Dispatch table of the unary family, built from kernels/list/unary.inc: each
 * ISA's table starts as the scalar table and takes the ISA's own kernels where
 * the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/unary.h"
#include "kernels/stream.h"

static optic_unary_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static const char *const op_names[OPTIC_UNARY_OP_COUNT] = {
#define OP_NAME(op, name, ulp) name,
    OPTIC_UNARY_OP_LIST(OP_NAME)
#undef OP_NAME
};

static const unsigned op_max_ulp[OPTIC_UNARY_OP_COUNT] = {
#define OP_ULP(op, name, ulp) ulp,
    OPTIC_UNARY_OP_LIST(OP_ULP)
#undef OP_ULP
};

const char *optic_unary_op_name(optic_unary_op op) {
  return (unsigned)op < OPTIC_UNARY_OP_COUNT ? op_names[op] : "invalid";
}

unsigned optic_unary_max_ulp(optic_unary_op op) { return (unsigned)op < OPTIC_UNARY_OP_COUNT ? op_max_ulp[op] : 0; }

static void build_tables(void) {
  optic_stream_init(); /* here, so the kernels' first call never reads the environment or sysfs */
  optic_unary_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X(op, isa, fn)                                   \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) {             \
    scalar->kernel[OPTIC_UNARY_##op] = fn;               \
    scalar->isa_of[OPTIC_UNARY_##op] = OPTIC_ISA_SCALAR; \
  }
#include "kernels/list/unary.inc"
#undef X
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X(op, isa, fn)                                                  \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                            \
    tables[OPTIC_ISA_##isa].kernel[OPTIC_UNARY_##op] = fn;              \
    tables[OPTIC_ISA_##isa].isa_of[OPTIC_UNARY_##op] = OPTIC_ISA_##isa; \
  }
#include "kernels/list/unary.inc"
#undef X
}

const optic_unary_kernels *optic_unary_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_unary_kernels *optic_unary_kernels_get(void) { return optic_unary_kernels_for(optic_isa_selected()); }
