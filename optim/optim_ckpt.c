/* The optimizer's whole state through a checkpoint (include/optic/optim.h
 * "Checkpoints"): export's tensors become entries "optim/<name>", its integer
 * scalars and every group's hyperparameters become metadata, beside the
 * caller's own entries; restore reads them back into library buffers,
 * checks them against the optimizer and imports them all-or-nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim/optim_internal.h"

#define PREFIX "optim/"
enum { PREFIX_LEN = sizeof PREFIX - 1, KEY_LEN = 128, HP_TEXT = 1024, NUM_TEXT = 24 };

/* ------------------------------------------------------------ hyperparameters as text */

/* "kind=adam convention=pytorch lr=0x1.0624dd2f1a9fcp-10 ...": doubles in %a,
 * so the text compares (and parses) exactly. */
static void hparams_text(const optic_optim_hparams *h, char *buf, size_t size) {
  int n = snprintf(buf, size, "kind=%s convention=%s", optic_optim_kind_name(h->kind),
                   optic_optim_convention_name(h->convention));
#define D_(field) n += snprintf(buf + n, size - (size_t)n, " " #field "=%a", h->field)
#define B_(field) n += snprintf(buf + n, size - (size_t)n, " " #field "=%d", h->field ? 1 : 0)
#define U_(field) n += snprintf(buf + n, size - (size_t)n, " " #field "=%" PRIu64, h->field)
  // clang-format off
  D_(lr); D_(weight_decay); D_(momentum); D_(dampening); B_(nesterov); D_(beta1); D_(beta2); B_(amsgrad); D_(eps);
  D_(eps_root); D_(alpha); B_(centered); D_(lr_decay); D_(initial_accumulator_value);
  n += snprintf(buf + n, size - (size_t)n, " schedule.kind=%d", (int)h->schedule.kind);
  U_(schedule.step_size); D_(schedule.gamma); U_(schedule.decay_steps); U_(schedule.warmup_steps); D_(schedule.min_lr);
  // clang-format on
  if (h->bf16_master) B_(bf16_master); /* only when set: older checkpoints' text is unchanged */
#undef D_
#undef B_
#undef U_
}

/* Token i ("name=value") of a space-separated text into out; false past the end. */
static bool token(const char *text, size_t i, char *out, size_t size) {
  const char *p = text;
  for (;;) {
    while (*p == ' ') p++;
    if (*p == '\0') return false;
    const char *e = strchr(p, ' ');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (i-- == 0) {
      snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), p);
      return true;
    }
    p += len;
  }
}

/* The value of a token, as a number where it is one (for messages). */
static const char *readable(const char *tok, char *buf, size_t size) {
  const char *eq = strchr(tok, '=');
  const char *v = eq ? eq + 1 : tok;
  if (strncmp(v, "0x", 2) == 0 || strncmp(v, "-0x", 3) == 0) {
    snprintf(buf, size, "%.17g", strtod(v, NULL));
    return buf;
  }
  return v;
}

static optic_status hparams_compare(const char *saved, const optic_optim_hparams *h, size_t g, const char *op) {
  char mine[HP_TEXT], a[128], b[128], ra[40], rb[40];
  hparams_text(h, mine, sizeof mine);
  for (size_t i = 0;; i++) {
    bool ha = token(saved, i, a, sizeof a), hb = token(mine, i, b, sizeof b);
    if (!ha && !hb) return OPTIC_OK;
    if (ha && hb && strcmp(a, b) == 0) continue;
    const char *field = hb ? b : a;
    int flen = (int)(strchr(field, '=') ? (size_t)(strchr(field, '=') - field) : strlen(field));
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: group %zu hyperparameter %.*s: the checkpoint has %s, this optimizer %s (restore with "
                      "hparams = OPTIC_OPTIM_HPARAMS_KEEP to keep this optimizer's)",
                      op, g, flen, field, ha ? readable(a, ra, sizeof ra) : "(none)",
                      hb ? readable(b, rb, sizeof rb) : "(none)");
  }
}

/* ------------------------------------------------------------ saving */

typedef struct payload {
  optic_optim_state *state;
  optic_named_tensor *entries;
  optic_ckpt_meta *meta;
  char *names;  /* KEY_LEN per entry or key we made */
  char *values; /* HP_TEXT per meta value we made */
  size_t nentries, nmeta;
} payload;

static void payload_free(payload *p) {
  optic_optim_state_destroy(p->state);
  free(p->entries);
  free(p->meta);
  free(p->names);
  free(p->values);
  memset(p, 0, sizeof *p);
}

static optic_status payload_build(const optic_optim_t *opt, const optic_optim_state *state,
                                  const optic_named_tensor *extra, size_t nextra, const optic_ckpt_meta *meta,
                                  size_t nmeta, const optic_ckpt_meta *more, size_t nmore, payload *p, const char *op) {
  if ((nextra > 0 && extra == NULL) || (nmeta > 0 && meta == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: entries or metadata NULL with a count > 0", op);
  for (size_t i = 0; i < nextra; i++)
    if (extra[i].name && strncmp(extra[i].name, PREFIX, PREFIX_LEN) == 0)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: entry \"%s\": names starting with \"" PREFIX "\" hold the optimizer's state", op,
                        extra[i].name);
  for (size_t i = 0; i < nmeta; i++)
    if (meta[i].key && strncmp(meta[i].key, PREFIX, PREFIX_LEN) == 0)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: metadata key \"%s\": keys starting with \"" PREFIX "\" hold the optimizer's state", op,
                        meta[i].key);
  const size_t ng = opt->group_count, nt = state->tensor_count, ns = state->scalar_count;
  const size_t own_meta = 2 + ns + ng; /* format, groups, scalars, hparams */
  p->nentries = nextra + nt;
  p->nmeta = nmeta + nmore + own_meta;
  p->entries = calloc(p->nentries + 1, sizeof *p->entries);
  p->meta = calloc(p->nmeta, sizeof *p->meta);
  p->names = calloc(nt + own_meta, KEY_LEN);
  p->values = calloc(own_meta, HP_TEXT);
  if (!p->entries || !p->meta || !p->names || !p->values)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for the checkpoint's index", op);
  if (nextra) memcpy(p->entries, extra, nextra * sizeof *extra);
  size_t k = 0;
  for (size_t i = 0; i < nt; i++, k++) {
    char *name = p->names + k * KEY_LEN;
    snprintf(name, KEY_LEN, PREFIX "%s", state->tensors[i].name);
    p->entries[nextra + i] = (optic_named_tensor){.name = name, .tensor = state->tensors[i].tensor};
  }
  size_t m = 0;
  for (size_t i = 0; i < nmeta; i++) p->meta[m++] = meta[i];
  for (size_t i = 0; i < nmore; i++) p->meta[m++] = more[i];
  size_t v = 0;
#define OWN_META(key_fmt, key_arg, ...)                                       \
  do {                                                                        \
    char *key_ = p->names + k++ * KEY_LEN, *val_ = p->values + v++ * HP_TEXT; \
    snprintf(key_, KEY_LEN, PREFIX key_fmt, key_arg);                         \
    snprintf(val_, HP_TEXT, __VA_ARGS__);                                     \
    p->meta[m++] = optic_ckpt_meta_str(key_, val_);                           \
  } while (0)
  OWN_META("%s", "format", "%d", OPTIC_OPTIM_STATE_VERSION);
  OWN_META("%s", "groups", "%zu", ng);
  for (size_t i = 0; i < ns; i++) OWN_META("%s", state->scalars[i].name, "%" PRId64, state->scalars[i].value);
  for (size_t g = 0; g < ng; g++) {
    char *key = p->names + k++ * KEY_LEN, *val = p->values + v++ * HP_TEXT;
    snprintf(key, KEY_LEN, PREFIX "group.%zu/hparams", g);
    hparams_text(&opt->groups[g].hp, val, HP_TEXT);
    p->meta[m++] = optic_ckpt_meta_str(key, val);
  }
#undef OWN_META
  return OPTIC_OK;
}

optic_status optim_ckpt_save(const optic_optim_t *opt, const optic_optim_state *state, const char *path,
                             const char *const *dirs, size_t ndirs, uint64_t step, const optic_named_tensor *extra,
                             size_t nextra, const optic_ckpt_meta *meta, size_t nmeta, const optic_ckpt_meta *more,
                             size_t nmore, const optic_ckpt_save_options *opts, const char *op) {
  payload p = {0};
  optic_status st = payload_build(opt, state, extra, nextra, meta, nmeta, more, nmore, &p, op);
  if (st == OPTIC_OK && path != NULL) st = optic_ckpt_save_file(path, p.entries, p.nentries, p.meta, p.nmeta, opts);
  else if (st == OPTIC_OK) st = optic_ckpt_save(dirs, ndirs, step, p.entries, p.nentries, p.meta, p.nmeta, opts);
  p.state = NULL; /* the caller's */
  payload_free(&p);
  return st;
}

optic_status optic_optim_save(const optic_optim_t *opt, const char *const *dirs, size_t ndirs, uint64_t step,
                              const optic_named_tensor *extra, size_t nextra, const optic_ckpt_meta *meta, size_t nmeta,
                              const optic_ckpt_save_options *opts) {
  const char *op = "optim_save";
  if (opt == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL optimizer", op);
  optic_optim_state *state = NULL;
  optic_status st = optic_optim_state_export(opt, &state);
  if (st == OPTIC_OK)
    st = optim_ckpt_save(opt, state, NULL, dirs, ndirs, step, extra, nextra, meta, nmeta, NULL, 0, opts, op);
  optic_optim_state_destroy(state);
  return st;
}

optic_status optic_optim_save_file(const optic_optim_t *opt, const char *path, const optic_named_tensor *extra,
                                   size_t nextra, const optic_ckpt_meta *meta, size_t nmeta,
                                   const optic_ckpt_save_options *opts) {
  const char *op = "optim_save_file";
  if (opt == NULL || path == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", op);
  optic_optim_state *state = NULL;
  optic_status st = optic_optim_state_export(opt, &state);
  if (st == OPTIC_OK) st = optim_ckpt_save(opt, state, path, NULL, 0, 0, extra, nextra, meta, nmeta, NULL, 0, opts, op);
  optic_optim_state_destroy(state);
  return st;
}

/* ------------------------------------------------------------ restoring */

void optim_ckpt_loaded_free(optim_ckpt_loaded *l) {
  for (size_t i = 0; i < l->ntensors; i++) {
    size_t bytes = 0;
    optic_tensor_bytes(&l->tensors[i].tensor, &bytes);
    optic_free(NULL, l->tensors[i].tensor.data, bytes, OPTIC_DEFAULT_ALIGNMENT);
  }
  free(l->tensors);
  free(l->scalars);
  free(l->names);
  memset(l, 0, sizeof *l);
}

static bool parse_i64(const void *value, size_t len, int64_t *out) {
  char buf[NUM_TEXT];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, value, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  long long x = strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = (int64_t)x;
  return true;
}

static bool is_hparams_key(const char *key) {
  size_t n = strlen(key);
  return n > 8 && strcmp(key + n - 8, "/hparams") == 0;
}

/* Checks the format, group count and hyperparameters (unless KEEP), then
 * reads every "optim/" scalar and tensor (verified) into *l. */
static optic_status optim_ckpt_load(const optic_optim_t *opt, optic_ckpt_reader_t *r, optic_optim_hparams_policy policy,
                                    optim_ckpt_loaded *l, const char *op) {
  memset(l, 0, sizeof *l);
  const void *v = NULL;
  size_t len = 0;
  int64_t format = 0, groups = 0;
  if (optic_ckpt_meta_get(r, PREFIX "format", &v, &len) != OPTIC_OK)
    return optic_fail(OPTIC_ERR_NOT_FOUND,
                      "%s: the checkpoint holds no optimizer state (no \"" PREFIX
                      "format\" metadata: not written by optic_optim_save or optic_step_engine_save)",
                      op);
  if (!parse_i64(v, len, &format) || format != OPTIC_OPTIM_STATE_VERSION)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: optimizer state format \"%.*s\", this library reads %d", op,
                      (int)(len < 32 ? len : 32), (const char *)v, OPTIC_OPTIM_STATE_VERSION);
  if (optic_ckpt_meta_get(r, PREFIX "groups", &v, &len) != OPTIC_OK || !parse_i64(v, len, &groups) || groups < 0)
    return optic_fail(OPTIC_ERR_CORRUPT, "%s: \"" PREFIX "groups\" is missing or not a count", op);
  if ((size_t)groups != opt->group_count)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: the checkpoint's optimizer has %" PRId64 " parameter groups, this optimizer %zu", op, groups,
                      opt->group_count);
  for (size_t g = 0; g < opt->group_count; g++) {
    char key[KEY_LEN];
    snprintf(key, sizeof key, PREFIX "group.%zu/hparams", g);
    if (optic_ckpt_meta_get(r, key, &v, &len) != OPTIC_OK)
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: \"%s\" is missing", op, key);
    optic_status st = OPTIC_OK;
    char saved_kind[64] = "", want_kind[64];
    snprintf(want_kind, sizeof want_kind, "kind=%s", optic_optim_kind_name(opt->groups[g].hp.kind));
    if (policy == OPTIC_OPTIM_HPARAMS_CHECK) st = hparams_compare(v, &opt->groups[g].hp, g, op);
    else if (!token(v, 0, saved_kind, sizeof saved_kind) || strcmp(saved_kind, want_kind) != 0)
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: group %zu: the checkpoint's optimizer is %s, this one %s", op, g,
                      saved_kind[0] ? saved_kind + 5 : "(none)", want_kind + 5);
    if (st != OPTIC_OK) return st;
  }
  const size_t nm = optic_ckpt_meta_count(r), ne = optic_ckpt_entry_count(r);
  l->scalars = calloc(nm + 1, sizeof *l->scalars);
  l->tensors = calloc(ne + 1, sizeof *l->tensors);
  l->names = calloc(nm + ne + 1, KEY_LEN);
  if (!l->scalars || !l->tensors || !l->names) {
    optim_ckpt_loaded_free(l);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
  }
  size_t k = 0;
  for (size_t i = 0; i < nm; i++) {
    const char *key = NULL;
    optic_ckpt_meta_at(r, i, &key, &v, &len);
    if (strncmp(key, PREFIX, PREFIX_LEN) != 0 || is_hparams_key(key) || strcmp(key, PREFIX "format") == 0 ||
        strcmp(key, PREFIX "groups") == 0)
      continue;
    int64_t x = 0;
    if (!parse_i64(v, len, &x)) {
      optim_ckpt_loaded_free(l);
      return optic_fail(OPTIC_ERR_CORRUPT, "%s: metadata \"%s\" is not an integer", op, key);
    }
    char *name = l->names + k++ * KEY_LEN;
    snprintf(name, KEY_LEN, "%s", key + PREFIX_LEN);
    l->scalars[l->nscalars++] = (optic_named_scalar){.name = name, .value = x};
  }
  for (size_t i = 0; i < ne; i++) {
    optic_ckpt_entry_info info;
    optic_ckpt_entry_at(r, i, &info);
    if (strncmp(info.name, PREFIX, PREFIX_LEN) != 0) continue;
    optic_tensor t;
    optic_status st = optic_ckpt_restore_alloc(r, info.name, NULL, &t);
    if (st != OPTIC_OK) {
      optim_ckpt_loaded_free(l);
      return st;
    }
    char *name = l->names + k++ * KEY_LEN;
    snprintf(name, KEY_LEN, "%s", info.name + PREFIX_LEN);
    l->tensors[l->ntensors++] = (optic_named_tensor){.name = name, .tensor = t};
  }
  l->state = (optic_optim_state){.version = OPTIC_OPTIM_STATE_VERSION,
                                 .tensor_count = l->ntensors,
                                 .tensors = l->tensors,
                                 .scalar_count = l->nscalars,
                                 .scalars = l->scalars};
  return OPTIC_OK;
}

static optic_status restore_options(const optic_optim_restore_options *ro, optic_optim_restore_options *out,
                                    const char *op) {
  optic_optim_restore_options d = {.size = sizeof d};
  if (ro != NULL) {
    if (ro->size != sizeof *ro)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: options size %zu, expected %zu", op, ro->size, sizeof *ro);
    if ((unsigned)ro->hparams > OPTIC_OPTIM_HPARAMS_KEEP)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: hparams policy %d is not known", op, (int)ro->hparams);
    d = *ro;
  }
  *out = d;
  return OPTIC_OK;
}

optic_status optim_ckpt_restore_one(const optic_optim_t *opt, optic_ckpt_reader_t *r, const optic_named_tensor *targets,
                                    size_t n, const optic_optim_restore_options *ro, optim_ckpt_loaded *l,
                                    const char *op) {
  optic_optim_restore_options o = {0};
  optic_status st = restore_options(ro, &o, op);
  if (st == OPTIC_OK && r == NULL) st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL reader", op);
  if (st == OPTIC_OK) st = optic_ckpt_check_name(r);
  if (st == OPTIC_OK) st = optim_ckpt_load(opt, r, o.hparams, l, op);
  if (st == OPTIC_OK && n > 0) {
    st = optic_ckpt_restore(r, targets, n);
    if (st != OPTIC_OK) optim_ckpt_loaded_free(l);
  }
  return st;
}

optic_status optic_optim_restore(optic_optim_t *opt, optic_ckpt_reader_t *r, const optic_named_tensor *targets,
                                 size_t n, const optic_optim_restore_options *ro) {
  const char *op = "optim_restore";
  if (opt == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL optimizer", op);
  optim_ckpt_loaded l;
  optic_status st = optim_ckpt_restore_one(opt, r, targets, n, ro, &l, op);
  if (st != OPTIC_OK) return st;
  st = optic_optim_state_import(opt, &l.state);
  optim_ckpt_loaded_free(&l);
  return st;
}

/* Newest step first, each directory in order: the first file fn restores
 * from wins; the others are skipped and counted. */
optic_status optim_ckpt_restore_latest(const char *const *dirs, size_t ndirs, const optic_optim_restore_options *ro,
                                       optic_ckpt_restore_report *report, optim_ckpt_restore_fn fn, void *user,
                                       const char *op) {
  if (dirs == NULL || ndirs == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: no directory given", op);
  if (report != NULL && report->size != sizeof *report)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: report size %zu, expected %zu", op, report->size,
                      sizeof *report);
  optic_optim_restore_options o = {0};
  optic_status st = restore_options(ro, &o, op);
  if (st != OPTIC_OK) return st;
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  uint64_t **steps = calloc(ndirs, sizeof *steps);
  size_t *count = calloc(ndirs, sizeof *count);
  if (steps == NULL || count == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
  for (size_t d = 0; d < ndirs && st == OPTIC_OK; d++) { /* a directory that cannot be listed holds nothing */
    size_t c = 0;
    if (dirs[d] == NULL || optic_ckpt_list(dirs[d], NULL, 0, &c) != OPTIC_OK || c == 0) continue;
    if ((steps[d] = malloc(c * sizeof **steps)) == NULL) {
      st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
    } else if (optic_ckpt_list(dirs[d], steps[d], c, &c) == OPTIC_OK) {
      count[d] = c;
    }
  }
  const optic_ckpt_read_options *read = o.read.size ? &o.read : NULL;
  bool done = false, any = false;
  size_t *at = st == OPTIC_OK ? calloc(ndirs, sizeof *at) : NULL; /* per dir: steps not yet tried */
  if (st == OPTIC_OK && at == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
  for (size_t d = 0; at && d < ndirs; d++) at[d] = count[d];
  while (st == OPTIC_OK && !done) {
    uint64_t next = 0;
    bool found = false;
    for (size_t d = 0; d < ndirs; d++)
      if (at[d] > 0 && (!found || steps[d][at[d] - 1] > next)) next = steps[d][at[d] - 1], found = true;
    if (!found) break;
    any = true;
    for (size_t d = 0; d < ndirs && !done; d++) {
      if (at[d] == 0 || steps[d][at[d] - 1] != next) continue;
      at[d]--;
      char path[4352];
      optic_ckpt_path(dirs[d], next, path, sizeof path);
      optic_ckpt_reader_t *r = NULL;
      optic_status got = optic_ckpt_reader_create(path, read, &r);
      if (got == OPTIC_OK) got = fn(user, r, &o);
      optic_ckpt_reader_destroy(r);
      if (got == OPTIC_OK) {
        rep.step = next, rep.dir_index = d, done = true;
      } else if (rep.skipped++ == 0) {
        snprintf(rep.first_skipped, sizeof rep.first_skipped, "%.200s: %.300s", path, optic_last_error());
      }
    }
    for (size_t d = 0; d < ndirs && !done; d++) /* drop this step where a later dir was not reached */
      if (at[d] > 0 && steps[d][at[d] - 1] == next) at[d]--;
  }
  for (size_t d = 0; steps && d < ndirs; d++) free(steps[d]);
  free(steps);
  free(count);
  free(at);
  if (st != OPTIC_OK) return st;
  if (report != NULL) *report = rep;
  if (done) return OPTIC_OK;
  if (!any)
    return optic_fail(OPTIC_ERR_NOT_FOUND, "%s: no checkpoint in %s%s", op, dirs[0],
                      ndirs > 1 ? " or its replicas" : "");
  return optic_fail(OPTIC_ERR_CORRUPT, "%s: all %zu checkpoint files were rejected; the newest: %s", op, rep.skipped,
                    rep.first_skipped);
}

typedef struct optim_latest {
  optic_optim_t *opt;
  const optic_named_tensor *targets;
  size_t n;
} optim_latest;

static optic_status optim_latest_fn(void *user, optic_ckpt_reader_t *r, const optic_optim_restore_options *ro) {
  optim_latest *ol = user;
  return optic_optim_restore(ol->opt, r, ol->targets, ol->n, ro);
}

optic_status optic_optim_restore_latest(optic_optim_t *opt, const char *const *dirs, size_t ndirs,
                                        const optic_named_tensor *targets, size_t n,
                                        const optic_optim_restore_options *ro, optic_ckpt_restore_report *report) {
  if (opt == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optim_restore_latest: NULL optimizer");
  optim_latest ol = {opt, targets, n};
  return optim_ckpt_restore_latest(dirs, ndirs, ro, report, optim_latest_fn, &ol, "optim_restore_latest");
}
