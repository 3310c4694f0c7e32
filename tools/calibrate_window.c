/* `optic calibrate`'s figures of machine format 13 for the window ops
 * (calibrate_measure.h): each op on two shapes with the same element count
 * whose last dim (the run the runtime copies or reduces contiguously)
 * differs, through optic_compile + optic_program_run on one thread, each
 * run beyond the one-add program's (plan->tiny_ns; fastest trial). The
 * difference prices a run, what the long-run shape has beyond its runs
 * prices an element:
 *   pad            f32[N,4,4,C] padded by 1 low, 1 high and 1 interior on
 *                  the two middle dims to f32[N,9,9,C], (N, C) = (512, 4)
 *                  and (32, 64): per output element and per run of C
 *   reduce-window  a 2x2 stride-2 max over f32[N,8,8,C] (NHWC) to
 *                  f32[N,4,4,C], the same two (N, C): per window element
 *                  (outputs x 4) and per run of C outputs
 * A figure that does not come out positive is left 0. Never prints. */
#include <stdio.h>

#include "tools/calibrate_measure.h"

enum { LONG_N = 32, LONG_C = 64, SHORT_N = 512, SHORT_C = 4 };

static void pad_text(char *buf, size_t size, int n, int c) {
  snprintf(buf, size,
           "HloModule calibrate_pad\nENTRY e {\n  x = f32[%d,4,4,%d] parameter(0)\n  z = f32[] constant(0)\n"
           "  ROOT p = f32[%d,9,9,%d] pad(x, z), padding=0_0x1_1_1x1_1_1x0_0\n}\n",
           n, c, n, c);
}

static void pool_text(char *buf, size_t size, int n, int c) {
  snprintf(buf, size,
           "HloModule calibrate_reduce_window\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT m = f32[] maximum(a, b)\n}\nENTRY e {\n  x = f32[%d,8,8,%d] parameter(0)\n"
           "  ninf = f32[] constant(-inf)\n  ROOT r = f32[%d,4,4,%d] reduce-window(x, ninf), "
           "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n}\n",
           n, c, n, c);
}

/* Times the two shapes of one op and splits them into element and run
 * figures: `per_row` outputs per (N, C=1) row, `elements_per_output` units. */
static optic_status fit(const calib_ops_plan *plan, void (*text)(char *, size_t, int, int), double per_row,
                        double elements_per_output, double *element_ns, double *run_ns) {
  char lo[512], sh[512];
  double long_ns = 0, short_ns = 0;
  text(lo, sizeof lo, LONG_N, LONG_C);
  text(sh, sizeof sh, SHORT_N, SHORT_C);
  optic_status st = calib_beyond_tiny(plan, lo, &long_ns);
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, sh, &short_ns);
  if (st != OPTIC_OK) return st;
  const double outputs = (double)LONG_N * LONG_C * per_row; /* the same for both shapes */
  const double long_runs = (double)LONG_N * per_row, short_runs = (double)SHORT_N * per_row;
  const double run = (short_ns - long_ns) / (short_runs - long_runs);
  if (!(run > 0)) return OPTIC_OK;
  *run_ns = run;
  const double rest = long_ns - long_runs * run;
  if (rest > 0) *element_ns = rest / (outputs * elements_per_output);
  return OPTIC_OK;
}

optic_status calib_measure_window(const calib_ops_plan *plan, calib_classes *out) {
  optic_status st = fit(plan, pad_text, 81.0, 1.0, &out->pad_element_ns, &out->pad_run_ns);
  if (st == OPTIC_OK) st = fit(plan, pool_text, 16.0, 4.0, &out->reduce_window_element_ns, &out->reduce_window_run_ns);
  return st;
}
