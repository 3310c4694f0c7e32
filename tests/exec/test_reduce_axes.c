/* f32 reductions (add, multiply, maximum, minimum) over every axis set of
 * rank 1-4 shapes with edge extents (0, 1, tile +- 1, leaf +- 1 = 1023..1025,
 * several leaves), through the runtime at FULL optimization:
 *  - bitwise equal to the reference evaluator (which defines the order,
 *    docs/graph-evaluate.md) on 1 thread and 2 threads (every op split);
 *  - bitwise equal across OPTIC_ISA=scalar/avx2/avx512 (those this CPU has),
 *    the input misaligned by one float;
 *  - within the documented bound of an independent f64 loop: sum |got - s| <=
 *    2.5 log2(R + 1) FLT_EPSILON sum |x| (kernels/reduce.h), product within
 *    2 R FLT_EPSILON |p| (inputs in [0.9, 1.1)), max/min exact.
 * Inputs are uniform in [-1, 1) (not exact in any order). A failure prints
 * the shape, dims and op, and the command that reruns the case.
 * columns_streamed: column and middle-axis reductions large enough for the
 * wide column kernel (rows read > 1 MiB), columns 0, 7, 8, 9, 63, 64, 65,
 * 100, 1000 (rows 0, 1 and up to 40000), the same checks.
 * row_groups: softmax and layer norm (the modules of tests/data/hlo at other
 * shapes) run as one row group (exec/rowgroup.c) at FULL, bitwise what the
 * ungrouped steps give at level NONE, on 1 and 2 threads, and within 1e-5 of
 * the evaluator (the exp/rsqrt kernels' ulps). */
#include <float.h>
#include <math.h>

#include "exec/exec_internal.h"
#include "tests/exec/exec_util.h"

typedef struct red_case {
  int rank;
  int64_t dims[4];
  unsigned mask; /* bit d: dim d is reduced */
  int op;        /* 0 add, 1 multiply, 2 maximum, 3 minimum */
  float init;
} red_case;

static const char *const op_hlo[] = {"add", "multiply", "maximum", "minimum"};

static void shape_text(char *buf, size_t cap, const int64_t *dims, int rank, unsigned keep_mask, bool kept_only) {
  size_t at = (size_t)snprintf(buf, cap, "f32[");
  bool first = true;
  for (int d = 0; d < rank; d++) {
    if (kept_only && ((keep_mask >> d) & 1u)) continue;
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", first ? "" : ",", (long long)dims[d]);
    first = false;
  }
  snprintf(buf + at, cap - at, "]");
}

static optic_module_t *build(const red_case *c) {
  char in[96], out[96], dl[64] = "", text[1024];
  shape_text(in, sizeof in, c->dims, c->rank, 0, false);
  shape_text(out, sizeof out, c->dims, c->rank, c->mask, true);
  size_t at = 0;
  for (int d = 0; d < c->rank; d++) {
    if ((c->mask >> d) & 1u) at += (size_t)snprintf(dl + at, sizeof dl - at, "%s%d", at ? "," : "", d);
  }
  snprintf(text, sizeof text,
           "HloModule r\n\ncomb {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] %s(a, b)\n}\n\n"
           "ENTRY main {\n  x = %s parameter(0)\n  i = f32[] constant(%.9g)\n"
           "  ROOT r = %s reduce(x, i), dimensions={%s}, to_apply=comb\n}\n",
           op_hlo[c->op], in, (double)c->init, out, dl);
  return ex_parse(text);
}

static size_t count(const red_case *c) {
  size_t n = 1;
  for (int d = 0; d < c->rank; d++) n *= (size_t)c->dims[d];
  return n;
}

static void fill(float *x, size_t n, int op, uint64_t seed) {
  ex_rng r = {seed};
  for (size_t i = 0; i < n; i++) {
    double u = (double)(ex_next(&r) >> 11) / 9007199254740992.0; /* [0, 1) */
    x[i] = op == 1 ? (float)(0.9 + 0.2 * u) : (float)(2.0 * u - 1.0);
  }
}

/* The f64 loop: y[j] over the reduced elements of output j, with the bound. */
static bool check_f64(const red_case *c, const float *x, const float *got, char *why, size_t cap) {
  int64_t st[4], v = 1;
  for (int d = c->rank - 1; d >= 0; d--) st[d] = v, v *= c->dims[d];
  size_t R = 1, N = 1;
  for (int d = 0; d < c->rank; d++) {
    if ((c->mask >> d) & 1u) R *= (size_t)c->dims[d];
    else N *= (size_t)c->dims[d];
  }
  int64_t kidx[4] = {0};
  for (size_t j = 0; j < N; j++) {
    double acc = c->op == 1 ? 1.0 : c->op == 2 ? -(double)INFINITY : c->op == 3 ? (double)INFINITY : 0.0, mag = 0;
    int64_t ridx[4] = {0};
    for (size_t r = 0; r < R; r++) {
      int64_t off = 0;
      for (int d = 0, ki = 0, ri = 0; d < c->rank; d++)
        off += (((c->mask >> d) & 1u) ? ridx[ri++] : kidx[ki++]) * st[d];
      double e = (double)x[off];
      switch (c->op) {
        case 0: acc += e; break;
        case 1: acc *= e; break;
        case 2: acc = e > acc ? e : acc; break;
        default: acc = e < acc ? e : acc; break;
      }
      mag += fabs(e);
      /* next reduced index, row-major over the reduced dims */
      int nr = 0;
      int64_t rd[4];
      for (int d = 0; d < c->rank; d++) {
        if ((c->mask >> d) & 1u) rd[nr++] = c->dims[d];
      }
      for (int q = nr - 1; q >= 0; q--) {
        if (++ridx[q] < rd[q]) break;
        ridx[q] = 0;
      }
    }
    double want, tol;
    switch (c->op) {
      case 0:
        want = (double)c->init + acc,
        tol = 2.5 * log2((double)R + 2) * (double)FLT_EPSILON * (mag + fabs((double)c->init));
        break;
      case 1: want = (double)c->init * acc, tol = 2.0 * (double)(R + 1) * (double)FLT_EPSILON * fabs(want); break;
      case 2: want = (double)c->init > acc ? (double)c->init : acc, tol = 0; break;
      default: want = (double)c->init < acc ? (double)c->init : acc, tol = 0; break;
    }
    if (!((double)got[j] == want || fabs((double)got[j] - want) <= tol)) {
      snprintf(why, cap, "output %zu: %.9g, f64 loop %.9g, bound %.3g", j, (double)got[j], want, tol);
      return false;
    }
    int nk = 0;
    int64_t kd[4];
    for (int d = 0; d < c->rank; d++) {
      if (!((c->mask >> d) & 1u)) kd[nk++] = c->dims[d];
    }
    for (int q = nk - 1; q >= 0; q--) {
      if (++kidx[q] < kd[q]) break;
      kidx[q] = 0;
    }
  }
  return true;
}

/* Runs the compiled program once with x (any alignment) into y. */
static bool run(optic_program_t *p, int threads, const red_case *c, const float *x, float *y, const optic_type *yt) {
  optic_exec_options eo = optic_exec_options_default();
  eo.threads = threads;
  eo.split_min_elements = threads > 1 ? 1 : 0;
  optic_exec_ctx_t *ctx = NULL;
  if (optic_exec_ctx_create(&eo, &ctx) != OPTIC_OK) return false;
  optic_shape xs = {.rank = c->rank};
  for (int d = 0; d < c->rank; d++) xs.dims[d] = c->dims[d];
  optic_tensor in = {OPTIC_F32, xs, (void *)(uintptr_t)x}, out = {OPTIC_F32, yt->shape, y};
  optic_status st = optic_program_run(p, ctx, &in, 1, &out, 1);
  optic_exec_ctx_destroy(ctx);
  return st == OPTIC_OK;
}

static void describe(const red_case *c, char *buf, size_t cap) {
  char sh[96];
  shape_text(sh, sizeof sh, c->dims, c->rank, 0, false);
  snprintf(buf, cap, "%s %s over mask 0x%x init %g", op_hlo[c->op], sh, c->mask, (double)c->init);
}

static int failures;
static const char *current = "axis_sets";

static void check_case(const red_case *c, uint64_t seed) {
  char label[160];
  describe(c, label, sizeof label);
  if (failures > 10) return;
  optic_module_t *m = build(c);
  OT_CHECK(m != NULL, "%s: parse", label);
  if (m == NULL) return;
  size_t n = count(c);
  optic_literal_t *arg = NULL, *want = NULL;
  optic_type xt = *optic_node_type(m, optic_computation_parameter(m, optic_module_entry(m), 0));
  OT_EXPECT_OK(optic_literal_create(&xt, &arg));
  float *x = optic_literal_mutable_data(arg, NULL);
  fill(x, n, c->op, seed);
  OT_EXPECT_OK(optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)&arg, 1, NULL, &want));
  const optic_type *yt = optic_literal_type(want);
  size_t ny = 1;
  for (int32_t d = 0; d < yt->shape.rank; d++) ny *= (size_t)yt->shape.dims[d];
  const float *w = optic_literal_data(want, NULL);
  char why[200];
  bool ok = check_f64(c, x, w, why, sizeof why);
  OT_CHECK(ok, "%s: evaluator vs f64: %s", label, why);
  optic_compile_options co = optic_compile_options_default();
  co.level = OPTIC_OPT_FULL;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, &co, &p));
  float *y = malloc((ny ? ny : 1) * sizeof *y), *xm = malloc((n + 1) * sizeof *xm);
  if (p && y && xm) {
    if (n) memcpy(xm + 1, x, n * sizeof *x); /* misaligned by one float (x is NULL when n is 0) */
    for (int threads = 1; threads <= 2 && ok; threads++) {
      ok = run(p, threads, c, x, y, yt) && (ny == 0 || memcmp(y, w, ny * sizeof *y) == 0);
      OT_CHECK(ok, "%s: %d threads: not bitwise the evaluator's", label, threads);
    }
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    for (int i = 0; i < 3 && ok; i++) {
      if (i > 0 && optic_isa_best() < (i == 1 ? OPTIC_ISA_AVX2 : OPTIC_ISA_AVX512)) continue;
      setenv("OPTIC_ISA", isas[i], 1);
      optic_isa_reselect();
      ok = run(p, 1, c, xm + 1, y, yt) && (ny == 0 || memcmp(y, w, ny * sizeof *y) == 0);
      OT_CHECK(ok, "%s: OPTIC_ISA=%s, misaligned input: not bitwise the evaluator's", label, isas[i]);
    }
    unsetenv("OPTIC_ISA");
    optic_isa_reselect();
  }
  if (!ok) {
    failures++;
    fprintf(stderr, "  reproduce: %s %s\n", ot_prog_, current);
  }
  free(y);
  free(xm);
  optic_program_destroy(p);
  optic_literal_destroy(arg);
  optic_literal_destroy(want);
  optic_module_destroy(m);
}

static const float inits[4] = {0.0f, 1.0f, -INFINITY, INFINITY};

/* Every mask of a shape, every op. */
static void all_masks(int rank, const int64_t *dims, uint64_t seed) {
  for (unsigned mask = 1; mask < (1u << rank); mask++) {
    for (int op = 0; op < 4; op++) {
      red_case c = {.rank = rank, .mask = mask, .op = op, .init = inits[op]};
      for (int d = 0; d < rank; d++) c.dims[d] = dims[d];
      check_case(&c, seed + mask * 4 + (unsigned)op);
    }
  }
}

static void axis_sets(void) {
  static const int64_t one_d[] = {0, 1, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025, 5000};
  for (size_t i = 0; i < sizeof one_d / sizeof *one_d; i++) all_masks(1, &one_d[i], 100 + i);
  static const int64_t two_d[][2] = {{0, 5},   {5, 0},    {1, 1},    {127, 125}, {3, 17},    {17, 3},  {64, 65},
                                     {65, 64}, {2, 1025}, {1025, 2}, {31, 1024}, {1100, 33}, {3, 3000}};
  for (size_t i = 0; i < sizeof two_d / sizeof *two_d; i++) all_masks(2, two_d[i], 200 + i);
  static const int64_t three_d[][3] = {{5, 33, 7}, {2, 130, 17}, {1, 65, 1}, {4, 1025, 3}, {33, 1, 65}};
  for (size_t i = 0; i < sizeof three_d / sizeof *three_d; i++) all_masks(3, three_d[i], 300 + i);
  static const int64_t four_d[] = {3, 4, 5, 6};
  all_masks(4, four_d, 400);
}

/* An init that is not the identity is combined once: y = init op r. */
static void init_not_identity(void) {
  current = "init_not_identity";
  red_case c = {.rank = 2, .dims = {9, 70}, .mask = 2, .op = 0, .init = 0.5f};
  check_case(&c, 7);
  c.mask = 1;
  check_case(&c, 8);
  c.op = 2, c.init = 0.25f;
  check_case(&c, 9);
}

/* The large shape of the benchmarks, rows and columns. */
static void large(void) {
  current = "large";
  static const int64_t big[2] = {4096, 1024};
  for (unsigned mask = 1; mask <= 2; mask++) {
    red_case c = {.rank = 2, .dims = {big[0], big[1]}, .mask = mask, .op = 0, .init = 0.0f};
    check_case(&c, 500 + mask);
  }
}

/* Column and middle-axis reductions whose rows read exceed 1 MiB (the wide
 * column kernel), edge column counts, every op: bitwise the evaluator's on
 * 1 and 2 threads (the split by column ranges) and on every ISA, misaligned. */
static void columns_streamed(void) {
  current = "columns_streamed";
  static const red_case shapes[] = {
      {.rank = 2, .dims = {4096, 1000}, .mask = 1},  {.rank = 2, .dims = {4097, 65}, .mask = 1},
      {.rank = 2, .dims = {16500, 64}, .mask = 1},   {.rank = 2, .dims = {16400, 63}, .mask = 1},
      {.rank = 2, .dims = {33000, 9}, .mask = 1},    {.rank = 2, .dims = {40000, 8}, .mask = 1},
      {.rank = 2, .dims = {40000, 7}, .mask = 1},    {.rank = 2, .dims = {0, 65}, .mask = 1},
      {.rank = 2, .dims = {1, 1000}, .mask = 1},     {.rank = 2, .dims = {5000, 0}, .mask = 1},
      {.rank = 3, .dims = {3, 4096, 100}, .mask = 2}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    for (int op = 0; op < 4; op++) {
      red_case c = shapes[i];
      c.op = op, c.init = inits[op];
      check_case(&c, 600 + i * 4 + (unsigned)op);
    }
  }
}

static const char SOFTMAX[] =
    "HloModule softmax\n\nmax_computation {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT m = f32[] maximum(a, b)\n}\n\nadd_computation {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  ninf = f32[] constant(-inf)\n"
    "  r = f32[%ld] reduce(x, ninf), dimensions={1}, to_apply=max_computation\n"
    "  rb = f32[%ld,%ld] broadcast(r), dimensions={0}\n  d = f32[%ld,%ld] subtract(x, rb)\n"
    "  e = f32[%ld,%ld] exponential(d)\n  zero = f32[] constant(0)\n"
    "  s = f32[%ld] reduce(e, zero), dimensions={1}, to_apply=add_computation\n"
    "  sb = f32[%ld,%ld] broadcast(s), dimensions={0}\n  ROOT y = f32[%ld,%ld] divide(e, sb)\n}\n";

static const char LAYERNORM[] =
    "HloModule ln\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  zero = f32[] constant(0)\n"
    "  s1 = f32[%ld] reduce(x, zero), dimensions={1}, to_apply=add\n  n = f32[] constant(%ld)\n"
    "  nb = f32[%ld] broadcast(n), dimensions={}\n  mean = f32[%ld] divide(s1, nb)\n"
    "  mr = f32[%ld,1] reshape(mean)\n  m1 = f32[%ld] reshape(mr)\n  mb = f32[%ld,%ld] broadcast(m1), dimensions={0}\n"
    "  c = f32[%ld,%ld] subtract(x, mb)\n  sq = f32[%ld,%ld] multiply(c, c)\n"
    "  s2 = f32[%ld] reduce(sq, zero), dimensions={1}, to_apply=add\n  var = f32[%ld] divide(s2, nb)\n"
    "  eps = f32[] constant(1e-05)\n  eb = f32[%ld] broadcast(eps), dimensions={}\n  ve = f32[%ld] add(var, eb)\n"
    "  rs = f32[%ld] rsqrt(ve)\n  rb = f32[%ld,%ld] broadcast(rs), dimensions={0}\n  xn = f32[%ld,%ld] multiply(c, "
    "rb)\n"
    "  g = f32[%ld] parameter(1)\n  gb = f32[%ld,%ld] broadcast(g), dimensions={1}\n  xg = f32[%ld,%ld] multiply(xn, "
    "gb)\n"
    "  b = f32[%ld] parameter(2)\n  bb = f32[%ld,%ld] broadcast(b), dimensions={1}\n"
    "  ROOT y = f32[%ld,%ld] add(xg, bb)\n}\n";

/* Row-group steps of m's entry sequence bound for 2 threads, and their members. */
static int row_groups_of(const optic_module_t *m, int *members) {
  optic_program_t *p = NULL;
  int groups = 0;
  *members = 0;
  OT_EXPECT_OK(optic_compile(m, NULL, &p));
  exec_bound *b = NULL;
  OT_EXPECT_OK(exec_bind(optic_program_module(p), p, 2, 0, &b));
  for (int32_t c = 0; b && c < b->n_comps; c++) {
    for (int32_t i = 0; b->seqs[c] && i < b->seqs[c]->n_steps; i++) {
      if (b->seqs[c]->steps[i].n_members > 0) groups++, *members += b->seqs[c]->steps[i].n_members;
    }
  }
  exec_bound_destroy(b);
  optic_program_destroy(p);
  return groups;
}

/* The module texts are printf templates of this file (SOFTMAX and
 * LAYERNORM): a non-literal format on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void row_group_case(const char *tmpl, bool ln, long r, long c) {
  char text[4096], label[96];
  if (ln) {
    snprintf(text, sizeof text, tmpl, r, c, r, c, r, r, r, r, r, c, r, c, r, c, r, r, r, r, r, r, c, r, c, c, r, c, r,
             c, c, r, c, r, c);
  } else {
    snprintf(text, sizeof text, tmpl, r, c, r, r, c, r, c, r, c, r, r, c, r, c);
  }
  snprintf(label, sizeof label, "%s f32[%ld,%ld]", ln ? "layer norm" : "softmax", r, c);
  optic_module_t *m = ex_parse(text);
  OT_CHECK(m != NULL, "%s: parse", label);
  if (m == NULL) return;
  int members = 0, groups = row_groups_of(m, &members);
  /* with a single row or column the simplifier turns broadcasts and reduces into reshapes: correctness only */
  if (r > 1 && c > 1) {
    OT_CHECK(groups == 1 && members >= 4, "%s: %d row groups of %d members, want 1 group of >= 4", label, groups,
             members);
  }
  optic_comp_id e = optic_module_entry(m);
  int32_t np = optic_computation_parameter_count(m, e);
  optic_literal_t *args[3] = {NULL};
  for (int32_t i = 0; i < np; i++) {
    OT_EXPECT_OK(optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, i)), &args[i]));
    size_t bytes;
    float *v = optic_literal_mutable_data(args[i], &bytes);
    fill(v, bytes / sizeof *v, 0, (uint64_t)(r * 131 + c * 7 + i));
  }
  optic_literal_t *ref = NULL, *want = NULL;
  OT_EXPECT_OK(ex_runtime_reference(m, (const optic_literal_t *const *)args, np, &ref));
  if (ref) {
    for (int32_t threads = 1; threads <= 2; threads++) {
      ex_run_compare(m, OPTIC_OPT_FULL, threads, (const optic_literal_t *const *)args, np, ref, 0, 0, threads == 2,
                     label);
    }
    if ((size_t)r * (size_t)c <= 100000) {
      OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)args, np, NULL, &want));
      char why[200];
      OT_CHECK(optic_literal_match(want, ref, OPTIC_MATCH_TOLERANCE, 1e-6, 1e-5, why, sizeof why),
               "%s: vs evaluator: %s", label, why);
    }
  }
  optic_literal_destroy(ref);
  optic_literal_destroy(want);
  for (int32_t i = 0; i < np; i++) optic_literal_destroy(args[i]);
  optic_module_destroy(m);
}
#pragma GCC diagnostic pop

static void row_groups(void) {
  static const long shapes[][2] = {{1, 1}, {1, 7}, {33, 1}, {127, 125}, {5, 1024}, {300, 3}, {2, 4097}, {4096, 1024}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    row_group_case(SOFTMAX, false, shapes[i][0], shapes[i][1]);
    row_group_case(LAYERNORM, true, shapes[i][0], shapes[i][1]);
  }
}

static const ot_case cases[] = {
    {"columns_streamed", columns_streamed},   {"row_groups", row_groups}, {"axis_sets", axis_sets},
    {"init_not_identity", init_not_identity}, {"large", large},
};
OT_MAIN(cases)
