/* RFC 5905 clock synchronization between pod cores: the on-wire offset and
 * delay of one exchange (section 8), the clock filter (appendix A.5.2: an
 * 8-stage shift register, minimum-delay selection, weighted dispersion,
 * jitter), and a collective that runs exchanges between every core and a
 * root core over the pod's shared memory. Never adjusts any real clock. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "pod/pod_internal.h"

#define PHI 15e-6              /* frequency tolerance, s/s (RFC 5905) */
#define MAXDISP_NS 16e9        /* maximum dispersion, 16 s */
#define CLOCK_PRECISION_NS 1.0 /* our clocks read in ns */

void optic_clock_on_wire(int64_t t1, int64_t t2, int64_t t3, int64_t t4, double precision_ns, optic_clock_sample *out) {
  /* differences first, in integers, so large clock values lose no precision */
  int64_t a = t2 - t1, b = t3 - t4;
  out->offset_ns = ((double)a + (double)b) / 2.0;
  out->delay_ns = (double)(t4 - t1) - (double)(t3 - t2);
  out->dispersion_ns = precision_ns + PHI * (double)(t4 - t1);
  out->time_ns = (double)t4;
}

void optic_clock_filter_init(optic_clock_filter *f) {
  memset(f, 0, sizeof *f);
  for (int i = 0; i < OPTIC_CLOCK_FILTER_STAGES; i++) {
    f->stage[i].delay_ns = MAXDISP_NS;
    f->stage[i].dispersion_ns = MAXDISP_NS;
  }
  f->delay_ns = MAXDISP_NS;
  f->dispersion_ns = MAXDISP_NS;
}

void optic_clock_filter_add(optic_clock_filter *f, const optic_clock_sample *s) {
  const double last = f->count > 0 ? f->stage[0].time_ns : s->time_ns;
  const double age = s->time_ns > last ? s->time_ns - last : 0;
  for (int i = OPTIC_CLOCK_FILTER_STAGES - 1; i > 0; i--) {
    f->stage[i] = f->stage[i - 1];
    if (f->stage[i].dispersion_ns < MAXDISP_NS) f->stage[i].dispersion_ns += PHI * age;
  }
  f->stage[0] = *s;
  if (f->count < OPTIC_CLOCK_FILTER_STAGES) f->count++;
  /* sort a copy by delay; stages at MAXDISP (empty or stale) go last */
  optic_clock_sample sorted[OPTIC_CLOCK_FILTER_STAGES];
  memcpy(sorted, f->stage, sizeof sorted);
  for (int i = 1; i < OPTIC_CLOCK_FILTER_STAGES; i++) {
    optic_clock_sample x = sorted[i];
    double kx = x.dispersion_ns >= MAXDISP_NS ? (double)INFINITY : x.delay_ns;
    int j = i - 1;
    while (j >= 0 && (sorted[j].dispersion_ns >= MAXDISP_NS ? (double)INFINITY : sorted[j].delay_ns) > kx) {
      sorted[j + 1] = sorted[j];
      j--;
    }
    sorted[j + 1] = x;
  }
  int m = 0;
  for (int i = 0; i < OPTIC_CLOCK_FILTER_STAGES; i++) m += sorted[i].dispersion_ns < MAXDISP_NS;
  double disp = 0, jitter = 0;
  for (int i = OPTIC_CLOCK_FILTER_STAGES - 1; i >= 0; i--) {
    disp = 0.5 * (disp + sorted[i].dispersion_ns); /* sum eps_i / 2^(i+1) */
    if (i < m) jitter += (sorted[0].offset_ns - sorted[i].offset_ns) * (sorted[0].offset_ns - sorted[i].offset_ns);
  }
  f->dispersion_ns = disp;
  if (m == 0) return;
  f->offset_ns = sorted[0].offset_ns;
  f->delay_ns = sorted[0].delay_ns;
  f->jitter_ns = m > 1 ? sqrt(jitter / (m - 1)) : 0;
  if (f->jitter_ns < CLOCK_PRECISION_NS) f->jitter_ns = CLOCK_PRECISION_NS;
}

/* ------------------------------------------------------- the collective */

static int64_t default_clock(void *user, int core) {
  (void)user;
  (void)core;
  return (int64_t)optic_now_ns();
}

static void spin_for(uint64_t ns) {
  if (ns == 0) return;
  uint64_t t0 = optic_now_ns();
  while (optic_now_ns() - t0 < ns) {}
}

typedef struct client_wait {
  int me, root;
  uint64_t want;
} client_wait;

static int reply_ready(const optic_pod_t *pod, const void *ctx) {
  const client_wait *w = ctx;
  return atomic_load(&pod->slot[w->me].clk_rep) >= w->want ? -1 : w->root;
}

typedef struct root_wait {
  int root;
  const uint64_t *served, *expect;
} root_wait;

static int request_ready(const optic_pod_t *pod, const void *ctx) {
  const root_wait *w = ctx;
  int waiting_on = -1;
  for (int k = 0; k < pod->n; k++) {
    if (k == w->root) continue;
    if (atomic_load(&pod->slot[k].clk_req) > w->served[k]) return -1;
    if (w->served[k] < w->expect[k] && waiting_on < 0) waiting_on = k;
  }
  return waiting_on < 0 ? -1 : waiting_on;
}

optic_pod_clock_options optic_pod_clock_options_default(void) {
  optic_pod_clock_options o = {.size = sizeof o, .root = 0, .rounds = 8};
  return o;
}

optic_status optic_pod_clock_sync(optic_pod_core_t *c, const optic_pod_clock_options *options,
                                  optic_clock_filter *out) {
  if (c == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "clock_sync: NULL core or out");
  optic_pod_clock_options o = {.size = sizeof o};
  if (options != NULL) {
    if (options->size < sizeof(size_t) || options->size > sizeof o) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "clock_sync: options.size is %zu; expected %zu", options->size,
                        sizeof o);
    }
    memcpy(&o, options, options->size);
  }
  optic_pod_t *pod = c->pod;
  if (o.root < 0 || o.root >= pod->n) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "clock_sync: root %d outside 0..%d", o.root, pod->n - 1);
  }
  if (o.rounds < 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "clock_sync: rounds is %d", o.rounds);
  const uint64_t rounds = o.rounds ? (uint64_t)o.rounds : 8;
  int64_t (*clock)(void *, int) = o.clock_ns ? o.clock_ns : default_clock;
  optic_status st = pod_enter(c, "clock_sync");
  if (st != OPTIC_OK) return st;
  optic_clock_filter_init(out);
  const int me = c->index;
  if (me == o.root) {
    uint64_t served[OPTIC_POD_MAX_CORES] = {0}, expect[OPTIC_POD_MAX_CORES] = {0};
    for (int k = 0; k < pod->n; k++) {
      served[k] = atomic_load(&pod->slot[k].clk_rep); /* only the root writes these */
      expect[k] = served[k] + rounds;
    }
    root_wait w = {o.root, served, expect};
    for (;;) {
      bool left = false;
      for (int k = 0; k < pod->n; k++) {
        if (k == me) continue;
        uint64_t req = atomic_load(&pod->slot[k].clk_req);
        if (req > served[k]) {
          int64_t t2 = clock(o.user, me), t3 = clock(o.user, me);
          atomic_store(&pod->slot[k].clk_t2, t2);
          atomic_store(&pod->slot[k].clk_t3, t3);
          atomic_store(&pod->slot[k].clk_rep, req);
          served[k] = req;
          pod_wake(pod);
        }
        left = left || served[k] < expect[k];
      }
      if (!left) break;
      if ((st = pod_wait(c, request_ready, &w, "clock_sync")) != OPTIC_OK) return st;
    }
    out->offset_ns = 0;
    out->delay_ns = 0;
    out->dispersion_ns = 0;
    return OPTIC_OK;
  }
  pod_slot *s = &pod->slot[me];
  const uint64_t base = atomic_load(&s->clk_req);
  for (uint64_t r = 1; r <= rounds; r++) {
    int64_t t1 = clock(o.user, me);
    if (o.delay_ns) spin_for(o.delay_ns(o.user, me, o.root));
    atomic_store(&s->clk_req, base + r);
    pod_wake(pod);
    client_wait w = {me, o.root, base + r};
    if ((st = pod_wait(c, reply_ready, &w, "clock_sync")) != OPTIC_OK) return st;
    int64_t t2 = atomic_load(&s->clk_t2), t3 = atomic_load(&s->clk_t3);
    if (o.delay_ns) spin_for(o.delay_ns(o.user, o.root, me));
    int64_t t4 = clock(o.user, me);
    optic_clock_sample sample;
    optic_clock_on_wire(t1, t2, t3, t4, CLOCK_PRECISION_NS, &sample);
    optic_clock_filter_add(out, &sample);
  }
  return OPTIC_OK;
}
