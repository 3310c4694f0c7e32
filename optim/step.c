/* One optimizer step: argument checks, the optional global gradient norm
 * (clipping and non-finite detection), each group's kernel parameters for
 * this step under its convention, and a run of a shared thread team
 * (core/team.h) that runs the fused kernels block by block (LAMB: pass 1,
 * trust ratios on the caller, pass 2). Blocks sit at
 * fixed offsets, so the result does not depend on the thread count. Nothing
 * is changed before every check has passed. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include <time.h>

#include "core/ranges.h"
#include "core/team.h"
#include "kernels/binary.h"
#include "optim/optim_internal.h"

/* A group's kernel parameters for the current step. */
typedef struct group_step {
  optic_optim_kind kind;
  union {
    optic_sgd_params sgd;
    optic_adam_params adam;
    optic_rmsprop_params rmsprop;
    optic_adagrad_params adagrad;
    optic_lion_params lion;
    optic_lamb_params lamb;
  } p;
  bool prescale; /* Keras LAMB: θ ← keep·θ before the step (decay outside the trust ratio) */
  float keep;
} group_step;

/* Σ g² in double with eight accumulators in a fixed order (every product of
 * two floats is exact in double, so fused or not the bits are the same). */
static double sum_squares(const float *g, size_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; k++) acc[k] += (double)g[i + k] * (double)g[i + k];
  }
  for (; i < n; i++) acc[i % 8] += (double)g[i] * (double)g[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* long: one case per optimizer: its hyperparameters as per-step constants */
static group_step prepare_group(const optim_group *g) {
  const optic_optim_hparams *h = &g->hp;
  const uint64_t t = g->step + 1; /* this step, 1-based */
  const bool torch = h->convention == OPTIC_OPTIM_CONVENTION_PYTORCH;
  const bool keras = h->convention == OPTIC_OPTIM_CONVENTION_KERAS;
  const double lr = optim_schedule_rate(&h->schedule, h->lr, g->step);
  /* Keras decouples every weight decay; PyTorch and optax add λθ to the
   * gradient, except AdamW's decoupled form. */
  const optic_optim_decay decay =
      keras || h->kind == OPTIC_OPTIM_KIND_ADAMW ? OPTIC_OPTIM_DECAY_DECOUPLED : OPTIC_OPTIM_DECAY_L2;
  const float eps_outside = torch ? (float)h->eps : 0.0f;
  const float eps_inside = torch ? (float)h->eps_root : (float)(h->eps + h->eps_root);
  group_step s;
  memset(&s, 0, sizeof s);
  s.kind = h->kind;
  s.keep = 1.0f;
  switch (h->kind) {
    case OPTIC_OPTIM_KIND_SGD:
      s.p.sgd = (optic_sgd_params){.lr = (float)lr,
                                   .momentum = (float)h->momentum,
                                   .dampening = (float)h->dampening,
                                   .weight_decay = (float)h->weight_decay,
                                   .decay = decay,
                                   .nesterov = h->nesterov,
                                   .first_step = torch && g->step == 0,
                                   .lr_in_momentum = keras};
      break;
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW: {
      optic_adam_params *p = &s.p.adam;
      *p = (optic_adam_params){.lr = (float)lr,
                               .beta1 = (float)h->beta1,
                               .beta2 = (float)h->beta2,
                               .eps = (float)h->eps,
                               .eps_root = (float)h->eps_root,
                               .weight_decay = (float)h->weight_decay,
                               .decay = decay,
                               .amsgrad = h->amsgrad};
      p->bias_correction1 = optic_optim_bias_correction(p->beta1, t);
      p->bias_correction2 = optic_optim_bias_correction(p->beta2, t);
      /* Keras's α_t = γ·√(1−β2^t)/(1−β1^t) with ε after √v is the PyTorch
       * form with ε/√(1−β2^t) after √v̂. */
      if (keras) p->eps = (float)((double)(float)h->eps / sqrt(-expm1((double)t * log((double)p->beta2))));
      break;
    }
    case OPTIC_OPTIM_KIND_RMSPROP:
      s.p.rmsprop = (optic_rmsprop_params){.lr = (float)lr,
                                           .alpha = (float)h->alpha,
                                           .eps = eps_outside,
                                           .eps_root = eps_inside,
                                           .momentum = (float)h->momentum,
                                           .weight_decay = (float)h->weight_decay,
                                           .decay = decay,
                                           .centered = h->centered,
                                           .lr_in_momentum = !torch};
      break;
    case OPTIC_OPTIM_KIND_ADAGRAD:
      s.p.adagrad = (optic_adagrad_params){.lr = (float)(lr / (1.0 + (double)(t - 1) * h->lr_decay)),
                                           .eps = eps_outside,
                                           .eps_root = eps_inside,
                                           .weight_decay = (float)h->weight_decay,
                                           .decay = decay};
      break;
    case OPTIC_OPTIM_KIND_LION:
      s.p.lion = (optic_lion_params){
          .lr = (float)lr, .beta1 = (float)h->beta1, .beta2 = (float)h->beta2, .weight_decay = (float)h->weight_decay};
      break;
    case OPTIC_OPTIM_KIND_LAMB: {
      optic_lamb_params *p = &s.p.lamb;
      *p = (optic_lamb_params){.lr = (float)lr,
                               .beta1 = (float)h->beta1,
                               .beta2 = (float)h->beta2,
                               .eps = (float)h->eps,
                               .eps_root = (float)h->eps_root,
                               .weight_decay = keras ? 0.0f : (float)h->weight_decay};
      p->bias_correction1 = optic_optim_bias_correction(p->beta1, t);
      p->bias_correction2 = optic_optim_bias_correction(p->beta2, t);
      if (keras && h->weight_decay != 0.0) {
        s.prescale = true;
        s.keep = (float)(1.0 - (double)(float)lr * (double)(float)h->weight_decay);
      }
      break;
    }
    default: break;
  }
  return s;
}

/* Everything one region needs. */
typedef struct step_job {
  optic_optim_t *opt;
  const optic_optim_kernels *k;
  optic_f32_vbinaryc_fn mul; /* y = a·s, in place: clipping and Keras LAMB's decay */
  const optic_tensor *params, *grads;
  const group_step *gs;
  float grad_scale; /* clipping factor (1: none) */
  bool scale;
  bool has_lamb;
} step_job;

static float *state_at(const optim_tensor *t, optim_slot s, size_t lo) { return t->state[s] ? t->state[s] + lo : NULL; }

/* A bf16_master block: the master starts as the parameters (exactly) at the
 * group's first step, then the mixed-precision Adam (kernels/optim.h). */
static void run_master_block(const step_job *j, const optim_group *g, const optim_tensor *t, const optim_block *b) {
  const size_t lo = b->lo, n = b->hi - b->lo;
  uint16_t *p = (uint16_t *)j->params[b->tensor].data + lo;
  const uint16_t *gr = (const uint16_t *)j->grads[b->tensor].data + lo;
  float *master = state_at(t, OPTIM_SLOT_MASTER, lo);
  if (g->step == 0) optic_convert_elements(OPTIC_BF16, p, OPTIC_F32, master, n);
  optic_mixed_adam_bf16(n, p, master, gr, state_at(t, OPTIM_SLOT_EXP_AVG, lo), state_at(t, OPTIM_SLOT_EXP_AVG_SQ, lo),
                        state_at(t, OPTIM_SLOT_MAX_EXP_AVG_SQ, lo), &j->gs[b->group].p.adam);
}

/* Pass 1 of a block: clipping, then the whole update (or LAMB's first pass). */
static void run_block(const step_job *j, optim_block *b) {
  const optim_group *g = &j->opt->groups[b->group];
  const optim_tensor *t = &g->tensors[b->tensor - g->first_tensor];
  const group_step *s = &j->gs[b->group];
  if (g->hp.bf16_master) {
    run_master_block(j, g, t, b);
    return;
  }
  const size_t lo = b->lo, n = b->hi - b->lo;
  float *p = (float *)j->params[b->tensor].data + lo;
  float *gr = (float *)j->grads[b->tensor].data + lo;
  if (j->scale) j->mul(n, gr, j->grad_scale, gr);
  const optic_optim_kernels *k = j->k;
  switch (s->kind) {
    case OPTIC_OPTIM_KIND_SGD: k->sgd(n, p, gr, state_at(t, OPTIM_SLOT_MOMENTUM_BUFFER, lo), &s->p.sgd); break;
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW:
      k->adam(n, p, gr, state_at(t, OPTIM_SLOT_EXP_AVG, lo), state_at(t, OPTIM_SLOT_EXP_AVG_SQ, lo),
              state_at(t, OPTIM_SLOT_MAX_EXP_AVG_SQ, lo), &s->p.adam);
      break;
    case OPTIC_OPTIM_KIND_RMSPROP:
      k->rmsprop(n, p, gr, state_at(t, OPTIM_SLOT_SQUARE_AVG, lo), state_at(t, OPTIM_SLOT_GRAD_AVG, lo),
                 state_at(t, OPTIM_SLOT_MOMENTUM_BUFFER, lo), &s->p.rmsprop);
      break;
    case OPTIC_OPTIM_KIND_ADAGRAD: k->adagrad(n, p, gr, state_at(t, OPTIM_SLOT_SUM, lo), &s->p.adagrad); break;
    case OPTIC_OPTIM_KIND_LION: k->lion(n, p, gr, state_at(t, OPTIM_SLOT_EXP_AVG, lo), &s->p.lion); break;
    case OPTIC_OPTIM_KIND_LAMB:
      if (s->prescale) j->mul(n, p, s->keep, p);
      k->lamb_moments(n, p, gr, state_at(t, OPTIM_SLOT_EXP_AVG, lo), state_at(t, OPTIM_SLOT_EXP_AVG_SQ, lo), &s->p.lamb,
                      &b->norms);
      break;
    default: break;
  }
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void optim_block_share(long nb, int t, int nt, long *lo, long *hi) {
  long q = nb / nt, r = nb % nt;
  *lo = t * q + (t < r ? t : r);
  *hi = *lo + q + (t < r ? 1 : 0);
}

/* A step's update on the optimizer's team (core/team.h): pass 1 over every
 * block, then for LAMB the trust ratios (caller) and pass 2. */
typedef struct region_job {
  step_job *j;
  bool profile;
  uint64_t cpu[OPTIC_TEAM_MAX]; /* per thread: CPU time of its own work */
} region_job;

static void region_pass1(void *arg, int t, int nt) {
  region_job *r = arg;
  const uint64_t c0 = r->profile ? thread_cpu_ns() : 0;
  optic_optim_t *opt = r->j->opt;
  long lo, hi;
  optim_block_share((long)opt->block_count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; i++) run_block(r->j, &opt->blocks[i]);
  if (r->profile) r->cpu[t] += thread_cpu_ns() - c0;
}

/* Every block's norms are in. Each tensor's blocks are summed in block order
 * (one part to the ratio: the same sums optic_lamb_trust_ratio would form). */
static void lamb_ratios(optic_optim_t *opt) {
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    if (gr->hp.kind != OPTIC_OPTIM_KIND_LAMB) continue;
    for (size_t i = 0; i < gr->count; i++) {
      const optim_tensor *t = &gr->tensors[i];
      optic_lamb_norms sum = {0.0, 0.0};
      for (size_t c = 0; c < t->block_count; c++) {
        sum.param_sq += opt->blocks[t->first_block + c].norms.param_sq;
        sum.update_sq += opt->blocks[t->first_block + c].norms.update_sq;
      }
      opt->ratios[gr->first_tensor + i] = optic_lamb_trust_ratio(&sum, 1);
    }
  }
}

static void region_lamb_apply(void *arg, int t, int nt) {
  region_job *r = arg;
  const uint64_t c0 = r->profile ? thread_cpu_ns() : 0;
  const step_job *j = r->j;
  optic_optim_t *opt = j->opt;
  long lo, hi;
  optim_block_share((long)opt->block_count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; i++) {
    const optim_block *b = &opt->blocks[i];
    const group_step *s = &j->gs[b->group];
    if (s->kind != OPTIC_OPTIM_KIND_LAMB) continue;
    const optim_group *g = &opt->groups[b->group];
    const optim_tensor *t2 = &g->tensors[b->tensor - g->first_tensor];
    j->k->lamb_apply(b->hi - b->lo, (float *)j->params[b->tensor].data + b->lo, state_at(t2, OPTIM_SLOT_EXP_AVG, b->lo),
                     state_at(t2, OPTIM_SLOT_EXP_AVG_SQ, b->lo), &s->p.lamb, opt->ratios[b->tensor]);
  }
  if (r->profile) r->cpu[t] += thread_cpu_ns() - c0;
}

/* The threads a step's work runs on: one block, or one thread asked for,
 * runs on the caller alone. */
static int team_threads(const optic_optim_t *opt, int threads) {
  return threads <= 1 || opt->block_count <= 1 ? 1 : threads;
}

/* Returns the largest per-thread CPU time of the step's work when profiling
 * (0 otherwise): a thread's own work, not its waits for the others. */
static uint64_t run_region(step_job *j, int threads, bool profile) {
  optic_optim_t *opt = j->opt;
  region_job r = {.j = j, .profile = profile};
  int nt = team_threads(opt, threads);
  optic_team *team = nt > 1 ? optic_team_acquire_for(nt) : NULL;
  int n = optic_team_run(team, nt, region_pass1, &r);
  if (j->has_lamb) {
    const uint64_t c0 = profile ? thread_cpu_ns() : 0;
    lamb_ratios(opt);
    if (profile) r.cpu[0] += thread_cpu_ns() - c0;
    int n2 = optic_team_run(team, nt, region_lamb_apply, &r);
    if (n2 > n) n = n2;
  }
  optic_team_release(team);
  uint64_t worst = 0;
  for (int t = 0; t < n; t++) worst = r.cpu[t] > worst ? r.cpu[t] : worst;
  return worst;
}

typedef struct grad_sq_job {
  optic_optim_t *opt;
  const optic_tensor *grads;
} grad_sq_job;

static void grad_sq_part(void *arg, int t, int nt) {
  grad_sq_job *g = arg;
  long lo, hi;
  optim_block_share((long)g->opt->block_count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; i++) {
    optim_block *b = &g->opt->blocks[i];
    b->grad_sq = sum_squares((const float *)g->grads[b->tensor].data + b->lo, b->hi - b->lo);
  }
}

/* Global Σg² over every block (parallel), summed in block order. */
static double global_grad_sq(optic_optim_t *opt, const optic_tensor *grads, int threads) {
  const long nb = (long)opt->block_count;
  grad_sq_job g = {opt, grads};
  int nt = team_threads(opt, threads);
  optic_team *team = nt > 1 ? optic_team_acquire_for(nt) : NULL;
  optic_team_run(team, nt, grad_sq_part, &g);
  optic_team_release(team);
  double total = 0.0;
  for (long i = 0; i < nb; i++) total += opt->blocks[i].grad_sq;
  return total;
}

/* Parameters are written, so a parameter may share no byte with another
 * parameter or any gradient; gradients are written only by clipping (in
 * place, block by block), so they may share memory with each other unless
 * clipping is on. One sort over all 2n buffers (core/ranges.h). */
static optic_status check_overlap(const optic_optim_t *opt, const optic_tensor *params, const optic_tensor *grads) {
  const bool grads_written = opt->opts.clip_global_norm > 0.0;
  optic_range *r = opt->ranges;
  size_t n = 0;
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    for (size_t i = 0; i < gr->count; i++) {
      const size_t ti = gr->first_tensor + i, bytes = gr->tensors[i].n * (gr->hp.bf16_master ? 2 : sizeof(float));
      if (bytes == 0) continue;
      uintptr_t p = (uintptr_t)params[ti].data, q = (uintptr_t)grads[ti].data;
      r[n++] = (optic_range){.lo = p, .hi = p + bytes, .kind = 0, .index = (int32_t)ti, .written = true};
      r[n++] = (optic_range){.lo = q, .hi = q + bytes, .kind = 1, .index = (int32_t)ti, .written = grads_written};
    }
  }
  size_t a, b;
  if (!optic_ranges_find_conflict(r, n, &a, &b)) return OPTIC_OK;
  const optic_range *x = &r[a], *y = &r[b];
  if (x->index == y->index && x->kind != y->kind) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optim_step: param %d and its grad overlap in memory", (int)x->index);
  }
  if (y->index < x->index || (y->index == x->index && y->kind < x->kind)) {
    const optic_range *t = x;
    x = y, y = t;
  }
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "optim_step: %s %d overlaps %s %d in memory (a parameter may share no byte with another tensor%s)",
                    y->kind ? "grad" : "param", (int)y->index, x->kind ? "grad" : "param", (int)x->index,
                    grads_written ? "; with clipping on, gradients are written too" : "");
}

static optic_status check_args(const optic_optim_t *opt, const optic_tensor *params, const optic_tensor *grads,
                               size_t count) {
  const char *what = "optim_step";
  if (opt == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: optimizer is NULL", what);
  if (count != opt->tensor_count) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %zu tensors given, the optimizer has %zu", what, count,
                      opt->tensor_count);
  }
  if (count > 0 && (params == NULL || grads == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, params == NULL ? "params" : "grads");
  }
  for (size_t g = 0; g < opt->group_count; g++) {
    if (opt->groups[g].hp.bf16_master && (opt->opts.clip_global_norm > 0.0 || opt->opts.skip_nonfinite)) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED,
                        "%s: group %zu keeps bf16_master weights; clip_global_norm and skip_nonfinite read f32 "
                        "gradients only",
                        what, g);
    }
  }
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    for (size_t i = 0; i < gr->count; i++) {
      const size_t ti = gr->first_tensor + i;
      const optim_tensor *t = &gr->tensors[i];
      const optic_tensor *pair[2] = {&params[ti], &grads[ti]};
      const optic_dtype want_dt = gr->hp.bf16_master ? OPTIC_BF16 : OPTIC_F32;
      for (int k = 0; k < 2; k++) {
        const char *role = k == 0 ? "param" : "grad";
        if (pair[k]->dtype != want_dt) {
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s %zu (group %zu) is %s, expected %s%s", what, role, ti,
                            g, optic_dtype_name(pair[k]->dtype), optic_dtype_name(want_dt),
                            gr->hp.bf16_master ? " (a bf16_master group)" : "");
        }
        if (!optic_shape_equal(&pair[k]->shape, &t->shape)) {
          char got[96], want[96];
          optic_shape_format(&pair[k]->shape, OPTIC_F32, got, sizeof got);
          optic_shape_format(&t->shape, OPTIC_F32, want, sizeof want);
          return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %s %zu (group %zu) is %s, the group registered %s", what,
                            role, ti, g, got, want);
        }
        if (t->n > 0 && pair[k]->data == NULL) {
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s %zu (group %zu) has NULL data", what, role, ti, g);
        }
      }
    }
  }
  return check_overlap(opt, params, grads);
}

/* First non-finite gradient element, scanning blocks in order. */
static void find_nonfinite(const optic_optim_t *opt, const optic_tensor *grads, optic_optim_step_report *r) {
  for (size_t i = 0; i < opt->block_count; i++) {
    const optim_block *b = &opt->blocks[i];
    if (isfinite(b->grad_sq)) continue;
    const float *g = grads[b->tensor].data;
    for (size_t e = b->lo; e < b->hi; e++) {
      if (!isfinite(g[e])) {
        r->bad_tensor = b->tensor;
        r->bad_element = e;
        return;
      }
    }
  }
}

optic_status optic_optim_step(optic_optim_t *opt, const optic_tensor *params, const optic_tensor *grads, size_t count,
                              optic_optim_step_report *report) {
  optic_status st = check_args(opt, params, grads, count);
  if (st != OPTIC_OK) return st;
  optic_optim_step_report r = {.skipped = false, .grad_norm = (double)NAN, .clip_scale = 1.0};
  const int threads = opt->opts.threads > 0 ? opt->opts.threads : omp_get_max_threads();
  step_job j = {.opt = opt,
                .k = optic_optim_kernels_get(),
                .mul = optic_binary_kernels_get()->vs[OPTIC_BINARY_MUL],
                .params = params,
                .grads = grads,
                .grad_scale = 1.0f};
  const double clip = opt->opts.clip_global_norm;
  if (clip > 0.0 || opt->opts.skip_nonfinite) {
    const double sq = global_grad_sq(opt, grads, threads);
    r.grad_norm = sqrt(sq);
    if (!isfinite(sq) && opt->opts.skip_nonfinite) {
      r.skipped = true;
      find_nonfinite(opt, grads, &r);
      opt->skipped_steps++;
      if (report) *report = r;
      return OPTIC_OK;
    }
    /* torch.nn.utils.clip_grad_norm_: coef = max_norm/(‖g‖ + 1e-6), used when < 1.
     * A non-finite norm (skip_nonfinite off) leaves the gradients unscaled. */
    if (clip > 0.0 && isfinite(sq)) {
      const double coef = clip / (r.grad_norm + 1e-6);
      if (coef < 1.0) {
        j.scale = true;
        j.grad_scale = (float)coef;
        r.clip_scale = (double)j.grad_scale;
      }
    }
  }
  group_step local[8];
  group_step *gs = local;
  if (opt->group_count > 8) {
    if ((st = optic_alloc(opt->alloc, opt->group_count * sizeof *gs, 0, (void **)&gs)) != OPTIC_OK) return st;
  }
  for (size_t g = 0; g < opt->group_count; g++) {
    gs[g] = prepare_group(&opt->groups[g]);
    if (gs[g].kind == OPTIC_OPTIM_KIND_LAMB) j.has_lamb = true;
  }
  j.gs = gs;
  const uint64_t t0 = opt->opts.profile ? optic_now_ns() : 0;
  const uint64_t cpu = run_region(&j, threads, opt->opts.profile);
  if (opt->opts.profile) {
    r.update_wall_ns = optic_now_ns() - t0;
    r.update_cpu_ns = cpu;
  }
  for (size_t g = 0; g < opt->group_count; g++) opt->groups[g].step++;
  if (gs != local) optic_free(opt->alloc, gs, opt->group_count * sizeof *gs, 0);
  if (report) *report = r;
  return OPTIC_OK;
}
