/* The kernel registry: every family's list included once more, each entry
 * becoming a descriptor. Adding a family here is one #include block. */
#include <string.h>

#include "kernels/registry.h"

static const optic_kernel_desc registry[] = {
#define X_VV(op, isa, fn) {"binary", #op, "vv", OPTIC_ISA_##isa, #fn},
#define X_VS(op, isa, fn) {"binary", #op, "vs", OPTIC_ISA_##isa, #fn},
#include "kernels/list/binary.inc"
#undef X_VV
#undef X_VS
#define X_VV(op, isa, fn) {"compare", #op, "vv", OPTIC_ISA_##isa, #fn},
#define X_VS(op, isa, fn) {"compare", #op, "vs", OPTIC_ISA_##isa, #fn},
#include "kernels/list/compare.inc"
#undef X_VV
#undef X_VS
#define X_VPRED(op, isa, fn) {"select", #op, "vpred", OPTIC_ISA_##isa, #fn},
#define X_SPRED(op, isa, fn) {"select", #op, "spred", OPTIC_ISA_##isa, #fn},
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED
#define X_VV(op, isa, fn) {"clamp", #op, "vv", OPTIC_ISA_##isa, #fn},
#define X_VS(op, isa, fn) {"clamp", #op, "vs", OPTIC_ISA_##isa, #fn},
#include "kernels/list/clamp.inc"
#undef X_VV
#undef X_VS
#define X_CHAIN(op, isa, fn) {"chain", #op, "", OPTIC_ISA_##isa, #fn},
#include "kernels/list/chain.inc"
#undef X_CHAIN
#define X_CVT(op, isa, fn) {"convert", #op, "", OPTIC_ISA_##isa, #fn},
#include "kernels/list/convert.inc"
#undef X_CVT
#define X_ADAGRAD(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_ADAM(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_LAMB_APPLY(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_LAMB_MOMENTS(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_LION(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_RMSPROP(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#define X_SGD(op, isa, fn) {"optim", #op, "", OPTIC_ISA_##isa, #fn},
#include "kernels/list/optim.inc"
#undef X_ADAGRAD
#undef X_ADAM
#undef X_LAMB_APPLY
#undef X_LAMB_MOMENTS
#undef X_LION
#undef X_RMSPROP
#undef X_SGD
#define X(op, isa, fn) {"unary", #op, "", OPTIC_ISA_##isa, #fn},
#include "kernels/list/unary.inc"
#undef X
#define X_COPY(op, isa, fn) {"layout", #op, "copy", OPTIC_ISA_##isa, #fn},
#define X_COPY2D(op, isa, fn) {"layout", #op, "copy2d", OPTIC_ISA_##isa, #fn},
#define X_FILL(op, isa, fn) {"layout", #op, "fill", OPTIC_ISA_##isa, #fn},
#define X_TRANSPOSE(op, isa, fn) {"layout", #op, "transpose", OPTIC_ISA_##isa, #fn},
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_FILL
#undef X_TRANSPOSE
#define X_R(op, isa, fn) {"reduce", #op, "contiguous", OPTIC_ISA_##isa, #fn},
#define X_RD(op, isa, fn) {"reduce", #op, "axis", OPTIC_ISA_##isa, #fn},
#include "kernels/list/reduce.inc"
#undef X_R
#undef X_RD
};

const optic_kernel_desc *optic_kernel_registry(size_t *count) {
  *count = sizeof registry / sizeof registry[0];
  return registry;
}

const optic_kernel_desc *optic_kernel_chosen(const char *family, const char *op, const char *variant, optic_isa isa) {
  const optic_kernel_desc *scalar = NULL;
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
    const optic_kernel_desc *d = &registry[i];
    if (strcmp(d->family, family) != 0 || strcmp(d->op, op) != 0 || strcmp(d->variant, variant) != 0) continue;
    if (d->isa == isa) return d;
    if (d->isa == OPTIC_ISA_SCALAR) scalar = d;
  }
  return scalar;
}
