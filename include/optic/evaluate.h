/* optic graph layer, reference evaluator: host literals and a naive
 * interpreter of a module's computations (<optic/graph.h>), the oracle the
 * passes and the runtime are tested against.
 *
 * Contents, in order:
 *   1. literals: create, clone, destroy, read, format
 *   2. literal comparison (bitwise, NaN-aware, with tolerances)
 *   3. evaluation options and optic_evaluate / optic_evaluate_node */
#ifndef OPTIC_EVALUATE_H
#define OPTIC_EVALUATE_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================ evaluator
 * The reference evaluator (graph/evaluate*.c, docs/graph-evaluate.md): a
 * naive interpreter of a module's computations on host literals. It is the
 * oracle that constant folding, the pass tests and the runtime's tests
 * compare against, so it aims at being obviously right, not fast: f32
 * elementwise ops and convolution run the kernels' naive references
 * (kernels/ref/), everything else plain loops.
 *
 * Thread safety: evaluation only reads the module, so any number of threads
 * may evaluate one module at once as long as nobody changes it. A literal is
 * a plain value owned by whoever created it: distinct literals are
 * independent; one literal may be read by many threads, written by one. */

/* A literal: host data of one optic_type. An array literal owns
 * bytes = elements x dtype size of row-major data (pred: one 0/1 byte per
 * element); a tuple literal owns one literal per element. Opaque: use the
 * accessors. */
typedef struct optic_literal optic_literal_t;

/* A zero-filled literal of type (arrays or tuples, element types copied).
 * The caller owns *out and frees it with optic_literal_destroy. Errors:
 * INVALID_ARGUMENT (NULL, bad dtype or tuple), OVERFLOW, OUT_OF_MEMORY. */
OPTIC_API optic_status optic_literal_create(const optic_type *type, optic_literal_t **out);
/* An array literal holding a copy of data (row-major; bytes must equal the
 * array's byte size; data may be NULL for zeros). */
OPTIC_API optic_status optic_literal_create_array(optic_dtype dtype, const optic_shape *shape, const void *data,
                                                  size_t bytes, optic_literal_t **out);
/* A tuple literal holding deep copies of the n >= 0 elements. */
OPTIC_API optic_status optic_literal_create_tuple(const optic_literal_t *const *elements, int32_t n,
                                                  optic_literal_t **out);
/* A deep copy. */
OPTIC_API optic_status optic_literal_clone(const optic_literal_t *lit, optic_literal_t **out);
/* Frees lit and its elements. NULL-safe. */
OPTIC_API void optic_literal_destroy(optic_literal_t *lit);
/* The literal's type (owned by the literal, valid until it is destroyed). */
OPTIC_API const optic_type *optic_literal_type(const optic_literal_t *lit);
/* An array literal's bytes (NULL for tuples and empty arrays); *bytes (if
 * not NULL) gets their count (0 for tuples). Valid until destroy. */
OPTIC_API const void *optic_literal_data(const optic_literal_t *lit, size_t *bytes);
OPTIC_API void *optic_literal_mutable_data(optic_literal_t *lit, size_t *bytes);
/* A tuple literal's element count (0 for arrays) and element i (NULL when
 * out of range; owned by the tuple). */
OPTIC_API int32_t optic_literal_tuple_size(const optic_literal_t *lit);
OPTIC_API const optic_literal_t *optic_literal_element(const optic_literal_t *lit, int32_t i);
/* XLA's literal text: "f32[2,2] {{1, 2}, {3, 4}}", "(s32[] 7, pred[2] {1, 0})".
 * Floats print with 9 (f32) or 17 (f64) significant digits. Returns the
 * length needed, like snprintf. */
OPTIC_API int optic_literal_format(const optic_literal_t *lit, char *buf, size_t size);

typedef enum optic_literal_match_mode {
  OPTIC_MATCH_BITWISE,   /* every byte equal: NaN payloads and signed zeros count */
  OPTIC_MATCH_NAN_AWARE, /* bitwise, except that any NaN matches any NaN */
  OPTIC_MATCH_TOLERANCE  /* floats: both NaN, or equal (inf == inf, -0 == +0), or
                            |actual - expected| <= abs_tol + rel_tol * |expected|;
                            integers and pred exactly */
} optic_literal_match_mode;
/* True if actual matches expected: equal types and every element matching
 * under mode (abs_tol and rel_tol are read only in TOLERANCE mode). On a
 * mismatch, why (if not NULL) gets a description of the first difference,
 * e.g. "element 3 (index [1,0]): expected 1.5, got 1.50001". */
OPTIC_API bool optic_literal_match(const optic_literal_t *expected, const optic_literal_t *actual,
                                   optic_literal_match_mode mode, double abs_tol, double rel_tol, char *why,
                                   size_t why_size);

/* Evaluation options; start from optic_evaluate_options_default(). */
typedef struct optic_evaluate_options {
  size_t size;                  /* sizeof(optic_evaluate_options): lets the struct grow */
  int64_t max_while_iterations; /* a while whose body has run this many times and whose condition
                                   is still true fails with OPTIC_ERR_TIMEOUT; >= 0; default 1,000,000 */
} optic_evaluate_options;
OPTIC_API optic_evaluate_options optic_evaluate_options_default(void);

/* Evaluates computation comp of m on nargs arguments (args[i] is parameter
 * i's value; types must equal the parameters' types) and writes its root's
 * value to *result (the caller owns it; optic_literal_destroy). options may
 * be NULL for the defaults. Only the root's dependencies are evaluated.
 * Semantics per op and dtype: docs/graph-evaluate.md. Errors:
 * INVALID_ARGUMENT (bad ids, no root, wrong argument count, a recursive
 * call), SHAPE_MISMATCH (an argument of the wrong type), UNSUPPORTED (an
 * op/dtype pair the evaluator does not define, named in the message),
 * TIMEOUT (max_while_iterations exceeded), OVERFLOW, OUT_OF_MEMORY. The
 * message names the failing instruction. Nothing is leaked on error and
 * *result is NULL then. */
OPTIC_API optic_status optic_evaluate(const optic_module_t *m, optic_comp_id comp, const optic_literal_t *const *args,
                                      int32_t nargs, const optic_evaluate_options *options, optic_literal_t **result);
/* Evaluates the single instruction id on the given operand values (one per
 * operand, types equal to the operands' types), e.g. for constant folding; a
 * constant needs none. Instructions that call computations evaluate them.
 * parameter is INVALID_ARGUMENT (it has no value outside a computation).
 * Errors otherwise as optic_evaluate. */
OPTIC_API optic_status optic_evaluate_node(const optic_module_t *m, optic_node_id id,
                                           const optic_literal_t *const *operands, int32_t n,
                                           const optic_evaluate_options *options, optic_literal_t **result);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_EVALUATE_H */
