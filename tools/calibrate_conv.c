/* `optic calibrate`'s convolution classes of machine format 4
 * (calibrate_measure.h): for each strategy of the runtime's convolution
 * planner, a small grid of its own f32 convolutions (3x3 windows, a few
 * feature counts and image sizes; 1x1 for GEMM, 3-D and few output features
 * or an OI kernel for feature-contiguous im2col, NCHW for spatial-contiguous im2col, NHWC
 * and NCHW depthwise for the grouped loops), each compiled and run on one
 * thread like the other classes and timed beyond the one-add program. The
 * planner's own choice (optic_program_conv_work, the function the estimate
 * uses) decides which class a shape belongs to, so a shape the planner runs
 * otherwise on this host counts for that class. Per class the model
 *   t = 2 x macs / (efficiency x one-thread FMA peak) + moved x element_ns
 * is fitted by least squares on relative error (both figures >= 0; one
 * shape or a negative figure: efficiency alone). The dot's call cost is a
 * batch of 256 tiny 8x8x8 products, per item, beyond their flops at the
 * measured sgemm rate. Never prints. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"

typedef struct conv_shape {
  const char *labels, *input, *kernel, *output, *window;
  int64_t groups;
} conv_shape;

static const conv_shape grid[] = {
    /* GEMM: 1x1 windows, NHWC */
    {"b01f_01io->b01f", "1,14,14,64", "1,1,64,64", "1,14,14,64", "1x1", 1},
    {"b01f_01io->b01f", "1,28,28,32", "1,1,32,16", "1,28,28,16", "1x1", 1},
    {"b01f_01io->b01f", "1,8,8,256", "1,1,256,128", "1,8,8,128", "1x1", 1},
    /* im2col, feature-contiguous input: 3-D windows, few output features */
    {"b012f_012io->b012f", "1,4,16,16,8", "3,3,3,8,8", "1,4,16,16,8", "3x3x3", 1},
    {"b012f_012io->b012f", "1,1,32,32,3", "3,3,3,3,32", "1,1,32,32,32", "3x3x3", 1},
    {"b01f_01io->b01f", "1,28,28,32", "3,3,32,8", "1,28,28,8", "3x3", 1},
    /* ... and kernels whose output features are not contiguous (no direct loops) */
    {"b01f_01oi->b01f", "1,14,14,64", "3,3,64,64", "1,14,14,64", "3x3", 1},
    {"b01f_01oi->b01f", "2,28,28,32", "3,3,32,32", "2,28,28,32", "3x3", 1},
    /* im2col, spatial-contiguous input: NCHW; one input feature in NHWC */
    {"bf01_oi01->bf01", "1,32,28,28", "32,32,3,3", "1,32,28,28", "3x3", 1},
    {"bf01_oi01->bf01", "1,8,14,14", "64,8,3,3", "1,64,14,14", "3x3", 1},
    {"b01f_01io->b01f", "4,16,16,1", "3,3,1,16", "4,16,16,16", "3x3", 1},
    /* direct: NHWC 3x3 */
    {"b01f_01io->b01f", "1,28,28,32", "3,3,32,32", "1,28,28,32", "3x3", 1},
    {"b01f_01io->b01f", "1,14,14,64", "3,3,64,64", "1,14,14,64", "3x3", 1},
    {"b01f_01io->b01f", "2,16,16,3", "3,3,3,16", "2,16,16,16", "3x3", 1},
    /* grouped across adjacent groups: NHWC depthwise */
    {"b01f_01io->b01f", "1,28,28,64", "3,3,1,64", "1,28,28,64", "3x3", 64},
    {"b01f_01io->b01f", "1,14,14,128", "3,3,1,128", "1,14,14,128", "3x3", 128},
    {"b01f_01io->b01f", "2,16,16,32", "3,3,1,32", "2,16,16,32", "3x3", 32},
    /* grouped along output rows: NCHW depthwise */
    {"bf01_oi01->bf01", "1,64,28,28", "64,1,3,3", "1,64,28,28", "3x3", 64},
    {"bf01_oi01->bf01", "1,32,16,16", "32,1,3,3", "1,32,16,16", "3x3", 32},
    {"bf01_oi01->bf01", "2,16,32,32", "16,1,3,3", "2,16,32,32", "3x3", 16},
};
#define N_GRID ((int)(sizeof grid / sizeof grid[0]))

static void conv_text(const conv_shape *s, char *buf, size_t size) {
  char pad[64] = "";
  size_t len = 0;
  const bool one = strcmp(s->window, "1x1") == 0;
  int dims = (int)(strlen(s->window) + 1) / 2;
  for (int d = 0; d < dims && !one; d++) len += (size_t)snprintf(pad + len, sizeof pad - len, "%s1_1", d ? "x" : "");
  snprintf(buf, size,
           "HloModule calibrate_conv\n"
           "ENTRY e {\n"
           "  x = f32[%s] parameter(0)\n"
           "  k = f32[%s] parameter(1)\n"
           "  ROOT y = f32[%s] convolution(x, k), window={size=%s%s%s}, dim_labels=%s, feature_group_count=%lld\n"
           "}\n",
           s->input, s->kernel, s->output, s->window, one ? "" : " pad=", pad, s->labels, (long long)s->groups);
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

/* Least squares of t ~ x a + y e on relative error, a, e >= 0. */
static void fit(const double *x, const double *y, const double *t, int n, double *a, double *e) {
  double sxx = 0, sxy = 0, syy = 0, sxt = 0, syt = 0;
  for (int i = 0; i < n; i++) {
    double w = 1 / (t[i] * t[i]);
    sxx += w * x[i] * x[i], sxy += w * x[i] * y[i], syy += w * y[i] * y[i];
    sxt += w * x[i] * t[i], syt += w * y[i] * t[i];
  }
  double det = sxx * syy - sxy * sxy;
  *a = sxx > 0 ? sxt / sxx : 0, *e = 0;
  if (n >= 2 && det > 1e-12 * sxx * syy) {
    double a2 = (sxt * syy - syt * sxy) / det, e2 = (sxx * syt - sxy * sxt) / det;
    if (a2 > 0 && e2 >= 0) *a = a2, *e = e2;
  }
}

static const char *const hlo_dot_calls =
    "HloModule calibrate_dot_calls\n"
    "ENTRY e {\n"
    "  a = f32[256,8,8] parameter(0)\n"
    "  b = f32[256,8,8] parameter(1)\n"
    "  ROOT d = f32[256,8,8] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
    "rhs_contracting_dims={1}\n"
    "}\n";

optic_status calib_measure_conv(const calib_ops_plan *plan, double core_peak, double gemm_rate, calib_conv *out) {
  memset(out, 0, sizeof *out);
  double x[OPTIC_CONV_CLASS_COUNT][N_GRID], y[OPTIC_CONV_CLASS_COUNT][N_GRID], t[OPTIC_CONV_CLASS_COUNT][N_GRID];
  char text[1024];
  optic_status st = OPTIC_OK;
  for (int i = 0; i < N_GRID && st == OPTIC_OK && core_peak > 0; i++) {
    conv_text(&grid[i], text, sizeof text);
    optic_conv_work w = {0};
    double ns = 0;
    st = calib_time_program(text, plan->trials, plan->target_ns, conv_work_of, &w, &ns);
    int c = w.conv_class, k = st == OPTIC_OK ? out->shapes[c] : 0;
    if (st != OPTIC_OK || ns <= plan->tiny_ns) continue;
    x[c][k] = 2 * w.macs / core_peak * 1e9, y[c][k] = w.moved, t[c][k] = ns - plan->tiny_ns;
    out->shapes[c]++;
  }
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT && st == OPTIC_OK; c++) {
    double a = 0, e = 0;
    if (out->shapes[c] > 0) fit(x[c], y[c], t[c], out->shapes[c], &a, &e);
    out->efficiency[c] = a > 0 ? (1 / a > 1 ? 1 : 1 / a) : 0;
    out->element_ns[c] = out->efficiency[c] > 0 ? e : 0;
  }
  double ns = 0;
  if (st == OPTIC_OK) st = calib_time_program(hlo_dot_calls, plan->trials, plan->target_ns, NULL, NULL, &ns);
  double flops_ns = gemm_rate > 0 ? 2.0 * 256 * 8 * 8 * 8 / gemm_rate * 1e9 : 0;
  if (st == OPTIC_OK && ns > plan->tiny_ns + flops_ns) out->dot_call_ns = (ns - plan->tiny_ns - flops_ns) / 256;
  return st;
}
