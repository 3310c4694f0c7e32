/* dot_general validation and output-shape inference (XLA's InferDotOpShape
 * rules). Needs no BLAS, so the reference and the graph layer can use it in
 * every build. Every rejection names the offending dims; nothing is guessed. */
#include "core/error.h"
#include "kernels/dot.h"

/* Element counts must fit as optic_shape_make requires (its own message is
 * replaced by one that says which operand). */
static optic_status check_size(const char *what, int32_t rank, const int64_t *dims) {
  optic_shape shape;
  if (optic_shape_make(rank, dims, &shape) == OPTIC_OK) return OPTIC_OK;
  shape.rank = rank;
  for (int32_t i = 0; i < rank; i++) shape.dims[i] = dims[i];
  char buf[200];
  optic_shape_format(&shape, OPTIC_F32, buf, sizeof buf);
  return optic_fail(OPTIC_ERR_OVERFLOW, "dot: %s %s has too many elements to address", what, buf);
}

static optic_status check_operand(const char *side, const optic_shape *s) {
  if (s == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s shape is NULL", side);
  if (s->rank < 0 || s->rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s rank %d is outside [0, %d]", side, (int)s->rank,
                      OPTIC_MAX_RANK);
  }
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s dim %d has size %lld; sizes must be >= 0", side, i,
                        (long long)s->dims[i]);
    }
  }
  return check_size(side, s->rank, s->dims);
}

/* Range and uniqueness of one operand's batch and contracting lists. */
static optic_status check_lists(const char *side, int32_t rank, const int32_t *batch, int32_t nbatch,
                                const int32_t *contracting, int32_t ncontracting) {
  if (nbatch < 0 || nbatch > rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s has %d batch dims but rank %d", side, (int)nbatch,
                      (int)rank);
  }
  if (ncontracting < 0 || ncontracting > rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s has %d contracting dims but rank %d", side,
                      (int)ncontracting, (int)rank);
  }
  const char *role_of[OPTIC_MAX_RANK] = {0};
  for (int32_t i = 0; i < nbatch + ncontracting; i++) {
    bool is_batch = i < nbatch;
    int32_t d = is_batch ? batch[i] : contracting[i - nbatch];
    const char *role = is_batch ? "batch" : "contracting";
    if (d < 0 || d >= rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s %s dim %d is out of range for rank %d", side, role, (int)d,
                        (int)rank);
    }
    if (role_of[d] != NULL) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s dim %d is listed twice (as %s and as %s)", side, (int)d,
                        role_of[d], role);
    }
    role_of[d] = role;
  }
  return OPTIC_OK;
}

int32_t optic_dot_free_dims(int32_t rank, const int32_t *batch, int32_t batch_count, const int32_t *contracting,
                            int32_t contracting_count, int32_t *free_dims) {
  int32_t n = 0;
  for (int32_t d = 0; d < rank; d++) {
    bool listed = false;
    for (int32_t i = 0; i < batch_count; i++) listed |= batch[i] == d;
    for (int32_t i = 0; i < contracting_count; i++) listed |= contracting[i] == d;
    if (!listed) free_dims[n++] = d;
  }
  return n;
}

optic_status optic_dot_infer_shape(const optic_shape *lhs, const optic_shape *rhs, const optic_dot_dims *dims,
                                   optic_shape *out) {
  if (dims == NULL || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: %s is NULL", dims == NULL ? "dims" : "out");
  }
  optic_status st = check_operand("lhs", lhs);
  if (st == OPTIC_OK) st = check_operand("rhs", rhs);
  if (st != OPTIC_OK) return st;
  if (dims->lhs_batch_count != dims->rhs_batch_count) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: lhs has %d batch dims but rhs has %d",
                      (int)dims->lhs_batch_count, (int)dims->rhs_batch_count);
  }
  if (dims->lhs_contracting_count != dims->rhs_contracting_count) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: lhs has %d contracting dims but rhs has %d",
                      (int)dims->lhs_contracting_count, (int)dims->rhs_contracting_count);
  }
  st = check_lists("lhs", lhs->rank, dims->lhs_batch, dims->lhs_batch_count, dims->lhs_contracting,
                   dims->lhs_contracting_count);
  if (st == OPTIC_OK) {
    st = check_lists("rhs", rhs->rank, dims->rhs_batch, dims->rhs_batch_count, dims->rhs_contracting,
                     dims->rhs_contracting_count);
  }
  if (st != OPTIC_OK) return st;
  for (int32_t i = 0; i < dims->lhs_batch_count; i++) {
    int32_t l = dims->lhs_batch[i], r = dims->rhs_batch[i];
    if (lhs->dims[l] != rhs->dims[r]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "dot: lhs batch dim %d has size %lld but rhs batch dim %d has size %lld", (int)l,
                        (long long)lhs->dims[l], (int)r, (long long)rhs->dims[r]);
    }
  }
  for (int32_t i = 0; i < dims->lhs_contracting_count; i++) {
    int32_t l = dims->lhs_contracting[i], r = dims->rhs_contracting[i];
    if (lhs->dims[l] != rhs->dims[r]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "dot: lhs contracting dim %d has size %lld but rhs contracting dim %d has size %lld", (int)l,
                        (long long)lhs->dims[l], (int)r, (long long)rhs->dims[r]);
    }
  }
  int32_t lfree[OPTIC_MAX_RANK], rfree[OPTIC_MAX_RANK];
  int32_t nlf = optic_dot_free_dims(lhs->rank, dims->lhs_batch, dims->lhs_batch_count, dims->lhs_contracting,
                                    dims->lhs_contracting_count, lfree);
  int32_t nrf = optic_dot_free_dims(rhs->rank, dims->rhs_batch, dims->rhs_batch_count, dims->rhs_contracting,
                                    dims->rhs_contracting_count, rfree);
  int32_t rank = dims->lhs_batch_count + nlf + nrf;
  if (rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "dot: output rank %d (%d batch + %d lhs free + %d rhs free dims) exceeds %d", (int)rank,
                      (int)dims->lhs_batch_count, (int)nlf, (int)nrf, OPTIC_MAX_RANK);
  }
  int64_t od[OPTIC_MAX_RANK];
  int32_t n = 0;
  for (int32_t i = 0; i < dims->lhs_batch_count; i++) od[n++] = lhs->dims[dims->lhs_batch[i]];
  for (int32_t i = 0; i < nlf; i++) od[n++] = lhs->dims[lfree[i]];
  for (int32_t i = 0; i < nrf; i++) od[n++] = rhs->dims[rfree[i]];
  st = check_size("output", rank, od);
  if (st != OPTIC_OK) return st;
  return optic_shape_make(rank, od, out);
}
