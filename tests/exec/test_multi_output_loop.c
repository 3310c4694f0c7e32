/* Loop fusions with a tuple result run as one block loop writing every
 * leaf: bitwise the reference evaluator's results (the inputs are small
 * multiples of 1/4, so every op is exact), at levels NONE and FULL on 1 and
 * 2 threads, with caller and context outputs, for element counts 0, 1,
 * block - 1, block, block + 1 and several blocks, with plain and streaming
 * stores. Leaves: 2 and 3, f32, bf16 and f16, a parameter passed through, a
 * value listed twice, scalar broadcasts and a gathered row broadcast; the
 * results as the entry's outputs and as arena values an op reads. Each
 * compiled program holds a tuple kLoop fusion its compiler does not
 * schedule (it prices it as one loop).
 * Reproduce: build/release/tests/exec_multi_output_loop */
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "kernels/stream.h"
#include "tests/exec/exec_util.h"
#include "tests/harness.h"

/* Fusion bodies and entries; '@' stands for the leading dim. */
static const char *const modules[] = {
    /* two f32 leaves from x, y and a scalar broadcast */
    "HloModule two\n"
    "f {\n  p0 = f32[@] parameter(0)\n  p1 = f32[@] parameter(1)\n  p2 = f32[] parameter(2)\n"
    "  b = f32[@] broadcast(p2), dimensions={}\n  m = f32[@] multiply(p0, b)\n  a = f32[@] add(m, p1)\n"
    "  n = f32[@] subtract(p0, a)\n  ROOT r = (f32[@], f32[@]) tuple(a, n)\n}\n"
    "ENTRY e {\n  x = f32[@] parameter(0)\n  y = f32[@] parameter(1)\n  s = f32[] parameter(2)\n"
    "  ROOT g = (f32[@], f32[@]) fusion(x, y, s), kind=kLoop, calls=f\n}\n",
    /* three leaves: a value twice and a parameter passed through */
    "HloModule three\n"
    "f {\n  p0 = f32[@] parameter(0)\n  p1 = f32[@] parameter(1)\n  c = f32[] constant(0.5)\n"
    "  b = f32[@] broadcast(c), dimensions={}\n  a = f32[@] add(p0, b)\n  n = f32[@] maximum(a, p1)\n"
    "  ROOT r = (f32[@], f32[@], f32[@]) tuple(n, p1, n)\n}\n"
    "ENTRY e {\n  x = f32[@] parameter(0)\n  y = f32[@] parameter(1)\n"
    "  ROOT g = (f32[@], f32[@], f32[@]) fusion(x, y), kind=kLoop, calls=f\n}\n",
    /* 16-bit leaves: a bf16 convert, an f32 sum, an f16 product */
    "HloModule halves\n"
    "f {\n  p0 = bf16[@] parameter(0)\n  p1 = f16[@] parameter(1)\n  c0 = f32[@] convert(p0)\n"
    "  c1 = f32[@] convert(p1)\n  s = f32[@] add(c0, c1)\n  h = bf16[@] convert(s)\n  k = f16[@] multiply(p1, p1)\n"
    "  ROOT r = (bf16[@], f32[@], f16[@]) tuple(h, s, k)\n}\n"
    "ENTRY e {\n  x = bf16[@] parameter(0)\n  y = f16[@] parameter(1)\n"
    "  ROOT g = (bf16[@], f32[@], f16[@]) fusion(x, y), kind=kLoop, calls=f\n}\n",
    /* rows of 8 with a broadcast row (a gathered leaf); the leaves are
     * arena values the entry's add reads */
    "HloModule rows\n"
    "f {\n  p0 = f32[@,8] parameter(0)\n  p1 = f32[8] parameter(1)\n"
    "  b = f32[@,8] broadcast(p1), dimensions={1}\n  a = f32[@,8] add(p0, b)\n  m = f32[@,8] multiply(p0, b)\n"
    "  ROOT r = (f32[@,8], f32[@,8]) tuple(a, m)\n}\n"
    "ENTRY e {\n  x = f32[@,8] parameter(0)\n  y = f32[8] parameter(1)\n"
    "  g = (f32[@,8], f32[@,8]) fusion(x, y), kind=kLoop, calls=f\n"
    "  a = f32[@,8] get-tuple-element(g), index=0\n  m = f32[@,8] get-tuple-element(g), index=1\n"
    "  ROOT o = f32[@,8] subtract(a, m)\n}\n",
};

/* Leading dims: element counts 0, 1, 511, 512, 513, 4099 (rows of 8: 0, 8,
 * 504, 512, 520, 5600). */
static const int64_t dims1[] = {0, 1, 511, 512, 513, 4099};
static const int64_t dims8[] = {0, 1, 63, 64, 65, 700};

static char *with_dim(const char *tmpl, int64_t d) {
  size_t n = 0;
  for (const char *c = tmpl; *c; c++) n += *c == '@' ? 24 : 1;
  char *s = malloc(n + 1), *o = s;
  if (s == NULL) return NULL;
  for (const char *c = tmpl; *c; c++) {
    if (*c == '@') o += sprintf(o, "%lld", (long long)d);
    else *o++ = *c;
  }
  *o = '\0';
  return s;
}

/* The compiled program at FULL holds a tuple kLoop fusion whose
 * computation is not scheduled (the compiler's "one loop"). */
static void has_tuple_loop(const optic_module_t *src, const char *label) {
  optic_compile_options co = optic_compile_options_default();
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(src, &co, &p));
  if (p == NULL) return;
  const optic_module_t *m = optic_program_module(p);
  bool found = false;
  for (optic_node_id id = 0; id < optic_module_node_count(m) && !found; id++) {
    optic_node_attrs_t a;
    if (optic_node_opcode(m, id) != OPTIC_OP_FUSION || optic_node_attrs(m, id, &a) != OPTIC_OK) continue;
    found = a.fusion.kind == OPTIC_FUSION_LOOP && optic_type_is_tuple(optic_node_type(m, id)) &&
            optic_program_schedule(p, optic_node_called(m, id, 0)) == NULL;
  }
  OT_CHECK(found, "%s: the program has no unscheduled tuple kLoop fusion", label);
  optic_program_destroy(p);
}

/* Random exact inputs, the evaluator's result, then the runtime bitwise. */
static void check_case(const char *text, const char *label) {
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  has_tuple_loop(m, label);
  ex_rng r = {0x70b1e + strlen(text)};
  optic_comp_id e = optic_module_entry(m);
  int32_t np = optic_computation_parameter_count(m, e);
  optic_literal_t *args[4] = {NULL};
  for (int32_t i = 0; i < np && i < 4; i++) {
    OT_EXPECT_OK(optic_literal_create(optic_node_type(m, optic_computation_parameter(m, e, i)), &args[i]));
    if (args[i]) ex_fill(args[i], &r);
  }
  optic_literal_t *want = NULL;
  OT_EXPECT_OK(optic_evaluate(m, e, (const optic_literal_t *const *)args, np, NULL, &want));
  for (int level = 0; level <= 2 && want; level += 2) {
    for (int32_t t = 1; t <= 2; t++) {
      ex_run_compare_mode(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, np, want,
                          OPTIC_MATCH_BITWISE, 0, 0, t == 2, label);
    }
  }
  optic_literal_destroy(want);
  for (int32_t i = 0; i < np && i < 4; i++) optic_literal_destroy(args[i]);
  optic_module_destroy(m);
}

static void sweep(bool stream) {
  size_t saved = stream ? optic_stream_threshold_set(0) : 0; /* 0: every footprint streams */
  for (size_t k = 0; k < sizeof modules / sizeof modules[0]; k++) {
    const int64_t *dims = strstr(modules[k], "@,8]") ? dims8 : dims1;
    for (size_t i = 0; i < sizeof dims1 / sizeof dims1[0]; i++) {
      char *text = with_dim(modules[k], dims[i]);
      char label[96];
      snprintf(label, sizeof label, "module %zu, leading dim %lld, %s stores", k, (long long)dims[i],
               stream ? "streaming" : "plain");
      if (text) check_case(text, label);
      free(text);
    }
  }
  if (stream) optic_stream_threshold_set(saved);
}

static void plain_stores(void) { sweep(false); }
static void streaming_stores(void) { sweep(true); }

static const ot_case cases[] = {
    {"plain_stores", plain_stores},
    {"streaming_stores", streaming_stores},
};

OT_MAIN(cases)
