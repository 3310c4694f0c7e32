/* The optimizer object: options, parameter groups, per-tensor state buffers
 * and the fixed block list a step walks. Creation and bookkeeping only; the
 * update itself is optim/step.c, export/import optim/state.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/shape_check.h"
#include "optim/optim_internal.h"

/* Grows *arr (elements of elem bytes, *cap of them) to hold need. */
static optic_status grow(const optic_allocator *a, void **arr, size_t *cap, size_t need, size_t elem,
                         const char *what) {
  if (need <= *cap) return OPTIC_OK;
  size_t cap2 = *cap ? *cap : 4;
  while (cap2 < need) cap2 *= 2;
  if (cap2 > SIZE_MAX / elem) return optic_fail(OPTIC_ERR_OVERFLOW, "%s: %zu entries overflow", what, cap2);
  void *p = NULL;
  optic_status st = optic_alloc(a, cap2 * elem, 0, &p);
  if (st != OPTIC_OK) return st;
  if (*cap) memcpy(p, *arr, *cap * elem);
  optic_free(a, *arr, *cap * elem, 0);
  *arr = p;
  *cap = cap2;
  return OPTIC_OK;
}

optic_optim_options optic_optim_options_default(void) {
  optic_optim_options o = {.size = sizeof o};
  return o;
}

optic_status optic_optim_create(const optic_optim_options *options, optic_optim_t **out) {
  const char *what = "optim_create";
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
  *out = NULL;
  optic_optim_options o = {.size = sizeof o};
  if (options != NULL) {
    if (options->size != sizeof *options) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: options.size is %zu, expected %zu", what, options->size,
                        sizeof *options);
    }
    o = *options;
  }
  if (o.threads < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: threads = %d is negative", what, o.threads);
  if (!(o.clip_global_norm >= 0.0) || !isfinite(o.clip_global_norm)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: clip_global_norm = %g must be finite and >= 0", what,
                      o.clip_global_norm);
  }
  const optic_allocator *a = o.allocator ? o.allocator : optic_default_allocator();
  optic_optim_t *opt = NULL;
  optic_status st = optic_alloc(a, sizeof *opt, 0, (void **)&opt);
  if (st != OPTIC_OK) return st;
  memset(opt, 0, sizeof *opt);
  opt->opts = o;
  opt->alloc = a;
  *out = opt;
  return OPTIC_OK;
}

static void free_group_tensors(const optic_allocator *a, optim_tensor *ts, size_t count) {
  for (size_t i = 0; ts && i < count; i++) {
    for (int s = 0; s < OPTIM_SLOT_COUNT; s++) optic_free(a, ts[i].state[s], ts[i].n * sizeof(float), 0);
  }
  optic_free(a, ts, count * sizeof *ts, 0);
}

void optic_optim_destroy(optic_optim_t *opt) {
  if (opt == NULL) return;
  const optic_allocator *a = opt->alloc;
  for (size_t g = 0; g < opt->group_count; g++) free_group_tensors(a, opt->groups[g].tensors, opt->groups[g].count);
  optic_free(a, opt->groups, opt->group_cap * sizeof *opt->groups, 0);
  optic_free(a, opt->blocks, opt->block_cap * sizeof *opt->blocks, 0);
  optic_free(a, opt->ratios, opt->ratio_cap * sizeof *opt->ratios, 0);
  optic_free(a, opt->ranges, opt->range_cap * sizeof *opt->ranges, 0);
  optic_free(a, opt, sizeof *opt, 0);
}

optic_status optic_optim_add_group(optic_optim_t *opt, const optic_optim_hparams *hparams, size_t count,
                                   const optic_shape *shapes, size_t *group_index) {
  const char *what = "optim_add_group";
  if (opt == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: optimizer is NULL", what);
  if (count > 0 && shapes == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: shapes is NULL", what);
  optic_optim_hparams hp;
  optic_status st = optim_hparams_check(hparams, what, &hp);
  if (st != OPTIC_OK) return st;
  /* Sizes and block counts first, so nothing is allocated for a bad shape. */
  size_t new_blocks = 0;
  for (size_t i = 0; i < count; i++) {
    size_t n;
    char context[64];
    snprintf(context, sizeof context, "%s: tensor %zu", what, i);
    if ((st = optic_shape_check(context, &shapes[i], &n)) != OPTIC_OK) return st;
    new_blocks += n == 0 ? 0 : (n + OPTIM_BLOCK_ELEMENTS - 1) / OPTIM_BLOCK_ELEMENTS;
  }
  const optic_allocator *a = opt->alloc;
  if ((st = grow(a, (void **)&opt->groups, &opt->group_cap, opt->group_count + 1, sizeof *opt->groups, what)) !=
          OPTIC_OK ||
      (st = grow(a, (void **)&opt->blocks, &opt->block_cap, opt->block_count + new_blocks, sizeof *opt->blocks,
                 what)) != OPTIC_OK)
    return st;
  if ((st = grow(a, (void **)&opt->ratios, &opt->ratio_cap, opt->tensor_count + count, sizeof *opt->ratios, what)) !=
          OPTIC_OK ||
      (st = grow(a, (void **)&opt->ranges, &opt->range_cap, 2 * (opt->tensor_count + count), sizeof *opt->ranges,
                 what)) != OPTIC_OK)
    return st;
  optim_tensor *ts = NULL;
  if (count > 0) {
    if ((st = optic_alloc(a, count * sizeof *ts, 0, (void **)&ts)) != OPTIC_OK) return st;
    memset(ts, 0, count * sizeof *ts);
  }
  size_t block = opt->block_count;
  for (size_t i = 0; i < count; i++) {
    optim_tensor *t = &ts[i];
    optic_shape_make(shapes[i].rank, shapes[i].dims, &t->shape);
    optic_shape_elements(&t->shape, &t->n);
    t->first_block = block;
    for (int s = 0; s < OPTIM_SLOT_COUNT; s++) {
      if (!optim_group_has_slot(&hp, (optim_slot)s) || t->n == 0) continue;
      if ((st = optic_alloc(a, t->n * sizeof(float), 0, (void **)&t->state[s])) != OPTIC_OK) {
        free_group_tensors(a, ts, count);
        return st;
      }
      float v = optim_slot_initial(&hp, (optim_slot)s);
      for (size_t e = 0; e < t->n; e++) t->state[s][e] = v;
    }
    for (size_t lo = 0; lo < t->n; lo += OPTIM_BLOCK_ELEMENTS) {
      size_t hi = t->n - lo > OPTIM_BLOCK_ELEMENTS ? lo + OPTIM_BLOCK_ELEMENTS : t->n;
      opt->blocks[block++] =
          (optim_block){.group = opt->group_count, .tensor = opt->tensor_count + i, .lo = lo, .hi = hi};
    }
    t->block_count = block - t->first_block;
  }
  opt->groups[opt->group_count] =
      (optim_group){.hp = hp, .step = 0, .first_tensor = opt->tensor_count, .count = count, .tensors = ts};
  if (group_index) *group_index = opt->group_count;
  opt->group_count++;
  opt->tensor_count += count;
  opt->block_count = block;
  return OPTIC_OK;
}

size_t optic_optim_group_count(const optic_optim_t *opt) { return opt ? opt->group_count : 0; }
size_t optic_optim_tensor_count(const optic_optim_t *opt) { return opt ? opt->tensor_count : 0; }
uint64_t optic_optim_skipped_steps(const optic_optim_t *opt) { return opt ? opt->skipped_steps : 0; }

static optic_status check_group(const optic_optim_t *opt, size_t g, const void *out, const char *what) {
  if (opt == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (g >= opt->group_count) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: group %zu does not exist (%zu groups)", what, g,
                      opt->group_count);
  }
  return OPTIC_OK;
}

optic_status optic_optim_group_step(const optic_optim_t *opt, size_t g, uint64_t *out) {
  optic_status st = check_group(opt, g, out, "optim_group_step");
  if (st == OPTIC_OK) *out = opt->groups[g].step;
  return st;
}

optic_status optic_optim_group_lr(const optic_optim_t *opt, size_t g, double *out) {
  optic_status st = check_group(opt, g, out, "optim_group_lr");
  if (st == OPTIC_OK) {
    const optim_group *gr = &opt->groups[g];
    *out = optim_schedule_rate(&gr->hp.schedule, gr->hp.lr, gr->step);
  }
  return st;
}

optic_status optic_optim_group_hparams(const optic_optim_t *opt, size_t g, optic_optim_hparams *out) {
  optic_status st = check_group(opt, g, out, "optim_group_hparams");
  if (st == OPTIC_OK) *out = opt->groups[g].hp;
  return st;
}
