/* Collectives on the emulated pod against a serial reference: every
 * collective x op x dtype x n in {1,2,3,4,7,8,16} x lengths {0,1,n-1,n+1,1000,
 * 65537}, in place and out of place, with guard elements after each buffer.
 * Inputs are quarter-integers so every summation order gives the exact sum:
 * any difference from the reference is a real bug, and every core's result is
 * bitwise the reference. Torus topologies run the per-axis all-reduce. */
#include <math.h>
#include <stdlib.h>

#include "tests/pod/pod_test.h"

/* ThreadSanitizer runs this sweep for races, and instruments every load and
 * store of the checking loops: there the longest length is 4099 (still many
 * pipeline chunks per step); other builds sweep the full 65537. */
#if defined(__SANITIZE_THREAD__)
#define MAXLEN 4099
#else
#define MAXLEN 65537
#endif
#define GUARD 4

static double value_of(int core, size_t i) { return (double)((int)((core * 131 + i * 29) % 61) - 30) * 0.25; }

static const optic_pod_op OPS[] = {OPTIC_POD_SUM, OPTIC_POD_MEAN, OPTIC_POD_MAX, OPTIC_POD_MIN};
static const optic_dtype DTYPES[] = {OPTIC_F32, OPTIC_F64};

typedef struct job {
  int n;
  size_t lens[6];
  /* reference[op][dtype][i] for the longest length (a prefix serves shorter ones:
   * the inputs do not depend on the length) */
  double *ref[4];
  pod_test_notes notes;
  bool all_reduce_only;
} job;

static double get(const void *p, optic_dtype dt, size_t i) {
  return dt == OPTIC_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void put(void *p, optic_dtype dt, size_t i, double v) {
  if (dt == OPTIC_F32) {
    ((float *)p)[i] = (float)v;
  } else {
    ((double *)p)[i] = v;
  }
}

/* Expected value in the dtype's arithmetic (exact sums; the mean divides once). */
static double expect(const job *j, int op, optic_dtype dt, size_t i) {
  double v = j->ref[op][i];
  if (OPS[op] == OPTIC_POD_MEAN) v = dt == OPTIC_F32 ? (double)((float)v / (float)j->n) : v / (double)j->n;
  return v;
}

static bool same(double got, double want) { return memcmp(&got, &want, sizeof got) == 0; }

static void check_guard(job *j, int me, const char *what, const void *buf, optic_dtype dt, size_t from) {
  for (size_t g = 0; g < GUARD; g++) {
    if (!same(get(buf, dt, from + g), -999.0)) {
      pod_note(&j->notes, me, "%s: guard element %zu after the buffer was overwritten", what, g);
      return;
    }
  }
}

static optic_status body(optic_pod_core_t *c, void *user) {
  job *j = user;
  const int me = optic_pod_core_index(c), n = optic_pod_core_count(c);
  char *a = malloc((MAXLEN + GUARD) * 8), *b = malloc((MAXLEN + GUARD) * 8);
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return OPTIC_ERR_OUT_OF_MEMORY;
  }
  optic_status result = OPTIC_OK;
  for (size_t li = 0; li < 6 && result == OPTIC_OK; li++) {
    const size_t len = j->lens[li];
    for (size_t di = 0; di < 2 && result == OPTIC_OK; di++) {
      const optic_dtype dt = DTYPES[di];
      for (int inplace = 0; inplace < 2 && result == OPTIC_OK; inplace++) {
        char what[128];
        /* all-reduce, each op */
        for (int op = 0; op < 4; op++) {
          snprintf(what, sizeof what, "all_reduce %s %s n=%d len=%zu %s", optic_pod_op_name(OPS[op]),
                   optic_dtype_name(dt), n, len, inplace ? "in place" : "out of place");
          for (size_t i = 0; i < len + GUARD; i++) {
            put(a, dt, i, i < len ? value_of(me, i) : -999.0);
            put(b, dt, i, -999.0);
          }
          void *out = inplace ? a : b;
          optic_status st = optic_pod_all_reduce(c, a, out, len, dt, OPS[op]);
          if (st != OPTIC_OK) {
            pod_note(&j->notes, me, "%s: %s", what, optic_last_error());
            result = st;
            break;
          }
          for (size_t i = 0; i < len; i++) {
            if (!same(get(out, dt, i), expect(j, op, dt, i))) {
              pod_note(&j->notes, me, "%s: [%zu] = %.17g, expected %.17g", what, i, get(out, dt, i),
                       expect(j, op, dt, i));
              break;
            }
          }
          check_guard(j, me, what, out, dt, len);
          if (!inplace) {
            for (size_t i = 0; i < len; i++) {
              if (!same(get(a, dt, i), value_of(me, i))) {
                pod_note(&j->notes, me, "%s: the send buffer changed at %zu", what, i);
                break;
              }
            }
          }
        }
        if (j->all_reduce_only || result != OPTIC_OK) continue;
        size_t off, slen;
        optic_pod_shard(len, n, me, &off, &slen);
        /* reduce-scatter, each op */
        for (int op = 0; op < 4; op++) {
          snprintf(what, sizeof what, "reduce_scatter %s %s n=%d len=%zu %s", optic_pod_op_name(OPS[op]),
                   optic_dtype_name(dt), n, len, inplace ? "in place" : "out of place");
          for (size_t i = 0; i < len + GUARD; i++) {
            put(a, dt, i, i < len ? value_of(me, i) : -999.0);
            put(b, dt, i, -999.0);
          }
          char *out = inplace ? a + off * optic_dtype_size(dt) : b;
          optic_status st = optic_pod_reduce_scatter(c, a, out, len, dt, OPS[op]);
          if (st != OPTIC_OK) {
            pod_note(&j->notes, me, "%s: %s", what, optic_last_error());
            result = st;
            break;
          }
          for (size_t i = 0; i < slen; i++) {
            if (!same(get(out, dt, i), expect(j, op, dt, off + i))) {
              pod_note(&j->notes, me, "%s: shard[%zu] = %.17g, expected %.17g", what, i, get(out, dt, i),
                       expect(j, op, dt, off + i));
              break;
            }
          }
          if (!inplace) check_guard(j, me, what, b, dt, slen);
        }
        if (result != OPTIC_OK) continue;
        /* all-gather: the global vector g(i) = value_of(0, i) * 3 */
        snprintf(what, sizeof what, "all_gather %s n=%d len=%zu %s", optic_dtype_name(dt), n, len,
                 inplace ? "in place" : "out of place");
        for (size_t i = 0; i < len + GUARD; i++) {
          put(b, dt, i, -999.0);
          put(a, dt, i, -999.0);
        }
        char *src = inplace ? b + off * optic_dtype_size(dt) : a;
        for (size_t i = 0; i < slen; i++) put(src, dt, i, value_of(0, off + i) * 3);
        optic_status st = optic_pod_all_gather(c, src, b, len, dt);
        if (st != OPTIC_OK) {
          pod_note(&j->notes, me, "%s: %s", what, optic_last_error());
          result = st;
          continue;
        }
        for (size_t i = 0; i < len; i++) {
          if (!same(get(b, dt, i), value_of(0, i) * 3)) {
            pod_note(&j->notes, me, "%s: [%zu] = %.17g, expected %.17g", what, i, get(b, dt, i), value_of(0, i) * 3);
            break;
          }
        }
        check_guard(j, me, what, b, dt, len);
        /* broadcast from a root that moves with the length */
        const int root = (int)((len + (size_t)inplace) % (size_t)n);
        snprintf(what, sizeof what, "broadcast %s n=%d len=%zu root=%d", optic_dtype_name(dt), n, len, root);
        for (size_t i = 0; i < len + GUARD; i++) put(a, dt, i, i < len && me == root ? value_of(root, i) : -999.0);
        if (me != root) {
          for (size_t i = 0; i < len; i++) put(a, dt, i, NAN);
        }
        st = optic_pod_broadcast(c, a, len, dt, root);
        if (st != OPTIC_OK) {
          pod_note(&j->notes, me, "%s: %s", what, optic_last_error());
          result = st;
          continue;
        }
        for (size_t i = 0; i < len; i++) {
          if (!same(get(a, dt, i), value_of(root, i))) {
            pod_note(&j->notes, me, "%s: [%zu] = %.17g, expected %.17g", what, i, get(a, dt, i), value_of(root, i));
            break;
          }
        }
        check_guard(j, me, what, a, dt, len);
      }
    }
  }
  free(a);
  free(b);
  return result;
}

static void run_sweep(const optic_topology *topo, bool all_reduce_only, size_t chunk_bytes) {
  const int n = topo->cores;
  job *j = calloc(1, sizeof *j);
  j->n = n;
  j->all_reduce_only = all_reduce_only;
  const size_t lens[6] = {0, 1, n > 1 ? (size_t)n - 1 : 2, (size_t)n + 1, 1000, MAXLEN};
  memcpy(j->lens, lens, sizeof lens);
  for (int op = 0; op < 4; op++) {
    j->ref[op] = malloc(MAXLEN * sizeof(double));
    for (size_t i = 0; i < MAXLEN; i++) {
      double acc = value_of(0, i);
      for (int k = 1; k < n; k++) {
        double v = value_of(k, i);
        if (OPS[op] == OPTIC_POD_MAX) {
          acc = v > acc ? v : acc;
        } else if (OPS[op] == OPTIC_POD_MIN) {
          acc = v < acc ? v : acc;
        } else {
          acc += v;
        }
      }
      j->ref[op][i] = acc;
    }
  }
  optic_pod_options o = {.size = sizeof o, .topology = topo, .chunk_bytes = chunk_bytes};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  if (pod != NULL) {
    OT_EXPECT_OK(optic_pod_run(pod, body, j, NULL));
    pod_notes_report(&j->notes, n, topo->name);
  }
  optic_pod_destroy(pod);
  for (int op = 0; op < 4; op++) free(j->ref[op]);
  free(j);
}

static void sweep_ring(int n) {
  optic_topology t;
  OT_EXPECT_OK(n == 1 ? optic_topology_single(&t) : optic_topology_ring(n, true, &t));
  /* 2 KiB chunks: several pipeline units per step from 1000 elements up,
   * few enough that the sweep stays quick under ThreadSanitizer */
  run_sweep(&t, false, 2048);
}

static void test_ring_1(void) { sweep_ring(1); }
static void test_ring_2(void) { sweep_ring(2); }
static void test_ring_3(void) { sweep_ring(3); }
static void test_ring_4(void) { sweep_ring(4); }
static void test_ring_7(void) { sweep_ring(7); }
static void test_ring_8(void) { sweep_ring(8); }
static void test_ring_16(void) { sweep_ring(16); }

static void sweep_torus(int ndims, int d0, int d1, int d2, bool wrap) {
  optic_topology t;
  int dims[3] = {d0, d1, d2};
  bool w[3] = {wrap, wrap, wrap};
  OT_EXPECT_OK(optic_topology_torus(ndims, dims, w, &t));
  run_sweep(&t, false, 0);
}

static void test_torus_2x2(void) { sweep_torus(2, 2, 2, 0, true); }
static void test_torus_2x3(void) { sweep_torus(2, 2, 3, 0, true); }
static void test_mesh_3x3(void) { sweep_torus(2, 3, 3, 0, false); }
static void test_torus_2x2x2(void) { sweep_torus(3, 2, 2, 2, true); }
static void test_torus_2x1x4(void) { sweep_torus(3, 2, 1, 4, true); }

static void test_default_chunk_ring_4(void) {
  optic_topology t;
  OT_EXPECT_OK(optic_topology_ring(4, true, &t));
  run_sweep(&t, true, 0);
}

/* zero elements with NULL buffers; bad dtype, op and root */
static optic_status edge_body(optic_pod_core_t *c, void *user) {
  (void)user;
  optic_status st;
  if ((st = optic_pod_all_reduce(c, NULL, NULL, 0, OPTIC_F32, OPTIC_POD_SUM)) != OPTIC_OK) return st;
  if ((st = optic_pod_reduce_scatter(c, NULL, NULL, 0, OPTIC_F64, OPTIC_POD_MEAN)) != OPTIC_OK) return st;
  if ((st = optic_pod_all_gather(c, NULL, NULL, 0, OPTIC_F32)) != OPTIC_OK) return st;
  if ((st = optic_pod_broadcast(c, NULL, 0, OPTIC_F64, 1)) != OPTIC_OK) return st;
  float x[4] = {0};
  if (optic_pod_all_reduce(c, x, x, 4, OPTIC_S32, OPTIC_POD_SUM) != OPTIC_ERR_INVALID_ARGUMENT)
    return OPTIC_ERR_INTERNAL;
  if (optic_pod_all_reduce(c, x, x, 4, OPTIC_F32, (optic_pod_op)9) != OPTIC_ERR_INVALID_ARGUMENT)
    return OPTIC_ERR_INTERNAL;
  if (optic_pod_broadcast(c, x, 4, OPTIC_F32, 3) != OPTIC_ERR_INVALID_ARGUMENT) return OPTIC_ERR_INTERNAL;
  if (optic_pod_all_reduce(c, NULL, x, 4, OPTIC_F32, OPTIC_POD_SUM) != OPTIC_ERR_INVALID_ARGUMENT)
    return OPTIC_ERR_INTERNAL;
  /* the rejected calls took no part in the protocol: the pod still works */
  return optic_pod_all_reduce(c, x, x, 4, OPTIC_F32, OPTIC_POD_MAX);
}

static void test_edges(void) {
  optic_pod_options o = {.size = sizeof o, .cores = 3};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  OT_EXPECT_OK(optic_pod_run(pod, edge_body, NULL, NULL));
  optic_pod_destroy(pod);
}

/* 64 cores (the most a pod takes) on the v4 4x4x4 slice shape: per-axis rings. */
typedef struct big_job {
  pod_test_notes notes;
} big_job;

static optic_status big_body(optic_pod_core_t *c, void *user) {
  big_job *j = user;
  const int me = optic_pod_core_index(c), n = optic_pod_core_count(c);
  float x[1001];
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 1001; i++) x[i] = (float)(me + i % 7);
    optic_status st = optic_pod_all_reduce(c, x, x, 1001, OPTIC_F32, OPTIC_POD_SUM);
    if (st != OPTIC_OK) return st;
    for (int i = 0; i < 1001; i++) {
      float want = (float)(n * (n - 1) / 2 + n * (i % 7));
      if (x[i] != want) {
        pod_note(&j->notes, me, "[%d] = %g, want %g", i, x[i], want);
        break;
      }
    }
    if ((st = optic_pod_barrier(c)) != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static void test_v4_4x4x4_64_cores(void) {
  optic_topology t;
  OT_EXPECT_OK(optic_topology_preset("v4-4x4x4", &t));
  optic_pod_options o = {.size = sizeof o, .topology = &t};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  big_job *j = calloc(1, sizeof *j);
  OT_EXPECT_OK(optic_pod_run(pod, big_body, j, NULL));
  pod_notes_report(&j->notes, 64, "v4-4x4x4");
  free(j);
  optic_pod_destroy(pod);
}

static const ot_case cases[] = {
    {"edges", test_edges},
    {"v4_4x4x4_64_cores", test_v4_4x4x4_64_cores},
    {"ring_1", test_ring_1},
    {"ring_2", test_ring_2},
    {"ring_3", test_ring_3},
    {"ring_4", test_ring_4},
    {"ring_7", test_ring_7},
    {"ring_8", test_ring_8},
    {"ring_16", test_ring_16},
    {"torus_2x2", test_torus_2x2},
    {"torus_2x3", test_torus_2x3},
    {"mesh_3x3", test_mesh_3x3},
    {"torus_2x2x2", test_torus_2x2x2},
    {"torus_2x1x4", test_torus_2x1x4},
    {"default_chunk_ring_4", test_default_chunk_ring_4},
};

int main(int argc, char **argv) {
  pod_test_watchdog(170);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
