/* Internal: chained f32 kernels, y[i] = step_k(... step_1(step_0(a[i]))),
 * each step one op of the binary family (kernels/binary.h: add, subtract,
 * multiply, divide, maximum, minimum) between the running value v and
 * another operand o (an array element b[i] or a scalar s), in a stated order:
 * v = v op o (OPTIC_CHAIN_ACC_FIRST) or v = o op v. Every step is rounded
 * as the binary kernel rounds it (no fused multiply-add is formed), so the
 * result is bitwise that of calling the binary kernels one after another
 * through temporaries (the scalar kernel: up to NaN payloads, which follow
 * the compiler's operand order) -- with one pass over memory instead of one per step:
 * the running value stays in registers. Contract in kernels/common.h; y may
 * be a or any step's b (in place, exactly). Never allocates.
 *
 * stream: y is written with streaming stores where the ISA has them (the
 * caller decided so by kernels/stream.h's rule for its whole footprint); the
 * kernel does not fence: the caller calls optic_stream_fence before the
 * results are published. Scalar kernels ignore it. */
#ifndef OPTIC_KERNELS_CHAIN_H
#define OPTIC_KERNELS_CHAIN_H

#include <stdbool.h>

#include "kernels/binary.h"

/* At most this many steps per call. */
#define OPTIC_CHAIN_MAX_STEPS 8

enum {
  OPTIC_CHAIN_ACC_FIRST = 1, /* v = v op o (else v = o op v) */
  OPTIC_CHAIN_SCALAR = 2     /* o is the scalar s (else the array b) */
};

typedef struct optic_f32_chain_step {
  optic_binary_op op; /* ADD, SUB, MUL, DIV, MAX or MIN */
  uint32_t flags;     /* OPTIC_CHAIN_* */
  const float *b;     /* the array operand (n elements), unless OPTIC_CHAIN_SCALAR */
  float s;            /* the scalar operand, with OPTIC_CHAIN_SCALAR */
} optic_f32_chain_step;

typedef void (*optic_f32_chain_fn)(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps,
                                   float *y, bool stream);

typedef struct optic_chain_kernels {
  optic_f32_chain_fn chain;
  optic_isa isa_of_chain; /* which ISA the entry really is */
} optic_chain_kernels;

/* Whether op may be a chain step. */
static inline bool optic_chain_op_ok(optic_binary_op op) {
  return op == OPTIC_BINARY_ADD || op == OPTIC_BINARY_SUB || op == OPTIC_BINARY_MUL || op == OPTIC_BINARY_DIV ||
         op == OPTIC_BINARY_MAX || op == OPTIC_BINARY_MIN;
}

/* The table for isa (the scalar kernel overridden by isa's own); NULL if
 * isa's kernels are not built into this binary. Built once, thread-safe. */
const optic_chain_kernels *optic_chain_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_chain_kernels *optic_chain_kernels_get(void);

/* Naive reference (test oracle): element by element, step by step. */
void optic_ref_f32_chain(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y);

/* Every kernel in kernels/list/chain.inc is declared here. */
#define X_CHAIN(op, isa, fn) \
  void fn(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y, bool stream);
#include "kernels/list/chain.inc"
#undef X_CHAIN

#endif
