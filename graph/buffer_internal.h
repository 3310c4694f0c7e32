/* Internal: storage of schedules and buffer plans, and the value analysis the
 * scheduler and the assigner share (which leaf of which instruction defines
 * the bytes each result leaf holds, and when those bytes die). The verifier
 * (graph/buffer_verify.c) deliberately does not use the analysis: it
 * recomputes what it checks from the module. Never include from outside
 * graph/ (tests may, to corrupt plans on purpose). */
#ifndef OPTIC_GRAPH_BUFFER_INTERNAL_H
#define OPTIC_GRAPH_BUFFER_INTERNAL_H

#include "graph/internal.h"

struct optic_schedule {
  optic_comp_id comp;
  int32_t n;
  optic_node_id *ids;   /* the computation's live instructions, ascending: local index -> id */
  optic_node_id *order; /* execution order (ids) */
  int32_t *pos;         /* local index -> position in order */
  size_t peak_bytes;
};

struct optic_buffer_plan {
  optic_schedule_t schedule; /* own copy */
  int32_t *leaf_start;       /* local index -> first leaf in slots; n + 1 entries */
  optic_buffer_slot *slots;  /* every array leaf of every instruction, depth-first */
  size_t arena_bytes, parameter_bytes, output_bytes, constant_bytes;
};

/* Index of id in the ascending array ids[0..n), or -1. */
int32_t gs_local_index(const optic_node_id *ids, int32_t n, optic_node_id id);

/* id -> local index lookups in O(1): a dense table over the computation's id
 * range when that range is at most a few times n (the usual case: a
 * computation's instructions are built together), else binary search, so a
 * computation scattered across a big module never costs O(module) to plan. */
typedef struct gs_index {
  const optic_node_id *ids;
  int32_t n;
  optic_node_id base;
  int64_t range;
  int32_t *dense; /* NULL: binary search */
} gs_index;
optic_status gs_index_build(gs_index *x, const optic_node_id *ids, int32_t n);
void gs_index_free(gs_index *x);
static inline int32_t gs_index_of(const gs_index *x, optic_node_id id) {
  if (x->dense == NULL) return gs_local_index(x->ids, x->n, id);
  int64_t k = (int64_t)id - x->base;
  return (k >= 0 && k < x->range) ? x->dense[k] : -1;
}

/* Result leaves are numbered depth-first across the computation: leaves of
 * local instruction i are [leaf_start[i], leaf_start[i + 1]). A "value" is the
 * leaf of the instruction that defines its bytes; it is named by that leaf's
 * number, so value_of[l] == l exactly for defining leaves. */
typedef struct gs_values {
  int32_t n;
  optic_node_id *ids;        /* ascending */
  gs_index index;            /* id -> local */
  const optic_instr **instr; /* local -> instruction */
  int32_t *operand_start;    /* CSR of operands as local indexes, n + 1 */
  int32_t *operands;
  int32_t *topo;       /* the locals, operands before users (ids need not be) */
  int32_t *leaf_start; /* n + 1 */
  int32_t n_leaves;
  int32_t *value_of;    /* leaf -> value (the defining leaf) */
  int32_t *owner;       /* leaf -> local instruction holding it */
  size_t *size;         /* leaf -> exact bytes of its array */
  uint8_t *kind;        /* defining leaf -> optic_buffer_kind */
  int32_t *output_leaf; /* defining leaf -> first root leaf, or -1 */
  int32_t root;         /* local index of the root */
} gs_values;

/* Tuple, get-tuple-element and reshape define no bytes: their leaves alias
 * their operands'. */
bool gs_is_alias(optic_opcode op);
/* Elementwise ops whose kernels allow the output to be one of the inputs
 * (kernels/common.h): operand `index` may give its block to the result when
 * its type equals the result's (never select's predicate; never compare,
 * convert or copy, whose kernels take distinct buffers). */
bool gs_in_place_operand(const optic_instr *in, int32_t index, const optic_type *operand_type);

/* Analyzes comp's live instructions (needs a root). */
optic_status gs_values_build(const optic_module_t *m, optic_comp_id comp, const char *op, gs_values *out);
void gs_values_free(gs_values *v);

/* Liveness over a schedule (pos: local -> position). last[value] is the last
 * position at which the value's bytes are read or held by a live alias;
 * in_place[local] is the value whose block the instruction's result takes over
 * (an operand dying there), or -1. Only arena values get meaningful entries.
 * peak (may be NULL) receives the peak live bytes. */
optic_status gs_liveness(const gs_values *v, const int32_t *pos, int32_t *last, int32_t *in_place, size_t *peak);

/* Schedule helpers shared by schedule.c and buffer_assign.c. */
optic_status gs_schedule_clone(const optic_schedule_t *src, optic_schedule_t *dst);
void gs_schedule_release(optic_schedule_t *s);
/* INVALID_ARGUMENT unless s schedules exactly v's instructions in an order
 * where operands come first. */
optic_status gs_schedule_matches(const gs_values *v, const optic_schedule_t *s, const char *op);

/* Best-fit arena allocator with coalescing (graph/arena_alloc.c). Sizes and
 * offsets are multiples of OPTIC_BUFFER_ALIGNMENT. */
typedef struct gs_arena gs_arena;
optic_status gs_arena_create(int32_t max_blocks, gs_arena **out);
void gs_arena_destroy(gs_arena *a);
optic_status gs_arena_alloc(gs_arena *a, size_t size, size_t *offset);
optic_status gs_arena_free(gs_arena *a, size_t offset, size_t size);
size_t gs_arena_high_water(const gs_arena *a);

#endif
