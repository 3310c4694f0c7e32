/* optic_program_run_memory: what a run of a program reserves, from the same
 * binding optic_program_run makes (exec/bind.c), before anything runs. Never
 * reserves an arena and never runs the program. */
#include <string.h>

#include "exec/exec_internal.h"
#include "exec/pool.h"

/* The module's constants, as the binding indexed them. */
static size_t constant_bytes(const exec_bound *b) {
  size_t total = 0;
  for (size_t i = 0; i < b->n_consts; i++) total += (size_t)(b->consts[i].hi - b->consts[i].lo);
  return total;
}

/* The context's three pool buffers as exec/run.c attach() reserves them. */
static void fill(const exec_bound *b, int32_t threads, const optic_program_summary *sum, optic_run_memory *m) {
  m->arena_bytes = b->arena_total;
  m->scratch_bytes = b->scratch_total;
  m->regs_bytes = b->regs_bytes * (size_t)threads;
  m->reserved_bytes = exec_pool_arena_size(m->arena_bytes) + exec_pool_arena_size(m->scratch_bytes) +
                      exec_pool_arena_size(m->regs_bytes);
  m->io_bytes = sum->memory.parameter_bytes + sum->memory.output_bytes;
  m->constant_bytes = constant_bytes(b);
  m->peak_bytes = m->reserved_bytes + m->io_bytes + m->constant_bytes;
}

optic_status optic_program_run_memory(const optic_program_t *program, const optic_exec_options *options,
                                      optic_run_memory *out) {
  if (program == NULL || out == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run_memory: program or out is NULL");
  if (out->size < sizeof(size_t))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run_memory: out->size %zu is too small", out->size);
  optic_program_summary sum;
  optic_status st = optic_program_summary_get(program, &sum);
  if (st != OPTIC_OK) return st;
  /* A context resolves the options exactly as the one that runs would
   * (threads, split rule); no profiler, so nothing large is allocated. */
  optic_exec_options o = optic_exec_options_default();
  if (options != NULL) {
    if (options->size < sizeof(size_t))
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run_memory: options.size %zu is too small",
                        options->size);
    memcpy(&o, options, options->size < sizeof o ? options->size : sizeof o);
    o.size = sizeof o;
  }
  o.profiler = NULL;
  o.profile = false;
  optic_exec_ctx_t *ctx = NULL;
  if ((st = optic_exec_ctx_create(&o, &ctx)) != OPTIC_OK) return st;
  const int32_t threads = optic_exec_ctx_threads(ctx);
  optic_exec_ctx_destroy(ctx);
  exec_bound *b = NULL;
  if ((st = exec_bind(optic_program_module(program), program, threads, o.split_min_elements, &b)) != OPTIC_OK)
    return st;
  optic_run_memory m = {.size = sizeof m};
  fill(b, threads, &sum, &m);
  exec_bound_destroy(b);
  size_t n = out->size < sizeof m ? out->size : sizeof m;
  m.size = out->size;
  memcpy(out, &m, n);
  return OPTIC_OK;
}
