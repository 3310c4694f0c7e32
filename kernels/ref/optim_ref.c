/* Naive double-precision reference for the optimizer update kernels: the test
 * oracle. Written from the textbook formulas of docs/kernels-optim.md (PyTorch
 * pseudo-code form: bias-corrected m̂ and v̂, ε added after the root), not from
 * the kernels' rearranged constants; never optimize this file. */
#include <math.h>

#include "kernels/optim.h"

/* Applies weight decay to one element: returns g' and updates *th. */
static double decayed_grad(optic_optim_decay mode, double lr, double wd, double *th, double g) {
  if (wd == 0.0) return g;
  if (mode == OPTIC_OPTIM_DECAY_DECOUPLED) {
    *th *= 1.0 - lr * wd; /* PyTorch's param.mul_(1 - lr * weight_decay): inf stays inf */
    return g;
  }
  return g + wd * *th;
}

static double sign_nan(double c) { return c > 0 ? 1.0 : c < 0 ? -1.0 : c == 0 ? 0.0 : c; }

void optic_ref_sgd(size_t n, double *param, const double *grad, double *momentum_buf, const optic_sgd_params *p) {
  const double lr = (double)p->lr, mu = (double)p->momentum, tau = (double)p->dampening;
  for (size_t i = 0; i < n; i++) {
    double th = param[i];
    double g = decayed_grad(p->decay, lr, (double)p->weight_decay, &th, grad[i]);
    if (mu == 0.0) {
      param[i] = th - lr * g;
      continue;
    }
    double b;
    if (p->lr_in_momentum) { /* Keras: m = μm − γg with b = −m */
      b = p->first_step ? lr * g : mu * momentum_buf[i] + lr * (1.0 - tau) * g;
      param[i] = p->nesterov ? th - (mu * b + lr * g) : th - b;
    } else { /* PyTorch */
      b = p->first_step ? g : mu * momentum_buf[i] + (1.0 - tau) * g;
      param[i] = th - lr * (p->nesterov ? g + mu * b : b);
    }
    momentum_buf[i] = b;
  }
}

void optic_ref_adam(size_t n, double *param, const double *grad, double *m, double *v, double *vmax,
                    const optic_adam_params *p) {
  const double b1 = (double)p->beta1, b2 = (double)p->beta2;
  const double bc1 = (double)p->bias_correction1, bc2 = (double)p->bias_correction2;
  for (size_t i = 0; i < n; i++) {
    double th = param[i];
    double g = decayed_grad(p->decay, (double)p->lr, (double)p->weight_decay, &th, grad[i]);
    m[i] = b1 * m[i] + (1.0 - b1) * g;
    v[i] = b2 * v[i] + (1.0 - b2) * g * g;
    double w = v[i];
    if (p->amsgrad) { /* PyTorch's code: the max of the raw v, bias-corrected afterwards */
      if (!(vmax[i] > w)) vmax[i] = w;
      w = vmax[i];
    }
    double m_hat = m[i] / bc1, v_hat = w / bc2;
    param[i] = th - (double)p->lr * m_hat / (sqrt(v_hat + (double)p->eps_root) + (double)p->eps);
  }
}

void optic_ref_rmsprop(size_t n, double *param, const double *grad, double *square_avg, double *grad_avg,
                       double *momentum_buf, const optic_rmsprop_params *p) {
  const double a = (double)p->alpha, lr = (double)p->lr, mu = (double)p->momentum;
  for (size_t i = 0; i < n; i++) {
    double th = param[i];
    double g = decayed_grad(p->decay, lr, (double)p->weight_decay, &th, grad[i]);
    square_avg[i] = a * square_avg[i] + (1.0 - a) * g * g;
    double w = square_avg[i];
    if (p->centered) {
      grad_avg[i] = a * grad_avg[i] + (1.0 - a) * g;
      w -= grad_avg[i] * grad_avg[i];
    }
    double den = sqrt(w + (double)p->eps_root) + (double)p->eps;
    if (mu != 0.0 && p->lr_in_momentum) { /* Keras, optax: the trace holds γ-scaled steps */
      momentum_buf[i] = mu * momentum_buf[i] + lr * g / den;
      param[i] = th - momentum_buf[i];
    } else if (mu != 0.0) { /* PyTorch */
      momentum_buf[i] = mu * momentum_buf[i] + g / den;
      param[i] = th - lr * momentum_buf[i];
    } else {
      param[i] = th - lr * g / den;
    }
  }
}

void optic_ref_adagrad(size_t n, double *param, const double *grad, double *sum, const optic_adagrad_params *p) {
  for (size_t i = 0; i < n; i++) {
    double th = param[i];
    double g = decayed_grad(p->decay, (double)p->lr, (double)p->weight_decay, &th, grad[i]);
    sum[i] += g * g;
    param[i] = th - (double)p->lr * g / (sqrt(sum[i] + (double)p->eps_root) + (double)p->eps);
  }
}

void optic_ref_lion(size_t n, double *param, const double *grad, double *m, const optic_lion_params *p) {
  const double b1 = (double)p->beta1, b2 = (double)p->beta2;
  for (size_t i = 0; i < n; i++) {
    double c = b1 * m[i] + (1.0 - b1) * grad[i];
    double u = sign_nan(c);
    if (p->weight_decay != 0.0f) u += (double)p->weight_decay * param[i];
    param[i] -= (double)p->lr * u;
    m[i] = b2 * m[i] + (1.0 - b2) * grad[i];
  }
}

static double lamb_u(const optic_lamb_params *p, double th, double m, double v) {
  double u = (m / (double)p->bias_correction1) /
             (sqrt(v / (double)p->bias_correction2 + (double)p->eps_root) + (double)p->eps);
  return p->weight_decay != 0.0f ? u + (double)p->weight_decay * th : u;
}

void optic_ref_lamb(size_t n, double *param, const double *grad, double *m, double *v, const optic_lamb_params *p,
                    optic_lamb_norms *norms) {
  const double b1 = (double)p->beta1, b2 = (double)p->beta2;
  double ps = 0.0, us = 0.0;
  for (size_t i = 0; i < n; i++) {
    m[i] = b1 * m[i] + (1.0 - b1) * grad[i];
    v[i] = b2 * v[i] + (1.0 - b2) * grad[i] * grad[i];
    double u = lamb_u(p, param[i], m[i], v[i]);
    ps += param[i] * param[i];
    us += u * u;
  }
  double ratio = (ps == 0.0 || us == 0.0) ? 1.0 : sqrt(ps) / sqrt(us); /* optax scale_by_trust_ratio */
  for (size_t i = 0; i < n; i++) param[i] -= (double)p->lr * ratio * lamb_u(p, param[i], m[i], v[i]);
  if (norms) {
    norms->param_sq = ps;
    norms->update_sq = us;
  }
}
