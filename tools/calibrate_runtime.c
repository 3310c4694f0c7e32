/* `optic calibrate`'s figures of machine format 14 (calibrate_measure.h):
 * costs of the runtime and the compiler that no op class sees, each timed
 * on one thread (fastest trial):
 *   clock read     optic_now_ns back to back (the executor reads it twice
 *                  per op when a profiler is enabled)
 *   profile record optic_profiler_record of one event into an enabled
 *                  profiler (cleared every PROFILE_CAP events, so none is
 *                  dropped)
 *   page touch     one byte written per 4 KiB page of a mapped, already
 *                  touched set of TOUCH_PAGES pages (the first use of a
 *                  cached arena touches its pages so)
 *   compile        optic_compile at level full of a chain of layer-norm
 *                  blocks (reduce, broadcast, subtract, square, reduce,
 *                  rsqrt, broadcast, multiply, residual add: 9 instructions
 *                  a block) of about 1000, 10000 and 100000 instructions
 *                  (at most 3 trials at 100000): per instruction
 *                  at each size (it grows as the compiler's data leaves
 *                  the caches)
 * A figure that does not come out positive is left 0. Never prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"

enum { PROFILE_CAP = 4096, TOUCH_PAGES = 1024, PAGE = 4096, COMPILE_LARGE_TRIALS = 3 };

static optic_status clock_reads(void *arg, uint64_t runs) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < runs; i++) sum += optic_now_ns();
  *(volatile uint64_t *)arg = sum;
  return OPTIC_OK;
}

typedef struct profile_arg {
  optic_profiler_t *p;
  optic_profile_event e;
  uint64_t n;
} profile_arg;

static optic_status profile_records(void *arg, uint64_t runs) {
  profile_arg *a = arg;
  for (uint64_t i = 0; i < runs; i++) {
    if ((++a->n % PROFILE_CAP) == 0) optic_profiler_clear(a->p);
    a->e.node = (int64_t)a->n;
    a->e.start_ns = a->n, a->e.end_ns = a->n + 10;
    optic_status st = optic_profiler_record(a->p, &a->e);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static optic_status measure_profile_record(const calib_ops_plan *plan, double *out) {
  optic_profiler_options o = optic_profiler_options_default();
  o.capacity = PROFILE_CAP;
  o.enabled = true;
  profile_arg a = {.e = {.kind = OPTIC_PROFILE_OP, .flops = 64, .bytes = 768, .est_ns = 20}};
  snprintf(a.e.name, sizeof a.e.name, "multiply.3");
  snprintf(a.e.detail, sizeof a.e.detail, "multiply");
  optic_status st = optic_profiler_create(&o, &a.p);
  if (st == OPTIC_OK) st = calib_best_ns_per_run(profile_records, &a, plan->trials, plan->target_ns, out);
  optic_profiler_destroy(a.p);
  return st;
}

typedef struct touch_arg {
  volatile unsigned char *p;
  size_t bytes;
} touch_arg;

static optic_status page_touches(void *arg, uint64_t runs) {
  touch_arg *a = arg;
  for (uint64_t r = 0; r < runs; r++) {
    for (size_t i = 0; i < a->bytes; i += PAGE) a->p[i] = (unsigned char)r;
  }
  return OPTIC_OK;
}

static optic_status measure_page_touch(const calib_ops_plan *plan, double *out) {
  touch_arg a = {NULL, (size_t)TOUCH_PAGES * PAGE};
  void *p = NULL;
  optic_status st = optic_alloc(NULL, a.bytes, PAGE, &p);
  if (st != OPTIC_OK) return st;
  memset(p, 1, a.bytes);
  a.p = p;
  double ns = 0;
  st = calib_best_ns_per_run(page_touches, &a, plan->trials, plan->target_ns, &ns);
  *out = ns / TOUCH_PAGES;
  optic_free(NULL, p, a.bytes, PAGE);
  return st;
}

/* The layer-norm chain of `blocks` blocks on f32[4,16] as HLO text (malloc'd). */
static char *chain_text(int blocks) {
  enum { PER_BLOCK = 512 };
  size_t size = 256 + (size_t)blocks * PER_BLOCK, at = 0;
  char *t = malloc(size);
  if (t == NULL) return NULL;
  at += (size_t)snprintf(t, size,
                         "HloModule calibrate_compile\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x0 = f32[4,16] parameter(0)\n"
                         "  z = f32[] constant(0)\n");
  for (int k = 0; k < blocks; k++) {
    at += (size_t)snprintf(
        t + at, size - at,
        "  m%d = f32[4] reduce(x%d, z), dimensions={1}, to_apply=add\n"
        "  b%d = f32[4,16] broadcast(m%d), dimensions={0}\n  d%d = f32[4,16] subtract(x%d, b%d)\n"
        "  q%d = f32[4,16] multiply(d%d, d%d)\n  v%d = f32[4] reduce(q%d, z), dimensions={1}, to_apply=add\n"
        "  r%d = f32[4] rsqrt(v%d)\n  c%d = f32[4,16] broadcast(r%d), dimensions={0}\n"
        "  n%d = f32[4,16] multiply(d%d, c%d)\n  %sx%d = f32[4,16] add(n%d, x%d)\n",
        k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k == blocks - 1 ? "ROOT " : "", k + 1, k, k);
  }
  snprintf(t + at, size - at, "}\n");
  return t;
}

typedef struct compile_arg {
  optic_module_t *m;
  optic_compile_options o;
  optic_machine machine;
} compile_arg;

static optic_status compiles(void *arg, uint64_t runs) {
  compile_arg *a = arg;
  for (uint64_t i = 0; i < runs; i++) {
    optic_program_t *p = NULL;
    optic_status st = optic_compile(a->m, &a->o, &p);
    optic_program_destroy(p);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

/* ns per instruction of compiling the chain of about `instructions` instructions. */
static optic_status time_compile(int trials, double target_ns, int instructions, double *per_instruction) {
  const int blocks = (instructions - 2) / 9;
  char *text = chain_text(blocks);
  compile_arg a;
  memset(&a, 0, sizeof a);
  a.o = optic_compile_options_default();
  optic_status st = text ? optic_module_from_hlo_text(text, strlen(text), &a.m)
                         : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the compile chain");
  free(text);
  if (st == OPTIC_OK) st = optic_machine_preset("host-default", &a.machine);
  a.o.level = OPTIC_OPT_FULL;
  a.o.machine = &a.machine;
  double ns = 0;
  if (st == OPTIC_OK) st = calib_best_ns_per_run(compiles, &a, trials, target_ns, &ns);
  optic_module_destroy(a.m);
  *per_instruction = ns / (2.0 + 9.0 * blocks);
  return st;
}

static optic_status measure_compile(const calib_ops_plan *plan, calib_classes *out) {
  const int few = plan->trials < COMPILE_LARGE_TRIALS ? plan->trials : COMPILE_LARGE_TRIALS;
  optic_status st = time_compile(plan->trials, plan->target_ns, 1000, &out->compile_instruction_ns);
  if (st == OPTIC_OK) st = time_compile(plan->trials, plan->target_ns, 10000, &out->compile_instruction_10k_ns);
  if (st == OPTIC_OK) st = time_compile(few, plan->target_ns, 100000, &out->compile_instruction_100k_ns);
  return st;
}

optic_status calib_measure_runtime(const calib_ops_plan *plan, calib_classes *out) {
  uint64_t sink = 0;
  optic_status st = calib_best_ns_per_run(clock_reads, &sink, plan->trials, plan->target_ns, &out->clock_read_ns);
  if (st == OPTIC_OK) st = measure_profile_record(plan, &out->profile_record_ns);
  if (st == OPTIC_OK) st = measure_page_touch(plan, &out->page_touch_ns);
  if (st == OPTIC_OK) st = measure_compile(plan, out);
  return st;
}
