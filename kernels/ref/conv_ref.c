/* Naive reference for convolution and its two gradients: the test oracle.
 * Each result element is one plain loop nest over the definition in
 * kernels/conv.h, accumulated in double. No BLAS, no blocking, no allocation;
 * never optimize this file. */
#include "core/error.h"
#include "kernels/conv.h"

typedef struct ref_conv {
  int32_t nsp;
  int64_t in_st[OPTIC_MAX_RANK], k_st[OPTIC_MAX_RANK], out_st[OPTIC_MAX_RANK];
  optic_shape out;
  int64_t in_batch, out_batch, features, kin, kout;
  int64_t fgc, bgc;
  int64_t in_size[OPTIC_CONV_MAX_SPATIAL], k_size[OPTIC_CONV_MAX_SPATIAL], out_size[OPTIC_CONV_MAX_SPATIAL];
} ref_conv;

static optic_status ref_setup(const optic_conv_desc *d, ref_conv *r) {
  optic_status st = optic_conv_infer_shape(d, &r->out);
  if (st != OPTIC_OK) return st;
  optic_shape_strides(&d->input, r->in_st);
  optic_shape_strides(&d->kernel, r->k_st);
  optic_shape_strides(&r->out, r->out_st);
  r->nsp = d->dn.nspatial;
  r->in_batch = d->input.dims[d->dn.in_batch];
  r->out_batch = r->out.dims[d->dn.out_batch];
  r->features = d->input.dims[d->dn.in_feature];
  r->kin = d->kernel.dims[d->dn.k_in];
  r->kout = d->kernel.dims[d->dn.k_out];
  r->fgc = d->feature_group_count;
  r->bgc = d->batch_group_count;
  for (int32_t s = 0; s < r->nsp; s++) {
    r->in_size[s] = d->input.dims[d->dn.in_spatial[s]];
    r->k_size[s] = d->kernel.dims[d->dn.k_spatial[s]];
    r->out_size[s] = r->out.dims[d->dn.out_spatial[s]];
  }
  return OPTIC_OK;
}

/* Advances a multi-index over sizes (last fastest); false after the last one. */
static bool next_index(int64_t *idx, const int64_t *size, int32_t n) {
  for (int32_t i = n - 1; i >= 0; i--) {
    if (++idx[i] < size[i]) return true;
    idx[i] = 0;
  }
  return false;
}

static bool any_zero(const int64_t *size, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (size[i] == 0) return true;
  }
  return false;
}

static int64_t window_tap(const optic_conv_desc *d, const ref_conv *r, int32_t s, int64_t k) {
  return d->reverse[s] ? r->k_size[s] - 1 - k : k;
}

/* Input position read by output position y and window index k along spatial
 * dim s; false when it falls on padding or between dilated elements. */
static bool input_at(const optic_conv_desc *d, const ref_conv *r, int32_t s, int64_t y, int64_t k, int64_t *x) {
  int64_t X = y * d->stride[s] + window_tap(d, r, s, k) * d->rhs_dilation[s] - d->pad_lo[s];
  int64_t dilated = r->in_size[s] == 0 ? 0 : (r->in_size[s] - 1) * d->lhs_dilation[s] + 1;
  if (X < 0 || X >= dilated || X % d->lhs_dilation[s] != 0) return false;
  *x = X / d->lhs_dilation[s];
  return true;
}

static double load(const void *p, int64_t i, bool f64) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void store(void *p, int64_t i, double v, bool f64) {
  if (f64) {
    ((double *)p)[i] = v;
  } else {
    ((float *)p)[i] = (float)v;
  }
}

static optic_status ref_forward(const optic_conv_desc *d, const void *in, const void *ker, void *out, bool f64) {
  ref_conv r;
  optic_status st = ref_setup(d, &r);
  if (st != OPTIC_OK) return st;
  const optic_conv_dnums *dn = &d->dn;
  int64_t ogroup = r.kout / r.fgc, obgroup = r.kout / r.bgc;
  if (r.out_batch == 0 || r.kout == 0 || any_zero(r.out_size, r.nsp)) return OPTIC_OK;
  int64_t y[OPTIC_CONV_MAX_SPATIAL] = {0};
  do {
    for (int64_t b = 0; b < r.out_batch; b++) {
      for (int64_t o = 0; o < r.kout; o++) {
        int64_t g = o / ogroup, bg = o / obgroup;
        int64_t in_b = r.bgc > 1 ? bg * r.out_batch + b : b;
        double acc = 0.0;
        for (int64_t c = 0; c < r.kin; c++) {
          int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
          do {
            int64_t ioff = in_b * r.in_st[dn->in_batch] + (g * r.kin + c) * r.in_st[dn->in_feature];
            int64_t koff = c * r.k_st[dn->k_in] + o * r.k_st[dn->k_out];
            bool valid = true;
            for (int32_t s = 0; s < r.nsp && valid; s++) {
              int64_t x = 0;
              valid = input_at(d, &r, s, y[s], k[s], &x);
              ioff += x * r.in_st[dn->in_spatial[s]];
              koff += k[s] * r.k_st[dn->k_spatial[s]];
            }
            if (valid) acc += load(in, ioff, f64) * load(ker, koff, f64);
          } while (next_index(k, r.k_size, r.nsp));
        }
        int64_t ooff = b * r.out_st[dn->out_batch] + o * r.out_st[dn->out_feature];
        for (int32_t s = 0; s < r.nsp; s++) ooff += y[s] * r.out_st[dn->out_spatial[s]];
        store(out, ooff, acc, f64);
      }
    }
  } while (next_index(y, r.out_size, r.nsp));
  return OPTIC_OK;
}

optic_status optic_ref_f32_conv(const optic_conv_desc *d, const float *input, const float *kernel, float *output) {
  return ref_forward(d, input, kernel, output, false);
}

optic_status optic_ref_f64_conv(const optic_conv_desc *d, const double *input, const double *kernel, double *output) {
  return ref_forward(d, input, kernel, output, true);
}

/* grad_input[ib, c, x] = sum over the (o, y, k) whose forward term reads
 * input[ib, c, x] of grad_output[b, o, y] * kernel[c mod Cg, o, k]. */
optic_status optic_ref_f32_conv_backward_input(const optic_conv_desc *d, const float *grad_output, const float *kernel,
                                               float *grad_input) {
  ref_conv r;
  optic_status st = ref_setup(d, &r);
  if (st != OPTIC_OK) return st;
  const optic_conv_dnums *dn = &d->dn;
  if (r.in_batch == 0 || r.features == 0 || any_zero(r.in_size, r.nsp)) return OPTIC_OK;
  int64_t ogroup = r.kout / r.fgc, obgroup = r.kout / r.bgc;
  int64_t x[OPTIC_CONV_MAX_SPATIAL] = {0};
  do {
    for (int64_t ib = 0; ib < r.in_batch; ib++) {
      for (int64_t c = 0; c < r.features; c++) {
        int64_t g = c / r.kin, i = c % r.kin;
        int64_t bg = r.bgc > 1 ? ib / r.out_batch : 0, b = r.bgc > 1 ? ib % r.out_batch : ib;
        int64_t o_lo = r.fgc > 1 ? g * ogroup : r.bgc > 1 ? bg * obgroup : 0;
        int64_t o_hi = r.fgc > 1 ? o_lo + ogroup : r.bgc > 1 ? o_lo + obgroup : r.kout;
        double acc = 0.0;
        for (int64_t o = o_lo; o < o_hi; o++) {
          int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
          if (any_zero(r.out_size, r.nsp)) break;
          do {
            int64_t goff = b * r.out_st[dn->out_batch] + o * r.out_st[dn->out_feature];
            int64_t koff = i * r.k_st[dn->k_in] + o * r.k_st[dn->k_out];
            bool valid = true;
            for (int32_t s = 0; s < r.nsp && valid; s++) {
              int64_t num = x[s] * d->lhs_dilation[s] + d->pad_lo[s] - window_tap(d, &r, s, k[s]) * d->rhs_dilation[s];
              valid = num >= 0 && num % d->stride[s] == 0 && num / d->stride[s] < r.out_size[s];
              goff += (valid ? num / d->stride[s] : 0) * r.out_st[dn->out_spatial[s]];
              koff += k[s] * r.k_st[dn->k_spatial[s]];
            }
            if (valid) acc += (double)grad_output[goff] * (double)kernel[koff];
          } while (next_index(k, r.k_size, r.nsp));
        }
        int64_t ioff = ib * r.in_st[dn->in_batch] + c * r.in_st[dn->in_feature];
        for (int32_t s = 0; s < r.nsp; s++) ioff += x[s] * r.in_st[dn->in_spatial[s]];
        grad_input[ioff] = (float)acc;
      }
    }
  } while (next_index(x, r.in_size, r.nsp));
  return OPTIC_OK;
}

/* grad_kernel[i, o, k] = sum over output batch b and positions y of
 * input[bg*Bo + b, g*Cg + i, x(y, k)] * grad_output[b, o, y]. */
optic_status optic_ref_f32_conv_backward_kernel(const optic_conv_desc *d, const float *input, const float *grad_output,
                                                float *grad_kernel) {
  ref_conv r;
  optic_status st = ref_setup(d, &r);
  if (st != OPTIC_OK) return st;
  const optic_conv_dnums *dn = &d->dn;
  if (r.kin == 0 || r.kout == 0) return OPTIC_OK;
  int64_t ogroup = r.kout / r.fgc, obgroup = r.kout / r.bgc;
  int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
  do {
    for (int64_t i = 0; i < r.kin; i++) {
      for (int64_t o = 0; o < r.kout; o++) {
        int64_t c = (o / ogroup) * r.kin + i, bg = o / obgroup;
        double acc = 0.0;
        for (int64_t b = 0; b < r.out_batch && !any_zero(r.out_size, r.nsp); b++) {
          int64_t in_b = r.bgc > 1 ? bg * r.out_batch + b : b;
          int64_t y[OPTIC_CONV_MAX_SPATIAL] = {0};
          do {
            int64_t ioff = in_b * r.in_st[dn->in_batch] + c * r.in_st[dn->in_feature];
            int64_t goff = b * r.out_st[dn->out_batch] + o * r.out_st[dn->out_feature];
            bool valid = true;
            for (int32_t s = 0; s < r.nsp && valid; s++) {
              int64_t x = 0;
              valid = input_at(d, &r, s, y[s], k[s], &x);
              ioff += x * r.in_st[dn->in_spatial[s]];
              goff += y[s] * r.out_st[dn->out_spatial[s]];
            }
            if (valid) acc += (double)input[ioff] * (double)grad_output[goff];
          } while (next_index(y, r.out_size, r.nsp));
        }
        int64_t koff = i * r.k_st[dn->k_in] + o * r.k_st[dn->k_out];
        for (int32_t s = 0; s < r.nsp; s++) koff += k[s] * r.k_st[dn->k_spatial[s]];
        grad_kernel[koff] = (float)acc;
      }
    }
  } while (next_index(k, r.k_size, r.nsp));
  return OPTIC_OK;
}
