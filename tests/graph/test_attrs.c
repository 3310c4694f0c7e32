/* The typed attribute view (optic_node_attrs): for every attribute kind, an
 * instruction built through the public builder and the same instruction
 * parsed from HLO text both read back exactly the builder's inputs; every
 * opcode without attributes reads as OPTIC_ATTRS_NONE; bad and removed ids
 * are INVALID_ARGUMENT with a message. The expected values are the literal
 * arrays below, which feed the builders and are written out again in the
 * HLO text, never read back from the module. */
#include <math.h>

#include <optic/optic.h>

#include "tests/harness.h"

/* ---------------------------------------------------------------- inputs */

static const int64_t BC_DIMS[] = {1, 2};
static const int64_t TR_PERM[] = {1, 0};
static const int64_t RV_DIMS[] = {1};
static const int64_t RD_DIMS[] = {0};
static const int64_t DS_SIZES[] = {2, 2};
static const int64_t SL_START[] = {1, 0}, SL_LIMIT[] = {2, 3}, SL_STRIDE[] = {1, 2};
static const optic_pad_dim PD[] = {{1, 2, 0}, {0, 1, 2}};
static const optic_window_dim RW[] = {{2, 1, 0, 0, 2, 1, false}, {2, 2, 0, 1, 1, 2, false}};
static const optic_window_dim CONV_W[] = {{3, 2, 1, 1, 1, 1, false}, {3, 1, 0, 0, 1, 1, true}};
static const int32_t AR_IDS[] = {0, 2, 1, 3, 4}, AR_SIZES[] = {2, 3};
static const int64_t CP_PAIRS[] = {0, 1, 1, 0, 2, 2};
static const float EPS[] = {0.25f, 0.5f, 0.125f};

static const char *const HLO =
    "HloModule attrs\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
    "neg {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n"
    "fused {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] exponential(a)\n}\n"
    "ENTRY e {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  v = f32[4] parameter(1)\n"
    "  z = f32[] parameter(2)\n"
    "  i = s32[] parameter(3)\n"
    "  idx = s32[2,1] parameter(4)\n"
    "  img = f32[1,2,5,5] parameter(5)\n"
    "  ker = f32[4,1,3,3] parameter(6)\n"
    "  st = u64[2] parameter(7)\n"
    "  pr = pred[] parameter(8)\n"
    "  s3 = f32[3] parameter(9)\n"
    "  b3 = f32[2,3,4] parameter(10)\n"
    "  k = f32[3] constant({1, 2, 3})\n"
    "  io = s32[2,3] iota(), iota_dimension=1\n"
    "  cmp = pred[2,3] compare(x, x), direction=GE\n"
    "  rp = f32[2,3] reduce-precision(x), exponent_bits=5, mantissa_bits=10\n"
    "  bc = f32[4,2,3] broadcast(x), dimensions={1,2}\n"
    "  tr = f32[3,2] transpose(x), dimensions={1,0}\n"
    "  rv = f32[2,3] reverse(x), dimensions={1}\n"
    "  rd = f32[3] reduce(x, z), dimensions={0}, to_apply=add\n"
    "  ds = f32[2,2] dynamic-slice(x, i, i), dynamic_slice_sizes={2,2}\n"
    "  sl = f32[1,2] slice(x), slice={[1:2], [0:3:2]}\n"
    "  cc = f32[2,6] concatenate(x, x), dimensions={1}\n"
    "  pd = f32[5,8] pad(x, z), padding=1_2x0_1_2\n"
    "  tu = (f32[2,3], f32[4]) tuple(x, v)\n"
    "  gte = f32[4] get-tuple-element(tu), index=1\n"
    "  rw = f32[2,1] reduce-window(x, z), window={size=2x2 stride=1x2 pad=0_0x0_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
    "to_apply=add\n"
    "  dt = f32[2,4,4] dot(b3, b3), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
    "rhs_contracting_dims={1}\n"
    "  cv = f32[1,3,3,4] convolution(img, ker), window={size=3x3 stride=2x1 pad=1_1x0_0 rhs_reversal=0x1}, "
    "dim_labels=bf01_oi01->b01f, feature_group_count=2\n"
    "  ga = f32[2,3] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,3}\n"
    "  sc = f32[2,3] scatter(x, idx, x), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "  so = f32[2,3] sort(x), dimensions={1}, is_stable=true, to_apply=lt\n"
    "  ar = f32[4] all-reduce(v), replica_groups={{0,2},{1,3,4}}, to_apply=add\n"
    "  ag = f32[4,3] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n"
    "  rs = f32[2,1] reduce-scatter(x), replica_groups={{0,1,2}}, dimensions={1}, to_apply=add\n"
    "  cp = f32[4] collective-permute(v), source_target_pairs={{0,1},{1,0},{2,2}}\n"
    "  cu = f32[4] custom-call(v), custom_call_target=\"my_target\"\n"
    "  tk = (f32[2,2], s32[2,2]) topk(x), k=2, largest=false\n"
    "  bt = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s3, s3), epsilon=0.25, feature_index=1\n"
    "  bi = f32[2,3] batch-norm-inference(x, s3, s3, s3, s3), epsilon=0.5, feature_index=1\n"
    "  bg = (f32[2,3], f32[3], f32[3]) batch-norm-grad(x, s3, s3, s3, x), epsilon=0.125, feature_index=1\n"
    "  fu = f32[4] fusion(v), kind=kOutput, calls=fused\n"
    "  rn = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_three_fry\n"
    "  co = f32[4] conditional(pr, v, v), true_computation=neg, false_computation=neg\n"
    "  cs = f32[4] conditional(i, v, v), branch_computations={neg, neg}\n"
    "  ROOT r = f32[2,3] add(x, x)\n"
    "}\n";

/* ---------------------------------------------------------------- builder
 * Names are module-unique, so the called computations' instructions get
 * generated ones. */

static optic_comp_id scalar_comp(optic_module_t *m, const char *name, bool compare) {
  optic_comp_id c;
  optic_node_id a, b, r;
  optic_type t = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 0});
  OT_EXPECT_OK(optic_module_add_computation(m, name, &c));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t, NULL, &a));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &t, NULL, &b));
  if (compare) OT_EXPECT_OK(optic_graph_compare(m, c, OPTIC_CMP_LT, a, b, NULL, &r));
  else OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, a, b, NULL, &r));
  OT_EXPECT_OK(optic_computation_set_root(m, c, r));
  return c;
}

static optic_comp_id vector_comp(optic_module_t *m, const char *name, optic_opcode op) {
  optic_comp_id c;
  optic_node_id a, r;
  optic_type t = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 1, .dims = {4}});
  OT_EXPECT_OK(optic_module_add_computation(m, name, &c));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t, NULL, &a));
  OT_EXPECT_OK(optic_graph_unary(m, c, op, a, NULL, &r));
  OT_EXPECT_OK(optic_computation_set_root(m, c, r));
  return c;
}

typedef struct entry_params {
  optic_node_id x, v, z, i, idx, img, ker, st, pr, s3, b3;
} entry_params;

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t n, optic_dtype dt, int32_t rank,
                           const int64_t *dims, const char *name) {
  optic_shape s = {.rank = rank};
  for (int32_t d = 0; d < rank; d++) s.dims[d] = dims[d];
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_parameter(m, c, n, &t, name, &id));
  return id;
}

static entry_params entry_parameters(optic_module_t *m, optic_comp_id e) {
  entry_params p;
  p.x = param(m, e, 0, OPTIC_F32, 2, (int64_t[]){2, 3}, "x");
  p.v = param(m, e, 1, OPTIC_F32, 1, (int64_t[]){4}, "v");
  p.z = param(m, e, 2, OPTIC_F32, 0, NULL, "z");
  p.i = param(m, e, 3, OPTIC_S32, 0, NULL, "i");
  p.idx = param(m, e, 4, OPTIC_S32, 2, (int64_t[]){2, 1}, "idx");
  p.img = param(m, e, 5, OPTIC_F32, 4, (int64_t[]){1, 2, 5, 5}, "img");
  p.ker = param(m, e, 6, OPTIC_F32, 4, (int64_t[]){4, 1, 3, 3}, "ker");
  p.st = param(m, e, 7, OPTIC_U64, 1, (int64_t[]){2}, "st");
  p.pr = param(m, e, 8, OPTIC_PRED, 0, NULL, "pr");
  p.s3 = param(m, e, 9, OPTIC_F32, 1, (int64_t[]){3}, "s3");
  p.b3 = param(m, e, 10, OPTIC_F32, 3, (int64_t[]){2, 3, 4}, "b3");
  return p;
}

/* Layout, elementwise and structural instructions. */
static void build_layout(optic_module_t *m, optic_comp_id e, const entry_params *p, optic_comp_id add) {
  optic_node_id id, tu;
  const float kv[3] = {1, 2, 3};
  OT_EXPECT_OK(optic_graph_constant(m, e, OPTIC_F32, &(optic_shape){.rank = 1, .dims = {3}}, kv, sizeof kv, "k", &id));
  OT_EXPECT_OK(optic_graph_iota(m, e, OPTIC_S32, &(optic_shape){.rank = 2, .dims = {2, 3}}, 1, "io", &id));
  OT_EXPECT_OK(optic_graph_compare(m, e, OPTIC_CMP_GE, p->x, p->x, "cmp", &id));
  OT_EXPECT_OK(optic_graph_reduce_precision(m, e, p->x, 5, 10, "rp", &id));
  OT_EXPECT_OK(optic_graph_broadcast(m, e, p->x, &(optic_shape){.rank = 3, .dims = {4, 2, 3}}, BC_DIMS, 2, "bc", &id));
  OT_EXPECT_OK(optic_graph_transpose(m, e, p->x, TR_PERM, "tr", &id));
  OT_EXPECT_OK(optic_graph_reverse(m, e, p->x, RV_DIMS, 1, "rv", &id));
  OT_EXPECT_OK(optic_graph_reduce(m, e, &p->x, &p->z, 1, RD_DIMS, 1, add, "rd", &id));
  optic_node_id starts[2] = {p->i, p->i};
  OT_EXPECT_OK(optic_graph_dynamic_slice(m, e, p->x, starts, 2, DS_SIZES, "ds", &id));
  OT_EXPECT_OK(optic_graph_slice(m, e, p->x, SL_START, SL_LIMIT, SL_STRIDE, "sl", &id));
  optic_node_id xx[2] = {p->x, p->x};
  OT_EXPECT_OK(optic_graph_concatenate(m, e, xx, 2, 1, "cc", &id));
  OT_EXPECT_OK(optic_graph_pad(m, e, p->x, p->z, PD, "pd", &id));
  optic_node_id xv[2] = {p->x, p->v};
  OT_EXPECT_OK(optic_graph_tuple(m, e, xv, 2, "tu", &tu));
  OT_EXPECT_OK(optic_graph_get_tuple_element(m, e, tu, 1, "gte", &id));
  OT_EXPECT_OK(optic_graph_reduce_window(m, e, &p->x, &p->z, 1, RW, add, "rw", &id));
}

/* Contractions, indexing, sorting and batch norm. */
static void build_compute(optic_module_t *m, optic_comp_id e, const entry_params *p, optic_comp_id add,
                          optic_comp_id lt) {
  optic_node_id id;
  optic_dot_dims dd = {.lhs_batch_count = 1,
                       .rhs_batch_count = 1,
                       .lhs_contracting_count = 1,
                       .rhs_contracting_count = 1,
                       .lhs_batch = {0},
                       .rhs_batch = {0},
                       .lhs_contracting = {1},
                       .rhs_contracting = {1}};
  OT_EXPECT_OK(optic_graph_dot(m, e, p->b3, p->b3, &dd, "dt", &id));
  OT_EXPECT_OK(optic_graph_convolution(m, e, p->img, p->ker, "bf01_oi01->b01f", CONV_W, 2, 1, "cv", &id));
  optic_gather_dims g = {.n_offset_dims = 1,
                         .n_collapsed = 1,
                         .n_start_index_map = 1,
                         .offset_dims = {1},
                         .collapsed_slice_dims = {0},
                         .start_index_map = {0},
                         .index_vector_dim = 1,
                         .slice_sizes = {1, 3}};
  OT_EXPECT_OK(optic_graph_gather(m, e, p->x, p->idx, &g, "ga", &id));
  optic_scatter_dims s = {.n_update_window_dims = 1,
                          .n_inserted = 1,
                          .n_scatter_dims_to_operand_dims = 1,
                          .update_window_dims = {1},
                          .inserted_window_dims = {0},
                          .scatter_dims_to_operand_dims = {0},
                          .index_vector_dim = 1};
  OT_EXPECT_OK(optic_graph_scatter(m, e, p->x, p->idx, p->x, &s, add, "sc", &id));
  OT_EXPECT_OK(optic_graph_sort(m, e, &p->x, 1, 1, true, lt, "so", &id));
  OT_EXPECT_OK(optic_graph_topk(m, e, p->x, 2, false, "tk", &id));
  optic_node_id bt[3] = {p->x, p->s3, p->s3}, bi[5] = {p->x, p->s3, p->s3, p->s3, p->s3};
  optic_node_id bg[5] = {p->x, p->s3, p->s3, p->s3, p->x};
  OT_EXPECT_OK(optic_graph_batch_norm(m, e, OPTIC_OP_BATCH_NORM_TRAINING, bt, 3, EPS[0], 1, "bt", &id));
  OT_EXPECT_OK(optic_graph_batch_norm(m, e, OPTIC_OP_BATCH_NORM_INFERENCE, bi, 5, EPS[1], 1, "bi", &id));
  OT_EXPECT_OK(optic_graph_batch_norm(m, e, OPTIC_OP_BATCH_NORM_GRAD, bg, 5, EPS[2], 1, "bg", &id));
}

/* Collectives, calls and the rest. */
static void build_other(optic_module_t *m, optic_comp_id e, const entry_params *p, optic_comp_id add, optic_comp_id neg,
                        optic_comp_id fused) {
  optic_node_id id;
  OT_EXPECT_OK(optic_graph_all_reduce(m, e, &p->v, 1, add, AR_IDS, AR_SIZES, 2, "ar", &id));
  OT_EXPECT_OK(optic_graph_all_gather(m, e, p->x, 0, 2, "ag", &id));
  OT_EXPECT_OK(optic_graph_reduce_scatter(m, e, p->x, 1, 3, add, "rs", &id));
  OT_EXPECT_OK(optic_graph_collective_permute(m, e, p->v, CP_PAIRS, 3, "cp", &id));
  optic_type vt = *optic_node_type(m, p->v);
  OT_EXPECT_OK(optic_graph_custom_call(m, e, &p->v, 1, &vt, "my_target", "cu", &id));
  OT_EXPECT_OK(optic_graph_fusion(m, e, OPTIC_FUSION_OUTPUT, &p->v, 1, fused, "fu", &id));
  optic_type bits = optic_type_array(OPTIC_U32, &(optic_shape){.rank = 1, .dims = {4}});
  OT_EXPECT_OK(optic_graph_rng_bit_generator(m, e, p->st, OPTIC_RNG_THREE_FRY, &bits, "rn", &id));
  optic_node_id vv[2] = {p->v, p->v};
  optic_comp_id nn[2] = {neg, neg};
  OT_EXPECT_OK(optic_graph_conditional(m, e, p->pr, vv, nn, 2, "co", &id));
  OT_EXPECT_OK(optic_graph_conditional(m, e, p->i, vv, nn, 2, "cs", &id));
  OT_EXPECT_OK(optic_graph_binary(m, e, OPTIC_OP_ADD, p->x, p->x, "r", &id));
  OT_EXPECT_OK(optic_computation_set_root(m, e, id));
}

static optic_module_t *built(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_create("attrs", &m));
  if (m == NULL) return NULL;
  optic_comp_id add = scalar_comp(m, "add", false), lt = scalar_comp(m, "lt", true);
  optic_comp_id neg = vector_comp(m, "neg", OPTIC_OP_NEGATE), fused = vector_comp(m, "fused", OPTIC_OP_EXPONENTIAL);
  optic_comp_id e;
  OT_EXPECT_OK(optic_module_add_computation(m, "e", &e));
  OT_EXPECT_OK(optic_module_set_entry(m, e));
  entry_params p = entry_parameters(m, e);
  build_layout(m, e, &p, add);
  build_compute(m, e, &p, add, lt);
  build_other(m, e, &p, add, neg, fused);
  return m;
}

static optic_module_t *parsed(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(HLO, strlen(HLO), &m));
  return m;
}

/* ---------------------------------------------------------------- checks */

static optic_node_id find(const optic_module_t *m, const char *name) {
  for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
    const char *n = optic_node_name(m, id);
    if (n && strcmp(n, name) == 0) return id;
  }
  return OPTIC_NO_NODE;
}

/* The view of the node named name, which must be of kind k. */
static bool view(const optic_module_t *m, const char *name, optic_attrs_kind k, optic_node_attrs_t *a) {
  optic_node_id id = find(m, name);
  OT_CHECK(id != OPTIC_NO_NODE, "no node %s in %s", name, optic_module_name(m));
  if (id == OPTIC_NO_NODE) return false;
  optic_status st = optic_node_attrs(m, id, a);
  OT_CHECK(st == OPTIC_OK, "%s: %s", name, optic_last_error());
  OT_CHECK(a->kind == k, "%s: kind %d, expected %d", name, (int)a->kind, (int)k);
  OT_CHECK(a->op == optic_node_opcode(m, id), "%s: op %d", name, (int)a->op);
  OT_CHECK(optic_opcode_attrs_kind(a->op) == k, "%s: optic_opcode_attrs_kind disagrees", name);
  return st == OPTIC_OK && a->kind == k;
}

static void check_list(const char *what, const int64_t *got, int32_t n_got, const int64_t *want, int32_t n) {
  OT_CHECK(n_got == n, "%s: %d entries, expected %d", what, (int)n_got, (int)n);
  for (int32_t i = 0; i < n && i < n_got; i++) {
    OT_CHECK(got[i] == want[i], "%s[%d] = %lld, expected %lld", what, (int)i, (long long)got[i], (long long)want[i]);
  }
}

static void check_window(const char *what, int32_t d, const optic_window_dim *got, const optic_window_dim *want) {
  OT_CHECK(got->size == want->size && got->stride == want->stride && got->pad_low == want->pad_low &&
               got->pad_high == want->pad_high && got->base_dilation == want->base_dilation &&
               got->window_dilation == want->window_dilation && got->reversal == want->reversal,
           "%s window dim %d: {%lld %lld %lld %lld %lld %lld %d}", what, (int)d, (long long)got->size,
           (long long)got->stride, (long long)got->pad_low, (long long)got->pad_high, (long long)got->base_dilation,
           (long long)got->window_dilation, (int)got->reversal);
}

static void check_small(const optic_module_t *m) {
  optic_node_attrs_t a;
  static const char *const params[] = {"x", "v", "z", "i", "idx", "img", "ker", "st", "pr", "s3", "b3"};
  for (int64_t n = 0; n < 11; n++) {
    if (view(m, params[n], OPTIC_ATTRS_PARAMETER, &a)) OT_CHECK(a.parameter.number == n, "%s", params[n]);
  }
  if (view(m, "k", OPTIC_ATTRS_CONSTANT, &a)) {
    const float want[3] = {1, 2, 3};
    OT_CHECK(a.constant.bytes == sizeof want && a.constant.data && memcmp(a.constant.data, want, sizeof want) == 0);
  }
  if (view(m, "io", OPTIC_ATTRS_IOTA, &a)) OT_CHECK(a.iota.dimension == 1);
  if (view(m, "cmp", OPTIC_ATTRS_COMPARE, &a)) OT_CHECK(a.compare.direction == OPTIC_CMP_GE);
  if (view(m, "rp", OPTIC_ATTRS_REDUCE_PRECISION, &a)) {
    OT_CHECK(a.reduce_precision.exponent_bits == 5 && a.reduce_precision.mantissa_bits == 10);
  }
  if (view(m, "cc", OPTIC_ATTRS_CONCATENATE, &a)) OT_CHECK(a.concatenate.dimension == 1);
  if (view(m, "gte", OPTIC_ATTRS_GET_TUPLE_ELEMENT, &a)) OT_CHECK(a.get_tuple_element.index == 1);
  if (view(m, "so", OPTIC_ATTRS_SORT, &a)) OT_CHECK(a.sort.dimension == 1 && a.sort.is_stable);
  if (view(m, "tk", OPTIC_ATTRS_TOPK, &a)) OT_CHECK(a.topk.k == 2 && !a.topk.largest);
  static const char *const bn[] = {"bt", "bi", "bg"};
  for (int b = 0; b < 3; b++) {
    if (view(m, bn[b], OPTIC_ATTRS_BATCH_NORM, &a)) {
      OT_CHECK(a.batch_norm.feature_index == 1 && a.batch_norm.epsilon == EPS[b], "%s: %lld %g", bn[b],
               (long long)a.batch_norm.feature_index, (double)a.batch_norm.epsilon);
    }
  }
  if (view(m, "fu", OPTIC_ATTRS_FUSION, &a)) OT_CHECK(a.fusion.kind == OPTIC_FUSION_OUTPUT);
  if (view(m, "rn", OPTIC_ATTRS_RNG_BIT_GENERATOR, &a)) {
    OT_CHECK(a.rng_bit_generator.algorithm == OPTIC_RNG_THREE_FRY);
  }
  if (view(m, "co", OPTIC_ATTRS_CONDITIONAL, &a)) OT_CHECK(a.conditional.pred_selector);
  if (view(m, "cs", OPTIC_ATTRS_CONDITIONAL, &a)) OT_CHECK(!a.conditional.pred_selector);
  if (view(m, "cu", OPTIC_ATTRS_CUSTOM_CALL, &a)) {
    OT_CHECK(a.custom_call.target && strcmp(a.custom_call.target, "my_target") == 0);
  }
  for (const char *const *n = (const char *const[]){"tu", "r", NULL}; *n; n++) view(m, *n, OPTIC_ATTRS_NONE, &a);
}

static void check_layout(const optic_module_t *m) {
  optic_node_attrs_t a;
  if (view(m, "bc", OPTIC_ATTRS_BROADCAST, &a)) check_list("bc", a.broadcast.dims, a.broadcast.count, BC_DIMS, 2);
  if (view(m, "tr", OPTIC_ATTRS_TRANSPOSE, &a)) check_list("tr", a.transpose.dims, a.transpose.count, TR_PERM, 2);
  if (view(m, "rv", OPTIC_ATTRS_REVERSE, &a)) check_list("rv", a.reverse.dims, a.reverse.count, RV_DIMS, 1);
  if (view(m, "rd", OPTIC_ATTRS_REDUCE, &a)) check_list("rd", a.reduce.dims, a.reduce.count, RD_DIMS, 1);
  if (view(m, "ds", OPTIC_ATTRS_DYNAMIC_SLICE, &a)) {
    check_list("ds", a.dynamic_slice.dims, a.dynamic_slice.count, DS_SIZES, 2);
  }
  if (view(m, "sl", OPTIC_ATTRS_SLICE, &a)) {
    check_list("sl start", a.slice.start, a.slice.rank, SL_START, 2);
    check_list("sl limit", a.slice.limit, a.slice.rank, SL_LIMIT, 2);
    check_list("sl stride", a.slice.stride, a.slice.rank, SL_STRIDE, 2);
  }
  if (view(m, "pd", OPTIC_ATTRS_PAD, &a)) {
    OT_CHECK(a.pad.rank == 2);
    for (int32_t d = 0; d < 2; d++) {
      OT_CHECK(a.pad.dims[d].low == PD[d].low && a.pad.dims[d].high == PD[d].high &&
                   a.pad.dims[d].interior == PD[d].interior,
               "pd dim %d", (int)d);
    }
  }
  if (view(m, "rw", OPTIC_ATTRS_REDUCE_WINDOW, &a)) {
    OT_CHECK(a.reduce_window.rank == 2);
    for (int32_t d = 0; d < 2; d++) check_window("rw", d, &a.reduce_window.window[d], &RW[d]);
  }
}

static void check_compute(const optic_module_t *m) {
  optic_node_attrs_t a;
  if (view(m, "dt", OPTIC_ATTRS_DOT, &a)) {
    const optic_dot_dims *d = &a.dot;
    OT_CHECK(d->lhs_batch_count == 1 && d->rhs_batch_count == 1 && d->lhs_contracting_count == 1 &&
             d->rhs_contracting_count == 1 && d->lhs_batch[0] == 0 && d->rhs_batch[0] == 0 &&
             d->lhs_contracting[0] == 1 && d->rhs_contracting[0] == 1);
  }
  if (view(m, "cv", OPTIC_ATTRS_CONVOLUTION, &a)) {
    const optic_attrs_convolution *c = &a.convolution;
    OT_CHECK(c->spatial_count == 2 && c->feature_group_count == 2 && c->batch_group_count == 1);
    OT_CHECK(c->input_batch == 0 && c->input_feature == 1 && c->input_spatial[0] == 2 && c->input_spatial[1] == 3);
    OT_CHECK(c->kernel_output_feature == 0 && c->kernel_input_feature == 1 && c->kernel_spatial[0] == 2 &&
             c->kernel_spatial[1] == 3);
    OT_CHECK(c->output_batch == 0 && c->output_feature == 3 && c->output_spatial[0] == 1 && c->output_spatial[1] == 2);
    for (int32_t s = 0; s < 2; s++) check_window("cv", s, &c->window[s], &CONV_W[s]);
  }
  if (view(m, "ga", OPTIC_ATTRS_GATHER, &a)) {
    const optic_gather_dims *g = &a.gather;
    OT_CHECK(g->n_offset_dims == 1 && g->offset_dims[0] == 1 && g->n_collapsed == 1 &&
             g->collapsed_slice_dims[0] == 0 && g->n_start_index_map == 1 && g->start_index_map[0] == 0 &&
             g->index_vector_dim == 1 && g->slice_sizes[0] == 1 && g->slice_sizes[1] == 3 && g->n_batching == 0);
  }
  if (view(m, "sc", OPTIC_ATTRS_SCATTER, &a)) {
    const optic_scatter_dims *s = &a.scatter;
    OT_CHECK(s->n_update_window_dims == 1 && s->update_window_dims[0] == 1 && s->n_inserted == 1 &&
             s->inserted_window_dims[0] == 0 && s->n_scatter_dims_to_operand_dims == 1 &&
             s->scatter_dims_to_operand_dims[0] == 0 && s->index_vector_dim == 1);
  }
}

static void check_collectives(const optic_module_t *m) {
  optic_node_attrs_t a;
  if (view(m, "ar", OPTIC_ATTRS_ALL_REDUCE, &a)) {
    const optic_attrs_all_reduce *r = &a.all_reduce;
    OT_CHECK(r->n_groups == 2 && r->n_replica_ids == 5 && r->group_sizes && r->replica_ids);
    for (int32_t g = 0; g < 2 && r->n_groups == 2 && r->group_sizes; g++) OT_CHECK(r->group_sizes[g] == AR_SIZES[g]);
    for (int32_t i = 0; i < 5 && r->n_replica_ids == 5 && r->replica_ids; i++) {
      OT_CHECK(r->replica_ids[i] == AR_IDS[i], "replica id %d", (int)i);
    }
  }
  if (view(m, "ag", OPTIC_ATTRS_ALL_GATHER, &a)) {
    OT_CHECK(a.all_gather.dimension == 0 && a.all_gather.shard_count == 2);
  }
  if (view(m, "rs", OPTIC_ATTRS_REDUCE_SCATTER, &a)) {
    OT_CHECK(a.reduce_scatter.dimension == 1 && a.reduce_scatter.shard_count == 3);
  }
  if (view(m, "cp", OPTIC_ATTRS_COLLECTIVE_PERMUTE, &a)) {
    OT_CHECK(a.collective_permute.pairs != NULL);
    if (a.collective_permute.pairs) {
      check_list("cp", a.collective_permute.pairs, 2 * a.collective_permute.n_pairs, CP_PAIRS, 6);
    }
  }
}

static void check_all(const optic_module_t *m) {
  check_small(m);
  check_layout(m);
  check_compute(m);
  check_collectives(m);
}

/* ---------------------------------------------------------------- cases */

static void builder_reads_back(void) {
  optic_module_t *m = built();
  if (m) check_all(m);
  optic_module_destroy(m);
}

static void parser_reads_back(void) {
  optic_module_t *m = parsed();
  if (m) check_all(m);
  optic_module_destroy(m);
}

/* Every kind but NONE appears in the fixture, and every instruction of it
 * (in every computation) gets the kind its opcode says. */
static void every_kind_covered(void) {
  optic_module_t *m = built();
  if (m == NULL) return;
  bool seen[OPTIC_ATTRS_KIND_COUNT_] = {false};
  for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
    optic_node_attrs_t a;
    OT_EXPECT_OK(optic_node_attrs(m, id, &a));
    OT_CHECK(a.kind == optic_opcode_attrs_kind(optic_node_opcode(m, id)), "node %d", (int)id);
    if ((unsigned)a.kind < OPTIC_ATTRS_KIND_COUNT_) seen[a.kind] = true;
  }
  for (int k = 0; k < OPTIC_ATTRS_KIND_COUNT_; k++) OT_CHECK(seen[k], "kind %d is not in the fixture", k);
  optic_module_destroy(m);
}

/* Opcodes whose builders take nothing but operands and types have no view. */
static void opcodes_without_attributes(void) {
  static const optic_opcode none[] = {OPTIC_OP_ADD,
                                      OPTIC_OP_NEGATE,
                                      OPTIC_OP_SELECT,
                                      OPTIC_OP_CLAMP,
                                      OPTIC_OP_CONVERT,
                                      OPTIC_OP_COPY,
                                      OPTIC_OP_RESHAPE,
                                      OPTIC_OP_BITCAST,
                                      OPTIC_OP_TUPLE,
                                      OPTIC_OP_CALL,
                                      OPTIC_OP_WHILE,
                                      OPTIC_OP_MAP,
                                      OPTIC_OP_DYNAMIC_UPDATE_SLICE,
                                      OPTIC_OP_OPT_BARRIER,
                                      OPTIC_OP_AFTER_ALL,
                                      OPTIC_OP_INFEED,
                                      OPTIC_OP_OUTFEED,
                                      OPTIC_OP_REPLICA_ID,
                                      OPTIC_OP_PARTITION_ID,
                                      OPTIC_OP_BITCAST_CONVERT,
                                      OPTIC_OP_IS_FINITE};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
    OT_CHECK(optic_opcode_attrs_kind(none[i]) == OPTIC_ATTRS_NONE, "%s", optic_opcode_name(none[i]));
  }
  OT_CHECK(optic_opcode_attrs_kind(OPTIC_OPCODE_COUNT_) == OPTIC_ATTRS_NONE);
  OT_CHECK(optic_opcode_attrs_kind((optic_opcode)-1) == OPTIC_ATTRS_NONE);
}

static void bad_ids(void) {
  optic_module_t *m = built();
  if (m == NULL) return;
  optic_node_attrs_t a;
  int32_t n = optic_module_node_count(m);
  OT_CHECK(n > 40, "%d nodes", (int)n);
  const optic_node_id bad[] = {-1, n, n + 1, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    a.kind = OPTIC_ATTRS_SLICE;
    OT_EXPECT_STATUS(optic_node_attrs(m, bad[i], &a), OPTIC_ERR_INVALID_ARGUMENT);
    OT_CHECK(strstr(optic_last_error(), "is not an instruction") != NULL, "%s", optic_last_error());
    OT_CHECK(a.kind == OPTIC_ATTRS_NONE, "id %d: the view is not cleared", (int)bad[i]);
  }
  OT_EXPECT_STATUS(optic_node_attrs(NULL, 0, &a), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_node_attrs(m, 0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(optic_module_node_count(NULL) == 0);
  /* A removed instruction: its id stays below the count, and reads as gone. */
  optic_node_id sl = find(m, "sl");
  OT_EXPECT_OK(optic_node_remove(m, sl));
  OT_CHECK(optic_module_node_count(m) == n, "the count changed on removal");
  OT_EXPECT_STATUS(optic_node_attrs(m, sl, &a), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "removed") != NULL, "%s", optic_last_error());
  optic_module_destroy(m);
}

/* Ids are dense: the count bounds every id and every id below it but the
 * removed ones is an instruction. */
static void node_count_bounds_ids(void) {
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_create("count", &m));
  OT_CHECK(optic_module_node_count(m) == 0);
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_add_computation(m, "c", &c));
  optic_type t = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 1, .dims = {2}});
  optic_node_id p, q;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t, NULL, &p));
  OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_NEGATE, p, NULL, &q));
  OT_CHECK(optic_module_node_count(m) == 2 && p < 2 && q < 2 && p != q);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"builder_reads_back", builder_reads_back},
    {"parser_reads_back", parser_reads_back},
    {"every_kind_covered", every_kind_covered},
    {"opcodes_without_attributes", opcodes_without_attributes},
    {"bad_ids", bad_ids},
    {"node_count_bounds_ids", node_count_bounds_ids},
};
OT_MAIN(cases)
