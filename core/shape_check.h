/* Internal: shape validation whose message starts with the caller's context,
 * for layers that check a shape the user gave them ("optim_add_group: tensor
 * 1: dim 1 is -3; ...") without wrapping another call's message. */
#ifndef OPTIC_CORE_SHAPE_CHECK_H
#define OPTIC_CORE_SHAPE_CHECK_H

#include <optic/core.h>

/* Checks rank (0..OPTIC_MAX_RANK), dims (>= 0) and that the element count
 * fits (as optic_shape_elements does) and stores it in *elements (may be
 * NULL). On failure the message is "<context>: <what is wrong>". */
optic_status optic_shape_check(const char *context, const optic_shape *shape, size_t *elements);

#endif
