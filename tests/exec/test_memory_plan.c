/* optic_program_run_memory against what a run really takes from its
 * context's pool: on a sweep of programs (hand-built ones whose scratch has
 * a known lower bound, and the reference and real-world HLO modules) on 1
 * and 2 threads, the pool's peak equals the planned reserved_bytes and the
 * bytes asked for equal arena + scratch + registers; f16 widening, while
 * state and sort positions are at least what the ops need; outputs the
 * context provides come on top; bad arguments fail with a message. A
 * failing case prints the module it ran. */
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/exec/exec_util.h"
#include "tests/harness.h"
#include "tests/hlo_files.h"

enum { MAX_LEAVES = 256 };

typedef struct run_io {
  optic_tensor t[MAX_LEAVES];
  int32_t n;
  size_t bytes;
} run_io;

/* Zeroed tensors for the leaves of type ty (caller's buffers). */
static bool io_make(const optic_type *ty, run_io *io) {
  const optic_type *leaves[MAX_LEAVES];
  int32_t n = 0;
  if (optic_type_is_tuple(ty) && ty->tuple_size > MAX_LEAVES) return false;
  ex_leaves(ty, leaves, &n);
  for (int32_t i = 0; i < n; i++) {
    size_t b = 0;
    if (optic_shape_bytes(&leaves[i]->shape, leaves[i]->dtype, &b) != OPTIC_OK) return false;
    io->t[io->n] = (optic_tensor){leaves[i]->dtype, leaves[i]->shape, calloc(1, b ? b : 1)};
    if (io->t[io->n++].data == NULL) return false;
    io->bytes += b;
  }
  return true;
}

static void io_free(run_io *io) {
  for (int32_t i = 0; i < io->n; i++) free(io->t[i].data);
  *io = (run_io){.n = 0};
}

/* The entry's parameter leaves (in order) and root leaves of p. */
static bool io_for(const optic_program_t *p, run_io *in, run_io *out) {
  const optic_module_t *m = optic_program_module(p);
  optic_comp_id e = optic_program_entry(p);
  bool ok = true;
  for (int32_t k = 0; ok && k < optic_computation_parameter_count(m, e); k++)
    ok = io_make(optic_node_type(m, optic_computation_parameter(m, e, k)), in);
  return ok && io_make(optic_node_type(m, optic_computation_root(m, e)), out);
}

static size_t page_round(size_t b) {
  size_t g = b >= OPTIC_HUGE_ALLOC_THRESHOLD ? (size_t)2 << 20 : 4096;
  return b == 0 ? 0 : (b + g - 1) / g * g;
}

/* Compiles m for `threads`, plans the run, runs it once on a fresh context
 * with caller outputs and checks the pool against the plan. Returns the plan. */
static optic_run_memory check_module(const char *what, const optic_module_t *m, int32_t threads) {
  optic_run_memory rm = {.size = sizeof rm};
  optic_compile_options co = optic_compile_options_default();
  co.threads = threads;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, &co, &p));
  if (p == NULL) return rm;
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.max_while_iterations = 100000;
  OT_EXPECT_OK(optic_program_run_memory(p, &eo, &rm));
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
  run_io in = {.n = 0}, out = {.n = 0};
  OT_CHECK(io_for(p, &in, &out), "%s: cannot make its tensors", what);
  optic_status st = optic_program_run(p, ctx, in.t, in.n, out.t, out.n);
  OT_CHECK(st == OPTIC_OK, "%s threads %d: run failed: %s", what, (int)threads, optic_last_error());
  optic_pool_stats ps;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &ps));
  const size_t asked = rm.arena_bytes + rm.scratch_bytes + rm.regs_bytes;
  OT_CHECK(ps.peak_bytes == rm.reserved_bytes,
           "%s threads %d: pool peak %zu B, planned %zu B (arena %zu, scratch %zu, regs %zu)\n"
           "  repro: build/release/tests/exec_memory_plan",
           what, (int)threads, ps.peak_bytes, rm.reserved_bytes, rm.arena_bytes, rm.scratch_bytes, rm.regs_bytes);
  OT_CHECK(ps.bytes_requested == asked, "%s threads %d: the run asked for %zu B, planned %zu B", what, (int)threads,
           ps.bytes_requested, asked);
  OT_CHECK(rm.reserved_bytes == page_round(rm.arena_bytes) + page_round(rm.scratch_bytes) + page_round(rm.regs_bytes),
           "%s: reserved %zu B is not the three buffers page-rounded", what, rm.reserved_bytes);
  OT_CHECK(rm.io_bytes == in.bytes + out.bytes, "%s: io %zu B planned, the caller's tensors hold %zu B", what,
           rm.io_bytes, in.bytes + out.bytes);
  OT_CHECK(rm.peak_bytes == rm.reserved_bytes + rm.io_bytes + rm.constant_bytes, "%s: peak is not the sum", what);
  optic_program_summary s;
  OT_EXPECT_OK(optic_program_summary_get(p, &s));
  OT_CHECK(rm.arena_bytes >= s.memory.arena_bytes, "%s: arenas %zu B below the entry plan's %zu B", what,
           rm.arena_bytes, s.memory.arena_bytes);
  io_free(&in);
  io_free(&out);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  return rm;
}

static optic_run_memory check_text(const char *what, const char *text, int32_t threads) {
  optic_module_t *m = ex_parse(text);
  optic_run_memory rm = {.size = sizeof rm};
  if (m != NULL) rm = check_module(what, m, threads);
  optic_module_destroy(m);
  return rm;
}

/* f16 dot: the runtime widens both operands and the result to f32. */
static const char F16_DOT[] =
    "HloModule d\n\nENTRY main {\n  a = f16[64,32] parameter(0)\n"
    "  b = f16[32,48] parameter(1)\n  ROOT y = f16[64,48] dot(a, b), "
    "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";

/* A while over f32[1000] and an s32 counter: the body's root leaves need a place. */
static const char WHILE_LOOP[] =
    "HloModule w\n\ncond {\n  p = (s32[], f32[1000]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(5)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
    "body {\n  p = (s32[], f32[1000]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[1000] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
    "  h = f32[] constant(0.5)\n  hb = f32[1000] broadcast(h), dimensions={}\n  y = f32[1000] add(x, hb)\n"
    "  ROOT t = (s32[], f32[1000]) tuple(j, y)\n}\n\n"
    "ENTRY main {\n  x = f32[1000] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[1000]) tuple(z, x)\n"
    "  w = (s32[], f32[1000]) while(t), condition=cond, body=body\n"
    "  ROOT r = f32[1000] get-tuple-element(w), index=1\n}\n";

static const char SORT[] =
    "HloModule s\n\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT lt = pred[] compare(a, b), direction=LT\n}\n\n"
    "ENTRY main {\n  x = f32[4096] parameter(0)\n"
    "  ROOT s = f32[4096] sort(x), dimensions={0}, to_apply=cmp\n}\n";

static const char ADD_2X2[] =
    "HloModule a\n\nENTRY main {\n  x = f32[2,2] parameter(0)\n"
    "  y = f32[2,2] parameter(1)\n  ROOT z = f32[2,2] add(x, y)\n}\n";

/* A loop fusion writing three leaves in one block loop: a staging block
 * (512 elements x 8 bytes) per leaf for its streaming stores. */
static const char TUPLE_LOOP[] =
    "HloModule t\n\nf {\n  p0 = f32[4096] parameter(0)\n  p1 = f32[4096] parameter(1)\n"
    "  a = f32[4096] add(p0, p1)\n  n = f32[4096] negate(a)\n"
    "  ROOT r = (f32[4096], f32[4096], f32[4096]) tuple(a, n, p0)\n}\n\n"
    "ENTRY main {\n  x = f32[4096] parameter(0)\n  y = f32[4096] parameter(1)\n"
    "  ROOT g = (f32[4096], f32[4096], f32[4096]) fusion(x, y), kind=kLoop, calls=f\n}\n";

static void scratch_has_what_ops_need(void) {
  for (int32_t t = 1; t <= 2; t++) {
    optic_run_memory d = check_text("f16 dot", F16_DOT, t);
    const size_t widened = 4 * (64 * 32 + 32 * 48 + 64 * 48);
    OT_CHECK(d.scratch_bytes >= widened, "f16 dot: scratch %zu B, the widened f32 arrays need %zu B", d.scratch_bytes,
             widened);
    optic_run_memory w = check_text("while", WHILE_LOOP, t);
    OT_CHECK(w.scratch_bytes >= 4000 + 4, "while: scratch %zu B, the body's state needs 4004 B", w.scratch_bytes);
    optic_run_memory s = check_text("sort", SORT, t);
    OT_CHECK(s.scratch_bytes >= 2 * 4096 * sizeof(int64_t), "sort: scratch %zu B, positions need %zu B",
             s.scratch_bytes, 2 * 4096 * sizeof(int64_t));
    optic_run_memory l = check_text("tuple loop", TUPLE_LOOP, t);
    OT_CHECK(l.regs_bytes >= (size_t)t * 3 * 4096, "tuple loop: registers %zu B, three staging blocks need %zu B",
             l.regs_bytes, (size_t)t * 3 * 4096);
    optic_run_memory a = check_text("add 2x2", ADD_2X2, t);
    OT_CHECK(a.io_bytes == 48 && a.reserved_bytes >= 4096, "add 2x2: io %zu B (want 48), reserved %zu B", a.io_bytes,
             a.reserved_bytes);
  }
}

static void check_file(const char *name, int32_t threads) {
  size_t len = 0;
  char *text = ot_hlo_read(name, &len);
  if (text == NULL) return;
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, len, &m));
  if (m != NULL) check_module(name, m, threads);
  optic_module_destroy(m);
  free(text);
}

static void reference_modules(void) {
  for (size_t i = 0; i < OT_REFERENCE_HLO_COUNT; i++) {
    if (strstr(ot_reference_hlo[i], "parse_only") != NULL) continue;
    for (int32_t t = 1; t <= 2; t++) check_file(ot_reference_hlo[i], t);
  }
}

/* Real-world modules with bf16/f16 contractions, while loops, batch norm,
 * top-k, reductions and fused loops (small enough for a unit test). */
static void realworld_modules(void) {
  static const char *const files[] = {
      "realworld/attention_f16_fwd.hlo",
      "realworld/attention_f16_qkv_projection_5d.hlo",
      "realworld/batch_norm_training_8x4.hlo",
      "realworld/dense_bias_elu_bf16.hlo",
      "realworld/gemm_fusions_f16_s8_batched.hlo",
      "realworld/jax_countdown_while_tpu_layouts.hlo",
      "realworld/jax_layer_norm_f16.hlo",
      "realworld/jax_mha_block_1x12x128x64_bf16.hlo",
      "realworld/jax_reduce_axes12_f16.hlo",
      "realworld/jax_scan_matmul.hlo",
      "realworld/jax_topk_logits_k10_1x50000_bf16.hlo",
      "realworld/layer_norm_train_bwd_4d_axes12.hlo",
      "realworld/tf_scatter_as_while.hlo",
      "realworld/conv3d_reduce_two_axes.hlo",
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    for (int32_t t = 1; t <= 2; t++) check_file(files[i], t);
  }
}

/* Outputs the context lends come on top of the plan: one page-rounded
 * buffer per output on a first run. */
static void context_outputs_on_top(void) {
  optic_module_t *m = ex_parse(F16_DOT);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, NULL, &p));
  optic_run_memory rm = {.size = sizeof rm};
  OT_EXPECT_OK(optic_program_run_memory(p, NULL, &rm));
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  run_io in = {.n = 0}, out = {.n = 0};
  OT_CHECK(io_for(p, &in, &out), "f16 dot: cannot make its tensors");
  optic_tensor y = {.data = NULL};
  OT_EXPECT_OK(optic_program_run(p, ctx, in.t, in.n, &y, 1));
  optic_pool_stats ps;
  OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &ps));
  OT_CHECK(ps.peak_bytes == rm.reserved_bytes + page_round(64 * 48 * 2), "pool peak %zu B, planned %zu + output %zu",
           ps.peak_bytes, rm.reserved_bytes, page_round(64 * 48 * 2));
  io_free(&in);
  io_free(&out);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static void bad_arguments(void) {
  optic_module_t *m = ex_parse(ADD_2X2);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, NULL, &p));
  optic_run_memory rm = {.size = sizeof rm};
  OT_CHECK(optic_program_run_memory(NULL, NULL, &rm) == OPTIC_ERR_INVALID_ARGUMENT, "NULL program accepted");
  OT_CHECK(optic_program_run_memory(p, NULL, NULL) == OPTIC_ERR_INVALID_ARGUMENT, "NULL out accepted");
  optic_run_memory small = {.size = 0};
  OT_CHECK(optic_program_run_memory(p, NULL, &small) == OPTIC_ERR_INVALID_ARGUMENT, "size 0 accepted");
  OT_CHECK(strstr(optic_last_error(), "size") != NULL, "message: %s", optic_last_error());
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = -1;
  OT_CHECK(optic_program_run_memory(p, &eo, &rm) == OPTIC_ERR_INVALID_ARGUMENT, "threads -1 accepted");
  /* An older, shorter struct gets only its own fields. */
  struct {
    size_t size, arena_bytes;
    size_t guard;
  } old = {.size = 2 * sizeof(size_t), .guard = 77};
  old.arena_bytes = 12345;
  OT_EXPECT_OK(optic_program_run_memory(p, NULL, &rm));
  OT_EXPECT_OK(optic_program_run_memory(p, NULL, (optic_run_memory *)(void *)&old));
  OT_CHECK(old.guard == 77 && old.arena_bytes == rm.arena_bytes && old.size == 2 * sizeof(size_t),
           "short struct: guard %zu arena %zu (want %zu) size %zu", old.guard, old.arena_bytes, rm.arena_bytes,
           old.size);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"scratch_has_what_ops_need", scratch_has_what_ops_need},
    {"reference_modules", reference_modules},
    {"realworld_modules", realworld_modules},
    {"context_outputs_on_top", context_outputs_on_top},
    {"bad_arguments", bad_arguments},
};

OT_MAIN(cases)
