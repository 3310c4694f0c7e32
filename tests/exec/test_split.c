/* Which steps the runtime splits across threads (exec/bind.c, the rule at
 * EXEC_SOLO_ELEMENTS in exec/exec_internal.h), read from the bound plan, not
 * from timings: by cost with the program's estimates (a split must save more
 * than one barrier: the machine's sync_ns, resolved), by
 * size when split_min_elements is set. The machine is the "host-default"
 * preset with stated figures, so nothing depends on this host's machine
 * file. Each program is also run on 2 threads and checked against plain C.
 * Reproduce: ctest --preset release -R exec_split --output-on-failure */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec_internal.h"
#include "tests/harness.h"

enum { TINY = 16, MID = 8192, BIG = 1 << 20 };

static optic_module_t *M;

/* tiny = a[16] + a[16]; mid = exp(b[8192]) (16384 elements touched: small by
 * size, but 8192 transcendentals); big = c[1M] * c[1M]. Root (tiny, mid, big). */
static void build(void) {
  optic_comp_id e;
  if (optic_module_create("split", &M) || optic_module_add_computation(M, "main", &e)) exit(2);
  const int64_t n[3] = {TINY, MID, BIG};
  optic_node_id p[3], r[3];
  for (int i = 0; i < 3; i++) {
    optic_shape s = {.rank = 1, .dims = {n[i]}};
    optic_type t = optic_type_array(OPTIC_F32, &s);
    OT_EXPECT_OK(optic_graph_parameter(M, e, i, &t, NULL, &p[i]));
  }
  OT_EXPECT_OK(optic_graph_binary(M, e, OPTIC_OP_ADD, p[0], p[0], "tiny", &r[0]));
  OT_EXPECT_OK(optic_graph_unary(M, e, OPTIC_OP_EXPONENTIAL, p[1], "mid", &r[1]));
  OT_EXPECT_OK(optic_graph_binary(M, e, OPTIC_OP_MULTIPLY, p[2], p[2], "big", &r[2]));
  optic_node_id root;
  OT_EXPECT_OK(optic_graph_tuple(M, e, r, 3, NULL, &root));
  OT_EXPECT_OK(optic_computation_set_root(M, e, root));
}

/* Compiled for 2 threads on host-default with the given sync_ns (0: resolved), fusion
 * off (one step per op). */
static optic_program_t *compile(double sync_ns) {
  optic_machine mc;
  OT_EXPECT_OK(optic_machine_preset("host-default", &mc));
  mc.sync_ns = sync_ns;
  optic_compile_options o = optic_compile_options_default();
  o.machine = &mc;
  o.fusion = 0;
  o.threads = 2;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(M, &o, &p));
  if (p == NULL) exit(2);
  return p;
}

/* Bits 0..2: whether tiny, mid, big are split at 2 threads (-1 on error). */
static int split_mask(const optic_program_t *p, int64_t split_min, bool *any_split) {
  exec_bound *b = NULL;
  OT_EXPECT_OK(exec_bind(optic_program_module(p), p, 2, split_min, &b));
  if (b == NULL) return -1;
  int mask = 0;
  const exec_seq *q = b->seqs[b->entry];
  static const char *names[3] = {"tiny", "mid", "big"};
  for (int32_t i = 0; i < q->n_steps; i++) {
    const exec_step *s = &q->steps[i];
    for (int k = 0; k < 3; k++) {
      if (s->name && strcmp(s->name, names[k]) == 0 && !s->solo) mask |= 1 << k;
    }
  }
  *any_split = b->any_split;
  exec_bound_destroy(b);
  return mask;
}

/* Runs p on a 2-thread context with the given split_min_elements and checks
 * every result against plain C (exp within 2 ulp-ish relative 1e-6). */
static void run_checks(const optic_program_t *p, int64_t split_min) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = 2;
  eo.split_min_elements = split_min;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
  float *in = malloc(sizeof(float) * (TINY + MID + BIG)), *out = malloc(sizeof(float) * (TINY + MID + BIG));
  if (ctx == NULL || in == NULL || out == NULL) exit(2);
  for (int i = 0; i < TINY + MID + BIG; i++) in[i] = (float)(i % 17) * 0.125f - 1.0f;
  optic_tensor ti[3], to[3];
  const int64_t n[3] = {TINY, MID, BIG};
  size_t off = 0;
  for (int k = 0; k < 3; k++) {
    optic_shape s = {.rank = 1, .dims = {n[k]}};
    ti[k] = (optic_tensor){OPTIC_F32, s, in + off};
    to[k] = (optic_tensor){OPTIC_F32, s, out + off};
    off += (size_t)n[k];
  }
  OT_EXPECT_OK(optic_program_run(p, ctx, ti, 3, to, 3));
  int bad = 0;
  for (int i = 0; i < TINY && bad < 3; i++) {
    if (out[i] != in[i] + in[i]) {
      OT_CHECK(false, "split_min %lld: tiny[%d] = %g", (long long)split_min, i, (double)out[i]);
      bad++;
    }
  }
  for (int i = TINY; i < TINY + MID && bad < 3; i++) {
    double want = exp((double)in[i]);
    if (fabs((double)out[i] - want) > 1e-6 * want) {
      OT_CHECK(false, "split_min %lld: mid[%d] = %g, want %g", (long long)split_min, i - TINY, (double)out[i], want);
      bad++;
    }
  }
  for (int i = TINY + MID; i < TINY + MID + BIG && bad < 3; i++) {
    if (out[i] != in[i] * in[i]) {
      OT_CHECK(false, "split_min %lld: big[%d] = %g", (long long)split_min, i, (double)out[i]);
      bad++;
    }
  }
  free(in);
  free(out);
  optic_exec_ctx_destroy(ctx);
}

/* host-default on one thread: 25 GB/s cache, 7 GB/s DRAM, 1e9 exp/s.
 * tiny: 192 B, ~8 ns: never worth a barrier. mid: 8192 exp = 8.2 us, saving
 * 4.1 us at 2 threads. big: 12 MiB from DRAM = 1.8 ms, saving 0.9 ms. */
static void by_cost(void) {
  build();
  bool any = false;
  optic_program_t *p = compile(0); /* resolved: 2 x op_overhead_ns = 400 ns */
  OT_CHECK(split_mask(p, 0, &any) == 6 && any, "default sync_ns: split mask %d (want mid and big: 6)",
           split_mask(p, 0, &any));
  run_checks(p, 0);
  optic_program_destroy(p);
  /* a barrier of 10 us: mid saves less than that, so only big splits */
  p = compile(10000);
  OT_CHECK(split_mask(p, 0, &any) == 4, "barrier 10 us: split mask %d (want big only: 4)", split_mask(p, 0, &any));
  optic_program_destroy(p);
  /* a barrier of 1 s: nothing splits, so a run uses one thread */
  p = compile(1e9);
  OT_CHECK(split_mask(p, 0, &any) == 0 && !any, "barrier 1 s: split mask %d, any_split %d (want 0, 0)",
           split_mask(p, 0, &any), (int)any);
  run_checks(p, 0);
  optic_program_destroy(p);
  /* a barrier of 1 ns: even tiny's few ns beat it */
  p = compile(1);
  OT_CHECK(split_mask(p, 0, &any) == 7, "barrier 1 ns: split mask %d (want all: 7)", split_mask(p, 0, &any));
  optic_program_destroy(p);
}

/* split_min_elements set: by size, whatever the estimates say. */
static void by_size(void) {
  bool any = false;
  optic_program_t *p = compile(0);
  OT_CHECK(split_mask(p, 1, &any) == 7, "split_min 1: split mask %d (want all: 7)", split_mask(p, 1, &any));
  run_checks(p, 1);
  /* 32768: mid touches 16384 elements, so only big splits */
  OT_CHECK(split_mask(p, 32768, &any) == 4, "split_min 32768: split mask %d (want big only: 4)",
           split_mask(p, 32768, &any));
  run_checks(p, 32768);
  optic_program_destroy(p);
  /* bound from the module alone (no estimates): by size with the default */
  exec_bound *b = NULL;
  OT_EXPECT_OK(exec_bind(M, NULL, 2, 0, &b));
  if (b != NULL) {
    OT_CHECK(!b->split_by_cost && b->split_min == EXEC_SOLO_ELEMENTS, "module-only bind: by cost %d, split_min %lld",
             (int)b->split_by_cost, (long long)b->split_min);
  }
  exec_bound_destroy(b);
}

static void cleanup(void) {
  optic_module_destroy(M);
  M = NULL;
}

static const ot_case cases[] = {
    {"by_cost", by_cost},
    {"by_size", by_size},
    {"cleanup", cleanup},
};
OT_MAIN(cases)
