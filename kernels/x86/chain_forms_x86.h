/* Internal, x86 chain kernels only (kernels/x86/avx2/chain_avx2.c,
 * kernels/x86/avx512/chain_avx512.c): a strip's step dispatch, one case per
 * step op and operand form (kernels/chain.h), applied to the strip's eight
 * vectors v[0..7]. The kernel switches on OPTIC_CHAIN_FORM(st) and expands
 * OPTIC_CHAIN_CASES with its own load of the array operand's vector j
 * (VEC_O), the broadcast scalar (SCA_O) and its six op functions. */
#ifndef OPTIC_KERNELS_X86_CHAIN_FORMS_X86_H
#define OPTIC_KERNELS_X86_CHAIN_FORMS_X86_H

#include "kernels/chain.h"

#define OPTIC_CHAIN_FORM(st) (4 * (int)(st)->op + (int)((st)->flags & 3u))

#define OPTIC_CHAIN_ACC_OP(OP, EXPR_O)                 \
  for (int j = 0; j < 8; j++) v[j] = OP(v[j], EXPR_O); \
  break
#define OPTIC_CHAIN_REV_OP(OP, EXPR_O)                 \
  for (int j = 0; j < 8; j++) v[j] = OP(EXPR_O, v[j]); \
  break
#define OPTIC_CHAIN_OP_FORMS(K, OP, VEC_O, SCA_O)                                           \
  case 4 * (K) + OPTIC_CHAIN_ACC_FIRST: OPTIC_CHAIN_ACC_OP(OP, VEC_O);                      \
  case 4 * (K) + OPTIC_CHAIN_ACC_FIRST + OPTIC_CHAIN_SCALAR: OPTIC_CHAIN_ACC_OP(OP, SCA_O); \
  case 4 * (K): OPTIC_CHAIN_REV_OP(OP, VEC_O);                                              \
  case 4 * (K) + OPTIC_CHAIN_SCALAR:                                                        \
    OPTIC_CHAIN_REV_OP(OP, SCA_O);
#define OPTIC_CHAIN_CASES(VEC_O, SCA_O, ADD, SUB, MUL, DIV, MAX, MIN) \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_ADD, ADD, VEC_O, SCA_O)           \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_SUB, SUB, VEC_O, SCA_O)           \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_MUL, MUL, VEC_O, SCA_O)           \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_DIV, DIV, VEC_O, SCA_O)           \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_MAX, MAX, VEC_O, SCA_O)           \
  OPTIC_CHAIN_OP_FORMS(OPTIC_BINARY_MIN, MIN, VEC_O, SCA_O)

#endif
