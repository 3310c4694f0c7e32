/* Internal: the fusion pass's shared state. graph/passes/fusion.c decides
 * the groups (one backward sweep per computation); graph/passes/
 * fusion_build.c turns one group into a fused computation and a fusion
 * instruction. Never include from outside graph/passes/. */
#ifndef OPTIC_GRAPH_PASSES_FUSION_H
#define OPTIC_GRAPH_PASSES_FUSION_H

#include "graph/passes/passes.h"

#define FUSION_DEFAULT_MAX_SIZE 64

/* One group: a root and the producers fused into it. Every member other than
 * the root has all its users inside the group (so the root is the only value
 * that leaves it, and no path can leave the group and come back: no cycle). */
typedef struct fusion_group {
  optic_node_id root;
  optic_fusion_kind kind; /* LOOP; INPUT when the root is a reduce; OUTPUT once a dot/convolution joined */
  int32_t size;           /* members, the root included */
  int32_t first;          /* index of its first member in fusion_ctx.members */
} fusion_group;

/* How an operand from outside the group enters the fused computation. */
typedef enum fusion_entry {
  ENTRY_NONE = 0,
  ENTRY_PARAM, /* a parameter of the fused computation (an operand of the fusion) */
  ENTRY_CLONE, /* a scalar constant, copied inside */
  ENTRY_DUP    /* a broadcast/reshape/transpose of a parameter or constant, duplicated inside */
} fusion_entry;

typedef struct fusion_ctx {
  optic_module_t *m;
  const pass_liveness *l;
  pass_counts *counts;
  optic_comp_id comp;
  int32_t max_size;
  int32_t next_name; /* N of the next "fused_computation.N" */
  /* By node id, for ids below n_ids (instructions that existed when the
   * computation's sweep started). */
  int32_t n_ids;
  int32_t n_map;          /* entries of entry/mapped/touched (grows past n_ids for new fusion instructions) */
  int32_t *group_of;      /* group index or -1 */
  unsigned char *entry;   /* fusion_entry of an outside operand, for the group being built */
  optic_node_id *mapped;  /* its instruction inside the fused computation */
  optic_node_id *touched; /* ids whose entry/mapped are set, to reset them */
  int32_t n_touched;
  fusion_group *groups;
  int32_t n_groups;
  optic_node_id *members;   /* each group's members, contiguous, in list order */
  optic_node_id *leftovers; /* cloned or duplicated outside operands: removed if no user is left */
  int32_t n_leftovers;
  unsigned char *left_mark; /* by id < n_ids: already in leftovers */
} fusion_ctx;

bool fusion_is_loop_op(optic_opcode op);
/* Number of elements of an array type. */
int64_t fusion_elements(const optic_type *t);
/* Builds the fused computation for group g and replaces the group by one
 * fusion instruction; does nothing (and sets *fused false) when the group
 * would fuse fewer than two instructions. */
optic_status fusion_build_group(fusion_ctx *cx, const fusion_group *g, bool *fused);

#endif
