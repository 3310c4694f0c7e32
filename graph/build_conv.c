/* The convolution builder: parses XLA dim labels and validates and infers the
 * output through the kernels' convolution descriptor (kernels/conv.h), so the
 * graph and the kernel that will run it agree on every rule. */
#include <string.h>

#include <optic/attrs.h>

#include "graph/internal.h"
#include "kernels/conv.h"

#define CONV_HEADER 9

optic_status optic_graph_convolution(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                                     const char *dim_labels, const optic_window_dim *window,
                                     int64_t feature_group_count, int64_t batch_group_count, const char *name,
                                     optic_node_id *out) {
  return graph_convolution_typed(m, comp, lhs, rhs, dim_labels, window, feature_group_count, batch_group_count,
                                 OPTIC_DTYPE_INVALID, name, out);
}

optic_status graph_convolution_typed(optic_module_t *m, optic_comp_id comp, optic_node_id lhs, optic_node_id rhs,
                                     const char *dim_labels, const optic_window_dim *window,
                                     int64_t feature_group_count, int64_t batch_group_count, optic_dtype result,
                                     const char *name, optic_node_id *out) {
  const optic_type *tl, *tr;
  optic_status st = graph_array_operand(m, comp, lhs, "convolution", 0, &tl);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, rhs, "convolution", 1, &tr);
  if (st != OPTIC_OK) return st;
  if (out == NULL || dim_labels == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: NULL argument");
  if ((st = graph_contraction_dtype("convolution", tl->dtype, tr->dtype, &result)) != OPTIC_OK) return st;
  optic_conv_desc d;
  optic_conv_desc_init(&d);
  if ((st = optic_conv_parse_dim_labels(dim_labels, &d.dn)) != OPTIC_OK) return st;
  int32_t ns = d.dn.nspatial;
  if (ns > 0 && window == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: window is NULL");
  if (tl->shape.rank != ns + 2 || tr->shape.rank != ns + 2) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "convolution: dim labels '%s' need rank %d operands; they have rank %d and %d", dim_labels,
                      (int)(ns + 2), (int)tl->shape.rank, (int)tr->shape.rank);
  }
  d.input = tl->shape;
  d.kernel = tr->shape;
  d.feature_group_count = feature_group_count;
  d.batch_group_count = batch_group_count;
  int64_t ints[CONV_HEADER + 3 * OPTIC_CONV_MAX_SPATIAL + 7 * OPTIC_CONV_MAX_SPATIAL];
  for (int32_t s = 0; s < ns; s++) {
    const optic_window_dim *w = &window[s];
    int64_t ksize = tr->shape.dims[d.dn.k_spatial[s]];
    if (w->size != ksize) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "convolution: window dim %d has size %lld but the kernel's spatial dim %d has %lld", (int)s,
                        (long long)w->size, (int)s, (long long)ksize);
    }
    d.stride[s] = w->stride, d.pad_lo[s] = w->pad_low, d.pad_hi[s] = w->pad_high;
    d.lhs_dilation[s] = w->base_dilation, d.rhs_dilation[s] = w->window_dilation, d.reverse[s] = w->reversal;
    int64_t *sp = &ints[CONV_HEADER + 3 * s];
    sp[0] = d.dn.in_spatial[s], sp[1] = d.dn.k_spatial[s], sp[2] = d.dn.out_spatial[s];
    int64_t *e = &ints[CONV_HEADER + 3 * ns + 7 * s];
    e[0] = w->size, e[1] = w->stride, e[2] = w->pad_low, e[3] = w->pad_high;
    e[4] = w->base_dilation, e[5] = w->window_dilation, e[6] = w->reversal;
  }
  optic_shape shape;
  if ((st = optic_conv_infer_shape(&d, &shape)) != OPTIC_OK) return st;
  int64_t header[CONV_HEADER] = {ns,        feature_group_count, batch_group_count, d.dn.in_batch,   d.dn.in_feature,
                                 d.dn.k_in, d.dn.k_out,          d.dn.out_batch,    d.dn.out_feature};
  memcpy(ints, header, sizeof header);
  optic_node_id ops[2] = {lhs, rhs};
  optic_instr_proto p = graph_proto(OPTIC_OP_CONVOLUTION);
  p.type = optic_type_array(result, &shape);
  p.operands = ops;
  p.n_operands = 2;
  p.ints = ints;
  p.n_ints = CONV_HEADER + 10 * ns;
  return graph_add_instr(m, comp, &p, name, out);
}

void graph_conv_desc(const optic_module_t *m, const optic_instr *in, optic_conv_desc *d) {
  optic_attrs_convolution c;
  graph_conv_attrs(in, &c);
  optic_conv_desc_init(d);
  int32_t ns = c.spatial_count;
  d->dn.nspatial = ns;
  d->feature_group_count = c.feature_group_count, d->batch_group_count = c.batch_group_count;
  d->dn.in_batch = c.input_batch, d->dn.in_feature = c.input_feature;
  d->dn.k_in = c.kernel_input_feature, d->dn.k_out = c.kernel_output_feature;
  d->dn.out_batch = c.output_batch, d->dn.out_feature = c.output_feature;
  for (int32_t s = 0; s < ns; s++) {
    const optic_window_dim *w = &c.window[s];
    d->dn.in_spatial[s] = c.input_spatial[s], d->dn.k_spatial[s] = c.kernel_spatial[s];
    d->dn.out_spatial[s] = c.output_spatial[s];
    d->stride[s] = w->stride, d->pad_lo[s] = w->pad_low, d->pad_hi[s] = w->pad_high;
    d->lhs_dilation[s] = w->base_dilation, d->rhs_dilation[s] = w->window_dilation, d->reverse[s] = w->reversal;
  }
  d->input = optic_node_type(m, in->operands[0])->shape;
  d->kernel = optic_node_type(m, in->operands[1])->shape;
}
