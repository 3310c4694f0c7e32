/* Optimizer update kernels: every (optimizer, ISA) entry of
 * kernels/list/optim.inc, for every option set in the config tables below,
 * runs 10 consecutive steps on random data beside the double-precision
 * reference (kernels/ref/optim_ref.c), over kt_sizes (0, 1, tile±1, ..., 1000,
 * 4097) and misaligned starts, with guards after every buffer and a check that
 * the gradient is not written. NULL is passed for every state an option
 * leaves unused. Two double references run beside the kernel: one never
 * rounds to float (the error accumulated over 10 steps), one is reset to the
 * kernel's float θ and state after every step (the error of each step alone).
 * Metric, for θ and every state element of a buffer, both references:
 *   |got − ref| <= 1e-6 · max(|ref|, floor),  floor = 0.25 · max(1, max |ref| of the buffer)
 * i.e. relative error 1e-6 for elements at least a quarter of the buffer's
 * scale, absolute error 2.5e-7·scale below (the inputs are O(1): an element
 * that cancels to near zero carries the rounding of its O(scale) terms, a few
 * float ulps of the scale, and cannot be more accurate). Each entry prints its
 * largest scaled errors (about 1.3e-7..5e-7 for one step, 5e-7..7e-7 after 10
 * steps on x86). Hyperparameters are exaggerated (large ε, eps_root, λ) so
 * every term moves the result by far more than the tolerance. Data are kept
 * well conditioned where float arithmetic itself is not: centered RMSprop gets
 * gradients of alternating sign, so v − ḡ² stays away from 0.
 * Special values: a second sweep feeds gradients with NaN and ±inf; where
 * the reference is NaN or ±inf the kernel must give NaN or the same inf, and
 * every other element must meet the tolerance (for LAMB one NaN makes the
 * trust ratio, hence the whole tensor, NaN, as in optax).
 * Splitting: every elementwise kernel run on [0, 37) and [37, 1000) must give
 * bitwise what one call on [0, 1000) gives, for 10 steps (the executor splits
 * tensors across threads).
 * LAMB runs pass 1 on three sub-ranges combined by optic_lamb_trust_ratio, and
 * checks Σθ² against the double sum of the kernel's θ (1e-12 relative) and Σu²
 * against the reference (1e-6 of max(Σu², 0.01·n)). */
#include "kernels/optim.h"
#include "tests/kernels/kernel_test.h"

#define NSTEPS 10
#define TOL_STEP 1e-6
#define TOL_RUN 1e-6
#define FLOOR 0.25
#define MAX_STATE 3

typedef enum grad_mode { GRAD_UNIFORM, GRAD_ALTERNATING, GRAD_SPECIAL } grad_mode;

typedef union any_fn {
  optic_f32_sgd_fn sgd;
  optic_f32_adam_fn adam;
  optic_f32_rmsprop_fn rmsprop;
  optic_f32_adagrad_fn adagrad;
  optic_f32_lion_fn lion;
  optic_f32_lamb_moments_fn lamb_moments;
  optic_f32_lamb_apply_fn lamb_apply;
} any_fn;

/* θ and state in double for the reference. */
typedef struct dset {
  double *th, *st[MAX_STATE];
} dset;

/* θ, g and up to three state arrays in float (guarded), and two double
 * references: ref[STEP] is reset to the kernel's float values after every
 * step (it measures one step's error), ref[RUN] never is (it measures the
 * error accumulated over all steps). */
enum { STEP = 0, RUN = 1 };
typedef struct bufset {
  size_t n;
  kt_buf th, g, st[MAX_STATE];
  bool used[MAX_STATE];
  double *dg;
  dset ref[2];
} bufset;

static double *dalloc(size_t n) {
  double *p = malloc((n + 1) * sizeof(double));
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

/* Each array starts at a different misalignment derived from off. */
static void bufs_make(bufset *b, size_t n, size_t off, const bool used[MAX_STATE]) {
  memset(b, 0, sizeof *b);
  b->n = n;
  b->th = kt_buf_make(n, off);
  b->g = kt_buf_make(n, (off + 1) % 4);
  b->dg = dalloc(n);
  for (int r = 0; r < 2; r++) b->ref[r].th = dalloc(n);
  for (int k = 0; k < MAX_STATE; k++) {
    b->used[k] = used[k];
    if (!used[k]) continue;
    b->st[k] = kt_buf_make(n, (off + 2 + (size_t)k) % 4);
    for (int r = 0; r < 2; r++) b->ref[r].st[k] = dalloc(n);
  }
}

static void bufs_free(bufset *b) {
  kt_buf_free(&b->th);
  kt_buf_free(&b->g);
  free(b->dg);
  for (int r = 0; r < 2; r++) free(b->ref[r].th);
  for (int k = 0; k < MAX_STATE; k++) {
    if (!b->used[k]) continue;
    kt_buf_free(&b->st[k]);
    for (int r = 0; r < 2; r++) free(b->ref[r].st[k]);
  }
}

static float *S(bufset *b, int k) { return b->used[k] ? b->st[k].p : NULL; }
static double *DS(bufset *b, int r, int k) { return b->used[k] ? b->ref[r].st[k] : NULL; }

/* Copies the kernel's float θ and state into reference r. */
static void bufs_sync(bufset *b, int r) {
  for (size_t i = 0; i < b->n; i++) b->ref[r].th[i] = b->th.p[i];
  for (int k = 0; k < MAX_STATE; k++) {
    if (!b->used[k]) continue;
    for (size_t i = 0; i < b->n; i++) b->ref[r].st[k][i] = b->st[k].p[i];
  }
}

/* θ uniform in [-1, 1); state k uniform in [lo[k], hi[k]); all copies equal. */
static void bufs_init(bufset *b, kt_rng *r, const float lo[MAX_STATE], const float hi[MAX_STATE]) {
  kt_fill(r, b->th.p, b->n, -1.0f, 1.0f, 0);
  for (int k = 0; k < MAX_STATE; k++) {
    if (b->used[k]) kt_fill(r, b->st[k].p, b->n, lo[k], hi[k], 0);
  }
  bufs_sync(b, STEP);
  bufs_sync(b, RUN);
}

static void bufs_grad(bufset *b, kt_rng *r, grad_mode mode, int t) {
  static const float specials[] = {NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < b->n; i++) {
    float g = kt_uniform(r, -1.0f, 1.0f);
    if (mode == GRAD_ALTERNATING) { /* |g| in [0.5, 1), sign flipping every step */
      g = kt_uniform(r, 0.5f, 1.0f) * (((i + (size_t)t) & 1) ? 1.0f : -1.0f);
    } else if (mode == GRAD_SPECIAL && (kt_next(r) & 15) == 0) {
      g = specials[kt_next(r) % 3];
    }
    b->g.p[i] = g;
    b->dg[i] = g;
  }
}

/* Scaled error of one element: |got − want| / max(|want|, floor); 0 when
 * both are the same non-finite value, infinity when only one is. */
static double scaled_error(float got, double want, double floor) {
  if (isnan(want)) return isnan(got) ? 0.0 : INFINITY;
  if (isinf(want)) return (double)got == want ? 0.0 : INFINITY;
  if (!isfinite(got)) return INFINITY;
  return fabs((double)got - want) / (fabs(want) > floor ? fabs(want) : floor);
}

static double worst_error[2]; /* largest scaled errors of the current entry (STEP, RUN), printed at its end */

/* The floor is FLOOR times the buffer's scale: its largest finite reference
 * magnitude, or 1 (the inputs' scale) if that is smaller. */
static bool check_array(const char *ctx, const char *what, const float *got, const double *want, size_t n, int r) {
  const double tol = r == STEP ? TOL_STEP : TOL_RUN;
  double scale = 1.0;
  for (size_t i = 0; i < n; i++) {
    if (isfinite(want[i]) && fabs(want[i]) > scale) scale = fabs(want[i]);
  }
  double floor = FLOOR * scale;
  for (size_t i = 0; i < n; i++) {
    double e = scaled_error(got[i], want[i], floor);
    if (e > tol) {
      OT_CHECK(false, "%s: %s[%zu] = %.9g, reference %.12g (scaled error %.3g, floor %.3g)", ctx, what, i, got[i],
               want[i], e, floor);
      return false;
    }
    if (e > worst_error[r]) worst_error[r] = e;
  }
  return true;
}

/* θ and every used state against reference r; the guards; g untouched. */
static bool bufs_check(bufset *b, const char *ctx, const char *const names[MAX_STATE], int r) {
  bool ok = check_array(ctx, "param", b->th.p, b->ref[r].th, b->n, r);
  for (int k = 0; k < MAX_STATE; k++) {
    if (b->used[k]) ok = check_array(ctx, names[k], b->st[k].p, b->ref[r].st[k], b->n, r) && ok;
  }
  bool guards = kt_buf_guard_ok(&b->th) && kt_buf_guard_ok(&b->g);
  for (int k = 0; k < MAX_STATE; k++) guards = guards && (!b->used[k] || kt_buf_guard_ok(&b->st[k]));
  OT_CHECK(guards, "%s: wrote past the end of a buffer", ctx);
  bool grad_same = true;
  for (size_t i = 0; i < b->n; i++) grad_same = grad_same && kt_same(b->g.p[i], (float)b->dg[i]);
  OT_CHECK(grad_same, "%s: wrote to the gradient", ctx);
  return ok && guards && grad_same;
}

/* ------------------------------------------------------------ drivers */

/* One optimizer: its option sets, which states each uses and how they
 * start, and one step of kernel + reference. */
typedef struct op_driver {
  size_t ncfg;
  const char *state_names[MAX_STATE];
  const char *(*cfg_name)(size_t c);
  /* used states, their init ranges, the gradient distribution */
  void (*layout)(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm);
  void (*step)(size_t c, int t, any_fn fn, optic_isa isa, bufset *b);
  bool elementwise; /* every element independent of the others (not LAMB) */
} op_driver;

/* b restricted to the sub-range [lo, lo + len) of every array (no guards). */
static bufset view(const bufset *b, size_t lo, size_t len) {
  bufset v = *b;
  v.n = len;
  v.th.p += lo, v.g.p += lo, v.dg += lo;
  for (int r = 0; r < 2; r++) v.ref[r].th += lo;
  for (int k = 0; k < MAX_STATE; k++) {
    if (!b->used[k]) continue;
    v.st[k].p += lo;
    for (int r = 0; r < 2; r++) v.ref[r].st[k] += lo;
  }
  return v;
}

/* What the executor relies on: an elementwise kernel run on [0, k) and
 * [k, n) gives bitwise what one call on [0, n) gives, for 10 steps. */
static bool check_split(const op_driver *d, size_t c, any_fn fn, optic_isa isa, const char *fn_name) {
  const size_t n = 1000, k = 37;
  bool used[MAX_STATE];
  float lo[MAX_STATE], hi[MAX_STATE];
  grad_mode gm;
  d->layout(c, used, lo, hi, &gm);
  bufset whole, parts;
  bufs_make(&whole, n, 0, used);
  bufs_make(&parts, n, 0, used);
  kt_rng r1 = {0xC0FFEEull + c}, r2 = r1;
  bufs_init(&whole, &r1, lo, hi);
  bufs_init(&parts, &r2, lo, hi);
  for (int t = 1; t <= NSTEPS; t++) {
    bufs_grad(&whole, &r1, gm, t);
    memcpy(parts.g.p, whole.g.p, n * sizeof(float));
    memcpy(parts.dg, whole.dg, n * sizeof(double));
    d->step(c, t, fn, isa, &whole);
    bufset a = view(&parts, 0, k), b = view(&parts, k, n - k);
    d->step(c, t, fn, isa, &a);
    d->step(c, t, fn, isa, &b);
  }
  bool same = true;
  for (size_t i = 0; i < n && same; i++) {
    same = kt_same(whole.th.p[i], parts.th.p[i]);
    for (int j = 0; j < MAX_STATE; j++) same = same && (!used[j] || kt_same(whole.st[j].p[i], parts.st[j].p[i]));
    OT_CHECK(same, "%s [%s]: calls on [0, %zu) and [%zu, %zu) differ from one call at element %zu", fn_name,
             d->cfg_name(c), k, k, n, i);
  }
  bufs_free(&whole);
  bufs_free(&parts);
  return same;
}

static void sweep(const op_driver *d, any_fn fn, optic_isa isa, const char *fn_name) {
  if (kt_skip_isa(isa)) return;
  worst_error[STEP] = worst_error[RUN] = 0.0;
  size_t sizes[32];
  size_t nsizes = kt_sizes(isa, sizes, 32);
  int failures = 0;
  for (size_t c = 0; c < d->ncfg && failures < 5; c++) {
    bool used[MAX_STATE];
    float lo[MAX_STATE], hi[MAX_STATE];
    grad_mode gm;
    d->layout(c, used, lo, hi, &gm);
    if (d->elementwise && !check_split(d, c, fn, isa, fn_name)) failures++;
    kt_rng rng = {0x9E3779B97F4A7C15ull ^ (c * 0x100000001B3ull)};
    /* pass 0: the regular sweep; pass 1: NaN/inf gradients at two sizes */
    for (int pass = 0; pass < 2; pass++) {
      for (size_t si = 0; si < nsizes && failures < 5; si++) {
        size_t n = sizes[si];
        if (pass == 1 && n != 4097 && n != optic_isa_vector_floats(isa) + 1) continue;
        for (size_t oi = 0; oi < kt_noffsets; oi++) {
          bufset b;
          bufs_make(&b, n, kt_offsets[oi], used);
          bufs_init(&b, &rng, lo, hi);
          char ctx[256];
          bool ok = true;
          for (int t = 1; t <= NSTEPS && ok; t++) {
            bufs_grad(&b, &rng, pass == 1 ? GRAD_SPECIAL : gm, t);
            d->step(c, t, fn, isa, &b);
            snprintf(ctx, sizeof ctx, "%s [%s]%s n=%zu offset=%zu, step %d alone", fn_name, d->cfg_name(c),
                     pass == 1 ? " with NaN/inf gradients" : "", n, kt_offsets[oi], t);
            ok = bufs_check(&b, ctx, d->state_names, STEP);
            bufs_sync(&b, STEP);
          }
          snprintf(ctx, sizeof ctx, "%s [%s]%s n=%zu offset=%zu, after %d steps", fn_name, d->cfg_name(c),
                   pass == 1 ? " with NaN/inf gradients" : "", n, kt_offsets[oi], NSTEPS);
          if (!ok || !bufs_check(&b, ctx, d->state_names, RUN)) failures++;
          bufs_free(&b);
        }
      }
    }
  }
  printf("  %s: largest scaled error %.3g in one step (tolerance %.0e), %.3g after %d steps (tolerance %.0e)\n",
         fn_name, worst_error[STEP], TOL_STEP, worst_error[RUN], NSTEPS, TOL_RUN);
}

static void set_used(bool used[MAX_STATE], bool a, bool b, bool c) { used[0] = a, used[1] = b, used[2] = c; }
static void set_range(float lo[MAX_STATE], float hi[MAX_STATE], int k, float l, float h) { lo[k] = l, hi[k] = h; }

/* ---------------------------------------------------------------- SGD */
typedef struct sgd_cfg {
  const char *name;
  optic_sgd_params p;
  bool first_step_at_1; /* pass first_step on step 1 (PyTorch); else the buffer starts as given */
} sgd_cfg;

#define L2 OPTIC_OPTIM_DECAY_L2
#define DEC OPTIC_OPTIM_DECAY_DECOUPLED
static const sgd_cfg sgd_cfgs[] = {
    {"plain", {.lr = 0.05f}, false},
    {"plain L2", {.lr = 0.05f, .weight_decay = 0.1f, .decay = L2}, false},
    {"plain decoupled", {.lr = 0.05f, .weight_decay = 0.1f, .decay = DEC}, false},
    {"momentum", {.lr = 0.05f, .momentum = 0.9f}, true},
    {"momentum dampening L2", {.lr = 0.05f, .momentum = 0.9f, .dampening = 0.3f, .weight_decay = 0.05f}, true},
    {"momentum dampening, running buffer", {.lr = 0.05f, .momentum = 0.8f, .dampening = 0.3f}, false},
    {"nesterov L2", {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.05f, .nesterov = true}, true},
    {"keras momentum", {.lr = 0.05f, .momentum = 0.8f, .lr_in_momentum = true}, false},
    {"keras nesterov decoupled",
     {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.1f, .decay = DEC, .nesterov = true, .lr_in_momentum = true},
     true},
};

static const char *sgd_name(size_t c) { return sgd_cfgs[c].name; }
static void sgd_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  set_used(used, sgd_cfgs[c].p.momentum != 0.0f, false, false);
  set_range(lo, hi, 0, -0.5f, 0.5f);
  *gm = GRAD_UNIFORM;
}
static void sgd_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  (void)isa;
  optic_sgd_params p = sgd_cfgs[c].p;
  p.first_step = sgd_cfgs[c].first_step_at_1 && t == 1;
  fn.sgd(b->n, b->th.p, b->g.p, S(b, 0), &p);
  for (int r = 0; r < 2; r++) optic_ref_sgd(b->n, b->ref[r].th, b->dg, DS(b, r, 0), &p);
}
static const op_driver sgd_driver = {
    sizeof sgd_cfgs / sizeof sgd_cfgs[0], {"momentum_buf", "", ""}, sgd_name, sgd_layout, sgd_step, true};

/* --------------------------------------------------------------- Adam */
typedef struct adam_cfg {
  const char *name;
  optic_adam_params p;
} adam_cfg;

static const adam_cfg adam_cfgs[] = {
    {"pytorch eps", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f}},
    {"large eps outside", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 0.1f}},
    {"eps_root inside", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps_root = 0.05f}},
    {"eps and eps_root", {.lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-3f, .eps_root = 1e-2f}},
    {"L2", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f, .decay = L2}},
    {"adamw", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f, .decay = DEC}},
    {"amsgrad L2",
     {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.9f, .eps = 1e-8f, .weight_decay = 0.01f, .decay = L2, .amsgrad = true}},
    {"adamw amsgrad",
     {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.9f, .eps = 1e-2f, .weight_decay = 0.1f, .decay = DEC, .amsgrad = true}},
};

static const char *adam_name(size_t c) { return adam_cfgs[c].name; }
static void adam_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  set_used(used, true, true, adam_cfgs[c].p.amsgrad);
  set_range(lo, hi, 0, -0.5f, 0.5f);
  set_range(lo, hi, 1, 0.0f, 0.5f);
  set_range(lo, hi, 2, 0.0f, 0.5f);
  *gm = GRAD_UNIFORM;
}
static void adam_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  (void)isa;
  optic_adam_params p = adam_cfgs[c].p;
  p.bias_correction1 = optic_optim_bias_correction(p.beta1, (uint64_t)t);
  p.bias_correction2 = optic_optim_bias_correction(p.beta2, (uint64_t)t);
  fn.adam(b->n, b->th.p, b->g.p, S(b, 0), S(b, 1), S(b, 2), &p);
  for (int r = 0; r < 2; r++) optic_ref_adam(b->n, b->ref[r].th, b->dg, DS(b, r, 0), DS(b, r, 1), DS(b, r, 2), &p);
}
static const op_driver adam_driver = {
    sizeof adam_cfgs / sizeof adam_cfgs[0], {"m", "v", "vmax"}, adam_name, adam_layout, adam_step, true};

/* ------------------------------------------------------------ RMSprop */
typedef struct rmsprop_cfg {
  const char *name;
  optic_rmsprop_params p;
} rmsprop_cfg;

static const rmsprop_cfg rmsprop_cfgs[] = {
    {"pytorch", {.lr = 0.01f, .alpha = 0.99f, .eps = 1e-8f}},
    {"eps inside (keras, optax)", {.lr = 0.01f, .alpha = 0.9f, .eps_root = 0.05f}},
    {"momentum L2", {.lr = 0.01f, .alpha = 0.99f, .eps = 1e-8f, .momentum = 0.9f, .weight_decay = 0.1f}},
    {"keras momentum decoupled",
     {.lr = 0.01f,
      .alpha = 0.9f,
      .eps_root = 1e-2f,
      .momentum = 0.9f,
      .weight_decay = 0.1f,
      .decay = DEC,
      .lr_in_momentum = true}},
    {"centered", {.lr = 0.01f, .alpha = 0.9f, .eps = 1e-8f, .centered = true}},
    {"centered momentum eps inside",
     {.lr = 0.01f, .alpha = 0.9f, .eps_root = 0.05f, .momentum = 0.5f, .centered = true}},
    {"keras centered momentum decoupled",
     {.lr = 0.01f,
      .alpha = 0.9f,
      .eps = 1e-3f,
      .eps_root = 1e-3f,
      .momentum = 0.9f,
      .weight_decay = 0.1f,
      .decay = DEC,
      .centered = true,
      .lr_in_momentum = true}},
};

static const char *rmsprop_name(size_t c) { return rmsprop_cfgs[c].name; }
static void rmsprop_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  const optic_rmsprop_params *p = &rmsprop_cfgs[c].p;
  set_used(used, true, p->centered, p->momentum != 0.0f);
  set_range(lo, hi, 0, 0.3f, 0.6f); /* square_avg >= grad_avg² */
  set_range(lo, hi, 1, -0.1f, 0.1f);
  set_range(lo, hi, 2, -0.5f, 0.5f);
  *gm = p->centered ? GRAD_ALTERNATING : GRAD_UNIFORM;
}
static void rmsprop_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  (void)isa, (void)t;
  const optic_rmsprop_params *p = &rmsprop_cfgs[c].p;
  fn.rmsprop(b->n, b->th.p, b->g.p, S(b, 0), S(b, 1), S(b, 2), p);
  for (int r = 0; r < 2; r++) optic_ref_rmsprop(b->n, b->ref[r].th, b->dg, DS(b, r, 0), DS(b, r, 1), DS(b, r, 2), p);
}
static const op_driver rmsprop_driver = {sizeof rmsprop_cfgs / sizeof rmsprop_cfgs[0],
                                         {"square_avg", "grad_avg", "momentum_buf"},
                                         rmsprop_name,
                                         rmsprop_layout,
                                         rmsprop_step,
                                         true};

/* ------------------------------------------------------------ Adagrad */
typedef struct adagrad_cfg {
  const char *name;
  optic_adagrad_params p;
  float init_sum; /* initial_accumulator_value; < 0: random in [0, 0.5) */
} adagrad_cfg;

static const adagrad_cfg adagrad_cfgs[] = {
    {"pytorch (sum starts at 0)", {.lr = 0.1f, .eps = 1e-10f}, 0.0f},
    {"eps inside (optax, keras)", {.lr = 0.1f, .eps_root = 0.05f}, 0.1f},
    {"L2", {.lr = 0.1f, .eps = 1e-10f, .weight_decay = 0.1f, .decay = L2}, -1.0f},
    {"decoupled large eps", {.lr = 0.1f, .eps = 0.1f, .weight_decay = 0.1f, .decay = DEC}, -1.0f},
};

static const char *adagrad_name(size_t c) { return adagrad_cfgs[c].name; }
static void adagrad_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  float v = adagrad_cfgs[c].init_sum;
  set_used(used, true, false, false);
  if (v < 0.0f) {
    set_range(lo, hi, 0, 0.0f, 0.5f);
  } else {
    set_range(lo, hi, 0, v, v);
  }
  *gm = GRAD_UNIFORM;
}
static void adagrad_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  (void)isa, (void)t;
  const optic_adagrad_params *p = &adagrad_cfgs[c].p;
  fn.adagrad(b->n, b->th.p, b->g.p, S(b, 0), p);
  for (int r = 0; r < 2; r++) optic_ref_adagrad(b->n, b->ref[r].th, b->dg, DS(b, r, 0), p);
}
static const op_driver adagrad_driver = {
    sizeof adagrad_cfgs / sizeof adagrad_cfgs[0], {"sum", "", ""}, adagrad_name, adagrad_layout, adagrad_step, true};

/* --------------------------------------------------------------- Lion */
typedef struct lion_cfg {
  const char *name;
  optic_lion_params p;
} lion_cfg;

static const lion_cfg lion_cfgs[] = {
    {"default betas", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.99f}},
    {"weight decay", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.99f, .weight_decay = 0.1f}},
    {"other betas, large decay", {.lr = 0.01f, .beta1 = 0.95f, .beta2 = 0.98f, .weight_decay = 1.0f}},
};

static const char *lion_name(size_t c) { return lion_cfgs[c].name; }
static void lion_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  (void)c;
  set_used(used, true, false, false);
  set_range(lo, hi, 0, -0.5f, 0.5f);
  *gm = GRAD_UNIFORM;
}
static void lion_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  (void)isa, (void)t;
  const optic_lion_params *p = &lion_cfgs[c].p;
  fn.lion(b->n, b->th.p, b->g.p, S(b, 0), p);
  for (int r = 0; r < 2; r++) optic_ref_lion(b->n, b->ref[r].th, b->dg, DS(b, r, 0), p);
}
static const op_driver lion_driver = {
    sizeof lion_cfgs / sizeof lion_cfgs[0], {"m", "", ""}, lion_name, lion_layout, lion_step, true};

/* --------------------------------------------------------------- LAMB */
typedef struct lamb_cfg {
  const char *name;
  optic_lamb_params p;
} lamb_cfg;

static const lamb_cfg lamb_cfgs[] = {
    {"optax defaults", {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f}},
    {"weight decay in the trust ratio",
     {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f, .weight_decay = 0.01f}},
    {"eps_root, large decay", {.lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps_root = 0.05f, .weight_decay = 0.1f}},
};

static const char *lamb_name(size_t c) { return lamb_cfgs[c].name; }
static void lamb_layout(size_t c, bool used[MAX_STATE], float lo[MAX_STATE], float hi[MAX_STATE], grad_mode *gm) {
  (void)c;
  set_used(used, true, true, false);
  set_range(lo, hi, 0, -0.5f, 0.5f);
  set_range(lo, hi, 1, 0.0f, 0.5f);
  *gm = GRAD_UNIFORM;
}

/* Pass 1 runs on three sub-ranges (as the executor would split a tensor
 * across threads); their norms combine into the trust ratio. Besides the
 * final state, each step checks that the kernel's Σθ² is the double sum of
 * its float θ (to double rounding) and that Σu² is close to the reference's. */
static void lamb_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b, bool fn_is_moments) {
  const optic_optim_kernels *tbl = optic_optim_kernels_for(isa);
  optic_f32_lamb_moments_fn moments = fn_is_moments ? fn.lamb_moments : tbl->lamb_moments;
  optic_f32_lamb_apply_fn apply = fn_is_moments ? tbl->lamb_apply : fn.lamb_apply;
  optic_lamb_params p = lamb_cfgs[c].p;
  p.bias_correction1 = optic_optim_bias_correction(p.beta1, (uint64_t)t);
  p.bias_correction2 = optic_optim_bias_correction(p.beta2, (uint64_t)t);
  size_t n = b->n, cut[4] = {0, n / 3, n / 3 + (n + 1) / 5, n};
  optic_lamb_norms parts[3];
  double exact_sq = 0.0;
  for (size_t i = 0; i < n; i++) exact_sq += (double)b->th.p[i] * (double)b->th.p[i];
  for (int k = 0; k < 3; k++) {
    size_t lo = cut[k], len = cut[k + 1] - cut[k];
    moments(len, b->th.p + lo, b->g.p + lo, b->st[0].p + lo, b->st[1].p + lo, &p, &parts[k]);
  }
  float ratio = optic_lamb_trust_ratio(parts, 3);
  for (int k = 0; k < 3; k++) {
    size_t lo = cut[k], len = cut[k + 1] - cut[k];
    apply(len, b->th.p + lo, b->st[0].p + lo, b->st[1].p + lo, &p, ratio);
  }
  optic_lamb_norms ref;
  optic_ref_lamb(n, b->ref[STEP].th, b->dg, b->ref[STEP].st[0], b->ref[STEP].st[1], &p, &ref);
  optic_ref_lamb(n, b->ref[RUN].th, b->dg, b->ref[RUN].st[0], b->ref[RUN].st[1], &p, NULL);
  double got_p = parts[0].param_sq + parts[1].param_sq + parts[2].param_sq;
  double got_u = parts[0].update_sq + parts[1].update_sq + parts[2].update_sq;
  if (isfinite(exact_sq)) {
    OT_CHECK(fabs(got_p - exact_sq) <= 1e-12 * exact_sq, "param_sq %.17g, double sum of θ %.17g (n=%zu, t=%d)", got_p,
             exact_sq, n, t);
  }
  if (isfinite(ref.update_sq)) { /* with the per-element floor 0.1 of the file, squared */
    double scale = ref.update_sq > 0.01 * (double)n ? ref.update_sq : 0.01 * (double)n;
    OT_CHECK(fabs(got_u - ref.update_sq) <= TOL_STEP * scale, "update_sq %.17g, reference %.17g (n=%zu, t=%d)", got_u,
             ref.update_sq, n, t);
  } else {
    OT_CHECK(isnan(ref.update_sq) ? isnan(got_u) : got_u == ref.update_sq, "update_sq %.17g, reference %.17g", got_u,
             ref.update_sq);
  }
}
static void lamb_moments_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  lamb_step(c, t, fn, isa, b, true);
}
static void lamb_apply_step(size_t c, int t, any_fn fn, optic_isa isa, bufset *b) {
  lamb_step(c, t, fn, isa, b, false);
}
static const op_driver lamb_moments_driver = {
    sizeof lamb_cfgs / sizeof lamb_cfgs[0], {"m", "v", ""}, lamb_name, lamb_layout, lamb_moments_step, false};
static const op_driver lamb_apply_driver = {
    sizeof lamb_cfgs / sizeof lamb_cfgs[0], {"m", "v", ""}, lamb_name, lamb_layout, lamb_apply_step, false};

/* ------------------------------------------------------ list entries */
#define ENTRY(driver, member, isa, fn)       \
  static void test_##fn(void) {              \
    any_fn f;                                \
    f.member = fn;                           \
    sweep(&driver, f, OPTIC_ISA_##isa, #fn); \
  }
#define X_SGD(op, isa, fn) ENTRY(sgd_driver, sgd, isa, fn)
#define X_ADAM(op, isa, fn) ENTRY(adam_driver, adam, isa, fn)
#define X_RMSPROP(op, isa, fn) ENTRY(rmsprop_driver, rmsprop, isa, fn)
#define X_ADAGRAD(op, isa, fn) ENTRY(adagrad_driver, adagrad, isa, fn)
#define X_LION(op, isa, fn) ENTRY(lion_driver, lion, isa, fn)
#define X_LAMB_MOMENTS(op, isa, fn) ENTRY(lamb_moments_driver, lamb_moments, isa, fn)
#define X_LAMB_APPLY(op, isa, fn) ENTRY(lamb_apply_driver, lamb_apply, isa, fn)
#include "kernels/list/optim.inc"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY
#undef ENTRY

/* ---------------------------------------------------- step scalars */
static void step_scalars(void) {
  const float betas[] = {0.9f, 0.99f, 0.999f, 0.9999f};
  const uint64_t steps[] = {1, 2, 10, 1000, 100000};
  for (size_t i = 0; i < sizeof betas / sizeof betas[0]; i++) {
    for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
      double want = 1.0 - pow((double)betas[i], (double)steps[j]);
      float got = optic_optim_bias_correction(betas[i], steps[j]);
      OT_CHECK(fabs((double)got - want) <= 1e-7 * want, "1 - %.9g^%llu: %.9g, want %.17g", betas[i],
               (unsigned long long)steps[j], got, want);
    }
  }
  optic_lamb_norms parts[2] = {{3.0, 1.0}, {1.0, 3.0}};
  OT_CHECK(optic_lamb_trust_ratio(parts, 2) == 1.0f);
  parts[0] = (optic_lamb_norms){8.0, 1.0};
  parts[1] = (optic_lamb_norms){1.0, 0.0};
  OT_CHECK(optic_lamb_trust_ratio(parts, 2) == 3.0f, "sqrt(9)/sqrt(1)");
  parts[1] = (optic_lamb_norms){1.0, NAN};
  OT_CHECK(isnan(optic_lamb_trust_ratio(parts, 2)), "NaN norm gives a NaN ratio");
  parts[0] = (optic_lamb_norms){0.0, 4.0};
  parts[1] = (optic_lamb_norms){0.0, 5.0};
  OT_CHECK(optic_lamb_trust_ratio(parts, 2) == 1.0f, "zero parameter norm gives 1");
  parts[0] = (optic_lamb_norms){4.0, 0.0};
  parts[1] = (optic_lamb_norms){5.0, 0.0};
  OT_CHECK(optic_lamb_trust_ratio(parts, 2) == 1.0f, "zero update norm gives 1");
  OT_CHECK(optic_lamb_trust_ratio(parts, 0) == 1.0f, "empty tensor gives 1");
}

/* ------------------------------------------------------- dispatch */
static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_optim_kernels *t = optic_optim_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    OT_CHECK(t->sgd && t->adam && t->rmsprop && t->adagrad && t->lion && t->lamb_moments && t->lamb_apply,
             "%s table has a hole", optic_isa_name((optic_isa)i));
    for (int op = 0; op < OPTIC_OPTIM_OP_COUNT; op++) {
      OT_CHECK(t->isa_of[op] == OPTIC_ISA_SCALAR || t->isa_of[op] == (optic_isa)i, "%s %s",
               optic_isa_name((optic_isa)i), optic_optim_op_name((optic_optim_op)op));
    }
  }
#define IN_TABLE(member, op, isa, fn)                                                                 \
  OT_CHECK(optic_optim_kernels_for(OPTIC_ISA_##isa)->member == fn &&                                  \
               optic_optim_kernels_for(OPTIC_ISA_##isa)->isa_of[OPTIC_OPTIM_##op] == OPTIC_ISA_##isa, \
           #fn " not in its table");
#define X_SGD(op, isa, fn) IN_TABLE(sgd, op, isa, fn)
#define X_ADAM(op, isa, fn) IN_TABLE(adam, op, isa, fn)
#define X_RMSPROP(op, isa, fn) IN_TABLE(rmsprop, op, isa, fn)
#define X_ADAGRAD(op, isa, fn) IN_TABLE(adagrad, op, isa, fn)
#define X_LION(op, isa, fn) IN_TABLE(lion, op, isa, fn)
#define X_LAMB_MOMENTS(op, isa, fn) IN_TABLE(lamb_moments, op, isa, fn)
#define X_LAMB_APPLY(op, isa, fn) IN_TABLE(lamb_apply, op, isa, fn)
#include "kernels/list/optim.inc"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY
#undef IN_TABLE
  OT_CHECK(strcmp(optic_optim_op_name(OPTIC_OPTIM_ADAM), "adam") == 0);
  OT_CHECK(strcmp(optic_optim_op_name(OPTIC_OPTIM_OP_COUNT), "invalid") == 0);
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(optic_optim_kernels_get() == optic_optim_kernels_for(OPTIC_ISA_SCALAR));
  OT_CHECK(optic_optim_kernels_get()->adam == optic_f32_adam__scalar);
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  OT_CHECK(optic_optim_kernels_get() == optic_optim_kernels_for(optic_isa_best()));
}

static const ot_case cases[] = {
#define ENTRY(fn) {#fn, test_##fn},
#define X_SGD(op, isa, fn) ENTRY(fn)
#define X_ADAM(op, isa, fn) ENTRY(fn)
#define X_RMSPROP(op, isa, fn) ENTRY(fn)
#define X_ADAGRAD(op, isa, fn) ENTRY(fn)
#define X_LION(op, isa, fn) ENTRY(fn)
#define X_LAMB_MOMENTS(op, isa, fn) ENTRY(fn)
#define X_LAMB_APPLY(op, isa, fn) ENTRY(fn)
#include "kernels/list/optim.inc"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY
#undef ENTRY
    {"step_scalars", step_scalars},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
