/* Tools-internal: how the CLI launches MPI programs of its own (the report's
 * optic_bench_pod_mpi, calibrate's optic_mpi_probe) under 2 ranks on this
 * host, the same way the MPI tests do (tests/CMakeLists.txt). */
#ifndef OPTIC_TOOLS_MPI_LAUNCH_H
#define OPTIC_TOOLS_MPI_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

/* The launcher: $OPTIC_MPIRUN, the mpiexec CMake found, mpirun on PATH.
 * false when none is an executable file. */
bool tools_mpi_launcher(char *out, size_t size);

/* Shared memory + self only (no network probing), no single-copy (CMA needs
 * ptrace rights containers lack), 2 ranks may share fewer cores. Set in this
 * process's environment unless the user set them. */
void tools_mpi_env(void);

/* argv[0..] = launcher [--allow-run-as-root when root] --oversubscribe -np 2
 * exe; returns the count written (at most 6). */
int tools_mpi_argv(char **argv, char *launcher, char *exe);

/* p is a regular file this process may execute. */
bool tools_executable(const char *p);

#endif
