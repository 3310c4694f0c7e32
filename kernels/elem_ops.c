/* The element ops' table: kinds, names, and which f32 kernel computes an op
 * (kernels/elem.h). */
#include "kernels/elem.h"

static const unsigned char elem_kinds[OPTIC_ELEM_OP_COUNT_] = {
#define ELEM_KIND_(name, kind) [OPTIC_ELEM_##name] = OPTIC_ELEM_KIND_##kind,
    OPTIC_ELEM_OP_LIST(ELEM_KIND_)
#undef ELEM_KIND_
};

optic_elem_kind optic_elem_kind_of(optic_elem_op op) {
  return (unsigned)op < OPTIC_ELEM_OP_COUNT_ ? (optic_elem_kind)elem_kinds[op] : OPTIC_ELEM_KIND_OTHER;
}

/* XLA's spellings: the enum names lower-cased, '_' as '-'. */
static const char *const elem_names[OPTIC_ELEM_OP_COUNT_] = {"add",
                                                             "subtract",
                                                             "multiply",
                                                             "divide",
                                                             "power",
                                                             "maximum",
                                                             "minimum",
                                                             "and",
                                                             "or",
                                                             "negate",
                                                             "abs",
                                                             "exponential",
                                                             "log",
                                                             "sqrt",
                                                             "rsqrt",
                                                             "tanh",
                                                             "logistic",
                                                             "sign",
                                                             "floor",
                                                             "ceil",
                                                             "not",
                                                             "erf",
                                                             "log-plus-one",
                                                             "exponential-minus-one",
                                                             "sine",
                                                             "cosine",
                                                             "tan",
                                                             "cbrt",
                                                             "round-nearest-afz",
                                                             "round-nearest-even",
                                                             "popcnt",
                                                             "count-leading-zeros",
                                                             "atan2",
                                                             "remainder",
                                                             "xor",
                                                             "shift-left",
                                                             "shift-right-logical",
                                                             "shift-right-arithmetic",
                                                             "is-finite",
                                                             "reduce-precision",
                                                             "bitcast-convert",
                                                             "compare",
                                                             "select",
                                                             "clamp",
                                                             "convert",
                                                             "copy"};
_Static_assert(sizeof elem_names / sizeof elem_names[0] == OPTIC_ELEM_OP_COUNT_, "one name per element op");

const char *optic_elem_op_name(optic_elem_op op) {
  return (unsigned)op < OPTIC_ELEM_OP_COUNT_ ? elem_names[op] : "invalid";
}

bool optic_elem_unary_kernel(optic_elem_op op, optic_unary_op *k) {
  switch (op) {
    case OPTIC_ELEM_NEGATE: *k = OPTIC_UNARY_NEG; return true;
    case OPTIC_ELEM_ABS: *k = OPTIC_UNARY_ABS; return true;
    case OPTIC_ELEM_EXPONENTIAL: *k = OPTIC_UNARY_EXP; return true;
    case OPTIC_ELEM_LOG: *k = OPTIC_UNARY_LOG; return true;
    case OPTIC_ELEM_SQRT: *k = OPTIC_UNARY_SQRT; return true;
    case OPTIC_ELEM_RSQRT: *k = OPTIC_UNARY_RSQRT; return true;
    case OPTIC_ELEM_TANH: *k = OPTIC_UNARY_TANH; return true;
    case OPTIC_ELEM_LOGISTIC: *k = OPTIC_UNARY_LOGISTIC; return true;
    case OPTIC_ELEM_SIGN: *k = OPTIC_UNARY_SIGN; return true;
    case OPTIC_ELEM_FLOOR: *k = OPTIC_UNARY_FLOOR; return true;
    case OPTIC_ELEM_CEIL: *k = OPTIC_UNARY_CEIL; return true;
    case OPTIC_ELEM_ERF: *k = OPTIC_UNARY_ERF; return true;
    case OPTIC_ELEM_LOG_PLUS_ONE: *k = OPTIC_UNARY_LOG1P; return true;
    case OPTIC_ELEM_EXPONENTIAL_MINUS_ONE: *k = OPTIC_UNARY_EXPM1; return true;
    default: return false;
  }
}

bool optic_elem_binary_kernel(optic_elem_op op, optic_binary_op *k) {
  switch (op) {
    case OPTIC_ELEM_ADD: *k = OPTIC_BINARY_ADD; return true;
    case OPTIC_ELEM_SUBTRACT: *k = OPTIC_BINARY_SUB; return true;
    case OPTIC_ELEM_MULTIPLY: *k = OPTIC_BINARY_MUL; return true;
    case OPTIC_ELEM_DIVIDE: *k = OPTIC_BINARY_DIV; return true;
    case OPTIC_ELEM_POWER: *k = OPTIC_BINARY_POW; return true;
    case OPTIC_ELEM_MAXIMUM: *k = OPTIC_BINARY_MAX; return true;
    case OPTIC_ELEM_MINIMUM: *k = OPTIC_BINARY_MIN; return true;
    default: return false;
  }
}

bool optic_elem_dtype_int_info(optic_dtype dt, int *bits, bool *is_signed) {
  if (!optic_dtype_is_int(dt)) return false;
  *bits = optic_dtype_int_bits(dt), *is_signed = optic_dtype_is_signed_int(dt);
  return true;
}
