/* Writes a small deterministic checkpoint for the CLI test and the fuzz seed
 * corpus: `ckpt_write_fixture STEP DIR...` saves step STEP (the entries and
 * metadata of tests/ckpt/ckpt_fixture.h) into every DIR as
 * DIR/ckpt-<20 digits>.optic, with a 64 KiB hash chunk. STEP 0 writes a
 * checkpoint with no entries and no metadata. */
#include <stdio.h>
#include <stdlib.h>

#include <optic/optic.h>

#include "tests/ckpt/ckpt_fixture.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s STEP DIR...\n", argv[0]);
    return 2;
  }
  unsigned long long step = strtoull(argv[1], NULL, 10);
  static ckpt_fixture f;
  ckpt_fixture_fill(&f, step);
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = 16};
  size_t ne = step == 0 ? 0 : FIXTURE_ENTRIES, nm = step == 0 ? 0 : FIXTURE_META;
  if (optic_ckpt_save((const char *const *)argv + 2, (size_t)(argc - 2), step, f.e, ne, f.m, nm, &o) != OPTIC_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], optic_last_error());
    return 1;
  }
  return 0;
}
