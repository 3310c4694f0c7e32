/* The machine-model formulas of estimate.h that need no benchmark state,
 * shared by optic_bench and optic_bench_pod_mpi. */
#include "bench/estimate.h"

static struct {
  bool loaded, ok;
  optic_machine host;
} model;

bool bench_machine(int threads, optic_machine *out) {
  if (!model.loaded) {
    model.loaded = true;
    model.ok = optic_machine_host(&model.host) == OPTIC_OK;
  }
  if (!model.ok || optic_machine_for_threads(&model.host, threads, out) != OPTIC_OK) return false;
  return true;
}

double bench_sgemm_calls_ns(const optic_machine *m, double calls, double M, double N, double K) {
  const double eff = optic_machine_dot_grid_efficiency(m, M, N, K);
  if (!(eff > 0)) return optic_machine_estimate_dot_ns(m, calls, M, N, K, 0, 1);
  const double core_peak = m->peak_flops / (m->cores > 1 ? m->cores : 1);
  return 2.0 * calls * M * N * K / (eff * core_peak) * 1e9;
}

double bench_ring_all_reduce_ns(int cores, double bytes) {
  optic_machine m;
  if (cores < 1 || !bench_machine(cores, &m)) return 0;
  if (cores == 1) return 0;
  const double n = (double)cores, traffic = 5.0 * (n - 1) * bytes;
  const double bw = n * bytes <= m.cache_bytes ? m.cache_bandwidth : m.dram_bandwidth;
  return 2.0 * (n - 1) * m.sync_ns + traffic / bw * 1e9;
}

double bench_ckpt_save_ns(int threads, double bytes) {
  optic_machine m;
  if (!bench_machine(threads, &m)) return 0;
  const double write = bytes / m.disk_write_bandwidth, hash = bytes / (m.hash_bandwidth * m.cores);
  return (write > hash ? write : hash) * 1e9;
}

double bench_ckpt_restore_ns(int threads, double bytes) {
  optic_machine m;
  if (!bench_machine(threads, &m)) return 0;
  return (2.0 * bytes / m.dram_bandwidth + bytes / (m.hash_bandwidth * m.cores)) * 1e9;
}

double bench_mpi_all_reduce_ns(int ranks, double bytes, bool messages) {
  optic_machine m;
  if (ranks < 2 || !bench_machine(ranks, &m)) return 0;
  const double n = (double)ranks;
  if (!messages && ranks == 2) {
    /* two ranks in shared memory: one pass in which each rank reads its half
     * of the data from both windows and writes it to both (4 x bytes in all),
     * and two handshakes */
    const double bw = 2.0 * bytes <= m.cache_bytes ? m.cache_bandwidth : m.dram_bandwidth;
    return 2.0 * m.sync_ns + 4.0 * bytes / bw * 1e9;
  }
  if (!messages) return bench_ring_all_reduce_ns(ranks, bytes);
  const double steps = 2.0 * (n - 1), segment = bytes / n;
  if (m.mpi_link_bandwidth > 0) {
    /* the calibrated link (format 10): each step exchanges a segment each
     * way; the n - 1 reduce-scatter steps also fold it (read two, write
     * one) on every rank, which MPI's copies do not overlap (they run on
     * the same cores) */
    const double bw = n * bytes <= m.cache_bytes ? m.cache_bandwidth : m.dram_bandwidth;
    const double exchange = m.mpi_link_latency_ns + segment / m.mpi_link_bandwidth * 1e9;
    return steps * exchange + 3.0 * (n - 1) * bytes / bw * 1e9;
  }
  /* not calibrated: every step also copies its segment into and out of
   * MPI's shared buffers (2 x bytes / n at one core's DRAM rate) and pays
   * an MPI message's latency, assumed MPI_STEP_SYNCS barriers' worth */
  const double copy = 2.0 * segment / m.core_dram_bandwidth * 1e9;
  return bench_ring_all_reduce_ns(ranks, bytes) + steps * ((MPI_STEP_SYNCS - 1.0) * m.sync_ns + copy);
}
