/* The autodiff tests' oracle: central finite differences of the forward
 * computation, evaluated by the reference evaluator, against the gradient
 * computation optic_autodiff_value_and_grad builds. Built on
 * evaluate_util.h (one module ev_m per case). */
#ifndef OPTIC_TESTS_GRAPH_AUTODIFF_UTIL_H
#define OPTIC_TESTS_GRAPH_AUTODIFF_UTIL_H

#include <math.h>
#include <stdint.h>

#include "tests/graph/evaluate_util.h"

static uint64_t adf_rng = 0x9E3779B97F4A7C15ull;

static inline double adf_uniform(double lo, double hi) {
  adf_rng ^= adf_rng << 13, adf_rng ^= adf_rng >> 7, adf_rng ^= adf_rng << 17;
  return lo + (hi - lo) * (double)(adf_rng >> 11) / 9007199254740992.0;
}

static inline int64_t adf_count(const optic_literal_t *l) {
  int64_t n = 1;
  const optic_type *t = optic_literal_type(l);
  for (int32_t d = 0; d < t->shape.rank; d++) n *= t->shape.dims[d];
  return n;
}

static inline double adf_get(const optic_literal_t *l, int64_t i) {
  const void *p = optic_literal_data(l, NULL);
  return optic_literal_type(l)->dtype == OPTIC_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void adf_set(optic_literal_t *l, int64_t i, double v) {
  void *p = optic_literal_mutable_data(l, NULL);
  if (optic_literal_type(l)->dtype == OPTIC_F64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

static inline optic_literal_t *adf_random(const optic_type *t, double lo, double hi) {
  optic_literal_t *l;
  if (optic_literal_create(t, &l)) ev_die("literal");
  if (!optic_dtype_is_float(t->dtype)) return l;
  for (int64_t i = 0; i < adf_count(l); i++) adf_set(l, i, adf_uniform(lo, hi));
  return l;
}

/* <seed, c(args)> in double (seed NULL: the scalar output itself). */
static inline bool adf_loss(optic_comp_id c, const optic_literal_t *const *args, int32_t n, const optic_literal_t *seed,
                            double *out) {
  optic_literal_t *y = ev_run(c, args, n);
  if (y == NULL) return false;
  double s = 0;
  for (int64_t i = 0; i < adf_count(y); i++) s += (seed ? adf_get(seed, i) : 1.0) * adf_get(y, i);
  optic_literal_destroy(y);
  *out = s;
  return true;
}

/* Checks every element of every floating-point parameter of c: the autodiff
 * gradient against (L(x + h) - L(x - h)) / 2h, |ad - fd| <= tol * max(1,
 * largest |fd| of that parameter), with arguments uniform in [lo, hi] and h
 * = 1e-6 (f64) or 1e-3 (f32) times max(1, |x|). Also checks that the value
 * returned beside the gradients is bit for bit the forward's, and that each
 * gradient has its parameter's type. */
static inline bool adf_check(const char *what, optic_comp_id c, double lo, double hi, double tol) {
  int32_t np = optic_computation_parameter_count(ev_m, c), nw = 0, wrt[16];
  optic_literal_t *args[17] = {0};
  for (int32_t i = 0; i < np; i++) {
    const optic_type *t = optic_node_type(ev_m, optic_computation_parameter(ev_m, c, i));
    args[i] = adf_random(t, lo, hi);
    if (optic_dtype_is_float(t->dtype)) wrt[nw++] = i;
  }
  const optic_type *yt = optic_node_type(ev_m, optic_computation_root(ev_m, c));
  optic_grad_options o = optic_grad_options_default();
  o.seeded = yt->shape.rank > 0;
  optic_literal_t *seed = o.seeded ? adf_random(yt, -1, 1) : NULL;
  args[np] = seed;
  optic_comp_id gc;
  bool ok = true;
  optic_status st = optic_autodiff_value_and_grad(ev_m, c, wrt, nw, &o, &gc);
  if (st != OPTIC_OK) {
    fprintf(stderr, "  %s: autodiff failed: %s: %s\n", what, optic_status_name(st), optic_last_error());
    ok = false;
  }
  optic_literal_t *res = ok ? ev_run(gc, (const optic_literal_t *const *)args, np + (seed != NULL)) : NULL;
  optic_literal_t *y0 = ok ? ev_run(c, (const optic_literal_t *const *)args, np) : NULL;
  ok = ok && res && y0 && ev_same(y0, optic_literal_element(res, 0), OPTIC_MATCH_BITWISE);
  for (int32_t k = 0; ok && k < nw; k++) {
    optic_literal_t *x = args[wrt[k]];
    const optic_literal_t *gr = optic_literal_element(res, k + 1);
    if (!optic_type_equal(optic_literal_type(gr), optic_literal_type(x))) {
      fprintf(stderr, "  %s: gradient %d does not have its parameter's type\n", what, (int)k);
      ok = false;
      break;
    }
    bool f64 = optic_literal_type(x)->dtype == OPTIC_F64;
    int64_t n = adf_count(x);
    double *fd = malloc(sizeof(double) * (size_t)(n ? n : 1)), big = 1;
    for (int64_t i = 0; ok && i < n; i++) {
      double v = adf_get(x, i), h = (f64 ? 1e-6 : 1e-3) * (fabs(v) > 1 ? fabs(v) : 1), lp = 0, lm = 0;
      adf_set(x, i, v + h);
      ok = adf_loss(c, (const optic_literal_t *const *)args, np, seed, &lp);
      adf_set(x, i, v - h);
      ok = ok && adf_loss(c, (const optic_literal_t *const *)args, np, seed, &lm);
      adf_set(x, i, v);
      fd[i] = (lp - lm) / (2 * h);
      if (fabs(fd[i]) > big) big = fabs(fd[i]);
    }
    for (int64_t i = 0; ok && i < n; i++) {
      double ad = adf_get(gr, i);
      if (!(fabs(ad - fd[i]) <= tol * big)) {
        fprintf(stderr, "  %s: parameter %d element %lld: autodiff %.9g, finite difference %.9g (tol %g x %g)\n", what,
                (int)wrt[k], (long long)i, ad, fd[i], tol, big);
        ok = false;
      }
    }
    free(fd);
  }
  for (int32_t i = 0; i <= np; i++) optic_literal_destroy(args[i]);
  optic_literal_destroy(res);
  optic_literal_destroy(y0);
  return ok;
}

#endif
