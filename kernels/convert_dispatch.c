/* Dispatch table of the convert family, built from kernels/list/convert.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/convert.h"

static optic_convert_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  optic_convert_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_CVT(op, isa, fn)                   \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) { \
    scalar->op = fn;                         \
    scalar->isa_of.op = OPTIC_ISA_SCALAR;    \
  }
#include "kernels/list/convert.inc"
#undef X_CVT
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_CVT(op, isa, fn)                               \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {             \
    tables[OPTIC_ISA_##isa].op = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of.op = OPTIC_ISA_##isa; \
  }
#include "kernels/list/convert.inc"
#undef X_CVT
}

const optic_convert_kernels *optic_convert_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_convert_kernels *optic_convert_kernels_get(void) { return optic_convert_kernels_for(optic_isa_selected()); }

bool optic_convert_halves(optic_dtype from, const void *x, optic_dtype to, void *y, size_t n) {
  const optic_convert_kernels *t = optic_convert_kernels_get();
  if (from == OPTIC_F32 && to == OPTIC_BF16) t->f32_bf16(n, x, y);
  else if (from == OPTIC_BF16 && to == OPTIC_F32) t->bf16_f32(n, x, y);
  else if (from == OPTIC_F32 && to == OPTIC_F16) t->f32_f16(n, x, y);
  else if (from == OPTIC_F16 && to == OPTIC_F32) t->f16_f32(n, x, y);
  else return false;
  return true;
}
