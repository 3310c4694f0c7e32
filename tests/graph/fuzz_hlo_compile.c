/* libFuzzer target for what `optic cost` and `optic compile` do with a file
 * (never running or evaluating it, so nothing here may take time by the
 * tensors' sizes): import; cost the entry and every instruction; compile at
 * --opt none and --opt full (buffer plans verified) and print the program.
 * Any status is fine; a crash, leak, UB or a broken invariant is a bug, and
 * so is an input over the per-input time limit (scripts/run-fuzzers gives
 * this target -timeout=5; the replay test fails an input over 5 s): the
 * seeds in tests/data/fuzz/hlo_compile/ have 2^40-element shapes and
 * windows and a callee reached by 2^40 call paths. Invariant: the optimized
 * module holds no more constant bytes than the original plus 16 per
 * original instruction (folding adds at most one element per instruction
 * it replaces, fusion copies only one-element constants). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Constant bytes and instructions over every computation of m. */
static void census(optic_module_t *m, double *constant_bytes, double *instructions) {
  *constant_bytes = 0, *instructions = 0;
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    for (int32_t i = 0; i < n; i++) {
      size_t bytes = 0;
      if (optic_node_opcode(m, ids[i]) == OPTIC_OP_CONSTANT) optic_node_constant_data(m, ids[i], &bytes);
      *constant_bytes += (double)bytes;
      *instructions += 1;
    }
  }
}

static void cost_everything(optic_module_t *m) {
  optic_cost c;
  optic_computation_cost(m, optic_module_entry(m), &c);
  for (optic_comp_id k = 0; k < optic_module_computation_count(m); k++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(m, k, &n);
    for (int32_t i = 0; i < n; i++) optic_node_cost(m, ids[i], &c);
  }
}

static void compile_at(const optic_module_t *m, const optic_machine *machine, optic_opt_level level, double max_bytes) {
  optic_compile_options o = optic_compile_options_default();
  o.level = level, o.machine = machine, o.verify_buffers = true;
  optic_program_t *p = NULL;
  if (optic_compile(m, &o, &p) != OPTIC_OK) return;
  char *text = NULL;
  if (optic_program_to_text(p, &text) != OPTIC_OK) abort();
  optic_module_t *copy = NULL;
  if (optic_module_clone(optic_program_module(p), &copy) != OPTIC_OK) abort();
  double bytes, instructions;
  census(copy, &bytes, &instructions);
  if (bytes > max_bytes) abort(); /* optimizing grew the program's constants */
  optic_module_destroy(copy);
  optic_string_free(text);
  optic_program_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  optic_module_t *m = NULL;
  if (optic_module_from_hlo_text((const char *)data, size, &m) != OPTIC_OK) return 0;
  optic_machine machine;
  if (optic_machine_preset("host-default", &machine) != OPTIC_OK) abort();
  cost_everything(m);
  double bytes, instructions;
  census(m, &bytes, &instructions);
  compile_at(m, &machine, OPTIC_OPT_NONE, bytes);
  compile_at(m, &machine, OPTIC_OPT_FULL, bytes + 16 * instructions);
  optic_module_destroy(m);
  return 0;
}
