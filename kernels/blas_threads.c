/* The count of BLAS calls made where OpenBLAS may thread (blas_threads.h). */
#include "kernels/blas_threads.h"

#include <omp.h>
#include <stdatomic.h>

static atomic_uint_fast64_t g_threaded_calls;

void kernel_blas_note_call(void) {
  if (!omp_in_parallel() && omp_get_max_threads() > 1) {
    atomic_fetch_add_explicit(&g_threaded_calls, 1, memory_order_relaxed);
  }
}

uint64_t kernel_blas_threaded_calls(void) { return atomic_load_explicit(&g_threaded_calls, memory_order_relaxed); }
