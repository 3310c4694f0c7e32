/* Load balancing: per-core throughput as an exponentially weighted moving
 * average of measured items/second, a proportional split of a work range
 * (largest-remainder rounding, so the parts always sum to the total), and a
 * least-loaded picker (earliest estimated finish of the queued work). */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/error.h"
#include <optic/pod.h>

struct optic_pod_balancer {
  int n;
  double alpha;
  double rate[OPTIC_POD_MAX_CORES]; /* items/s, 0 = unmeasured */
  uint64_t queued[OPTIC_POD_MAX_CORES];
  pthread_mutex_t mu;
};

optic_status optic_pod_balancer_create(int cores, double alpha, optic_pod_balancer_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_balancer_create: out is NULL");
  *out = NULL;
  if (cores < 1 || cores > OPTIC_POD_MAX_CORES) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_balancer_create: cores is %d; must be 1..%d", cores,
                      OPTIC_POD_MAX_CORES);
  }
  if (alpha == 0) alpha = 0.3;
  if (!(alpha > 0 && alpha <= 1)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_balancer_create: alpha is %g; must be in (0, 1]", alpha);
  }
  optic_pod_balancer_t *b = NULL;
  optic_status st = optic_alloc(NULL, sizeof *b, 0, (void **)&b);
  if (st != OPTIC_OK) return st;
  memset(b, 0, sizeof *b);
  b->n = cores;
  b->alpha = alpha;
  pthread_mutex_init(&b->mu, NULL);
  *out = b;
  return OPTIC_OK;
}

void optic_pod_balancer_destroy(optic_pod_balancer_t *b) {
  if (b == NULL) return;
  pthread_mutex_destroy(&b->mu);
  optic_free(NULL, b, sizeof *b, 0);
}

static optic_status check(const optic_pod_balancer_t *b, int core, const char *fn) {
  if (b == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: balancer is NULL", fn);
  if (core < 0 || core >= b->n)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: core %d outside 0..%d", fn, core, b->n - 1);
  return OPTIC_OK;
}

static void record_locked(optic_pod_balancer_t *b, int core, uint64_t items, uint64_t ns) {
  if (items == 0 || ns == 0) return;
  double r = (double)items * 1e9 / (double)ns;
  b->rate[core] = b->rate[core] == 0 ? r : b->alpha * r + (1 - b->alpha) * b->rate[core];
}

optic_status optic_pod_balancer_record(optic_pod_balancer_t *b, int core, uint64_t items, uint64_t ns) {
  optic_status st = check(b, core, "pod_balancer_record");
  if (st != OPTIC_OK) return st;
  pthread_mutex_lock(&b->mu);
  record_locked(b, core, items, ns);
  pthread_mutex_unlock(&b->mu);
  return OPTIC_OK;
}

double optic_pod_balancer_rate(optic_pod_balancer_t *b, int core) {
  if (check(b, core, "pod_balancer_rate") != OPTIC_OK) return 0;
  pthread_mutex_lock(&b->mu);
  double r = b->rate[core];
  pthread_mutex_unlock(&b->mu);
  return r;
}

/* Effective rates: unmeasured cores count as the mean of the measured ones
 * (all 1 when none is measured). */
static void effective_rates(const optic_pod_balancer_t *b, double *w) {
  double sum = 0;
  int measured = 0;
  for (int k = 0; k < b->n; k++) {
    if (b->rate[k] > 0) {
      sum += b->rate[k];
      measured++;
    }
  }
  double fill = measured ? sum / measured : 1.0;
  for (int k = 0; k < b->n; k++) w[k] = b->rate[k] > 0 ? b->rate[k] : fill;
}

optic_status optic_pod_balancer_split(optic_pod_balancer_t *b, uint64_t total, uint64_t *offsets) {
  if (b == NULL || offsets == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_balancer_split: NULL argument");
  double w[OPTIC_POD_MAX_CORES], frac[OPTIC_POD_MAX_CORES], sum = 0;
  uint64_t part[OPTIC_POD_MAX_CORES], given = 0;
  pthread_mutex_lock(&b->mu);
  effective_rates(b, w);
  pthread_mutex_unlock(&b->mu);
  for (int k = 0; k < b->n; k++) sum += w[k];
  for (int k = 0; k < b->n; k++) {
    double exact = (double)total * (w[k] / sum);
    part[k] = (uint64_t)floor(exact);
    if (part[k] > total - given) part[k] = total - given;
    given += part[k];
    frac[k] = exact - floor(exact);
  }
  /* hand out what floor() left, largest remainder first (ties: lower core) */
  while (given < total) {
    int best = 0;
    for (int k = 1; k < b->n; k++) {
      if (frac[k] > frac[best]) best = k;
    }
    part[best]++;
    frac[best] = -1;
    given++;
    bool all_used = true;
    for (int k = 0; k < b->n; k++) all_used = all_used && frac[k] < 0;
    if (all_used) {
      for (int k = 0; k < b->n; k++) frac[k] = w[k];
    }
  }
  offsets[0] = 0;
  for (int k = 0; k < b->n; k++) offsets[k + 1] = offsets[k] + part[k];
  return OPTIC_OK;
}

optic_status optic_pod_balancer_pick(optic_pod_balancer_t *b, uint64_t items, int *core) {
  if (b == NULL || core == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pod_balancer_pick: NULL argument");
  double w[OPTIC_POD_MAX_CORES];
  pthread_mutex_lock(&b->mu);
  effective_rates(b, w);
  int best = 0;
  double best_finish = 0;
  for (int k = 0; k < b->n; k++) {
    double finish = (double)(b->queued[k] + items) / w[k];
    if (k == 0 || finish < best_finish) {
      best = k;
      best_finish = finish;
    }
  }
  b->queued[best] += items;
  pthread_mutex_unlock(&b->mu);
  *core = best;
  return OPTIC_OK;
}

optic_status optic_pod_balancer_done(optic_pod_balancer_t *b, int core, uint64_t items, uint64_t ns) {
  optic_status st = check(b, core, "pod_balancer_done");
  if (st != OPTIC_OK) return st;
  pthread_mutex_lock(&b->mu);
  b->queued[core] = b->queued[core] > items ? b->queued[core] - items : 0;
  record_locked(b, core, items, ns);
  pthread_mutex_unlock(&b->mu);
  return OPTIC_OK;
}
