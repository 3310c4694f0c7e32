/* The hashing peers, OpenSSL SHA-256 through EVP inside one OpenMP parallel
 * region per iteration. peer/sha256: each of 1 or 2 threads hashes its own
 * 1 MiB buffer (L2-resident: the bare compute rate). peer/sha256_memory: 2
 * threads hash the two halves of one B-byte buffer (B = 256 MiB or 1 GiB,
 * from optic_alloc as a restore's targets are), each half in one update: the
 * least work that verifies B bytes held in memory, the same size class as the
 * checkpoint restore it is the peer of. Reports GB/s of bytes hashed. */
#include <omp.h>
#include <openssl/evp.h>

#include "bench/bench_util.h"

enum { MAX_THREADS = 2 };

static void run_sha256(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  if (threads < 1 || threads > MAX_THREADS) {
    optic_bench_skip_with_error(st, "sha256: threads must be 1 or 2");
    return;
  }
  EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
  EVP_MD_CTX *ctx[MAX_THREADS] = {NULL, NULL};
  unsigned char *buf[MAX_THREADS] = {NULL, NULL};
  unsigned char digest[MAX_THREADS][EVP_MAX_MD_SIZE];
  bool ok = md != NULL;
  for (int t = 0; t < threads && ok; t++) {
    ctx[t] = EVP_MD_CTX_new();
    buf[t] = (unsigned char *)bench_f32_array(BENCH_INPUT_SLOT0 + t, bytes / sizeof(float));
    ok = ctx[t] != NULL && buf[t] != NULL;
  }
  int got_threads = 0, failures = 0;
  if (ok) {
    while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(threads) reduction(+ : failures)
      {
        int t = omp_get_thread_num();
        unsigned int len = 0;
        if (EVP_DigestInit_ex(ctx[t], md, NULL) != 1 || EVP_DigestUpdate(ctx[t], buf[t], bytes) != 1 ||
            EVP_DigestFinal_ex(ctx[t], digest[t], &len) != 1) {
          failures++;
        }
        if (t == 0) got_threads = omp_get_num_threads();
      }
    }
  }
  for (int t = 0; t < MAX_THREADS; t++) EVP_MD_CTX_free(ctx[t]);
  EVP_MD_free(md);
  if (!ok || failures > 0) {
    optic_bench_skip_with_error(st, "sha256: OpenSSL EVP SHA256 setup or digest failed");
    return;
  }
  optic_bench_do_not_optimize(digest);
  bench_report_rates(st, (double)bytes * (double)got_threads, 0.0);
  optic_bench_counter(st, "omp_threads", (double)got_threads, OPTIC_BENCH_COUNTER_PLAIN);
}

/* The peer/sha256_memory buffer, kept across runs of one size. */
static struct {
  size_t bytes;
  unsigned char *p;
} memory;

static unsigned char *memory_buffer(size_t bytes) {
  if (memory.bytes == bytes) return memory.p;
  optic_free(NULL, memory.p, memory.bytes, 0);
  memory.p = NULL;
  memory.bytes = 0;
  if (optic_alloc(NULL, bytes, 0, (void **)&memory.p) != OPTIC_OK) return NULL;
  bench_fill_f32((float *)(void *)memory.p, bytes / sizeof(float), 1.0f, 2.0f);
  memory.bytes = bytes;
  return memory.p;
}

static void run_sha256_memory(optic_bench_state *st, void *user) {
  (void)user;
  size_t bytes = (size_t)optic_bench_range(st, 0), half = bytes / 2;
  EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
  EVP_MD_CTX *ctx[MAX_THREADS] = {EVP_MD_CTX_new(), EVP_MD_CTX_new()};
  unsigned char *buf = memory_buffer(bytes);
  unsigned char digest[MAX_THREADS][EVP_MAX_MD_SIZE];
  int got_threads = 0, failures = md == NULL || ctx[0] == NULL || ctx[1] == NULL || buf == NULL;
  while (failures == 0 && optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(MAX_THREADS) reduction(+ : failures)
    {
      int t = omp_get_thread_num();
      unsigned int len = 0;
      size_t from = (size_t)t * half, n = t == MAX_THREADS - 1 ? bytes - from : half;
      if (EVP_DigestInit_ex(ctx[t], md, NULL) != 1 || EVP_DigestUpdate(ctx[t], buf + from, n) != 1 ||
          EVP_DigestFinal_ex(ctx[t], digest[t], &len) != 1) {
        failures++;
      }
      if (t == 0) got_threads = omp_get_num_threads();
    }
    if (got_threads != MAX_THREADS) failures++; /* one thread would have hashed only half */
  }
  for (int t = 0; t < MAX_THREADS; t++) EVP_MD_CTX_free(ctx[t]);
  EVP_MD_free(md);
  if (failures > 0) {
    optic_bench_skip_with_error(st, "sha256_memory: setup, 2 OpenMP threads or an EVP SHA-256 digest failed");
    while (optic_bench_keep_running(st)) {}
    return;
  }
  optic_bench_do_not_optimize(digest);
  bench_report_rates(st, (double)bytes, 0.0);
}

void bench_register_sha256(void) {
  optic_bench *b = optic_bench_register("peer/sha256", run_sha256, NULL);
  OPTIC_BENCH_ARGS(b, 1 << 20, 1);
  OPTIC_BENCH_ARGS(b, 1 << 20, 2);
  OPTIC_BENCH_ARG_NAMES(b, "bytes", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
  b = optic_bench_register("peer/sha256_memory", run_sha256_memory, NULL);
  OPTIC_BENCH_ARGS(b, (int64_t)256 << 20, 2);
  OPTIC_BENCH_ARGS(b, (int64_t)1 << 30, 2);
  OPTIC_BENCH_ARG_NAMES(b, "bytes", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
