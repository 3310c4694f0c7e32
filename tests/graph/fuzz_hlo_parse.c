/* libFuzzer target for the HLO text importer (not part of ctest: it needs
 * clang's -fsanitize=fuzzer). Anything that imports must print, import again
 * to the same text, and cost without crashing. Build against an asan build,
 * with the graph sources instrumented for coverage, and run on the reference
 * modules as the seed corpus:
 *
 *   cmake --preset asan && cmake --build --preset asan
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -DOPTIC_BUILDING -I. -Iinclude \
 *     -Ibuild/asan/include tests/graph/fuzz_hlo_parse.c graph/[a-z]*.c build/asan/liboptic.a -fopenmp \
 *     -L/usr/lib/x86_64-linux-gnu/openblas-openmp -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-openmp \
 *     -lopenblas -lcrypto -lm $(mpicc --showme:link) -o fuzz_hlo_parse
 *   mkdir -p corpus && cp tests/data/hlo/[a-z]*.hlo corpus/ && ./fuzz_hlo_parse -max_len=4096 -max_total_time=600 corpus
 */
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
  free(t);
  free(t2);
  optic_module_destroy(m2);
  optic_module_destroy(m);
  return 0;
}
