/* Internal: f32 comparison kernels writing one predicate byte (0 or 1) per
 * element: y[i] = a[i] op b[i] (vv) and y[i] = a[i] op s (vs), op one of XLA's
 * float compare directions EQ NE LT LE GT GE (default, non-total order).
 * Contract in kernels/common.h, except in place: the output is uint8_t and the
 * inputs float, so y must not overlap a or b at all.
 * Semantics: IEEE comparisons, i.e. what C's == != < <= > >= give: any
 * comparison involving a NaN is 0 except NE, which is 1; -0 == +0; subnormals
 * compare by value (kernels assume the default FP environment, no FTZ/DAZ).
 * s op a is a op' s with the direction mirrored (LT<->GT, LE<->GE), bitwise. */
#ifndef OPTIC_KERNELS_COMPARE_H
#define OPTIC_KERNELS_COMPARE_H

#include "kernels/common.h"

/* X(OP, name): name is XLA's comparison_direction. */
#define OPTIC_COMPARE_OP_LIST(X) \
  X(EQ, "EQ")                    \
  X(NE, "NE")                    \
  X(LT, "LT")                    \
  X(LE, "LE")                    \
  X(GT, "GT")                    \
  X(GE, "GE")

typedef enum optic_compare_op {
#define OPTIC_COMPARE_OP_ENUM_(op, name) OPTIC_COMPARE_##op,
  OPTIC_COMPARE_OP_LIST(OPTIC_COMPARE_OP_ENUM_)
#undef OPTIC_COMPARE_OP_ENUM_
      OPTIC_COMPARE_OP_COUNT
} optic_compare_op;

typedef void (*optic_f32_vcompare_fn)(size_t n, const float *a, const float *b, uint8_t *y);
typedef void (*optic_f32_vcomparec_fn)(size_t n, const float *a, float s, uint8_t *y);

typedef struct optic_compare_kernels {
  optic_f32_vcompare_fn vv[OPTIC_COMPARE_OP_COUNT];
  optic_f32_vcomparec_fn vs[OPTIC_COMPARE_OP_COUNT];
  optic_isa isa_of_vv[OPTIC_COMPARE_OP_COUNT]; /* which ISA each entry really is */
  optic_isa isa_of_vs[OPTIC_COMPARE_OP_COUNT];
} optic_compare_kernels;

/* XLA comparison_direction of an op ("LT"). */
const char *optic_compare_op_name(optic_compare_op op);
/* The direction d' with (s d a) == (a d' s) for all floats: LT<->GT, LE<->GE. */
optic_compare_op optic_compare_op_mirror(optic_compare_op op);

/* The table for isa (scalar kernels overridden by isa's own); NULL if isa's
 * kernels are not built into this binary. Built once, thread-safe, static. */
const optic_compare_kernels *optic_compare_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_compare_kernels *optic_compare_kernels_get(void);

/* Naive reference (test oracle, constant folding). */
void optic_ref_f32_compare(optic_compare_op op, size_t n, const float *a, const float *b, uint8_t *y);
void optic_ref_f32_comparec(optic_compare_op op, size_t n, const float *a, float s, uint8_t *y);

/* Every kernel in kernels/list/compare.inc is declared here. */
#define X_VV(op, isa, fn) void fn(size_t n, const float *a, const float *b, uint8_t *y);
#define X_VS(op, isa, fn) void fn(size_t n, const float *a, float s, uint8_t *y);
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS

#endif
