/* Estimates from the host machine model (contract in estimate.h). */
#include "bench/estimate.h"

#include <stdbool.h>

void bench_report_estimate(optic_bench_state *st, double est_ns, const optic_cost *c) {
  if (!(est_ns > 0)) return;
  optic_bench_counter(st, "est_time_ns", est_ns, OPTIC_BENCH_COUNTER_PLAIN);
  if (c == NULL) return;
  if (c->flops > 0) optic_bench_counter(st, "est_flops", c->flops, OPTIC_BENCH_COUNTER_PLAIN);
  if (c->bytes_accessed > 0) optic_bench_counter(st, "est_bytes", c->bytes_accessed, OPTIC_BENCH_COUNTER_PLAIN);
  if (c->transcendentals > 0)
    optic_bench_counter(st, "est_transcendentals", c->transcendentals, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_report_model_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                 double model_ns, bool flops_bound) {
  optic_machine m;
  if (!bench_machine(threads, &m)) return;
  m.op_overhead_ns = 0; /* a direct call: no executor dispatch */
  optic_cost floor = *per_call;
  if (!flops_bound) floor.flops = 0;
  double roof = optic_machine_estimate_ns(&m, &floor), one = model_ns > roof ? model_ns : roof;
  optic_cost total = {per_call->flops * calls, per_call->transcendentals * calls, per_call->bytes_accessed * calls};
  bench_report_estimate(st, one * calls, &total);
}

static void report_calls(optic_bench_state *st, int threads, double calls, const optic_cost *per_call, bool gemm,
                         double allocated_bytes) {
  optic_machine m;
  if (!bench_machine(threads, &m)) return;
  m.op_overhead_ns = 0; /* a direct call: no executor dispatch */
  optic_cost timed = *per_call;
  if (per_call->bytes_accessed > m.cache_bytes) timed.bytes_accessed += allocated_bytes;
  double one = gemm ? optic_machine_estimate_gemm_ns(&m, &timed) : optic_machine_estimate_ns(&m, &timed);
  optic_cost total = {per_call->flops * calls, per_call->transcendentals * calls, per_call->bytes_accessed * calls};
  bench_report_estimate(st, one * calls, &total);
}

void bench_report_kernel_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                  bool gemm) {
  report_calls(st, threads, calls, per_call, gemm, 0);
}

void bench_report_allocating_estimate(optic_bench_state *st, int threads, double calls, const optic_cost *per_call,
                                      double allocated_bytes) {
  report_calls(st, threads, calls, per_call, false, allocated_bytes);
}
