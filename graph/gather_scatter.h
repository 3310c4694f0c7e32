/* Internal: the element mapping of the indexing ops (dynamic-slice starts,
 * gather, scatter), sort, topk and batch norm, shared by the evaluator and
 * the runtime. Takes attributes in their public form (optic_gather_dims,
 * ..., from optic_node_attrs), never the module's storage. Never allocates. */
#ifndef OPTIC_GRAPH_GATHER_SCATTER_H
#define OPTIC_GRAPH_GATHER_SCATTER_H

#include <optic/graph.h>

/* The clamped start of a dynamic-slice or dynamic-update-slice window per
 * dimension (graph/build_dynamic.c): index holds the start operands' data
 * (n_index = rank scalars, or 1 rank-1 array) of integer dtype dt. */
void graph_dynamic_starts(const void *const *index, int32_t n_index, optic_dtype dt, int32_t rank,
                          const int64_t *operand_dims, const int64_t *window_dims, int64_t *start);

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

/* sort (graph/sort.c): n operands of one shape, sorted together along dim.
 * less(ctx, args, &before): args are lhs0, rhs0, lhs1, rhs1, ... element
 * pointers; before = lhs goes first. in and out must not overlap. */
typedef optic_status (*graph_sort_less)(void *ctx, const void *const *args, bool *before);
typedef struct graph_sort_io {
  int32_t n, dim;
  const optic_shape *shape;
  const optic_dtype *dtype;
  const void *const *in;
  void *const *out;
  graph_sort_less less;
  void *ctx;
} graph_sort_io;
/* The number of 1-D slices (0 when the sort dimension is empty). */
size_t graph_sort_slices(const optic_shape *s, int32_t dim);
/* Sorts slices [lo, hi); scratch holds 2 x dims[dim] positions. */
optic_status graph_sort_run(const graph_sort_io *io, size_t lo, size_t hi, int64_t *scratch);

/* topk (graph/sort.c): rows [lo, hi) of x (last dim) ordered by XLA's
 * total order (floats: -NaN < -inf < ... < -0 < 0 < ... < NaN), descending
 * when largest, stably (ties keep the lower index first); the first k
 * values and their s32 indices per row. scratch: 2 x last-dim positions. */
optic_status graph_topk_run(optic_dtype dt, const optic_shape *xs, const void *x, int64_t k, bool largest, void *values,
                            int32_t *indices, size_t lo, size_t hi, int64_t *scratch);

/* batch-norm-training/-inference/-grad (graph/batch_norm.c) over x of shape
 * s with features along dim f: in = the instruction's operands' data, out =
 * its result leaves; acc holds GRAPH_BATCH_NORM_SCRATCH(features) doubles.
 * The outputs are bitwise those of the textbook formulas in double, in
 * element order. */
#define GRAPH_BATCH_NORM_SCRATCH(features) (5 * (size_t)(features))
void graph_batch_norm_run(optic_opcode op, optic_dtype dt, const optic_shape *s, int64_t f, float eps,
                          const void *const *in, void *const *out, double *acc);

#endif
