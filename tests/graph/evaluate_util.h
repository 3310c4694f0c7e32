/* Shared helpers of the evaluator tests (tests/graph/test_evaluate*.c): a
 * fresh module per case, parameters and constants in one call, literals
 * from C arrays, and evaluate-then-compare that prints both values and the
 * first difference on failure. Any setup failure exits with status 2. */
#ifndef OPTIC_TESTS_GRAPH_EVALUATE_UTIL_H
#define OPTIC_TESTS_GRAPH_EVALUATE_UTIL_H

#include <optic/optic.h>
#include <string.h>

#include "tests/harness.h"
#include "tests/hlo_files.h"

static optic_module_t *ev_m;
static optic_comp_id ev_main;

static inline void ev_destroy(void) {
  optic_module_destroy(ev_m);
  ev_m = NULL;
}

__attribute__((noreturn)) static inline void ev_die(const char *what) {
  fprintf(stderr, "  setup failed: %s: %s\n", what, optic_last_error());
  exit(2);
}

/* Each case starts from an empty module with computation "main"; the last
 * one is freed at exit. */
static inline void ev_fresh(void) {
  static bool registered = false;
  if (!registered) registered = atexit(ev_destroy) == 0;
  ev_destroy();
  if (optic_module_create("evaluate", &ev_m) || optic_module_add_computation(ev_m, "main", &ev_main)) {
    ev_die("module");
  }
}

static inline optic_shape ev_shape(int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static inline optic_comp_id ev_comp(const char *name) {
  optic_comp_id c;
  if (optic_module_add_computation(ev_m, name, &c)) ev_die(name);
  return c;
}

static inline optic_node_id ev_param(optic_comp_id c, int32_t n, optic_dtype dt, int32_t rank, const int64_t *dims) {
  optic_shape s = ev_shape(rank, dims);
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id;
  if (optic_graph_parameter(ev_m, c, n, &t, NULL, &id)) ev_die("parameter");
  return id;
}

static inline optic_node_id ev_param_type(optic_comp_id c, int32_t n, const optic_type *t) {
  optic_node_id id;
  if (optic_graph_parameter(ev_m, c, n, t, NULL, &id)) ev_die("parameter");
  return id;
}

static inline optic_node_id ev_const(optic_comp_id c, optic_dtype dt, int32_t rank, const int64_t *dims,
                                     const void *data) {
  optic_shape s = ev_shape(rank, dims);
  size_t bytes;
  optic_node_id id;
  if (optic_shape_bytes(&s, dt, &bytes) || optic_graph_constant(ev_m, c, dt, &s, data, bytes, NULL, &id)) {
    ev_die("constant");
  }
  return id;
}

static inline void ev_root(optic_comp_id c, optic_node_id root) {
  if (optic_computation_set_root(ev_m, c, root)) ev_die("root");
}

/* A literal from a C array (data NULL: zeros). The caller destroys it. */
static inline optic_literal_t *ev_lit(optic_dtype dt, int32_t rank, const int64_t *dims, const void *data) {
  optic_shape s = ev_shape(rank, dims);
  size_t bytes;
  optic_literal_t *l;
  if (optic_shape_bytes(&s, dt, &bytes) || optic_literal_create_array(dt, &s, data, bytes, &l)) ev_die("literal");
  return l;
}

/* A scalar combiner computation: root = op(p0, p1) over dtype dt. */
static inline optic_comp_id ev_binary_comp(const char *name, optic_opcode op, optic_dtype dt) {
  optic_comp_id c = ev_comp(name);
  optic_node_id a = ev_param(c, 0, dt, 0, NULL), b = ev_param(c, 1, dt, 0, NULL), r;
  if (optic_graph_binary(ev_m, c, op, a, b, NULL, &r)) ev_die(name);
  ev_root(c, r);
  return c;
}

/* True if got matches want under mode; prints both and the difference if not. */
static inline bool ev_same(const optic_literal_t *want, const optic_literal_t *got, optic_literal_match_mode mode) {
  char why[256];
  if (optic_literal_match(want, got, mode, 0, 0, why, sizeof why)) return true;
  char b1[1024], b2[1024];
  optic_literal_format(want, b1, sizeof b1);
  optic_literal_format(got, b2, sizeof b2);
  fprintf(stderr, "  %s\n  want %s\n  got  %s\n", why, b1, b2);
  return false;
}

/* Evaluates c on args; NULL (with the error printed) on failure. */
static inline optic_literal_t *ev_run(optic_comp_id c, const optic_literal_t *const *args, int32_t n) {
  optic_literal_t *r = NULL;
  optic_status st = optic_evaluate(ev_m, c, args, n, NULL, &r);
  if (st != OPTIC_OK) fprintf(stderr, "  evaluate failed: %s: %s\n", optic_status_name(st), optic_last_error());
  return r;
}

/* Evaluates c on args and compares the result bitwise with an array of
 * dtype dt and shape dims holding `want`. */
static inline bool ev_check(optic_comp_id c, const optic_literal_t *const *args, int32_t n, optic_dtype dt,
                            int32_t rank, const int64_t *dims, const void *want) {
  optic_literal_t *got = ev_run(c, args, n);
  if (got == NULL) return false;
  optic_literal_t *w = ev_lit(dt, rank, dims, want);
  bool ok = ev_same(w, got, OPTIC_MATCH_BITWISE);
  optic_literal_destroy(w);
  optic_literal_destroy(got);
  return ok;
}

/* Parses text, prints it, parses that print and prints again, and checks
 * the two prints are equal. Returns the first print (free it with
 * optic_string_free; NULL if parsing failed) and the module parsed from
 * text in *out (the caller destroys it). */
static inline char *ev_print_round_trip(const char *text, optic_module_t **out) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  *out = m;
  return m ? ot_print_round_trip(m) : NULL;
}

#endif
