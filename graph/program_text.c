/* The compiled program's dump: the optimized module in HLO syntax, each
 * scheduled computation in schedule order with a `//` comment after every
 * instruction (cost, estimated time, buffer), totals after each scheduled
 * computation and for the program. The comments make it still parse as HLO
 * text. Deterministic: the same program prints the same text (no timings).
 * Format: docs/compile.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hlo_print.h"
#include "graph/internal.h"
#include "graph/program_internal.h"
#include "core/unconst.h"

static const char *const level_names[] = {"none", "basic", "full"};

static const optic_node_id *order_hook(void *ctx, optic_comp_id comp, int32_t *n) {
  const optic_program_t *p = ctx;
  const optic_schedule_t *s = optic_program_schedule(p, comp);
  return s ? optic_schedule_order(s, n) : NULL;
}

static void print_slot(optic_strbuf *s, const optic_module_t *m, optic_node_id id, const optic_buffer_slot *b) {
  switch (b->kind) {
    case OPTIC_BUFFER_ARENA: optic_strbuf_printf(s, "arena:%zu+%zu", b->offset, b->size); break;
    case OPTIC_BUFFER_PARAMETER: optic_strbuf_printf(s, "param:%s", optic_node_name(m, b->source)); break;
    case OPTIC_BUFFER_CONSTANT: optic_strbuf_printf(s, "const:%s", optic_node_name(m, b->source)); break;
    case OPTIC_BUFFER_OUTPUT: optic_strbuf_printf(s, "output:%d+%zu", (int)b->output_leaf, b->size); break;
  }
  if (b->in_place_of != OPTIC_NO_NODE) optic_strbuf_printf(s, "(in-place:%s)", optic_node_name(m, b->in_place_of));
  else if (b->source != id && b->kind != OPTIC_BUFFER_PARAMETER && b->kind != OPTIC_BUFFER_CONSTANT)
    optic_strbuf_printf(s, "(alias:%s)", optic_node_name(m, b->source));
}

static void instruction_hook(void *ctx, optic_strbuf *s, optic_node_id id) {
  const optic_program_t *p = ctx;
  const optic_module_t *m = p->module;
  if (id < 0 || id >= p->n_nodes || !p->nodes[id].scheduled) return; /* fused and applied computations */
  const optic_node_estimate *e = &p->nodes[id].est;
  optic_strbuf_printf(s, "  // flops=%.0f transcendentals=%.0f bytes=%.0f est_ns=%.4g buffer=", e->cost.flops,
                      e->cost.transcendentals, e->cost.bytes_accessed, e->est_ns);
  const optic_buffer_plan_t *plan = p->plans[optic_node_computation(m, id)];
  int32_t leaves = optic_buffer_plan_leaf_count(plan, id);
  bool tuple = optic_type_is_tuple(optic_node_type(m, id));
  if (tuple) optic_strbuf_printf(s, "{");
  for (int32_t k = 0; k < leaves; k++) {
    optic_buffer_slot b;
    if (optic_buffer_plan_slot(plan, id, k, &b) != OPTIC_OK) continue;
    if (k) optic_strbuf_printf(s, ",");
    print_slot(s, m, id, &b);
  }
  if (tuple) optic_strbuf_printf(s, "}");
}

static void computation_hook(void *ctx, optic_strbuf *s, optic_comp_id comp) {
  const optic_program_t *p = ctx;
  const optic_buffer_plan_t *plan = optic_program_buffers(p, comp);
  if (plan == NULL) return;
  optic_memory_estimate mem;
  if (optic_buffer_plan_memory(plan, &mem) != OPTIC_OK) return;
  const optic_cost *c = &p->comp_cost[comp];
  optic_strbuf_printf(s,
                      "// totals %s: flops=%.0f transcendentals=%.0f bytes=%.0f est_ns=%.4g arena_bytes=%zu "
                      "parameter_bytes=%zu output_bytes=%zu constant_bytes=%zu schedule_peak_bytes=%zu\n",
                      optic_computation_name(p->module, comp), c->flops, c->transcendentals, c->bytes_accessed,
                      p->comp_est_ns[comp], mem.arena_bytes, mem.parameter_bytes, mem.output_bytes, mem.constant_bytes,
                      optic_schedule_peak_bytes(optic_buffer_plan_schedule(plan)));
}

static void header_hook(void *ctx, optic_strbuf *s) {
  const optic_program_t *p = ctx;
  const char *fusion = p->options.fusion < 0 ? "by-level" : p->options.fusion ? "on" : "off";
  optic_strbuf_printf(s,
                      "// optic compile: level=%s fusion=%s fold_max_bytes=%lld max_fusion_size=%d machine=%s "
                      "threads=%d\n"
                      "// after each scheduled instruction: flops transcendentals bytes(accessed) est_ns buffer\n",
                      level_names[p->options.level], fusion, (long long)p->options.fold_max_bytes,
                      (int)p->options.max_fusion_size, p->machine.name, (int)p->options.threads);
}

static void module_hook(void *ctx, optic_strbuf *s) {
  const optic_program_t *p = ctx;
  char source[OPTIC_MACHINE_SOURCE_MAX]; /* one comment line: control characters become spaces */
  snprintf(source, sizeof source, "%s", p->machine.source);
  for (char *c = source; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' ';
  const optic_program_summary *u = &p->summary;
  const optic_machine *mc = &p->machine;
  optic_strbuf_printf(s,
                      "// program: entry=%s instructions=%lld fusions=%lld flops=%.0f transcendentals=%.0f "
                      "bytes=%.0f est_ns=%.4g arena_bytes=%zu peak_bytes=%zu\n",
                      optic_computation_name(p->module, p->entry), (long long)u->instructions, (long long)u->fusions,
                      u->cost.flops, u->cost.transcendentals, u->cost.bytes_accessed, u->est_ns, u->memory.arena_bytes,
                      u->peak_bytes);
  optic_strbuf_printf(s,
                      "// machine: %s peak_flops=%.4g peak_transcendentals=%.4g dram_bandwidth=%.4g "
                      "core_dram_bandwidth=%.4g cache_bandwidth=%.4g cache_bytes=%.4g op_overhead_ns=%.4g "
                      "cores=%d\n// source: %s\n",
                      mc->name, mc->peak_flops, mc->peak_transcendentals, mc->dram_bandwidth, mc->core_dram_bandwidth,
                      mc->cache_bandwidth, mc->cache_bytes, mc->op_overhead_ns, (int)mc->cores, source);
}

optic_status optic_program_to_text(const optic_program_t *p, char **out) {
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "program_to_text: NULL argument");
  graph_print_hooks h = {
      .ctx = OPTIC_UNCONST(void *, p),
      .order = order_hook,
      .after_instruction = instruction_hook,
      .after_computation = computation_hook,
      .after_header = header_hook,
      .after_module = module_hook,
  };
  return graph_module_print(p->module, &h, out);
}
