/* f16 and bf16 reductions with a one-op reducer (add, multiply, maximum,
 * minimum) through the runtime, exactly equal to the reference evaluator
 * (which folds each output's inputs one at a time in row-major order, each
 * step rounded to the half) at levels NONE and FULL, on 1 thread and on 2
 * threads with every op split. The shapes give few outputs (the per-output
 * fold, under 16 outputs per thread) and more (the fold vectorized across
 * a block of outputs, exec/ops_reduce.c): 0 to 17
 * outputs, and up to 600 (the vectorized fold over blocks of 512 outputs),
 * reduced extents 0, 1, 15-17, 255-257 and 16385, several reduced
 * axes, strided (non-minor) and minor reduced dims, and dims of extent 1;
 * short rows back to back (extents 1 to 256 over up to 600 rows: a
 * maximum or minimum widens a block of rows per call).
 * Reproduce a failure: ctest --preset release -R exec_reduce_half */
#include "tests/exec/exec_util.h"

typedef struct half_case {
  int rank;
  int64_t dims[3];
  unsigned mask; /* bit d: dim d is reduced */
} half_case;

static const half_case shapes[] = {
    {3, {2, 16385, 1}, 6}, {2, {3, 0}, 2},     {2, {3, 1}, 2},     {2, {2, 15}, 2},       {2, {2, 16}, 2},
    {2, {1, 17}, 2},       {2, {2, 255}, 2},   {2, {3, 257}, 2},   {2, {256, 2}, 1},      {3, {4, 17, 3}, 5},
    {3, {5, 3, 7}, 3},     {2, {15, 9}, 2},    {2, {16, 33}, 2},   {2, {17, 33}, 2},      {2, {33, 17}, 1},
    {3, {2, 3, 4}, 7},     {1, {0}, 1},        {2, {0, 5}, 2},     {3, {16385, 1, 2}, 3}, {2, {127, 125}, 2},
    {2, {513, 3}, 2},      {3, {40, 7, 3}, 2}, {3, {3, 5, 41}, 5}, {2, {31, 600}, 1},     {2, {256, 3}, 2},
    {3, {18, 2, 250}, 4},  {2, {600, 1}, 2},   {2, {97, 256}, 2}};

static const char *const ops[] = {"add", "multiply", "maximum", "minimum"};

static size_t dims_text(char *buf, size_t cap, const char *dt, const half_case *c, bool kept_only) {
  size_t at = (size_t)snprintf(buf, cap, "%s[", dt);
  bool first = true;
  for (int d = 0; d < c->rank; d++) {
    if (kept_only && ((c->mask >> d) & 1u)) continue;
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", first ? "" : ",", (long long)c->dims[d]);
    first = false;
  }
  return at + (size_t)snprintf(buf + at, cap - at, "]");
}

static bool one(const char *dt, const char *op, const half_case *c) {
  char in[96], out[96], red[64], text[1024];
  dims_text(in, sizeof in, dt, c, false);
  dims_text(out, sizeof out, dt, c, true);
  size_t at = 0;
  for (int d = 0; d < c->rank; d++) {
    if ((c->mask >> d) & 1u) at += (size_t)snprintf(red + at, sizeof red - at, "%s%d", at ? "," : "", d);
  }
  red[at] = '\0';
  snprintf(text, sizeof text,
           "HloModule half_reduce\n\nr {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
           "  ROOT c = %s[] %s(a, b)\n}\n\nENTRY e {\n  x = %s parameter(0)\n  i = %s[] constant(%s)\n"
           "  ROOT y = %s reduce(x, i), dimensions={%s}, to_apply=r\n}\n",
           dt, dt, dt, op, in, dt,
           strcmp(op, "multiply") == 0 ? "1"
           : strcmp(op, "add") == 0    ? "0.5"
                                       : "-1.5",
           out, red);
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return false;
  char label[320];
  snprintf(label, sizeof label, "%s %s over {%s} of %s", dt, op, red, in);
  bool ok = ex_check_module(m, 0x5eed + (uint64_t)c->dims[0], 0, 0, label);
  optic_module_destroy(m);
  return ok;
}

static void sweep(void) {
  int failed = 0, run = 0;
  const char *const dts[] = {"f16", "bf16"};
  for (int d = 0; d < 2; d++) {
    for (int o = 0; o < 4; o++) {
      for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        run++;
        failed += !one(dts[d], ops[o], &shapes[s]);
      }
    }
  }
  OT_CHECK(failed == 0, "%d of %d half reductions differ from the evaluator", failed, run);
}

static const ot_case cases[] = {{"sweep", sweep}};
OT_MAIN(cases)
