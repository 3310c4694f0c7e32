/* The time estimate of one fused optimizer step (optic_optim_step_estimate_ns):
 * the step's threading rule (optim/step.c) on the machine model, the update
 * bound by its bytes or by the kind's per-element arithmetic. Pure: reads
 * the machine it is given, never the host's. */
#include <math.h>

#include "optim/optim_internal.h"

/* One core's ns per element of kind's fused update (format 9; 0: not known). */
static double element_ns(const optic_machine *m, optic_optim_kind kind) {
  switch (kind) {
    case OPTIC_OPTIM_KIND_SGD: return m->optim_sgd_element_ns;
    case OPTIC_OPTIM_KIND_ADAM: return m->optim_adam_element_ns;
    case OPTIC_OPTIM_KIND_ADAMW: return m->optim_adamw_element_ns;
    case OPTIC_OPTIM_KIND_RMSPROP: return m->optim_rmsprop_element_ns;
    case OPTIC_OPTIM_KIND_ADAGRAD: return m->optim_adagrad_element_ns;
    case OPTIC_OPTIM_KIND_LAMB: return m->optim_lamb_element_ns;
    case OPTIC_OPTIM_KIND_LION: return m->optim_lion_element_ns;
    default: return 0;
  }
}

/* Blocks of a step of n elements. */
static size_t block_count(size_t n) { return n / OPTIM_BLOCK_ELEMENTS + (n % OPTIM_BLOCK_ELEMENTS != 0); }

/* Threads a step of `blocks` blocks runs on when asked for `threads`: at
 * most one per block, at least one. */
static int32_t used_threads(size_t blocks, int32_t threads) {
  if (blocks <= 1) return 1;
  return (size_t)threads < blocks ? threads : (int32_t)blocks;
}

/* Elements of the largest thread's share: thread 0's blocks (the first
 * threads take one more), at most n. */
static double largest_share(size_t n, size_t blocks, int32_t used) {
  long lo = 0, hi = 0;
  optim_block_share((long)blocks, 0, used, &lo, &hi);
  const size_t most = (size_t)(hi - lo) * OPTIM_BLOCK_ELEMENTS;
  return (double)(most < n ? most : n);
}

optic_status optic_optim_step_estimate_ns(const optic_machine *m, optic_optim_kind kind, size_t n, double bytes,
                                          int32_t threads, bool profiled, double *out_ns) {
  const char *what = "optic_optim_step_estimate_ns";
  if (!m || !out_ns) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if ((int)kind < 0 || kind >= OPTIC_OPTIM_KIND_COUNT_)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: kind %d is not an optimizer kind", what, (int)kind);
  if (threads < 1) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: threads is %d (must be >= 1)", what, threads);
  if (!(isfinite(bytes) && bytes >= 0))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: bytes is %g (must be finite and >= 0)", what, bytes);
  /* threads beyond the cores share them: the work spreads over the cores */
  const size_t blocks = block_count(n);
  const int32_t used = used_threads(blocks, threads < m->cores ? threads : (m->cores > 1 ? m->cores : 1));
  optic_machine mt;
  optic_status st = optic_machine_for_threads(m, used, &mt);
  if (st != OPTIC_OK) return st;
  const optic_cost cost = {0, 0, bytes};
  const double roof = optic_machine_estimate_ns(&mt, &cost) - mt.op_overhead_ns;
  const double arith = largest_share(n, blocks, used) * element_ns(&mt, kind);
  const double passes = kind == OPTIC_OPTIM_KIND_LAMB ? 2 : 1;
  /* each pass's fixed cost: the step's own (format 12), else one dispatch */
  const double fixed = mt.optim_step_ns > 0 ? mt.optim_step_ns : mt.op_overhead_ns;
  double ns = (roof > arith ? roof : arith) + passes * (fixed + (used > 1 ? mt.sync_ns : 0));
  /* two reads per pass, and LAMB's ratios timed on the calling thread */
  if (profiled) ns += (kind == OPTIC_OPTIM_KIND_LAMB ? 6.0 : 2.0) * mt.cpu_clock_ns;
  *out_ns = ns;
  return OPTIC_OK;
}
