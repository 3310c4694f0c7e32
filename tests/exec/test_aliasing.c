/* optic_program_run's aliasing rule: an output the caller passes must share
 * no byte with an input, another output or a constant of the program, and
 * is refused (INVALID_ARGUMENT naming both, nothing run) when it does: the
 * same pointer, partial overlap at either end, output/output, a constant.
 * Adjacent buffers, inputs sharing memory and empty buffers are fine. A
 * result the context lent may be passed back as the next run's input. The
 * 64x64 transpose into its own input used to return OK with 2,016 of 4,096
 * elements wrong. */
#include <stdint.h>

#include "tests/exec/exec_util.h"

#define N 64

static optic_program_t *compile_module(optic_module_t *m) {
  optic_compile_options o = optic_compile_options_default();
  o.level = OPTIC_OPT_NONE;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, &o, &p));
  if (p == NULL) exit(2);
  return p;
}

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t k, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id;
  if (optic_graph_parameter(m, c, k, &t, NULL, &id)) exit(2);
  return id;
}

/* y = transpose(x) over f32[N, N]. */
static optic_program_t *transpose_program(optic_module_t **mp) {
  optic_module_t *m;
  optic_comp_id c;
  if (optic_module_create("transpose", &m) || optic_module_add_computation(m, "main", &c)) exit(2);
  const int64_t d[2] = {N, N}, perm[2] = {1, 0};
  optic_node_id x = param(m, c, 0, 2, d), y;
  OT_EXPECT_OK(optic_graph_transpose(m, c, x, perm, NULL, &y));
  optic_computation_set_root(m, c, y);
  *mp = m;
  return compile_module(m);
}

/* (a + b, a * b + k) over f32[len], k a constant: two inputs, two outputs. */
static optic_program_t *pair_program(optic_module_t **mp, int64_t len) {
  optic_module_t *m;
  optic_comp_id c;
  if (optic_module_create("pair", &m) || optic_module_add_computation(m, "main", &c)) exit(2);
  optic_node_id a = param(m, c, 0, 1, &len), b = param(m, c, 1, 1, &len), s, p, k, pk, t;
  float kv[N];
  for (int i = 0; i < N; i++) kv[i] = (float)(100 + i);
  optic_shape ks = {.rank = 1, .dims = {len}};
  OT_EXPECT_OK(optic_graph_constant(m, c, OPTIC_F32, &ks, kv, (size_t)len * sizeof(float), NULL, &k));
  optic_graph_binary(m, c, OPTIC_OP_ADD, a, b, NULL, &s);
  optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, a, b, NULL, &p);
  optic_graph_binary(m, c, OPTIC_OP_ADD, p, k, NULL, &pk);
  optic_node_id els[2] = {s, pk};
  optic_graph_tuple(m, c, els, 2, NULL, &t);
  optic_computation_set_root(m, c, t);
  *mp = m;
  return compile_module(m);
}

static optic_tensor vec(float *data, int64_t len) {
  return (optic_tensor){OPTIC_F32, {.rank = 1, .dims = {len}}, data};
}

/* The run is refused and the message names `first` and `second`. */
static void expect_refused(optic_program_t *p, optic_exec_ctx_t *ctx, const optic_tensor *in, int32_t n_in,
                           optic_tensor *out, int32_t n_out, const char *first, const char *second, const char *what) {
  optic_clear_error();
  optic_status st = optic_program_run(p, ctx, in, n_in, out, n_out);
  OT_CHECK(st == OPTIC_ERR_INVALID_ARGUMENT, "%s: got %s, want OPTIC_ERR_INVALID_ARGUMENT (%s)", what,
           optic_status_name(st), optic_last_error());
  const char *msg = optic_last_error(), *f = strstr(msg, first);
  OT_CHECK(f != NULL && strstr(f + strlen(first), second) != NULL, "%s: message '%s' does not name %s then %s", what,
           msg, first, second);
  printf("  %s: %s\n", what, msg);
}

static void transpose_into_its_input(void) {
  optic_module_t *m;
  optic_program_t *p = transpose_program(&m);
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  static float x[N * N], keep[N * N], y[N * N];
  for (int i = 0; i < N * N; i++) x[i] = keep[i] = (float)i;
  optic_tensor in = {OPTIC_F32, {.rank = 2, .dims = {N, N}}, x}, out = in;
  optic_status st = optic_program_run(p, ctx, &in, 1, &out, 1);
  if (st == OPTIC_OK) {
    int wrong = 0;
    for (int r = 0; r < N; r++) {
      for (int c = 0; c < N; c++) wrong += x[r * N + c] != keep[c * N + r];
    }
    OT_CHECK(false, "output == input returned OK with %d of %d elements wrong", wrong, N * N);
  } else {
    OT_CHECK(st == OPTIC_ERR_INVALID_ARGUMENT, "status %s", optic_status_name(st));
    OT_CHECK(strstr(optic_last_error(), "output 0 is the same buffer as input 0") != NULL, "%s", optic_last_error());
    OT_CHECK(memcmp(x, keep, sizeof x) == 0, "a refused run changed its input");
  }
  /* Into a separate buffer it is right. */
  out.data = y;
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, &out, 1));
  int wrong = 0;
  for (int r = 0; r < N; r++) {
    for (int c = 0; c < N; c++) wrong += y[r * N + c] != x[c * N + r];
  }
  OT_CHECK(wrong == 0, "%d elements wrong", wrong);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

/* a = [0..N), b = [1..N+1): checks the pair program's outputs. */
static int pair_wrong(const float *a, const float *b, const float *sum, const float *prod) {
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += sum[i] != a[i] + b[i] || prod[i] != a[i] * b[i] + (float)(100 + i);
  return wrong;
}

static void every_overlap_form(void) {
  optic_module_t *m;
  optic_program_t *p = pair_program(&m, N);
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  /* One arena with room on both sides: a at [4N, 5N), b at [8N, 9N). */
  static float arena[12 * N];
  float *a = arena + 4 * N, *b = arena + 8 * N, sum[N], prod[N];
  for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = (float)(i + 1);
  optic_tensor in[2] = {vec(a, N), vec(b, N)}, out[2] = {vec(sum, N), vec(prod, N)};
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 2, out, 2));
  OT_CHECK(pair_wrong(a, b, sum, prod) == 0);

  out[0] = vec(a, N);
  expect_refused(p, ctx, in, 2, out, 2, "output 0 is the same buffer as input 0", "", "same pointer");
  out[0] = vec(a + 1, N); /* output starts inside the input */
  expect_refused(p, ctx, in, 2, out, 2, "output 0", "overlaps input 0", "output starts inside input");
  out[0] = vec(a - (N - 1), N); /* output's last element is the input's first */
  expect_refused(p, ctx, in, 2, out, 2, "output 0", "overlaps input 0 (", "output ends inside input");
  out[0] = vec(b + N - 1, N); /* output's first element is b's last */
  expect_refused(p, ctx, in, 2, out, 2, "output 0", "overlaps input 1", "output starts at the input's last element");
  out[0] = vec(sum, N);
  out[1] = vec(sum + N / 2, N); /* two outputs */
  expect_refused(p, ctx, in, 2, out, 2, "output 1", "overlaps output 0", "output overlaps output");
  out[1] = vec(sum, N);
  expect_refused(p, ctx, in, 2, out, 2, "output 1 is the same buffer as output 0", "", "outputs the same pointer");
  int changed = 0;
  for (int i = 0; i < N; i++) changed += a[i] != (float)i || b[i] != (float)(i + 1);
  OT_CHECK(changed == 0, "refused runs changed %d input elements", changed);

  /* Adjacent on either side is fine, and the results are right. */
  float *s_after = b + N, *p_before = a - N;
  out[0] = vec(s_after, N), out[1] = vec(p_before, N);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 2, out, 2));
  OT_CHECK(pair_wrong(a, b, s_after, p_before) == 0, "adjacent outputs");
  /* Inputs may share memory: both read a. */
  in[1] = vec(a, N);
  out[0] = vec(sum, N), out[1] = vec(prod, N);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 2, out, 2));
  OT_CHECK(pair_wrong(a, a, sum, prod) == 0, "inputs sharing memory");
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static void constants_are_read_only(void) {
  optic_module_t *m;
  optic_program_t *p = pair_program(&m, N);
  const optic_module_t *pm = optic_program_module(p);
  const float *k = NULL;
  for (optic_node_id id = 0; id < 64 && k == NULL; id++) {
    size_t bytes;
    const void *d = optic_node_constant_data(pm, id, &bytes);
    if (d != NULL && bytes == N * sizeof(float)) k = d;
  }
  OT_CHECK(k != NULL, "the program holds no f32[%d] constant", N);
  if (k == NULL) return;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  float a[N], b[N], sum[N], prod[N];
  for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = (float)(i + 1);
  optic_tensor in[2] = {vec(a, N), vec(b, N)}, out[2] = {vec(sum, N), vec((float *)(uintptr_t)k, N)};
  expect_refused(p, ctx, in, 2, out, 2, "output 1", "overlaps constant", "output is a constant");
  out[1] = vec((float *)(uintptr_t)(k + N - 1), N);
  expect_refused(p, ctx, in, 2, out, 2, "output 1", "overlaps constant", "output starts at a constant's end");
  int changed = 0;
  for (int i = 0; i < N; i++) changed += k[i] != (float)(100 + i);
  OT_CHECK(changed == 0, "refused runs changed %d elements of the program's constant", changed);
  /* Reading a constant as an input is fine. */
  in[0] = vec((float *)(uintptr_t)k, N);
  out[1] = vec(prod, N);
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 2, out, 2));
  OT_CHECK(pair_wrong(k, b, sum, prod) == 0);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static void empty_buffers(void) {
  optic_module_t *m;
  optic_program_t *p = pair_program(&m, 0);
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  float one[4] = {1, 2, 3, 4};
  /* Every buffer at one address: no byte is shared when none is held. */
  optic_tensor in[2] = {vec(one, 0), vec(one, 0)}, out[2] = {vec(one, 0), vec(one, 0)};
  OT_EXPECT_OK(optic_program_run(p, ctx, in, 2, out, 2));
  OT_CHECK(one[0] == 1 && one[3] == 4, "an empty run wrote");
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

/* y1 = transpose(x); y2 = transpose(y1) with y1 the context's own buffer
 * passed back: y2 must equal x, and the context lends y2 elsewhere. From
 * the second round on, the context alternates between its two buffers
 * without pool traffic (a steady state, as a run with caller buffers). */
static void lent_result_as_next_input(void) {
  optic_module_t *m;
  optic_program_t *p = transpose_program(&m);
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(NULL, &ctx));
  static float x[N * N];
  for (int i = 0; i < N * N; i++) x[i] = (float)i;
  optic_tensor in = {OPTIC_F32, {.rank = 2, .dims = {N, N}}, x}, out = {0};
  OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, &out, 1));
  const void *first = out.data, *second = NULL;
  optic_pool_stats warm = {0}, now;
  for (int round = 0; round < 5; round++) {
    optic_tensor in2 = out, out2 = {0};
    OT_EXPECT_OK(optic_program_run(p, ctx, &in2, 1, &out2, 1));
    OT_CHECK(out2.data != in2.data, "round %d: the context lent the input's buffer as the output", round);
    if (round == 0) {
      second = out2.data;
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &warm));
    } else {
      OT_CHECK(out2.data == (round % 2 ? first : second), "round %d: a third buffer", round);
      OT_EXPECT_OK(optic_exec_ctx_pool_stats(ctx, &now));
      OT_CHECK(now.hits == warm.hits && now.misses == warm.misses,
               "round %d: pool traffic (hits %llu -> %llu, misses %llu -> %llu)", round, (unsigned long long)warm.hits,
               (unsigned long long)now.hits, (unsigned long long)warm.misses, (unsigned long long)now.misses);
    }
    const float *y = out2.data, *w = in2.data;
    int wrong = 0;
    for (int r = 0; r < N; r++) {
      for (int c = 0; c < N; c++) wrong += y[r * N + c] != w[c * N + r];
    }
    OT_CHECK(wrong == 0, "round %d: %d of %d elements wrong", round, wrong, N * N);
    out = out2;
  }
  const float *y = out.data; /* six transposes: x again */
  OT_CHECK(memcmp(y, x, sizeof x) == 0, "x^T^T^T^T^T^T != x");
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"transpose_into_its_input", transpose_into_its_input},   {"every_overlap_form", every_overlap_form},
    {"constants_are_read_only", constants_are_read_only},     {"empty_buffers", empty_buffers},
    {"lent_result_as_next_input", lent_result_as_next_input},
};
OT_MAIN(cases)
