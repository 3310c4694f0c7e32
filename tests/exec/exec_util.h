/* Shared helpers of the runtime tests: random inputs for a module's entry,
 * the reference evaluator's answer, and a check that optic_program_run gives
 * the same (within a stated tolerance) at optimization levels NONE and FULL
 * on 1 and 2 threads, with caller and context-allocated outputs. */
#ifndef OPTIC_TESTS_EXEC_UTIL_H
#define OPTIC_TESTS_EXEC_UTIL_H

#include <optic/optic.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "tests/hlo_files.h"

/* The entry of m, on a zero first parameter, is refused with UNSUPPORTED and
 * a message naming `what` by the evaluator and by the runtime at each level
 * from 0 to max_level (step 2: NONE, FULL). */
static inline void ex_expect_refused(const optic_module_t *m, const char *what, int max_level) {
  optic_comp_id e = optic_module_entry(m);
  optic_literal_t *x = NULL, *got = NULL;
  optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, 0)), &x);
  OT_EXPECT_STATUS(optic_evaluate(m, e, (const optic_literal_t *const *)&x, 1, NULL, &got), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), what) != NULL, "evaluate: %s", optic_last_error());
  optic_literal_destroy(got);
  for (int level = 0; level <= max_level; level += 2) {
    optic_compile_options co = optic_compile_options_default();
    co.level = (optic_opt_level)level;
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_compile(m, &co, &p));
    optic_exec_ctx_t *ctx = NULL;
    optic_exec_options eo = optic_exec_options_default();
    OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
    const optic_type *it = optic_literal_type(x);
    optic_tensor in = {it->dtype, it->shape, (void *)optic_literal_data(x, NULL)};
    const optic_type *rt = optic_node_type(m, optic_computation_root(m, e));
    optic_literal_t *y = NULL;
    optic_literal_create(rt, &y);
    optic_tensor out = {rt->dtype, rt->shape, optic_literal_mutable_data(y, NULL)};
    if (p && ctx) {
      OT_EXPECT_STATUS(optic_program_run(p, ctx, &in, 1, &out, 1), OPTIC_ERR_UNSUPPORTED);
      OT_CHECK(strstr(optic_last_error(), what) != NULL, "run (level %d): %s", level, optic_last_error());
    }
    optic_literal_destroy(y);
    optic_exec_ctx_destroy(ctx);
    optic_program_destroy(p);
  }
  optic_literal_destroy(x);
}

typedef struct ex_rng {
  uint64_t s;
} ex_rng;

/* An array literal of dtype dt and the given dims holding data (NULL on any
 * error). */
static inline optic_literal_t *ex_lit_of(optic_dtype dt, int32_t rank, const int64_t *dims, const void *data) {
  optic_shape sh = {.rank = rank};
  for (int32_t d = 0; d < rank; d++) sh.dims[d] = dims[d];
  size_t bytes = 0;
  optic_literal_t *l = NULL;
  if (optic_shape_bytes(&sh, dt, &bytes) != OPTIC_OK ||
      optic_literal_create_array(dt, &sh, data, bytes, &l) != OPTIC_OK) {
    return NULL;
  }
  return l;
}

static inline optic_module_t *ex_parse(const char *text) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  return m;
}

/* print -> parse -> print gives the same text */
static inline void ex_round_trips(const optic_module_t *m) { optic_string_free(ot_print_round_trip(m)); }

static inline uint64_t ex_next(ex_rng *r) {
  uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline void ex_leaves(const optic_type *t, const optic_type **out, int32_t *n) {
  if (!optic_type_is_tuple(t)) {
    out[(*n)++] = t;
    return;
  }
  for (int32_t i = 0; i < t->tuple_size; i++) ex_leaves(&t->elements[i], out, n);
}

/* Fills an array literal with values exact in every dtype (small integers
 * and halves), so differences come from the ops, not the inputs. */
static inline void ex_fill(optic_literal_t *lit, ex_rng *r) {
  size_t bytes;
  void *d = optic_literal_mutable_data(lit, &bytes);
  const optic_type *t = optic_literal_type(lit);
  size_t es = optic_dtype_size(t->dtype), n = es ? bytes / es : 0;
  for (size_t i = 0; i < n; i++) {
    int64_t v = (int64_t)(ex_next(r) % 17) - 8;
    switch (t->dtype) {
      case OPTIC_F32: ((float *)d)[i] = (float)v / 4.0f; break;
      case OPTIC_F64: ((double *)d)[i] = (double)v / 4.0; break;
      case OPTIC_S32: ((int32_t *)d)[i] = (int32_t)v; break;
      case OPTIC_U8: ((uint8_t *)d)[i] = (uint8_t)(ex_next(r) % 7); break;
      case OPTIC_PRED: ((uint8_t *)d)[i] = (uint8_t)(ex_next(r) & 1); break;
      default: { /* halves: v/4 (exact); wider integers: v, unsigned ones 0..6 */
        double f = (double)v / 4.0;
        int64_t u = (int64_t)(ex_next(r) % 7);
        if (optic_dtype_is_float(t->dtype)) optic_convert_elements(OPTIC_F64, &f, t->dtype, (char *)d + i * es, 1);
        else if (optic_dtype_is_signed_int(t->dtype))
          optic_convert_elements(OPTIC_S64, &v, t->dtype, (char *)d + i * es, 1);
        else if (es) optic_convert_elements(OPTIC_S64, &u, t->dtype, (char *)d + i * es, 1);
        break;
      }
    }
  }
}

static inline void ex_fill_tree(optic_literal_t *lit, ex_rng *r) {
  int32_t n = optic_literal_tuple_size(lit);
  if (!optic_type_is_tuple(optic_literal_type(lit))) {
    ex_fill(lit, r);
    return;
  }
  for (int32_t i = 0; i < n; i++) ex_fill_tree((optic_literal_t *)optic_literal_element(lit, i), r);
}

static inline void ex_lit_leaves(const optic_literal_t *lit, const optic_literal_t **out, int32_t *n) {
  if (!optic_type_is_tuple(optic_literal_type(lit))) {
    out[(*n)++] = lit;
    return;
  }
  for (int32_t i = 0; i < optic_literal_tuple_size(lit); i++) ex_lit_leaves(optic_literal_element(lit, i), out, n);
}

#define EX_MAX_LEAVES 64

/* Runs m through the runtime at `level` on `threads` threads and compares
 * with expected under `mode` (abs_tol and rel_tol: TOLERANCE only).
 * Returns false (after printing why) on a mismatch. */
static inline bool ex_run_compare_mode(const optic_module_t *m, optic_opt_level level, int32_t threads,
                                       const optic_literal_t *const *args, int32_t nargs,
                                       const optic_literal_t *expected, optic_literal_match_mode mode, double abs_tol,
                                       double rel_tol, bool context_outputs, const char *label) {
  optic_compile_options co = optic_compile_options_default();
  co.level = level;
  co.verify_buffers = true;
  optic_program_t *p = NULL;
  optic_status st = optic_compile(m, &co, &p);
  if (st != OPTIC_OK) {
    OT_CHECK(false, "%s: compile failed: %s", label, optic_last_error());
    return false;
  }
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = threads > 1 ? 1 : 0; /* 2 threads: split every op, to test the shares */
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
  optic_tensor in[EX_MAX_LEAVES], out[EX_MAX_LEAVES];
  const optic_literal_t *ileaves[EX_MAX_LEAVES], *eleaves[EX_MAX_LEAVES];
  int32_t n_in = 0, n_out = 0;
  for (int32_t i = 0; i < nargs; i++) ex_lit_leaves(args[i], ileaves, &n_in);
  for (int32_t i = 0; i < n_in; i++) {
    const optic_type *t = optic_literal_type(ileaves[i]);
    in[i] = (optic_tensor){t->dtype, t->shape, (void *)optic_literal_data(ileaves[i], NULL)};
  }
  ex_lit_leaves(expected, eleaves, &n_out);
  optic_literal_t *got[EX_MAX_LEAVES] = {NULL};
  for (int32_t i = 0; i < n_out; i++) {
    const optic_type *t = optic_literal_type(eleaves[i]);
    optic_literal_create_array(t->dtype, &t->shape, NULL, 0, &got[i]);
    out[i] = (optic_tensor){t->dtype, t->shape, context_outputs ? NULL : optic_literal_mutable_data(got[i], NULL)};
  }
  bool ok = true;
  for (int rep = 0; rep < 2 && ok; rep++) { /* twice: the second run reuses the binding and arenas */
    st = optic_program_run(p, ctx, in, n_in, out, n_out);
    if (st != OPTIC_OK) {
      OT_CHECK(false, "%s: run failed: %s: %s", label, optic_status_name(st), optic_last_error());
      ok = false;
      break;
    }
    for (int32_t i = 0; i < n_out && ok; i++) {
      size_t bytes;
      void *g = optic_literal_mutable_data(got[i], &bytes);
      if (context_outputs && bytes) memcpy(g, out[i].data, bytes);
      char why[256];
      if (!optic_literal_match(eleaves[i], got[i], mode, abs_tol, rel_tol, why, sizeof why)) {
        OT_CHECK(false, "%s: level %d threads %d output %d: %s", label, (int)level, (int)threads, (int)i, why);
        ok = false;
      }
    }
  }
  for (int32_t i = 0; i < n_out; i++) optic_literal_destroy(got[i]);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  return ok;
}

/* ex_run_compare_mode within tolerances. */
static inline bool ex_run_compare(const optic_module_t *m, optic_opt_level level, int32_t threads,
                                  const optic_literal_t *const *args, int32_t nargs, const optic_literal_t *expected,
                                  double abs_tol, double rel_tol, bool context_outputs, const char *label) {
  return ex_run_compare_mode(m, level, threads, args, nargs, expected, OPTIC_MATCH_TOLERANCE, abs_tol, rel_tol,
                             context_outputs, label);
}

/* Runs m once (level NONE, 1 thread) to produce a reference: for modules
 * too large for the naive evaluator within a test's time budget. */
static inline optic_status ex_runtime_reference(const optic_module_t *m, const optic_literal_t *const *args,
                                                int32_t nargs, optic_literal_t **out) {
  optic_compile_options co = optic_compile_options_default();
  co.level = OPTIC_OPT_NONE;
  optic_program_t *p = NULL;
  optic_status st = optic_compile(m, &co, &p);
  if (st != OPTIC_OK) return st;
  optic_exec_ctx_t *ctx = NULL;
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  if ((st = optic_exec_ctx_create(&eo, &ctx)) != OPTIC_OK) {
    optic_program_destroy(p);
    return st;
  }
  optic_comp_id e = optic_module_entry(m);
  optic_literal_t *res = NULL;
  st = optic_literal_create(optic_node_type(m, optic_computation_root(m, e)), &res);
  optic_tensor in[EX_MAX_LEAVES], outs[EX_MAX_LEAVES];
  const optic_literal_t *il[EX_MAX_LEAVES], *ol[EX_MAX_LEAVES];
  int32_t n_in = 0, n_out = 0;
  for (int32_t i = 0; i < nargs; i++) ex_lit_leaves(args[i], il, &n_in);
  for (int32_t i = 0; i < n_in; i++) {
    const optic_type *t = optic_literal_type(il[i]);
    in[i] = (optic_tensor){t->dtype, t->shape, (void *)optic_literal_data(il[i], NULL)};
  }
  if (st == OPTIC_OK) {
    ex_lit_leaves(res, ol, &n_out);
    for (int32_t i = 0; i < n_out; i++) {
      const optic_type *t = optic_literal_type(ol[i]);
      outs[i] = (optic_tensor){t->dtype, t->shape, optic_literal_mutable_data((optic_literal_t *)ol[i], NULL)};
    }
    st = optic_program_run(p, ctx, in, n_in, outs, n_out);
  }
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  if (st != OPTIC_OK) {
    optic_literal_destroy(res);
    return st;
  }
  *out = res;
  return OPTIC_OK;
}

/* Random inputs, the evaluator's result (or, for modules over
 * max_eval_flops, the runtime's own at level NONE on 1 thread), then levels
 * NONE and FULL on 1 and 2 threads. */
static inline bool ex_check_module_ex(const optic_module_t *m, uint64_t seed, double abs_tol, double rel_tol,
                                      double max_eval_flops, const char *label) {
  ex_rng r = {seed};
  optic_comp_id e = optic_module_entry(m);
  int32_t np = optic_computation_parameter_count(m, e);
  optic_literal_t *args[32] = {NULL};
  for (int32_t i = 0; i < np && i < 32; i++) {
    optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, i)), &args[i]);
    ex_fill_tree(args[i], &r);
  }
  optic_literal_t *expected = NULL;
  optic_cost cost = {0};
  optic_computation_cost(m, e, &cost);
  optic_status st = cost.flops > max_eval_flops
                        ? ex_runtime_reference(m, (const optic_literal_t *const *)args, np, &expected)
                        : optic_evaluate(m, e, (const optic_literal_t *const *)args, np, NULL, &expected);
  if (cost.flops > max_eval_flops)
    printf("  %s: %.3g flops: reference is the runtime at NONE, 1 thread\n", label, cost.flops);
  bool ok = true;
  if (st != OPTIC_OK) {
    OT_CHECK(false, "%s: evaluate failed: %s", label, optic_last_error());
    ok = false;
  }
  for (int level = 0; level <= 2 && ok; level += 2) {
    for (int32_t t = 1; t <= 2 && ok; t++) {
      ok = ex_run_compare(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, np, expected, abs_tol,
                          rel_tol, t == 2, label);
    }
  }
  optic_literal_destroy(expected);
  for (int32_t i = 0; i < np && i < 32; i++) optic_literal_destroy(args[i]);
  return ok;
}

static inline bool ex_check_module(const optic_module_t *m, uint64_t seed, double abs_tol, double rel_tol,
                                   const char *label) {
  return ex_check_module_ex(m, seed, abs_tol, rel_tol, 1e300, label);
}

#endif
