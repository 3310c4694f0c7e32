/* The pod collectives over an MPI communicator, one pod core per rank:
 * optic's own pipelined ring (reduce-scatter then all-gather, chunked
 * broadcast chain) on MPI_Isend/MPI_Irecv into buffers allocated and touched
 * once at creation, so no call allocates or page-faults. Every wait polls
 * MPI_Test against a deadline: a dead or stalled rank yields TIMEOUT, never a
 * hang; after one the handle refuses further calls (PEER_FAILED), because
 * unmatched messages may be left in flight. Without MPI every call returns
 * UNSUPPORTED. The reduction order is the emulated pod's (ring = rank order),
 * so results are bitwise equal across ranks and to a pod of as many cores. */
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optic/pod.h>

#include "core/error.h"
#include "kernels/binary.h"
#include "pod/reduce.h"

#if OPTIC_HAVE_MPI
#include <mpi.h>

#define DEFAULT_TIMEOUT_NS 60000000000ull
#define DEFAULT_CHUNK ((size_t)4 << 20)
#define TAG 0x6f70 /* messages of one pair are non-overtaking, so one tag serves */

struct optic_pod_mpi {
  MPI_Comm comm;
  int rank, size;
  uint64_t timeout_ns;
  size_t chunk_bytes;
  char *tmp[2];  /* receive buffers for reduce steps, chunk_bytes each */
  char *scratch; /* reduce-scatter working copy */
  size_t scratch_bytes;
  bool broken;
  char broken_why[320];
  const optic_binary_kernels *kernels;
  /* shared-memory path (one node): every rank's segment is a 64-byte
   * progress counter followed by shm_bytes of data, in one POSIX shared
   * mapping that each rank unmaps on its own (no collective at destroy) */
  char *shm_map;
  size_t shm_map_bytes, shm_bytes, shm_seg;
  uint64_t shm_seq;
};

#define SHM_PROGRESS(seq, phase, units) (((uint64_t)(seq) << 32) | ((uint64_t)(phase) << 24) | (uint64_t)(units))

static _Atomic uint64_t *shm_progress(const optic_pod_mpi_t *m, int rank) {
  return (_Atomic uint64_t *)(m->shm_map + (size_t)rank * m->shm_seg);
}
static char *shm_data(const optic_pod_mpi_t *m, int rank) { return m->shm_map + (size_t)rank * m->shm_seg + 64; }

/* Maps one shared segment per rank when all ranks share a node. Every rank
 * takes the same branch (the decisions are agreed with MPI_Allreduce), and on
 * any failure the path stays off rather than failing create. */
static void shm_setup(optic_pod_mpi_t *m, size_t bytes) {
  MPI_Comm node;
  int node_size = 0, ok;
  if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) return;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  ok = node_size == m->size && m->size > 1;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, m->comm);
  if (!ok) return;
  char name[64];
  static _Atomic unsigned counter;
  if (m->rank == 0) {
    snprintf(name, sizeof name, "/optic_pod_%ld_%u_%llu", (long)getpid(), atomic_fetch_add(&counter, 1),
             (unsigned long long)optic_now_ns());
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, m->comm);
  m->shm_seg = 64 + (bytes + 63) / 64 * 64;
  m->shm_map_bytes = m->shm_seg * (size_t)m->size;
  int fd = -1;
  if (m->rank == 0) {
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    /* posix_fallocate, not just ftruncate: a too-small /dev/shm (containers
     * default to 64 MiB) must fail here, not raise SIGBUS on first touch */
    if (fd >= 0 &&
        (ftruncate(fd, (off_t)m->shm_map_bytes) != 0 || posix_fallocate(fd, 0, (off_t)m->shm_map_bytes) != 0)) {
      close(fd);
      shm_unlink(name);
      fd = -1;
    }
  }
  ok = m->rank != 0 || fd >= 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, m->comm);
  if (ok && m->rank != 0) fd = shm_open(name, O_RDWR, 0600);
  void *p = fd >= 0 ? mmap(NULL, m->shm_map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (fd >= 0) close(fd);
  int mapped = p != MAP_FAILED;
  MPI_Allreduce(&mapped, &ok, 1, MPI_INT, MPI_MIN, m->comm);
  if (m->rank == 0 && fd >= 0) shm_unlink(name); /* every rank has opened it by now */
  if (!ok) {
    if (mapped) munmap(p, m->shm_map_bytes);
    m->shm_map_bytes = 0;
    return;
  }
  m->shm_map = p;
  m->shm_bytes = bytes;
  atomic_store(shm_progress(m, m->rank), 0);
  memset(shm_data(m, m->rank), 0, bytes); /* fault our pages in now */
  MPI_Barrier(m->comm);
}

void *optic_pod_mpi_window(optic_pod_mpi_t *m, size_t *bytes) {
  if (bytes != NULL) *bytes = m && m->shm_map ? m->shm_bytes : 0;
  return m && m->shm_map ? shm_data(m, m->rank) : NULL;
}

static optic_status mpi_error(optic_pod_mpi_t *m, int rc, const char *what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  m->broken = true;
  snprintf(m->broken_why, sizeof m->broken_why, "%s failed: %s", what, msg);
  return optic_fail(OPTIC_ERR_PEER_FAILED, "pod_mpi %s on rank %d: MPI error: %s", what, m->rank, msg);
}

static optic_status alloc_touched(size_t bytes, char **out) {
  void *p = NULL;
  optic_status st = optic_alloc(NULL, bytes, 64, &p);
  if (st == OPTIC_OK && p != NULL) memset(p, 0, bytes); /* fault the pages in now, not during a collective */
  *out = p;
  return st;
}

optic_status optic_pod_mpi_create(const optic_pod_mpi_options *options, optic_pod_mpi_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi_create: out is NULL");
  *out = NULL;
  optic_pod_mpi_options o = {.size = sizeof o};
  if (options != NULL) {
    if (options->size < sizeof(size_t) || options->size > sizeof o) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi_create: options.size is %zu; expected %zu", options->size,
                        sizeof o);
    }
    memcpy(&o, options, options->size);
  }
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi_create: MPI is not initialized (call MPI_Init first)");
  }
  optic_pod_mpi_t *m = NULL;
  optic_status st = optic_alloc(NULL, sizeof *m, 0, (void **)&m);
  if (st != OPTIC_OK) return st;
  memset(m, 0, sizeof *m);
  m->timeout_ns = o.timeout_ns ? o.timeout_ns : DEFAULT_TIMEOUT_NS;
  m->chunk_bytes = o.chunk_bytes ? (o.chunk_bytes + 7) / 8 * 8 : DEFAULT_CHUNK;
  m->kernels = optic_binary_kernels_get();
  MPI_Comm base = o.comm != NULL ? *(const MPI_Comm *)o.comm : MPI_COMM_WORLD;
  int rc = MPI_Comm_dup(base, &m->comm);
  if (rc != MPI_SUCCESS) {
    optic_free(NULL, m, sizeof *m, 0);
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi_create: MPI_Comm_dup failed (%d)", rc);
  }
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->size);
  if ((st = alloc_touched(m->chunk_bytes, &m->tmp[0])) != OPTIC_OK ||
      (st = alloc_touched(m->chunk_bytes, &m->tmp[1])) != OPTIC_OK ||
      (st = alloc_touched(o.max_bytes, &m->scratch)) != OPTIC_OK) {
    optic_pod_mpi_destroy(m);
    return st;
  }
  m->scratch_bytes = o.max_bytes;
  if (o.shm_bytes > 0) shm_setup(m, o.shm_bytes);
  *out = m;
  return OPTIC_OK;
}

void optic_pod_mpi_destroy(optic_pod_mpi_t *m) {
  if (m == NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (m->comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&m->comm);
  optic_free(NULL, m->tmp[0], m->chunk_bytes, 64);
  optic_free(NULL, m->tmp[1], m->chunk_bytes, 64);
  optic_free(NULL, m->scratch, m->scratch_bytes, 64);
  if (m->shm_map != NULL) munmap(m->shm_map, m->shm_map_bytes);
  optic_free(NULL, m, sizeof *m, 0);
}

int optic_pod_mpi_rank(const optic_pod_mpi_t *m) { return m ? m->rank : -1; }
int optic_pod_mpi_size(const optic_pod_mpi_t *m) { return m ? m->size : 0; }

/* Polls until every request completes, an MPI error comes back, or the
 * deadline passes (then the pending requests are cancelled and freed and the
 * handle is marked broken). */
static optic_status wait_all(optic_pod_mpi_t *m, MPI_Request *req, int n, uint64_t deadline, const char *what) {
  for (uint64_t polls = 0;; polls++) {
    int done = 0;
    int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(m, rc, what);
    if (done) return OPTIC_OK;
    if ((polls & 63) == 63) {
      if (optic_now_ns() > deadline) {
        for (int i = 0; i < n; i++) {
          if (req[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[i]);
            MPI_Request_free(&req[i]);
          }
        }
        m->broken = true;
        snprintf(m->broken_why, sizeof m->broken_why, "%s timed out on rank %d", what, m->rank);
        return optic_fail(OPTIC_ERR_TIMEOUT,
                          "pod_mpi %s on rank %d: no progress within %.1f ms (a peer rank is dead, stalled or "
                          "not calling the same collective)",
                          what, m->rank, (double)m->timeout_ns * 1e-6);
      }
      if (polls > 2048) sched_yield(); /* let a peer rank sharing this CPU run */
    }
  }
}

static optic_status enter(optic_pod_mpi_t *m, const char *what, optic_dtype dt, bool has_op, optic_pod_op op,
                          size_t count, const void *a, const void *b) {
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi %s: handle is NULL", what);
  if (m->broken) {
    return optic_fail(OPTIC_ERR_PEER_FAILED, "pod_mpi %s on rank %d: refused after an earlier failure (%s)", what,
                      m->rank, m->broken_why);
  }
  if (dt != OPTIC_F32 && dt != OPTIC_F64) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi %s: dtype %s; f32 and f64 are supported", what,
                      optic_dtype_name(dt));
  }
  if (has_op && (op < OPTIC_POD_SUM || op > OPTIC_POD_MIN)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi %s: unknown op %d", what, (int)op);
  }
  if (count > 0 && (a == NULL || b == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi %s: NULL buffer with count %zu", what, count);
  }
  return OPTIC_OK;
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* Ring reduce-scatter on work (count elements, segments by rank): step s
 * sends our partial of segment p-s-1 and folds the predecessor's partial of
 * segment p-s-2 into ours, chunk by chunk, the next chunk's receive posted
 * before the current one is reduced. */
static optic_status ring_rs(optic_pod_mpi_t *m, char *work, size_t count, optic_dtype dt, optic_pod_op op,
                            uint64_t deadline, const char *what) {
  const int n = m->size, p = m->rank, pred = mod(p - 1, n), succ = mod(p + 1, n);
  const size_t es = optic_dtype_size(dt), ce = m->chunk_bytes / es;
  const int mean_by = op == OPTIC_POD_MEAN ? n : 1;
  if (n == 1) {
    pod_divide(m->kernels, dt, count, work, mean_by);
    return OPTIC_OK;
  }
  for (int s = 0; s < n - 1; s++) {
    size_t soff, slen, roff, rlen;
    optic_pod_shard(count, n, mod(p - s - 1, n), &soff, &slen);
    optic_pod_shard(count, n, mod(p - s - 2, n), &roff, &rlen);
    size_t sc = (slen + ce - 1) / ce, rc = (rlen + ce - 1) / ce, chunks = sc > rc ? sc : rc;
    MPI_Request rreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (size_t c = 0; c <= chunks; c++) {
      /* post chunk c, then finish chunk c-1 */
      if (c < chunks) {
        int slot = (int)(c & 1);
        if (sreq[slot] != MPI_REQUEST_NULL) {
          optic_status st = wait_all(m, &sreq[slot], 1, deadline, what);
          if (st != OPTIC_OK) return st;
        }
        if (c < rc) {
          size_t len = rlen - c * ce < ce ? rlen - c * ce : ce;
          int rcd = MPI_Irecv(m->tmp[slot], (int)(len * es), MPI_BYTE, pred, TAG, m->comm, &rreq[slot]);
          if (rcd != MPI_SUCCESS) return mpi_error(m, rcd, what);
        }
        if (c < sc) {
          size_t len = slen - c * ce < ce ? slen - c * ce : ce;
          int rcd = MPI_Isend(work + (soff + c * ce) * es, (int)(len * es), MPI_BYTE, succ, TAG, m->comm, &sreq[slot]);
          if (rcd != MPI_SUCCESS) return mpi_error(m, rcd, what);
        }
      }
      if (c > 0 && c - 1 < rc) {
        int slot = (int)((c - 1) & 1);
        optic_status st = wait_all(m, &rreq[slot], 1, deadline, what);
        if (st != OPTIC_OK) return st;
        size_t at = c - 1, len = rlen - at * ce < ce ? rlen - at * ce : ce;
        char *y = work + (roff + at * ce) * es;
        pod_reduce_into(m->kernels, dt, op, len, m->tmp[slot], y);
        if (s == n - 2) pod_divide(m->kernels, dt, len, y, mean_by);
      }
    }
    optic_status st = wait_all(m, sreq, 2, deadline, what);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

/* Ring all-gather on work where rank p holds segment p: step t sends segment
 * p-t and receives segment p-t-1 straight into place. */
static optic_status ring_ag(optic_pod_mpi_t *m, char *work, size_t count, optic_dtype dt, uint64_t deadline,
                            const char *what) {
  const int n = m->size, p = m->rank, pred = mod(p - 1, n), succ = mod(p + 1, n);
  const size_t es = optic_dtype_size(dt);
  for (int t = 0; t < n - 1; t++) {
    size_t soff, slen, roff, rlen;
    optic_pod_shard(count, n, mod(p - t, n), &soff, &slen);
    optic_pod_shard(count, n, mod(p - t - 1, n), &roff, &rlen);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    /* whole segments: the transport pipelines large messages itself */
    int rc = MPI_Irecv(work + roff * es, (int)(rlen * es), MPI_BYTE, pred, TAG, m->comm, &req[0]);
    if (rc == MPI_SUCCESS) rc = MPI_Isend(work + soff * es, (int)(slen * es), MPI_BYTE, succ, TAG, m->comm, &req[1]);
    if (rc != MPI_SUCCESS) return mpi_error(m, rc, what);
    optic_status st = wait_all(m, req, 2, deadline, what);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static optic_status check_int_bytes(optic_pod_mpi_t *m, size_t count, optic_dtype dt, const char *what) {
  size_t seg = count / (size_t)m->size + 1;
  if (seg * optic_dtype_size(dt) > (size_t)2147483647) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "pod_mpi %s: a %zu-element segment exceeds MPI's int byte count", what, seg);
  }
  return OPTIC_OK;
}

/* ------------------------------------------------- shared-memory all-reduce */

static optic_status shm_wait(optic_pod_mpi_t *m, int rank, uint64_t target, uint64_t deadline, const char *what) {
  _Atomic uint64_t *p = shm_progress(m, rank);
  for (uint64_t polls = 0;; polls++) {
    if (atomic_load_explicit(p, memory_order_acquire) >= target) return OPTIC_OK;
    if ((polls & 63) == 63) {
      if (optic_now_ns() > deadline) {
        m->broken = true;
        snprintf(m->broken_why, sizeof m->broken_why, "%s timed out on rank %d waiting for rank %d", what, m->rank,
                 rank);
        return optic_fail(OPTIC_ERR_TIMEOUT,
                          "pod_mpi %s on rank %d: rank %d made no progress within %.1f ms (dead, stalled or not "
                          "calling the same collective)",
                          what, m->rank, rank, (double)m->timeout_ns * 1e-6);
      }
      if (polls > 2048) sched_yield();
    }
  }
}

/* Brings the caller's data into this rank's window (nothing when it is there). */
static void shm_load(optic_pod_mpi_t *m, const void *send, const void *recv, size_t bytes) {
  char *w = shm_data(m, m->rank);
  if (recv != w) {
    memcpy(w, send, bytes);
  } else if (send != recv) {
    memmove(w, send, bytes);
  }
}

/* Two ranks: each reduces its own segment (the ring's rank order: ours op
 * the other's, then MEAN's division) chunk by chunk in its window and copies
 * each chunk, still in cache, into the other rank's window, so every byte is
 * read twice and written twice and nothing waits in between. Entry: a rank
 * writes the other's window only after that rank has published its input;
 * exit: a rank returns only after the other has finished writing its window.
 * Same bits as the ring, which for two ranks does the same single op per
 * element. */
static optic_status shm_all_reduce_pair(optic_pod_mpi_t *m, const void *send, void *recv, size_t count, optic_dtype dt,
                                        optic_pod_op op, const char *what) {
  const int p = m->rank, q = 1 - p;
  const size_t es = optic_dtype_size(dt), ce = (size_t)(64 << 10) / es;
  char *w = shm_data(m, p), *qw = shm_data(m, q);
  shm_load(m, send, recv, count * es);
  const uint64_t seq = ++m->shm_seq, deadline = optic_now_ns() + m->timeout_ns;
  _Atomic uint64_t *mine = shm_progress(m, p);
  atomic_store_explicit(mine, SHM_PROGRESS(seq, 1, 0), memory_order_release);
  optic_status st = shm_wait(m, q, SHM_PROGRESS(seq, 1, 0), deadline, what);
  if (st != OPTIC_OK) return st;
  size_t off, seg;
  optic_pod_shard(count, 2, p, &off, &seg);
  for (size_t a = 0; a < seg; a += ce) {
    size_t len = seg - a < ce ? seg - a : ce, at = (off + a) * es;
    pod_reduce_into(m->kernels, dt, op, len, qw + at, w + at);
    if (op == OPTIC_POD_MEAN) pod_divide(m->kernels, dt, len, w + at, 2);
    memcpy(qw + at, w + at, len * es);
  }
  atomic_store_explicit(mine, SHM_PROGRESS(seq, 2, 0), memory_order_release);
  if ((st = shm_wait(m, q, SHM_PROGRESS(seq, 2, 0), deadline, what)) != OPTIC_OK) return st;
  if (recv != w) memcpy(recv, w, count * es);
  return OPTIC_OK;
}

/* The emulated pod's ring (pod/collectives.c) between processes: each rank
 * reads its predecessor's segment directly, chunk by chunk, published through
 * one progress counter per rank; a rank leaves a phase only after its
 * successor has finished reading it. Same segments, same order as the
 * message ring: the same bits. */
static optic_status shm_all_reduce(optic_pod_mpi_t *m, const void *send, void *recv, size_t count, optic_dtype dt,
                                   optic_pod_op op, const char *what) {
  const int n = m->size, p = m->rank, pred = mod(p - 1, n), succ = mod(p + 1, n);
  const size_t es = optic_dtype_size(dt), bytes = count * es;
  char *w = shm_data(m, p), *pw = shm_data(m, pred);
  if (n == 2) return shm_all_reduce_pair(m, send, recv, count, dt, op, what);
  shm_load(m, send, recv, bytes);
  const uint64_t seq = ++m->shm_seq, deadline = optic_now_ns() + m->timeout_ns;
  size_t first_off, max_seg;
  optic_pod_shard(count, n, 0, &first_off, &max_seg);
  size_t ce = (size_t)(64 << 10) / es;
  if (max_seg / ce >= (1u << 24) / (size_t)n) ce = max_seg / ((1u << 24) / (size_t)n - 1) + 1;
  const size_t C = (max_seg + ce - 1) / ce;
  _Atomic uint64_t *mine = shm_progress(m, p);
  optic_status st;
  for (int phase = 1; phase <= 2; phase++) {
    atomic_store(mine, SHM_PROGRESS(seq, phase, 0));
    for (int s = 0; s < n - 1; s++) {
      size_t off, seg;
      optic_pod_shard(count, n, phase == 1 ? mod(p - s - 2, n) : mod(p - s - 1, n), &off, &seg);
      for (size_t c = 0; c < C; c++) {
        uint64_t need = s == 0 ? 0 : (uint64_t)(s - 1) * C + c + 1;
        if ((st = shm_wait(m, pred, SHM_PROGRESS(seq, phase, need), deadline, what)) != OPTIC_OK) return st;
        size_t a = c * ce, b = a + ce < seg ? a + ce : seg;
        if (a < b) {
          size_t at = (off + a) * es;
          if (phase == 1) {
            pod_reduce_into(m->kernels, dt, op, b - a, pw + at, w + at);
            if (s == n - 2 && op == OPTIC_POD_MEAN) pod_divide(m->kernels, dt, b - a, w + at, n);
          } else {
            memcpy(w + at, pw + at, (b - a) * es);
          }
        }
        atomic_store_explicit(mine, SHM_PROGRESS(seq, phase, (uint64_t)s * C + c + 1), memory_order_release);
      }
    }
    if (phase == 2 && recv != w) memcpy(recv, w, bytes);
    if ((st = shm_wait(m, succ, SHM_PROGRESS(seq, phase, (uint64_t)(n - 1) * C), deadline, what)) != OPTIC_OK) {
      return st;
    }
  }
  return OPTIC_OK;
}

optic_status optic_pod_mpi_all_reduce(optic_pod_mpi_t *m, const void *send, void *recv, size_t count, optic_dtype dtype,
                                      optic_pod_op op) {
  const char *what = "all_reduce";
  optic_status st = enter(m, what, dtype, true, op, count, send, recv);
  if (st == OPTIC_OK) st = check_int_bytes(m, count, dtype, what);
  if (st != OPTIC_OK) return st;
  if (count == 0) return OPTIC_OK; /* every rank has the same count: nothing to exchange */
  const size_t es = optic_dtype_size(dtype);
  if (m->shm_map != NULL && count * es <= m->shm_bytes) {
    char *w = shm_data(m, m->rank);
    if ((const char *)send == w && recv != w) {
      /* only rank-local arguments are checked here, before any protocol step */
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "pod_mpi all_reduce: send is the shared window but recv is not (use it in place)");
    }
    return shm_all_reduce(m, send, recv, count, dtype, op, what);
  }
  if (send != recv) memmove(recv, send, count * es);
  uint64_t deadline = optic_now_ns() + m->timeout_ns;
  if ((st = ring_rs(m, recv, count, dtype, op, deadline, what)) != OPTIC_OK) return st;
  return ring_ag(m, recv, count, dtype, deadline, what);
}

optic_status optic_pod_mpi_all_reduce_mean(optic_pod_mpi_t *m, optic_tensor *t) {
  if (t == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi all_reduce_mean: tensor is NULL");
  size_t n = 0;
  optic_status st = optic_shape_elements(&t->shape, &n);
  if (st != OPTIC_OK) return st;
  return optic_pod_mpi_all_reduce(m, t->data, t->data, n, t->dtype, OPTIC_POD_MEAN);
}

optic_status optic_pod_mpi_reduce_scatter(optic_pod_mpi_t *m, const void *send, void *recv, size_t count,
                                          optic_dtype dtype, optic_pod_op op) {
  const char *what = "reduce_scatter";
  size_t off = 0, len = 0;
  if (m != NULL) optic_pod_shard(count, m->size, m->rank, &off, &len);
  optic_status st = enter(m, what, dtype, true, op, count, send, len ? recv : send);
  if (st == OPTIC_OK) st = check_int_bytes(m, count, dtype, what);
  if (st != OPTIC_OK) return st;
  if (count == 0) return OPTIC_OK;
  const size_t es = optic_dtype_size(dtype), bytes = count * es;
  if (bytes > m->scratch_bytes) {
    /* grows once; later calls of this size allocate nothing */
    optic_free(NULL, m->scratch, m->scratch_bytes, 64);
    m->scratch = NULL;
    m->scratch_bytes = 0;
    if ((st = alloc_touched(bytes, &m->scratch)) != OPTIC_OK) {
      m->broken = true;
      snprintf(m->broken_why, sizeof m->broken_why, "scratch allocation failed");
      return st;
    }
    m->scratch_bytes = bytes;
  }
  if (bytes > 0) memcpy(m->scratch, send, bytes);
  uint64_t deadline = optic_now_ns() + m->timeout_ns;
  if ((st = ring_rs(m, m->scratch, count, dtype, op, deadline, what)) != OPTIC_OK) return st;
  if (len > 0) memmove(recv, m->scratch + off * es, len * es);
  return OPTIC_OK;
}

optic_status optic_pod_mpi_all_gather(optic_pod_mpi_t *m, const void *send, void *recv, size_t count,
                                      optic_dtype dtype) {
  const char *what = "all_gather";
  size_t off = 0, len = 0;
  if (m != NULL) optic_pod_shard(count, m->size, m->rank, &off, &len);
  optic_status st = enter(m, what, dtype, false, OPTIC_POD_SUM, count, len ? send : recv, recv);
  if (st == OPTIC_OK) st = check_int_bytes(m, count, dtype, what);
  if (st != OPTIC_OK) return st;
  if (count == 0) return OPTIC_OK;
  const size_t es = optic_dtype_size(dtype);
  if (len > 0 && (char *)recv + off * es != (const char *)send) memmove((char *)recv + off * es, send, len * es);
  return ring_ag(m, recv, count, dtype, optic_now_ns() + m->timeout_ns, what);
}

optic_status optic_pod_mpi_broadcast(optic_pod_mpi_t *m, void *buf, size_t count, optic_dtype dtype, int root) {
  const char *what = "broadcast";
  optic_status st = enter(m, what, dtype, false, OPTIC_POD_SUM, count, buf, buf);
  if (st != OPTIC_OK) return st;
  if (root < 0 || root >= m->size) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_mpi broadcast: root %d outside 0..%d", root, m->size - 1);
  }
  const int n = m->size, dist = mod(m->rank - root, n);
  if (n == 1 || count == 0) return OPTIC_OK;
  const size_t es = optic_dtype_size(dtype), ce = m->chunk_bytes / es, chunks = (count + ce - 1) / ce;
  const int pred = mod(m->rank - 1, n), succ = mod(m->rank + 1, n);
  const bool forwards = dist != n - 1;
  const uint64_t deadline = optic_now_ns() + m->timeout_ns;
  MPI_Request sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  for (size_t c = 0; c < chunks; c++) {
    char *at = (char *)buf + c * ce * es;
    int bytes = (int)((count - c * ce < ce ? count - c * ce : ce) * es);
    if (dist != 0) {
      MPI_Request r;
      int rc = MPI_Irecv(at, bytes, MPI_BYTE, pred, TAG, m->comm, &r);
      if (rc != MPI_SUCCESS) return mpi_error(m, rc, what);
      if ((st = wait_all(m, &r, 1, deadline, what)) != OPTIC_OK) return st;
    }
    if (forwards) {
      int slot = (int)(c & 1);
      if (sreq[slot] != MPI_REQUEST_NULL && (st = wait_all(m, &sreq[slot], 1, deadline, what)) != OPTIC_OK) return st;
      int rc = MPI_Isend(at, bytes, MPI_BYTE, succ, TAG, m->comm, &sreq[slot]);
      if (rc != MPI_SUCCESS) return mpi_error(m, rc, what);
    }
  }
  return wait_all(m, sreq, 2, deadline, what);
}

optic_status optic_pod_mpi_barrier(optic_pod_mpi_t *m) {
  optic_status st = enter(m, "barrier", OPTIC_F32, false, OPTIC_POD_SUM, 0, NULL, NULL);
  if (st != OPTIC_OK) return st;
  MPI_Request r;
  int rc = MPI_Ibarrier(m->comm, &r);
  if (rc != MPI_SUCCESS) return mpi_error(m, rc, "barrier");
  return wait_all(m, &r, 1, optic_now_ns() + m->timeout_ns, "barrier");
}

#else /* !OPTIC_HAVE_MPI */

static optic_status no_mpi(const char *what) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED,
                    "pod_mpi %s: optic was built without MPI (install libopenmpi-dev and reconfigure)", what);
}
optic_status optic_pod_mpi_create(const optic_pod_mpi_options *o, optic_pod_mpi_t **out) {
  (void)o;
  if (out) *out = NULL;
  return no_mpi("create");
}
void optic_pod_mpi_destroy(optic_pod_mpi_t *m) { (void)m; }
void *optic_pod_mpi_window(optic_pod_mpi_t *m, size_t *bytes) {
  (void)m;
  if (bytes) *bytes = 0;
  return NULL;
}
int optic_pod_mpi_rank(const optic_pod_mpi_t *m) {
  (void)m;
  return -1;
}
int optic_pod_mpi_size(const optic_pod_mpi_t *m) {
  (void)m;
  return 0;
}
optic_status optic_pod_mpi_barrier(optic_pod_mpi_t *m) {
  (void)m;
  return no_mpi("barrier");
}
optic_status optic_pod_mpi_all_reduce(optic_pod_mpi_t *m, const void *s, void *r, size_t n, optic_dtype d,
                                      optic_pod_op op) {
  (void)m, (void)s, (void)r, (void)n, (void)d, (void)op;
  return no_mpi("all_reduce");
}
optic_status optic_pod_mpi_reduce_scatter(optic_pod_mpi_t *m, const void *s, void *r, size_t n, optic_dtype d,
                                          optic_pod_op op) {
  (void)m, (void)s, (void)r, (void)n, (void)d, (void)op;
  return no_mpi("reduce_scatter");
}
optic_status optic_pod_mpi_all_gather(optic_pod_mpi_t *m, const void *s, void *r, size_t n, optic_dtype d) {
  (void)m, (void)s, (void)r, (void)n, (void)d;
  return no_mpi("all_gather");
}
optic_status optic_pod_mpi_broadcast(optic_pod_mpi_t *m, void *b, size_t n, optic_dtype d, int root) {
  (void)m, (void)b, (void)n, (void)d, (void)root;
  return no_mpi("broadcast");
}
optic_status optic_pod_mpi_all_reduce_mean(optic_pod_mpi_t *m, optic_tensor *t) {
  (void)m, (void)t;
  return no_mpi("all_reduce_mean");
}
#endif

/* Built with or without MPI: the figures optic_pod_mpi_create uses for 0. */
optic_pod_mpi_options optic_pod_mpi_options_default(void) {
  optic_pod_mpi_options o = {.size = sizeof o, .timeout_ns = 60000000000ull, .chunk_bytes = (size_t)4 << 20};
  return o;
}
