/* A scalar broadcast of a 2-byte dtype (f16, bf16, s16, u16) through the
 * runtime against a plain fill loop, bit for bit (the value's pattern is not
 * a float that rounds), at levels NONE and FULL, on 1 thread and 2 threads
 * with every op split: rank 1 and 2 outputs of 0, 1, 15-17, 255-257 and 4097
 * elements per row.
 * Reproduce a failure: ctest --preset release -R exec_broadcast_fill */
#include "tests/exec/exec_util.h"

static bool one(optic_dtype dt, int64_t rows, int64_t n) {
  char text[512], label[96];
  const char *dn = optic_dtype_name(dt);
  snprintf(text, sizeof text,
           "HloModule b\nENTRY e {\n  p = %s[] parameter(0)\n  ROOT y = %s[%lld,%lld] broadcast(p), dimensions={}\n}\n",
           dn, dn, (long long)rows, (long long)n);
  snprintf(label, sizeof label, "%s[%lld,%lld]", dn, (long long)rows, (long long)n);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  const uint16_t v = dt == OPTIC_F16 ? 0xBC01 : dt == OPTIC_BF16 ? 0xC2A7 : 0x8001; /* sign and low bits set */
  size_t total = (size_t)(rows * n);
  uint16_t *y = malloc((total + 1) * sizeof *y);
  for (size_t i = 0; i < total; i++) y[i] = v;
  const int64_t yd[2] = {rows, n};
  optic_literal_t *arg = ex_lit_of(dt, 0, NULL, &v), *want = ex_lit_of(dt, 2, yd, y);
  bool ok = arg && want;
  for (int level = 0; level <= 2 && ok; level += 2) {
    for (int32_t t = 1; t <= 2 && ok; t++) {
      ok = ex_run_compare(m, (optic_opt_level)level, t, (const optic_literal_t *const *)&arg, 1, want, 0, 0, false,
                          label);
    }
  }
  optic_literal_destroy(arg);
  optic_literal_destroy(want);
  optic_module_destroy(m);
  free(y);
  return ok;
}

static void sweep(void) {
  const optic_dtype dts[] = {OPTIC_F16, OPTIC_BF16, OPTIC_S16, OPTIC_U16};
  const int64_t ns[] = {0, 1, 15, 16, 17, 255, 256, 257, 4097};
  int failed = 0, run = 0;
  for (size_t d = 0; d < 4; d++) {
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
      for (int64_t rows = 1; rows <= 3; rows += 2) {
        run++;
        failed += !one(dts[d], rows, ns[k]);
      }
    }
  }
  OT_CHECK(failed == 0, "%d of %d broadcasts differ from the plain fill", failed, run);
}

static const ot_case cases[] = {{"sweep", sweep}};
OT_MAIN(cases)
