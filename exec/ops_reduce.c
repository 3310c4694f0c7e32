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
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"
#include "core/half.h"
#include "kernels/reduce_tree.h"

size_t exec_reduce_work_bytes(const exec_step *s) {
  if (s->op != OPTIC_OP_REDUCE || !s->reduce_fast || s->n_operands != 2) return 0;
  const optic_shape *is = &s->operand_shape[0];
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < s->attrs.reduce.count; i++) reduced[s->attrs.reduce.dims[i]] = true;
  size_t R = 1, N = 1;
  for (int32_t d = 0; d < is->rank; d++) {
    if (reduced[d]) R *= (size_t)is->dims[d];
    else N *= (size_t)is->dims[d];
  }
  size_t cols = optic_f32_reduce_cols_work_floats(R, N) * sizeof(float);
  size_t leaf = OPTIC_REDUCE_BLOCK * sizeof(float);
  return cols > leaf ? cols : leaf;
}

size_t exec_regs_bytes(const exec_bound *b) {
  size_t best = 64;
  for (int32_t c = 0; c < b->n_comps; c++) {
    const exec_seq *q = b->seqs[c];
    for (int32_t i = 0; q && i < q->n_steps; i++) {
      const exec_step *s = &q->steps[i];
      /* + the streaming-store staging blocks: one per output of a loop fusion, else one */
      size_t staging = s->prog && s->op == OPTIC_OP_FUSION && s->prog->n_outputs > 1 ? (size_t)s->prog->n_outputs : 1;
      size_t regs = s->prog ? (size_t)s->prog->n_regs + staging : 0;
      if (s->op == OPTIC_OP_REDUCE || s->op == OPTIC_OP_REDUCE_WINDOW) regs += (size_t)s->n_operands + 1;
      size_t bytes = regs * EXEC_BLOCK * 8, work = exec_reduce_work_bytes(s);
      if (work > bytes) bytes = work;
      if (s->n_members > 0) bytes = s->rg_regs + s->rg_tile_bytes;
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
static void reduce_operands(const exec_step *s, const exec_frame *f, int32_t n, size_t *es, const unsigned char **in,
                            const void **init, unsigned char **out) {
  for (int32_t i = 0; i < n; i++) {
    es[i] = optic_dtype_size(s->operand_dtype[i]);
    in[i] = ref_ptr(f, &s->in[s->in_first[i]]);
    init[i] = ref_ptr(f, &s->in[s->in_first[n + i]]);
    out[i] = ref_ptr(f, &s->out[i]);
  }
}

/* ------------------------------------------------------------ f32 through the reduction kernels
 * add/multiply/maximum/minimum reducers of one f32 input reduce in the
 * kernels' fixed order (kernels/reduce.h): each output's reduced elements, in
 * row-major order of the reduced dims, are reduced as the contiguous kernel
 * reduces them laid out contiguously, then combined with the init value
 * (y = init op r, max/min: the binary fold of init and r). The evaluator
 * defines reduce the same way, so the two agree bitwise, on every ISA and for
 * any split of the outputs across threads. */

static optic_reduce_op kernel_op(int reduce_fast) {
  switch (reduce_fast) {
    case OPTIC_OP_ADD: return OPTIC_REDUCE_SUM;
    case OPTIC_OP_MULTIPLY: return OPTIC_REDUCE_PROD;
    case OPTIC_OP_MAXIMUM: return OPTIC_REDUCE_MAX;
    default: return OPTIC_REDUCE_MIN;
  }
}

/* The result r over the reduced elements, combined with the init value. */
static inline float with_init(int reduce_fast, float init, float r) { return fold_f32(reduce_fast, init, r); }

/* Offset in x of the first reduced element of output j (kept walk order). */
static int64_t kept_offset(const exec_walk *kept, size_t j) {
  if (kept->rank == 1 && j < (size_t)kept->dims[0]) return (int64_t)j * kept->strides[0]; /* rows: no division */
  int64_t base = 0;
  for (int32_t d = kept->rank - 1; d >= 0; d--) {
    base += (int64_t)(j % (size_t)kept->dims[d]) * kept->strides[d];
    j /= (size_t)kept->dims[d];
  }
  return base;
}

/* Any layout: the output's reduced elements are gathered a leaf
 * (OPTIC_REDUCE_BLOCK floats) at a time into leafbuf and the leaves joined as
 * the contiguous kernel joins them. */
static float reduce_gathered(optic_reduce_op op, const optic_reduce_kernels *k, const exec_walk *red, size_t R,
                             const float *x, int64_t base, float *leafbuf) {
  optic_reduce_tree t = {.count = 0, .depth = 0};
  const bool ext = op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN;
  float acc = optic_reduce_identity(op);
  exec_walk w = *red;
  w.base = base;
  for (size_t r0 = 0; r0 < R; r0 += OPTIC_REDUCE_BLOCK) {
    size_t len = R - r0 < OPTIC_REDUCE_BLOCK ? R - r0 : OPTIC_REDUCE_BLOCK;
    walk_gather(&w, 4, x, r0, len, leafbuf);
    float leaf = k->r[op](len, leafbuf);
    if (ext) acc = fold_f32(op == OPTIC_REDUCE_MAX ? OPTIC_OP_MAXIMUM : OPTIC_OP_MINIMUM, acc, leaf);
    else optic_reduce_tree_push(op, &t, leaf);
  }
  return ext ? acc : optic_reduce_tree_root(op, &t);
}

/* Rows of at least ROWS_AHEAD_MIN_BYTES: the head of the row ROWS_AHEAD
 * ahead is prefetched before a row is reduced. One core's hardware
 * prefetcher follows a stream only inside a 4 KiB page and restarts at the
 * next one on demand misses; starting each row's stream two rows early keeps
 * more lines in flight when the rows come from memory. Reads only: results
 * are unchanged. */
#define ROWS_AHEAD 2
#define ROWS_AHEAD_MIN_BYTES 1024
#define ROWS_AHEAD_LINES 8

static inline void rows_ahead_prefetch(const float *row) {
  for (int i = 0; i < ROWS_AHEAD_LINES; i++) __builtin_prefetch((const char *)row + 64 * i, 0, 3);
}

/* Outputs [lo, hi) over the kept and reduced walks as walk_merged gives
 * them; rows below ahead_hi (>= hi) may be prefetched. */
static void reduce_f32_kernels(const exec_step *s, const exec_walk *kept_merged, const exec_walk *red_merged,
                               const float *x, const void *init_p, float *y, size_t lo, size_t hi, size_t ahead_hi,
                               float *leafbuf) {
  const optic_reduce_op op = kernel_op(s->reduce_fast);
  const optic_reduce_kernels *k = optic_reduce_kernels_get();
  float init;
  memcpy(&init, init_p, 4);
  const exec_walk red = *red_merged, kept = *kept_merged;
  size_t R = 1;
  for (int32_t d = 0; d < red.rank; d++) R *= (size_t)red.dims[d];
  if (R == 0) {
    for (size_t j = lo; j < hi; j++) y[j] = with_init(s->reduce_fast, init, optic_reduce_identity(op));
    return;
  }
  if (red.rank <= 1 && (red.rank == 0 || red.strides[0] == 1)) { /* rows: contiguous runs */
    const bool ahead = R * 4 >= ROWS_AHEAD_MIN_BYTES;
    for (size_t j = lo; j < hi; j++) {
      if (ahead && j + ROWS_AHEAD < ahead_hi) rows_ahead_prefetch(x + kept_offset(&kept, j + ROWS_AHEAD));
      y[j] = with_init(s->reduce_fast, init, k->r[op](R, x + kept_offset(&kept, j)));
    }
    return;
  }
  /* columns: one reduced dim over an innermost contiguous kept dim */
  int64_t I = kept.rank > 0 ? kept.dims[kept.rank - 1] : 1;
  if (red.rank == 1 && kept.rank > 0 && kept.strides[kept.rank - 1] == 1) {
    for (size_t j = lo; j < hi;) {
      size_t i = j % (size_t)I, w = (size_t)I - i < hi - j ? (size_t)I - i : hi - j;
      optic_f32_reduce_cols_work(op, R, w, x + kept_offset(&kept, j), (size_t)red.strides[0], y + j, leafbuf,
                                 optic_f32_reduce_cols_work_floats(R, (size_t)I));
      for (size_t c = 0; c < w; c++) y[j + c] = with_init(s->reduce_fast, init, y[j + c]);
      j += w;
    }
    return;
  }
  for (size_t j = lo; j < hi; j++) {
    y[j] = with_init(s->reduce_fast, init, reduce_gathered(op, k, &red, R, x, kept_offset(&kept, j), leafbuf));
  }
}

/* The kept and the reduced dims of reduce step s, as walks over its input. */
static void reduce_walks(const exec_step *s, exec_walk *kept, exec_walk *red) {
  const optic_shape *is = &s->operand_shape[0];
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < s->attrs.reduce.count; i++) reduced[s->attrs.reduce.dims[i]] = true;
  int64_t ist[OPTIC_MAX_RANK], v = 1;
  for (int32_t d = is->rank - 1; d >= 0; d--) ist[d] = v, v *= is->dims[d];
  *kept = (exec_walk){0}, *red = (exec_walk){0};
  for (int32_t d = 0; d < is->rank; d++) {
    exec_walk *w = reduced[d] ? red : kept;
    w->dims[w->rank] = is->dims[d];
    w->strides[w->rank++] = ist[d];
  }
}

optic_status exec_reduce_rows_prepare(exec_step *s) {
  if (s->rg_walks != NULL) return OPTIC_OK;
  if ((s->rg_walks = malloc(2 * sizeof *s->rg_walks)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory");
  }
  exec_walk kept, red;
  reduce_walks(s, &kept, &red);
  s->rg_walks[0] = walk_merged(&kept), s->rg_walks[1] = walk_merged(&red);
  return OPTIC_OK;
}

void exec_reduce_rows(const exec_step *s, const exec_frame *f, size_t lo, size_t hi, size_t ahead_hi,
                      unsigned char *regs) {
  exec_walk w[2];
  if (s->rg_walks == NULL) {
    reduce_walks(s, &w[0], &w[1]);
    w[0] = walk_merged(&w[0]), w[1] = walk_merged(&w[1]);
  }
  const exec_walk *kept = s->rg_walks ? &s->rg_walks[0] : &w[0], *red = s->rg_walks ? &s->rg_walks[1] : &w[1];
  const exec_ref *x = &s->in[s->in_first[0]];
  reduce_f32_kernels(s, kept, red, ref_ptr(f, x), ref_ptr(f, &s->in[s->in_first[1]]), ref_ptr(f, &s->out[0]), lo, hi,
                     x->kind == REF_TILE || ahead_hi < hi ? hi : ahead_hi, (float *)(void *)regs);
}

/* ------------------------------------------------------------ one-op f16/bf16 reducers, few outputs
 * A reducer that is one add/multiply/maximum/minimum on f16 or bf16 folds
 * each output's inputs one at a time in row-major order of the reduced dims,
 * as the evaluator does: both values widened exactly to f32, the f32 op, one
 * rounding back to the half (kernels/elem_generic.c's rule), so the result is
 * the block program's bitwise. Used when a thread has fewer outputs than
 * REDUCE_FEW_OUTPUTS: the block program would pay its dispatch once per
 * reduced position for a handful of lanes. */
enum { REDUCE_FEW_OUTPUTS = 16 };

static inline float half_in(bool bf, uint16_t h) { return bf ? optic_half_to_f32_bf16(h) : optic_half_to_f32_f16(h); }

static inline uint16_t half_out(bool bf, float v) {
  return bf ? optic_half_from_f32_bf16(v) : optic_half_from_f32_f16(v);
}

static void reduce_half_few(const exec_step *s, const exec_walk *kept, const exec_walk *red_in, const uint16_t *x,
                            const void *init_p, uint16_t *y, size_t lo, size_t hi) {
  const bool bf = s->operand_dtype[0] == OPTIC_BF16;
  const int op = s->reduce_half;
  const bool extremum = op == OPTIC_OP_MAXIMUM || op == OPTIC_OP_MINIMUM;
  const exec_walk red = walk_merged(red_in);
  uint16_t init;
  memcpy(&init, init_p, 2);
  for (size_t j = lo; j < hi; j++) {
    const uint16_t *xj = x ? x + kept_offset(kept, j) : x; /* x: NULL when the input is empty */
    int64_t idx[OPTIC_MAX_RANK] = {0}, off = 0;
    float acc = half_in(bf, init);
    bool more = true;
    for (int32_t d = 0; d < red.rank; d++) more = more && red.dims[d] > 0;
    if (!more) { /* nothing reduced: the init value itself */
      y[j] = init;
      continue;
    }
    while (more) {
      int64_t n = red.rank > 0 ? red.dims[red.rank - 1] : 1, st = red.rank > 0 ? red.strides[red.rank - 1] : 0;
      if (extremum) { /* the fold keeps one of the exact half values (NaN: the first, rounded once at the end) */
        for (int64_t i = 0; i < n; i++) acc = fold_f32(op, acc, half_in(bf, xj[off + i * st]));
      } else {
        for (int64_t i = 0; i < n; i++)
          acc = half_in(bf, half_out(bf, fold_f32(op, acc, half_in(bf, xj[off + i * st]))));
      }
      more = false;
      for (int32_t d = red.rank - 2; d >= 0 && !more; d--) {
        off += red.strides[d];
        if (++idx[d] < red.dims[d]) more = true;
        else off -= idx[d] * red.strides[d], idx[d] = 0;
      }
    }
    y[j] = half_out(bf, acc);
  }
}

/* ------------------------------------------------------------ one-op f16/bf16 reducers, many outputs
 * The same fold, vectorized across a block of outputs: their accumulators
 * are held widened to f32 (exact), and for each reduced position (row-major
 * order of the reduced dims) the block's inputs are gathered and widened,
 * combined by the f32 kernel the reducer's block program would run, and the
 * accumulators rounded to the half in place (exec/ewhalf.c), then narrowed
 * once (exactly) at the end: each output is the per-output fold's bitwise. */
/* The offset of output j0's row when outputs j0 .. j0 + n - 1 (n > 0) read
 * consecutive rows of R elements, in order (each output's row R elements
 * after the one before); else -1. */
static int64_t consecutive_rows_at(const exec_walk *kept, size_t R, size_t j0, size_t n) {
  const int64_t base = kept_offset(kept, j0);
  for (size_t r = 1; r < n; r++)
    if (kept_offset(kept, j0 + r) != base + (int64_t)(r * R)) return -1;
  return base;
}

/* Short rows that lie back to back (R up to half a block): a block's worth
 * of rows widened by one call, each then reduced from the widened copy and
 * the block's results narrowed by one call, so the per-call costs are paid
 * per block instead of per row. The per-row loop's folds, bitwise: its first
 * fold, with the reducer's identity, returns the row's result unchanged. */
static size_t reduce_half_short_rows(const exec_step *s, const exec_walk *kept, size_t R, const uint16_t *x, float init,
                                     uint16_t *y, size_t lo, size_t hi, float *vals) {
  const optic_dtype dt = s->operand_dtype[0];
  const optic_reduce_op op = kernel_op(s->reduce_half);
  const optic_reduce_kernels *k = optic_reduce_kernels_get();
  const size_t per = EXEC_BLOCK / R;
  float res[EXEC_BLOCK / 2];
  size_t j0 = lo;
  while (j0 < hi) {
    size_t nr = hi - j0 < per ? hi - j0 : per;
    if (nr > sizeof res / sizeof *res) nr = sizeof res / sizeof *res;
    const int64_t at = consecutive_rows_at(kept, R, j0, nr);
    if (at < 0) break;
    ew_half_widen(dt, nr * R, x + at, vals);
    for (size_t r = 0; r < nr; r++) res[r] = fold_f32(s->reduce_half, init, k->r[op](R, vals + r * R));
    ew_half_narrow(dt, nr, res, y + j0);
    j0 += nr;
  }
  return j0;
}

/* Maximum/minimum over contiguous rows: each row widened a block at a time
 * and reduced by the f32 kernel, whose result is the in-order fold's
 * bitwise (kernels/reduce.h); the blocks' results and the init value are
 * folded in order. Each step of the half fold keeps an exact half value
 * (rounding it changes nothing) except a NaN, quieted: so one rounding at
 * the end gives the per-output fold's result. */
static void reduce_half_rows_extremum(const exec_step *s, const exec_walk *kept, size_t R, const uint16_t *x,
                                      float init, uint16_t *y, size_t lo, size_t hi, float *vals) {
  const optic_dtype dt = s->operand_dtype[0];
  const optic_reduce_op op = kernel_op(s->reduce_half);
  const optic_reduce_kernels *k = optic_reduce_kernels_get();
  if (2 * R <= EXEC_BLOCK) lo = reduce_half_short_rows(s, kept, R, x, init, y, lo, hi, vals);
  for (size_t j = lo; j < hi; j++) {
    const uint16_t *row = x + kept_offset(kept, j);
    float acc = optic_reduce_identity(op);
    for (size_t r0 = 0; r0 < R; r0 += EXEC_BLOCK) {
      size_t len = R - r0 < EXEC_BLOCK ? R - r0 : EXEC_BLOCK;
      ew_half_widen(dt, len, row + r0, vals);
      acc = fold_f32(s->reduce_half, acc, k->r[op](len, vals));
    }
    acc = fold_f32(s->reduce_half, init, acc);
    ew_half_narrow(dt, 1, &acc, y + j);
  }
}

/* Whether a one-op half reduce is a maximum or minimum over contiguous
 * rows of R > 0 elements (its reduced dims merge into one unit-stride run):
 * the rows path, for few outputs as for many. */
static bool half_rows_extremum(const exec_step *s, const exec_walk *red, size_t R) {
  if ((s->reduce_half != OPTIC_OP_MAXIMUM && s->reduce_half != OPTIC_OP_MINIMUM) || R == 0) return false;
  const exec_walk rm = walk_merged(red);
  return rm.rank == 0 || (rm.rank == 1 && rm.strides[0] == 1);
}

/* rows: half_rows_extremum's answer for this step (reduce_step asks once). */
static void reduce_half_block(const exec_step *s, const exec_walk *kept, const exec_walk *red, bool rows,
                              const uint16_t *x, const void *init_p, uint16_t *y, size_t lo, size_t hi,
                              unsigned char *regs) {
  const optic_dtype dt = s->operand_dtype[0];
  float *acc = (float *)(void *)regs, *vals = acc + EXEC_BLOCK;
  uint16_t *col = (uint16_t *)(void *)(vals + EXEC_BLOCK);
  size_t R = 1;
  for (int32_t d = 0; d < red->rank; d++) R *= (size_t)red->dims[d];
  float init;
  ew_half_widen(dt, 1, init_p, &init);
  if (rows) {
    reduce_half_rows_extremum(s, kept, R, x, init, y, lo, hi, vals);
    return;
  }
  for (size_t j0 = lo; j0 < hi; j0 += EXEC_BLOCK) {
    size_t len = hi - j0 < EXEC_BLOCK ? hi - j0 : EXEC_BLOCK;
    for (size_t k = 0; k < len; k++) acc[k] = init;
    int64_t ridx[OPTIC_MAX_RANK] = {0}, roff = 0;
    for (size_t r = 0; r < R; r++) {
      exec_walk w = *kept;
      w.base = roff;
      walk_gather(&w, 2, x, j0, len, col);
      ew_half_widen(dt, len, col, vals);
      const void *src[2] = {acc, vals};
      ew_apply((optic_opcode)s->reduce_half, OPTIC_CMP_EQ, OPTIC_F32, OPTIC_F32, len, src, 0, acc);
      ew_half_round(dt, len, acc);
      for (int32_t d = red->rank - 1; d >= 0; d--) {
        roff += red->strides[d];
        if (++ridx[d] < red->dims[d]) break;
        roff -= ridx[d] * red->strides[d];
        ridx[d] = 0;
      }
    }
    ew_half_narrow_exact(dt, len, acc, y + j0);
  }
}

static optic_status reduce_step(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  int32_t n = s->n_operands / 2;
  if (n > 32) return optic_fail(OPTIC_ERR_UNSUPPORTED, "reduce %s: more than 32 inputs", s->name);
  exec_walk kept, red;
  reduce_walks(s, &kept, &red);
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
  if (s->reduce_half && n == 1) {
    const bool rows = half_rows_extremum(s, &red, R);
    const uint16_t *x = (const uint16_t *)(const void *)in[0];
    uint16_t *y = (uint16_t *)(void *)out[0];
    if (hi - lo < REDUCE_FEW_OUTPUTS && !rows) reduce_half_few(s, &kept, &red, x, init[0], y, lo, hi);
    else reduce_half_block(s, &kept, &red, rows, x, init[0], y, lo, hi, th->regs);
    return OPTIC_OK;
  }
  if (s->reduce_fast && n == 1) {
    const exec_walk kept_m = walk_merged(&kept), red_m = walk_merged(&red);
    reduce_f32_kernels(s, &kept_m, &red_m, (const float *)(const void *)in[0], init[0], (float *)(void *)out[0], lo, hi,
                       hi, (float *)(void *)th->regs);
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
  if (exec_reduce_window_rows_fit(s)) {
    exec_reduce_window_rows(s, f, th);
    return OPTIC_OK;
  }
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
  size_t lo, hi;
  exec_share(s->in_rows, th->t, th->nt, &lo, &hi);
  if (lo < hi) exec_input_fusion_rows(s, f, lo, hi, EXEC_BLOCK, th->regs);
  return OPTIC_OK;
}

int32_t exec_input_fusion_sumsq_input(const exec_step *s) {
  const ew_prog *p = s->prog;
  if (p == NULL || s->reduce_fast != OPTIC_OP_ADD || p->n_instr != 1 || p->n_outputs != 1) return -1;
  const ew_instr *in = &p->ins[0];
  if (in->kind != EW_OP || in->op != OPTIC_OP_MULTIPLY || in->in_dt != OPTIC_F32 || in->out_dt != OPTIC_F32 ||
      in->wide != OPTIC_DTYPE_INVALID || in->dst != -1 || in->n_src != 2) {
    return -1;
  }
  const ew_src *a = &in->src[0], *b = &in->src[1];
  if (a->kind != EW_INPUT || b->kind != EW_INPUT || a->index != b->index) return -1;
  const int32_t k = a->index;
  if (k < 0 || k >= p->n_inputs || p->input_dtype[k] != OPTIC_F32 || ((p->scalar_inputs >> k) & 1u)) return -1;
  return k;
}

/* Rows [lo, hi) of an input fusion summing x * x (s->in_sumsq): one
 * sum-of-squares kernel call per row of x. */
static void sumsq_rows(const exec_step *s, const void *const *inputs, float init, float *y, size_t lo, size_t hi) {
  const int32_t k = s->in_sumsq;
  const float *x = s->prog->input_const[k] ? s->prog->input_const[k] : inputs[k];
  const optic_reduce_kernels *kern = optic_reduce_kernels_get();
  for (size_t j = lo; j < hi; j++) {
    y[j] = fold_f32(OPTIC_OP_ADD, init, kern->r[OPTIC_REDUCE_SUMSQ](s->in_len, x + j * s->in_len));
  }
}

void exec_input_fusion_rows(const exec_step *s, const exec_frame *f, size_t lo, size_t hi, size_t block,
                            unsigned char *regs) {
  const void *inputs[64];
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  float init, *y = ref_ptr(f, &s->out[0]);
  if (s->in_init >= 0) memcpy(&init, inputs[s->in_init], 4);
  else init = s->in_init_value;
  size_t len = s->in_len;
  if (len == 0) {
    for (size_t j = lo; j < hi; j++)
      y[j] = fold_f32(s->reduce_fast, init, optic_reduce_identity(kernel_op(s->reduce_fast)));
    return;
  }
  if (s->in_sumsq >= 0) {
    sumsq_rows(s, inputs, init, y, lo, hi);
    return;
  }
  /* The reduced input of rows [lo, hi) is the range [lo * len, hi * len) of
   * the program's domain, computed a leaf (OPTIC_REDUCE_BLOCK floats, two
   * blocks) at a time into the staging register and reduced by the
   * contiguous kernel; leaves of a long row are joined as the kernel joins
   * them, several short rows share a leaf-sized computation. So each row is
   * bitwise what the kernel gives for the whole row (the evaluator's order). */
  const optic_reduce_op op = kernel_op(s->reduce_fast);
  const optic_reduce_kernels *k = optic_reduce_kernels_get();
  const bool ext = op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN;
  float *leaf_in = (float *)(void *)(regs + (size_t)s->prog->n_regs * block * 8);
  const size_t per = len < OPTIC_REDUCE_BLOCK ? OPTIC_REDUCE_BLOCK / len : 1; /* rows per computation */
  for (size_t row = lo; row < hi;) {
    size_t rows = hi - row < per ? hi - row : per;
    optic_reduce_tree t = {.count = 0, .depth = 0};
    float acc = optic_reduce_identity(op);
    size_t span = len < OPTIC_REDUCE_BLOCK ? rows * len : len;
    for (size_t p0 = 0; p0 < span; p0 += OPTIC_REDUCE_BLOCK) {
      size_t plen = span - p0 < OPTIC_REDUCE_BLOCK ? span - p0 : OPTIC_REDUCE_BLOCK;
      for (size_t b0 = 0; b0 < plen; b0 += block) {
        size_t blen = plen - b0 < block ? plen - b0 : block;
        void *outs[1] = {leaf_in + b0};
        ew_run_block_wide(s->prog, inputs, s->prog->scalar_inputs, outs, row * len + p0 + b0, blen, regs, block * 8);
      }
      if (len < OPTIC_REDUCE_BLOCK) {
        for (size_t i = 0; i < rows; i++) y[row + i] = fold_f32(s->reduce_fast, init, k->r[op](len, leaf_in + i * len));
      } else {
        float leaf = k->r[op](plen, leaf_in);
        if (ext) acc = fold_f32(s->reduce_fast, acc, leaf);
        else optic_reduce_tree_push(op, &t, leaf);
      }
    }
    if (len >= OPTIC_REDUCE_BLOCK) y[row] = fold_f32(s->reduce_fast, init, ext ? acc : optic_reduce_tree_root(op, &t));
    row += rows;
  }
}

optic_status exec_op_reduce(const exec_step *s, const optic_module_t *m, const exec_frame *f, const exec_thread *th) {
  (void)m;
  switch (s->op) {
    case OPTIC_OP_REDUCE: return reduce_step(s, f, th);
    case OPTIC_OP_REDUCE_WINDOW: return reduce_window_step(s, f, th);
    default: return map_step(s, f, th);
  }
}
