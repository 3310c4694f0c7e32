/* Internal to graph/autodiff*.c: the state of one differentiation and the
 * small builders the per-opcode rules share. The forward instructions are
 * first copied into the new computation (calls and fusions inlined); the
 * rules then read the copies and add the backward instructions next to
 * them through the public builders. */
#ifndef OPTIC_GRAPH_AUTODIFF_INTERNAL_H
#define OPTIC_GRAPH_AUTODIFF_INTERNAL_H

#include <optic/attrs.h>
#include <optic/autodiff.h>

#include "graph/internal.h"

typedef struct ad_ctx {
  optic_module_t *m;
  optic_comp_id dst;                          /* the computation being built */
  int32_t n_fwd;                              /* ids below this may be forward copies */
  optic_node_id *adj;                         /* per id < n_fwd: its adjoint (cotangent) so far, or OPTIC_NO_NODE */
  bool *needs;                                /* per id < n_fwd: depends on a parameter differentiated */
  optic_comp_id add_comp[OPTIC_DTYPE_COUNT_]; /* scalar add computations, made on first use */
} ad_ctx;

#define AD_TRY(call)                       \
  do {                                     \
    optic_status ad_st_ = (call);          \
    if (ad_st_ != OPTIC_OK) return ad_st_; \
  } while (0)

/* The gradient contribution of y's adjoint g to each operand: gx[k] for
 * operand k, OPTIC_NO_NODE for none (a zero). The rules only build what an
 * operand that needs a gradient takes (ad_wants). */
typedef optic_status (*ad_rule_fn)(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);

/* The rule of y's opcode, or NULL with *why set when optic cannot
 * differentiate it (graph/autodiff.c). */
ad_rule_fn ad_rule_for(const ad_ctx *c, optic_node_id y, const char **why);

/* The rule of a tuple-valued y: gy[i] is the adjoint of element i
 * (OPTIC_NO_NODE: none flowed), gx as for ad_rule_fn. */
typedef optic_status (*ad_tuple_rule_fn)(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx);
ad_tuple_rule_fn ad_tuple_rule_for(const ad_ctx *c, optic_node_id y, const char **why);

/* Sort, topk and conditional (graph/autodiff_sort.c, _cond.c). A sort on
 * a differentiable path is copied with one more operand, an s32 iota
 * along its dimension, unless it has one (JAX's argsort): the sorted iota
 * is the permutation its rule sends the adjoints back through. */
bool ad_sort_needs_iota(const optic_module_t *m, optic_node_id sort, const optic_node_id *operands);
optic_status ad_rule_sort(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx);
optic_status ad_rule_topk(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx);
optic_status ad_rule_conditional(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_conditional_tuple(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx);
/* In dst, whose first instruction is its tuple parameter q = (x, ct):
 * the vector-Jacobian product of computation src (one parameter) at x
 * with cotangent ct of its root: *out, of x's type (graph/autodiff.c). */
optic_status ad_vjp_into(optic_module_t *m, optic_comp_id dst, optic_comp_id src, optic_node_id q, optic_node_id *out);

/* Rules by family (graph/autodiff_ew.c, _shape.c, _contract.c, _conv.c, _window.c, _gather.c). */
optic_status ad_rule_unary(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_binary(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_select(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_clamp(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_convert(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_identity(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_broadcast(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_reshape(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_transpose(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_pad(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_concatenate(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_reverse(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_dynamic_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_dynamic_update_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_gather(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_dot(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_convolution(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_reduce(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_reduce_window(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
/* Tuple-valued: gathers its elements' adjoints from its get-tuple-element
 * readers itself; *why is set when it cannot differentiate what flowed. */
optic_status ad_rule_batch_norm_training(ad_ctx *c, optic_node_id y, optic_node_id *gx, const char **why);
optic_status ad_rule_batch_norm_inference(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
/* Collectives (graph/autodiff_collective.c): why y has no rule, or NULL. */
const char *ad_collective_unsupported(const ad_ctx *c, optic_node_id y);
optic_status ad_rule_collective(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
optic_status ad_rule_all_reduce_tuple(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx);
/* map (graph/autodiff_map.c): why y has no rule, or NULL; the rule. */
const char *ad_map_unsupported(const optic_module_t *m, optic_node_id y);
optic_status ad_rule_map(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);

/* The part of a pad's result gradient g that its operand x receives (cfg:
 * the pad's config): negative edges undone with zeros, then a
 * strided slice (graph/autodiff_shape.c). */
optic_status ad_pad_operand_grad(ad_ctx *c, optic_node_id x, optic_node_id g, const optic_pad_dim *cfg,
                                 optic_node_id *out);
const char *ad_reduce_window_unsupported(const optic_module_t *m, optic_node_id y);

/* Loops unrolled when differentiated: at most this many iterations. */
#define AD_MAX_UNROLL 1024
/* graph_while_trip_count (graph/internal.h) gives the iterations. */

/* The scalar combiner a reduce or reduce-window applies, when it is one
 * binary op of its two parameters (add, multiply, maximum, minimum), else
 * OPTIC_OP_PARAMETER. */
optic_opcode ad_combiner_op(const optic_module_t *m, optic_comp_id callee);
/* Why optic cannot differentiate the convolution / gather y, or NULL. */
const char *ad_convolution_unsupported(const optic_module_t *m, optic_node_id y);
const char *ad_gather_unsupported(const optic_module_t *m, optic_node_id y);
const char *ad_scatter_unsupported(const optic_module_t *m, optic_node_id y);
optic_status ad_rule_scatter(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);
/* Scatter helpers (graph/autodiff_gather.c): the gather reading back the
 * operand positions scatter s (operand x, updates u) writes, and the pred
 * per update element: its window lies inside the operand (scatter writes
 * it). */
optic_gather_dims ad_gather_of_scatter(const ad_ctx *c, const optic_scatter_dims *s, optic_node_id x, optic_node_id u);
optic_status ad_scatter_in_bounds(ad_ctx *c, const optic_gather_dims *d, optic_node_id x, optic_node_id idx,
                                  optic_node_id u, const optic_scatter_dims *s, optic_node_id *out);
/* Scatter y's combiner: add, multiply, maximum, minimum, OPTIC_OP_SCATTER
 * for replace (it returns the update), else OPTIC_OP_PARAMETER; and the
 * rules of the non-add ones (graph/autodiff_scatter.c). */
optic_opcode ad_scatter_combiner(const optic_module_t *m, optic_node_id y);
optic_status ad_rule_scatter_other(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx);

/* ---- shared builders (graph/autodiff_build.c); all add to c->dst.
 * A builder may move the module's instruction records: a type or shape
 * pointer from ad_type / optic_node_type is valid only until the next
 * builder call, so code that builds several instructions copies them. */
bool ad_wants(const ad_ctx *c, optic_node_id x);
/* y's attributes through the public view (include/optic/attrs.h). */
void ad_attrs(const optic_module_t *m, optic_node_id y, optic_node_attrs_t *out);
const optic_type *ad_type(const ad_ctx *c, optic_node_id x);
/* A constant v of dtype dt broadcast to shape (NULL: a scalar). */
optic_status ad_const(ad_ctx *c, double v, optic_dtype dt, const optic_shape *shape, optic_node_id *out);
optic_status ad_zeros_like(ad_ctx *c, optic_node_id x, optic_node_id *out);
optic_status ad_un(ad_ctx *c, optic_opcode op, optic_node_id x, optic_node_id *out);
optic_status ad_bin(ad_ctx *c, optic_opcode op, optic_node_id a, optic_node_id b, optic_node_id *out);
/* x * v for a constant v. */
optic_status ad_scale(ad_ctx *c, optic_node_id x, double v, optic_node_id *out);
optic_status ad_cmp(ad_ctx *c, optic_compare_dir dir, optic_node_id a, optic_node_id b, optic_node_id *out);
/* select(p, g, 0). */
optic_status ad_mask(ad_ctx *c, optic_node_id p, optic_node_id g, optic_node_id *out);
/* Sum of x over dims (any order). */
optic_status ad_sum(ad_ctx *c, optic_node_id x, const int64_t *dims, int32_t n, optic_node_id *out);
/* Sum of x down to a scalar. */
optic_status ad_sum_all(ad_ctx *c, optic_node_id x, optic_node_id *out);
/* x (of target's shape minus the broadcast dims) broadcast back: operand
 * dim i to dims[i] of shape. */
optic_status ad_bcast(ad_ctx *c, optic_node_id x, const optic_shape *shape, const int64_t *dims, int32_t n,
                      optic_node_id *out);
/* A scalar broadcast to shape. */
optic_status ad_bcast_scalar(ad_ctx *c, optic_node_id x, const optic_shape *shape, optic_node_id *out);
optic_status ad_transpose(ad_ctx *c, optic_node_id x, const int64_t *perm, optic_node_id *out);
optic_comp_id ad_add_computation(ad_ctx *c, optic_dtype dt, optic_status *st);
/* A new computation named base, or base.1, base.2, ... when taken. */
optic_status ad_new_comp(optic_module_t *m, const char *base, optic_comp_id *out);

/* ---- tuples (graph/autodiff_tuple.c). Zeros (ad_zeros_like) of a tuple
 * are a tuple of zeros; integer and pred elements are zeros too. */
/* a + b, elementwise through tuples. */
optic_status ad_add_any(ad_ctx *c, optic_node_id a, optic_node_id b, optic_node_id *out);
/* Element i of tuple-valued t: the operand of a tuple built here, else a
 * get-tuple-element. */
optic_status ad_element(ad_ctx *c, optic_node_id t, int32_t i, optic_node_id *out);
/* gy[i]: the adjoint of element i of tuple-valued t (the sum over its
 * get-tuple-element readers and element i of t's own adjoint), or
 * OPTIC_NO_NODE; *any: some element has one. */
optic_status ad_tuple_adjoints(ad_ctx *c, optic_node_id t, optic_node_id *gy, bool *any);
/* The tuple of gy, zeros of t's element types where OPTIC_NO_NODE. */
optic_status ad_tuple_fill(ad_ctx *c, optic_node_id t, const optic_node_id *gy, optic_node_id *out);
/* x's whole adjoint (zeros where none flowed), of x's type; after the sweep. */
optic_status ad_full_cotangent(ad_ctx *c, optic_node_id x, optic_node_id *out);
/* Zeros of type t (copied by value: its element pointers are stable) in
 * computation comp. */
optic_status ad_zeros_of_type(optic_module_t *m, optic_comp_id comp, optic_type t, optic_node_id *out);

#endif
