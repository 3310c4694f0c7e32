/* optic pod layer: topologies, coordinator, collectives over emulated pod
 * cores (OpenMP threads) and over MPI processes and hosts. This header grows
 * with that issue; today it reports whether the MPI backend is built. */
#ifndef OPTIC_POD_H
#define OPTIC_POD_H

#include <optic/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True if this build of optic includes the MPI backend (MPI was found at
 * configure time). */
OPTIC_API bool optic_pod_mpi_built(void);

/* Writes the MPI library's version (MPI_Get_library_version, callable before
 * MPI_Init) into buf, truncated to size. OPTIC_ERR_UNSUPPORTED with a message
 * when optic was built without MPI. */
OPTIC_API optic_status optic_pod_mpi_library_version(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_POD_H */
