/* Least-squares fits of calibrate's timed grids (calibrate_conv.c): a time
 * per shape against up to CALIB_FIT_MAX_TERMS work counts per shape, on
 * relative error (each shape weighs 1 / t^2), every figure >= 0. */
#ifndef OPTIC_TOOLS_CALIBRATE_FIT_H
#define OPTIC_TOOLS_CALIBRATE_FIT_H

enum { CALIB_FIT_MAX_TERMS = 3 };

/* t[i] ~ sum_j x[j][i] c[j] over n <= 32 shapes and `terms` terms: the
 * most negative term is dropped until none is (term 0 is kept; while it is
 * <= 0 the last other term goes); c all 0 when nothing fits. */
void calib_fit(const double (*x)[32], const double *t, int n, int terms, double *c);

/* The second coefficient of the two-term fit t ~ c0 x[0] + c1 x[1] with c0
 * held (a capped first figure), >= 0 (0 when nothing is left beyond c0's
 * term). */
double calib_fit_beyond(const double (*x)[32], const double *t, int n, double c0);

#endif
