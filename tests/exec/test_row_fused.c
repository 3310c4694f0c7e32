/* The fused row-pattern programs (reduce -> broadcast -> elementwise, as in
 * softmax and layer norm), where a block's broadcast operands are read in
 * place (a row's value as one repeated element, a column vector's own
 * contiguous elements) and blocks are cut at row ends (exec/ewprog.c),
 * against an independent plain-C loop in f64, over row widths around the
 * vector width, the block-cut threshold, the block, the reduce leaf and the
 * row-ahead prefetch (1, 15-17, 255-257, 300, 511-513, 1023-1025, 1500) and
 * 1, 3 and 127 rows, at level FULL:
 *  - softmax: |got - want| <= 1e-5 want + 1e-7 (exp kernel ulps, sum order);
 *  - layer norm (gamma, beta): |got - want| <= 1e-5 (1 + |want|);
 *  - y = x * rowsum(x) + g (a row and a column broadcast): within
 *    |x| 2.5 log2(W + 1) FLT_EPSILON sum|x| (the reduce bound of
 *    kernels/reduce.h) + 4 FLT_EPSILON (|x s| + |g|);
 *  - 1 and 2 threads (every op split), input and output views aligned and
 *    misaligned by one float, and with streaming stores forced on: all six
 *    results bitwise equal.
 * A failure prints the pattern, shape, threads and view, and the command that
 * reruns the case. */
#include <float.h>
#include <math.h>

#include "kernels/stream.h"
#include "tests/exec/exec_util.h"

enum { SOFTMAX, LAYERNORM, ROWSUM };
static const char *const pattern_name[] = {"softmax", "layer norm", "x*rowsum(x)+g"};
static const char *const view_name[] = {"aligned", "misaligned", "streaming"};

static const char SOFTMAX_T[] =
    "HloModule softmax\n\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}"
    "\n\nad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n"
    "  x = f32[@R,@W] parameter(0)\n  ninf = f32[] constant(-inf)\n"
    "  r = f32[@R] reduce(x, ninf), dimensions={1}, to_apply=mx\n  rb = f32[@R,@W] broadcast(r), dimensions={0}\n"
    "  d = f32[@R,@W] subtract(x, rb)\n  e = f32[@R,@W] exponential(d)\n  zero = f32[] constant(0)\n"
    "  s = f32[@R] reduce(e, zero), dimensions={1}, to_apply=ad\n  sb = f32[@R,@W] broadcast(s), dimensions={0}\n"
    "  ROOT y = f32[@R,@W] divide(e, sb)\n}\n";

static const char LAYERNORM_T[] =
    "HloModule ln\n\nad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[@R,@W] parameter(0)\n  zero = f32[] constant(0)\n"
    "  s1 = f32[@R] reduce(x, zero), dimensions={1}, to_apply=ad\n  n = f32[] constant(@W)\n"
    "  nb = f32[@R] broadcast(n), dimensions={}\n  mean = f32[@R] divide(s1, nb)\n"
    "  mb = f32[@R,@W] broadcast(mean), dimensions={0}\n  c = f32[@R,@W] subtract(x, mb)\n"
    "  sq = f32[@R,@W] multiply(c, c)\n  s2 = f32[@R] reduce(sq, zero), dimensions={1}, to_apply=ad\n"
    "  var = f32[@R] divide(s2, nb)\n  eps = f32[] constant(1e-05)\n  eb = f32[@R] broadcast(eps), dimensions={}\n"
    "  ve = f32[@R] add(var, eb)\n  rs = f32[@R] rsqrt(ve)\n  rb = f32[@R,@W] broadcast(rs), dimensions={0}\n"
    "  xn = f32[@R,@W] multiply(c, rb)\n  g = f32[@W] parameter(1)\n  gb = f32[@R,@W] broadcast(g), dimensions={1}\n"
    "  xg = f32[@R,@W] multiply(xn, gb)\n  b = f32[@W] parameter(2)\n  bb = f32[@R,@W] broadcast(b), dimensions={1}\n"
    "  ROOT y = f32[@R,@W] add(xg, bb)\n}\n";

static const char ROWSUM_T[] =
    "HloModule rowsum\n\nad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[@R,@W] parameter(0)\n  zero = f32[] constant(0)\n"
    "  s = f32[@R] reduce(x, zero), dimensions={1}, to_apply=ad\n  sb = f32[@R,@W] broadcast(s), dimensions={0}\n"
    "  p = f32[@R,@W] multiply(x, sb)\n  g = f32[@W] parameter(1)\n  gb = f32[@R,@W] broadcast(g), dimensions={1}\n"
    "  ROOT y = f32[@R,@W] add(p, gb)\n}\n";

/* tmpl with @R and @W replaced by r and w. */
static void module_text(const char *tmpl, long r, long w, char *out, size_t cap) {
  size_t o = 0;
  for (const char *s = tmpl; *s && o + 24 < cap; s++) {
    if (s[0] == '@' && (s[1] == 'R' || s[1] == 'W')) {
      o += (size_t)snprintf(out + o, cap - o, "%ld", s[1] == 'R' ? r : w);
      s++;
    } else {
      out[o++] = *s;
    }
  }
  out[o] = '\0';
}

static void fill(float *x, size_t n, uint64_t seed) {
  ex_rng g = {seed};
  for (size_t i = 0; i < n; i++) x[i] = (float)(2.0 * (double)(ex_next(&g) >> 11) / 9007199254740992.0 - 1.0);
}

/* The f64 loops, row by row, and each element's tolerance. */
static void reference(int pat, long r, long w, const float *x, const float *g, const float *b, double *want,
                      double *tol) {
  for (long i = 0; i < r; i++) {
    const float *xr = x + i * w;
    double *yr = want + i * w, *tr = tol + i * w;
    double mx = -INFINITY, s = 0, sa = 0, ss = 0;
    for (long j = 0; j < w; j++) mx = fmax(mx, (double)xr[j]), s += xr[j], sa += fabs((double)xr[j]);
    if (pat == SOFTMAX) {
      double se = 0;
      for (long j = 0; j < w; j++) se += exp((double)xr[j] - mx);
      for (long j = 0; j < w; j++) yr[j] = exp((double)xr[j] - mx) / se, tr[j] = 1e-5 * yr[j] + 1e-7;
    } else if (pat == LAYERNORM) {
      double mean = s / (double)w;
      for (long j = 0; j < w; j++) ss += ((double)xr[j] - mean) * ((double)xr[j] - mean);
      double rs = 1.0 / sqrt(ss / (double)w + 1e-5);
      for (long j = 0; j < w; j++) {
        yr[j] = ((double)xr[j] - mean) * rs * g[j] + b[j];
        tr[j] = 1e-5 * (1.0 + fabs(yr[j]));
      }
    } else {
      double bound = 2.5 * log2((double)w + 1.0) * FLT_EPSILON * sa;
      for (long j = 0; j < w; j++) {
        yr[j] = (double)xr[j] * s + g[j];
        tr[j] = fabs((double)xr[j]) * bound + 4.0 * FLT_EPSILON * (fabs((double)xr[j] * s) + fabs((double)g[j]));
      }
    }
  }
}

/* Runs p on 'threads' threads with x and y at offset 'shift' floats into
 * their buffers; false (after saying why) when the run fails. */
static bool run(optic_program_t *p, int threads, const optic_shape *xs, const optic_shape *vs, float *xbuf,
                const float *g, const float *b, float *ybuf, int shift, int n_in) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = threads > 1 ? 1 : 0; /* 2 threads: split every op */
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
  optic_tensor in[3] = {{OPTIC_F32, *xs, xbuf + shift}, {OPTIC_F32, *vs, (void *)g}, {OPTIC_F32, *vs, (void *)b}};
  optic_tensor out = {OPTIC_F32, *xs, ybuf + shift};
  optic_status st = ctx ? optic_program_run(p, ctx, in, n_in, &out, 1) : OPTIC_ERR_INTERNAL;
  OT_CHECK(st == OPTIC_OK, "run: %s: %s", optic_status_name(st), optic_last_error());
  optic_exec_ctx_destroy(ctx);
  return st == OPTIC_OK;
}

/* The first element of y (n floats) outside want +- tol, or -1. */
static long first_off(const float *y, const double *want, const double *tol, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (!(fabs((double)y[k] - want[k]) <= tol[k])) return (long)k;
  }
  return -1;
}

static void check_shape(int pat, long r, long w) {
  static const char *const tmpl[] = {SOFTMAX_T, LAYERNORM_T, ROWSUM_T};
  char text[4096];
  module_text(tmpl[pat], r, w, text, sizeof text);
  optic_module_t *m = ex_parse(text);
  optic_compile_options co = optic_compile_options_default();
  co.level = OPTIC_OPT_FULL;
  optic_program_t *p = NULL;
  if (m) OT_EXPECT_OK(optic_compile(m, &co, &p));
  size_t n = (size_t)(r * w);
  float *x = calloc(n + 1, sizeof *x), *g = calloc((size_t)w, sizeof *g), *b = calloc((size_t)w, sizeof *b);
  float *y = calloc(n + 1, sizeof *y), *first = calloc(n, sizeof *first);
  double *want = calloc(n, sizeof *want), *tol = calloc(n, sizeof *tol);
  if (p && x && g && b && y && first && want && tol) {
    fill(x, n + 1, (uint64_t)(pat * 100003 + r * 131 + w));
    fill(g, (size_t)w, (uint64_t)w * 7 + 1), fill(b, (size_t)w, (uint64_t)w * 11 + 2);
    reference(pat, r, w, x, g, b, want, tol);
    optic_shape xs = {.rank = 2, .dims = {r, w}}, vs = {.rank = 1, .dims = {w}};
    int n_in = pat == LAYERNORM ? 3 : pat == ROWSUM ? 2 : 1;
    /* views: 0 aligned, 1 misaligned by one float, 2 aligned with streaming
     * stores forced (threshold 0: every kernel call and member streams) */
    for (int threads = 1; threads <= 2; threads++) {
      for (int view = 0; view <= 2; view++) {
        const int shift = view == 1;
        size_t saved = view == 2 ? optic_stream_threshold_set(0) : 0;
        if (shift) memmove(x + 1, x, n * sizeof *x); /* the same values one float on */
        bool ok = run(p, threads, &xs, &vs, x, g, b, y, shift, n_in);
        if (shift) memmove(x, x + 1, n * sizeof *x);
        if (view == 2) optic_stream_threshold_set(saved);
        long bad = ok ? first_off(y + shift, want, tol, n) : -1;
        OT_CHECK(bad < 0, "%s f32[%ld,%ld] %d threads %s: y[%ld,%ld] = %.9g, want %.9g +- %.3g", pattern_name[pat], r,
                 w, threads, view_name[view], bad / w, bad % w, (double)y[shift + bad], want[bad], tol[bad]);
        if (threads == 1 && shift == 0) memcpy(first, y, n * sizeof *y);
        OT_CHECK(!ok || memcmp(first, y + shift, n * sizeof *y) == 0,
                 "%s f32[%ld,%ld] %d threads %s: not bitwise the 1-thread aligned result", pattern_name[pat], r, w,
                 threads, view_name[view]);
      }
    }
  }
  free(x), free(g), free(b), free(y), free(first), free(want), free(tol);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static void sweep(int pat) {
  static const long widths[] = {1, 15, 16, 17, 255, 256, 257, 300, 511, 512, 513, 1023, 1024, 1025, 1500};
  static const long rows[] = {1, 3, 127};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    for (size_t j = 0; j < sizeof widths / sizeof *widths; j++) check_shape(pat, rows[i], widths[j]);
  }
}

static void softmax(void) { sweep(SOFTMAX); }
static void layer_norm(void) { sweep(LAYERNORM); }
static void rowsum_broadcast(void) { sweep(ROWSUM); }

static const ot_case cases[] = {
    {"softmax", softmax},
    {"layer_norm", layer_norm},
    {"rowsum_broadcast", rowsum_broadcast},
};
OT_MAIN(cases)
