/* Devices: the host (all the threads OpenMP would use) today; the pod issue
 * appends emulated pod cores. Enumeration only: no thread is started here. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "exec/pool.h"

static optic_device host_device(void) {
  optic_device d;
  memset(&d, 0, sizeof d);
  d.id = 0;
  snprintf(d.name, sizeof d.name, "host");
  d.kind = OPTIC_DEVICE_HOST;
  int t = omp_get_max_threads();
  d.cores = t > 0 ? t : 1;
  return d;
}

optic_status optic_device_list(optic_device *out, size_t cap, size_t *count) {
  if (count == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "device_list: count is NULL");
  if (out == NULL && cap > 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "device_list: out is NULL but cap is %zu", cap);
  *count = 1;
  if (cap >= 1) out[0] = host_device();
  return OPTIC_OK;
}

optic_status optic_device_get(int32_t id, optic_device *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "device_get: out is NULL");
  size_t count = 0;
  optic_status st = optic_device_list(NULL, 0, &count);
  if (st != OPTIC_OK) return st;
  if (id < 0 || (size_t)id >= count) {
    return optic_fail(OPTIC_ERR_NOT_FOUND, "device_get: no device %d (there %s %zu, ids 0..%zu)", (int)id,
                      count == 1 ? "is" : "are", count, count - 1);
  }
  *out = host_device();
  return OPTIC_OK;
}
