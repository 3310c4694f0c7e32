/* The dot efficiency grid of machine format 7: the fraction of one core's
 * peak a single-threaded sgemm call reaches, measured by `optic calibrate`
 * at M, N, K in {4, 16, ..., 4096}, read between the grid sizes. Pure
 * arithmetic on the machine value; never allocates, never prints. */
#include <math.h>

#include <optic/compile.h>

bool optic_machine_has_dot_grid(const optic_machine *m) {
  if (!m) return false;
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++)
    if (m->dot_grid_efficiency[i] > 0) return true;
  return false;
}

/* One size on the grid's axis: the lower grid index *lo and the weight of
 * the next one (linear in log size, clamped to the axis), and the factor a
 * size below the first grid size scales the efficiency by. */
static void axis_position(double size, int *lo, double *frac, double *below) {
  double first = (double)OPTIC_DOT_GRID_SIZE(0);
  *below = size < first ? size / first : 1;
  double x = size > first ? log(size / first) / log(4.0) : 0;
  double last = OPTIC_DOT_GRID_AXIS - 1;
  if (x >= last) x = last;
  int i = (int)x;
  if (i >= OPTIC_DOT_GRID_AXIS - 1) i = OPTIC_DOT_GRID_AXIS - 2;
  *lo = i, *frac = x - i;
  /* at a grid size the log can round just below it: snap to the point */
  if (fabs(*frac - 1) < 1e-12) *frac = 1;
  if (fabs(*frac) < 1e-12) *frac = 0;
}

double optic_machine_dot_grid_efficiency(const optic_machine *m, double M, double N, double K) {
  if (!m || !(M > 0) || !(N > 0) || !(K > 0) || !optic_machine_has_dot_grid(m)) return 0;
  int lo[3];
  double frac[3], below[3];
  axis_position(M, &lo[0], &frac[0], &below[0]);
  axis_position(N, &lo[1], &frac[1], &below[1]);
  axis_position(K, &lo[2], &frac[2], &below[2]);
  double eff = 0;
  for (int corner = 0; corner < 8; corner++) {
    double w = 1;
    int at[3];
    for (int d = 0; d < 3; d++) {
      bool up = (corner >> d) & 1;
      w *= up ? frac[d] : 1 - frac[d];
      at[d] = lo[d] + (up ? 1 : 0);
    }
    if (w > 0) eff += w * m->dot_grid_efficiency[OPTIC_DOT_GRID_INDEX(at[0], at[1], at[2])];
  }
  return eff * below[0] * below[1] * below[2];
}
