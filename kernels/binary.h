/* Internal: binary f32 kernels, elementwise y[i] = a[i] op b[i] (vv) and
 * y[i] = a[i] op s (vs). Contract in kernels/common.h; in place (y == a or
 * y == b) is legal.
 * Semantics (XLA's): add/sub/mul/div are IEEE single precision, exactly
 * rounded (results are bitwise those of the naive loop); max/min propagate NaN
 * (if a is NaN the result is a, else if b is NaN it is b) and otherwise return
 * a only when it is strictly greater (max) or smaller (min), so max(-0, +0) is
 * b; pow follows C powf, special cases included (the vector kernels evaluate
 * log2 and exp2 in double: within 1 ULP measured, tests hold every pow kernel
 * to 2 ULP; docs/kernels-unary.md). */
#ifndef OPTIC_KERNELS_BINARY_H
#define OPTIC_KERNELS_BINARY_H

#include "kernels/common.h"

/* X(OP, name) */
#define OPTIC_BINARY_OP_LIST(X) \
  X(ADD, "add")                 \
  X(SUB, "subtract")            \
  X(MUL, "multiply")            \
  X(DIV, "divide")              \
  X(MAX, "maximum")             \
  X(MIN, "minimum")             \
  X(POW, "power")

typedef enum optic_binary_op {
#define OPTIC_BINARY_OP_ENUM_(op, name) OPTIC_BINARY_##op,
  OPTIC_BINARY_OP_LIST(OPTIC_BINARY_OP_ENUM_)
#undef OPTIC_BINARY_OP_ENUM_
      OPTIC_BINARY_OP_COUNT
} optic_binary_op;

typedef void (*optic_f32_vbinary_fn)(size_t n, const float *a, const float *b, float *y);
typedef void (*optic_f32_vbinaryc_fn)(size_t n, const float *a, float s, float *y);

typedef struct optic_binary_kernels {
  optic_f32_vbinary_fn vv[OPTIC_BINARY_OP_COUNT];
  optic_f32_vbinaryc_fn vs[OPTIC_BINARY_OP_COUNT];
  optic_isa isa_of_vv[OPTIC_BINARY_OP_COUNT]; /* which ISA each entry really is */
  optic_isa isa_of_vs[OPTIC_BINARY_OP_COUNT];
} optic_binary_kernels;

/* XLA opcode name of an op ("add"). */
const char *optic_binary_op_name(optic_binary_op op);

/* The table for isa: the scalar kernels, overridden by isa's own where the list
 * has them (BLIS's "start from the reference" pattern). NULL if isa's kernels
 * are not built into this binary. Built once, thread-safe, static. */
const optic_binary_kernels *optic_binary_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_binary_kernels *optic_binary_kernels_get(void);

/* Naive reference (test oracle, constant folding): one plain loop per op. */
void optic_ref_f32_binary(optic_binary_op op, size_t n, const float *a, const float *b, float *y);
void optic_ref_f32_binaryc(optic_binary_op op, size_t n, const float *a, float s, float *y);

/* Every kernel in kernels/list/binary.inc is declared here. */
#define X_VV(op, isa, fn) void fn(size_t n, const float *a, const float *b, float *y);
#define X_VS(op, isa, fn) void fn(size_t n, const float *a, float s, float *y);
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS

#endif
