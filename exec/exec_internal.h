/* Internal: the executor's bound form of a program. Binding (exec/bind.c)
 * turns every computation that runs instruction by instruction into a list of
 * steps whose operands and results are resolved buffer references, decides
 * where barriers are needed, and lowers elementwise computations (loop
 * fusions, map and reduce combiners) into block programs (exec/ewprog.c).
 * Running (exec/run.c) only follows these lists; it never allocates. */
#ifndef OPTIC_EXEC_INTERNAL_H
#define OPTIC_EXEC_INTERNAL_H

#include <optic/attrs.h>
#include <optic/compile.h>
#include <optic/exec.h>

#include "core/error.h"
#include "core/ranges.h"
#include "exec/barrier.h"
#include "kernels/chain.h"
#include "kernels/conv.h"
#include "kernels/conv_bf16.h"
#include "kernels/dot.h"
#include "kernels/dot_bf16.h"

/* ------------------------------------------------------------ elementwise */

/* Elements per block of a fused loop. The whole chain runs over one block
 * while its registers (512 x 8 bytes each) stay in L1. Measured on the
 * 16M-element relu(a*x+b)*s-c chain (min CPU time of 20 runs, 1 thread):
 * 256: 23 ms, 384: 19, 512: 18, 768: 22, 1024: 25, 4096: 25 (op by op:
 * 60). Short blocks keep every input stream of the chain in flight at once,
 * as a hand-fused loop does; with 4096 each stream was read 16 KiB at a time
 * and the DRAM streams did not overlap. The next block's inputs are
 * prefetched while a block runs (without it: 31 ms). */
#define EXEC_BLOCK 512

/* Whether a step is split across a run's threads. With a program (its
 * estimates) and no split_min_elements set, by cost: split when the time
 * splitting saves, t1 * (1 - 1/threads) with t1 the step's roofline
 * estimate on one thread (optic_machine_for_threads(machine, 1), without
 * the per-op overhead), exceeds one barrier: the program machine's sync_ns
 * (optic_machine_resolve: calibrated, or 2 x op_overhead_ns), or
 * EXEC_BARRIER_COST_NS when that is still 0. Without estimates (a
 * module bound directly) or with split_min_elements set: by size, a step
 * touching fewer elements than that (default EXEC_SOLO_ELEMENTS; operands +
 * result) runs on one thread. Dots and convolutions always split (their
 * plans size themselves). */
#define EXEC_SOLO_ELEMENTS 32768
#define EXEC_BARRIER_COST_NS 2000.0

/* y[i] = op(src[0][i], src[1][i], src[2][i]) for i < n, with XLA's and the
 * evaluator's semantics per dtype (f32 through the kernels). in_dt is the
 * dtype of the data operands (operand 1 for select and clamp, whose operand 0
 * is the predicate or lower bound), out_dt the result's. cmp is compare's
 * direction, and for reduce-precision its packed attributes
 * (optic_elem_reduce_precision_param). Bit k of
 * scalar_mask marks src[k] as one element repeated. y may equal an unmasked
 * source of the same dtype (in place) except for compare and convert. */
void ew_apply(optic_opcode op, optic_compare_dir cmp, optic_dtype in_dt, optic_dtype out_dt, size_t n,
              const void *const *src, unsigned scalar_mask, void *y);
/* Sets in's k_* to the kernels ew_apply runs for it (f32 ops that have
 * unary or binary kernels, from the selected ISA's tables); NULL otherwise. */
struct ew_instr;
void ew_bind_kernels(struct ew_instr *in);
/* Whether ew_apply defines op for these dtypes (checked at bind time). */
bool ew_supported(optic_opcode op, optic_dtype in_dt, optic_dtype out_dt);
bool ew_is_elementwise(optic_opcode op);
/* What ew_apply's cmp argument is for an instruction with these attributes
 * (see ew_apply). */
optic_compare_dir ew_param_of(const optic_node_attrs_t *a);

/* A strided walk: element i of the walk (row-major over dims) reads
 * src + (base + sum_d idx_d * strides_d) * es. Strides may be 0 or negative. */
typedef struct exec_walk {
  int32_t rank;
  int64_t dims[OPTIC_MAX_RANK];
  int64_t strides[OPTIC_MAX_RANK];
  int64_t base;
} exec_walk;
/* dst[k] = element (lo + k) of the walk, k < len. */
void walk_gather(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst);
/* dst at walk positions (lo + k) = src[k], k < len (the walk addresses dst). */
void walk_scatter(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst);
/* The same walk with extent-1 dims dropped and neighbours that are one run in
 * memory (outer stride = extent * inner stride) merged: same elements, same
 * order, fewest dims. */
exec_walk walk_merged(const exec_walk *w);
/* Whether elements [lo, lo + len) of walk w (merged: walk_merged) lie in one
 * run of its last dim, with *off the offset of element lo (rank 0: always,
 * at base). */
bool walk_one_run(const exec_walk *w, size_t lo, size_t len, int64_t *off);

/* ------------------------------------------------------------ block programs */

enum { EW_REG, EW_INPUT, EW_SCALAR };
typedef struct ew_src {
  uint8_t kind;      /* EW_REG: register; EW_INPUT: input array; EW_SCALAR: one element */
  int32_t index;     /* register or input number */
  const void *value; /* EW_SCALAR: the element (a constant's bytes), or NULL for a scalar input */
} ew_src;

/* EW_WIDEN (exec/ewhalf.c): dst register = input src[0] (f16/bf16) widened to f32. */
enum { EW_OP, EW_GATHER, EW_MOVE, EW_WIDEN };
/* How a gather into a register may skip its copy for a block that lies in
 * one run of the walk's last dim: the register then stands for one element
 * repeated (EW_ALIAS_SCALAR: the run's stride is 0, a broadcast along it) or
 * for the input's own contiguous elements (EW_ALIAS_DIRECT: stride 1). Its
 * readers see exactly the values the copy would hold. */
enum { EW_ALIAS_NONE, EW_ALIAS_SCALAR, EW_ALIAS_DIRECT };
/* Registers that may alias (ew_run_block tracks them in a 64-bit mask). */
#define EW_ALIAS_REGS 64
/* A block is cut into segments at the ends of aliasing gathers' runs of at
 * least this many elements (shorter runs are copied: a kernel call per
 * segment would cost more), for programs of at most EW_SEGMENT_OUTPUTS
 * outputs. */
#define EW_SEGMENT_MIN 256
#define EW_SEGMENT_OUTPUTS 16
typedef struct ew_instr {
  uint8_t kind;
  optic_opcode op;
  optic_compare_dir cmp;
  optic_dtype in_dt, out_dt;
  int32_t n_src;
  ew_src src[3];
  int32_t dst;    /* register, or -1 - k for output k */
  exec_walk walk; /* EW_GATHER: reads input src[0].index through this walk */
  uint8_t alias;  /* EW_GATHER into a register: EW_ALIAS_* */
  exec_walk run;  /* EW_GATHER: walk_merged(walk) */
  double run_inv; /* EW_GATHER: 1 / run's last extent (0 when that is 0) */
  /* f32 -> f32 ops with kernels (ew_bind_kernels): what ew_apply would call */
  void (*k_un)(size_t n, const float *x, float *y);
  void (*k_vv)(size_t n, const float *a, const float *b, float *y);
  void (*k_vs)(size_t n, const float *a, float s, float *y);
  bool k_comm;       /* k_vs also serves a scalar first operand (add, multiply) */
  uint8_t src_es[3]; /* element bytes of each EW_INPUT source */
  /* f16/bf16 values held widened to f32 in registers (exec/ewhalf.c), this
   * half dtype: EW_OP rounds its f32 result to it (in place, or narrowing
   * into an output); EW_GATHER widens what it gathers; EW_MOVE narrows a
   * register (exactly) into an output; EW_WIDEN widens from it. */
  optic_dtype wide;
  bool wide_exact; /* EW_OP that moves values (copy, select): narrowed exactly, never rounded */
  /* Chains (ew_run_block): chain_op is the binary op + 1 of an f32 op a
   * chain kernel may apply (0: none); chain_from is the source (0 or 1)
   * that reads the single-use result of the chain op just before it in the
   * register's life (-1: none), so the two may run as one pass. */
  uint8_t chain_op;
  int8_t chain_from;
  bool chain_link; /* a later instruction's chain_from reads this one's result */
} ew_instr;

typedef struct ew_prog {
  int32_t n_inputs;
  optic_dtype *input_dtype;
  const void **input_const; /* non-NULL: the input is this constant's data (bound at lowering) */
  int32_t n_regs;
  int32_t n_instr;
  ew_instr *ins;
  int32_t n_outputs;
  optic_dtype *output_dtype;
  uint64_t scalar_inputs;   /* bit i: parameter i has one element, repeated over the domain */
  int32_t extra_input;      /* ew_lower_epilogue: the input that is the dot's result; else -1 */
  bool may_segment;         /* it has an aliasing gather (ew_run_block may cut blocks) */
  int32_t wide_scratch;     /* ew_widen_halves: the register an output's f32 result goes through; -1 none */
  float *wide_consts;       /* ew_widen_halves: half constants widened (EW_SCALAR values point here) */
  optic_f32_chain_fn chain; /* the selected ISA's own chain kernel, or NULL: ops run one by one */
  bool chain_streams;       /* the one output is written by a chain op (ew_run_block_stream may stream it) */
} ew_prog;

/* Lowers computation comp into a block program whose inputs are comp's
 * parameters (in number order) followed by array constants, over a domain
 * of `elements` elements (the root's count). Fails with UNSUPPORTED (and no
 * message a caller must show: it is a lowering decision) when comp holds an
 * instruction that is not elementwise or an index map of a parameter. */
optic_status ew_lower(const optic_module_t *m, optic_comp_id comp, size_t elements, ew_prog **out);
/* Every UNSUPPORTED message of the lowering starts with this; a caller that
 * shows the reason under its own context skips it. */
#define EW_DECLINE_PREFIX "fused loop: "
/* params_full: every parameter spans the domain (map and reducer
 * computations, whose scalar parameters become lanes of a block). */
optic_status ew_lower_ex(const optic_module_t *m, optic_comp_id comp, size_t elements, bool params_full, ew_prog **out);
/* An output fusion's epilogue: node as_input (the fused dot or
 * convolution) becomes an input (prog->extra_input), computed by the caller
 * into the fusion's output, which the program then rewrites in place. */
optic_status ew_lower_epilogue(const optic_module_t *m, optic_comp_id comp, size_t elements, optic_node_id as_input,
                               ew_prog **out);
/* The subtree of comp rooted at `root` (an input fusion's reduced input),
 * over root's `elements`. */
optic_status ew_lower_subtree(const optic_module_t *m, optic_comp_id comp, optic_node_id root, size_t elements,
                              ew_prog **out);
void ew_prog_destroy(ew_prog *p);
/* Rewrites a lowered program so that its f16/bf16 values live in registers
 * widened to f32 (exact): each half input is widened once per block, each
 * op runs the f32 kernels and rounds its result back to the half (the rule
 * of the op-by-op path: same values, bitwise), an output is narrowed once
 * on store. Leaves the program as it is when an op has no such form.
 * Called by the lowering before kernels are bound. */
optic_status ew_widen_halves(ew_prog *p);
/* Whether the elementwise op runs on widened halves (it has an f32 kernel
 * form or moves values: copy, convert, select, clamp, compare). */
bool ew_half_widenable(optic_opcode op);
/* The f16/bf16 <-> f32 steps of widened programs (dt: OPTIC_F16 or
 * OPTIC_BF16): widen; narrow with rounding; narrow a value that is exactly a
 * half (bitwise, NaN payloads kept); round in place (y = widen(narrow(y))). */
void ew_half_widen(optic_dtype dt, size_t n, const void *x, float *y);
void ew_half_narrow(optic_dtype dt, size_t n, const float *x, void *y);
void ew_half_narrow_exact(optic_dtype dt, size_t n, const float *x, void *y);
void ew_half_round(optic_dtype dt, size_t n, float *y);
/* Runs the program on elements [lo, lo + len) of the domain, len <=
 * EXEC_BLOCK. inputs[i] points at input i's element 0 (scalar inputs: their
 * one element, with bit i of scalar_inputs set); outputs[k] at output k's
 * element lo. regs holds n_regs * EXEC_BLOCK * 8 bytes. */
void ew_run_block(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs, size_t lo,
                  size_t len, void *regs);
/* ew_run_block with registers of reg_bytes each (a multiple of 8; regs
 * holds n_regs * reg_bytes bytes) and len <= reg_bytes / 8: the row groups'
 * wider blocks. Every element is computed as in ew_run_block (the ops are
 * elementwise), so results do not depend on the block length. */
void ew_run_block_wide(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs,
                       size_t lo, size_t len, void *regs, size_t reg_bytes);
/* ew_run_block_wide that writes the output with streaming stores when
 * p->chain_streams (the caller decided to stream, kernels/stream.h, and
 * calls optic_stream_fence afterwards); otherwise the same as it. */
void ew_run_block_stream(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs,
                         size_t lo, size_t len, void *regs, size_t reg_bytes, bool stream);

/* ------------------------------------------------------------ bound program */

enum { REF_NONE, REF_ARENA, REF_PARAM, REF_CONST, REF_OUTPUT, REF_TILE };
typedef struct exec_ref {
  uint8_t kind;
  int32_t index;    /* REF_PARAM: flat parameter leaf; REF_OUTPUT: root leaf; REF_TILE: bytes per row */
  size_t offset;    /* REF_ARENA; REF_TILE: offset in the thread's tile buffer */
  size_t size;      /* bytes */
  const void *data; /* REF_CONST */
} exec_ref;

struct exec_seq;

typedef struct exec_step {
  optic_node_id id;
  optic_opcode op;
  const optic_type *type;
  int32_t n_operands;
  int32_t *in_first; /* operand i's leaves are in[in_first[i] .. in_first[i+1]) */
  exec_ref *in;
  int32_t n_out;
  exec_ref *out;
  optic_node_attrs_t attrs; /* the instruction's attributes (optic_node_attrs) */
  optic_compare_dir cmp;
  optic_shape *operand_shape; /* array operands' shapes, dtypes and element counts */
  optic_dtype *operand_dtype;
  size_t *operand_elems;
  bool noop; /* parameter, constant, tuple, get-tuple-element, reshape (aliases) */
  bool barrier_before;
  bool sync; /* runs nested sequences or has inner barriers: full barriers around it */
  bool solo; /* too small to split: thread 0 runs it alone, and two solo steps
                            never need a barrier between them */
  /* op-specific */
  struct exec_seq *callee[2]; /* call, fusion fallback, while {cond, body} */
  struct exec_seq **branches; /* conditional */
  int32_t n_branches;
  ew_prog *prog;   /* loop fusion, map, general reduce / reduce-window */
  int reduce_fast; /* 0, or the binary opcode of an f32 fast-path reducer */
  int reduce_half; /* reduce: 0, or the binary opcode of a one-op f16/bf16 reducer */
  struct optic_dot_plan *dot;
  int32_t epi_lhs, epi_rhs; /* output fusion: the fusion operands the dot/convolution reads */
  bool input_fusion;        /* prog computes the reduced input; reduce_fast folds it */
  int32_t in_init;          /* input fusion: the fusion operand holding the init value, -1: in_init_value */
  int32_t in_sumsq;         /* input fusion: the program input whose x * x an add reducer sums, -1: none */
  float in_init_value;      /* input fusion: the init value when it is a constant of the fused computation */
  size_t in_rows, in_len;   /* input fusion: outputs, and reduced elements per output (trailing dims) */
  optic_conv_plan *conv;
  struct optic_conv_bf16_plan *conv_bf16; /* bf16 x bf16 convolution on the bf16 GEMM (kernels/conv_bf16.h) */
  /* dot/convolution on f16/bf16: lhs, rhs and result widened to f32 in
   * scratch at these offsets (SIZE_MAX: that one is f32 already) */
  bool widen;
  bool bf16_dot;          /* dot of two bf16 operands on vdpbf16ps (kernels/dot_bf16.h): not widened */
  bool conv_bf16_grouped; /* depthwise bf16 convolution read in place (kernels/conv_bf16.h): not widened */
  optic_dtype widen_dt[3];
  size_t widen_offset[3], widen_elems[3];
  size_t scratch_offset, scratch_bytes; /* in the context's scratch area */
  size_t sort_scratch;                  /* sort: scratch bytes per thread (thread t's at scratch_offset + t * this) */
  int32_t sort_threads;                 /* sort: threads the scratch was sized for */
  double est_ns, flops, bytes;
  double t1_ns; /* roofline estimate on one thread without per-op overhead; < 0: none */
  const char *name;
  /* row group (exec/rowgroup.c): the member steps, run a tile of rows at a time */
  struct exec_step *members;
  int32_t n_members;
  size_t rg_rows, rg_tile; /* rows R, rows per tile */
  size_t rg_regs;          /* register bytes the members need; the tile buffer follows them */
  size_t rg_block;         /* elements per block program call of the members (registers of rg_block * 8 bytes) */
  size_t rg_tile_bytes;    /* the tile buffer: every value kept in it, rg_tile rows each */
  size_t rg_per_row;       /* a member: domain elements per row (its output's elements / R) */
  int32_t rg_n_ahead;      /* the group: inputs read row by row from outside it (rg_ahead, at most 4) */
  exec_ref rg_ahead[4];    /* prefetched a tile ahead while the members run (exec/rowgroup.c) */
  exec_walk *rg_walks;     /* a reduce member: its input's kept and reduced walks, merged (exec_reduce_rows_prepare) */
  char *owned_name;
} exec_step;

typedef struct exec_seq {
  optic_comp_id comp;
  const optic_buffer_plan_t *plan;
  optic_buffer_plan_t *owned_plan; /* for fused computations the program has no plan for */
  int32_t n_steps;
  exec_step *steps;
  size_t arena_bytes;
  size_t arena_offset; /* in the context's arena area */
  int32_t n_param_leaves;
  int32_t n_root_leaves;
  exec_ref *root; /* where each root leaf's value is after the steps */
  size_t *root_bytes;
  size_t root_scratch_offset; /* while bodies/conditions: a place for the root leaves */
  uint8_t *root_over_param;   /* while bodies: 1 where root leaf l lives in parameter leaf l's buffer */
  bool busy;                  /* binding: recursion guard */
} exec_seq;

typedef struct exec_bound {
  const optic_module_t *m;
  const optic_program_t *program; /* NULL when bound from a module directly */
  optic_comp_id entry;
  exec_seq **seqs; /* by computation id; NULL when the computation never runs as a sequence */
  int32_t n_comps;
  size_t arena_total;       /* arenas of every sequence, laid out one after another */
  size_t scratch_total;     /* per-step scratch (dot packing, conv columns, root scratch) */
  int32_t *param_leaf_base; /* by parameter node id: its first flat leaf in its computation */
  int32_t threads;          /* what conv plans were made for */
  int64_t split_min;        /* steps touching fewer elements are solo (by size) */
  bool split_by_cost;       /* the program's estimates decide (see EXEC_SOLO_ELEMENTS) */
  double barrier_ns;        /* by cost: a split must save more than this */
  optic_machine machine1;   /* by cost: the program's machine on one thread */
  double est_ns;            /* the program's estimate of a run (0 without a program) */
  size_t regs_bytes;        /* exec_regs_bytes, computed once at bind */
  bool has_blas;            /* some step calls OpenBLAS (dot, convolution) */
  bool any_split;           /* some step is split across threads; if none, a run uses one thread */
  optic_range *consts;      /* the module's non-empty constants (index: node id), sorted by address */
  uintptr_t *consts_max_hi; /* optic_ranges_index of consts */
  size_t n_consts;
} exec_bound;

/* Binds module m (its entry computation) for `threads` threads; program
 * (may be NULL) supplies schedules, plans and estimates. */
optic_status exec_bind(const optic_module_t *m, const optic_program_t *program, int32_t threads,
                       int64_t split_min_elements, exec_bound **out);
void exec_bound_destroy(exec_bound *b);

/* ------------------------------------------------------------ aliasing
 * (exec/alias.c): a run's outputs must share no byte with its inputs, with
 * each other or with the program's constants (the runtime honours no
 * input/output aliasing: HLO's input_output_alias is not imported). */

/* Fills b->consts from every live constant of b->m. OUT_OF_MEMORY. */
optic_status exec_bind_constants(exec_bound *b);

/* One run's caller buffers: room for n_in + n_out ranges (sized at attach). */
typedef struct exec_run_ranges {
  optic_range *r;
  uintptr_t *max_hi;
  size_t n;
} exec_run_ranges;

/* Refuses (INVALID_ARGUMENT, naming both) a caller output that overlaps an
 * input, another caller output or a constant of b; outputs with NULL data
 * (the context's) are left out. Inputs may overlap each other and
 * constants. On OK, tab holds the caller buffers for exec_caller_overlaps. */
optic_status exec_check_aliasing(const exec_bound *b, exec_run_ranges *tab, const optic_tensor *in, int32_t n_in,
                                 const optic_tensor *out, int32_t n_out);
/* True when [p, p + bytes) shares a byte with a buffer of tab. */
bool exec_caller_overlaps(const exec_run_ranges *tab, const void *p, size_t bytes);

/* Runs a bound module on the context (exec/run.c); the public
 * optic_program_run binds then calls this. */
optic_status exec_run_bound(optic_exec_ctx_t *ctx, exec_bound *b, const optic_tensor *inputs, int32_t n_in,
                            optic_tensor *outputs, int32_t n_out);
/* Per-thread view of one running sequence. */
typedef struct exec_frame {
  unsigned char *arena;
  void **params;       /* by flat parameter leaf */
  void **outs;         /* by root leaf */
  unsigned char *tile; /* row groups: this thread's tile buffer, holding rows from tile_row0 */
  size_t tile_row0;
} exec_frame;

static inline void *ref_ptr(const exec_frame *f, const exec_ref *r) {
  switch (r->kind) {
    /* the address row 0 would have: members index the value from row 0 */
    case REF_TILE: return (void *)((uintptr_t)(f->tile + r->offset) - f->tile_row0 * (size_t)r->index);
    case REF_ARENA: return f->arena ? f->arena + r->offset : NULL; /* no arena: only empty arrays */
    case REF_PARAM: return f->params[r->index];
    case REF_CONST: return (void *)(uintptr_t)r->data;
    case REF_OUTPUT: return f->outs[r->index];
    default: return NULL;
  }
}

/* The share [*lo, *hi) of n items for thread t of nt. */
static inline void exec_share(size_t n, int t, int nt, size_t *lo, size_t *hi) {
  size_t q = n / (size_t)nt, r = n % (size_t)nt;
  *lo = (size_t)t * q + ((size_t)t < r ? (size_t)t : r);
  *hi = *lo + q + ((size_t)t < r ? 1 : 0);
}

/* Executes one non-control step on thread t of nt (exec/ops_*.c). Returns an
 * error only for conditions binding could not rule out. */
typedef struct exec_thread {
  int t, nt;
  unsigned char *scratch; /* the context's scratch area */
  unsigned char *regs;    /* this thread's block registers */
  exec_barrier *bar;      /* the run's barrier (sized for nt threads) */
} exec_thread;

/* Waits for every thread of the run's team (nothing when this step runs on
 * one thread): exec/barrier.h, whose ordering guarantee is that of
 * `omp barrier`. */
void exec_sync(const exec_thread *th);

optic_status exec_op_layout(const exec_step *s, const exec_frame *f, const exec_thread *th);
optic_status exec_op_elementwise(const exec_step *s, const exec_frame *f, const exec_thread *th);
optic_status exec_op_reduce(const exec_step *s, const optic_module_t *m, const exec_frame *f, const exec_thread *th);
/* reduce-window of one f32 input with a fast reducer (exec/ops_window.c):
 * whether it fits, and this thread's share of it. */
bool exec_reduce_window_rows_fit(const exec_step *s);
void exec_reduce_window_rows(const exec_step *s, const exec_frame *f, const exec_thread *th);
optic_status exec_op_linalg(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* dynamic-slice, dynamic-update-slice, gather, scatter (exec/ops_dynamic.c). */
optic_status exec_op_dynamic(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* Bytes of scratch a batch-norm op over `features` features uses (thread 0). */
size_t exec_batch_norm_scratch_bytes(int64_t features);
optic_status exec_op_fused(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* A loop fusion's footprint: the bytes it reads (every operand leaf) plus
 * the bytes it writes. Its result is written with streaming stores when the
 * kernels' policy says so for that footprint (kernels/stream.h: the
 * last-level cache size, or OPTIC_STREAM_STORES). */
size_t exec_fused_footprint(const exec_step *s);
/* A loop fusion's domain: its array result's elements, or those of each
 * leaf of its tuple result (bind lowers a tuple only when they agree). */
size_t exec_fused_elems(const exec_step *s);
/* Result leaves a loop fusion's block program writes at most; a tuple of
 * more runs as a sequence. */
#define EXEC_FUSED_OUTPUTS 64
bool exec_fused_streams(const exec_step *s);
/* An output fusion: the dot/convolution into the result, a barrier, then the
 * epilogue's block program over the result in place. */
optic_status exec_op_output_fusion(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* An input fusion reducing trailing dims with an f32 add/multiply/max/min
 * reducer: the reduced input is computed block by block and folded at once. */
optic_status exec_op_input_fusion(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* Row-range forms of the ops a row group runs (exec/rowgroup.c): outputs
 * [lo, hi) of an f32 kernel-path reduce, rows [lo, hi) of a native input
 * fusion, domain elements [lo, hi) of a loop fusion's block program (stream:
 * streaming stores of the result; prefetch: the next block's inputs are
 * prefetched). block: elements per block program call (EXEC_BLOCK, or a row
 * group's wider rg_block); ys: the program's outputs (a tuple result's
 * leaves in order); regs: the thread's block registers, block * 8 bytes
 * each (ew_run_block_wide), then one staging block per output. */
/* Computes once (bind time) the walks exec_reduce_rows of s would compute
 * on every call. OUT_OF_MEMORY. */
optic_status exec_reduce_rows_prepare(exec_step *s);
/* exec_reduce_rows may prefetch the input rows of outputs up to ahead_hi
 * (the caller's later rows; ignored for an input in a row group's tile). */
void exec_reduce_rows(const exec_step *s, const exec_frame *f, size_t lo, size_t hi, size_t ahead_hi,
                      unsigned char *regs);
void exec_input_fusion_rows(const exec_step *s, const exec_frame *f, size_t lo, size_t hi, size_t block,
                            unsigned char *regs);
/* The input k when input fusion s reduces with add the program y = x_k * x_k
 * (one f32 multiply of input k read in domain order by itself): each row is
 * then the sum-of-squares kernel over x_k's row, bitwise the sum kernel over
 * the rounded squares (kernels/reduce.h: same lanes, same tree, the square
 * rounded apart). -1 otherwise. Bind time. */
int32_t exec_input_fusion_sumsq_input(const exec_step *s);
void exec_fused_range(const exec_step *s, const void *const *inputs, unsigned char *const *ys, size_t lo, size_t hi,
                      bool stream, bool prefetch, size_t block, unsigned char *regs);
/* Replaces runs of steps of q that work row by row on the same rows by row
 * groups (bind time; root: q's root leaves, which stay in the arena);
 * exec_op_row_group runs one. */
optic_status exec_form_row_groups(exec_seq *q, int64_t split_min, const exec_ref *root, int32_t n_root);
optic_status exec_op_row_group(const exec_step *s, const exec_frame *f, const exec_thread *th);
/* Frees what step s owns (members included); not s itself. */
void exec_step_free(exec_step *s);

/* Whether exec_op_layout handles op. */
bool exec_is_layout_op(optic_opcode op);

/* Bytes of the thread's registers an f32 kernel-path reduce step uses as
 * work space (a gathered leaf, or the column lanes); 0 for other steps. */
size_t exec_reduce_work_bytes(const exec_step *s);
/* Register bytes per thread the bound program needs. */
size_t exec_regs_bytes(const exec_bound *b);

#endif
