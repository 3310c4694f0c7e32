/* The pass manager: validates the module (every needed computation has a
 * root) before touching it, then runs the enabled passes in OPTIC_PASS_LIST
 * order, round after round, until a round changes nothing, with a round cap
 * that fails instead of looping. Fills per-pass counters and wall times. */
#include <stdio.h>
#include <string.h>

#include "graph/passes/passes.h"

#define DEFAULT_MAX_ROUNDS 32
#define DEFAULT_FOLD_MAX_BYTES ((int64_t)1 << 20)

typedef struct pass_entry {
  pass_fn run;               /* one of run and run_opts is set */
  optic_opt_level min_level; /* the lowest level that runs it */
  pass_opts_fn run_opts;     /* instead of run, for passes that read the options */
} pass_entry;

static const pass_entry pass_table[OPTIC_PASS_COUNT_] = {
    [OPTIC_PASS_SIMPLIFY] = {pass_simplify, OPTIC_OPT_FULL, NULL},
    [OPTIC_PASS_CSE] = {pass_cse, OPTIC_OPT_BASIC, NULL},
    [OPTIC_PASS_DCE] = {pass_dce, OPTIC_OPT_BASIC, NULL},
    [OPTIC_PASS_FOLD] = {NULL, OPTIC_OPT_FULL, pass_fold},
    [OPTIC_PASS_FUSION] = {NULL, OPTIC_OPT_FULL, pass_fusion},
};

/* The order passes run in within a round. The enum (OPTIC_PASS_LIST) only
 * appends, so that option and stats indexes stay stable; the order is the
 * manager's: folding first turns constant subtrees into constants that the
 * simplifier can read, DCE sweeps what the others left, and fusion groups
 * what remains (it cleans up after itself). */
static const optic_pass run_order[OPTIC_PASS_COUNT_] = {OPTIC_PASS_FOLD, OPTIC_PASS_SIMPLIFY, OPTIC_PASS_CSE,
                                                        OPTIC_PASS_DCE, OPTIC_PASS_FUSION};

static const char *const pass_names[OPTIC_PASS_COUNT_] = {
#define PASS_NAME(name, str) str,
    OPTIC_PASS_LIST(PASS_NAME)
#undef PASS_NAME
};

const char *optic_pass_name(optic_pass pass) {
  return (unsigned)pass < OPTIC_PASS_COUNT_ ? pass_names[pass] : "invalid";
}

optic_optimize_options optic_optimize_options_default(void) {
  optic_optimize_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.level = OPTIC_OPT_FULL;
  o.fold_max_bytes = DEFAULT_FOLD_MAX_BYTES;
  return o;
}

/* Copies the caller's options over the defaults, as far as its size goes. */
static optic_status read_options(const optic_optimize_options *in, optic_optimize_options *o) {
  *o = optic_optimize_options_default();
  o->max_rounds = DEFAULT_MAX_ROUNDS;
  if (in == NULL) return OPTIC_OK;
  if (in->size < sizeof in->size || in->size > sizeof *in) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optimize: options.size is %zu; set it with optic_optimize_options_default() (this library "
                      "knows up to %zu bytes)",
                      in->size, sizeof *in);
  }
  memcpy((char *)o + sizeof o->size, (const char *)in + sizeof in->size, in->size - sizeof in->size);
  o->size = sizeof *o;
  if ((unsigned)o->level > OPTIC_OPT_FULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: level %d is not none (0), basic (1) or full (2)",
                      (int)o->level);
  }
  for (int i = 0; i < OPTIC_MAX_PASSES; i++) {
    if ((unsigned)o->passes[i] > OPTIC_PASS_DISABLE) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: passes[%d] is %d, not a toggle", i, (int)o->passes[i]);
    }
  }
  if (o->max_rounds < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: max_rounds is %d (0 means the default)",
                      (int)o->max_rounds);
  }
  if (o->max_rounds == 0) o->max_rounds = DEFAULT_MAX_ROUNDS;
  if (o->fold_max_bytes < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: fold_max_bytes is %lld (0 means the default, 1 MiB)",
                      (long long)o->fold_max_bytes);
  }
  if (o->fold_max_bytes == 0) o->fold_max_bytes = DEFAULT_FOLD_MAX_BYTES;
  if (o->max_fusion_size < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: max_fusion_size is %d (0 means the default)",
                      (int)o->max_fusion_size);
  }
  return OPTIC_OK;
}

static bool pass_enabled(const optic_optimize_options *o, int p) {
  if (o->passes[p] == OPTIC_PASS_ENABLE) return true;
  if (o->passes[p] == OPTIC_PASS_DISABLE) return false;
  return o->level >= pass_table[p].min_level;
}

static int64_t count_instructions(optic_module_t *m, const pass_liveness *l) {
  int64_t total = 0;
  for (int32_t q = 0; q < l->n_comps; q++) {
    int32_t n;
    graph_instructions(m, l->comps[q], &n);
    total += n;
  }
  return total;
}

static void write_stats(optic_pass_stats *out, const optic_pass_stats *full) {
  if (out == NULL) return;
  size_t size = out->size < sizeof *full ? out->size : sizeof *full;
  if (size <= sizeof out->size) return;
  memcpy((char *)out + sizeof out->size, (const char *)full + sizeof full->size, size - sizeof full->size);
}

/* The liveness of the module as it is now: computed when a pass needs it
 * and the module changed since the last computation. */
typedef struct live_cache {
  pass_liveness l;
  bool valid;
} live_cache;

static optic_status fresh_liveness(optic_module_t *m, const char *who, live_cache *lc, int64_t *work) {
  if (lc->valid) return OPTIC_OK;
  optic_status st = pass_liveness_compute(m, who, &lc->l);
  if (st != OPTIC_OK) return st;
  lc->valid = true;
  *work += lc->l.work;
  return OPTIC_OK;
}

static void invalidate(live_cache *lc) {
  if (lc->valid) pass_liveness_free(&lc->l);
  lc->valid = false;
}

/* One run of pass p over what the module needs right now. */
static optic_status run_pass(optic_module_t *m, const optic_optimize_options *o, int p, live_cache *lc,
                             optic_pass_stat *stat, bool *changed) {
  uint64_t t0 = optic_now_ns();
  pass_counts counts = {0};
  optic_status st = fresh_liveness(m, pass_names[p], lc, &counts.work);
  if (st == OPTIC_OK) {
    st = pass_table[p].run_opts ? pass_table[p].run_opts(m, &lc->l, o, &counts, changed)
                                : pass_table[p].run(m, &lc->l, &counts, changed);
  }
  if (*changed || st != OPTIC_OK) invalidate(lc);
  stat->runs++;
  stat->removed += counts.removed;
  stat->replaced += counts.replaced;
  stat->added += counts.added;
  stat->work += counts.work;
  stat->seconds += (double)(optic_now_ns() - t0) * 1e-9;
  return st;
}

optic_status optic_graph_optimize(optic_module_t *m, const optic_optimize_options *opts, optic_pass_stats *stats) {
  uint64_t t0 = optic_now_ns();
  optic_pass_stats full;
  memset(&full, 0, sizeof full);
  full.size = sizeof full;
  if (stats != NULL && stats->size < sizeof stats->size) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: stats.size is %zu; set it to sizeof(optic_pass_stats)",
                      stats->size);
  }
  optic_optimize_options o;
  optic_status st = read_options(opts, &o);
  if (st != OPTIC_OK) return st;
  if (m == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optimize: module is NULL");

  /* The fail-safe check, before anything changes. */
  live_cache lc = {.valid = false};
  int64_t unused_work = 0;
  if ((st = fresh_liveness(m, "optimize", &lc, &unused_work)) != OPTIC_OK) return st;
  full.instructions_before = count_instructions(m, &lc.l);

  bool any = false;
  for (int p = 0; p < OPTIC_PASS_COUNT_; p++) any |= pass_enabled(&o, p);
  bool fixed = !any;
  while (!fixed && st == OPTIC_OK) {
    if (full.rounds == o.max_rounds) {
      char what[256];
      int len = 0;
      for (int p = 0; p < OPTIC_PASS_COUNT_ && len < (int)sizeof what; p++) {
        const optic_pass_stat *s = &full.pass[p];
        if (s->runs == 0) continue;
        len += snprintf(what + len, sizeof what - (size_t)len, "%s%s %lld/%lld/%lld", len ? ", " : "", pass_names[p],
                        (long long)s->removed, (long long)s->replaced, (long long)s->added);
      }
      if (len == 0) snprintf(what, sizeof what, "none");
      st = optic_fail(OPTIC_ERR_INTERNAL,
                      "optimize: no fixed point after %d rounds (removed/replaced/added so far: %s); the module is "
                      "valid and equivalent but not fully optimized",
                      (int)o.max_rounds, what);
      break;
    }
    full.rounds++;
    fixed = true;
    for (int i = 0; i < OPTIC_PASS_COUNT_ && st == OPTIC_OK; i++) {
      int p = run_order[i];
      if (!pass_enabled(&o, p)) continue;
      bool changed = false;
      st = run_pass(m, &o, p, &lc, &full.pass[p], &changed);
      if (changed) fixed = false;
    }
  }

  if (st == OPTIC_OK && (st = fresh_liveness(m, "optimize", &lc, &unused_work)) == OPTIC_OK) {
    full.instructions_after = count_instructions(m, &lc.l);
  }
  invalidate(&lc);
  graph_compact_all(m); /* removals leave marks; readers of the module only read */
  full.seconds = (double)(optic_now_ns() - t0) * 1e-9;
  write_stats(stats, &full);
  return st;
}
