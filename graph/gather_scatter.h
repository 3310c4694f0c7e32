/* Internal: gather's and scatter's element mapping (graph/gather_scatter.c),
 * shared by the evaluator and the runtime. Never allocates. */
#ifndef OPTIC_GRAPH_GATHER_SCATTER_H
#define OPTIC_GRAPH_GATHER_SCATTER_H

#include "graph/internal.h"

/* An integer array of start indices. */
typedef struct graph_index_array {
  optic_dtype dtype;
  const optic_shape *shape;
  const void *data;
} graph_index_array;

/* An integer element of dtype dt as int64 (unsigned values saturate). */
int64_t graph_load_index(optic_dtype dt, const void *p);

/* Result elements [lo, hi) of gather (element size es) from operand x of
 * shape xs; starts clamped as XLA does. */
void graph_gather_run(const optic_gather_dims *g, size_t es, const optic_shape *xs, const void *x,
                      const graph_index_array *ix, const optic_shape *ys, void *y, size_t lo, size_t hi);

/* *dst = to_apply(*dst, *update) for one element. */
typedef optic_status (*graph_scatter_combine)(void *ctx, void *dst, const void *update);
/* Combines every update element into y (already a copy of the operand, of
 * shape ys) in the updates' row-major order, skipping windows that do not
 * fit in the operand (XLA). Stops at the first failing combine. */
optic_status graph_scatter_run(const optic_scatter_dims *g, size_t es, const optic_shape *ys, void *y,
                               const graph_index_array *ix, const optic_shape *us, const void *u,
                               graph_scatter_combine combine, void *ctx);

#endif
