/* The profiler: a fixed array of events filled lock-free through one atomic
 * index, read back as a timeline, a Chrome trace or a measured-vs-estimated
 * summary. Recording never allocates, blocks or fails; overflow is counted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "exec/profile.h"
#include "core/unconst.h"

#define DEFAULT_CAPACITY ((size_t)65536)

static const char *const kind_names[OPTIC_PROFILE_KIND_COUNT_] = {
    "op", "fusion", "run", "compile", "compile_pass", "reserve", "user",
};

const char *optic_profile_kind_name(optic_profile_kind kind) {
  return ((unsigned)kind < OPTIC_PROFILE_KIND_COUNT_) ? kind_names[kind] : "?";
}

optic_profiler_options optic_profiler_options_default(void) {
  optic_profiler_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.capacity = DEFAULT_CAPACITY;
  o.enabled = false;
  return o;
}

optic_status optic_profiler_create(const optic_profiler_options *options, optic_profiler_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_create: out is NULL");
  *out = NULL;
  optic_profiler_options o = optic_profiler_options_default();
  if (options != NULL) {
    if (options->size < sizeof(size_t)) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "profiler_create: options.size is %zu; set it to sizeof(optic_profiler_options)",
                        options->size);
    }
    size_t n = options->size < sizeof o ? options->size : sizeof o;
    memcpy((char *)&o + sizeof(size_t), (const char *)options + sizeof(size_t), n - sizeof(size_t));
    o.size = sizeof o;
  }
  if (o.capacity == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_create: capacity is 0; must be >= 1");
  if (o.capacity > SIZE_MAX / sizeof(optic_profile_event)) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "profiler_create: capacity %zu events does not fit in memory", o.capacity);
  }
  optic_profiler_t *p = calloc(1, sizeof *p);
  optic_profile_event *ev = p ? malloc(o.capacity * sizeof *ev) : NULL;
  if (ev == NULL) {
    free(p);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_create: no memory for %zu events (%zu bytes)", o.capacity,
                      o.capacity * sizeof *ev);
  }
  p->events = ev;
  p->capacity = o.capacity;
  atomic_init(&p->enabled, o.enabled);
  atomic_init(&p->next, 0);
  atomic_init(&p->dropped, 0);
  atomic_init(&p->runs, 0);
  *out = p;
  return OPTIC_OK;
}

void optic_profiler_destroy(optic_profiler_t *p) {
  if (p == NULL) return;
  free(p->events);
  free(p);
}

void optic_profiler_enable(optic_profiler_t *p, bool on) {
  if (p) atomic_store_explicit(&p->enabled, on, memory_order_relaxed);
}

bool optic_profiler_enabled(const optic_profiler_t *p) {
  return p != NULL && atomic_load_explicit(&OPTIC_UNCONST(optic_profiler_t *, p)->enabled, memory_order_relaxed);
}

void optic_profiler_clear(optic_profiler_t *p) {
  if (p == NULL) return;
  atomic_store(&p->next, 0);
  atomic_store(&p->dropped, 0);
}

uint64_t exec_profiler_next_run(optic_profiler_t *p) { return atomic_fetch_add(&p->runs, 1) + 1; }

static void copy_name(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Claims a slot or counts a drop; NULL when full. */
static optic_profile_event *claim_slot(optic_profiler_t *p) {
  size_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
  if (i >= p->capacity) {
    atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
    return NULL;
  }
  return &p->events[i];
}

void exec_profiler_record_span(optic_profiler_t *p, optic_profile_kind kind, const char *name, const char *detail,
                               const void *program, int32_t device, int32_t thread, int64_t node, uint64_t run,
                               uint64_t start_ns, uint64_t end_ns, double flops, double bytes, double est_ns) {
  optic_profile_event *e = claim_slot(p);
  if (e == NULL) return;
  copy_name(e->name, sizeof e->name, name);
  copy_name(e->detail, sizeof e->detail, detail);
  e->kind = kind;
  e->device = device;
  e->thread = thread;
  e->node = node;
  e->run = run;
  e->program = program;
  e->start_ns = start_ns;
  e->end_ns = end_ns;
  e->flops = flops;
  e->bytes = bytes;
  e->est_ns = est_ns;
}

optic_status optic_profiler_record(optic_profiler_t *p, const optic_profile_event *e) {
  if (p == NULL || e == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_record: NULL argument");
  if ((unsigned)e->kind >= OPTIC_PROFILE_KIND_COUNT_) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_record: event kind %d is not an optic_profile_kind",
                      (int)e->kind);
  }
  if (e->end_ns < e->start_ns) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "profiler_record: event '%.64s' ends (%llu ns) before it starts (%llu ns)", e->name,
                      (unsigned long long)e->end_ns, (unsigned long long)e->start_ns);
  }
  if (!optic_profiler_enabled(p)) return OPTIC_OK;
  optic_profile_event *slot = claim_slot(p);
  if (slot == NULL) return OPTIC_OK;
  *slot = *e;
  slot->name[sizeof slot->name - 1] = '\0';
  slot->detail[sizeof slot->detail - 1] = '\0';
  return OPTIC_OK;
}

optic_status optic_profiler_record_compile(optic_profiler_t *p, const optic_pass_stats *passes, double compile_seconds,
                                           const void *program, uint64_t start_ns) {
  if (p == NULL || passes == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_record_compile: NULL argument");
  if (!(compile_seconds >= 0.0) || !isfinite(compile_seconds)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "profiler_record_compile: compile_seconds is %g; must be finite and >= 0", compile_seconds);
  }
  if (!optic_profiler_enabled(p)) return OPTIC_OK;
  uint64_t dur = (uint64_t)llround(compile_seconds * 1e9);
  if (start_ns == 0) {
    uint64_t now = optic_now_ns();
    start_ns = now > dur ? now - dur : 0;
  }
  exec_profiler_record_span(p, OPTIC_PROFILE_COMPILE, "compile", "", program, 0, 0, -1, 0, start_ns, start_ns + dur,
                            0.0, 0.0, 0.0);
  /* Only the passes the caller's (possibly older) struct holds. */
  size_t have = passes->size > offsetof(optic_pass_stats, pass)
                    ? (passes->size - offsetof(optic_pass_stats, pass)) / sizeof(optic_pass_stat)
                    : 0;
  if (have > OPTIC_MAX_PASSES) have = OPTIC_MAX_PASSES;
  uint64_t t = start_ns;
  for (size_t i = 0; i < have; i++) {
    const optic_pass_stat *ps = &passes->pass[i];
    if (ps->runs <= 0) continue;
    double s = ps->seconds > 0.0 && isfinite(ps->seconds) ? ps->seconds : 0.0;
    uint64_t d = (uint64_t)llround(s * 1e9);
    const char *name = optic_pass_name((optic_pass)i);
    exec_profiler_record_span(p, OPTIC_PROFILE_COMPILE_PASS, name ? name : "pass", "", program, 0, 0, -1, 0, t, t + d,
                              0.0, 0.0, 0.0);
    t += d;
  }
  return OPTIC_OK;
}

static size_t event_count(const optic_profiler_t *p) {
  size_t n = atomic_load(&OPTIC_UNCONST(optic_profiler_t *, p)->next);
  return n < p->capacity ? n : p->capacity;
}

const optic_profile_event *optic_profiler_events(const optic_profiler_t *p, size_t *count) {
  if (count) *count = p ? event_count(p) : 0;
  return p ? p->events : NULL;
}

uint64_t optic_profiler_dropped(const optic_profiler_t *p) {
  return p ? atomic_load(&OPTIC_UNCONST(optic_profiler_t *, p)->dropped) : 0;
}

/* ------------------------------------------------------------ Chrome trace */

/* A metadata ("M") event naming a process (pid = device + 1) or a thread
 * (tid = thread + 1): ids start at 1 because some viewers treat pid/tid 0
 * as the idle task. */
static void write_name_event(optic_json *j, const char *what, int64_t pid, int64_t tid, const char *name) {
  optic_json_begin_object(j);
  optic_json_key(j, "name");
  optic_json_string(j, what);
  optic_json_key(j, "ph");
  optic_json_string(j, "M");
  optic_json_key(j, "ts");
  optic_json_int(j, 0);
  optic_json_key(j, "pid");
  optic_json_int(j, pid);
  optic_json_key(j, "tid");
  optic_json_int(j, tid);
  optic_json_key(j, "args");
  optic_json_begin_object(j);
  optic_json_key(j, "name");
  optic_json_string(j, name);
  optic_json_end_object(j);
  optic_json_end_object(j);
}

/* Names every device and thread that has events: "optic host (device 0)",
 * "thread 1 of device 0". Distinct (device, thread) pairs are few (threads
 * times devices), so a linear search per event is enough. */
static optic_status write_track_names(optic_json *j, const optic_profile_event *ev, size_t n) {
  size_t cap = 16, count = 0;
  int64_t *seen = malloc(cap * 2 * sizeof *seen);
  if (seen == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_trace_json: no memory for thread names");
  for (size_t i = 0; i < n; i++) {
    int64_t dev = ev[i].device, th = ev[i].thread;
    bool new_device = true, new_thread = true;
    for (size_t k = 0; k < count && new_thread; k++) {
      if (seen[2 * k] == dev) {
        new_device = false;
        if (seen[2 * k + 1] == th) new_thread = false;
      }
    }
    if (!new_thread) continue;
    if (count == cap) {
      int64_t *grown = realloc(seen, cap * 4 * sizeof *seen);
      if (grown == NULL) {
        free(seen);
        return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_trace_json: no memory for thread names");
      }
      seen = grown;
      cap *= 2;
    }
    seen[2 * count] = dev;
    seen[2 * count + 1] = th;
    count++;
    char name[96];
    if (new_device) {
      optic_device d;
      bool known = dev >= 0 && dev <= INT32_MAX && optic_device_get((int32_t)dev, &d) == OPTIC_OK;
      snprintf(name, sizeof name, "optic %s (device %lld)", known ? d.name : "device", (long long)dev);
      write_name_event(j, "process_name", dev + 1, 0, name);
    }
    snprintf(name, sizeof name, "thread %lld of device %lld", (long long)th, (long long)dev);
    write_name_event(j, "thread_name", dev + 1, th + 1, name);
  }
  free(seen);
  return OPTIC_OK;
}

/* One complete ("X") trace event; ts relative to t0. */
static void write_event(optic_json *j, const optic_profile_event *e, uint64_t t0) {
  optic_json_begin_object(j);
  optic_json_key(j, "name");
  optic_json_string(j, e->name);
  optic_json_key(j, "cat");
  optic_json_string(j, optic_profile_kind_name(e->kind));
  optic_json_key(j, "ph");
  optic_json_string(j, "X");
  optic_json_key(j, "ts");
  optic_json_double(j, (double)(e->start_ns - t0) / 1000.0);
  optic_json_key(j, "dur");
  optic_json_double(j, (double)(e->end_ns - e->start_ns) / 1000.0);
  optic_json_key(j, "pid");
  optic_json_int(j, (int64_t)e->device + 1);
  optic_json_key(j, "tid");
  optic_json_int(j, (int64_t)e->thread + 1);
  optic_json_key(j, "args");
  optic_json_begin_object(j);
  optic_json_key(j, "detail");
  optic_json_string(j, e->detail);
  optic_json_key(j, "node");
  optic_json_int(j, e->node);
  optic_json_key(j, "run");
  optic_json_uint(j, e->run);
  optic_json_key(j, "flops");
  optic_json_double(j, e->flops);
  optic_json_key(j, "bytes");
  optic_json_double(j, e->bytes);
  optic_json_key(j, "est_us");
  optic_json_double(j, e->est_ns / 1000.0);
  optic_json_end_object(j);
  optic_json_end_object(j);
}

optic_status optic_profiler_trace_json(const optic_profiler_t *p, char **out, size_t *len) {
  if (out == NULL || p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_trace_json: NULL argument");
  *out = NULL;
  if (len) *len = 0;
  size_t n = event_count(p);
  uint64_t t0 = UINT64_MAX;
  for (size_t i = 0; i < n; i++)
    if (p->events[i].start_ns < t0) t0 = p->events[i].start_ns;
  optic_status st = OPTIC_OK;
  optic_json j;
  optic_json_init(&j, false);
  optic_json_begin_object(&j);
  optic_json_key(&j, "traceEvents");
  optic_json_begin_array(&j);
  for (size_t i = 0; i < n; i++) write_event(&j, &p->events[i], t0);
  st = write_track_names(&j, p->events, n);
  optic_json_end_array(&j);
  optic_json_key(&j, "displayTimeUnit");
  optic_json_string(&j, "ns");
  optic_json_key(&j, "otherData");
  optic_json_begin_object(&j);
  optic_json_key(&j, "producer");
  optic_json_string(&j, "optic");
  optic_json_key(&j, "dropped");
  optic_json_uint(&j, optic_profiler_dropped(p));
  optic_json_key(&j, "start_ns");
  optic_json_uint(&j, n ? t0 : 0);
  optic_json_end_object(&j);
  optic_json_end_object(&j);
  const char *text = NULL;
  size_t tlen = 0;
  if (st == OPTIC_OK) st = optic_json_finish(&j, &text, &tlen);
  if (st != OPTIC_OK) {
    optic_json_free(&j);
    return optic_fail(st, "profiler_trace_json: could not write %zu events as JSON (%s)", n, optic_status_str(st));
  }
  void *mem = NULL;
  if (optic_string_alloc(tlen + 1, &mem) != OPTIC_OK) {
    optic_json_free(&j);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "profiler_trace_json: no memory for %zu bytes of JSON", tlen + 1);
  }
  char *copy = mem;
  memcpy(copy, text, tlen + 1);
  optic_json_free(&j);
  *out = copy;
  if (len) *len = tlen;
  return OPTIC_OK;
}

optic_status optic_profiler_write_trace(const optic_profiler_t *p, const char *path) {
  if (path == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "profiler_write_trace: path is NULL");
  char *text = NULL;
  size_t len = 0;
  optic_status st = optic_profiler_trace_json(p, &text, &len);
  if (st != OPTIC_OK) return st;
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    optic_string_free(text);
    return optic_fail(OPTIC_ERR_IO, "profiler_write_trace: cannot open '%s' for writing", path);
  }
  size_t wrote = fwrite(text, 1, len, f);
  int closed = fclose(f);
  optic_string_free(text);
  if (wrote != len || closed != 0) {
    return optic_fail(OPTIC_ERR_IO, "profiler_write_trace: writing %zu bytes to '%s' failed", len, path);
  }
  return OPTIC_OK;
}
