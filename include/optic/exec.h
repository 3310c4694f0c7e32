/* optic runtime layer (exec/): the execution context that runs compiled programs. */
#ifndef OPTIC_EXEC_H
#define OPTIC_EXEC_H

#include <optic/compile.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ====================================================== execution context and run
 * exec/run.c, exec/bind.c, exec/ops_*.c, exec/ewprog.c; docs/runtime.md.
 *
 * A context holds what running needs besides the program: the threads, the
 * arenas of the program's buffer plans (from its memory pool, reused across
 * runs), scratch for dot/convolution packing and the fused loops' block
 * registers, and the binding of the last program run on it (its steps,
 * barrier placement and lowered fused loops; rebuilt when another program
 * is run).
 *
 * Thread safety: a context is used by one thread at a time (it runs one
 * program at a time, with its own OpenMP team inside). Distinct contexts are
 * independent, so one program may run concurrently on several contexts. */

typedef struct optic_exec_ctx optic_exec_ctx_t;

typedef struct optic_exec_options {
  size_t size;                  /* sizeof(optic_exec_options); fields beyond it take defaults */
  int32_t threads;              /* threads of the one parallel region per run; 0 (default): the
                                   device's cores */
  int32_t device;               /* device id (optic_device_list); default 0, the host */
  int64_t max_while_iterations; /* a while whose body ran this many times and whose condition is
                                   still true fails with OPTIC_ERR_TIMEOUT; default 1,000,000 */
  const optic_allocator *allocator; /* NULL: optic_default_allocator(); outlives the context */
} optic_exec_options;

OPTIC_API optic_exec_options optic_exec_options_default(void);

/* Creates a context (options may be NULL). The caller owns it and frees it
 * with optic_exec_ctx_destroy (NULL-safe), which frees every buffer the
 * context lent out (context-allocated outputs included). Errors:
 * INVALID_ARGUMENT (bad options), NOT_FOUND (unknown device), OUT_OF_MEMORY. */
OPTIC_API optic_status optic_exec_ctx_create(const optic_exec_options *options, optic_exec_ctx_t **out);
OPTIC_API void optic_exec_ctx_destroy(optic_exec_ctx_t *ctx);
/* Threads a run uses. */
OPTIC_API int32_t optic_exec_ctx_threads(const optic_exec_ctx_t *ctx);

/* Runs the program's entry computation once.
 *
 * Inputs: inputs[i] is the i-th array leaf of the entry's parameters, in
 * parameter number order (a tuple parameter contributes its array leaves,
 * depth first); n_in must equal that count. Each must have exactly the
 * leaf's dtype and shape. They are only read.
 *
 * Outputs: outputs[j] is the j-th array leaf of the root's value (one output
 * for an array root); n_out must equal the leaf count. For each output:
 *  - data != NULL: the caller's buffer; dtype and shape must equal the leaf's.
 *    It must not overlap any input or another output.
 *  - data == NULL: the context provides the buffer and writes dtype, shape
 *    and data into outputs[j]; that memory belongs to the context and stays
 *    valid until the next run on this context or its destruction.
 *
 * Errors (the message names the position and the expected and given
 * values): INVALID_ARGUMENT (NULL arguments, wrong counts), SHAPE_MISMATCH
 * (dtype or shape of an input or output), TIMEOUT (a while loop over
 * max_while_iterations), UNSUPPORTED (an op/dtype pair the runtime does not
 * execute, e.g. dot on s32, named at bind time before anything runs),
 * OUT_OF_MEMORY. On error the outputs' contents are unspecified. */
OPTIC_API optic_status optic_program_run(const optic_program_t *program, optic_exec_ctx_t *ctx,
                                         const optic_tensor *inputs, int32_t n_in, optic_tensor *outputs,
                                         int32_t n_out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_EXEC_H */
