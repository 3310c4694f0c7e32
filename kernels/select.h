/* Internal: f32 select kernels, XLA's select(pred, on_true, on_false):
 * y[i] = p[i] ? a[i] : b[i] (vpred, a predicate per element) and
 * y[i] = p ? a[i] : b[i] (spred, XLA's select with a scalar predicate).
 * Contract in kernels/common.h; y may be a or b (in place), never p.
 * Predicate bytes: XLA's pred is 0 or 1; every nonzero byte counts as true.
 * Values are moved, never computed: each y[i] has exactly the bits of a[i] or
 * b[i] (NaN payloads and signed zeros kept). */
#ifndef OPTIC_KERNELS_SELECT_H
#define OPTIC_KERNELS_SELECT_H

#include "kernels/common.h"

typedef void (*optic_f32_vselect_fn)(size_t n, const uint8_t *p, const float *a, const float *b, float *y);
typedef void (*optic_f32_vselect_spred_fn)(size_t n, uint8_t p, const float *a, const float *b, float *y);

typedef struct optic_select_kernels {
  optic_f32_vselect_fn vpred;
  optic_f32_vselect_spred_fn spred;
  optic_isa isa_of_vpred; /* which ISA each entry really is */
  optic_isa isa_of_spred;
} optic_select_kernels;

/* The table for isa (scalar kernels overridden by isa's own); NULL if isa's
 * kernels are not built into this binary. Built once, thread-safe, static. */
const optic_select_kernels *optic_select_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_select_kernels *optic_select_kernels_get(void);

/* Naive reference (test oracle, constant folding). */
void optic_ref_f32_select(size_t n, const uint8_t *p, const float *a, const float *b, float *y);
void optic_ref_f32_select_spred(size_t n, uint8_t p, const float *a, const float *b, float *y);

/* Every kernel in kernels/list/select.inc is declared here. */
#define X_VPRED(op, isa, fn) void fn(size_t n, const uint8_t *p, const float *a, const float *b, float *y);
#define X_SPRED(op, isa, fn) void fn(size_t n, uint8_t p, const float *a, const float *b, float *y);
#include "kernels/list/select.inc"
#undef X_VPRED
#undef X_SPRED

#endif
