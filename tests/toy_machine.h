/* The tests' toy machine model, chosen so estimates are easy to work out by
 * hand: per core 1 flop/ns and 1 transcendental/ns, 1 byte/ns from DRAM and
 * 4 bytes/ns in a 1 MiB cache, 10 ns per op; on more than one core, 50 ns a
 * barrier and 1 byte/ns of DRAM per core. Header-only, test code. */
#ifndef OPTIC_TESTS_TOY_MACHINE_H
#define OPTIC_TESTS_TOY_MACHINE_H

#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

static inline optic_machine ot_toy_machine(int32_t cores) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "toy");
  m.peak_flops = 1e9 * cores;
  m.peak_transcendentals = 1e9 * cores;
  m.dram_bandwidth = 1e9 * cores;
  m.cache_bandwidth = 4e9 * cores;
  m.cache_bytes = 1 << 20;
  m.op_overhead_ns = 10;
  if (cores > 1) {
    m.core_dram_bandwidth = 1e9;
    m.sync_ns = 50;
  }
  m.cores = cores;
  snprintf(m.source, sizeof m.source, "test machine");
  return m;
}

#endif
