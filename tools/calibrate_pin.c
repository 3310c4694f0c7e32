/* `optic calibrate`'s choice of core for its one-thread figures
 * (calibrate_measure.h): on a VM one vCPU can run dispatch-bound code much
 * slower than the other for minutes at a time (its host core busy with
 * other work), and a calibration whose one-thread programs land there
 * measures every per-op and small-op figure high. So the runtime's tiny-op
 * chain is timed on each CPU the process may use and, when one is clearly
 * slower (CALIB_PIN_SLOWER), the calling thread is pinned to the fastest
 * while the one-thread classes are measured, then given its whole mask
 * back (CPUs alike stay unpinned: the scheduler then moves the thread off
 * a core other jobs load). Threads are never created while it is pinned
 * (the one-thread figures start none), so no worker inherits the pin.
 * Never prints. */
#include <sched.h>
#include <string.h>

#include "tools/calibrate_measure.h"

/* A CPU whose probe is this much slower than the fastest's makes calibrate
 * pin (below it the CPUs count as alike). */
#define CALIB_PIN_SLOWER 1.15

/* Pins the calling thread to cpu (false when the system refuses). */
static bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

bool calib_pin_fastest(int trials, double target_ns, calib_pin *pin) {
  memset(pin, 0, sizeof *pin);
  pin->cpu = -1;
  if (sched_getaffinity(0, sizeof pin->saved, &pin->saved) != 0 || CPU_COUNT(&pin->saved) < 2) return false;
  double best = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && pin->n_probed < CALIB_PIN_MAX_CPUS; cpu++) {
    if (!CPU_ISSET(cpu, &pin->saved) || !pin_to(cpu)) continue;
    calib_pair per_op = {0, 0};
    double split = 0;
    if (calib_runtime_overhead(1, trials, target_ns, &per_op, &split) != OPTIC_OK) continue;
    pin->probe_ns[pin->n_probed] = per_op.one;
    pin->probe_cpu[pin->n_probed++] = cpu;
    if (per_op.one > 0 && (pin->cpu < 0 || per_op.one < best)) best = per_op.one, pin->cpu = cpu;
  }
  /* pinned only when one CPU is clearly slower: otherwise the scheduler
   * stays free to move the thread off a core other jobs load */
  double slowest = 0;
  for (int i = 0; i < pin->n_probed; i++) slowest = pin->probe_ns[i] > slowest ? pin->probe_ns[i] : slowest;
  if (pin->cpu >= 0 && slowest > CALIB_PIN_SLOWER * best && pin_to(pin->cpu)) return pin->pinned = true;
  calib_unpin(pin);
  pin->cpu = -1;
  return false;
}

void calib_unpin(const calib_pin *pin) {
  if (CPU_COUNT(&pin->saved) > 0) sched_setaffinity(0, sizeof pin->saved, &pin->saved);
}
