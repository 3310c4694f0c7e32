/* calibrate_fit.h: the least-squares fits of calibrate's grids. */
#include "tools/calibrate_fit.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* Least squares of t[i] ~ sum_j x[j][i] c[j] on relative error over the
 * terms in use (mask); false when singular. */
static bool solve(const double (*x)[32], const double *t, int n, int terms, const bool *use, double *c) {
  double a[CALIB_FIT_MAX_TERMS][CALIB_FIT_MAX_TERMS + 1] = {{0}};
  for (int i = 0; i < n; i++) {
    double w = 1 / (t[i] * t[i]);
    for (int j = 0; j < terms; j++) {
      for (int k = 0; k < terms; k++) a[j][k] += use[j] && use[k] ? w * x[j][i] * x[k][i] : 0;
      a[j][terms] += use[j] ? w * x[j][i] * t[i] : 0;
    }
  }
  for (int j = 0; j < terms; j++)
    if (!use[j]) a[j][j] = 1;
  for (int j = 0; j < terms; j++) { /* Gauss-Jordan with partial pivoting */
    int piv = j;
    for (int r = j + 1; r < terms; r++)
      if (fabs(a[r][j]) > fabs(a[piv][j])) piv = r;
    if (!(fabs(a[piv][j]) > 1e-300)) return false;
    for (int k = 0; k <= terms; k++) {
      double tmp = a[j][k];
      a[j][k] = a[piv][k], a[piv][k] = tmp;
    }
    for (int r = 0; r < terms; r++) {
      if (r == j) continue;
      double f = a[r][j] / a[j][j];
      for (int k = j; k <= terms; k++) a[r][k] -= f * a[j][k];
    }
  }
  for (int j = 0; j < terms; j++) c[j] = use[j] ? a[j][terms] / a[j][j] : 0;
  return true;
}

/* solve with every coefficient >= 0: the most negative term is dropped
 * until none is (term 0, the flops, is kept; while it is <= 0 the last
 * other term goes); all 0 when nothing fits. */
void calib_fit(const double (*x)[32], const double *t, int n, int terms, double *c) {
  bool use[CALIB_FIT_MAX_TERMS];
  for (int j = 0; j < CALIB_FIT_MAX_TERMS; j++) use[j] = j < terms && j < n, c[j] = 0;
  for (int round = 0; round < terms; round++) {
    if (!solve(x, t, n, terms, use, c)) break;
    int worst = -1;
    for (int j = 1; j < terms; j++)
      if (use[j] && c[j] < 0 && (worst < 0 || c[j] < c[worst])) worst = j;
    for (int j = terms - 1; j >= 1 && worst < 0 && !(c[0] > 0); j--) /* flops negative: drop a term */
      if (use[j]) worst = j;
    if (worst < 0) break;
    use[worst] = false;
  }
  if (!(c[0] > 0)) memset(c, 0, sizeof(double) * (size_t)terms);
}

/* Refit with the first figure held: the free fit's second figure belongs
 * with the free first one, and beside a capped first figure it would price
 * every shape high. */
double calib_fit_beyond(const double (*x)[32], const double *t, int n, double c0) {
  double num = 0, den = 0;
  for (int i = 0; i < n; i++) {
    double w = 1 / (t[i] * t[i]);
    num += w * x[1][i] * (t[i] - c0 * x[0][i]);
    den += w * x[1][i] * x[1][i];
  }
  return den > 0 && num > 0 ? num / den : 0;
}
