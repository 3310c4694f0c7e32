/* Convolution descriptors: XLA dim-label parsing, layout rewriting, validation
 * and output shape inference. Needs no BLAS, so the kernels-only (cross) build
 * and the naive reference use it too. Never allocates; every rejection names
 * the dims and sizes involved. */
#include <string.h>

#include "core/error.h"
#include "kernels/conv.h"

void optic_conv_desc_init(optic_conv_desc *d) {
  if (d == NULL) return;
  memset(d, 0, sizeof *d);
  for (int i = 0; i < OPTIC_CONV_MAX_SPATIAL; i++) {
    d->stride[i] = 1;
    d->lhs_dilation[i] = 1;
    d->rhs_dilation[i] = 1;
  }
  d->feature_group_count = 1;
  d->batch_group_count = 1;
}

/* Parses one part of the labels ("b01f", "01io") of length n; a and b are the
 * two role letters ('b','f' or 'i','o'). */
static optic_status parse_part(const char *s, size_t n, char a, char b, const char *what, int32_t *pos_a,
                               int32_t *pos_b, int32_t *spatial, int32_t *nspatial) {
  if (n > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: dim labels: %s part '%.*s' has %zu dims, at most %d",
                      what, (int)n, s, n, OPTIC_MAX_RANK);
  }
  bool seen_digit[10] = {false};
  int32_t count = 0;
  *pos_a = *pos_b = -1;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == a || ch == b) {
      int32_t *slot = ch == a ? pos_a : pos_b;
      if (*slot >= 0) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: dim labels: %s part '%.*s' repeats '%c'", what,
                          (int)n, s, ch);
      }
      *slot = (int32_t)i;
    } else if (ch >= '0' && ch <= '9') {
      int digit = ch - '0';
      if (digit >= OPTIC_CONV_MAX_SPATIAL) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                          "convolution: dim labels: %s part '%.*s' names spatial dim %d; at most %d spatial dims", what,
                          (int)n, s, digit, OPTIC_CONV_MAX_SPATIAL);
      }
      if (seen_digit[digit]) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: dim labels: %s part '%.*s' repeats '%c'", what,
                          (int)n, s, ch);
      }
      seen_digit[digit] = true;
      spatial[digit] = (int32_t)i;
      count++;
    } else {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "convolution: dim labels: %s part '%.*s' has '%c'; expected '%c', '%c' or a spatial digit",
                        what, (int)n, s, ch, a, b);
    }
  }
  if (*pos_a < 0 || *pos_b < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: dim labels: %s part '%.*s' lacks '%c'", what, (int)n, s,
                      *pos_a < 0 ? a : b);
  }
  for (int32_t k = 0; k < count; k++) {
    if (!seen_digit[k]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "convolution: dim labels: %s part '%.*s' has %d spatial dims but not spatial dim %d", what,
                        (int)n, s, count, k);
    }
  }
  *nspatial = count;
  return OPTIC_OK;
}

optic_status optic_conv_parse_dim_labels(const char *labels, optic_conv_dnums *out) {
  if (labels == NULL || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: dim labels: NULL %s", labels ? "out" : "labels");
  }
  const char *us = strchr(labels, '_');
  const char *arrow = strstr(labels, "->");
  if (us == NULL || arrow == NULL || arrow < us) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: dim labels '%s' are not of the form LHS_RHS->OUT (e.g. b01f_01io->b01f)", labels);
  }
  optic_conv_dnums dn;
  memset(&dn, 0, sizeof dn);
  int32_t ns_in = 0, ns_k = 0, ns_out = 0;
  optic_status st =
      parse_part(labels, (size_t)(us - labels), 'b', 'f', "input", &dn.in_batch, &dn.in_feature, dn.in_spatial, &ns_in);
  if (st != OPTIC_OK) return st;
  st = parse_part(us + 1, (size_t)(arrow - us - 1), 'i', 'o', "kernel", &dn.k_in, &dn.k_out, dn.k_spatial, &ns_k);
  if (st != OPTIC_OK) return st;
  st = parse_part(arrow + 2, strlen(arrow + 2), 'b', 'f', "output", &dn.out_batch, &dn.out_feature, dn.out_spatial,
                  &ns_out);
  if (st != OPTIC_OK) return st;
  if (ns_in != ns_k || ns_in != ns_out) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: dim labels '%s': input has %d spatial dims, kernel %d, output %d; they must agree",
                      labels, ns_in, ns_k, ns_out);
  }
  dn.nspatial = ns_in;
  *out = dn;
  return OPTIC_OK;
}

/* Physical (row-major) position of each logical dim under a minor_to_major layout. */
static optic_status physical_positions(const int64_t *m2m, int32_t rank, const char *what, int32_t *pos) {
  for (int32_t i = 0; i < rank; i++) pos[i] = -1;
  for (int32_t j = 0; j < rank; j++) {
    int64_t logical = m2m ? m2m[j] : rank - 1 - j;
    if (logical < 0 || logical >= rank || pos[logical] >= 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "convolution: %s layout is not a permutation of 0..%d (entry %d is %lld)", what, rank - 1, j,
                        (long long)logical);
    }
    pos[logical] = rank - 1 - j;
  }
  return OPTIC_OK;
}

optic_status optic_conv_apply_layouts(const optic_conv_desc *logical, const int64_t *input_minor_to_major,
                                      const int64_t *kernel_minor_to_major, const int64_t *output_minor_to_major,
                                      optic_conv_desc *physical) {
  if (logical == NULL || physical == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: apply_layouts: NULL descriptor");
  }
  int32_t rank = logical->dn.nspatial + 2;
  if (logical->dn.nspatial < 0 || logical->dn.nspatial > OPTIC_CONV_MAX_SPATIAL || logical->input.rank != rank ||
      logical->kernel.rank != rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: apply_layouts: %d spatial dims need rank %d operands; input has rank %d, kernel %d",
                      logical->dn.nspatial, rank, logical->input.rank, logical->kernel.rank);
  }
  int32_t pin[OPTIC_MAX_RANK], pk[OPTIC_MAX_RANK], pout[OPTIC_MAX_RANK];
  optic_status st = physical_positions(input_minor_to_major, rank, "input", pin);
  if (st == OPTIC_OK) st = physical_positions(kernel_minor_to_major, rank, "kernel", pk);
  if (st == OPTIC_OK) st = physical_positions(output_minor_to_major, rank, "output", pout);
  if (st != OPTIC_OK) return st;
  const optic_conv_dnums *a = &logical->dn;
  /* reject out-of-range dim numbers before indexing with them */
  int32_t all[3 * OPTIC_MAX_RANK];
  int32_t n = 0;
  all[n++] = a->in_batch, all[n++] = a->in_feature, all[n++] = a->k_in, all[n++] = a->k_out;
  all[n++] = a->out_batch, all[n++] = a->out_feature;
  for (int32_t s = 0; s < a->nspatial; s++)
    all[n++] = a->in_spatial[s], all[n++] = a->k_spatial[s], all[n++] = a->out_spatial[s];
  for (int32_t i = 0; i < n; i++) {
    if (all[i] < 0 || all[i] >= rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: apply_layouts: dim number %d outside rank %d", all[i],
                        rank);
    }
  }
  optic_conv_desc d = *logical;
  optic_conv_dnums *b = &d.dn;
  b->in_batch = pin[a->in_batch], b->in_feature = pin[a->in_feature];
  b->k_in = pk[a->k_in], b->k_out = pk[a->k_out];
  b->out_batch = pout[a->out_batch], b->out_feature = pout[a->out_feature];
  for (int32_t s = 0; s < a->nspatial; s++) {
    b->in_spatial[s] = pin[a->in_spatial[s]];
    b->k_spatial[s] = pk[a->k_spatial[s]];
    b->out_spatial[s] = pout[a->out_spatial[s]];
  }
  for (int32_t i = 0; i < rank; i++) {
    d.input.dims[pin[i]] = logical->input.dims[i];
    d.kernel.dims[pk[i]] = logical->kernel.dims[i];
  }
  *physical = d;
  return OPTIC_OK;
}

/* Checks that an operand's dim numbers are distinct and inside its rank. */
static optic_status check_roles(const char *what, int32_t rank, int32_t a, const char *an, int32_t b, const char *bn,
                                const int32_t *spatial, int32_t nsp) {
  bool used[OPTIC_MAX_RANK] = {false};
  int32_t dims[OPTIC_MAX_RANK];
  int32_t n = 0;
  dims[n++] = a, dims[n++] = b;
  for (int32_t s = 0; s < nsp; s++) dims[n++] = spatial[s];
  for (int32_t i = 0; i < n; i++) {
    const char *role = i == 0 ? an : i == 1 ? bn : "spatial";
    if (dims[i] < 0 || dims[i] >= rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s %s dim number %d is outside rank %d", what, role,
                        dims[i], rank);
    }
    if (used[dims[i]]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s dim %d is given two roles", what, dims[i]);
    }
    used[dims[i]] = true;
  }
  return OPTIC_OK;
}

static optic_status check_shape(const char *what, const optic_shape *s) {
  optic_shape tmp;
  if (s->rank < 0 || s->rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s rank %d is outside 0..%d", what, s->rank,
                      OPTIC_MAX_RANK);
  }
  optic_status st = optic_shape_make(s->rank, s->dims, &tmp);
  if (st != OPTIC_OK) {
    return optic_fail(st, "convolution: %s shape is invalid (a dim is negative or the size overflows)", what);
  }
  return OPTIC_OK;
}

/* long: XLA's convolution shape rules checked in order, each failure with its own message */
optic_status optic_conv_infer_shape(const optic_conv_desc *d, optic_shape *out) {
  if (d == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: NULL descriptor or out");
  const optic_conv_dnums *dn = &d->dn;
  int32_t nsp = dn->nspatial;
  if (nsp < 0 || nsp > OPTIC_CONV_MAX_SPATIAL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %d spatial dims; supported 0..%d", nsp,
                      OPTIC_CONV_MAX_SPATIAL);
  }
  int32_t rank = nsp + 2;
  optic_status st = check_shape("input", &d->input);
  if (st == OPTIC_OK) st = check_shape("kernel", &d->kernel);
  if (st != OPTIC_OK) return st;
  if (d->input.rank != rank || d->kernel.rank != rank) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "convolution: %d spatial dims need rank-%d operands; input has rank %d, kernel rank %d", nsp,
                      rank, d->input.rank, d->kernel.rank);
  }
  st = check_roles("input", rank, dn->in_batch, "batch", dn->in_feature, "feature", dn->in_spatial, nsp);
  if (st == OPTIC_OK)
    st = check_roles("kernel", rank, dn->k_in, "input feature", dn->k_out, "output feature", dn->k_spatial, nsp);
  if (st == OPTIC_OK)
    st = check_roles("output", rank, dn->out_batch, "batch", dn->out_feature, "feature", dn->out_spatial, nsp);
  if (st != OPTIC_OK) return st;

  int64_t fgc = d->feature_group_count, bgc = d->batch_group_count;
  if (fgc < 1 || bgc < 1) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: feature_group_count %lld and batch_group_count %lld must be >= 1", (long long)fgc,
                      (long long)bgc);
  }
  if (fgc > 1 && bgc > 1) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: feature_group_count %lld and batch_group_count %lld cannot both exceed 1",
                      (long long)fgc, (long long)bgc);
  }
  int64_t in_b = d->input.dims[dn->in_batch], in_f = d->input.dims[dn->in_feature];
  int64_t k_i = d->kernel.dims[dn->k_in], k_o = d->kernel.dims[dn->k_out];
  if (in_f % fgc != 0 || in_f / fgc != k_i) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "convolution: input feature dim has size %lld but kernel input feature dim has size %lld "
                      "(feature_group_count %lld); input features must equal kernel input features * "
                      "feature_group_count",
                      (long long)in_f, (long long)k_i, (long long)fgc);
  }
  if (k_o % fgc != 0) {
    return optic_fail(
        OPTIC_ERR_SHAPE_MISMATCH,
        "convolution: kernel output feature dim has size %lld, not a multiple of feature_group_count %lld",
        (long long)k_o, (long long)fgc);
  }
  if (k_o % bgc != 0) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "convolution: kernel output feature dim has size %lld, not a multiple of batch_group_count %lld",
                      (long long)k_o, (long long)bgc);
  }
  if (in_b % bgc != 0) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "convolution: input batch dim has size %lld, not a multiple of batch_group_count %lld",
                      (long long)in_b, (long long)bgc);
  }

  optic_shape o;
  memset(&o, 0, sizeof o);
  o.rank = rank;
  o.dims[dn->out_batch] = in_b / bgc;
  o.dims[dn->out_feature] = k_o;
  for (int32_t s = 0; s < nsp; s++) {
    int64_t in = d->input.dims[dn->in_spatial[s]], k = d->kernel.dims[dn->k_spatial[s]];
    int64_t stride = d->stride[s], ld = d->lhs_dilation[s], rd = d->rhs_dilation[s];
    if (k < 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "convolution: window (kernel spatial dim %d, shape dim %d) has size %lld; it must be >= 1", s,
                        dn->k_spatial[s], (long long)k);
    }
    if (stride < 1 || ld < 1 || rd < 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "convolution: spatial dim %d has stride %lld, lhs_dilation %lld, rhs_dilation %lld; each must "
                        "be >= 1",
                        s, (long long)stride, (long long)ld, (long long)rd);
    }
    int64_t dil_in, dil_k, padded;
    bool ovf = false;
    if (in == 0) {
      dil_in = 0;
    } else {
      ovf |= __builtin_mul_overflow(in - 1, ld, &dil_in);
      ovf |= __builtin_add_overflow(dil_in, (int64_t)1, &dil_in);
    }
    ovf |= __builtin_mul_overflow(k - 1, rd, &dil_k);
    ovf |= __builtin_add_overflow(dil_k, (int64_t)1, &dil_k);
    if (!ovf) ovf |= __builtin_add_overflow(dil_in, d->pad_lo[s], &padded);
    if (!ovf) ovf |= __builtin_add_overflow(padded, d->pad_hi[s], &padded);
    if (ovf) {
      return optic_fail(OPTIC_ERR_OVERFLOW, "convolution: spatial dim %d: dilated or padded size overflows int64", s);
    }
    o.dims[dn->out_spatial[s]] = (padded <= 0 || dil_k > padded) ? 0 : (padded - dil_k) / stride + 1;
  }
  optic_shape checked;
  st = optic_shape_make(o.rank, o.dims, &checked);
  if (st != OPTIC_OK) return optic_fail(st, "convolution: output shape does not fit (too many elements)");
  *out = checked;
  return OPTIC_OK;
}
