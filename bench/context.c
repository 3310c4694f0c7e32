/* Machine facts every benchmark report carries in its "context" object, so a
 * figure is read against the hardware and software that produced it: CPU,
 * the ISA optic's kernels dispatch to, the OpenBLAS core, OpenMP threads and
 * library versions, cache sizes. Keys start with "optic_"; the ratio script reads
 * optic_isa. Never fails: an unknown fact is written as "unknown". */
#include <omp.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <unistd.h>

#include <optic/core.h>
#include <optic/kernels.h>

#include "bench/bench_util.h"
#include "kernels/conv_bf16.h"
#include "kernels/dot_bf16.h"
#include "kernels/stream.h"

#if OPTIC_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

static void add_int(const char *key, long value) {
  char buf[32];
  snprintf(buf, sizeof buf, "%ld", value);
  optic_bench_add_context(key, buf);
}

/* sysconf gives 0 or -1 when it does not know. */
static void add_size(const char *key, long value) {
  if (value > 0) {
    add_int(key, value);
  } else {
    optic_bench_add_context(key, "unknown");
  }
}

void bench_add_machine_context(void) {
  const optic_cpu_info *cpu = optic_cpu_info_get();
  optic_bench_add_context("optic_version", optic_version());
  optic_bench_add_context("optic_build", optic_build_type());
  optic_bench_add_context("optic_compiler", optic_build_compiler());
  optic_bench_add_context("optic_cpu_arch", cpu->arch);
  optic_bench_add_context("optic_cpu_model", cpu->model[0] ? cpu->model : "unknown");
  add_int("optic_cpu_logical", cpu->logical_cpus);
  optic_bench_add_context("optic_isa", optic_isa_name(optic_isa_selected()));
  optic_bench_add_context("optic_isa_best", optic_isa_name(optic_isa_best()));
  optic_bench_add_context("optic_isa_note", optic_isa_selection_note());
  optic_bench_add_context("optic_dot_bf16", optic_dot_bf16_kernel_name(optic_dot_bf16_kernel()));
  optic_bench_add_context("optic_conv_bf16", optic_dot_bf16_kernel_name(optic_conv_bf16_kernel()));
  add_int("optic_omp_max_threads", omp_get_max_threads());
  /* Cache sizes as glibc reports them (CPUID): Google Benchmark's own "caches"
   * come from sysfs, which VMs often lack. On a VM the L3 figure may be the
   * whole socket's, not the slice this guest's cores share. */
  add_size("optic_l1d_bytes", sysconf(_SC_LEVEL1_DCACHE_SIZE));
  add_size("optic_l2_bytes", sysconf(_SC_LEVEL2_CACHE_SIZE));
  add_size("optic_l3_bytes", sysconf(_SC_LEVEL3_CACHE_SIZE));
  /* What optic itself uses (sysfs, CPU 0): the last-level cache behind the
   * streaming-store threshold (kernels/stream.h), and the threshold. */
  add_size("optic_llc_bytes", (long)cpu->llc_bytes);
  const char *stream_source = NULL;
  size_t stream_bytes = optic_stream_threshold(&stream_source);
  if (stream_bytes == SIZE_MAX) {
    optic_bench_add_context("optic_stream_min_bytes", "never");
  } else {
    add_size("optic_stream_min_bytes", (long)stream_bytes);
  }
  optic_bench_add_context("optic_stream_source", stream_source);

  optic_blas_info blas;
  if (optic_blas_get_info(&blas) == OPTIC_OK) {
    optic_bench_add_context("optic_openblas_config", blas.config ? blas.config : "unknown");
    optic_bench_add_context("optic_openblas_core", blas.corename ? blas.corename : "unknown");
    optic_bench_add_context("optic_openblas_core_isa", optic_isa_name(blas.core_isa));
    optic_bench_add_context("optic_openblas_core_weaker_than_cpu", blas.core_weaker_than_cpu ? "true" : "false");
    optic_bench_add_context("optic_openblas_parallel", blas.parallel);
    add_int("optic_openblas_threads", blas.threads);
  } else {
    optic_bench_add_context("optic_openblas_core", "unknown");
  }

  optic_bench_add_context("optic_openssl", OpenSSL_version(OPENSSL_VERSION));
#if OPTIC_BENCH_HAVE_DNNL
  const dnnl_version_t *v = dnnl_version();
  char dnnl[64];
  snprintf(dnnl, sizeof dnnl, "%d.%d.%d", v->major, v->minor, v->patch);
  optic_bench_add_context("optic_onednn", dnnl);
#else
  optic_bench_add_context("optic_onednn", "not built (libdnnl-dev not found at configure)");
#endif
  optic_bench_add_context("optic_google_benchmark", OPTIC_BENCH_GBENCH_VERSION);
}
