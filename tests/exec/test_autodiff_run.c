/* Gradient computations built by optic_autodiff_value_and_grad are
 * ordinary programs: compiled (levels NONE and FULL, so optimized and
 * fused), run on 1 and 2 threads, they give what the reference evaluator
 * gives for them, within 1e-4 (f32 kernels vs naive loops). */
#include "tests/exec/exec_util.h"

static const char *const mlp_text =
    "HloModule mlp\n"
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n"
    "  x = f32[16,32] parameter(0)  w1 = f32[32,64] parameter(1)  b1 = f32[64] parameter(2)\n"
    "  w2 = f32[64,8] parameter(3)  t = f32[16,8] parameter(4)\n"
    "  h = f32[16,64] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb = f32[16,64] broadcast(b1), dimensions={1}\n"
    "  z = f32[16,64] add(h, bb)  zero = f32[] constant(0)  zb = f32[16,64] broadcast(zero), dimensions={}\n"
    "  r = f32[16,64] maximum(z, zb)\n"
    "  o = f32[16,8] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  e = f32[16,8] subtract(o, t)  e2 = f32[16,8] multiply(e, e)\n"
    "  ROOT l = f32[] reduce(e2, zero), dimensions={0,1}, to_apply=add\n"
    "}\n";

static const char *const conv_text =
    "HloModule convblock\n"
    "max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n"
    "  x = f32[2,10,10,3] parameter(0)  k = f32[3,3,3,8] parameter(1)  bias = f32[8] parameter(2)\n"
    "  c = f32[2,10,10,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
    "  bb = f32[2,10,10,8] broadcast(bias), dimensions={3}\n"
    "  y = f32[2,10,10,8] add(c, bb)  t = f32[2,10,10,8] tanh(y)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  p = f32[2,5,5,8] reduce-window(t, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n"
    "  zero = f32[] constant(0)  p2 = f32[2,5,5,8] multiply(p, p)\n"
    "  ROOT l = f32[] reduce(p2, zero), dimensions={0,1,2,3}, to_apply=add\n"
    "}\n";

static void check(const char *text, const int32_t *wrt, int32_t n, const char *label) {
  optic_module_t *m = ex_parse(text);
  if (m == NULL) return;
  optic_comp_id g;
  OT_EXPECT_OK(optic_autodiff_value_and_grad(m, optic_module_entry(m), wrt, n, NULL, &g));
  OT_EXPECT_OK(optic_module_set_entry(m, g));
  OT_CHECK(ex_check_module(m, 21, 1e-4, 1e-4, label), "%s", label);
  optic_module_destroy(m);
}

static void test_mlp(void) { check(mlp_text, (int32_t[]){0, 1, 2, 3}, 4, "mlp value_and_grad"); }
static void test_conv_block(void) { check(conv_text, (int32_t[]){0, 1, 2}, 3, "conv block value_and_grad"); }

static const ot_case cases[] = {
    {"mlp", test_mlp},
    {"conv_block", test_conv_block},
};
OT_MAIN(cases)
