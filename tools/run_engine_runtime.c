/* `optic run` engine: the runtime. optic_compile (default options, the host
 * machine model, estimates for the context's threads) once, then
 * optic_program_run on one execution context (all cores, or --threads N) per
 * run of the command; with --profile the context records into its own
 * profiler (the compile and its passes first, then every run's ops) and the
 * Chrome trace is written from it. */
#include <stdlib.h>

#include "tools/run_engine.h"
#include "core/unconst.h"

typedef struct runtime_state {
  optic_program_t *program;
  optic_exec_ctx_t *ctx;
  optic_type root_type; /* the entry root's type in the source module (owned by it) */
  int32_t n_in, n_out;
  optic_tensor *in, *out;
  double est_ns;         /* the program summary's estimate of one run */
  double est_peak_bytes; /* optic_program_run_memory's peak_bytes for the context's threads */
  double constant_bytes; /* held by the program */
} runtime_state;

static int32_t count_leaves(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return 1;
  int32_t n = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) n += count_leaves(&t->elements[i]);
  return n;
}

static void runtime_destroy(void *state) {
  runtime_state *s = state;
  if (s == NULL) return;
  optic_exec_ctx_destroy(s->ctx);
  optic_program_destroy(s->program);
  free(s->in);
  free(s->out);
  free(s);
}

static optic_status runtime_prepare(const optic_module_t *m, const run_engine_options *ro, void **state) {
  bool profile = ro->profile;
  runtime_state *s = calloc(1, sizeof *s);
  if (s == NULL) return OPTIC_ERR_OUT_OF_MEMORY;
  optic_comp_id entry = optic_module_entry(m);
  s->root_type = *optic_node_type(m, optic_computation_root(m, entry));
  for (int32_t i = 0; i < optic_computation_parameter_count(m, entry); i++) {
    s->n_in += count_leaves(optic_node_type(m, optic_computation_parameter(m, entry, i)));
  }
  s->n_out = count_leaves(&s->root_type);
  s->in = calloc((size_t)s->n_in + 1, sizeof *s->in);
  s->out = calloc((size_t)s->n_out + 1, sizeof *s->out);
  optic_status st = s->in && s->out ? OPTIC_OK : OPTIC_ERR_OUT_OF_MEMORY;
  uint64_t compile_start = optic_now_ns();
  if (st == OPTIC_OK) {
    optic_exec_options o = optic_exec_options_default();
    o.profile = profile;
    o.threads = ro->threads;
    st = optic_exec_ctx_create(&o, &s->ctx);
  }
  if (st == OPTIC_OK) {
    /* the profile's estimates are for the context's threads */
    optic_compile_options co = optic_compile_options_default();
    co.threads = optic_exec_ctx_threads(s->ctx);
    st = optic_compile(m, &co, &s->program);
  }
  optic_program_summary sum;
  optic_run_memory rm = {.size = sizeof rm};
  if (st == OPTIC_OK && (st = optic_program_summary_get(s->program, &sum)) == OPTIC_OK) s->est_ns = sum.est_ns;
  if (st == OPTIC_OK) {
    optic_exec_options o = optic_exec_options_default();
    o.threads = optic_exec_ctx_threads(s->ctx);
    if ((st = optic_program_run_memory(s->program, &o, &rm)) == OPTIC_OK) {
      s->est_peak_bytes = (double)rm.peak_bytes;
      s->constant_bytes = (double)rm.constant_bytes;
    }
  }
  if (st == OPTIC_OK && profile) {
    /* the trace starts with the compile and its passes */
    st = optic_profiler_record_compile(optic_exec_ctx_profiler(s->ctx), &sum.passes, sum.compile_seconds, s->program,
                                       compile_start);
  }
  if (st != OPTIC_OK) {
    runtime_destroy(s);
    return st;
  }
  *state = s;
  return OPTIC_OK;
}

/* Views of a literal's array leaves, depth first, as tensors (writable: the
 * result literal's leaves are the runtime's caller-provided outputs). */
static int32_t leaf_views(optic_literal_t *lit, optic_tensor *views) {
  const optic_type *t = optic_literal_type(lit);
  if (!optic_type_is_tuple(t)) {
    views[0] = (optic_tensor){.dtype = t->dtype, .shape = t->shape, .data = optic_literal_mutable_data(lit, NULL)};
    return 1;
  }
  int32_t n = 0;
  for (int32_t i = 0; i < optic_literal_tuple_size(lit); i++) {
    n += leaf_views(OPTIC_UNCONST(optic_literal_t *, optic_literal_element(lit, i)), views + n);
  }
  return n;
}

static optic_status runtime_run(void *state, const optic_literal_t *const *args, int32_t nargs,
                                optic_literal_t **result) {
  runtime_state *s = state;
  int32_t k = 0;
  for (int32_t i = 0; i < nargs; i++)
    k += leaf_views(OPTIC_UNCONST(optic_literal_t *, args[i]), s->in + k); /* only read */
  optic_literal_t *out = *result; /* the previous run's: its leaves are this run's outputs */
  *result = NULL;
  optic_status st = out != NULL ? OPTIC_OK : optic_literal_create(&s->root_type, &out);
  if (st == OPTIC_OK) leaf_views(out, s->out);
  if (st == OPTIC_OK) st = optic_program_run(s->program, s->ctx, s->in, k, s->out, s->n_out);
  if (st != OPTIC_OK) {
    optic_literal_destroy(out);
    return st;
  }
  *result = out;
  return OPTIC_OK;
}

static optic_status runtime_write_profile(void *state, const char *path) {
  runtime_state *s = state;
  return optic_profiler_write_trace(optic_exec_ctx_profiler(s->ctx), path);
}

static double runtime_estimate_ns(void *state) { return ((runtime_state *)state)->est_ns; }

static void runtime_memory(void *state, double *measured_peak, double *estimated_peak) {
  runtime_state *s = state;
  optic_pool_stats ps;
  double io = 0; /* the caller's buffers the program reads and writes in place */
  for (int32_t i = 0; i < s->n_in + s->n_out; i++) {
    const optic_tensor *t = i < s->n_in ? &s->in[i] : &s->out[i - s->n_in];
    double e = (double)optic_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->shape.rank; d++) e *= (double)t->shape.dims[d];
    io += e;
  }
  *measured_peak =
      optic_exec_ctx_pool_stats(s->ctx, &ps) == OPTIC_OK ? (double)ps.peak_bytes + io + s->constant_bytes : 0;
  *estimated_peak = s->est_peak_bytes;
}

static optic_status runtime_profile_table(void *state, char **text) {
  runtime_state *s = state;
  optic_profile_summary sum;
  optic_status st = optic_profiler_summary(optic_exec_ctx_profiler(s->ctx), s->program, &sum);
  if (st == OPTIC_OK) st = optic_profile_summary_to_text(&sum, text);
  optic_profile_summary_free(&sum);
  return st;
}

static int32_t runtime_threads(void *state) { return optic_exec_ctx_threads(((runtime_state *)state)->ctx); }

const run_engine run_engine_runtime = {
    .name = "runtime",
    .description = "optic_compile (full optimization, host machine model) + optic_program_run",
    .prepare = runtime_prepare,
    .run = runtime_run,
    .write_profile = runtime_write_profile,
    .estimate_ns = runtime_estimate_ns,
    .threads = runtime_threads,
    .memory = runtime_memory,
    .profile_table = runtime_profile_table,
    .destroy = runtime_destroy,
};
