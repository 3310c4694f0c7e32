/* optic instruction attributes: a typed, read-only view of what each
 * instruction was built with (the numbers a builder took besides its
 * operands), as one tagged union. Every layer outside the graph reads
 * attributes through this view; how the graph stores them is its own
 * business.
 *
 * Sections:
 *   - enumeration     optic_module_node_count: the range of instruction ids
 *   - attribute view  optic_node_attrs_t (kind + union), one struct per form
 *   - the call        optic_node_attrs
 *
 * What is not here: operands and users (optic_node_operand, optic_node_user),
 * the result type (optic_node_type), and the computations an instruction
 * applies (optic_node_called: to_apply, condition/body, branches, the fused
 * computation), all in <optic/graph.h>.
 *
 * Ownership: optic_node_attrs copies every bounded attribute (at most one
 * entry per dimension, OPTIC_MAX_RANK) into the caller's struct, and never
 * allocates. The unbounded ones (a constant's bytes, all-reduce replica
 * groups, collective-permute pairs, a custom-call target) are pointers into
 * the module's storage: valid until the module is next changed (a builder, a
 * pass, optic_node_remove, ...) or destroyed, like every other pointer a node
 * accessor returns.
 *
 * Thread safety: reading only; any number of threads may read one module at
 * once as long as nobody changes it. */
#ifndef OPTIC_ATTRS_H
#define OPTIC_ATTRS_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ enumeration */

/* Every instruction id of m is in [0, optic_module_node_count(m)): ids are
 * dense and never reused, so the count includes removed instructions (which
 * every accessor treats as nonexistent). 0 for NULL. */
OPTIC_API int32_t optic_module_node_count(const optic_module_t *m);

/* ------------------------------------------------------------ attribute view */

/* Which member of optic_node_attrs_t's union holds the attributes: one kind
 * per form, named as the member. Opcodes not listed have no attributes
 * (OPTIC_ATTRS_NONE): the elementwise ops but compare and reduce-precision,
 * reshape, bitcast, copy, convert and bitcast-convert (the dtype is the
 * result's), tuple, call, while, map, opt-barrier, dynamic-update-slice,
 * after-all, infeed, outfeed, replica-id and partition-id. */
typedef enum optic_attrs_kind {
  OPTIC_ATTRS_NONE,
  OPTIC_ATTRS_PARAMETER,          /* parameter: .parameter */
  OPTIC_ATTRS_CONSTANT,           /* constant: .constant */
  OPTIC_ATTRS_IOTA,               /* iota: .iota */
  OPTIC_ATTRS_COMPARE,            /* compare: .compare */
  OPTIC_ATTRS_REDUCE_PRECISION,   /* reduce-precision: .reduce_precision */
  OPTIC_ATTRS_BROADCAST,          /* broadcast: .broadcast (optic_attrs_dims) */
  OPTIC_ATTRS_TRANSPOSE,          /* transpose: .transpose (optic_attrs_dims) */
  OPTIC_ATTRS_REVERSE,            /* reverse: .reverse (optic_attrs_dims) */
  OPTIC_ATTRS_REDUCE,             /* reduce: .reduce (optic_attrs_dims) */
  OPTIC_ATTRS_DYNAMIC_SLICE,      /* dynamic-slice: .dynamic_slice (optic_attrs_dims) */
  OPTIC_ATTRS_SLICE,              /* slice: .slice */
  OPTIC_ATTRS_CONCATENATE,        /* concatenate: .concatenate */
  OPTIC_ATTRS_PAD,                /* pad: .pad */
  OPTIC_ATTRS_GET_TUPLE_ELEMENT,  /* get-tuple-element: .get_tuple_element */
  OPTIC_ATTRS_REDUCE_WINDOW,      /* reduce-window: .reduce_window */
  OPTIC_ATTRS_DOT,                /* dot: .dot (optic_dot_dims) */
  OPTIC_ATTRS_CONVOLUTION,        /* convolution: .convolution */
  OPTIC_ATTRS_GATHER,             /* gather: .gather (optic_gather_dims) */
  OPTIC_ATTRS_SCATTER,            /* scatter: .scatter (optic_scatter_dims) */
  OPTIC_ATTRS_SORT,               /* sort: .sort */
  OPTIC_ATTRS_ALL_REDUCE,         /* all-reduce: .all_reduce */
  OPTIC_ATTRS_ALL_GATHER,         /* all-gather: .all_gather (optic_attrs_shard) */
  OPTIC_ATTRS_REDUCE_SCATTER,     /* reduce-scatter: .reduce_scatter (optic_attrs_shard) */
  OPTIC_ATTRS_COLLECTIVE_PERMUTE, /* collective-permute: .collective_permute */
  OPTIC_ATTRS_CUSTOM_CALL,        /* custom-call: .custom_call */
  OPTIC_ATTRS_TOPK,               /* topk: .topk */
  OPTIC_ATTRS_BATCH_NORM,         /* batch-norm-training/-inference/-grad: .batch_norm */
  OPTIC_ATTRS_FUSION,             /* fusion: .fusion */
  OPTIC_ATTRS_RNG_BIT_GENERATOR,  /* rng-bit-generator: .rng_bit_generator */
  OPTIC_ATTRS_CONDITIONAL,        /* conditional: .conditional */
  OPTIC_ATTRS_KIND_COUNT_
} optic_attrs_kind;

/* A list of dimension numbers (or sizes), count entries:
 *   broadcast      operand dim i becomes output dim dims[i] (count = operand rank)
 *   transpose      output dim i is operand dim dims[i] (count = rank)
 *   reverse        the reversed dims
 *   reduce         the reduced dims of the inputs
 *   dynamic-slice  the window size per operand dim (count = rank) */
typedef struct optic_attrs_dims {
  int32_t count;
  int64_t dims[OPTIC_MAX_RANK];
} optic_attrs_dims;

/* slice: per dim (rank entries) start, limit (exclusive) and stride. */
typedef struct optic_attrs_slice {
  int32_t rank;
  int64_t start[OPTIC_MAX_RANK], limit[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK];
} optic_attrs_slice;

/* pad: per dim (rank entries) low, high and interior padding. */
typedef struct optic_attrs_pad {
  int32_t rank;
  optic_pad_dim dims[OPTIC_MAX_RANK];
} optic_attrs_pad;

/* reduce-window: one window dim per input dim (rank entries). */
typedef struct optic_attrs_reduce_window {
  int32_t rank;
  optic_window_dim window[OPTIC_MAX_RANK];
} optic_attrs_reduce_window;

/* convolution (XLA's ConvolutionDimensionNumbers and window): positions of
 * each role in the input (lhs), the kernel (rhs) and the output, which all
 * have rank spatial_count + 2; spatial arrays and window are indexed by
 * spatial dimension number (the digit in XLA's dim labels). */
typedef struct optic_attrs_convolution {
  int32_t spatial_count;
  int32_t input_batch, input_feature, input_spatial[OPTIC_MAX_RANK - 2];
  int32_t kernel_input_feature, kernel_output_feature, kernel_spatial[OPTIC_MAX_RANK - 2];
  int32_t output_batch, output_feature, output_spatial[OPTIC_MAX_RANK - 2];
  optic_window_dim window[OPTIC_MAX_RANK - 2]; /* size = the kernel's spatial size */
  int64_t feature_group_count, batch_group_count;
} optic_attrs_convolution;

/* all-gather, reduce-scatter: the gathered or scattered dimension and the
 * replicas per group. */
typedef struct optic_attrs_shard {
  int64_t dimension, shard_count;
} optic_attrs_shard;

/* all-reduce replica groups: group g holds group_sizes[g] replica ids,
 * listed one group after another in replica_ids (n_replica_ids in all);
 * n_groups 0 means one group of every replica (both pointers NULL then).
 * The arrays are the module's (see Ownership above). */
typedef struct optic_attrs_all_reduce {
  int32_t n_groups;
  const int64_t *group_sizes;
  int32_t n_replica_ids;
  const int64_t *replica_ids;
} optic_attrs_all_reduce;

/* collective-permute: n_pairs (source, target) pairs, pairs[2k] the source
 * and pairs[2k + 1] the target of pair k (the module's array; NULL when
 * n_pairs is 0). */
typedef struct optic_attrs_collective_permute {
  int32_t n_pairs;
  const int64_t *pairs;
} optic_attrs_collective_permute;

/* The small forms. */
typedef struct optic_attrs_parameter {
  int64_t number; /* the parameter number in its computation */
} optic_attrs_parameter;
typedef struct optic_attrs_constant {
  const void *data; /* the module's copy of the row-major elements */
  size_t bytes;
} optic_attrs_constant;
typedef struct optic_attrs_iota {
  int64_t dimension; /* iota_dimension */
} optic_attrs_iota;
typedef struct optic_attrs_compare {
  optic_compare_dir direction;
} optic_attrs_compare;
typedef struct optic_attrs_reduce_precision {
  int32_t exponent_bits, mantissa_bits;
} optic_attrs_reduce_precision;
typedef struct optic_attrs_concatenate {
  int64_t dimension;
} optic_attrs_concatenate;
typedef struct optic_attrs_get_tuple_element {
  int64_t index;
} optic_attrs_get_tuple_element;
typedef struct optic_attrs_sort {
  int64_t dimension;
  bool is_stable;
} optic_attrs_sort;
typedef struct optic_attrs_custom_call {
  const char *target; /* the module's NUL-terminated copy */
} optic_attrs_custom_call;
typedef struct optic_attrs_topk {
  int64_t k;
  bool largest;
} optic_attrs_topk;
typedef struct optic_attrs_batch_norm {
  int64_t feature_index;
  float epsilon;
} optic_attrs_batch_norm;
typedef struct optic_attrs_fusion {
  optic_fusion_kind kind;
} optic_attrs_fusion;
typedef struct optic_attrs_rng_bit_generator {
  optic_rng_algorithm algorithm;
} optic_attrs_rng_bit_generator;
typedef struct optic_attrs_conditional {
  bool pred_selector; /* true: the selector is pred[] (two branches); false: s32[] */
} optic_attrs_conditional;

/* The view. kind says which member is set; op is the instruction's opcode
 * (several opcodes share a kind: the three batch-norm ops). */
typedef struct optic_node_attrs_t {
  optic_attrs_kind kind;
  optic_opcode op;
  union {
    optic_attrs_parameter parameter;
    optic_attrs_constant constant;
    optic_attrs_iota iota;
    optic_attrs_compare compare;
    optic_attrs_reduce_precision reduce_precision;
    optic_attrs_dims broadcast, transpose, reverse, reduce, dynamic_slice;
    optic_attrs_slice slice;
    optic_attrs_concatenate concatenate;
    optic_attrs_pad pad;
    optic_attrs_get_tuple_element get_tuple_element;
    optic_attrs_reduce_window reduce_window;
    optic_dot_dims dot;
    optic_attrs_convolution convolution;
    optic_gather_dims gather;
    optic_scatter_dims scatter;
    optic_attrs_sort sort;
    optic_attrs_all_reduce all_reduce;
    optic_attrs_shard all_gather, reduce_scatter;
    optic_attrs_collective_permute collective_permute;
    optic_attrs_custom_call custom_call;
    optic_attrs_topk topk;
    optic_attrs_batch_norm batch_norm;
    optic_attrs_fusion fusion;
    optic_attrs_rng_bit_generator rng_bit_generator;
    optic_attrs_conditional conditional;
  };
} optic_node_attrs_t;

/* ------------------------------------------------------------ the call */

/* Fills *out with instruction id's attributes: kind, op and the union
 * member kind names (the rest of *out is zero). Errors: INVALID_ARGUMENT
 * (m or out NULL, id not an instruction of m or removed), with a message
 * naming the id; *out is then zeroed (kind NONE) when out is not NULL. */
OPTIC_API optic_status optic_node_attrs(const optic_module_t *m, optic_node_id id, optic_node_attrs_t *out);

/* The kind optic_node_attrs gives instructions of opcode op
 * (OPTIC_ATTRS_NONE for opcodes without attributes or outside the enum). */
OPTIC_API optic_attrs_kind optic_opcode_attrs_kind(optic_opcode op);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_ATTRS_H */
