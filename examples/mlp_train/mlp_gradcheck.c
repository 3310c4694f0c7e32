/* mlp_gradcheck: --gradcheck, the gradient graph (of either model) against
 * finite differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp_trainer.h"

/* ------------------------------------------------------------ gradient check
 * The graph's gradients against central differences of the loss computed on
 * the host in double precision (a plain reference forward pass of either
 * model). */

/* The MLP's logits of one sample x; a, b: scratch of the widest layer. */
static void mlp_host_logits(const model *md, const float *params, const float *x, double *a, double *b,
                            double *logits) {
  const mlp_dims *d = &md->dims;
  const int64_t w[MLP_LAYERS + 1] = {d->in, d->hidden1, d->hidden2, d->classes};
  for (int64_t j = 0; j < d->in; j++) a[j] = (double)x[j];
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
  for (int64_t c = 0; c < d->classes; c++) logits[c] = a[c];
}

/* One 3x3 convolution (padding 1, stride st) of NHWC-less single images:
 * in [n][n][ci] -> out [m][m][co] with bias and ReLU, K in HWIO order. */
static void host_conv_relu(const double *in, int64_t n, int64_t ci, const float *K, const float *bias, int64_t co,
                           int64_t st, double *out) {
  const int64_t m = (n - 1) / st + 1;
  for (int64_t p = 0; p < m; p++)
    for (int64_t q = 0; q < m; q++)
      for (int64_t o = 0; o < co; o++) {
        double s = (double)bias[o];
        for (int64_t di = 0; di < 3; di++)
          for (int64_t dj = 0; dj < 3; dj++) {
            int64_t r = p * st + di - 1, c = q * st + dj - 1;
            if (r < 0 || c < 0 || r >= n || c >= n) continue;
            for (int64_t i = 0; i < ci; i++)
              s += in[(r * n + c) * ci + i] * (double)K[((di * 3 + dj) * ci + i) * co + o];
          }
        out[(p * m + q) * co + o] = s > 0 ? s : 0;
      }
}

/* The convnet's logits of one sample x (conv_model.h); a, b: scratch. */
static void conv_host_logits(const model *md, const float *params, const float *x, double *a, double *b,
                             double *logits) {
  const conv_dims *d = &md->cdims;
  const int64_t S = d->side, H = S / 2;
  const float *K1 = params, *c1 = K1 + md->count[0], *K2 = c1 + md->count[1], *c2 = K2 + md->count[2];
  const float *W = c2 + md->count[3], *bias = W + md->count[4];
  double img[1024];
  for (int64_t j = 0; j < S * S; j++) img[j] = (double)x[j];
  host_conv_relu(img, S, 1, K1, c1, d->c1, 1, a);
  host_conv_relu(a, S, d->c1, K2, c2, d->c2, 2, b);
  for (int64_t o = 0; o < d->c2; o++) { /* global max-pool */
    a[o] = b[o];
    for (int64_t k = 1; k < H * H; k++) a[o] = b[k * d->c2 + o] > a[o] ? b[k * d->c2 + o] : a[o];
  }
  for (int64_t c = 0; c < d->classes; c++) {
    logits[c] = (double)bias[c];
    for (int64_t o = 0; o < d->c2; o++) logits[c] += a[o] * (double)W[o * d->classes + c];
  }
}

static double host_loss(const model *md, const float *params, const float *x, const float *y, int64_t batch,
                        double scale) {
  const int64_t C = md->classes;
  size_t scratch = md->kind == MODEL_MLP
                       ? (size_t)(md->dims.hidden1 > md->dims.hidden2 ? md->dims.hidden1 : md->dims.hidden2)
                       : (size_t)(md->cdims.side * md->cdims.side * md->cdims.c2);
  scratch = scratch > (size_t)md->in ? scratch : (size_t)md->in;
  double *a = malloc(sizeof(double) * scratch), *b = malloc(sizeof(double) * scratch), z[64];
  double loss = 0;
  for (int64_t r = 0; r < batch; r++) {
    if (md->kind == MODEL_MLP) mlp_host_logits(md, params, x + r * md->in, a, b, z);
    else conv_host_logits(md, params, x + r * md->in, a, b, z);
    double mx = z[0], se = 0;
    for (int64_t c = 1; c < C; c++) mx = z[c] > mx ? z[c] : mx;
    for (int64_t c = 0; c < C; c++) se += exp(z[c] - mx);
    for (int64_t c = 0; c < C; c++) loss -= (double)y[r * C + c] * (z[c] - mx - log(se));
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
  const double scale = 1.0 / (double)t->o.batch, eps = 1e-5; /* small: few ReLU or max-pool switches */
  double base = host_loss(md, md->params, t->xb, t->yb, t->shard_batch, 1.0);
  int bad = 0;
  printf("gradcheck: loss graph %.6f host %.6f\n", (double)t->shard_loss[0], base);
  if (fabs(base - (double)t->shard_loss[0]) > 1e-4 * fabs(base) + 1e-4) bad++;
  for (int k = 0; k < 24; k++) {
    int i = k % md->n; /* every tensor, four elements each */
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
