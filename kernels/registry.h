/* Internal: one flat registry of every kernel built into this binary, made
 * from the families' X-macro lists, so tools can say which kernel each op
 * dispatches to (optic info) without knowing each family's table type. */
#ifndef OPTIC_KERNELS_REGISTRY_H
#define OPTIC_KERNELS_REGISTRY_H

#include "kernels/common.h"

typedef struct optic_kernel_desc {
  const char *family;  /* "binary" */
  const char *op;      /* "ADD" */
  const char *variant; /* "vv", "vs", ... ("" if the family has one form) */
  optic_isa isa;
  const char *function; /* "optic_f32_vadd__avx512" */
} optic_kernel_desc;

/* All entries, in list order; *count receives their number. Static. */
const optic_kernel_desc *optic_kernel_registry(size_t *count);

/* The entry dispatch uses for (family, op, variant) when isa is selected: the
 * isa's own entry if the list has one, else the scalar one. NULL if unknown. */
const optic_kernel_desc *optic_kernel_chosen(const char *family, const char *op, const char *variant, optic_isa isa);

#endif
