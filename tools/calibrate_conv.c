/* `optic calibrate`'s convolution classes of machine format 4
 * (calibrate_measure.h): for each strategy of the runtime's convolution
 * planner, a small grid of its own f32 convolutions (3x3 windows, a few
 * feature counts and image sizes; 1x1 for GEMM, 3-D, few output features or
 * an OI kernel for feature-contiguous im2col, NCHW for spatial-contiguous
 * im2col, NHWC and NCHW depthwise for the grouped loops, bf16 operands with
 * an f32 result for the bf16 GEMM (skipped where the runtime widens them
 * instead); one deep layer of
 * about 10^8 multiply-adds per GEMM-based class, so the fit reaches large
 * layers), each compiled and run on one thread like the other classes and
 * timed beyond the one-add program, the fastest of the trials (one loaded
 * trial throws a fit over a grid far off). The
 * planner's own choice (optic_program_conv_work, the function the estimate
 * uses) decides which class a shape belongs to, so a shape the planner runs
 * otherwise on this host counts for that class. Per class the model
 *   t = 2 x macs / (efficiency x one-thread FMA peak) + moved x element_ns
 * is fitted by least squares on relative error (both figures >= 0; one
 * shape or a negative figure: efficiency alone; an efficiency past the
 * class's cap, 1 or the bf16 GEMM's, is held at the cap and element_ns
 * refitted beside it). Dots likewise: a grid of
 * batched products BLAS reads in place fits flops / (efficiency x peak) +
 * elements x element_ns + calls x call_ns, and one product whose rhs the
 * planner packs gives the copy's ns per element beyond that fit (beyond
 * the format-7 grid's figure when it was measured: the dot estimate takes
 * the grid for that product). Never prints. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_fit.h"
#include "tools/calibrate_measure.h"

typedef struct conv_shape {
  const char *labels, *input, *kernel, *output, *window;
  int64_t groups;
  const char *dtype; /* NULL: f32 */
} conv_shape;

static const conv_shape grid[] = {
    /* GEMM: 1x1 windows, NHWC */
    {"b01f_01io->b01f", "1,14,14,64", "1,1,64,64", "1,14,14,64", "1x1", 1, NULL},
    {"b01f_01io->b01f", "1,28,28,32", "1,1,32,16", "1,28,28,16", "1x1", 1, NULL},
    {"b01f_01io->b01f", "1,8,8,256", "1,1,256,128", "1,8,8,128", "1x1", 1, NULL},
    {"b01f_01io->b01f", "1,28,28,256", "1,1,256,256", "1,28,28,256", "1x1", 1, NULL},
    /* im2col, feature-contiguous input: 3-D windows, few output features */
    {"b012f_012io->b012f", "1,4,16,16,8", "3,3,3,8,8", "1,4,16,16,8", "3x3x3", 1, NULL},
    {"b012f_012io->b012f", "1,1,32,32,3", "3,3,3,3,32", "1,1,32,32,32", "3x3x3", 1, NULL},
    {"b01f_01io->b01f", "1,28,28,32", "3,3,32,8", "1,28,28,8", "3x3", 1, NULL},
    /* ... and kernels whose output features are not contiguous (no direct loops) */
    {"b01f_01oi->b01f", "1,14,14,64", "3,3,64,64", "1,14,14,64", "3x3", 1, NULL},
    {"b01f_01oi->b01f", "2,28,28,32", "3,3,32,32", "2,28,28,32", "3x3", 1, NULL},
    /* im2col, spatial-contiguous input: NCHW; one input feature in NHWC */
    {"bf01_oi01->bf01", "1,32,28,28", "32,32,3,3", "1,32,28,28", "3x3", 1, NULL},
    {"bf01_oi01->bf01", "1,8,14,14", "64,8,3,3", "1,64,14,14", "3x3", 1, NULL},
    {"bf01_oi01->bf01", "1,64,28,28", "64,64,3,3", "1,64,28,28", "3x3", 1, NULL},
    {"b01f_01io->b01f", "4,16,16,1", "3,3,1,16", "4,16,16,16", "3x3", 1, NULL},
    /* direct: NHWC 3x3 */
    {"b01f_01io->b01f", "1,28,28,32", "3,3,32,32", "1,28,28,32", "3x3", 1, NULL},
    {"b01f_01io->b01f", "1,14,14,64", "3,3,64,64", "1,14,14,64", "3x3", 1, NULL},
    {"b01f_01io->b01f", "1,28,28,128", "3,3,128,128", "1,28,28,128", "3x3", 1, NULL},
    {"b01f_01io->b01f", "2,16,16,3", "3,3,3,16", "2,16,16,16", "3x3", 1, NULL},
    /* grouped across adjacent groups: NHWC depthwise */
    {"b01f_01io->b01f", "1,28,28,64", "3,3,1,64", "1,28,28,64", "3x3", 64, NULL},
    {"b01f_01io->b01f", "1,14,14,128", "3,3,1,128", "1,14,14,128", "3x3", 128, NULL},
    {"b01f_01io->b01f", "2,16,16,32", "3,3,1,32", "2,16,16,32", "3x3", 32, NULL},
    /* grouped along output rows: NCHW depthwise */
    {"bf01_oi01->bf01", "1,64,28,28", "64,1,3,3", "1,64,28,28", "3x3", 64, NULL},
    {"bf01_oi01->bf01", "1,32,16,16", "32,1,3,3", "1,32,16,16", "3x3", 32, NULL},
    {"bf01_oi01->bf01", "2,16,32,32", "16,1,3,3", "2,16,32,32", "3x3", 16, NULL},
    /* two bf16 operands on the bf16 GEMM, where the runtime chooses it */
    {"b01f_01io->b01f", "1,28,28,32", "3,3,32,32", "1,28,28,32", "3x3", 1, "bf16"},
    {"b01f_01io->b01f", "1,14,14,64", "1,1,64,64", "1,14,14,64", "1x1", 1, "bf16"},
    {"bf01_oi01->bf01", "1,16,16,16", "32,16,3,3", "1,32,16,16", "3x3", 1, "bf16"},
    {"b01f_01io->b01f", "1,28,28,128", "3,3,128,128", "1,28,28,128", "3x3", 1, "bf16"},
};
#define N_GRID ((int)(sizeof grid / sizeof grid[0]))

static void conv_text(const conv_shape *s, char *buf, size_t size) {
  char pad[64] = "";
  size_t len = 0;
  const bool one = strcmp(s->window, "1x1") == 0;
  int dims = (int)(strlen(s->window) + 1) / 2;
  const char *dt = s->dtype ? s->dtype : "f32";
  for (int d = 0; d < dims && !one; d++) len += (size_t)snprintf(pad + len, sizeof pad - len, "%s1_1", d ? "x" : "");
  snprintf(buf, size,
           "HloModule calibrate_conv\n"
           "ENTRY e {\n"
           "  x = %s[%s] parameter(0)\n"
           "  k = %s[%s] parameter(1)\n"
           "  ROOT y = f32[%s] convolution(x, k), window={size=%s%s%s}, dim_labels=%s, feature_group_count=%lld\n"
           "}\n",
           dt, s->input, dt, s->kernel, s->output, s->window, one ? "" : " pad=", pad, s->labels, (long long)s->groups);
}

/* The program's one convolution's work as the planner runs it. */
static optic_status conv_work_of(const optic_program_t *p, void *arg) {
  const optic_module_t *m = optic_program_module(p);
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, optic_program_entry(p), &n);
  for (int32_t i = 0; i < n; i++)
    if (optic_node_opcode(m, ids[i]) == OPTIC_OP_CONVOLUTION) return optic_program_conv_work(p, ids[i], arg);
  return optic_fail(OPTIC_ERR_INTERNAL, "calibrate: the convolution program has no convolution");
}

/* Dots with operands BLAS reads in place: [b,m,k] x [b,k,n]. */
static const int64_t dot_grid[][4] = {
    {1, 256, 256, 256}, {1, 128, 512, 64}, {1, 1024, 48, 16}, {1, 64, 64, 64},
    {16, 32, 32, 32},   {256, 8, 8, 8},    {64, 16, 64, 8},   {1, 512, 16, 512},
};
#define N_DOT ((int)(sizeof dot_grid / sizeof dot_grid[0]))

static void dot_text(const int64_t *d, char *buf, size_t size) {
  long long b = d[0], m = d[1], n = d[2], k = d[3];
  snprintf(buf, size,
           "HloModule calibrate_dot\n"
           "ENTRY e {\n"
           "  a = f32[%lld,%lld,%lld] parameter(0)\n"
           "  b = f32[%lld,%lld,%lld] parameter(1)\n"
           "  ROOT d = f32[%lld,%lld,%lld] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
           "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
           "}\n",
           b, m, k, b, k, n, b, m, n);
}

/* The same product as {16, 64, 96, 32} with the rhs's free dims apart
 * (f32[16,12,32,8], contracting dim 2): the planner packs it first. */
static const char *const hlo_dot_packed =
    "HloModule calibrate_dot_packed\n"
    "ENTRY e {\n"
    "  a = f32[16,64,32] parameter(0)\n"
    "  b = f32[16,12,32,8] parameter(1)\n"
    "  ROOT d = f32[16,64,12,8] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
    "rhs_contracting_dims={2}\n"
    "}\n";

/* The dot figures: flops, elements and calls fitted over dot_grid, then the
 * packed copy per element from hlo_dot_packed beyond the fitted model. */
static optic_status measure_dot(const calib_ops_plan *plan, double core_peak, calib_conv *out) {
  double x[CALIB_FIT_MAX_TERMS][32], t[32], c[CALIB_FIT_MAX_TERMS];
  char text[1024];
  int n = 0;
  optic_status st = OPTIC_OK;
  for (int i = 0; i < N_DOT && st == OPTIC_OK; i++) {
    const int64_t *d = dot_grid[i];
    double ns = 0, b = (double)d[0], m = (double)d[1], nn = (double)d[2], k = (double)d[3];
    dot_text(d, text, sizeof text);
    st = calib_best_program(text, plan->trials, plan->target_ns, NULL, NULL, &ns);
    if (st != OPTIC_OK || ns <= plan->tiny_ns) continue;
    x[0][n] = 2 * b * m * nn * k / core_peak * 1e9, x[1][n] = b * (m * k + k * nn + m * nn), x[2][n] = b;
    t[n++] = ns - plan->tiny_ns;
  }
  if (st != OPTIC_OK || n < 3) return st;
  calib_fit((const double(*)[32])x, t, n, 3, c);
  if (!(c[0] > 0)) return OPTIC_OK;
  out->dot_efficiency = 1 / c[0] > 1 ? 1 : 1 / c[0];
  out->dot_element_ns = c[1], out->dot_call_ns = c[2];
  double ns = 0;
  st = calib_best_program(hlo_dot_packed, plan->trials, plan->target_ns, NULL, NULL, &ns);
  double model =
      2.0 * 16 * 64 * 96 * 32 / core_peak * 1e9 * c[0] + 16.0 * (64 * 32 + 32 * 96 + 64 * 96) * c[1] + 16 * c[2];
  optic_machine gm = {.peak_flops = core_peak, .cores = 1}; /* the product beyond the grid's model, if any */
  memcpy(gm.dot_grid_efficiency, out->dot_grid, sizeof gm.dot_grid_efficiency);
  double eff = optic_machine_dot_grid_efficiency(&gm, 64, 96, 32);
  if (eff > 0) model = 2.0 * 16 * 64 * 96 * 32 / (eff * core_peak) * 1e9;
  if (st == OPTIC_OK && ns > plan->tiny_ns + model)
    out->dot_pack_element_ns = (ns - plan->tiny_ns - model) / (16.0 * 12 * 32 * 8);
  return st;
}

/* Format 14: a 1x1 convolution of f32[1,4,4,8] to 8 features (a few hundred
 * multiply-adds), beyond the one-add program and its class's time: what any
 * planned convolution pays once (plan dispatch, the BLAS call). */
static const conv_shape tiny_conv = {"b01f_01io->b01f", "1,4,4,8", "1,1,8,8", "1,4,4,8", "1x1", 1, NULL};

static optic_status measure_conv_call(const calib_ops_plan *plan, double core_peak, calib_conv *out) {
  char text[1024];
  conv_text(&tiny_conv, text, sizeof text);
  optic_conv_work w = {0};
  double ns = 0;
  optic_status st = calib_best_program(text, plan->trials, plan->target_ns, conv_work_of, &w, &ns);
  const int c = w.conv_class;
  if (st != OPTIC_OK || c < 0 || c >= OPTIC_CONV_CLASS_COUNT || !(out->efficiency[c] > 0)) return st;
  const double model = 2 * w.macs / (out->efficiency[c] * core_peak) * 1e9 + w.moved * out->element_ns[c];
  if (ns > plan->tiny_ns + model) out->call_ns = ns - plan->tiny_ns - model;
  return OPTIC_OK;
}

optic_status calib_measure_conv(const calib_ops_plan *plan, double core_peak, calib_conv *out) {
  memset(out, 0, sizeof *out);
  double x[OPTIC_CONV_CLASS_COUNT][2][32], t[OPTIC_CONV_CLASS_COUNT][32];
  char text[1024];
  optic_status st = OPTIC_OK;
  for (int i = 0; i < N_GRID && st == OPTIC_OK && core_peak > 0; i++) {
    conv_text(&grid[i], text, sizeof text);
    optic_conv_work w = {0};
    double ns = 0;
    st = calib_best_program(text, plan->trials, plan->target_ns, conv_work_of, &w, &ns);
    int c = w.conv_class, k = st == OPTIC_OK ? out->shapes[c] : 0;
    bool bf16 = grid[i].dtype != NULL; /* counts only where the runtime takes the bf16 GEMM */
    if (st != OPTIC_OK || ns <= plan->tiny_ns || k >= 32 || bf16 != (c == OPTIC_CONV_CLASS_BF16)) continue;
    x[c][0][k] = 2 * w.macs / core_peak * 1e9, x[c][1][k] = w.moved, t[c][k] = ns - plan->tiny_ns;
    out->shapes[c]++;
  }
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT && st == OPTIC_OK; c++) {
    double f[CALIB_FIT_MAX_TERMS] = {0};
    if (out->shapes[c] > 0) calib_fit((const double(*)[32])x[c], t[c], out->shapes[c], 2, f);
    const double most = c == OPTIC_CONV_CLASS_BF16 ? OPTIC_CONV_BF16_MAX_EFFICIENCY : 1;
    double eff = f[0] > 0 ? 1 / f[0] : 0;
    if (eff > most) eff = most, f[1] = calib_fit_beyond((const double(*)[32])x[c], t[c], out->shapes[c], 1 / most);
    out->efficiency[c] = eff;
    out->element_ns[c] = eff > 0 ? f[1] : 0;
  }
  if (st == OPTIC_OK && core_peak > 0) {
    uint64_t t0 = optic_now_ns();
    st = calib_measure_dot_grid(plan, core_peak, out->dot_grid);
    out->dot_grid_seconds = (double)(optic_now_ns() - t0) * 1e-9;
  }
  if (st == OPTIC_OK && core_peak > 0) st = measure_dot(plan, core_peak, out);
  if (st == OPTIC_OK && core_peak > 0) st = measure_conv_call(plan, core_peak, out);
  return st;
}
