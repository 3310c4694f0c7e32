/* The step engine (optic_step_engine_t, docs/optim.md "Step engine"): its
 * results are bitwise those of calling the optimizer directly (several
 * optimizers and groups); the compile cache counts hits and misses per group
 * per step; an engine of 2 or 4 emulated pod cores, each core with its own
 * gradients, equals a 1-core engine stepping on the mean gradient and leaves
 * every core bitwise identical; export → checkpoint save → restore → import
 * → continue equals uninterrupted stepping bitwise; the profiler holds
 * compile, all-reduce, update and step events with estimates; the update's
 * estimate is the fused step's model summed over the groups; error paths. */
#include <inttypes.h>
#include <string.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/optim/optim_test_util.h"

static optic_optim_hparams hp_for(optic_optim_kind k) {
  optic_optim_hparams h;
  OT_EXPECT_OK(optic_optim_hparams_default(k, OPTIC_OPTIM_CONVENTION_DEFAULT, &h));
  h.lr = 0.01;
  if (k == OPTIC_OPTIM_KIND_SGD) h.momentum = 0.9, h.nesterov = true;
  if (k == OPTIC_OPTIM_KIND_RMSPROP) h.momentum = 0.5, h.centered = true;
  if (k != OPTIC_OPTIM_KIND_ADAGRAD) h.weight_decay = 0.01;
  return h;
}

/* An optimizer with two groups: kind k over tensors 0..2, SGD momentum over
 * tensors 3..4 (so every engine test has two programs of different shapes). */
static optic_optim_t *make_opt(optic_optim_kind k, const ot_tensors *t) {
  optic_optim_t *opt = NULL;
  optic_optim_options o = {.size = sizeof o, .threads = 2};
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  optic_optim_hparams h = hp_for(k);
  h.schedule = (optic_lr_schedule){.kind = OPTIC_LR_COSINE, .decay_steps = 20, .min_lr = 0.001};
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 3, t->shapes, NULL));
  optic_optim_hparams s = hp_for(OPTIC_OPTIM_KIND_SGD);
  OT_EXPECT_OK(optic_optim_add_group(opt, &s, t->count - 3, t->shapes + 3, NULL));
  return opt;
}

static void fill_params(ot_tensors *t, uint64_t seed) {
  for (size_t i = 0; i < t->count; i++) ot_grad(seed + 77, 0, i, t->p[i], t->n[i]);
}

static bool same_params(const ot_tensors *a, const ot_tensors *b) {
  for (size_t i = 0; i < a->count; i++)
    if (memcmp(a->p[i], b->p[i], a->n[i] * sizeof(float)) != 0) return false;
  return true;
}

static optic_step_engine_t *make_engine(optic_optim_t *opt, int32_t cores, bool profile) {
  optic_step_engine_options o = optic_step_engine_options_default();
  o.cores = cores;
  o.profile = profile;
  optic_machine m;
  OT_EXPECT_OK(optic_machine_preset("host-default", &m));
  o.machine = &m;
  optic_step_engine_t *e = NULL;
  OT_EXPECT_OK(optic_step_engine_create(opt, &o, &e));
  return e;
}

static void engine_equals_direct(void) {
  const optic_optim_kind kinds[] = {OPTIC_OPTIM_KIND_SGD,     OPTIC_OPTIM_KIND_ADAM,    OPTIC_OPTIM_KIND_ADAMW,
                                    OPTIC_OPTIM_KIND_RMSPROP, OPTIC_OPTIM_KIND_ADAGRAD, OPTIC_OPTIM_KIND_LAMB,
                                    OPTIC_OPTIM_KIND_LION};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    ot_tensors a, b;
    ot_tensors_make(&a, OT_NTENSORS);
    ot_tensors_make(&b, OT_NTENSORS);
    fill_params(&a, k);
    fill_params(&b, k);
    optic_optim_t *oa = make_opt(kinds[k], &a), *ob = make_opt(kinds[k], &b);
    optic_step_engine_t *e = make_engine(oa, 1, false);
    for (uint64_t s = 0; s < 6; s++) {
      for (size_t i = 0; i < a.count; i++) {
        ot_grad(k, s, i, a.g[i], a.n[i]);
        ot_grad(k, s, i, b.g[i], b.n[i]);
      }
      OT_EXPECT_OK(optic_step_engine_step(e, a.tp, a.tg, a.count));
      OT_EXPECT_OK(optic_optim_step(ob, b.tp, b.tg, b.count, NULL));
    }
    OT_CHECK(same_params(&a, &b), "%s: engine differs from the optimizer", optic_optim_kind_name(kinds[k]));
    optic_step_engine_metrics m;
    OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
    OT_CHECK(m.steps == 6 && m.est_update_ns > 0 && m.last_step_ns > 0 && m.update_bytes_per_step > 0 &&
                 m.est_bytes_per_step > 0,
             "%s: steps %" PRIu64 " est %g last %g bytes %g est bytes %g", optic_optim_kind_name(kinds[k]), m.steps,
             m.est_update_ns, m.last_step_ns, m.update_bytes_per_step, m.est_bytes_per_step);
    /* The compiled group program is real: its update fuses to few instructions. */
    const optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_step_engine_program(e, 0, &p));
    optic_program_summary sum;
    OT_EXPECT_OK(optic_program_summary_get(p, &sum));
    OT_CHECK(sum.fusions >= 1, "%s: %" PRId64 " fusions", optic_optim_kind_name(kinds[k]), sum.fusions);
    optic_step_engine_destroy(e);
    optic_optim_destroy(oa);
    optic_optim_destroy(ob);
    ot_tensors_free(&a);
    ot_tensors_free(&b);
  }
}

static void cache_hits_and_misses(void) {
  ot_tensors t;
  ot_tensors_make(&t, OT_NTENSORS);
  fill_params(&t, 1);
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_ADAM, &t);
  optic_step_engine_t *e = make_engine(opt, 1, false);
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.cache_hits == 0 && m.cache_misses == 0 && m.cache_hit_rate == 0.0 && m.programs == 0);
  /* Step 1: two groups, two misses; steps 2..4: two hits each. */
  for (uint64_t s = 0; s < 4; s++) {
    for (size_t i = 0; i < t.count; i++) ot_grad(3, s, i, t.g[i], t.n[i]);
    OT_EXPECT_OK(optic_step_engine_step(e, t.tp, t.tg, t.count));
  }
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.cache_misses == 2 && m.cache_hits == 6 && m.programs == 2, "misses %" PRIu64 " hits %" PRIu64,
           m.cache_misses, m.cache_hits);
  OT_CHECK(fabs(m.cache_hit_rate - 0.75) < 1e-12, "rate %g", m.cache_hit_rate);
  const double compile_ns = m.compile_ns;
  OT_CHECK(compile_ns > 0);
  /* A new group of new shapes: one miss; a group with the same shapes and
   * hyperparameters as group 1: a hit on its program. */
  int64_t d = 1000;
  optic_shape s1000;
  optic_shape_make(1, &d, &s1000);
  optic_optim_hparams h = hp_for(OPTIC_OPTIM_KIND_ADAM);
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &s1000, NULL));
  optic_optim_hparams sg = hp_for(OPTIC_OPTIM_KIND_SGD);
  OT_EXPECT_OK(optic_optim_add_group(opt, &sg, 2, t.shapes + 3, NULL));
  float *x = calloc(1000, 4), *gx = calloc(1000, 4);
  float *y[2] = {calloc(t.n[3], 4), calloc(t.n[4], 4)}, *gy[2] = {calloc(t.n[3], 4), calloc(t.n[4], 4)};
  optic_tensor tp[OT_NTENSORS + 3], tg[OT_NTENSORS + 3];
  memcpy(tp, t.tp, sizeof t.tp);
  memcpy(tg, t.tg, sizeof t.tg);
  optic_tensor_make(OPTIC_F32, &s1000, x, &tp[5]);
  optic_tensor_make(OPTIC_F32, &s1000, gx, &tg[5]);
  for (int i = 0; i < 2; i++) {
    optic_tensor_make(OPTIC_F32, &t.shapes[3 + i], y[i], &tp[6 + i]);
    optic_tensor_make(OPTIC_F32, &t.shapes[3 + i], gy[i], &tg[6 + i]);
  }
  OT_EXPECT_OK(optic_step_engine_step(e, tp, tg, OT_NTENSORS + 3));
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.cache_misses == 3 && m.cache_hits == 9 && m.programs == 3, "misses %" PRIu64 " hits %" PRIu64,
           m.cache_misses, m.cache_hits);
  const optic_program_t *p1 = NULL, *p3 = NULL;
  OT_EXPECT_OK(optic_step_engine_program(e, 1, &p1));
  OT_EXPECT_OK(optic_step_engine_program(e, 3, &p3));
  OT_CHECK(p1 == p3, "groups of equal shapes and hyperparameters share one program");
  OT_EXPECT_STATUS(optic_step_engine_program(e, 4, &p1), OPTIC_ERR_INVALID_ARGUMENT);
  free(x), free(gx), free(y[0]), free(y[1]), free(gy[0]), free(gy[1]);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  ot_tensors_free(&t);
  /* A short key, then a group of 40 rank-4 tensors: the key buffer grows. */
  enum { MANY = 40 };
  optic_shape small, many[MANY];
  int64_t one = 3, four[4] = {2, 1, 2, 1};
  optic_shape_make(1, &one, &small);
  for (int i = 0; i < MANY; i++) optic_shape_make(4, four, &many[i]);
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &small, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, &sg, MANY, many, NULL));
  float data[2 * (MANY + 1)][4];
  memset(data, 0, sizeof data);
  optic_tensor mp[MANY + 1], mg[MANY + 1];
  for (int i = 0; i <= MANY; i++) {
    optic_tensor_make(OPTIC_F32, i ? &many[i - 1] : &small, data[2 * i], &mp[i]);
    optic_tensor_make(OPTIC_F32, i ? &many[i - 1] : &small, data[2 * i + 1], &mg[i]);
  }
  e = make_engine(opt, 1, false);
  OT_EXPECT_OK(optic_step_engine_step(e, mp, mg, MANY + 1));
  OT_EXPECT_OK(optic_step_engine_step(e, mp, mg, MANY + 1));
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.cache_misses == 2 && m.cache_hits == 2);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
}

/* Gradients that are small multiples of 2^-8: sums of up to 4 of them and
 * their division by 2 or 4 are exact, so the mean over cores has one value
 * whatever order a collective adds in. */
static void exact_grad(uint64_t seed, uint64_t step, size_t i, float *g, size_t n) {
  ot_grad(seed, step, i, g, n);
  for (size_t e = 0; e < n; e++) g[e] = roundf(g[e] * 256.0f) / 256.0f;
}

static void multicore_equals_single_on_mean(int32_t cores) {
  ot_tensors rep[4], ref;
  const optic_tensor *tp[4], *tg[4];
  for (int32_t c = 0; c < cores; c++) {
    ot_tensors_make(&rep[c], OT_NTENSORS);
    fill_params(&rep[c], 5);
    tp[c] = rep[c].tp;
    tg[c] = rep[c].tg;
  }
  ot_tensors_make(&ref, OT_NTENSORS);
  fill_params(&ref, 5);
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_ADAMW, &rep[0]), *oref = make_opt(OPTIC_OPTIM_KIND_ADAMW, &ref);
  optic_step_engine_t *e = make_engine(opt, cores, true), *eref = make_engine(oref, 1, false);
  for (uint64_t s = 0; s < 5; s++) {
    for (size_t i = 0; i < ref.count; i++) {
      for (size_t k = 0; k < ref.n[i]; k++) ref.g[i][k] = 0.0f;
      for (int32_t c = 0; c < cores; c++) {
        exact_grad(100 + (uint64_t)c, s, i, rep[c].g[i], rep[c].n[i]);
        for (size_t k = 0; k < ref.n[i]; k++) ref.g[i][k] += rep[c].g[i][k];
      }
      for (size_t k = 0; k < ref.n[i]; k++) ref.g[i][k] /= (float)cores;
    }
    OT_EXPECT_OK(optic_step_engine_step_replicas(e, tp, tg, ref.count));
    OT_EXPECT_OK(optic_step_engine_step(eref, ref.tp, ref.tg, ref.count));
    for (int32_t c = 0; c < cores; c++)
      for (size_t i = 0; i < ref.count; i++)
        OT_CHECK(memcmp(rep[c].g[i], ref.g[i], ref.n[i] * 4) == 0,
                 "cores %d step %" PRIu64 ": core %d grad %zu is not the mean", (int)cores, s, (int)c, i);
  }
  for (int32_t c = 0; c < cores; c++)
    OT_CHECK(same_params(&rep[c], &ref), "cores %d: core %d differs from the 1-core engine on the mean", (int)cores,
             (int)c);
  /* Random (inexact) gradients: cores still agree bitwise with each other. */
  for (uint64_t s = 5; s < 8; s++) {
    for (int32_t c = 0; c < cores; c++)
      for (size_t i = 0; i < ref.count; i++) ot_grad(200 + (uint64_t)c, s, i, rep[c].g[i], rep[c].n[i]);
    OT_EXPECT_OK(optic_step_engine_step_replicas(e, tp, tg, ref.count));
  }
  for (int32_t c = 1; c < cores; c++)
    OT_CHECK(same_params(&rep[c], &rep[0]), "cores %d: core %d differs from core 0", (int)cores, (int)c);
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.steps == 8 && m.est_allreduce_ns > 0 && m.allreduce_bytes_per_step > 0 && m.last_allreduce_ns > 0,
           "steps %" PRIu64 " est all-reduce %g", m.steps, m.est_allreduce_ns);
  /* Every core recorded its all-reduce and update each step. */
  size_t n = 0, ar = 0;
  const optic_profile_event *ev = optic_profiler_events(optic_step_engine_profiler(e), &n);
  for (size_t i = 0; i < n; i++) ar += strcmp(ev[i].name, "step_engine/all_reduce") == 0;
  OT_CHECK(ar == 8 * (size_t)cores, "%zu all-reduce events", ar);
  optic_step_engine_destroy(e);
  optic_step_engine_destroy(eref);
  optic_optim_destroy(opt);
  optic_optim_destroy(oref);
  for (int32_t c = 0; c < cores; c++) ot_tensors_free(&rep[c]);
  ot_tensors_free(&ref);
}

static void multicore_2(void) { multicore_equals_single_on_mean(2); }
static void multicore_4(void) { multicore_equals_single_on_mean(4); }

/* The caller's own pod run: each core calls optic_step_engine_step_core. */
typedef struct spmd {
  optic_step_engine_t *e;
  ot_tensors *rep;
  uint64_t step;
} spmd;

static optic_status spmd_fn(optic_pod_core_t *core, void *user) {
  spmd *s = user;
  int c = optic_pod_core_index(core);
  ot_tensors *t = &s->rep[c];
  for (size_t i = 0; i < t->count; i++) ot_grad(300 + (uint64_t)c, s->step, i, t->g[i], t->n[i]);
  return optic_step_engine_step_core(s->e, core, t->tp, t->tg, t->count);
}

static void step_core_in_callers_pod(void) {
  optic_pod_options po = {.size = sizeof po, .cores = 2};
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(&po, &pod));
  ot_tensors rep[2];
  for (int c = 0; c < 2; c++) {
    ot_tensors_make(&rep[c], OT_NTENSORS);
    fill_params(&rep[c], 9);
  }
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_LAMB, &rep[0]);
  optic_step_engine_options o = optic_step_engine_options_default();
  o.pod = pod;
  optic_step_engine_t *e = NULL;
  OT_EXPECT_OK(optic_step_engine_create(opt, &o, &e));
  spmd s = {.e = e, .rep = rep};
  for (s.step = 0; s.step < 3; s.step++) OT_EXPECT_OK(optic_pod_run(pod, spmd_fn, &s, NULL));
  OT_CHECK(same_params(&rep[0], &rep[1]), "cores differ after step_core");
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.steps == 3 && m.cache_misses == 2 && m.cache_hits == 4);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  optic_pod_destroy(pod);
  for (int c = 0; c < 2; c++) ot_tensors_free(&rep[c]);
}

/* Export → checkpoint → restore → import → continue == uninterrupted. */
static void checkpoint_resume_is_bitwise(void) {
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  const char *dirs[1] = {dir};
  ot_tensors a, b;
  ot_tensors_make(&a, OT_NTENSORS);
  ot_tensors_make(&b, OT_NTENSORS);
  fill_params(&a, 11);
  fill_params(&b, 12); /* different: the checkpoint must restore them */
  optic_optim_t *oa = make_opt(OPTIC_OPTIM_KIND_ADAM, &a), *ob = make_opt(OPTIC_OPTIM_KIND_ADAM, &b);
  optic_step_engine_t *ea = make_engine(oa, 1, false), *eb = make_engine(ob, 1, false);
  for (uint64_t s = 0; s < 4; s++) {
    for (size_t i = 0; i < a.count; i++) ot_grad(13, s, i, a.g[i], a.n[i]);
    OT_EXPECT_OK(optic_step_engine_step(ea, a.tp, a.tg, a.count));
  }
  optic_optim_state *st = NULL;
  OT_EXPECT_OK(optic_step_engine_state_export(ea, &st));
  const size_t n = a.count + st->tensor_count;
  optic_ckpt_entry *ent = calloc(n, sizeof *ent);
  char pname[OT_NTENSORS][32];
  for (size_t i = 0; i < a.count; i++) {
    snprintf(pname[i], sizeof pname[i], "param.%zu", i);
    ent[i] = (optic_ckpt_entry){pname[i], a.tp[i]};
  }
  for (size_t i = 0; i < st->tensor_count; i++)
    ent[a.count + i] = (optic_ckpt_entry){st->tensors[i].name, st->tensors[i].tensor};
  optic_ckpt_meta *meta = calloc(st->scalar_count, sizeof *meta);
  char(*text)[24] = calloc(st->scalar_count, sizeof *text);
  for (size_t i = 0; i < st->scalar_count; i++) {
    snprintf(text[i], sizeof text[i], "%" PRId64, st->scalars[i].value);
    meta[i] = optic_ckpt_meta_str(st->scalars[i].name, text[i]);
  }
  OT_EXPECT_OK(optic_ckpt_save(dirs, 1, 4, ent, n, meta, st->scalar_count, NULL));
  optic_optim_state_destroy(st);

  optic_ckpt_entry targets[OT_NTENSORS];
  for (size_t i = 0; i < b.count; i++) targets[i] = (optic_ckpt_entry){pname[i], b.tp[i]};
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, targets, b.count, NULL, &rep));
  char path[160];
  optic_ckpt_path(dir, rep.step, path, sizeof path);
  optic_ckpt_reader_t *r = NULL;
  OT_EXPECT_OK(optic_ckpt_reader_create(path, NULL, &r));
  const size_t total = optic_ckpt_entry_count(r);
  size_t nt = 0, ns = 0;
  optic_named_tensor *nts = calloc(total, sizeof *nts);
  optic_named_scalar *nss = calloc(optic_ckpt_meta_count(r), sizeof *nss);
  size_t *bytes = calloc(total, sizeof *bytes);
  for (size_t i = 0; i < total; i++) {
    optic_ckpt_entry_info info;
    OT_EXPECT_OK(optic_ckpt_entry_at(r, i, &info));
    if (strncmp(info.name, "group.", 6) != 0) continue;
    nts[nt].name = info.name;
    OT_EXPECT_OK(optic_ckpt_restore_alloc(r, info.name, NULL, &nts[nt].tensor));
    bytes[nt++] = (size_t)info.bytes;
  }
  for (size_t i = 0; i < optic_ckpt_meta_count(r); i++) {
    const char *key;
    const void *v;
    size_t len;
    OT_EXPECT_OK(optic_ckpt_meta_at(r, i, &key, &v, &len));
    nss[ns++] = (optic_named_scalar){key, strtoll(v, NULL, 10)};
  }
  optic_optim_state in = {OPTIC_OPTIM_STATE_VERSION, nt, nts, ns, nss};
  OT_EXPECT_OK(optic_step_engine_state_import(eb, &in));
  for (size_t i = 0; i < nt; i++) optic_free(NULL, nts[i].tensor.data, bytes[i], OPTIC_DEFAULT_ALIGNMENT);
  optic_ckpt_reader_destroy(r);
  OT_CHECK(same_params(&a, &b), "restored parameters differ");
  for (uint64_t s = 4; s < 8; s++) {
    for (size_t i = 0; i < a.count; i++) {
      ot_grad(13, s, i, a.g[i], a.n[i]);
      ot_grad(13, s, i, b.g[i], b.n[i]);
    }
    OT_EXPECT_OK(optic_step_engine_step(ea, a.tp, a.tg, a.count));
    OT_EXPECT_OK(optic_step_engine_step(eb, b.tp, b.tg, b.count));
  }
  OT_CHECK(same_params(&a, &b), "resumed engine differs from the uninterrupted one");
  free(nts), free(nss), free(bytes), free(ent), free(meta), free(text);
  optic_step_engine_destroy(ea);
  optic_step_engine_destroy(eb);
  optic_optim_destroy(oa);
  optic_optim_destroy(ob);
  ot_tensors_free(&a);
  ot_tensors_free(&b);
  ct_rmdir(dir);
}

static void profile_events_have_estimates(void) {
  ot_tensors t;
  ot_tensors_make(&t, OT_NTENSORS);
  fill_params(&t, 2);
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_ADAM, &t);
  optic_step_engine_t *e = make_engine(opt, 1, true);
  for (uint64_t s = 0; s < 3; s++) {
    for (size_t i = 0; i < t.count; i++) ot_grad(4, s, i, t.g[i], t.n[i]);
    OT_EXPECT_OK(optic_step_engine_step(e, t.tp, t.tg, t.count));
  }
  size_t n = 0, compiles = 0, updates = 0, steps = 0, allreduce = 0;
  const optic_profile_event *ev = optic_profiler_events(optic_step_engine_profiler(e), &n);
  for (size_t i = 0; i < n; i++) {
    compiles += ev[i].kind == OPTIC_PROFILE_COMPILE;
    if (strcmp(ev[i].name, "step_engine/update") == 0) {
      updates++;
      OT_CHECK(ev[i].est_ns > 0 && ev[i].bytes > 0 && ev[i].end_ns >= ev[i].start_ns);
    }
    if (strcmp(ev[i].name, "step_engine/step") == 0) {
      steps++;
      OT_CHECK(ev[i].est_ns > 0);
    }
    allreduce += strcmp(ev[i].name, "step_engine/all_reduce") == 0;
  }
  OT_CHECK(compiles == 2 && updates == 3 && steps == 3 && allreduce == 0, "compiles %zu updates %zu steps %zu ar %zu",
           compiles, updates, steps, allreduce);
  char *json = NULL;
  OT_EXPECT_OK(optic_profiler_trace_json(optic_step_engine_profiler(e), &json, NULL));
  OT_CHECK(json && strstr(json, "step_engine/update") != NULL);
  optic_string_free(json);
  /* Adam's update: 28 bytes per element of group 0, SGD momentum 20 of group 1. */
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  const double want = 28.0 * (double)(t.n[0] + t.n[1] + t.n[2]) + 20.0 * (double)(t.n[3] + t.n[4]);
  OT_CHECK(m.update_bytes_per_step == want && m.bytes_moved == 3 * want, "%g vs %g", m.update_bytes_per_step, want);
  OT_CHECK(m.measured_over_estimated > 0 && m.mean_step_ns > 0);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  ot_tensors_free(&t);
}

static void error_paths(void) {
  ot_tensors t;
  ot_tensors_make(&t, OT_NTENSORS);
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_ADAM, &t);
  optic_step_engine_t *e = NULL;
  OT_EXPECT_STATUS(optic_step_engine_create(NULL, NULL, &e), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_step_engine_create(opt, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_step_engine_options o = optic_step_engine_options_default();
  o.cores = 65;
  OT_EXPECT_STATUS(optic_step_engine_create(opt, &o, &e), OPTIC_ERR_INVALID_ARGUMENT);
  o.cores = 1;
  o.size = 3;
  OT_EXPECT_STATUS(optic_step_engine_create(opt, &o, &e), OPTIC_ERR_INVALID_ARGUMENT);
  o = optic_step_engine_options_default();
  o.level = (optic_opt_level)7;
  OT_EXPECT_STATUS(optic_step_engine_create(opt, &o, &e), OPTIC_ERR_INVALID_ARGUMENT);
  optic_machine bad;
  OT_EXPECT_OK(optic_machine_preset("host-default", &bad));
  bad.dram_bandwidth = -1;
  o = optic_step_engine_options_default();
  o.machine = &bad;
  OT_EXPECT_STATUS(optic_step_engine_create(opt, &o, &e), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(e == NULL);
  e = make_engine(opt, 1, false);
  OT_EXPECT_STATUS(optic_step_engine_step(e, t.tp, t.tg, t.count - 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_step_engine_step(e, NULL, t.tg, t.count), OPTIC_ERR_INVALID_ARGUMENT);
  optic_tensor bad_g[OT_NTENSORS];
  memcpy(bad_g, t.tg, sizeof bad_g);
  bad_g[2].shape.dims[0] += 1;
  OT_EXPECT_STATUS(optic_step_engine_step(e, t.tp, bad_g, t.count), OPTIC_ERR_SHAPE_MISMATCH);
  bad_g[2] = t.tg[2];
  bad_g[1].dtype = OPTIC_F64;
  OT_EXPECT_STATUS(optic_step_engine_step(e, t.tp, bad_g, t.count), OPTIC_ERR_INVALID_ARGUMENT);
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.steps == 0 && m.cache_misses == 0, "failed calls changed the metrics");
  const optic_program_t *p;
  OT_EXPECT_STATUS(optic_step_engine_program(e, 0, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_step_engine_metrics_get(NULL, &m), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_step_engine_step_replicas(e, NULL, NULL, 0), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_step_engine_state_import(e, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_step_engine_destroy(e);
  /* A 2-core engine refuses the 1-core call; a failing core fails the step. */
  e = make_engine(opt, 2, false);
  OT_EXPECT_STATUS(optic_step_engine_step(e, t.tp, t.tg, t.count), OPTIC_ERR_INVALID_ARGUMENT);
  ot_tensors u;
  ot_tensors_make(&u, OT_NTENSORS);
  const optic_tensor *tp[2] = {t.tp, u.tp}, *tg[2] = {t.tg, bad_g};
  OT_CHECK(optic_step_engine_step_replicas(e, tp, tg, t.count) != OPTIC_OK);
  optic_step_engine_destroy(e);
  optic_step_engine_destroy(NULL);
  optic_optim_destroy(opt);
  ot_tensors_free(&t);
  ot_tensors_free(&u);
}

/* The compiled graph is a real update: run through optic_program_run on the
 * first step's inputs, it matches what the fused kernels computed within
 * 1e-5 (scaled error; not bitwise: the kernels use fused multiply-adds). */
static void graph_computes_the_update(void) {
  const optic_optim_kind kinds[] = {OPTIC_OPTIM_KIND_ADAM, OPTIC_OPTIM_KIND_SGD};
  for (size_t k = 0; k < 2; k++) {
    const size_t n = 1003;
    int64_t d = (int64_t)n;
    optic_shape s;
    optic_shape_make(1, &d, &s);
    float *p = malloc(n * 4), *p0 = malloc(n * 4), *g = malloc(n * 4), *zero = calloc(n, 4);
    ot_grad(1, 0, 0, p, n);
    ot_grad(2, 0, 0, g, n);
    memcpy(p0, p, n * 4);
    optic_optim_t *opt = NULL;
    OT_EXPECT_OK(optic_optim_create(NULL, &opt));
    optic_optim_hparams h = hp_for(kinds[k]);
    h.weight_decay = 0.0;
    h.nesterov = false;
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, 1, &s, NULL));
    optic_step_engine_t *e = make_engine(opt, 1, false);
    optic_tensor tp, tg;
    optic_tensor_make(OPTIC_F32, &s, p, &tp);
    optic_tensor_make(OPTIC_F32, &s, g, &tg);
    OT_EXPECT_OK(optic_step_engine_step(e, &tp, &tg, 1));
    const optic_program_t *prog = NULL;
    OT_EXPECT_OK(optic_step_engine_program(e, 0, &prog));
    /* Inputs by the entry's parameter names. */
    const optic_module_t *m = optic_program_module(prog);
    const optic_comp_id entry = optic_program_entry(prog);
    const int32_t np = optic_computation_parameter_count(m, entry);
    optic_tensor in[8];
    float sc[8];
    const double b1 = (float)h.beta1, b2 = (float)h.beta2;
    for (int32_t i = 0; i < np && i < 8; i++) {
      const char *name = optic_node_name(m, optic_computation_parameter(m, entry, i));
      optic_shape s0 = {.rank = 0};
      if (strcmp(name, "param") == 0) optic_tensor_make(OPTIC_F32, &s, p0, &in[i]);
      else if (strcmp(name, "grad") == 0) optic_tensor_make(OPTIC_F32, &s, g, &in[i]);
      else if (strcmp(name, "exp_avg") == 0 || strcmp(name, "exp_avg_sq") == 0 || strcmp(name, "momentum_buffer") == 0)
        optic_tensor_make(OPTIC_F32, &s, zero, &in[i]);
      else {
        if (strcmp(name, "lr") == 0) sc[i] = (float)h.lr;
        else if (strcmp(name, "step_size") == 0) sc[i] = (float)(h.lr / (1.0 - b1));
        else if (strcmp(name, "inv_bias_correction2") == 0) sc[i] = (float)(1.0 / (1.0 - b2));
        else OT_CHECK(false, "unexpected parameter %s", name);
        optic_tensor_make(OPTIC_F32, &s0, &sc[i], &in[i]);
      }
    }
    optic_exec_ctx_t *ctx = NULL;
    OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
    optic_tensor out[3];
    memset(out, 0, sizeof out);
    const int32_t nout = kinds[k] == OPTIC_OPTIM_KIND_ADAM ? 3 : 2;
    OT_EXPECT_OK(optic_program_run(prog, ctx, in, np, out, nout));
    double *ref = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) ref[i] = p[i];
    const double err = ot_scaled_error(out[0].data, ref, n);
    OT_CHECK(err <= 1e-5, "%s: graph vs kernels: %g", optic_optim_kind_name(kinds[k]), err);
    /* And the state it returns: the optimizer's after one step. */
    optic_optim_state *st = NULL;
    OT_EXPECT_OK(optic_step_engine_state_export(e, &st));
    for (int32_t j = 1; j < nout; j++) {
      const float *sd = st->tensors[j - 1].tensor.data;
      for (size_t i = 0; i < n; i++) ref[i] = sd[i];
      const double es = ot_scaled_error(out[j].data, ref, n);
      OT_CHECK(es <= 1e-5, "%s: state %s: %g", optic_optim_kind_name(kinds[k]), st->tensors[j - 1].name, es);
    }
    optic_optim_state_destroy(st);
    optic_exec_ctx_destroy(ctx);
    optic_step_engine_destroy(e);
    optic_optim_destroy(opt);
    free(p), free(p0), free(g), free(zero), free(ref);
  }
}

/* average_gradients off: each core steps on its own gradients, as an
 * optimizer of its own would; no all-reduce events. */
static void no_averaging_steps_each_core_alone(void) {
  ot_tensors rep[2], ref[2];
  const optic_tensor *tp[2], *tg[2];
  optic_optim_t *direct[2];
  for (int c = 0; c < 2; c++) {
    ot_tensors_make(&rep[c], OT_NTENSORS);
    ot_tensors_make(&ref[c], OT_NTENSORS);
    fill_params(&rep[c], 21);
    fill_params(&ref[c], 21);
    tp[c] = rep[c].tp, tg[c] = rep[c].tg;
    direct[c] = make_opt(OPTIC_OPTIM_KIND_RMSPROP, &ref[c]);
  }
  optic_optim_t *opt = make_opt(OPTIC_OPTIM_KIND_RMSPROP, &rep[0]);
  optic_step_engine_options o = optic_step_engine_options_default();
  o.cores = 2;
  o.average_gradients = false;
  o.profile = true;
  optic_step_engine_t *e = NULL;
  OT_EXPECT_OK(optic_step_engine_create(opt, &o, &e));
  for (uint64_t s = 0; s < 3; s++) {
    for (int c = 0; c < 2; c++)
      for (size_t i = 0; i < rep[c].count; i++) {
        ot_grad(400 + (uint64_t)c, s, i, rep[c].g[i], rep[c].n[i]);
        ot_grad(400 + (uint64_t)c, s, i, ref[c].g[i], ref[c].n[i]);
      }
    OT_EXPECT_OK(optic_step_engine_step_replicas(e, tp, tg, rep[0].count));
    for (int c = 0; c < 2; c++) OT_EXPECT_OK(optic_optim_step(direct[c], ref[c].tp, ref[c].tg, ref[c].count, NULL));
  }
  for (int c = 0; c < 2; c++) OT_CHECK(same_params(&rep[c], &ref[c]), "core %d differs from its own optimizer", c);
  OT_CHECK(!same_params(&rep[0], &rep[1]), "cores with different gradients should differ");
  size_t n = 0, ar = 0;
  const optic_profile_event *ev = optic_profiler_events(optic_step_engine_profiler(e), &n);
  for (size_t i = 0; i < n; i++) ar += strcmp(ev[i].name, "step_engine/all_reduce") == 0;
  OT_CHECK(ar == 0, "%zu all-reduce events", ar);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  for (int c = 0; c < 2; c++) {
    optic_optim_destroy(direct[c]);
    ot_tensors_free(&rep[c]);
    ot_tensors_free(&ref[c]);
  }
}

/* The key: shapes and the constants the graph bakes in, not the per-step
 * values. Same shapes with another lr (a scalar parameter) hit; another
 * momentum (a constant) or another shape miss. */
static void cache_key_is_shapes_and_baked_hyperparameters(void) {
  int64_t d37 = 37, d38 = 38;
  optic_shape s37, s38;
  optic_shape_make(1, &d37, &s37);
  optic_shape_make(1, &d38, &s38);
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &opt));
  optic_optim_hparams a = hp_for(OPTIC_OPTIM_KIND_SGD), b = a, c = a;
  b.lr = 0.5;
  c.momentum = 0.8;
  OT_EXPECT_OK(optic_optim_add_group(opt, &a, 1, &s37, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, &b, 1, &s37, NULL)); /* hit */
  OT_EXPECT_OK(optic_optim_add_group(opt, &c, 1, &s37, NULL)); /* miss: momentum */
  OT_EXPECT_OK(optic_optim_add_group(opt, &a, 1, &s38, NULL)); /* miss: shape */
  float buf[8][38];
  memset(buf, 0, sizeof buf);
  optic_tensor tp[4], tg[4];
  for (int i = 0; i < 4; i++) {
    optic_tensor_make(OPTIC_F32, i == 3 ? &s38 : &s37, buf[2 * i], &tp[i]);
    optic_tensor_make(OPTIC_F32, i == 3 ? &s38 : &s37, buf[2 * i + 1], &tg[i]);
  }
  optic_step_engine_t *e = make_engine(opt, 1, false);
  OT_EXPECT_OK(optic_step_engine_step(e, tp, tg, 4));
  optic_step_engine_metrics m;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
  OT_CHECK(m.cache_misses == 3 && m.cache_hits == 1 && m.programs == 3, "misses %" PRIu64 " hits %" PRIu64,
           m.cache_misses, m.cache_hits);
  const optic_program_t *p0 = NULL, *p1 = NULL, *p2 = NULL;
  OT_EXPECT_OK(optic_step_engine_program(e, 0, &p0));
  OT_EXPECT_OK(optic_step_engine_program(e, 1, &p1));
  OT_EXPECT_OK(optic_step_engine_program(e, 2, &p2));
  OT_CHECK(p0 == p1 && p0 != p2);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
}

/* The programs are compiled, and the update estimated, for the optimizer's
 * threads: on the 2-core host-default model a 1-thread optimizer's program
 * has a 1-core machine and its estimate uses one core's figures, slower than
 * the 2-thread one's (the group spans two blocks, so both threads run). */
static void estimates_for_optimizer_threads(void) {
  ot_tensors t;
  ot_tensors_make(&t, OT_NTENSORS);
  double est[2] = {0, 0};
  for (int threads = 1; threads <= 2; threads++) {
    optic_optim_t *opt = NULL;
    optic_optim_options oo = {.size = sizeof oo, .threads = threads};
    OT_EXPECT_OK(optic_optim_create(&oo, &opt));
    optic_optim_hparams h = hp_for(OPTIC_OPTIM_KIND_ADAM);
    OT_EXPECT_OK(optic_optim_add_group(opt, &h, t.count, t.shapes, NULL));
    optic_step_engine_t *e = make_engine(opt, 1, false);
    OT_EXPECT_OK(optic_step_engine_step(e, t.tp, t.tg, t.count));
    const optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_step_engine_program(e, 0, &p));
    OT_CHECK(p && optic_program_machine(p)->cores == threads, "threads %d: program machine has %d cores", threads,
             p ? (int)optic_program_machine(p)->cores : -1);
    optic_step_engine_metrics m;
    OT_EXPECT_OK(optic_step_engine_metrics_get(e, &m));
    est[threads - 1] = m.est_update_ns;
    optic_step_engine_destroy(e);
    optic_optim_destroy(opt);
  }
  OT_CHECK(est[0] > est[1] && est[1] > 0, "1 thread %g ns, 2 threads %g ns", est[0], est[1]);
  ot_tensors_free(&t);
}

/* Real bytes per element of hp_for(kind)'s update, written out for the
 * test: θ read and written, g read, each state slot read and written. */
static double test_bytes_per_element(optic_optim_kind k) {
  switch (k) {
    case OPTIC_OPTIM_KIND_SGD: return 20; /* momentum buffer */
    case OPTIC_OPTIM_KIND_ADAM:           /* exp_avg, exp_avg_sq */
    case OPTIC_OPTIM_KIND_ADAMW: return 28;
    case OPTIC_OPTIM_KIND_RMSPROP: return 36; /* square_avg, grad_avg, momentum buffer */
    case OPTIC_OPTIM_KIND_ADAGRAD: return 20; /* sum */
    case OPTIC_OPTIM_KIND_LAMB: return 40;    /* two passes: 24 + 16 */
    case OPTIC_OPTIM_KIND_LION: return 20;    /* exp_avg */
    default: return 0;
  }
}

/* make_opt's two groups priced one by one with the fused step's model. */
static double expected_update_ns(const optic_machine *m, optic_optim_kind k, const ot_tensors *t, int32_t threads,
                                 bool profiled) {
  const size_t n0 = t->n[0] + t->n[1] + t->n[2], n1 = t->n[3] + t->n[4];
  double a = 0, b = 0;
  OT_EXPECT_OK(optic_optim_step_estimate_ns(m, k, n0, test_bytes_per_element(k) * (double)n0, threads, profiled, &a));
  OT_EXPECT_OK(optic_optim_step_estimate_ns(m, OPTIC_OPTIM_KIND_SGD, n1, 20.0 * (double)n1, threads, profiled, &b));
  return a + b;
}

static double engine_update_ns(const optic_machine *m, optic_optim_kind k, ot_tensors *t, int32_t threads,
                               bool profiled) {
  optic_optim_t *opt = NULL;
  optic_optim_options oo = {.size = sizeof oo, .threads = threads, .profile = profiled};
  OT_EXPECT_OK(optic_optim_create(&oo, &opt));
  optic_optim_hparams h = hp_for(k), s = hp_for(OPTIC_OPTIM_KIND_SGD);
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, 3, t->shapes, NULL));
  OT_EXPECT_OK(optic_optim_add_group(opt, &s, t->count - 3, t->shapes + 3, NULL));
  optic_step_engine_options o = optic_step_engine_options_default();
  o.machine = m;
  optic_step_engine_t *e = NULL;
  OT_EXPECT_OK(optic_step_engine_create(opt, &o, &e));
  OT_EXPECT_OK(optic_step_engine_step(e, t->tp, t->tg, t->count));
  optic_step_engine_metrics mt;
  OT_EXPECT_OK(optic_step_engine_metrics_get(e, &mt));
  OT_CHECK(mt.est_step_ns == mt.est_update_ns, "1 core: step %g update %g", mt.est_step_ns, mt.est_update_ns);
  optic_step_engine_destroy(e);
  optic_optim_destroy(opt);
  return mt.est_update_ns;
}

/* The update's estimate is the model of the kernels that run it: the sum of
 * optic_optim_step_estimate_ns over the groups, for every kind, 1 and 2
 * threads, profiled or not; and a slower per-element figure (format 9) moves
 * it by what the model says. */
static void estimate_is_the_fused_steps_model(void) {
  ot_tensors t;
  ot_tensors_make(&t, OT_NTENSORS);
  optic_machine base;
  OT_EXPECT_OK(optic_machine_preset("host-default", &base));
  base.optim_sgd_element_ns = 0.2;
  for (int k = 0; k < OPTIC_OPTIM_KIND_COUNT_; k++) {
    for (int32_t threads = 1; threads <= 2; threads++) {
      for (int prof = 0; prof < 2; prof++) {
        const optic_optim_kind kind = (optic_optim_kind)k;
        optic_machine m = base;
        const double got = engine_update_ns(&m, kind, &t, threads, prof);
        const double want = expected_update_ns(&m, kind, &t, threads, prof);
        OT_CHECK(fabs(got - want) <= 1e-9 * want && want > 0, "%s threads %d profile %d: engine %g, model %g",
                 optic_optim_kind_name(kind), (int)threads, prof, got, want);
        /* 10 ns per element for the group's kind: arithmetic-bound. */
        double *fig[] = {&m.optim_sgd_element_ns,     &m.optim_adam_element_ns,    &m.optim_adamw_element_ns,
                         &m.optim_rmsprop_element_ns, &m.optim_adagrad_element_ns, &m.optim_lamb_element_ns,
                         &m.optim_lion_element_ns};
        *fig[k] = 10.0;
        const double slow = engine_update_ns(&m, kind, &t, threads, prof);
        const double want_slow = expected_update_ns(&m, kind, &t, threads, prof);
        OT_CHECK(fabs(slow - want_slow) <= 1e-9 * want_slow && slow > got + 500.0,
                 "%s threads %d profile %d: 10 ns/element gives %g (model %g), default %g", optic_optim_kind_name(kind),
                 (int)threads, prof, slow, want_slow, got);
      }
    }
  }
  ot_tensors_free(&t);
}

static const ot_case cases[] = {
    {"estimates_for_optimizer_threads", estimates_for_optimizer_threads},
    {"estimate_is_the_fused_steps_model", estimate_is_the_fused_steps_model},
    {"cache_key_is_shapes_and_baked_hyperparameters", cache_key_is_shapes_and_baked_hyperparameters},
    {"no_averaging_steps_each_core_alone", no_averaging_steps_each_core_alone},
    {"graph_computes_the_update", graph_computes_the_update},
    {"engine_equals_direct", engine_equals_direct},
    {"cache_hits_and_misses", cache_hits_and_misses},
    {"multicore_2", multicore_2},
    {"multicore_4", multicore_4},
    {"step_core_in_callers_pod", step_core_in_callers_pod},
    {"checkpoint_resume_is_bitwise", checkpoint_resume_is_bitwise},
    {"profile_events_have_estimates", profile_events_have_estimates},
    {"error_paths", error_paths},
};
OT_MAIN(cases)
