/* autodiff_torch_dump OUTDIR: builds an MLP and a conv block in optic,
 * differentiates them with optic_autodiff_value_and_grad, evaluates on
 * fixed pseudo-random inputs and writes inputs, loss and gradients as .npy
 * files for tests/graph/autodiff_torch.py to check against torch.autograd.
 * Files: <model>_<name>.npy for every parameter, <model>_loss.npy and
 * <model>_grad_<name>.npy. Exit 0 on success, 2 on any failure. */
#include "tests/graph/autodiff_util.h"

static const char *out_dir;

static void save(const char *model, const char *name, const optic_literal_t *l) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s_%s.npy", out_dir, model, name);
  optic_literal_t *copy; /* a tensor view needs mutable data */
  if (optic_literal_clone(l, &copy)) ev_die("clone");
  const optic_type *t = optic_literal_type(copy);
  optic_tensor v;
  if (optic_tensor_make(t->dtype, &t->shape, optic_literal_mutable_data(copy, NULL), &v) || optic_npy_write(path, &v)) {
    ev_die(path);
  }
  optic_literal_destroy(copy);
}

static optic_node_id f32_scalar(float v) {
  optic_node_id k;
  if (optic_graph_constant(ev_m, ev_main, OPTIC_F32, &(optic_shape){0}, &v, 4, NULL, &k)) ev_die("constant");
  return k;
}

static optic_node_id bin(optic_opcode op, optic_node_id a, optic_node_id b) {
  optic_node_id r;
  if (optic_graph_binary(ev_m, ev_main, op, a, b, NULL, &r)) ev_die(optic_opcode_name(op));
  return r;
}

static optic_node_id bias(optic_node_id y, optic_node_id b, int64_t dim) {
  optic_node_id bb;
  if (optic_graph_broadcast(ev_m, ev_main, b, &optic_node_type(ev_m, y)->shape, &dim, 1, NULL, &bb)) ev_die("bias");
  return bin(OPTIC_OP_ADD, y, bb);
}

static optic_node_id dense(optic_node_id x, optic_node_id w) {
  optic_dot_dims mm = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}};
  optic_node_id r;
  if (optic_graph_dot(ev_m, ev_main, x, w, &mm, NULL, &r)) ev_die("dot");
  return r;
}

static optic_node_id sum_all(optic_node_id x) {
  optic_comp_id add = ev_binary_comp("add", OPTIC_OP_ADD, OPTIC_F32);
  int64_t dims[OPTIC_MAX_RANK];
  int32_t r = optic_node_type(ev_m, x)->shape.rank;
  for (int32_t i = 0; i < r; i++) dims[i] = i;
  optic_node_id zero = f32_scalar(0), s;
  if (optic_graph_reduce(ev_m, ev_main, &x, &zero, 1, dims, r, add, NULL, &s)) ev_die("reduce");
  return s;
}

/* Evaluates value_and_grad w.r.t. every parameter and saves everything. */
static void run_and_save(const char *model, const char *const *names, int32_t np) {
  optic_literal_t *args[8];
  int32_t wrt[8];
  for (int32_t i = 0; i < np; i++) {
    args[i] = adf_random(optic_node_type(ev_m, optic_computation_parameter(ev_m, ev_main, i)), -1, 1);
    wrt[i] = i;
    save(model, names[i], args[i]);
  }
  optic_comp_id g;
  if (optic_autodiff_value_and_grad(ev_m, ev_main, wrt, np, NULL, &g)) ev_die("autodiff");
  optic_literal_t *r = ev_run(g, (const optic_literal_t *const *)args, np);
  if (r == NULL) ev_die("evaluate");
  save(model, "loss", optic_literal_element(r, 0));
  for (int32_t i = 0; i < np; i++) {
    char name[64];
    snprintf(name, sizeof name, "grad_%s", names[i]);
    save(model, name, optic_literal_element(r, i + 1));
    optic_literal_destroy(args[i]);
  }
  optic_literal_destroy(r);
}

/* mean over the batch of |tanh(x w1 + b1) w2 + b2 - t|^2 */
static void mlp(void) {
  ev_fresh();
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 2, (int64_t[]){8, 5}),
                w1 = ev_param(ev_main, 1, OPTIC_F32, 2, (int64_t[]){5, 16}),
                b1 = ev_param(ev_main, 2, OPTIC_F32, 1, (int64_t[]){16}),
                w2 = ev_param(ev_main, 3, OPTIC_F32, 2, (int64_t[]){16, 3}),
                b2 = ev_param(ev_main, 4, OPTIC_F32, 1, (int64_t[]){3}),
                t = ev_param(ev_main, 5, OPTIC_F32, 2, (int64_t[]){8, 3}), h, o, e;
  OT_EXPECT_OK(optic_graph_unary(ev_m, ev_main, OPTIC_OP_TANH, bias(dense(x, w1), b1, 1), NULL, &h));
  o = bias(dense(h, w2), b2, 1);
  e = bin(OPTIC_OP_SUBTRACT, o, t);
  ev_root(ev_main, bin(OPTIC_OP_MULTIPLY, sum_all(bin(OPTIC_OP_MULTIPLY, e, e)), f32_scalar(0.125f)));
  static const char *const names[] = {"x", "w1", "b1", "w2", "b2", "t"};
  run_and_save("mlp", names, 6);
}

/* NHWC conv 3x3 same + bias -> relu -> 2x2 max pool stride 2 -> dense ->
 * sum of squares. */
static void conv_block(void) {
  ev_fresh();
  optic_comp_id mx = ev_binary_comp("max", OPTIC_OP_MAXIMUM, OPTIC_F32);
  optic_node_id x = ev_param(ev_main, 0, OPTIC_F32, 4, (int64_t[]){2, 8, 8, 3}),
                k = ev_param(ev_main, 1, OPTIC_F32, 4, (int64_t[]){3, 3, 3, 4}),
                b = ev_param(ev_main, 2, OPTIC_F32, 1, (int64_t[]){4}),
                w = ev_param(ev_main, 3, OPTIC_F32, 2, (int64_t[]){64, 2}), y, z, p, ninf, f;
  optic_window_dim cw[2] = {
      {.size = 3, .stride = 1, .pad_low = 1, .pad_high = 1, .base_dilation = 1, .window_dilation = 1},
      {.size = 3, .stride = 1, .pad_low = 1, .pad_high = 1, .base_dilation = 1, .window_dilation = 1}};
  OT_EXPECT_OK(optic_graph_convolution(ev_m, ev_main, x, k, "b01f_01io->b01f", cw, 1, 1, NULL, &y));
  y = bias(y, b, 3);
  OT_EXPECT_OK(
      optic_graph_broadcast(ev_m, ev_main, f32_scalar(0), &optic_node_type(ev_m, y)->shape, NULL, 0, NULL, &z));
  y = bin(OPTIC_OP_MAXIMUM, y, z);
  optic_window_dim pw[4] = {
      {1, 1, 0, 0, 1, 1, false}, {2, 2, 0, 0, 1, 1, false}, {2, 2, 0, 0, 1, 1, false}, {1, 1, 0, 0, 1, 1, false}};
  ninf = f32_scalar(-INFINITY);
  OT_EXPECT_OK(optic_graph_reduce_window(ev_m, ev_main, &y, &ninf, 1, pw, mx, NULL, &p));
  OT_EXPECT_OK(optic_graph_reshape(ev_m, ev_main, p, &(optic_shape){2, {2, 64}}, NULL, &f));
  f = dense(f, w);
  ev_root(ev_main, sum_all(bin(OPTIC_OP_MULTIPLY, f, f)));
  static const char *const names[] = {"x", "k", "b", "w"};
  run_and_save("conv", names, 4);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  mlp();
  conv_block();
  return ot_failures_ ? 2 : 0;
}
