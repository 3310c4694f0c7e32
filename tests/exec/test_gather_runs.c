/* gather through the runtime against plain loops written from XLA's gather
 * semantics (start indices clamped so the window lies inside the operand),
 * exactly, at levels NONE and FULL, on 1 thread and 2 threads with every op
 * split (so a thread's share starts and ends inside a window row):
 *  - rows: x[V,D], y[n,d] = x[clamp(i_n), d] (an embedding lookup);
 *  - windows: x[V,D], slice {1,S}, two index entries, y[n,s] = x[clamp(i_n0),
 *    clamp(i_n1) + s];
 *  - columns: x[D,V], the minor dim collapsed, y[d,n] = x[d, clamp(i_n)].
 * f32 and bf16, D and S in 1, 15-17, 256-257, N in 0, 1, 3, 17, V in 1, 5,
 * 100, indices including negative and past-the-end ones.
 * Reproduce a failure: ctest --preset release -R exec_gather_runs */
#include "tests/exec/exec_util.h"

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

typedef enum { ROWS, WINDOWS, COLUMNS } gather_kind;

/* The module text, the operand and output dims for kind. */
static void build(gather_kind kind, const char *dt, int64_t V, int64_t D, int64_t S, int64_t N, char *text,
                  size_t cap) {
  if (kind == ROWS) {
    snprintf(text, cap,
             "HloModule g\nENTRY e {\n  x = %s[%lld,%lld] parameter(0)\n  i = s32[%lld] parameter(1)\n"
             "  ROOT y = %s[%lld,%lld] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={0}, index_vector_dim=1, slice_sizes={1,%lld}\n}\n",
             dt, (long long)V, (long long)D, (long long)N, dt, (long long)N, (long long)D, (long long)D);
  } else if (kind == WINDOWS) {
    snprintf(text, cap,
             "HloModule g\nENTRY e {\n  x = %s[%lld,%lld] parameter(0)\n  i = s32[%lld,2] parameter(1)\n"
             "  ROOT y = %s[%lld,%lld] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,%lld}\n}\n",
             dt, (long long)V, (long long)D, (long long)N, dt, (long long)N, (long long)S, (long long)S);
  } else {
    snprintf(text, cap,
             "HloModule g\nENTRY e {\n  x = %s[%lld,%lld] parameter(0)\n  i = s32[%lld] parameter(1)\n"
             "  ROOT y = %s[%lld,%lld] gather(x, i), offset_dims={0}, collapsed_slice_dims={1}, "
             "start_index_map={1}, index_vector_dim=1, slice_sizes={%lld,1}\n}\n",
             dt, (long long)D, (long long)V, (long long)N, dt, (long long)D, (long long)N, (long long)D);
  }
}

static bool one(gather_kind kind, optic_dtype dt, int64_t V, int64_t D, int64_t S, int64_t N) {
  char text[1024], label[160];
  const char *dn = optic_dtype_name(dt);
  build(kind, dn, V, D, S, N, text, sizeof text);
  snprintf(label, sizeof label, "%s kind %d V %lld D %lld S %lld N %lld", dn, (int)kind, (long long)V, (long long)D,
           (long long)S, (long long)N);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  size_t es = optic_dtype_size(dt), nx = (size_t)(V * D), ny = (size_t)(N * (kind == WINDOWS ? S : D));
  int64_t xd[2] = {kind == COLUMNS ? D : V, kind == COLUMNS ? V : D}, id[2] = {N, 2};
  int64_t yd[2] = {kind == COLUMNS ? D : N, kind == COLUMNS ? N : kind == WINDOWS ? S : D};
  unsigned char *x = malloc(nx * es + 1), *y = malloc(ny * es + 1);
  int32_t *ix = malloc((size_t)(2 * N + 1) * sizeof *ix);
  for (size_t k = 0; k < nx; k++) { /* distinct values: k as the dtype (bf16 keeps 8 bits: k mod 256) */
    float f = dt == OPTIC_BF16 ? (float)(k % 256) - 128.0f : (float)k;
    optic_convert_elements(OPTIC_F32, &f, dt, x + k * es, 1);
  }
  for (int64_t k = 0; k < 2 * N; k++) ix[k] = (int32_t)((k * 7919 + 3) % (V + D + 6)) - 3;
  for (int64_t n = 0; n < N; n++) {
    if (kind == ROWS) {
      memcpy(y + (size_t)(n * D) * es, x + (size_t)(clamp64(ix[n], 0, V - 1) * D) * es, (size_t)D * es);
    } else if (kind == WINDOWS) {
      int64_t r = clamp64(ix[2 * n], 0, V - 1), c = clamp64(ix[2 * n + 1], 0, D - S);
      for (int64_t s = 0; s < S; s++) memcpy(y + (size_t)(n * S + s) * es, x + (size_t)(r * D + c + s) * es, es);
    } else {
      for (int64_t d = 0; d < D; d++) {
        memcpy(y + (size_t)(d * N + n) * es, x + (size_t)(d * V + clamp64(ix[n], 0, V - 1)) * es, es);
      }
    }
  }
  optic_literal_t *args[2] = {ex_lit_of(dt, 2, xd, x), ex_lit_of(OPTIC_S32, kind == WINDOWS ? 2 : 1, id, ix)};
  optic_literal_t *want = ex_lit_of(dt, 2, yd, y);
  bool ok = args[0] && args[1] && want;
  for (int level = 0; level <= 2 && ok; level += 2) {
    for (int32_t t = 1; t <= 2 && ok; t++) {
      ok = ex_run_compare(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, 2, want, 0, 0, false,
                          label);
    }
  }
  optic_literal_destroy(args[0]);
  optic_literal_destroy(args[1]);
  optic_literal_destroy(want);
  optic_module_destroy(m);
  free(x);
  free(y);
  free(ix);
  return ok;
}

static void sweep(void) {
  const int64_t Ds[] = {1, 15, 16, 17, 256, 257}, Ns[] = {0, 1, 3, 17}, Vs[] = {1, 5, 100};
  const optic_dtype dts[] = {OPTIC_F32, OPTIC_BF16};
  int failed = 0, run = 0;
  for (int k = 0; k < 3; k++) {
    for (size_t t = 0; t < 2; t++) {
      for (size_t d = 0; d < sizeof Ds / sizeof *Ds; d++) {
        for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++) {
          for (size_t v = 0; v < sizeof Vs / sizeof *Vs; v++) {
            int64_t S = Ds[d] > 2 ? Ds[d] - 2 : Ds[d];
            run++;
            failed += !one((gather_kind)k, dts[t], Vs[v], Ds[d], S, Ns[n]);
          }
        }
      }
    }
  }
  OT_CHECK(failed == 0, "%d of %d gathers differ from the plain loops", failed, run);
}

static const ot_case cases[] = {{"sweep", sweep}};
OT_MAIN(cases)
