/* optic_mpi_probe: the MPI link figures of `optic calibrate` (machine
 * format 10). Run under mpiexec with exactly 2 ranks on one host:
 *   mpiexec -np 2 optic_mpi_probe --out FILE
 * Both ranks exchange n bytes each way (MPI_Irecv + MPI_Isend + MPI_Waitall,
 * as the pod's MPI ring steps do) in batches; a batch's time per exchange is
 * the slower rank's, and each size keeps its fastest batch. Rank 0 writes
 * one line to FILE: "latency_ns L bandwidth B", L the time of an 8-byte
 * exchange and B = 4 MiB / (t(4 MiB) - L) in bytes/s. Exit status 0 on
 * success, 2 on a usage error, 1 when MPI fails. Prints nothing else. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMALL ((size_t)8)
#define LARGE ((size_t)4 << 20)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Fastest batch of `per` exchanges of n bytes, ns per exchange (the slower
 * rank's); negative when MPI fails. */
static double exchange_ns(char *sbuf, char *rbuf, size_t n, int per, int batches, int peer) {
  double best = -1;
  for (int b = 0; b < batches; b++) {
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    double t0 = now_ns();
    for (int i = 0; i < per; i++) {
      MPI_Request req[2];
      if (MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[0]) != MPI_SUCCESS) return -1;
      if (MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[1]) != MPI_SUCCESS) return -1;
      if (MPI_Waitall(2, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return -1;
    }
    double mine = (now_ns() - t0) / per, slowest = 0;
    if (MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    if (b > 0 && (best < 0 || slowest < best)) best = slowest; /* batch 0 warms up */
  }
  return best;
}

int main(int argc, char **argv) {
  const char *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
  }
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (out == NULL || size != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -np 2 optic_mpi_probe --out FILE (got %d ranks)\n", size);
    MPI_Finalize();
    return 2;
  }
  char *sbuf = malloc(LARGE), *rbuf = malloc(LARGE);
  int ok = sbuf != NULL && rbuf != NULL;
  if (ok) {
    memset(sbuf, rank + 1, LARGE);
    memset(rbuf, 0, LARGE);
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  double lat = -1, big = -1;
  if (all_ok) {
    lat = exchange_ns(sbuf, rbuf, SMALL, 200, 6, 1 - rank);
    big = exchange_ns(sbuf, rbuf, LARGE, 4, 6, 1 - rank);
  }
  int rc = 1;
  if (rank == 0 && lat > 0 && big > lat) {
    FILE *f = fopen(out, "w");
    if (f != NULL) {
      fprintf(f, "latency_ns %.6g bandwidth %.6g\n", lat, (double)LARGE / ((big - lat) * 1e-9));
      rc = fclose(f) == 0 ? 0 : 1;
    }
  } else if (rank != 0) {
    rc = lat > 0 && big > 0 ? 0 : 1;
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return rc;
}
