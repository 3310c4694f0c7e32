/* optic pod layer: topologies, an emulated pod of cores (OpenMP threads) with
 * a coordinator (barrier with timeout, heartbeats, fault detection, load
 * balancing), deterministic ring/torus collectives, RFC 5905 clock sync, and
 * the same collectives over MPI processes and hosts. docs/pod.md explains the
 * algorithms, the failure model and what each call guarantees.
 *
 * Contents, in order:
 *   1. topology: rings, tori, presets, neighbours, hops, ring order
 *   2. emulated pod: create, run an SPMD function, fault injection
 *   3. calls made by a core: heartbeat, barrier, collectives
 *   4. load balancing
 *   5. clock sync (RFC 5905 on-wire exchange and clock filter)
 *   6. MPI: the collectives over a communicator, hierarchical all-reduce */
#ifndef OPTIC_POD_H
#define OPTIC_POD_H

#include <optic/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- topology */

#define OPTIC_POD_MAX_CORES 64
#define OPTIC_TOPOLOGY_MAX_DIMS 3

/* A pod's shape: 0 dims (one core), 1 (a ring or a line), 2 or 3 (a torus or
 * mesh; wrap[a] says whether axis a has wraparound links). Core ids are
 * row-major over dims (axis 0 slowest). Link figures are for cost estimates
 * only (one-way bytes/s per link, seconds per hop); 0 when unknown. Plain
 * value: build it with the functions below so it is valid. A struct filled
 * in by hand is checked by every call that takes one (INVALID_ARGUMENT,
 * naming the field): ndims 0..3; dims[0..ndims) >= 1 with at most 2^20
 * cores in all; cores equal to their product (1 for ndims 0); wrap[0..ndims)
 * holding false or true; link figures finite and >= 0; name NUL-terminated.
 * dims and wrap past ndims are never read. */
typedef struct optic_topology {
  int32_t ndims;
  int32_t dims[OPTIC_TOPOLOGY_MAX_DIMS];
  bool wrap[OPTIC_TOPOLOGY_MAX_DIMS];
  int32_t cores;
  double link_bytes_per_s;
  double hop_latency_s;
  char name[32];
} optic_topology;

OPTIC_API optic_status optic_topology_single(optic_topology *out);
/* OK if t is a valid topology (the rules above), else INVALID_ARGUMENT with
 * a message naming the first bad field. */
OPTIC_API optic_status optic_topology_validate(const optic_topology *t);
/* n cores on one ring (wrap) or line (no wrap). INVALID_ARGUMENT for n < 1. */
OPTIC_API optic_status optic_topology_ring(int32_t n, bool wrap, optic_topology *out);
/* A 1-, 2- or 3-D torus/mesh. INVALID_ARGUMENT for a zero or negative dim,
 * ndims outside 1..3, or more than 2^20 cores. wrap may be NULL (all wrap). */
OPTIC_API optic_status optic_topology_torus(int32_t ndims, const int32_t *dims, const bool *wrap, optic_topology *out);
/* Published slice shapes with their link figures (docs/pod.md cites the
 * sources): "v4-4x4x4", "v4-4x4x8", "v5e-16x16", "v5p-4x4x4", "v6e-16x16",
 * "v5e-2x2", "v6e-4x4". NOT_FOUND for another name. */
OPTIC_API optic_status optic_topology_preset(const char *name, optic_topology *out);
/* Coordinates of core (ndims entries) and back. INVALID_ARGUMENT out of range. */
OPTIC_API optic_status optic_topology_coords(const optic_topology *t, int32_t core, int32_t *coords);
OPTIC_API optic_status optic_topology_core_at(const optic_topology *t, const int32_t *coords, int32_t *core);
/* Distinct direct neighbours of core (at most 2*ndims), ascending; *count set. */
OPTIC_API optic_status optic_topology_neighbors(const optic_topology *t, int32_t core, int32_t *out, int32_t *count);
/* Minimum number of link hops between two cores (wraparound used where present). */
OPTIC_API optic_status optic_topology_hops(const optic_topology *t, int32_t a, int32_t b, int32_t *hops);
/* A ring order (t->cores entries) in which consecutive cores are direct
 * neighbours wherever the shape allows it: boustrophedon (snake) order through
 * the dims. On a torus whose closing hop is not a link, the last hop is the
 * shortest path back. */
OPTIC_API optic_status optic_topology_ring_order(const optic_topology *t, int32_t *order);
/* Estimated seconds of a bandwidth-optimal all-reduce of `bytes` per core:
 * per axis, 2(k-1)/k * bytes / (link_bytes_per_s * (wrap ? 2 : 1)) plus
 * 2(k-1) hops of latency (docs/pod.md). UNSUPPORTED if the link figures are 0. */
OPTIC_API optic_status optic_topology_allreduce_seconds(const optic_topology *t, double bytes, double *seconds);

/* ----------------------------------------------------------- emulated pod */

/* An emulated pod: N cores, each one OpenMP thread while optic_pod_run runs.
 * Thread safety: create/destroy/inject/run are called from one thread and not
 * concurrently with each other; the optic_pod_core_t calls below are made only
 * by the core thread they belong to, from inside the SPMD function. */
typedef struct optic_pod optic_pod_t;
/* One core's handle, valid only inside the SPMD function on its own thread. */
typedef struct optic_pod_core optic_pod_core_t;

typedef struct optic_pod_options {
  size_t size;                      /* sizeof(optic_pod_options) */
  int32_t cores;                    /* 1..64 (0: topology's, or 1); must equal topology->cores */
  const optic_topology *topology;   /* NULL: a ring of `cores`; copied */
  uint64_t heartbeat_timeout_ns;    /* a core silent this long is failed; 0: 2 s */
  uint64_t timeout_ns;              /* barrier/collective timeout; 0: 60 s */
  size_t chunk_bytes;               /* pipeline chunk; 0: 64 KiB */
  const optic_allocator *allocator; /* scratch buffers; NULL: default */
} optic_pod_options;

/* size set, cores 0, topology NULL, heartbeat_timeout_ns 2 s, timeout_ns
 * 60 s, chunk_bytes 64 KiB, allocator NULL: what NULL options mean. */
OPTIC_API optic_pod_options optic_pod_options_default(void);

/* Creates a pod (no threads start until optic_pod_run). The caller owns *out
 * and frees it with optic_pod_destroy. */
OPTIC_API optic_status optic_pod_create(const optic_pod_options *options, optic_pod_t **out);
OPTIC_API void optic_pod_destroy(optic_pod_t *pod);
OPTIC_API int32_t optic_pod_cores(const optic_pod_t *pod);

/* The per-core SPMD function: returns that core's status. */
typedef optic_status (*optic_pod_fn)(optic_pod_core_t *core, void *user);

/* Runs fn on every core at once (one OpenMP thread each, any number of
 * physical CPUs) and returns when all have returned. statuses (may be NULL)
 * receives each core's status. Returns OK if every core returned OK, else
 * the status of the lowest-numbered failing core, with a message naming it
 * and its own message. Each run starts from a clean state (no failed cores,
 * counters zero); injected faults apply to every run until cleared.
 * UNSUPPORTED if OpenMP gives fewer threads than cores. */
OPTIC_API optic_status optic_pod_run(optic_pod_t *pod, optic_pod_fn fn, void *user, optic_status *statuses);
/* The message core k left with its failing status in the last run ("" if OK).
 * Valid until the next run. */
OPTIC_API const char *optic_pod_core_message(const optic_pod_t *pod, int32_t core);

typedef enum optic_pod_fault {
  OPTIC_POD_FAULT_NONE = 0,
  /* The core dies silently: its call returns OPTIC_ERR_INTERNAL, it never
   * heartbeats again and later calls fail at once; peers find out only from
   * its silence (heartbeat timeout). */
  OPTIC_POD_FAULT_CRASH,
  /* The core hangs inside the call without heartbeating until the run has
   * failed (a peer declares it or any other core failed, or the pod is
   * aborted; at most 50 heartbeat timeouts), then returns PEER_FAILED. */
  OPTIC_POD_FAULT_STALL
} optic_pod_fault;

/* Test hook: core `core` suffers `fault` at its `at_call`-th synchronizing
 * call (1-based; barriers, collectives and clock syncs count, heartbeats do
 * not). A core that gets no CPU for longer than the heartbeat timeout (on a
 * loaded machine) looks dead and may be declared failed before its fault
 * point; its call then returns PEER_FAILED like every other core's.
 * OPTIC_POD_FAULT_NONE clears the core's fault. Not during a run. */
OPTIC_API optic_status optic_pod_inject_fault(optic_pod_t *pod, int32_t core, uint64_t at_call, optic_pod_fault fault);

/* --------------------------------------------- calls made by a core */

OPTIC_API int32_t optic_pod_core_index(const optic_pod_core_t *core);
OPTIC_API int32_t optic_pod_core_count(const optic_pod_core_t *core);
OPTIC_API optic_pod_t *optic_pod_core_pod(optic_pod_core_t *core);

/* Tells the pod this core is alive. Collectives and barriers heartbeat while
 * they wait; a core computing for longer than the heartbeat timeout between
 * calls must call this. Returns PEER_FAILED if a core is known dead (so long
 * work can stop early), else OK. */
OPTIC_API optic_status optic_pod_heartbeat(optic_pod_core_t *core);

/* Returns OK once every core has arrived. TIMEOUT after the pod's timeout
 * (the pod is then aborted: every other core's current and later calls return
 * PEER_FAILED); PEER_FAILED as soon as a core is known dead (crashed, silent
 * past the heartbeat timeout, or returned from the SPMD function). Silence is
 * all a peer can see: a live core kept off its CPU past the heartbeat timeout
 * is declared failed too, and then gets PEER_FAILED itself. */
OPTIC_API optic_status optic_pod_barrier(optic_pod_core_t *core);

typedef enum optic_pod_op {
  OPTIC_POD_SUM = 0,
  OPTIC_POD_MEAN, /* sum, then divided by the core count (IEEE division) */
  OPTIC_POD_MAX,  /* NaN propagates; otherwise as the kernels' maximum */
  OPTIC_POD_MIN
} optic_pod_op;

OPTIC_API const char *optic_pod_op_name(optic_pod_op op);

/* The collectives. Every core of the pod makes the same sequence of calls
 * with the same count, dtype (F32 or F64), op and root. Buffers are the
 * calling core's own; send == recv (in place) is legal where noted; count may
 * be 0. Results are deterministic: every core gets bitwise identical values,
 * and the same inputs give the same bits on every run (the reduction order
 * of each element is fixed by the ring, not by timing). Errors: PEER_FAILED,
 * TIMEOUT (as the barrier), INVALID_ARGUMENT (bad dtype/op, NULL buffer with
 * count > 0, or cores disagreeing on count/dtype/op: the pod is then aborted).
 *
 * Shards: reduce-scatter and all-gather split count elements over N cores as
 * optic_pod_shard does (core k gets `len` elements from `offset`). */
OPTIC_API void optic_pod_shard(size_t count, int32_t cores, int32_t core, size_t *offset, size_t *len);

/* recv[i] = op over cores of send[i], count elements. send == recv allowed.
 * Ring topology: ring reduce-scatter then all-gather along the ring order;
 * 2-D/3-D torus: one ring phase per axis. */
OPTIC_API optic_status optic_pod_all_reduce(optic_pod_core_t *core, const void *send, void *recv, size_t count,
                                            optic_dtype dtype, optic_pod_op op);
/* recv (this core's shard, `len` elements) = op over cores of send[offset ..
 * offset+len) where send has count elements. recv may alias send + offset. */
OPTIC_API optic_status optic_pod_reduce_scatter(optic_pod_core_t *core, const void *send, void *recv, size_t count,
                                                optic_dtype dtype, optic_pod_op op);
/* recv (count elements) = every core's shard concatenated; send holds this
 * core's shard (`len` elements) and may alias recv + offset. */
OPTIC_API optic_status optic_pod_all_gather(optic_pod_core_t *core, const void *send, void *recv, size_t count,
                                            optic_dtype dtype);
/* buf (count elements) on every core = root's buf; chunked and pipelined
 * along the ring order starting at root. */
OPTIC_API optic_status optic_pod_broadcast(optic_pod_core_t *core, void *buf, size_t count, optic_dtype dtype,
                                           int32_t root);
/* The gradient path (step engine, trainers): in-place mean over cores of an
 * f32 tensor. Same as optic_pod_all_reduce(core, t, t, n, F32, MEAN). */
OPTIC_API optic_status optic_pod_all_reduce_mean(optic_pod_core_t *core, optic_tensor *t);

/* ------------------------------------------------------- load balancing */

/* Splits work across cores in proportion to each core's measured throughput
 * (items per second, exponentially weighted), and picks the least-loaded core
 * for the next task. Thread-safe: every call takes an internal lock. */
typedef struct optic_pod_balancer optic_pod_balancer_t;

/* alpha in (0, 1]: weight of the newest measurement (0: 0.3). Cores with no
 * measurement yet count as the mean of the measured ones (or all equal). */
OPTIC_API optic_status optic_pod_balancer_create(int32_t cores, double alpha, optic_pod_balancer_t **out);
OPTIC_API void optic_pod_balancer_destroy(optic_pod_balancer_t *b);
/* core processed `items` in `ns` nanoseconds: updates its throughput EWMA. */
OPTIC_API optic_status optic_pod_balancer_record(optic_pod_balancer_t *b, int32_t core, uint64_t items, uint64_t ns);
/* The current throughput estimate of core (items/s; 0 if never measured). */
OPTIC_API double optic_pod_balancer_rate(optic_pod_balancer_t *b, int32_t core);
/* Splits [0, total) into cores contiguous ranges: core k gets
 * [offsets[k], offsets[k+1]) (offsets has cores+1 entries), sizes
 * proportional to throughput, rounded by largest remainder (sum exact). */
OPTIC_API optic_status optic_pod_balancer_split(optic_pod_balancer_t *b, uint64_t total, uint64_t *offsets);
/* The core whose queued work (assigned minus done) would finish first at its
 * throughput, ties to the lowest index; adds `items` to its queue. */
OPTIC_API optic_status optic_pod_balancer_pick(optic_pod_balancer_t *b, uint64_t items, int32_t *core);
/* core finished `items` of its queue taking ns (records the throughput too). */
OPTIC_API optic_status optic_pod_balancer_done(optic_pod_balancer_t *b, int32_t core, uint64_t items, uint64_t ns);

/* ------------------------------------------------------- clock sync */

/* One RFC 5905 on-wire exchange, timestamps in ns of each side's clock:
 * T1 client send, T2 server receive, T3 server send, T4 client receive.
 * offset = ((T2-T1)+(T3-T4))/2 (server clock minus client clock), delay =
 * (T4-T1)-(T3-T2). The true offset lies within offset +- delay/2 when the
 * clocks do not drift during the exchange. */
typedef struct optic_clock_sample {
  double offset_ns;
  double delay_ns;
  double dispersion_ns; /* precision + PHI*(T4-T1), growing with age */
  double time_ns;       /* client clock at T4 */
} optic_clock_sample;

OPTIC_API void optic_clock_on_wire(int64_t t1, int64_t t2, int64_t t3, int64_t t4, double precision_ns,
                                   optic_clock_sample *out);

/* The RFC 5905 clock filter: the last 8 samples; the peer's offset and delay
 * are those of the minimum-delay sample, dispersion the weighted sum
 * sum(eps_i / 2^(i+1)) over samples sorted by delay, jitter the RMS of the
 * offset differences from the chosen one. Plain value; init before use; one
 * owner at a time (no internal locking). */
#define OPTIC_CLOCK_FILTER_STAGES 8
typedef struct optic_clock_filter {
  optic_clock_sample stage[OPTIC_CLOCK_FILTER_STAGES]; /* stage[0] newest */
  int32_t count;
  double offset_ns, delay_ns, dispersion_ns, jitter_ns; /* read-only results */
} optic_clock_filter;

OPTIC_API void optic_clock_filter_init(optic_clock_filter *f);
/* Shifts the sample in (ages older ones by PHI = 15e-6 * elapsed) and
 * recomputes the results. */
OPTIC_API void optic_clock_filter_add(optic_clock_filter *f, const optic_clock_sample *s);

typedef struct optic_pod_clock_options {
  size_t size;    /* sizeof(optic_pod_clock_options) */
  int32_t root;   /* the reference core (server) */
  int32_t rounds; /* exchanges per core; 0: 8 */
  /* Core `core`'s clock in ns (NULL: optic_now_ns for all). Tests inject skew. */
  int64_t (*clock_ns)(void *user, int32_t core);
  /* Extra one-way delay in ns for the message from `from` to `to` (NULL: none);
   * tests inject jitter and asymmetry. Called by the sending side. */
  uint64_t (*delay_ns)(void *user, int32_t from, int32_t to);
  void *user;
} optic_pod_clock_options;

/* size set, root 0, rounds 8, clock_ns, delay_ns and user NULL. */
OPTIC_API optic_pod_clock_options optic_pod_clock_options_default(void);

/* Collective: every core exchanges `rounds` on-wire samples with root and
 * filters them; *out is this core's filtered estimate of root's clock minus
 * its own (root gets offset 0, delay 0). */
OPTIC_API optic_status optic_pod_clock_sync(optic_pod_core_t *core, const optic_pod_clock_options *options,
                                            optic_clock_filter *out);

/* ------------------------------------------------------------- MPI */

/* True if this build of optic includes the MPI backend (MPI was found at
 * configure time). */
OPTIC_API bool optic_pod_mpi_built(void);

/* Writes the MPI library's version (MPI_Get_library_version, callable before
 * MPI_Init) into buf, truncated to size. OPTIC_ERR_UNSUPPORTED with a message
 * when optic was built without MPI. */
OPTIC_API optic_status optic_pod_mpi_library_version(char *buf, size_t size);

/* The collectives over an MPI communicator, one pod core per rank (and, below,
 * hierarchically with a pod inside each rank): optic's
 * own ring over MPI_Isend/MPI_Irecv with persistent preallocated buffers
 * (no allocation per call), the same shard rule and the same deterministic
 * reduction order as the emulated pod (ranks in communicator order).
 * The caller has initialized MPI (any thread level; calls from one thread
 * per rank) and keeps the communicator alive; optic duplicates it and sets
 * MPI_ERRORS_RETURN on the duplicate. Every wait polls with MPI_Test and
 * gives up with TIMEOUT after timeout_ns; docs/pod.md says what Open MPI can
 * and cannot detect about a dead rank. Thread safety: one thread per handle.
 * Without MPI every call returns UNSUPPORTED. */
typedef struct optic_pod_mpi optic_pod_mpi_t;

typedef struct optic_pod_mpi_options {
  size_t size;         /* sizeof(optic_pod_mpi_options) */
  const void *comm;    /* pointer to an MPI_Comm; NULL: MPI_COMM_WORLD */
  uint64_t timeout_ns; /* per collective; 0: 60 s */
  size_t chunk_bytes;  /* message size of the pipelined ring; 0: 4 MiB */
  size_t max_bytes;    /* scratch preallocated at create (grows on demand); 0: 0 */
  /* Per-rank shared-memory segment for ranks that all share one node: an
   * all-reduce of up to shm_bytes then runs the emulated pod's ring on direct
   * loads and stores instead of messages. 0: off. If the ranks span nodes or
   * the segment cannot be mapped, it stays off (optic_pod_mpi_window NULL). */
  size_t shm_bytes;
} optic_pod_mpi_options;

/* size set, comm NULL (MPI_COMM_WORLD), timeout_ns 60 s, chunk_bytes 4 MiB,
 * max_bytes 0, shm_bytes 0 (off). Available without MPI too. */
OPTIC_API optic_pod_mpi_options optic_pod_mpi_options_default(void);

/* Collective over the communicator (MPI_Comm_dup): every rank creates its
 * handle together. The caller owns *out; destroy (MPI_Comm_free, so also
 * every rank, before MPI_Finalize) is NULL-safe. */
OPTIC_API optic_status optic_pod_mpi_create(const optic_pod_mpi_options *options, optic_pod_mpi_t **out);
OPTIC_API void optic_pod_mpi_destroy(optic_pod_mpi_t *m);
/* This rank's shared-memory segment (shm_bytes, 64-byte aligned, owned by
 * the handle, valid until destroy) or NULL when off. An all-reduce whose recv
 * is this buffer (in place) needs no copy in or out: keep gradients there. */
OPTIC_API void *optic_pod_mpi_window(optic_pod_mpi_t *m, size_t *bytes);
OPTIC_API int32_t optic_pod_mpi_rank(const optic_pod_mpi_t *m);
OPTIC_API int32_t optic_pod_mpi_size(const optic_pod_mpi_t *m);
OPTIC_API optic_status optic_pod_mpi_barrier(optic_pod_mpi_t *m);
OPTIC_API optic_status optic_pod_mpi_all_reduce(optic_pod_mpi_t *m, const void *send, void *recv, size_t count,
                                                optic_dtype dtype, optic_pod_op op);
OPTIC_API optic_status optic_pod_mpi_reduce_scatter(optic_pod_mpi_t *m, const void *send, void *recv, size_t count,
                                                    optic_dtype dtype, optic_pod_op op);
OPTIC_API optic_status optic_pod_mpi_all_gather(optic_pod_mpi_t *m, const void *send, void *recv, size_t count,
                                                optic_dtype dtype);
OPTIC_API optic_status optic_pod_mpi_broadcast(optic_pod_mpi_t *m, void *buf, size_t count, optic_dtype dtype,
                                               int32_t root);
/* In-place f32 mean over ranks (the gradient path). */
OPTIC_API optic_status optic_pod_mpi_all_reduce_mean(optic_pod_mpi_t *m, optic_tensor *t);

/* Hierarchical all-reduce: an emulated pod runs inside each MPI rank and
 * every core of every rank's pod calls this with the same arguments; recv =
 * op over all cores of all ranks (mean divides once by cores x ranks). The
 * pod reduces on shared memory, core 0 alone runs the MPI all-reduce on the
 * pod's result, the pod broadcasts it; bitwise identical on every core of
 * every rank. Core 0 is the thread that called optic_pod_run, so MPI needs
 * only MPI_THREAD_FUNNELED when that thread initialized MPI (else
 * UNSUPPORTED below MPI_THREAD_SERIALIZED). An MPI failure on core 0 aborts
 * the pod, so the other cores return PEER_FAILED instead of waiting. */
OPTIC_API optic_status optic_pod_hier_all_reduce(optic_pod_core_t *core, optic_pod_mpi_t *m, const void *send,
                                                 void *recv, size_t count, optic_dtype dtype, optic_pod_op op);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_POD_H */
