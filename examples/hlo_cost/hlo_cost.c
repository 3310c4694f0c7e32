/* hlo_cost: reads an HLO text file, compiles it once per machine model (the
 * calibrated or default host, then TPU v4 and v5e presets) and prints its
 * costs and estimated time on each. Uses only the installed public API. */
#include <optic/optic.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "hlo_cost: %s: %s\n", what, optic_last_error());
  return 1;
}

static void print_time(double ns) {
  if (ns >= 1e6) printf("%10.3f ms", ns / 1e6);
  else if (ns >= 1e3) printf("%10.3f us", ns / 1e3);
  else printf("%10.1f ns", ns);
}

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr,
            "usage: hlo_cost FILE.hlo\n"
            "prints the module's FLOPs, transcendentals, bytes and peak memory, and its\n"
            "estimated time on the host model and on the tpu-v4 and tpu-v5e presets\n");
    return 2;
  }
  optic_module_t *module = NULL;
  if (optic_module_from_hlo_file(argv[1], &module) != OPTIC_OK) return fail("reading the HLO file");

  optic_machine machines[3];
  if (optic_machine_host(&machines[0]) != OPTIC_OK) {
    optic_module_destroy(module);
    return fail("host machine model");
  }
  if (optic_machine_preset("tpu-v4", &machines[1]) != OPTIC_OK ||
      optic_machine_preset("tpu-v5e", &machines[2]) != OPTIC_OK) {
    optic_module_destroy(module);
    return fail("machine preset");
  }

  optic_cost raw;
  if (optic_computation_cost(module, optic_module_entry(module), &raw) != OPTIC_OK) {
    optic_module_destroy(module);
    return fail("cost of the entry computation");
  }
  printf("module %s (%s)\n", optic_module_name(module), argv[1]);
  printf("as written:  %.6g flops, %.6g transcendentals, %.6g bytes accessed\n", raw.flops, raw.transcendentals,
         raw.bytes_accessed);
  printf("%-10s %14s %14s %14s %12s %5s %13s  %s\n", "machine", "flops", "transcend.", "bytes", "peak bytes", "ops",
         "est. time", "model source");
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    optic_compile_options opts = optic_compile_options_default();
    opts.machine = &machines[i];
    optic_program_t *program = NULL;
    optic_program_summary s;
    if (optic_compile(module, &opts, &program) != OPTIC_OK || optic_program_summary_get(program, &s) != OPTIC_OK) {
      rc = fail(machines[i].name);
      optic_program_destroy(program);
      break;
    }
    printf("%-10s %14.6g %14.6g %14.6g %12zu %5lld ", machines[i].name, s.cost.flops, s.cost.transcendentals,
           s.cost.bytes_accessed, s.peak_bytes, (long long)s.instructions);
    print_time(s.est_ns);
    printf("  %s\n", machines[i].source);
    optic_program_destroy(program);
  }
  optic_module_destroy(module);
  return rc;
}
