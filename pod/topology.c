/* Pod topologies: single core, ring/line, 2-D/3-D torus or mesh, published
 * TPU slice presets with link figures for cost estimates, neighbour tables,
 * hop distances and a snake ring order that follows physical links.
 * Pure functions on a value type: no allocation, no global state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/pod.h>

#include "core/error.h"
#include "pod/pod_internal.h"

#define TOPOLOGY_MAX_CORES (1 << 20)

optic_status optic_topology_single(optic_topology *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_single: out is NULL");
  memset(out, 0, sizeof *out);
  out->cores = 1;
  snprintf(out->name, sizeof out->name, "single");
  return OPTIC_OK;
}

optic_status optic_topology_torus(int ndims, const int *dims, const bool *wrap, optic_topology *out) {
  if (out == NULL || dims == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_torus: NULL argument");
  if (ndims < 1 || ndims > OPTIC_TOPOLOGY_MAX_DIMS) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_torus: ndims is %d; must be 1..%d", ndims,
                      OPTIC_TOPOLOGY_MAX_DIMS);
  }
  optic_topology t;
  memset(&t, 0, sizeof t);
  t.ndims = ndims;
  long long cores = 1;
  for (int a = 0; a < ndims; a++) {
    if (dims[a] < 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_torus: dim %d is %d; dims must be >= 1", a, dims[a]);
    }
    cores *= dims[a];
    if (cores > TOPOLOGY_MAX_CORES) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_torus: more than %d cores", TOPOLOGY_MAX_CORES);
    }
    t.dims[a] = dims[a];
    t.wrap[a] = wrap == NULL ? true : wrap[a];
  }
  t.cores = (int)cores;
  int len = 0;
  for (int a = 0; a < ndims && len < (int)sizeof t.name; a++) {
    len +=
        snprintf(t.name + len, sizeof t.name - (size_t)len, "%s%d", a ? "x" : (ndims == 1 ? "ring" : "torus"), dims[a]);
  }
  *out = t;
  return OPTIC_OK;
}

optic_status optic_topology_ring(int n, bool wrap, optic_topology *out) {
  if (n < 1) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_ring: n is %d; must be >= 1", n);
  optic_status st = optic_topology_torus(1, &n, &wrap, out);
  if (st == OPTIC_OK) snprintf(out->name, sizeof out->name, "%s%d", wrap ? "ring" : "line", n);
  return st;
}

/* Link figures: JAX "How to Scale Your Model" (jax-ml/scaling-book, tpus.md):
 * ICI one-way per link v4 4.5e10, v5p 9e10, v5e 4.5e10, v6e 9e10 B/s, about
 * 1 us per hop; wraparound only on full axes (16 on v5e/v6e, multiples of 4
 * on v4/v5p). Slice shapes: cloud.google.com/tpu/docs/v4, /v5e, /v5p, /v6e. */
typedef struct preset {
  const char *name;
  int ndims, dims[3];
  bool wrap;
  double link, hop;
} preset;

static const preset PRESETS[] = {
    {"v4-4x4x4", 3, {4, 4, 4}, true, 4.5e10, 1e-6},  {"v4-4x4x8", 3, {4, 4, 8}, true, 4.5e10, 1e-6},
    {"v5p-4x4x4", 3, {4, 4, 4}, true, 9e10, 1e-6},   {"v5e-16x16", 2, {16, 16, 0}, true, 4.5e10, 1e-6},
    {"v6e-16x16", 2, {16, 16, 0}, true, 9e10, 1e-6}, {"v5e-2x2", 2, {2, 2, 0}, false, 4.5e10, 1e-6},
    {"v6e-4x4", 2, {4, 4, 0}, false, 9e10, 1e-6},
};

optic_status optic_topology_preset(const char *name, optic_topology *out) {
  if (name == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_preset: NULL argument");
  for (size_t i = 0; i < sizeof PRESETS / sizeof *PRESETS; i++) {
    const preset *p = &PRESETS[i];
    if (strcmp(p->name, name) != 0) continue;
    bool wrap[3] = {p->wrap, p->wrap, p->wrap};
    optic_status st = optic_topology_torus(p->ndims, p->dims, wrap, out);
    if (st != OPTIC_OK) return st;
    out->link_bytes_per_s = p->link;
    out->hop_latency_s = p->hop;
    snprintf(out->name, sizeof out->name, "%s", p->name);
    return OPTIC_OK;
  }
  return optic_fail(OPTIC_ERR_NOT_FOUND,
                    "topology_preset: no preset '%s' (known: v4-4x4x4, v4-4x4x8, v5p-4x4x4, v5e-16x16, "
                    "v6e-16x16, v5e-2x2, v6e-4x4)",
                    name);
}

/* ------------------------------------------------------------ validation */

/* The one check every call taking a topology makes first, so a struct
 * filled in by hand is refused field by field instead of dividing by a zero
 * dim or indexing dims[6]. Reads only what the shape uses: dims and wrap
 * past ndims are ignored. wrap is read as its byte, not as a bool: a byte
 * other than 0 or 1 in a bool is not a value C lets us load. */
optic_status topology_check(const optic_topology *t, const char *fn) {
  if (t == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology is NULL", fn);
  if (memchr(t->name, '\0', sizeof t->name) == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology name is not NUL-terminated within its %zu bytes", fn,
                      sizeof t->name);
  }
  const char *nm = t->name;
  if (t->ndims < 0 || t->ndims > OPTIC_TOPOLOGY_MAX_DIMS) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology '%s': ndims is %d; must be 0..%d (0: one core)", fn, nm,
                      t->ndims, OPTIC_TOPOLOGY_MAX_DIMS);
  }
  long long cores = 1;
  for (int a = 0; a < t->ndims; a++) {
    if (t->dims[a] < 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology '%s': dims[%d] is %d; every used dim must be >= 1",
                        fn, nm, a, t->dims[a]);
    }
    cores *= t->dims[a]; /* <= 2^20 * (2^31 - 1): no overflow before the check */
    if (cores > TOPOLOGY_MAX_CORES) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology '%s': dims[0..%d] give more than %d cores", fn, nm, a,
                        TOPOLOGY_MAX_CORES);
    }
    unsigned char w;
    _Static_assert(sizeof t->wrap[a] == 1, "bool is one byte");
    memcpy(&w, &t->wrap[a], 1);
    if (w > 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: topology '%s': wrap[%d] holds %u; must be false (0) or true (1)", fn, nm, a, (unsigned)w);
    }
  }
  if (t->cores != cores) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: topology '%s': cores is %d but its dims give %lld", fn, nm,
                      t->cores, cores);
  }
  if (!isfinite(t->link_bytes_per_s) || t->link_bytes_per_s < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: topology '%s': link_bytes_per_s is %g; must be finite and >= 0 (0: unknown)", fn, nm,
                      t->link_bytes_per_s);
  }
  if (!isfinite(t->hop_latency_s) || t->hop_latency_s < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: topology '%s': hop_latency_s is %g; must be finite and >= 0 (0: unknown)", fn, nm,
                      t->hop_latency_s);
  }
  return OPTIC_OK;
}

optic_status optic_topology_validate(const optic_topology *t) { return topology_check(t, "topology_validate"); }

static optic_status check_core(const optic_topology *t, int core, const char *fn) {
  optic_status st = topology_check(t, fn);
  if (st != OPTIC_OK) return st;
  if (core < 0 || core >= t->cores) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: core %d outside 0..%d", fn, core, t->cores - 1);
  }
  return OPTIC_OK;
}

/* ------------------------------------------------------------ queries */

void topology_coords_of(const optic_topology *t, int core, int *coords) {
  for (int a = t->ndims - 1; a >= 0; a--) {
    coords[a] = core % t->dims[a];
    core /= t->dims[a];
  }
}

int topology_core_of(const optic_topology *t, const int *coords) {
  int id = 0;
  for (int a = 0; a < t->ndims; a++) id = id * t->dims[a] + coords[a];
  return id;
}

optic_status optic_topology_coords(const optic_topology *t, int core, int *coords) {
  optic_status st = check_core(t, core, "topology_coords");
  if (st != OPTIC_OK) return st;
  if (coords == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_coords: coords is NULL");
  topology_coords_of(t, core, coords);
  return OPTIC_OK;
}

optic_status optic_topology_core_at(const optic_topology *t, const int *coords, int *core) {
  optic_status st = topology_check(t, "topology_core_at");
  if (st != OPTIC_OK) return st;
  if (coords == NULL || core == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_core_at: NULL argument");
  }
  for (int a = 0; a < t->ndims; a++) {
    if (coords[a] < 0 || coords[a] >= t->dims[a]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_core_at: coordinate %d is %d; axis has %d", a, coords[a],
                        t->dims[a]);
    }
  }
  *core = topology_core_of(t, coords);
  return OPTIC_OK;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

optic_status optic_topology_neighbors(const optic_topology *t, int core, int *out, int *count) {
  optic_status st = check_core(t, core, "topology_neighbors");
  if (st != OPTIC_OK) return st;
  if (out == NULL || count == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_neighbors: NULL out");
  int c[OPTIC_TOPOLOGY_MAX_DIMS], n = 0;
  topology_coords_of(t, core, c);
  for (int a = 0; a < t->ndims; a++) {
    for (int dir = -1; dir <= 1; dir += 2) {
      int v = c[a] + dir;
      if (v < 0 || v >= t->dims[a]) {
        if (!t->wrap[a]) continue;
        v = (v + t->dims[a]) % t->dims[a];
      }
      int save = c[a];
      c[a] = v;
      int id = topology_core_of(t, c);
      c[a] = save;
      bool dup = id == core;
      for (int i = 0; i < n; i++) dup = dup || out[i] == id;
      if (!dup) out[n++] = id;
    }
  }
  qsort(out, (size_t)n, sizeof *out, cmp_int);
  *count = n;
  return OPTIC_OK;
}

optic_status optic_topology_hops(const optic_topology *t, int a, int b, int *hops) {
  optic_status st = check_core(t, a, "topology_hops");
  if (st == OPTIC_OK) st = check_core(t, b, "topology_hops");
  if (st != OPTIC_OK) return st;
  if (hops == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_hops: hops is NULL");
  int ca[OPTIC_TOPOLOGY_MAX_DIMS], cb[OPTIC_TOPOLOGY_MAX_DIMS], h = 0;
  topology_coords_of(t, a, ca);
  topology_coords_of(t, b, cb);
  for (int x = 0; x < t->ndims; x++) {
    int d = abs(ca[x] - cb[x]);
    if (t->wrap[x] && t->dims[x] - d < d) d = t->dims[x] - d;
    h += d;
  }
  *hops = h;
  return OPTIC_OK;
}

/* Boustrophedon order: the lower axes' sub-sequence runs backwards whenever the
 * coordinates above it make it odd, so consecutive entries differ by one step
 * on one axis. */
optic_status optic_topology_ring_order(const optic_topology *t, int *order) {
  optic_status st = topology_check(t, "topology_ring_order");
  if (st != OPTIC_OK) return st;
  if (order == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_ring_order: order is NULL");
  for (int i = 0; i < t->cores; i++) {
    int r[OPTIC_TOPOLOGY_MAX_DIMS], c[OPTIC_TOPOLOGY_MAX_DIMS];
    topology_coords_of(t, i, r);
    bool flip = false;
    for (int a = 0; a < t->ndims; a++) {
      c[a] = flip ? t->dims[a] - 1 - r[a] : r[a];
      flip = flip != ((c[a] & 1) != 0);
    }
    order[i] = topology_core_of(t, c);
  }
  return OPTIC_OK;
}

optic_status optic_topology_allreduce_seconds(const optic_topology *t, double bytes, double *seconds) {
  optic_status st = topology_check(t, "topology_allreduce_seconds");
  if (st != OPTIC_OK) return st;
  if (seconds == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_allreduce_seconds: seconds is NULL");
  if (!isfinite(bytes) || bytes < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topology_allreduce_seconds: bytes is %g; must be finite and >= 0",
                      bytes);
  }
  if (t->cores > 1 && t->link_bytes_per_s == 0) { /* validated: finite, >= 0 */
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "topology_allreduce_seconds: topology '%s' has no link figures", t->name);
  }
  double s = 0, v = bytes;
  for (int a = 0; a < t->ndims; a++) {
    int k = t->dims[a];
    if (k < 2) continue;
    double bw = t->link_bytes_per_s * (t->wrap[a] ? 2.0 : 1.0);
    /* reduce-scatter on v, then (mirror) all-gather: same bytes each way */
    s += 2.0 * ((double)(k - 1) / k * v / bw + (k - 1) * t->hop_latency_s);
    v /= k;
  }
  *seconds = s;
  return OPTIC_OK;
}
