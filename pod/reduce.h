/* Internal: the elementwise arithmetic of a pod collective, shared by the
 * emulated pod (collectives.c) and the MPI transport (mpi_collectives.c), so
 * both reduce with the same operation order and NaN semantics and give the
 * same bits. f32 goes through the binary kernels (kernels/binary.h), f64
 * through plain loops with the same semantics. */
#ifndef OPTIC_POD_REDUCE_H
#define OPTIC_POD_REDUCE_H

#include <stddef.h>

#include <optic/pod.h>

#include "kernels/binary.h"

/* y = a op y elementwise over n elements of dt (f32 or f64): a is the ring
 * predecessor's partial, y ours. SUM and MEAN add (MEAN divides afterwards,
 * pod_divide); MAX/MIN: a NaN in a wins, then a NaN in y (the f32 kernels'
 * semantics). */
void pod_reduce_into(const optic_binary_kernels *kernels, optic_dtype dt, optic_pod_op op, size_t n, const void *a,
                     void *y);
/* y /= by elementwise (nothing when n is 0 or by is 1). */
void pod_divide(const optic_binary_kernels *kernels, optic_dtype dt, size_t n, void *y, int by);

#endif
