/* Block programs: an elementwise computation (a loop fusion's fused
 * computation, a map's or a reducer's to_apply) lowered once into a register
 * list of ew_apply calls, then run block by block so intermediates stay in
 * L1/L2. Leaves reached through broadcast/transpose/reshape of a parameter
 * or constant become strided gathers; any other shape-changing instruction
 * makes the lowering decline (the caller then runs the computation unfused).
 * Lowering allocates; running never does. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"

enum { V_NONE, V_REG, V_INPUT, V_SCALAR, V_LEAF };

typedef struct ew_value {
  uint8_t kind;
  int32_t index;     /* V_REG: register; V_INPUT / V_LEAF / scalar input: input number */
  const void *value; /* V_SCALAR of a constant */
  exec_walk walk;    /* V_LEAF: how the node's elements are read from the input */
  int32_t gathered;  /* V_LEAF materialized into this register (-1: not yet) */
  int32_t last_use;  /* position of the last reader in the order */
  bool is_output;
} ew_value;

typedef struct lower_ctx {
  const optic_module_t *m;
  ew_prog *p;
  int32_t cap_instr, cap_inputs;
  int32_t *free_regs, n_free, cap_free;
  int32_t pos; /* position in the order of the node being lowered */
} lower_ctx;

void ew_prog_destroy(ew_prog *p) {
  if (p == NULL) return;
  free(p->input_dtype);
  free(p->input_const);
  free(p->ins);
  free(p->output_dtype);
  free(p->wide_consts);
  free(p);
}

static optic_status oom(void) { return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fused loop: out of memory"); }

static optic_status add_instr(lower_ctx *c, const ew_instr *in) {
  if (c->p->n_instr == c->cap_instr) {
    int32_t cap = c->cap_instr ? 2 * c->cap_instr : 16;
    ew_instr *n = realloc(c->p->ins, (size_t)cap * sizeof *n);
    if (n == NULL) return oom();
    c->p->ins = n;
    c->cap_instr = cap;
  }
  c->p->ins[c->p->n_instr++] = *in;
  return OPTIC_OK;
}

static optic_status add_input(lower_ctx *c, optic_dtype dt, const void *constant, int32_t *out) {
  if (c->p->n_inputs == c->cap_inputs) {
    int32_t cap = c->cap_inputs ? 2 * c->cap_inputs : 8;
    optic_dtype *d = realloc(c->p->input_dtype, (size_t)cap * sizeof *d);
    if (d == NULL) return oom();
    c->p->input_dtype = d;
    const void **k = realloc(c->p->input_const, (size_t)cap * sizeof *k);
    if (k == NULL) return oom();
    c->p->input_const = k;
    c->cap_inputs = cap;
  }
  c->p->input_dtype[c->p->n_inputs] = dt;
  c->p->input_const[c->p->n_inputs] = constant;
  *out = c->p->n_inputs++;
  return OPTIC_OK;
}

static optic_status alloc_reg(lower_ctx *c, int32_t *out) {
  if (c->n_free > 0) {
    *out = c->free_regs[--c->n_free];
    return OPTIC_OK;
  }
  *out = c->p->n_regs++;
  return OPTIC_OK;
}

static optic_status free_reg(lower_ctx *c, int32_t r) {
  if (c->n_free == c->cap_free) {
    int32_t cap = c->cap_free ? 2 * c->cap_free : 16;
    int32_t *n = realloc(c->free_regs, (size_t)cap * sizeof *n);
    if (n == NULL) return oom();
    c->free_regs = n;
    c->cap_free = cap;
  }
  c->free_regs[c->n_free++] = r;
  return OPTIC_OK;
}

static size_t shape_elems(const optic_shape *s) {
  size_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

static exec_walk contiguous_walk(const optic_shape *s) {
  exec_walk w = {.rank = s->rank};
  int64_t st = 1;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    w.dims[d] = s->dims[d];
    w.strides[d] = st;
    st *= s->dims[d];
  }
  return w;
}

static bool walk_is_contiguous(const exec_walk *w) {
  if (w->base != 0) return false;
  int64_t st = 1;
  for (int32_t d = w->rank - 1; d >= 0; d--) {
    if (w->dims[d] != 1 && w->strides[d] != st) return false;
    st *= w->dims[d];
  }
  return true;
}

/* The source operand for reading value v, materializing a leaf gather. */
static optic_status use_value(lower_ctx *c, ew_value *v, optic_dtype dt, ew_src *out) {
  switch (v->kind) {
    case V_REG: *out = (ew_src){EW_REG, v->index, NULL}; return OPTIC_OK;
    case V_INPUT: *out = (ew_src){EW_INPUT, v->index, NULL}; return OPTIC_OK;
    case V_SCALAR: *out = (ew_src){EW_SCALAR, v->index, v->value}; return OPTIC_OK;
    case V_LEAF: {
      if (v->gathered < 0) {
        int32_t r;
        optic_status st = alloc_reg(c, &r);
        if (st != OPTIC_OK) return st;
        ew_instr g = {.kind = EW_GATHER, .in_dt = dt, .out_dt = dt, .n_src = 1, .dst = r, .walk = v->walk};
        g.src[0] = (ew_src){EW_INPUT, v->index, NULL};
        g.run = walk_merged(&v->walk);
        if (r < EW_ALIAS_REGS) {
          int64_t step = g.run.rank > 0 ? g.run.strides[g.run.rank - 1] : 0;
          g.alias = step == 0 ? EW_ALIAS_SCALAR : step == 1 ? EW_ALIAS_DIRECT : EW_ALIAS_NONE;
        }
        if ((st = add_instr(c, &g)) != OPTIC_OK) return st;
        v->gathered = r;
      }
      *out = (ew_src){EW_REG, v->gathered, NULL};
      return OPTIC_OK;
    }
    default: return optic_fail(OPTIC_ERR_INTERNAL, "fused loop: operand without a value");
  }
}

static optic_status release_value(lower_ctx *c, ew_value *v) {
  if (v->is_output) return OPTIC_OK;
  if (v->kind == V_REG) return free_reg(c, v->index);
  if (v->kind == V_LEAF && v->gathered >= 0) return free_reg(c, v->gathered);
  return OPTIC_OK;
}

static optic_status decline(const optic_module_t *m, optic_node_id id, const char *why) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED, EW_DECLINE_PREFIX "%s %s %s", optic_opcode_name(optic_node_opcode(m, id)),
                    optic_node_name(m, id), why);
}

/* long: one switch over the opcodes a fused loop lowers */
static optic_status lower_node(lower_ctx *c, optic_node_id id, ew_value *vals, size_t N, bool params_full) {
  const optic_module_t *m = c->m;
  const optic_type *t = optic_node_type(m, id);
  optic_opcode op = optic_node_opcode(m, id);
  ew_value *v = &vals[id];
  optic_status st;
  if (optic_type_is_tuple(t) && op != OPTIC_OP_TUPLE) return decline(m, id, "has a tuple type");
  size_t e = optic_type_is_tuple(t) ? 0 : shape_elems(&t->shape);
  optic_node_attrs_t a;
  if ((st = optic_node_attrs(m, id, &a)) != OPTIC_OK) return st;
  switch (op) {
    case OPTIC_OP_PARAMETER: {
      int32_t k = (int32_t)a.parameter.number;
      c->p->input_dtype[k] = t->dtype;
      if (params_full || e == N) *v = (ew_value){.kind = V_INPUT, .index = k, .gathered = -1};
      else if (e == 1) *v = (ew_value){.kind = V_SCALAR, .index = k, .gathered = -1};
      else *v = (ew_value){.kind = V_LEAF, .index = k, .walk = contiguous_walk(&t->shape), .gathered = -1};
      if (!params_full && e == 1 && N != 1) c->p->scalar_inputs |= (uint64_t)1 << k;
      return OPTIC_OK;
    }
    case OPTIC_OP_CONSTANT: {
      const void *data = optic_node_constant_data(m, id, NULL);
      if (e == 1 && N != 1) {
        *v = (ew_value){.kind = V_SCALAR, .index = -1, .value = data, .gathered = -1};
        return OPTIC_OK;
      }
      if (e == 1 && params_full) { /* a combiner's constant: one element for every lane */
        *v = (ew_value){.kind = V_SCALAR, .index = -1, .value = data, .gathered = -1};
        return OPTIC_OK;
      }
      int32_t k;
      if ((st = add_input(c, t->dtype, data, &k)) != OPTIC_OK) return st;
      if (e == N) *v = (ew_value){.kind = V_INPUT, .index = k, .gathered = -1};
      else *v = (ew_value){.kind = V_LEAF, .index = k, .walk = contiguous_walk(&t->shape), .gathered = -1};
      return OPTIC_OK;
    }
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST: {
      ew_value *o = &vals[optic_node_operand(m, id, 0)];
      if (o->kind == V_LEAF) {
        if (!walk_is_contiguous(&o->walk)) return decline(m, id, "reshapes a strided view");
        *v = *o;
        v->walk = contiguous_walk(&t->shape);
        v->gathered = -1;
        if (e == N && o->walk.base == 0) { /* a full-size leaf read in order is the input itself */
          v->kind = V_INPUT;
        }
      } else {
        /* A reshape keeps the row-major order: a computed value's register is
         * taken over when the reshape is its last reader (else the two would
         * share a register that one of them releases). */
        if (o->kind == V_REG && (o->last_use != c->pos || o->is_output)) {
          return decline(m, id, "aliases a computed value");
        }
        *v = *o;
      }
      v->is_output = false;
      return OPTIC_OK;
    }
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_TRANSPOSE: {
      ew_value *o = &vals[optic_node_operand(m, id, 0)];
      const optic_type *ot = optic_node_type(m, optic_node_operand(m, id, 0));
      if (o->kind == V_SCALAR && op == OPTIC_OP_BROADCAST) {
        *v = *o;
        v->is_output = false;
        return OPTIC_OK;
      }
      exec_walk src;
      if (o->kind == V_LEAF) src = o->walk;
      else if (o->kind == V_INPUT) src = contiguous_walk(&ot->shape);
      else if (o->kind == V_SCALAR) src = (exec_walk){.rank = 0};
      else return decline(m, id, "rearranges a computed value");
      exec_walk w = {.rank = t->shape.rank, .base = src.base};
      for (int32_t d = 0; d < t->shape.rank; d++) w.dims[d] = t->shape.dims[d];
      if (op == OPTIC_OP_TRANSPOSE) {
        for (int32_t d = 0; d < t->shape.rank; d++) w.strides[d] = src.strides[a.transpose.dims[d]];
      } else {
        for (int32_t i = 0; i < a.broadcast.count; i++) w.strides[a.broadcast.dims[i]] = src.rank ? src.strides[i] : 0;
      }
      *v = (ew_value){.kind = V_LEAF, .index = o->index, .walk = w, .gathered = -1};
      if (o->kind == V_SCALAR) {
        if (o->index < 0) return decline(m, id, "broadcasts a scalar constant in a non-scalar way");
        c->p->scalar_inputs &= ~((uint64_t)1 << o->index);
      }
      return OPTIC_OK;
    }
    case OPTIC_OP_TUPLE: return OPTIC_OK; /* the root only (checked by the caller) */
    default: break;
  }
  if (!ew_is_elementwise(op)) return decline(m, id, "is not elementwise");
  if (e != N && !(params_full && e == 1)) return decline(m, id, "has another element count");
  int32_t n_ops = optic_node_operand_count(m, id);
  ew_instr in = {.kind = EW_OP, .op = op, .n_src = n_ops, .out_dt = t->dtype};
  int32_t data_operand = (op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP) ? 1 : 0;
  in.in_dt = optic_node_type(m, optic_node_operand(m, id, data_operand))->dtype;
  if (op == OPTIC_OP_COMPARE || op == OPTIC_OP_REDUCE_PRECISION) in.cmp = ew_param_of(&a);
  if (!ew_supported(op, in.in_dt, in.out_dt)) return decline(m, id, "has a dtype the runtime does not define");
  for (int32_t i = 0; i < n_ops; i++) {
    optic_node_id o = optic_node_operand(m, id, i);
    if ((st = use_value(c, &vals[o], optic_node_type(m, o)->dtype, &in.src[i])) != OPTIC_OK) return st;
  }
  int32_t r;
  if ((st = alloc_reg(c, &r)) != OPTIC_OK) return st;
  in.dst = r;
  *v = (ew_value){.kind = V_REG, .index = r, .gathered = -1};
  return add_instr(c, &in);
}

static optic_status ew_lower_full(const optic_module_t *m, optic_comp_id comp, size_t N, bool params_full,
                                  optic_node_id as_input, optic_node_id root_override, ew_prog **out);

/* Sets a reader's position as the operand's last use. */
static void note_uses(const optic_module_t *m, optic_node_id id, int32_t pos, ew_value *vals) {
  int32_t n = optic_node_operand_count(m, id);
  for (int32_t i = 0; i < n; i++) vals[optic_node_operand(m, id, i)].last_use = pos;
}

optic_status ew_lower_epilogue(const optic_module_t *m, optic_comp_id comp, size_t N, optic_node_id as_input,
                               ew_prog **out) {
  return ew_lower_full(m, comp, N, false, as_input, OPTIC_NO_NODE, out);
}

optic_status ew_lower_subtree(const optic_module_t *m, optic_comp_id comp, optic_node_id root, size_t N,
                              ew_prog **out) {
  return ew_lower_full(m, comp, N, false, OPTIC_NO_NODE, root, out);
}

optic_status ew_lower_ex(const optic_module_t *m, optic_comp_id comp, size_t N, bool params_full, ew_prog **out) {
  return ew_lower_full(m, comp, N, params_full, OPTIC_NO_NODE, OPTIC_NO_NODE, out);
}

/* needed[x] for root and every node it depends on (stack: n + 1 slots). */
static void mark_needed(const optic_module_t *m, optic_node_id root, int32_t n, bool *needed, optic_node_id *stack) {
  int32_t top = 0;
  stack[top++] = root;
  needed[root] = true;
  while (top > 0) {
    optic_node_id x = stack[--top];
    for (int32_t k = 0; k < optic_node_operand_count(m, x); k++) {
      optic_node_id o = optic_node_operand(m, x, k);
      if (!needed[o] && top < n) needed[o] = true, stack[top++] = o;
    }
  }
}

/* Root leaves are outputs: never released. *n_out: how many. */
static optic_status mark_outputs(const optic_module_t *m, optic_node_id root, ew_value *vals, int32_t *n_out) {
  const optic_type *rt = optic_node_type(m, root);
  *n_out = optic_type_is_tuple(rt) ? rt->tuple_size : 1;
  if (!optic_type_is_tuple(rt)) {
    vals[root].is_output = true;
    return OPTIC_OK;
  }
  if (optic_node_opcode(m, root) != OPTIC_OP_TUPLE) {
    return decline(m, root, "is a tuple root that is not a tuple instruction");
  }
  for (int32_t k = 0; k < *n_out; k++) {
    if (optic_type_is_tuple(&rt->elements[k])) return decline(m, root, "returns nested tuples");
    vals[optic_node_operand(m, root, k)].is_output = true;
  }
  return OPTIC_OK;
}

/* Lowers instruction id at position i of the order, then releases the
 * operands it was the last reader of (views keep theirs alive). */
static optic_status lower_at(lower_ctx *c, optic_node_id id, int32_t i, ew_value *vals, size_t N, bool params_full,
                             optic_node_id as_input) {
  const optic_module_t *m = c->m;
  if (id == as_input) { /* computed outside the program (an output fusion's dot): one more input */
    int32_t k;
    optic_status st = add_input(c, optic_node_type(m, id)->dtype, NULL, &k);
    c->p->extra_input = k;
    vals[id] = (ew_value){
        .kind = V_INPUT, .index = k, .gathered = -1, .last_use = vals[id].last_use, .is_output = vals[id].is_output};
    if (optic_type_is_tuple(optic_node_type(m, id)) || shape_elems(&optic_node_type(m, id)->shape) != N) {
      st = decline(m, id, "does not span the fusion's elements");
    }
    return st;
  }
  c->pos = i;
  /* lower_node sets the node's value; its liveness (last reader, whether it
   * is an output) is the node's own and stays */
  const int32_t last_use = vals[id].last_use;
  const bool is_output = vals[id].is_output;
  optic_status st = lower_node(c, id, vals, N, params_full);
  vals[id].last_use = last_use, vals[id].is_output = is_output;
  optic_opcode op = optic_node_opcode(m, id);
  bool view = op == OPTIC_OP_RESHAPE || op == OPTIC_OP_BITCAST || op == OPTIC_OP_BROADCAST ||
              op == OPTIC_OP_TRANSPOSE || op == OPTIC_OP_TUPLE;
  int32_t no = optic_node_operand_count(m, id);
  for (int32_t k = 0; k < no && st == OPTIC_OK; k++) {
    optic_node_id o = optic_node_operand(m, id, k);
    bool again = false; /* an operand listed twice is released once */
    for (int32_t j = 0; j < k; j++) again |= optic_node_operand(m, id, j) == o;
    if (!again && vals[o].last_use == i && !view) st = release_value(c, &vals[o]);
  }
  return st;
}

/* Outputs: the last instruction writes output 0 directly when it computes
 * the only output; otherwise each output is moved (copied, filled or
 * gathered) from where its value is. */
static optic_status emit_outputs(lower_ctx *c, optic_node_id root, int32_t n_out, ew_value *vals) {
  const optic_module_t *m = c->m;
  ew_prog *p = c->p;
  bool tuple = optic_type_is_tuple(optic_node_type(m, root));
  optic_status st = OPTIC_OK;
  for (int32_t k = 0; k < n_out && st == OPTIC_OK; k++) {
    optic_node_id o = tuple ? optic_node_operand(m, root, k) : root;
    ew_value *v = &vals[o];
    optic_dtype dt = optic_node_type(m, o)->dtype;
    p->output_dtype[k] = dt;
    if (n_out == 1 && v->kind == V_REG && p->n_instr > 0 && p->ins[p->n_instr - 1].kind == EW_OP &&
        p->ins[p->n_instr - 1].dst == v->index) {
      p->ins[p->n_instr - 1].dst = -1;
      continue;
    }
    if (v->kind == V_LEAF && v->gathered < 0) {
      ew_instr g = {.kind = EW_GATHER, .in_dt = dt, .out_dt = dt, .n_src = 1, .dst = -1 - k, .walk = v->walk};
      g.src[0] = (ew_src){EW_INPUT, v->index, NULL};
      g.run = walk_merged(&v->walk);
      st = add_instr(c, &g);
      continue;
    }
    ew_instr mv = {.kind = EW_MOVE, .op = OPTIC_OP_COPY, .in_dt = dt, .out_dt = dt, .n_src = 1, .dst = -1 - k};
    if ((st = use_value(c, v, dt, &mv.src[0])) == OPTIC_OK) st = add_instr(c, &mv);
  }
  return st;
}

/* What running needs precomputed: kernels, element sizes, run divisors. */
static void finish_instrs(ew_prog *p) {
  for (int32_t i = 0; i < p->n_instr; i++) {
    ew_instr *in = &p->ins[i];
    ew_bind_kernels(in);
    for (int32_t k = 0; k < in->n_src; k++) {
      const ew_src *s = &in->src[k];
      in->src_es[k] = s->kind == EW_INPUT ? (uint8_t)optic_dtype_size(p->input_dtype[s->index]) : 0;
    }
    if (in->kind == EW_GATHER && in->run.rank > 0 && in->run.dims[in->run.rank - 1] > 0) {
      in->run_inv = 1.0 / (double)in->run.dims[in->run.rank - 1];
    }
    p->may_segment |= in->kind == EW_GATHER && in->alias != EW_ALIAS_NONE;
  }
}

/* Whether instruction in may be a step of a chain kernel call. */
static bool chainable(const ew_instr *in) {
  return in->kind == EW_OP && in->chain_op != 0 && in->wide == OPTIC_DTYPE_INVALID && in->n_src == 2;
}

static int32_t reads_of(const ew_instr *in, int32_t r) {
  int32_t n = 0;
  for (int32_t k = 0; k < in->n_src; k++) n += in->src[k].kind == EW_REG && in->src[k].index == r;
  return n;
}

/* Gives gather g a register of its own (its readers until the old one is
 * written again follow), when one is left below EW_ALIAS_REGS. */
static void rename_gather(ew_prog *p, int32_t g) {
  const int32_t d = p->ins[g].dst, nr = p->n_regs;
  if (nr >= EW_ALIAS_REGS) return;
  p->n_regs++;
  p->ins[g].dst = nr;
  for (int32_t k = g + 1; k < p->n_instr; k++) {
    ew_instr *in = &p->ins[k];
    for (int32_t j = 0; j < in->n_src; j++) {
      if (in->src[j].kind == EW_REG && in->src[j].index == d) in->src[j].index = nr;
    }
    if (in->dst == d) break;
  }
}

/* A gather between two linked chain ops (prod[i] -> i) that reuses a
 * register an earlier step of the same chain reads would end the chain
 * there (its values must not change under the pending call): it gets a
 * register of its own instead. */
static void untangle_gathers(ew_prog *p, const int32_t *prod) {
  for (int32_t i = 0; i < p->n_instr; i++) {
    if (p->ins[i].chain_from < 0) continue;
    int32_t head = prod[i];
    while (p->ins[head].chain_from >= 0) head = prod[head];
    for (int32_t g = prod[i] + 1; g < i; g++) {
      const int32_t d = p->ins[g].dst;
      if (p->ins[g].kind != EW_GATHER || d < 0 || d == p->wide_scratch) continue;
      bool read = false;
      for (int32_t k = head; k <= prod[i]; k++) read |= reads_of(&p->ins[k], d) > 0;
      if (read) rename_gather(p, g);
    }
  }
}

/* Marks each chain op whose result one later chain op alone reads (before
 * the register is written again): the reader's chain_from. */
static void find_chains(ew_prog *p, int32_t *prod) {
  const optic_chain_kernels *ck = optic_chain_kernels_get();
  /* vector kernels only: they keep the binary kernels' operand order, so NaN payloads too */
  const optic_isa isa = optic_isa_selected();
  p->chain = ck != NULL && ck->isa_of_chain == isa && isa != OPTIC_ISA_SCALAR ? ck->chain : NULL;
  for (int32_t i = 0; i < p->n_instr; i++) p->ins[i].chain_from = -1, p->ins[i].chain_link = false;
  if (p->chain == NULL) return;
  for (int32_t j = 0; j < p->n_instr; j++) {
    const int32_t r = p->ins[j].dst;
    if (!chainable(&p->ins[j]) || r < 0 || r >= EW_ALIAS_REGS || r == p->wide_scratch) continue;
    int32_t reader = -1, n_reads = 0;
    for (int32_t i = j + 1; i < p->n_instr; i++) {
      int32_t c = reads_of(&p->ins[i], r);
      n_reads += c;
      reader = c ? i : reader;
      if (p->ins[i].dst == r) break; /* written again: later reads see another value */
    }
    if (n_reads != 1 || !chainable(&p->ins[reader])) continue;
    ew_instr *in = &p->ins[reader];
    in->chain_from = (int8_t)(in->src[0].kind == EW_REG && in->src[0].index == r ? 0 : 1);
    p->ins[j].chain_link = true;
    prod[reader] = j;
  }
  untangle_gathers(p, prod);
  const ew_instr *last = p->n_instr > 0 ? &p->ins[p->n_instr - 1] : NULL;
  p->chain_streams = p->n_outputs == 1 && last != NULL && chainable(last) && last->dst == -1;
}

static optic_status ew_lower_full(const optic_module_t *m, optic_comp_id comp, size_t N, bool params_full,
                                  optic_node_id as_input, optic_node_id root_override, ew_prog **out) {
  *out = NULL;
  optic_schedule_t *s = NULL;
  optic_status st = optic_schedule_create(m, comp, &s);
  if (st != OPTIC_OK) return st;
  int32_t n;
  const optic_node_id *order = optic_schedule_order(s, &n);
  optic_node_id root = root_override != OPTIC_NO_NODE ? root_override : optic_computation_root(m, comp);
  int32_t max_id = 0;
  for (int32_t i = 0; i < n; i++) max_id = order[i] > max_id ? order[i] : max_id;
  ew_value *vals = calloc((size_t)max_id + 1, sizeof *vals);
  ew_prog *p = calloc(1, sizeof *p);
  /* Only root's dependencies are lowered (all of them unless root_override). */
  bool *needed = calloc((size_t)max_id + 1, sizeof *needed);
  optic_node_id *stack = calloc((size_t)n + 1, sizeof *stack);
  lower_ctx c = {.m = m, .p = p};
  if (vals == NULL || p == NULL || needed == NULL || stack == NULL) {
    st = oom();
    goto done;
  }
  mark_needed(m, root, n, needed, stack);
  p->extra_input = -1;
  p->wide_scratch = -1;
  int32_t np = optic_computation_parameter_count(m, comp);
  for (int32_t k = 0; k < np && st == OPTIC_OK; k++) {
    int32_t idx;
    st = add_input(&c, OPTIC_DTYPE_INVALID, NULL, &idx);
  }
  if (np > 63) st = optic_fail(OPTIC_ERR_UNSUPPORTED, EW_DECLINE_PREFIX "more than 63 parameters");
  for (int32_t i = 0; i < n; i++) vals[order[i]].last_use = -1;
  for (int32_t i = 0; i < n; i++) {
    if (needed[order[i]]) note_uses(m, order[i], i, vals);
  }
  int32_t n_out;
  optic_status mo = mark_outputs(m, root, vals, &n_out);
  if (mo != OPTIC_OK) {
    st = mo;
    goto done;
  }
  p->n_outputs = n_out;
  p->output_dtype = calloc((size_t)n_out + 1, sizeof *p->output_dtype);
  if (p->output_dtype == NULL && st == OPTIC_OK) st = oom();
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    optic_node_id id = order[i];
    if (!needed[id]) continue;
    if (optic_node_opcode(m, id) == OPTIC_OP_TUPLE && id != root) {
      st = decline(m, id, "is a tuple inside the computation");
      break;
    }
    st = lower_at(&c, id, i, vals, N, params_full, as_input);
  }
  if (st == OPTIC_OK) st = emit_outputs(&c, root, n_out, vals);
  if (st == OPTIC_OK) st = ew_widen_halves(p);
  if (st == OPTIC_OK) finish_instrs(p);
  if (st == OPTIC_OK && p->n_instr > 0) {
    int32_t *prod = calloc((size_t)p->n_instr, sizeof *prod);
    if (prod == NULL) st = oom();
    else find_chains(p, prod);
    free(prod);
  }
done:
  free(c.free_regs);
  free(needed);
  free(stack);
  free(vals);
  optic_schedule_destroy(s);
  if (st != OPTIC_OK) {
    ew_prog_destroy(p);
    return st;
  }
  *out = p;
  return OPTIC_OK;
}

optic_status ew_lower(const optic_module_t *m, optic_comp_id comp, size_t elements, ew_prog **out) {
  return ew_lower_ex(m, comp, elements, false, out);
}

/* The source pointers of instruction in for block lo, and which are one
 * element repeated (the mask ew_apply takes). Registers in `aliased` stand for
 * memory elsewhere (at[r]; scalar: one element) instead of their own block. */
static unsigned block_sources(const ew_prog *p, const ew_instr *in, const void *const *inputs, uint64_t scalar_inputs,
                              size_t lo, unsigned char *rb, size_t reg_bytes, uint64_t aliased, uint64_t scalar_alias,
                              const void *const *at, const void **src) {
  unsigned mask = 0;
  for (int32_t k = 0; k < in->n_src; k++) {
    const ew_src *s = &in->src[k];
    switch (s->kind) {
      case EW_REG:
        if (s->index < EW_ALIAS_REGS && ((aliased >> s->index) & 1u)) {
          src[k] = at[s->index];
          mask |= (unsigned)((scalar_alias >> s->index) & 1u) << k;
        } else {
          src[k] = rb + (size_t)s->index * reg_bytes;
        }
        break;
      case EW_SCALAR:
        src[k] = s->value ? s->value : inputs[s->index];
        mask |= 1u << k;
        break;
      default: {
        const void *base = p->input_const[s->index] ? p->input_const[s->index] : inputs[s->index];
        if ((scalar_inputs >> s->index) & 1u) {
          src[k] = base;
          mask |= 1u << k;
        } else if (in->kind == EW_GATHER) {
          src[k] = base;
        } else {
          src[k] = (const unsigned char *)base + lo * in->src_es[k];
        }
        break;
      }
    }
  }
  return mask;
}

/* Elements from lo to the end of the run of gather g's merged walk that
 * holds element lo (rank 0: all of them), and the offset of element lo. The
 * division by the run's extent uses the precomputed reciprocal for rank 2. */
static size_t gather_run_left(const ew_instr *g, size_t lo, int64_t *off) {
  const exec_walk *w = &g->run;
  if (w->rank == 0) {
    *off = w->base;
    return SIZE_MAX;
  }
  if (w->rank == 1) {
    *off = w->base + (int64_t)lo * w->strides[0];
    return lo < (size_t)w->dims[0] ? (size_t)w->dims[0] - lo : 0;
  }
  const size_t n = (size_t)w->dims[w->rank - 1];
  if (n == 0) return 0;
  if (w->rank > 2 || lo >= ((size_t)1 << 50)) return walk_one_run(w, lo, 1, off) ? n - lo % n : 0;
  size_t q = (size_t)((double)lo * g->run_inv), r; /* within 1 of lo / n: corrected below */
  if (q * n > lo) q--;
  r = lo - q * n;
  if (r >= n) q++, r -= n;
  *off = w->base + (int64_t)q * w->strides[0] + (int64_t)r * w->strides[1];
  return n - r;
}

/* Runs one op on the block: through the kernels bound at lowering when the
 * operands' form has one (the same call ew_apply would make), else ew_apply. */
static void run_op(const ew_instr *in, size_t len, const void *const *src, unsigned mask, void *dst) {
  if (in->k_vv != NULL && mask == 0) {
    in->k_vv(len, src[0], src[1], dst);
  } else if (in->k_vv != NULL && mask == 2u) {
    in->k_vs(len, src[0], *(const float *)src[1], dst);
  } else if (in->k_vv != NULL && mask == 1u && in->k_comm) {
    in->k_vs(len, src[1], *(const float *)src[0], dst);
  } else if (in->k_un != NULL && mask == 0) {
    in->k_un(len, src[0], dst);
  } else {
    ew_apply(in->op, in->cmp, in->in_dt, in->out_dt, len, src, mask, dst);
  }
}

/* A gather of halves widened into f32 register y, run by run of its merged
 * walk: a broadcast run is one value filled, a contiguous run widened in
 * bulk, a strided one element by element. */
static void wide_gather(const ew_instr *g, size_t lo, size_t len, const void *src, bool scalar, float *y) {
  const unsigned char *s = src;
  const int32_t last = g->run.rank - 1;
  const int64_t st = last >= 0 ? g->run.strides[last] : 0;
  for (size_t k = 0; k < len;) {
    int64_t off = 0;
    size_t n = scalar ? len - k : gather_run_left(g, lo + k, &off);
    if (n == 0) return; /* past the walk: not reached for a domain the walk spans */
    n = n < len - k ? n : len - k;
    if (scalar || st == 0) {
      float v;
      ew_half_widen(g->wide, 1, s + 2 * off, &v);
      for (size_t i = 0; i < n; i++) y[k + i] = v;
    } else if (st == 1) {
      ew_half_widen(g->wide, n, s + 2 * off, y + k);
    } else {
      for (size_t i = 0; i < n; i++) ew_half_widen(g->wide, 1, s + 2 * (off + (int64_t)i * st), y + k + i);
    }
    k += n;
  }
}

/* An instruction of a widened program (exec/ewhalf.c) that converts:
 * widening an input or a gather, rounding an op's result, narrowing into an
 * output (wide_scratch: the program's wide_scratch register). */
static void run_wide(const ew_instr *in, size_t lo, size_t len, const void *const *src, unsigned mask,
                     unsigned char *wide_scratch, void *dst) {
  switch (in->kind) {
    case EW_WIDEN:
      if (mask & 1u) {
        float v;
        ew_half_widen(in->wide, 1, src[0], &v);
        for (size_t i = 0; i < len; i++) ((float *)dst)[i] = v;
      } else {
        ew_half_widen(in->wide, len, src[0], dst);
      }
      return;
    case EW_GATHER: wide_gather(in, lo, len, src[0], mask & 1u, dst); return;
    case EW_MOVE: ew_half_narrow_exact(in->wide, len, src[0], dst); return;
    default:
      if (in->dst >= 0) {
        run_op(in, len, src, mask, dst);
        if (!in->wide_exact) ew_half_round(in->wide, len, dst);
      } else {
        float *t = (float *)(void *)wide_scratch;
        run_op(in, len, src, mask, t);
        if (in->wide_exact) ew_half_narrow_exact(in->wide, len, t, dst);
        else ew_half_narrow(in->wide, len, t, dst);
      }
      return;
  }
}

/* Chain ops run so far only as steps of one pending chain kernel call:
 * their results (but the last) are never stored. The call is made (flushed)
 * before anything could change what its steps read, or read what it has not
 * stored yet, and at the segment's end. */
typedef struct ew_chain {
  int32_t n;   /* steps (0: nothing pending) */
  int32_t dst; /* where the last step's result goes: register, or -1 - k for output k */
  const ew_instr *head;
  const void *head_src[3];
  unsigned head_mask;
  const float *a;
  uint64_t reads; /* registers whose own blocks the steps read */
  optic_f32_chain_step st[OPTIC_CHAIN_MAX_STEPS];
} ew_chain;

static void chain_flush(const ew_prog *p, ew_chain *ch, void *const *outputs, unsigned char *rb, size_t reg_bytes,
                        size_t len, bool stream) {
  if (ch->n == 0) return;
  void *dst = ch->dst >= 0 ? (void *)(rb + (size_t)ch->dst * reg_bytes) : outputs[-1 - ch->dst];
  const bool nt = stream && ch->dst < 0;
  if (ch->n == 1 && !nt) run_op(ch->head, len, ch->head_src, ch->head_mask, dst); /* the op as it runs alone */
  else p->chain(len, ch->a, ch->st, ch->n, dst, nt);
  ch->n = 0, ch->reads = 0;
}

/* Whether source k of in is a register's own block (bit in *reads), or
 * false when it cannot be tracked (a register past the mask). */
static bool note_read(const ew_instr *in, int32_t k, uint64_t aliased, uint64_t *reads) {
  const ew_src *s = &in->src[k];
  if (s->kind != EW_REG) return true;
  if (s->index >= EW_ALIAS_REGS) return false;
  if (!((aliased >> s->index) & 1u)) *reads |= (uint64_t)1 << s->index;
  return true;
}

/* Appends in as a step whose running value is source acc (the other source
 * is the step's operand, in the order the op alone would use). */
static bool chain_step(ew_chain *ch, const ew_instr *in, int32_t acc, const void *const *src, unsigned mask,
                       uint64_t aliased) {
  const int32_t o = 1 - acc;
  uint64_t reads = ch->reads;
  if (ch->n == OPTIC_CHAIN_MAX_STEPS || !note_read(in, o, aliased, &reads)) return false;
  const bool scalar = (mask >> o) & 1u;
  /* alone: vv(src0, src1); vs(src0, s1); a commutative vs(src1, s0); else s0 op src1 */
  const bool acc_first = acc == 0 || (scalar && in->k_comm);
  optic_f32_chain_step *st = &ch->st[ch->n++];
  *st = (optic_f32_chain_step){.op = (optic_binary_op)(in->chain_op - 1),
                               .flags = (acc_first ? OPTIC_CHAIN_ACC_FIRST : 0u) | (scalar ? OPTIC_CHAIN_SCALAR : 0u)};
  if (scalar) st->s = *(const float *)src[o];
  else st->b = src[o];
  ch->reads = reads;
  ch->dst = in->dst;
  return true;
}

/* Takes chain op in into the pending chain (continuing it, or flushing it
 * and starting one); false when in must run alone. */
static bool chain_take(const ew_prog *p, ew_chain *ch, const ew_instr *in, const void *const *src, unsigned mask,
                       uint64_t aliased, void *const *outputs, unsigned char *rb, size_t reg_bytes, size_t len,
                       bool stream) {
  const int32_t from = in->chain_from;
  if (ch->n > 0 && from >= 0 && in->src[from].index == ch->dst && chain_step(ch, in, from, src, mask, aliased)) {
    return true;
  }
  chain_flush(p, ch, outputs, rb, reg_bytes, len, stream);
  const int32_t acc = (mask & 1u) ? 1 : 0;
  if (mask == 3u || !note_read(in, acc, aliased, &ch->reads)) return false;
  ch->a = src[acc];
  if (!chain_step(ch, in, acc, src, mask, aliased)) {
    ch->n = 0, ch->reads = 0;
    return false;
  }
  ch->head = in, ch->head_mask = mask;
  for (int32_t k = 0; k < 3; k++) ch->head_src[k] = src[k];
  return true;
}

/* Whether instruction in, run now, could change what the pending steps
 * read or read what they have not stored yet: it writes an output (which
 * may be an input's memory), a register a step reads, or reads the pending
 * result. */
static bool chain_conflicts(const ew_chain *ch, const ew_instr *in) {
  if (ch->n == 0) return false;
  if (in->dst < 0 || in->dst == ch->dst || in->dst >= EW_ALIAS_REGS || ((ch->reads >> in->dst) & 1u)) return true;
  return ch->dst >= 0 && reads_of(in, ch->dst) > 0;
}

/* One segment [lo, lo + len) of a block, in which every aliasing gather
 * whose run holds at least len elements from lo reads through the alias. */
static void run_segment(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs,
                        size_t lo, size_t len, void *regs, size_t reg_bytes, bool stream) {
  unsigned char *rb = regs;
  uint64_t aliased = 0, scalar_alias = 0;
  const void *at[EW_ALIAS_REGS];
  ew_chain ch; /* only n and reads need a value: the rest is written before it is read */
  ch.n = 0, ch.reads = 0;
  for (int32_t i = 0; i < p->n_instr; i++) {
    const ew_instr *in = &p->ins[i];
    const void *src[3] = {NULL, NULL, NULL};
    unsigned mask = block_sources(p, in, inputs, scalar_inputs, lo, rb, reg_bytes, aliased, scalar_alias, at, src);
    /* a chain op that neither links to another nor streams its output runs alone */
    const bool wanted = in->chain_link || in->chain_from >= 0 || (stream && in->dst < 0);
    const bool taken = p->chain != NULL && wanted && chainable(in) &&
                       chain_take(p, &ch, in, src, mask, aliased, outputs, rb, reg_bytes, len, stream);
    if (!taken && chain_conflicts(&ch, in)) chain_flush(p, &ch, outputs, rb, reg_bytes, len, stream);
    if (in->dst >= 0 && in->dst < EW_ALIAS_REGS) { /* the register gets its own values (or a new alias) */
      aliased &= ~((uint64_t)1 << in->dst);
      scalar_alias &= ~((uint64_t)1 << in->dst);
    }
    if (taken) {
      if (ch.dst < 0) chain_flush(p, &ch, outputs, rb, reg_bytes, len, stream); /* nothing reads an output */
      continue;
    }
    int64_t off;
    if (in->kind == EW_GATHER && in->alias != EW_ALIAS_NONE && gather_run_left(in, lo, &off) >= len) {
      /* a scalar input (its mask bit) is one element whatever the walk says */
      const bool one = in->alias == EW_ALIAS_SCALAR || (mask & 1u);
      at[in->dst] = (const unsigned char *)src[0] + ((mask & 1u) ? 0 : off * (int64_t)optic_dtype_size(in->out_dt));
      aliased |= (uint64_t)1 << in->dst;
      if (one) scalar_alias |= (uint64_t)1 << in->dst;
      continue;
    }
    void *dst = in->dst >= 0 ? (void *)(rb + (size_t)in->dst * reg_bytes) : outputs[-1 - in->dst];
    if (in->wide != OPTIC_DTYPE_INVALID) {
      unsigned char *scratch = rb + (size_t)(p->wide_scratch >= 0 ? p->wide_scratch : 0) * reg_bytes;
      run_wide(in, lo, len, src, mask, scratch, dst);
    } else if (in->kind == EW_GATHER) {
      walk_gather(&in->run, optic_dtype_size(in->out_dt), src[0], lo, len, dst); /* merged: fewer dims */
    } else {
      run_op(in, len, src, mask, dst);
    }
  }
  chain_flush(p, &ch, outputs, rb, reg_bytes, len, stream);
}

/* Shortest run, from lo, of p's aliasing gathers, among runs of at least
 * EW_SEGMENT_MIN elements (shorter runs are gathered instead); len if none
 * ends sooner. */
static size_t segment_len(const ew_prog *p, size_t lo, size_t len) {
  size_t seg = len;
  if (!p->may_segment) return seg;
  for (int32_t i = 0; i < p->n_instr; i++) {
    const ew_instr *in = &p->ins[i];
    int64_t off;
    if (in->kind != EW_GATHER || in->alias == EW_ALIAS_NONE) continue;
    size_t left = gather_run_left(in, lo, &off);
    if (left >= EW_SEGMENT_MIN && left < seg) seg = left;
  }
  return seg;
}

/* A block whose aliasing gathers' runs end inside it runs as segments cut
 * at those ends: each op then reads a repeated element or contiguous input
 * in place (a kernel call per segment) instead of a copy of the block. */
void ew_run_block(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs, size_t lo,
                  size_t len, void *regs) {
  ew_run_block_wide(p, inputs, scalar_inputs, outputs, lo, len, regs, EXEC_BLOCK * 8);
}

void ew_run_block_wide(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs,
                       size_t lo, size_t len, void *regs, size_t reg_bytes) {
  ew_run_block_stream(p, inputs, scalar_inputs, outputs, lo, len, regs, reg_bytes, false);
}

void ew_run_block_stream(const ew_prog *p, const void *const *inputs, uint64_t scalar_inputs, void *const *outputs,
                         size_t lo, size_t len, void *regs, size_t reg_bytes, bool stream) {
  stream = stream && p->chain_streams;
  size_t seg = segment_len(p, lo, len);
  if (seg >= len || p->n_outputs > EW_SEGMENT_OUTPUTS) {
    run_segment(p, inputs, scalar_inputs, outputs, lo, len, regs, reg_bytes, stream);
    return;
  }
  void *outs[EW_SEGMENT_OUTPUTS];
  for (size_t done = 0; done < len; done += seg) {
    seg = segment_len(p, lo + done, len - done);
    for (int32_t k = 0; k < p->n_outputs; k++) {
      outs[k] = (unsigned char *)outputs[k] + done * optic_dtype_size(p->output_dtype[k]);
    }
    run_segment(p, inputs, scalar_inputs, outs, lo + done, seg, regs, reg_bytes, stream);
  }
}
