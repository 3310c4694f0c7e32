/* Running a layout plan (see layout_plan.c): walks units [begin, end) with
 * an odometer over the plan's loops, the chunk index innermost, and calls the
 * plan's kernels. Never allocates, never fails, touches only the part of y
 * that its units own. */
#include "kernels/layout.h"

/* One chunk c of the inner operation at x, y (already offset by the loops). */
static void run_chunk(const optic_layout_plan *p, const unsigned char *x, unsigned char *y, size_t c) {
  const size_t es = p->elem_size;
  const size_t lo = c * p->chunk;
  switch (p->kind) {
    case OPTIC_LAYOUT_PLAN_COPY: {
      size_t len = p->cols - lo < p->chunk ? p->cols - lo : p->chunk;
      p->copy(len * es, x + lo * es, y + lo * es);
      break;
    }
    case OPTIC_LAYOUT_PLAN_FILL: {
      size_t len = p->cols - lo < p->chunk ? p->cols - lo : p->chunk;
      p->fill(len, x, y + lo * es);
      break;
    }
    case OPTIC_LAYOUT_PLAN_ROWS: {
      size_t nr = p->rows - lo < p->chunk ? p->rows - lo : p->chunk;
      p->copy2d(nr, p->cols * es, x + lo * p->ldx * es, p->ldx * es, y + lo * p->ldy * es, p->ldy * es);
      break;
    }
    case OPTIC_LAYOUT_PLAN_FILL_ROWS: {
      size_t hi = p->rows - lo < p->chunk ? p->rows : lo + p->chunk;
      for (size_t r = lo; r < hi; r++) p->fill(p->cols, x + r * p->ldx * es, y + r * p->ldy * es);
      break;
    }
    case OPTIC_LAYOUT_PLAN_TRANSPOSE: {
      size_t nc = p->cols - lo < p->chunk ? p->cols - lo : p->chunk;
      p->transpose(p->rows, nc, x + lo * es, p->ldx, y + lo * p->ldy * es, p->ldy);
      break;
    }
    case OPTIC_LAYOUT_PLAN_EMPTY: break;
  }
}

void optic_layout_run(const optic_layout_plan *p, const void *xv, void *yv, size_t unit_begin, size_t unit_end) {
  if (unit_end > p->units) unit_end = p->units;
  if (unit_begin >= unit_end) return;
  const unsigned char *x = xv;
  unsigned char *y = yv;
  const size_t es = p->elem_size;
  const int nl = p->nloops;
  size_t idx[OPTIC_MAX_RANK];
  size_t c = unit_begin % p->nchunks, rest = unit_begin / p->nchunks;
  size_t xo = 0, yo = 0;
  for (int d = nl - 1; d >= 0; d--) {
    idx[d] = rest % p->loop_n[d];
    rest /= p->loop_n[d];
    xo += idx[d] * p->loop_xs[d];
    yo += idx[d] * p->loop_ys[d];
  }
  for (size_t u = unit_begin; u < unit_end; u++) {
    run_chunk(p, x + xo * es, y + yo * es, c);
    if (++c < p->nchunks) continue;
    c = 0;
    /* Next loop index: carry from the innermost loop outwards. Past the very
     * last unit the outermost index runs off the end, which is never used. */
    for (int d = nl - 1; d >= 0; d--) {
      idx[d]++;
      xo += p->loop_xs[d];
      yo += p->loop_ys[d];
      if (idx[d] < p->loop_n[d] || d == 0) break;
      xo -= p->loop_n[d] * p->loop_xs[d];
      yo -= p->loop_n[d] * p->loop_ys[d];
      idx[d] = 0;
    }
  }
}
