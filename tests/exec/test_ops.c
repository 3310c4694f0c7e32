/* Every opcode through optic_program_run against the reference evaluator,
 * at levels NONE and FULL, on 1 and 2 threads, with caller and
 * context-allocated outputs. Inputs are small integers and quarters, so
 * arithmetic is exact: tolerance 1e-6 absolute/relative (transcendentals:
 * the kernels' documented 2 ULP, well inside 1e-6 relative). */
#include "exec/exec_internal.h"
#include "kernels/stream.h"
#include "tests/exec/exec_util.h"

static optic_module_t *M;
static optic_comp_id C;

static void fresh(void) {
  optic_module_destroy(M);
  if (optic_module_create("t", &M) || optic_module_add_computation(M, "main", &C)) exit(2);
}

static optic_node_id param(optic_comp_id c, int32_t k, optic_dtype dt, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id;
  if (optic_graph_parameter(M, c, k, &t, NULL, &id)) exit(2);
  return id;
}

static optic_comp_id scalar_fn(const char *name, optic_opcode op, optic_dtype dt) {
  optic_comp_id f;
  optic_node_id a, b, r;
  optic_module_add_computation(M, name, &f);
  a = param(f, 0, dt, 0, NULL);
  b = param(f, 1, dt, 0, NULL);
  optic_graph_binary(M, f, op, a, b, NULL, &r);
  optic_computation_set_root(M, f, r);
  return f;
}

static void finish(optic_node_id root, const char *label) {
  OT_EXPECT_OK(optic_computation_set_root(M, C, root));
  optic_module_set_entry(M, C);
  ex_check_module(M, 42, 1e-6, 1e-6, label);
}

static const int64_t d23[] = {2, 3}, d37[] = {3, 7}, d1000[] = {1000};

static void elementwise(void) {
  static const optic_opcode un[] = {
      OPTIC_OP_NEGATE,   OPTIC_OP_ABS,   OPTIC_OP_EXPONENTIAL, OPTIC_OP_SQRT,         OPTIC_OP_TANH,
      OPTIC_OP_LOGISTIC, OPTIC_OP_SIGN,  OPTIC_OP_FLOOR,       OPTIC_OP_CEIL,         OPTIC_OP_COPY,
      OPTIC_OP_LOG,      OPTIC_OP_RSQRT, OPTIC_OP_ERF,         OPTIC_OP_LOG_PLUS_ONE, OPTIC_OP_EXPONENTIAL_MINUS_ONE};
  static const optic_opcode bin[] = {OPTIC_OP_ADD,     OPTIC_OP_SUBTRACT, OPTIC_OP_MULTIPLY, OPTIC_OP_DIVIDE,
                                     OPTIC_OP_MAXIMUM, OPTIC_OP_MINIMUM,  OPTIC_OP_POWER};
  optic_dtype dts[] = {OPTIC_F32, OPTIC_F64};
  for (int d = 0; d < 2; d++) {
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
      fresh();
      optic_node_id x = param(C, 0, dts[d], 1, d1000), y;
      OT_EXPECT_OK(optic_graph_unary(M, C, un[i], x, NULL, &y));
      finish(y, optic_opcode_name(un[i]));
    }
    for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) {
      fresh();
      optic_node_id x = param(C, 0, dts[d], 2, d37), z = param(C, 1, dts[d], 2, d37), y;
      OT_EXPECT_OK(optic_graph_binary(M, C, bin[i], x, z, NULL, &y));
      finish(y, optic_opcode_name(bin[i]));
    }
  }
  /* integers and pred */
  static const optic_opcode ib[] = {OPTIC_OP_ADD,    OPTIC_OP_SUBTRACT, OPTIC_OP_MULTIPLY,
                                    OPTIC_OP_DIVIDE, OPTIC_OP_MAXIMUM,  OPTIC_OP_MINIMUM,
                                    OPTIC_OP_AND,    OPTIC_OP_OR,       OPTIC_OP_POWER};
  optic_dtype idt[] = {OPTIC_S32, OPTIC_U8};
  for (int d = 0; d < 2; d++) {
    for (size_t i = 0; i < sizeof ib / sizeof ib[0]; i++) {
      fresh();
      optic_node_id x = param(C, 0, idt[d], 2, d23), z = param(C, 1, idt[d], 2, d23), y;
      OT_EXPECT_OK(optic_graph_binary(M, C, ib[i], x, z, NULL, &y));
      finish(y, optic_opcode_name(ib[i]));
    }
  }
  static const optic_opcode iu[] = {OPTIC_OP_NEGATE, OPTIC_OP_ABS, OPTIC_OP_SIGN, OPTIC_OP_NOT};
  for (size_t i = 0; i < 4; i++) {
    fresh();
    optic_node_id x = param(C, 0, OPTIC_S32, 1, d1000), y;
    OT_EXPECT_OK(optic_graph_unary(M, C, iu[i], x, NULL, &y));
    finish(y, "s32 unary");
  }
  fresh();
  optic_node_id x = param(C, 0, OPTIC_PRED, 1, d1000), z = param(C, 1, OPTIC_PRED, 1, d1000), y, w;
  optic_graph_unary(M, C, OPTIC_OP_NOT, x, NULL, &y);
  OT_EXPECT_OK(optic_graph_binary(M, C, OPTIC_OP_AND, y, z, NULL, &w));
  finish(w, "pred not/and");
}

static void compare_select_clamp_convert(void) {
  optic_dtype dts[] = {OPTIC_F32, OPTIC_F64, OPTIC_S32, OPTIC_U8, OPTIC_PRED};
  for (int d = 0; d < 5; d++) {
    for (int dir = OPTIC_CMP_EQ; dir <= OPTIC_CMP_GE; dir++) {
      fresh();
      optic_node_id a = param(C, 0, dts[d], 1, d1000), b = param(C, 1, dts[d], 1, d1000), y;
      OT_EXPECT_OK(optic_graph_compare(M, C, (optic_compare_dir)dir, a, b, NULL, &y));
      finish(y, "compare");
    }
    fresh();
    optic_node_id p = param(C, 0, OPTIC_PRED, 1, d1000), a = param(C, 1, dts[d], 1, d1000),
                  b = param(C, 2, dts[d], 1, d1000), y;
    OT_EXPECT_OK(optic_graph_select(M, C, p, a, b, NULL, &y));
    finish(y, "select");
    fresh();
    p = param(C, 0, OPTIC_PRED, 0, NULL), a = param(C, 1, dts[d], 1, d1000), b = param(C, 2, dts[d], 1, d1000);
    OT_EXPECT_OK(optic_graph_select(M, C, p, a, b, NULL, &y));
    finish(y, "select scalar pred");
    if (dts[d] != OPTIC_PRED) {
      fresh();
      optic_node_id lo = param(C, 0, dts[d], 0, NULL), x = param(C, 1, dts[d], 1, d1000),
                    hi = param(C, 2, dts[d], 0, NULL);
      OT_EXPECT_OK(optic_graph_clamp(M, C, lo, x, hi, NULL, &y));
      finish(y, "clamp scalar");
      fresh();
      lo = param(C, 0, dts[d], 1, d1000), x = param(C, 1, dts[d], 1, d1000), hi = param(C, 2, dts[d], 0, NULL);
      OT_EXPECT_OK(optic_graph_clamp(M, C, lo, x, hi, NULL, &y));
      finish(y, "clamp mixed");
    }
    for (int e = 0; e < 5; e++) {
      fresh();
      optic_node_id x = param(C, 0, dts[d], 2, d37);
      OT_EXPECT_OK(optic_graph_convert(M, C, x, dts[e], NULL, &y));
      finish(y, "convert");
    }
  }
}

static void layout(void) {
  optic_node_id x, y;
  const int64_t d234[] = {2, 3, 4};
  fresh();
  x = param(C, 0, OPTIC_F32, 2, d23);
  optic_shape bs = {.rank = 3, .dims = {2, 5, 3}};
  const int64_t bd[] = {0, 2};
  OT_EXPECT_OK(optic_graph_broadcast(M, C, x, &bs, bd, 2, NULL, &y));
  finish(y, "broadcast");
  /* scalar broadcasts run as fills (1-, 4- and 8-byte elements), odd sizes
   * so thread shares end mid-vector */
  const optic_dtype fill_dts[] = {OPTIC_PRED, OPTIC_S32, OPTIC_F32, OPTIC_F64};
  optic_shape fs = {.rank = 2, .dims = {37, 1001}};
  for (size_t i = 0; i < sizeof fill_dts / sizeof fill_dts[0]; i++) {
    fresh();
    x = param(C, 0, fill_dts[i], 0, NULL);
    OT_EXPECT_OK(optic_graph_broadcast(M, C, x, &fs, NULL, 0, NULL, &y));
    finish(y, "broadcast scalar");
  }
  fresh();
  x = param(C, 0, OPTIC_S32, 3, d234);
  const int64_t perm[] = {2, 0, 1};
  OT_EXPECT_OK(optic_graph_transpose(M, C, x, perm, NULL, &y));
  finish(y, "transpose");
  fresh();
  x = param(C, 0, OPTIC_F32, 3, d234);
  optic_shape rs = {.rank = 2, .dims = {4, 6}};
  optic_node_id n;
  optic_graph_unary(M, C, OPTIC_OP_NEGATE, x, NULL, &n);
  OT_EXPECT_OK(optic_graph_reshape(M, C, n, &rs, NULL, &y));
  finish(y, "reshape");
  fresh();
  x = param(C, 0, OPTIC_F64, 3, d234);
  const int64_t st[] = {0, 1, 1}, li[] = {2, 3, 4}, sr[] = {1, 2, 2};
  OT_EXPECT_OK(optic_graph_slice(M, C, x, st, li, sr, NULL, &y));
  finish(y, "slice");
  fresh();
  x = param(C, 0, OPTIC_F32, 3, d234);
  const int64_t rv[] = {0, 2};
  OT_EXPECT_OK(optic_graph_reverse(M, C, x, rv, 2, NULL, &y));
  finish(y, "reverse");
  fresh();
  x = param(C, 0, OPTIC_F32, 2, d23);
  optic_node_id pv = param(C, 1, OPTIC_F32, 0, NULL);
  const optic_pad_dim pd[] = {{1, -1, 1}, {-1, 2, 0}};
  OT_EXPECT_OK(optic_graph_pad(M, C, x, pv, pd, NULL, &y));
  finish(y, "pad");
  fresh();
  optic_node_id xs[3] = {param(C, 0, OPTIC_U8, 2, d23), param(C, 1, OPTIC_U8, 2, (int64_t[]){2, 1}),
                         param(C, 2, OPTIC_U8, 2, (int64_t[]){2, 5})};
  OT_EXPECT_OK(optic_graph_concatenate(M, C, xs, 3, 1, NULL, &y));
  finish(y, "concatenate");
  optic_dtype dts[] = {OPTIC_F32, OPTIC_S32, OPTIC_F64};
  for (int d = 0; d < 3; d++) {
    fresh();
    optic_shape is = {.rank = 3, .dims = {3, 4, 5}};
    OT_EXPECT_OK(optic_graph_iota(M, C, dts[d], &is, 1, NULL, &y));
    finish(y, "iota");
  }
}

static void reductions(void) {
  optic_node_id x, i0, y;
  static const optic_opcode ops[] = {OPTIC_OP_ADD, OPTIC_OP_MAXIMUM, OPTIC_OP_MINIMUM, OPTIC_OP_MULTIPLY};
  const int64_t d = 0;
  const int64_t dims[][2] = {{1, 0}, {0, 0}, {2, 0}};
  const int32_t nd[] = {1, 1, 2};
  for (int o = 0; o < 4; o++) {
    for (int k = 0; k < 3; k++) {
      fresh();
      optic_comp_id f = scalar_fn("f", ops[o], OPTIC_F32);
      const int64_t sh[] = {5, 40, 3};
      x = param(C, 0, OPTIC_F32, 3, sh);
      i0 = param(C, 1, OPTIC_F32, 0, NULL);
      int64_t rd[2] = {dims[k][0], k == 2 ? 1 : 0};
      OT_EXPECT_OK(optic_graph_reduce(M, C, &x, &i0, 1, rd, nd[k], f, NULL, &y));
      finish(y, "reduce fast");
    }
  }
  (void)d;
  /* last-dim contiguous fast path */
  fresh();
  optic_comp_id f = scalar_fn("f", OPTIC_OP_ADD, OPTIC_F32);
  const int64_t sh2[] = {6, 100};
  x = param(C, 0, OPTIC_F32, 2, sh2);
  i0 = param(C, 1, OPTIC_F32, 0, NULL);
  const int64_t r1[] = {1};
  OT_EXPECT_OK(optic_graph_reduce(M, C, &x, &i0, 1, r1, 1, f, NULL, &y));
  finish(y, "reduce rows");
  /* general path: s32, and a two-input argmax-like reducer */
  fresh();
  f = scalar_fn("f", OPTIC_OP_MAXIMUM, OPTIC_S32);
  x = param(C, 0, OPTIC_S32, 2, d37);
  i0 = param(C, 1, OPTIC_S32, 0, NULL);
  OT_EXPECT_OK(optic_graph_reduce(M, C, &x, &i0, 1, r1, 1, f, NULL, &y));
  finish(y, "reduce s32");
  fresh();
  {
    optic_comp_id g;
    optic_module_add_computation(M, "g", &g);
    optic_node_id a0 = param(g, 0, OPTIC_F32, 0, NULL), a1 = param(g, 1, OPTIC_S32, 0, NULL),
                  b0 = param(g, 2, OPTIC_F32, 0, NULL), b1 = param(g, 3, OPTIC_S32, 0, NULL), ge, v, idx, t;
    optic_graph_compare(M, g, OPTIC_CMP_GE, a0, b0, NULL, &ge);
    optic_graph_select(M, g, ge, a0, b0, NULL, &v);
    optic_graph_select(M, g, ge, a1, b1, NULL, &idx);
    optic_node_id els[2] = {v, idx};
    optic_graph_tuple(M, g, els, 2, NULL, &t);
    optic_computation_set_root(M, g, t);
    optic_node_id xs[2] = {param(C, 0, OPTIC_F32, 2, d37), param(C, 1, OPTIC_S32, 2, d37)};
    optic_node_id is[2] = {param(C, 2, OPTIC_F32, 0, NULL), param(C, 3, OPTIC_S32, 0, NULL)};
    OT_EXPECT_OK(optic_graph_reduce(M, C, xs, is, 2, r1, 1, g, NULL, &y));
    finish(y, "reduce argmax");
  }
  /* reduce-window: fast and general, with padding, strides, dilation */
  for (int gen = 0; gen < 2; gen++) {
    fresh();
    f = gen ? scalar_fn("f", OPTIC_OP_MAXIMUM, OPTIC_S32) : scalar_fn("f", OPTIC_OP_ADD, OPTIC_F32);
    optic_dtype dt = gen ? OPTIC_S32 : OPTIC_F32;
    const int64_t sh[] = {2, 9, 8};
    x = param(C, 0, dt, 3, sh);
    i0 = param(C, 1, dt, 0, NULL);
    optic_window_dim w[3] = {{1, 1, 0, 0, 1, 1, false}, {3, 2, 1, 1, 1, 1, false}, {2, 1, 0, 1, 2, 2, gen != 0}};
    OT_EXPECT_OK(optic_graph_reduce_window(M, C, &x, &i0, 1, w, f, NULL, &y));
    finish(y, "reduce-window");
  }
  /* map of a two-op computation */
  fresh();
  {
    optic_comp_id g;
    optic_module_add_computation(M, "g", &g);
    optic_node_id a = param(g, 0, OPTIC_F32, 0, NULL), b = param(g, 1, OPTIC_F32, 0, NULL), p, q;
    float two = 2.0f;
    optic_node_id k;
    optic_graph_constant(M, g, OPTIC_F32, &(optic_shape){.rank = 0}, &two, 4, NULL, &k);
    optic_graph_binary(M, g, OPTIC_OP_MULTIPLY, a, k, NULL, &p);
    optic_graph_binary(M, g, OPTIC_OP_SUBTRACT, p, b, NULL, &q);
    optic_computation_set_root(M, g, q);
    optic_node_id xs[2] = {param(C, 0, OPTIC_F32, 1, d1000), param(C, 1, OPTIC_F32, 1, d1000)};
    OT_EXPECT_OK(optic_graph_map(M, C, xs, 2, g, NULL, &y));
    finish(y, "map");
  }
}

static void linalg(void) {
  optic_node_id a, b, y;
  const int64_t sa[] = {3, 5, 7}, sb[] = {3, 7, 4};
  optic_dot_dims dd = {.lhs_batch_count = 1,
                       .rhs_batch_count = 1,
                       .lhs_contracting_count = 1,
                       .rhs_contracting_count = 1,
                       .lhs_batch = {0},
                       .rhs_batch = {0},
                       .lhs_contracting = {2},
                       .rhs_contracting = {1}};
  fresh();
  a = param(C, 0, OPTIC_F32, 3, sa);
  b = param(C, 1, OPTIC_F32, 3, sb);
  OT_EXPECT_OK(optic_graph_dot(M, C, a, b, &dd, NULL, &y));
  finish(y, "dot batched");
  fresh();
  const int64_t ma[] = {64, 96}, mb[] = {96, 80};
  optic_dot_dims d2 = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  a = param(C, 0, OPTIC_F32, 2, ma);
  b = param(C, 1, OPTIC_F32, 2, mb);
  OT_EXPECT_OK(optic_graph_dot(M, C, a, b, &d2, NULL, &y));
  optic_node_id r;
  optic_node_id zero;
  float z = 0;
  optic_graph_constant(M, C, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
  optic_node_id bz;
  optic_shape os = {.rank = 2, .dims = {64, 80}};
  optic_graph_broadcast(M, C, zero, &os, NULL, 0, NULL, &bz);
  optic_graph_binary(M, C, OPTIC_OP_MAXIMUM, y, bz, NULL, &r);
  finish(r, "dot relu (output fusion)");
  fresh();
  const int64_t si[] = {2, 9, 9, 3}, sk[] = {3, 3, 3, 4};
  a = param(C, 0, OPTIC_F32, 4, si);
  b = param(C, 1, OPTIC_F32, 4, sk);
  optic_window_dim w[2] = {{3, 2, 1, 1, 1, 1, false}, {3, 1, 0, 0, 1, 2, false}};
  OT_EXPECT_OK(optic_graph_convolution(M, C, a, b, "b01f_01io->b01f", w, 1, 1, NULL, &y));
  finish(y, "convolution");
}

static void control(void) {
  /* while: count i from 0 to 10, accumulating x * 2 each step */
  fresh();
  optic_comp_id cond, body;
  optic_module_add_computation(M, "cond", &cond);
  optic_module_add_computation(M, "body", &body);
  optic_shape s0 = {.rank = 0}, s1 = {.rank = 1, .dims = {100}};
  optic_type el[2] = {optic_type_array(OPTIC_S32, &s0), optic_type_array(OPTIC_F32, &s1)};
  optic_type tt = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = el};
  optic_node_id cp, ci, lim, lt;
  OT_EXPECT_OK(optic_graph_parameter(M, cond, 0, &tt, NULL, &cp));
  optic_graph_get_tuple_element(M, cond, cp, 0, NULL, &ci);
  int32_t ten = 10, one = 1;
  optic_graph_constant(M, cond, OPTIC_S32, &s0, &ten, 4, NULL, &lim);
  optic_graph_compare(M, cond, OPTIC_CMP_LT, ci, lim, NULL, &lt);
  optic_computation_set_root(M, cond, lt);
  optic_node_id bp, bi, bx, k1, ni, nx, bt;
  optic_graph_parameter(M, body, 0, &tt, NULL, &bp);
  optic_graph_get_tuple_element(M, body, bp, 0, NULL, &bi);
  optic_graph_get_tuple_element(M, body, bp, 1, NULL, &bx);
  optic_graph_constant(M, body, OPTIC_S32, &s0, &one, 4, NULL, &k1);
  optic_graph_binary(M, body, OPTIC_OP_ADD, bi, k1, NULL, &ni);
  optic_graph_binary(M, body, OPTIC_OP_ADD, bx, bx, NULL, &nx);
  optic_node_id els[2] = {ni, nx};
  optic_graph_tuple(M, body, els, 2, NULL, &bt);
  optic_computation_set_root(M, body, bt);
  optic_node_id i0 = param(C, 0, OPTIC_S32, 0, NULL), x0 = param(C, 1, OPTIC_F32, 1, (int64_t[]){100}), init, wl;
  optic_node_id ie[2] = {i0, x0};
  optic_graph_tuple(M, C, ie, 2, NULL, &init);
  OT_EXPECT_OK(optic_graph_while(M, C, init, cond, body, NULL, &wl));
  finish(wl, "while");

  /* conditional (s32 selector, out-of-range runs the last) and call */
  fresh();
  optic_comp_id br[3];
  optic_opcode bo[3] = {OPTIC_OP_NEGATE, OPTIC_OP_EXPONENTIAL, OPTIC_OP_ABS};
  for (int i = 0; i < 3; i++) {
    char nm[8];
    snprintf(nm, sizeof nm, "b%d", i);
    optic_module_add_computation(M, nm, &br[i]);
    optic_node_id p = param(br[i], 0, OPTIC_F32, 1, d1000), r;
    optic_graph_unary(M, br[i], bo[i], p, NULL, &r);
    optic_computation_set_root(M, br[i], r);
  }
  optic_node_id sel = param(C, 0, OPTIC_S32, 0, NULL), xo = param(C, 1, OPTIC_F32, 1, d1000), y;
  optic_node_id ops[3] = {xo, xo, xo};
  OT_EXPECT_OK(optic_graph_conditional(M, C, sel, ops, br, 3, NULL, &y));
  optic_node_id callr;
  OT_EXPECT_OK(optic_graph_call(M, C, br[2], &y, 1, NULL, &callr));
  optic_node_id both[2] = {callr, y}, root;
  optic_graph_tuple(M, C, both, 2, NULL, &root);
  finish(root, "conditional + call");

  /* a tuple entry parameter, a pred conditional, a parameter returned as is and twice */
  fresh();
  {
    optic_shape s3 = {.rank = 1, .dims = {3}};
    optic_type te[2] = {optic_type_array(OPTIC_F32, &s3), optic_type_array(OPTIC_PRED, &(optic_shape){.rank = 0})};
    optic_type tt2 = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = te};
    optic_node_id tp, v, pr, z = param(C, 1, OPTIC_F32, 1, (int64_t[]){3});
    OT_EXPECT_OK(optic_graph_parameter(M, C, 0, &tt2, NULL, &tp));
    optic_graph_get_tuple_element(M, C, tp, 0, NULL, &v);
    optic_graph_get_tuple_element(M, C, tp, 1, NULL, &pr);
    optic_comp_id bb[2];
    optic_opcode bop[2] = {OPTIC_OP_NEGATE, OPTIC_OP_SQRT};
    for (int i = 0; i < 2; i++) {
      optic_module_add_computation(M, i ? "pf" : "pt", &bb[i]);
      optic_node_id pp = param(bb[i], 0, OPTIC_F32, 1, (int64_t[]){3}), rr;
      optic_graph_unary(M, bb[i], bop[i], pp, NULL, &rr);
      optic_computation_set_root(M, bb[i], rr);
    }
    optic_node_id ops2[2] = {v, z}, cnd, rt;
    OT_EXPECT_OK(optic_graph_conditional(M, C, pr, ops2, bb, 2, NULL, &cnd));
    optic_node_id els3[4] = {cnd, z, z, tp};
    optic_graph_tuple(M, C, els3, 4, NULL, &rt);
    finish(rt, "tuple parameter, pred conditional, parameter outputs");
    for (uint64_t seed = 43; seed < 47; seed++) ex_check_module(M, seed, 1e-6, 1e-6, "pred conditional, more seeds");
  }

  /* all-reduce with one replica is the operand */
  fresh();
  optic_comp_id f = scalar_fn("f", OPTIC_OP_ADD, OPTIC_F32);
  optic_node_id a = param(C, 0, OPTIC_F32, 2, d37), ar;
  OT_EXPECT_OK(optic_graph_all_reduce(M, C, &a, 1, f, NULL, NULL, 0, NULL, &ar));
  finish(ar, "all-reduce");
}

static void fused_loop(void) {
  /* y = relu(a * x + b) * s - c with scalars a, s and arrays x, b, c: a loop fusion at FULL;
   * 5000 elements (blocks and a tail), and 4Mi + 3 (a 16 MiB result, 64 MiB footprint: streaming
   * stores where the last-level cache is at most that, odd tail; fused_stream_policy forces both paths) */
  for (int big = 0; big < 2; big++) {
    fresh();
    const int64_t n[] = {big ? (4 << 20) + 3 : 5000};
    optic_node_id x = param(C, 0, OPTIC_F32, 1, n), b = param(C, 1, OPTIC_F32, 1, n), c = param(C, 2, OPTIC_F32, 1, n);
    optic_node_id a = param(C, 3, OPTIC_F32, 0, NULL), s = param(C, 4, OPTIC_F32, 0, NULL);
    optic_shape sh = {.rank = 1, .dims = {n[0]}};
    optic_node_id ab, sb, ax, axb, zero, zb, r, rs, y;
    float z = 0;
    optic_graph_broadcast(M, C, a, &sh, NULL, 0, NULL, &ab);
    optic_graph_broadcast(M, C, s, &sh, NULL, 0, NULL, &sb);
    optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, ab, x, NULL, &ax);
    optic_graph_binary(M, C, OPTIC_OP_ADD, ax, b, NULL, &axb);
    optic_graph_constant(M, C, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
    optic_graph_broadcast(M, C, zero, &sh, NULL, 0, NULL, &zb);
    optic_graph_binary(M, C, OPTIC_OP_MAXIMUM, axb, zb, NULL, &r);
    optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, r, sb, NULL, &rs);
    optic_graph_binary(M, C, OPTIC_OP_SUBTRACT, rs, c, NULL, &y);
    finish(y, big ? "fused relu chain, 16 MiB" : "fused relu chain");
  }
  /* a transposed and row-broadcast leaf inside a loop fusion */
  fresh();
  const int64_t s2[] = {37, 45}, s3[] = {45, 37}, s4[] = {45};
  optic_node_id p = param(C, 0, OPTIC_F32, 2, s2), q = param(C, 1, OPTIC_F32, 2, s3), v = param(C, 2, OPTIC_F32, 1, s4);
  optic_node_id qt, vb, e1, e2;
  const int64_t perm[] = {1, 0}, bd[] = {1};
  optic_shape o2 = {.rank = 2, .dims = {37, 45}};
  optic_graph_transpose(M, C, q, perm, NULL, &qt);
  optic_graph_broadcast(M, C, v, &o2, bd, 1, NULL, &vb);
  optic_graph_binary(M, C, OPTIC_OP_ADD, p, qt, NULL, &e1);
  optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, e1, vb, NULL, &e2);
  optic_node_id e3;
  optic_graph_unary(M, C, OPTIC_OP_TANH, e2, NULL, &e3);
  finish(e3, "fused gathers");
}

/* How binding runs each fusion of M compiled at FULL: counts of loop
 * fusions as block programs, output fusions as dot + epilogue, and fusions
 * run as sequences. */
static int input_native;

static void fusion_paths(int *loop, int *output, int *seq) {
  optic_program_t *p = NULL;
  *loop = *output = *seq = 0;
  input_native = 0;
  OT_EXPECT_OK(optic_compile(M, NULL, &p));
  exec_bound *b = NULL;
  OT_EXPECT_OK(exec_bind(optic_program_module(p), p, 2, 0, &b));
  for (int32_t c = 0; b && c < b->n_comps; c++) {
    for (int32_t i = 0; b->seqs[c] && i < b->seqs[c]->n_steps; i++) {
      const exec_step *st = &b->seqs[c]->steps[i];
      if (st->op != OPTIC_OP_FUSION) continue;
      if (st->input_fusion) input_native++;
      else if (st->prog && (st->dot || st->conv)) (*output)++;
      else if (st->prog) (*loop)++;
      else (*seq)++;
    }
  }
  exec_bound_destroy(b);
  optic_program_destroy(p);
}

static void fused_paths_taken(void) {
  /* dot + bias + relu: an output fusion run as dot then the epilogue in place */
  fresh();
  const int64_t ma[] = {64, 96}, mb[] = {96, 80}, bv[] = {80};
  optic_dot_dims d2 = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_node_id a = param(C, 0, OPTIC_F32, 2, ma), b = param(C, 1, OPTIC_F32, 2, mb),
                bias = param(C, 2, OPTIC_F32, 1, bv);
  optic_node_id y, bb, yb, zero, zb, r;
  optic_graph_dot(M, C, a, b, &d2, NULL, &y);
  optic_shape os = {.rank = 2, .dims = {64, 80}};
  const int64_t bd[] = {1};
  optic_graph_broadcast(M, C, bias, &os, bd, 1, NULL, &bb);
  optic_graph_binary(M, C, OPTIC_OP_ADD, y, bb, NULL, &yb);
  float z = 0;
  optic_graph_constant(M, C, OPTIC_F32, &(optic_shape){.rank = 0}, &z, 4, NULL, &zero);
  optic_graph_broadcast(M, C, zero, &os, NULL, 0, NULL, &zb);
  optic_graph_binary(M, C, OPTIC_OP_MAXIMUM, yb, zb, NULL, &r);
  OT_EXPECT_OK(optic_computation_set_root(M, C, r));
  int loop, output, seq;
  fusion_paths(&loop, &output, &seq);
  OT_CHECK(output == 1 && seq == 0, "output fusions %d, sequences %d", output, seq);
  finish(r, "dot + bias + relu");
  /* an elementwise chain with a broadcast leaf: one block program */
  fresh();
  const int64_t n2[] = {300, 20};
  optic_node_id x = param(C, 0, OPTIC_F32, 2, n2), v = param(C, 1, OPTIC_F32, 1, (int64_t[]){20}), vb, e1, e2;
  optic_shape s2 = {.rank = 2, .dims = {300, 20}};
  optic_graph_broadcast(M, C, v, &s2, bd, 1, NULL, &vb);
  optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, x, vb, NULL, &e1);
  optic_graph_unary(M, C, OPTIC_OP_EXPONENTIAL, e1, NULL, &e2);
  OT_EXPECT_OK(optic_computation_set_root(M, C, e2));
  fusion_paths(&loop, &output, &seq);
  OT_CHECK(loop == 1 && seq == 0, "loop fusions %d, sequences %d", loop, seq);
  finish(e2, "loop fusion path");
  /* reduce(exp(x * v)) over trailing dims (rows, and everything): an input
   * fusion computed block by block and folded; over a leading dim: a sequence */
  const int64_t rd_sets[3][2] = {{1, 0}, {0, 1}, {0, 0}};
  const int32_t rd_n[3] = {1, 2, 1};
  static const optic_opcode red_ops[2] = {OPTIC_OP_ADD, OPTIC_OP_MAXIMUM};
  for (int k = 0; k < 3; k++) {
    for (int o = 0; o < 2; o++) {
      fresh();
      optic_comp_id f = scalar_fn("f", red_ops[o], OPTIC_F32);
      x = param(C, 0, OPTIC_F32, 2, n2), v = param(C, 1, OPTIC_F32, 1, (int64_t[]){20});
      optic_node_id i0 = param(C, 2, OPTIC_F32, 0, NULL), rr;
      optic_graph_broadcast(M, C, v, &s2, bd, 1, NULL, &vb);
      optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, x, vb, NULL, &e1);
      optic_graph_unary(M, C, OPTIC_OP_EXPONENTIAL, e1, NULL, &e2);
      OT_EXPECT_OK(optic_graph_reduce(M, C, &e2, &i0, 1, rd_sets[k], rd_n[k], f, NULL, &rr));
      OT_EXPECT_OK(optic_computation_set_root(M, C, rr));
      fusion_paths(&loop, &output, &seq);
      if (k == 2)
        OT_CHECK(input_native == 0 && seq == 1, "leading-dim reduce: native %d, sequences %d", input_native, seq);
      else OT_CHECK(input_native == 1 && seq == 0, "trailing reduce %d: native %d, sequences %d", k, input_native, seq);
      finish(rr, "input fusion");
    }
  }
}

/* y = x * b + c over n f32: one loop fusion at FULL, bound on 2 threads;
 * its step (or NULL) in *out, the binding in *bound (caller destroys). */
static const exec_step *fused_step(int64_t n, optic_program_t **prog, exec_bound **bound) {
  fresh();
  const int64_t d[] = {n};
  optic_node_id x = param(C, 0, OPTIC_F32, 1, d), b = param(C, 1, OPTIC_F32, 1, d), c = param(C, 2, OPTIC_F32, 1, d);
  optic_node_id xb, y;
  optic_graph_binary(M, C, OPTIC_OP_MULTIPLY, x, b, NULL, &xb);
  optic_graph_binary(M, C, OPTIC_OP_ADD, xb, c, NULL, &y);
  OT_EXPECT_OK(optic_computation_set_root(M, C, y));
  optic_module_set_entry(M, C);
  *prog = NULL, *bound = NULL;
  OT_EXPECT_OK(optic_compile(M, NULL, prog));
  OT_EXPECT_OK(exec_bind(optic_program_module(*prog), *prog, 2, 0, bound));
  for (int32_t k = 0; *bound && k < (*bound)->n_comps; k++) {
    for (int32_t i = 0; (*bound)->seqs[k] && i < (*bound)->seqs[k]->n_steps; i++) {
      const exec_step *st = &(*bound)->seqs[k]->steps[i];
      if (st->op == OPTIC_OP_FUSION && st->prog && !st->dot && !st->conv && !st->input_fusion) return st;
    }
  }
  return NULL;
}

/* Loop fusions stream their result by the kernels' policy (kernels/stream.h),
 * not a threshold of their own: the footprint (3 inputs + 1 output of n f32)
 * against optic_stream_threshold, flipping exactly at it; the results match
 * the evaluator with streaming forced on and off, n = 1, 17, 5000 (unaligned
 * tails, one thread's share shorter than a block). */
static void fused_stream_policy(void) {
  size_t saved = optic_stream_threshold_set(SIZE_MAX);
  const int64_t sizes[] = {1, 17, 5000};
  for (int k = 0; k < 3; k++) {
    optic_program_t *p;
    exec_bound *b;
    const exec_step *st = fused_step(sizes[k], &p, &b);
    OT_CHECK(st != NULL, "n=%lld: no loop fusion bound", (long long)sizes[k]);
    if (st != NULL) {
      size_t want = 4 * (size_t)sizes[k] * sizeof(float), got = exec_fused_footprint(st);
      OT_CHECK(got == want, "n=%lld: footprint %zu, want %zu", (long long)sizes[k], got, want);
      optic_stream_threshold_set(got);
      OT_CHECK(exec_fused_streams(st), "n=%lld: threshold = footprint %zu does not stream", (long long)sizes[k], got);
      optic_stream_threshold_set(got + 1);
      OT_CHECK(!exec_fused_streams(st), "n=%lld: threshold %zu > footprint streams", (long long)sizes[k], got + 1);
      optic_stream_threshold_set(0);
      OT_CHECK(exec_fused_streams(st), "n=%lld: threshold 0 does not stream", (long long)sizes[k]);
    }
    exec_bound_destroy(b);
    optic_program_destroy(p);
    optic_stream_threshold_set(0);
    ex_check_module(M, 42, 1e-6, 1e-6, "fused x*b+c, streaming stores");
    optic_stream_threshold_set(SIZE_MAX);
    ex_check_module(M, 42, 1e-6, 1e-6, "fused x*b+c, plain stores");
  }
  optic_stream_threshold_set(saved);
}

static void cleanup(void) {
  optic_module_destroy(M);
  M = NULL;
}

static const ot_case cases[] = {
    {"elementwise", elementwise},
    {"compare_select_clamp_convert", compare_select_clamp_convert},
    {"layout", layout},
    {"reductions", reductions},
    {"linalg", linalg},
    {"control", control},
    {"fused_loop", fused_loop},
    {"fused_paths_taken", fused_paths_taken},
    {"fused_stream_policy", fused_stream_policy},
    {"cleanup", cleanup},
};
OT_MAIN(cases)
