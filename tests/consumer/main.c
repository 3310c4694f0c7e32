/* A program outside the optic tree: uses only the installed umbrella header and
 * library, and checks that what it links works: version, shapes, CPU, BLAS, and
 * a small graph built, compiled and run, out = (a + b) * a on two f32[4]
 * parameters, compared element by element with the same float arithmetic here. */
#include <optic/optic.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, optic_last_error());
  return 1;
}

/* Builds, compiles and runs the graph; 0 when every output element is right. */
static int run_graph(void) {
  int64_t dims[] = {4};
  optic_shape s;
  if (optic_shape_make(1, dims, &s) != OPTIC_OK) return fail("shape f32[4]");
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_module_t *m = NULL;
  optic_comp_id c;
  optic_node_id a, b, sum, out;
  if (optic_module_create("consumer", &m) != OPTIC_OK || optic_module_add_computation(m, "main", &c) != OPTIC_OK ||
      optic_graph_parameter(m, c, 0, &t, "a", &a) != OPTIC_OK ||
      optic_graph_parameter(m, c, 1, &t, "b", &b) != OPTIC_OK ||
      optic_graph_binary(m, c, OPTIC_OP_ADD, a, b, "sum", &sum) != OPTIC_OK ||
      optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, sum, a, "out", &out) != OPTIC_OK ||
      optic_computation_set_root(m, c, out) != OPTIC_OK || optic_module_set_entry(m, c) != OPTIC_OK) {
    optic_module_destroy(m);
    return fail("building (a + b) * a");
  }
  float av[4] = {1.5f, -2.0f, 3.25f, 0.0f}, bv[4] = {0.25f, 5.0f, -1.0f, 7.0f}, ov[4] = {0};
  optic_tensor in[2], res;
  optic_machine machine;
  optic_compile_options opts = optic_compile_options_default();
  opts.machine = &machine; /* the conservative preset: nothing may depend on a machine file in ~ */
  optic_program_t *program = NULL;
  optic_exec_ctx_t *ctx = NULL;
  const char *what = NULL;
  if (optic_machine_preset("host-default", &machine) != OPTIC_OK) what = "machine preset";
  else if (optic_compile(m, &opts, &program) != OPTIC_OK) what = "compiling (a + b) * a";
  else if (optic_exec_ctx_create(NULL, &ctx) != OPTIC_OK) what = "execution context";
  else if (optic_tensor_make(OPTIC_F32, &s, av, &in[0]) != OPTIC_OK ||
           optic_tensor_make(OPTIC_F32, &s, bv, &in[1]) != OPTIC_OK ||
           optic_tensor_make(OPTIC_F32, &s, ov, &res) != OPTIC_OK)
    what = "tensors";
  else if (optic_program_run(program, ctx, in, 2, &res, 1) != OPTIC_OK) what = "running (a + b) * a";
  int rc = what ? fail(what) : 0;
  for (int i = 0; i < 4 && !what; i++) {
    float want = (av[i] + bv[i]) * av[i];
    if (ov[i] != want) {
      fprintf(stderr, "consumer: (a + b) * a element %d: got %g, want %g\n", i, (double)ov[i], (double)want);
      rc = 1;
    }
  }
  if (rc == 0)
    printf("consumer: (a + b) * a = [%g %g %g %g]\n", (double)ov[0], (double)ov[1], (double)ov[2], (double)ov[3]);
  optic_exec_ctx_destroy(ctx);
  optic_program_destroy(program);
  optic_module_destroy(m);
  return rc;
}

int main(void) {
  if (strcmp(optic_version(), OPTIC_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header version %s, library %s\n", OPTIC_VERSION_STRING, optic_version());
    return 1;
  }
  int64_t dims[] = {3, 4};
  optic_shape s;
  size_t bytes = 0;
  if (optic_shape_make(2, dims, &s) != OPTIC_OK || optic_shape_bytes(&s, OPTIC_F32, &bytes) != OPTIC_OK ||
      bytes != 48) {
    fprintf(stderr, "consumer: shape bytes %zu: %s\n", bytes, optic_last_error());
    return 1;
  }
  int64_t neg[] = {-1};
  if (optic_shape_make(1, neg, &s) != OPTIC_ERR_INVALID_ARGUMENT || optic_last_error()[0] == '\0') {
    fprintf(stderr, "consumer: invalid shape not reported\n");
    return 1;
  }
  optic_blas_info blas;
  if (optic_blas_get_info(&blas) != OPTIC_OK || blas.corename == NULL) {
    fprintf(stderr, "consumer: no BLAS info\n");
    return 1;
  }
  if (run_graph() != 0) return 1;
  printf("consumer ok: optic %s, isa %s, openblas core %s, %s\n", optic_version(), optic_isa_name(optic_isa_selected()),
         blas.corename, optic_ckpt_crypto_version());
  return 0;
}
