/* The step engine's graphs: one elementwise computation per parameter group
 * over the group's elements flattened into one f32[N] vector, written with
 * the graph layer's ops (docs/optim.md "Step engine"). Hyperparameters that
 * stay fixed for the group (betas, ε, decay, momentum, flags) are constants
 * and part of the cache key; what changes per step (the scheduled rate, bias
 * corrections, LAMB's trust ratio) is a scalar parameter, so schedules never
 * recompile. The graph follows the fused kernels' structure (same reads,
 * writes and operations) but not their exact arithmetic: the kernels contract
 * to fused multiply-adds, which the graph has no op for. It is compiled for
 * its cost and estimates; the kernels execute the update. */
#include <stdio.h>
#include <string.h>

#include "optim/step_engine_internal.h"

/* Sticky-error builder over one computation. */
typedef struct gb {
  optic_module_t *m;
  optic_comp_id c;
  optic_shape vec; /* f32[N] */
  int32_t next_param;
  optic_status st;
} gb;

static optic_node_id g_param(gb *b, const char *name, bool scalar) {
  if (b->st != OPTIC_OK) return -1;
  optic_shape s0 = {.rank = 0};
  optic_type t = optic_type_array(OPTIC_F32, scalar ? &s0 : &b->vec);
  optic_node_id id = -1;
  char fused_name[64]; /* the entry's parameter takes the plain name */
  snprintf(fused_name, sizeof fused_name, "%s.in", name);
  b->st = optic_graph_parameter(b->m, b->c, b->next_param++, &t, fused_name, &id);
  if (b->st != OPTIC_OK || !scalar) return id;
  optic_node_id out = -1;
  b->st = optic_graph_broadcast(b->m, b->c, id, &b->vec, NULL, 0, NULL, &out);
  return out;
}

static optic_node_id g_const(gb *b, double v) {
  if (b->st != OPTIC_OK) return -1;
  const float f = (float)v;
  optic_shape s0 = {.rank = 0};
  optic_node_id id = -1, out = -1;
  b->st = optic_graph_constant(b->m, b->c, OPTIC_F32, &s0, &f, sizeof f, NULL, &id);
  if (b->st == OPTIC_OK) b->st = optic_graph_broadcast(b->m, b->c, id, &b->vec, NULL, 0, NULL, &out);
  return out;
}

static optic_node_id g_bin(gb *b, optic_opcode op, optic_node_id x, optic_node_id y) {
  if (b->st != OPTIC_OK) return -1;
  optic_node_id out = -1;
  b->st = optic_graph_binary(b->m, b->c, op, x, y, NULL, &out);
  return out;
}

static optic_node_id g_un(gb *b, optic_opcode op, optic_node_id x) {
  if (b->st != OPTIC_OK) return -1;
  optic_node_id out = -1;
  b->st = optic_graph_unary(b->m, b->c, op, x, NULL, &out);
  return out;
}

#define ADD(x, y) g_bin(b, OPTIC_OP_ADD, (x), (y))
#define SUB(x, y) g_bin(b, OPTIC_OP_SUBTRACT, (x), (y))
#define MUL(x, y) g_bin(b, OPTIC_OP_MULTIPLY, (x), (y))
#define DIV(x, y) g_bin(b, OPTIC_OP_DIVIDE, (x), (y))
#define MAX(x, y) g_bin(b, OPTIC_OP_MAXIMUM, (x), (y))
#define K(v) g_const(b, (v))

/* ε placement as optim/step.c: PyTorch outside the root, others inside. */
static void eps_split(const optic_optim_hparams *h, double *outside, double *inside) {
  const bool torch = h->convention == OPTIC_OPTIM_CONVENTION_PYTORCH;
  *outside = torch ? h->eps : 0.0;
  *inside = torch ? h->eps_root : h->eps + h->eps_root;
}

static bool decoupled(const optic_optim_hparams *h) {
  return h->convention == OPTIC_OPTIM_CONVENTION_KERAS || h->kind == OPTIC_OPTIM_KIND_ADAMW;
}

/* √(x + inside) + outside */
static optic_node_id g_den(gb *b, optic_node_id x, double outside, double inside) {
  optic_node_id r = inside != 0.0 ? ADD(x, K(inside)) : x;
  r = g_un(b, OPTIC_OP_SQRT, r);
  return outside != 0.0 ? ADD(r, K(outside)) : r;
}

/* Builds the group's update into b; outs receives (θ', state'...) in slot
 * order; returns how many. */
/* long: one case per optimizer: the graph of its update */
static int32_t build_update(gb *b, const optic_optim_hparams *h, optic_node_id *outs) {
  int32_t n = 0;
  optic_node_id p = g_param(b, "param", false), g = g_param(b, "grad", false);
  const bool wd = h->weight_decay != 0.0;
  if (wd && !decoupled(h) && h->kind != OPTIC_OPTIM_KIND_LAMB && h->kind != OPTIC_OPTIM_KIND_LION)
    g = ADD(g, MUL(K(h->weight_decay), p));
  if (wd && decoupled(h) && h->kind != OPTIC_OPTIM_KIND_LAMB && h->kind != OPTIC_OPTIM_KIND_LION)
    p = MUL(p, g_param(b, "decay_keep", true)); /* 1 − γλ, per step */
  double eo, ei;
  eps_split(h, &eo, &ei);
  switch (h->kind) {
    case OPTIC_OPTIM_KIND_SGD: {
      optic_node_id lr = g_param(b, "lr", true);
      if (h->momentum == 0.0) {
        outs[n++] = SUB(p, MUL(lr, g));
        break;
      }
      optic_node_id buf = g_param(b, "momentum_buffer", false);
      optic_node_id nb = ADD(MUL(K(h->momentum), buf), MUL(K(1.0 - h->dampening), g));
      optic_node_id d = h->nesterov ? ADD(g, MUL(K(h->momentum), nb)) : nb;
      outs[n++] = SUB(p, MUL(lr, d));
      outs[n++] = nb;
      break;
    }
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW:
    case OPTIC_OPTIM_KIND_LAMB: {
      optic_node_id m = g_param(b, "exp_avg", false), v = g_param(b, "exp_avg_sq", false);
      optic_node_id nm = ADD(MUL(K(h->beta1), m), MUL(K(1.0 - h->beta1), g));
      optic_node_id nv = ADD(MUL(K(h->beta2), v), MUL(MUL(K(1.0 - h->beta2), g), g));
      optic_node_id vv = nv, nmax = -1;
      if (h->amsgrad && h->kind != OPTIC_OPTIM_KIND_LAMB) {
        nmax = MAX(g_param(b, "max_exp_avg_sq", false), nv);
        vv = nmax;
      }
      optic_node_id inv_bc2 = g_param(b, "inv_bias_correction2", true);
      optic_node_id q = DIV(nm, g_den(b, MUL(vv, inv_bc2), eo, ei));
      if (h->kind == OPTIC_OPTIM_KIND_LAMB) {
        /* u = m̂/(√v̂+ε) + λθ; θ' = θ − γ·ratio·u (ratio per tensor, a
         * scalar parameter here: the norm reductions are not in the graph). */
        optic_node_id u = MUL(q, g_param(b, "inv_bias_correction1", true));
        if (wd) u = ADD(u, MUL(K(h->weight_decay), p));
        outs[n++] = SUB(p, MUL(g_param(b, "lr_times_trust_ratio", true), u));
      } else {
        outs[n++] = SUB(p, MUL(g_param(b, "step_size", true), q)); /* γ/(1−β1^t) */
      }
      outs[n++] = nm;
      outs[n++] = nv;
      if (nmax >= 0) outs[n++] = nmax;
      break;
    }
    case OPTIC_OPTIM_KIND_RMSPROP: {
      optic_node_id lr = g_param(b, "lr", true);
      optic_node_id sq = g_param(b, "square_avg", false);
      optic_node_id nsq = ADD(MUL(K(h->alpha), sq), MUL(MUL(K(1.0 - h->alpha), g), g));
      optic_node_id w = nsq, nga = -1, nbuf = -1;
      if (h->centered) {
        nga = ADD(MUL(K(h->alpha), g_param(b, "grad_avg", false)), MUL(K(1.0 - h->alpha), g));
        w = SUB(nsq, MUL(nga, nga));
      }
      optic_node_id q = DIV(g, g_den(b, w, eo, ei));
      if (h->momentum > 0.0) {
        nbuf = ADD(MUL(K(h->momentum), g_param(b, "momentum_buffer", false)), q);
        outs[n++] = SUB(p, MUL(lr, nbuf));
      } else {
        outs[n++] = SUB(p, MUL(lr, q));
      }
      if (nbuf >= 0) outs[n++] = nbuf;
      outs[n++] = nsq;
      if (nga >= 0) outs[n++] = nga;
      break;
    }
    case OPTIC_OPTIM_KIND_ADAGRAD: {
      optic_node_id lr = g_param(b, "lr", true);
      optic_node_id s = ADD(g_param(b, "sum", false), MUL(g, g));
      outs[n++] = SUB(p, MUL(lr, DIV(g, g_den(b, s, eo, ei))));
      outs[n++] = s;
      break;
    }
    case OPTIC_OPTIM_KIND_LION: {
      optic_node_id lr = g_param(b, "lr", true);
      optic_node_id m = g_param(b, "exp_avg", false);
      optic_node_id u = g_un(b, OPTIC_OP_SIGN, ADD(MUL(K(h->beta1), m), MUL(K(1.0 - h->beta1), g)));
      if (wd) u = ADD(u, MUL(K(h->weight_decay), p));
      outs[n++] = SUB(p, MUL(lr, u));
      outs[n++] = ADD(MUL(K(h->beta2), m), MUL(K(1.0 - h->beta2), g));
      break;
    }
    default:
      if (b->st == OPTIC_OK)
        b->st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "step_engine: bad optimizer kind %d", (int)h->kind);
  }
  return n;
}

optic_status step_engine_build_graph(const optic_optim_hparams *h, int64_t elements, optic_module_t **out) {
  *out = NULL;
  char name[64];
  snprintf(name, sizeof name, "step_%s", optic_optim_kind_name(h->kind));
  optic_module_t *m = NULL;
  optic_status st = optic_module_create(name, &m);
  if (st != OPTIC_OK) return st;
  /* The update is built as the body of one multi-output loop fusion (the
   * fusion pass never forms multi-output fusions by itself, and left to it the
   * three outputs of Adam would be three loops re-reading the gradient). */
  gb b = {.m = m, .st = OPTIC_OK};
  b.vec.rank = 1;
  b.vec.dims[0] = elements;
  b.st = optic_module_add_computation(m, "update_fused", &b.c);
  optic_node_id outs[8];
  const int32_t n = build_update(&b, h, outs);
  optic_node_id root = -1;
  if (b.st == OPTIC_OK) b.st = optic_graph_tuple(m, b.c, outs, n, "updated", &root);
  if (b.st == OPTIC_OK) b.st = optic_computation_set_root(m, b.c, root);
  optic_comp_id entry = -1;
  if (b.st == OPTIC_OK) b.st = optic_module_add_computation(m, "update", &entry);
  const int32_t np = b.st == OPTIC_OK ? optic_computation_parameter_count(m, b.c) : 0;
  optic_node_id args[16];
  for (int32_t i = 0; i < np && i < 16 && b.st == OPTIC_OK; i++) {
    const optic_node_id fp = optic_computation_parameter(m, b.c, i);
    char pname[64];
    snprintf(pname, sizeof pname, "%s", optic_node_name(m, fp));
    char *dot = strrchr(pname, '.');
    if (dot != NULL) *dot = '\0'; /* "grad.in" -> "grad" */
    b.st = optic_graph_parameter(m, entry, i, optic_node_type(m, fp), pname, &args[i]);
  }
  optic_node_id fusion = -1;
  if (b.st == OPTIC_OK) b.st = optic_graph_fusion(m, entry, OPTIC_FUSION_LOOP, args, np, b.c, "update", &fusion);
  if (b.st == OPTIC_OK) b.st = optic_computation_set_root(m, entry, fusion);
  if (b.st == OPTIC_OK) b.st = optic_module_set_entry(m, entry);
  if (b.st != OPTIC_OK) {
    optic_module_destroy(m);
    return b.st;
  }
  *out = m;
  return OPTIC_OK;
}

/* Key: kind, convention, the flags and constants the graph bakes in, then
 * the tensor count and every shape. Padding-free: built field by field. */
typedef struct key_writer {
  uint8_t *buf;
  size_t len, cap;
} key_writer;

static void kw_put(key_writer *w, const void *p, size_t n) {
  if (w->buf != NULL && w->len + n <= w->cap) memcpy(w->buf + w->len, p, n);
  w->len += n;
}

static size_t write_key(const optim_group *gr, uint8_t *buf, size_t cap) {
  const optic_optim_hparams *h = &gr->hp;
  key_writer w = {.buf = buf, .cap = cap};
  const int32_t ints[] = {(int32_t)h->kind, (int32_t)h->convention, h->nesterov, h->amsgrad, h->centered};
  kw_put(&w, ints, sizeof ints);
  const double d[] = {h->weight_decay, h->momentum, h->dampening, h->beta1, h->beta2, h->eps, h->eps_root, h->alpha};
  kw_put(&w, d, sizeof d);
  const uint64_t c = gr->count;
  kw_put(&w, &c, sizeof c);
  for (size_t i = 0; i < gr->count; i++) {
    const optic_shape *s = &gr->tensors[i].shape;
    kw_put(&w, &s->rank, sizeof s->rank);
    kw_put(&w, s->dims, (size_t)s->rank * sizeof(int64_t));
  }
  return w.len;
}

size_t step_engine_group_key(const optim_group *gr, uint8_t *buf, size_t cap) { return write_key(gr, buf, cap); }
