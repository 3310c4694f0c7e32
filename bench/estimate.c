/* Estimates from the host machine model (contract in estimate.h). */
#include "bench/estimate.h"

#include <stdbool.h>

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

void bench_report_estimate(optic_bench_state *st, double est_ns, const optic_cost *c) {
  if (!(est_ns > 0)) return;
  optic_bench_counter(st, "est_time_ns", est_ns, OPTIC_BENCH_COUNTER_PLAIN);
  if (c == NULL) return;
  if (c->flops > 0) optic_bench_counter(st, "est_flops", c->flops, OPTIC_BENCH_COUNTER_PLAIN);
  if (c->bytes_accessed > 0) optic_bench_counter(st, "est_bytes", c->bytes_accessed, OPTIC_BENCH_COUNTER_PLAIN);
  if (c->transcendentals > 0)
    optic_bench_counter(st, "est_transcendentals", c->transcendentals, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_report_kernel_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                  bool gemm) {
  optic_machine m;
  if (!bench_machine(threads, &m)) return;
  m.op_overhead_ns = 0; /* a direct call: no executor dispatch */
  double one = gemm ? optic_machine_estimate_gemm_ns(&m, per_call) : optic_machine_estimate_ns(&m, per_call);
  optic_cost total = {per_call->flops * calls, per_call->transcendentals * calls, per_call->bytes_accessed * calls};
  bench_report_estimate(st, one * calls, &total);
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
