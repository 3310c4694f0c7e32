/* `optic calibrate`'s per-op overhead (calibrate_measure.h): what the
 * runtime really pays per executed instruction on top of the op's own work.
 * A chain of CALIB_CHAIN_OPS dependent tiny elementwise ops (16 floats each,
 * fusion off, so each is one executed instruction) is compiled and run with
 * optic_program_run at the executor's default split policy; the figure is
 * the median wall time of one run over several trials, divided by the op
 * count. At that size an op's roofline time is under a nanosecond, so the
 * figure is the runtime's dispatch (step, operand lookup, kernel call) and,
 * when the executor splits an op, its barrier: the default policy keeps tiny
 * ops on one thread with no barrier, which is what programs get. The same
 * chain with every op split over all threads (split_min_elements 1) gives
 * the runtime's barrier (exec/barrier.c) as a split op pays it: its per op
 * beyond the unsplit chain's on as many threads (the faster of two passes).
 * The wall clock is right
 * here (the executor's wait is the cost being measured); the median keeps
 * the trials a shared machine descheduled out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tools/calibrate_measure.h"

#define CHAIN_ELEMENTS 16
#define MAX_TRIALS 32

/* The chain y = ((x + w) * w + w) * w ... of `ops` binary ops on [16] f32. */
static optic_status build_chain(int32_t ops, optic_module_t **out) {
  optic_module_t *m = NULL;
  optic_comp_id e;
  const int64_t dims[1] = {CHAIN_ELEMENTS};
  optic_shape s;
  optic_status st = optic_shape_make(1, dims, &s);
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id x = OPTIC_NO_NODE, w = OPTIC_NO_NODE;
  if (st == OPTIC_OK) st = optic_module_create("calibrate_chain", &m);
  if (st == OPTIC_OK) st = optic_module_add_computation(m, "main", &e);
  if (st == OPTIC_OK) st = optic_graph_parameter(m, e, 0, &t, NULL, &x);
  if (st == OPTIC_OK) st = optic_graph_parameter(m, e, 1, &t, NULL, &w);
  for (int32_t i = 0; i < ops && st == OPTIC_OK; i++)
    st = optic_graph_binary(m, e, i % 2 ? OPTIC_OP_MULTIPLY : OPTIC_OP_ADD, x, w, NULL, &x);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, e, x);
  if (st != OPTIC_OK) {
    optic_module_destroy(m);
    return st;
  }
  *out = m;
  return OPTIC_OK;
}

/* Median ns per op of `trials` trials of about target_ns each, on a context
 * of `threads` threads with the split policy `split` (split_min_elements). */
static optic_status chain_ns_per_op(const optic_program_t *p, int threads, int64_t split, int trials, double target_ns,
                                    double *out) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = split;
  optic_exec_ctx_t *ctx = NULL;
  optic_status st = optic_exec_ctx_create(&eo, &ctx);
  if (st != OPTIC_OK) return st;
  float xs[CHAIN_ELEMENTS], ws[CHAIN_ELEMENTS], ys[CHAIN_ELEMENTS];
  /* values that stay finite over the chain: w in (0.5, 1], x small */
  for (int i = 0; i < CHAIN_ELEMENTS; i++) xs[i] = 0.01f * (float)i, ws[i] = 1.0f - 0.03125f * (float)(i % 8);
  optic_shape s;
  const int64_t dims[1] = {CHAIN_ELEMENTS};
  optic_shape_make(1, dims, &s);
  optic_tensor in[2] = {{OPTIC_F32, s, xs}, {OPTIC_F32, s, ws}}, res = {OPTIC_F32, s, ys};
  /* untimed: binding, arenas, the OpenMP team */
  st = optic_program_run(p, ctx, in, 2, &res, 1);
  uint64_t runs = 1;
  if (st == OPTIC_OK) {
    /* runs per trial: doubling until a batch takes a tenth of the target */
    for (;;) {
      uint64_t t0 = optic_now_ns();
      for (uint64_t r = 0; r < runs && st == OPTIC_OK; r++) st = optic_program_run(p, ctx, in, 2, &res, 1);
      double ns = (double)(optic_now_ns() - t0);
      if (st != OPTIC_OK || ns >= target_ns / 10 || runs >= ((uint64_t)1 << 24)) {
        double scaled = ns > 0 ? (double)runs * target_ns / ns : (double)runs;
        runs = scaled < 1 ? 1 : (uint64_t)scaled;
        break;
      }
      runs *= 2;
    }
  }
  double per_op[MAX_TRIALS];
  if (trials > MAX_TRIALS) trials = MAX_TRIALS;
  if (trials < 1) trials = 1;
  const int32_t ops = CALIB_CHAIN_OPS;
  for (int i = 0; i < trials && st == OPTIC_OK; i++) {
    uint64_t t0 = optic_now_ns();
    for (uint64_t r = 0; r < runs && st == OPTIC_OK; r++) st = optic_program_run(p, ctx, in, 2, &res, 1);
    per_op[i] = (double)(optic_now_ns() - t0) / (double)runs / ops;
  }
  optic_exec_ctx_destroy(ctx);
  if (st != OPTIC_OK) return st;
  *out = calib_median(per_op, trials);
  return OPTIC_OK;
}

/* The chain compiled with fusion off; the model only shapes the estimates,
 * not the run: a preset keeps the measurement independent of whatever
 * machine file exists. */
static optic_status compile_chain(optic_program_t **p) {
  optic_module_t *m = NULL;
  optic_status st = build_chain(CALIB_CHAIN_OPS, &m);
  if (st != OPTIC_OK) return st;
  optic_machine mc;
  optic_compile_options co = optic_compile_options_default();
  co.fusion = 0;
  co.machine = &mc;
  st = optic_machine_preset("host-default", &mc);
  if (st == OPTIC_OK) st = optic_compile(m, &co, p);
  optic_module_destroy(m);
  return st;
}

optic_status calib_runtime_overhead(int threads, int trials, double target_ns, calib_pair *out, double *split_ns) {
  optic_program_t *p = NULL;
  optic_status st = compile_chain(&p);
  *split_ns = 0;
  if (st == OPTIC_OK) st = chain_ns_per_op(p, 1, 0, trials, target_ns, &out->one);
  if (st == OPTIC_OK)
    st = threads > 1 ? chain_ns_per_op(p, threads, 0, trials, target_ns, &out->all) : (out->all = out->one, OPTIC_OK);
  /* every op split over the threads, the runtime's barrier after each;
   * twice, keeping the faster: on the 2-vCPU VM a pass took 380-400 ns a
   * barrier in some calibrations and 60-90 ns in others (calib_measure
   * takes a third pass seconds later) */
  double split = 0, again = 0;
  if (st == OPTIC_OK && threads > 1) st = chain_ns_per_op(p, threads, 1, trials, target_ns, &split);
  if (st == OPTIC_OK && threads > 1) st = chain_ns_per_op(p, threads, 1, trials, target_ns, &again);
  if (again > 0 && again < split) split = again;
  if (st == OPTIC_OK && split > out->all) *split_ns = split - out->all;
  optic_program_destroy(p);
  return st;
}
