/* optic CLI entry point: dispatches to subcommands. Unknown commands and
 * options print a message and the usage on stderr and exit 2. */
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "tools/cli.h"

static const optic_cli_command commands[] = {
    {"info", "print the library, CPU, ISA, OpenMP, OpenBLAS, OpenSSL and MPI facts", optic_cmd_info},
    {"cost", "count an HLO text module's flops, transcendentals and bytes (XLA's rules)", optic_cmd_cost},
    {"ckpt", "list, verify, show and repair checkpoints (ls DIR | verify FILE... | show FILE | repair DIR...)",
     optic_cmd_ckpt},
    {"compile", "optimize an HLO text module; print it with costs, buffers, peak memory and time", optic_cmd_compile},
    {"calibrate", "measure this host and write the machine model time estimates use", optic_cmd_calibrate},
    {"report", "run the benchmarks; table, JSON and HTML against estimates, bounds and peers", optic_cmd_report},
    {"run", "execute an HLO text module on .npy or generated inputs", optic_cmd_run},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic <command> [options]\n"
          "       optic --help | --version\n\n"
          "commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nRun 'optic <command> --help' for a command's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return OPTIC_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return OPTIC_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("optic %s\n", optic_version());
    return OPTIC_EXIT_OK;
  }
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(cmd, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
  }
  if (cmd[0] == '-') {
    fprintf(stderr, "optic: unknown option '%s'\n", cmd);
  } else {
    fprintf(stderr, "optic: unknown command '%s'\n", cmd);
  }
  usage(stderr);
  return OPTIC_EXIT_USAGE;
}
