/* Writes a small deterministic checkpoint for the CLI test and the fuzz seed
 * corpus: `ckpt_write_fixture STEP DIR...` saves step STEP (entries
 * embedding f32[64,16], layer0/w f32[16,16], layer0/b f32[16], step s32[],
 * mask pred[10]; metadata step, optimizer, rng as 8 binary bytes) into every
 * DIR as DIR/ckpt-<20 digits>.optic, with a 64 KiB hash chunk. STEP 0 writes
 * a checkpoint with no entries and no metadata. */
#include <stdio.h>
#include <stdlib.h>

#include <optic/optic.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s STEP DIR...\n", argv[0]);
    return 2;
  }
  unsigned long long step = strtoull(argv[1], NULL, 10);
  static float emb[64 * 16], w[16 * 16], b[16];
  int32_t s = (int32_t)step;
  uint8_t mask[10];
  for (int i = 0; i < 64 * 16; i++) emb[i] = (float)((i * 7 + (int)step) % 101) / 8.0f;
  for (int i = 0; i < 16 * 16; i++) w[i] = (float)(i % 13) - 6.0f;
  for (int i = 0; i < 16; i++) b[i] = 0.5f * (float)i;
  for (int i = 0; i < 10; i++) mask[i] = (uint8_t)(i % 3 == 0);
  optic_ckpt_entry e[] = {
      {"embedding", {OPTIC_F32, {.rank = 2, .dims = {64, 16}}, emb}},
      {"layer0/w", {OPTIC_F32, {.rank = 2, .dims = {16, 16}}, w}},
      {"layer0/b", {OPTIC_F32, {.rank = 1, .dims = {16}}, b}},
      {"step", {OPTIC_S32, {.rank = 0}, &s}},
      {"mask", {OPTIC_PRED, {.rank = 1, .dims = {10}}, mask}},
  };
  char text[32];
  snprintf(text, sizeof text, "%llu", step);
  const uint8_t rng[8] = {0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15};
  optic_ckpt_meta m[] = {optic_ckpt_meta_str("step", text), optic_ckpt_meta_str("optimizer", "adamw"),
                         {"rng", rng, sizeof rng}};
  optic_ckpt_save_options o = {.size = sizeof o, .chunk_log2 = 16};
  size_t ne = step == 0 ? 0 : 5, nm = step == 0 ? 0 : 3;
  if (optic_ckpt_save((const char *const *)argv + 2, (size_t)(argc - 2), step, e, ne, m, nm, &o) != OPTIC_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], optic_last_error());
    return 1;
  }
  return 0;
}
