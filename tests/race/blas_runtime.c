/* tsan-omp build only: OpenBLAS (the OpenMP build, compiled against libgomp)
 * and optic share one OpenMP runtime, LLVM's libomp. OpenBLAS's
 * omp_set_num_threads call must change what optic's omp_get_max_threads
 * reads, and a GEMM large enough for OpenBLAS to fork its own team must give
 * the naive product. check_one_runtime.sh runs this under LD_DEBUG=bindings
 * and fails on any symbol bound to libgomp. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 256 };

int main(void) {
  int bad = 0;
  const int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  if (omp_get_max_threads() != 1) {
    printf(
        "FAIL: after openblas_set_num_threads(1) optic's OpenMP runtime still gives %d threads: OpenBLAS "
        "talks to another runtime\n",
        omp_get_max_threads());
    bad++;
  }
  openblas_set_num_threads(2);
  if (omp_get_max_threads() != 2) {
    printf("FAIL: after openblas_set_num_threads(2) omp_get_max_threads() is %d\n", omp_get_max_threads());
    bad++;
  }
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
  if (a == NULL || b == NULL || c == NULL) return 2;
  for (int i = 0; i < N * N; i++) {
    a[i] = (float)((i * 7) % 13) - 6.0f;
    b[i] = (float)((i * 5) % 11) - 5.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
  /* Small integers: every partial sum is exact in float, so the check is exact. */
  for (int i = 0; i < N && bad < 10; i++) {
    for (int j = 0; j < N; j++) {
      float ref = 0.0f;
      for (int k = 0; k < N; k++) ref += a[i * N + k] * b[k * N + j];
      if (c[i * N + j] != ref) {
        printf("FAIL: c[%d][%d] = %g, naive %g\n", i, j, (double)c[i * N + j], (double)ref);
        bad++;
        break;
      }
    }
  }
  openblas_set_num_threads(saved);
  free(a);
  free(b);
  free(c);
  printf("blas_runtime: %s\n", bad ? "FAILED" : "one OpenMP runtime, GEMM exact");
  return bad ? 1 : 0;
}
