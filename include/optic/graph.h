/* optic graph layer, IR: an XLA-shaped intermediate representation. A
 * module holds computations; a computation holds instructions in SSA form.
 *
 * Contents, in order:
 *   1. opcodes (OPTIC_OPCODE_LIST) and compare directions
 *   2. types (optic_type: an array or a tuple)
 *   3. modules and computations: create, entry, roots, parameters
 *   4. attribute values that builders take and accessors give back
 *      (gather and scatter dimension numbers)
 *   5. instructions, read access: opcode, type, name, operands, users,
 *      constant bytes, attributes, called computations
 *   6. mutation, for passes: replace uses, remove
 *
 * The rest of the graph layer's API lives in headers by concern, each of
 * which includes this one:
 *   <optic/graph_build.h>  builders: one call per instruction, shapes inferred
 *   <optic/passes.h>       cost model, optimization passes, schedule, buffers
 *   <optic/evaluate.h>     literals and the reference evaluator
 *   <optic/hlo.h>          HLO text import and printing
 *   <optic/attrs.h>        typed attribute view (not included here)
 *   <optic/autodiff.h>     reverse-mode gradients (not included here)
 *   <optic/compile.h>      machine models and optic_compile (not included here)
 * So that code written against the single graph header keeps compiling,
 * this header includes the first four at its end: including <optic/graph.h>
 * still gives the whole graph API. New code may include only what it uses.
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
#define OPTIC_OPCODE_LIST(X)                                  \
  X(PARAMETER, "parameter", OTHER)                            \
  X(CONSTANT, "constant", OTHER)                              \
  X(IOTA, "iota", OTHER)                                      \
  X(ADD, "add", BINARY)                                       \
  X(SUBTRACT, "subtract", BINARY)                             \
  X(MULTIPLY, "multiply", BINARY)                             \
  X(DIVIDE, "divide", BINARY)                                 \
  X(POWER, "power", BINARY)                                   \
  X(MAXIMUM, "maximum", BINARY)                               \
  X(MINIMUM, "minimum", BINARY)                               \
  X(AND, "and", BINARY)                                       \
  X(OR, "or", BINARY)                                         \
  X(NEGATE, "negate", UNARY)                                  \
  X(ABS, "abs", UNARY)                                        \
  X(EXPONENTIAL, "exponential", UNARY)                        \
  X(LOG, "log", UNARY)                                        \
  X(SQRT, "sqrt", UNARY)                                      \
  X(RSQRT, "rsqrt", UNARY)                                    \
  X(TANH, "tanh", UNARY)                                      \
  X(LOGISTIC, "logistic", UNARY)                              \
  X(SIGN, "sign", UNARY)                                      \
  X(FLOOR, "floor", UNARY)                                    \
  X(CEIL, "ceil", UNARY)                                      \
  X(NOT, "not", UNARY)                                        \
  X(ERF, "erf", UNARY)                                        \
  X(LOG_PLUS_ONE, "log-plus-one", UNARY)                      \
  X(EXPONENTIAL_MINUS_ONE, "exponential-minus-one", UNARY)    \
  X(SINE, "sine", UNARY)                                      \
  X(COSINE, "cosine", UNARY)                                  \
  X(TAN, "tan", UNARY)                                        \
  X(CBRT, "cbrt", UNARY)                                      \
  X(ROUND_NEAREST_AFZ, "round-nearest-afz", UNARY)            \
  X(ROUND_NEAREST_EVEN, "round-nearest-even", UNARY)          \
  X(POPCNT, "popcnt", UNARY)                                  \
  X(COUNT_LEADING_ZEROS, "count-leading-zeros", UNARY)        \
  X(ATAN2, "atan2", BINARY)                                   \
  X(REMAINDER, "remainder", BINARY)                           \
  X(XOR, "xor", BINARY)                                       \
  X(SHIFT_LEFT, "shift-left", BINARY)                         \
  X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", BINARY)       \
  X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", BINARY) \
  X(IS_FINITE, "is-finite", ELEMENTWISE)                      \
  X(REDUCE_PRECISION, "reduce-precision", ELEMENTWISE)        \
  X(BITCAST_CONVERT, "bitcast-convert", ELEMENTWISE)          \
  X(COMPARE, "compare", ELEMENTWISE)                          \
  X(SELECT, "select", ELEMENTWISE)                            \
  X(CLAMP, "clamp", ELEMENTWISE)                              \
  X(CONVERT, "convert", ELEMENTWISE)                          \
  X(COPY, "copy", OTHER)                                      \
  X(BROADCAST, "broadcast", OTHER)                            \
  X(RESHAPE, "reshape", OTHER)                                \
  X(BITCAST, "bitcast", OTHER)                                \
  X(TRANSPOSE, "transpose", OTHER)                            \
  X(SLICE, "slice", OTHER)                                    \
  X(CONCATENATE, "concatenate", OTHER)                        \
  X(PAD, "pad", OTHER)                                        \
  X(REVERSE, "reverse", OTHER)                                \
  X(REDUCE, "reduce", OTHER)                                  \
  X(REDUCE_WINDOW, "reduce-window", OTHER)                    \
  X(MAP, "map", OTHER)                                        \
  X(DOT, "dot", OTHER)                                        \
  X(CONVOLUTION, "convolution", OTHER)                        \
  X(TUPLE, "tuple", OTHER)                                    \
  X(GET_TUPLE_ELEMENT, "get-tuple-element", OTHER)            \
  X(CALL, "call", OTHER)                                      \
  X(WHILE, "while", OTHER)                                    \
  X(CONDITIONAL, "conditional", OTHER)                        \
  X(FUSION, "fusion", OTHER)                                  \
  X(ALL_REDUCE, "all-reduce", OTHER)                          \
  X(DYNAMIC_SLICE, "dynamic-slice", OTHER)                    \
  X(DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", OTHER)      \
  X(OPT_BARRIER, "opt-barrier", OTHER)                        \
  X(GATHER, "gather", OTHER)                                  \
  X(SCATTER, "scatter", OTHER)                                \
  X(SORT, "sort", OTHER)                                      \
  X(ALL_GATHER, "all-gather", OTHER)                          \
  X(REDUCE_SCATTER, "reduce-scatter", OTHER)                  \
  X(COLLECTIVE_PERMUTE, "collective-permute", OTHER)          \
  X(CUSTOM_CALL, "custom-call", OTHER)                        \
  X(TOPK, "topk", OTHER)                                      \
  X(BATCH_NORM_TRAINING, "batch-norm-training", OTHER)        \
  X(BATCH_NORM_INFERENCE, "batch-norm-inference", OTHER)      \
  X(BATCH_NORM_GRAD, "batch-norm-grad", OTHER)                \
  X(AFTER_ALL, "after-all", OTHER)                            \
  X(INFEED, "infeed", OTHER)                                  \
  X(OUTFEED, "outfeed", OTHER)                                \
  X(RNG_BIT_GENERATOR, "rng-bit-generator", OTHER)            \
  X(REPLICA_ID, "replica-id", OTHER)                          \
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

/* ------------------------------------------------------------ attribute values
 * Plain values: builders copy them in, accessors copy them out. */

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

/* ------------------------------------------------------------ instructions: read access
 * Pointers returned stay valid until the module is changed or destroyed. */

OPTIC_API optic_opcode optic_node_opcode(const optic_module_t *m, optic_node_id id);
OPTIC_API const optic_type *optic_node_type(const optic_module_t *m, optic_node_id id);
OPTIC_API const char *optic_node_name(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_comp_id optic_node_computation(const optic_module_t *m, optic_node_id id);
OPTIC_API int32_t optic_node_operand_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_node_id optic_node_operand(const optic_module_t *m, optic_node_id id, int32_t i);
/* The computation's live instructions in creation order (operands always
 * before their users). Reads only, so it works on a const module (such as
 * optic_program_module's) and from several threads at once. The pointer is
 * valid until the module changes. */
OPTIC_API const optic_node_id *optic_computation_instructions(const optic_module_t *m, optic_comp_id comp,
                                                              int32_t *count);
/* Users: instructions that take id as an operand (each listed once). */
OPTIC_API int32_t optic_node_user_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_node_id optic_node_user(const optic_module_t *m, optic_node_id id, int32_t i);
/* Read access to a constant's bytes (NULL for other opcodes). */
OPTIC_API const void *optic_node_constant_data(const optic_module_t *m, optic_node_id id, size_t *bytes);
/* Read access to attributes (NULL / 0 when the opcode has none of that kind). */
OPTIC_API const int64_t *optic_node_dims(const optic_module_t *m, optic_node_id id, int32_t *count);
OPTIC_API optic_compare_dir optic_node_compare_dir(const optic_module_t *m, optic_node_id id);
/* Computations an instruction applies: {to_apply} for call/reduce/map/
 * reduce-window/all-reduce, {condition, body} for while, the branches of a
 * conditional, {fused computation} for fusion. */
OPTIC_API int32_t optic_node_called_count(const optic_module_t *m, optic_node_id id);
OPTIC_API optic_comp_id optic_node_called(const optic_module_t *m, optic_node_id id, int32_t i);
/* Reads back a gather's or scatter's dimension numbers (false for other ops). */
OPTIC_API bool optic_node_gather_dims(const optic_module_t *m, optic_node_id id, optic_gather_dims *out);
OPTIC_API bool optic_node_scatter_dims(const optic_module_t *m, optic_node_id id, optic_scatter_dims *out);
/* A custom-call's target name (NULL for other instructions). */
OPTIC_API const char *optic_node_custom_call_target(const optic_module_t *m, optic_node_id id);

/* ------------------------------------------------------------ mutation
 * For passes. Every operand edge and user list stays in sync. */

/* Every use of old (operands of its users, and its computation's root) now
 * refers to new, which must be in the same computation with an equal type.
 * old keeps existing with no users (remove it, or let DCE do so); if new
 * itself uses old, that use stays. The caller guarantees new does not depend
 * on any other user of old (that would make a cycle; it is not checked). */
OPTIC_API optic_status optic_node_replace_all_uses(optic_module_t *m, optic_node_id old_id, optic_node_id new_id);
/* Removes an instruction that has no users and is neither a root nor a
 * parameter. Its id is never reused; accessors treat it as nonexistent.
 * The id leaves its computation's instruction list at once (so reading the
 * list never writes): O(1) when removing oldest first or newest first, at
 * worst O(instructions of the computation). */
OPTIC_API optic_status optic_node_remove(optic_module_t *m, optic_node_id id);

#ifdef __cplusplus
}
#endif

/* The graph API by concern (see the top of this file). */
#include <optic/graph_build.h>
#include <optic/passes.h>
#include <optic/evaluate.h>
#include <optic/hlo.h>

#endif /* OPTIC_GRAPH_H */
