/* The hashing peer: OpenSSL SHA-256 through EVP over 1 MiB buffers (what a
 * checkpoint writer hashes per chunk), at 1 and 2 OpenMP threads, each thread
 * hashing its own buffer once per iteration inside one parallel region.
 * Reports GB/s of bytes hashed. */
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

void bench_register_sha256(void) {
  optic_bench *b = optic_bench_register("peer/sha256", run_sha256, NULL);
  OPTIC_BENCH_ARGS(b, 1 << 20, 1);
  OPTIC_BENCH_ARGS(b, 1 << 20, 2);
  OPTIC_BENCH_ARG_NAMES(b, "bytes", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
}
