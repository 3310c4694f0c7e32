/* `optic calibrate`'s op classes of machine format 3 (calibrate_measure.h):
 * the runtime's own cost per unit of work for the ops whose time the XLA
 * counts do not show, each measured on its own small HLO program through
 * optic_compile + optic_program_run on one thread (wall clock, median of
 * trials, as the other classes), minus the one-add program's run (so the run
 * and dispatch costs are not counted twice), per unit:
 *   gather        f32[1024,64] table, 256 rows of 64: per output element
 *   scatter       add of f32[256,64] updates into f32[256,64]: per update
 *   sort          f32[16,1024] along dim 1 with a less-than comparator: per
 *                 comparison of the merge sort (16 x 1024 x 10)
 *   topk          k = 8 of one f32 row of 32768: per comparison, as sort
 *                 (32768 x 15)
 *   bf16, f16     the fused loop exp(x - y) * y + x on bf16[256,256] and on
 *                 f16[256,256]: per element per instruction (4 x 65536)
 *   reduce multi  sum of f32[32,64,32] over dims {0, 2}: XLA bytes per second
 *   reduce step   bf16 sums through the reducer's program, of bf16[64,1024]
 *                 over dim 1 and bf16[4096,16] over dim 1 (the same elements,
 *                 1024 and 128 block steps): per step, from the difference
 *   while         a 256-trip counting loop: per trip beyond its two ops
 *   leaves        x + broadcast(row) on f32[256,256] and f32[4096,16] (the
 *                 same elements in 256 and 4096 runs) beyond the loop's own
 *                 time (format 12: bytes at loop_stream_bandwidth and adds
 *                 at loop_flop_ns; before: bytes at loop_bandwidth): per
 *                 run from the difference, per element from the rest
 * Inputs are optic run's --random-inputs (seed 1); indices are built in the
 * module (in range). Never prints. */
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"
#include "tools/run_values.h"

enum { MAX_ARGS = 6 };

#define ROWS_256x1                            \
  "  i = s32[256] iota(), iota_dimension=0\n" \
  "  r = s32[256,1] reshape(i)\n"

static const char *const hlo_gather =
    "HloModule calibrate_gather\n"
    "ENTRY e {\n"
    "  t = f32[1024,64] parameter(0)\n"
    "  i = s32[256] iota(), iota_dimension=0\n"
    "  c = s32[] constant(3)\n"
    "  cb = s32[256] broadcast(c), dimensions={}\n"
    "  m = s32[256] multiply(i, cb)\n"
    "  r = s32[256,1] reshape(m)\n"
    "  ROOT g = f32[256,64] gather(t, r), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}\n"
    "}\n";

static const char *const hlo_scatter =
    "HloModule calibrate_scatter\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  t = f32[256,64] parameter(0)\n"
    "  u = f32[256,64] parameter(1)\n" ROWS_256x1
    "  ROOT s = f32[256,64] scatter(t, r, u), update_window_dims={1}, "
    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
    "index_vector_dim=1, to_apply=add\n"
    "}\n";

static const char *const hlo_sort =
    "HloModule calibrate_sort\n"
    "lt {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[16,1024] parameter(0)\n"
    "  ROOT s = f32[16,1024] sort(x), dimensions={1}, to_apply=lt\n"
    "}\n";

static const char *const hlo_topk =
    "HloModule calibrate_topk\n"
    "ENTRY e {\n"
    "  x = f32[1,32768] parameter(0)\n"
    "  t = (f32[1,8], s32[1,8]) topk(x), k=8, largest=true\n"
    "  ROOT v = f32[1,8] get-tuple-element(t), index=0\n"
    "}\n";

#define NARROW_LOOP(DT)          \
  "HloModule calibrate_narrow\n" \
  "ENTRY e {\n"                  \
  "  x = " DT                    \
  "[256,256] parameter(0)\n"     \
  "  y = " DT                    \
  "[256,256] parameter(1)\n"     \
  "  a = " DT                    \
  "[256,256] subtract(x, y)\n"   \
  "  b = " DT                    \
  "[256,256] exponential(a)\n"   \
  "  c = " DT                    \
  "[256,256] multiply(b, y)\n"   \
  "  ROOT d = " DT               \
  "[256,256] add(c, x)\n"        \
  "}\n"

static const char *const hlo_reduce_multi =
    "HloModule calibrate_reduce_multi\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[32,64,32] parameter(0)\n"
    "  z = f32[] constant(0)\n"
    "  ROOT r = f32[64] reduce(x, z), dimensions={0,2}, to_apply=add\n"
    "}\n";

#define REDUCE_BF16(ROWS, COLS)                    \
  "HloModule calibrate_reduce_step\n"              \
  "add {\n"                                        \
  "  a = bf16[] parameter(0)\n"                    \
  "  b = bf16[] parameter(1)\n"                    \
  "  ROOT s = bf16[] add(a, b)\n"                  \
  "}\n"                                            \
  "ENTRY e {\n"                                    \
  "  x = bf16[" #ROWS "," #COLS                    \
  "] parameter(0)\n"                               \
  "  z = bf16[] constant(0)\n"                     \
  "  ROOT r = bf16[" #ROWS                         \
  "] reduce(x, z), dimensions={1}, to_apply=add\n" \
  "}\n"

/* x + a broadcast row: the same 65536 elements in runs of COLS. */
#define LEAF_LOOP(ROWS, COLS)        \
  "HloModule calibrate_leaf\n"       \
  "ENTRY e {\n"                      \
  "  x = f32[" #ROWS "," #COLS       \
  "] parameter(0)\n"                 \
  "  r = f32[" #COLS                 \
  "] parameter(1)\n"                 \
  "  b = f32[" #ROWS "," #COLS       \
  "] broadcast(r), dimensions={1}\n" \
  "  ROOT y = f32[" #ROWS "," #COLS  \
  "] add(x, b)\n"                    \
  "}\n"

static const char *const hlo_while =
    "HloModule calibrate_while\n"
    "cond {\n"
    "  p = (s32[], f32[16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(256)\n"
    "  ROOT c = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[16] get-tuple-element(p), index=1\n"
    "  one = s32[] constant(1)\n"
    "  j = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[16]) tuple(j, x)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[16] parameter(0)\n"
    "  zero = s32[] constant(0)\n"
    "  t = (s32[], f32[16]) tuple(zero, x)\n"
    "  w = (s32[], f32[16]) while(t), condition=cond, body=body\n"
    "  ROOT y = f32[16] get-tuple-element(w), index=1\n"
    "}\n";

typedef struct timed {
  optic_module_t *m;
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_literal_t *args[MAX_ARGS], *result;
  optic_tensor in[MAX_ARGS], out[MAX_ARGS];
  int32_t n_args, n_out;
} timed;

static void timed_free(timed *t) {
  optic_exec_ctx_destroy(t->ctx);
  optic_program_destroy(t->p);
  optic_module_destroy(t->m);
  for (int32_t i = 0; i < t->n_args; i++) optic_literal_destroy(t->args[i]);
  optic_literal_destroy(t->result);
}

static optic_tensor view(optic_literal_t *lit) {
  const optic_type *ty = optic_literal_type(lit);
  return (optic_tensor){ty->dtype, ty->shape, optic_literal_mutable_data(lit, NULL)};
}

/* Parses and compiles text for one thread (any model: only the program is
 * used, and the host file may be the one being written), with inputs. */
static optic_status timed_init(const char *text, timed *t) {
  optic_compile_options co = optic_compile_options_default();
  co.threads = 1;
  optic_machine preset;
  co.machine = optic_machine_preset("host-default", &preset) == OPTIC_OK ? &preset : NULL;
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &t->m);
  if (st == OPTIC_OK) st = optic_compile(t->m, &co, &t->p);
  if (st == OPTIC_OK) st = optic_exec_ctx_create(&eo, &t->ctx);
  if (st != OPTIC_OK) return st;
  optic_comp_id e = optic_module_entry(t->m);
  t->n_args = optic_computation_parameter_count(t->m, e);
  if (t->n_args > MAX_ARGS) return optic_fail(OPTIC_ERR_INTERNAL, "calibrate: too many parameters");
  for (int32_t i = 0; i < t->n_args && st == OPTIC_OK; i++) {
    st = run_random_literal(optic_node_type(t->m, optic_computation_parameter(t->m, e, i)), 1, i, &t->args[i]);
    if (st == OPTIC_OK) t->in[i] = view(t->args[i]);
  }
  if (st == OPTIC_OK) st = optic_literal_create(optic_node_type(t->m, optic_computation_root(t->m, e)), &t->result);
  if (st != OPTIC_OK) return st;
  t->n_out = 1;
  t->out[0] = view(t->result);
  return optic_program_run(t->p, t->ctx, t->in, t->n_args, t->out, t->n_out); /* untimed: binding */
}

static optic_status run_n(void *arg, uint64_t runs) {
  timed *t = arg;
  optic_status st = OPTIC_OK;
  for (uint64_t r = 0; r < runs && st == OPTIC_OK; r++)
    st = optic_program_run(t->p, t->ctx, t->in, t->n_args, t->out, 1);
  return st;
}

static optic_status time_program(const char *text, int trials, double target_ns, calib_inspect_fn inspect, void *arg,
                                 bool best, double *ns_out) {
  timed t = {0};
  optic_status st = timed_init(text, &t);
  if (st == OPTIC_OK && inspect) st = inspect(t.p, arg);
  if (st == OPTIC_OK)
    st = best ? calib_best_ns_per_run(run_n, &t, trials, target_ns, ns_out)
              : calib_median_ns_per_run(run_n, &t, trials, target_ns, ns_out);
  timed_free(&t);
  return st;
}

optic_status calib_time_program(const char *text, int trials, double target_ns, calib_inspect_fn inspect, void *arg,
                                double *ns_out) {
  return time_program(text, trials, target_ns, inspect, arg, false, ns_out);
}

optic_status calib_best_program(const char *text, int trials, double target_ns, calib_inspect_fn inspect, void *arg,
                                double *ns_out) {
  return time_program(text, trials, target_ns, inspect, arg, true, ns_out);
}

static optic_status program_bytes(const optic_program_t *p, void *arg) {
  optic_program_summary sum;
  optic_status st = optic_program_summary_get(p, &sum);
  if (st == OPTIC_OK) *(double *)arg = sum.cost.bytes_accessed;
  return st;
}

/* Median ns per run of text's program on one thread and its XLA bytes. */
static optic_status time_hlo(const char *text, int trials, double target_ns, double *ns_out, double *bytes_out) {
  return calib_time_program(text, trials, target_ns, program_bytes, bytes_out, ns_out);
}

/* The fastest trial's ns per run and XLA bytes: for figures taken as the
 * difference of two programs, where load only ever adds time and a median
 * pair can come out reversed on a busy machine. */
static optic_status best_hlo(const char *text, int trials, double target_ns, double *ns_out, double *bytes_out) {
  return calib_best_program(text, trials, target_ns, program_bytes, bytes_out, ns_out);
}

/* (time of text's run - tiny) / units into *dst (left 0 when not above tiny). */
static optic_status per_unit(const char *text, double units, const calib_ops_plan *plan, double *dst) {
  double ns = 0, bytes = 0;
  optic_status st = time_hlo(text, plan->trials, plan->target_ns, &ns, &bytes);
  if (st == OPTIC_OK && ns > plan->tiny_ns) *dst = (ns - plan->tiny_ns) / units;
  return st;
}

optic_status calib_measure_ops(const calib_ops_plan *plan, calib_classes *out) {
  optic_status st = per_unit(hlo_gather, 256.0 * 64, plan, &out->gather_element_ns);
  if (st == OPTIC_OK) st = per_unit(hlo_scatter, 256.0 * 64, plan, &out->scatter_element_ns);
  if (st == OPTIC_OK) st = per_unit(hlo_sort, 16.0 * 1024 * 10, plan, &out->sort_compare_ns);
  if (st == OPTIC_OK) st = per_unit(hlo_topk, 32768.0 * 15, plan, &out->topk_compare_ns);
  if (st == OPTIC_OK) st = per_unit(NARROW_LOOP("bf16"), 4.0 * 65536, plan, &out->bf16_element_ns);
  if (st == OPTIC_OK) st = per_unit(NARROW_LOOP("f16"), 4.0 * 65536, plan, &out->f16_element_ns);
  double ns = 0, bytes = 0, many = 0, few = 0;
  if (st == OPTIC_OK) st = time_hlo(hlo_reduce_multi, plan->trials, plan->target_ns, &ns, &bytes);
  if (st == OPTIC_OK && ns > plan->tiny_ns) out->reduce_multi_bandwidth = bytes / ((ns - plan->tiny_ns) * 1e-9);
  /* the same 65536 elements in 1024 and in 128 block steps */
  if (st == OPTIC_OK) st = best_hlo(REDUCE_BF16(64, 1024), plan->trials, plan->target_ns, &many, &bytes);
  if (st == OPTIC_OK) st = best_hlo(REDUCE_BF16(4096, 16), plan->trials, plan->target_ns, &few, &bytes);
  if (st == OPTIC_OK && many > few) out->reduce_step_ns = (many - few) / (1024.0 - 128.0);
  /* leaves: beyond the loop's own time (its bytes at loop_stream_bandwidth
   * and its 65536 adds at loop_flop_ns; before format 12, its bytes at
   * loop_bandwidth); runs from the difference of 256 and 4096 runs,
   * elements from what remains */
  const bool parts = out->loop_flop_ns > 0;
  double wide = 0, narrow = 0, bw = parts ? out->loop_stream_bandwidth : out->loop_bandwidth;
  const double adds_ns = parts ? 65536.0 * out->loop_flop_ns : 0;
  if (st == OPTIC_OK) st = best_hlo(LEAF_LOOP(256, 256), plan->trials, plan->target_ns, &wide, &bytes);
  double wide_bytes = bytes;
  if (st == OPTIC_OK) st = best_hlo(LEAF_LOOP(4096, 16), plan->trials, plan->target_ns, &narrow, &bytes);
  if (st == OPTIC_OK && bw > 0 && narrow > wide) {
    out->loop_leaf_run_ns = (narrow - wide - (bytes - wide_bytes) / bw * 1e9) / (4096.0 - 256.0);
    if (out->loop_leaf_run_ns < 0) out->loop_leaf_run_ns = 0;
    double rest = wide - plan->tiny_ns - wide_bytes / bw * 1e9 - adds_ns - 256 * out->loop_leaf_run_ns;
    out->loop_leaf_element_ns = rest > 0 ? rest / 65536.0 : 0;
  }
  double trip = 0;
  if (st == OPTIC_OK) st = per_unit(hlo_while, 256.0, plan, &trip);
  /* beyond the trip's two ops (the add and the compare), already in the model */
  if (st == OPTIC_OK) out->while_iteration_ns = trip > 2 * plan->op_overhead_ns ? trip - 2 * plan->op_overhead_ns : 0;
  return st;
}
