/* Algebraic simplification that is always exact: every rewrite gives the
 * same value for every input under IEEE round-to-nearest without
 * flush-to-zero (NaN stays NaN). So x*0, x+(+0) and x-(-0) are left alone
 * (x*0 is NaN for x = inf or NaN; -0 + +0 = +0 and -0 - -0 = +0 turn -0
 * into +0). Each rewrite redirects uses with optic_node_replace_all_uses and
 * leaves the old instruction for DCE.
 *   reshape(reshape(x))        -> reshape(x), or x if that is x's shape
 *   transpose(transpose(x))    -> transpose(x) with the composed permutation,
 *                                 or x if it is the identity
 *   reshape, transpose, broadcast, convert or slice whose result type is
 *   its operand's type         -> the operand (for slice that means start 0,
 *                                 limit = size, and stride 1 or size <= 1)
 *   copy(x)                    -> x (a copy is the identity on values; XLA
 *                                 dumps keep copies that only change a layout,
 *                                 which optic's arrays do not carry)
 *   x + c, c + x               -> x when c is all -0.0 (floats) or all 0 (ints)
 *   x - c                      -> x when c is all +0.0 (floats) or all 0 (ints)
 *   x * c, c * x, x / c        -> x when c is all 1
 * where c is a constant whose elements are all equal, possibly seen through
 * broadcasts and reshapes (at most SPLAT_HOPS of them). */
#include <stdlib.h>
#include <string.h>

#include "graph/passes/passes.h"

#define SPLAT_HOPS 8

/* What every element of a splat constant is. INT_ZERO: integer 0, which is
 * both the additive identity on either side and the subtrahend identity. */
typedef enum splat {
  SPLAT_UNKNOWN = 0, /* memo: not looked at yet */
  SPLAT_OTHER,
  SPLAT_ONE,
  SPLAT_POS_ZERO,
  SPLAT_NEG_ZERO,
  SPLAT_INT_ZERO
} splat;

typedef struct simplify_ctx {
  optic_module_t *m;
  const pass_liveness *l;
  optic_comp_id comp;
  pass_counts *counts;
  bool *changed;
  unsigned char *memo; /* splat class by node id, for ids below n_memo */
  int32_t n_memo;
  bool added; /* this computation got a new instruction */
} simplify_ctx;

static splat classify_element(optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: {
      uint32_t b;
      float one = 1.0f;
      uint32_t one_bits;
      memcpy(&b, p, 4);
      memcpy(&one_bits, &one, 4);
      if (b == one_bits) return SPLAT_ONE;
      if (b == 0) return SPLAT_POS_ZERO;
      return b == 0x80000000u ? SPLAT_NEG_ZERO : SPLAT_OTHER;
    }
    case OPTIC_F64: {
      uint64_t b, one_bits;
      double one = 1.0;
      memcpy(&b, p, 8);
      memcpy(&one_bits, &one, 8);
      if (b == one_bits) return SPLAT_ONE;
      if (b == 0) return SPLAT_POS_ZERO;
      return b == 0x8000000000000000ull ? SPLAT_NEG_ZERO : SPLAT_OTHER;
    }
    case OPTIC_S32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v == 1 ? SPLAT_ONE : v == 0 ? SPLAT_INT_ZERO : SPLAT_OTHER;
    }
    case OPTIC_U8: return *p == 1 ? SPLAT_ONE : *p == 0 ? SPLAT_INT_ZERO : SPLAT_OTHER;
    default: return SPLAT_OTHER;
  }
}

/* The class of a constant's bytes: SPLAT_OTHER unless non-empty and every
 * element has the first one's bytes. */
static splat classify_constant(const optic_instr *in, int64_t *work) {
  size_t es = optic_dtype_size(in->type.dtype);
  if (optic_type_is_tuple(&in->type) || es == 0 || in->data_bytes < es) return SPLAT_OTHER;
  const unsigned char *p = in->data;
  for (size_t off = es; off < in->data_bytes; off += es) {
    if (memcmp(p, p + off, es) != 0) {
      *work += (int64_t)(off / es);
      return SPLAT_OTHER;
    }
  }
  *work += (int64_t)(in->data_bytes / es);
  return classify_element(in->type.dtype, p);
}

static splat classify(simplify_ctx *cx, optic_node_id id) {
  if (id < cx->n_memo && cx->memo[id] != SPLAT_UNKNOWN) return (splat)cx->memo[id];
  const optic_instr *in = &cx->m->instrs[id];
  for (int hop = 0; hop < SPLAT_HOPS && (in->op == OPTIC_OP_BROADCAST || in->op == OPTIC_OP_RESHAPE); hop++) {
    in = &cx->m->instrs[in->operands[0]];
  }
  splat s = in->op == OPTIC_OP_CONSTANT ? classify_constant(in, &cx->counts->work) : SPLAT_OTHER;
  if (id < cx->n_memo) cx->memo[id] = (unsigned char)s;
  return s;
}

static optic_status replace(simplify_ctx *cx, optic_node_id id, optic_node_id with) {
  optic_status st = optic_node_replace_all_uses(cx->m, id, with);
  if (st != OPTIC_OK) return st;
  cx->counts->replaced++;
  *cx->changed = true;
  return OPTIC_OK;
}

/* The arithmetic identities; OPTIC_NO_NODE when none applies. */
static optic_node_id arithmetic_identity(simplify_ctx *cx, const optic_instr *in) {
  optic_node_id a = in->operands[0], b = in->operands[1];
  switch (in->op) {
    case OPTIC_OP_ADD: {
      splat sb = classify(cx, b);
      if (sb == SPLAT_NEG_ZERO || sb == SPLAT_INT_ZERO) return a;
      splat sa = classify(cx, a);
      return (sa == SPLAT_NEG_ZERO || sa == SPLAT_INT_ZERO) ? b : OPTIC_NO_NODE;
    }
    case OPTIC_OP_SUBTRACT: {
      splat sb = classify(cx, b);
      return (sb == SPLAT_POS_ZERO || sb == SPLAT_INT_ZERO) ? a : OPTIC_NO_NODE;
    }
    case OPTIC_OP_MULTIPLY:
      if (classify(cx, b) == SPLAT_ONE) return a;
      return classify(cx, a) == SPLAT_ONE ? b : OPTIC_NO_NODE;
    case OPTIC_OP_DIVIDE: return classify(cx, b) == SPLAT_ONE ? a : OPTIC_NO_NODE;
    default: return OPTIC_NO_NODE;
  }
}

static bool is_identity_perm(const int64_t *p, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (p[i] != i) return false;
  }
  return true;
}

/* reshape(reshape(z)) -> reshape(z) or z. */
static optic_status merge_reshapes(simplify_ctx *cx, optic_node_id id, optic_node_id inner) {
  optic_node_id z = cx->m->instrs[inner].operands[0];
  if (optic_type_equal(&cx->m->instrs[z].type, &cx->m->instrs[id].type)) return replace(cx, id, z);
  optic_shape shape = cx->m->instrs[id].type.shape;
  optic_node_id merged;
  optic_status st = optic_graph_reshape(cx->m, cx->comp, z, &shape, NULL, &merged);
  if (st != OPTIC_OK) return st;
  cx->counts->added++;
  cx->added = true;
  return replace(cx, id, merged);
}

/* transpose(transpose(z, p1), p2): output dim i is z's dim p1[p2[i]]. */
static optic_status merge_transposes(simplify_ctx *cx, optic_node_id id, optic_node_id inner) {
  const optic_instr *outer = &cx->m->instrs[id], *in = &cx->m->instrs[inner];
  optic_node_id z = in->operands[0];
  int64_t perm[OPTIC_MAX_RANK];
  int32_t rank = outer->n_ints;
  for (int32_t i = 0; i < rank; i++) perm[i] = in->ints[outer->ints[i]];
  if (is_identity_perm(perm, rank)) return replace(cx, id, z);
  optic_node_id merged;
  optic_status st = optic_graph_transpose(cx->m, cx->comp, z, perm, NULL, &merged);
  if (st != OPTIC_OK) return st;
  cx->counts->added++;
  cx->added = true;
  return replace(cx, id, merged);
}

static optic_status simplify_instr(simplify_ctx *cx, optic_node_id id) {
  const optic_instr *in = &cx->m->instrs[id];
  if (!pass_is_live(cx->l, id)) return OPTIC_OK;
  switch (in->op) {
    case OPTIC_OP_COPY: return replace(cx, id, in->operands[0]);
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST:
    case OPTIC_OP_TRANSPOSE:
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_CONVERT:
    case OPTIC_OP_SLICE: {
      optic_node_id x = in->operands[0];
      const optic_instr *xi = &cx->m->instrs[x];
      if (optic_type_equal(&xi->type, &in->type) &&
          (in->op != OPTIC_OP_TRANSPOSE || is_identity_perm(in->ints, in->n_ints))) {
        return replace(cx, id, x);
      }
      if (in->op == OPTIC_OP_RESHAPE && (xi->op == OPTIC_OP_RESHAPE || xi->op == OPTIC_OP_BITCAST)) {
        return merge_reshapes(cx, id, x);
      }
      if (in->op == OPTIC_OP_TRANSPOSE && xi->op == OPTIC_OP_TRANSPOSE) return merge_transposes(cx, id, x);
      return OPTIC_OK;
    }
    case OPTIC_OP_ADD:
    case OPTIC_OP_SUBTRACT:
    case OPTIC_OP_MULTIPLY:
    case OPTIC_OP_DIVIDE: {
      optic_node_id x = arithmetic_identity(cx, in);
      return x == OPTIC_NO_NODE ? OPTIC_OK : replace(cx, id, x);
    }
    default: return OPTIC_OK;
  }
}

optic_status pass_simplify(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed) {
  simplify_ctx cx = {.m = m, .l = l, .counts = counts, .changed = changed, .n_memo = m->n_instrs};
  cx.memo = calloc((size_t)(cx.n_memo ? cx.n_memo : 1), 1);
  if (cx.memo == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  optic_status st = OPTIC_OK;
  for (int32_t q = 0; q < l->n_comps && st == OPTIC_OK; q++) {
    cx.comp = l->comps[q];
    cx.added = false;
    int32_t n;
    const optic_node_id *list = graph_instructions(m, cx.comp, &n);
    /* Builders append to (and may move) the list: walk a copy. Instructions
     * added here are already in simplest form and need no visit. */
    optic_node_id *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (ids == NULL) {
      st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
      break;
    }
    memcpy(ids, list, (size_t)n * sizeof *ids);
    for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
      counts->work++;
      st = simplify_instr(&cx, ids[i]);
    }
    free(ids);
    /* New instructions sit at the end but feed earlier users. */
    if (cx.added) {
      optic_status st2 = pass_restore_order(m, cx.comp);
      if (st == OPTIC_OK) st = st2;
    }
  }
  free(cx.memo);
  return st;
}
