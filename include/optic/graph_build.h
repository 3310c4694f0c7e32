/* optic graph layer, builders: one call per instruction. Every builder
 * checks its operands and infers the result type at once, returning the new
 * instruction's id or an error with a message naming the op, operand and
 * dimensions. The IR they build, and the accessors that read it back, are in
 * <optic/graph.h>.
 *
 * Contents, in order:
 *   1. parameters, constants, iota
 *   2. elementwise: unary, binary, compare, select, clamp, convert,
 *      is-finite, bitcast-convert, reduce-precision
 *   3. shape and data movement: broadcast, reshape, bitcast, dynamic-slice,
 *      dynamic-update-slice, gather, scatter, sort
 *   4. collectives, custom-call, tokens and host transfers, replica-id,
 *      rng-bit-generator, topk, batch norm, opt-barrier
 *   5. layout: transpose, slice, concatenate, pad, reverse
 *   6. structure and control flow: tuple, get-tuple-element, call, reduce,
 *      map, while, conditional, fusion, all-reduce
 *   7. windows, dot and convolution: reduce-window, dot, convolution
 *
 * Thread safety: as the module (<optic/graph.h>): one thread at a time. */
#ifndef OPTIC_GRAPH_BUILD_H
#define OPTIC_GRAPH_BUILD_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

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
                                            const optic_shape *shape, const void *data, size_t bytes, const char *name,
                                            optic_node_id *out);
OPTIC_API optic_status optic_graph_iota(optic_module_t *m, optic_comp_id comp, optic_dtype dtype,
                                        const optic_shape *shape, int64_t iota_dimension, const char *name,
                                        optic_node_id *out);

/* ------------------------------------------------------------ elementwise */

/* Elementwise unary: negate, abs, exponential, log, sqrt, rsqrt, tanh,
 * logistic, sign, floor, ceil, erf, log-plus-one, exponential-minus-one,
 * sine, cosine, tan, cbrt, round-nearest-afz, round-nearest-even (floating
 * point; negate/abs/sign also s32), not (pred and integers), popcnt,
 * count-leading-zeros (integers), copy (any). Result type = operand type. */
OPTIC_API optic_status optic_graph_unary(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x,
                                         const char *name, optic_node_id *out);
/* Elementwise binary: add, subtract, multiply, divide, power, maximum,
 * minimum, remainder (numeric), atan2 (floating point), and, or, xor (pred
 * and integers), shift-left, shift-right-logical, shift-right-arithmetic
 * (integers; XLA's rule: a shift by the bit width or more, the amount read
 * as unsigned, gives 0, or the sign in every bit for the arithmetic right
 * shift). Operands must have the same shape and dtype (XLA broadcasts
 * explicitly). */
OPTIC_API optic_status optic_graph_binary(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id a,
                                          optic_node_id b, const char *name, optic_node_id *out);
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
OPTIC_API optic_status optic_graph_convert(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_dtype dtype,
                                           const char *name, optic_node_id *out);
/* is-finite: a floating-point operand; result pred of its shape (false for
 * infinities and NaN). */
OPTIC_API optic_status optic_graph_is_finite(optic_module_t *m, optic_comp_id comp, optic_node_id x, const char *name,
                                             optic_node_id *out);
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

/* ------------------------------------------------------------ shape and data movement */

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
OPTIC_API optic_status optic_graph_gather(optic_module_t *m, optic_comp_id comp, optic_node_id operand,
                                          optic_node_id indices, const optic_gather_dims *dims, const char *name,
                                          optic_node_id *out);
/* scatter(operand, indices, updates): the operand with each update element
 * combined into its place by to_apply (old value, update) -> new value, in
 * the updates' row-major order (so duplicate indices combine one after
 * another). As XLA does, an update window that does not lie entirely
 * inside the operand is skipped. One operand (XLA's variadic form is not
 * supported). */
OPTIC_API optic_status optic_graph_scatter(optic_module_t *m, optic_comp_id comp, optic_node_id operand,
                                           optic_node_id indices, optic_node_id updates, const optic_scatter_dims *dims,
                                           optic_comp_id to_apply, const char *name, optic_node_id *out);
/* sort: n operands of one shape (any dtypes) sorted together along
 * `dimension`; comparator takes 2n scalars (lhs and rhs of operand 0, then of
 * operand 1, ...) and returns pred[] "lhs before rhs". The result is the
 * operand's type for n = 1, else a tuple. optic's sort is always stable (a
 * valid order for is_stable=false too). */
OPTIC_API optic_status optic_graph_sort(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                        int64_t dimension, bool is_stable, optic_comp_id comparator, const char *name,
                                        optic_node_id *out);

/* ------------------------------------------------------------ collectives, custom-call, tokens, rng, topk, batch norm */

/* Collectives of a single-replica program (optic's evaluator and runtime
 * run one replica; the pod layer provides real ones). all-gather multiplies
 * `dimension` by shard_count (the replicas per group), reduce-scatter divides
 * it (to_apply combines two scalars). With shard_count 1 both are the
 * identity; with more they parse, print, cost and compile, and evaluating or
 * running them is OPTIC_ERR_UNSUPPORTED naming the op. */
OPTIC_API optic_status optic_graph_all_gather(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t dimension,
                                              int64_t shard_count, const char *name, optic_node_id *out);
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
OPTIC_API optic_status optic_graph_outfeed(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_node_id token,
                                           const char *name, optic_node_id *out);
/* replica-id / partition-id (partition = true): this replica's (or
 * partition's) number as u32[]. optic runs single-replica, single-partition
 * programs: both are 0 in the evaluator and the runtime. */
OPTIC_API optic_status optic_graph_replica_id(optic_module_t *m, optic_comp_id comp, bool partition, const char *name,
                                              optic_node_id *out);
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
OPTIC_API optic_status optic_graph_topk(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t k, bool largest,
                                        const char *name, optic_node_id *out);
/* XLA's batch norm ops on f32/f64 with features along feature_index:
 * training (x, scale, offset) -> (y, mean, variance); inference (x, scale,
 * offset, mean, variance) -> y; grad (x, scale, mean, variance, grad_y) ->
 * (grad_x, grad_scale, grad_offset). Statistics in double, rounded once;
 * the variance is biased (XLA's definition). */
OPTIC_API optic_status optic_graph_batch_norm(optic_module_t *m, optic_comp_id comp, optic_opcode op,
                                              const optic_node_id *xs, int32_t n, float epsilon, int64_t feature_index,
                                              const char *name, optic_node_id *out);
/* opt-barrier: its operand (any type) unchanged; passes do not move work
 * across it in XLA. optic keeps it as an alias of the operand. */
OPTIC_API optic_status optic_graph_opt_barrier(optic_module_t *m, optic_comp_id comp, optic_node_id x, const char *name,
                                               optic_node_id *out);

/* ------------------------------------------------------------ layout */

/* transpose: output dim i = operand dim perm[i]; perm has operand-rank entries. */
OPTIC_API optic_status optic_graph_transpose(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                             const int64_t *perm, const char *name, optic_node_id *out);
/* slice: per dim 0 <= start <= limit <= size, stride >= 1; output size
 * ceil((limit - start) / stride). Arrays have operand-rank entries. */
OPTIC_API optic_status optic_graph_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x, const int64_t *start,
                                         const int64_t *limit, const int64_t *stride, const char *name,
                                         optic_node_id *out);
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
OPTIC_API optic_status optic_graph_reverse(optic_module_t *m, optic_comp_id comp, optic_node_id x, const int64_t *dims,
                                           int32_t ndims, const char *name, optic_node_id *out);

/* ------------------------------------------------------------ structure and control flow */

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
                                          const optic_node_id *inits, int32_t n, const int64_t *dims, int32_t ndims,
                                          optic_comp_id to_apply, const char *name, optic_node_id *out);
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
                                               const optic_node_id *operands, const optic_comp_id *branches, int32_t n,
                                               const char *name, optic_node_id *out);

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
OPTIC_API optic_status optic_graph_all_reduce(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                              optic_comp_id to_apply, const int32_t *replica_ids,
                                              const int32_t *group_sizes, int32_t n_groups, const char *name,
                                              optic_node_id *out);

/* ------------------------------------------------------------ windows, dot and convolution */

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
                                                 const optic_node_id *inits, int32_t n, const optic_window_dim *window,
                                                 optic_comp_id to_apply, const char *name, optic_node_id *out);

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

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_GRAPH_BUILD_H */
