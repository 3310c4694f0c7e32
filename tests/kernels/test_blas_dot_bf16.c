/* bf16 dot_general on vdpbf16ps (kernels/dot_bf16.h) against a double
 * reference (optic_ref_f32_dot over the exactly widened operands), and
 * against the f32 fallback (widen + sgemm) that runs without AVX512_BF16.
 * Sweeps sizes 0, 1, tile-1, tile, tile+1 and large for M (tile 12), N
 * (tile 32) and K (pairs: odd K pads half a pair), transposed operands,
 * batch dims, layouts the plan packs, misaligned operands and 1-3 thread
 * slices. Tolerance per output element (both paths, and between them):
 *   |got - want| <= (K + 2) * 2^-24 * sum_k |a*b| + K * 2^-124,
 * the f32 bound for K exact products summed in any order (gamma_K), plus
 * subnormal products that vdpbf16ps flushes (|a|, |b| <= 2 here).
 * Every bf16 kernel this machine can run (AVX512_BF16, AMX-BF16) is checked;
 * one it cannot (no CPU support, OPTIC_ISA=avx2/scalar; AMX also under any
 * valid OPTIC_ISA cap) must refuse with UNSUPPORTED, and the fallback holds. */
#include <float.h>

#include "kernels/dot_bf16.h"
#include "tests/kernels/kernel_test.h"

static optic_shape shape_of(int rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static size_t elements(const optic_shape *s) {
  size_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

static void describe(char *buf, size_t size, const optic_shape *l, const optic_shape *r, const optic_dot_dims *d) {
  int n = snprintf(buf, size, "bf16[");
  for (int i = 0; i < l->rank; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "", (long long)l->dims[i]);
  n += snprintf(buf + n, size - (size_t)n, "] . bf16[");
  for (int i = 0; i < r->rank; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "", (long long)r->dims[i]);
  n += snprintf(buf + n, size - (size_t)n, "] lb={");
  for (int i = 0; i < d->lhs_batch_count; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%d", i ? "," : "", d->lhs_batch[i]);
  n += snprintf(buf + n, size - (size_t)n, "} lc={");
  for (int i = 0; i < d->lhs_contracting_count; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%d", i ? "," : "", d->lhs_contracting[i]);
  n += snprintf(buf + n, size - (size_t)n, "} rc={");
  for (int i = 0; i < d->rhs_contracting_count; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%d", i ? "," : "", d->rhs_contracting[i]);
  snprintf(buf + n, size - (size_t)n, "}");
}

/* Random bf16 values in [-2, 2], 1 in 64 of them subnormal or zero. */
static void fill_bf16(kt_rng *r, uint16_t *x, float *wide, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t v = kt_next(r);
    float f = kt_uniform(r, -2.0f, 2.0f);
    if (v % 64 == 0) f = (v & 64) ? FLT_MIN / 4.0f : -0.0f;
    x[i] = optic_f32_to_bf16(f);
    wide[i] = optic_bf16_to_f32(x[i]);
  }
}

static bool within(const char *what, const char *how, const float *got, const float *want, const float *bound, size_t n,
                   int64_t k) {
  for (size_t i = 0; i < n; i++) {
    double tol = (double)(k + 2) * 0x1p-24 * (double)bound[i] + (double)k * 0x1p-124;
    if (!(fabs((double)got[i] - (double)want[i]) <= tol)) {
      OT_CHECK(false, "%s (%s): out[%zu] = %.9g, want %.9g, tolerance %.3g", what, how, i, (double)got[i],
               (double)want[i], tol);
      return false;
    }
  }
  return true;
}

/* A bf16 kernel, whole or as nthreads slices called in turn. */
static void run_bf16(optic_bf16_kernel kern, const struct optic_dot_plan *p, const uint16_t *a, const uint16_t *b,
                     float *out, void *scratch, int nthreads) {
  if (nthreads == 0) {
    OT_EXPECT_OK(optic_dot_bf16_run_with(kern, p, a, b, out, scratch));
    return;
  }
  for (int t = 0; t < nthreads; t++) OT_EXPECT_OK(optic_dot_bf16_pack_dense(p, a, b, scratch, t, nthreads));
  for (int t = 0; t < nthreads; t++) OT_EXPECT_OK(optic_dot_bf16_pack_panels_with(kern, p, a, b, scratch, t, nthreads));
  for (int t = 0; t < nthreads; t++) OT_EXPECT_OK(optic_dot_bf16_compute_with(kern, p, out, scratch, t, nthreads));
}

static int checked, ran_kernel[3];

/* Plans; runs the f32 fallback and (when available) the bf16 kernel whole
 * and in 1-3 slices at a misalignment of `shift` bf16 elements; compares all
 * with the reference and the guards. */
static void check_dot(const optic_shape *ls, const optic_shape *rs, const optic_dot_dims *d, uint64_t seed,
                      size_t shift) {
  char what[256];
  describe(what, sizeof what, ls, rs, d);
  struct optic_dot_plan p;
  optic_status st = optic_dot_plan(ls, rs, d, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan failed: %s", what, optic_last_error());
  if (st != OPTIC_OK) return;
  size_t na = elements(ls), nb = elements(rs), no = elements(&p.out_shape);
  kt_rng rng = {seed | 1};
  kt_mem a = kt_mem_make(na, 2, shift), b = kt_mem_make(nb, 2, shift + 1);
  float *wa = malloc(na * 4 + 4), *wb = malloc(nb * 4 + 4), *aa = malloc(na * 4 + 4), *ab = malloc(nb * 4 + 4);
  float *want = malloc(no * 4 + 4), *bound = malloc(no * 4 + 4);
  fill_bf16(&rng, a.p, wa, na);
  fill_bf16(&rng, b.p, wb, nb);
  for (size_t i = 0; i < na; i++) aa[i] = fabsf(wa[i]);
  for (size_t i = 0; i < nb; i++) ab[i] = fabsf(wb[i]);
  OT_EXPECT_OK(optic_ref_f32_dot(ls, rs, d, wa, wb, want));
  OT_EXPECT_OK(optic_ref_f32_dot(ls, rs, d, aa, ab, bound));
  kt_buf f32_out = kt_buf_make(no, 0), f32_scratch = kt_buf_make((p.scratch_bytes + 3) / 4, 0);
  OT_EXPECT_OK(optic_dot_run(&p, wa, wb, f32_out.p, p.scratch_bytes ? f32_scratch.p : NULL));
  within(what, "f32 fallback", f32_out.p, want, bound, no, p.k);
  for (optic_bf16_kernel kern = OPTIC_BF16_AVX512; kern <= OPTIC_BF16_AMX; kern++) {
    size_t sb = optic_dot_bf16_scratch_bytes_for(&p, kern);
    OT_CHECK(sb >= p.scratch_bytes);
    if (!optic_dot_bf16_kernel_usable(kern)) {
      kt_buf out = kt_buf_make(no, 0), scratch = kt_buf_make((sb + 3) / 4, 0);
      st = optic_dot_bf16_run_with(kern, &p, a.p, b.p, out.p, scratch.p);
      OT_CHECK(st == OPTIC_ERR_UNSUPPORTED, "%s: unusable kernel %s returned %s", what,
               optic_dot_bf16_kernel_name(kern), optic_status_name(st));
      kt_buf_free(&out), kt_buf_free(&scratch);
      continue;
    }
    for (int nt = 0; nt <= 3; nt++) {
      kt_buf out = kt_buf_make(no, (size_t)nt), scratch = kt_buf_make((sb + 3) / 4, 0);
      for (size_t i = 0; i < no; i++) out.p[i] = NAN;
      run_bf16(kern, &p, a.p, b.p, out.p, scratch.p, nt);
      char how[48];
      snprintf(how, sizeof how, nt ? "%s, %d slices" : "%s, run", optic_dot_bf16_kernel_name(kern), nt);
      if (within(what, how, out.p, want, bound, no, p.k) && nt == 0) {
        within(what, "bf16 kernel vs f32 fallback", out.p, f32_out.p, bound, no, 2 * p.k);
      }
      OT_CHECK(kt_buf_guard_ok(&out), "%s (%s): wrote past the output", what, how);
      OT_CHECK(kt_buf_guard_ok(&scratch), "%s (%s): wrote past the scratch (%zu bytes)", what, how, sb);
      kt_buf_free(&out), kt_buf_free(&scratch);
    }
    ran_kernel[kern]++;
  }
  OT_CHECK(kt_mem_guard_ok(&a) && kt_mem_guard_ok(&b), "%s: an input's guard changed", what);
  free(wa), free(wb), free(aa), free(ab), free(want), free(bound);
  kt_mem_free(&a), kt_mem_free(&b), kt_buf_free(&f32_out), kt_buf_free(&f32_scratch);
  checked++;
}

/* M around the 12-row tile, N around the 32-column tile, K around pairs and
 * the 256-deep cache block; both operands plain and transposed; with and
 * without a batch dim. */
static void edge_sizes(void) {
  static const int64_t ms[] = {0, 1, 11, 12, 13, 25, 200}, ns[] = {0, 1, 31, 32, 33, 65},
                       ks[] = {0, 1, 2, 3, 255, 256, 257, 513};
  int count = 0;
  for (int bi = 0; bi < 2; bi++) {
    for (int layout = 0; layout < 4; layout++) {
      bool lt = layout & 1, rt = layout & 2;
      for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
          for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            int64_t m = ms[mi], n = ns[ni], k = ks[ki];
            if ((m * n * k > 200 * 65 * 64) && (layout != 0 || bi)) continue; /* big ones once */
            int o = bi;
            int64_t l[3] = {3, 0, 0}, r[3] = {3, 0, 0};
            l[o] = lt ? k : m, l[o + 1] = lt ? m : k;
            r[o] = rt ? n : k, r[o + 1] = rt ? k : n;
            optic_dot_dims d = {.lhs_batch_count = o,
                                .rhs_batch_count = o,
                                .lhs_contracting_count = 1,
                                .rhs_contracting_count = 1,
                                .lhs_batch = {0},
                                .rhs_batch = {0},
                                .lhs_contracting = {o + !lt},
                                .rhs_contracting = {o + rt}};
            optic_shape ls = shape_of(2 + o, l), rs = shape_of(2 + o, r);
            check_dot(&ls, &rs, &d, (uint64_t)count, (size_t)(count % 3));
            count++;
          }
        }
      }
    }
  }
}

/* Layouts the plan packs (contracting dims split around a free dim, batch
 * dims in the middle, two contracting dims), so step 1 runs. */
static void packed_layouts(void) {
  { /* lhs [m=13, k1=5, m2=3, k2=7] contracting {1,3}; rhs [k2=7, n=33, k1=5] contracting {2,0} */
    int64_t l[4] = {13, 5, 3, 7}, r[3] = {7, 33, 5};
    optic_dot_dims d = {
        .lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 3}, .rhs_contracting = {2, 0}};
    optic_shape ls = shape_of(4, l), rs = shape_of(3, r);
    struct optic_dot_plan p;
    OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &d, &p));
    OT_CHECK(p.lhs.packed, "the case should make the plan pack lhs");
    check_dot(&ls, &rs, &d, 99, 1);
  }
  { /* batch dim in the middle of both: lhs [m=14, b=2, k=9], rhs [k=9, b=2, n=40] */
    int64_t l[3] = {14, 2, 9}, r[3] = {9, 2, 40};
    optic_dot_dims d = {.lhs_batch_count = 1,
                        .rhs_batch_count = 1,
                        .lhs_batch = {1},
                        .rhs_batch = {1},
                        .lhs_contracting_count = 1,
                        .rhs_contracting_count = 1,
                        .lhs_contracting = {2},
                        .rhs_contracting = {0}};
    optic_shape ls = shape_of(3, l), rs = shape_of(3, r);
    check_dot(&ls, &rs, &d, 7, 2);
  }
  { /* two batch dims, rhs transposed: [2, 3, 17, 21] . [2, 3, 35, 21] */
    int64_t l[4] = {2, 3, 17, 21}, r[4] = {2, 3, 35, 21};
    optic_dot_dims d = {.lhs_batch_count = 2,
                        .rhs_batch_count = 2,
                        .lhs_batch = {0, 1},
                        .rhs_batch = {0, 1},
                        .lhs_contracting_count = 1,
                        .rhs_contracting_count = 1,
                        .lhs_contracting = {3},
                        .rhs_contracting = {3}};
    optic_shape ls = shape_of(4, l), rs = shape_of(4, r);
    check_dot(&ls, &rs, &d, 8, 0);
  }
  { /* no contracting dim: an outer product */
    int64_t l[1] = {13}, r[1] = {33};
    optic_dot_dims d = {0};
    optic_shape ls = shape_of(1, l), rs = shape_of(1, r);
    check_dot(&ls, &rs, &d, 9, 1);
  }
}

/* Bad arguments get a status and a message, never a crash. */
static void invalid_args(void) {
  int64_t l[2] = {4, 6}, r[2] = {6, 5};
  optic_dot_dims d = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  optic_shape ls = shape_of(2, l), rs = shape_of(2, r);
  struct optic_dot_plan p;
  OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &d, &p));
  uint16_t a[24] = {0}, b[30] = {0};
  float out[20];
  optic_status want_ok = optic_dot_bf16_available() ? OPTIC_ERR_INVALID_ARGUMENT : OPTIC_ERR_UNSUPPORTED;
  OT_EXPECT_STATUS(optic_dot_bf16_run(NULL, a, b, out, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_dot_bf16_run(&p, a, b, out, NULL), want_ok);
  OT_EXPECT_STATUS(optic_dot_bf16_pack_panels(&p, NULL, b, out, 0, 1), want_ok);
  OT_EXPECT_STATUS(optic_dot_bf16_compute(&p, out, out, 2, 2), OPTIC_ERR_INVALID_ARGUMENT);
}

/* Which kernels ran; each one the CPU (and OPTIC_ISA) allows must have run. */
static void summary(void) {
  printf("bf16 dot: %d cases; avx512_bf16 ran %d, amx_bf16 ran %d (best here: %s, ISA %s)\n", checked,
         ran_kernel[OPTIC_BF16_AVX512], ran_kernel[OPTIC_BF16_AMX], optic_dot_bf16_kernel_name(optic_dot_bf16_kernel()),
         optic_isa_name(optic_isa_selected()));
  const optic_cpu_info *c = optic_cpu_info_get();
  bool avx512 = optic_isa_selected() == OPTIC_ISA_AVX512;
  if (OPTIC_CPU_HAS(c, AVX512BF16) && avx512) OT_CHECK(ran_kernel[OPTIC_BF16_AVX512] == checked);
  if (!avx512) OT_CHECK(!optic_dot_bf16_available(), "a bf16 kernel is offered below the avx512 ISA");
}

static const ot_case cases[] = {
    {"edge_sizes", edge_sizes},
    {"packed_layouts", packed_layouts},
    {"invalid_args", invalid_args},
    {"summary", summary},
};

OT_MAIN(cases)
