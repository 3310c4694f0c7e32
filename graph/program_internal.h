/* Internal: the compiled program's storage (graph/compile.c builds it,
 * graph/program.c reads it, graph/program_text.c prints it). Nothing here is
 * written after optic_compile returns: that is what makes a program safe to
 * read from any number of threads. Never include from outside graph/. */
#ifndef OPTIC_GRAPH_PROGRAM_INTERNAL_H
#define OPTIC_GRAPH_PROGRAM_INTERNAL_H

#include <optic/compile.h>

typedef struct program_node {
  optic_node_estimate est;
  bool scheduled; /* in the schedule of one of the program's sequences */
} program_node;

struct optic_program {
  optic_module_t *module; /* the optimized copy, owned; computations compacted */
  optic_comp_id entry;
  optic_machine machine;
  optic_machine machine1;        /* machine for one thread: ops the runtime keeps on one */
  optic_compile_options options; /* as resolved (defaults filled in; machine points at `machine`) */
  int32_t n_comps;
  optic_buffer_plan_t **plans; /* per computation: non-NULL for sequences (each owns its schedule); fused
                                 computations the runtime runs as sequences are sequences */
  optic_comp_id *sequences;    /* the sequences, entry first, then in discovery order */
  int32_t n_sequences;
  int32_t n_nodes;
  program_node *nodes;   /* indexed by node id */
  optic_cost *comp_cost; /* per sequence computation (indexed by computation id): scheduled sums */
  double *comp_est_ns;
  optic_program_summary summary;
  /* graph/program_signature.c: optic_program_run's inputs and outputs
   * (names and index strings owned) */
  optic_program_io *inputs, *outputs;
  int32_t n_inputs, n_outputs;
  char **sig_owned_in, **sig_owned_out; /* the strings they point at, 2 per leaf */
};

/* One scheduled instruction's estimated time on p->machine (not for call,
 * while and conditional, whose time is their computations';
 * graph/compile_estimate.c). */
double program_node_estimate_ns(const struct optic_program *p, optic_node_id id, optic_opcode op,
                                const optic_cost *cost);

/* The same on machine mc as the program's threads would run it, split or
 * not by the caller (graph/compile_estimate.c). */
double program_node_estimate_on_ns(const struct optic_program *p, const optic_machine *mc, optic_node_id id,
                                   optic_opcode op, const optic_cost *cost);
/* Whether the runtime reduces id with the f32 kernels: an f32 reduce whose
 * reducer is one add, multiply, maximum or minimum of its two parameters. */
bool program_reduce_is_fast(const optic_module_t *m, optic_node_id id);
/* The runtime's row groups among the instructions order[0, n) of
 * computation c (exec/rowgroup.c's rule): each group's members' estimates
 * are rescaled to what the group costs run a tile at a time
 * (graph/estimate_rowgroup.c). */
void program_price_row_groups(struct optic_program *p, optic_comp_id c, const optic_node_id *order, int32_t n);

/* A dot, convolution or output fusion's estimated time on mc from the
 * runtime's plan of its contraction and the machine's class figures (the
 * GEMM figure when they are not known; graph/estimate_contraction.c). */
double program_contraction_ns(const struct optic_program *p, const optic_machine *mc, optic_node_id id,
                              const optic_cost *cost);
/* The one dot or convolution of an output fusion's computation, or NO_NODE
 * when it has none or several (the runtime's epilogue, the rest of the
 * computation, cannot hold a contraction: it runs such a fusion as a
 * sequence; graph/estimate_contraction.c). */
optic_node_id program_fused_contraction(const optic_module_t *m, optic_comp_id comp);
/* The format-12 loop work of a fused computation's instructions but skip
 * (nested fusions too): flops x loop_flop_ns + transcendentals x
 * loop_transcendental_ns, ns on one core (graph/compile_estimate.c). */
double program_fused_work_ns(const optic_machine *mc, const optic_module_t *m, optic_comp_id comp, optic_node_id skip);
/* A fusion the runtime runs instruction by instruction: the sum of its
 * instructions' estimates (each split or not as the runtime decides;
 * graph/compile_estimate.c). */
double program_fused_sequence_ns(const struct optic_program *p, optic_comp_id comp);
/* Whether the runtime runs fusion id as a sequence of its fused
 * computation's instructions (exec/bind.c, bind_fusion), not as one loop,
 * reduction or contraction: a custom fusion, a tuple result (but for a loop
 * fusion whose leaves are at most 64 arrays of one element count), more operands
 * than a block program takes, an input fusion that is not one reduction of
 * trailing dims on the f32 kernels, an output fusion without an f32
 * contraction of two f32 fusion parameters. Only where the runtime
 * certainly declines: a loop fusion whose block program the runtime cannot
 * lower is not recognised. */
bool program_fusion_runs_as_sequence(const optic_module_t *m, optic_node_id id);
/* Bytes of the loop state while w copies out of its body each trip: the
 * root leaves that neither pass their state leaf through nor update it in
 * place (a dynamic-update-slice over the state, exec/bind.c); -1 when the
 * body's root is not a tuple of arrays (then the runtime copies every leaf). */
double program_while_copied_bytes(const struct optic_program *p, optic_node_id w);
/* Bytes of the initial state while w copies into its result's buffers once,
 * before the first trip (exec/run.c, run_while): the leaves whose buffer is
 * not the one its operand's leaf already has. */
double program_while_entry_copied_bytes(const struct optic_program *p, optic_node_id w);
/* The machine model's convolution class (OPTIC_CONV_CLASS_*) of a planner
 * strategy (OPTIC_CONV_STRATEGY_*; grouped_rows: the plan's row loops). */
int32_t graph_conv_class_of(int32_t strategy, bool grouped_rows);

optic_status program_signature_build(struct optic_program *p, const optic_module_t *m);
void program_signature_free(struct optic_program *p);

#endif
