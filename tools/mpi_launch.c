/* The CLI's MPI launches (tools/mpi_launch.h). */
#define _POSIX_C_SOURCE 200809L
#include "tools/mpi_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tools_executable(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

bool tools_mpi_launcher(char *out, size_t size) {
  const char *env = getenv("OPTIC_MPIRUN");
  if (env && env[0]) return snprintf(out, size, "%s", env) < (int)size && tools_executable(out);
#ifdef OPTIC_MPIEXEC
  if (snprintf(out, size, "%s", OPTIC_MPIEXEC) < (int)size && tools_executable(out)) return true;
#endif
  const char *path = getenv("PATH");
  if (!path) return false;
  for (const char *p = path; *p;) {
    size_t len = strcspn(p, ":");
    if (len > 0 && snprintf(out, size, "%.*s/mpirun", (int)len, p) < (int)size && tools_executable(out)) return true;
    p += len;
    if (*p == ':') p++;
  }
  return false;
}

void tools_mpi_env(void) {
  setenv("OMPI_MCA_btl", "self,vader", 0);
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
}

int tools_mpi_argv(char **argv, char *launcher, char *exe) {
  int a = 0;
  argv[a++] = launcher;
  if (geteuid() == 0) argv[a++] = "--allow-run-as-root"; /* Open MPI refuses root otherwise */
  argv[a++] = "--oversubscribe";
  argv[a++] = "-np";
  argv[a++] = "2";
  argv[a++] = exe;
  return a;
}
