/* Optimizer state as named tensors plus integer metadata (for checkpoints):
 * export describes the optimizer's own buffers without copying them; import
 * checks a whole state against the optimizer's groups before copying any of
 * it in. Never writes files: the checkpoint layer stores what export gives. */
#include <stdio.h>
#include <string.h>

#include "optim/optim_internal.h"

enum { NAME_MAX_LEN = 96 }; /* "group.<g>/tensor.<i>/max_exp_avg_sq" with 20-digit indices fits */

/* One allocation: the struct, then the entries, then the names. */
typedef struct state_blob {
  optic_optim_state state;
  size_t bytes;
  const optic_allocator *alloc;
} state_blob;

static size_t state_tensor_count(const optic_optim_t *opt) {
  size_t c = 0;
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    for (int s = 0; s < OPTIM_SLOT_COUNT; s++) c += optim_group_has_slot(&gr->hp, (optim_slot)s) ? gr->count : 0;
  }
  return c;
}

static size_t state_scalar_count(const optic_optim_t *opt) { return 3 * opt->group_count + 1; }

optic_status optic_optim_state_export(const optic_optim_t *opt, optic_optim_state **out) {
  const char *what = "optim_state_export";
  if (opt == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  *out = NULL;
  const size_t nt = state_tensor_count(opt), ns = state_scalar_count(opt);
  const size_t bytes =
      sizeof(state_blob) + nt * sizeof(optic_named_tensor) + ns * sizeof(optic_named_scalar) + (nt + ns) * NAME_MAX_LEN;
  state_blob *blob = NULL;
  optic_status st = optic_alloc(opt->alloc, bytes, 0, (void **)&blob);
  if (st != OPTIC_OK) return st;
  memset(blob, 0, bytes);
  blob->bytes = bytes;
  blob->alloc = opt->alloc;
  optic_named_tensor *ts = (optic_named_tensor *)(blob + 1);
  optic_named_scalar *ss = (optic_named_scalar *)(ts + nt);
  char *names = (char *)(ss + ns);
  size_t ti = 0, si = 0;
#define NEXT_NAME() (names + (ti + si) * NAME_MAX_LEN)
  for (size_t g = 0; g < opt->group_count; g++) {
    const optim_group *gr = &opt->groups[g];
    const int64_t scalars[3] = {(int64_t)gr->step, (int64_t)gr->hp.kind, (int64_t)gr->count};
    const char *scalar_names[3] = {"step", "kind", "tensors"};
    for (int k = 0; k < 3; k++) {
      char *name = NEXT_NAME();
      snprintf(name, NAME_MAX_LEN, "group.%zu/%s", g, scalar_names[k]);
      ss[si++] = (optic_named_scalar){.name = name, .value = scalars[k]};
    }
    for (size_t i = 0; i < gr->count; i++) {
      const optim_tensor *t = &gr->tensors[i];
      for (int s = 0; s < OPTIM_SLOT_COUNT; s++) {
        if (!optim_group_has_slot(&gr->hp, (optim_slot)s)) continue;
        char *name = NEXT_NAME();
        snprintf(name, NAME_MAX_LEN, "group.%zu/tensor.%zu/%s", g, i, optim_slot_name((optim_slot)s));
        ts[ti++] =
            (optic_named_tensor){.name = name, .tensor = {.dtype = OPTIC_F32, .shape = t->shape, .data = t->state[s]}};
      }
    }
  }
  char *name = NEXT_NAME();
#undef NEXT_NAME
  snprintf(name, NAME_MAX_LEN, "skipped_steps");
  ss[si++] = (optic_named_scalar){.name = name, .value = (int64_t)opt->skipped_steps};
  blob->state = (optic_optim_state){
      .version = OPTIC_OPTIM_STATE_VERSION, .tensor_count = ti, .tensors = ts, .scalar_count = si, .scalars = ss};
  *out = &blob->state;
  return OPTIC_OK;
}

void optic_optim_state_destroy(optic_optim_state *state) {
  if (state == NULL) return;
  state_blob *blob = (state_blob *)state; /* state is the blob's first member */
  optic_free(blob->alloc, blob, blob->bytes, 0);
}

static const optic_named_tensor *find_tensor(const optic_optim_state *s, const char *name, size_t *hits) {
  const optic_named_tensor *found = NULL;
  *hits = 0;
  for (size_t i = 0; i < s->tensor_count; i++) {
    if (s->tensors[i].name && strcmp(s->tensors[i].name, name) == 0) {
      if (!found) found = &s->tensors[i];
      ++*hits;
    }
  }
  return found;
}

static const optic_named_scalar *find_scalar(const optic_optim_state *s, const char *name, size_t *hits) {
  const optic_named_scalar *found = NULL;
  *hits = 0;
  for (size_t i = 0; i < s->scalar_count; i++) {
    if (s->scalars[i].name && strcmp(s->scalars[i].name, name) == 0) {
      if (!found) found = &s->scalars[i];
      ++*hits;
    }
  }
  return found;
}

static optic_status need_scalar(const optic_optim_state *s, const char *name, int64_t *value, const char *what) {
  size_t hits;
  const optic_named_scalar *e = find_scalar(s, name, &hits);
  if (hits != 1) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: scalar \"%s\" appears %zu times (expected once)", what, name,
                      hits);
  }
  *value = e->value;
  return OPTIC_OK;
}

/* Checks every expected entry (and copies it in when `copy`). */
static optic_status walk(optic_optim_t *opt, const optic_optim_state *s, bool copy, const char *what) {
  char name[NAME_MAX_LEN];
  optic_status st;
  for (size_t g = 0; g < opt->group_count; g++) {
    optim_group *gr = &opt->groups[g];
    int64_t step = 0, kind = 0, count = 0;
    snprintf(name, sizeof name, "group.%zu/step", g);
    if ((st = need_scalar(s, name, &step, what)) != OPTIC_OK) return st;
    snprintf(name, sizeof name, "group.%zu/kind", g);
    if ((st = need_scalar(s, name, &kind, what)) != OPTIC_OK) return st;
    snprintf(name, sizeof name, "group.%zu/tensors", g);
    if ((st = need_scalar(s, name, &count, what)) != OPTIC_OK) return st;
    if (kind != (int64_t)gr->hp.kind) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: group %zu is %s, the state is of kind %lld", what, g,
                        optic_optim_kind_name(gr->hp.kind), (long long)kind);
    }
    if (count != (int64_t)gr->count || step < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: group %zu has %zu tensors, the state %lld (step %lld)", what,
                        g, gr->count, (long long)count, (long long)step);
    }
    for (size_t i = 0; i < gr->count; i++) {
      const optim_tensor *t = &gr->tensors[i];
      for (int sl = 0; sl < OPTIM_SLOT_COUNT; sl++) {
        if (!optim_group_has_slot(&gr->hp, (optim_slot)sl)) continue;
        snprintf(name, sizeof name, "group.%zu/tensor.%zu/%s", g, i, optim_slot_name((optim_slot)sl));
        size_t hits;
        const optic_named_tensor *e = find_tensor(s, name, &hits);
        if (hits != 1) {
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: tensor \"%s\" appears %zu times (expected once)", what,
                            name, hits);
        }
        if (e->tensor.dtype != OPTIC_F32 || !optic_shape_equal(&e->tensor.shape, &t->shape)) {
          char got[96], want[96];
          optic_shape_format(&e->tensor.shape, e->tensor.dtype, got, sizeof got);
          optic_shape_format(&t->shape, OPTIC_F32, want, sizeof want);
          return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: \"%s\" is %s, expected %s", what, name, got, want);
        }
        if (t->n > 0 && e->tensor.data == NULL) {
          return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: \"%s\" has NULL data", what, name);
        }
        if (copy && t->n > 0 && e->tensor.data != t->state[sl]) {
          memmove(t->state[sl], e->tensor.data, t->n * sizeof(float));
        }
      }
    }
    if (copy) gr->step = (uint64_t)step;
  }
  return OPTIC_OK;
}

optic_status optic_optim_state_import(optic_optim_t *opt, const optic_optim_state *state) {
  const char *what = "optim_state_import";
  if (opt == NULL || state == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (state->version != OPTIC_OPTIM_STATE_VERSION) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: state version %u, this library reads version %d", what,
                      state->version, OPTIC_OPTIM_STATE_VERSION);
  }
  if ((state->tensor_count > 0 && state->tensors == NULL) || (state->scalar_count > 0 && state->scalars == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: state has entries but a NULL array", what);
  }
  /* Exactly the expected entries: with every expected one found once, equal
   * counts mean nothing unknown is there. */
  if (state->tensor_count != state_tensor_count(opt) || state->scalar_count != state_scalar_count(opt)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: state has %zu tensors and %zu scalars, this optimizer's groups have %zu and %zu", what,
                      state->tensor_count, state->scalar_count, state_tensor_count(opt), state_scalar_count(opt));
  }
  int64_t skipped = 0;
  optic_status st = need_scalar(state, "skipped_steps", &skipped, what);
  if (st != OPTIC_OK) return st;
  if (skipped < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: skipped_steps = %lld", what, (long long)skipped);
  if ((st = walk(opt, state, false, what)) != OPTIC_OK) return st;
  walk(opt, state, true, what);
  opt->skipped_steps = (uint64_t)skipped;
  return OPTIC_OK;
}
