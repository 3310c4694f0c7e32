/* `optic report`'s progress line (report.h, report_progress): which case
 * runs, how many of the listed cases are done, elapsed time and an ETA. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/report.h"

optic_status report_progress_init(report_progress *p, char **names, size_t n, int reps, bool tty) {
  memset(p, 0, sizeof *p);
  p->names = names, p->n_names = n, p->reps = reps > 0 ? reps : 1, p->tty = tty;
  p->done = calloc(n ? n : 1, sizeof *p->done);
  p->started = calloc(n ? n : 1, sizeof *p->started);
  if (!p->done || !p->started) {
    report_progress_free(p);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "report: out of memory");
  }
  p->current = n;
  p->t0 = optic_now_ns();
  p->width = 100;
  struct winsize ws;
  if (tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) p->width = ws.ws_col;
  return OPTIC_OK;
}

static void fmt_duration(char *buf, size_t size, double s) {
  if (!(s >= 0) || isinf(s)) {
    snprintf(buf, size, "?");
  } else if (s >= 3600) {
    snprintf(buf, size, "%d:%02d:%02d", (int)(s / 3600), (int)fmod(s / 60, 60), (int)fmod(s, 60));
  } else {
    snprintf(buf, size, "%d:%02d", (int)(s / 60), (int)fmod(s, 60));
  }
}

/* Share of the work done: repetitions started (less the running one) when
 * events come, else cases finished. */
static double fraction(const report_progress *p) {
  if (p->n_names == 0) return 1.0;
  double total = (double)p->n_names * p->reps, finished = (double)p->n_done / (double)p->n_names;
  double f = p->events && p->units > 0 ? ((double)p->units - 1) / total : finished;
  return fmin(1.0, fmax(f, finished));
}

/* The running case: the last one an event named, else (one repetition, in
 * list order) the first not done. */
static size_t running(const report_progress *p) {
  if (p->events) return p->current;
  if (p->reps != 1) return p->n_names;
  for (size_t i = 0; i < p->n_names; i++) {
    if (!p->done[i]) return i;
  }
  return p->n_names;
}

static void timing(const report_progress *p, char *buf, size_t size) {
  double el = (double)(optic_now_ns() - p->t0) * 1e-9, f = fraction(p);
  char e[32], eta[32];
  fmt_duration(e, sizeof e, el);
  fmt_duration(eta, sizeof eta, f > 0 ? el * (1 - f) / f : (double)NAN);
  snprintf(buf, size, "%s elapsed, ETA %s", e, eta);
}

static void draw(report_progress *p) {
  char t[80], head[160], tail[64] = "";
  timing(p, t, sizeof t);
  snprintf(head, sizeof head, "report: %zu/%zu cases done, %s, now ", p->n_done, p->n_names, t);
  size_t k = running(p);
  const char *name = k < p->n_names ? p->names[k] : "-";
  if (k < p->n_names && p->reps > 1 && p->events)
    snprintf(tail, sizeof tail, " (rep %d/%d)", p->started[k] < p->reps ? p->started[k] : p->reps, p->reps);
  int len = (int)strlen(name);
  if (len > 10 && strcmp(name + len - 10, "/real_time") == 0) len -= 10;
  /* Fit the terminal: a wrapped line cannot be rewritten with \r. */
  int room = p->width - 1 - (int)strlen(head) - (int)strlen(tail);
  fprintf(stderr, "\r\033[K%s", head);
  if (len <= room) {
    fprintf(stderr, "%.*s", len, name);
  } else {
    int keep = room > 13 ? room - 3 : 10;
    fprintf(stderr, "%.*s...%.*s", keep / 2, name, keep - keep / 2, name + len - (keep - keep / 2));
  }
  fprintf(stderr, "%s", tail);
  fflush(stderr);
  p->last_draw = optic_now_ns();
}

static size_t find(const report_progress *p, const char *name, size_t len) {
  for (size_t i = 0; i < p->n_names; i++) {
    if (strlen(p->names[i]) == len && strncmp(p->names[i], name, len) == 0) return i;
  }
  return p->n_names;
}

void report_progress_console_line(report_progress *p, const char *line) {
  size_t len = strcspn(line, " \t");
  size_t i = find(p, line, len);
  if (i == p->n_names || p->done[i]) return;
  p->done[i] = true;
  p->n_done++;
  if (p->tty) {
    draw(p);
    return;
  }
  char t[80];
  timing(p, t, sizeof t);
  fprintf(stderr, "report: case %zu/%zu %s done (%s)\n", p->n_done, p->n_names, p->names[i], t);
  fflush(stderr);
}

/* Whether listed name is an instance of family with these argument values:
 * name = family "/" then one component per argument ("v" or "key:v", in
 * order), then Google Benchmark's own suffixes. */
static bool instance_of(const char *name, const char *family, size_t flen, const char *args) {
  if (strncmp(name, family, flen) != 0 || (name[flen] != '/' && name[flen] != '\0')) return false;
  const char *p = name + flen, *a = args;
  while (*a) {
    if (*p != '/') return false;
    p++;
    size_t comp = strcspn(p, "/");
    const char *colon = memchr(p, ':', comp);
    const char *v = colon ? colon + 1 : p;
    size_t vlen = (size_t)(p + comp - v), alen = strcspn(a, ",");
    if (vlen != alen || strncmp(v, a, alen) != 0) return false;
    p += comp;
    a += alen;
    if (*a == ',') a++;
  }
  return true;
}

void report_progress_event_line(report_progress *p, const char *line) {
  if (strncmp(line, "start\t", 6) != 0) return;
  const char *family = line + 6, *tab = strchr(family, '\t');
  if (!tab) return;
  size_t i = 0;
  for (; i < p->n_names; i++) {
    if (!p->done[i] && instance_of(p->names[i], family, (size_t)(tab - family), tab + 1)) break;
  }
  if (i == p->n_names) return; /* not a listed case (or already reported) */
  p->events = true;
  if (i != p->current || p->units == 0) {
    /* A new repetition (trials of one repetition arrive back to back). */
    p->units++;
    p->started[i]++;
    p->current = i;
  }
  if (p->tty) draw(p);
}

void report_progress_tick(report_progress *p) {
  if (p->tty && optic_now_ns() - p->last_draw >= 900000000ull) draw(p);
}

void report_progress_free(report_progress *p) {
  if (p->tty && p->last_draw) fputc('\n', stderr);
  free(p->done);
  free(p->started);
  p->done = NULL, p->started = NULL;
}
