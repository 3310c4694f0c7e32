/* optic graph layer: an XLA-shaped IR. A module holds computations; a
 * computation holds instructions in SSA form. Every builder call checks its
 * operands and infers the result type at once, returning the new instruction's
 * id or an error with a message naming the op, operand and dimensions.
 *
 * Thread safety: a module is not thread-safe; build it from one thread (or
 * lock around it). Distinct modules are independent. */
#ifndef OPTIC_GRAPH_H
#define OPTIC_GRAPH_H

#include <optic/core.h>
#include <optic/kernels.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, xla_name, kind). The names are XLA's opcode spellings. The kind
 * column is the one place graph/ learns an opcode's class from (HLO
 * import, evaluator, cost model, fusion, buffer reuse): UNARY and BINARY
 * are the elementwise arithmetic and logic ops that optic_graph_unary and
 * optic_graph_binary build; ELEMENTWISE the other elementwise ops (compare,
 * select, clamp, convert); OTHER the rest, including copy (which
 * optic_graph_unary also builds, but XLA does not count as elementwise). */
#define OPTIC_OPCODE_LIST(X)                      \
  X(PARAMETER, "parameter", OTHER)                \
  X(CONSTANT, "constant", OTHER)                  \
  X(IOTA, "iota", OTHER)                          \
  X(ADD, "add", BINARY)                           \
  X(SUBTRACT, "subtract", BINARY)                 \
  X(MULTIPLY, "multiply", BINARY)                 \
  X(DIVIDE, "divide", BINARY)                     \
  X(POWER, "power", BINARY)                       \
  X(MAXIMUM, "maximum", BINARY)                   \
  X(MINIMUM, "minimum", BINARY)                   \
  X(AND, "and", BINARY)                           \
  X(OR, "or", BINARY)                             \
  X(NEGATE, "negate", UNARY)                      \
  X(ABS, "abs", UNARY)                            \
  X(EXPONENTIAL, "exponential", UNARY)            \
  X(LOG, "log", UNARY)                            \
  X(SQRT, "sqrt", UNARY)                          \
  X(RSQRT, "rsqrt", UNARY)                        \
  X(TANH, "tanh", UNARY)                          \
  X(LOGISTIC, "logistic", UNARY)                  \
  X(SIGN, "sign", UNARY)                          \
  X(FLOOR, "floor", UNARY)                        \
  X(CEIL, "ceil", UNARY)                          \
  X(NOT, "not", UNARY)                            \
  X(ERF, "erf", UNARY)                            \
  X(LOG_PLUS_ONE, "log-plus-one", UNARY)          \
  X(EXPONENTIAL_MINUS_ONE, "exponential-minus-one", UNARY) \
  X(SINE, "sine", UNARY)                          \
  X(COSINE, "cosine", UNARY)                      \
  X(TAN, "tan", UNARY)                            \
  X(CBRT, "cbrt", UNARY)                          \
  X(ROUND_NEAREST_AFZ, "round-nearest-afz", UNARY) \
  X(ROUND_NEAREST_EVEN, "round-nearest-even", UNARY) \
  X(POPCNT, "popcnt", UNARY)                      \
  X(COUNT_LEADING_ZEROS, "count-leading-zeros", UNARY) \
  X(ATAN2, "atan2", BINARY)                       \
  X(REMAINDER, "remainder", BINARY)               \
  X(XOR, "xor", BINARY)                           \
  X(SHIFT_LEFT, "shift-left", BINARY)             \
  X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", BINARY) \
  X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", BINARY) \
  X(IS_FINITE, "is-finite", ELEMENTWISE)          \
  X(REDUCE_PRECISION, "reduce-precision", ELEMENTWISE) \
  X(BITCAST_CONVERT, "bitcast-convert", ELEMENTWISE) \
  X(COMPARE, "compare", ELEMENTWISE)              \
  X(SELECT, "select", ELEMENTWISE)                \
  X(CLAMP, "clamp", ELEMENTWISE)                  \
  X(CONVERT, "convert", ELEMENTWISE)              \
  X(COPY, "copy", OTHER)                          \
  X(BROADCAST, "broadcast", OTHER)                \
  X(RESHAPE, "reshape", OTHER)                    \
  X(BITCAST, "bitcast", OTHER)                    \
  X(TRANSPOSE, "transpose", OTHER)                \
  X(SLICE, "slice", OTHER)                        \
  X(CONCATENATE, "concatenate", OTHER)            \
  X(PAD, "pad", OTHER)                            \
  X(REVERSE, "reverse", OTHER)                    \
  X(REDUCE, "reduce", OTHER)                      \
  X(REDUCE_WINDOW, "reduce-window", OTHER)        \
  X(MAP, "map", OTHER)                            \
  X(DOT, "dot", OTHER)                            \
  X(CONVOLUTION, "convolution", OTHER)            \
  X(TUPLE, "tuple", OTHER)                        \
  X(GET_TUPLE_ELEMENT, "get-tuple-element", OTHER) \
  X(CALL, "call", OTHER)                          \
  X(WHILE, "while", OTHER)                        \
  X(CONDITIONAL, "conditional", OTHER)            \
  X(FUSION, "fusion", OTHER)                      \
  X(ALL_REDUCE, "all-reduce", OTHER)              \
  X(DYNAMIC_SLICE, "dynamic-slice", OTHER)        \
  X(DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", OTHER) \
  X(OPT_BARRIER, "opt-barrier", OTHER)            \
  X(GATHER, "gather", OTHER)                      \
  X(SCATTER, "scatter", OTHER)                    \
  X(SORT, "sort", OTHER)                          \
  X(ALL_GATHER, "all-gather", OTHER)              \
  X(REDUCE_SCATTER, "reduce-scatter", OTHER)      \
  X(COLLECTIVE_PERMUTE, "collective-permute", OTHER) \
  X(CUSTOM_CALL, "custom-call", OTHER)            \
  X(TOPK, "topk", OTHER)                          \
  X(BATCH_NORM_TRAINING, "batch-norm-training", OTHER) \
  X(BATCH_NORM_INFERENCE, "batch-norm-inference", OTHER) \
  X(BATCH_NORM_GRAD, "batch-norm-grad", OTHER)   \
  X(AFTER_ALL, "after-all", OTHER)                \
  X(INFEED, "infeed", OTHER)                      \
  X(OUTFEED, "outfeed", OTHER)                    \
  X(RNG_BIT_GENERATOR, "rng-bit-generator", OTHER) \
  X(REPLICA_ID, "replica-id", OTHER)              \
  X(PARTITION_ID, "partition-id", OTHER)

typedef enum optic_opcode {
#define OPTIC_OPCODE_ENUM_(name, str, kind) OPTIC_OP_##name,
  OPTIC_OPCODE_LIST(OPTIC_OPCODE_ENUM_)
#undef OPTIC_OPCODE_ENUM_
  OPTIC_OPCODE_COUNT_
} optic_opcode;

/* XLA's spelling ("get-tuple-element"); "invalid" outside the enum. */
OPTIC_API const char *optic_opcode_name(optic_opcode op);
OPTIC_API optic_status optic_opcode_from_name(const char *name, optic_opcode *out);

typedef enum optic_compare_dir {
  OPTIC_CMP_EQ,
  OPTIC_CMP_NE,
  OPTIC_CMP_LT,
  OPTIC_CMP_LE,
  OPTIC_CMP_GT,
  OPTIC_CMP_GE
} optic_compare_dir;

/* The result type of an instruction: an array (dtype + shape) or a tuple of
 * types. For a tuple, dtype is OPTIC_DTYPE_INVALID and elements points to
 * tuple_size types (owned by whoever owns this type: the module, for types it
 * returns). */
typedef struct optic_type {
  optic_dtype dtype;
  optic_shape shape;
  int32_t tuple_size;
  const struct optic_type *elements;
} optic_type;

/* An array type; convenience for building parameters. */
OPTIC_API optic_type optic_type_array(optic_dtype dtype, const optic_shape *shape);
OPTIC_API bool optic_type_is_tuple(const optic_type *t);
OPTIC_API bool optic_type_equal(const optic_type *a, const optic_type *b);
/* "f32[2,3]" or "(f32[2], s32[])"; returns the length needed, like snprintf. */
OPTIC_API int optic_type_format(const optic_type *t, char *buf, size_t size);

/* Opaque module. Ids of computations and instructions are small integers,
 * unique within their module, stable for its lifetime. */
typedef struct optic_module optic_module_t;
typedef int32_t optic_comp_id;
typedef int32_t optic_node_id;
#define OPTIC_NO_NODE ((optic_node_id)-1)

/* Creates an empty module named name (copied). The caller owns it and frees it
 * with optic_module_destroy (NULL-safe). */
OPTIC_API optic_status optic_module_create(const char *name, optic_module_t **out);
OPTIC_API void optic_module_destroy(optic_module_t *m);
/* A deep copy of m (same ids, names, computations, constants and entry;
 * removed instructions stay removed) that shares nothing with m. Reads m
 * only. The caller owns *out (optic_module_destroy). OUT_OF_MEMORY leaves
 * *out NULL. */
OPTIC_API optic_status optic_module_clone(const optic_module_t *m, optic_module_t **out);
OPTIC_API const char *optic_module_name(const optic_module_t *m);

/* Adds an empty computation (name copied; must be unique in the module). The
 * first computation added is the entry until optic_module_set_entry. */
OPTIC_API optic_status optic_module_add_computation(optic_module_t *m, const char *name, optic_comp_id *out);
OPTIC_API optic_status optic_module_set_entry(optic_module_t *m, optic_comp_id comp);
OPTIC_API optic_comp_id optic_module_entry(const optic_module_t *m);
OPTIC_API int32_t optic_module_computation_count(const optic_module_t *m);
OPTIC_API const char *optic_computation_name(const optic_module_t *m, optic_comp_id comp);
/* Declares comp's output: its root instruction (XLA's ROOT). A computation
 * without a declared root cannot be compiled or called. */
OPTIC_API optic_status optic_computation_set_root(optic_module_t *m, optic_comp_id comp, optic_node_id root);
OPTIC_API optic_node_id optic_computation_root(const optic_module_t *m, optic_comp_id comp);
/* Number of parameters, and the instruction of parameter number i. */
OPTIC_API int32_t optic_computation_parameter_count(const optic_module_t *m, optic_comp_id comp);
OPTIC_API optic_node_id optic_computation_parameter(const optic_module_t *m, optic_comp_id comp, int32_t i);

/* Read access to an instruction. Pointers returned stay valid until the
 * module is changed or destroyed. */
OPTIC_API optic_opcode optic_node_opcode(const optic_module_t *m, optic_node_id id);
OPTIC_API const optic_type *optic_node_type(const optic_module_t *m, optic_node_id id);
OPTIC_API const char *optic_node_name(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_comp_id optic_node_computation(const optic_module_t *m, optic_node_id id);
OPTIC_API int32_t optic_node_operand_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_node_id optic_node_operand(const optic_module_t *m, optic_node_id id, int32_t i);
/* The computation's live instructions in creation order (operands always
 * before their users). The pointer is valid until the module changes. */
OPTIC_API const optic_node_id *optic_computation_instructions(optic_module_t *m, optic_comp_id comp, int32_t *count);
/* Users: instructions that take id as an operand (each listed once). */
OPTIC_API int32_t optic_node_user_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_node_id optic_node_user(const optic_module_t *m, optic_node_id id, int32_t i);

/* ------------------------------------------------------------ mutation
 * For passes. Every operand edge and user list stays in sync. */

/* Every use of old (operands of its users, and its computation's root) now
 * refers to new, which must be in the same computation with an equal type.
 * old keeps existing with no users (remove it, or let DCE do so); if new
 * itself uses old, that use stays. The caller guarantees new does not depend
 * on any other user of old (that would make a cycle; it is not checked). */
OPTIC_API optic_status optic_node_replace_all_uses(optic_module_t *m, optic_node_id old_id, optic_node_id new_id);
/* Removes an instruction that has no users and is neither a root nor a
 * parameter. Its id is never reused; accessors treat it as nonexistent. */
OPTIC_API optic_status optic_node_remove(optic_module_t *m, optic_node_id id);

/* ------------------------------------------------------------ builders
 * Every builder adds one instruction to computation comp and writes its id to
 * *out. Operands must be instructions of the same computation. name may be
 * NULL (a unique name is made from the opcode, "add.3"); a name the module
 * already has (in any computation) is made unique as XLA does: "b" becomes
 * "b.1", "b.1" becomes "b.2" (optic_node_name gives the name chosen). Errors:
 * INVALID_ARGUMENT (bad ids, attributes), SHAPE_MISMATCH (operand types that
 * do not fit), OVERFLOW, OUT_OF_MEMORY; nothing is added on error. */

/* Parameter number `number` of comp with the given type (arrays or tuples).
 * Numbers must be unique in the computation. */
OPTIC_API optic_status optic_graph_parameter(optic_module_t *m, optic_comp_id comp, int32_t number,
                                             const optic_type *type, const char *name, optic_node_id *out);
/* A constant array; data holds the elements in row-major order and is copied
 * (bytes must equal the array's byte size). */
OPTIC_API optic_status optic_graph_constant(optic_module_t *m, optic_comp_id comp, optic_dtype dtype,
                                            const optic_shape *shape, const void *data, size_t bytes,
                                            const char *name, optic_node_id *out);
/* Read access to a constant's bytes (NULL for other opcodes). */
OPTIC_API const void *optic_node_constant_data(const optic_module_t *m, optic_node_id id, size_t *bytes);
OPTIC_API optic_status optic_graph_iota(optic_module_t *m, optic_comp_id comp, optic_dtype dtype,
                                        const optic_shape *shape, int64_t iota_dimension, const char *name,
                                        optic_node_id *out);
/* Elementwise unary: negate, abs, exponential, log, sqrt, rsqrt, tanh,
 * logistic, sign, floor, ceil, erf, log-plus-one, exponential-minus-one,
 * sine, cosine, tan, cbrt, round-nearest-afz, round-nearest-even (floating
 * point; negate/abs/sign also s32), not (pred and integers), popcnt,
 * count-leading-zeros (integers), copy (any). Result type = operand type. */
OPTIC_API optic_status optic_graph_unary(optic_module_t *m, optic_comp_id comp, optic_opcode op,
                                         optic_node_id x, const char *name, optic_node_id *out);
/* Elementwise binary: add, subtract, multiply, divide, power, maximum,
 * minimum, remainder (numeric), atan2 (floating point), and, or, xor (pred
 * and integers), shift-left, shift-right-logical, shift-right-arithmetic
 * (integers; XLA's rule: a shift by the bit width or more, the amount read
 * as unsigned, gives 0, or the sign in every bit for the arithmetic right
 * shift). Operands must have the same shape and dtype (XLA broadcasts
 * explicitly). */
OPTIC_API optic_status optic_graph_binary(optic_module_t *m, optic_comp_id comp, optic_opcode op,
                                          optic_node_id a, optic_node_id b, const char *name, optic_node_id *out);
/* compare: same shape and dtype operands; result pred of that shape. */
OPTIC_API optic_status optic_graph_compare(optic_module_t *m, optic_comp_id comp, optic_compare_dir dir,
                                           optic_node_id a, optic_node_id b, const char *name, optic_node_id *out);
/* select(pred, on_true, on_false): pred is a pred array of the branches'
 * shape, or a pred scalar; branches have the same type. */
OPTIC_API optic_status optic_graph_select(optic_module_t *m, optic_comp_id comp, optic_node_id pred,
                                          optic_node_id on_true, optic_node_id on_false, const char *name,
                                          optic_node_id *out);
/* clamp(lo, x, hi): lo and hi are scalars or x's shape, all of x's dtype. */
OPTIC_API optic_status optic_graph_clamp(optic_module_t *m, optic_comp_id comp, optic_node_id lo, optic_node_id x,
                                         optic_node_id hi, const char *name, optic_node_id *out);
OPTIC_API optic_status optic_graph_convert(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           optic_dtype dtype, const char *name, optic_node_id *out);
/* is-finite: a floating-point operand; result pred of its shape (false for
 * infinities and NaN). */
OPTIC_API optic_status optic_graph_is_finite(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                             const char *name, optic_node_id *out);
/* bitcast-convert: the operand's bits read as dtype, which must have the
 * operand dtype's element size (XLA also allows other sizes, adding or
 * removing a minor dimension; optic refuses those with UNSUPPORTED). */
OPTIC_API optic_status optic_graph_bitcast_convert(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                   optic_dtype dtype, const char *name, optic_node_id *out);
/* reduce-precision: a floating-point value rounded to mantissa_bits (>= 0,
 * to nearest, ties to even) and an exponent range of exponent_bits (>= 1):
 * exponents out of that range become signed zero or infinity, as XLA does.
 * Result type = operand type. */
OPTIC_API optic_status optic_graph_reduce_precision(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                    int32_t exponent_bits, int32_t mantissa_bits, const char *name,
                                                    optic_node_id *out);

/* broadcast: operand dim i becomes output dim dims[i] (strictly increasing,
 * sizes equal); ndims == operand rank. */
OPTIC_API optic_status optic_graph_broadcast(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                             const optic_shape *shape, const int64_t *dims, int32_t ndims,
                                             const char *name, optic_node_id *out);
/* reshape: same element count, row-major order kept. */
OPTIC_API optic_status optic_graph_reshape(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           const optic_shape *shape, const char *name, optic_node_id *out);
/* bitcast: XLA's reinterpretation of the operand's buffer in another shape.
 * optic's arrays are row-major, so it is a reshape (same dtype and element
 * count) that the cost model counts as free, as XLA does; the HLO importer
 * turns a bitcast between non-default layouts into transposes around it. */
OPTIC_API optic_status optic_graph_bitcast(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           const optic_shape *shape, const char *name, optic_node_id *out);
/* dynamic-slice: a window of `sizes` (operand-rank entries, each in [0,
 * dim]) at start indices given as data: rank integer scalars (or one
 * integer array of shape [rank], XLA's older form). At run time each start
 * is clamped to [0, dim - size], as XLA does, so the window never leaves the
 * operand. */
OPTIC_API optic_status optic_graph_dynamic_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                 const optic_node_id *starts, int32_t n_starts, const int64_t *sizes,
                                                 const char *name, optic_node_id *out);
/* dynamic-update-slice: x with the update (same dtype and rank, no larger)
 * written at the start indices, clamped to [0, dim - update dim]. */
OPTIC_API optic_status optic_graph_dynamic_update_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                        optic_node_id update, const optic_node_id *starts,
                                                        int32_t n_starts, const char *name, optic_node_id *out);
/* gather's dimension numbers (XLA's GatherDimensionNumbers): output dims
 * offset_dims hold the slice's non-collapsed dims; the other output dims are
 * the index array's dims without index_vector_dim (== its rank: every index
 * is a scalar). Index vector entry k is the start of operand dim
 * start_index_map[k]; starts are clamped so the slice of slice_sizes
 * (operand-rank entries) lies inside the operand, as XLA does. */
typedef struct optic_gather_dims {
  int32_t n_offset_dims, n_collapsed, n_start_index_map;
  int64_t offset_dims[OPTIC_MAX_RANK];
  int64_t collapsed_slice_dims[OPTIC_MAX_RANK];
  int64_t start_index_map[OPTIC_MAX_RANK];
  int64_t index_vector_dim;
  int64_t slice_sizes[OPTIC_MAX_RANK];
  /* XLA's batching dims: operand dim operand_batching_dims[i] (slice size
   * <= 1) is indexed by the result's batch position of indices dim
   * start_indices_batching_dims[i] (the two dims have equal sizes). */
  int32_t n_batching;
  int64_t operand_batching_dims[OPTIC_MAX_RANK];
  int64_t start_indices_batching_dims[OPTIC_MAX_RANK];
} optic_gather_dims;
OPTIC_API optic_status optic_graph_gather(optic_module_t *m, optic_comp_id comp, optic_node_id operand,
                                          optic_node_id indices, const optic_gather_dims *dims, const char *name,
                                          optic_node_id *out);
/* scatter's dimension numbers (XLA's ScatterDimensionNumbers): update dims
 * update_window_dims are the window; the operand dims not in
 * inserted_window_dims take them in order (inserted dims have size 1).
 * Index vector entry k is the window start in operand dim
 * scatter_dims_to_operand_dims[k]. */
typedef struct optic_scatter_dims {
  int32_t n_update_window_dims, n_inserted, n_scatter_dims_to_operand_dims;
  int64_t update_window_dims[OPTIC_MAX_RANK];
  int64_t inserted_window_dims[OPTIC_MAX_RANK];
  int64_t scatter_dims_to_operand_dims[OPTIC_MAX_RANK];
  int64_t index_vector_dim;
} optic_scatter_dims;
/* scatter(operand, indices, updates): the operand with each update element
 * combined into its place by to_apply (old value, update) -> new value, in
 * the updates' row-major order (so duplicate indices combine one after
 * another). As XLA does, an update window that does not lie entirely
 * inside the operand is skipped. One operand (XLA's variadic form is not
 * supported). */
OPTIC_API optic_status optic_graph_scatter(optic_module_t *m, optic_comp_id comp, optic_node_id operand,
                                           optic_node_id indices, optic_node_id updates,
                                           const optic_scatter_dims *dims, optic_comp_id to_apply, const char *name,
                                           optic_node_id *out);
/* Reads back a gather's or scatter's dimension numbers (false for other ops). */
OPTIC_API bool optic_node_gather_dims(const optic_module_t *m, optic_node_id id, optic_gather_dims *out);
OPTIC_API bool optic_node_scatter_dims(const optic_module_t *m, optic_node_id id, optic_scatter_dims *out);
/* sort: n operands of one shape (any dtypes) sorted together along
 * `dimension`; comparator takes 2n scalars (lhs and rhs of operand 0, then of
 * operand 1, ...) and returns pred[] "lhs before rhs". The result is the
 * operand's type for n = 1, else a tuple. optic's sort is always stable (a
 * valid order for is_stable=false too). */
OPTIC_API optic_status optic_graph_sort(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                        int64_t dimension, bool is_stable, optic_comp_id comparator,
                                        const char *name, optic_node_id *out);
/* Collectives of a single-replica program (optic's evaluator and runtime
 * run one replica; the pod layer provides real ones). all-gather multiplies
 * `dimension` by shard_count (the replicas per group), reduce-scatter divides
 * it (to_apply combines two scalars). With shard_count 1 both are the
 * identity; with more they parse, print, cost and compile, and evaluating or
 * running them is OPTIC_ERR_UNSUPPORTED naming the op. */
OPTIC_API optic_status optic_graph_all_gather(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                              int64_t dimension, int64_t shard_count, const char *name,
                                              optic_node_id *out);
OPTIC_API optic_status optic_graph_reduce_scatter(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                  int64_t dimension, int64_t shard_count, optic_comp_id to_apply,
                                                  const char *name, optic_node_id *out);
/* collective-permute: n_pairs (source, target) replica pairs. On replica 0
 * the result is the operand when (0, 0) is a pair, zeros when no pair
 * targets 0 (XLA), and UNSUPPORTED when another replica sends to 0. */
OPTIC_API optic_status optic_graph_collective_permute(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                      const int64_t *pairs, int32_t n_pairs, const char *name,
                                                      optic_node_id *out);
/* custom-call: an opaque call of `target` (copied) with the given result
 * type. It parses, prints, costs (XLA counts -1 flops and -1 bytes: unknown)
 * and compiles; evaluating or running it is OPTIC_ERR_UNSUPPORTED naming
 * the target. */
OPTIC_API optic_status optic_graph_custom_call(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs,
                                               int32_t n, const optic_type *result, const char *target,
                                               const char *name, optic_node_id *out);
/* A custom-call's target name (NULL for other instructions). */
OPTIC_API const char *optic_node_custom_call_target(const optic_module_t *m, optic_node_id id);
/* Tokens and host transfers. after-all joins n (>= 0) tokens into one
 * token[] (it runs as nothing). infeed reads a `data` value (an array or a
 * tuple without tokens) from the host after `token`: its result is the
 * tuple (data, token[]). outfeed writes x to the host after `token`: its
 * result is token[]. Both parse, print, cost (XLA: the bytes of every array
 * leaf transferred) and compile; optic has no host transfer queue, so
 * evaluating or running them is OPTIC_ERR_UNSUPPORTED naming the op. */
OPTIC_API optic_status optic_graph_after_all(optic_module_t *m, optic_comp_id comp, const optic_node_id *tokens,
                                             int32_t n, const char *name, optic_node_id *out);
OPTIC_API optic_status optic_graph_infeed(optic_module_t *m, optic_comp_id comp, optic_node_id token,
                                          const optic_type *data, const char *name, optic_node_id *out);
OPTIC_API optic_status optic_graph_outfeed(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           optic_node_id token, const char *name, optic_node_id *out);
/* replica-id / partition-id (partition = true): this replica's (or
 * partition's) number as u32[]. optic runs single-replica, single-partition
 * programs: both are 0 in the evaluator and the runtime. */
OPTIC_API optic_status optic_graph_replica_id(optic_module_t *m, optic_comp_id comp, bool partition,
                                              const char *name, optic_node_id *out);
/* rng-bit-generator's algorithms (XLA's RandomAlgorithm). */
typedef enum optic_rng_algorithm {
  OPTIC_RNG_DEFAULT = 0,
  OPTIC_RNG_THREE_FRY = 1,
  OPTIC_RNG_PHILOX = 2,
} optic_rng_algorithm;
/* rng-bit-generator: from a u64[n] state (n = 2 for three-fry, 2 or 3 for
 * philox, n >= 1 for the default) the tuple (new state, bits) with bits of
 * the integer array type `bits`. It parses, prints, costs (XLA: one
 * transcendental per element of the state and the bits) and compiles;
 * optic does not reproduce XLA's bit streams, so evaluating or running it
 * is OPTIC_ERR_UNSUPPORTED naming the op. */
OPTIC_API optic_status optic_graph_rng_bit_generator(optic_module_t *m, optic_comp_id comp, optic_node_id state,
                                                     optic_rng_algorithm algorithm, const optic_type *bits,
                                                     const char *name, optic_node_id *out);
/* topk: the k largest (or smallest) elements along the last dim and their
 * s32 indices, as the tuple (values, indices). As XLA's TopK decomposition:
 * a stable sort in the float total order (NaN above +inf, -0 below +0),
 * so ties keep the lower index first. */
OPTIC_API optic_status optic_graph_topk(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t k,
                                        bool largest, const char *name, optic_node_id *out);
/* XLA's batch norm ops on f32/f64 with features along feature_index:
 * training (x, scale, offset) -> (y, mean, variance); inference (x, scale,
 * offset, mean, variance) -> y; grad (x, scale, mean, variance, grad_y) ->
 * (grad_x, grad_scale, grad_offset). Statistics in double, rounded once;
 * the variance is biased (XLA's definition). */
OPTIC_API optic_status optic_graph_batch_norm(optic_module_t *m, optic_comp_id comp, optic_opcode op,
                                              const optic_node_id *xs, int32_t n, float epsilon,
                                              int64_t feature_index, const char *name, optic_node_id *out);
/* opt-barrier: its operand (any type) unchanged; passes do not move work
 * across it in XLA. optic keeps it as an alias of the operand. */
OPTIC_API optic_status optic_graph_opt_barrier(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                               const char *name, optic_node_id *out);
/* transpose: output dim i = operand dim perm[i]; perm has operand-rank entries. */
OPTIC_API optic_status optic_graph_transpose(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                             const int64_t *perm, const char *name, optic_node_id *out);
/* slice: per dim 0 <= start <= limit <= size, stride >= 1; output size
 * ceil((limit - start) / stride). Arrays have operand-rank entries. */
OPTIC_API optic_status optic_graph_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                         const int64_t *start, const int64_t *limit, const int64_t *stride,
                                         const char *name, optic_node_id *out);
/* concatenate n >= 1 operands of one dtype and rank along dimension. */
OPTIC_API optic_status optic_graph_concatenate(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs,
                                               int32_t n, int64_t dimension, const char *name, optic_node_id *out);
/* pad: per dim low and high edge padding (may be negative) and interior
 * padding (>= 0) between elements; value is a scalar of x's dtype. */
typedef struct optic_pad_dim {
  int64_t low, high, interior;
} optic_pad_dim;
OPTIC_API optic_status optic_graph_pad(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_node_id value,
                                       const optic_pad_dim *config, const char *name, optic_node_id *out);
/* reverse the listed dims (distinct, in range). */
OPTIC_API optic_status optic_graph_reverse(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           const int64_t *dims, int32_t ndims, const char *name, optic_node_id *out);

/* tuple of n >= 0 operands; get-tuple-element index of a tuple-typed operand. */
OPTIC_API optic_status optic_graph_tuple(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                         const char *name, optic_node_id *out);
OPTIC_API optic_status optic_graph_get_tuple_element(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                                     int64_t index, const char *name, optic_node_id *out);
/* call: callee's parameters must match the operands; result = callee's root
 * type. The callee must have its root set and must not be comp itself. */
OPTIC_API optic_status optic_graph_call(optic_module_t *m, optic_comp_id comp, optic_comp_id callee,
                                        const optic_node_id *xs, int32_t n, const char *name, optic_node_id *out);
/* reduce: n inputs of one shape and n scalar init values; to_apply takes 2n
 * scalars (accumulators first, then values) and returns n scalars (a tuple
 * if n > 1). dims are distinct, in range; output = inputs' shape without
 * dims (a tuple if n > 1). */
OPTIC_API optic_status optic_graph_reduce(optic_module_t *m, optic_comp_id comp, const optic_node_id *inputs,
                                          const optic_node_id *inits, int32_t n, const int64_t *dims,
                                          int32_t ndims, optic_comp_id to_apply, const char *name,
                                          optic_node_id *out);
/* map: n operands of one shape; to_apply takes n scalars of their dtypes and
 * returns one scalar; output = operands' shape with that dtype. */
OPTIC_API optic_status optic_graph_map(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                       optic_comp_id to_apply, const char *name, optic_node_id *out);

/* while: init of any type T; condition takes T and returns pred[]; body
 * takes T and returns T. Result T. */
OPTIC_API optic_status optic_graph_while(optic_module_t *m, optic_comp_id comp, optic_node_id init,
                                         optic_comp_id condition, optic_comp_id body, const char *name,
                                         optic_node_id *out);
/* conditional: selector is pred[] (true runs branch 0, false branch 1; n must
 * be 2) or s32[] (branch i; out of range runs the last branch, as in XLA).
 * Branch i takes operands[i]; all branches return the same type. */
OPTIC_API optic_status optic_graph_conditional(optic_module_t *m, optic_comp_id comp, optic_node_id selector,
                                               const optic_node_id *operands, const optic_comp_id *branches,
                                               int32_t n, const char *name, optic_node_id *out);

/* XLA's fusion kinds. The kind only tells a backend how to emit the fused
 * computation; optic runs every kind as a call of it (kCustom included). */
typedef enum optic_fusion_kind {
  OPTIC_FUSION_LOOP,
  OPTIC_FUSION_INPUT,
  OPTIC_FUSION_OUTPUT,
  OPTIC_FUSION_CUSTOM
} optic_fusion_kind;
/* fusion: runs `fused` (whose parameters match the operands) as one op. */
OPTIC_API optic_status optic_graph_fusion(optic_module_t *m, optic_comp_id comp, optic_fusion_kind kind,
                                          const optic_node_id *xs, int32_t n, optic_comp_id fused, const char *name,
                                          optic_node_id *out);
/* all-reduce of n arrays (a tuple result if n > 1) with the scalar combiner
 * to_apply. Replica groups: group g holds group_sizes[g] ids, listed one
 * group after another in replica_ids; n_groups 0 means one group of all. */
OPTIC_API optic_status optic_graph_all_reduce(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs,
                                              int32_t n, optic_comp_id to_apply, const int32_t *replica_ids,
                                              const int32_t *group_sizes, int32_t n_groups, const char *name,
                                              optic_node_id *out);

/* One spatial dimension of a window (reduce-window, convolution). XLA's
 * defaults: stride 1, padding 0, dilations 1, no reversal. */
typedef struct optic_window_dim {
  int64_t size, stride, pad_low, pad_high, base_dilation, window_dilation;
  bool reversal;
} optic_window_dim;
/* reduce-window: like reduce, with one window dim per input dim; output dim
 * = floor((padded - dilated window) / stride) + 1 where padded =
 * (in - 1) * base_dilation + 1 + pad_low + pad_high and dilated window =
 * (size - 1) * window_dilation + 1. */
OPTIC_API optic_status optic_graph_reduce_window(optic_module_t *m, optic_comp_id comp, const optic_node_id *inputs,
                                                 const optic_node_id *inits, int32_t n,
                                                 const optic_window_dim *window, optic_comp_id to_apply,
                                                 const char *name, optic_node_id *out);

/* dot (XLA dot_general): dimension numbers pair lhs_batch[i] with
 * rhs_batch[i] and lhs_contracting[i] with rhs_contracting[i]; output =
 * batch dims (lhs_batch order), lhs free dims, rhs free dims. Operands f32,
 * f16 or bf16; the result has the operands' dtype (f32 when they differ; the
 * HLO importer takes the written result type, XLA's preferred_element_type). */
OPTIC_API optic_status optic_graph_dot(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                                       const optic_dot_dims *dims, const char *name, optic_node_id *out);

/* convolution (XLA semantics): dim_labels in XLA notation, e.g.
 * "b01f_01io->b01f" (NHWC input, HWIO kernel, NHWC output) or "bf_io->bf";
 * window[s] describes spatial dim s (the digit s in the labels) and its size
 * must equal the kernel's spatial size; base_dilation is XLA's lhs_dilate,
 * window_dilation rhs_dilate. Output shape per XLA's shape inference; errors
 * name the dims ("convolution: input feature dim has size 3 but kernel input
 * feature dim has size 4 (feature_group_count 1)"). */
OPTIC_API optic_status optic_graph_convolution(optic_module_t *m, optic_comp_id comp, optic_node_id lhs,
                                               optic_node_id rhs, const char *dim_labels,
                                               const optic_window_dim *window, int64_t feature_group_count,
                                               int64_t batch_group_count, const char *name, optic_node_id *out);

/* Read access to attributes (NULL / 0 when the opcode has none of that kind). */
OPTIC_API const int64_t *optic_node_dims(const optic_module_t *m, optic_node_id id, int32_t *count);
OPTIC_API optic_compare_dir optic_node_compare_dir(const optic_module_t *m, optic_node_id id);
/* Computations an instruction applies: {to_apply} for call/reduce/map/
 * reduce-window/all-reduce, {condition, body} for while, the branches of a
 * conditional, {fused computation} for fusion. */
OPTIC_API int32_t optic_node_called_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_comp_id optic_node_called(const optic_module_t *m, optic_node_id id, int32_t i);

/* ------------------------------------------------------------ cost model
 * Counts with XLA HloCostAnalysis's rules (see docs/cost-model.md):
 * flops, transcendentals (exp, log, logistic, power, sqrt, rsqrt, tanh count
 * here instead of as flops) and bytes accessed (output + operands by default;
 * 0 for parameter, constant, get-tuple-element; 2 x output for slice; 8 bytes
 * per element for tuples; fusions count only what crosses their boundary).
 * Calls, while (body + condition once), conditional (max over branches),
 * reduce, map, reduce-window and all-reduce use their computations' costs. */
typedef struct optic_cost {
  double flops;
  double transcendentals;
  double bytes_accessed;
} optic_cost;

OPTIC_API optic_status optic_node_cost(const optic_module_t *m, optic_node_id id, optic_cost *out);
/* Sum over every instruction of the computation. */
OPTIC_API optic_status optic_computation_cost(const optic_module_t *m, optic_comp_id comp, optic_cost *out);

/* Prints the module as XLA HLO text into a newly allocated string (caller
 * frees with free()). */
OPTIC_API optic_status optic_module_to_hlo_text(const optic_module_t *m, char **out);


/* ============================================================ optimization passes
 * graph/passes/ (docs/graph-passes.md): the pass manager and the dead code
 * elimination (DCE), common subexpression elimination (CSE), constant
 * folding, exact algebraic simplification and fusion passes. Fusion replaces
 * groups of instructions by `fusion` instructions calling new computations
 * named "fused_computation.N" (kinds loop, input, output). Every pass keeps
 * every value the module computes, bit for bit (IEEE round-to-nearest, no
 * flush-to-zero; a NaN stays a NaN, though a signaling NaN that x*1 would
 * have quieted is passed through as it is), as the reference evaluator
 * (optic_evaluate) defines the values: folding stores what it computes, which
 * a runtime kernel matches within its own documented accuracy. Every pass is
 * deterministic: the same module and options give the same module (and HLO
 * text) every run.
 *
 * Thread safety: optic_graph_optimize mutates the module and must not run
 * concurrently with any other use of it; distinct modules may be optimized
 * on different threads at once. The option and stats structs are plain
 * values owned by the caller. */

typedef enum optic_opt_level {
  OPTIC_OPT_NONE,  /* no pass runs; the module is only validated */
  OPTIC_OPT_BASIC, /* dce and cse: never change what any instruction computes */
  OPTIC_OPT_FULL   /* basic plus constant folding, the exact algebraic simplifier and fusion */
} optic_opt_level;

/* X(NAME, name). Indexes of optimize_options.passes and pass_stats.pass;
 * new passes are appended so indexes stay stable. The manager runs the
 * enabled passes in the order fold, simplify, cse, dce in every round. */
#define OPTIC_PASS_LIST(X) \
  X(SIMPLIFY, "simplify")  \
  X(CSE, "cse")            \
  X(DCE, "dce")            \
  X(FOLD, "fold")          \
  X(FUSION, "fusion")

typedef enum optic_pass {
#define OPTIC_PASS_ENUM_(name, str) OPTIC_PASS_##name,
  OPTIC_PASS_LIST(OPTIC_PASS_ENUM_)
#undef OPTIC_PASS_ENUM_
  OPTIC_PASS_COUNT_
} optic_pass;

/* Room for passes added later without changing the structs' layout. */
#define OPTIC_MAX_PASSES 16

/* "simplify", "cse", "dce", "fold", "fusion"; "invalid" outside the enum. Static strings. */
OPTIC_API const char *optic_pass_name(optic_pass pass);

/* Per-pass override of the level's choice. Zero (BY_LEVEL) follows the level,
 * so a zeroed entry, and every pass added later, does what the level says. */
typedef enum optic_pass_toggle {
  OPTIC_PASS_BY_LEVEL = 0,
  OPTIC_PASS_ENABLE, /* run it even at a level that does not include it */
  OPTIC_PASS_DISABLE
} optic_pass_toggle;

/* Options of optic_graph_optimize. Start from optic_optimize_options_default()
 * (size = sizeof, level FULL, every pass BY_LEVEL, max_rounds 0,
 * fold_max_bytes 1 MiB). The size
 * field lets the struct grow: fields beyond a caller's size take defaults. */
typedef struct optic_optimize_options {
  size_t size;
  optic_opt_level level;
  optic_pass_toggle passes[OPTIC_MAX_PASSES]; /* indexed by optic_pass */
  /* Rounds allowed, counting the last one that must change nothing to prove
   * the fixed point; 0 means 32. */
  int32_t max_rounds;
  /* Constant folding (fold): largest result, in bytes, that is replaced by a
   * constant; 0 means the default, 1 MiB (1 << 20). Evaluation work per
   * instruction is also capped at 16 times this (docs/graph-passes.md). */
  int64_t fold_max_bytes;
  /* Fusion: most instructions (parameters not counted) one fused computation
   * may hold; 0 means 64. A cap below 2 fuses nothing. */
  int32_t max_fusion_size;
} optic_optimize_options;

OPTIC_API optic_optimize_options optic_optimize_options_default(void);

/* What one pass did, summed over the rounds it ran in. */
typedef struct optic_pass_stat {
  int32_t runs;         /* rounds it ran in */
  int64_t removed;      /* instructions removed (dce; fusion: those moved into fused
                         * computations and copied constants left without users) */
  int64_t replaced;     /* instructions whose uses now go to an equal one (cse, simplify, fold;
                         * fusion: group roots whose uses went to their fusion) */
  int64_t added;        /* instructions created (simplify: merged reshapes, transposes;
                         * fold: constants; fusion: fusion instructions) */
  int64_t work;         /* pass-specific units of work: instructions visited plus
                         * operand edges walked (dce), hash-table probes (cse),
                         * constant elements inspected (simplify), instructions
                         * visited, operand edges checked and elements folded
                         * (fold), instructions visited, user edges and operands
                         * examined (fusion); linear in the
                         * module size, which the tests check */
  double seconds;       /* wall time */
} optic_pass_stat;

/* Filled by optic_graph_optimize: set size = sizeof(optic_pass_stats) (or
 * less, for an older layout: only fields that fit are written). */
typedef struct optic_pass_stats {
  size_t size;
  int32_t rounds;                  /* rounds run, including the final unchanged one */
  int64_t instructions_before;     /* live instructions of the required computations */
  int64_t instructions_after;
  double seconds;                  /* wall time of the whole call */
  optic_pass_stat pass[OPTIC_MAX_PASSES]; /* indexed by optic_pass */
} optic_pass_stats;

/* Runs the enabled passes over every computation the entry needs (its own,
 * and those called by instructions its root depends on, transitively), round
 * after round until one round changes nothing. opts may be NULL (defaults),
 * stats may be NULL. Errors:
 *  - INVALID_ARGUMENT: no entry, or a needed computation (the entry or one
 *    that a live instruction calls) has no declared root; bad options. The
 *    module is untouched (this is checked before any pass runs).
 *  - INTERNAL: no fixed point within max_rounds rounds. The module is valid
 *    and means what it meant; the rewrites made so far stay.
 *  - OUT_OF_MEMORY: the module stays valid and equivalent; rewrites made
 *    before the failure stay.
 * Dead instructions of the needed computations are removed only by dce;
 * computations no longer called stay in the module, untouched and not
 * required to be valid. Parameters are never removed. */
OPTIC_API optic_status optic_graph_optimize(optic_module_t *m, const optic_optimize_options *opts,
                                            optic_pass_stats *stats);

/* ------------------------------------------------------------ schedule and buffer assignment
 * (docs/graph-buffers.md). A schedule is a topological order of one
 * computation's live instructions chosen to lower peak memory; a buffer plan
 * places every array result of that computation, by liveness over the
 * schedule, in one arena (offset, size) or marks it as living elsewhere
 * (parameters, constants, outputs). Each computation is planned on its own:
 * computations applied by call/while/conditional/map/reduce/... get their own
 * plans, and a fused computation needs none (a fusion is one op).
 *
 * Both objects copy what they need from the module (ids, offsets), are
 * immutable after creation and safe to read from any number of threads at
 * once. They describe the module as it was when they were made: after the
 * module changes, make them again (plan creation and verification detect a
 * schedule that no longer matches and fail with INVALID_ARGUMENT). The caller
 * owns what a _create returns and frees it with the matching _destroy
 * (NULL-safe). Creating either reads the module only (const): several threads
 * may plan computations of one module concurrently while no one mutates it. */

typedef struct optic_schedule optic_schedule_t;

/* Schedules comp's live instructions: DFS post-order from the root, each
 * instruction's operand subtrees visited in decreasing order of (bytes needed
 * while computing it - bytes it leaves live), Sethi-Ullman's rule; instructions
 * the root does not reach come first, by DFS from each one without users in id
 * order, so the root is last unless one of those uses it. Deterministic;
 * O(n log n). Ids need not be in operand order (an instruction may use a
 * newer one, as after optic_graph_optimize's fusion): the analysis computes
 * a topological order; so do buffer planning and verification. Errors:
 * INVALID_ARGUMENT (bad computation, no root), OVERFLOW, OUT_OF_MEMORY. */
OPTIC_API optic_status optic_schedule_create(const optic_module_t *m, optic_comp_id comp, optic_schedule_t **out);
/* A schedule from the caller's order: n ids, each live instruction of comp
 * exactly once, every operand before its users (else INVALID_ARGUMENT naming
 * the instructions). Its peak is computed as for optic_schedule_create. */
OPTIC_API optic_status optic_schedule_from_order(const optic_module_t *m, optic_comp_id comp,
                                                 const optic_node_id *order, int32_t n, optic_schedule_t **out);
OPTIC_API void optic_schedule_destroy(optic_schedule_t *s);
OPTIC_API optic_comp_id optic_schedule_computation(const optic_schedule_t *s);
/* The order (valid while s lives) and its length. */
OPTIC_API const optic_node_id *optic_schedule_order(const optic_schedule_t *s, int32_t *count);
/* Position of id in the order, or -1 if id is not scheduled here. O(log n). */
OPTIC_API int32_t optic_schedule_position(const optic_schedule_t *s, optic_node_id id);
/* Peak live bytes of the order: the most bytes of arena-resident results
 * (exact sizes; see optic_buffer_kind) live at one step, with an in-place
 * result counted once with the operand whose block it takes. A lower bound
 * on any arena for this order. */
OPTIC_API size_t optic_schedule_peak_bytes(const optic_schedule_t *s);

/* Where one array leaf of an instruction's result lives. */
typedef enum optic_buffer_kind {
  OPTIC_BUFFER_ARENA,     /* bytes [offset, offset + size) of the computation's arena */
  OPTIC_BUFFER_PARAMETER, /* the caller's parameter buffer (source is the parameter) */
  OPTIC_BUFFER_CONSTANT,  /* the constant's own bytes in the module (source is the constant) */
  OPTIC_BUFFER_OUTPUT     /* the caller's buffer for leaf output_leaf of the root's result */
} optic_buffer_kind;

#define OPTIC_BUFFER_ALIGNMENT 64

/* Aliases (tuple, get-tuple-element, reshape) report the slot of the leaf
 * they alias, so equal (kind, source, source_leaf) means the same bytes. */
typedef struct optic_buffer_slot {
  optic_buffer_kind kind;
  size_t offset;             /* ARENA: a multiple of OPTIC_BUFFER_ALIGNMENT; 0 otherwise */
  size_t size;               /* exact bytes of the array (elements x dtype size) */
  optic_node_id source;      /* the instruction whose result defines these bytes */
  int32_t source_leaf;       /* which leaf of source's result (0 for arrays) */
  int32_t output_leaf;       /* OUTPUT: the first root leaf this is; -1 otherwise */
  optic_node_id in_place_of; /* the instruction whose dying block this result took over
                                (same offset and size), or OPTIC_NO_NODE */
} optic_buffer_slot;

/* Totals of a plan. total_bytes = arena + parameters + outputs, the memory an
 * execution of the computation needs beyond the program itself; constants
 * (owned by the module/program, not per execution) are reported apart. Tuple
 * types count their array leaves, never a pointer table. */
typedef struct optic_memory_estimate {
  size_t arena_bytes;
  size_t parameter_bytes;
  size_t output_bytes;
  size_t constant_bytes;
  size_t total_bytes;
} optic_memory_estimate;

typedef struct optic_buffer_plan optic_buffer_plan_t;

/* Assigns buffers for schedule s's computation by liveness over s (best fit
 * from a free list with coalescing, 64-byte alignment, free at last use,
 * in-place reuse by elementwise ops, aliasing for tuple, get-tuple-element and
 * reshape). The plan keeps its own copy of s. Errors: INVALID_ARGUMENT (s does
 * not match the module any more), OVERFLOW, OUT_OF_MEMORY. O(n log n). */
OPTIC_API optic_status optic_buffer_plan_create(const optic_module_t *m, const optic_schedule_t *s,
                                                optic_buffer_plan_t **out);
OPTIC_API void optic_buffer_plan_destroy(optic_buffer_plan_t *p);
/* The schedule the plan follows (owned by the plan; do not destroy it). */
OPTIC_API const optic_schedule_t *optic_buffer_plan_schedule(const optic_buffer_plan_t *p);
/* Arena size: the allocator's high-water mark, a multiple of 64. */
OPTIC_API size_t optic_buffer_plan_arena_bytes(const optic_buffer_plan_t *p);
/* Number of array leaves of id's result (1 for an array, depth-first leaf
 * count for a tuple), 0 if id is not in the plan. */
OPTIC_API int32_t optic_buffer_plan_leaf_count(const optic_buffer_plan_t *p, optic_node_id id);
/* The slot of leaf `leaf` of id's result. INVALID_ARGUMENT if id is not in the
 * plan or leaf is out of range. */
OPTIC_API optic_status optic_buffer_plan_slot(const optic_buffer_plan_t *p, optic_node_id id, int32_t leaf,
                                              optic_buffer_slot *out);
/* Peak memory estimate: arena + parameters + outputs (and constants apart). */
OPTIC_API optic_status optic_buffer_plan_memory(const optic_buffer_plan_t *p, optic_memory_estimate *out);
/* Proves the plan sound against the module: the schedule is a topological
 * order of the computation's live instructions; every slot has the kind,
 * source and size the instruction's type and opcode require (aliases equal
 * their operands' slots); every arena offset is 64-byte aligned and every
 * buffer lies inside the arena; and no two arena buffers live at the same
 * step overlap, except a result that legally took over the block of an
 * operand dying at that op. Liveness is recomputed from the module, not read
 * from the plan. OPTIC_ERR_INTERNAL naming both instructions on a violation
 * (INVALID_ARGUMENT if the module changed). O(n log n). */
OPTIC_API optic_status optic_buffer_plan_verify(const optic_module_t *m, const optic_buffer_plan_t *p);

/* ============================================================ evaluator
 * The reference evaluator (graph/evaluate*.c, docs/graph-evaluate.md): a
 * naive interpreter of a module's computations on host literals. It is the
 * oracle that constant folding, the pass tests and the runtime's tests
 * compare against, so it aims at being obviously right, not fast: f32
 * elementwise ops and convolution run the kernels' naive references
 * (kernels/ref/), everything else plain loops.
 *
 * Thread safety: evaluation only reads the module, so any number of threads
 * may evaluate one module at once as long as nobody changes it. A literal is
 * a plain value owned by whoever created it: distinct literals are
 * independent; one literal may be read by many threads, written by one. */

/* A literal: host data of one optic_type. An array literal owns
 * bytes = elements x dtype size of row-major data (pred: one 0/1 byte per
 * element); a tuple literal owns one literal per element. Opaque: use the
 * accessors. */
typedef struct optic_literal optic_literal;

/* A zero-filled literal of type (arrays or tuples, element types copied).
 * The caller owns *out and frees it with optic_literal_destroy. Errors:
 * INVALID_ARGUMENT (NULL, bad dtype or tuple), OVERFLOW, OUT_OF_MEMORY. */
OPTIC_API optic_status optic_literal_create(const optic_type *type, optic_literal **out);
/* An array literal holding a copy of data (row-major; bytes must equal the
 * array's byte size; data may be NULL for zeros). */
OPTIC_API optic_status optic_literal_create_array(optic_dtype dtype, const optic_shape *shape, const void *data,
                                                  size_t bytes, optic_literal **out);
/* A tuple literal holding deep copies of the n >= 0 elements. */
OPTIC_API optic_status optic_literal_create_tuple(const optic_literal *const *elements, int32_t n,
                                                  optic_literal **out);
/* A deep copy. */
OPTIC_API optic_status optic_literal_clone(const optic_literal *lit, optic_literal **out);
/* Frees lit and its elements. NULL-safe. */
OPTIC_API void optic_literal_destroy(optic_literal *lit);
/* The literal's type (owned by the literal, valid until it is destroyed). */
OPTIC_API const optic_type *optic_literal_type(const optic_literal *lit);
/* An array literal's bytes (NULL for tuples and empty arrays); *bytes (if
 * not NULL) gets their count (0 for tuples). Valid until destroy. */
OPTIC_API const void *optic_literal_data(const optic_literal *lit, size_t *bytes);
OPTIC_API void *optic_literal_mutable_data(optic_literal *lit, size_t *bytes);
/* A tuple literal's element count (0 for arrays) and element i (NULL when
 * out of range; owned by the tuple). */
OPTIC_API int32_t optic_literal_tuple_size(const optic_literal *lit);
OPTIC_API const optic_literal *optic_literal_element(const optic_literal *lit, int32_t i);
/* XLA's literal text: "f32[2,2] {{1, 2}, {3, 4}}", "(s32[] 7, pred[2] {1, 0})".
 * Floats print with 9 (f32) or 17 (f64) significant digits. Returns the
 * length needed, like snprintf. */
OPTIC_API int optic_literal_format(const optic_literal *lit, char *buf, size_t size);

typedef enum optic_literal_match_mode {
  OPTIC_MATCH_BITWISE,   /* every byte equal: NaN payloads and signed zeros count */
  OPTIC_MATCH_NAN_AWARE, /* bitwise, except that any NaN matches any NaN */
  OPTIC_MATCH_TOLERANCE  /* floats: both NaN, or equal (inf == inf, -0 == +0), or
                            |actual - expected| <= abs_tol + rel_tol * |expected|;
                            integers and pred exactly */
} optic_literal_match_mode;
/* True if actual matches expected: equal types and every element matching
 * under mode (abs_tol and rel_tol are read only in TOLERANCE mode). On a
 * mismatch, why (if not NULL) gets a description of the first difference,
 * e.g. "element 3 (index [1,0]): expected 1.5, got 1.50001". */
OPTIC_API bool optic_literal_match(const optic_literal *expected, const optic_literal *actual,
                                   optic_literal_match_mode mode, double abs_tol, double rel_tol, char *why,
                                   size_t why_size);

/* Evaluation options; start from optic_evaluate_options_default(). */
typedef struct optic_evaluate_options {
  size_t size;                  /* sizeof(optic_evaluate_options): lets the struct grow */
  int64_t max_while_iterations; /* a while whose body has run this many times and whose condition
                                   is still true fails with OPTIC_ERR_TIMEOUT; >= 0; default 1,000,000 */
} optic_evaluate_options;
OPTIC_API optic_evaluate_options optic_evaluate_options_default(void);

/* Evaluates computation comp of m on nargs arguments (args[i] is parameter
 * i's value; types must equal the parameters' types) and writes its root's
 * value to *result (the caller owns it; optic_literal_destroy). options may
 * be NULL for the defaults. Only the root's dependencies are evaluated.
 * Semantics per op and dtype: docs/graph-evaluate.md. Errors:
 * INVALID_ARGUMENT (bad ids, no root, wrong argument count, a recursive
 * call), SHAPE_MISMATCH (an argument of the wrong type), UNSUPPORTED (an
 * op/dtype pair the evaluator does not define, named in the message),
 * TIMEOUT (max_while_iterations exceeded), OVERFLOW, OUT_OF_MEMORY. The
 * message names the failing instruction. Nothing is leaked on error and
 * *result is NULL then. */
OPTIC_API optic_status optic_evaluate(const optic_module_t *m, optic_comp_id comp, const optic_literal *const *args,
                                      int32_t nargs, const optic_evaluate_options *options, optic_literal **result);
/* Evaluates the single instruction id on the given operand values (one per
 * operand, types equal to the operands' types), e.g. for constant folding; a
 * constant needs none. Instructions that call computations evaluate them.
 * parameter is INVALID_ARGUMENT (it has no value outside a computation).
 * Errors otherwise as optic_evaluate. */
OPTIC_API optic_status optic_evaluate_node(const optic_module_t *m, optic_node_id id,
                                           const optic_literal *const *operands, int32_t n,
                                           const optic_evaluate_options *options, optic_literal **result);

/* ============================================================ HLO text import
 * (graph/hlo_parse*.c; docs/hlo-text.md). Reads XLA HLO text as printed by
 * XLA (`jax.jit(f).lower(...).as_text(dialect="hlo")`, XLA_FLAGS=--xla_dump_to)
 * or by optic_module_to_hlo_text, into a new module built through the
 * builders above: every shape is inferred and must equal the written one.
 *
 * - The entry is the computation marked ENTRY, else the last one; a
 *   computation's root is its ROOT instruction, else its last. Computations
 *   and instructions may be referenced before their definition.
 * - Instruction names are kept ('%' dropped); a name written again in another
 *   computation becomes name.1, name.2, ... (names are module-unique here).
 * - The header's input_output_alias={ {out}: (param, {index}, may-alias) }
 *   is kept (checked against the entry: leaves of equal type), printed back,
 *   and described by optic_program_output; other header attributes except
 *   entry_computation_layout are skipped.
 * - Layouts: values inside the module are logical and row-major. An entry
 *   parameter whose layout (or entry_computation_layout entry) is not the
 *   default {rank-1,...,0} becomes a parameter of its *physical* shape, the
 *   dims listed major to minor (dims[m2m[rank-1]], ..., dims[m2m[0]]), so the
 *   caller feeds the bytes exactly as XLA would store them; a transpose named
 *   "<param>.logical" recovers the logical value. Likewise a root with such a
 *   layout is followed by a transpose "<root>.physical" that becomes the root,
 *   so the caller receives XLA's byte order. A convolution reads and writes
 *   those physical orders directly (its dim labels are rewritten) instead.
 *   Layouts of every other instruction do not change values and are dropped.
 * - Errors carry "line L:C: " and the offending token or instruction:
 *   INVALID_ARGUMENT (syntax, unknown opcode/computation/operand, bad or
 *   missing attribute), UNSUPPORTED (valid XLA that optic cannot represent:
 *   opcodes such as rng, sort, gather, custom-call; element types other than
 *   f32, f64, s32, u8, pred; dynamic dims; tuple constants), SHAPE_MISMATCH
 *   (a written shape that differs from the inferred one), OVERFLOW (numbers or
 *   shapes too large), OUT_OF_MEMORY. On error *out is NULL.
 * Thread safety: reentrant; distinct calls share nothing. */

/* Parses len bytes of text (not necessarily NUL-terminated). The caller
 * owns *out and frees it with optic_module_destroy. */
OPTIC_API optic_status optic_module_from_hlo_text(const char *text, size_t len, optic_module_t **out);
/* Reads and parses a file; messages start with the path ("m.hlo: line 3:7: ..."),
 * IO for a file that cannot be read. */
OPTIC_API optic_status optic_module_from_hlo_file(const char *path, optic_module_t **out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_GRAPH_H */
