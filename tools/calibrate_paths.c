/* `optic calibrate`'s figures of machine format 5 (calibrate_measure.h): the
 * runtime's own paths that the format-3 classes priced with the wrong unit,
 * each measured on its own small HLO program through optic_compile +
 * optic_program_run on one thread (fastest trial), as calibrate_ops.c does:
 *   gather   f32[1024,64] -> f32[256,64] (256 runs of 64) and
 *            f32[65536,1] -> f32[16384,1] (16384 runs of 1), indices a
 *            parameter: per run from the difference; per element from
 *            the rest of f32[256,1024] -> f32[64,1024] (64 runs of 1024)
 *   topk     k = 8 of one f32 row of 32768 (the block selection): per row
 *            element; k = 128 of the same row (the merge sort): per
 *            comparison (32768 x 15)
 *   convert  bf16, f16 -> f32 and f32 -> bf16, f16 on [256,256]: per element
 *   fold     add reduces of bf16[4,16384] and f16[4,16384] over dim 1, and
 *            maximum reduces of bf16[16384,4] and f16[16384,4] over dim 0
 *            (4 outputs: the runtime's direct fold; a maximum over
 *            contiguous rows takes the rows path): per input element
 * Each figure is the run minus the one-add program's (plan->tiny_ns). */
#include <optic/optic.h>

#include "tools/calibrate_measure.h"

static const char *const hlo_gather_rows =
    "HloModule calibrate_gather_rows\n"
    "ENTRY e {\n"
    "  t = f32[1024,64] parameter(0)\n"
    "  i = s32[256,1] parameter(1)\n"
    "  ROOT g = f32[256,64] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}\n"
    "}\n";

static const char *const hlo_gather_long_rows =
    "HloModule calibrate_gather_long_rows\n"
    "ENTRY e {\n"
    "  t = f32[256,1024] parameter(0)\n"
    "  i = s32[64,1] parameter(1)\n"
    "  ROOT g = f32[64,1024] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,1024}\n"
    "}\n";

static const char *const hlo_gather_elements =
    "HloModule calibrate_gather_elements\n"
    "ENTRY e {\n"
    "  t = f32[65536,1] parameter(0)\n"
    "  i = s32[16384,1] parameter(1)\n"
    "  ROOT g = f32[16384,1] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}\n"
    "}\n";

#define TOPK(K)                                         \
  "HloModule calibrate_topk\n"                          \
  "ENTRY e {\n"                                         \
  "  x = f32[1,32768] parameter(0)\n"                   \
  "  t = (f32[1," #K "], s32[1," #K "]) topk(x), k=" #K \
  ", largest=true\n"                                    \
  "  ROOT v = f32[1," #K                                \
  "] get-tuple-element(t), index=0\n"                   \
  "}\n"

#define CONVERT(FROM, TO)         \
  "HloModule calibrate_convert\n" \
  "ENTRY e {\n"                   \
  "  x = " FROM                   \
  "[256,256] parameter(0)\n"      \
  "  ROOT y = " TO                \
  "[256,256] convert(x)\n"        \
  "}\n"

#define FOLD(DT, OP, IN, DIM)                           \
  "HloModule calibrate_fold\n"                          \
  "r {\n"                                               \
  "  a = " DT                                           \
  "[] parameter(0)\n"                                   \
  "  b = " DT                                           \
  "[] parameter(1)\n"                                   \
  "  ROOT s = " DT "[] " OP                             \
  "(a, b)\n"                                            \
  "}\n"                                                 \
  "ENTRY e {\n"                                         \
  "  x = " DT IN                                        \
  " parameter(0)\n"                                     \
  "  z = " DT                                           \
  "[] constant(0)\n"                                    \
  "  ROOT y = " DT "[4] reduce(x, z), dimensions={" DIM \
  "}, to_apply=r\n"                                     \
  "}\n"

optic_status calib_beyond_tiny(const calib_ops_plan *plan, const char *text, double *ns) {
  double t = 0;
  optic_status st = calib_best_program(text, plan->trials, plan->target_ns, NULL, NULL, &t);
  *ns = st == OPTIC_OK && t > plan->tiny_ns ? t - plan->tiny_ns : 0;
  return st;
}

static optic_status measure_gather(const calib_ops_plan *plan, calib_classes *out) {
  double rows = 0, each = 0, long_rows = 0;
  optic_status st = calib_beyond_tiny(plan, hlo_gather_rows, &rows);
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, hlo_gather_elements, &each);
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, hlo_gather_long_rows, &long_rows);
  if (st != OPTIC_OK || !(each > rows) || !(rows > 0)) return st;
  /* rows = 256 runs + 16384 elements, each = 16384 runs (+ elements, in
   * them): the runs' figure from their difference. The elements' from the
   * long rows (64 runs + 65536 elements), where they are most of the time:
   * the short rows' rest beyond their runs is a few per cent of their time,
   * and took any noise of the two run-bound shapes 8x up. */
  out->gather_run_ns = (each - rows) / (16384.0 - 256.0);
  double rest = long_rows - 64.0 * out->gather_run_ns;
  out->gather_element_ns = rest > 0 ? rest / 65536.0 : 0;
  return st;
}

optic_status calib_measure_paths(const calib_ops_plan *plan, calib_classes *out) {
  optic_status st = measure_gather(plan, out);
  double ns = 0;
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, TOPK(8), &ns);
  if (st == OPTIC_OK) out->topk_select_element_ns = ns / 32768.0;
  if (st == OPTIC_OK) st = calib_beyond_tiny(plan, TOPK(128), &ns);
  if (st == OPTIC_OK && ns > 0) out->topk_compare_ns = ns / (32768.0 * 15);
  const char *const converts[4] = {CONVERT("bf16", "f32"), CONVERT("f16", "f32"), CONVERT("f32", "bf16"),
                                   CONVERT("f32", "f16")};
  for (int i = 0; i < 4 && st == OPTIC_OK; i++) {
    st = calib_beyond_tiny(plan, converts[i], &ns);
    out->convert_ns[i] = ns / 65536.0;
  }
  /* the maxima over a strided dim: over contiguous rows they take the rows path */
  const char *const folds[4] = {FOLD("bf16", "add", "[4,16384]", "1"), FOLD("f16", "add", "[4,16384]", "1"),
                                FOLD("bf16", "maximum", "[16384,4]", "0"), FOLD("f16", "maximum", "[16384,4]", "0")};
  for (int i = 0; i < 4 && st == OPTIC_OK; i++) {
    st = calib_beyond_tiny(plan, folds[i], &ns);
    out->fold_ns[i] = ns / 65536.0;
  }
  return st;
}
