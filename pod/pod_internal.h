/* Internal: the emulated pod's shared state and the waiting machinery the
 * coordinator, the collectives and clock sync share. Every cross-core field is
 * an atomic; a core writes only its own slot (plus the pod-wide failure
 * fields), so a wait is always "my peer's counter reached a value". */
#ifndef OPTIC_POD_INTERNAL_H
#define OPTIC_POD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <optic/pod.h>

#include "kernels/binary.h"

/* progress = seq:32 | phase:8 | units:24, compared as one number: a core's
 * progress only grows, so "peer reached (seq, phase, units)" is one load. */
#define POD_PROGRESS(seq, phase, units) (((uint64_t)(seq) << 32) | ((uint64_t)(phase) << 24) | (uint64_t)(units))
#define POD_MAX_UNITS ((1u << 24) - 1)

/* Validates every field of a topology a caller may have filled in by hand
 * (pod/topology.c); the message starts with fn. */
optic_status topology_check(const optic_topology *t, const char *fn);
/* optic_topology_coords and optic_topology_core_at without the checks, for
 * a validated t (a pod's) and an in-range core / coordinates. */
void topology_coords_of(const optic_topology *t, int core, int *coords);
int topology_core_of(const optic_topology *t, const int *coords);

typedef struct pod_slot {
  _Alignas(64) _Atomic uint64_t progress;
  _Atomic(void *) work;          /* the buffer peers read in the current collective */
  _Atomic uint64_t desc;         /* what collective this core is in (mismatch check) */
  _Atomic uint64_t barrier_seq;  /* barriers this core has arrived at */
  _Atomic uint64_t heartbeat_ns; /* last sign of life */
  _Atomic int exited;            /* returned from the SPMD function */
  _Atomic int cpu;               /* CPU this core last ran on (sched_getcpu), -1 unknown */
  /* clock sync mailbox: client -> root request count, root -> client reply */
  _Atomic uint64_t clk_req, clk_rep, clk_done;
  _Atomic int64_t clk_t2, clk_t3;
} pod_slot;

struct optic_pod_core {
  optic_pod_t *pod;
  int index;
  uint64_t calls; /* synchronizing calls made this run (fault injection) */
  uint64_t seq;   /* collectives started this run */
  uint64_t barrier_seq;
  bool crashed; /* injected crash/stall happened: silent from now on */
  void *scratch;
  size_t scratch_bytes;
};

struct optic_pod {
  int n;
  optic_topology topo;
  int ring[OPTIC_POD_MAX_CORES];     /* snake ring order */
  int ring_pos[OPTIC_POD_MAX_CORES]; /* core -> position in ring */
  uint64_t heartbeat_timeout_ns, timeout_ns;
  size_t chunk_bytes;
  optic_allocator allocator;
  const optic_binary_kernels *kernels;
  pod_slot *slot;
  optic_pod_core_t core[OPTIC_POD_MAX_CORES];
  optic_pod_fault fault[OPTIC_POD_MAX_CORES];
  uint64_t fault_at[OPTIC_POD_MAX_CORES];
  /* failure state of the current run */
  _Atomic uint64_t failed_mask;
  _Atomic int aborted;
  _Atomic int reason_set;
  char reason[256];
  /* sleeping waiters: a signaller stores its predicate first, then wakes them */
  _Atomic int sleepers;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  /* results of the last run */
  char message[OPTIC_POD_MAX_CORES][256];
};

/* Returns -1 when the wait is over, else a core still awaited (its heartbeat
 * and exit are checked). */
typedef int (*pod_ready_fn)(const optic_pod_t *pod, const void *ctx);

/* Waits until ready says so, heartbeating; PEER_FAILED / TIMEOUT / INTERNAL as
 * the header describes, with a message starting with `what`. */
optic_status pod_wait(optic_pod_core_t *c, pod_ready_fn ready, const void *ctx, const char *what);
/* Waits until core peer's progress >= target. */
optic_status pod_wait_progress(optic_pod_core_t *c, int peer, uint64_t target, const char *what);
/* Publishes this core's progress and wakes sleepers. */
void pod_set_progress(optic_pod_core_t *c, uint64_t value);
void pod_wake(optic_pod_t *pod);
/* Entry of every synchronizing call: failure state and fault injection. */
optic_status pod_enter(optic_pod_core_t *c, const char *what);
/* Marks the pod aborted (first reason wins) and wakes everyone. */
void pod_abort(optic_pod_t *pod, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pod_heartbeat_now(optic_pod_core_t *c);
/* Core c is about to wait in a call bounded by its own timeout (an MPI
 * collective): its peers stop judging it by its heartbeat until the next
 * pod_heartbeat_now (its heartbeat reads as "in the future"). */
void pod_heartbeat_excuse(optic_pod_core_t *c);

#endif
