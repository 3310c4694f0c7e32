/* Whether the MPI backend is built, and which MPI library it runs on. */
#include <stdio.h>
#include <string.h>

#include <optic/pod.h>

#include "core/error.h"

#if OPTIC_HAVE_MPI
#include <mpi.h>
#endif

bool optic_pod_mpi_built(void) { return OPTIC_HAVE_MPI != 0; }

optic_status optic_pod_mpi_library_version(char *buf, size_t size) {
  if (buf == NULL || size == 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi_library_version: empty buffer");
  }
#if OPTIC_HAVE_MPI
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) {
    return optic_fail(OPTIC_ERR_INTERNAL, "pod_mpi_library_version: MPI_Get_library_version failed");
  }
  /* Open MPI appends build details after a comma and a newline; keep the first line. */
  version[strcspn(version, "\n")] = '\0';
  snprintf(buf, size, "%s", version);
  return OPTIC_OK;
#else
  buf[0] = '\0';
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "pod: optic was built without MPI (install libopenmpi-dev and reconfigure)");
#endif
}
