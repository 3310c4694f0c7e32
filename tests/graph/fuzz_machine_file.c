/* libFuzzer target for the machine file reader (optic_machine_load, the user
 * of core/json_parse): any file loads or fails with CORRUPT and a message
 * naming the file; what loads is a valid machine (optic_machine_validate),
 * with terminated name and source and cores in [1, 1000000], and loading it
 * again gives the same bytes. The input is served from a memfd through its
 * /proc/self/fd path, so no disk is touched. Built by the fuzz preset and,
 * elsewhere, as the replay test fuzz_machine_file_replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optic/optic.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fd < 0) {
    fd = memfd_create("optic_machine_fuzz", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  optic_machine m, again;
  memset(&m, 0xA5, sizeof m);
  optic_status st = optic_machine_load(path, &m);
  if (st != OPTIC_OK) {
    if (st != OPTIC_ERR_CORRUPT || strstr(optic_last_error(), path) == NULL) abort();
    return 0;
  }
  if (optic_machine_validate(&m) != OPTIC_OK) abort();
  if (memchr(m.name, 0, sizeof m.name) == NULL || memchr(m.source, 0, sizeof m.source) == NULL) abort();
  if (m.cores < 1 || m.cores > 1000000) abort();
  memset(&again, 0x5A, sizeof again);
  if (optic_machine_load(path, &again) != OPTIC_OK) abort();
  if (strcmp(m.name, again.name) != 0 || strcmp(m.source, again.source) != 0 || m.cores != again.cores ||
      memcmp(&m.peak_flops, &again.peak_flops, sizeof m.peak_flops) != 0 ||
      memcmp(&m.dram_bandwidth, &again.dram_bandwidth, sizeof m.dram_bandwidth) != 0 ||
      memcmp(&m.core_dram_bandwidth, &again.core_dram_bandwidth, sizeof m.core_dram_bandwidth) != 0) {
    abort();
  }
  return 0;
}
