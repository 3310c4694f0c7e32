/* `optic run` engine: the reference evaluator (graph/evaluate*.c) on the
 * unoptimized module. Exact and slow by design; it cannot profile. */
#include <stdlib.h>

#include "tools/run_engine.h"

typedef struct eval_state {
  const optic_module_t *m;
} eval_state;

static optic_status eval_prepare(const optic_module_t *m, const run_engine_options *o, void **state) {
  (void)o; /* the evaluator records nothing and runs on one thread */
  eval_state *s = calloc(1, sizeof *s);
  if (s == NULL) return OPTIC_ERR_OUT_OF_MEMORY;
  s->m = m;
  *state = s;
  return OPTIC_OK;
}

static optic_status eval_run(void *state, const optic_literal_t *const *args, int32_t nargs, optic_literal_t **result) {
  eval_state *s = state;
  optic_literal_destroy(*result); /* the evaluator makes a new result every run */
  *result = NULL;
  return optic_evaluate(s->m, optic_module_entry(s->m), args, nargs, NULL, result);
}

static void eval_destroy(void *state) { free(state); }

const run_engine run_engine_evaluate = {
    .name = "evaluate",
    .description = "reference evaluator (optic_evaluate, unoptimized module)",
    .prepare = eval_prepare,
    .run = eval_run,
    .write_profile = NULL,
    .estimate_ns = NULL,
    .threads = NULL,
    .memory = NULL,
    .profile_table = NULL,
    .destroy = eval_destroy,
};
