/* optic_bench_pod_mpi: the MPI backend's all-reduce (f32 sum, in place)
 * beside MPI_Allreduce in the same run, at 4 KiB, 1 MiB and 64 MiB. Run it
 * under mpirun (e.g. -np 2). Ranks must agree on iteration counts, which
 * Google Benchmark's adaptive loop cannot promise, so this is a plain MPI
 * program with fixed counts: repetitions alternate ours and the peer, each
 * time is the slowest rank's, and rank 0 writes Google-Benchmark-shaped JSON
 * (iteration entries with real_time and GB/s) that bench/ratios.py reads.
 * Usage: mpirun -np 2 optic_bench_pod_mpi [--out FILE.json] [--reps N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/pod.h>

typedef struct result {
  char name[128];
  double ns[16];
  double gbps[16];
} result;

static double time_op(bool ours, optic_pod_mpi_t *m, float *x, size_t n, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t t0 = optic_now_ns();
  for (int i = 0; i < iters; i++) {
    if (ours) {
      if (optic_pod_mpi_all_reduce(m, x, x, n, OPTIC_F32, OPTIC_POD_SUM) != OPTIC_OK) {
        fprintf(stderr, "optic_pod_mpi_all_reduce: %s\n", optic_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    } else {
      MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double mine = (double)(optic_now_ns() - t0) / iters, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *out = NULL;
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
  }
  if (reps < 1) reps = 1;
  if (reps > 16) reps = 16;
  const size_t sizes[3] = {4096, (size_t)1 << 20, (size_t)64 << 20};
  const int iters[3] = {2000, 40, 3};
  optic_pod_mpi_options o = {.size = sizeof o};
  optic_pod_mpi_t *m = NULL;
  if (optic_pod_mpi_create(&o, &m) != OPTIC_OK) {
    fprintf(stderr, "optic_pod_mpi_create: %s\n", optic_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  result res[6];
  memset(res, 0, sizeof res);
  float *x = calloc(sizes[2] / sizeof(float), sizeof(float)); /* zeros: sums stay finite */
  for (size_t s = 0; s < 3; s++) {
    size_t n = sizes[s] / sizeof(float);
    double bus = (double)sizes[s] * 2.0 * (size - 1) / size;
    snprintf(res[2 * s].name, sizeof res[0].name, "pod_mpi/all_reduce/bytes:%zu/np:%d/real_time", sizes[s], size);
    snprintf(res[2 * s + 1].name, sizeof res[0].name, "peer/mpi_allreduce/bytes:%zu/np:%d/real_time", sizes[s], size);
    time_op(true, m, x, n, 1); /* warm-up: first touch, connections */
    time_op(false, m, x, n, 1);
    for (int r = 0; r < reps; r++) {
      for (int which = 0; which < 2; which++) {
        bool ours = (which + r) % 2 == 0; /* alternate who goes first */
        double ns = time_op(ours, m, x, n, iters[s]);
        result *e = &res[2 * s + (ours ? 0 : 1)];
        e->ns[r] = ns;
        e->gbps[r] = bus / ns;
      }
    }
  }
  if (rank == 0) {
    FILE *f = out ? fopen(out, "w") : NULL;
    if (out && f == NULL) fprintf(stderr, "cannot write %s\n", out);
    char ver[256] = "";
    optic_pod_mpi_library_version(ver, sizeof ver);
    /* optic_isa: ratios.py fills {optic_isa} in other bars' names from it */
    if (f) {
      fprintf(f, "{\n  \"context\": {\"mpi_library\": \"%s\", \"np\": \"%d\", \"optic_isa\": \"%s\"},\n", ver, size,
              optic_isa_name(optic_isa_selected()));
      fprintf(f, "  \"benchmarks\": [\n");
    }
    bool first = true;
    for (int e = 0; e < 6; e++) {
      double best = 0;
      for (int r = 0; r < reps; r++) {
        if (f) {
          fprintf(f, "%s    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"repetitions\": %d, "
                     "\"repetition_index\": %d, \"iterations\": %d, \"real_time\": %.1f, \"time_unit\": \"ns\", "
                     "\"GB/s\": %.6f}",
                  first ? "" : ",\n", res[e].name, res[e].name, reps, r, iters[e / 2], res[e].ns[r], res[e].gbps[r]);
        }
        first = false;
        if (res[e].gbps[r] > best) best = res[e].gbps[r];
      }
      double sorted[16];
      memcpy(sorted, res[e].gbps, sizeof sorted);
      for (int i = 1; i < reps; i++) {
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
          double t = sorted[j];
          sorted[j] = sorted[j - 1];
          sorted[j - 1] = t;
        }
      }
      printf("%-50s median %8.3f GB/s (bus), best %8.3f\n", res[e].name, sorted[reps / 2], best);
    }
    if (f) {
      fprintf(f, "\n  ]\n}\n");
      fclose(f);
    }
  }
  free(x);
  optic_pod_mpi_destroy(m);
  MPI_Finalize();
  return 0;
}
