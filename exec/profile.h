/* Internal: how the executor records into an optic_profiler_t (public read
 * API in <optic/exec.h>). Recording is lock-free: one atomic fetch-add picks
 * a slot; a full profiler counts the drop. Never allocates while recording. */
#ifndef OPTIC_EXEC_PROFILE_H
#define OPTIC_EXEC_PROFILE_H

#include <stdatomic.h>

#include <optic/exec.h>

struct optic_profiler {
  atomic_bool enabled;
  size_t capacity;
  atomic_size_t next; /* slots handed out; may pass capacity (those are dropped) */
  atomic_uint_fast64_t dropped;
  atomic_uint_fast64_t runs; /* run numbers handed out by exec_profiler_next_run */
  optic_profile_event *events;
};

/* The profiler if it is non-NULL and enabled, else NULL. The executor calls
 * this once per run and then tests the result with one branch per op:
 *   optic_profiler_t *prof = exec_profiler_active(ctx->profiler);
 *   ... if (prof) exec_profiler_record_span(prof, ...); */
static inline optic_profiler_t *exec_profiler_active(optic_profiler_t *p) {
  return (p != NULL && atomic_load_explicit(&p->enabled, memory_order_relaxed)) ? p : NULL;
}

/* A fresh run number (1, 2, ...) for the events of one run. Thread-safe. */
uint64_t exec_profiler_next_run(optic_profiler_t *p);

/* Records one event without checking the enabled flag (the caller did);
 * name/detail may be NULL (""), are copied and truncated. Thread-safe,
 * lock-free, never allocates; a full profiler counts a drop. */
void exec_profiler_record_span(optic_profiler_t *p, optic_profile_kind kind, const char *name, const char *detail,
                               const void *program, int32_t device, int32_t thread, int64_t node, uint64_t run,
                               uint64_t start_ns, uint64_t end_ns, double flops, double bytes, double est_ns);

#endif
