/* Collectives on the emulated pod's cores: ring reduce-scatter and all-gather
 * phases (pipelined in chunks, one progress counter per core), composed into
 * all-reduce along the ring or one ring per torus axis, and a chunked
 * broadcast chain. Each element's reduction order is fixed by the ring, so
 * every core gets the same bits on every run. Cores read their ring
 * predecessor's buffer directly (a two-core all-reduce also writes its
 * partner's); nobody leaves a phase before the core using its buffer is done
 * with it. */
#include <string.h>

#include "core/error.h"
#include "pod/pod_internal.h"
#include "pod/reduce.h"

enum { KIND_ALL_REDUCE = 1, KIND_REDUCE_SCATTER, KIND_ALL_GATHER, KIND_BROADCAST };

static const char *const KIND_NAME[] = {"", "all_reduce", "reduce_scatter", "all_gather", "broadcast"};

const char *optic_pod_op_name(optic_pod_op op) {
  switch (op) {
    case OPTIC_POD_SUM: return "sum";
    case OPTIC_POD_MEAN: return "mean";
    case OPTIC_POD_MAX: return "max";
    case OPTIC_POD_MIN: return "min";
  }
  return "unknown";
}

void optic_pod_shard(size_t count, int cores, int core, size_t *offset, size_t *len) {
  if (cores < 1 || core < 0 || core >= cores) {
    *offset = 0;
    *len = 0;
    return;
  }
  size_t q = count / (size_t)cores, r = count % (size_t)cores, k = (size_t)core;
  *offset = k * q + (k < r ? k : r);
  *len = q + (k < r ? 1 : 0);
}

/* ------------------------------------------------------------------ rings */

typedef struct ring {
  int n, pos, pred, succ;
  int member[OPTIC_POD_MAX_CORES]; /* core at each position */
  bool seg_by_core;                /* segment of position j is shard(member[j]) (else shard(j)) */
} ring;

typedef struct coll {
  optic_pod_core_t *c;
  int kind;
  optic_dtype dtype;
  size_t esize;
  optic_pod_op op;
  uint64_t seq;
  int phase;
  char *work; /* our working buffer (bytes) */
  const char *what;
} coll;

static void ring_seg(const ring *r, size_t len, int j, size_t *off, size_t *seg) {
  optic_pod_shard(len, r->n, r->seg_by_core ? r->member[j] : j, off, seg);
}

/* Elements per pipeline chunk for segments of at most max_seg elements. */
static size_t chunk_elems(const coll *k, size_t max_seg, int steps) {
  size_t ce = k->c->pod->chunk_bytes / k->esize;
  if (ce == 0) ce = 1;
  size_t per_step = POD_MAX_UNITS / (size_t)(steps > 0 ? steps : 1);
  if (max_seg / ce >= per_step) ce = max_seg / (per_step - 1) + 1;
  return ce;
}

static size_t max_shard(const ring *r, size_t len) {
  size_t off, m = 0;
  for (int j = 0; j < r->n; j++) {
    size_t s;
    ring_seg(r, len, j, &off, &s);
    if (s > m) m = s;
  }
  return m;
}

static optic_status check_desc(coll *k, int peer) {
  optic_pod_t *pod = k->c->pod;
  uint64_t mine = atomic_load(&pod->slot[k->c->index].desc), theirs = atomic_load(&pod->slot[peer].desc);
  if (mine != theirs) {
    pod_abort(pod, "%s: core %d and core %d called different collectives (or count/dtype/op/root differ)", k->what,
              k->c->index, peer);
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: core %d and core %d called different collectives (or count/dtype/op/root differ)", k->what,
                      k->c->index, peer);
  }
  return OPTIC_OK;
}

/* Waits until the successor has finished the phase (it reads our buffer). */
static optic_status phase_end(coll *k, const ring *r, uint64_t units) {
  return pod_wait_progress(k->c, r->succ, POD_PROGRESS(k->seq, k->phase, units), k->what);
}

/* Ring reduce-scatter of work[lo, lo+len): afterwards position p holds the
 * complete reduction of its segment p. At step s position p folds the
 * predecessor's partial of segment p-s-2 (mod n) into its own, so segment j's
 * order is fixed: it starts at position j+1 and goes round the ring. */
static optic_status ring_reduce_scatter(coll *k, const ring *r, size_t lo, size_t len, int mean_by) {
  k->phase++;
  if (r->n < 2 || len == 0) {
    if (mean_by > 1 && len > 0) pod_divide(k->c->pod->kernels, k->dtype, len, k->work + lo * k->esize, mean_by);
    return OPTIC_OK;
  }
  optic_pod_t *pod = k->c->pod;
  const int n = r->n, steps = n - 1;
  const size_t ce = chunk_elems(k, max_shard(r, len), steps), C = (max_shard(r, len) + ce - 1) / ce;
  pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, 0));
  char *pred = NULL;
  for (int s = 0; s < steps; s++) {
    int j = ((r->pos - s - 2) % n + 2 * n) % n;
    size_t off, seg;
    ring_seg(r, len, j, &off, &seg);
    for (size_t ch = 0; ch < C; ch++) {
      uint64_t need = s == 0 ? 0 : (uint64_t)(s - 1) * C + ch + 1;
      optic_status st = pod_wait_progress(k->c, r->pred, POD_PROGRESS(k->seq, k->phase, need), k->what);
      if (st != OPTIC_OK) return st;
      if (pred == NULL) {
        if ((st = check_desc(k, r->pred)) != OPTIC_OK) return st;
        pred = atomic_load(&pod->slot[r->pred].work);
      }
      size_t a = ch * ce, b = a + ce < seg ? a + ce : seg;
      if (a < b) {
        size_t at = (lo + off + a) * k->esize;
        pod_reduce_into(pod->kernels, k->dtype, k->op, b - a, pred + at, k->work + at);
        if (s == steps - 1 && mean_by > 1) pod_divide(pod->kernels, k->dtype, b - a, k->work + at, mean_by);
      }
      pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, (uint64_t)s * C + ch + 1));
    }
    pod_heartbeat_now(k->c);
  }
  return phase_end(k, r, (uint64_t)steps * C);
}

/* Ring all-gather of work[lo, lo+len) where position p holds segment p: at
 * step t it copies segment p-t-1 from its predecessor. */
static optic_status ring_all_gather(coll *k, const ring *r, size_t lo, size_t len) {
  k->phase++;
  if (r->n < 2 || len == 0) return OPTIC_OK;
  optic_pod_t *pod = k->c->pod;
  const int n = r->n, steps = n - 1;
  const size_t ce = chunk_elems(k, max_shard(r, len), steps), C = (max_shard(r, len) + ce - 1) / ce;
  pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, 0));
  char *pred = NULL;
  for (int t = 0; t < steps; t++) {
    int j = ((r->pos - t - 1) % n + n) % n;
    size_t off, seg;
    ring_seg(r, len, j, &off, &seg);
    for (size_t ch = 0; ch < C; ch++) {
      uint64_t need = t == 0 ? 0 : (uint64_t)(t - 1) * C + ch + 1;
      optic_status st = pod_wait_progress(k->c, r->pred, POD_PROGRESS(k->seq, k->phase, need), k->what);
      if (st != OPTIC_OK) return st;
      if (pred == NULL) {
        if ((st = check_desc(k, r->pred)) != OPTIC_OK) return st;
        pred = atomic_load(&pod->slot[r->pred].work);
      }
      size_t a = ch * ce, b = a + ce < seg ? a + ce : seg;
      if (a < b) {
        size_t at = (lo + off + a) * k->esize;
        memcpy(k->work + at, pred + at, (b - a) * k->esize);
      }
      pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, (uint64_t)t * C + ch + 1));
    }
    pod_heartbeat_now(k->c);
  }
  return phase_end(k, r, (uint64_t)steps * C);
}

/* Ring all-reduce of work[0, len) as one phase: the reduce-scatter's steps
 * then the all-gather's, with no barrier between them. Progress counts the
 * chunks done across both halves (step s = 0..2(n-1)-1, reduce-scatter then
 * all-gather, chunk ch is unit u = s*C+ch+1), and unit u waits only for the
 * predecessor's unit u-C, the same chunk one step earlier (step 0: its input,
 * ready once it has entered this collective). That is what each chunk reads:
 *  - reduce-scatter step s reads the predecessor's partial of its step s-1;
 *  - all-gather step t reads the predecessor's finished segment p-t-1, which
 *    it completed one step earlier.
 * The all-gather also overwrites our segment p-t-1, which the successor read
 * at its reduce-scatter step t (unit t*C+ch+1 = u-(n-1)C); no separate wait:
 * each core's unit u follows its predecessor's u-C (acquire/release), so the
 * predecessor's u-C follows the successor's u-(n-1)C around the ring. With
 * two cores a chunk of the all-gather starts as soon as the partner has
 * reduced it. Same adds in the same order as the two-phase version. */
/* Two cores: each reduces its own segment (its partner's partial into its
 * own, the same add the ring makes) and writes the result straight into the
 * partner's buffer, chunk by chunk, then waits once for the partner to have
 * done the same. Safe without other waits: the partner's copy of our segment
 * is what we just read (nobody else touches it), and the partner writes only
 * its own segment of our buffer, which we never read. Once the partner's last
 * unit is seen, it has finished reading our buffer and writing into it, so
 * both buffers are their callers' again. Two handoffs per call instead of
 * three. */
static optic_status pair_all_reduce(coll *k, const ring *r, size_t len, int mean_by) {
  optic_pod_t *pod = k->c->pod;
  const size_t ce = chunk_elems(k, max_shard(r, len), 1), C = (max_shard(r, len) + ce - 1) / ce;
  pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, 0));
  optic_status st = pod_wait_progress(k->c, r->pred, POD_PROGRESS(k->seq, k->phase, 0), k->what);
  if (st != OPTIC_OK || (st = check_desc(k, r->pred)) != OPTIC_OK) return st;
  char *peer = atomic_load(&pod->slot[r->pred].work);
  const int j = ((r->pos - 2) % 2 + 4) % 2; /* the segment the ring's reduce-scatter gives this position */
  size_t off, seg;
  ring_seg(r, len, j, &off, &seg);
  for (size_t ch = 0; ch < C; ch++) {
    size_t a = ch * ce, b = a + ce < seg ? a + ce : seg;
    if (a < b) {
      size_t at = (off + a) * k->esize;
      pod_reduce_into(pod->kernels, k->dtype, k->op, b - a, peer + at, k->work + at);
      if (mean_by > 1) pod_divide(pod->kernels, k->dtype, b - a, k->work + at, mean_by);
      memcpy(peer + at, k->work + at, (b - a) * k->esize);
    }
    pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, ch + 1));
    pod_heartbeat_now(k->c);
  }
  return pod_wait_progress(k->c, r->pred, POD_PROGRESS(k->seq, k->phase, C), k->what);
}

static optic_status ring_all_reduce(coll *k, const ring *r, size_t len, int mean_by) {
  k->phase++;
  if (r->n < 2 || len == 0) {
    if (mean_by > 1 && len > 0) pod_divide(k->c->pod->kernels, k->dtype, len, k->work, mean_by);
    return OPTIC_OK;
  }
  if (r->n == 2) return pair_all_reduce(k, r, len, mean_by);
  optic_pod_t *pod = k->c->pod;
  const int n = r->n, steps = n - 1;
  const size_t ms = max_shard(r, len), ce = chunk_elems(k, ms, 2 * steps), C = (ms + ce - 1) / ce;
  pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, 0));
  char *pred = NULL;
  uint64_t unit = 0;
  for (int s = 0; s < 2 * steps; s++) {
    const bool gather = s >= steps;
    const int j = gather ? ((r->pos - (s - steps) - 1) % n + n) % n : ((r->pos - s - 2) % n + 2 * n) % n;
    size_t off, seg;
    ring_seg(r, len, j, &off, &seg);
    for (size_t ch = 0; ch < C; ch++) {
      uint64_t need = s == 0 ? 0 : (uint64_t)(s - 1) * C + ch + 1;
      optic_status st = pod_wait_progress(k->c, r->pred, POD_PROGRESS(k->seq, k->phase, need), k->what);
      if (st != OPTIC_OK) return st;
      if (pred == NULL) {
        if ((st = check_desc(k, r->pred)) != OPTIC_OK) return st;
        pred = atomic_load(&pod->slot[r->pred].work);
      }
      size_t a = ch * ce, b = a + ce < seg ? a + ce : seg;
      if (a < b) {
        size_t at = (off + a) * k->esize;
        if (gather) {
          memcpy(k->work + at, pred + at, (b - a) * k->esize);
        } else {
          pod_reduce_into(pod->kernels, k->dtype, k->op, b - a, pred + at, k->work + at);
          if (s == steps - 1 && mean_by > 1) pod_divide(pod->kernels, k->dtype, b - a, k->work + at, mean_by);
        }
      }
      pod_set_progress(k->c, POD_PROGRESS(k->seq, k->phase, ++unit));
    }
    pod_heartbeat_now(k->c);
  }
  return phase_end(k, r, unit);
}

/* The pod's ring in snake order, segments by core id (the API's shards). */
static void pod_ring(const optic_pod_t *pod, int me, ring *r) {
  r->n = pod->n;
  r->pos = pod->ring_pos[me];
  for (int j = 0; j < pod->n; j++) r->member[j] = pod->ring[j];
  r->pred = pod->ring[(r->pos + pod->n - 1) % pod->n];
  r->succ = pod->ring[(r->pos + 1) % pod->n];
  r->seg_by_core = true;
}

/* The ring along torus axis a through core me, segments by position. */
static void axis_ring(const optic_pod_t *pod, int me, int a, ring *r) {
  int c[OPTIC_TOPOLOGY_MAX_DIMS];
  topology_coords_of(&pod->topo, me, c); /* validated at pod_create: no check per collective */
  r->n = pod->topo.dims[a];
  r->pos = c[a];
  for (int j = 0; j < r->n; j++) {
    c[a] = j;
    r->member[j] = topology_core_of(&pod->topo, c);
  }
  r->pred = r->member[(r->pos + r->n - 1) % r->n];
  r->succ = r->member[(r->pos + 1) % r->n];
  r->seg_by_core = false;
}

/* ------------------------------------------------------------- entry points */

static optic_status begin(coll *k, optic_pod_core_t *c, int kind, const void *a, const void *b, size_t count,
                          optic_dtype dtype, optic_pod_op op, int root, bool has_op) {
  const char *what = KIND_NAME[kind];
  if (c == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: core is NULL", what);
  if (dtype != OPTIC_F32 && dtype != OPTIC_F64) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dtype %s; f32 and f64 are supported", what,
                      optic_dtype_name(dtype));
  }
  if (has_op && (op < OPTIC_POD_SUM || op > OPTIC_POD_MIN)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: unknown reduce op %d", what, (int)op);
  }
  if (count > 0 && (a == NULL || b == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL buffer with count %zu", what, count);
  }
  if (count > SIZE_MAX / 8) return optic_fail(OPTIC_ERR_OVERFLOW, "%s: count %zu too large", what, count);
  optic_status st = pod_enter(c, what);
  if (st != OPTIC_OK) return st;
  k->c = c;
  k->kind = kind;
  k->dtype = dtype;
  k->esize = optic_dtype_size(dtype);
  k->op = has_op ? op : OPTIC_POD_SUM;
  k->seq = ++c->seq;
  k->phase = 0;
  k->what = what;
  uint64_t desc = (uint64_t)kind | (uint64_t)dtype << 4 | (uint64_t)k->op << 8 | (uint64_t)(root & 0xff) << 12 |
                  (uint64_t)count << 20;
  atomic_store(&c->pod->slot[c->index].desc, desc ^ (k->seq << 58));
  return OPTIC_OK;
}

/* memmove in pieces with heartbeats, so a huge copy never looks like death. */
static void copy_in(optic_pod_core_t *c, void *dst, const void *src, size_t bytes) {
  const size_t piece = (size_t)4 << 20;
  for (size_t at = 0; at < bytes; at += piece) {
    memmove((char *)dst + at, (const char *)src + at, bytes - at < piece ? bytes - at : piece);
    pod_heartbeat_now(c);
  }
}

static void publish(coll *k, void *work) {
  k->work = work;
  atomic_store(&k->c->pod->slot[k->c->index].work, work);
}

optic_status optic_pod_all_reduce(optic_pod_core_t *c, const void *send, void *recv, size_t count, optic_dtype dtype,
                                  optic_pod_op op) {
  coll k;
  optic_status st = begin(&k, c, KIND_ALL_REDUCE, send, recv, count, dtype, op, 0, true);
  if (st != OPTIC_OK) return st;
  optic_pod_t *pod = c->pod;
  if (send != recv) copy_in(c, recv, send, count * k.esize);
  publish(&k, recv);
  const int mean_by = op == OPTIC_POD_MEAN ? pod->n : 1;
  int axes[OPTIC_TOPOLOGY_MAX_DIMS], na = 0;
  for (int a = 0; a < pod->topo.ndims; a++) {
    if (pod->topo.dims[a] > 1) axes[na++] = a;
  }
  if (na <= 1) {
    ring r;
    pod_ring(pod, c->index, &r);
    r.seg_by_core = false;
    return ring_all_reduce(&k, &r, count, mean_by);
  }
  /* Torus: reduce-scatter along each axis in turn on the shrinking shard,
   * then all-gather back in reverse order. */
  ring rings[OPTIC_TOPOLOGY_MAX_DIMS];
  size_t lo[OPTIC_TOPOLOGY_MAX_DIMS + 1], len[OPTIC_TOPOLOGY_MAX_DIMS + 1];
  lo[0] = 0;
  len[0] = count;
  for (int i = 0; i < na; i++) {
    axis_ring(pod, c->index, axes[i], &rings[i]);
    st = ring_reduce_scatter(&k, &rings[i], lo[i], len[i], i == na - 1 ? mean_by : 1);
    if (st != OPTIC_OK) return st;
    size_t off;
    ring_seg(&rings[i], len[i], rings[i].pos, &off, &len[i + 1]);
    lo[i + 1] = lo[i] + off;
  }
  for (int i = na - 1; i >= 0; i--) {
    if ((st = ring_all_gather(&k, &rings[i], lo[i], len[i])) != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

optic_status optic_pod_all_reduce_mean(optic_pod_core_t *c, optic_tensor *t) {
  if (t == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "all_reduce_mean: tensor is NULL");
  size_t n = 0;
  optic_status st = optic_shape_elements(&t->shape, &n);
  if (st != OPTIC_OK) return st;
  if (t->dtype != OPTIC_F32 && t->dtype != OPTIC_F64) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "all_reduce_mean: dtype %s; f32 and f64 are supported",
                      optic_dtype_name(t->dtype));
  }
  return optic_pod_all_reduce(c, t->data, t->data, n, t->dtype, OPTIC_POD_MEAN);
}

static optic_status scratch(optic_pod_core_t *c, size_t bytes, char **out) {
  if (bytes > c->scratch_bytes) {
    optic_free(&c->pod->allocator, c->scratch, c->scratch_bytes, 64);
    c->scratch = NULL;
    c->scratch_bytes = 0;
    optic_status st = optic_alloc(&c->pod->allocator, bytes, 64, &c->scratch);
    if (st != OPTIC_OK) return st;
    c->scratch_bytes = bytes;
  }
  *out = c->scratch;
  return OPTIC_OK;
}

optic_status optic_pod_reduce_scatter(optic_pod_core_t *c, const void *send, void *recv, size_t count,
                                      optic_dtype dtype, optic_pod_op op) {
  coll k;
  size_t off = 0, len = 0;
  if (c != NULL) optic_pod_shard(count, c->pod->n, c->index, &off, &len);
  optic_status st = begin(&k, c, KIND_REDUCE_SCATTER, send, len ? recv : send, count, dtype, op, 0, true);
  if (st != OPTIC_OK) return st;
  char *work = NULL;
  /* A scratch failure still has to take part in the protocol's failure path:
   * abort the pod so peers do not wait for us. */
  if ((st = scratch(c, count * k.esize, &work)) != OPTIC_OK) {
    pod_abort(c->pod, "reduce_scatter: core %d could not allocate %zu bytes of scratch", c->index, count * k.esize);
    return st;
  }
  copy_in(c, work, send, count * k.esize);
  publish(&k, work);
  ring r;
  pod_ring(c->pod, c->index, &r);
  st = ring_reduce_scatter(&k, &r, 0, count, op == OPTIC_POD_MEAN ? c->pod->n : 1);
  if (st != OPTIC_OK) return st;
  if (len > 0) memcpy(recv, work + off * k.esize, len * k.esize);
  return OPTIC_OK;
}

optic_status optic_pod_all_gather(optic_pod_core_t *c, const void *send, void *recv, size_t count, optic_dtype dtype) {
  coll k;
  size_t off = 0, len = 0;
  if (c != NULL) optic_pod_shard(count, c->pod->n, c->index, &off, &len);
  optic_status st = begin(&k, c, KIND_ALL_GATHER, len ? send : recv, recv, count, dtype, OPTIC_POD_SUM, 0, false);
  if (st != OPTIC_OK) return st;
  if (len > 0 && (char *)recv + off * k.esize != (const char *)send) {
    memmove((char *)recv + off * k.esize, send, len * k.esize);
  }
  publish(&k, recv);
  ring r;
  pod_ring(c->pod, c->index, &r);
  return ring_all_gather(&k, &r, 0, count);
}

optic_status optic_pod_broadcast(optic_pod_core_t *c, void *buf, size_t count, optic_dtype dtype, int root) {
  coll k;
  if (c != NULL && (root < 0 || root >= c->pod->n)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "broadcast: root %d outside 0..%d", root, c->pod->n - 1);
  }
  optic_status st = begin(&k, c, KIND_BROADCAST, buf, buf, count, dtype, OPTIC_POD_SUM, root, false);
  if (st != OPTIC_OK) return st;
  optic_pod_t *pod = c->pod;
  publish(&k, buf);
  k.phase = 1;
  if (pod->n < 2 || count == 0) return OPTIC_OK;
  ring r;
  pod_ring(pod, c->index, &r);
  const int dist = (r.pos - pod->ring_pos[root] + r.n) % r.n;
  const size_t ce = chunk_elems(&k, count, 1), C = (count + ce - 1) / ce;
  if (dist == 0) {
    pod_set_progress(c, POD_PROGRESS(k.seq, 1, C));
  } else {
    char *pred = NULL;
    for (size_t ch = 0; ch < C; ch++) {
      if ((st = pod_wait_progress(c, r.pred, POD_PROGRESS(k.seq, 1, ch + 1), k.what)) != OPTIC_OK) return st;
      if (pred == NULL) {
        if ((st = check_desc(&k, r.pred)) != OPTIC_OK) return st;
        pred = atomic_load(&pod->slot[r.pred].work);
      }
      size_t a = ch * ce, b = a + ce < count ? a + ce : count;
      memcpy(k.work + a * k.esize, pred + a * k.esize, (b - a) * k.esize);
      pod_set_progress(c, POD_PROGRESS(k.seq, 1, ch + 1));
    }
  }
  /* The last core of the chain has no reader. */
  if (dist == r.n - 1) return OPTIC_OK;
  return phase_end(&k, &r, C);
}
