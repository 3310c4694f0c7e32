/* Input fusions that sum x * x over rows (the variance of a layer norm),
 * which the runtime reduces with the sum-of-squares kernel, against the
 * reference evaluator bitwise: alone (x a parameter) and inside a row group
 * (x = row minus row mean, kept in the group's tile), at widths around the
 * vector, the reduce leaf (1024) and the row-group block, on 1 and 3 and 33
 * rows, levels NONE and FULL, 1 and 2 threads. Random floats in [-2, 2); a
 * second pass adds NaN, infinities and huge values (NaN-aware match). A
 * failure prints the module, shape and the command that reruns the case. */
#include <math.h>

#include "tests/exec/exec_util.h"

static const char ALONE[] =
    "HloModule sumsq\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  sq = f32[%ld,%ld] multiply(x, x)\n"
    "  init = f32[] parameter(1)\n  ROOT s = f32[%ld] reduce(sq, init), dimensions={1}, to_apply=add\n}\n";

static const char CENTERED[] =
    "HloModule centered\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY main {\n  x = f32[%ld,%ld] parameter(0)\n  zero = f32[] constant(0)\n"
    "  s1 = f32[%ld] reduce(x, zero), dimensions={1}, to_apply=add\n  n = f32[] constant(%ld)\n"
    "  nb = f32[%ld] broadcast(n), dimensions={}\n  mean = f32[%ld] divide(s1, nb)\n"
    "  mb = f32[%ld,%ld] broadcast(mean), dimensions={0}\n  c = f32[%ld,%ld] subtract(x, mb)\n"
    "  sq = f32[%ld,%ld] multiply(c, c)\n  ROOT s2 = f32[%ld] reduce(sq, zero), dimensions={1}, to_apply=add\n}\n";

static void fill(float *x, size_t n, uint64_t seed, bool special) {
  ex_rng r = {seed * 0x9e3779b97f4a7c15ull + 1};
  static const float specials[] = {NAN, INFINITY, -INFINITY, 3e38f, -0.0f, 1e-40f};
  for (size_t i = 0; i < n; i++) {
    uint64_t u = ex_next(&r);
    x[i] = (float)((double)(u >> 11) * 0x1.0p-53 * 4.0 - 2.0);
    if (special && (u & 63) == 0) x[i] = specials[(u >> 6) % 6];
  }
}

static void check_case(bool centered, long rows, long w, bool special) {
  char text[2048];
  if (centered) snprintf(text, sizeof text, CENTERED, rows, w, rows, w, rows, rows, rows, w, rows, w, rows, w, rows);
  else snprintf(text, sizeof text, ALONE, rows, w, rows, w, rows);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  float *x = malloc((size_t)(rows * w) * sizeof *x);
  OT_CHECK(x != NULL);
  if (x == NULL) return;
  fill(x, (size_t)(rows * w), (uint64_t)(rows * 7919 + w), special);
  const int64_t dims[2] = {rows, w};
  const float init = 0.25f;
  optic_literal_t *args[2] = {ex_lit_of(OPTIC_F32, 2, dims, x), ex_lit_of(OPTIC_F32, 0, NULL, &init)};
  const int32_t nargs = centered ? 1 : 2;
  optic_literal_t *want = NULL;
  OT_EXPECT_OK(optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)args, nargs, NULL, &want));
  char label[160];
  snprintf(label, sizeof label, "%s f32[%ld,%ld]%s (reproduce: tests/exec_row_sumsq)", centered ? "centered" : "alone",
           rows, w, special ? " with NaN/inf" : "");
  const optic_literal_match_mode mode = special ? OPTIC_MATCH_NAN_AWARE : OPTIC_MATCH_BITWISE;
  for (int level = 0; want != NULL && level <= 2; level += 2) {
    for (int32_t t = 1; t <= 2; t++) {
      if (!ex_run_compare_mode(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, nargs, want, mode,
                               0.0, 0.0, false, label)) {
        level = 3;
        break;
      }
    }
  }
  optic_literal_destroy(want);
  optic_literal_destroy(args[0]);
  optic_literal_destroy(args[1]);
  optic_module_destroy(m);
  free(x);
}

static void sweep(bool centered) {
  static const long widths[] = {1, 15, 16, 17, 63, 64, 65, 125, 511, 513, 1023, 1024, 1025, 2049, 3000, 4097};
  static const long rows[] = {1, 3, 33};
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
    for (size_t j = 0; j < sizeof rows / sizeof rows[0]; j++) {
      check_case(centered, rows[j], widths[i], false);
      check_case(centered, rows[j], widths[i], true);
    }
  }
}

static void alone(void) { sweep(false); }
static void centered(void) { sweep(true); }

static const ot_case cases[] = {
    {"sumsq_rows_alone", alone},
    {"sumsq_rows_in_row_group", centered},
};
OT_MAIN(cases)
