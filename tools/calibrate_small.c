/* `optic calibrate`'s figures of machine format 8 (calibrate_measure.h): the
 * fixed costs of small ops that neither the roofline nor the byte classes
 * see, each from a pair of HLO programs of its own with the same element
 * count that differ only in the count of the fixed-cost unit, through
 * optic_compile + optic_program_run on one thread (fastest trial):
 *   column calls   sum over dim 1 of f32[64,16,8] (64 column-kernel calls)
 *                  against f32[4,256,8] (4 calls): per call
 *   gathered       sum over dims {1,3} of f32[16,4,16,4] (256 outputs, the
 *                  reduced dims do not merge) against f32[2,32,2,64] (4):
 *                  per output
 *   rows           sum over dim 1 of f32[2048,16] (2048 rows) against
 *                  f32[16,2048] (16 rows): per row
 *   batch norm     each op on f32[64,64] and f32[4,16] (features along dim
 *                  1): per element from the difference; the fixed cost per
 *                  op from the small shapes' rest beyond one add on
 *                  f32[4,16] timed the same way, the mean over the ops
 * The reduce times are each run minus the one-add program's (plan->tiny_ns);
 * batch norm's are differences of fastest trials alone. */
#include <stdio.h>

#include <optic/optic.h>

#include "tools/calibrate_measure.h"

#define REDUCE(IN, DIMS, OUT)                               \
  "HloModule calibrate_small_reduce\n"                      \
  "add {\n"                                                 \
  "  a = f32[] parameter(0)\n"                              \
  "  b = f32[] parameter(1)\n"                              \
  "  ROOT s = f32[] add(a, b)\n"                            \
  "}\n"                                                     \
  "ENTRY e {\n"                                             \
  "  x = f32[" IN                                           \
  "] parameter(0)\n"                                        \
  "  z = f32[] constant(0)\n"                               \
  "  ROOT y = f32[" OUT "] reduce(x, z), dimensions={" DIMS \
  "}, to_apply=add\n"                                       \
  "}\n"

/* (many - few) / (units of many - units of few), 0 when not positive. */
static optic_status per_unit(const calib_ops_plan *plan, const char *many, const char *few, double units, double *out) {
  double a = 0, b = 0;
  optic_status st = calib_beyond_tiny(plan, many, &a);
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, few, &b);
  *out = st == OPTIC_OK && a > b ? (a - b) / units : 0;
  return st;
}

/* batch-norm op `op` on f32[R,C] with features along dim 1. */
static void batch_norm_text(const char *op, int R, int C, char *buf, size_t size) {
  const bool training = op[0] == 't', grad = op[0] == 'g';
  char ops[256], type[96];
  if (training) snprintf(ops, sizeof ops, "x, s, o");
  else if (grad) snprintf(ops, sizeof ops, "x, s, m, v, dy");
  else snprintf(ops, sizeof ops, "x, s, o, m, v");
  if (training || grad) snprintf(type, sizeof type, "(f32[%d,%d], f32[%d], f32[%d])", R, C, C, C);
  else snprintf(type, sizeof type, "f32[%d,%d]", R, C);
  char root[96]; /* one array out (the op still writes every leaf) */
  if (training || grad) snprintf(root, sizeof root, "  ROOT r = f32[%d,%d] get-tuple-element(b), index=0\n", R, C);
  else root[0] = 0;
  snprintf(
      buf, size,
      "HloModule calibrate_small_batch_norm\nENTRY e {\n  x = f32[%d,%d] parameter(0)\n  s = f32[%d] parameter(1)\n"
      "  o = f32[%d] parameter(2)\n  m = f32[%d] parameter(3)\n  v = f32[%d] parameter(4)\n"
      "  dy = f32[%d,%d] parameter(5)\n"
      "  %sb = %s batch-norm-%s(%s), epsilon=0.001, feature_index=1\n%s}\n",
      R, C, C, C, C, C, R, C, root[0] ? "" : "ROOT ", type, op, ops, root);
}

/* One add on the small batch-norm shape: its run and dispatch, timed as the
 * batch-norm programs are (fastest trial), so their difference is the op's own. */
static const char *const hlo_small_add =
    "HloModule calibrate_small_add\nENTRY e {\n  x = f32[4,16] parameter(0)\n  ROOT y = f32[4,16] add(x, x)\n}\n";

static optic_status measure_batch_norm(const calib_ops_plan *plan, calib_classes *out) {
  static const char *const ops[3] = {"training", "inference", "grad"};
  double *per[3] = {&out->batch_norm_element_ns[0], &out->batch_norm_element_ns[1], &out->batch_norm_element_ns[2]};
  double rest = 0, add = 0;
  int n = 0;
  optic_status st = calib_best_program(hlo_small_add, plan->trials, plan->target_ns, NULL, NULL, &add);
  for (int i = 0; i < 3 && st == OPTIC_OK; i++) {
    char big[1024], small[1024];
    double tb = 0, ts = 0;
    batch_norm_text(ops[i], 64, 64, big, sizeof big);
    batch_norm_text(ops[i], 4, 16, small, sizeof small);
    st = calib_best_program(big, plan->trials, plan->target_ns, NULL, NULL, &tb);
    if (st == OPTIC_OK) st = calib_best_program(small, plan->trials, plan->target_ns, NULL, NULL, &ts);
    if (st != OPTIC_OK || !(tb > ts)) continue;
    *per[i] = (tb - ts) / (4096.0 - 64.0);
    double r = ts - add - 64.0 * *per[i];
    rest += r > 0 ? r : 0, n++;
  }
  out->batch_norm_run_ns = n > 0 ? rest / n : 0;
  return st;
}

optic_status calib_measure_small(const calib_ops_plan *plan, calib_classes *out) {
  optic_status st =
      per_unit(plan, REDUCE("64,16,8", "1", "64,8"), REDUCE("4,256,8", "1", "4,8"), 60.0, &out->reduce_cols_call_ns);
  if (st == OPTIC_OK)
    st = per_unit(plan, REDUCE("16,4,16,4", "1,3", "16,16"), REDUCE("2,32,2,64", "1,3", "2,2"), 252.0,
                  &out->reduce_gather_output_ns);
  if (st == OPTIC_OK)
    st = per_unit(plan, REDUCE("2048,16", "1", "2048"), REDUCE("16,2048", "1", "16"), 2032.0, &out->reduce_row_ns);
  if (st == OPTIC_OK) st = measure_batch_norm(plan, out);
  return st;
}
