/* libFuzzer target for what `optic run` does with a file: import, then, for
 * modules small enough to evaluate quickly (every value under 64 Ki elements,
 * at most 10^7 flops counting each while body 1,000 times, the evaluator's
 * cap on its iterations), evaluate the entry on generated arguments. Any status is fine; a crash, leak, UB or an
 * OK result of the wrong type is a bug. Built by the fuzz preset; elsewhere the
 * replay test fuzz_hlo_evaluate_replay. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool small_type(const optic_type *t) {
  if (optic_type_is_tuple(t)) {
    for (int32_t i = 0; i < t->tuple_size; i++) {
      if (!small_type(&t->elements[i])) return false;
    }
    return true;
  }
  size_t n = 0;
  return optic_shape_elements(&t->shape, &n) == OPTIC_OK && n <= 65536;
}

/* XLA counts a reduce-window that reduces one dim of size n and
 * broadcasts it back as outputs / n + n - 1 combiner runs, far below the
 * outputs x (2n - 1) window positions the evaluator visits: where the count
 * is below one run per output, bound the positions by outputs x 2 x the
 * largest output dim instead. */
static bool small_window(optic_module_t *m, optic_node_id id) {
  const optic_type *t = optic_node_type(m, id);
  optic_cost c;
  size_t outs = 0;
  if (optic_type_is_tuple(t) || optic_node_cost(m, id, &c) != OPTIC_OK) return true;
  optic_shape_elements(&t->shape, &outs);
  if (c.flops >= (double)outs) return true;
  int64_t widest = 1;
  for (int32_t d = 0; d < t->shape.rank; d++) widest = t->shape.dims[d] > widest ? t->shape.dims[d] : widest;
  return (double)outs * 2.0 * (double)widest <= 1e7;
}

/* Every instruction of every computation has a small type (and every
 * reduce-window a small evaluation). */
static bool small_module(optic_module_t *m) {
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    for (int32_t i = 0; i < n; i++) {
      if (!small_type(optic_node_type(m, ids[i]))) return false;
      if (optic_node_opcode(m, ids[i]) == OPTIC_OP_REDUCE_WINDOW && !small_window(m, ids[i])) return false;
    }
  }
  return true;
}

static void fill(optic_literal_t *lit, uint32_t *seed) {
  const optic_type *t = optic_literal_type(lit);
  if (optic_type_is_tuple(t)) {
    for (int32_t i = 0; i < optic_literal_tuple_size(lit); i++)
      fill((optic_literal_t *)optic_literal_element(lit, i), seed);
    return;
  }
  size_t bytes = 0;
  uint8_t *d = optic_literal_mutable_data(lit, &bytes);
  size_t es = optic_dtype_size(t->dtype);
  for (size_t i = 0; es && i < bytes / es; i++) { /* a token holds nothing */
    *seed = *seed * 1664525u + 1013904223u;
    int32_t small = (int32_t)(*seed >> 28) - 8; /* -8..7 */
    switch (t->dtype) {
      case OPTIC_F32: ((float *)d)[i] = (float)small * 0.25f; break;
      case OPTIC_F64: ((double *)d)[i] = small * 0.25; break;
      case OPTIC_S32: ((int32_t *)d)[i] = small; break;
      case OPTIC_U8: d[i] = (uint8_t)(*seed >> 24); break;
      case OPTIC_PRED: d[i] = (uint8_t)(*seed >> 31); break;
      default: { /* the other integers and the halves: small values, exact in each */
        double v = optic_dtype_is_float(t->dtype) ? small * 0.25 : small;
        optic_convert_elements(OPTIC_F64, &v, t->dtype, d + i * es, 1);
        break;
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  optic_module_t *m = NULL;
  if (optic_module_from_hlo_text((const char *)data, size, &m) != OPTIC_OK) return 0;
  optic_comp_id entry = optic_module_entry(m);
  optic_cost cost;
  /* XLA counts a while body once; the evaluator may run it up to the cap,
   * per loop (a scan of 128x128 matmuls took over 10 s under ASan) */
  double runs = 1;
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    for (int32_t i = 0; i < n; i++) runs *= optic_node_opcode(m, ids[i]) == OPTIC_OP_WHILE ? 1000.0 : 1.0;
  }
  if (!small_module(m) || optic_computation_cost(m, entry, &cost) != OPTIC_OK || cost.flops * runs > 1e7) {
    optic_module_destroy(m);
    return 0;
  }
  int32_t np = optic_computation_parameter_count(m, entry);
  optic_literal_t **args = calloc((size_t)np + 1, sizeof *args);
  uint32_t seed = 12345;
  bool ok = args != NULL;
  for (int32_t i = 0; ok && i < np; i++) {
    ok = optic_literal_create(optic_node_type(m, optic_computation_parameter(m, entry, i)), &args[i]) == OPTIC_OK;
    if (ok) fill(args[i], &seed);
  }
  if (ok) {
    optic_evaluate_options o = optic_evaluate_options_default();
    o.max_while_iterations = 1000;
    optic_literal_t *result = NULL;
    if (optic_evaluate(m, entry, (const optic_literal_t *const *)args, np, &o, &result) == OPTIC_OK) {
      const optic_type *want = optic_node_type(m, optic_computation_root(m, entry));
      if (result == NULL || !optic_type_equal(optic_literal_type(result), want)) abort();
    }
    optic_literal_destroy(result);
  }
  for (int32_t i = 0; args && i < np; i++) optic_literal_destroy(args[i]);
  free(args);
  optic_module_destroy(m);
  return 0;
}
