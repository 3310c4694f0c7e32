/* The streaming-store threshold (see kernels/stream.h). */
#include "kernels/stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/core.h>

_Atomic size_t optic_stream_min_bytes_ = OPTIC_STREAM_UNSET_;
static const char *threshold_source = "default";
static pthread_once_t stream_once = PTHREAD_ONCE_INIT;

enum { DEFAULT_LLC_BYTES = 32 << 20 };

static void init_once(void) {
  int64_t llc = optic_cpu_info_get()->llc_bytes;
  size_t bytes = llc > 0 ? (size_t)llc : (size_t)DEFAULT_LLC_BYTES;
  threshold_source = llc > 0 ? "llc" : "default";
  const char *env = getenv("OPTIC_STREAM_STORES");
  if (env != NULL && env[0] != '\0') {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (strcmp(env, "off") == 0) {
      bytes = SIZE_MAX, threshold_source = "env";
    } else if (env[0] >= '0' && env[0] <= '9' && *end == '\0' && errno == 0 && v < OPTIC_STREAM_UNSET_) {
      bytes = (size_t)v, threshold_source = "env";
    } else {
      threshold_source = "env-invalid";
    }
  }
  atomic_store(&optic_stream_min_bytes_, bytes);
}

void optic_stream_init(void) { pthread_once(&stream_once, init_once); }

size_t optic_stream_threshold(const char **source) {
  optic_stream_init();
  if (source != NULL) *source = threshold_source;
  return atomic_load(&optic_stream_min_bytes_);
}

size_t optic_stream_threshold_set(size_t bytes) {
  optic_stream_init();
  if (bytes == OPTIC_STREAM_UNSET_) bytes = SIZE_MAX;
  return atomic_exchange(&optic_stream_min_bytes_, bytes);
}
