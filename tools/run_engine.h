/* Internal to `optic run`: what executes the entry computation. An engine is
 * prepared once per module, runs it any number of times on the same
 * arguments, and may write a profile. The runtime (optic_compile +
 * optic_program_run) is the default; the reference evaluator (optic_evaluate:
 * exact, one instruction at a time) is the other (docs/hlo-text.md "optic run"). */
#ifndef OPTIC_TOOLS_RUN_ENGINE_H
#define OPTIC_TOOLS_RUN_ENGINE_H

#include <optic/optic.h>

/* How an engine is prepared. */
typedef struct run_engine_options {
  bool profile;    /* record what write_profile needs */
  int32_t threads; /* threads per run; 0: the engine's default (the runtime: all cores) */
} run_engine_options;

typedef struct run_engine {
  const char *name;        /* "evaluate", ... (printed in the summary) */
  const char *description; /* one line, for the summary */
  /* Builds the engine's state for module m (which outlives it). */
  optic_status (*prepare)(const optic_module_t *m, const run_engine_options *o, void **state);
  /* One execution of the entry computation. On entry *result is NULL or the
   * previous run's result, which the engine may reuse as this run's output
   * storage (the runtime does: a repeated run writes into the buffers the
   * first run allocated, as a trainer reusing its outputs would, so steady
   * runs do not time fresh pages) or destroy. On return *result is the run's
   * result (caller destroys), or NULL on failure. */
  optic_status (*run)(void *state, const optic_literal_t *const *args, int32_t nargs, optic_literal_t **result);
  /* Writes a Chrome trace of the runs so far to path; NULL when the engine
   * cannot profile (then --profile is refused before anything runs). */
  optic_status (*write_profile)(void *state, const char *path);
  /* The compiler's estimated time of one run (ns) and the threads a run uses;
   * NULL when the engine has no estimate / does not thread (then --threads is
   * refused before anything runs). */
  double (*estimate_ns)(void *state);
  int32_t (*threads)(void *state);
  /* Memory: the context's measured high-water mark (its pool's peak:
   * arenas, scratch) plus the bound input and output buffers and the
   * program's constants (what peak_bytes counts), and the compiler's
   * peak_bytes, in bytes; NULL when the engine has neither. */
  void (*memory)(void *state, double *measured_peak, double *estimated_peak);
  /* The profile's per-op table (optic_profile_summary_to_text: measured vs
   * estimated per op) of the runs so far; NULL when the engine cannot
   * profile. *text newly allocated (optic_string_free). */
  optic_status (*profile_table)(void *state, char **text);
  void (*destroy)(void *state); /* NULL-safe */
} run_engine;

/* The reference evaluator on the unoptimized module. */
extern const run_engine run_engine_evaluate;

/* The runtime: optic_compile + optic_program_run; profiles. The default. */
extern const run_engine run_engine_runtime;

/* The engine `optic run` uses: the one named by want (the --engine flag) when
 * it is not NULL, else by $OPTIC_RUN_ENGINE when set, else the first of the
 * table in run_engine.c (the runtime). NULL for an unknown name; *names gets
 * the known ones and *asked the name looked up, for the message. */
const run_engine *run_engine_select(const char *want, const char **asked, const char **names);

#endif
