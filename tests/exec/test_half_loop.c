/* Fused loops and input fusions on f16 and bf16 data, whose block programs
 * hold the halves widened to f32 (exec/ewhalf.c), exactly equal to the
 * reference evaluator (each op rounded to the half) at levels NONE (op by
 * op) and FULL (fused), on 1 thread and on 2 threads with every op split:
 * broadcasts of a row vector and of a scalar parameter and constant,
 * transposed (strided) reads, select/compare/clamp/exp/divide chains,
 * converts f32 <-> half and between the halves, several outputs (a tuple
 * root) and an f32 row reduction of a half chain. Widths 0, 1, 15-17, 31-33
 * and 513 (over a block of 512), rows 1, 3 and 7. A second case runs NaNs
 * (signalling and quiet, with payloads), infinities, signed zeros and
 * subnormals through select and arithmetic, a third through maximum and
 * minimum row reductions, and compare the bytes.
 * Reproduce a failure: ctest --preset release -R exec_half_loop */
#include "tests/exec/exec_util.h"

static const char *const module_fmt =
    "HloModule half_loop\n\n"
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\n"
    "ENTRY e {\n"
    "  x = %1$s[%2$d,%3$d] parameter(0)\n"
    "  m = %1$s[%2$d] parameter(1)\n"
    "  xt = %1$s[%3$d,%2$d] parameter(2)\n"
    "  sp = %1$s[] parameter(3)\n"
    "  three = %1$s[] constant(3)\n"
    "  zero = %1$s[] constant(0)\n"
    "  one = %1$s[] constant(1)\n"
    "  tenth = f32[] constant(0.1)\n"
    "  zf = f32[] constant(0)\n"
    "  mb = %1$s[%2$d,%3$d] broadcast(m), dimensions={0}\n"
    "  threeb = %1$s[%2$d] broadcast(three), dimensions={}\n"
    "  m3 = %1$s[%2$d] add(m, threeb)\n"
    "  m3b = %1$s[%2$d,%3$d] broadcast(m3), dimensions={0}\n"
    "  d = %1$s[%2$d,%3$d] subtract(x, mb)\n"
    "  y1 = %1$s[%2$d,%3$d] divide(d, m3b)\n"
    "  zb = %1$s[%2$d,%3$d] broadcast(zero), dimensions={}\n"
    "  gt = pred[%2$d,%3$d] compare(x, zb), direction=GT\n"
    "  ex = %1$s[%2$d,%3$d] exponential(x)\n"
    "  nd = %1$s[%2$d,%3$d] negate(d)\n"
    "  y2 = %1$s[%2$d,%3$d] select(gt, ex, nd)\n"
    "  t = %1$s[%2$d,%3$d] transpose(xt), dimensions={1,0}\n"
    "  spb = %1$s[%2$d,%3$d] broadcast(sp), dimensions={}\n"
    "  dt = %1$s[%2$d,%3$d] multiply(d, t)\n"
    "  sq = f32[%2$d,%3$d] convert(dt)\n"
    "  tb = f32[%2$d,%3$d] broadcast(tenth), dimensions={}\n"
    "  sq1 = f32[%2$d,%3$d] add(sq, tb)\n"
    "  y3 = %1$s[%2$d,%3$d] convert(sq1)\n"
    "  ob = %1$s[%2$d,%3$d] broadcast(one), dimensions={}\n"
    "  nob = %1$s[%2$d,%3$d] negate(ob)\n"
    "  ts = %1$s[%2$d,%3$d] multiply(t, spb)\n"
    "  y4 = %1$s[%2$d,%3$d] clamp(nob, ts, ob)\n"
    "  o1 = %4$s[%2$d,%3$d] convert(y1)\n"
    "  y5 = %1$s[%2$d,%3$d] convert(o1)\n"
    "  dd = %1$s[%2$d,%3$d] multiply(d, d)\n"
    "  ddf = f32[%2$d,%3$d] convert(dd)\n"
    "  sum = f32[%2$d] reduce(ddf, zf), dimensions={1}, to_apply=add_f32\n"
    "  ROOT r = (%1$s[%2$d,%3$d], %1$s[%2$d,%3$d], %1$s[%2$d,%3$d], %1$s[%2$d,%3$d], %1$s[%2$d,%3$d], f32[%2$d], "
    "%1$s[%2$d,%3$d]) tuple(y1, y2, y3, y4, y5, sum, x)\n"
    "}\n";

static bool one(const char *dt, int rows, int cols) {
  char text[4096], label[96];
  const char *other = strcmp(dt, "f16") == 0 ? "bf16" : "f16";
  snprintf(text, sizeof text, module_fmt, dt, rows, cols, other);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  snprintf(label, sizeof label, "%s rows %d width %d", dt, rows, cols);
  bool ok = ex_check_module(m, 0x4a1f + (uint64_t)(rows * 1000 + cols), 0, 0, label);
  optic_module_destroy(m);
  return ok;
}

static void sweep(void) {
  static const int widths[] = {0, 1, 15, 16, 17, 31, 32, 33, 513};
  static const int rows[] = {1, 3, 7};
  int failed = 0, run = 0;
  const char *const dts[] = {"f16", "bf16"};
  for (int d = 0; d < 2; d++) {
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
      for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        run++;
        failed += !one(dts[d], rows[r], widths[w]);
      }
    }
  }
  OT_CHECK(failed == 0, "%d of %d half loop modules differ from the evaluator", failed, run);
}

/* m at levels NONE and FULL on 1 thread, every output byte equal to
 * expected's (a NaN's payload included). */
static bool bitwise_at_levels(const optic_module_t *m, const optic_literal_t *const *args, int32_t nargs,
                              const optic_literal_t *expected, const char *label) {
  bool ok = true;
  for (int level = 0; level <= 2 && ok; level += 2)
    ok = ex_run_compare_mode(m, (optic_opt_level)level, 1, args, nargs, expected, OPTIC_MATCH_BITWISE, 0, 0, false,
                             label);
  return ok;
}

/* Special values: y = select(p, x, x * 0.75) and z = x * 0.5 + 0 (two loop
 * fusions), with the
 * result's bytes equal to the evaluator's (a NaN's payload included). */
static bool specials_one(optic_dtype dt, const char *dts, const uint16_t *vals, int n) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule half_specials\n\nENTRY e {\n  x = %1$s[%2$d] parameter(0)\n  p = pred[%2$d] parameter(1)\n"
           "  c = %1$s[] constant(0.75)\n  c0 = %1$s[] constant(0)\n"
           "  k = %1$s[%2$d] broadcast(c), dimensions={}\n  k0 = %1$s[%2$d] broadcast(c0), dimensions={}\n"
           "  xk = %1$s[%2$d] multiply(x, k)\n  y = %1$s[%2$d] select(p, x, xk)\n"
           "  c2 = %1$s[] constant(0.5)\n  k2 = %1$s[%2$d] broadcast(c2), dimensions={}\n"
           "  xk2 = %1$s[%2$d] multiply(x, k2)\n  z = %1$s[%2$d] add(xk2, k0)\n"
           "  ROOT r = (%1$s[%2$d], %1$s[%2$d]) tuple(y, z)\n}\n",
           dts, n);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  int64_t dims[1] = {n};
  uint8_t pred[64];
  for (int i = 0; i < n; i++) pred[i] = (uint8_t)(i % 3 != 2);
  optic_literal_t *args[2] = {ex_lit_of(dt, 1, dims, vals), ex_lit_of(OPTIC_PRED, 1, dims, pred)};
  optic_literal_t *expected = NULL;
  optic_comp_id e = optic_module_entry(m);
  OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)args, 2, NULL, &expected));
  char label[64];
  snprintf(label, sizeof label, "%s special values", dts);
  bool ok = bitwise_at_levels(m, (const optic_literal_t *const *)args, 2, expected, label);
  optic_literal_destroy(expected);
  optic_literal_destroy(args[0]);
  optic_literal_destroy(args[1]);
  optic_module_destroy(m);
  return ok;
}

static void specials(void) {
  /* bf16: sNaN, qNaN with payloads (both signs), +-inf, +-0, subnormals, max, 1 */
  static const uint16_t bf[] = {0x7F81, 0xFF81, 0x7FC1, 0xFFC5, 0x7F80, 0xFF80, 0x0000, 0x8000,
                                0x0001, 0x807F, 0x7F7F, 0x3F80, 0x7FA0, 0x0040, 0xC000, 0x4049};
  /* f16: the same classes */
  static const uint16_t hf[] = {0x7C01, 0xFC01, 0x7E01, 0xFE05, 0x7C00, 0xFC00, 0x0000, 0x8000,
                                0x0001, 0x83FF, 0x7BFF, 0x3C00, 0x7D00, 0x0200, 0xC000, 0x4248};
  OT_CHECK(specials_one(OPTIC_BF16, "bf16", bf, 16), "bf16 special values differ");
  OT_CHECK(specials_one(OPTIC_F16, "f16", hf, 16), "f16 special values differ");
}

/* Maximum and minimum reductions of rows of special values (20 rows of 5:
 * every row a different rotation of the set, so NaNs and zeros of both
 * signs come in every order), bytes equal to the evaluator's. */
static bool reduce_specials_one(optic_dtype dt, const char *dts, const char *op, const uint16_t *vals) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule half_reduce_specials\n\nr {\n  a = %1$s[] parameter(0)\n  b = %1$s[] parameter(1)\n"
           "  ROOT c = %1$s[] %2$s(a, b)\n}\n\nENTRY e {\n  x = %1$s[20,5] parameter(0)\n"
           "  i = %1$s[] constant(%3$s)\n  ROOT y = %1$s[20] reduce(x, i), dimensions={1}, to_apply=r\n}\n",
           dts, op, strcmp(op, "maximum") == 0 ? "-inf" : "inf");
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  uint16_t data[100];
  for (int r = 0; r < 20; r++) {
    for (int c = 0; c < 5; c++) data[r * 5 + c] = vals[(r * 3 + c * (1 + r % 4)) % 16];
  }
  int64_t dims[2] = {20, 5};
  optic_literal_t *arg = ex_lit_of(dt, 2, dims, data), *expected = NULL;
  OT_EXPECT_OK(optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)&arg, 1, NULL, &expected));
  char label[64];
  snprintf(label, sizeof label, "%s %s of special values", dts, op);
  bool ok = bitwise_at_levels(m, (const optic_literal_t *const *)&arg, 1, expected, label);
  optic_literal_destroy(expected);
  optic_literal_destroy(arg);
  optic_module_destroy(m);
  return ok;
}

static void reduce_specials(void) {
  static const uint16_t bf[] = {0x7F81, 0x0000, 0x8000, 0x3F80, 0x7FC1, 0x8000, 0x0000, 0xBF80,
                                0x0001, 0x8000, 0x7F80, 0x0000, 0xFF80, 0x8000, 0xFFC5, 0x0000};
  static const uint16_t hf[] = {0x7C01, 0x0000, 0x8000, 0x3C00, 0x7E01, 0x8000, 0x0000, 0xBC00,
                                0x0001, 0x8000, 0x7C00, 0x0000, 0xFC00, 0x8000, 0xFE05, 0x0000};
  OT_CHECK(reduce_specials_one(OPTIC_BF16, "bf16", "maximum", bf), "bf16 maximum of special values differs");
  OT_CHECK(reduce_specials_one(OPTIC_BF16, "bf16", "minimum", bf), "bf16 minimum of special values differs");
  OT_CHECK(reduce_specials_one(OPTIC_F16, "f16", "maximum", hf), "f16 maximum of special values differs");
  OT_CHECK(reduce_specials_one(OPTIC_F16, "f16", "minimum", hf), "f16 minimum of special values differs");
}

static const ot_case cases[] = {{"sweep", sweep}, {"specials", specials}, {"reduce_specials", reduce_specials}};
OT_MAIN(cases)
