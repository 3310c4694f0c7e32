/* reduce-window of one f32 input with an add/multiply/maximum/minimum
 * reducer, as rows of contiguous chunks: the trailing dims that the window
 * does not touch (size 1, stride 1, no padding or dilation) form a chunk of
 * consecutive elements, dim q (the last windowed dim) runs along a row, and
 * the dims before q index the rows. For each window position, in row-major
 * order, a row's accumulators fold the input run that position reads (a
 * vector loop over the chunk, or a strided loop along dim q when the chunk
 * is one element) or the init value where it reads padding. So each output
 * folds init and then its window's values in row-major window order, exactly
 * as the evaluator and the general path do: results agree bitwise. Threads
 * split the output's chunks. */
#include <stddef.h>
#include <string.h>

#include "exec/exec_internal.h"

/* a (the accumulator) folded with b: the reducers' f32 semantics (a NaN
 * operand wins, the first when both are; otherwise a > b ? a : b, so
 * max(-0, +0) is +0 and max(+0, -0) is -0), written branch-free so that
 * the loops vectorize. */
#define FOLD_ADD(a, b) ((a) + (b))
#define FOLD_MUL(a, b) ((a) * (b))
#define FOLD_MAX(a, b) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define FOLD_MIN(a, b) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))

#define FOLD_LOOPS(F)                                                           \
  for (size_t o = 0; o < no; o++, acc += ni, x += xo) {                         \
    if (xi == 1) {                                                              \
      for (size_t i = 0; i < ni; i++) acc[i] = F(acc[i], x[i]);                 \
    } else {                                                                    \
      for (size_t i = 0; i < ni; i++) acc[i] = F(acc[i], x[(ptrdiff_t)i * xi]); \
    }                                                                           \
  }

/* acc[o * ni + i] = acc[o * ni + i] op x[o * xo + i * xi], o < no, i < ni. */
static inline __attribute__((always_inline)) void fold_2d(int op, float *restrict acc, const float *restrict x,
                                                          size_t no, ptrdiff_t xo, size_t ni, ptrdiff_t xi) {
  switch (op) {
    case OPTIC_OP_ADD: FOLD_LOOPS(FOLD_ADD) break;
    case OPTIC_OP_MULTIPLY: FOLD_LOOPS(FOLD_MUL) break;
    case OPTIC_OP_MAXIMUM: FOLD_LOOPS(FOLD_MAX) break;
    default: FOLD_LOOPS(FOLD_MIN) break;
  }
}

static inline __attribute__((always_inline)) void fold_run(int op, float *restrict acc, const float *restrict x,
                                                           size_t n) {
  fold_2d(op, acc, x, 1, 0, n, 1);
}

/* acc[i] = acc[i] op v, i < n (a window position over padding). */
static inline __attribute__((always_inline)) void fold_value(int op, float *restrict acc, float v, size_t n) {
  if (n > 0) fold_2d(op, acc, &v, 1, 0, n, 0);
}

#define WINDOW_TABLE 64

typedef struct window_rows {
  int32_t q;           /* last windowed dim */
  size_t chunk, rows;  /* elements per chunk; output rows */
  int64_t out_q, in_q; /* dim q's extent in the output and the input */
  int64_t ist[OPTIC_MAX_RANK];
  /* for the first WINDOW_TABLE window offsets kk along q: the output
   * positions [ja, jb) that read the input (no division per row) */
  int64_t ja[WINDOW_TABLE], jb[WINDOW_TABLE];
} window_rows;

/* First j >= 0 with j * s + c >= 0 (s > 0). */
static int64_t first_at_least_zero(int64_t c, int64_t s) { return c >= 0 ? 0 : (-c + s - 1) / s; }

static bool untouched(const optic_window_dim *w) {
  return w->size == 1 && w->stride == 1 && w->pad_low == 0 && w->pad_high == 0 && w->base_dilation == 1;
}

static window_rows window_geometry(const optic_shape *is, const optic_shape *os, const optic_window_dim *win) {
  window_rows g = {.q = is->rank - 1, .chunk = 1, .rows = 1};
  int64_t v = 1;
  for (int32_t d = is->rank - 1; d >= 0; d--) g.ist[d] = v, v *= is->dims[d];
  while (g.q > 0 && untouched(&win[g.q])) g.chunk *= (size_t)os->dims[g.q--];
  for (int32_t d = 0; d < g.q; d++) g.rows *= (size_t)os->dims[d];
  g.out_q = os->dims[g.q], g.in_q = is->dims[g.q];
  const optic_window_dim *e = &win[g.q];
  for (int64_t kk = 0; kk < WINDOW_TABLE && kk < e->size; kk++) {
    int64_t c0 = kk * e->window_dilation - e->pad_low;
    g.ja[kk] = first_at_least_zero(c0, e->stride), g.jb[kk] = first_at_least_zero(c0 - g.in_q, e->stride);
  }
  return g;
}

/* The input offset of window position kidx for the output row at
 * coordinates o (dims before q), or -1 when that position reads padding. */
static int64_t window_row_offset(const window_rows *g, const optic_window_dim *win, const optic_shape *is,
                                 const int64_t *kidx, const int64_t *o) {
  int64_t off = 0;
  for (int32_t d = 0; d < g->q; d++) {
    const optic_window_dim *e = &win[d];
    int64_t kk = e->reversal ? e->size - 1 - kidx[d] : kidx[d];
    int64_t X = o[d] * e->stride + kk * e->window_dilation - e->pad_low;
    if (e->base_dilation == 1) {
      if (X < 0 || X >= is->dims[d]) return -1;
    } else {
      if (X < 0 || X >= (is->dims[d] - 1) * e->base_dilation + 1 || X % e->base_dilation != 0) return -1;
      X /= e->base_dilation;
    }
    off += X * g->ist[d];
  }
  return off;
}

/* Output positions [*ja, *jb) along q whose window offset kk reads the
 * input: 0 <= j*s + c0 < in_q with c0 = kk*dilation - pad_low. */
static void valid_range(const window_rows *g, const optic_window_dim *e, int64_t kk, int64_t *ja, int64_t *jb) {
  if (kk < WINDOW_TABLE && e->base_dilation == 1) {
    *ja = g->ja[kk], *jb = g->jb[kk];
    return;
  }
  int64_t c0 = kk * e->window_dilation - e->pad_low;
  *ja = first_at_least_zero(c0, e->stride), *jb = first_at_least_zero(c0 - g->in_q, e->stride);
}

/* Output positions [j0, j1) along dim q of one row (acc: their chunks),
 * window offset kk along q, input row x: fold what each position reads. */
static inline __attribute__((always_inline)) void fold_row(int op, const window_rows *g, const optic_window_dim *e,
                                                           int64_t kk, const float *x, float init, float *acc,
                                                           int64_t j0, int64_t j1) {
  const size_t C = g->chunk;
  int64_t c0 = kk * e->window_dilation - e->pad_low, s = e->stride;
  if (e->base_dilation != 1) { /* per position: on the dilation lattice or not */
    int64_t dil_in = (g->in_q - 1) * e->base_dilation + 1;
    for (int64_t j = j0; j < j1; j++) {
      int64_t X = j * s + c0;
      float *a = acc + (size_t)(j - j0) * C;
      if (X >= 0 && X < dil_in && X % e->base_dilation == 0)
        fold_run(op, a, x + (X / e->base_dilation) * (int64_t)C, C);
      else fold_value(op, a, init, C);
    }
    return;
  }
  /* valid positions: 0 <= j*s + c0 < in_q */
  int64_t ja, jb;
  valid_range(g, e, kk, &ja, &jb);
  ja = ja < j0 ? j0 : ja > j1 ? j1 : ja;
  jb = jb < ja ? ja : jb > j1 ? j1 : jb;
  fold_value(op, acc, init, (size_t)(ja - j0) * C);
  float *a = acc + (size_t)(ja - j0) * C;
  const float *xa = x + (ja * s + c0) * (int64_t)C;
  if (ja < jb && C == 1) fold_2d(op, a, xa, 1, 0, (size_t)(jb - ja), (ptrdiff_t)s);
  else if (ja < jb) fold_2d(op, a, xa, (size_t)(jb - ja), (ptrdiff_t)(s * (int64_t)C), C, 1);
  fold_value(op, acc + (size_t)(jb - j0) * C, init, (size_t)(j1 - jb) * C);
}

/* One row's positions [j0, j1): init, then every window position in order. */
static inline __attribute__((always_inline)) void window_span(int op, const exec_step *s, const window_rows *g,
                                                              const float *x, float init, float *acc, const int64_t *o,
                                                              int64_t j0, int64_t j1) {
  const optic_window_dim *win = s->attrs.reduce_window.window;
  const optic_shape *is = &s->operand_shape[0];
  const size_t n = (size_t)(j1 - j0) * g->chunk;
  for (size_t i = 0; i < n; i++) acc[i] = init;
  int64_t kidx[OPTIC_MAX_RANK] = {0};
  size_t W = 1;
  for (int32_t d = 0; d <= g->q; d++) W *= (size_t)win[d].size;
  for (size_t w = 0; w < W; w++) {
    int64_t off = window_row_offset(g, win, is, kidx, o);
    const optic_window_dim *e = &win[g->q];
    int64_t kk = e->reversal ? e->size - 1 - kidx[g->q] : kidx[g->q];
    if (off < 0 || x == NULL) fold_value(op, acc, init, n); /* x: NULL when the input is empty */
    else fold_row(op, g, e, kk, x + off, init, acc, j0, j1);
    for (int32_t d = g->q; d >= 0; d--) {
      if (++kidx[d] < win[d].size) break;
      kidx[d] = 0;
    }
  }
}

/* window_span with the reducer a constant, so that the folds inline. */
static void window_span_op(const exec_step *s, const window_rows *g, const float *x, float init, float *acc,
                           const int64_t *o, int64_t j0, int64_t j1) {
  switch (s->reduce_fast) {
    case OPTIC_OP_ADD: window_span(OPTIC_OP_ADD, s, g, x, init, acc, o, j0, j1); break;
    case OPTIC_OP_MULTIPLY: window_span(OPTIC_OP_MULTIPLY, s, g, x, init, acc, o, j0, j1); break;
    case OPTIC_OP_MAXIMUM: window_span(OPTIC_OP_MAXIMUM, s, g, x, init, acc, o, j0, j1); break;
    default: window_span(OPTIC_OP_MINIMUM, s, g, x, init, acc, o, j0, j1); break;
  }
}

bool exec_reduce_window_rows_fit(const exec_step *s) {
  return s->reduce_fast && s->n_operands == 2 && s->operand_shape[0].rank > 0;
}

void exec_reduce_window_rows(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const optic_shape *is = &s->operand_shape[0];
  const optic_shape *os = optic_type_is_tuple(s->type) ? &s->type->elements[0].shape : &s->type->shape;
  window_rows g = window_geometry(is, os, s->attrs.reduce_window.window);
  const float *x = ref_ptr(f, &s->in[s->in_first[0]]);
  float init, *y = ref_ptr(f, &s->out[0]);
  memcpy(&init, ref_ptr(f, &s->in[s->in_first[1]]), 4);
  size_t units = g.rows * (size_t)g.out_q, lo, hi;
  if (g.chunk == 0) return;
  exec_share(units, th->t, th->nt, &lo, &hi);
  /* the row's coordinates over the dims before q, advanced row by row */
  int64_t o[OPTIC_MAX_RANK] = {0};
  size_t r = lo / (size_t)g.out_q;
  for (int32_t d = g.q - 1; d >= 0; d--) o[d] = (int64_t)(r % (size_t)os->dims[d]), r /= (size_t)os->dims[d];
  for (size_t u = lo; u < hi;) {
    int64_t j0 = (int64_t)(u % (size_t)g.out_q), j1 = g.out_q;
    if (hi - u < (size_t)(j1 - j0)) j1 = j0 + (int64_t)(hi - u);
    window_span_op(s, &g, x, init, y + u * g.chunk, o, j0, j1);
    u += (size_t)(j1 - j0);
    for (int32_t d = g.q - 1; d >= 0 && j1 == g.out_q; d--) {
      if (++o[d] < os->dims[d]) break;
      o[d] = 0;
    }
  }
}
