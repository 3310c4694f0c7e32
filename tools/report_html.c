/* `optic report`'s report.html: one self-contained file (no scripts, no
 * external resources) with inline SVG plots drawn by the small log-log plot
 * writer below, and the tables. Our own writer rather than gnuplot: no extra
 * dependency or process, exact control of the markup (the tests parse each
 * <svg> as XML), and tooltips (<title>) naming each case. A plot whose data
 * the run does not have is left out with a sentence saying what produces it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <optic/optic.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "tools/report.h"

#define W 640
#define H 440
#define ML 90 /* margins: left (room for "100 GFLOP/s"), right, top, bottom */
#define MR 30
#define MT 20
#define MB 50

static void esc(optic_strbuf *s, const char *t) {
  for (; t && *t; t++) {
    switch (*t) {
      case '&': optic_strbuf_printf(s, "&amp;"); break;
      case '<': optic_strbuf_printf(s, "&lt;"); break;
      case '>': optic_strbuf_printf(s, "&gt;"); break;
      case '"': optic_strbuf_printf(s, "&quot;"); break;
      case '\'': optic_strbuf_printf(s, "&#39;"); break;
      default: optic_strbuf_printf(s, "%c", *t);
    }
  }
}

/* A benchmark name, breakable after each '/' (<wbr>) so a table cell wraps
 * it at its components instead of widening the page. */
static void esc_name(optic_strbuf *s, const char *t) {
  for (; t && *t; t++) {
    char c[2] = {*t, '\0'};
    esc(s, c);
    if (*t == '/') optic_strbuf_printf(s, "<wbr/>");
  }
}

/* ------------------------------------------------------- log-log plot */

/* How an axis labels its decades. */
typedef enum axis_kind { AXIS_PLAIN, AXIS_TIME_NS, AXIS_FLOPS } axis_kind;

typedef struct plot {
  optic_strbuf *s;
  double x0, x1, y0, y1; /* log10 ranges */
  int id;                /* unique in the document: names the clip path of the frame */
} plot;

/* A decade's label with its unit: "1 us", "10 ms" for times in ns, "1 GFLOP/s". */
static void decade_label(char *buf, size_t size, double d, axis_kind kind) {
  double v = pow(10, d);
  if (kind == AXIS_TIME_NS) {
    report_fmt_time(buf, size, v);
  } else if (kind == AXIS_FLOPS) {
    static const char *const units[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
    int k = (int)floor(d / 3);
    if (k < 0) k = 0;
    if (k > 5) k = 5;
    snprintf(buf, size, "%g %s", pow(10, d - 3 * k), units[k]);
  } else {
    snprintf(buf, size, "%g", v);
  }
}

static int plot_count; /* per process: ids stay unique within one report */

static double px(const plot *p, double x) { return ML + (log10(x) - p->x0) / (p->x1 - p->x0) * (W - ML - MR); }
static double py(const plot *p, double y) { return H - MB - (log10(y) - p->y0) / (p->y1 - p->y0) * (H - MT - MB); }

/* Decades covering [lo, hi] (both > 0), at least one decade wide. */
static void range(double lo, double hi, double *l0, double *l1) {
  *l0 = floor(log10(lo));
  *l1 = ceil(log10(hi));
  if (*l1 <= *l0) *l1 = *l0 + 1;
}

static void plot_begin(plot *p, optic_strbuf *s, double xlo, double xhi, double ylo, double yhi, const char *title,
                       const char *xlabel, axis_kind xk, const char *ylabel, axis_kind yk) {
  char lab[48];
  p->s = s;
  range(xlo, xhi, &p->x0, &p->x1);
  range(ylo, yhi, &p->y0, &p->y1);
  optic_strbuf_printf(
      s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
  optic_strbuf_printf(s, "<title>");
  esc(s, title);
  p->id = plot_count++;
  optic_strbuf_printf(s,
                      "</title>\n<defs><clipPath id=\"optic-frame-%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                      "height=\"%d\"/></clipPath></defs>\n",
                      p->id, ML, MT, W - ML - MR, H - MT - MB);
  optic_strbuf_printf(s, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"white\" stroke=\"#444\"/>\n", ML,
                      MT, W - ML - MR, H - MT - MB);
  for (double d = p->x0; d <= p->x1 + 1e-9; d++) {
    double x = px(p, pow(10, d));
    optic_strbuf_printf(s, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, MT, x, H - MB);
    decade_label(lab, sizeof lab, d, xk);
    optic_strbuf_printf(s, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", x,
                        H - MB + 15, lab);
  }
  for (double d = p->y0; d <= p->y1 + 1e-9; d++) {
    double y = py(p, pow(10, d));
    optic_strbuf_printf(s, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML, y, W - MR, y);
    decade_label(lab, sizeof lab, d, yk);
    optic_strbuf_printf(s, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", ML - 4, y + 4,
                        lab);
  }
  optic_strbuf_printf(s, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">", (W + ML - MR) / 2, H - 12);
  esc(s, xlabel);
  optic_strbuf_printf(s,
                      "</text>\n<text x=\"14\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
                      "transform=\"rotate(-90 14 %d)\">",
                      (H - MB + MT) / 2, (H - MB + MT) / 2);
  esc(s, ylabel);
  optic_strbuf_printf(s, "</text>\n");
}

/* A polyline through (x[i], y[i]), clipped to the frame. */
static void plot_line(plot *p, const double *x, const double *y, int n, const char *style) {
  optic_strbuf_printf(p->s, "<polyline fill=\"none\" clip-path=\"url(#optic-frame-%d)\" %s points=\"", p->id, style);
  for (int i = 0; i < n; i++) optic_strbuf_printf(p->s, "%s%.1f,%.1f", i ? " " : "", px(p, x[i]), py(p, y[i]));
  optic_strbuf_printf(p->s, "\"/>\n");
}

static void plot_point(plot *p, double x, double y, const char *color, const char *tip) {
  optic_strbuf_printf(p->s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.75\"><title>",
                      px(p, x), py(p, y), color);
  esc(p->s, tip);
  optic_strbuf_printf(p->s, "</title></circle>\n");
}

static void plot_end(plot *p) { optic_strbuf_printf(p->s, "</svg>\n"); }

/* ----------------------------------------------------------- the plots */

static void plot_estimates(optic_strbuf *s, const report *r) {
  double lo = (double)INFINITY, hi = 0;
  size_t n = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->ratio) || c->time_ns <= 0 || c->est_time_ns <= 0) continue;
    n++;
    lo = fmin(lo, fmin(c->time_ns, c->est_time_ns));
    hi = fmax(hi, fmax(c->time_ns, c->est_time_ns));
  }
  optic_strbuf_printf(s, "<h2 id=\"estimates\">Estimated vs measured time</h2>\n");
  if (n == 0) {
    optic_strbuf_printf(s,
                        "<p>No case in this run carries the compiler's estimate (<code>est_time_ns</code>): "
                        "the graph-backed suites (compile + run through the runtime) set it, with "
                        "<code>est_flops</code>, <code>est_bytes</code> and <code>est_peak_bytes</code>; "
                        "this plot appears when a run has them.</p>\n");
    return;
  }
  optic_strbuf_printf(s,
                      "<p>Each point is a case: x the compiler's estimate, y the measured time per iteration "
                      "(log-log). The line is y = x; the band is &#177;25%% (green points inside it, red "
                      "outside; above the line: slower than estimated).</p>\n");
  plot p;
  plot_begin(&p, s, lo / 1.3, hi * 1.3, lo / 1.3, hi * 1.3, "estimated vs measured time", "estimated time",
             AXIS_TIME_NS, "measured time", AXIS_TIME_NS);
  double a = pow(10, p.x0), b = pow(10, p.x1);
  optic_strbuf_printf(s,
                      "<polygon fill=\"#cce5ff\" fill-opacity=\"0.6\" clip-path=\"url(#optic-frame-%d)\" "
                      "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                      p.id, px(&p, a), py(&p, a * 0.75), px(&p, b), py(&p, b * 0.75), px(&p, b), py(&p, b * 1.25),
                      px(&p, a), py(&p, a * 1.25));
  double xs[2] = {a, b}, ys[2] = {a, b};
  plot_line(&p, xs, ys, 2, "stroke=\"#333\" stroke-dasharray=\"4 3\"");
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->ratio) || c->time_ns <= 0 || c->est_time_ns <= 0) continue;
    char tip[1200], measured[32], estimated[32];
    report_fmt_time(measured, sizeof measured, c->time_ns);
    report_fmt_time(estimated, sizeof estimated, c->est_time_ns);
    snprintf(tip, sizeof tip, "%s: measured %s, estimated %s (%.2fx)", c->name, measured, estimated, c->ratio);
    plot_point(&p, c->est_time_ns, c->time_ns, fabs(log(c->ratio)) <= log(1.25) ? "#1a7f37" : "#cf222e", tip);
  }
  plot_end(&p);
}

static void plot_roofline(optic_strbuf *s, const report *r) {
  const optic_machine *m = &r->machine;
  double lo = (double)INFINITY, hi = 0, ylo = (double)INFINITY;
  size_t n = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->intensity) || isnan(c->achieved_flops) || c->intensity <= 0 || c->achieved_flops <= 0) continue;
    n++;
    lo = fmin(lo, c->intensity), hi = fmax(hi, c->intensity), ylo = fmin(ylo, c->achieved_flops);
  }
  optic_strbuf_printf(s, "<h2 id=\"roofline\">Roofline</h2>\n");
  if (n == 0) {
    optic_strbuf_printf(s,
                        "<p>No case in this run has both a flop and a byte figure (<code>est_flops</code> and "
                        "<code>est_bytes</code>, or the <code>GFLOP/s</code> and <code>GB/s</code> counters, "
                        "e.g. the exp kernels): the graph-backed suites and <code>kernel/unary/*vexp*</code> "
                        "produce them.</p>\n");
    return;
  }
  /* Ridge points: where the bandwidth roofs meet the compute roof. */
  double ridge_dram = m->peak_flops / m->dram_bandwidth, ridge_cache = m->peak_flops / m->cache_bandwidth;
  lo = fmin(lo, ridge_cache) / 4, hi = fmax(hi, ridge_dram) * 4;
  optic_strbuf_printf(s,
                      "<p>Each point is a case at its arithmetic intensity (flops per byte) and achieved "
                      "FLOP/s; the roofs are the machine model's compute peak (%.4g GFLOP/s) and its DRAM "
                      "(%.4g GB/s, solid) and cache (%.4g GB/s, dashed) bandwidths, device-wide.</p>\n",
                      m->peak_flops * 1e-9, m->dram_bandwidth * 1e-9, m->cache_bandwidth * 1e-9);
  plot p;
  plot_begin(&p, s, lo, hi, fmin(ylo, lo * m->dram_bandwidth) / 2, m->peak_flops * 2, "roofline",
             "arithmetic intensity (flop/byte)", AXIS_PLAIN, "achieved", AXIS_FLOPS);
  double a = pow(10, p.x0), b = pow(10, p.x1);
  double xd[3] = {a, ridge_dram, b}, yd[3] = {a * m->dram_bandwidth, m->peak_flops, m->peak_flops};
  double xc[3] = {a, ridge_cache, b}, yc[3] = {a * m->cache_bandwidth, m->peak_flops, m->peak_flops};
  plot_line(&p, xd, yd, 3, "stroke=\"#0550ae\" stroke-width=\"2\"");
  plot_line(&p, xc, yc, 3, "stroke=\"#8250df\" stroke-width=\"2\" stroke-dasharray=\"6 3\"");
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (isnan(c->intensity) || isnan(c->achieved_flops) || c->intensity <= 0 || c->achieved_flops <= 0) continue;
    char tip[1200];
    snprintf(tip, sizeof tip, "%s: %.3g flop/byte, %.4g GFLOP/s", c->name, c->intensity, c->achieved_flops * 1e-9);
    plot_point(&p, c->intensity, c->achieved_flops, "#bc4c00", tip);
  }
  plot_end(&p);
}

/* Pixels a label of n characters takes at font-size 11 (sans-serif averages
 * about 0.6 em per character; a little more keeps long names whole). */
static int label_px(size_t n) { return (int)(n * 6.6) + 12; }

/* Horizontal bars per op: measured (solid) and estimated (outline). */
static void plot_ops(optic_strbuf *s, const report *r) {
  optic_strbuf_printf(s, "<h2 id=\"per-op\">Per-op time</h2>\n");
  size_t shown = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    if (c->n_ops == 0) continue;
    double maxv = 0;
    size_t longest = 0;
    for (size_t k = 0; k < c->n_ops; k++) {
      if (!isnan(c->ops[k].measured_ns)) maxv = fmax(maxv, c->ops[k].measured_ns);
      if (!isnan(c->ops[k].estimated_ns)) maxv = fmax(maxv, c->ops[k].estimated_ns);
      if (strlen(c->ops[k].op) > longest) longest = strlen(c->ops[k].op);
    }
    if (maxv <= 0) continue;
    shown++;
    int row = 22, h = MT + row * (int)c->n_ops + 30, left = label_px(longest), width = 460, w = left + width + 20;
    char full[32], t[32];
    report_fmt_time(full, sizeof full, maxv);
    optic_strbuf_printf(s, "<p>");
    esc(s, c->name);
    optic_strbuf_printf(s, ": time per op and iteration, measured (filled) and estimated (outline).</p>\n");
    optic_strbuf_printf(
        s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", w, h, w, h);
    for (size_t k = 0; k < c->n_ops; k++) {
      const report_op_time *o = &c->ops[k];
      int y = MT + row * (int)k;
      optic_strbuf_printf(s, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">", left - 6, y + 13);
      esc(s, o->op);
      optic_strbuf_printf(s, "</text>\n");
      if (!isnan(o->measured_ns)) {
        report_fmt_time(t, sizeof t, o->measured_ns);
        optic_strbuf_printf(s,
                            "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#0969da\"><title>%s "
                            "measured</title></rect>\n",
                            left, y + 2, width * o->measured_ns / maxv, t);
      }
      if (!isnan(o->estimated_ns)) {
        report_fmt_time(t, sizeof t, o->estimated_ns);
        optic_strbuf_printf(s,
                            "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"none\" stroke=\"#cf222e\" "
                            "stroke-width=\"2\"><title>%s estimated</title></rect>\n",
                            left, y + 2, width * o->estimated_ns / maxv, t);
      }
    }
    optic_strbuf_printf(s, "<text x=\"%d\" y=\"%d\" font-size=\"11\">full bar = %s</text>\n</svg>\n", left, h - 8,
                        full);
  }
  if (shown == 0)
    optic_strbuf_printf(s,
                        "<p>No case in this run reports per-op times: a benchmark that runs a program under "
                        "the runtime's profiler (the model suite's MLP training step) produces them as "
                        "<code>op_ns:&lt;op&gt;</code> and <code>op_est_ns:&lt;op&gt;</code> counters; this "
                        "plot appears when a run has them.</p>\n");
}

/* One row per computed ratio the report lists: a bar from 1 to the ratio
 * oriented so that right is better for optic, on a log2 axis from 1/4 to 4;
 * a ratio beyond the axis ends in an arrow with its value and "off scale".
 * Coloured by status, with the bar's threshold marked. */
static void plot_ratios(optic_strbuf *s, const report *r) {
  size_t n = 0, longest = 0;
  for (size_t i = 0; i < r->n_ratios; i++) {
    const report_ratio *q = &r->ratios[i];
    if (isnan(q->ratio) || !report_ratio_listed(r, q)) continue;
    n++;
    if (strlen(q->name) > longest) longest = strlen(q->name);
  }
  optic_strbuf_printf(s, "<h2 id=\"peer-ratios\">Peer ratios</h2>\n");
  if (n == 0) {
    optic_strbuf_printf(s,
                        "<p>No ratio of <code>bench/ratios.json</code> could be computed: neither side of "
                        "any pair ran (the default and full runs include them).</p>\n");
    return;
  }
  int row = 20, left = label_px(longest), width = 420, w = left + width + 150, h = MT + row * (int)n + 30;
  double lo = -2, hi = 2; /* log2 range */
#define RX(v) (left + (fmin(fmax(log2(v), lo), hi) - lo) / (hi - lo) * width)
  optic_strbuf_printf(s,
                      "<p>One bar per ratio: optic against its peer in the same run, <strong>oriented so that "
                      "right of 1 is better for optic</strong> (where a smaller ours/peer is better, e.g. a time, "
                      "the bar shows peer/ours). Log scale from 1/4 to 4; a ratio beyond it ends in an arrow "
                      "marked <em>off scale</em> with its value. Green PASS, red FAIL, grey INFO (no bar) or N/A; "
                      "the black tick is the bar in the same orientation.</p>\n");
  optic_strbuf_printf(s,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
                      "<title>peer ratios, right is better for optic</title>\n",
                      w, h, w, h);
  const double ticks[] = {0.25, 0.5, 1, 2, 4};
  for (int t = 0; t < 5; t++) {
    optic_strbuf_printf(s, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", RX(ticks[t]), MT,
                        RX(ticks[t]), h - 24, ticks[t] == 1 ? "#444" : "#ddd");
    optic_strbuf_printf(s, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%gx</text>\n",
                        RX(ticks[t]), h - 10, ticks[t]);
  }
  optic_strbuf_printf(s,
                      "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"start\">better for optic "
                      "&#8594;</text>\n",
                      RX(4.0) + 8, h - 10);
  int k = 0;
  for (size_t i = 0; i < r->n_ratios; i++) {
    const report_ratio *q = &r->ratios[i];
    if (isnan(q->ratio) || !report_ratio_listed(r, q)) continue;
    double o = report_ratio_oriented(q);
    int y = MT + row * k++;
    bool off = !(o >= 0.25 && o <= 4);
    double x0 = RX(1.0), x1 = RX(o > 0 ? o : 1e-300);
    const char *color = q->status == REPORT_PASS ? "#1a7f37" : q->status == REPORT_FAIL ? "#cf222e" : "#8c959f";
    optic_strbuf_printf(s, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">", left - 6, y + 13);
    esc(s, q->name);
    optic_strbuf_printf(s, "</text>\n<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"><title>",
                        fmin(x0, x1), y + 2, fmax(fabs(x1 - x0), 1.0), color);
    esc(s, q->name);
    optic_strbuf_printf(s, ": %.3gx (%s)</title></rect>\n", o, report_status_name(q->status));
    if (off) {
      /* An arrowhead past the clamped end, pointing the way the ratio goes. */
      double dir = o > 4 ? 1 : -1, tip = x1 + dir * 8;
      optic_strbuf_printf(s, "<polygon points=\"%.1f,%d %.1f,%d %.1f,%d\" fill=\"%s\"/>\n", x1, y + 1, tip, y + 9, x1,
                          y + 17, color);
    }
    double tx = o > 1 ? fmax(x0, x1) + (off ? 12 : 4) : x0 + 4;
    optic_strbuf_printf(s, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.3gx%s</text>\n", tx, y + 13, o,
                        off ? " off scale" : "");
    bool up = report_ratio_higher_better(q);
    if (q->has_min) {
      double b = up ? q->bar_min : 1.0 / q->bar_min;
      optic_strbuf_printf(s,
                          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>\n",
                          RX(b), y, RX(b), y + 18);
    }
    if (q->has_max) {
      double b = up ? q->bar_max : 1.0 / q->bar_max;
      optic_strbuf_printf(s,
                          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>\n",
                          RX(b), y, RX(b), y + 18);
    }
  }
#undef RX
  optic_strbuf_printf(s, "</svg>\n");
}

/* ---------------------------------------------------------- the tables */

static void cell_text(optic_strbuf *s, const char *text) {
  optic_strbuf_printf(s, "<td class=\"n\">");
  esc(s, text);
  optic_strbuf_printf(s, "</td>");
}

static void cell_time(optic_strbuf *s, double ns) {
  char t[32];
  report_fmt_time(t, sizeof t, ns);
  cell_text(s, t);
}

static void cell_bytes(optic_strbuf *s, double b) {
  char t[32];
  report_fmt_bytes(t, sizeof t, b);
  cell_text(s, t);
}

static void ratio_table(optic_strbuf *s, const report *r) {
  optic_strbuf_printf(s,
                      "<p>From <code>bench/ratios.json</code>, both sides measured in the same run, %s clock. "
                      "<strong>optic vs peer</strong> is oriented like the plot: above 1 is better for optic. "
                      "<em>ours / peer</em> and its bar are the spec's own terms (as <code>bench/ratios.py</code> "
                      "prints them).</p>\n<table>\n<tr><th>status</th><th>optic vs peer</th><th>bar</th>"
                      "<th>ours</th><th>peer</th><th>ours / peer (bar)</th><th>what</th></tr>\n",
                      r->cpu_clock ? "critical-path CPU" : "wall");
  for (size_t i = 0; i < r->n_ratios; i++) {
    const report_ratio *q = &r->ratios[i];
    if (!report_ratio_listed(r, q)) continue;
    char o[32] = "-", bar[64], v[48];
    double ov = report_ratio_oriented(q);
    if (!isnan(ov)) snprintf(o, sizeof o, "%.3gx", ov);
    report_fmt_oriented_bar(bar, sizeof bar, q);
    optic_strbuf_printf(s, "<tr class=\"%s\"><td class=\"n\">%s</td>", q->status == REPORT_FAIL ? "fail" : "",
                        report_status_name(q->status));
    cell_text(s, o);
    cell_text(s, bar);
    const char *side[2] = {q->ours, q->peer};
    double val[2] = {q->ours_value, q->peer_value};
    for (int k = 0; k < 2; k++) {
      report_fmt_metric(v, sizeof v, q->metric, val[k]);
      optic_strbuf_printf(s, "<td><span class=\"n\">%s</span><br/><small>", isnan(val[k]) ? "absent" : v);
      esc_name(s, side[k]);
      optic_strbuf_printf(s, "</small></td>");
    }
    optic_strbuf_printf(s, "<td class=\"n\">");
    if (!isnan(q->ratio)) optic_strbuf_printf(s, "%.3f ", q->ratio);
    if (q->has_min) optic_strbuf_printf(s, "(&#8805; %g)", q->bar_min);
    if (q->has_max) optic_strbuf_printf(s, "(&#8804; %g)", q->bar_max);
    optic_strbuf_printf(s, "</td><td class=\"what\">");
    esc(s, q->name);
    optic_strbuf_printf(s, ": ");
    esc(s, q->description);
    if (q->note[0]) {
      optic_strbuf_printf(s, " <em>(");
      esc(s, q->note);
      optic_strbuf_printf(s, ")</em>");
    }
    optic_strbuf_printf(s, "</td></tr>\n");
  }
  optic_strbuf_printf(s, "</table>\n");
  if (r->summary.not_run > 0)
    optic_strbuf_printf(s,
                        "<p>%zu bars are not listed: the run's <code>--filter</code> did not select both of their "
                        "benchmarks, so they cannot be decided.</p>\n",
                        r->summary.not_run);
}

static void case_table(optic_strbuf *s, const report *r) {
  bool mem = report_any_measured_mem(r);
  optic_strbuf_printf(s,
                      "<h2 id=\"cases\">Cases</h2>\n<p>Measured: Google Benchmark's real time per iteration "
                      "(the median over repetitions). meas/est: measured over the compiler's estimate "
                      "(above 1: slower than estimated). %% of bound: the share of the machine model's bound "
                      "reached (the binding term after it). optic vs peer: as above, above 1 better for "
                      "optic.%s</p>\n<table>\n<tr><th>case</th><th>measured</th><th>estimated</th><th>meas/est</th>"
                      "<th>%% of bound</th><th>rate</th><th>est. peak memory</th>%s<th>optic vs peer</th></tr>\n",
                      mem ? ""
                          : " No case in this run measures its memory (a <code>mem_peak_bytes</code>, "
                            "<code>peak_bytes</code> or <code>maxrss_delta_bytes</code> counter), so only the "
                            "estimate is shown.",
                      mem ? "<th>measured peak memory (meas/est)</th>" : "");
  for (size_t i = 0; i < r->n_cases; i++) {
    const report_case *c = &r->cases[i];
    optic_strbuf_printf(s, "<tr><td>");
    esc_name(s, c->name);
    if (c->error) {
      optic_strbuf_printf(s, "</td><td colspan=\"%d\">error: ", mem ? 8 : 7);
      esc(s, c->error);
      optic_strbuf_printf(s, "</td></tr>\n");
      continue;
    }
    optic_strbuf_printf(s, "</td>");
    cell_time(s, c->time_ns);
    cell_time(s, c->est_time_ns);
    char t[64] = "-";
    if (!isnan(c->ratio)) snprintf(t, sizeof t, "%.2fx", c->ratio);
    cell_text(s, t);
    snprintf(t, sizeof t, "-");
    if (!isnan(c->bound_pct)) snprintf(t, sizeof t, "%.0f%% %s", c->bound_pct, report_bound_name(c->bound));
    cell_text(s, t);
    if (!isnan(c->gflops)) {
      report_fmt_metric(t, sizeof t, "GFLOP/s", c->gflops);
    } else {
      report_fmt_metric(t, sizeof t, "GB/s", c->gbs);
    }
    cell_text(s, t);
    cell_bytes(s, c->est_peak_bytes);
    if (mem) {
      double mm = report_case_measured_mem(c);
      char b[32];
      report_fmt_bytes(b, sizeof b, mm);
      if (!isnan(mm) && c->est_peak_bytes > 0) {
        snprintf(t, sizeof t, "%s (%.2fx)", b, mm / c->est_peak_bytes);
      } else {
        snprintf(t, sizeof t, "%s", b);
      }
      cell_text(s, t);
    }
    snprintf(t, sizeof t, "-");
    if (c->peer_ratio >= 0) {
      const report_ratio *q = &r->ratios[c->peer_ratio];
      double o = report_ratio_oriented(q);
      if (!isnan(o)) {
        snprintf(t, sizeof t, "%.3gx %s", o, report_status_name(q->status));
      } else {
        snprintf(t, sizeof t, "%s", report_status_name(q->status));
      }
    }
    cell_text(s, t);
    optic_strbuf_printf(s, "</tr>\n");
  }
  optic_strbuf_printf(s, "</table>\n");
}

static void tables(optic_strbuf *s, const report *r) {
  ratio_table(s, r);
  case_table(s, r);
}

optic_status report_write_html(const report *r, const char *path) {
  optic_strbuf s = {0};
  const optic_machine *m = &r->machine;
  const report_summary *sm = &r->summary;
  optic_strbuf_printf(&s,
                      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                      "<title>optic benchmark report</title>\n<style>\n"
                      "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em}\n"
                      "table{border-collapse:collapse;font-size:12px;max-width:100%%}td,th{border:1px solid #ccc;"
                      "padding:2px 6px;text-align:left;vertical-align:top}tr.fail td{background:#ffebe9}\n"
                      "td.n{white-space:nowrap}td.what{min-width:14em}small{color:#444;overflow-wrap:anywhere}\n"
                      "code{font-size:12px;overflow-wrap:anywhere;word-break:break-all}svg{max-width:100%%;"
                      "height:auto}\ndetails code{display:block;max-height:12em;overflow-y:auto}\n</style>\n"
                      "</head>\n<body>\n<h1>optic benchmark report</h1>\n<p><strong>Summary.</strong> ");
  if (sm->estimated > 0) {
    optic_strbuf_printf(&s, "Estimates: median |ln(measured/estimated)| %.3f over %zu cases, %.0f%% within 2&#215;. ",
                        sm->median_abs_log, sm->estimated, 100.0 * sm->within_2x);
  } else optic_strbuf_printf(&s, "Estimates: no case in this run carries <code>est_time_ns</code>. ");
  if (sm->unestimated > 0) optic_strbuf_printf(&s, "%zu non-peer case(s) without an estimate. ", sm->unestimated);
  const report_bound_share *bs = &sm->real_module_bound;
  if (bs->cases > 0) {
    optic_strbuf_printf(&s, "Real modules: median %.3f of their roofline bounds over %zu cases (%.3f to %.3f)",
                        bs->median, bs->cases, bs->min, bs->max);
    if (bs->has_bar) optic_strbuf_printf(&s, ", bar &#8805; %g: %s", bs->bar_min, report_status_name(bs->status));
    optic_strbuf_printf(&s, ". ");
  }
  optic_strbuf_printf(&s, "Peer bars: %zu of %zu met (PASS %zu, FAIL %zu, INFO %zu, N/A %zu, MISSING %zu).", sm->pass,
                      sm->pass + sm->fail, sm->pass, sm->fail, sm->info, sm->na, sm->missing);
  if (sm->not_run) optic_strbuf_printf(&s, " %zu bars not decided (the filter did not select them).", sm->not_run);
  optic_strbuf_printf(&s,
                      " Every ratio to a peer is shown so that <strong>above 1 is better for optic</strong>.</p>\n");
  size_t flen = strlen(r->filter);
  optic_strbuf_printf(&s, "<p>Run: mode %s, %d repetition(s); %s, CPU ", r->mode, r->repetitions,
                      optic_jv_get_str(r->context, "date", "date unknown"));
  esc(&s, optic_jv_get_str(r->context, "optic_cpu_model", "unknown"));
  optic_strbuf_printf(&s, ", ISA %s, OpenBLAS core ", optic_jv_get_str(r->context, "optic_isa", "unknown"));
  esc(&s, optic_jv_get_str(r->context, "optic_openblas_core", "unknown"));
  optic_strbuf_printf(&s, ", optic %s, Google Benchmark %s. Load average during the run: ", optic_version(),
                      optic_jv_get_str(r->context, "optic_google_benchmark", "unknown"));
  const optic_jv *load = optic_jv_get(r->context, "load_avg");
  for (size_t i = 0; load && load->kind == OPTIC_JV_ARRAY && i < load->length; i++)
    optic_strbuf_printf(&s, "%s%.2f", i ? ", " : "", load->items[i].number);
  optic_strbuf_printf(&s,
                      " (wall-clock figures on a shared machine are noisy; ratios to a peer in the same "
                      "run are the robust ones).</p>\n");
  /* The default set's filter names every bar's benchmarks (thousands of characters): folded. */
  optic_strbuf_printf(&s, "<details><summary>Benchmark filter (%zu characters)</summary><code>", flen);
  esc(&s, r->filter);
  optic_strbuf_printf(&s, "</code></details>\n");
  optic_strbuf_printf(&s, "<h2 id=\"machine\">Machine model</h2>\n<p><code>");
  esc(&s, r->machine_file);
  optic_strbuf_printf(&s,
                      "</code>: %s, FMA peak %.4g GFLOP/s, exp %.4g G/s, cache %.4g GB/s up to %.4g MiB, "
                      "DRAM %.4g GB/s, %.4g ns per op, %d cores. Source: ",
                      m->name, m->peak_flops * 1e-9, m->peak_transcendentals * 1e-9, m->cache_bandwidth * 1e-9,
                      m->cache_bytes / (1 << 20), m->dram_bandwidth * 1e-9, m->op_overhead_ns, (int)m->cores);
  esc(&s, m->source);
  optic_strbuf_printf(&s, ".</p>\n");
  plot_estimates(&s, r);
  plot_roofline(&s, r);
  plot_ops(&s, r);
  plot_ratios(&s, r);
  tables(&s, r);
  optic_strbuf_printf(&s, "</body>\n</html>\n");
  char *text = NULL;
  optic_status st = optic_strbuf_take(&s, &text);
  if (st != OPTIC_OK) return st;
  FILE *f = fopen(path, "w");
  if (!f) {
    optic_string_free(text);
    return optic_fail(OPTIC_ERR_IO, "report: cannot write %s", path);
  }
  size_t len = strlen(text);
  bool ok = fwrite(text, 1, len, f) == len;
  if (fclose(f) != 0 || !ok) st = optic_fail(OPTIC_ERR_IO, "report: error writing %s", path);
  optic_string_free(text);
  return st;
}
