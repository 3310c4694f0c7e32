/* Topologies: validation errors, coordinates, neighbour tables, hop
 * distances (checked against a breadth-first search over the neighbour
 * table), the snake ring order, presets and the all-reduce estimate. */
#include <math.h>
#include <stdlib.h>

#include "tests/pod/pod_test.h"

static void test_invalid_shapes(void) {
  optic_topology t;
  int zero[2] = {4, 0}, neg[3] = {2, -1, 2}, ok[2] = {2, 3};
  OT_EXPECT_STATUS(optic_topology_torus(2, zero, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "dim 1 is 0") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_topology_torus(3, neg, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_topology_torus(0, ok, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_topology_torus(4, ok, NULL, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_topology_ring(0, true, &t), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_topology_preset("v9-1x1", &t), OPTIC_ERR_NOT_FOUND);
  OT_EXPECT_OK(optic_topology_torus(2, ok, NULL, &t));
  OT_CHECK(t.cores == 6 && t.wrap[0] && t.wrap[1]);
  int c[3] = {2, 0, 0}, id;
  OT_EXPECT_STATUS(optic_topology_core_at(&t, c, &id), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_topology_coords(&t, 6, c), OPTIC_ERR_INVALID_ARGUMENT);
  /* a pod on a topology with the wrong core count, or too big to emulate */
  optic_pod_options o = {.size = sizeof o, .cores = 5, .topology = &t};
  optic_pod_t *pod = NULL;
  OT_EXPECT_STATUS(optic_pod_create(&o, &pod), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_topology_preset("v5e-16x16", &t));
  o.cores = 0;
  OT_EXPECT_STATUS(optic_pod_create(&o, &pod), OPTIC_ERR_INVALID_ARGUMENT);
}

/* BFS distance over the neighbour table. */
static int bfs(const optic_topology *t, int a, int b) {
  int *dist = malloc(sizeof(int) * (size_t)t->cores), *queue = malloc(sizeof(int) * (size_t)t->cores);
  for (int i = 0; i < t->cores; i++) dist[i] = -1;
  int head = 0, tail = 0;
  dist[a] = 0;
  queue[tail++] = a;
  while (head < tail) {
    int u = queue[head++], nb[6], cnt;
    optic_topology_neighbors(t, u, nb, &cnt);
    for (int i = 0; i < cnt; i++) {
      if (dist[nb[i]] < 0) {
        dist[nb[i]] = dist[u] + 1;
        queue[tail++] = nb[i];
      }
    }
  }
  int d = dist[b];
  free(dist);
  free(queue);
  return d;
}

static void check_shape(const optic_topology *t) {
  for (int k = 0; k < t->cores; k++) {
    int c[3], back;
    OT_EXPECT_OK(optic_topology_coords(t, k, c));
    OT_EXPECT_OK(optic_topology_core_at(t, c, &back));
    OT_CHECK(back == k);
    int nb[6], cnt;
    OT_EXPECT_OK(optic_topology_neighbors(t, k, nb, &cnt));
    OT_CHECK(cnt <= 2 * t->ndims);
    for (int i = 0; i < cnt; i++) {
      int h;
      optic_topology_hops(t, k, nb[i], &h);
      OT_CHECK(h == 1, "%s: neighbour %d of %d is %d hops away", t->name, nb[i], k, h);
    }
  }
  for (int a = 0; a < t->cores; a += 3) {
    for (int b = 0; b < t->cores; b += 2) {
      int h;
      OT_EXPECT_OK(optic_topology_hops(t, a, b, &h));
      OT_CHECK(h == bfs(t, a, b), "%s: hops(%d,%d) = %d, BFS %d", t->name, a, b, h, bfs(t, a, b));
    }
  }
  /* snake order: a permutation whose consecutive entries are neighbours */
  int *order = malloc(sizeof(int) * (size_t)t->cores), *seen = calloc((size_t)t->cores, sizeof(int));
  OT_EXPECT_OK(optic_topology_ring_order(t, order));
  for (int i = 0; i < t->cores; i++) {
    OT_CHECK(order[i] >= 0 && order[i] < t->cores && !seen[order[i]]);
    if (order[i] >= 0 && order[i] < t->cores) seen[order[i]] = 1;
    if (i > 0) {
      int h;
      optic_topology_hops(t, order[i - 1], order[i], &h);
      OT_CHECK(h == 1, "%s: ring order step %d -> %d is %d hops", t->name, order[i - 1], order[i], h);
    }
  }
  free(order);
  free(seen);
}

static void test_shapes(void) {
  optic_topology t;
  OT_EXPECT_OK(optic_topology_single(&t));
  OT_CHECK(t.cores == 1);
  int order[1];
  OT_EXPECT_OK(optic_topology_ring_order(&t, order));
  OT_CHECK(order[0] == 0);
  OT_EXPECT_OK(optic_topology_ring(7, true, &t));
  check_shape(&t);
  OT_EXPECT_OK(optic_topology_ring(5, false, &t));
  check_shape(&t);
  int d2[2] = {3, 5}, d3[3] = {2, 3, 4}, d3b[3] = {4, 4, 4};
  bool nowrap[3] = {false, false, false}, mixed[3] = {true, false, true};
  OT_EXPECT_OK(optic_topology_torus(2, d2, NULL, &t));
  check_shape(&t);
  OT_EXPECT_OK(optic_topology_torus(2, d2, nowrap, &t));
  check_shape(&t);
  OT_EXPECT_OK(optic_topology_torus(3, d3, mixed, &t));
  check_shape(&t);
  OT_EXPECT_OK(optic_topology_torus(3, d3b, NULL, &t));
  check_shape(&t);
  int nb[6], cnt;
  OT_EXPECT_OK(optic_topology_neighbors(&t, 0, nb, &cnt));
  OT_CHECK(cnt == 6);
  /* size-2 axes: +1 and -1 are the same core, listed once */
  int d22[2] = {2, 2};
  OT_EXPECT_OK(optic_topology_torus(2, d22, NULL, &t));
  OT_EXPECT_OK(optic_topology_neighbors(&t, 0, nb, &cnt));
  OT_CHECK(cnt == 2 && nb[0] == 1 && nb[1] == 2, "%d neighbours", cnt);
  /* a line's ends have one neighbour; a ring's have two */
  OT_EXPECT_OK(optic_topology_ring(4, false, &t));
  OT_EXPECT_OK(optic_topology_neighbors(&t, 0, nb, &cnt));
  OT_CHECK(cnt == 1 && nb[0] == 1);
  int h;
  OT_EXPECT_OK(optic_topology_hops(&t, 0, 3, &h));
  OT_CHECK(h == 3);
  OT_EXPECT_OK(optic_topology_ring(4, true, &t));
  OT_EXPECT_OK(optic_topology_hops(&t, 0, 3, &h));
  OT_CHECK(h == 1);
}

static void test_presets(void) {
  const char *names[] = {"v4-4x4x4", "v4-4x4x8", "v5p-4x4x4", "v5e-16x16", "v6e-16x16", "v5e-2x2", "v6e-4x4"};
  const int cores[] = {64, 128, 64, 256, 256, 4, 16};
  for (size_t i = 0; i < 7; i++) {
    optic_topology t;
    OT_EXPECT_OK(optic_topology_preset(names[i], &t));
    OT_CHECK(t.cores == cores[i] && strcmp(t.name, names[i]) == 0, "%s", names[i]);
    OT_CHECK(t.link_bytes_per_s > 0 && t.hop_latency_s > 0);
    check_shape(&t);
    double s;
    OT_EXPECT_OK(optic_topology_allreduce_seconds(&t, 1e9, &s));
    OT_CHECK(s > 0);
  }
  /* v6e 16x16, 1 GB: two axes, 2*(15/16)*V/(2*9e10) + 2*(15/16)*(V/16)/(2*9e10) + latency */
  optic_topology t;
  OT_EXPECT_OK(optic_topology_preset("v6e-16x16", &t));
  double s, v = 1e9, bw = 2 * 9e10;
  double want = 2 * (15.0 / 16 * v / bw + 15e-6) + 2 * (15.0 / 16 * (v / 16) / bw + 15e-6);
  OT_EXPECT_OK(optic_topology_allreduce_seconds(&t, v, &s));
  OT_CHECK(s > want * 0.999999 && s < want * 1.000001, "%.9g vs %.9g", s, want);
  /* an emulated pod on the v4 4x4x4 shape */
  OT_EXPECT_OK(optic_topology_preset("v4-4x4x4", &t));
  optic_pod_options o = {.size = sizeof o, .topology = &t};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&o, &pod));
  OT_CHECK(optic_pod_cores(pod) == 64);
  optic_pod_destroy(pod);
  OT_EXPECT_OK(optic_topology_ring(3, true, &t));
  OT_EXPECT_STATUS(optic_topology_allreduce_seconds(&t, 1, &s), OPTIC_ERR_UNSUPPORTED);
}

static void test_shard(void) {
  for (size_t count = 0; count < 40; count++) {
    for (int n = 1; n <= 9; n++) {
      size_t next = 0;
      for (int k = 0; k < n; k++) {
        size_t off, len;
        optic_pod_shard(count, n, k, &off, &len);
        OT_CHECK(off == next && len >= count / (size_t)n && len <= count / (size_t)n + 1);
        next = off + len;
      }
      OT_CHECK(next == count);
    }
  }
}

/* A hand-filled topology with one bad field. Each case starts from a valid
 * 2x3 torus and breaks one field; every call that takes a topology must
 * refuse it with INVALID_ARGUMENT and a message naming the field (before
 * the validation some of these divided by zero or read dims[6]). */
typedef struct bad_field {
  const char *what; /* substring the message must contain */
  void (*brk)(optic_topology *t);
} bad_field;

static void brk_ndims7(optic_topology *t) { t->ndims = 7; }
static void brk_ndims_neg(optic_topology *t) { t->ndims = -1; }
static void brk_ndims0(optic_topology *t) { t->ndims = 0; } /* cores stays 6: one core was meant */
static void brk_dim0(optic_topology *t) { t->dims[1] = 0; }
static void brk_dim_neg(optic_topology *t) { t->dims[0] = -2; }
static void brk_overflow(optic_topology *t) {
  t->ndims = 3;
  t->dims[0] = t->dims[1] = t->dims[2] = 1 << 16; /* 2^48 cores: wraps an int product */
  t->cores = 0;
}
static void brk_too_many(optic_topology *t) {
  t->ndims = 3;
  t->dims[0] = t->dims[1] = t->dims[2] = 128; /* 2^21 */
  t->cores = 1 << 21;
}
static void brk_cores(optic_topology *t) { t->cores = 7; }
static void brk_cores0(optic_topology *t) { t->cores = 0; }
static void brk_wrap(optic_topology *t) { memset(&t->wrap[1], 2, sizeof t->wrap[1]); }
static void brk_link_nan(optic_topology *t) { t->link_bytes_per_s = NAN; }
static void brk_link_neg(optic_topology *t) { t->link_bytes_per_s = -1.0; }
static void brk_hop_inf(optic_topology *t) { t->hop_latency_s = INFINITY; }
static void brk_hop_neg(optic_topology *t) { t->hop_latency_s = -1e-6; }
static void brk_name(optic_topology *t) { memset(t->name, 'x', sizeof t->name); }

static const bad_field BAD_FIELDS[] = {
    {"ndims is 7", brk_ndims7},
    {"ndims is -1", brk_ndims_neg},
    {"cores is 6 but its dims give 1", brk_ndims0},
    {"dims[1] is 0", brk_dim0},
    {"dims[0] is -2", brk_dim_neg},
    {"more than 1048576 cores", brk_overflow},
    {"more than 1048576 cores", brk_too_many},
    {"cores is 7 but its dims give 6", brk_cores},
    {"cores is 0 but its dims give 6", brk_cores0},
    {"wrap[1] holds 2", brk_wrap},
    {"link_bytes_per_s is nan", brk_link_nan},
    {"link_bytes_per_s is -1", brk_link_neg},
    {"hop_latency_s is inf", brk_hop_inf},
    {"hop_latency_s is -1e-06", brk_hop_neg},
    {"name is not NUL-terminated", brk_name},
};

#define EXPECT_BAD(call, what, fn)                                                                            \
  do {                                                                                                        \
    optic_clear_error();                                                                                      \
    OT_EXPECT_STATUS(call, OPTIC_ERR_INVALID_ARGUMENT);                                                       \
    OT_CHECK(strstr(optic_last_error(), what) != NULL && strncmp(optic_last_error(), fn, strlen(fn)) == 0,    \
             "%s: message '%s' does not start with '%s' and name '%s'", #call, optic_last_error(), fn, what); \
  } while (0)

static void test_hand_filled_fields(void) {
  int d[2] = {2, 3};
  for (size_t i = 0; i < sizeof BAD_FIELDS / sizeof *BAD_FIELDS; i++) {
    const bad_field *b = &BAD_FIELDS[i];
    optic_topology t;
    OT_EXPECT_OK(optic_topology_torus(2, d, NULL, &t));
    t.link_bytes_per_s = 1e9;
    t.hop_latency_s = 1e-6;
    OT_EXPECT_OK(optic_topology_validate(&t));
    b->brk(&t);
    printf("  %s\n", b->what);
    int coords[3] = {0, 0, 0}, core = -1, nb[6], cnt = -1, hops = -1, order[8];
    double sec = -1;
    EXPECT_BAD(optic_topology_validate(&t), b->what, "topology_validate");
    EXPECT_BAD(optic_topology_coords(&t, 1, coords), b->what, "topology_coords");
    EXPECT_BAD(optic_topology_core_at(&t, coords, &core), b->what, "topology_core_at");
    EXPECT_BAD(optic_topology_neighbors(&t, 1, nb, &cnt), b->what, "topology_neighbors");
    EXPECT_BAD(optic_topology_hops(&t, 0, 1, &hops), b->what, "topology_hops");
    EXPECT_BAD(optic_topology_ring_order(&t, order), b->what, "topology_ring_order");
    EXPECT_BAD(optic_topology_allreduce_seconds(&t, 1e6, &sec), b->what, "topology_allreduce_seconds");
    OT_CHECK(core == -1 && cnt == -1 && hops == -1 && sec == -1, "an output was written on error");
    optic_pod_options o = {.size = sizeof o, .topology = &t};
    optic_pod_t *pod = NULL;
    EXPECT_BAD(optic_pod_create(&o, &pod), b->what, "pod_create");
    OT_CHECK(pod == NULL);
  }
  /* Fields the shape does not use are not read: dims and wrap past ndims,
   * and every dim of a single core. */
  optic_topology t;
  OT_EXPECT_OK(optic_topology_torus(2, d, NULL, &t));
  t.dims[2] = -5;
  memset(&t.wrap[2], 7, sizeof t.wrap[2]);
  OT_EXPECT_OK(optic_topology_validate(&t));
  int hops;
  OT_EXPECT_OK(optic_topology_hops(&t, 0, 5, &hops));
  OT_CHECK(hops == 2, "hops %d", hops);
  OT_EXPECT_OK(optic_topology_single(&t));
  t.dims[0] = 0;
  OT_EXPECT_OK(optic_topology_validate(&t));
  int order[1] = {-1};
  OT_EXPECT_OK(optic_topology_ring_order(&t, order));
  OT_CHECK(order[0] == 0);
  /* NULL topology everywhere. */
  EXPECT_BAD(optic_topology_validate(NULL), "NULL", "topology_validate");
  EXPECT_BAD(optic_topology_hops(NULL, 0, 0, &hops), "NULL", "topology_hops");
  double sec;
  EXPECT_BAD(optic_topology_allreduce_seconds(&t, NAN, &sec), "bytes is nan", "topology_allreduce_seconds");
}

static const ot_case cases[] = {
    {"invalid_shapes", test_invalid_shapes},
    {"shapes", test_shapes},
    {"presets", test_presets},
    {"shard", test_shard},
    {"hand_filled_fields", test_hand_filled_fields},
};

int main(int argc, char **argv) {
  pod_test_watchdog(60);
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
