/* `optic run` engine choice: a table, the first entry is the default;
 * --engine NAME or $OPTIC_RUN_ENGINE picks another by name (the flag wins). */
#include <stdlib.h>
#include <string.h>

#include "tools/run_engine.h"

static const run_engine *const engines[] = {&run_engine_runtime, &run_engine_evaluate};

const run_engine *run_engine_select(const char *want, const char **asked, const char **names) {
  static char known[128];
  known[0] = '\0';
  for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
    if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
    strncat(known, engines[i]->name, sizeof known - strlen(known) - 1);
  }
  *names = known;
  if (want == NULL) want = getenv("OPTIC_RUN_ENGINE");
  *asked = want;
  if (want == NULL || *want == '\0') return engines[0];
  for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
    if (strcmp(engines[i]->name, want) == 0) return engines[i];
  }
  return NULL;
}
