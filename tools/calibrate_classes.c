/* `optic calibrate`'s op classes (calibrate_measure.h): what the roofline
 * misses for a whole program run and for the op classes real modules spend
 * their time in, each measured on its own small program through
 * optic_compile + optic_program_run on one thread (wall clock, median of
 * trials, as the per-op overhead):
 *   run overhead   a program of one tiny add: its time per run minus one op's
 *                  dispatch (binding, the parallel region, the run's own work);
 *   row reduce     sum of f32[256,256] over dim 1 (the minor dim);
 *   strided reduce sum of f32[256,256] over dim 0;
 *   wide columns   sum of f32[512,1024] over dim 0 (format 13: 2 MiB of rows,
 *                  the wide column kernel that streams them; beyond L2);
 *   fused loop     exp(x - y) * y + x on f32[256,256], fused into one loop;
 * each class as XLA bytes of the op per second of (its program's time minus
 * the tiny program's), i.e. beyond the run and dispatch costs already in the
 * model. Format 12 splits the loop into its parts: loops of 2 and of 8
 * cheap binary ops over the same f32[256,256] inputs give ns per flop (from
 * their difference) and the streams' bytes per second (the short loop's
 * rest); the exp loop's rest beyond both gives ns per transcendental.
 * Never prints. */
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"

enum { SIDE = 256, WIDE_ROWS = 512, WIDE_COLS = 1024 };

typedef struct prog_run {
  optic_program_t *p;
  optic_exec_ctx_t *ctx;
  optic_tensor *in;
  int32_t nin;
  optic_tensor *out;
} prog_run;

static optic_status run_n(void *arg, uint64_t runs) {
  prog_run *r = arg;
  optic_status st = OPTIC_OK;
  for (uint64_t i = 0; i < runs && st == OPTIC_OK; i++) st = optic_program_run(r->p, r->ctx, r->in, r->nin, r->out, 1);
  return st;
}

typedef enum {
  PROG_TINY,
  PROG_REDUCE_ROW,
  PROG_REDUCE_COL,
  PROG_REDUCE_WIDE,
  PROG_LOOP,
  PROG_LOOP_SHORT,
  PROG_LOOP_LONG
} prog_kind;

static bool is_reduce(prog_kind k) { return k == PROG_REDUCE_ROW || k == PROG_REDUCE_COL || k == PROG_REDUCE_WIDE; }

/* Elements of each input of kind's program. */
static size_t input_elements(prog_kind k) {
  return k == PROG_TINY ? 16 : k == PROG_REDUCE_WIDE ? (size_t)WIDE_ROWS * WIDE_COLS : (size_t)SIDE * SIDE;
}

/* The format-12 loops: `ops` cheap binary ops over the same two inputs
 * (x + y, then alternately x and y as the second operand: multiply,
 * subtract, maximum, add, ...), so both read two streams and write one. */
static optic_status build_chain_loop(optic_module_t *m, optic_comp_id e, int ops, optic_node_id x, optic_node_id y,
                                     optic_node_id *r) {
  static const optic_opcode kinds[8] = {OPTIC_OP_ADD, OPTIC_OP_MULTIPLY, OPTIC_OP_SUBTRACT, OPTIC_OP_MAXIMUM,
                                        OPTIC_OP_ADD, OPTIC_OP_MULTIPLY, OPTIC_OP_SUBTRACT, OPTIC_OP_MINIMUM};
  optic_status st = optic_graph_binary(m, e, kinds[0], x, y, NULL, r);
  for (int i = 1; i < ops && i < 8 && st == OPTIC_OK; i++)
    st = optic_graph_binary(m, e, kinds[i], *r, i % 2 ? x : y, NULL, r);
  return st;
}

static optic_status build(prog_kind kind, optic_module_t **out) {
  optic_module_t *m = NULL;
  optic_comp_id e, add;
  const int64_t tiny[1] = {16}, side[2] = {SIDE, SIDE}, wide[2] = {WIDE_ROWS, WIDE_COLS};
  optic_shape s, scalar = {.rank = 0};
  optic_status st = kind == PROG_TINY ? optic_shape_make(1, tiny, &s)
                                      : optic_shape_make(2, kind == PROG_REDUCE_WIDE ? wide : side, &s);
  optic_type t = optic_type_array(OPTIC_F32, &s), ts = optic_type_array(OPTIC_F32, &scalar);
  optic_node_id x = OPTIC_NO_NODE, y = OPTIC_NO_NODE, r = OPTIC_NO_NODE, a, b, zero;
  if (st == OPTIC_OK) st = optic_module_create("calibrate_class", &m);
  if (st == OPTIC_OK) st = optic_module_add_computation(m, "main", &e);
  if (st == OPTIC_OK) st = optic_graph_parameter(m, e, 0, &t, NULL, &x);
  if (st == OPTIC_OK && !is_reduce(kind)) st = optic_graph_parameter(m, e, 1, &t, NULL, &y);
  if (st == OPTIC_OK && kind == PROG_TINY) st = optic_graph_binary(m, e, OPTIC_OP_ADD, x, y, NULL, &r);
  if (st == OPTIC_OK && (kind == PROG_LOOP_SHORT || kind == PROG_LOOP_LONG))
    st = build_chain_loop(m, e, kind == PROG_LOOP_SHORT ? 2 : 8, x, y, &r);
  if (st == OPTIC_OK && kind == PROG_LOOP) {
    st = optic_graph_binary(m, e, OPTIC_OP_SUBTRACT, x, y, NULL, &a);
    if (st == OPTIC_OK) st = optic_graph_unary(m, e, OPTIC_OP_EXPONENTIAL, a, NULL, &b);
    if (st == OPTIC_OK) st = optic_graph_binary(m, e, OPTIC_OP_MULTIPLY, b, y, NULL, &a);
    if (st == OPTIC_OK) st = optic_graph_binary(m, e, OPTIC_OP_ADD, a, x, NULL, &r);
  }
  if (st == OPTIC_OK && is_reduce(kind)) {
    optic_node_id p0, p1, sum;
    float z = 0;
    st = optic_module_add_computation(m, "add", &add);
    if (st == OPTIC_OK) st = optic_graph_parameter(m, add, 0, &ts, NULL, &p0);
    if (st == OPTIC_OK) st = optic_graph_parameter(m, add, 1, &ts, NULL, &p1);
    if (st == OPTIC_OK) st = optic_graph_binary(m, add, OPTIC_OP_ADD, p0, p1, NULL, &sum);
    if (st == OPTIC_OK) st = optic_computation_set_root(m, add, sum);
    if (st == OPTIC_OK) st = optic_graph_constant(m, e, OPTIC_F32, &scalar, &z, sizeof z, NULL, &zero);
    const int64_t dim = kind == PROG_REDUCE_ROW ? 1 : 0;
    if (st == OPTIC_OK) st = optic_graph_reduce(m, e, &x, &zero, 1, &dim, 1, add, NULL, &r);
  }
  if (st == OPTIC_OK) st = optic_module_set_entry(m, e);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, e, r);
  if (st != OPTIC_OK) {
    optic_module_destroy(m);
    return st;
  }
  *out = m;
  return OPTIC_OK;
}

/* Median ns per run of kind's program on one thread (the fastest trial's
 * for the format-12 loops), and its XLA counts. */
static optic_status time_program(prog_kind kind, int trials, double target_ns, double *ns_out, optic_cost *cost_out) {
  optic_module_t *m = NULL;
  optic_program_t *p = NULL;
  optic_exec_ctx_t *ctx = NULL;
  optic_compile_options co = optic_compile_options_default();
  co.threads = 1;
  /* any model: only the program and its counts are used, and the host file
   * may be the one being written */
  optic_machine preset;
  optic_status pst = optic_machine_preset("host-default", &preset);
  co.machine = pst == OPTIC_OK ? &preset : NULL;
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 1;
  optic_status st = build(kind, &m);
  if (st == OPTIC_OK) st = optic_compile(m, &co, &p);
  if (st == OPTIC_OK) st = optic_exec_ctx_create(&eo, &ctx);
  size_t n = input_elements(kind);
  float *buf = st == OPTIC_OK ? malloc(3 * n * sizeof(float)) : NULL;
  if (st == OPTIC_OK && !buf) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the op-class inputs");
  optic_program_summary sum;
  if (st == OPTIC_OK) st = optic_program_summary_get(p, &sum);
  if (st == OPTIC_OK) {
    for (size_t i = 0; i < 2 * n; i++) buf[i] = 0.001f * (float)(i % 997);
    const optic_module_t *pm = optic_program_module(p);
    optic_comp_id e = optic_program_entry(p);
    optic_tensor in[2], out;
    int32_t nin = optic_computation_parameter_count(pm, e);
    for (int32_t i = 0; i < nin; i++)
      in[i] = (optic_tensor){OPTIC_F32, optic_node_type(pm, optic_computation_parameter(pm, e, i))->shape, buf + i * n};
    out = (optic_tensor){OPTIC_F32, optic_node_type(pm, optic_computation_root(pm, e))->shape, buf + 2 * n};
    st = optic_program_run(p, ctx, in, nin, &out, 1); /* untimed: binding, arenas */
    prog_run r = {p, ctx, in, nin, &out};
    /* the format-12 loops are taken as a difference: their fastest trials
     * (load only adds time; a median pair can come out reversed) */
    const bool best = kind == PROG_LOOP_SHORT || kind == PROG_LOOP_LONG;
    if (st == OPTIC_OK)
      st = best ? calib_best_ns_per_run(run_n, &r, trials, target_ns, ns_out)
                : calib_median_ns_per_run(run_n, &r, trials, target_ns, ns_out);
    if (st == OPTIC_OK) *cost_out = sum.cost;
  }
  free(buf);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
  return st;
}

/* Format 12: the short and long loops' flops differ over the same bytes,
 * so their difference prices a flop; what the short one has beyond its
 * flops prices its bytes; what the exp loop has beyond its bytes and flops
 * prices its transcendentals. Each left 0 when it does not come out
 * positive (the format-11 rule then prices loops). */
static optic_status measure_loop_parts(int trials, double target_ns, double tiny, const optic_cost *exp_loop,
                                       double exp_ns, calib_classes *out) {
  double short_ns = 0, long_ns = 0;
  optic_cost s, l;
  optic_status st = time_program(PROG_LOOP_SHORT, trials, target_ns, &short_ns, &s);
  if (st == OPTIC_OK) st = time_program(PROG_LOOP_LONG, trials, target_ns, &long_ns, &l);
  if (st != OPTIC_OK || !(long_ns > short_ns) || !(l.flops > s.flops)) return st;
  const double flop_ns = (long_ns - short_ns) / (l.flops - s.flops);
  const double stream_ns = short_ns - tiny - s.flops * flop_ns;
  if (!(stream_ns > 0)) return OPTIC_OK;
  out->loop_flop_ns = flop_ns;
  out->loop_stream_bandwidth = s.bytes_accessed / (stream_ns * 1e-9);
  const double rest =
      exp_ns - tiny - exp_loop->bytes_accessed / out->loop_stream_bandwidth * 1e9 - exp_loop->flops * flop_ns;
  if (rest > 0 && exp_loop->transcendentals > 0) out->loop_transcendental_ns = rest / exp_loop->transcendentals;
  return OPTIC_OK;
}

optic_status calib_measure_classes(int trials, double target_ns, double op_overhead_ns, calib_classes *out) {
  memset(out, 0, sizeof *out);
  double tiny = 0, ns = 0;
  optic_cost cost;
  optic_status st = time_program(PROG_TINY, trials, target_ns, &tiny, &cost);
  if (st != OPTIC_OK) return st;
  out->run_overhead_ns = tiny > op_overhead_ns ? tiny - op_overhead_ns : 0;
  double *dst[4] = {&out->reduce_bandwidth, &out->reduce_strided_bandwidth, &out->reduce_cols_stream_bandwidth,
                    &out->loop_bandwidth};
  const prog_kind kinds[4] = {PROG_REDUCE_ROW, PROG_REDUCE_COL, PROG_REDUCE_WIDE, PROG_LOOP};
  for (int i = 0; i < 4 && st == OPTIC_OK; i++) {
    st = time_program(kinds[i], trials, target_ns, &ns, &cost);
    /* the op's own time: beyond the run and one op's dispatch (the tiny program) */
    if (st == OPTIC_OK && ns > tiny) *dst[i] = cost.bytes_accessed / ((ns - tiny) * 1e-9);
  }
  /* the exp loop's (the last of kinds) time and counts */
  if (st == OPTIC_OK) st = measure_loop_parts(trials, target_ns, tiny, &cost, ns, out);
  calib_ops_plan plan = {trials, target_ns, tiny, op_overhead_ns};
  if (st == OPTIC_OK) st = calib_measure_ops(&plan, out);
  if (st == OPTIC_OK) st = calib_measure_paths(&plan, out);
  if (st == OPTIC_OK) st = calib_measure_small(&plan, out);
  if (st == OPTIC_OK) st = calib_measure_window(&plan, out);
  if (st == OPTIC_OK) st = calib_measure_runtime(&plan, out);
  return st;
}
