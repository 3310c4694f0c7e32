/* Critical-path CPU time of the benchmarks' OpenMP regions: each thread reads
 * its own CPU clock around its work, and a region costs the largest of those
 * (plus any serial work after it). Unlike wall-clock time it leaves out the
 * time threads spend descheduled, which dominates 2-thread figures on a
 * shared, loaded machine; it still includes slowdowns from other jobs'
 * cache and memory traffic. Reported beside the wall-clock counters as
 * cpu_GB/s, cpu_GFLOP/s and cpu_path_ns; the bars are defined on wall-clock
 * time (bench/README.md). Benchmark-only code. */
#ifndef OPTIC_BENCH_CPU_PATH_H
#define OPTIC_BENCH_CPU_PATH_H

#include <stdint.h>
#include <time.h>

#include "bench/shim/gbench.h"

enum { BENCH_CPU_PATH_MAX_THREADS = 16 };

typedef struct bench_cpu_path {
  struct {
    uint64_t ns;
    char pad[64 - sizeof(uint64_t)]; /* one cache line per thread */
  } slot[BENCH_CPU_PATH_MAX_THREADS];
  double total_ns; /* sum over regions of the largest slot, plus serial time */
} bench_cpu_path;

/* The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID: a system call,
 * 0.5-2 us on the development VM, so call it once per region per thread). */
static inline uint64_t bench_thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Thread t's CPU time for the current region (threads beyond the table are
 * not counted). */
static inline void bench_cpu_path_record(bench_cpu_path *c, int t, uint64_t ns) {
  if (t >= 0 && t < BENCH_CPU_PATH_MAX_THREADS) c->slot[t].ns = ns;
}

/* Adds the largest of the nt recorded slots to the total; call after each region. */
void bench_cpu_path_end_region(bench_cpu_path *c, int nt);

/* After the timed loop: cpu_path_ns (critical-path CPU ns per iteration) and,
 * for nonzero amounts per iteration, cpu_GB/s and cpu_GFLOP/s. */
void bench_cpu_path_report(optic_bench_state *st, const bench_cpu_path *c, double bytes_per_iteration,
                           double flops_per_iteration);

#endif
