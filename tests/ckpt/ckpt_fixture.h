/* The contents of the small fixture checkpoint (tests/ckpt/write_fixture.c)
 * for a step: entries embedding f32[64,16], layer0/w f32[16,16], layer0/b
 * f32[16], step s32[], mask pred[10]; metadata step (text), optimizer
 * "adamw", rng (8 binary bytes). Shared by the writer and by the test that
 * reads the committed version-1 file (tests/data/ckpt/v1_step7.optic). */
#ifndef OPTIC_TESTS_CKPT_FIXTURE_H
#define OPTIC_TESTS_CKPT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>

#include <optic/optic.h>

enum { FIXTURE_ENTRIES = 5, FIXTURE_META = 3 };

typedef struct ckpt_fixture {
  float emb[64 * 16], w[16 * 16], b[16];
  int32_t step;
  uint8_t mask[10];
  char step_text[32];
  optic_ckpt_entry e[FIXTURE_ENTRIES];
  optic_ckpt_meta m[FIXTURE_META];
} ckpt_fixture;

static const uint8_t ckpt_fixture_rng[8] = {0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15};

/* Fills f for step (f must stay where it is while its entries are used). */
static inline void ckpt_fixture_fill(ckpt_fixture *f, unsigned long long step) {
  for (int i = 0; i < 64 * 16; i++) f->emb[i] = (float)((i * 7 + (int)step) % 101) / 8.0f;
  for (int i = 0; i < 16 * 16; i++) f->w[i] = (float)(i % 13) - 6.0f;
  for (int i = 0; i < 16; i++) f->b[i] = 0.5f * (float)i;
  for (int i = 0; i < 10; i++) f->mask[i] = (uint8_t)(i % 3 == 0);
  f->step = (int32_t)step;
  f->e[0] = (optic_ckpt_entry){"embedding", {OPTIC_F32, {.rank = 2, .dims = {64, 16}}, f->emb}};
  f->e[1] = (optic_ckpt_entry){"layer0/w", {OPTIC_F32, {.rank = 2, .dims = {16, 16}}, f->w}};
  f->e[2] = (optic_ckpt_entry){"layer0/b", {OPTIC_F32, {.rank = 1, .dims = {16}}, f->b}};
  f->e[3] = (optic_ckpt_entry){"step", {OPTIC_S32, {.rank = 0}, &f->step}};
  f->e[4] = (optic_ckpt_entry){"mask", {OPTIC_PRED, {.rank = 1, .dims = {10}}, f->mask}};
  snprintf(f->step_text, sizeof f->step_text, "%llu", step);
  f->m[0] = optic_ckpt_meta_str("step", f->step_text);
  f->m[1] = optic_ckpt_meta_str("optimizer", "adamw");
  f->m[2] = (optic_ckpt_meta){"rng", ckpt_fixture_rng, sizeof ckpt_fixture_rng};
}

#endif
