/* The execution context and optic_program_run: checks the caller's tensors,
 * makes sure the arenas, scratch and block registers are there (kept across
 * runs), then runs ONE job on a shared thread team (core/team.h) in
 * which every thread walks the entry's steps (and those of called computations) and takes its share
 * of each op; barriers only where binding found a dependence. Control flow
 * decisions (while conditions, conditional selectors) are read by every
 * thread after a barrier, so all threads take the same path and meet the
 * same barriers. Never prints, never aborts, never waits without bound. */
#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/team.h"
#include "exec/exec_internal.h"
#include "exec/pool.h"
#include "exec/profile.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

/* A buffer lent by the context's pool, kept across runs while big enough. */
typedef struct ctx_buf {
  exec_arena a;
  void *data;
  size_t size;
} ctx_buf;

struct optic_exec_ctx {
  optic_exec_options opts;
  int32_t threads;
  const optic_allocator *alloc;
  exec_pool *pool;
  optic_profiler_t *profiler;
  bool own_profiler;
  /* binding cache */
  exec_bound *bound;
  const void *bound_key;
  double bound_stamp; /* the program's compile_seconds: tells a new program at a reused address apart */
  void ***frames;     /* [thread] -> pointer block for every sequence's params and outs */
  size_t *frame_off;  /* by computation id: offset of its params in a thread's block */
  size_t frame_total;
  /* memory reused across runs */
  ctx_buf arena, scratch, regs;
  ctx_buf *outputs; /* context-allocated outputs */
  ctx_buf *spare;   /* [n_outputs]: output i's other buffer, lent when a run reads the held one (lend_output) */
  int32_t n_outputs;
  /* per-run tables, sized at bind time: a run itself never allocates */
  const optic_type **run_leaves;
  void **run_params, **run_outs;
  exec_run_ranges run_ranges; /* the caller's buffers (exec/alias.c) */
  /* errors raised inside the parallel region */
  optic_status err;
  char err_msg[512];
};

optic_exec_options optic_exec_options_default(void) {
  return (optic_exec_options){.size = sizeof(optic_exec_options),
                              .threads = 0,
                              .device = 0,
                              .max_while_iterations = 1000000,
                              .allocator = NULL};
}

optic_status optic_exec_ctx_create(const optic_exec_options *options, optic_exec_ctx_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_create: out is NULL");
  *out = NULL;
  optic_exec_options o = optic_exec_options_default();
  if (options) {
    if (options->size < sizeof(size_t)) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_create: options.size %zu is too small",
                        options->size);
    }
    size_t n = options->size < sizeof o ? options->size : sizeof o;
    memcpy(&o, options, n);
    o.size = sizeof o;
  }
  if (o.threads < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_create: threads is %d; must be >= 0", (int)o.threads);
  }
  if (o.split_min_elements < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_create: split_min_elements is %lld; must be >= 0",
                      (long long)o.split_min_elements);
  }
  if (o.max_while_iterations < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_create: max_while_iterations is %lld; must be >= 0",
                      (long long)o.max_while_iterations);
  }
  optic_device dev;
  optic_status st = optic_device_get(o.device, &dev);
  if (st != OPTIC_OK) return st;
  optic_exec_ctx_t *c = calloc(1, sizeof *c);
  if (c == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "optic_exec_ctx_create: out of memory");
  c->opts = o;
  c->threads = o.threads > 0 ? o.threads : dev.cores;
  if (c->threads < 1) c->threads = 1;
  /* Only the fields the caller's (possibly older, shorter) struct has; a size
   * too small to hold anything stays so, for exec_pool_create to reject. */
  optic_pool_options po = optic_pool_options_default();
  if (o.pool) {
    size_t n = o.pool->size < sizeof po ? o.pool->size : sizeof po;
    memcpy(&po, o.pool, n);
    po.size = o.pool->size < sizeof(size_t) ? o.pool->size : sizeof po;
  }
  if (o.allocator) po.allocator = o.allocator;
  c->alloc = po.allocator ? po.allocator : optic_default_allocator();
  if ((st = exec_pool_create(&po, &c->pool)) != OPTIC_OK) {
    free(c);
    return st;
  }
  c->profiler = o.profiler;
  if (c->profiler == NULL && o.profile) {
    optic_profiler_options pr = optic_profiler_options_default();
    pr.enabled = true;
    if ((st = optic_profiler_create(&pr, &c->profiler)) != OPTIC_OK) {
      exec_pool_destroy(c->pool);
      free(c);
      return st;
    }
    c->own_profiler = true;
  }
  *out = c;
  return OPTIC_OK;
}

static void buf_free(optic_exec_ctx_t *c, ctx_buf *b) {
  exec_pool_release(c->pool, &b->a);
  *b = (ctx_buf){0};
}

/* Keeps the buffer when it is big enough (steady state: no pool call, no
 * page fault); otherwise trades it for a bigger one from the pool. */
static optic_status buf_reserve(optic_exec_ctx_t *c, ctx_buf *b, size_t bytes) {
  if (bytes <= b->size && (b->data != NULL || bytes == 0)) return OPTIC_OK;
  buf_free(c, b);
  optic_status st = exec_pool_acquire(c->pool, bytes, exec_profiler_active(c->profiler), 0, &b->a);
  if (st != OPTIC_OK) return st;
  b->data = b->a.data;
  b->size = b->a.capacity;
  return OPTIC_OK;
}

static void unbind(optic_exec_ctx_t *c) {
  exec_bound_destroy(c->bound);
  c->bound = NULL;
  c->bound_key = NULL;
  for (int32_t t = 0; c->frames && t < c->threads; t++) free(c->frames[t]);
  free(c->frames);
  c->frames = NULL;
  free(c->frame_off);
  c->frame_off = NULL;
  free(c->run_leaves);
  free(c->run_params);
  free(c->run_outs);
  free(c->run_ranges.r);
  free(c->run_ranges.max_hi);
  c->run_leaves = NULL;
  c->run_params = c->run_outs = NULL;
  c->run_ranges = (exec_run_ranges){0};
}

void optic_exec_ctx_destroy(optic_exec_ctx_t *c) {
  if (c == NULL) return;
  unbind(c);
  buf_free(c, &c->arena);
  buf_free(c, &c->scratch);
  buf_free(c, &c->regs);
  for (int32_t i = 0; i < c->n_outputs; i++) buf_free(c, &c->outputs[i]);
  free(c->outputs);
  for (int32_t i = 0; i < c->n_outputs; i++) buf_free(c, &c->spare[i]);
  free(c->spare);
  exec_pool_destroy(c->pool);
  if (c->own_profiler) optic_profiler_destroy(c->profiler);
  free(c);
}

int32_t optic_exec_ctx_threads(const optic_exec_ctx_t *c) { return c ? c->threads : 0; }

optic_profiler_t *optic_exec_ctx_profiler(const optic_exec_ctx_t *c) { return c ? c->profiler : NULL; }

optic_status optic_exec_ctx_pool_stats(const optic_exec_ctx_t *c, optic_pool_stats *out) {
  if (c == NULL || out == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_exec_ctx_pool_stats: NULL argument");
  exec_pool_stats(c->pool, out);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ binding cache */

static optic_status attach(optic_exec_ctx_t *c, exec_bound *b, const void *key) {
  unbind(c);
  c->bound = b;
  c->bound_key = key;
  c->frame_off = calloc((size_t)b->n_comps + 1, sizeof *c->frame_off);
  c->frames = calloc((size_t)c->threads, sizeof *c->frames);
  if (c->frame_off == NULL || c->frames == NULL) goto oom;
  size_t total = 0;
  for (int32_t k = 0; k < b->n_comps; k++) {
    c->frame_off[k] = total;
    if (b->seqs[k]) total += (size_t)b->seqs[k]->n_param_leaves + (size_t)b->seqs[k]->n_root_leaves;
  }
  c->frame_total = total;
  const exec_seq *entry = b->seqs[b->entry];
  size_t nl = (size_t)(entry->n_param_leaves > entry->n_root_leaves ? entry->n_param_leaves : entry->n_root_leaves);
  c->run_leaves = calloc(nl + 1, sizeof *c->run_leaves);
  c->run_params = calloc((size_t)entry->n_param_leaves + 1, sizeof *c->run_params);
  c->run_outs = calloc((size_t)entry->n_root_leaves + 1, sizeof *c->run_outs);
  size_t nr = (size_t)entry->n_param_leaves + (size_t)entry->n_root_leaves + 1;
  c->run_ranges.r = calloc(nr, sizeof *c->run_ranges.r);
  c->run_ranges.max_hi = calloc(nr, sizeof *c->run_ranges.max_hi);
  if (c->run_leaves == NULL || c->run_params == NULL || c->run_outs == NULL || c->run_ranges.r == NULL ||
      c->run_ranges.max_hi == NULL)
    goto oom;
  for (int32_t t = 0; t < c->threads; t++) {
    if ((c->frames[t] = calloc(total + 1, sizeof(void *))) == NULL) goto oom;
  }
  optic_status st;
  if ((st = buf_reserve(c, &c->arena, b->arena_total)) != OPTIC_OK) goto fail;
  if ((st = buf_reserve(c, &c->scratch, b->scratch_total)) != OPTIC_OK) goto fail;
  if ((st = buf_reserve(c, &c->regs, b->regs_bytes * (size_t)c->threads)) != OPTIC_OK) goto fail;
  return OPTIC_OK;
oom:
  st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "optic_program_run: out of memory binding the program");
fail:
  unbind(c);
  return st;
}

/* ------------------------------------------------------------ running */

typedef struct run_ctx {
  optic_exec_ctx_t *c;
  exec_bound *b;
  unsigned char *arena;
  optic_profiler_t *prof; /* NULL when profiling is off: one branch per op */
  uint64_t run;
  int32_t device;
} run_ctx;

static const char *fusion_kind_name(const exec_step *s) {
  switch (s->attrs.kind == OPTIC_ATTRS_FUSION ? (int)s->attrs.fusion.kind : -1) {
    case OPTIC_FUSION_LOOP: return "loop";
    case OPTIC_FUSION_INPUT: return "input";
    case OPTIC_FUSION_OUTPUT: return "output";
    case OPTIC_FUSION_CUSTOM: return "custom";
    default: return "fusion";
  }
}

static void record_error(run_ctx *rc, optic_status st) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (rc->c->err == OPTIC_OK) {
    rc->c->err = st;
    snprintf(rc->c->err_msg, sizeof rc->c->err_msg, "%s", optic_last_error());
  }
  pthread_mutex_unlock(&lock);
}

void exec_sync(const exec_thread *th) {
  if (th->nt > 1) exec_barrier_wait(th->bar, (unsigned)th->t);
}

static inline void barrier(const exec_thread *th) { exec_sync(th); }

/* This thread's share of a byte copy (64-byte granules). */
static void copy_share(void *dst, const void *src, size_t bytes, const exec_thread *th) {
  if (dst == src || bytes == 0) return;
  size_t lo, hi, g = (bytes + 63) / 64;
  exec_share(g, th->t, th->nt, &lo, &hi);
  lo *= 64, hi *= 64;
  if (hi > bytes) hi = bytes;
  if (lo < hi) memmove((unsigned char *)dst + lo, (const unsigned char *)src + lo, hi - lo);
}

static optic_status run_seq(run_ctx *rc, const exec_seq *q, void **params, void **outs, const exec_thread *th);

static void **frame_params(run_ctx *rc, const exec_seq *q, int t) {
  return rc->c->frames[t] + rc->c->frame_off[q->comp];
}

static optic_status run_call(run_ctx *rc, const exec_seq *callee, const exec_step *s, int32_t first_operand,
                             int32_t n_operands, void **outs, const exec_frame *f, const exec_thread *th) {
  void **params = frame_params(rc, callee, th->t);
  int32_t k = 0;
  for (int32_t i = first_operand; i < first_operand + n_operands; i++) {
    for (int32_t l = s->in_first[i]; l < s->in_first[i + 1]; l++) params[k++] = ref_ptr(f, &s->in[l]);
  }
  return run_seq(rc, callee, params, outs, th);
}

static optic_status run_while(run_ctx *rc, const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const exec_seq *cond = s->callee[0], *body = s->callee[1];
  unsigned char *scratch = th->scratch + s->scratch_offset;
  void *pred_buf = scratch;
  /* state[i]: the while's result leaves; the body writes its root into
   * scratch, which is then copied into the state, but for the leaves it may
   * write over the state itself (exec/bind.c, root_over_param). */
  void *state_ptrs[256], *body_ptrs[256];
  if (s->n_out > 256) return optic_fail(OPTIC_ERR_UNSUPPORTED, "while %s: more than 256 state leaves", s->name);
  size_t off = 64;
  for (int32_t l = 0; l < s->n_out; l++) {
    state_ptrs[l] = ref_ptr(f, &s->out[l]);
    body_ptrs[l] = body->root_over_param && body->root_over_param[l] ? state_ptrs[l] : scratch + off;
    off += ALIGN64(s->out[l].size);
    copy_share(state_ptrs[l], ref_ptr(f, &s->in[l]), s->out[l].size, th);
  }
  barrier(th);
  int64_t cap = rc->c->opts.max_while_iterations;
  for (int64_t it = 0;; it++) {
    void *cond_out[1] = {pred_buf};
    void **cp = frame_params(rc, cond, th->t);
    for (int32_t l = 0; l < s->n_out; l++) cp[l] = state_ptrs[l];
    optic_status st = run_seq(rc, cond, cp, cond_out, th);
    if (st != OPTIC_OK) return st;
    bool go = *(const uint8_t *)pred_buf != 0;
    barrier(th); /* every thread has read the predicate before anyone writes it again */
    if (!go) break;
    if (it >= cap) {
      return optic_fail(OPTIC_ERR_TIMEOUT,
                        "while %s: condition still true after %lld iterations (max_while_iterations)", s->name,
                        (long long)cap);
    }
    void **bp = frame_params(rc, body, th->t);
    for (int32_t l = 0; l < s->n_out; l++) bp[l] = state_ptrs[l];
    if ((st = run_seq(rc, body, bp, body_ptrs, th)) != OPTIC_OK) return st;
    for (int32_t l = 0; l < s->n_out; l++) copy_share(state_ptrs[l], body_ptrs[l], s->out[l].size, th);
    barrier(th);
  }
  return OPTIC_OK;
}

static optic_status run_conditional(run_ctx *rc, const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *sel = ref_ptr(f, &s->in[s->in_first[0]]);
  int32_t idx;
  if (optic_node_type(rc->b->m, optic_node_operand(rc->b->m, s->id, 0))->dtype == OPTIC_PRED) {
    idx = *(const uint8_t *)sel ? 0 : 1;
  } else {
    memcpy(&idx, sel, 4);
    if (idx < 0 || idx >= s->n_branches) idx = s->n_branches - 1;
  }
  void *outs[256];
  if (s->n_out > 256) return optic_fail(OPTIC_ERR_UNSUPPORTED, "conditional %s: more than 256 result leaves", s->name);
  for (int32_t l = 0; l < s->n_out; l++) outs[l] = ref_ptr(f, &s->out[l]);
  return run_call(rc, s->branches[idx], s, 1 + idx, 1, outs, f, th);
}

static optic_status run_step(run_ctx *rc, const exec_step *s, const exec_frame *f, const exec_thread *th) {
  if (s->n_members > 0) return exec_op_row_group(s, f, th);
  switch (s->op) {
    case OPTIC_OP_CALL:
    case OPTIC_OP_FUSION: {
      if (s->input_fusion) return exec_op_input_fusion(s, f, th);
      if (s->prog && (s->dot || s->conv)) return exec_op_output_fusion(s, f, th);
      if (s->prog) return exec_op_fused(s, f, th);
      void *outs[256];
      if (s->n_out > 256) return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: more than 256 result leaves", s->name);
      for (int32_t l = 0; l < s->n_out; l++) outs[l] = ref_ptr(f, &s->out[l]);
      return run_call(rc, s->callee[0], s, 0, s->n_operands, outs, f, th);
    }
    case OPTIC_OP_WHILE: return run_while(rc, s, f, th);
    case OPTIC_OP_CONDITIONAL: return run_conditional(rc, s, f, th);
    case OPTIC_OP_REDUCE:
    case OPTIC_OP_REDUCE_WINDOW:
    case OPTIC_OP_MAP: return exec_op_reduce(s, rc->b->m, f, th);
    case OPTIC_OP_DOT:
    case OPTIC_OP_CONVOLUTION: return exec_op_linalg(s, f, th);
    case OPTIC_OP_DYNAMIC_SLICE:
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE:
    case OPTIC_OP_GATHER:
    case OPTIC_OP_SCATTER:
    case OPTIC_OP_SORT:
    case OPTIC_OP_TOPK:
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: return exec_op_dynamic(s, f, th);
    default:
      if (ew_is_elementwise(s->op)) return exec_op_elementwise(s, f, th);
      return exec_op_layout(s, f, th);
  }
}

/* Errors that every thread raises identically (a while's iteration cap)
 * return at once on every thread; anything else is recorded and the walk
 * goes on, so no thread ever waits at a barrier the others skipped. */
static bool uniform_error(const exec_step *s) {
  return s->op == OPTIC_OP_WHILE || s->op == OPTIC_OP_CALL || s->op == OPTIC_OP_CONDITIONAL ||
         (s->op == OPTIC_OP_FUSION && s->prog == NULL);
}

static optic_status run_seq(run_ctx *rc, const exec_seq *q, void **params, void **outs, const exec_thread *th) {
  exec_frame f = {rc->arena ? rc->arena + q->arena_offset : NULL, params, outs, NULL, 0};
  for (int32_t i = 0; i < q->n_steps; i++) {
    const exec_step *s = &q->steps[i];
    if (s->noop) continue;
    if (s->barrier_before) barrier(th);
    if (s->solo && th->t != 0) continue;
    exec_thread one = *th;
    if (s->solo) one.nt = 1;
    uint64_t t0 = rc->prof ? optic_now_ns() : 0;
    optic_status st = run_step(rc, s, &f, &one);
    if (rc->prof) {
      bool fusion = s->op == OPTIC_OP_FUSION;
      exec_profiler_record_span(rc->prof, fusion ? OPTIC_PROFILE_FUSION : OPTIC_PROFILE_OP, s->name,
                                fusion ? fusion_kind_name(s) : optic_opcode_name(s->op), rc->b->program, rc->device,
                                th->t, s->id, rc->run, t0, optic_now_ns(), s->flops, s->bytes, s->est_ns);
    }
    if (st != OPTIC_OK) {
      if (uniform_error(s)) return st;
      record_error(rc, st);
    }
  }
  barrier(th);
  bool copied = false;
  for (int32_t j = 0; j < q->n_root_leaves; j++) {
    const exec_ref *r = &q->root[j];
    if (r->kind == REF_OUTPUT && r->index == j) continue;
    copy_share(outs[j], ref_ptr(&f, r), q->root_bytes[j], th);
    copied = true;
  }
  if (copied) barrier(th);
  return OPTIC_OK;
}

/* ------------------------------------------------------------ checks and entry */

static void flatten(const optic_type *t, const optic_type **out, int32_t *n, int32_t cap) {
  if (!optic_type_is_tuple(t)) {
    if (*n < cap) out[*n] = t;
    (*n)++;
    return;
  }
  for (int32_t i = 0; i < t->tuple_size; i++) flatten(&t->elements[i], out, n, cap);
}

static optic_status check_tensor(const char *what, int32_t i, const optic_tensor *x, const optic_type *t) {
  if (x->dtype != t->dtype || !optic_shape_equal(&x->shape, &t->shape)) {
    char want[96], got[96];
    optic_shape_format(&t->shape, t->dtype, want, sizeof want);
    optic_shape_format(&x->shape, x->dtype, got, sizeof got);
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "optic_program_run: %s %d is %s; the program expects %s", what, (int)i,
                      got, want);
  }
  size_t bytes;
  optic_status st = optic_shape_bytes(&t->shape, t->dtype, &bytes);
  if (st != OPTIC_OK) return st;
  if (bytes > 0 && x->data == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run: %s %d has NULL data", what, (int)i);
  }
  return OPTIC_OK;
}

static optic_status grow_outputs(optic_exec_ctx_t *c, int32_t n_out) {
  ctx_buf *nb = realloc(c->outputs, (size_t)n_out * sizeof *nb);
  if (nb != NULL) c->outputs = nb;
  ctx_buf *nr = realloc(c->spare, (size_t)n_out * sizeof *nr);
  if (nr != NULL) c->spare = nr;
  if (nb == NULL || nr == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "optic_program_run: out of memory");
  for (int32_t i = c->n_outputs; i < n_out; i++) nb[i] = nr[i] = (ctx_buf){0};
  c->n_outputs = n_out;
  return OPTIC_OK;
}

/* Output i from the context's buffer. If the buffer the previous run lent
 * overlaps a caller buffer of this run (the caller passed that result back
 * as an input, or as another output), output i's spare buffer is lent
 * instead and the held one becomes the spare, so the caller's data is
 * neither overwritten while it is read nor freed under it. A caller feeding
 * each result back thus alternates between two buffers with no pool call. */
static optic_status lend_output(optic_exec_ctx_t *c, int32_t i, const optic_type *leaf, optic_tensor *out) {
  size_t bytes;
  optic_status st = optic_shape_bytes(&leaf->shape, leaf->dtype, &bytes);
  if (st != OPTIC_OK) return st;
  ctx_buf *held = &c->outputs[i];
  if (held->data != NULL && exec_caller_overlaps(&c->run_ranges, held->data, held->size)) {
    ctx_buf t = *held;
    *held = c->spare[i];
    c->spare[i] = t;
  }
  if ((st = buf_reserve(c, held, bytes ? bytes : 64)) != OPTIC_OK) return st;
  out->dtype = leaf->dtype;
  out->shape = leaf->shape;
  out->data = held->data;
  return OPTIC_OK;
}

/* One thread's walk of the entry (a team job, core/team.h). */
typedef struct entry_job {
  run_ctx *rc;
  const exec_seq *entry;
  void **params, **outs;
  unsigned char *scratch, *regs;
  size_t regs_per;
  exec_barrier bar;
} entry_job;

static void run_entry_thread(void *arg, int t, int nt) {
  entry_job *j = arg;
  /* OpenBLAS (OpenMP build) runs a call on the calling thread alone when
   * that thread's omp_get_max_threads() is 1 (or it is inside an OpenMP
   * region); otherwise it starts a team of its own beside the run's. The
   * count is per thread: the caller's is restored after the run. */
  omp_set_num_threads(1);
  exec_thread th = {.t = t, .nt = nt, .scratch = j->scratch, .bar = &j->bar};
  th.regs = j->regs + j->regs_per * (size_t)t;
  optic_status ts = run_seq(j->rc, j->entry, j->params, j->outs, &th);
  if (ts != OPTIC_OK) record_error(j->rc, ts);
}

/* Runs the entry on a shared team (the caller is thread 0), or on the
 * calling thread alone when no step is split. */
static void run_entry(run_ctx *rc, const exec_seq *entry, void **params, void **outs) {
  /* Nothing worth splitting (every step small): the run stays on one thread
   * and pays for no team start-up or barrier. */
  int nt = rc->b->any_split ? rc->c->threads : 1;
  entry_job j = {.rc = rc,
                 .entry = entry,
                 .params = params,
                 .outs = outs,
                 .scratch = rc->c->scratch.data,
                 .regs = rc->c->regs.data,
                 .regs_per = rc->b->regs_bytes};
  /* The team is optic's own (core/team.h: one of the process's shared teams,
   * the one released last), not an OpenMP region: libgomp's
   * idle threads and region ends spin for GOMP_SPINCOUNT before sleeping, and
   * so burn whole time slices when other processes share the cores. The
   * between-step barrier (exec/barrier.h) spins briefly, then sleeps. It is
   * sized for the team the run gets (fewer threads when the system refused
   * one; a run that gets 1 thread never waits at it). */
  optic_team *team = nt > 1 ? optic_team_acquire_for(nt) : NULL;
  if (nt > 1) nt = optic_team_prepare(team, nt);
  exec_barrier_init(&j.bar, (unsigned)nt);
  int caller_threads = omp_get_max_threads();
  if (nt > 1) optic_team_run(team, nt, run_entry_thread, &j);
  else run_entry_thread(&j, 0, 1);
  optic_team_release(team);
  omp_set_num_threads(caller_threads);
}

optic_status exec_run_bound(optic_exec_ctx_t *c, exec_bound *b, const optic_tensor *inputs, int32_t n_in,
                            optic_tensor *outputs, int32_t n_out) {
  const optic_module_t *m = b->m;
  const exec_seq *entry = b->seqs[b->entry];
  if (n_in != entry->n_param_leaves || n_out != entry->n_root_leaves) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_program_run: given %d inputs and %d outputs; the program takes %d inputs and gives %d "
                      "outputs (array leaves of the entry's parameters and root)",
                      (int)n_in, (int)n_out, (int)entry->n_param_leaves, (int)entry->n_root_leaves);
  }
  if ((n_in > 0 && inputs == NULL) || (n_out > 0 && outputs == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run: inputs or outputs is NULL");
  }
  int32_t cap = n_in > n_out ? n_in : n_out;
  const optic_type **leaves = c->run_leaves;
  void **params = c->run_params, **outs = c->run_outs;
  optic_status st = OPTIC_OK;
  int32_t n = 0, np = optic_computation_parameter_count(m, b->entry);
  for (int32_t k = 0; k < np; k++) {
    optic_node_id p = optic_computation_parameter(m, b->entry, k);
    if (p != OPTIC_NO_NODE) flatten(optic_node_type(m, p), leaves, &n, cap);
  }
  for (int32_t i = 0; i < n_in && st == OPTIC_OK; i++) {
    st = check_tensor("input", i, &inputs[i], leaves[i]);
    params[i] = inputs[i].data;
  }
  n = 0;
  flatten(optic_node_type(m, optic_computation_root(m, b->entry)), leaves, &n, cap);
  if (st == OPTIC_OK && n_out > c->n_outputs) st = grow_outputs(c, n_out);
  for (int32_t i = 0; i < n_out && st == OPTIC_OK; i++) {
    if (outputs[i].data != NULL) st = check_tensor("output", i, &outputs[i], leaves[i]);
  }
  if (st == OPTIC_OK) st = exec_check_aliasing(b, &c->run_ranges, inputs, n_in, outputs, n_out);
  for (int32_t i = 0; i < n_out && st == OPTIC_OK; i++) {
    if (outputs[i].data == NULL) st = lend_output(c, i, leaves[i], &outputs[i]);
    outs[i] = outputs[i].data;
  }
  if (st != OPTIC_OK) goto done;
  c->err = OPTIC_OK;
  run_ctx rc = {c, b, c->arena.data, exec_profiler_active(c->profiler), 0, c->opts.device};
  uint64_t run_start = 0;
  if (rc.prof) {
    rc.run = exec_profiler_next_run(rc.prof);
    run_start = optic_now_ns();
  }
  run_entry(&rc, entry, params, outs);
  if (rc.prof) {
    exec_profiler_record_span(rc.prof, OPTIC_PROFILE_RUN, "run", optic_computation_name(m, b->entry), b->program,
                              rc.device, 0, -1, rc.run, run_start, optic_now_ns(), 0.0, 0.0, b->est_ns);
  }
  if (c->err != OPTIC_OK) st = optic_fail(c->err, "%s", c->err_msg);
done:
  return st;
}

optic_status optic_program_run(const optic_program_t *program, optic_exec_ctx_t *c, const optic_tensor *inputs,
                               int32_t n_in, optic_tensor *outputs, int32_t n_out) {
  if (program == NULL || c == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_run: program or context is NULL");
  }
  optic_program_summary sum;
  optic_status sst = optic_program_summary_get(program, &sum);
  if (sst != OPTIC_OK) return sst;
  if (c->bound_key != (const void *)program || c->bound_stamp != sum.compile_seconds) {
    exec_bound *b;
    optic_status st = exec_bind(optic_program_module(program), program, c->threads, c->opts.split_min_elements, &b);
    if (st != OPTIC_OK) return st;
    if ((st = attach(c, b, program)) != OPTIC_OK) return st;
    c->bound_stamp = sum.compile_seconds;
  }
  return exec_run_bound(c, c->bound, inputs, n_in, outputs, n_out);
}
