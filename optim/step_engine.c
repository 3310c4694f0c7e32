/* The step engine (include/optic/optim.h, docs/optim.md "Step engine"):
 * per step, look up (or build and compile) each group's update program,
 * all-reduce the gradients over the pod cores / MPI ranks, run the update
 * through the wrapped optimizer's fused kernels on every replica, and record
 * the phases on the profiler with the programs' estimates. */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim/step_engine_internal.h"

typedef struct cache_entry {
  uint8_t *key;
  size_t len;
  optic_program_t *program;
  double est_ns, est_bytes;
} cache_entry;

struct optic_step_engine {
  optic_step_engine_options o;
  optic_machine machine;
  const optic_allocator *alloc;
  optic_optim_t *opt;
  int32_t cores;
  optic_optim_t **replicas;               /* [cores]; [0] is opt; others built by ensure_replicas */
  size_t replica_groups, replica_tensors; /* opt's layout when the replicas were built */
  bool replicas_built;
  optic_pod_t *pod;
  bool own_pod;
  optic_profiler_t *prof;
  bool own_prof;
  cache_entry *cache;
  size_t ncache, capcache;
  size_t *group_entry; /* per group: its cache entry in the last prepare */
  size_t ngroups, capgroups;
  uint8_t *keybuf;
  size_t keycap;
  /* per-step figures from the last prepare */
  double est_update_ns, est_bytes, update_bytes, allreduce_bytes, est_allreduce_ns;
  /* metrics */
  uint64_t steps, skipped, hits, misses;
  double last_step_ns, total_step_ns, last_allreduce_ns, last_update_ns, bytes_moved, compile_ns;
  optic_optim_step_report last_report;
};

optic_step_engine_options optic_step_engine_options_default(void) {
  return (optic_step_engine_options){
      .size = sizeof(optic_step_engine_options), .cores = 0, .average_gradients = true, .level = OPTIC_OPT_FULL};
}

static void *grow(const optic_allocator *a, void *old, size_t old_bytes, size_t new_bytes, optic_status *st) {
  void *p = NULL;
  *st = optic_alloc(a, new_bytes, 0, &p);
  if (*st != OPTIC_OK) return NULL;
  if (old != NULL) {
    memcpy(p, old, old_bytes);
    optic_free(a, old, old_bytes, 0);
  }
  return p;
}

optic_status optic_step_engine_create(optic_optim_t *opt, const optic_step_engine_options *options,
                                      optic_step_engine_t **out) {
  const char *what = "step_engine_create";
  if (out == NULL || opt == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL %s", what, out ? "opt" : "out");
  *out = NULL;
  optic_step_engine_options o = optic_step_engine_options_default();
  if (options != NULL) {
    if (options->size < offsetof(optic_step_engine_options, cores) + sizeof(int32_t) ||
        options->size > sizeof(optic_step_engine_options))
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: options.size %zu (expected %zu)", what, options->size,
                        sizeof(optic_step_engine_options));
    memcpy(&o, options, options->size);
  }
  if (o.level != OPTIC_OPT_NONE && o.level != OPTIC_OPT_BASIC && o.level != OPTIC_OPT_FULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: level %d", what, (int)o.level);
  int32_t cores = o.cores;
  if (cores == 0) cores = o.pod != NULL ? optic_pod_cores(o.pod) : 1;
  if (cores < 1 || cores > 64)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: cores %d (1..64)", what, (int)o.cores);
  if (o.pod != NULL && optic_pod_cores(o.pod) != cores)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: cores %d but the pod has %d", what, (int)cores,
                      optic_pod_cores(o.pod));
  optic_machine machine;
  optic_status st = o.machine != NULL ? optic_machine_validate(o.machine) : optic_machine_host(&machine);
  if (st != OPTIC_OK) return st;
  if (o.machine != NULL) machine = *o.machine;

  const optic_allocator *a = opt->alloc;
  optic_step_engine_t *e = NULL;
  st = optic_alloc(a, sizeof *e, 0, (void **)&e);
  if (st != OPTIC_OK) return st;
  memset(e, 0, sizeof *e);
  e->o = o;
  e->o.machine = NULL; /* copied into e->machine */
  e->machine = machine;
  e->alloc = a;
  e->opt = opt;
  e->cores = cores;
  st = optic_alloc(a, sizeof(optic_optim_t *) * (size_t)cores, 0, (void **)&e->replicas);
  if (st == OPTIC_OK) {
    memset(e->replicas, 0, sizeof(optic_optim_t *) * (size_t)cores);
    e->replicas[0] = opt;
  }
  if (st == OPTIC_OK && cores > 1 && o.pod == NULL) {
    optic_pod_options po = {.size = sizeof po, .cores = cores};
    st = optic_pod_create(&po, &e->pod);
    e->own_pod = st == OPTIC_OK;
  } else {
    e->pod = o.pod;
  }
  if (st == OPTIC_OK && o.profiler == NULL && o.profile) {
    optic_profiler_options pr = optic_profiler_options_default();
    pr.enabled = true;
    st = optic_profiler_create(&pr, &e->prof);
    e->own_prof = st == OPTIC_OK;
  } else if (st == OPTIC_OK) {
    e->prof = o.profiler;
  }
  if (st != OPTIC_OK) {
    optic_step_engine_destroy(e);
    return st;
  }
  *out = e;
  return OPTIC_OK;
}

static void destroy_replicas(optic_step_engine_t *e) {
  for (int32_t c = 1; c < e->cores; c++) {
    optic_optim_destroy(e->replicas[c]);
    e->replicas[c] = NULL;
  }
  e->replicas_built = false;
}

void optic_step_engine_destroy(optic_step_engine_t *e) {
  if (e == NULL) return;
  const optic_allocator *a = e->alloc;
  if (e->replicas != NULL) {
    destroy_replicas(e);
    optic_free(a, e->replicas, sizeof(optic_optim_t *) * (size_t)e->cores, 0);
  }
  for (size_t i = 0; i < e->ncache; i++) {
    optic_program_destroy(e->cache[i].program);
    optic_free(a, e->cache[i].key, e->cache[i].len, 0);
  }
  if (e->cache != NULL) optic_free(a, e->cache, e->capcache * sizeof(cache_entry), 0);
  if (e->group_entry != NULL) optic_free(a, e->group_entry, e->capgroups * sizeof(size_t), 0);
  if (e->keybuf != NULL) optic_free(a, e->keybuf, e->keycap, 0);
  if (e->own_pod) optic_pod_destroy(e->pod);
  if (e->own_prof) optic_profiler_destroy(e->prof);
  optic_free(a, e, sizeof *e, 0);
}

/* ------------------------------------------------------------ preparing */

static void record(optic_step_engine_t *e, const char *name, const char *detail, int32_t core, uint64_t t0, uint64_t t1,
                   double est_ns, double bytes) {
  if (e->prof == NULL) return;
  optic_profile_event ev;
  memset(&ev, 0, sizeof ev);
  strncpy(ev.name, name, sizeof ev.name - 1);
  strncpy(ev.detail, detail, sizeof ev.detail - 1);
  ev.kind = OPTIC_PROFILE_USER;
  ev.device = 0;
  ev.thread = core;
  ev.node = -1;
  ev.run = e->steps;
  ev.program = e;
  ev.start_ns = t0;
  ev.end_ns = t1 < t0 ? t0 : t1;
  ev.bytes = bytes;
  ev.est_ns = est_ns;
  (void)optic_profiler_record(e->prof, &ev); /* only fails on bad arguments, which these are not */
}

/* Real bytes the fused update moves per element: θ read and written, g
 * read, every state slot read and written; LAMB's two passes read θ, g, m,
 * v and write m, v, then read θ, m, v and write θ. */
static double bytes_per_element(const optic_optim_hparams *h) {
  if (h->kind == OPTIC_OPTIM_KIND_LAMB) return 40.0;
  int slots = 0;
  for (int s = 0; s < OPTIM_SLOT_COUNT; s++) slots += optim_group_has_slot(h, (optim_slot)s);
  return 4.0 * (3.0 + 2.0 * slots);
}

static optic_status compile_group(optic_step_engine_t *e, const optim_group *gr, cache_entry *ce) {
  int64_t elements = 0;
  for (size_t i = 0; i < gr->count; i++) elements += (int64_t)gr->tensors[i].n;
  optic_module_t *m = NULL;
  const uint64_t t0 = optic_now_ns();
  optic_status st = step_engine_build_graph(&gr->hp, elements, &m);
  if (st != OPTIC_OK) return st;
  optic_compile_options co = optic_compile_options_default();
  co.level = e->o.level;
  co.machine = &e->machine;
  /* Compiled (for the cost counts) for the threads the optimizer's kernels run on. */
  co.threads = e->opt->opts.threads > 0 ? e->opt->opts.threads : omp_get_max_threads();
  st = optic_compile(m, &co, &ce->program);
  optic_module_destroy(m);
  if (st != OPTIC_OK) return st;
  optic_program_summary sum;
  st = optic_program_summary_get(ce->program, &sum);
  if (st != OPTIC_OK) return st;
  ce->est_bytes = sum.cost.bytes_accessed;
  /* The time is the fused kernels' (they run the update), not the program's. */
  st = optic_optim_step_estimate_ns(&e->machine, gr->hp.kind, (size_t)elements,
                                    (double)elements * bytes_per_element(&gr->hp), co.threads, e->opt->opts.profile,
                                    &ce->est_ns);
  if (st != OPTIC_OK) return st;
  const uint64_t t1 = optic_now_ns();
  e->compile_ns += (double)(t1 - t0);
  if (e->prof != NULL) {
    optic_status rs = optic_profiler_record_compile(e->prof, &sum.passes, sum.compile_seconds, ce->program, t0);
    if (rs != OPTIC_OK) return rs;
  }
  return OPTIC_OK;
}

static optic_status ensure_replicas(optic_step_engine_t *e) {
  const optic_optim_t *opt = e->opt;
  if (e->cores == 1) return OPTIC_OK;
  if (e->replicas_built && e->replica_groups == opt->group_count && e->replica_tensors == opt->tensor_count)
    return OPTIC_OK;
  destroy_replicas(e);
  optic_optim_state *state = NULL;
  optic_status st = optic_optim_state_export(opt, &state);
  optic_shape *shapes = NULL;
  size_t maxc = 1;
  for (size_t g = 0; g < opt->group_count; g++) maxc = opt->groups[g].count > maxc ? opt->groups[g].count : maxc;
  if (st == OPTIC_OK) st = optic_alloc(e->alloc, maxc * sizeof *shapes, 0, (void **)&shapes);
  for (int32_t c = 1; c < e->cores && st == OPTIC_OK; c++) {
    st = optic_optim_create(&opt->opts, &e->replicas[c]);
    for (size_t g = 0; g < opt->group_count && st == OPTIC_OK; g++) {
      const optim_group *gr = &opt->groups[g];
      for (size_t i = 0; i < gr->count; i++) shapes[i] = gr->tensors[i].shape;
      st = optic_optim_add_group(e->replicas[c], &gr->hp, gr->count, shapes, NULL);
    }
    if (st == OPTIC_OK) st = optic_optim_state_import(e->replicas[c], state);
  }
  if (shapes != NULL) optic_free(e->alloc, shapes, maxc * sizeof *shapes, 0);
  optic_optim_state_destroy(state);
  if (st != OPTIC_OK) {
    destroy_replicas(e);
    return st;
  }
  e->replicas_built = true;
  e->replica_groups = opt->group_count;
  e->replica_tensors = opt->tensor_count;
  return OPTIC_OK;
}

/* Looks every group's program up (compiling on a miss), builds replicas
 * when the layout changed, and refreshes the per-step estimates. */
static optic_status prepare(optic_step_engine_t *e) {
  const optic_optim_t *opt = e->opt;
  optic_status st = OPTIC_OK;
  if (opt->group_count > e->capgroups) {
    size_t cap = opt->group_count * 2;
    size_t *p = grow(e->alloc, e->group_entry, e->capgroups * sizeof(size_t), cap * sizeof(size_t), &st);
    if (p == NULL) return st;
    e->group_entry = p;
    e->capgroups = cap;
  }
  e->ngroups = 0; /* set once every group has its entry */
  double est_ns = 0, est_bytes = 0, bytes = 0, elements = 0;
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    const size_t len = step_engine_group_key(gr, NULL, 0);
    if (len > e->keycap) {
      uint8_t *k = grow(e->alloc, NULL, 0, len * 2, &st); /* old key not needed */
      if (k == NULL) return st;
      if (e->keybuf != NULL) optic_free(e->alloc, e->keybuf, e->keycap, 0);
      e->keybuf = k;
      e->keycap = len * 2;
    }
    step_engine_group_key(gr, e->keybuf, e->keycap);
    size_t hit = e->ncache;
    for (size_t i = 0; i < e->ncache; i++)
      if (e->cache[i].len == len && memcmp(e->cache[i].key, e->keybuf, len) == 0) {
        hit = i;
        break;
      }
    if (hit < e->ncache) {
      e->hits++;
    } else {
      e->misses++;
      if (e->ncache == e->capcache) {
        size_t cap = e->capcache ? e->capcache * 2 : 4;
        cache_entry *c = grow(e->alloc, e->cache, e->capcache * sizeof *c, cap * sizeof *c, &st);
        if (c == NULL) return st;
        e->cache = c;
        e->capcache = cap;
      }
      cache_entry ce = {.len = len};
      st = optic_alloc(e->alloc, len, 0, (void **)&ce.key);
      if (st != OPTIC_OK) return st;
      memcpy(ce.key, e->keybuf, len);
      st = compile_group(e, gr, &ce);
      if (st != OPTIC_OK) {
        optic_program_destroy(ce.program);
        optic_free(e->alloc, ce.key, len, 0);
        return st;
      }
      e->cache[e->ncache++] = ce;
    }
    e->group_entry[g] = hit;
    est_ns += e->cache[hit].est_ns;
    est_bytes += e->cache[hit].est_bytes;
    double n = 0;
    for (size_t i = 0; i < gr->count; i++) n += (double)gr->tensors[i].n;
    elements += n;
    bytes += n * bytes_per_element(&gr->hp);
  }
  e->ngroups = opt->group_count;
  e->est_update_ns = est_ns;
  e->est_bytes = est_bytes;
  e->update_bytes = bytes;
  int ranks = e->o.mpi != NULL ? optic_pod_mpi_size(e->o.mpi) : 1;
  if (ranks < 1) ranks = 1;
  const double k = (double)e->cores * ranks;
  const bool reduce = e->o.average_gradients && k > 1;
  e->allreduce_bytes = reduce ? 4.0 * elements : 0.0;
  /* Ring all-reduce: each core sends and receives 2(k−1)/k of the buffer,
   * each moved byte a read of the peer's chunk plus a read and write of its
   * own, all k cores on one memory: 6(k−1)·B bytes of DRAM traffic. */
  e->est_allreduce_ns = reduce ? 6.0 * (k - 1.0) * e->allreduce_bytes / e->machine.dram_bandwidth * 1e9 : 0.0;
  return ensure_replicas(e);
}

/* ------------------------------------------------------------ stepping */

/* Checks count, dtype and shapes against the optimizer before any
 * collective, so a bad call fails on its own core instead of mismatching
 * the all-reduce. */
static optic_status check_tensors(const optic_optim_t *opt, const optic_tensor *params, const optic_tensor *grads,
                                  size_t count) {
  const char *what = "step_engine_step";
  if (params == NULL || grads == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL params or grads", what);
  if (count != opt->tensor_count)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: count %zu but the optimizer has %zu tensors", what, count,
                      opt->tensor_count);
  size_t i = 0;
  for (size_t g = 0; g < opt->group_count; g++)
    for (size_t t = 0; t < opt->groups[g].count; t++, i++) {
      const optic_shape *s = &opt->groups[g].tensors[t].shape;
      for (int k = 0; k < 2; k++) {
        const optic_tensor *x = k ? &grads[i] : &params[i];
        if (x->dtype != OPTIC_F32)
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s[%zu] is not f32", what, k ? "grads" : "params", i);
        if (!optic_shape_equal(&x->shape, s))
          return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s[%zu] shape differs from the registered one", what,
                            k ? "grads" : "params", i);
        if (x->data == NULL && opt->groups[g].tensors[t].n > 0)
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s[%zu] has NULL data", what, k ? "grads" : "params", i);
      }
    }
  return OPTIC_OK;
}

typedef struct core_times {
  uint64_t allreduce_ns, update_ns;
  optic_optim_step_report report;
} core_times;

static optic_status core_step(optic_step_engine_t *e, int32_t c, optic_pod_core_t *core, const optic_tensor *params,
                              const optic_tensor *grads, size_t count, core_times *times) {
  optic_optim_t *opt = e->replicas[c];
  optic_status st = check_tensors(opt, params, grads, count);
  if (st != OPTIC_OK) return st;
  const uint64_t t0 = optic_now_ns();
  const bool reduce = e->allreduce_bytes > 0;
  for (size_t i = 0; reduce && i < count && st == OPTIC_OK; i++) {
    optic_tensor t = grads[i];
    size_t n = 0;
    optic_shape_elements(&t.shape, &n);
    if (core != NULL && e->o.mpi != NULL)
      st = optic_pod_hier_all_reduce(core, e->o.mpi, t.data, t.data, n, OPTIC_F32, OPTIC_POD_MEAN);
    else if (core != NULL) st = optic_pod_all_reduce_mean(core, &t);
    else st = optic_pod_mpi_all_reduce_mean(e->o.mpi, &t);
  }
  if (st != OPTIC_OK) return st;
  const uint64_t t1 = optic_now_ns();
  if (reduce)
    record(e, "step_engine/all_reduce", core != NULL ? (e->o.mpi ? "hier_mean" : "pod_mean") : "mpi_mean", c, t0, t1,
           e->est_allreduce_ns, e->allreduce_bytes);
  st = optic_optim_step(opt, params, grads, count, &times->report);
  if (st != OPTIC_OK) return st;
  const uint64_t t2 = optic_now_ns();
  record(e, "step_engine/update", optic_optim_kind_name(opt->group_count ? opt->groups[0].hp.kind : 0), c, t1, t2,
         e->est_update_ns, e->update_bytes);
  times->allreduce_ns = t1 - t0;
  times->update_ns = t2 - t1;
  return OPTIC_OK;
}

static void finish_step(optic_step_engine_t *e, uint64_t t0, const core_times *t) {
  const uint64_t t1 = optic_now_ns();
  record(e, "step_engine/step", "", 0, t0, t1, e->est_update_ns + e->est_allreduce_ns,
         e->update_bytes + e->allreduce_bytes);
  e->steps++;
  e->skipped += t->report.skipped;
  e->last_step_ns = (double)(t1 - t0);
  e->total_step_ns += e->last_step_ns;
  e->last_allreduce_ns = (double)t->allreduce_ns;
  e->last_update_ns = (double)t->update_ns;
  e->bytes_moved += e->update_bytes + e->allreduce_bytes;
  e->last_report = t->report;
}

optic_status optic_step_engine_step(optic_step_engine_t *e, const optic_tensor *params, const optic_tensor *grads,
                                    size_t count) {
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_step: NULL engine");
  if (e->cores != 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "step_engine_step: the engine has %d cores: use optic_step_engine_step_replicas or _step_core",
                      (int)e->cores);
  const uint64_t t0 = optic_now_ns();
  optic_status st = check_tensors(e->opt, params, grads, count);
  if (st == OPTIC_OK) st = prepare(e);
  core_times t;
  memset(&t, 0, sizeof t);
  if (st == OPTIC_OK) st = core_step(e, 0, NULL, params, grads, count, &t);
  if (st == OPTIC_OK) finish_step(e, t0, &t);
  return st;
}

typedef struct replicas_call {
  optic_step_engine_t *e;
  const optic_tensor *const *params;
  const optic_tensor *const *grads;
  size_t count;
  core_times t0; /* core 0's */
} replicas_call;

static optic_status replicas_fn(optic_pod_core_t *core, void *user) {
  replicas_call *rc = user;
  const int c = optic_pod_core_index(core);
  core_times t;
  memset(&t, 0, sizeof t);
  optic_status st = core_step(rc->e, c, core, rc->params[c], rc->grads[c], rc->count, &t);
  if (c == 0) rc->t0 = t;
  return st;
}

optic_status optic_step_engine_step_replicas(optic_step_engine_t *e, const optic_tensor *const *params,
                                             const optic_tensor *const *grads, size_t count) {
  const char *what = "step_engine_step_replicas";
  if (e == NULL || params == NULL || grads == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  for (int32_t c = 0; c < e->cores; c++)
    if (params[c] == NULL || grads[c] == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL arrays for core %d", what, (int)c);
  const uint64_t t0 = optic_now_ns();
  optic_status st = check_tensors(e->opt, params[0], grads[0], count);
  if (st == OPTIC_OK) st = prepare(e);
  if (st != OPTIC_OK) return st;
  replicas_call rc = {.e = e, .params = params, .grads = grads, .count = count};
  if (e->cores == 1) {
    st = core_step(e, 0, NULL, params[0], grads[0], count, &rc.t0);
  } else {
    st = optic_pod_run(e->pod, replicas_fn, &rc, NULL);
  }
  if (st == OPTIC_OK) finish_step(e, t0, &rc.t0);
  return st;
}

optic_status optic_step_engine_step_core(optic_step_engine_t *e, optic_pod_core_t *core, const optic_tensor *params,
                                         const optic_tensor *grads, size_t count) {
  const char *what = "step_engine_step_core";
  if (e == NULL || core == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (optic_pod_core_pod(core) != e->pod)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: the core is not on the engine's pod", what);
  const int c = optic_pod_core_index(core);
  const uint64_t t0 = optic_now_ns();
  optic_status st = OPTIC_OK;
  if (c == 0) {
    st = check_tensors(e->opt, params, grads, count);
    if (st == OPTIC_OK) st = prepare(e);
    if (st != OPTIC_OK) return st; /* the others' barrier then fails with PEER_FAILED */
  }
  st = optic_pod_barrier(core);
  if (st != OPTIC_OK) return st;
  core_times t;
  memset(&t, 0, sizeof t);
  st = core_step(e, c, core, params, grads, count, &t);
  if (st != OPTIC_OK) return st;
  /* Core 0 alone writes the metrics, after the barrier: no core still reads
   * them (the profiler events carry the step count). The next call's
   * barrier keeps the others waiting until core 0 has prepared it. */
  st = optic_pod_barrier(core);
  if (st == OPTIC_OK && c == 0) finish_step(e, t0, &t);
  return st;
}

/* ------------------------------------------------------------ inspection */

optic_status optic_step_engine_metrics_get(const optic_step_engine_t *e, optic_step_engine_metrics *out) {
  if (e == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_metrics_get: NULL argument");
  memset(out, 0, sizeof *out);
  out->steps = e->steps;
  out->skipped_steps = e->skipped;
  out->last_step_ns = e->last_step_ns;
  out->mean_step_ns = e->steps ? e->total_step_ns / (double)e->steps : 0.0;
  out->last_allreduce_ns = e->last_allreduce_ns;
  out->last_update_ns = e->last_update_ns;
  out->est_update_ns = e->est_update_ns;
  out->est_allreduce_ns = e->est_allreduce_ns;
  out->est_step_ns = e->est_update_ns + e->est_allreduce_ns;
  out->measured_over_estimated = e->steps && out->est_step_ns > 0 ? out->mean_step_ns / out->est_step_ns : 0.0;
  out->update_bytes_per_step = e->update_bytes;
  out->est_bytes_per_step = e->est_bytes;
  out->allreduce_bytes_per_step = e->allreduce_bytes;
  out->bytes_moved = e->bytes_moved;
  out->cache_hits = e->hits;
  out->cache_misses = e->misses;
  out->cache_hit_rate = e->hits + e->misses ? (double)e->hits / (double)(e->hits + e->misses) : 0.0;
  out->programs = e->ncache;
  out->compile_ns = e->compile_ns;
  out->last_report = e->last_report;
  return OPTIC_OK;
}

optic_status optic_step_engine_program(const optic_step_engine_t *e, size_t g, const optic_program_t **out) {
  if (e == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_program: NULL argument");
  if (g >= e->ngroups)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_program: group %zu of %zu prepared", g, e->ngroups);
  *out = e->cache[e->group_entry[g]].program;
  return OPTIC_OK;
}

optic_profiler_t *optic_step_engine_profiler(const optic_step_engine_t *e) { return e != NULL ? e->prof : NULL; }

optic_status optic_step_engine_state_export(const optic_step_engine_t *e, optic_optim_state **out) {
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_state_export: NULL engine");
  return optic_optim_state_export(e->opt, out);
}

optic_status optic_step_engine_state_import(optic_step_engine_t *e, const optic_optim_state *state) {
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_state_import: NULL engine");
  optic_status st = optic_optim_state_import(e->opt, state);
  for (int32_t c = 1; c < e->cores && st == OPTIC_OK && e->replicas_built; c++)
    st = optic_optim_state_import(e->replicas[c], state);
  return st;
}

/* ------------------------------------------------------------ checkpoints */

optic_status optic_step_engine_save(const optic_step_engine_t *e, const char *const *dirs, size_t ndirs, uint64_t step,
                                    const optic_named_tensor *extra, size_t nextra, const optic_ckpt_meta *meta,
                                    size_t nmeta, const optic_ckpt_save_options *opts) {
  const char *op = "step_engine_save";
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL engine", op);
  char steps[24], skipped[24];
  snprintf(steps, sizeof steps, "%llu", (unsigned long long)e->steps);
  snprintf(skipped, sizeof skipped, "%llu", (unsigned long long)e->skipped);
  const optic_ckpt_meta more[2] = {optic_ckpt_meta_str("engine/steps", steps),
                                   optic_ckpt_meta_str("engine/skipped_steps", skipped)};
  optic_optim_state *state = NULL;
  optic_status st = optic_optim_state_export(e->opt, &state);
  if (st == OPTIC_OK)
    st = optim_ckpt_save(e->opt, state, NULL, dirs, ndirs, step, extra, nextra, meta, nmeta, more, 2, opts, op);
  optic_optim_state_destroy(state);
  return st;
}

static bool meta_u64(optic_ckpt_reader_t *r, const char *key, uint64_t *out, bool *bad) {
  const void *v = NULL;
  size_t len = 0;
  if (optic_ckpt_meta_get(r, key, &v, &len) != OPTIC_OK) return false;
  char buf[24];
  char *end = NULL;
  if (len == 0 || len >= sizeof buf) return *bad = true, false;
  memcpy(buf, v, len);
  buf[len] = '\0';
  *out = strtoull(buf, &end, 10);
  if (*end != '\0' || buf[0] == '-') return *bad = true, false;
  return true;
}

optic_status optic_step_engine_restore(optic_step_engine_t *e, optic_ckpt_reader_t *r,
                                       const optic_named_tensor *targets, size_t n,
                                       const optic_optim_restore_options *ro) {
  const char *op = "step_engine_restore";
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL engine", op);
  optim_ckpt_loaded l;
  optic_status st = optim_ckpt_restore_one(e->opt, r, targets, n, ro, &l, op);
  if (st != OPTIC_OK) return st;
  uint64_t steps = e->steps, skipped = e->skipped;
  bool bad = false, has = meta_u64(r, "engine/steps", &steps, &bad);
  has = meta_u64(r, "engine/skipped_steps", &skipped, &bad) && has;
  if (bad || (has && skipped > steps)) {
    st = optic_fail(OPTIC_ERR_CORRUPT, "%s: \"engine/steps\" or \"engine/skipped_steps\" is not a valid count", op);
  } else {
    /* Validated on the wrapped optimizer first (nothing changes on error);
     * the replicas then take the same state. */
    st = optic_step_engine_state_import(e, &l.state);
  }
  optim_ckpt_loaded_free(&l);
  if (st == OPTIC_OK && has) e->steps = steps, e->skipped = skipped;
  return st;
}

typedef struct engine_latest {
  optic_step_engine_t *e;
  const optic_named_tensor *targets;
  size_t n;
} engine_latest;

static optic_status engine_latest_fn(void *user, optic_ckpt_reader_t *r, const optic_optim_restore_options *ro) {
  engine_latest *el = user;
  return optic_step_engine_restore(el->e, r, el->targets, el->n, ro);
}

optic_status optic_step_engine_restore_latest(optic_step_engine_t *e, const char *const *dirs, size_t ndirs,
                                              const optic_named_tensor *targets, size_t n,
                                              const optic_optim_restore_options *ro,
                                              optic_ckpt_restore_report *report) {
  if (e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine_restore_latest: NULL engine");
  engine_latest el = {e, targets, n};
  return optim_ckpt_restore_latest(dirs, ndirs, ro, report, engine_latest_fn, &el, "step_engine_restore_latest");
}
