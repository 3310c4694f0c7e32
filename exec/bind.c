/* Binding: a program (or a module, for tests) becomes lists of steps with
 * resolved buffer references, per-op plans (dot, convolution, block
 * programs), scratch offsets and barrier flags. Everything a run needs is
 * decided here, once per program per context; unsupported op/dtype pairs
 * fail here, before any thread starts. Never runs anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

static optic_status oom(void) { return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory"); }

static size_t type_elems(const optic_type *t) {
  size_t n = 1;
  for (int32_t i = 0; i < t->shape.rank; i++) n *= (size_t)t->shape.dims[i];
  return n;
}

static int32_t leaf_count(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return 1;
  int32_t n = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) n += leaf_count(&t->elements[i]);
  return n;
}

void exec_step_free(exec_step *s) {
  free(s->in_first);
  free(s->operand_shape);
  free(s->operand_dtype);
  free(s->operand_elems);
  free(s->in);
  free(s->out);
  free(s->branches);
  ew_prog_destroy(s->prog);
  free(s->dot);
  free(s->conv);
  free(s->conv_bf16);
  for (int32_t i = 0; i < s->n_members; i++) exec_step_free(&s->members[i]);
  free(s->members);
  free(s->rg_walks);
  free(s->owned_name);
}

static void seq_destroy(exec_seq *q) {
  if (q == NULL) return;
  for (int32_t i = 0; i < q->n_steps; i++) exec_step_free(&q->steps[i]);
  free(q->steps);
  free(q->root);
  free(q->root_bytes);
  free(q->root_over_param);
  optic_buffer_plan_destroy(q->owned_plan);
  free(q);
}

void exec_bound_destroy(exec_bound *b) {
  if (b == NULL) return;
  for (int32_t c = 0; b->seqs && c < b->n_comps; c++) seq_destroy(b->seqs[c]);
  free(b->seqs);
  free(b->param_leaf_base);
  free(b->consts);
  free(b->consts_max_hi);
  free(b);
}

typedef struct bind_ctx {
  exec_bound *b;
} bind_ctx;

static optic_status slot_ref(const exec_bound *b, const optic_buffer_plan_t *plan, optic_node_id id, int32_t leaf,
                             exec_ref *out) {
  optic_buffer_slot s;
  optic_status st = optic_buffer_plan_slot(plan, id, leaf, &s);
  if (st != OPTIC_OK) return st;
  *out = (exec_ref){.size = s.size};
  switch (s.kind) {
    case OPTIC_BUFFER_ARENA: out->kind = REF_ARENA, out->offset = s.offset; break;
    case OPTIC_BUFFER_PARAMETER:
      out->kind = REF_PARAM, out->index = b->param_leaf_base[s.source] + s.source_leaf;
      break;
    case OPTIC_BUFFER_CONSTANT:
      out->kind = REF_CONST, out->data = optic_node_constant_data(b->m, s.source, NULL);
      break;
    default: out->kind = REF_OUTPUT, out->index = s.output_leaf; break;
  }
  return OPTIC_OK;
}

static optic_status bind_seq(bind_ctx *c, optic_comp_id comp, exec_seq **out);

/* The kernels' convolution descriptor from the instruction's attributes
 * (optic_node_attrs) and operand shapes. */
static void conv_desc_of(const optic_module_t *m, optic_node_id id, const optic_attrs_convolution *c,
                         optic_conv_desc *d) {
  optic_conv_desc_init(d);
  int32_t ns = c->spatial_count;
  d->dn.nspatial = ns;
  d->feature_group_count = c->feature_group_count, d->batch_group_count = c->batch_group_count;
  d->dn.in_batch = c->input_batch, d->dn.in_feature = c->input_feature;
  d->dn.k_in = c->kernel_input_feature, d->dn.k_out = c->kernel_output_feature;
  d->dn.out_batch = c->output_batch, d->dn.out_feature = c->output_feature;
  for (int32_t s = 0; s < ns; s++) {
    const optic_window_dim *w = &c->window[s];
    d->dn.in_spatial[s] = c->input_spatial[s], d->dn.k_spatial[s] = c->kernel_spatial[s];
    d->dn.out_spatial[s] = c->output_spatial[s];
    d->stride[s] = w->stride, d->pad_lo[s] = w->pad_low, d->pad_hi[s] = w->pad_high;
    d->lhs_dilation[s] = w->base_dilation, d->rhs_dilation[s] = w->window_dilation, d->reverse[s] = w->reversal;
  }
  d->input = optic_node_type(m, optic_node_operand(m, id, 0))->shape;
  d->kernel = optic_node_type(m, optic_node_operand(m, id, 1))->shape;
}

static optic_status unsupported(const optic_module_t *m, optic_node_id id, const char *why) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "runtime: %s %s: %s", optic_opcode_name(optic_node_opcode(m, id)),
                    optic_node_name(m, id), why);
}

/* The lowering of id's called computation comp declined (UNSUPPORTED, its
 * reason in the last error): the same status, naming id, comp and the
 * lowering's reason once (optic_fail may format from the last error). */
static optic_status lowering_declined(const optic_module_t *m, optic_node_id id, optic_comp_id comp) {
  const char *reason = optic_last_error();
  if (strncmp(reason, EW_DECLINE_PREFIX, strlen(EW_DECLINE_PREFIX)) == 0) reason += strlen(EW_DECLINE_PREFIX);
  return optic_fail(
      OPTIC_ERR_UNSUPPORTED, "runtime: %s %s: its computation '%s' does not run as an elementwise loop: %s",
      optic_opcode_name(optic_node_opcode(m, id)), optic_node_name(m, id), optic_computation_name(m, comp), reason);
}

/* The f32 binary opcode of a reducer that is exactly op(p0, p1), else 0. */
/* The binary opcode when comp is root = op(p0, p1), op add/multiply/maximum/
 * minimum, over dtype dt; 0 otherwise. */
static int one_op_reducer(const optic_module_t *m, optic_comp_id comp, optic_dtype dt) {
  optic_node_id root = optic_computation_root(m, comp);
  optic_opcode op = optic_node_opcode(m, root);
  if (op != OPTIC_OP_ADD && op != OPTIC_OP_MULTIPLY && op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) return 0;
  if (optic_node_type(m, root)->dtype != dt || optic_computation_parameter_count(m, comp) != 2) return 0;
  if (optic_node_operand(m, root, 0) != optic_computation_parameter(m, comp, 0) ||
      optic_node_operand(m, root, 1) != optic_computation_parameter(m, comp, 1)) {
    return 0;
  }
  return (int)op;
}

static int fast_reducer(const optic_module_t *m, optic_comp_id comp) { return one_op_reducer(m, comp, OPTIC_F32); }

static size_t add_scratch(exec_bound *b, size_t bytes) {
  size_t off = b->scratch_total;
  b->scratch_total += ALIGN64(bytes);
  return off;
}

/* A dot or convolution with f16/bf16 operands or result runs in f32 (as
 * XLA's CPU backend does): scratch for each widened array. */
static optic_status plan_widen(exec_bound *b, const optic_module_t *m, optic_node_id id, bool keep_bf16_inputs,
                               bool keep_result, exec_step *s) {
  const optic_type *t[3] = {optic_node_type(m, optic_node_operand(m, id, 0)),
                            optic_node_type(m, optic_node_operand(m, id, 1)), optic_node_type(m, id)};
  s->widen = false;
  for (int k = 0; k < 3; k++) {
    optic_dtype d = t[k]->dtype;
    if (d != OPTIC_F32 && d != OPTIC_F16 && d != OPTIC_BF16) {
      return unsupported(m, id, "contractions run on f32, f16 and bf16 only");
    }
    s->widen_dt[k] = d;
    s->widen_elems[k] = type_elems(t[k]);
    s->widen_offset[k] = SIZE_MAX;
    if (d != OPTIC_F32 && !(k < 2 && keep_bf16_inputs) && !(k == 2 && keep_result)) {
      s->widen = true;
      s->widen_offset[k] = add_scratch(b, s->widen_elems[k] * sizeof(float));
    }
  }
  return OPTIC_OK;
}

/* A parameter's number (the caller checked that id is a parameter). */
static int32_t parameter_number(const optic_module_t *m, optic_node_id id) {
  optic_node_attrs_t a;
  return optic_node_attrs(m, id, &a) == OPTIC_OK ? (int32_t)a.parameter.number : -1;
}

/* A convolution of two bf16 operands with an f32 or bf16 result runs on the
 * bf16 GEMM where there is one and the shape suits it (kernels/conv_bf16.h):
 * s->conv_bf16 is allocated here and planned by plan_contraction. */
static optic_status want_bf16_conv(const optic_module_t *m, optic_node_id id, exec_step *s) {
  optic_node_attrs_t a;
  optic_status st = optic_node_attrs(m, id, &a);
  if (st != OPTIC_OK) return st;
  optic_conv_desc d;
  conv_desc_of(m, id, &a.convolution, &d);
  /* the compiler's estimate makes the same call (graph/estimate_contraction.c) */
  if (!optic_conv_bf16_chosen(&d, optic_node_type(m, optic_node_operand(m, id, 0))->dtype,
                              optic_node_type(m, optic_node_operand(m, id, 1))->dtype, optic_node_type(m, id)->dtype))
    return OPTIC_OK;
  if ((s->conv_bf16 = malloc(sizeof *s->conv_bf16)) == NULL) return oom();
  return OPTIC_OK;
}

/* A bf16 depthwise convolution the grouped vector loops read in place
 * (kernels/conv_bf16.h optic_conv_grouped_bf16_chosen; the estimate makes
 * the same call): sets s->conv_bf16_grouped. */
static optic_status want_grouped_bf16(const exec_bound *b, const optic_module_t *m, optic_node_id id, exec_step *s) {
  optic_node_attrs_t a;
  optic_status st = optic_node_attrs(m, id, &a);
  if (st != OPTIC_OK) return st;
  optic_conv_desc d;
  conv_desc_of(m, id, &a.convolution, &d);
  optic_conv_plan p;
  if (optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, b->threads, &p) != OPTIC_OK) return OPTIC_OK; /* planned again */
  s->conv_bf16_grouped = optic_conv_grouped_bf16_chosen(&p, optic_node_type(m, optic_node_operand(m, id, 0))->dtype,
                                                        optic_node_type(m, optic_node_operand(m, id, 1))->dtype,
                                                        optic_node_type(m, id)->dtype);
  return OPTIC_OK;
}

/* Plans dot or convolution `id` into s (s->dot or s->conv) with its scratch. */
static optic_status plan_contraction(exec_bound *b, const optic_module_t *m, optic_node_id id, exec_step *s) {
  optic_node_attrs_t a;
  optic_status st = optic_node_attrs(m, id, &a);
  if (st != OPTIC_OK) return st;
  if (a.kind == OPTIC_ATTRS_DOT) {
    const optic_type *l = optic_node_type(m, optic_node_operand(m, id, 0));
    const optic_type *r = optic_node_type(m, optic_node_operand(m, id, 1));
    if ((s->dot = malloc(sizeof *s->dot)) == NULL) return oom();
    if ((st = optic_dot_plan(&l->shape, &r->shape, &a.dot, s->dot)) != OPTIC_OK) return st;
    s->scratch_bytes = s->bf16_dot ? optic_dot_bf16_scratch_bytes(s->dot) : s->dot->scratch_bytes;
  } else {
    optic_conv_desc d;
    conv_desc_of(m, id, &a.convolution, &d);
    if (s->conv_bf16 != NULL) {
      optic_bf16_kernel k = optic_conv_bf16_kernel();
      st = optic_conv_bf16_plan_make(&d, optic_node_type(m, id)->dtype, k, b->threads, s->conv_bf16);
      if (st != OPTIC_OK) return st;
      s->scratch_bytes = s->conv_bf16->scratch_bytes;
      s->scratch_offset = add_scratch(b, s->scratch_bytes);
      return OPTIC_OK;
    }
    if ((s->conv = malloc(sizeof *s->conv)) == NULL) return oom();
    if ((st = optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, b->threads, s->conv)) != OPTIC_OK) return st;
    s->scratch_bytes = s->conv->scratch_bytes;
  }
  s->scratch_offset = add_scratch(b, s->scratch_bytes);
  b->has_blas = true;
  return OPTIC_OK;
}

/* An output fusion whose dot/convolution reads two fusion parameters and
 * whose epilogue lowers to a block program: planned here, run by
 * exec_op_output_fusion. UNSUPPORTED (no message to show) otherwise. */
static optic_status bind_output_fusion(bind_ctx *c, optic_comp_id fused, exec_step *s) {
  exec_bound *b = c->b;
  const optic_module_t *m = b->m;
  optic_schedule_t *sch = NULL;
  optic_status st = optic_schedule_create(m, fused, &sch);
  if (st != OPTIC_OK) return st;
  int32_t n;
  const optic_node_id *order = optic_schedule_order(sch, &n);
  optic_node_id dot = OPTIC_NO_NODE;
  for (int32_t i = 0; i < n; i++) {
    optic_opcode op = optic_node_opcode(m, order[i]);
    if (op == OPTIC_OP_DOT || op == OPTIC_OP_CONVOLUTION) dot = order[i];
  }
  optic_schedule_destroy(sch);
  if (dot == OPTIC_NO_NODE) return optic_fail(OPTIC_ERR_UNSUPPORTED, "output fusion without a dot");
  int32_t ops[2];
  for (int32_t k = 0; k < 2; k++) {
    optic_node_id o = optic_node_operand(m, dot, k);
    if (optic_node_opcode(m, o) != OPTIC_OP_PARAMETER) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "output fusion: the dot reads a computed value");
    }
    ops[k] = parameter_number(m, o);
    if (optic_node_type(m, o)->dtype != OPTIC_F32) return optic_fail(OPTIC_ERR_UNSUPPORTED, "output fusion: not f32");
  }
  const optic_type *t = s->type;
  if (t->dtype != OPTIC_F32 || optic_node_type(m, dot)->dtype != OPTIC_F32) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "output fusion: not f32");
  }
  if ((st = ew_lower_epilogue(m, fused, type_elems(t), dot, &s->prog)) != OPTIC_OK) return st;
  /* The epilogue rewrites the dot's result in place, block by block: it may
   * read it only elementwise (a transpose of it would read other blocks). */
  for (int32_t i = 0; i < s->prog->n_instr; i++) {
    const ew_instr *in = &s->prog->ins[i];
    if (in->kind == EW_GATHER && in->src[0].index == s->prog->extra_input) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "output fusion: the epilogue rearranges the dot's result");
    }
  }
  if ((st = plan_contraction(b, m, dot, s)) != OPTIC_OK) return st;
  s->epi_lhs = ops[0], s->epi_rhs = ops[1];
  return OPTIC_OK;
}

/* An input fusion whose root reduces the trailing dims of a computed input
 * with an f32 add/multiply/maximum/minimum reducer and a parameter as init:
 * the input lowers to a block program, run by exec_op_input_fusion.
 * UNSUPPORTED (no message to show) otherwise. */
static optic_status bind_input_fusion(bind_ctx *c, optic_comp_id fused, exec_step *s) {
  const optic_module_t *m = c->b->m;
  optic_node_id r = optic_computation_root(m, fused);
  if (optic_node_opcode(m, r) != OPTIC_OP_REDUCE || optic_node_operand_count(m, r) != 2) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "input fusion: not a one-input reduce");
  }
  int fast = fast_reducer(m, optic_node_called(m, r, 0));
  optic_node_id in = optic_node_operand(m, r, 0), init = optic_node_operand(m, r, 1);
  const bool init_const = optic_node_opcode(m, init) == OPTIC_OP_CONSTANT; /* cloned into the fusion */
  if (!fast || (optic_node_opcode(m, init) != OPTIC_OP_PARAMETER && !init_const) || s->type->dtype != OPTIC_F32) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "input fusion: not a fast f32 reducer with a parameter or constant init");
  }
  const optic_shape *is = &optic_node_type(m, in)->shape;
  optic_node_attrs_t ra;
  optic_status st = optic_node_attrs(m, r, &ra);
  if (st != OPTIC_OK) return st;
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < ra.reduce.count; i++) reduced[ra.reduce.dims[i]] = true;
  size_t rows = 1, len = 1;
  for (int32_t d = 0; d < is->rank; d++) {
    if (reduced[d]) {
      len *= (size_t)is->dims[d];
    } else {
      if (d > 0 && reduced[d - 1]) return optic_fail(OPTIC_ERR_UNSUPPORTED, "input fusion: not trailing dims");
      rows *= (size_t)is->dims[d];
    }
  }
  if ((st = ew_lower_subtree(m, fused, in, rows * len, &s->prog)) != OPTIC_OK) return st;
  s->input_fusion = true;
  s->reduce_fast = fast;
  if (init_const) {
    s->in_init = -1;
    memcpy(&s->in_init_value, optic_node_constant_data(m, init, NULL), sizeof s->in_init_value);
  } else {
    s->in_init = parameter_number(m, init);
  }
  s->in_rows = rows, s->in_len = len;
  s->in_sumsq = exec_input_fusion_sumsq_input(s);
  return OPTIC_OK;
}

/* The step's header, operand shapes and buffer references, and its cost
 * estimate: what every step needs whatever its opcode. */
static optic_status bind_operands(bind_ctx *c, const optic_buffer_plan_t *plan, optic_node_id id, exec_step *s) {
  exec_bound *b = c->b;
  const optic_module_t *m = b->m;
  optic_status st = OPTIC_OK;
  s->id = id;
  s->op = optic_node_opcode(m, id);
  s->type = optic_node_type(m, id);
  s->name = optic_node_name(m, id);
  s->n_operands = optic_node_operand_count(m, id);
  s->in_first = calloc((size_t)s->n_operands + 1, sizeof *s->in_first);
  s->operand_shape = calloc((size_t)s->n_operands + 1, sizeof *s->operand_shape);
  s->operand_dtype = calloc((size_t)s->n_operands + 1, sizeof *s->operand_dtype);
  s->operand_elems = calloc((size_t)s->n_operands + 1, sizeof *s->operand_elems);
  if (s->in_first == NULL || s->operand_shape == NULL || s->operand_dtype == NULL || s->operand_elems == NULL) {
    return oom();
  }
  if ((st = optic_node_attrs(m, id, &s->attrs)) != OPTIC_OK) return st;
  s->cmp = ew_param_of(&s->attrs);
  for (int32_t i = 0; i < s->n_operands; i++) {
    const optic_type *ot = optic_node_type(m, optic_node_operand(m, id, i));
    if (optic_type_is_tuple(ot)) continue;
    s->operand_shape[i] = ot->shape;
    s->operand_dtype[i] = ot->dtype;
    s->operand_elems[i] = type_elems(ot);
  }
  int32_t n_in = 0;
  for (int32_t i = 0; i < s->n_operands; i++) {
    s->in_first[i] = n_in;
    n_in += optic_buffer_plan_leaf_count(plan, optic_node_operand(m, id, i));
  }
  s->in_first[s->n_operands] = n_in;
  s->n_out = optic_buffer_plan_leaf_count(plan, id);
  s->in = calloc((size_t)n_in + 1, sizeof *s->in);
  s->out = calloc((size_t)s->n_out + 1, sizeof *s->out);
  if (s->in == NULL || s->out == NULL) return oom();
  for (int32_t i = 0; i < s->n_operands && st == OPTIC_OK; i++) {
    optic_node_id o = optic_node_operand(m, id, i);
    for (int32_t l = 0; l < s->in_first[i + 1] - s->in_first[i] && st == OPTIC_OK; l++) {
      st = slot_ref(b, plan, o, l, &s->in[s->in_first[i] + l]);
    }
  }
  for (int32_t l = 0; l < s->n_out && st == OPTIC_OK; l++) st = slot_ref(b, plan, id, l, &s->out[l]);
  if (st != OPTIC_OK) return st;
  optic_node_estimate est;
  s->t1_ns = -1;
  if (b->program && optic_program_node_estimate(b->program, id, &est) == OPTIC_OK) {
    s->est_ns = est.est_ns, s->flops = est.cost.flops, s->bytes = est.cost.bytes_accessed;
    if (b->split_by_cost) s->t1_ns = optic_machine_estimate_ns(&b->machine1, &est.cost) - b->machine1.op_overhead_ns;
  } else {
    optic_cost cost;
    if (optic_node_cost(m, id, &cost) == OPTIC_OK) s->flops = cost.flops, s->bytes = cost.bytes_accessed;
  }
  return OPTIC_OK;
}

/* ------------------------------------------------------------ while bodies in place
 * run_while (exec/run.c) hands the body the loop state as its parameters and,
 * for the root leaves marked here, the same state buffers as its outputs, so
 * those leaves are neither written to scratch nor copied back: a leaf that
 * passes its parameter leaf through, and a dynamic-update-slice of parameter
 * leaf l into root leaf l, which then updates the state in place, when no
 * later step reads parameter leaf l and no other root leaf is it. The update
 * waits at a barrier, so earlier readers of the leaf on other threads are done. */

static bool reads_param(const exec_step *s, int32_t l) {
  for (int32_t k = 0; k < s->in_first[s->n_operands]; k++) {
    if (s->in[k].kind == REF_PARAM && s->in[k].index == l) return true;
  }
  for (int32_t i = 0; i < s->n_members; i++) {
    if (reads_param(&s->members[i], l)) return true;
  }
  return false;
}

/* Whether step i of q is a dynamic-update-slice that may run over its
 * operand's state buffer; its leaf in *leaf. */
static bool dus_over_param(const exec_seq *q, int32_t i, int32_t *leaf) {
  const exec_step *s = &q->steps[i];
  if (s->op != OPTIC_OP_DYNAMIC_UPDATE_SLICE || s->noop || s->n_members > 0 || s->n_out != 1 || s->n_operands < 2)
    return false;
  const exec_ref *y = &s->out[0], *x = &s->in[s->in_first[0]];
  const int32_t l = x->index;
  if (x->kind != REF_PARAM || y->kind != REF_OUTPUT || y->index != l || l >= q->n_root_leaves || x->size != y->size)
    return false;
  if (q->root[l].kind != REF_OUTPUT || q->root[l].index != l) return false;
  for (int32_t j = 0; j < q->n_root_leaves; j++) {
    if (q->root[j].kind == REF_PARAM && q->root[j].index == l) return false;
  }
  for (int32_t k = s->in_first[1]; k < s->in_first[s->n_operands]; k++) {
    if (s->in[k].kind == REF_PARAM && s->in[k].index == l) return false;
  }
  for (int32_t k = i + 1; k < q->n_steps; k++) {
    if (!q->steps[k].noop && reads_param(&q->steps[k], l)) return false;
  }
  *leaf = l;
  return true;
}

static optic_status mark_body_in_place(exec_seq *q) {
  if (q->root_over_param != NULL) return OPTIC_OK; /* a body of several whiles */
  q->root_over_param = calloc((size_t)q->n_root_leaves + 1, 1);
  if (q->root_over_param == NULL) return oom();
  for (int32_t j = 0; j < q->n_root_leaves; j++) {
    q->root_over_param[j] = q->root[j].kind == REF_PARAM && q->root[j].index == j;
  }
  for (int32_t i = 0; i < q->n_steps; i++) {
    int32_t l;
    if (!dus_over_param(q, i, &l)) continue;
    q->root_over_param[l] = 1;
    q->steps[i].barrier_before = true;
  }
  return OPTIC_OK;
}

/* call, while and conditional: nested sequences. */
static optic_status bind_control(bind_ctx *c, exec_step *s) {
  const optic_module_t *m = c->b->m;
  optic_status st = OPTIC_OK;
  s->sync = true;
  if (s->op == OPTIC_OP_CALL) return bind_seq(c, optic_node_called(m, s->id, 0), &s->callee[0]);
  if (s->op == OPTIC_OP_WHILE) {
    if ((st = bind_seq(c, optic_node_called(m, s->id, 0), &s->callee[0])) != OPTIC_OK) return st;
    if ((st = bind_seq(c, optic_node_called(m, s->id, 1), &s->callee[1])) != OPTIC_OK) return st;
    if ((st = mark_body_in_place(s->callee[1])) != OPTIC_OK) return st;
    size_t body = 0;
    for (int32_t l = 0; l < s->callee[1]->n_root_leaves; l++) body += ALIGN64(s->callee[1]->root_bytes[l]);
    s->scratch_bytes = 64 + body;
    s->scratch_offset = add_scratch(c->b, s->scratch_bytes);
    return OPTIC_OK;
  }
  s->n_branches = optic_node_called_count(m, s->id);
  s->branches = calloc((size_t)s->n_branches, sizeof *s->branches);
  if (s->branches == NULL) return oom();
  for (int32_t i = 0; i < s->n_branches && st == OPTIC_OK; i++) {
    st = bind_seq(c, optic_node_called(m, s->id, i), &s->branches[i]);
  }
  return st;
}

/* Elements of a loop fusion's domain in *n: its array result's, or those of
 * every leaf of its tuple result when the leaves are arrays of one element
 * count (at most EXEC_FUSED_OUTPUTS of them); false otherwise. The compiler
 * prices by the same rule (graph/compile_estimate.c). */
static bool loop_domain(const optic_type *t, size_t *n) {
  if (!optic_type_is_tuple(t)) {
    *n = type_elems(t);
    return true;
  }
  if (t->tuple_size < 1 || t->tuple_size > EXEC_FUSED_OUTPUTS) return false;
  for (int32_t k = 0; k < t->tuple_size; k++) {
    const optic_type *e = &t->elements[k];
    if (optic_type_is_tuple(e) || type_elems(e) != type_elems(&t->elements[0])) return false;
  }
  *n = type_elems(&t->elements[0]);
  return true;
}

/* A fusion: a block program for loop fusions (one pass writing every leaf
 * of a tuple result), the fused reduction or contraction for input and
 * output fusions, else (or when those decline) its fused computation as a
 * sequence of its own. */
static optic_status bind_fusion(bind_ctx *c, exec_step *s) {
  const optic_module_t *m = c->b->m;
  optic_fusion_kind kind = s->attrs.fusion.kind;
  optic_comp_id fused = optic_node_called(m, s->id, 0);
  bool array = !optic_type_is_tuple(s->type);
  size_t domain;
  optic_status st;
  if (kind == OPTIC_FUSION_LOOP && loop_domain(s->type, &domain) && s->n_operands <= 63) {
    st = ew_lower(m, fused, domain, &s->prog);
    if (st == OPTIC_OK) return OPTIC_OK;
    if (st != OPTIC_ERR_UNSUPPORTED) return st;
    optic_clear_error();
  }
  if (kind == OPTIC_FUSION_INPUT && array && s->n_operands <= 63) {
    st = bind_input_fusion(c, fused, s);
    if (st == OPTIC_OK) return OPTIC_OK;
    if (st != OPTIC_ERR_UNSUPPORTED) return st;
    optic_clear_error();
    ew_prog_destroy(s->prog), s->prog = NULL;
    s->input_fusion = false, s->reduce_fast = 0;
  }
  if (kind == OPTIC_FUSION_OUTPUT && array && s->n_operands <= 62) {
    st = bind_output_fusion(c, fused, s);
    if (st == OPTIC_OK) return OPTIC_OK;
    if (st != OPTIC_ERR_UNSUPPORTED) return st;
    optic_clear_error();
    ew_prog_destroy(s->prog), s->prog = NULL;
    free(s->dot), s->dot = NULL;
    free(s->conv), s->conv = NULL;
    s->conv_bf16_grouped = false;
  }
  s->sync = true;
  return bind_seq(c, fused, &s->callee[0]);
}

/* Ops that call a computation per element or pair (map, reduce,
 * reduce-window, scatter, sort) and topk: the callee lowered to a block
 * program, and sort/topk scratch. */
static optic_status bind_applying(bind_ctx *c, exec_step *s) {
  exec_bound *b = c->b;
  const optic_module_t *m = b->m;
  optic_comp_id f = s->op == OPTIC_OP_TOPK ? -1 : optic_node_called(m, s->id, 0);
  optic_status st = OPTIC_OK;
  switch (s->op) {
    case OPTIC_OP_MAP:
      st = ew_lower_ex(m, f, 1, true, &s->prog);
      return st == OPTIC_ERR_UNSUPPORTED ? lowering_declined(m, s->id, f) : st;
    case OPTIC_OP_REDUCE:
    case OPTIC_OP_REDUCE_WINDOW:
      if (s->n_operands == 2) s->reduce_fast = fast_reducer(m, f);
      if (s->n_operands == 2 && s->op == OPTIC_OP_REDUCE &&
          (s->operand_dtype[0] == OPTIC_F16 || s->operand_dtype[0] == OPTIC_BF16)) {
        s->reduce_half = one_op_reducer(m, f, s->operand_dtype[0]);
      }
      if (!s->reduce_fast) {
        st = ew_lower_ex(m, f, 1, true, &s->prog);
        if (st == OPTIC_ERR_UNSUPPORTED) return lowering_declined(m, s->id, f);
      }
      return st;
    case OPTIC_OP_SCATTER: /* to_apply runs as a block program, one element at a time */
      st = ew_lower_ex(m, f, 1, true, &s->prog);
      return st == OPTIC_ERR_UNSUPPORTED ? unsupported(m, s->id, optic_last_error()) : st;
    default: break;
  }
  if (s->op == OPTIC_OP_SORT) { /* the comparator runs as a block program, one pair at a time */
    st = ew_lower_ex(m, f, 1, true, &s->prog);
    if (st == OPTIC_ERR_UNSUPPORTED) return unsupported(m, s->id, optic_last_error());
    if (st != OPTIC_OK) return st;
  }
  int64_t dim = s->op == OPTIC_OP_SORT ? s->attrs.sort.dimension : s->operand_shape[0].rank - 1;
  int64_t len = s->operand_shape[0].dims[dim];
  s->sort_threads = b->threads > 0 ? b->threads : 1;
  s->sort_scratch = ALIGN64(2 * (size_t)(len > 0 ? len : 1) * sizeof(int64_t));
  s->scratch_bytes = s->sort_scratch * (size_t)s->sort_threads;
  s->scratch_offset = add_scratch(b, s->scratch_bytes);
  return OPTIC_OK;
}

/* Collectives of a single-replica program, and custom-call. */
static optic_status bind_collective(const optic_module_t *m, exec_step *s) {
  const optic_node_attrs_t *a = &s->attrs;
  switch (s->op) {
    case OPTIC_OP_CUSTOM_CALL: {
      char why[160];
      snprintf(why, sizeof why, "target '%.64s' is not known to optic", a->custom_call.target);
      return unsupported(m, s->id, why);
    }
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER: {
      const optic_attrs_shard *sh = s->op == OPTIC_OP_ALL_GATHER ? &a->all_gather : &a->reduce_scatter;
      if (sh->shard_count != 1) {
        return unsupported(m, s->id, "it spans more than one replica; optic runs single-replica programs");
      }
      return OPTIC_OK;
    }
    case OPTIC_OP_COLLECTIVE_PERMUTE:
      for (int32_t i = 0; i < a->collective_permute.n_pairs; i++) {
        const int64_t *pair = &a->collective_permute.pairs[2 * i];
        if (pair[1] == 0 && pair[0] != 0) {
          return unsupported(m, s->id, "another replica sends to replica 0; optic runs single-replica programs");
        }
      }
      return OPTIC_OK;
    default: return OPTIC_OK; /* all-reduce: the identity on one replica */
  }
}

/* Elementwise and layout ops, checked against the dtypes they define. */
static optic_status bind_plain(const optic_module_t *m, exec_step *s) {
  if (ew_is_elementwise(s->op)) {
    int32_t data = (s->op == OPTIC_OP_SELECT || s->op == OPTIC_OP_CLAMP) ? 1 : 0;
    optic_dtype in = optic_node_type(m, optic_node_operand(m, s->id, data))->dtype;
    if (!ew_supported(s->op, in, s->type->dtype)) return unsupported(m, s->id, "this dtype is not defined for the op");
    return OPTIC_OK;
  }
  if (exec_is_layout_op(s->op)) return OPTIC_OK;
  return unsupported(m, s->id, "the runtime has no implementation of this opcode");
}

static optic_status bind_step(bind_ctx *c, const optic_buffer_plan_t *plan, optic_node_id id, exec_step *s) {
  exec_bound *b = c->b;
  const optic_module_t *m = b->m;
  optic_status st = bind_operands(c, plan, id, s);
  if (st != OPTIC_OK) return st;
  switch (s->op) {
    case OPTIC_OP_PARAMETER:
    case OPTIC_OP_CONSTANT:
    case OPTIC_OP_TUPLE:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_AFTER_ALL: /* a token: no bytes, nothing to do */
    case OPTIC_OP_OPT_BARRIER: s->noop = true; return OPTIC_OK;
    case OPTIC_OP_INFEED: return unsupported(m, id, "optic has no host transfer queue to read from");
    case OPTIC_OP_OUTFEED: return unsupported(m, id, "optic has no host transfer queue to write to");
    case OPTIC_OP_RNG_BIT_GENERATOR: return unsupported(m, id, "optic does not reproduce XLA's bit streams");
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST: {
      optic_buffer_slot sl;
      if ((st = optic_buffer_plan_slot(plan, id, 0, &sl)) != OPTIC_OK) return st;
      s->noop = sl.source != id; /* an alias of its operand's bytes */
      return OPTIC_OK;
    }
    case OPTIC_OP_CALL:
    case OPTIC_OP_WHILE:
    case OPTIC_OP_CONDITIONAL: return bind_control(c, s);
    case OPTIC_OP_FUSION: return bind_fusion(c, s);
    case OPTIC_OP_MAP:
    case OPTIC_OP_REDUCE:
    case OPTIC_OP_REDUCE_WINDOW:
    case OPTIC_OP_SCATTER:
    case OPTIC_OP_SORT:
    case OPTIC_OP_TOPK: return bind_applying(c, s);
    case OPTIC_OP_DOT:
    case OPTIC_OP_CONVOLUTION: {
      /* A dot of two bf16 operands runs on a bf16 kernel where there is one
       * (kernels/dot_bf16.h): its operands are not widened. */
      const optic_type *l = optic_node_type(m, optic_node_operand(m, id, 0));
      const optic_type *r = optic_node_type(m, optic_node_operand(m, id, 1));
      bool both_bf16 = l->dtype == OPTIC_BF16 && r->dtype == OPTIC_BF16;
      s->bf16_dot = optic_node_opcode(m, id) == OPTIC_OP_DOT && both_bf16 && optic_dot_bf16_available();
      if (optic_node_opcode(m, id) == OPTIC_OP_CONVOLUTION && both_bf16 && (st = want_bf16_conv(m, id, s)) != OPTIC_OK)
        return st;
      if (optic_node_opcode(m, id) == OPTIC_OP_CONVOLUTION && both_bf16 && !s->conv_bf16 &&
          (st = want_grouped_bf16(b, m, id, s)) != OPTIC_OK)
        return st;
      bool in_place = s->conv_bf16 != NULL || s->conv_bf16_grouped;
      if ((st = plan_widen(b, m, id, s->bf16_dot || in_place, in_place, s)) != OPTIC_OK) return st;
      return plan_contraction(b, m, id, s);
    }
    case OPTIC_OP_DYNAMIC_SLICE:
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE:
    case OPTIC_OP_GATHER: return OPTIC_OK;
    case OPTIC_OP_ALL_REDUCE:
    case OPTIC_OP_CUSTOM_CALL:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE: return bind_collective(m, s);
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: /* per-feature scratch, used by thread 0 */
      s->scratch_bytes =
          ALIGN64(exec_batch_norm_scratch_bytes(s->operand_shape[0].dims[s->attrs.batch_norm.feature_index]));
      s->scratch_offset = add_scratch(b, s->scratch_bytes);
      return OPTIC_OK;
    default: return bind_plain(m, s);
  }
}

/* Buffer intervals touched since the last barrier. */
typedef struct touch {
  uint8_t kind;
  bool solo;
  int32_t index;
  size_t lo, hi;
} touch;

/* A conflict between two solo steps needs no barrier: thread 0 runs both,
 * in order. */
static bool touches_overlap(const touch *a, const exec_ref *r, bool solo) {
  if (r->kind != a->kind || (solo && a->solo)) return false;
  if (r->kind == REF_ARENA) return r->size > 0 && r->offset < a->hi && a->lo < r->offset + r->size;
  return r->kind == REF_OUTPUT && r->index == a->index;
}

static bool writable(const exec_ref *r) { return r->kind == REF_ARENA || r->kind == REF_OUTPUT; }

/* Places barriers: before a step that reads what an earlier step since the
 * last barrier wrote, or writes what one read or wrote (threads split ops
 * differently, so any such pair may cross threads); around sync steps. */
static optic_status place_barriers(exec_seq *q) {
  int32_t cap = 0, n_w = 0, n_r = 0;
  for (int32_t i = 0; i < q->n_steps; i++) cap += q->steps[i].in_first[q->steps[i].n_operands] + q->steps[i].n_out;
  touch *w = malloc(((size_t)cap + 1) * sizeof *w), *r = malloc(((size_t)cap + 1) * sizeof *r);
  if (w == NULL || r == NULL) {
    free(w);
    free(r);
    return oom();
  }
  bool force = false;
  for (int32_t i = 0; i < q->n_steps; i++) {
    exec_step *s = &q->steps[i];
    if (s->noop) continue;
    int32_t n_in = s->in_first[s->n_operands];
    bool need = force || s->sync;
    for (int32_t k = 0; k < n_in && !need; k++) {
      for (int32_t j = 0; j < n_w && !need; j++) need = touches_overlap(&w[j], &s->in[k], s->solo);
    }
    for (int32_t k = 0; k < s->n_out && !need; k++) {
      for (int32_t j = 0; j < n_w && !need; j++) need = touches_overlap(&w[j], &s->out[k], s->solo);
      for (int32_t j = 0; j < n_r && !need; j++) need = touches_overlap(&r[j], &s->out[k], s->solo);
    }
    s->barrier_before = need;
    if (need) n_w = n_r = 0;
    for (int32_t k = 0; k < n_in; k++) {
      if (writable(&s->in[k])) {
        r[n_r++] = (touch){s->in[k].kind, s->solo, s->in[k].index, s->in[k].offset, s->in[k].offset + s->in[k].size};
      }
    }
    for (int32_t k = 0; k < s->n_out; k++) {
      w[n_w++] = (touch){s->out[k].kind, s->solo, s->out[k].index, s->out[k].offset, s->out[k].offset + s->out[k].size};
    }
    force = s->sync;
  }
  free(w);
  free(r);
  return OPTIC_OK;
}

static optic_status bind_seq(bind_ctx *c, optic_comp_id comp, exec_seq **out) {
  exec_bound *b = c->b;
  const optic_module_t *m = b->m;
  if (comp < 0 || comp >= b->n_comps)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "runtime: bad computation %d", comp);
  if (b->seqs[comp]) {
    if (b->seqs[comp]->busy) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "runtime: computation %s calls itself",
                        optic_computation_name(m, comp));
    }
    *out = b->seqs[comp];
    return OPTIC_OK;
  }
  exec_seq *q = calloc(1, sizeof *q);
  if (q == NULL) return oom();
  b->seqs[comp] = q;
  q->comp = comp;
  q->busy = true;
  optic_status st = OPTIC_OK;
  q->plan = b->program ? optic_program_buffers(b->program, comp) : NULL;
  if (q->plan == NULL) {
    optic_schedule_t *s = NULL;
    if ((st = optic_schedule_create(m, comp, &s)) == OPTIC_OK) st = optic_buffer_plan_create(m, s, &q->owned_plan);
    optic_schedule_destroy(s);
    if (st != OPTIC_OK) return st;
    q->plan = q->owned_plan;
  }
  /* Flat parameter leaves, in parameter number order. */
  int32_t np = optic_computation_parameter_count(m, comp), base = 0;
  for (int32_t k = 0; k < np; k++) {
    optic_node_id p = optic_computation_parameter(m, comp, k);
    if (p == OPTIC_NO_NODE) continue;
    b->param_leaf_base[p] = base;
    base += leaf_count(optic_node_type(m, p));
  }
  q->n_param_leaves = base;
  int32_t n;
  const optic_node_id *order = optic_schedule_order(optic_buffer_plan_schedule(q->plan), &n);
  q->steps = calloc((size_t)n + 1, sizeof *q->steps);
  if (q->steps == NULL) return oom();
  q->n_steps = n;
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    exec_step *s = &q->steps[i];
    if ((st = bind_step(c, q->plan, order[i], s)) != OPTIC_OK) break;
    if (!s->noop && !s->sync && s->op != OPTIC_OP_DOT && s->op != OPTIC_OP_CONVOLUTION) {
      size_t touched = optic_type_is_tuple(s->type) ? 0 : type_elems(s->type);
      if (s->op == OPTIC_OP_FUSION && s->prog && optic_type_is_tuple(s->type)) /* every leaf it writes */
        touched = (size_t)s->type->tuple_size * exec_fused_elems(s);
      for (int32_t k = 0; k < s->n_operands; k++) touched += s->operand_elems[k];
      if (s->op == OPTIC_OP_REDUCE_WINDOW) touched *= 4; /* windows revisit elements */
      if (b->split_by_cost && s->t1_ns >= 0) {
        s->solo = !optic_split_op(b->threads, 0, (double)touched, s->t1_ns, b->barrier_ns);
      } else {
        s->solo = !optic_split_op(b->threads, b->split_min, (double)touched, 0, 0);
      }
    }
    if (!s->noop && !s->solo && !s->sync) b->any_split = true;
  }
  if (st != OPTIC_OK) return st;
  optic_node_id root = optic_computation_root(m, comp);
  q->n_root_leaves = optic_buffer_plan_leaf_count(q->plan, root);
  q->root = calloc((size_t)q->n_root_leaves + 1, sizeof *q->root);
  q->root_bytes = calloc((size_t)q->n_root_leaves + 1, sizeof *q->root_bytes);
  if (q->root == NULL || q->root_bytes == NULL) return oom();
  for (int32_t l = 0; l < q->n_root_leaves && st == OPTIC_OK; l++) {
    st = slot_ref(b, q->plan, root, l, &q->root[l]);
    q->root_bytes[l] = q->root[l].size;
  }
  if (st == OPTIC_OK) st = exec_form_row_groups(q, b->split_min, q->root, q->n_root_leaves);
  if (st == OPTIC_OK) st = place_barriers(q);
  q->arena_bytes = optic_buffer_plan_arena_bytes(q->plan);
  q->arena_offset = b->arena_total;
  b->arena_total += ALIGN64(q->arena_bytes);
  q->busy = false;
  *out = q;
  return st;
}

optic_status exec_bind(const optic_module_t *m, const optic_program_t *program, int32_t threads,
                       int64_t split_min_elements, exec_bound **out) {
  *out = NULL;
  exec_bound *b = calloc(1, sizeof *b);
  if (b == NULL) return oom();
  b->m = m;
  b->program = program;
  b->threads = threads;
  b->split_min = split_min_elements > 0 ? split_min_elements : EXEC_SOLO_ELEMENTS;
  const optic_machine *pm = program ? optic_program_machine(program) : NULL;
  if (split_min_elements <= 0 && pm != NULL && optic_machine_for_threads(pm, 1, &b->machine1) == OPTIC_OK) {
    b->split_by_cost = true;
    optic_machine r;
    optic_machine_resolve(pm, &r);
    b->barrier_ns = r.sync_ns > 0 ? r.sync_ns : EXEC_BARRIER_COST_NS;
  }
  b->entry = program ? optic_program_entry(program) : optic_module_entry(m);
  b->n_comps = optic_module_computation_count(m);
  b->seqs = calloc((size_t)b->n_comps + 1, sizeof *b->seqs);
  /* By node id: every id is below the module's instruction count. */
  b->param_leaf_base = calloc((size_t)optic_module_node_count(m) + 1, sizeof *b->param_leaf_base);
  if (b->seqs == NULL || b->param_leaf_base == NULL) {
    exec_bound_destroy(b);
    return oom();
  }
  optic_program_summary sum;
  if (program && optic_program_summary_get(program, &sum) == OPTIC_OK) b->est_ns = sum.est_ns;
  bind_ctx c = {b};
  exec_seq *entry;
  optic_status st = bind_seq(&c, b->entry, &entry);
  if (st == OPTIC_OK) st = exec_bind_constants(b);
  if (st == OPTIC_OK) b->regs_bytes = exec_regs_bytes(b);
  if (st != OPTIC_OK) {
    exec_bound_destroy(b);
    return st;
  }
  *out = b;
  return OPTIC_OK;
}
