/* libFuzzer target for the HLO text importer. Anything that imports must
 * print, import again to the same text, and cost without crashing. Built by
 * the fuzz preset (`make fuzz`, docs/fuzzing.md) and, everywhere else, as the
 * corpus replay test fuzz_hlo_parse_replay (tests/fuzz/replay_main.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  optic_module_t *m = NULL;
  if (optic_module_from_hlo_text((const char *)data, size, &m) != OPTIC_OK) return 0;
  char *t = NULL, *t2 = NULL;
  if (optic_module_to_hlo_text(m, &t) != OPTIC_OK) abort();
  optic_module_t *m2 = NULL;
  if (optic_module_from_hlo_text(t, strlen(t), &m2) != OPTIC_OK) abort();
  if (optic_module_to_hlo_text(m2, &t2) != OPTIC_OK || strcmp(t, t2) != 0) abort();
  optic_cost c;
  optic_computation_cost(m, optic_module_entry(m), &c);
  optic_string_free(t);
  optic_string_free(t2);
  optic_module_destroy(m2);
  optic_module_destroy(m);
  return 0;
}
