/* The optimizer API around the update: validation errors with messages,
 * non-finite gradients skipped (parameters and state untouched) and
 * reported, state export → import → continue bitwise equal to an
 * uninterrupted run (and import's all-or-nothing errors), schedules against
 * their closed forms, global-norm clipping, and optax's published doctest
 * numbers (tests/data/optax_doctest_expectations.json) through the API. */
#include <string.h>

#include "tests/optim/optim_test_util.h"

static optic_optim_hparams defaults(optic_optim_kind k, optic_optim_convention c) {
  optic_optim_hparams h;
  OT_EXPECT_OK(optic_optim_hparams_default(k, c, &h));
  return h;
}

/* add_group on a fresh optimizer with h fails with `want`, naming `field`. */
static void expect_group_error(optic_optim_hparams h, optic_status want, const char *field) {
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  optic_shape s;
  int64_t d = 4;
  optic_shape_make(1, &d, &s);
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &h, 1, &s, NULL), want);
  OT_CHECK(strstr(optic_last_error(), field) != NULL, "message \"%s\" does not name %s", optic_last_error(), field);
  OT_CHECK(optic_optim_group_count(opt) == 0);
  optic_optim_destroy(opt);
}

static void invalid_hyperparameters_are_rejected(void) {
  const optic_optim_convention PT = OPTIC_OPTIM_CONVENTION_PYTORCH;
  optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_ADAM, PT);
  h.lr = -1e-3;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "lr");
  h.lr = NAN;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "lr");
  const double bad_betas[] = {1.0, -0.1, 1.5, NAN};
  for (size_t i = 0; i < 4; i++) {
    h = defaults(OPTIC_OPTIM_KIND_ADAMW, PT);
    h.beta1 = bad_betas[i];
    expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "beta1");
    h = defaults(OPTIC_OPTIM_KIND_LAMB, OPTIC_OPTIM_CONVENTION_DEFAULT);
    h.beta2 = bad_betas[i];
    expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "beta2");
  }
  h = defaults(OPTIC_OPTIM_KIND_LION, OPTIC_OPTIM_CONVENTION_DEFAULT);
  h.beta1 = 1.0;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "beta1");
  const optic_optim_kind with_eps[] = {OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_KIND_RMSPROP, OPTIC_OPTIM_KIND_ADAGRAD};
  for (size_t i = 0; i < 3; i++) {
    h = defaults(with_eps[i], PT);
    h.eps = 0.0;
    expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "eps");
    h.eps = -1e-8;
    expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "eps");
  }
  h = defaults(OPTIC_OPTIM_KIND_SGD, PT);
  h.weight_decay = -0.1;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "weight_decay");
  h = defaults(OPTIC_OPTIM_KIND_SGD, PT);
  h.momentum = 0.9, h.dampening = 0.1, h.nesterov = true;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "nesterov");
  h = defaults(OPTIC_OPTIM_KIND_RMSPROP, PT);
  h.alpha = 1.0;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "alpha");
  h = defaults(OPTIC_OPTIM_KIND_ADAGRAD, PT);
  h.lr_decay = -1;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "lr_decay");
  h = defaults(OPTIC_OPTIM_KIND_ADAM, PT);
  h.schedule = (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = 10, .decay_steps = 10};
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "warmup_steps");
  h.schedule = (optic_lr_schedule){.kind = OPTIC_LR_STEP, .step_size = 0, .gamma = 0.5};
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "step_size");
  h = defaults(OPTIC_OPTIM_KIND_ADAM, PT);
  h.size = 8;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "size");
  h = defaults(OPTIC_OPTIM_KIND_LAMB, OPTIC_OPTIM_CONVENTION_OPTAX);
  h.convention = PT;
  expect_group_error(h, OPTIC_ERR_UNSUPPORTED, "lamb");
  h = defaults(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_OPTAX);
  h.amsgrad = true;
  expect_group_error(h, OPTIC_ERR_UNSUPPORTED, "amsgrad");
  optic_optim_hparams out;
  OT_EXPECT_STATUS(optic_optim_hparams_default(OPTIC_OPTIM_KIND_LION, PT, &out), OPTIC_ERR_UNSUPPORTED);
  OT_EXPECT_STATUS(optic_optim_hparams_default(OPTIC_OPTIM_KIND_COUNT_, PT, &out), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_hparams_default(OPTIC_OPTIM_KIND_SGD, PT, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  /* Defaults resolve the convention and follow each library. */
  out = defaults(OPTIC_OPTIM_KIND_LAMB, OPTIC_OPTIM_CONVENTION_DEFAULT);
  OT_CHECK(out.convention == OPTIC_OPTIM_CONVENTION_OPTAX && out.eps == 1e-6);
  out = defaults(OPTIC_OPTIM_KIND_ADAGRAD, OPTIC_OPTIM_CONVENTION_DEFAULT);
  OT_CHECK(out.convention == PT && out.initial_accumulator_value == 0.0 && out.eps == 1e-10);
  out = defaults(OPTIC_OPTIM_KIND_ADAGRAD, OPTIC_OPTIM_CONVENTION_KERAS);
  OT_CHECK(out.initial_accumulator_value == 0.1 && out.eps == 1e-7);
  out = defaults(OPTIC_OPTIM_KIND_ADAMW, PT);
  OT_CHECK(out.weight_decay == 1e-2);
}

static void invalid_calls_are_rejected(void) {
  optic_optim_t *opt = NULL;
  OT_EXPECT_STATUS(optic_optim_create(NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_optim_options o = {.size = sizeof o, .threads = -1};
  OT_EXPECT_STATUS(optic_optim_create(&o, &opt), OPTIC_ERR_INVALID_ARGUMENT);
  o = (optic_optim_options){.size = sizeof o, .clip_global_norm = -1};
  OT_EXPECT_STATUS(optic_optim_create(&o, &opt), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(opt == NULL);
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  ot_tensors t;
  ot_tensors_make(&t, 3);
  optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_DEFAULT);
  OT_EXPECT_STATUS(optic_optim_add_group(NULL, &h, 3, t.shapes, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_add_group(opt, NULL, 3, t.shapes, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &h, 3, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 3, t.shapes, NULL));
  OT_EXPECT_STATUS(optic_optim_step(NULL, t.tp, t.tg, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step(opt, NULL, t.tg, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, NULL, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, t.tg, 2, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "2 tensors") != NULL, "%s", optic_last_error());
  /* A gradient of another size than its parameter. */
  optic_tensor bad[3] = {t.tg[0], t.tg[1], t.tg[2]};
  int64_t d = 38;
  optic_shape_make(1, &d, &bad[1].shape);
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, bad, 3, NULL), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(strstr(optic_last_error(), "f32[38]") && strstr(optic_last_error(), "f32[37]"), "%s", optic_last_error());
  bad[1] = t.tg[1];
  bad[1].dtype = OPTIC_F64;
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, bad, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  bad[1] = t.tg[1];
  bad[1].data = NULL;
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, bad, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  bad[1] = t.tp[1]; /* the gradient is the parameter itself */
  OT_EXPECT_STATUS(optic_optim_step(opt, t.tp, bad, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "overlap") != NULL, "%s", optic_last_error());
  uint64_t step = 9;
  OT_EXPECT_OK(optic_optim_group_step(opt, 0, &step));
  OT_CHECK(step == 0, "failed steps must not count (%llu)", (unsigned long long)step);
  OT_EXPECT_STATUS(optic_optim_group_step(opt, 1, &step), OPTIC_ERR_INVALID_ARGUMENT);
  optic_optim_destroy(opt);
  optic_optim_destroy(NULL);
  ot_tensors_free(&t);
}

/* A bad shape in add_group: the message says which tensor and what is wrong,
 * once (the call wraps the shape check's reason with its own context). */
static void bad_shapes_are_named_once(void) {
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_DEFAULT);
  optic_shape shapes[2] = {{.rank = 1, .dims = {4}}, {.rank = 2, .dims = {2, -3}}};
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &h, 2, shapes, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  const char *want = "optim_add_group: tensor 1: dim 1 is -3; dims must be >= 0";
  OT_CHECK(strcmp(optic_last_error(), want) == 0, "got '%s', want '%s'", optic_last_error(), want);
  shapes[1] = (optic_shape){.rank = 2, .dims = {1099511627776, 1099511627776}};
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &h, 2, shapes, NULL), OPTIC_ERR_OVERFLOW);
  want = "optim_add_group: tensor 1: shape [1099511627776,1099511627776] has more than ";
  OT_CHECK(strncmp(optic_last_error(), want, strlen(want)) == 0, "got '%s', want '%s...'", optic_last_error(), want);
  shapes[1] = (optic_shape){.rank = 9};
  OT_EXPECT_STATUS(optic_optim_add_group(opt, &h, 2, shapes, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  want = "optim_add_group: tensor 1: rank 9 is outside [0, 8]";
  OT_CHECK(strcmp(optic_last_error(), want) == 0, "got '%s', want '%s'", optic_last_error(), want);
  OT_CHECK(optic_optim_group_count(opt) == 0);
  optic_optim_destroy(opt);
}

/* Overlap across tensors: a parameter may share no byte with another
 * parameter or any gradient; gradients may share memory with each other
 * unless clipping (which scales them in place) is on. Refused steps change
 * nothing. Layout: one flat buffer, three f32[16] tensors. */
static void overlap_across_tensors(void) {
  for (int clip = 0; clip < 2; clip++) {
    optic_optim_options o = {.size = sizeof o, .clip_global_norm = clip ? 1e-3 : 0.0};
    optic_optim_t *opt = NULL;
    OT_EXPECT_OK(optic_optim_create(&o, &opt));
    optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_DEFAULT);
    optic_shape shapes[3] = {{.rank = 1, .dims = {16}}, {.rank = 1, .dims = {16}}, {.rank = 1, .dims = {16}}};
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, 3, shapes, NULL));
    float buf[8 * 16], keep[8 * 16];
    for (int i = 0; i < 8 * 16; i++) buf[i] = keep[i] = (float)(i % 7) * 0.25f;
    optic_tensor p[3], g[3];
    for (int i = 0; i < 3; i++) {
      optic_tensor_make(OPTIC_F32, &shapes[i], buf + 16 * i, &p[i]);
      optic_tensor_make(OPTIC_F32, &shapes[i], buf + 16 * (4 + i), &g[i]);
    }
    struct {
      const char *what, *want;
      optic_tensor *t;
      float *data;
    } cases[] = {
        {"param 1 == param 0", "param 1 overlaps param 0", &p[1], buf},
        {"param 2 starts in param 1", "param 2 overlaps param 1", &p[2], buf + 16 + 15},
        {"param 0 ends in grad 0", "param 0 and its grad overlap", &p[0], buf + 4 * 16 - 15},
        {"param 2 == grad 0", "param 2 overlaps grad 0", &p[2], buf + 4 * 16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      float *saved = cases[k].t->data;
      cases[k].t->data = cases[k].data;
      OT_EXPECT_STATUS(optic_optim_step(opt, p, g, 3, NULL), OPTIC_ERR_INVALID_ARGUMENT);
      OT_CHECK(strstr(optic_last_error(), cases[k].want) != NULL, "clip %d, %s: message '%s' lacks '%s'", clip,
               cases[k].what, optic_last_error(), cases[k].want);
      OT_CHECK(memcmp(buf, keep, sizeof buf) == 0, "clip %d, %s: a refused step changed memory", clip, cases[k].what);
      cases[k].t->data = saved;
    }
    /* Two gradients at one address: fine without clipping, refused with it. */
    g[1].data = g[0].data;
    optic_status st = optic_optim_step(opt, p, g, 3, NULL);
    if (clip) {
      OT_CHECK(st == OPTIC_ERR_INVALID_ARGUMENT && strstr(optic_last_error(), "grad 1 overlaps grad 0"),
               "clipping, shared grads: %s (%s)", optic_status_name(st), optic_last_error());
    } else {
      OT_CHECK(st == OPTIC_OK, "shared grads without clipping: %s (%s)", optic_status_name(st), optic_last_error());
    }
    g[1].data = buf + 16 * 5;
    OT_EXPECT_OK(optic_optim_step(opt, p, g, 3, NULL)); /* adjacent everywhere: fine */
    optic_optim_destroy(opt);
  }
}

/* Copies of every parameter and state tensor, to check "untouched". */
typedef struct snapshot {
  size_t count;
  float *data[64];
  size_t bytes[64];
} snapshot;

static void snap(snapshot *s, const optic_optim_t *opt, const ot_tensors *t) {
  s->count = 0;
  for (size_t i = 0; i < t->count; i++) {
    s->bytes[s->count] = t->n[i] * sizeof(float);
    s->data[s->count] = malloc(s->bytes[s->count] + 1);
    memcpy(s->data[s->count++], t->p[i], t->n[i] * sizeof(float));
  }
  optic_optim_state *st = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &st));
  for (size_t k = 0; st && k < st->tensor_count && s->count < 64; k++) {
    size_t b = 0;
    optic_tensor_bytes(&st->tensors[k].tensor, &b);
    s->bytes[s->count] = b;
    s->data[s->count] = malloc(b + 1);
    memcpy(s->data[s->count++], st->tensors[k].tensor.data, b);
  }
  optic_optim_state_destroy(st);
}

static bool snap_equal(const snapshot *a, const snapshot *b) {
  if (a->count != b->count) return false;
  for (size_t i = 0; i < a->count; i++) {
    if (a->bytes[i] != b->bytes[i] || memcmp(a->data[i], b->data[i], a->bytes[i]) != 0) return false;
  }
  return true;
}

static void snap_free(snapshot *s) {
  for (size_t i = 0; i < s->count; i++) free(s->data[i]);
}

static void nonfinite_gradients_skip_the_step(void) {
  const float bad_values[] = {NAN, INFINITY, -INFINITY};
  for (size_t b = 0; b < 3; b++) {
    optic_optim_options o = {.size = sizeof o, .skip_nonfinite = true, .clip_global_norm = b == 2 ? 1.0 : 0.0};
    optic_optim_t *opt = NULL;
    OT_EXPECT_OK(optic_optim_create(&o, &opt));
    ot_tensors t;
    ot_tensors_make(&t, OT_NTENSORS);
    optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_CONVENTION_PYTORCH);
    h.amsgrad = true;
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, OT_NTENSORS, t.shapes, NULL));
    kt_rng r = {.s = 11};
    for (size_t i = 0; i < OT_NTENSORS; i++) kt_fill(&r, t.p[i], t.n[i], -1, 1, 0);
    for (int step = 1; step <= 4; step++) {
      for (size_t i = 0; i < OT_NTENSORS; i++) ot_grad(1, (uint64_t)step, i, t.g[i], t.n[i]);
      optic_optim_step_report rep;
      if (step == 3) {
        t.g[4][65600] = bad_values[b];
        t.g[4][65601] = NAN;
        snapshot before, after;
        snap(&before, opt, &t);
        OT_EXPECT_OK(optic_optim_step(opt, t.tp, t.tg, OT_NTENSORS, &rep));
        snap(&after, opt, &t);
        OT_CHECK(rep.skipped && rep.bad_tensor == 4 && rep.bad_element == 65600, "skipped %d at %zu/%zu", rep.skipped,
                 rep.bad_tensor, rep.bad_element);
        OT_CHECK(!isfinite(rep.grad_norm));
        OT_CHECK(snap_equal(&before, &after), "a skipped step changed parameters or state");
        snap_free(&before), snap_free(&after);
        uint64_t s = 0;
        OT_EXPECT_OK(optic_optim_group_step(opt, 0, &s));
        OT_CHECK(s == 2 && optic_optim_skipped_steps(opt) == 1, "step %llu skipped %llu", (unsigned long long)s,
                 (unsigned long long)optic_optim_skipped_steps(opt));
      } else {
        OT_EXPECT_OK(optic_optim_step(opt, t.tp, t.tg, OT_NTENSORS, &rep));
        OT_CHECK(!rep.skipped && isfinite(rep.grad_norm));
      }
    }
    for (size_t i = 0; i < OT_NTENSORS; i++)
      for (size_t e = 0; e < t.n[i]; e++) OT_CHECK(isfinite(t.p[i][e]));
    optic_optim_destroy(opt);
    ot_tensors_free(&t);
  }
}

/* ---------------------------------------------------- export / import */

static optic_optim_hparams resume_hparams(size_t k) {
  static const optic_optim_kind kinds[] = {OPTIC_OPTIM_KIND_SGD,     OPTIC_OPTIM_KIND_ADAM,    OPTIC_OPTIM_KIND_ADAMW,
                                           OPTIC_OPTIM_KIND_RMSPROP, OPTIC_OPTIM_KIND_ADAGRAD, OPTIC_OPTIM_KIND_LAMB,
                                           OPTIC_OPTIM_KIND_LION};
  static const optic_optim_convention convs[] = {OPTIC_OPTIM_CONVENTION_PYTORCH, OPTIC_OPTIM_CONVENTION_KERAS,
                                                 OPTIC_OPTIM_CONVENTION_OPTAX};
  optic_optim_hparams h = defaults(kinds[k % 7], k % 7 >= 5 ? convs[1 + k / 7 % 2] : convs[k / 7 % 3]);
  h.lr = 0.01;
  h.momentum = 0.9;
  h.weight_decay = 0.01;
  h.amsgrad = h.convention != OPTIC_OPTIM_CONVENTION_OPTAX; /* optax amsgrad is UNSUPPORTED */
  h.centered = true;
  h.lr_decay = 0.01;
  h.schedule = (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = 2, .decay_steps = 8, .min_lr = 1e-3};
  OT_EXPECT_OK(optic_optim_hparams_clear_unused(&h)); /* a kind takes only the fields it uses */
  return h;
}

/* Runs `steps` steps from `from` (1-based step numbers of the gradients). */
static void run_steps(optic_optim_t *opt, ot_tensors *t, int from, int steps) {
  for (int s = from; s < from + steps; s++) {
    for (size_t i = 0; i < t->count; i++) ot_grad(21, (uint64_t)s, i, t->g[i], t->n[i]);
    OT_EXPECT_OK(optic_optim_step(opt, t->tp, t->tg, t->count, NULL));
  }
}

static optic_optim_t *make_two_groups(size_t k, ot_tensors *t) {
  optic_optim_options o = {.size = sizeof o, .threads = 2, .clip_global_norm = 50};
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  optic_optim_hparams h0 = resume_hparams(k), h1 = resume_hparams(k + 3);
  OT_EXPECT_OK(optic_optim_add_group(opt, &h0, 2, t->shapes, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, &h1, OT_NTENSORS - 2, t->shapes + 2, NULL));
  return opt;
}

static void export_import_continue_is_bitwise(void) {
  for (size_t k = 0; k < 21; k++) {
    ot_tensors a, b;
    ot_tensors_make(&a, OT_NTENSORS);
    ot_tensors_make(&b, OT_NTENSORS);
    kt_rng r = {.s = 40 + k};
    for (size_t i = 0; i < OT_NTENSORS; i++) {
      kt_fill(&r, a.p[i], a.n[i], -1, 1, 0);
      memcpy(b.p[i], a.p[i], a.n[i] * sizeof(float));
    }
    optic_optim_t *whole = make_two_groups(k, &a);
    run_steps(whole, &a, 1, 10);
    /* Interrupted: 4 steps, export, copy out (the checkpoint), new optimizer, import, 6 more. */
    optic_optim_t *first = make_two_groups(k, &b);
    run_steps(first, &b, 1, 4);
    optic_optim_state *st = NULL;
    OT_EXPECT_OK(optic_optim_state_export(first, &st));
    if (!st) return;
    OT_CHECK(st->version == OPTIC_OPTIM_STATE_VERSION);
    optic_named_tensor saved[64];
    optic_named_scalar scalars[16];
    OT_CHECK(st->tensor_count <= 64 && st->scalar_count <= 16);
    for (size_t i = 0; i < st->tensor_count; i++) {
      size_t bytes = 0;
      optic_tensor_bytes(&st->tensors[i].tensor, &bytes);
      saved[i] = st->tensors[i];
      saved[i].name = strdup(st->tensors[i].name);
      saved[i].tensor.data = malloc(bytes + 1);
      memcpy(saved[i].tensor.data, st->tensors[i].tensor.data, bytes);
    }
    for (size_t i = 0; i < st->scalar_count; i++) {
      scalars[i] = st->scalars[i];
      scalars[i].name = strdup(st->scalars[i].name);
      if (strcmp(scalars[i].name, "group.1/step") == 0) OT_CHECK(scalars[i].value == 4);
    }
    optic_optim_state copy = {.version = st->version,
                              .tensor_count = st->tensor_count,
                              .tensors = saved,
                              .scalar_count = st->scalar_count,
                              .scalars = scalars};
    optic_optim_state_destroy(st);
    optic_optim_destroy(first);
    optic_optim_t *second = make_two_groups(k, &b);
    OT_EXPECT_OK(optic_optim_state_import(second, &copy));
    run_steps(second, &b, 5, 6);
    for (size_t i = 0; i < OT_NTENSORS; i++) {
      OT_CHECK(memcmp(a.p[i], b.p[i], a.n[i] * sizeof(float)) == 0, "case %zu (%s/%s): tensor %zu differs after resume",
               k, optic_optim_kind_name(resume_hparams(k).kind),
               optic_optim_convention_name(resume_hparams(k).convention), i);
    }
    snapshot sa, sb;
    snap(&sa, whole, &a), snap(&sb, second, &b);
    OT_CHECK(snap_equal(&sa, &sb), "case %zu: state differs after resume", k);
    snap_free(&sa), snap_free(&sb);
    /* Import errors leave the optimizer unchanged. */
    if (k == 1) {
      snapshot s0, s1;
      snap(&s0, second, &b);
      optic_optim_state wrong = copy;
      wrong.version = 99;
      OT_EXPECT_STATUS(optic_optim_state_import(second, &wrong), OPTIC_ERR_INVALID_ARGUMENT);
      wrong = copy;
      wrong.tensor_count--; /* one missing */
      OT_EXPECT_STATUS(optic_optim_state_import(second, &wrong), OPTIC_ERR_INVALID_ARGUMENT);
      const char *name0 = saved[0].name;
      saved[0].name = saved[1].name; /* a duplicate (and so one missing) */
      OT_EXPECT_STATUS(optic_optim_state_import(second, &copy), OPTIC_ERR_INVALID_ARGUMENT);
      saved[0].name = name0;
      optic_shape good = saved[copy.tensor_count - 1].tensor.shape;
      saved[copy.tensor_count - 1].tensor.shape.dims[0]++;
      OT_EXPECT_STATUS(optic_optim_state_import(second, &copy), OPTIC_ERR_SHAPE_MISMATCH);
      saved[copy.tensor_count - 1].tensor.shape = good;
      int64_t kind = scalars[1].value;
      OT_CHECK(strstr(scalars[1].name, "kind") != NULL, "%s", scalars[1].name);
      scalars[1].value = kind + 1;
      OT_EXPECT_STATUS(optic_optim_state_import(second, &copy), OPTIC_ERR_INVALID_ARGUMENT);
      scalars[1].value = kind;
      snap(&s1, second, &b);
      OT_CHECK(snap_equal(&s0, &s1), "a failed import changed the optimizer");
      snap_free(&s0), snap_free(&s1);
    }
    for (size_t i = 0; i < copy.tensor_count; i++) free((void *)saved[i].name), free(saved[i].tensor.data);
    for (size_t i = 0; i < copy.scalar_count; i++) free((void *)scalars[i].name);
    optic_optim_destroy(whole), optic_optim_destroy(second);
    ot_tensors_free(&a), ot_tensors_free(&b);
  }
}

/* ------------------------------------------------------------ schedules */

static void schedules_match_closed_forms(void) {
  const double g = 0.1, pi = 3.14159265358979323846;
  double v;
  for (uint64_t t = 0; t < 40; t++) {
    optic_lr_schedule s = {.kind = OPTIC_LR_CONSTANT};
    OT_EXPECT_OK(optic_lr_schedule_value(&s, g, t, &v));
    OT_CHECK(v == g);
    s = (optic_lr_schedule){.kind = OPTIC_LR_STEP, .step_size = 7, .gamma = 0.5};
    OT_EXPECT_OK(optic_lr_schedule_value(&s, g, t, &v));
    OT_CHECK(v == g * ldexp(1.0, -(int)(t / 7)), "step t=%llu: %g", (unsigned long long)t, v);
    s = (optic_lr_schedule){.kind = OPTIC_LR_EXPONENTIAL, .gamma = 0.9};
    OT_EXPECT_OK(optic_lr_schedule_value(&s, g, t, &v));
    double want = g;
    for (uint64_t i = 0; i < t; i++) want *= 0.9;
    OT_CHECK(fabs(v - want) <= 1e-14 * want, "exponential t=%llu: %.17g vs %.17g", (unsigned long long)t, v, want);
    s = (optic_lr_schedule){.kind = OPTIC_LR_COSINE, .decay_steps = 30, .min_lr = 0.01};
    OT_EXPECT_OK(optic_lr_schedule_value(&s, g, t, &v));
    want = t >= 30 ? 0.01 : 0.01 + 0.09 * 0.5 * (1 + cos(pi * (double)t / 30));
    OT_CHECK(fabs(v - want) <= 1e-15, "cosine t=%llu", (unsigned long long)t);
    s = (optic_lr_schedule){.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = 5, .decay_steps = 25};
    OT_EXPECT_OK(optic_lr_schedule_value(&s, g, t, &v));
    want = t < 5 ? g * (double)(t + 1) / 5 : t >= 25 ? 0.0 : g * 0.5 * (1 + cos(pi * (double)(t - 5) / 20));
    OT_CHECK(fabs(v - want) <= 1e-15, "warmup cosine t=%llu: %g vs %g", (unsigned long long)t, v, want);
  }
  /* Landmarks: the end of warm-up is the peak, half-way down the cosine is the midpoint. */
  optic_lr_schedule s = {.kind = OPTIC_LR_WARMUP_COSINE, .warmup_steps = 4, .decay_steps = 14, .min_lr = 0.02};
  OT_EXPECT_OK(optic_lr_schedule_value(&s, g, 3, &v));
  OT_CHECK(v == g);
  OT_EXPECT_OK(optic_lr_schedule_value(&s, g, 9, &v));
  OT_CHECK(fabs(v - 0.06) <= 1e-15, "%g", v);
  s = (optic_lr_schedule){.kind = OPTIC_LR_COSINE, .decay_steps = 10, .min_lr = 0.2};
  OT_EXPECT_STATUS(optic_lr_schedule_value(&s, g, 0, &v), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_lr_schedule_value(&s, -1, 0, &v), OPTIC_ERR_INVALID_ARGUMENT);
  s = (optic_lr_schedule){.kind = OPTIC_LR_EXPONENTIAL, .gamma = 1.5};
  OT_EXPECT_STATUS(optic_lr_schedule_value(&s, g, 0, &v), OPTIC_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ clipping */

/* Plain SGD (lr 1) makes the applied gradient visible: θ_after = θ − g·scale. */
static void clipping_scales_by_global_norm(void) {
  const double norms[] = {0.5, 3.0, 1e9};
  for (size_t c = 0; c < 3; c++) {
    optic_optim_options o = {.size = sizeof o, .clip_global_norm = norms[c]};
    optic_optim_t *opt = NULL;
    OT_EXPECT_OK(optic_optim_create(&o, &opt));
    ot_tensors t;
    ot_tensors_make(&t, 3);
    optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_PYTORCH);
    h.lr = 1.0;
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, 3, t.shapes, NULL));
    double sq = 0;
    for (size_t i = 0; i < 3; i++) {
      ot_grad(2, 1, i, t.g[i], t.n[i]);
      for (size_t e = 0; e < t.n[i]; e++) sq += (double)t.g[i][e] * t.g[i][e], t.p[i][e] = 0;
    }
    const double norm = sqrt(sq), coef = norms[c] / (norm + 1e-6);
    float *g0 = malloc(t.n[2] * sizeof(float));
    memcpy(g0, t.g[2], t.n[2] * sizeof(float));
    optic_optim_step_report rep;
    OT_EXPECT_OK(optic_optim_step(opt, t.tp, t.tg, 3, &rep));
    OT_CHECK(fabs(rep.grad_norm - norm) <= 1e-14 * norm);
    OT_CHECK(rep.update_wall_ns == 0 && rep.update_cpu_ns == 0, "no profile asked for");
    const double want_scale = coef < 1 ? coef : 1.0;
    OT_CHECK(fabs(rep.clip_scale - want_scale) <= 1e-7 * want_scale, "clip %g: scale %g, want %g", norms[c],
             rep.clip_scale, want_scale);
    double after = 0;
    for (size_t i = 0; i < 3; i++)
      for (size_t e = 0; e < t.n[i]; e++) after += (double)t.p[i][e] * t.p[i][e];
    OT_CHECK(fabs(sqrt(after) - fmin(norm, norms[c])) <= 1e-6 * fmin(norm, norms[c]), "clip %g: applied norm %g",
             norms[c], sqrt(after));
    for (size_t e = 0; e < t.n[2]; e++) {
      OT_CHECK(t.g[2][e] == (coef < 1 ? (float)(g0[e] * (float)coef) : g0[e]), "gradients are scaled in place");
    }
    free(g0);
    optic_optim_destroy(opt);
    ot_tensors_free(&t);
  }
}

/* --------------------------------------------------- optax doctests */

/* tests/data/<name> (OPTIC_TEST_SOURCE_DIR: tests/CMakeLists.txt). */
static char *read_data_file(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/data/%s", OPTIC_TEST_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  OT_CHECK(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  char *text = calloc(1, 1 << 16);
  size_t len = text ? fread(text, 1, (1 << 16) - 1, f) : 0;
  fclose(f);
  OT_CHECK(len > 0 && len < (1 << 16) - 1);
  return text;
}

static bool expected_values(const char *json, const char *key, char out[5][16]) {
  const char *p = strstr(json, "\"cases\"");
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  if (!p || !(p = strstr(p, quoted)) || !(p = strchr(p + strlen(quoted), '['))) return false;
  for (int i = 0; i < 5; i++) {
    const char *open = strchr(p, '"'), *close = open ? strchr(open + 1, '"') : NULL, *end = strchr(p, ']');
    if (!open || !close || (end && end < open) || close - open - 1 >= 16) return false;
    snprintf(out[i], 16, "%.*s", (int)(close - open - 1), open + 1);
    p = close + 1;
  }
  return true;
}

/* optax's protocol: f(x) = Σx², x = [1, 2, 3], 5 × (g = 2x; update), f printed
 * "%.2E" after each; optax's defaults are the OPTAX convention's defaults. */
static void optax_doctests_through_the_api(void) {
  char *json = read_data_file("optax_doctest_expectations.json");
  if (!json) return;
  static const struct {
    const char *key;
    optic_optim_kind kind;
    double lr;
  } cs[] = {{"adam(learning_rate=0.003)", OPTIC_OPTIM_KIND_ADAM, 0.003},
            {"adamw(learning_rate=0.003)", OPTIC_OPTIM_KIND_ADAMW, 0.003},
            {"sgd(learning_rate=0.003)", OPTIC_OPTIM_KIND_SGD, 0.003},
            {"rmsprop(learning_rate=0.003)", OPTIC_OPTIM_KIND_RMSPROP, 0.003},
            {"adagrad(learning_rate=1.0)", OPTIC_OPTIM_KIND_ADAGRAD, 1.0},
            {"lamb(learning_rate=0.003)", OPTIC_OPTIM_KIND_LAMB, 0.003}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
    char want[5][16];
    OT_CHECK(expected_values(json, cs[c].key, want), "no values for %s", cs[c].key);
    optic_optim_t *opt = NULL;
    OT_EXPECT_OK(optic_optim_create(NULL, &opt));
    optic_optim_hparams h = defaults(cs[c].kind, OPTIC_OPTIM_CONVENTION_OPTAX);
    h.lr = cs[c].lr;
    int64_t three = 3;
    optic_shape s;
    optic_shape_make(1, &three, &s);
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &s, NULL));
    float x[3] = {1, 2, 3}, g[3];
    optic_tensor tx, tg;
    optic_tensor_make(OPTIC_F32, &s, x, &tx);
    optic_tensor_make(OPTIC_F32, &s, g, &tg);
    for (int step = 0; step < 5; step++) {
      for (int i = 0; i < 3; i++) g[i] = 2 * x[i];
      OT_EXPECT_OK(optic_optim_step(opt, &tx, &tg, 1, NULL));
      char got[32];
      snprintf(got, sizeof got, "%.2E", (double)x[0] * x[0] + (double)x[1] * x[1] + (double)x[2] * x[2]);
      OT_CHECK(strcmp(got, want[step]) == 0, "%s step %d: %s, optax prints %s", cs[c].key, step + 1, got, want[step]);
    }
    optic_optim_destroy(opt);
  }
  free(json);
}

/* Empty tensors, many groups (more than the step's fixed table of 8), a
 * group added after others have stepped (its count starts at 0, PyTorch
 * SGD's first-step rule applies to it alone). */
static void groups_edges(void) {
  optic_optim_t *opt = NULL;
  optic_optim_options o = {.size = sizeof o, .profile = true};
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  enum { NG = 11 };
  optic_shape shapes[NG + 1];
  float data[NG + 1][40], grad[NG + 1][40];
  optic_tensor tp[NG + 1], tg[NG + 1];
  for (int i = 0; i <= NG; i++) {
    int64_t d = i == 3 ? 0 : 5 + 3 * i;
    optic_shape_make(1, &d, &shapes[i]);
    for (int e = 0; e < 40; e++) data[i][e] = 1.0f + 0.01f * (float)e, grad[i][e] = 0.5f;
    optic_tensor_make(OPTIC_F32, &shapes[i], data[i], &tp[i]);
    optic_tensor_make(OPTIC_F32, &shapes[i], grad[i], &tg[i]);
  }
  optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_SGD, OPTIC_OPTIM_CONVENTION_PYTORCH);
  h.lr = 0.1, h.momentum = 0.5, h.dampening = 0.5;
  for (int g = 0; g < NG; g++) OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &shapes[g], NULL));
  optic_optim_step_report rep;
  OT_EXPECT_OK(optic_optim_step(opt, tp, tg, NG, &rep));
  OT_CHECK(rep.update_wall_ns > 0, "profile: update_wall_ns");
  OT_EXPECT_OK(optic_optim_step(opt, tp, tg, NG, NULL));
  /* b1 = g = 0.5, b2 = 0.5·0.5 + 0.5·0.5 = 0.5: θ = θ0 − 0.1·0.5 − 0.1·0.5 for every element. */
  OT_CHECK(fabsf(data[0][0] - (1.0f - 0.1f)) < 1e-6f, "%g", (double)data[0][0]);
  OT_CHECK(fabsf(data[NG - 1][7] - (1.07f - 0.1f)) < 1e-6f, "%g", (double)data[NG - 1][7]);
  OT_CHECK(data[3][0] == 1.0f, "an empty tensor's storage is not touched");
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &shapes[NG], NULL));
  OT_CHECK(optic_optim_tensor_count(opt) == NG + 1);
  OT_EXPECT_OK(optic_optim_step(opt, tp, tg, NG + 1, NULL));
  uint64_t s_old = 0, s_new = 0;
  OT_EXPECT_OK(optic_optim_group_step(opt, 0, &s_old));
  OT_EXPECT_OK(optic_optim_group_step(opt, NG, &s_new));
  OT_CHECK(s_old == 3 && s_new == 1, "steps %llu and %llu", (unsigned long long)s_old, (unsigned long long)s_new);
  /* The new group's first step used b1 = g: θ = θ0 − 0.05. */
  OT_CHECK(fabsf(data[NG][0] - 0.95f) < 1e-6f, "%g", (double)data[NG][0]);
  optic_optim_state *st = NULL;
  OT_EXPECT_OK(optic_optim_state_export(opt, &st));
  OT_CHECK(st && st->tensor_count == NG + 1 && st->scalar_count == 3 * (NG + 1) + 1);
  OT_CHECK(st && strcmp(st->tensors[3].name, "group.3/tensor.0/momentum_buffer") == 0 &&
           st->tensors[3].tensor.data == NULL);
  OT_EXPECT_OK(optic_optim_state_import(opt, st)); /* its own views: a no-op */
  optic_optim_state_destroy(st);
  optic_optim_hparams got;
  OT_EXPECT_OK(optic_optim_group_hparams(opt, NG, &got));
  OT_CHECK(got.momentum == 0.5 && got.convention == OPTIC_OPTIM_CONVENTION_PYTORCH);
  optic_optim_destroy(opt);
}

/* A field the kind does not use must keep its default: each kind with each
 * field it ignores set is rejected with the field named; with every used
 * field changed it is accepted; clear_unused puts the ignored ones back. */
static void unused_fields_must_stay_default(void) {
  const optic_optim_convention PT = OPTIC_OPTIM_CONVENTION_PYTORCH, OX = OPTIC_OPTIM_CONVENTION_OPTAX;
  optic_optim_hparams h = defaults(OPTIC_OPTIM_KIND_ADAM, PT);
  h.nesterov = true; /* the two examples */
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "adam does not use nesterov");
  h = defaults(OPTIC_OPTIM_KIND_SGD, PT);
  h.eps = -1;
  expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, "sgd does not use eps (set to -1)");
  static const struct {
    optic_optim_kind kind;
    const char *unused; /* space-separated */
  } table[] = {
      {OPTIC_OPTIM_KIND_SGD, "beta1 beta2 amsgrad eps eps_root alpha centered lr_decay initial_accumulator_value"},
      {OPTIC_OPTIM_KIND_ADAM, "momentum dampening nesterov alpha centered lr_decay initial_accumulator_value"},
      {OPTIC_OPTIM_KIND_ADAMW, "momentum dampening nesterov alpha centered lr_decay initial_accumulator_value"},
      {OPTIC_OPTIM_KIND_RMSPROP, "dampening nesterov beta1 beta2 amsgrad lr_decay"},
      {OPTIC_OPTIM_KIND_ADAGRAD, "momentum dampening nesterov beta1 beta2 amsgrad alpha centered"},
      {OPTIC_OPTIM_KIND_LAMB, "momentum dampening nesterov amsgrad alpha centered lr_decay initial_accumulator_value"},
      {OPTIC_OPTIM_KIND_LION,
       "momentum dampening nesterov amsgrad eps eps_root alpha centered lr_decay initial_accumulator_value"},
  };
  for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
    optic_optim_convention c = table[k].kind >= OPTIC_OPTIM_KIND_LAMB ? OX : PT;
    char list[160], *save = NULL;
    snprintf(list, sizeof list, "%s", table[k].unused);
    for (char *f = strtok_r(list, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
      h = defaults(table[k].kind, c);
#define SET_(name, value)                    \
  if (strcmp(f, #name) == 0) h.name = value; \
  else (void)0
      // clang-format off
      SET_(momentum, 0.5); SET_(dampening, 0.5); SET_(nesterov, true); SET_(beta1, 0.5); SET_(beta2, 0.5);
      SET_(amsgrad, true); SET_(eps, 0.5); SET_(eps_root, 0.5); SET_(alpha, 0.5); SET_(centered, true);
      SET_(lr_decay, 0.5); SET_(initial_accumulator_value, 0.5);
      // clang-format on
#undef SET_
      char want[64];
      snprintf(want, sizeof want, "does not use %s ", f);
      expect_group_error(h, OPTIC_ERR_INVALID_ARGUMENT, want);
      optic_optim_hparams cleared = h;
      OT_EXPECT_OK(optic_optim_hparams_clear_unused(&cleared));
      optic_optim_hparams d = defaults(table[k].kind, c);
      OT_CHECK(memcmp(&cleared, &d, sizeof d) == 0, "%s: clear_unused left %s changed",
               optic_optim_kind_name(table[k].kind), f);
    }
  }
  /* Every used field changed: accepted, and clear_unused keeps them. */
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  optic_shape s;
  int64_t d4 = 4;
  optic_shape_make(1, &d4, &s);
  h = defaults(OPTIC_OPTIM_KIND_RMSPROP, PT);
  h.alpha = 0.5, h.eps = 1e-3, h.eps_root = 1e-4, h.momentum = 0.3, h.centered = true,
  h.initial_accumulator_value = 0.2;
  optic_optim_hparams kept = h;
  OT_EXPECT_OK(optic_optim_hparams_clear_unused(&kept));
  OT_CHECK(memcmp(&kept, &h, sizeof h) == 0, "clear_unused changed a field rmsprop uses");
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &s, NULL));
  h = defaults(OPTIC_OPTIM_KIND_SGD, PT);
  h.momentum = 0.9, h.nesterov = true;
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &s, NULL));
  optic_optim_destroy(opt);
  OT_EXPECT_STATUS(optic_optim_hparams_clear_unused(NULL), OPTIC_ERR_INVALID_ARGUMENT);
}

static void names_to_enums(void) {
  for (int k = 0; k < OPTIC_OPTIM_KIND_COUNT_; k++) {
    optic_optim_kind got = OPTIC_OPTIM_KIND_COUNT_;
    OT_EXPECT_OK(optic_optim_kind_from_name(optic_optim_kind_name((optic_optim_kind)k), &got));
    OT_CHECK(got == (optic_optim_kind)k, "kind %d", k);
  }
  optic_optim_kind kind;
  OT_EXPECT_OK(optic_optim_kind_from_name("adamw", &kind));
  OT_CHECK(kind == OPTIC_OPTIM_KIND_ADAMW);
  const char *bad[] = {"Adam", "adam ", "", "invalid", "sgdm"};
  for (size_t i = 0; i < 5; i++) {
    OT_EXPECT_STATUS(optic_optim_kind_from_name(bad[i], &kind), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(strstr(optic_last_error(), "lamb, lion") != NULL, "%s", optic_last_error());
  }
  OT_EXPECT_STATUS(optic_optim_kind_from_name(NULL, &kind), OPTIC_ERR_INVALID_ARGUMENT);
  for (int c = 0; c < OPTIC_OPTIM_CONVENTION_COUNT_; c++) {
    optic_optim_convention got = OPTIC_OPTIM_CONVENTION_COUNT_;
    OT_EXPECT_OK(optic_optim_convention_from_name(optic_optim_convention_name((optic_optim_convention)c), &got));
    OT_CHECK(got == (optic_optim_convention)c, "convention %d", c);
  }
  optic_optim_convention conv;
  OT_EXPECT_OK(optic_optim_convention_from_name("keras", &conv));
  OT_CHECK(conv == OPTIC_OPTIM_CONVENTION_KERAS);
  OT_EXPECT_STATUS(optic_optim_convention_from_name("torch", &conv), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "pytorch, optax, keras") != NULL, "%s", optic_last_error());
}

static const ot_case cases[] = {
    {"unused_fields_must_stay_default", unused_fields_must_stay_default},
    {"names_to_enums", names_to_enums},
    {"groups_edges", groups_edges},
    {"invalid_hyperparameters_are_rejected", invalid_hyperparameters_are_rejected},
    {"invalid_calls_are_rejected", invalid_calls_are_rejected},
    {"bad_shapes_are_named_once", bad_shapes_are_named_once},
    {"overlap_across_tensors", overlap_across_tensors},
    {"nonfinite_gradients_skip_the_step", nonfinite_gradients_skip_the_step},
    {"export_import_continue_is_bitwise", export_import_continue_is_bitwise},
    {"schedules_match_closed_forms", schedules_match_closed_forms},
    {"clipping_scales_by_global_norm", clipping_scales_by_global_norm},
    {"optax_doctests_through_the_api", optax_doctests_through_the_api},
};
OT_MAIN(cases)
