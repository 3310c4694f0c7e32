/* Autodiff rule of convolution (any dim labels, strides, padding, lhs and
 * rhs dilation, feature and batch groups). Both gradients are
 * convolutions, with the transposed dimension numbers, paddings and
 * group counts of JAX's conv_general_dilated transpose rules (jax/_src/
 * lax/convolution.py, _conv_general_dilated_transpose_lhs/_rhs). Window
 * reversal along a spatial dim is the unreversed convolution with the
 * kernel reversed there: the rules then see that kernel. */
#include <stdio.h>

#include "graph/autodiff_internal.h"

#define AD_CONV_MAX_SPATIAL (OPTIC_MAX_RANK - 2)

/* Where a convolution operand's dims are: `a` is batch (input, output) or
 * output feature (kernel), `b` feature or input feature. */
typedef struct conv_spec {
  int32_t a, b, sp[AD_CONV_MAX_SPATIAL];
} conv_spec;

static void spec_text(const conv_spec *s, int32_t ns, char ca, char cb, char *out) {
  out[s->a] = ca, out[s->b] = cb;
  for (int32_t k = 0; k < ns; k++) out[s->sp[k]] = (char)('0' + k);
  out[ns + 2] = '\0';
}

/* "<lhs>_<kernel>-><out>" in XLA's notation. */
static void labels(const conv_spec *l, const conv_spec *k, const conv_spec *o, int32_t ns, char *out, size_t size) {
  char a[OPTIC_MAX_RANK + 1], b[OPTIC_MAX_RANK + 1], c[OPTIC_MAX_RANK + 1];
  spec_text(l, ns, 'b', 'f', a);
  spec_text(k, ns, 'o', 'i', b);
  spec_text(o, ns, 'b', 'f', c);
  snprintf(out, size, "%s_%s->%s", a, b, c);
}

/* Splits axis src of x into (size1, rest), size1 major. */
static optic_status axis_out_of(ad_ctx *c, int32_t src, int64_t size1, optic_node_id x, optic_node_id *out) {
  const optic_shape *s = &ad_type(c, x)->shape;
  optic_shape r = {.rank = s->rank + 1};
  for (int32_t d = 0, k = 0; d < s->rank; d++) {
    if (d == src) r.dims[k++] = size1, r.dims[k++] = s->dims[d] / size1;
    else r.dims[k++] = s->dims[d];
  }
  return optic_graph_reshape(c->m, c->dst, x, &r, NULL, out);
}

/* Merges axis src of x into axis dst (dst indexes the dims without src),
 * src major. */
static optic_status axis_into(ad_ctx *c, int32_t src, int32_t dst, optic_node_id x, optic_node_id *out) {
  optic_shape xs = ad_type(c, x)->shape; /* a copy: the transpose below may move the module's records */
  const optic_shape *s = &xs;
  int64_t perm[OPTIC_MAX_RANK];
  int32_t k = 0;
  for (int32_t d = 0; d < s->rank; d++) {
    if (k == dst) perm[k++] = src;
    if (d != src) perm[k++] = d;
  }
  if (k == dst) perm[k++] = src;
  optic_node_id t;
  AD_TRY(ad_transpose(c, x, perm, &t));
  optic_shape r = {.rank = s->rank - 1};
  for (int32_t d = 0, j = 0; d < s->rank; d++) {
    if (d != src) r.dims[j++] = s->dims[d];
  }
  r.dims[dst] *= s->dims[src];
  return optic_graph_reshape(c->m, c->dst, t, &r, NULL, out);
}

static int64_t dilated(int64_t n, int64_t d) { return n == 0 ? 0 : (n - 1) * d + 1; }

/* The forward convolution: roles, window and sizes per spatial dim. */
typedef struct conv_fwd {
  conv_spec in, k, out;
  int32_t ns;
  int64_t fgc, bgc;
  optic_window_dim w[AD_CONV_MAX_SPATIAL];
  int64_t in_sp[AD_CONV_MAX_SPATIAL], k_sp[AD_CONV_MAX_SPATIAL], out_sp[AD_CONV_MAX_SPATIAL];
} conv_fwd;

static void read_conv(const ad_ctx *c, optic_node_id y, conv_fwd *f) {
  optic_node_attrs_t at;
  ad_attrs(c->m, y, &at);
  const optic_attrs_convolution *a = &at.convolution;
  f->ns = a->spatial_count, f->fgc = a->feature_group_count, f->bgc = a->batch_group_count;
  f->in = (conv_spec){.a = a->input_batch, .b = a->input_feature};
  f->k = (conv_spec){.a = a->kernel_output_feature, .b = a->kernel_input_feature};
  f->out = (conv_spec){.a = a->output_batch, .b = a->output_feature};
  const optic_shape *xs = &ad_type(c, optic_node_operand(c->m, y, 0))->shape;
  for (int32_t s = 0; s < f->ns; s++) {
    f->in.sp[s] = a->input_spatial[s], f->k.sp[s] = a->kernel_spatial[s], f->out.sp[s] = a->output_spatial[s];
    f->w[s] = a->window[s];
    f->in_sp[s] = xs->dims[a->input_spatial[s]];
    f->k_sp[s] = a->window[s].size;
    f->out_sp[s] = ad_type(c, y)->shape.dims[a->output_spatial[s]];
  }
}

/* d input: g convolved with the spatially reversed kernel, in and out
 * features swapped (groups moved into the kernel's new output features). */
static optic_status conv_lhs(ad_ctx *c, const conv_fwd *f, optic_node_id g, optic_node_id x, optic_node_id w,
                             optic_node_id *out) {
  int64_t groups = f->fgc > 1 ? f->fgc : f->bgc;
  optic_node_id k = w;
  if (groups > 1) {
    AD_TRY(axis_out_of(c, f->k.a, groups, k, &k));
    AD_TRY(axis_into(c, f->k.a, f->k.b, k, &k));
  }
  int64_t rev[AD_CONV_MAX_SPATIAL];
  optic_window_dim win[AD_CONV_MAX_SPATIAL];
  for (int32_t s = 0; s < f->ns; s++) {
    const optic_window_dim *w0 = &f->w[s];
    rev[s] = f->k.sp[s];
    int64_t kd = dilated(f->k_sp[s], w0->window_dilation), id = dilated(f->in_sp[s], w0->base_dilation);
    int64_t od = dilated(f->out_sp[s], w0->stride), before = kd - w0->pad_low - 1;
    win[s] = (optic_window_dim){.size = f->k_sp[s],
                                .stride = w0->base_dilation,
                                .pad_low = before,
                                .pad_high = id + kd - 1 - od - before,
                                .base_dilation = w0->stride,
                                .window_dilation = w0->window_dilation};
  }
  if (f->ns > 0) AD_TRY(optic_graph_reverse(c->m, c->dst, k, rev, f->ns, NULL, &k));
  conv_spec kt = f->k; /* transposed: the forward's input-feature dim is the new output feature */
  kt.a = f->k.b, kt.b = f->k.a;
  char lab[64];
  labels(&f->out, &kt, &f->in, f->ns, lab, sizeof lab);
  optic_node_id t;
  AD_TRY(graph_convolution_typed(c->m, c->dst, g, k, lab, win, groups, 1, ad_type(c, x)->dtype, NULL, &t));
  if (f->bgc > 1) {
    AD_TRY(axis_out_of(c, f->in.b, f->bgc, t, &t));
    AD_TRY(axis_into(c, f->in.b, f->in.a, t, &t));
  }
  *out = t;
  return OPTIC_OK;
}

/* d kernel: the input convolved with g, batch and feature roles swapped. */
static optic_status conv_rhs(ad_ctx *c, const conv_fwd *f, optic_node_id g, optic_node_id x, optic_node_id w,
                             optic_node_id *out) {
  int64_t fgc = 1, bgc = 1;
  if (f->bgc > 1) fgc = f->bgc;
  else if (f->fgc > 1) bgc = f->fgc;
  optic_window_dim win[AD_CONV_MAX_SPATIAL];
  for (int32_t s = 0; s < f->ns; s++) {
    const optic_window_dim *w0 = &f->w[s];
    int64_t kd = dilated(f->k_sp[s], w0->window_dilation), id = dilated(f->in_sp[s], w0->base_dilation);
    int64_t od = dilated(f->out_sp[s], w0->stride), lo = w0->pad_low;
    win[s] = (optic_window_dim){.size = f->out_sp[s],
                                .stride = w0->window_dilation,
                                .pad_low = lo,
                                .pad_high = (od - id) + (kd - lo - 1),
                                .base_dilation = w0->base_dilation,
                                .window_dilation = w0->stride};
  }
  conv_spec lt = {.a = f->in.b, .b = f->in.a}, gt = {.a = f->out.b, .b = f->out.a}, ot = {.a = f->k.b, .b = f->k.a};
  for (int32_t s = 0; s < f->ns; s++) lt.sp[s] = f->in.sp[s], gt.sp[s] = f->out.sp[s], ot.sp[s] = f->k.sp[s];
  char lab[64];
  labels(&lt, &gt, &ot, f->ns, lab, sizeof lab);
  return graph_convolution_typed(c->m, c->dst, x, g, lab, win, fgc, bgc, ad_type(c, w)->dtype, NULL, out);
}

const char *ad_convolution_unsupported(const optic_module_t *m, optic_node_id y) {
  (void)m, (void)y;
  return NULL;
}

optic_status ad_rule_convolution(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), w = optic_node_operand(c->m, y, 1);
  conv_fwd f;
  read_conv(c, y, &f);
  gx[0] = gx[1] = OPTIC_NO_NODE;
  int64_t rev[AD_CONV_MAX_SPATIAL];
  int32_t nr = 0;
  for (int32_t s = 0; s < f.ns; s++) {
    if (f.w[s].reversal) rev[nr++] = f.k.sp[s];
  }
  if (nr > 0) AD_TRY(optic_graph_reverse(c->m, c->dst, w, rev, nr, NULL, &w));
  if (ad_wants(c, x)) AD_TRY(conv_lhs(c, &f, g, x, w, &gx[0]));
  if (ad_wants(c, optic_node_operand(c->m, y, 1))) {
    AD_TRY(conv_rhs(c, &f, g, x, w, &gx[1]));
    if (nr > 0) AD_TRY(optic_graph_reverse(c->m, c->dst, gx[1], rev, nr, NULL, &gx[1]));
  }
  return OPTIC_OK;
}
