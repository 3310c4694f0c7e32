/* calibrate's least-squares fits (tools/calibrate_fit.h) on synthetic
 * grids whose true figures are known: the free two-term fit recovers them,
 * a negative term is dropped, and with the first figure held at a cap the
 * refit second figure prices the grid closer than the free fit's would. */
#include <math.h>
#include <stdio.h>

#include "tests/harness.h"
#include "tools/calibrate_fit.h"

/* A grid of n shapes: x0 (flops time at peak) and x1 (moved elements)
 * spread over three decades, t = a x0 + b x1 times (1 + noise). */
static void grid(int n, double a, double b, double noise, double (*x)[32], double *t) {
  for (int i = 0; i < n; i++) {
    x[0][i] = 1e3 * pow(10, 3.0 * i / (n - 1 > 0 ? n - 1 : 1));
    x[1][i] = 1e4 * pow(10, 2.0 * ((i * 7) % n) / (n > 1 ? n : 1));
    t[i] = (a * x[0][i] + b * x[1][i]) * (1 + ((i % 2) ? noise : -noise));
  }
}

/* Median over the grid of |ln(model / t)|. */
static double median_error(int n, const double (*x)[32], const double *t, double a, double b) {
  double e[32];
  for (int i = 0; i < n; i++) e[i] = fabs(log((a * x[0][i] + b * x[1][i]) / t[i]));
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && e[j] < e[j - 1]; j--) {
      double s = e[j];
      e[j] = e[j - 1], e[j - 1] = s;
    }
  return e[n / 2];
}

static void test_free_fit(void) {
  const int sizes[] = {2, 3, 6, 32};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int n = sizes[k];
    double x[CALIB_FIT_MAX_TERMS][32], t[32], c[CALIB_FIT_MAX_TERMS];
    grid(n, 1.25, 0.1, 0, x, t);
    calib_fit((const double(*)[32])x, t, n, 2, c);
    OT_CHECK(fabs(c[0] - 1.25) < 1e-6 && fabs(c[1] - 0.1) < 1e-6, "n=%d: fit %g %g, want 1.25 0.1", n, c[0], c[1]);
    grid(n, 2.0, -0.05, 0, x, t); /* a negative moved term: dropped, flops alone */
    for (int i = 0; i < n; i++) t[i] = t[i] > 0 ? t[i] : 2.0 * x[0][i];
    calib_fit((const double(*)[32])x, t, n, 2, c);
    OT_CHECK(c[0] > 0 && c[1] == 0, "n=%d: negative term kept: %g %g", n, c[0], c[1]);
  }
}

/* Data whose flops figure fits past the cap (0.75: efficiency 1.33 where 1
 * is the most): held at 1, the refit element figure is smaller than the
 * free one, >= 0, and the capped model's median error beats the cap beside
 * the free element figure by a clear margin. */
static void test_capped_refit(void) {
  const double noises[] = {0, 0.05};
  for (size_t k = 0; k < 2; k++) {
    const int n = 6;
    double x[CALIB_FIT_MAX_TERMS][32], t[32], c[CALIB_FIT_MAX_TERMS];
    grid(n, 0.75, 0.1, noises[k], x, t);
    calib_fit((const double(*)[32])x, t, n, 2, c);
    OT_CHECK(c[0] < 1, "noise %g: the flops figure %g should fit past the cap", noises[k], c[0]);
    double b = calib_fit_beyond((const double(*)[32])x, t, n, 1.0);
    double refit = median_error(n, (const double(*)[32])x, t, 1.0, b);
    double kept = median_error(n, (const double(*)[32])x, t, 1.0, c[1]);
    OT_CHECK(b >= 0 && b < c[1], "noise %g: refit %g against free %g", noises[k], b, c[1]);
    OT_CHECK(refit < 0.8 * kept, "noise %g: refit error %g not below the free figure's %g", noises[k], refit, kept);
  }
  /* nothing left beyond the held term: 0, never negative */
  double x[CALIB_FIT_MAX_TERMS][32], t[32];
  grid(4, 1.0, 0.0, 0, x, t);
  OT_CHECK(calib_fit_beyond((const double(*)[32])x, t, 4, 2.0) == 0);
  /* held at the true figure: the true second figure back */
  grid(5, 1.0, 0.3, 0, x, t);
  OT_CHECK(fabs(calib_fit_beyond((const double(*)[32])x, t, 5, 1.0) - 0.3) < 1e-9);
}

static const ot_case cases[] = {
    {"free_fit", test_free_fit},
    {"capped_refit", test_capped_refit},
};
OT_MAIN(cases)
