/* Dispatch table of the optimizer update family, built from
 * kernels/list/optim.inc: each ISA's table starts as the scalar table and
 * takes the ISA's own kernels where the list has them. Built once
 * (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/optim.h"

static optic_optim_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static const char *const op_names[OPTIC_OPTIM_OP_COUNT] = {
#define OP_NAME(op, name) name,
    OPTIC_OPTIM_OP_LIST(OP_NAME)
#undef OP_NAME
};

const char *optic_optim_op_name(optic_optim_op op) {
  return (unsigned)op < OPTIC_OPTIM_OP_COUNT ? op_names[op] : "invalid";
}

/* Pass 0 installs the scalar entries, pass 1 every other ISA's over a copy. */
static void build_tables(void) {
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
        if (optic_isa_built((optic_isa)isa)) tables[isa] = tables[OPTIC_ISA_SCALAR];
      }
    }
#define ENTRY(member, op, isa, fn)                                      \
  if ((OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) == (pass == 0)) {           \
    tables[OPTIC_ISA_##isa].member = fn;                                \
    tables[OPTIC_ISA_##isa].isa_of[OPTIC_OPTIM_##op] = OPTIC_ISA_##isa; \
  }
#define X_SGD(op, isa, fn) ENTRY(sgd, op, isa, fn)
#define X_ADAM(op, isa, fn) ENTRY(adam, op, isa, fn)
#define X_RMSPROP(op, isa, fn) ENTRY(rmsprop, op, isa, fn)
#define X_ADAGRAD(op, isa, fn) ENTRY(adagrad, op, isa, fn)
#define X_LION(op, isa, fn) ENTRY(lion, op, isa, fn)
#define X_LAMB_MOMENTS(op, isa, fn) ENTRY(lamb_moments, op, isa, fn)
#define X_LAMB_APPLY(op, isa, fn) ENTRY(lamb_apply, op, isa, fn)
#include "kernels/list/optim.inc"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY
#undef ENTRY
  }
}

const optic_optim_kernels *optic_optim_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_optim_kernels *optic_optim_kernels_get(void) { return optic_optim_kernels_for(optic_isa_selected()); }
