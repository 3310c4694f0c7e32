/* Steps that apply a computation to scalars: reduce, reduce-window, map.
 * Reductions run vectorized across output elements: a block of outputs
 * holds its accumulators, and for each reduced (or window) position the
 * block's values are gathered and combined in one call, either one f32
 * binary kernel (add/multiply/maximum/minimum reducers) or the reducer's
 * block program. Every output element still folds its inputs in row-major
 * order, as the reference evaluator does, so results match it bitwise.
 * A reduction over the innermost contiguous dim folds each output's run
 * directly. Threads split output elements. */
#include <math.h>
#include <string.h>

#include "exec/exec_internal.h"

size_t exec_regs_bytes(const exec_bound *b) {
  size_t best = 64;
  for (int32_t c = 0; c < b->n_comps; c++) {
    const exec_seq *q = b->seqs[c];
    for (int32_t i = 0; q && i < q->n_steps; i++) {
      const exec_step *s = &q->steps[i];
      size_t regs = s->prog ? (size_t)s->prog->n_regs + 1 : 0; /* + the streaming-store staging block */
      if (s->op == OPTIC_OP_REDUCE || s->op == OPTIC_OP_REDUCE_WINDOW) regs += (size_t)s->n_operands + 1;
      size_t bytes = regs * EXEC_BLOCK * 8;
      if (bytes > best) best = bytes;
    }
  }
  return best;
}

static size_t elems(const optic_shape *s) {
  size_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

static inline float fold_f32(int op, float a, float b) {
  switch (op) {
    case OPTIC_OP_ADD: return a + b;
    case OPTIC_OP_MULTIPLY: return a * b;
    case OPTIC_OP_MAXIMUM: return a != a ? a : b != b ? b : (a > b ? a : b);
    default: return a != a ? a : b != b ? b : (a < b ? a : b);
  }
}

/* Combines the gathered values into the accumulators of one block. */
static void combine(const exec_step *s, int32_t n, void **acc, void **vals, void **tmp, size_t len,
                    unsigned char *regs) {
  if (s->reduce_fast) {
    const void *src[2] = {acc[0], vals[0]};
    ew_apply((optic_opcode)s->reduce_fast, OPTIC_CMP_EQ, OPTIC_F32, OPTIC_F32, len, src, 0, acc[0]);
    return;
  }
  const void *inputs[128] = {NULL};
  for (int32_t i = 0; i < n; i++) inputs[i] = acc[i], inputs[n + i] = vals[i];
  ew_run_block(s->prog, inputs, 0, tmp, 0, len, regs);
  for (int32_t i = 0; i < n; i++) memcpy(acc[i], tmp[i], len * optic_dtype_size(s->prog->output_dtype[i]));
}

/* The n reduced inputs, their init values and the n outputs of a reduce or
 * reduce-window step (operands: inputs first, then inits), with element sizes. */
static void reduce_operands(const exec_step *s, const exec_frame *f, int32_t n, size_t *es,
                            const unsigned char **in, const void **init, unsigned char **out) {
  for (int32_t i = 0; i < n; i++) {
    es[i] = optic_dtype_size(s->operand_dtype[i]);
    in[i] = ref_ptr(f, &s->in[s->in_first[i]]);
    init[i] = ref_ptr(f, &s->in[s->in_first[n + i]]);
    out[i] = ref_ptr(f, &s->out[i]);
  }
}

static optic_status reduce_step(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  int32_t n = s->n_operands / 2;
  if (n > 32) return optic_fail(OPTIC_ERR_UNSUPPORTED, "reduce %s: more than 32 inputs", s->name);
  const optic_shape *is = &s->operand_shape[0];
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < s->attrs.reduce.count; i++) reduced[s->attrs.reduce.dims[i]] = true;
  int64_t ist[OPTIC_MAX_RANK], v = 1;
  for (int32_t d = is->rank - 1; d >= 0; d--) ist[d] = v, v *= is->dims[d];
  exec_walk kept = {0}, red = {0};
  for (int32_t d = 0; d < is->rank; d++) {
    exec_walk *w = reduced[d] ? &red : &kept;
    w->dims[w->rank] = is->dims[d];
    w->strides[w->rank++] = ist[d];
  }
  size_t R = 1, N = 1;
  for (int32_t d = 0; d < red.rank; d++) R *= (size_t)red.dims[d];
  for (int32_t d = 0; d < kept.rank; d++) N *= (size_t)kept.dims[d];
  size_t lo, hi;
  exec_share(N, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  size_t es[32];
  const unsigned char *in[32];
  const void *init[32];
  unsigned char *out[32];
  reduce_operands(s, f, n, es, in, init, out);
  /* Innermost contiguous reduction with a fast reducer: fold each run. */
  if (s->reduce_fast && red.rank > 0 && red.strides[red.rank - 1] == 1 && red.dims[red.rank - 1] >= 16) {
    const float *x = (const float *)(const void *)in[0];
    float *y = (float *)(void *)out[0];
    int64_t inner = red.dims[red.rank - 1];
    exec_walk outer = red;
    outer.rank--;
    size_t nouter = R / (size_t)inner;
    int64_t kidx[OPTIC_MAX_RANK];
    for (size_t j = lo; j < hi; j++) {
      /* kept offset of output j */
      size_t rem = j;
      int64_t base = 0;
      for (int32_t d = kept.rank - 1; d >= 0; d--) {
        kidx[d] = (int64_t)(rem % (size_t)kept.dims[d]);
        rem /= (size_t)kept.dims[d];
        base += kidx[d] * kept.strides[d];
      }
      float acc;
      memcpy(&acc, init[0], 4);
      int64_t oidx[OPTIC_MAX_RANK] = {0}, off = base;
      for (size_t o = 0; o < nouter; o++) {
        const float *p = x + off;
        for (int64_t k = 0; k < inner; k++) acc = fold_f32(s->reduce_fast, acc, p[k]);
        for (int32_t d = outer.rank - 1; d >= 0; d--) {
          off += outer.strides[d];
          if (++oidx[d] < outer.dims[d]) break;
          off -= oidx[d] * outer.strides[d];
          oidx[d] = 0;
        }
      }
      y[j] = acc;
    }
    return OPTIC_OK;
  }
  unsigned char *regs = th->regs;
  size_t prog_bytes = s->prog ? (size_t)s->prog->n_regs * EXEC_BLOCK * 8 : 0;
  void *vals[32], *tmp[32], *acc[32];
  for (int32_t i = 0; i < n; i++) {
    vals[i] = regs + prog_bytes + (size_t)i * EXEC_BLOCK * 8;
    tmp[i] = regs + prog_bytes + (size_t)(n + i) * EXEC_BLOCK * 8;
  }
  if (2 * n > s->n_operands + 1) return optic_fail(OPTIC_ERR_INTERNAL, "reduce: register layout");
  for (size_t j0 = lo; j0 < hi; j0 += EXEC_BLOCK) {
    size_t len = hi - j0 < EXEC_BLOCK ? hi - j0 : EXEC_BLOCK;
    for (int32_t i = 0; i < n; i++) {
      acc[i] = out[i] + j0 * es[i];
      for (size_t k = 0; k < len; k++) memcpy((unsigned char *)acc[i] + k * es[i], init[i], es[i]);
    }
    int64_t ridx[OPTIC_MAX_RANK] = {0}, roff = 0;
    for (size_t r = 0; r < R; r++) {
      exec_walk w = kept;
      w.base = roff;
      for (int32_t i = 0; i < n; i++) walk_gather(&w, es[i], in[i], j0, len, vals[i]);
      combine(s, n, acc, vals, tmp, len, regs);
      for (int32_t d = red.rank - 1; d >= 0; d--) {
        roff += red.strides[d];
        if (++ridx[d] < red.dims[d]) break;
        roff -= ridx[d] * red.strides[d];
        ridx[d] = 0;
      }
    }
  }
  return OPTIC_OK;
}

static optic_status reduce_window_step(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  int32_t n = s->n_operands / 2;
  if (n > 32) return optic_fail(OPTIC_ERR_UNSUPPORTED, "reduce-window %s: more than 32 inputs", s->name);
  const optic_shape *is = &s->operand_shape[0];
  const optic_shape *os = optic_type_is_tuple(s->type) ? &s->type->elements[0].shape : &s->type->shape;
  int32_t rank = is->rank;
  int64_t ist[OPTIC_MAX_RANK], v = 1, wsize[OPTIC_MAX_RANK], dil_in[OPTIC_MAX_RANK];
  for (int32_t d = rank - 1; d >= 0; d--) ist[d] = v, v *= is->dims[d];
  const optic_window_dim *win = s->attrs.reduce_window.window;
  size_t W = 1;
  for (int32_t d = 0; d < rank; d++) {
    wsize[d] = win[d].size;
    W *= (size_t)wsize[d];
    dil_in[d] = is->dims[d] > 0 ? (is->dims[d] - 1) * win[d].base_dilation + 1 : 0;
  }
  size_t N = elems(os), lo, hi;
  exec_share(N, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  size_t es[32];
  const unsigned char *in[32];
  const void *init[32];
  unsigned char *out[32];
  reduce_operands(s, f, n, es, in, init, out);
  unsigned char *regs = th->regs;
  size_t prog_bytes = s->prog ? (size_t)s->prog->n_regs * EXEC_BLOCK * 8 : 0;
  void *vals[32], *tmp[32], *acc[32];
  for (int32_t i = 0; i < n; i++) {
    vals[i] = regs + prog_bytes + (size_t)i * EXEC_BLOCK * 8;
    tmp[i] = regs + prog_bytes + (size_t)(n + i) * EXEC_BLOCK * 8;
  }
  int64_t ost[OPTIC_MAX_RANK];
  v = 1;
  for (int32_t d = rank - 1; d >= 0; d--) ost[d] = v, v *= os->dims[d];
  for (size_t j0 = lo; j0 < hi; j0 += EXEC_BLOCK) {
    size_t len = hi - j0 < EXEC_BLOCK ? hi - j0 : EXEC_BLOCK;
    for (int32_t i = 0; i < n; i++) {
      acc[i] = out[i] + j0 * es[i];
      for (size_t k = 0; k < len; k++) memcpy((unsigned char *)acc[i] + k * es[i], init[i], es[i]);
    }
    int64_t kidx[OPTIC_MAX_RANK] = {0};
    for (size_t r = 0; r < W; r++) {
      int64_t oidx[OPTIC_MAX_RANK];
      size_t rem = j0;
      for (int32_t d = 0; d < rank; d++) oidx[d] = (int64_t)(rem / (size_t)ost[d]), rem %= (size_t)ost[d];
      for (size_t k = 0; k < len; k++) {
        int64_t off = 0;
        bool inside = true;
        for (int32_t d = 0; d < rank && inside; d++) {
          const optic_window_dim *e = &win[d];
          int64_t kk = e->reversal ? e->size - 1 - kidx[d] : kidx[d];
          int64_t xpos = oidx[d] * e->stride + kk * e->window_dilation - e->pad_low;
          inside = xpos >= 0 && xpos < dil_in[d] && xpos % e->base_dilation == 0;
          off += inside ? (xpos / e->base_dilation) * ist[d] : 0;
        }
        for (int32_t i = 0; i < n; i++) {
          memcpy((unsigned char *)vals[i] + k * es[i], inside ? in[i] + off * (int64_t)es[i] : init[i], es[i]);
        }
        for (int32_t d = rank - 1; d >= 0; d--) {
          if (++oidx[d] < os->dims[d]) break;
          oidx[d] = 0;
        }
      }
      combine(s, n, acc, vals, tmp, len, regs);
      for (int32_t d = rank - 1; d >= 0; d--) {
        if (++kidx[d] < wsize[d]) break;
        kidx[d] = 0;
      }
    }
  }
  return OPTIC_OK;
}

static optic_status map_step(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *inputs[64];
  if (s->n_operands > 64) return optic_fail(OPTIC_ERR_UNSUPPORTED, "map %s: more than 64 operands", s->name);
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  size_t N = elems(&s->type->shape), es = optic_dtype_size(s->type->dtype), lo, hi;
  exec_share(N, th->t, th->nt, &lo, &hi);
  unsigned char *y = ref_ptr(f, &s->out[0]);
  for (size_t j0 = lo; j0 < hi; j0 += EXEC_BLOCK) {
    size_t len = hi - j0 < EXEC_BLOCK ? hi - j0 : EXEC_BLOCK;
    void *outs[1] = {y + j0 * es};
    ew_run_block(s->prog, inputs, 0, outs, j0, len, th->regs);
  }
  return OPTIC_OK;
}

optic_status exec_op_input_fusion(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *inputs[64];
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  float init, *y = ref_ptr(f, &s->out[0]);
  memcpy(&init, inputs[s->in_init], 4);
  size_t lo, hi, len = s->in_len;
  exec_share(s->in_rows, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  if (len == 0) {
    for (size_t j = lo; j < hi; j++) y[j] = init;
    return OPTIC_OK;
  }
  /* The reduced input of rows [lo, hi) is the range [lo * len, hi * len) of
   * the program's domain: computed a block at a time, each element folded
   * into its row in order (the evaluator's order, so results are bitwise). */
  float *block = (float *)(void *)(th->regs + (size_t)s->prog->n_regs * EXEC_BLOCK * 8);
  size_t row = lo, in_row = 0;
  float acc = init;
  for (size_t b0 = lo * len, end = hi * len; b0 < end; b0 += EXEC_BLOCK) {
    size_t blen = end - b0 < EXEC_BLOCK ? end - b0 : EXEC_BLOCK;
    void *outs[1] = {block};
    ew_run_block(s->prog, inputs, s->prog->scalar_inputs, outs, b0, blen, th->regs);
    for (size_t k = 0; k < blen; k++) {
      acc = fold_f32(s->reduce_fast, acc, block[k]);
      if (++in_row == len) {
        y[row++] = acc;
        acc = init;
        in_row = 0;
      }
    }
  }
  return OPTIC_OK;
}

optic_status exec_op_reduce(const exec_step *s, const optic_module_t *m, const exec_frame *f, const exec_thread *th) {
  (void)m;
  switch (s->op) {
    case OPTIC_OP_REDUCE: return reduce_step(s, f, th);
    case OPTIC_OP_REDUCE_WINDOW: return reduce_window_step(s, f, th);
    default: return map_step(s, f, th);
  }
}
