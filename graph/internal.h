/* Internal: the module's storage. Instructions live in one growable array
 * indexed by id; each keeps its operands and its users (both directions are
 * updated together by graph/module.c, the only code that edits them).
 * Attribute storage is shared: `ints` holds the opcode's integer attributes:
 *   parameter: {number}          iota: {iota_dimension}     concatenate: {dim}
 *   broadcast: dimensions        transpose: permutation     reverse, reduce: dims
 *   slice: start[r] limit[r] stride[r] (three blocks of rank entries)
 *   pad: (low, high, interior) per dim     get-tuple-element: {index}
 *   fusion: {kind}    all-reduce: {n_groups, sizes[n_groups], ids...}
 *   dynamic-slice: slice sizes (rank entries)    sort: {dimension, is_stable}
 *   all-gather, reduce-scatter: {dimension, shard_count}
 *   collective-permute: (source, target) pairs    custom-call: data = target name
 *   rng-bit-generator: {algorithm}
 *   topk: {k, largest}    batch-norm-*: {feature_index, epsilon's f32 bits}
 *   reduce-window: per dim (size, stride, pad_low, pad_high, base_dilation,
 *                  window_dilation, reversal) = 7 entries
 *   conditional: {1 if the selector is pred, else 0}
 *   dot: {batch count nb, contracting count nc, lhs_batch[nb], rhs_batch[nb],
 *         lhs_contracting[nc], rhs_contracting[nc]}
 *   convolution: {nspatial, feature_group_count, batch_group_count, in_batch,
 *                 in_feature, k_in, k_out, out_batch, out_feature, then per
 *                 spatial dim (in, kernel, out positions), then per spatial
 *                 dim the 7 window entries as in reduce-window}
 * Outside graph/, attributes are read through optic_node_attrs
 * (include/optic/attrs.h, decoded in graph/attrs.c): keep it in step with
 * any change here. Never include from outside graph/. */
#ifndef OPTIC_GRAPH_INTERNAL_H
#define OPTIC_GRAPH_INTERNAL_H

#include <optic/graph.h>
#include <optic/compile.h>

#include "core/error.h"

/* Most branches a conditional may have. */
#define OPTIC_MAX_CALLS 64

typedef struct optic_instr {
  optic_opcode op;
  optic_comp_id comp;
  bool removed;    /* by optic_node_remove: the id stays reserved, nothing refers to it */
  optic_type type; /* tuple elements deep-owned */
  /* Edges: operand slot k is listed in operands[k]'s user list once per
   * (user, operand) pair, by the first slot that takes it; user_pos[k] is
   * that entry's index in operands[k]'s users, -1 for later slots of the same
   * operand. users[u] is listed by slot user_slot[u] of that user. The two
   * back indices make adding and removing an edge O(1): removal swaps the
   * last entry into the hole and fixes the moved entry's user_pos, so user
   * lists are in no particular order (passes must not depend on it). */
  optic_node_id *operands; /* n_operands ids, then user_pos (one allocation) */
  int32_t *user_pos;       /* points into the operands allocation */
  int32_t n_operands;
  optic_node_id *users; /* cap_users ids, then user_slot (one allocation) */
  int32_t *user_slot;   /* parallel to users; points into the users allocation */
  int32_t n_users, cap_users;
  const char *name; /* owned by the module's name set */
  /* attributes */
  int64_t *ints; /* per opcode: dims, perm, slice start|limit|stride, pad low|high|interior, ... */
  int32_t n_ints;
  optic_compare_dir cmp;
  /* Computations this instruction applies: call/reduce/map/reduce-window/
   * all-reduce: {to_apply}; while: {condition, body}; conditional: branches;
   * fusion: {fused computation}. */
  optic_comp_id *calls; /* malloc'd, n_calls entries (NULL when 0): kept out of line so records stay small */
  int32_t n_calls;
  void *data; /* constant bytes */
  size_t data_bytes;
} optic_instr;

typedef struct optic_computation {
  char *name;
  optic_node_id *instrs; /* creation order; may hold removed ids until compacted */
  int32_t n_instrs, cap_instrs;
  /* instrs starts `head` ids into its allocation (optic_node_remove drops an
   * id near the front by moving the list's start): free instrs - head; the
   * capacity counts from there. */
  int32_t head;
  bool has_removed;
  optic_node_id *params; /* by parameter number; OPTIC_NO_NODE for gaps */
  int32_t n_params, cap_params;
  optic_node_id root;
} optic_computation;

typedef struct optic_name_set {
  char **slots;
  size_t cap, count;
} optic_name_set;

/* One entry of HLO's input_output_alias: output leaf out_path of the entry's
 * root may reuse (donate) the buffer of parameter `param` at param_path. */
typedef struct graph_io_alias {
  int32_t out_path[OPTIC_MAX_RANK], out_len;
  int32_t param;
  int32_t param_path[OPTIC_MAX_RANK], param_len;
  bool must; /* must-alias (else may-alias) */
} graph_io_alias;

struct optic_module {
  char *name;
  graph_io_alias *aliases; /* graph/io_alias.c; checked against the entry when set */
  int32_t n_aliases;
  optic_instr *instrs;
  int32_t n_instrs, cap_instrs;
  optic_computation *comps;
  int32_t n_comps, cap_comps;
  optic_comp_id entry;
  optic_name_set names;      /* instruction names, unique in the module */
  optic_name_set comp_names; /* computation names: O(1) uniqueness check (fusion adds many) */
};

/* A prototype of the instruction a builder wants to add: the builder fills
 * op, type and attributes; graph_add_instr validates ids, copies everything
 * into the module and links users. Takes ownership of nothing. */
typedef struct optic_instr_proto {
  optic_opcode op;
  optic_type type;
  const optic_node_id *operands;
  int32_t n_operands;
  const int64_t *ints;
  int32_t n_ints;
  optic_compare_dir cmp;
  const optic_comp_id *calls;
  int32_t n_calls;
  const void *data;
  size_t data_bytes;
  int32_t param_number; /* parameters only */
} optic_instr_proto;

static inline optic_instr_proto graph_proto(optic_opcode op) {
  optic_instr_proto p = {.op = op};
  return p;
}

optic_status graph_add_instr(optic_module_t *m, optic_comp_id comp, const optic_instr_proto *p, const char *name,
                             optic_node_id *out);

/* Checks that id is an instruction of comp; `what` names it in the message
 * ("add: operand 1"). */
optic_status graph_check_operand(const optic_module_t *m, optic_comp_id comp, optic_node_id id, const char *op,
                                 int32_t index);
optic_status graph_check_comp(const optic_module_t *m, optic_comp_id comp, const char *op);
/* An opcode's class, from the kind column of OPTIC_OPCODE_LIST
 * (include/optic/graph.h), the only list of them: adding an opcode there
 * classifies it everywhere. */
typedef enum graph_opcode_kind {
  GRAPH_OPCODE_OTHER,
  GRAPH_OPCODE_UNARY,      /* elementwise arithmetic/logic on one operand (not copy) */
  GRAPH_OPCODE_BINARY,     /* elementwise arithmetic/logic on two operands */
  GRAPH_OPCODE_ELEMENTWISE /* compare, select, clamp, convert */
} graph_opcode_kind;
/* GRAPH_OPCODE_OTHER outside the enum. */
graph_opcode_kind graph_opcode_kind_of(optic_opcode op);
/* True for XLA's elementwise opcodes: every kind but OTHER (arithmetic and
 * logic, compare, select, clamp and convert; not copy or layout ops). What
 * the cost model, fusion and the evaluator share. */
bool graph_opcode_is_elementwise(optic_opcode op);
/* optic_machine_estimate_ns with the cache tier (cache, last-level cache,
 * DRAM) chosen by footprint_bytes instead of the op's own bytes: for an op
 * that reads part of a larger array, which lives where an array of its size
 * does. */
double graph_machine_estimate_at_ns(const optic_machine *m, const optic_cost *cost, double footprint_bytes);
/* The operand's array type, or an error if it is missing or a tuple. */
optic_status graph_array_operand(const optic_module_t *m, optic_comp_id comp, optic_node_id id, const char *op,
                                 int32_t index, const optic_type **t);
/* The live instruction with this id, or NULL (no such id, or removed). */
const optic_instr *graph_instr(const optic_module_t *m, optic_node_id id);
/* Drops removed ids from a computation's instruction list. */
void graph_compact(optic_module_t *m, optic_comp_id comp);
/* graph_compact of every computation. Every public call that removes
 * instructions ends with its computations compact, so the const accessor
 * optic_computation_instructions never has to compact on read. */
void graph_compact_all(optic_module_t *m);
/* For passes: comp's instruction list after compacting it (NULL and 0 for a
 * bad comp). Valid until the module changes, graph_node_remove aside. */
const optic_node_id *graph_instructions(optic_module_t *m, optic_comp_id comp, int32_t *count);
/* optic_node_remove without the compaction: O(operands); the id stays in
 * its computation's list, marked removed, until graph_compact (or
 * graph_instructions) runs. Passes remove many instructions this way. */
optic_status graph_node_remove(optic_module_t *m, optic_node_id id);

/* Checks callee's existence, that it is not comp, has a root and takes
 * exactly the n parameter types given (shared by call-like builders). */
optic_status graph_check_callee(const optic_module_t *m, optic_comp_id comp, optic_comp_id callee, const char *op,
                                const optic_type *params, int32_t n);
/* The combiner's root must be one scalar of dtypes[0] (n == 1) or an
 * n-tuple of scalars of the given dtypes. */
optic_status graph_check_scalar_root(const optic_module_t *m, optic_comp_id callee, const char *op,
                                     const optic_dtype *dtypes, int32_t n);
/* Output size of one windowed dimension (reduce-window, convolution) with
 * XLA's formula; validates the window (size >= 1, stride >= 1, dilations
 * >= 1, padded input not smaller than the dilated window is allowed to give 0). */
optic_status graph_window_output_size(const char *op, int32_t dim, int64_t in, const optic_window_dim *w, int64_t *out);
/* Rebuilds the kernels' convolution descriptor from a convolution
 * instruction's attributes and operand shapes. */
struct optic_conv_desc;
/* Rebuilds a dot instruction's dimension numbers from its attributes. */
void graph_dot_dims(const optic_instr *in, optic_dot_dims *d);
/* dot and convolution with the result dtype as written (XLA's
 * preferred_element_type); OPTIC_DTYPE_INVALID: the operands' dtype when they
 * agree, else f32. Operands and result: f32, f16 or bf16 (else UNSUPPORTED). */
optic_status graph_contraction_dtype(const char *op, optic_dtype l, optic_dtype r, optic_dtype *result);
optic_status graph_dot_typed(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                             const optic_dot_dims *dims, optic_dtype result, const char *name, optic_node_id *out);
optic_status graph_convolution_typed(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                                     const char *dim_labels, const optic_window_dim *window,
                                     int64_t feature_group_count, int64_t batch_group_count, optic_dtype result,
                                     const char *name, optic_node_id *out);
void graph_conv_desc(const optic_module_t *m, const optic_instr *in, struct optic_conv_desc *d);
/* A convolution's attributes in their public form (graph/attrs.c). */
struct optic_attrs_convolution;
void graph_conv_attrs(const optic_instr *in, struct optic_attrs_convolution *c);
/* XLA's convolution valid(d) for one spatial dim (graph/cost_window.c): the
 * (kernel index, output index) pairs whose input position is a real input
 * element, counted in closed form (O(log) time for any window size). */
optic_status graph_conv_valid_pairs(int64_t in, int64_t k_size, int64_t out, int64_t stride, int64_t pad_lo,
                                    int64_t ldil, int64_t rdil, double *count);
const optic_type *graph_root_type(const optic_module_t *m, optic_comp_id c);
/* Instructions passes must keep even without users and never fold:
 * collectives and custom-call (graph/build_collective.c). */
bool graph_opcode_has_effect(optic_opcode op);
/* infeed and outfeed (graph/build_io.c). */
bool graph_opcode_is_host_transfer(optic_opcode op);
/* graph_dynamic_starts: graph/gather_scatter.h. */

/* Renumbers m in place (graph/module_clone.c): removed instructions are
 * freed and live ones get new ids 0..n-1 in a topological order (every
 * operand's id below its users'), each computation's list ascending. Names,
 * types and edges are kept. OUT_OF_MEMORY leaves m unchanged. */
optic_status graph_module_renumber(optic_module_t *m);
/* True with *n the trip count (<= limit) when while w has a counter fixed
 * at build time: an integer element of the loop state that the init sets to
 * a constant, the body advances by a constant and the condition compares
 * with a constant (graph/while_trips.c). */
bool graph_while_trip_count(const optic_module_t *m, optic_node_id w, int64_t limit, int64_t *n);

/* Types: deep copy into malloc'd storage, and release. */
optic_status graph_type_clone(const optic_type *src, optic_type *dst);
void graph_type_release(optic_type *t);

/* Name set (open addressing on a string hash). */
bool graph_names_contains(const optic_name_set *s, const char *name);
/* Copies name into the set; *stored points at the set's copy (valid until free). */
optic_status graph_names_insert(optic_name_set *s, const char *name, const char **stored);
void graph_names_free(optic_name_set *s);

#define TYPE_BUF 160
/* Formats a shape-typed message operand: "f32[2,3]". */
/* Elements of an array type as a double (0 for NULL or a tuple), and its
 * bytes (elements x dtype size): what the cost estimates count. */
double graph_array_elements(const optic_type *t);
double graph_array_bytes(const optic_type *t);
const char *graph_type_str(const optic_type *t, char *buf, size_t size);

/* graph/io_alias.c: sets m's input_output_alias table (copied) after
 * checking every entry against the entry computation (paths lead to array
 * leaves of equal type, parameter numbers exist, no output twice);
 * INVALID_ARGUMENT naming the entry otherwise. */
optic_status graph_set_io_aliases(optic_module_t *m, const graph_io_alias *a, int32_t n);
/* " input_output_alias={ {0}: (0, {}, may-alias) }" when m has any. */
struct optic_strbuf;
void graph_print_io_aliases(const optic_module_t *m, struct optic_strbuf *s);

#endif
