/* The optic CLI: one file per subcommand, each exposing a run function that
 * parses its own options and returns the process exit code:
 * 0 ok, 1 runtime error (message on stderr), 2 usage error. */
#ifndef OPTIC_TOOLS_CLI_H
#define OPTIC_TOOLS_CLI_H

#include <optic/optic.h>

#define OPTIC_EXIT_OK 0
#define OPTIC_EXIT_ERROR 1
#define OPTIC_EXIT_USAGE 2

typedef struct optic_cli_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} optic_cli_command;

/* Reads an HLO text module from path, or from stdin when path is "-"
 * (tools/cli_load.c). Status and optic_last_error() on failure. */
optic_status optic_cli_load_hlo(const char *path, optic_module_t **m);

int optic_cmd_info(int argc, char **argv);
int optic_cmd_cost(int argc, char **argv);
int optic_cmd_ckpt(int argc, char **argv);
int optic_cmd_compile(int argc, char **argv);
int optic_cmd_calibrate(int argc, char **argv);
int optic_cmd_report(int argc, char **argv);
int optic_cmd_run(int argc, char **argv);

#endif
