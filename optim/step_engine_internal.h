/* Internal: the step engine's graph builder and cache key
 * (optim/step_engine_graph.c), used by optim/step_engine.c. */
#ifndef OPTIC_STEP_ENGINE_INTERNAL_H
#define OPTIC_STEP_ENGINE_INTERNAL_H

#include <optic/compile.h>

#include "optim/optim_internal.h"

/* The group's update over `elements` flattened f32 elements as a new module
 * (caller destroys it). Parameters: param, grad, the state slots, then scalar
 * per-step values; root: tuple (θ', state'...). */
optic_status step_engine_build_graph(const optic_optim_hparams *h, int64_t elements, optic_module_t **out);
/* Writes the group's cache key into buf (up to cap bytes) and returns its
 * full length (call with cap 0 to size it). */
size_t step_engine_group_key(const optim_group *gr, uint8_t *buf, size_t cap);

#endif
