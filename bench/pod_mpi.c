/* optic_bench_pod_mpi: the MPI backend's all-reduce (f32 sum, in place)
 * beside MPI_Allreduce in the same run, at 4 KiB, 1 MiB and 64 MiB: on a user
 * buffer through the shared-memory ring, in place in the shared window, and
 * over MPI messages only. Run it
 * under mpirun (e.g. -np 2). Ranks must agree on iteration counts, which
 * Google Benchmark's adaptive loop cannot promise, so this is a plain MPI
 * program with fixed counts: repetitions alternate ours and the peer, each
 * time is the slowest rank's, and rank 0 writes the JSON Google Benchmark
 * would: per repetition an iteration entry (real_time: wall, cpu_time: the
 * main thread's CPU time, both per iteration, GB/s), and with 2 or more
 * repetitions the mean, median, stddev and cv aggregates, so bench/ratios.py,
 * optic report and Google Benchmark's compare.py read it.
 * Usage: mpirun -np 2 optic_bench_pod_mpi [--out FILE.json] [--reps N] [--filter REGEX]
 * (REGEX, POSIX extended: only the benchmarks whose name it matches). */
#include <mpi.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <optic/pod.h>

#include "bench/estimate.h"

enum { MAX_REPS = 16 };

typedef struct result {
  char name[128];
  int family, instance, iters; /* Google Benchmark's family_index, per_family_instance_index */
  bool selected;
  double ns[MAX_REPS], cpu_ns[MAX_REPS], gbps[MAX_REPS];
  double est_ns; /* the machine model's time per all-reduce (0: none, the peer) */
} result;

/* The variants, in the order they are timed in each repetition (rotated). */
enum { OURS_SHM, OURS_WINDOW, OURS_MESSAGES, PEER, VARIANTS };
static const char *const VARIANT_NAME[VARIANTS] = {"pod_mpi/all_reduce", "pod_mpi/all_reduce_window",
                                                   "pod_mpi/all_reduce_messages", "peer/mpi_allreduce"};
enum { SIZES = 3 };

static double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Runs iters calls; the slowest rank's wall and CPU time per call. */
static void time_op(bool ours, optic_pod_mpi_t *m, float *x, size_t n, int iters, double *wall_ns, double *cpu_ns) {
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t t0 = optic_now_ns();
  double c0 = thread_cpu_ns();
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
  double mine[2] = {(double)(optic_now_ns() - t0) / iters, (thread_cpu_ns() - c0) / iters}, slowest[2] = {0, 0};
  MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  *wall_ns = slowest[0];
  *cpu_ns = slowest[1];
}

/* ---------------------------------------------------------------- JSON */

static void put_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

static double mean_of(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s / n;
}

/* Google Benchmark's statistics (src/statistics.cc): the median averages the
 * two middle values of an even count; stddev is the sample (n - 1) one. */
static double median_of(const double *v, int n) {
  double s[MAX_REPS];
  memcpy(s, v, (size_t)n * sizeof *s);
  for (int i = 1; i < n; i++) {
    for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
      double t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  }
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double stddev_of(const double *v, int n) {
  if (n < 2) return 0;
  double m = mean_of(v, n), ss = 0;
  for (int i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
  return sqrt(ss / (n - 1));
}

static double cv_of(const double *v, int n) {
  double m = mean_of(v, n);
  return m != 0 ? stddev_of(v, n) / m : 0;
}

static void put_common(FILE *f, const result *r, const char *suffix, const char *run_type, int reps) {
  fprintf(f,
          "    {\"name\": \"%s%s\", \"family_index\": %d, \"per_family_instance_index\": %d, \"run_name\": \"%s\", "
          "\"run_type\": \"%s\", \"repetitions\": %d, ",
          r->name, suffix, r->family, r->instance, r->name, run_type, reps);
}

static void write_entries(FILE *f, const result *r, int reps, bool *first) {
  for (int i = 0; i < reps; i++) {
    fputs(*first ? "" : ",\n", f);
    *first = false;
    put_common(f, r, "", "iteration", reps);
    fprintf(f,
            "\"repetition_index\": %d, \"threads\": 1, \"iterations\": %d, \"real_time\": %.17g, "
            "\"cpu_time\": %.17g, \"time_unit\": \"ns\", \"GB/s\": %.17g",
            i, r->iters, r->ns[i], r->cpu_ns[i], r->gbps[i]);
    if (r->est_ns > 0) fprintf(f, ", \"est_time_ns\": %.17g", r->est_ns);
    fputs("}", f);
  }
  if (reps < 2) return; /* Google Benchmark writes aggregates only for repetitions > 1 */
  static const char *const AGG[] = {"mean", "median", "stddev", "cv"};
  double (*const fn[])(const double *, int) = {mean_of, median_of, stddev_of, cv_of};
  for (int a = 0; a < 4; a++) {
    char suffix[16];
    snprintf(suffix, sizeof suffix, "_%s", AGG[a]);
    fputs(",\n", f);
    put_common(f, r, suffix, "aggregate", reps);
    fprintf(f,
            "\"threads\": 1, \"aggregate_name\": \"%s\", \"aggregate_unit\": \"%s\", \"iterations\": %d, "
            "\"real_time\": %.17g, \"cpu_time\": %.17g, \"time_unit\": \"ns\", \"GB/s\": %.17g",
            AGG[a], a == 3 ? "percentage" : "time", reps, fn[a](r->ns, reps), fn[a](r->cpu_ns, reps),
            fn[a](r->gbps, reps));
    if (r->est_ns > 0 && a < 3) fprintf(f, ", \"est_time_ns\": %.17g", r->est_ns);
    fputs("}", f);
  }
}

static void write_json(const char *out, const result *res, int n_res, int reps, int np) {
  FILE *f = fopen(out, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", out);
    return;
  }
  char ver[256] = "";
  optic_pod_mpi_library_version(ver, sizeof ver);
  /* optic_isa: ratios.py fills {optic_isa} in other bars' names from it */
  fputs("{\n  \"context\": {\"mpi_library\": ", f);
  put_string(f, ver);
  fprintf(f, ", \"np\": \"%d\", \"optic_isa\": \"%s\"},\n  \"benchmarks\": [\n", np,
          optic_isa_name(optic_isa_selected()));
  bool first = true;
  for (int e = 0; e < n_res; e++) {
    if (res[e].selected) write_entries(f, &res[e], reps, &first);
  }
  fputs("\n  ]\n}\n", f);
  if (fclose(f) != 0) fprintf(stderr, "cannot write %s\n", out);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *out = NULL, *filter = NULL;
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) filter = argv[++i];
  }
  if (reps < 1) reps = 1;
  if (reps > MAX_REPS) reps = MAX_REPS;
  regex_t re;
  int rc = filter ? regcomp(&re, filter, REG_EXTENDED | REG_NOSUB) : 0;
  if (rc != 0) {
    char msg[256];
    regerror(rc, &re, msg, sizeof msg);
    if (rank == 0) fprintf(stderr, "optic_bench_pod_mpi: --filter '%s': invalid regular expression: %s\n", filter, msg);
    MPI_Finalize();
    return 2;
  }
  const size_t sizes[SIZES] = {4096, (size_t)1 << 20, (size_t)64 << 20};
  const int iters[SIZES] = {2000, 40, 3};
  /* shm: the shared-memory ring (user buffer, or the window in place);
   * msg: optic's ring over MPI messages only */
  optic_pod_mpi_options o = {.size = sizeof o, .shm_bytes = sizes[SIZES - 1]}, mo = {.size = sizeof mo};
  optic_pod_mpi_t *m = NULL, *msg = NULL;
  if (optic_pod_mpi_create(&o, &m) != OPTIC_OK || optic_pod_mpi_create(&mo, &msg) != OPTIC_OK) {
    fprintf(stderr, "optic_pod_mpi_create: %s\n", optic_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  float *window = optic_pod_mpi_window(m, NULL);
  result res[SIZES * VARIANTS];
  memset(res, 0, sizeof res);
  float *x = calloc(sizes[SIZES - 1] / sizeof(float), sizeof(float)); /* zeros: sums stay finite */
  for (size_t s = 0; s < SIZES; s++) {
    size_t n = sizes[s] / sizeof(float);
    double bus = (double)sizes[s] * 2.0 * (size - 1) / size;
    bool any = false;
    for (int v = 0; v < VARIANTS; v++) {
      result *r = &res[VARIANTS * s + v];
      snprintf(r->name, sizeof r->name, "%s/bytes:%zu/np:%d/real_time", VARIANT_NAME[v], sizes[s], size);
      r->family = v, r->instance = (int)s, r->iters = iters[s];
      /* ours: the link model (bench/estimate.h); the user-buffer ring also
       * copies the buffer into the window and back (2 x bytes at DRAM rate) */
      if (v == OURS_WINDOW || v == OURS_MESSAGES) {
        r->est_ns = bench_mpi_all_reduce_ns(size, (double)sizes[s], v == OURS_MESSAGES);
      } else if (v == OURS_SHM) {
        optic_machine mm;
        double ring = bench_mpi_all_reduce_ns(size, (double)sizes[s], false);
        r->est_ns = ring > 0 && bench_machine(1, &mm) ? ring + 2.0 * (double)sizes[s] / mm.dram_bandwidth * 1e9 : 0;
      }
      r->selected = (v != OURS_WINDOW || window != NULL) && (!filter || regexec(&re, r->name, 0, NULL, 0) == 0);
      any = any || r->selected;
    }
    for (int rep = -1; any && rep < reps; rep++) { /* rep = -1: warm-up (first touch, connections), not recorded */
      for (int k = 0; k < VARIANTS; k++) {
        int v = (k + (rep < 0 ? 0 : rep)) % VARIANTS; /* rotate who goes first */
        result *r = &res[VARIANTS * s + v];
        if (!r->selected) continue;
        float *buf = v == OURS_WINDOW ? window : x;
        double ns, cpu;
        time_op(v != PEER, v == OURS_MESSAGES ? msg : m, buf, n, rep < 0 ? 1 : iters[s], &ns, &cpu);
        if (rep < 0) continue;
        r->ns[rep] = ns, r->cpu_ns[rep] = cpu, r->gbps[rep] = bus / ns;
      }
    }
  }
  if (filter) regfree(&re);
  if (rank == 0) {
    if (out) write_json(out, res, SIZES * VARIANTS, reps, size);
    for (int e = 0; e < SIZES * VARIANTS; e++) {
      if (!res[e].selected) continue;
      double best = 0;
      for (int r = 0; r < reps; r++) best = res[e].gbps[r] > best ? res[e].gbps[r] : best;
      printf("%-50s median %8.3f GB/s (bus), best %8.3f\n", res[e].name, median_of(res[e].gbps, reps), best);
    }
  }
  free(x);
  optic_pod_mpi_destroy(m);
  optic_pod_mpi_destroy(msg);
  MPI_Finalize();
  return 0;
}
