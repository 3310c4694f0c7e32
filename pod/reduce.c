/* The elementwise arithmetic of the pod collectives (see reduce.h). */
#include "pod/reduce.h"

void pod_reduce_into(const optic_binary_kernels *kernels, optic_dtype dt, optic_pod_op op, size_t n, const void *a,
                     void *y) {
  if (n == 0) return;
  if (dt == OPTIC_F32) {
    optic_binary_op b = op == OPTIC_POD_MAX   ? OPTIC_BINARY_MAX
                        : op == OPTIC_POD_MIN ? OPTIC_BINARY_MIN
                                              : OPTIC_BINARY_ADD;
    kernels->vv[b](n, a, y, y);
    return;
  }
  const double *x = a;
  double *z = y;
  switch (op) {
    case OPTIC_POD_SUM:
    case OPTIC_POD_MEAN:
      for (size_t i = 0; i < n; i++) z[i] = x[i] + z[i];
      break;
    case OPTIC_POD_MAX:
      for (size_t i = 0; i < n; i++) z[i] = (x[i] != x[i] || x[i] > z[i]) ? x[i] : z[i];
      break;
    case OPTIC_POD_MIN:
      for (size_t i = 0; i < n; i++) z[i] = (x[i] != x[i] || x[i] < z[i]) ? x[i] : z[i];
      break;
  }
}

void pod_divide(const optic_binary_kernels *kernels, optic_dtype dt, size_t n, void *y, int by) {
  if (n == 0 || by == 1) return;
  if (dt == OPTIC_F32) {
    kernels->vs[OPTIC_BINARY_DIV](n, y, (float)by, y);
    return;
  }
  double *z = y;
  for (size_t i = 0; i < n; i++) z[i] = z[i] / (double)by;
}
