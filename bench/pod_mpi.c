/* optic_bench_pod_mpi: the MPI backend's all-reduce (f32 sum, in place)
 * beside MPI_Allreduce in the same run, at 4 KiB, 1 MiB and 64 MiB: on a user
 * buffer through the shared-memory ring, in place in the shared window, and
 * over MPI messages only. Run it
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

/* The variants, in the order they are timed in each repetition (rotated). */
enum { OURS_SHM, OURS_WINDOW, OURS_MESSAGES, PEER, VARIANTS };
static const char *const VARIANT_NAME[VARIANTS] = {"pod_mpi/all_reduce", "pod_mpi/all_reduce_window",
                                                   "pod_mpi/all_reduce_messages", "peer/mpi_allreduce"};

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
  /* shm: the shared-memory ring (user buffer, or the window in place);
   * msg: optic's ring over MPI messages only */
  optic_pod_mpi_options o = {.size = sizeof o, .shm_bytes = sizes[2]}, mo = {.size = sizeof mo};
  optic_pod_mpi_t *m = NULL, *msg = NULL;
  if (optic_pod_mpi_create(&o, &m) != OPTIC_OK || optic_pod_mpi_create(&mo, &msg) != OPTIC_OK) {
    fprintf(stderr, "optic_pod_mpi_create: %s\n", optic_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  float *window = optic_pod_mpi_window(m, NULL);
  result res[3 * VARIANTS];
  memset(res, 0, sizeof res);
  float *x = calloc(sizes[2] / sizeof(float), sizeof(float)); /* zeros: sums stay finite */
  for (size_t s = 0; s < 3; s++) {
    size_t n = sizes[s] / sizeof(float);
    double bus = (double)sizes[s] * 2.0 * (size - 1) / size;
    for (int v = 0; v < VARIANTS; v++) {
      snprintf(res[VARIANTS * s + v].name, sizeof res[0].name, "%s/bytes:%zu/np:%d/real_time", VARIANT_NAME[v],
               sizes[s], size);
    }
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up (first touch, connections), not recorded */
      for (int k = 0; k < VARIANTS; k++) {
        int v = (k + (r < 0 ? 0 : r)) % VARIANTS; /* rotate who goes first */
        if (v == OURS_WINDOW && window == NULL) continue;
        optic_pod_mpi_t *h = v == OURS_MESSAGES ? msg : m;
        float *buf = v == OURS_WINDOW ? window : x;
        double ns = time_op(v != PEER, h, buf, n, r < 0 ? 1 : iters[s]);
        if (r < 0) continue;
        res[VARIANTS * s + v].ns[r] = ns;
        res[VARIANTS * s + v].gbps[r] = bus / ns;
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
    for (int e = 0; e < 3 * VARIANTS; e++) {
      if (res[e].ns[0] == 0) continue; /* the window variant without a window */
      double best = 0;
      for (int r = 0; r < reps; r++) {
        if (f) {
          fprintf(f, "%s    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"repetitions\": %d, "
                     "\"repetition_index\": %d, \"iterations\": %d, \"real_time\": %.1f, \"time_unit\": \"ns\", "
                     "\"GB/s\": %.6f}",
                  first ? "" : ",\n", res[e].name, res[e].name, reps, r, iters[e / VARIANTS], res[e].ns[r], res[e].gbps[r]);
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
  optic_pod_mpi_destroy(msg);
  MPI_Finalize();
  return 0;
}
