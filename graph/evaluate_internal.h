/* Internal: the reference evaluator's shared pieces. Literal storage, the
 * evaluation context (per-computation plans, recursion guard, options), the
 * raw elementwise kernels by dtype (shared by instructions and the scalar
 * combiner fast path) and one entry point per op family. Only graph/evaluate*.c
 * include this; nothing here ever edits the module. */
#ifndef OPTIC_GRAPH_EVALUATE_INTERNAL_H
#define OPTIC_GRAPH_EVALUATE_INTERNAL_H

#include "graph/internal.h"

/* An array literal keeps small data (scalars, the combiners' arguments)
 * inline, so evaluating a combiner per element costs one allocation per
 * value, not two. */
#define LIT_INLINE_BYTES 16

struct optic_literal {
  optic_type type; /* tuple element types deep-owned */
  void *data;      /* arrays: `bytes` bytes (inline.b when they fit); NULL when empty or a tuple */
  size_t bytes;
  struct optic_literal **elements; /* tuples: type.tuple_size owned literals */
  union {
    double d[LIT_INLINE_BYTES / sizeof(double)];
    unsigned char b[LIT_INLINE_BYTES];
  } inline_data;
};

/* A zero-filled literal of type t (deep). */
optic_status lit_new(const optic_type *t, optic_literal_t **out);
optic_status lit_clone(const optic_literal_t *src, optic_literal_t **out);
/* A tuple literal made of deep copies of els. */
optic_status lit_tuple_of(const optic_literal_t *const *els, int32_t n, optic_literal_t **out);
void lit_free(optic_literal_t *lit);
/* Elements of an array literal. */
size_t lit_elements(const optic_literal_t *lit);

/* How one computation runs: the root's dependencies in an order where
 * operands come first (iterative DFS post-order from the root, so removed or
 * dead instructions never run), and for each position the last position that
 * reads it, so intermediates are freed as soon as they are dead. */
typedef struct eval_plan {
  bool built;
  int32_t n;
  optic_node_id *order;
  int32_t *last_use; /* n means never freed in the loop (the root) */
  int32_t root_slot; /* the root's position in order (instructions with effects and no path to the root follow it) */
  /* Fast path for scalar combiners: the root is a binary elementwise op
   * whose operands are parameters 0 and 1 (fast_swapped: in the order 1, 0). */
  bool fast;
  optic_opcode fast_op;
  bool fast_swapped;
} eval_plan;

typedef struct eval_ctx {
  const optic_module_t *m;
  optic_evaluate_options opts;
  int32_t *slot_of; /* by node id: position in its computation's plan (-1: not planned) */
  eval_plan *plans; /* by computation id */
  bool *active;     /* by computation id: on the evaluation stack (recursion guard) */
  bool named;       /* the error message already names the failing instruction */
} eval_ctx;

/* Runs computation c on args (types already checked by the caller or the
 * builders); *out gets an owned root value. */
optic_status eval_computation(eval_ctx *ctx, optic_comp_id c, const optic_literal_t *const *args, int32_t nargs,
                              optic_literal_t **out);
/* The plan of c (built on first use). */
optic_status eval_get_plan(eval_ctx *ctx, optic_comp_id c, const eval_plan **out);

/* Raw elementwise kernels on n elements of dtype dt (y may equal a; y's dtype
 * is dt, or pred for compare). UNSUPPORTED names the op and dtype. */
optic_status eval_unary_raw(optic_opcode op, optic_dtype dt, size_t n, const void *x, void *y);
optic_status eval_binary_raw(optic_opcode op, optic_dtype dt, size_t n, const void *a, const void *b, void *y);
bool eval_is_binary(optic_opcode op);

/* Op families. ops holds the instruction's operand values in order; *out
 * gets a new owned literal of the instruction's type. */
optic_status eval_elementwise(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                              optic_literal_t **out);
optic_status eval_layout(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                         optic_literal_t **out);
optic_status eval_reduce(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                         optic_literal_t **out);
optic_status eval_reduce_window(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                                optic_literal_t **out);
optic_status eval_map(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out);
optic_status eval_control(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out);
optic_status eval_convolution(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                              optic_literal_t **out);
/* dynamic-slice, dynamic-update-slice, opt-barrier, gather (graph/evaluate_dynamic.c). */
optic_status eval_dynamic(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out);
/* scatter and sort (graph/evaluate_reduce.c: they apply a computation to scalars). */
optic_status eval_sort(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out);
optic_status eval_scatter(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out);
optic_status eval_dot(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out);

/* Advances a row-major multi-index over dims (last fastest); false after the
 * last index (and at once when rank is 0). */
static inline bool eval_next_index(int32_t rank, const int64_t *dims, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

#endif
