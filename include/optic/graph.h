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

/* X(NAME, xla_name). The names are XLA's opcode spellings. */
#define OPTIC_OPCODE_LIST(X)                 \
  X(PARAMETER, "parameter")                  \
  X(CONSTANT, "constant")                    \
  X(IOTA, "iota")                            \
  X(ADD, "add")                              \
  X(SUBTRACT, "subtract")                    \
  X(MULTIPLY, "multiply")                    \
  X(DIVIDE, "divide")                        \
  X(POWER, "power")                          \
  X(MAXIMUM, "maximum")                      \
  X(MINIMUM, "minimum")                      \
  X(AND, "and")                              \
  X(OR, "or")                                \
  X(NEGATE, "negate")                        \
  X(ABS, "abs")                              \
  X(EXPONENTIAL, "exponential")              \
  X(LOG, "log")                              \
  X(SQRT, "sqrt")                            \
  X(RSQRT, "rsqrt")                          \
  X(TANH, "tanh")                            \
  X(LOGISTIC, "logistic")                    \
  X(SIGN, "sign")                            \
  X(FLOOR, "floor")                          \
  X(CEIL, "ceil")                            \
  X(NOT, "not")                              \
  X(COMPARE, "compare")                      \
  X(SELECT, "select")                        \
  X(CLAMP, "clamp")                          \
  X(CONVERT, "convert")                      \
  X(COPY, "copy")                            \
  X(BROADCAST, "broadcast")                  \
  X(RESHAPE, "reshape")                      \
  X(TRANSPOSE, "transpose")                  \
  X(SLICE, "slice")                          \
  X(CONCATENATE, "concatenate")              \
  X(PAD, "pad")                              \
  X(REVERSE, "reverse")                      \
  X(REDUCE, "reduce")                        \
  X(REDUCE_WINDOW, "reduce-window")          \
  X(MAP, "map")                              \
  X(DOT, "dot")                              \
  X(CONVOLUTION, "convolution")              \
  X(TUPLE, "tuple")                          \
  X(GET_TUPLE_ELEMENT, "get-tuple-element")  \
  X(CALL, "call")                            \
  X(WHILE, "while")                          \
  X(CONDITIONAL, "conditional")              \
  X(FUSION, "fusion")                        \
  X(ALL_REDUCE, "all-reduce")

typedef enum optic_opcode {
#define OPTIC_OPCODE_ENUM_(name, str) OPTIC_OP_##name,
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
 * NULL (a unique name is made from the opcode, "add.3"). Errors:
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
 * logistic, sign, floor, ceil (floating point; negate/abs/sign also s32), not
 * (pred, s32, u8), copy (any). Result type = operand type. */
OPTIC_API optic_status optic_graph_unary(optic_module_t *m, optic_comp_id comp, optic_opcode op,
                                         optic_node_id x, const char *name, optic_node_id *out);
/* Elementwise binary: add, subtract, multiply, divide, power, maximum,
 * minimum (numeric), and, or (pred and integers). Operands must have the same
 * shape and dtype (XLA broadcasts explicitly). */
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

/* broadcast: operand dim i becomes output dim dims[i] (strictly increasing,
 * sizes equal); ndims == operand rank. */
OPTIC_API optic_status optic_graph_broadcast(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                             const optic_shape *shape, const int64_t *dims, int32_t ndims,
                                             const char *name, optic_node_id *out);
/* reshape: same element count, row-major order kept. */
OPTIC_API optic_status optic_graph_reshape(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                           const optic_shape *shape, const char *name, optic_node_id *out);
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

typedef enum optic_fusion_kind { OPTIC_FUSION_LOOP, OPTIC_FUSION_INPUT, OPTIC_FUSION_OUTPUT } optic_fusion_kind;
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
 * batch dims (lhs_batch order), lhs free dims, rhs free dims. f32 only. */
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
