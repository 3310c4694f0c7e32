/* `optic calibrate`'s figures beyond the roofline (calibrate_measure.h):
 * how close an f32 GEMM through the dot path's BLAS call comes to the FMA
 * peak, SHA-256 throughput on one core, write + fsync of a new file, and the
 * cost of one OpenMP barrier among all threads and of one read of a thread's
 * CPU-time clock. Each is a machine property
 * measured with its own small workload, never with a benchmark of optic's
 * own cases. Never prints. */
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double calib_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* GEMM rate (FLOP/s over all threads) of one 256 x 512 x 512 product per
 * thread with single-threaded OpenBLAS inside one OpenMP region, as the
 * executor runs a dot's slices: the best of `trials` regions of `reps`
 * products each, timed as the FMA peak is (the slowest thread's own CPU
 * clock, so a descheduled thread does not count). */
enum { GM = 256, GN = 512, GK = 512 };

static optic_status gemm_rate(int threads, int trials, int reps, double *out) {
  size_t per = (size_t)GM * GK + (size_t)GK * GN + (size_t)GM * GN;
  float *buf = NULL;
  optic_status st = optic_alloc(NULL, per * (size_t)threads * sizeof(float), 64, (void **)&buf);
  if (st != OPTIC_OK) return st;
  for (size_t i = 0; i < per * (size_t)threads; i++) buf[i] = (float)(i % 17) * 0.0625f;
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  double best = 0;
  for (int t = 0; t <= trials; t++) { /* trial 0 warms up (OpenBLAS buffers, threads) */
    double longest = 1;
#pragma omp parallel num_threads(threads)
    {
      float *a = buf + per * (size_t)omp_get_thread_num(), *b = a + (size_t)GM * GK, *c = b + (size_t)GK * GN;
      uint64_t t0 = thread_cpu_ns();
      for (int r = 0; r < reps; r++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GM, GN, GK, 1.f, a, GK, b, GN, 0.f, c, GN);
      double mine = (double)(thread_cpu_ns() - t0);
#pragma omp critical(calib_gemm)
      if (mine > longest) longest = mine;
    }
    double ns = longest;
    double rate = 2.0 * GM * GN * GK * reps * threads / (ns * 1e-9);
    if (t > 0 && rate > best) best = rate;
  }
  openblas_set_num_threads(saved);
  optic_free(NULL, buf, per * (size_t)threads * sizeof(float), 64);
  *out = best;
  return OPTIC_OK;
}

/* SHA-256 bytes/s on one thread: the best of `trials` hashes of 4 MiB. */
static optic_status hash_rate(int trials, double *out) {
  const size_t n = (size_t)4 << 20;
  unsigned char *buf = malloc(n);
  if (!buf) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the SHA-256 buffer");
  for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 131u >> 3);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int dlen = 0;
  double best = 0;
  optic_status st = OPTIC_OK;
  for (int t = 0; t <= trials && st == OPTIC_OK; t++) {
    uint64_t t0 = optic_now_ns();
    /* OpenSSL EVP SHA-256, one shot: what checkpoints hash with */
    if (EVP_Digest(buf, n, digest, &dlen, EVP_sha256(), NULL) != 1)
      st = optic_fail(OPTIC_ERR_INTERNAL, "calibrate: OpenSSL SHA-256 failed");
    double rate = (double)n / ((double)(optic_now_ns() - t0) * 1e-9);
    if (t > 0 && rate > best) best = rate;
  }
  free(buf);
  *out = best;
  return st;
}

/* write + fsync of a new file of `bytes` in 1 MiB writes, in $TMPDIR (else
 * /tmp), as a checkpoint save writes: the best of `trials`; the file is
 * removed. Each trial starts after sync(): dirty pages of other writers (a
 * build or a package install just before) would otherwise be flushed
 * inside its fsync. IO when the directory cannot be written. */
static optic_status disk_rate(size_t bytes, int trials, double *out) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !dir[0]) dir = "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/optic-calibrate-XXXXXX", dir);
  const size_t chunk = (size_t)1 << 20;
  unsigned char *buf = malloc(chunk);
  if (!buf) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the write buffer");
  for (size_t i = 0; i < chunk; i++) buf[i] = (unsigned char)(i * 7u);
  double best = 0;
  optic_status st = OPTIC_OK;
  for (int t = 0; t <= trials && st == OPTIC_OK; t++) {
    char name[4096];
    snprintf(name, sizeof name, "%s", path);
    int fd = mkstemp(name);
    if (fd < 0) {
      st = optic_fail(OPTIC_ERR_IO, "calibrate: cannot create a file in %s: %s", dir, strerror(errno));
      break;
    }
    sync();
    uint64_t t0 = optic_now_ns();
    bool ok = true;
    for (size_t done = 0; ok && done < bytes; done += chunk) ok = write(fd, buf, chunk) == (ssize_t)chunk;
    ok = ok && fsync(fd) == 0;
    double ns = (double)(optic_now_ns() - t0);
    if (!ok) st = optic_fail(OPTIC_ERR_IO, "calibrate: cannot write %s: %s", name, strerror(errno));
    close(fd);
    unlink(name);
    double rate = (double)bytes / (ns * 1e-9);
    if (ok && t > 0 && rate > best) best = rate; /* trial 0: the first large write of a run faults pages in */
  }
  free(buf);
  *out = best;
  return st;
}

/* ns per OpenMP barrier among `threads` threads: the median of `trials`
 * regions of 2000 barriers each, on the wall clock (waiting is the cost). */
static double barrier_ns(int threads, int trials) {
  enum { BARRIERS = 2000, MAX_TRIALS = 32 };
  double v[MAX_TRIALS];
  int n = trials < MAX_TRIALS ? trials : MAX_TRIALS;
  for (int t = 0; t < n; t++) {
    uint64_t t0 = optic_now_ns();
#pragma omp parallel num_threads(threads)
    {
      for (int b = 0; b < BARRIERS; b++) {
#pragma omp barrier
      }
    }
    v[t] = (double)(optic_now_ns() - t0) / BARRIERS;
  }
  return n > 0 ? calib_median(v, n) : 0;
}

/* ns per read of the calling thread's CPU-time clock (CLOCK_THREAD_CPUTIME_ID,
 * what a profiled optimizer step reads): the median of `trials` runs of 1000
 * reads, on the wall clock (the read is a system call; its time is the cost). */
static double clock_read_ns(int trials) {
  enum { READS = 1000, MAX_TRIALS = 32 };
  double v[MAX_TRIALS];
  int n = trials < MAX_TRIALS ? trials : MAX_TRIALS;
  struct timespec ts;
  for (int t = 0; t < n; t++) {
    uint64_t t0 = optic_now_ns();
    for (int r = 0; r < READS; r++) clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    v[t] = (double)(optic_now_ns() - t0) / READS;
  }
  return n > 0 ? calib_median(v, n) : 0;
}

optic_status calib_measure_beyond(bool quick, int threads, calib_beyond *out) {
  memset(out, 0, sizeof *out);
  const int trials = quick ? 3 : 7;
  optic_status st = gemm_rate(1, trials, quick ? 3 : 10, &out->gemm.one);
  if (st == OPTIC_OK) {
    out->gemm.all = out->gemm.one;
    if (threads > 1) st = gemm_rate(threads, trials, quick ? 3 : 10, &out->gemm.all);
  }
  if (st == OPTIC_OK) st = hash_rate(trials, &out->hash_bw);
  if (st == OPTIC_OK) st = disk_rate((size_t)(quick ? 16 : 64) << 20, quick ? 2 : 3, &out->disk_bw);
  if (st == OPTIC_OK) out->barrier_ns = threads > 1 ? barrier_ns(threads, trials) : 0;
  if (st == OPTIC_OK) out->clock_ns = clock_read_ns(trials);
  return st;
}
