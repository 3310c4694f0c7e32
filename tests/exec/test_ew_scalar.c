/* The runtime against the evaluator for the one-element-at-a-time
 * elementwise ops (kernels/elem.h, scalar family): transcendental, rounding, integer
 * bit ops, is-finite, reduce-precision, bitcast-convert, alone and chained
 * with kernel ops (so level FULL fuses them into block loops), at sizes 0,
 * 1, 15, 16, 17, 513, 70001, with inputs one element off alignment, at
 * levels NONE and FULL on 1 and 2 threads. Both sides run the same scalar
 * code, so results must match bitwise (NaN payloads aside). */
#include <math.h>

#include "tests/exec/exec_util.h"

/* x, z: f32; i, j: s32; u, v: u8 — all of shape [n]; k3: s32[], kh: f32[]. */
#define NARGS 8
static optic_module_t *build(int64_t n) {
  optic_module_t *m;
  optic_comp_id c;
  if (optic_module_create("ew_scalar", &m) || optic_module_add_computation(m, "main", &c)) return NULL;
  optic_shape s = {.rank = 1, .dims = {n}};
  optic_type tf = optic_type_array(OPTIC_F32, &s), ti = optic_type_array(OPTIC_S32, &s);
  optic_type tu = optic_type_array(OPTIC_U8, &s);
  optic_node_id x = OPTIC_NO_NODE, z = x, i = x, j = x, u = x, v = x, r[40];
  int k = 0;
  bool ok = !optic_graph_parameter(m, c, 0, &tf, "x", &x) && !optic_graph_parameter(m, c, 1, &tf, "z", &z) &&
            !optic_graph_parameter(m, c, 2, &ti, "i", &i) && !optic_graph_parameter(m, c, 3, &ti, "j", &j) &&
            !optic_graph_parameter(m, c, 4, &tu, "u", &u) && !optic_graph_parameter(m, c, 5, &tu, "v", &v);
  static const optic_opcode fun[] = {OPTIC_OP_SINE,
                                     OPTIC_OP_COSINE,
                                     OPTIC_OP_TAN,
                                     OPTIC_OP_CBRT,
                                     OPTIC_OP_ROUND_NEAREST_AFZ,
                                     OPTIC_OP_ROUND_NEAREST_EVEN};
  optic_node_id t = OPTIC_NO_NODE, w = OPTIC_NO_NODE;
  for (size_t q = 0; ok && q < sizeof fun / sizeof fun[0]; q++) {
    /* op(x * z): a kernel op feeding the scalar one, fused at FULL */
    ok = !optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, x, z, NULL, &t) &&
         !optic_graph_unary(m, c, fun[q], t, NULL, &w) && !optic_graph_binary(m, c, OPTIC_OP_ADD, w, x, NULL, &r[k++]);
  }
  ok = ok && !optic_graph_binary(m, c, OPTIC_OP_ATAN2, x, z, NULL, &r[k++]) &&
       !optic_graph_binary(m, c, OPTIC_OP_REMAINDER, x, z, NULL, &r[k++]) &&
       !optic_graph_reduce_precision(m, c, x, 5, 10, NULL, &r[k++]) && !optic_graph_is_finite(m, c, z, NULL, &r[k++]) &&
       !optic_graph_bitcast_convert(m, c, x, OPTIC_S32, NULL, &r[k++]);
  static const optic_opcode ibin[] = {OPTIC_OP_XOR, OPTIC_OP_SHIFT_LEFT, OPTIC_OP_SHIFT_RIGHT_LOGICAL,
                                      OPTIC_OP_SHIFT_RIGHT_ARITHMETIC, OPTIC_OP_REMAINDER};
  for (size_t q = 0; ok && q < sizeof ibin / sizeof ibin[0]; q++) {
    ok = !optic_graph_binary(m, c, ibin[q], i, j, NULL, &r[k++]) &&
         !optic_graph_binary(m, c, ibin[q], u, v, NULL, &r[k++]);
  }
  /* Scalar operands (broadcast scalar parameters: scalar inputs of a fused
   * loop; constants would be folded into full arrays first). */
  optic_shape sc = {.rank = 0};
  optic_type ts = optic_type_array(OPTIC_S32, &sc), tfs = optic_type_array(OPTIC_F32, &sc);
  optic_node_id k3 = OPTIC_NO_NODE, kh = k3, b3 = k3, bh = k3;
  ok = ok && !optic_graph_parameter(m, c, 6, &ts, "k3", &k3) && !optic_graph_parameter(m, c, 7, &tfs, "kh", &kh) &&
       !optic_graph_broadcast(m, c, k3, &s, NULL, 0, NULL, &b3) &&
       !optic_graph_broadcast(m, c, kh, &s, NULL, 0, NULL, &bh) &&
       !optic_graph_binary(m, c, OPTIC_OP_SHIFT_LEFT, i, b3, NULL, &r[k++]) &&
       !optic_graph_binary(m, c, OPTIC_OP_SHIFT_RIGHT_ARITHMETIC, b3, i, NULL, &r[k++]) &&
       !optic_graph_binary(m, c, OPTIC_OP_ATAN2, bh, x, NULL, &r[k++]) &&
       !optic_graph_binary(m, c, OPTIC_OP_REMAINDER, x, bh, NULL, &r[k++]);
  ok = ok && !optic_graph_unary(m, c, OPTIC_OP_POPCNT, i, NULL, &t) &&
       !optic_graph_unary(m, c, OPTIC_OP_COUNT_LEADING_ZEROS, t, NULL, &r[k++]) &&
       !optic_graph_unary(m, c, OPTIC_OP_COUNT_LEADING_ZEROS, u, NULL, &r[k++]) &&
       !optic_graph_tuple(m, c, r, k, NULL, &t) && !optic_computation_set_root(m, c, t);
  if (!ok) {
    fprintf(stderr, "  build: %s\n", optic_last_error());
    optic_module_destroy(m);
    return NULL;
  }
  return m;
}

static void fill(optic_literal_t *lit, ex_rng *r) {
  size_t bytes;
  void *d = optic_literal_mutable_data(lit, &bytes);
  const optic_type *t = optic_literal_type(lit);
  size_t n = bytes / optic_dtype_size(t->dtype);
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 2.5f, -0.5f, 1e30f};
  for (size_t i = 0; i < n; i++) {
    uint64_t x = ex_next(r);
    switch (t->dtype) {
      case OPTIC_F32:
        ((float *)d)[i] = x % 13 == 0 ? special[(x >> 8) % 8] : (float)((int64_t)(x % 4001) - 2000) / 150.0f;
        break;
      case OPTIC_S32: /* shift amounts around the width, and arbitrary bits */
        ((int32_t *)d)[i] = x % 3 == 0 ? (int32_t)((x >> 8) % 80) - 40 : (int32_t)(uint32_t)(x >> 16);
        break;
      default: ((uint8_t *)d)[i] = x % 3 == 0 ? (uint8_t)((x >> 8) % 12) : (uint8_t)(x >> 24); break;
    }
  }
}

/* Runs the program on inputs placed one element past an aligned address. */
static bool run_misaligned(const optic_module_t *m, optic_opt_level level, int threads, optic_literal_t *const *args,
                           int nargs, const optic_literal_t *want, const char *label) {
  optic_compile_options co = optic_compile_options_default();
  co.level = level;
  optic_program_t *p = NULL;
  if (optic_compile(m, &co, &p) != OPTIC_OK) {
    OT_CHECK(false, "%s: compile: %s", label, optic_last_error());
    return false;
  }
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = threads > 1 ? 1 : 0;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
  optic_tensor in[8], out[EX_MAX_LEAVES];
  unsigned char *bufs[8] = {NULL};
  for (int a = 0; a < nargs; a++) {
    size_t bytes;
    const void *src = optic_literal_data(args[a], &bytes);
    const optic_type *t = optic_literal_type(args[a]);
    size_t es = optic_dtype_size(t->dtype);
    bufs[a] = malloc(bytes + 64);
    if (bytes) memcpy(bufs[a] + es, src, bytes);
    in[a] = (optic_tensor){t->dtype, t->shape, bufs[a] + es};
  }
  const optic_literal_t *wl[EX_MAX_LEAVES];
  optic_literal_t *got[EX_MAX_LEAVES] = {NULL};
  int32_t n_out = 0;
  ex_lit_leaves(want, wl, &n_out);
  for (int32_t o = 0; o < n_out; o++) {
    const optic_type *t = optic_literal_type(wl[o]);
    optic_literal_create_array(t->dtype, &t->shape, NULL, 0, &got[o]);
    out[o] = (optic_tensor){t->dtype, t->shape, optic_literal_mutable_data(got[o], NULL)};
  }
  optic_status st = optic_program_run(p, ctx, in, nargs, out, n_out);
  bool ok = st == OPTIC_OK;
  OT_CHECK(ok, "%s: run: %s", label, optic_last_error());
  for (int32_t o = 0; o < n_out && ok; o++) {
    char why[256];
    ok = optic_literal_match(wl[o], got[o], OPTIC_MATCH_NAN_AWARE, 0, 0, why, sizeof why);
    OT_CHECK(ok, "%s: level %d, %d threads, output %d: %s", label, (int)level, threads, (int)o, why);
  }
  for (int32_t o = 0; o < n_out; o++) optic_literal_destroy(got[o]);
  for (int a = 0; a < nargs; a++) free(bufs[a]);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(p);
  return ok;
}

static void runtime_matches_evaluator(void) {
  static const int64_t sizes[] = {0, 1, 15, 16, 17, 513, 70001};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    optic_module_t *m = build(sizes[s]);
    OT_CHECK(m != NULL);
    if (m == NULL) continue;
    optic_comp_id e = optic_module_entry(m);
    optic_literal_t *args[NARGS];
    ex_rng r = {(uint64_t)sizes[s] + 1};
    for (int a = 0; a < NARGS; a++) {
      optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, a)), &args[a]);
      fill(args[a], &r);
    }
    optic_literal_t *want = NULL;
    OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)args, NARGS, NULL, &want));
    char label[64];
    snprintf(label, sizeof label, "n=%lld", (long long)sizes[s]);
    for (int level = 0; want && level <= 2; level += 2) {
      for (int t = 1; t <= 2; t++) {
        if (!run_misaligned(m, (optic_opt_level)level, t, args, NARGS, want, label)) {
          printf("  reproduce: %s runtime_matches_evaluator\n", ot_prog_);
        }
      }
    }
    optic_literal_destroy(want);
    for (int a = 0; a < NARGS; a++) optic_literal_destroy(args[a]);
    optic_module_destroy(m);
  }
}

static const ot_case cases[] = {{"runtime_matches_evaluator", runtime_matches_evaluator}};
OT_MAIN(cases)
