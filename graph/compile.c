/* optic_compile: copies the module, optimizes the copy with the pass
 * manager, then schedules and plans buffers for every computation that runs
 * instruction by instruction (the entry, what call/while/conditional reach
 * from it and the fused computations the runtime runs one instruction at a
 * time), and attaches each scheduled instruction's cost and
 * roofline time. Never touches the caller's module. */
#include <stdlib.h>
#include <string.h>

#include <optic/attrs.h>

#include "graph/internal.h"
#include "graph/program_internal.h"

#define DEFAULT_FOLD_MAX_BYTES ((int64_t)1 << 20)
#define DEFAULT_MAX_FUSION_SIZE 64

optic_compile_options optic_compile_options_default(void) {
  optic_compile_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.level = OPTIC_OPT_FULL;
  o.machine = NULL;
  o.fusion = -1;
  o.fold_max_bytes = 0;
  o.max_fusion_size = 0;
  o.verify_buffers = false;
  o.threads = 0;
  o.split_min_elements = 0;
  return o;
}

/* The caller's options over the defaults (as far as its size goes), checked. */
static optic_status read_options(const optic_compile_options *in, optic_compile_options *o) {
  *o = optic_compile_options_default();
  if (in != NULL) {
    if (in->size < sizeof in->size || in->size > sizeof *in) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "compile: options.size is %zu; start from optic_compile_options_default() (this library "
                        "knows up to %zu bytes)",
                        in->size, sizeof *in);
    }
    memcpy((char *)o + sizeof o->size, (const char *)in + sizeof in->size, in->size - sizeof in->size);
    o->size = sizeof *o;
  }
  if ((unsigned)o->level > OPTIC_OPT_FULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: level %d is not none (0), basic (1) or full (2)",
                      (int)o->level);
  if (o->fusion < -1 || o->fusion > 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: fusion is %d (-1 by level, 0 off, 1 on)", (int)o->fusion);
  if (o->fold_max_bytes < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: fold_max_bytes is %lld (0 means 1 MiB)",
                      (long long)o->fold_max_bytes);
  if (o->max_fusion_size < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: max_fusion_size is %d (0 means %d)",
                      (int)o->max_fusion_size, DEFAULT_MAX_FUSION_SIZE);
  if (o->split_min_elements < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: split_min_elements is %lld (0: by cost, else >= 1)",
                      (long long)o->split_min_elements);
  if (o->threads < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: threads is %d (0: all the machine's cores, else >= 1)",
                      (int)o->threads);
  if (o->fold_max_bytes == 0) o->fold_max_bytes = DEFAULT_FOLD_MAX_BYTES;
  if (o->max_fusion_size == 0) o->max_fusion_size = DEFAULT_MAX_FUSION_SIZE;
  return OPTIC_OK;
}

void optic_program_destroy(optic_program_t *p) {
  if (p == NULL) return;
  if (p->plans) {
    for (int32_t c = 0; c < p->n_comps; c++) optic_buffer_plan_destroy(p->plans[c]);
  }
  free(p->plans);
  free(p->sequences);
  free(p->nodes);
  free(p->comp_cost);
  free(p->comp_est_ns);
  program_signature_free(p);
  optic_module_destroy(p->module);
  free(p);
}

/* Parameters and constants bind buffers; tuple, get-tuple-element and
 * reshape alias their operands' bytes (docs/graph-buffers.md): none of them
 * runs code, so they cost no time, not even the per-op overhead. */
static bool runs_code(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_PARAMETER:
    case OPTIC_OP_CONSTANT:
    case OPTIC_OP_TUPLE:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST:
    case OPTIC_OP_OPT_BARRIER: return false;
    default: return true;
  }
}

/* Schedules and plans computation c, costs its instructions and queues the
 * computations its instructions run as sequences (a fusion's, when the
 * runtime runs its instructions one by one: they get estimates of their own). */
static optic_status plan_sequence(optic_program_t *p, optic_comp_id c, bool *queued) {
  optic_schedule_t *s = NULL;
  optic_status st = optic_schedule_create(p->module, c, &s);
  if (st == OPTIC_OK) st = optic_buffer_plan_create(p->module, s, &p->plans[c]);
  optic_schedule_destroy(s);
  if (st != OPTIC_OK) return st;
  if (p->options.verify_buffers && (st = optic_buffer_plan_verify(p->module, p->plans[c])) != OPTIC_OK) return st;
  int32_t n = 0;
  const optic_node_id *order = optic_schedule_order(optic_buffer_plan_schedule(p->plans[c]), &n);
  optic_cost total = {0, 0, 0};
  double est = 0;
  for (int32_t i = 0; i < n; i++) {
    optic_node_id id = order[i];
    program_node *pn = &p->nodes[id];
    if ((st = optic_node_cost(p->module, id, &pn->est.cost)) != OPTIC_OK) return st;
    optic_opcode op = optic_node_opcode(p->module, id);
    pn->est.est_ns = runs_code(op) ? program_node_estimate_ns(p, id, op, &pn->est.cost) : 0;
    pn->scheduled = true;
    total.flops += pn->est.cost.flops;
    total.transcendentals += pn->est.cost.transcendentals;
    total.bytes_accessed += pn->est.cost.bytes_accessed;
    if (op == OPTIC_OP_CALL || op == OPTIC_OP_WHILE || op == OPTIC_OP_CONDITIONAL ||
        program_fusion_runs_as_sequence(p->module, id)) {
      for (int32_t k = 0; k < optic_node_called_count(p->module, id); k++) {
        optic_comp_id callee = optic_node_called(p->module, id, k);
        if (!queued[callee]) {
          queued[callee] = true;
          p->sequences[p->n_sequences++] = callee;
        }
      }
    }
  }
  program_price_row_groups(p, c, order, n);
  for (int32_t i = 0; i < n; i++) est += p->nodes[order[i]].est.est_ns;
  p->comp_cost[c] = total;
  p->comp_est_ns[c] = est;
  return OPTIC_OK;
}

/* Loops whose counter runs longer than this are estimated as unknown. */
#define WHILE_TRIP_LIMIT ((int64_t)1 << 24)

static double sequence_est_ns(optic_program_t *p, optic_comp_id c, unsigned char *state);

/* Bytes of every array leaf of t. */
static double state_bytes(const optic_type *t) {
  if (!optic_type_is_tuple(t)) {
    double n = (double)optic_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->shape.rank; d++) n *= (double)t->shape.dims[d];
    return n;
  }
  double sum = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) sum += state_bytes(&t->elements[i]);
  return sum;
}

/* A call, while, conditional or fusion run as a sequence: the time of its
 * computations' runs (a fusion's as a call's). A
 * while runs its condition trips + 1 times and its body trips times, each
 * trip also costing while_iteration_ns; trips is the counter's when the loop
 * has one fixed at build time (graph_while_trip_count), else one trip is
 * assumed (docs/cost-model.md); before the first trip the initial state is
 * copied into the loop's buffers where they are not the operand's. A
 * conditional takes its slowest branch. */
static double control_est_ns(optic_program_t *p, optic_node_id id, optic_opcode op, unsigned char *state) {
  const optic_module_t *m = p->module;
  const double over = p->machine.op_overhead_ns;
  if (op == OPTIC_OP_CALL || op == OPTIC_OP_FUSION)
    return sequence_est_ns(p, optic_node_called(m, id, 0), state) + over;
  if (op == OPTIC_OP_WHILE) {
    int64_t trips = 1;
    if (!graph_while_trip_count(m, id, WHILE_TRIP_LIMIT, &trips)) trips = 1;
    const double cond = sequence_est_ns(p, optic_node_called(m, id, 0), state);
    const double body = sequence_est_ns(p, optic_node_called(m, id, 1), state);
    /* each trip the body's root is copied out of its arena and into the
     * loop state: two copies (read + write) of the leaves it does not write
     * over the state itself */
    double copied = program_while_copied_bytes(p, id);
    if (copied < 0) copied = state_bytes(optic_node_type(m, id));
    optic_cost copy = {0, 0, 2.0 * copied}, enter = {0, 0, 2.0 * program_while_entry_copied_bytes(p, id)};
    const double move = 2.0 * (optic_machine_estimate_ns(&p->machine, &copy) - over);
    /* and once, before the first trip, the initial state into the loop's own buffers */
    const double entered = enter.bytes_accessed > 0 ? optic_machine_estimate_ns(&p->machine, &enter) - over : 0;
    return (double)trips * (body + cond + move + p->machine.while_iteration_ns) + cond + entered + over;
  }
  double worst = 0;
  for (int32_t k = 0; k < optic_node_called_count(m, id); k++) {
    double b = sequence_est_ns(p, optic_node_called(m, id, k), state);
    if (b > worst) worst = b;
  }
  return worst + over;
}

/* One run of sequence c: the sum of its instructions' times, the control
 * instructions' from their computations (their est_ns is set here).
 * state: 0 not visited, 1 in progress (a computation calling itself is
 * refused at run time; here it keeps its flat sum), 2 done. */
static double sequence_est_ns(optic_program_t *p, optic_comp_id c, unsigned char *state) {
  if (c < 0 || c >= p->n_comps || p->plans[c] == NULL || state[c] != 0)
    return c >= 0 && c < p->n_comps ? p->comp_est_ns[c] : 0;
  state[c] = 1;
  int32_t n = 0;
  const optic_node_id *order = optic_schedule_order(optic_buffer_plan_schedule(p->plans[c]), &n);
  double est = 0;
  for (int32_t i = 0; i < n; i++) {
    program_node *pn = &p->nodes[order[i]];
    optic_opcode op = optic_node_opcode(p->module, order[i]);
    if (op == OPTIC_OP_CALL || op == OPTIC_OP_WHILE || op == OPTIC_OP_CONDITIONAL ||
        program_fusion_runs_as_sequence(p->module, order[i]))
      pn->est.est_ns = control_est_ns(p, order[i], op, state);
    est += pn->est.est_ns;
  }
  p->comp_est_ns[c] = est;
  state[c] = 2;
  return est;
}

static optic_status build_program(optic_program_t *p, const optic_compile_options *o) {
  optic_optimize_options oo = optic_optimize_options_default();
  oo.level = o->level;
  oo.fold_max_bytes = o->fold_max_bytes;
  oo.max_fusion_size = o->max_fusion_size;
  if (o->fusion == 0) oo.passes[OPTIC_PASS_FUSION] = OPTIC_PASS_DISABLE;
  if (o->fusion == 1) oo.passes[OPTIC_PASS_FUSION] = OPTIC_PASS_ENABLE;
  p->summary.passes.size = sizeof p->summary.passes;
  optic_status st = optic_graph_optimize(p->module, &oo, &p->summary.passes);
  if (st != OPTIC_OK) return st;
  /* Passes leave users older than the instructions they now use (fusion
   * appends the fusion) and removed ids behind: renumbering gives the
   * program dense, topological ids (compile.h promises them; the schedule
   * itself computes its order and does not need them). */
  if ((st = graph_module_renumber(p->module)) != OPTIC_OK) return st;
  optic_module_t *m = p->module;
  p->entry = optic_module_entry(m);
  p->n_comps = optic_module_computation_count(m);
  /* Renumbering compacted every computation, as every public call leaves
   * them: the program's module is only read from here on. */
  p->n_nodes = m->n_instrs;
  p->plans = calloc((size_t)p->n_comps, sizeof *p->plans);
  p->sequences = calloc((size_t)p->n_comps, sizeof *p->sequences);
  p->comp_cost = calloc((size_t)p->n_comps, sizeof *p->comp_cost);
  p->comp_est_ns = calloc((size_t)p->n_comps, sizeof *p->comp_est_ns);
  p->nodes = calloc((size_t)p->n_nodes + 1, sizeof *p->nodes);
  bool *queued = calloc((size_t)p->n_comps, sizeof *queued);
  if (!p->plans || !p->sequences || !p->comp_cost || !p->comp_est_ns || !p->nodes || !queued) {
    free(queued);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "compile: out of memory for the program's tables");
  }
  queued[p->entry] = true;
  p->sequences[p->n_sequences++] = p->entry;
  for (int32_t k = 0; k < p->n_sequences && st == OPTIC_OK; k++) st = plan_sequence(p, p->sequences[k], queued);
  free(queued);
  if (st != OPTIC_OK) return st;
  unsigned char *state = calloc((size_t)p->n_comps, 1);
  if (!state) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "compile: out of memory for the estimates");
  sequence_est_ns(p, p->entry, state);
  free(state);

  optic_program_summary *s = &p->summary;
  s->cost = p->comp_cost[p->entry];
  s->est_ns = p->comp_est_ns[p->entry] + p->machine.run_overhead_ns; /* once per run */
  if ((st = optic_buffer_plan_memory(p->plans[p->entry], &s->memory)) != OPTIC_OK) return st;
  size_t peak = s->memory.total_bytes + s->memory.constant_bytes;
  for (int32_t k = 1; k < p->n_sequences; k++) {
    optic_memory_estimate mem;
    if ((st = optic_buffer_plan_memory(p->plans[p->sequences[k]], &mem)) != OPTIC_OK) return st;
    peak += mem.arena_bytes + mem.constant_bytes;
  }
  s->peak_bytes = peak;
  int32_t n = 0;
  const optic_node_id *order = optic_schedule_order(optic_buffer_plan_schedule(p->plans[p->entry]), &n);
  s->instructions = n;
  for (int32_t i = 0; i < n; i++) s->fusions += optic_node_opcode(m, order[i]) == OPTIC_OP_FUSION;
  return OPTIC_OK;
}

optic_status optic_compile(const optic_module_t *m, const optic_compile_options *options, optic_program_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: out is NULL");
  *out = NULL;
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compile: module is NULL");
  uint64_t t0 = optic_now_ns();
  optic_compile_options o;
  optic_status st = read_options(options, &o);
  if (st != OPTIC_OK) return st;
  optic_program_t *p = calloc(1, sizeof *p);
  if (p == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "compile: out of memory");
  if (o.machine != NULL) {
    p->machine = *o.machine;
    st = optic_machine_validate(&p->machine);
  } else {
    st = optic_machine_host(&p->machine);
  }
  /* The estimates are for the threads the program will run on. */
  if (st == OPTIC_OK) st = optic_machine_for_threads(&p->machine, o.threads, &p->machine);
  if (st == OPTIC_OK) st = optic_machine_for_threads(&p->machine, 1, &p->machine1);
  if (st == OPTIC_OK) {
    o.threads = p->machine.cores;
    o.machine = &p->machine;
    p->options = o;
    st = program_signature_build(p, m);
    if (st == OPTIC_OK) st = optic_module_clone(m, &p->module);
    /* the caller's ids may not be topological either */
    if (st == OPTIC_OK) st = graph_module_renumber(p->module);
  }
  if (st == OPTIC_OK) st = build_program(p, &o);
  if (st != OPTIC_OK) {
    optic_program_destroy(p);
    return st;
  }
  p->summary.compile_seconds = (double)(optic_now_ns() - t0) * 1e-9;
  *out = p;
  return OPTIC_OK;
}
