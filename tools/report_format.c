/* `optic report`'s figures as text, shared by the console table and the
 * HTML: times and bytes with units, a ratio's metric with its unit, and the
 * one direction of "better" (a ratio oriented so that above 1 favours optic). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/report.h"

void report_fmt_time(char *buf, size_t size, double ns) {
  if (isnan(ns)) {
    snprintf(buf, size, "-");
  } else if (fabs(ns) >= 1e9) {
    snprintf(buf, size, "%.3g s", ns * 1e-9);
  } else if (fabs(ns) >= 1e6) {
    snprintf(buf, size, "%.3g ms", ns * 1e-6);
  } else if (fabs(ns) >= 1e3) {
    snprintf(buf, size, "%.3g us", ns * 1e-3);
  } else {
    snprintf(buf, size, "%.3g ns", ns);
  }
}

void report_fmt_bytes(char *buf, size_t size, double b) {
  if (isnan(b)) {
    snprintf(buf, size, "-");
  } else if (fabs(b) >= 1 << 30) {
    snprintf(buf, size, "%.3g GiB", b / (1 << 30));
  } else if (fabs(b) >= 1 << 20) {
    snprintf(buf, size, "%.3g MiB", b / (1 << 20));
  } else if (fabs(b) >= 1 << 10) {
    snprintf(buf, size, "%.3g KiB", b / (1 << 10));
  } else {
    snprintf(buf, size, "%.0f B", b);
  }
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Metrics whose figure is a time in ns (smaller is faster). */
static bool is_time(const char *metric) {
  return strcmp(metric, "real_time") == 0 || strcmp(metric, "cpu_time") == 0 || ends_with(metric, "_ns") ||
         strstr(metric, "ns_per_") != NULL;
}

void report_fmt_metric(char *buf, size_t size, const char *metric, double v) {
  const char *per = strstr(metric, "ns_per_");
  char t[32];
  if (isnan(v)) {
    snprintf(buf, size, "-");
  } else if (per) {
    report_fmt_time(t, sizeof t, v);
    snprintf(buf, size, "%s/%s", t, per + 7);
  } else if (is_time(metric)) {
    report_fmt_time(buf, size, v);
  } else if (ends_with(metric, "GB/s") || ends_with(metric, "GFLOP/s")) {
    snprintf(buf, size, "%.4g %s", v, strncmp(metric, "cpu_", 4) == 0 ? metric + 4 : metric);
  } else if (strcmp(metric, "items_per_second") == 0) {
    const char *si = "";
    double x = v;
    if (fabs(x) >= 1e9) x *= 1e-9, si = " G";
    else if (fabs(x) >= 1e6) x *= 1e-6, si = " M";
    else if (fabs(x) >= 1e3) x *= 1e-3, si = " k";
    snprintf(buf, size, "%.4g%s/s", x, si[0] ? si : " ");
  } else {
    snprintf(buf, size, "%.4g %s", v, metric);
  }
}

bool report_ratio_higher_better(const report_ratio *q) {
  if (q->has_min != q->has_max) return q->has_min;
  return !is_time(q->metric);
}

double report_ratio_oriented(const report_ratio *q) {
  if (isnan(q->ratio)) return (double)NAN;
  if (report_ratio_higher_better(q)) return q->ratio;
  return q->ratio > 0 ? 1.0 / q->ratio : (double)INFINITY;
}

void report_fmt_oriented_bar(char *buf, size_t size, const report_ratio *q) {
  bool up = report_ratio_higher_better(q);
  /* Inverting swaps the sides: ratio <= max becomes oriented >= 1/max. */
  bool has_lo = up ? q->has_min : q->has_max, has_hi = up ? q->has_max : q->has_min;
  double lo = up ? q->bar_min : 1.0 / q->bar_max, hi = up ? q->bar_max : 1.0 / q->bar_min;
  if (has_lo && has_hi) {
    snprintf(buf, size, ">= %.3g <= %.3g", lo, hi);
  } else if (has_lo) {
    snprintf(buf, size, ">= %.3g", lo);
  } else if (has_hi) {
    snprintf(buf, size, "<= %.3g", hi);
  } else {
    snprintf(buf, size, "-");
  }
}

bool report_ratio_listed(const report *r, const report_ratio *q) {
  return !r->filtered || (q->ran_ours && q->ran_peer);
}

double report_case_measured_mem(const report_case *c) {
  if (!isnan(c->mem_peak_bytes)) return c->mem_peak_bytes;
  if (!isnan(c->peak_bytes)) return c->peak_bytes;
  return c->maxrss_delta_bytes;
}

bool report_any_measured_mem(const report *r) {
  for (size_t i = 0; i < r->n_cases; i++) {
    if (!isnan(report_case_measured_mem(&r->cases[i]))) return true;
  }
  return false;
}
