/* `optic cost FILE.hlo [--json]`: imports an HLO text module and prints its
 * unoptimized entry computation's totals with XLA HloCostAnalysis semantics
 * (optic_computation_cost), and with --json the per-instruction counts too
 * (optic_node_cost), in the exact JSON shape. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "core/json.h"
#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic cost FILE.hlo [--json]\n"
          "       optic cost --help\n\n"
          "Reads XLA HLO text (FILE '-' reads stdin) and prints the unoptimized entry\n"
          "computation's flops, transcendentals and bytes accessed, counted with XLA\n"
          "HloCostAnalysis's rules. --json prints\n"
          "  {\"flops\":F,\"transcendentals\":T,\"bytes_accessed\":B,\"instructions\":[\n"
          "    {\"name\":N,\"opcode\":O,\"flops\":F,\"transcendentals\":T,\"bytes_accessed\":B},...]}\n"
          "with one entry per entry-computation instruction in program order.\n"
          "Exit codes: 0 ok, 1 parse or runtime error (message on stderr), 2 usage error.\n");
}

/* Counts are whole numbers below 2^53 in practice: print them as integers. */
static void json_count(optic_json *j, const char *key, double v) {
  optic_json_key(j, key);
  if (v == floor(v) && fabs(v) < 9007199254740992.0) optic_json_int(j, (int64_t)v);
  else optic_json_double(j, v);
}

static void json_cost(optic_json *j, const optic_cost *c) {
  json_count(j, "flops", c->flops);
  json_count(j, "transcendentals", c->transcendentals);
  json_count(j, "bytes_accessed", c->bytes_accessed);
}

/* long: the command's options, then its steps in order, with one exit path */
int optic_cmd_cost(int argc, char **argv) {
  const char *path = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return OPTIC_EXIT_OK;
    }
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "optic cost: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return OPTIC_EXIT_USAGE;
    } else if (path != NULL) {
      fprintf(stderr, "optic cost: more than one file ('%s' and '%s')\n", path, argv[i]);
      usage(stderr);
      return OPTIC_EXIT_USAGE;
    } else {
      path = argv[i];
    }
  }
  if (path == NULL) {
    fprintf(stderr, "optic cost: no HLO file given\n");
    usage(stderr);
    return OPTIC_EXIT_USAGE;
  }
  optic_module_t *m = NULL;
  optic_status st = optic_cli_load_hlo(path, &m);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic cost: %s\n", optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  optic_comp_id entry = optic_module_entry(m);
  optic_cost total;
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, entry, &n);
  st = optic_computation_cost(m, entry, &total);
  int rc = OPTIC_EXIT_OK;
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic cost: %s\n", optic_last_error());
    rc = OPTIC_EXIT_ERROR;
  } else if (!json) {
    printf("module           %s\n", optic_module_name(m));
    printf("entry            %s (%d instructions)\n", optic_computation_name(m, entry), (int)n);
    printf("flops            %.17g\n", total.flops);
    printf("transcendentals  %.17g\n", total.transcendentals);
    printf("bytes_accessed   %.17g\n", total.bytes_accessed);
  } else {
    optic_json j;
    optic_json_init(&j, false);
    optic_json_begin_object(&j);
    json_cost(&j, &total);
    optic_json_key(&j, "instructions");
    optic_json_begin_array(&j);
    for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
      optic_cost c;
      if ((st = optic_node_cost(m, ids[i], &c)) != OPTIC_OK) break;
      optic_json_begin_object(&j);
      optic_json_key(&j, "name");
      optic_json_string(&j, optic_node_name(m, ids[i]));
      optic_json_key(&j, "opcode");
      optic_json_string(&j, optic_opcode_name(optic_node_opcode(m, ids[i])));
      json_cost(&j, &c);
      optic_json_end_object(&j);
    }
    optic_json_end_array(&j);
    optic_json_end_object(&j);
    const char *text;
    size_t len;
    if (st != OPTIC_OK) {
      fprintf(stderr, "optic cost: %s\n", optic_last_error());
      rc = OPTIC_EXIT_ERROR;
    } else if (optic_json_finish(&j, &text, &len) != OPTIC_OK) {
      fprintf(stderr, "optic cost: cannot write JSON: %s\n", optic_last_error());
      rc = OPTIC_EXIT_ERROR;
    } else {
      fwrite(text, 1, len, stdout);
      putchar('\n');
    }
    optic_json_free(&j);
  }
  optic_module_destroy(m);
  if (rc == OPTIC_EXIT_OK && fflush(stdout) != 0) {
    fprintf(stderr, "optic cost: cannot write the output\n");
    rc = OPTIC_EXIT_ERROR;
  }
  return rc;
}
