/* Internal: OPTIC_UNCONST(T, p) is p as the pointer type T without its
 * qualifiers, for the few places where an object we only read must be handed
 * to an interface whose parameter is not const (C11 atomic_load on a const
 * object, the futex system call, a callback's void * argument, argv of exec).
 * Greppable; -Wcast-qual flags every other cast that drops a qualifier. */
#ifndef OPTIC_CORE_UNCONST_H
#define OPTIC_CORE_UNCONST_H

#include <stdint.h>

#define OPTIC_UNCONST(T, p) ((T)(uintptr_t)(p))

#endif
