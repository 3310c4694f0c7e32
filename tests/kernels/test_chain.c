/* Chain kernels: every entry of kernels/list/chain.inc against (1) the binary
 * kernels of the same ISA called one step at a time through a temporary --
 * bitwise, NaN payloads included (vector kernels: what the runtime relies
 * on; the scalar one is held to equal values, NaNs equal) -- and
 * (2) the naive reference (NaNs equal), over edge sizes, misaligned
 * starts, special values, random step programs of 1..8 steps, streaming
 * and normal stores, and in place. A failure prints the seed, size and
 * program. */
#include <stdlib.h>
#include <string.h>

#include "kernels/chain.h"
#include "kernels/stream.h"
#include "tests/kernels/kernel_test.h"

enum { MAXN = 1100 };

static const optic_binary_op ops[] = {OPTIC_BINARY_ADD, OPTIC_BINARY_SUB, OPTIC_BINARY_MUL,
                                      OPTIC_BINARY_DIV, OPTIC_BINARY_MAX, OPTIC_BINARY_MIN};

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float special_scalar(kt_rng *r) {
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, 3.0f, -0.5f};
  return (kt_next(r) & 3u) == 0 ? sp[kt_next(r) % 8] : kt_uniform(r, -4.0f, 4.0f);
}

/* A random program of n_steps steps over arrays b[k] (n elements each). */
static void make_program(kt_rng *r, int32_t n_steps, float *const *b, optic_f32_chain_step *st) {
  for (int32_t k = 0; k < n_steps; k++) {
    st[k] = (optic_f32_chain_step){.op = ops[kt_next(r) % 6], .flags = (uint32_t)(kt_next(r) % 4)};
    if (st[k].flags & OPTIC_CHAIN_SCALAR) st[k].s = special_scalar(r);
    else st[k].b = b[k];
  }
}

/* The program through isa's binary kernels, one call per step. */
static void by_binary_kernels(optic_isa isa, size_t n, const float *a, const optic_f32_chain_step *st, int32_t ns,
                              float *y) {
  const optic_binary_kernels *t = optic_binary_kernels_for(isa);
  static float v[MAXN], s[MAXN];
  memcpy(v, a, n * sizeof *v);
  for (int32_t k = 0; k < ns; k++) {
    const bool first = st[k].flags & OPTIC_CHAIN_ACC_FIRST, scalar = st[k].flags & OPTIC_CHAIN_SCALAR;
    if (scalar && first) {
      t->vs[st[k].op](n, v, st[k].s, v);
    } else if (scalar) { /* s op v: the scalar filled, as the runtime expands it */
      for (size_t i = 0; i < n; i++) s[i] = st[k].s;
      t->vv[st[k].op](n, s, v, v);
    } else if (first) {
      t->vv[st[k].op](n, v, st[k].b, v);
    } else {
      t->vv[st[k].op](n, st[k].b, v, v);
    }
  }
  memcpy(y, v, n * sizeof *v);
}

static void describe(char *out, size_t cap, const optic_f32_chain_step *st, int32_t ns) {
  size_t at = 0;
  for (int32_t k = 0; k < ns && at + 24 < cap; k++) {
    at += (size_t)snprintf(out + at, cap - at, "%s%s%s ", optic_binary_op_name(st[k].op),
                           (st[k].flags & OPTIC_CHAIN_ACC_FIRST) ? "" : "(rev)",
                           (st[k].flags & OPTIC_CHAIN_SCALAR) ? "(s)" : "");
  }
}

static void check_one(optic_isa isa, optic_f32_chain_fn fn, const char *name, size_t n, size_t off, uint64_t seed,
                      bool stream) {
  kt_rng rng = {seed};
  kt_buf a = kt_buf_make(n, off), y = kt_buf_make(n, (off + 3) % 16), b[OPTIC_CHAIN_MAX_STEPS];
  float *bp[OPTIC_CHAIN_MAX_STEPS];
  for (int k = 0; k < OPTIC_CHAIN_MAX_STEPS; k++) {
    b[k] = kt_buf_make(n, (off + (size_t)k) % 16);
    kt_fill(&rng, b[k].p, n, -3.0f, 3.0f, 1);
    bp[k] = b[k].p;
  }
  kt_fill(&rng, a.p, n, -3.0f, 3.0f, 1);
  const int32_t ns = 1 + (int32_t)(kt_next(&rng) % OPTIC_CHAIN_MAX_STEPS);
  optic_f32_chain_step st[OPTIC_CHAIN_MAX_STEPS];
  make_program(&rng, ns, bp, st);
  static float want[MAXN], ref[MAXN];
  by_binary_kernels(isa, n, a.p, st, ns, want);
  optic_ref_f32_chain(n, a.p, st, ns, ref);
  fn(n, a.p, st, ns, y.p, stream);
  if (stream) optic_stream_fence();
  char prog[512] = "";
  describe(prog, sizeof prog, st, ns);
  /* the scalar kernel: NaN payloads as the compiler orders operands (the runtime chains only vector kernels) */
  const bool payloads = isa != OPTIC_ISA_SCALAR;
  bool like_ref = true;
  size_t bad = 0;
  while (bad < n && (payloads ? bits(y.p[bad]) == bits(want[bad]) : kt_same(y.p[bad], want[bad]))) bad++;
  const bool same = bad == n;
  for (size_t i = 0; i < n; i++) like_ref &= kt_same(y.p[i], ref[i]);
  OT_CHECK(same, "%s n=%zu off=%zu seed=%llu stream=%d [%s]: element %zu is 0x%08x, the binary kernels give 0x%08x",
           name, n, off, (unsigned long long)seed, stream, prog, bad, bad < n ? bits(y.p[bad]) : 0u,
           bad < n ? bits(want[bad]) : 0u);
  OT_CHECK(like_ref, "%s n=%zu seed=%llu [%s]: differs from the reference", name, n, (unsigned long long)seed, prog);
  OT_CHECK(kt_buf_guard_ok(&y), "%s n=%zu: wrote past the end", name, n);
  /* in place: y == a, then y == the first array operand */
  fn(n, a.p, st, ns, a.p, stream);
  if (stream) optic_stream_fence();
  bool in_place = true;
  for (size_t i = 0; i < n; i++) in_place &= payloads ? bits(a.p[i]) == bits(want[i]) : kt_same(a.p[i], want[i]);
  OT_CHECK(in_place, "%s n=%zu seed=%llu: in place (y == a) differs", name, n, (unsigned long long)seed);
  kt_buf_free(&a);
  kt_buf_free(&y);
  for (int k = 0; k < OPTIC_CHAIN_MAX_STEPS; k++) kt_buf_free(&b[k]);
}

static void check_kernel(optic_isa isa, optic_f32_chain_fn fn, const char *name) {
  if (kt_skip_isa(isa)) return;
  size_t sizes[64];
  size_t ns = kt_sizes(isa, sizes, 60);
  sizes[ns++] = 32, sizes[ns++] = 33, sizes[ns++] = 1024, sizes[ns++] = 1031;
  for (size_t i = 0; i < ns; i++) {
    if (sizes[i] > MAXN) continue;
    for (size_t o = 0; o < kt_noffsets; o++) {
      for (uint64_t seed = 1; seed <= 80; seed++) {
        check_one(isa, fn, name, sizes[i], kt_offsets[o], seed * 7919 + sizes[i], (seed & 1) != 0);
      }
    }
  }
}

#define X_CHAIN(op, isa, fn) \
  static void test_##fn(void) { check_kernel(OPTIC_ISA_##isa, fn, #fn); }
#include "kernels/list/chain.inc"
#undef X_CHAIN

/* A step's operand order matters for NaN payloads and for subtract/divide:
 * hand-checked answers of the reference. */
static void reference_known_answers(void) {
  const float a[2] = {6.0f, -0.0f}, b[2] = {2.0f, 0.0f};
  float y[2];
  optic_f32_chain_step st[2] = {{.op = OPTIC_BINARY_SUB, .flags = 0, .b = b},
                                {.op = OPTIC_BINARY_DIV, .flags = OPTIC_CHAIN_ACC_FIRST | OPTIC_CHAIN_SCALAR, .s = 2}};
  optic_ref_f32_chain(2, a, st, 2, y); /* (b - a) / 2 */
  OT_CHECK(y[0] == -2.0f && bits(y[1]) == 0u, "got %g %g", y[0], y[1]);
  st[0].flags = OPTIC_CHAIN_ACC_FIRST; /* (a - b) / 2 */
  optic_ref_f32_chain(2, a, st, 2, y);
  OT_CHECK(y[0] == 2.0f && bits(y[1]) == 0x80000000u, "got %g %g", y[0], y[1]);
}

static void dispatch_tables(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    const optic_chain_kernels *t = optic_chain_kernels_for((optic_isa)i);
    OT_CHECK((t != NULL) == optic_isa_built((optic_isa)i), "table for %s", optic_isa_name((optic_isa)i));
    if (t == NULL) continue;
    OT_CHECK(t->chain != NULL, "%s has a hole", optic_isa_name((optic_isa)i));
    OT_CHECK(t->isa_of_chain == OPTIC_ISA_SCALAR || t->isa_of_chain == (optic_isa)i);
  }
#define X_CHAIN(op, isa, fn) OT_CHECK(optic_chain_kernels_for(OPTIC_ISA_##isa)->chain == fn, #fn " not in its table");
#include "kernels/list/chain.inc"
#undef X_CHAIN
}

static const ot_case cases[] = {
#define X_CHAIN(op, isa, fn) {#fn, test_##fn},
#include "kernels/list/chain.inc"
#undef X_CHAIN
    {"reference_known_answers", reference_known_answers},
    {"dispatch_tables", dispatch_tables},
};
OT_MAIN(cases)
