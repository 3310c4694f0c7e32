/* topk against a plain reference loop: k passes, each taking the best element
 * not yet taken in XLA's total order (-NaN < -inf < ... < -0 < +0 < ... < inf
 * < NaN; ties by lower index), computed from the decoded values (not from
 * bits). Swept over f32, f64, bf16, f16 and s32, row lengths around the
 * selection block (1, 15-17, 255-257, 513, 50000), 1 and 3 rows, k from 1 to
 * the row length (both the selection path, k <= 64, and the sort path),
 * largest and smallest, with values drawn from a small pool (many ties) that
 * holds signed zeros, infinities and both NaN signs.
 * Reproduce a failure: ctest --preset release -R graph_topk_order */
#include <math.h>

#include "tests/graph/evaluate_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* f16 bits -> double, from the IEEE binary16 layout. */
static double half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? (double)NAN * sign : sign * (double)INFINITY;
  if (e == 0) return sign * ldexp(m, -24);
  return sign * ldexp(1024 + m, e - 25);
}

static double value_at(optic_dtype dt, const unsigned char *p) {
  if (dt == OPTIC_F64) return *(const double *)(const void *)p;
  if (dt == OPTIC_F32) return (double)*(const float *)(const void *)p;
  if (dt == OPTIC_S32) return *(const int32_t *)(const void *)p;
  uint16_t h;
  memcpy(&h, p, 2);
  if (dt == OPTIC_F16) return half_value(h);
  uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, 4);
  return (double)f;
}

/* -1, 0, 1: a before b in "largest first" order (a greater). */
static int greater(double a, double b) {
  int ca = isnan(a) ? (signbit(a) ? 0 : 2) : 1, cb = isnan(b) ? (signbit(b) ? 0 : 2) : 1;
  if (ca != cb) return ca > cb ? 1 : -1;
  if (ca != 1) return 0;
  if (a != b) return a > b ? 1 : -1;
  if (signbit(a) != signbit(b)) return signbit(a) ? -1 : 1;
  return 0;
}

/* A pool entry as raw bytes of dt: canonical NaNs of both signs, +-0, +-inf,
 * extremes and random values. */
static void pool_entry(optic_dtype dt, int i, unsigned char *out) {
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f};
  float f = i < 8 ? special[i] : (float)((int64_t)(rnd() % 2001) - 1000) / 8.0f;
  if (dt == OPTIC_F64) {
    double d = i < 8 ? (double)f : (double)((int64_t)(rnd() % 200001) - 100000) * 1e-3;
    memcpy(out, &d, 8);
  } else if (dt == OPTIC_F32) {
    memcpy(out, &f, 4);
  } else if (dt == OPTIC_S32) {
    int32_t v = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : (int32_t)(rnd() % 4001) - 2000;
    memcpy(out, &v, 4);
  } else if (dt == OPTIC_BF16) {
    uint32_t w;
    memcpy(&w, &f, 4);
    uint16_t h = (uint16_t)(w >> 16); /* pool values are exact in bf16 */
    memcpy(out, &h, 2);
  } else { /* f16: specials by bits, else a random finite pattern */
    static const uint16_t hs[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x3c00, 0xbc00};
    uint16_t h = i < 8 ? hs[i] : (uint16_t)(rnd() & 0xffff);
    if (((h >> 10) & 31) == 31) h = (uint16_t)(h & 0x8000); /* random patterns stay finite */
    memcpy(out, &h, 2);
  }
}

/* Reference: k passes over the row; returns the indices in order. */
static void reference(optic_dtype dt, const unsigned char *row, int64_t len, int64_t k, bool largest, int32_t *at,
                      unsigned char *taken) {
  size_t es = optic_dtype_size(dt);
  memset(taken, 0, (size_t)len);
  for (int64_t j = 0; j < k; j++) {
    int64_t best = -1;
    for (int64_t i = 0; i < len; i++) {
      if (taken[i]) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      int g = greater(value_at(dt, row + (size_t)i * es), value_at(dt, row + (size_t)best * es));
      if ((largest ? g : -g) > 0) best = i;
    }
    taken[best] = 1;
    at[j] = (int32_t)best;
  }
}

static bool one_case(optic_dtype dt, int64_t rows, int64_t len, int64_t k, bool largest) {
  size_t es = optic_dtype_size(dt), n = (size_t)(rows * len);
  unsigned char *x = malloc(n * es), pool[40][8], *taken = malloc((size_t)len);
  int32_t *want = malloc((size_t)k * sizeof *want);
  for (int i = 0; i < 40; i++) pool_entry(dt, i, pool[i]);
  for (size_t i = 0; i < n; i++) memcpy(x + i * es, pool[rnd() % 40], es);
  ev_fresh();
  const int64_t dims[2] = {rows, len};
  optic_node_id p = ev_const(ev_main, dt, 2, dims, x), r = OPTIC_NO_NODE, v = OPTIC_NO_NODE, ix = OPTIC_NO_NODE,
                t = OPTIC_NO_NODE;
  bool ok = optic_graph_topk(ev_m, ev_main, p, k, largest, NULL, &r) == OPTIC_OK &&
            optic_graph_get_tuple_element(ev_m, ev_main, r, 0, NULL, &v) == OPTIC_OK &&
            optic_graph_get_tuple_element(ev_m, ev_main, r, 1, NULL, &ix) == OPTIC_OK;
  optic_node_id both[2] = {v, ix};
  ok = ok && optic_graph_tuple(ev_m, ev_main, both, 2, NULL, &t) == OPTIC_OK;
  if (ok) ev_root(ev_main, t);
  optic_literal_t *got = ok ? ev_run(ev_main, NULL, 0) : NULL;
  ok = got != NULL;
  for (int64_t q = 0; ok && q < rows; q++) {
    const unsigned char *gv = optic_literal_data(optic_literal_element(got, 0), NULL);
    const int32_t *gi = optic_literal_data(optic_literal_element(got, 1), NULL);
    const unsigned char *row = x + (size_t)(q * len) * es;
    reference(dt, row, len, k, largest, want, taken);
    for (int64_t j = 0; ok && j < k; j++) {
      size_t o = (size_t)(q * k + j);
      ok = gi[o] == want[j] && memcmp(gv + o * es, row + (size_t)want[j] * es, es) == 0;
      if (!ok) {
        fprintf(stderr, "  %s rows %lld len %lld k %lld largest %d: row %lld #%lld index %d, want %d (%g)\n",
                optic_dtype_name(dt), (long long)rows, (long long)len, (long long)k, (int)largest, (long long)q,
                (long long)j, gi[o], want[j], value_at(dt, row + (size_t)want[j] * es));
      }
    }
  }
  optic_literal_destroy(got);
  free(x);
  free(taken);
  free(want);
  return ok;
}

static void sweep(void) {
  const optic_dtype dts[] = {OPTIC_F32, OPTIC_BF16, OPTIC_F16, OPTIC_F64, OPTIC_S32};
  const int64_t lens[] = {1, 15, 16, 17, 255, 256, 257, 513, 50000};
  const int64_t ks[] = {1, 2, 10, 64, 65, 300};
  int failed = 0, run = 0;
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
      for (int64_t rows = 1; rows <= 3; rows += 2) {
        for (size_t j = 0; j <= sizeof ks / sizeof *ks; j++) {
          int64_t k = j < sizeof ks / sizeof *ks ? ks[j] : lens[l]; /* the last: k = the row length */
          if (k > lens[l] || (lens[l] > 600 && (k > 300 || (k > 64 && rows > 1)))) continue;
          for (int largest = 0; largest < 2; largest++) {
            run++;
            failed += !one_case(dts[d], rows, lens[l], k, largest != 0);
          }
        }
      }
    }
  }
  OT_CHECK(failed == 0, "%d of %d topk cases differ from the reference loop", failed, run);
}

static const ot_case cases[] = {{"sweep", sweep}};
OT_MAIN(cases)
