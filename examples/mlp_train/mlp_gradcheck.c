/* mlp_gradcheck: --gradcheck, the gradient graph against finite differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp_trainer.h"

/* ------------------------------------------------------------ gradient check
 * The graph's gradients against central differences of the loss computed on
 * the host in double precision (a plain reference forward pass). */
static double host_loss(const model *md, const float *params, const float *x, const float *y, int64_t batch,
                        double scale) {
  const mlp_dims *d = &md->dims;
  const int64_t w[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  int64_t maxw = d->in;
  for (int l = 1; l <= MLP_LAYERS; l++) maxw = w[l] > maxw ? w[l] : maxw;
  double *a = malloc(sizeof(double) * (size_t)maxw), *b = malloc(sizeof(double) * (size_t)maxw);
  double loss = 0;
  for (int64_t r = 0; r < batch; r++) {
    for (int64_t j = 0; j < d->in; j++) a[j] = (double)x[r * d->in + j];
    const float *p = params;
    for (int l = 0; l < MLP_LAYERS; l++) {
      const float *W = p, *bias = p + w[l] * w[l + 1];
      for (int64_t o = 0; o < w[l + 1]; o++) {
        double s = (double)bias[o];
        for (int64_t i = 0; i < w[l]; i++) s += a[i] * (double)W[i * w[l + 1] + o];
        b[o] = (l < MLP_LAYERS - 1 && s < 0) ? 0 : s;
      }
      p = bias + w[l + 1];
      double *t = a;
      a = b;
      b = t;
    }
    double mx = a[0], se = 0;
    for (int64_t c = 1; c < d->classes; c++) mx = a[c] > mx ? a[c] : mx;
    for (int64_t c = 0; c < d->classes; c++) se += exp(a[c] - mx);
    for (int64_t c = 0; c < d->classes; c++) loss -= (double)y[r * d->classes + c] * (a[c] - mx - log(se));
  }
  free(a);
  free(b);
  return loss * scale;
}

int gradient_check(trainer *t) {
  uint64_t *rng = &t->rng;
  model *md = &t->md;
  float *grad = malloc(sizeof(float) * md->total);
  if (shard_gradients(t, t->ctx[0], 0, grad) != OPTIC_OK) {
    fprintf(stderr, "mlp_train: gradient check: %s\n", optic_last_error());
    free(grad);
    return 1;
  }
  const double scale = 1.0 / (double)t->o.batch, eps = 1e-3;
  double base = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, 1.0);
  int bad = 0;
  printf("gradcheck: loss graph %.6f host %.6f\n", (double)t->shard_loss[0], base);
  if (fabs(base - (double)t->shard_loss[0]) > 1e-4 * fabs(base) + 1e-4) bad++;
  for (int k = 0; k < 24; k++) {
    int i = k % MLP_PARAMS; /* every tensor, four elements each */
    size_t off = 0;
    for (int j = 0; j < i; j++) off += md->count[j];
    size_t e = off + (size_t)(rng_next(rng) % md->count[i]);
    double keep = (double)md->params[e];
    md->params[e] = (float)(keep + eps);
    double up = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, scale);
    md->params[e] = (float)(keep - eps);
    double down = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, scale);
    md->params[e] = (float)keep;
    double fd = (up - down) / ((double)(float)(keep + eps) - (double)(float)(keep - eps));
    double err = fabs(fd - (double)grad[e]), tol = 2e-2 * fabs(fd) + 2e-5;
    if (err > tol) bad++;
    printf("gradcheck: %s[%zu] graph %+.6e finite-diff %+.6e %s\n", md->name[i] + 6, e - off, (double)grad[e], fd,
           err > tol ? "MISMATCH" : "ok");
  }
  free(grad);
  printf("gradcheck: %s (%d mismatches)\n", bad ? "FAILED" : "passed", bad);
  return bad ? 1 : 0;
}
