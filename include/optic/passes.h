/* optic graph layer, analyses and passes over a module (<optic/graph.h>).
 *
 * Contents, in order:
 *   1. cost model: XLA HloCostAnalysis's flops, transcendentals, bytes
 *   2. optimization passes: levels, the pass list, options, statistics,
 *      optic_graph_optimize
 *   3. schedule: a memory-aware topological order of one computation
 *   4. buffer assignment: slots, memory estimates, plans and their check
 *
 * optic_compile (<optic/compile.h>) runs all of these; call them directly to
 * inspect or test one step. */
#ifndef OPTIC_PASSES_H
#define OPTIC_PASSES_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

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
  int32_t runs;     /* rounds it ran in */
  int64_t removed;  /* instructions removed (dce; fusion: those moved into fused
                         * computations and copied constants left without users) */
  int64_t replaced; /* instructions whose uses now go to an equal one (cse, simplify, fold;
                         * fusion: group roots whose uses went to their fusion) */
  int64_t added;    /* instructions created (simplify: merged reshapes, transposes;
                         * fold: constants; fusion: fusion instructions) */
  int64_t work;     /* pass-specific units of work: instructions visited plus
                         * operand edges walked (dce), hash-table probes (cse),
                         * constant elements inspected (simplify), instructions
                         * visited, operand edges checked and elements folded
                         * (fold), instructions visited, user edges and operands
                         * examined (fusion); linear in the
                         * module size, which the tests check */
  double seconds;   /* wall time */
} optic_pass_stat;

/* Filled by optic_graph_optimize: set size = sizeof(optic_pass_stats) (or
 * less, for an older layout: only fields that fit are written). */
typedef struct optic_pass_stats {
  size_t size;
  int32_t rounds;              /* rounds run, including the final unchanged one */
  int64_t instructions_before; /* live instructions of the required computations */
  int64_t instructions_after;
  double seconds;                         /* wall time of the whole call */
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

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_PASSES_H */
