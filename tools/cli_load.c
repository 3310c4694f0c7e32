/* Shared by the subcommands that read an HLO module: a path, or "-" for
 * standard input read to the end. Errors come back as a status with the
 * message in optic_last_error(); nothing is printed here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/cli.h"

optic_status optic_cli_load_hlo(const char *path, optic_module_t **m) {
  if (strcmp(path, "-") != 0) return optic_module_from_hlo_file(path, m);
  size_t cap = 1 << 16, len = 0;
  char *text = NULL;
  for (;;) {
    char *t = realloc(text, cap);
    if (t == NULL) {
      free(text);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "out of memory reading %zu bytes of HLO text from stdin", cap);
    }
    text = t;
    len += fread(text + len, 1, cap - len, stdin);
    if (len < cap) break;
    cap *= 2;
  }
  optic_status st = optic_module_from_hlo_text(text, len, m);
  free(text);
  return st;
}
