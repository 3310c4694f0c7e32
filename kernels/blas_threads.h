/* Whether an OpenBLAS call may start threads of its own. The OpenMP build
 * of OpenBLAS (the one optic links) runs a call on the calling thread alone
 * when the caller is inside an active OpenMP region or its
 * omp_get_max_threads() is 1; otherwise it may split the call over a team
 * of its own, beside whatever threads the caller already runs. The runtime
 * (exec/run.c) arranges the first or the second for every call it makes;
 * kernel_blas_note_call, called before each BLAS call of the kernels, counts
 * the calls made otherwise, and kernel_blas_threaded_calls reads that count
 * (tests check that runs of 1-thread contexts add none). Internal header. */
#ifndef OPTIC_KERNELS_BLAS_THREADS_H
#define OPTIC_KERNELS_BLAS_THREADS_H

#include <stdint.h>

void kernel_blas_note_call(void);
uint64_t kernel_blas_threaded_calls(void);

#endif
