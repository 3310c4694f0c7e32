/* Hierarchical all-reduce: an emulated pod inside each MPI rank. The pod
 * reduces on shared memory, core 0 (the thread that called optic_pod_run)
 * alone talks MPI, the pod broadcasts the result, and a mean divides once at
 * the end. Must never let a failed MPI call strand the other cores: it
 * aborts the pod so they return PEER_FAILED. */
#include <string.h>

#include "core/error.h"
#include "pod/pod_internal.h"

#if OPTIC_HAVE_MPI
#include <mpi.h>
#endif

optic_status optic_pod_hier_all_reduce(optic_pod_core_t *c, optic_pod_mpi_t *m, const void *send, void *recv,
                                       size_t count, optic_dtype dtype, optic_pod_op op) {
  if (c == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "hier_all_reduce: core is NULL");
#if !OPTIC_HAVE_MPI
  (void)m, (void)send, (void)recv, (void)count, (void)dtype, (void)op;
  return optic_fail(OPTIC_ERR_UNSUPPORTED,
                    "hier_all_reduce: optic was built without MPI (install libopenmpi-dev and reconfigure)");
#else
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "hier_all_reduce: MPI handle is NULL");
  const optic_pod_op inner = op == OPTIC_POD_MEAN ? OPTIC_POD_SUM : op;
  optic_status st = optic_pod_all_reduce(c, send, recv, count, dtype, inner);
  if (st != OPTIC_OK) return st;
  if (c->index == 0) {
    int main_thread = 0, level = MPI_THREAD_SINGLE;
    MPI_Is_thread_main(&main_thread);
    MPI_Query_thread(&level);
    if (!main_thread && level < MPI_THREAD_SERIALIZED) {
      pod_abort(c->pod, "hier_all_reduce: core 0 is not MPI's main thread");
      return optic_fail(OPTIC_ERR_UNSUPPORTED,
                        "hier_all_reduce: core 0 runs on a thread other than the one that initialized MPI, and "
                        "the thread level is below MPI_THREAD_SERIALIZED");
    }
    /* The other ranks may be late by far more than the heartbeat timeout (a
     * loaded machine deschedules them); the MPI handle's own timeout bounds
     * this wait, so the pod's cores do not take core 0's silence in it for a
     * failure. */
    pod_heartbeat_excuse(c);
    st = optic_pod_mpi_all_reduce(m, recv, recv, count, dtype, inner);
    pod_heartbeat_now(c);
    if (st != OPTIC_OK) {
      pod_abort(c->pod, "hier_all_reduce: the MPI all-reduce on core 0 failed: %s", optic_last_error());
      return st;
    }
  }
  if ((st = optic_pod_broadcast(c, recv, count, dtype, 0)) != OPTIC_OK) return st;
  if (op == OPTIC_POD_MEAN && count > 0) {
    const int by = c->pod->n * optic_pod_mpi_size(m);
    if (dtype == OPTIC_F32) {
      c->pod->kernels->vs[OPTIC_BINARY_DIV](count, recv, (float)by, recv);
    } else {
      double *z = recv;
      for (size_t i = 0; i < count; i++) z[i] = z[i] / (double)by;
    }
  }
  return OPTIC_OK;
#endif
}
