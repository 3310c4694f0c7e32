/* `optic compile FILE.hlo [--opt none|basic|full] [--machine NAME|FILE.json]
 * [--threads N] [--no-fusion] [--json]`: imports an HLO text module, compiles it
 * (optic_compile) and prints the optimized module with every scheduled
 * instruction's cost, estimated time and buffer, each computation's buffer
 * plan totals, peak memory and the estimated time (optic_program_to_text,
 * format in docs/compile.md), or all of that as JSON. Exit codes: 0 ok,
 * 1 parse/compile/machine-file error (message on stderr), 2 usage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/json.h"
#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic compile FILE.hlo [--opt none|basic|full] [--machine NAME|FILE.json] [--threads N]\n"
          "                     [--no-fusion] [--json]\n"
          "       optic compile --help\n\n"
          "Reads XLA HLO text (FILE '-' reads stdin), compiles it and prints the optimized\n"
          "module as HLO text with a comment after every scheduled instruction (flops,\n"
          "transcendentals, bytes accessed, estimated ns, buffer), the buffer plan totals of\n"
          "every scheduled computation, the program's peak memory and estimated time.\n\n"
          "  --opt LEVEL      none, basic (dce, cse) or full (default: also fold, simplify, fusion)\n"
          "  --machine M      time model: host (default: $OPTIC_MACHINE, else\n"
          "                   ~/.config/optic/machine.json from `optic calibrate`, else defaults),\n"
          "                   a preset (");
  for (int32_t i = 0; i < optic_machine_preset_count(); i++)
    fprintf(out, "%s%s", i ? ", " : "", optic_machine_preset_name(i));
  fprintf(out,
          "),\n"
          "                   or a machine JSON file (a path containing '/' or ending in .json)\n"
          "  --threads N      estimate for a run on N threads: the model of N of the machine's\n"
          "                   cores (compute and cache scale with N, DRAM = min(all cores, N x\n"
          "                   core_dram_bandwidth)); 0 (default) = all its cores, more = all\n"
          "  --no-fusion      do not run the fusion pass\n"
          "  --json           one JSON object instead of the text (see docs/compile.md)\n\n"
          "Exit codes: 0 ok, 1 parse, compile or machine-file error (message on stderr), 2 usage error.\n");
}

static void json_number(optic_json *j, const char *key, double v) {
  optic_json_key(j, key);
  if (v == floor(v) && fabs(v) < 9007199254740992.0) optic_json_int(j, (int64_t)v);
  else optic_json_double(j, v);
}

static const char *kind_name(optic_buffer_kind k) {
  switch (k) {
    case OPTIC_BUFFER_ARENA: return "arena";
    case OPTIC_BUFFER_PARAMETER: return "parameter";
    case OPTIC_BUFFER_CONSTANT: return "constant";
    case OPTIC_BUFFER_OUTPUT: return "output";
  }
  return "?";
}

static void json_machine(optic_json *j, const optic_machine *mc) {
  optic_json_key(j, "machine");
  optic_json_begin_object(j);
  optic_json_key(j, "name"), optic_json_string(j, mc->name);
  json_number(j, "peak_flops", mc->peak_flops);
  json_number(j, "peak_transcendentals", mc->peak_transcendentals);
  json_number(j, "dram_bandwidth", mc->dram_bandwidth);
  json_number(j, "core_dram_bandwidth", mc->core_dram_bandwidth);
  json_number(j, "cache_bandwidth", mc->cache_bandwidth);
  json_number(j, "cache_bytes", mc->cache_bytes);
  json_number(j, "llc_bandwidth", mc->llc_bandwidth);
  json_number(j, "core_llc_bandwidth", mc->core_llc_bandwidth);
  json_number(j, "llc_bytes", mc->llc_bytes);
  json_number(j, "op_overhead_ns", mc->op_overhead_ns);
  optic_json_key(j, "cores"), optic_json_int(j, mc->cores);
  optic_json_key(j, "source"), optic_json_string(j, mc->source);
  optic_json_end_object(j);
}

/* One scheduled computation: its plan totals and its instructions in order. */
static optic_status json_computation(optic_json *j, const optic_program_t *p, optic_comp_id c) {
  const optic_module_t *m = optic_program_module(p);
  const optic_buffer_plan_t *plan = optic_program_buffers(p, c);
  const optic_schedule_t *s = optic_program_schedule(p, c);
  optic_memory_estimate mem;
  optic_status st = optic_buffer_plan_memory(plan, &mem);
  if (st != OPTIC_OK) return st;
  int32_t n = 0;
  const optic_node_id *order = optic_schedule_order(s, &n);
  optic_cost total = {0, 0, 0};
  double est = 0;
  optic_json_begin_object(j);
  optic_json_key(j, "name"), optic_json_string(j, optic_computation_name(m, c));
  optic_json_key(j, "instructions");
  optic_json_begin_array(j);
  for (int32_t i = 0; i < n; i++) {
    optic_node_estimate e;
    if ((st = optic_program_node_estimate(p, order[i], &e)) != OPTIC_OK) return st;
    total.flops += e.cost.flops, total.transcendentals += e.cost.transcendentals;
    total.bytes_accessed += e.cost.bytes_accessed, est += e.est_ns;
    optic_json_begin_object(j);
    optic_json_key(j, "name"), optic_json_string(j, optic_node_name(m, order[i]));
    optic_json_key(j, "opcode"), optic_json_string(j, optic_opcode_name(optic_node_opcode(m, order[i])));
    json_number(j, "flops", e.cost.flops);
    json_number(j, "transcendentals", e.cost.transcendentals);
    json_number(j, "bytes_accessed", e.cost.bytes_accessed);
    json_number(j, "est_ns", e.est_ns);
    optic_json_key(j, "buffers");
    optic_json_begin_array(j);
    for (int32_t k = 0; k < optic_buffer_plan_leaf_count(plan, order[i]); k++) {
      optic_buffer_slot b;
      if ((st = optic_buffer_plan_slot(plan, order[i], k, &b)) != OPTIC_OK) return st;
      optic_json_begin_object(j);
      optic_json_key(j, "kind"), optic_json_string(j, kind_name(b.kind));
      optic_json_key(j, "offset"), optic_json_uint(j, b.offset);
      optic_json_key(j, "size"), optic_json_uint(j, b.size);
      optic_json_key(j, "source"), optic_json_string(j, optic_node_name(m, b.source));
      if (b.kind == OPTIC_BUFFER_OUTPUT) optic_json_key(j, "output_leaf"), optic_json_int(j, b.output_leaf);
      if (b.in_place_of != OPTIC_NO_NODE)
        optic_json_key(j, "in_place_of"), optic_json_string(j, optic_node_name(m, b.in_place_of));
      optic_json_end_object(j);
    }
    optic_json_end_array(j);
    optic_json_end_object(j);
  }
  optic_json_end_array(j);
  json_number(j, "flops", total.flops);
  json_number(j, "transcendentals", total.transcendentals);
  json_number(j, "bytes_accessed", total.bytes_accessed);
  json_number(j, "est_ns", est);
  optic_json_key(j, "arena_bytes"), optic_json_uint(j, mem.arena_bytes);
  optic_json_key(j, "parameter_bytes"), optic_json_uint(j, mem.parameter_bytes);
  optic_json_key(j, "output_bytes"), optic_json_uint(j, mem.output_bytes);
  optic_json_key(j, "constant_bytes"), optic_json_uint(j, mem.constant_bytes);
  optic_json_key(j, "schedule_peak_bytes"), optic_json_uint(j, optic_schedule_peak_bytes(s));
  optic_json_end_object(j);
  return OPTIC_OK;
}

static int print_json(const optic_program_t *p, const char *level, const char *fusion) {
  const optic_module_t *m = optic_program_module(p);
  optic_program_summary s;
  optic_status st = optic_program_summary_get(p, &s);
  optic_json j;
  optic_json_init(&j, false);
  optic_json_begin_object(&j);
  optic_json_key(&j, "module"), optic_json_string(&j, optic_module_name(m));
  optic_json_key(&j, "entry"), optic_json_string(&j, optic_computation_name(m, optic_program_entry(p)));
  optic_json_key(&j, "level"), optic_json_string(&j, level);
  optic_json_key(&j, "fusion"), optic_json_string(&j, fusion);
  json_machine(&j, optic_program_machine(p));
  json_number(&j, "flops", s.cost.flops);
  json_number(&j, "transcendentals", s.cost.transcendentals);
  json_number(&j, "bytes_accessed", s.cost.bytes_accessed);
  json_number(&j, "est_ns", s.est_ns);
  optic_json_key(&j, "instructions"), optic_json_int(&j, s.instructions);
  optic_json_key(&j, "fusions"), optic_json_int(&j, s.fusions);
  optic_json_key(&j, "arena_bytes"), optic_json_uint(&j, s.memory.arena_bytes);
  optic_json_key(&j, "parameter_bytes"), optic_json_uint(&j, s.memory.parameter_bytes);
  optic_json_key(&j, "output_bytes"), optic_json_uint(&j, s.memory.output_bytes);
  optic_json_key(&j, "constant_bytes"), optic_json_uint(&j, s.memory.constant_bytes);
  optic_json_key(&j, "peak_bytes"), optic_json_uint(&j, s.peak_bytes);
  optic_json_key(&j, "compile_seconds"), optic_json_double(&j, s.compile_seconds);
  optic_json_key(&j, "passes");
  optic_json_begin_object(&j);
  optic_json_key(&j, "rounds"), optic_json_int(&j, s.passes.rounds);
  optic_json_key(&j, "instructions_before"), optic_json_int(&j, s.passes.instructions_before);
  optic_json_key(&j, "instructions_after"), optic_json_int(&j, s.passes.instructions_after);
  for (int k = 0; k < OPTIC_PASS_COUNT_; k++) {
    const optic_pass_stat *ps = &s.passes.pass[k];
    optic_json_key(&j, optic_pass_name((optic_pass)k));
    optic_json_begin_object(&j);
    optic_json_key(&j, "runs"), optic_json_int(&j, ps->runs);
    optic_json_key(&j, "removed"), optic_json_int(&j, ps->removed);
    optic_json_key(&j, "replaced"), optic_json_int(&j, ps->replaced);
    optic_json_end_object(&j);
  }
  optic_json_end_object(&j);
  optic_json_key(&j, "computations");
  optic_json_begin_array(&j);
  for (optic_comp_id c = 0; c < optic_module_computation_count(m) && st == OPTIC_OK; c++) {
    if (optic_program_buffers(p, c) != NULL) st = json_computation(&j, p, c);
  }
  optic_json_end_array(&j);
  optic_json_end_object(&j);
  const char *text;
  size_t len;
  int rc = OPTIC_EXIT_OK;
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic compile: %s\n", optic_last_error());
    rc = OPTIC_EXIT_ERROR;
  } else if (optic_json_finish(&j, &text, &len) != OPTIC_OK) {
    fprintf(stderr, "optic compile: cannot write JSON: %s\n", optic_last_error());
    rc = OPTIC_EXIT_ERROR;
  } else {
    fwrite(text, 1, len, stdout);
    putchar('\n');
  }
  optic_json_free(&j);
  return rc;
}

/* The machine named on the command line: 2 for an unknown name (usage), 1
 * for a file or host model that fails to load, 0 ok. */
static int pick_machine(const char *name, optic_machine *out) {
  if (strcmp(name, "host") == 0) {
    if (optic_machine_host(out) == OPTIC_OK) return OPTIC_EXIT_OK;
  } else if (strchr(name, '/') != NULL || (strlen(name) > 5 && strcmp(name + strlen(name) - 5, ".json") == 0)) {
    if (optic_machine_load(name, out) == OPTIC_OK) return OPTIC_EXIT_OK;
  } else {
    if (optic_machine_preset(name, out) == OPTIC_OK) return OPTIC_EXIT_OK;
    fprintf(stderr, "optic compile: --machine: %s (or 'host', or a machine JSON file)\n", optic_last_error());
    return OPTIC_EXIT_USAGE;
  }
  fprintf(stderr, "optic compile: %s\n", optic_last_error());
  return OPTIC_EXIT_ERROR;
}

/* long: the command's options, then its steps in order, with one exit path */
int optic_cmd_compile(int argc, char **argv) {
  const char *path = NULL, *machine_name = "host", *level_name = "full";
  bool json = false, no_fusion = false;
  optic_opt_level level = OPTIC_OPT_FULL;
  int32_t threads = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return OPTIC_EXIT_OK;
    }
    if (strcmp(a, "--json") == 0) {
      json = true;
    } else if (strcmp(a, "--no-fusion") == 0) {
      no_fusion = true;
    } else if (strcmp(a, "--opt") == 0 || strcmp(a, "--machine") == 0 || strcmp(a, "--threads") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "optic compile: %s needs a value\n", a);
        usage(stderr);
        return OPTIC_EXIT_USAGE;
      }
      const char *v = argv[++i];
      if (strcmp(a, "--machine") == 0) {
        machine_name = v;
      } else if (strcmp(a, "--threads") == 0) {
        char *end = NULL;
        long t = strtol(v, &end, 10);
        if (end == v || *end != '\0' || t < 0 || t > 1000000) {
          fprintf(stderr, "optic compile: --threads '%s': expected a whole number >= 0\n", v);
          usage(stderr);
          return OPTIC_EXIT_USAGE;
        }
        threads = (int32_t)t;
      } else if (strcmp(v, "none") == 0 || strcmp(v, "basic") == 0 || strcmp(v, "full") == 0) {
        level_name = v;
        level = v[0] == 'n' ? OPTIC_OPT_NONE : v[0] == 'b' ? OPTIC_OPT_BASIC : OPTIC_OPT_FULL;
      } else {
        fprintf(stderr, "optic compile: --opt '%s': expected none, basic or full\n", v);
        usage(stderr);
        return OPTIC_EXIT_USAGE;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "optic compile: unknown option '%s'\n", a);
      usage(stderr);
      return OPTIC_EXIT_USAGE;
    } else if (path != NULL) {
      fprintf(stderr, "optic compile: more than one file ('%s' and '%s')\n", path, a);
      usage(stderr);
      return OPTIC_EXIT_USAGE;
    } else {
      path = a;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "optic compile: no HLO file given\n");
    usage(stderr);
    return OPTIC_EXIT_USAGE;
  }
  optic_machine machine;
  int rc = pick_machine(machine_name, &machine);
  if (rc != OPTIC_EXIT_OK) return rc;
  optic_module_t *m = NULL;
  if (optic_cli_load_hlo(path, &m) != OPTIC_OK) {
    fprintf(stderr, "optic compile: %s\n", optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  optic_compile_options o = optic_compile_options_default();
  o.level = level;
  o.machine = &machine;
  o.threads = threads;
  if (no_fusion) o.fusion = 0;
  optic_program_t *p = NULL;
  optic_status st = optic_compile(m, &o, &p);
  optic_module_destroy(m);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic compile: %s\n", optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  const char *fusion = no_fusion ? "off" : level == OPTIC_OPT_FULL ? "on" : "off";
  if (json) {
    rc = print_json(p, level_name, fusion);
  } else {
    char *text = NULL;
    if (optic_program_to_text(p, &text) != OPTIC_OK) {
      fprintf(stderr, "optic compile: %s\n", optic_last_error());
      rc = OPTIC_EXIT_ERROR;
    } else {
      optic_program_summary s;
      optic_program_summary_get(p, &s);
      fputs(text, stdout);
      printf("// compile_seconds=%.6f\n", s.compile_seconds);
    }
    optic_string_free(text);
  }
  optic_program_destroy(p);
  if (rc == OPTIC_EXIT_OK && fflush(stdout) != 0) {
    fprintf(stderr, "optic compile: cannot write the output\n");
    rc = OPTIC_EXIT_ERROR;
  }
  return rc;
}
