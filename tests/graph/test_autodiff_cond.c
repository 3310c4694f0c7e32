/* Reverse-mode autodiff of conditional (JAX's rule: a conditional of the
 * branches' vector-Jacobian products) against central finite differences
 * in f64: the s32 form with three branches of different operand types (a
 * tuple of two arrays, an array, a tuple holding an integer), every branch
 * taken and out-of-range selectors (the last branch runs), the pred form,
 * one operand shared by both branches, a branch that ignores its operand,
 * an array-valued conditional, a nested conditional, a sort inside a
 * branch, empty arrays, and a selector computed from the data. */
#include "tests/graph/autodiff_util.h"

static bool load(const char *text) {
  ev_destroy();
  if (optic_module_from_hlo_text(text, strlen(text), &ev_m) != OPTIC_OK) {
    fprintf(stderr, "  parse failed: %s\n", optic_last_error());
    return false;
  }
  ev_main = optic_module_entry(ev_m);
  return true;
}

#define ADD "add { a = f64[] parameter(0)  b = f64[] parameter(1)  ROOT s = f64[] add(a, b) }\n"

/* %s: the selector's instruction (named sel). */
static const char *const three_branches =
    "HloModule cond3\n" ADD
    "b0 { t = (f64[5], f64[3]) parameter(0)  a = f64[5] get-tuple-element(t), index=0\n"
    "  b = f64[3] get-tuple-element(t), index=1  s = f64[5] sine(a)  two = f64[] constant(2)\n"
    "  tb = f64[5] broadcast(two), dimensions={}  r0 = f64[5] multiply(s, tb)\n"
    "  bb = f64[3] multiply(b, b)  z = f64[] constant(0)  r1 = f64[] reduce(bb, z), dimensions={0}, to_apply=add\n"
    "  ROOT r = (f64[5], f64[]) tuple(r0, r1) }\n"
    "b1 { a = f64[5] parameter(0)  e = f64[5] exponential(a)  z = f64[] constant(0)\n"
    "  s = f64[] reduce(a, z), dimensions={0}, to_apply=add  ROOT r = (f64[5], f64[]) tuple(e, s) }\n"
    "b2 { t = (f64[3], s32[]) parameter(0)  b = f64[3] get-tuple-element(t), index=0\n"
    "  k = s32[] get-tuple-element(t), index=1  z = f64[] constant(0)\n"
    "  s = f64[] reduce(b, z), dimensions={0}, to_apply=add  sb = f64[5] broadcast(s), dimensions={}\n"
    "  kf = f64[] convert(k)  ROOT r = (f64[5], f64[]) tuple(sb, kf) }\n"
    "ENTRY main { x = f64[5] parameter(0)  y = f64[3] parameter(1)  %s\n"
    "  t0 = (f64[5], f64[3]) tuple(x, y)  k = s32[] constant(3)  t2 = (f64[3], s32[]) tuple(y, k)\n"
    "  c = (f64[5], f64[]) conditional(sel, t0, x, t2), branch_computations={b0, b1, b2}\n"
    "  c0 = f64[5] get-tuple-element(c), index=0  c1 = f64[] get-tuple-element(c), index=1\n"
    "  cb = f64[5] broadcast(c1), dimensions={}  ROOT o = f64[5] multiply(c0, cb) }\n";

static void test_index_form(void) {
  const char *sels[] = {"sel = s32[] constant(0)", "sel = s32[] constant(1)", "sel = s32[] constant(2)",
                        "sel = s32[] constant(7)", "sel = s32[] constant(-1)"};
  for (size_t i = 0; i < sizeof sels / sizeof sels[0]; i++) {
    char text[4096];
    snprintf(text, sizeof text, three_branches, sels[i]);
    if (!load(text)) continue;
    OT_CHECK(adf_check(sels[i], ev_main, -1, 1, 1e-6), "%s", sels[i]);
  }
}

/* The selector from the data: x[0] > 0.25 (uniform in [-1, 1]: rarely
 * within a step of the switch); two seeds give both branches. */
static void test_data_selector(void) {
  const char *sel =
      "x0 = f64[1] slice(x), slice={[0:1]}  xr = f64[] reshape(x0)  q = f64[] constant(0.25)\n"
      "  p = pred[] compare(xr, q), direction=GT  one = s32[] constant(1)  zero = s32[] constant(0)\n"
      "  sel = s32[] select(p, zero, one)";
  char text[4096];
  snprintf(text, sizeof text, three_branches, sel);
  for (int k = 0; k < 4 && load(text); k++) OT_CHECK(adf_check("data selector", ev_main, -1, 1, 1e-6));
}

/* The pred form; both branches read the same tuple; branch f ignores it. */
static const char *const pred_form =
    "HloModule condp\n" ADD
    "t { p = (f64[4], f64[4]) parameter(0)  a = f64[4] get-tuple-element(p), index=0\n"
    "  b = f64[4] get-tuple-element(p), index=1  ROOT r = f64[4] multiply(a, b) }\n"
    "f { p = (f64[4], f64[4]) parameter(0)  c = f64[] constant(1.5)  ROOT r = f64[4] broadcast(c), dimensions={} }\n"
    "g { p = (f64[4], f64[4]) parameter(0)  a = f64[4] get-tuple-element(p), index=0\n"
    "  b = f64[4] get-tuple-element(p), index=1  ROOT r = f64[4] divide(a, b) }\n"
    "ENTRY main { x = f64[4] parameter(0)  y = f64[4] parameter(1)  sel = pred[] constant(%s)\n"
    "  t = (f64[4], f64[4]) tuple(x, y)\n"
    "  c = f64[4] conditional(sel, t, t), true_computation=t, false_computation=%s\n"
    "  ROOT o = f64[4] multiply(c, x) }\n";

static void test_pred_form(void) {
  const char *cfg[][2] = {{"true", "f"}, {"false", "f"}, {"false", "g"}};
  for (int i = 0; i < 3; i++) {
    char text[4096], what[64];
    snprintf(text, sizeof text, pred_form, cfg[i][0], cfg[i][1]);
    snprintf(what, sizeof what, "pred %s, false branch %s", cfg[i][0], cfg[i][1]);
    if (load(text)) OT_CHECK(adf_check(what, ev_main, 0.5, 1.5, 1e-6), "%s", what);
  }
}

/* A conditional inside a branch, and a sort inside a branch; sizes %d. */
static const char *const nested =
    "HloModule condn\n" ADD
    "less { a = f64[] parameter(0)  b = f64[] parameter(1)  ROOT l = pred[] compare(a, b), direction=LT }\n"
    "inner_a { a = f64[N] parameter(0)  ROOT r = f64[N] tanh(a) }\n"
    "inner_b { a = f64[N] parameter(0)  ROOT r = f64[N] sort(a), dimensions={0}, to_apply=less }\n"
    "outer_a { a = f64[N] parameter(0)  z = f64[] constant(0)  s = f64[] reduce(a, z), dimensions={0}, to_apply=add\n"
    "  p = pred[] compare(s, z), direction=GT  ROOT r = f64[N] conditional(p, a, a), true_computation=inner_a, "
    "false_computation=inner_b }\n"
    "outer_b { a = f64[N] parameter(0)  ROOT r = f64[N] sort(a), dimensions={0}, to_apply=less }\n"
    "ENTRY main { x = f64[N] parameter(0)  sel = s32[] constant(S)\n"
    "  c = f64[N] conditional(sel, x, x), branch_computations={outer_a, outer_b}\n"
    "  ROOT o = f64[N] multiply(c, c) }\n";

static void test_nested_and_sort(void) {
  const char *sizes[] = {"0", "1", "6"}, *sels[] = {"0", "1"};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 2; j++) {
      char text[4096] = {0}, what[64];
      size_t w = 0;
      for (const char *p = nested; *p && w + 4 < sizeof text; p++) { /* N -> size, S -> selector */
        const char *rep = *p == 'N' && p[-1] == '[' ? sizes[i] : *p == 'S' && p[-1] == '(' ? sels[j] : NULL;
        if (rep == NULL) text[w++] = *p;
        else w += (size_t)snprintf(text + w, sizeof text - w, "%s", rep);
      }
      snprintf(what, sizeof what, "nested, n %s, branch %s", sizes[i], sels[j]);
      for (int k = 0; k < 3 && load(text); k++) OT_CHECK(adf_check(what, ev_main, -1, 1, 1e-6), "%s", what);
    }
  }
}

static const ot_case cases[] = {
    {"index_form", test_index_form},
    {"data_selector", test_data_selector},
    {"pred_form", test_pred_form},
    {"nested_and_sort", test_nested_and_sort},
};
OT_MAIN(cases)
