/* Dispatch table of the reduction family, built from kernels/list/reduce.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <math.h>
#include <pthread.h>

#include "kernels/reduce.h"

static optic_reduce_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static const char *const op_names[OPTIC_REDUCE_OP_COUNT] = {
#define OP_NAME(op, name) name,
    OPTIC_REDUCE_OP_LIST(OP_NAME)
#undef OP_NAME
};

const char *optic_reduce_op_name(optic_reduce_op op) {
  return (unsigned)op < OPTIC_REDUCE_OP_COUNT ? op_names[op] : "invalid";
}

float optic_reduce_identity(optic_reduce_op op) {
  switch (op) {
    case OPTIC_REDUCE_MAX: return -INFINITY;
    case OPTIC_REDUCE_MIN: return INFINITY;
    case OPTIC_REDUCE_PROD: return 1.0f;
    default: return 0.0f;
  }
}

static void build_tables(void) {
  optic_reduce_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_R(op, isa, fn)                                    \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) {                \
    scalar->r[OPTIC_REDUCE_##op] = fn;                      \
    scalar->isa_of_r[OPTIC_REDUCE_##op] = OPTIC_ISA_SCALAR; \
  }
#define X_RD(op, isa, fn)                                    \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) {                 \
    scalar->rd[OPTIC_REDUCE_##op] = fn;                      \
    scalar->isa_of_rd[OPTIC_REDUCE_##op] = OPTIC_ISA_SCALAR; \
  }
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
  scalar->cols = optic_f32_reduce_cols__scalar;
  scalar->isa_of_cols = OPTIC_ISA_SCALAR;
  scalar->cols_wide = optic_f32_reduce_cols_wide__scalar;
  scalar->isa_of_cols_wide = OPTIC_ISA_SCALAR;
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#if OPTIC_ARCH_X86_64
  tables[OPTIC_ISA_AVX2].cols = optic_f32_reduce_cols__avx2;
  tables[OPTIC_ISA_AVX2].isa_of_cols = OPTIC_ISA_AVX2;
  tables[OPTIC_ISA_AVX512].cols = optic_f32_reduce_cols__avx512;
  tables[OPTIC_ISA_AVX512].isa_of_cols = OPTIC_ISA_AVX512;
  /* streaming columns is memory-bound: AVX-512 machines take the AVX2 kernel */
  tables[OPTIC_ISA_AVX2].cols_wide = tables[OPTIC_ISA_AVX512].cols_wide = optic_f32_reduce_cols_wide__avx2;
  tables[OPTIC_ISA_AVX2].isa_of_cols_wide = tables[OPTIC_ISA_AVX512].isa_of_cols_wide = OPTIC_ISA_AVX2;
#endif
#define X_R(op, isa, fn)                                                   \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                               \
    tables[OPTIC_ISA_##isa].r[OPTIC_REDUCE_##op] = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_r[OPTIC_REDUCE_##op] = OPTIC_ISA_##isa; \
  }
#define X_RD(op, isa, fn)                                                   \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) {                                \
    tables[OPTIC_ISA_##isa].rd[OPTIC_REDUCE_##op] = fn;                     \
    tables[OPTIC_ISA_##isa].isa_of_rd[OPTIC_REDUCE_##op] = OPTIC_ISA_##isa; \
  }
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
}

const optic_reduce_kernels *optic_reduce_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_reduce_kernels *optic_reduce_kernels_get(void) { return optic_reduce_kernels_for(optic_isa_selected()); }
