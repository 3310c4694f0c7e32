/* optic autodiff: reverse-mode differentiation of a computation, JAX's
 * value_and_grad shape. From a computation whose chosen output is a scalar
 * (or whose cotangent the caller supplies as a "seed"), it builds a new
 * computation in the same module that returns the output and its gradients
 * with respect to chosen parameters, as ordinary instructions: the compiler
 * then optimizes, fuses, schedules and costs them like any other.
 * Rules per opcode and their limits: docs/autodiff.md.
 *
 * Contents, in order:
 *   1. options (optic_grad_options) and their defaults
 *   2. optic_autodiff_value_and_grad
 *
 * Thread safety: it mutates the module (adds computations); like every
 * other builder it must not run concurrently with any other use of it. */
#ifndef OPTIC_AUTODIFF_H
#define OPTIC_AUTODIFF_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Options of optic_autodiff_value_and_grad; start from
 * optic_grad_options_default(). size lets the struct grow: fields beyond
 * a caller's size take their defaults. */
typedef struct optic_grad_options {
  size_t size;          /* sizeof(optic_grad_options) */
  optic_node_id output; /* the value differentiated: an array instruction of the
                           computation; OPTIC_NO_NODE (default): its root */
  bool seeded;          /* false (default): output must be a scalar, its seed is 1.
                           true: the new computation takes one more parameter, numbered
                           after the existing ones, of the output's type: the cotangent
                           (the gradient is then the vector-Jacobian product) */
  const char *name;     /* the new computation's name (copied); NULL (default):
                           "<computation>.value_and_grad" (".1", ".2", ... if taken) */
  /* Instructions of the computation whose values count as constants (JAX's
   * lax.stop_gradient): no gradient flows through them to their operands.
   * E.g. the row maximum a stable softmax subtracts, whose exact gradient
   * contribution is zero: stopping it saves the ops that compute that zero.
   * n_stop_gradient entries (0, the default: none); ids must be distinct
   * instructions of the computation. */
  const optic_node_id *stop_gradient;
  int32_t n_stop_gradient;
} optic_grad_options;

OPTIC_API optic_grad_options optic_grad_options_default(void);

/* Builds computation *out in comp's module: it has comp's parameters (same
 * numbers and types; plus the seed when opts->seeded) and returns the tuple
 * (output, d output / d parameter wrt[0], ..., d / d wrt[n_wrt - 1]), each
 * gradient of its parameter's type. Parameter numbers in wrt must exist,
 * be floating-point arrays (f16, bf16, f32, f64) and be distinct; n_wrt may
 * be 0 (then the tuple holds the output alone). Only what the output
 * depends on is copied; call and fusion instructions on the path are
 * inlined. A parameter the output does not depend on (or only through
 * non-differentiable ops: compare, integer ops, iota, floor, sign, ...)
 * gets zeros. comp and the module's other computations are not changed;
 * the entry stays as it was. opts may be NULL (the defaults).
 * Errors (nothing is added then): INVALID_ARGUMENT (bad computation, no
 * root, bad output, bad or repeated wrt, a non-scalar output without a
 * seed, a tuple-typed output), UNSUPPORTED (an instruction on a
 * differentiable path that optic cannot differentiate: the message names
 * it, its opcode and why), OVERFLOW, OUT_OF_MEMORY. */
OPTIC_API optic_status optic_autodiff_value_and_grad(optic_module_t *m, optic_comp_id comp, const int32_t *wrt,
                                                     int32_t n_wrt, const optic_grad_options *opts, optic_comp_id *out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_AUTODIFF_H */
