/* Dispatch table of the layout family, built from kernels/list/layout.inc:
 * each ISA's table starts as the scalar table and takes the ISA's own kernels
 * where the list has them. Built once (pthread_once); read-only afterwards. */
#include <pthread.h>

#include "kernels/layout.h"
#include "kernels/stream.h"

static optic_layout_kernels tables[OPTIC_ISA_COUNT_];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static const size_t width_bytes[OPTIC_LAYOUT_WIDTH_COUNT] = {
#define WIDTH_BYTES(name, bytes) bytes,
    OPTIC_LAYOUT_WIDTH_LIST(WIDTH_BYTES)
#undef WIDTH_BYTES
};

size_t optic_layout_width_bytes(optic_layout_width w) {
  return (unsigned)w < OPTIC_LAYOUT_WIDTH_COUNT ? width_bytes[w] : 0;
}

bool optic_layout_width_of(size_t elem_size, optic_layout_width *out) {
  for (int w = 0; w < OPTIC_LAYOUT_WIDTH_COUNT; w++) {
    if (width_bytes[w] == elem_size) {
      *out = (optic_layout_width)w;
      return true;
    }
  }
  return false;
}

/* Puts one list entry into table t (which must be isa's). */
#define SET_COPY(t, isa, fn) ((t)->copy = fn, (t)->isa_of_copy = (isa))
#define SET_COPY2D(t, isa, fn) ((t)->copy2d = fn, (t)->isa_of_copy2d = (isa))
#define SET_TRANSPOSE(t, isa, w, fn) ((t)->transpose[w] = fn, (t)->isa_of_transpose[w] = (isa))
#define SET_FILL(t, isa, w, fn) ((t)->fill[w] = fn, (t)->isa_of_fill[w] = (isa))

static void build_tables(void) {
  optic_stream_init(); /* here, so the kernels' first call never reads the environment or sysfs */
  optic_layout_kernels *scalar = &tables[OPTIC_ISA_SCALAR];
#define X_COPY(op, isa, fn) \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) SET_COPY(scalar, OPTIC_ISA_SCALAR, fn);
#define X_COPY2D(op, isa, fn) \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) SET_COPY2D(scalar, OPTIC_ISA_SCALAR, fn);
#define X_TRANSPOSE(width, isa, fn) \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) SET_TRANSPOSE(scalar, OPTIC_ISA_SCALAR, OPTIC_LAYOUT_##width, fn);
#define X_FILL(width, isa, fn) \
  if (OPTIC_ISA_##isa == OPTIC_ISA_SCALAR) SET_FILL(scalar, OPTIC_ISA_SCALAR, OPTIC_LAYOUT_##width, fn);
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL
  for (int isa = 1; isa < OPTIC_ISA_COUNT_; isa++) {
    if (optic_isa_built((optic_isa)isa)) tables[isa] = *scalar;
  }
#define X_COPY(op, isa, fn) \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) SET_COPY(&tables[OPTIC_ISA_##isa], OPTIC_ISA_##isa, fn);
#define X_COPY2D(op, isa, fn) \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) SET_COPY2D(&tables[OPTIC_ISA_##isa], OPTIC_ISA_##isa, fn);
#define X_TRANSPOSE(width, isa, fn)        \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) \
    SET_TRANSPOSE(&tables[OPTIC_ISA_##isa], OPTIC_ISA_##isa, OPTIC_LAYOUT_##width, fn);
#define X_FILL(width, isa, fn)             \
  if (OPTIC_ISA_##isa != OPTIC_ISA_SCALAR) \
    SET_FILL(&tables[OPTIC_ISA_##isa], OPTIC_ISA_##isa, OPTIC_LAYOUT_##width, fn);
#include "kernels/list/layout.inc"
#undef X_COPY
#undef X_COPY2D
#undef X_TRANSPOSE
#undef X_FILL
}

const optic_layout_kernels *optic_layout_kernels_for(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_ || !optic_isa_built(isa)) return NULL;
  pthread_once(&tables_once, build_tables);
  return &tables[isa];
}

const optic_layout_kernels *optic_layout_kernels_get(void) { return optic_layout_kernels_for(optic_isa_selected()); }
