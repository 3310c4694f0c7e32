/* Choice of the kernels' instruction set: the best the CPU supports, capped by
 * OPTIC_ISA. Chosen once under a lock, observable (note), resettable for tests
 * (the BLIS_ARCH_TYPE / DNNL_MAX_CPU_ISA pattern). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *const isa_names[OPTIC_ISA_COUNT_] = {"scalar", "avx2", "avx512", "neon"};

const char *optic_isa_name(optic_isa isa) {
  if ((unsigned)isa >= OPTIC_ISA_COUNT_) return "invalid";
  return isa_names[isa];
}

static bool parse_isa(const char *name, optic_isa *out) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    if (strcmp(name, isa_names[i]) == 0) {
      *out = (optic_isa)i;
      return true;
    }
  }
  return false;
}

optic_status optic_isa_from_name(const char *name, optic_isa *out) {
  if (name == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "isa_from_name: NULL argument");
  if (parse_isa(name, out)) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "isa_from_name: unknown ISA '%.32s' (known: scalar, avx2, avx512, neon)", name);
}

bool optic_isa_supported(optic_isa isa) {
  const optic_cpu_info *c = optic_cpu_info_get();
  switch (isa) {
    case OPTIC_ISA_SCALAR: return true;
    case OPTIC_ISA_AVX2: return OPTIC_CPU_HAS(c, AVX2) && OPTIC_CPU_HAS(c, FMA);
    case OPTIC_ISA_AVX512:
      return OPTIC_CPU_HAS(c, AVX2) && OPTIC_CPU_HAS(c, FMA) && OPTIC_CPU_HAS(c, AVX512F) &&
             OPTIC_CPU_HAS(c, AVX512BW) && OPTIC_CPU_HAS(c, AVX512VL) && OPTIC_CPU_HAS(c, AVX512DQ);
    case OPTIC_ISA_NEON: return OPTIC_CPU_HAS(c, NEON);
    default: return false;
  }
}

optic_isa optic_isa_best(void) {
  static const optic_isa order[] = {OPTIC_ISA_AVX512, OPTIC_ISA_AVX2, OPTIC_ISA_NEON};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (optic_isa_supported(order[i])) return order[i];
  }
  return OPTIC_ISA_SCALAR;
}

/* Same architecture family: a cap naming the other family's ISA caps to scalar. */
static bool is_x86_isa(optic_isa i) { return i == OPTIC_ISA_AVX2 || i == OPTIC_ISA_AVX512; }

static pthread_mutex_t select_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int selected = -1; /* -1: not chosen yet */
static char note[160];

static void choose_locked(void) {
  optic_isa best = optic_isa_best();
  optic_isa pick = best;
  const char *env = getenv("OPTIC_ISA");
  optic_isa cap;
  if (env == NULL || env[0] == '\0') {
    snprintf(note, sizeof note, "best supported: %s", optic_isa_name(best));
  } else if (!parse_isa(env, &cap)) {
    snprintf(note, sizeof note, "OPTIC_ISA='%.32s' is not scalar|avx2|avx512|neon; ignored, using %s", env,
             optic_isa_name(best));
  } else if (cap != OPTIC_ISA_SCALAR && best != OPTIC_ISA_SCALAR && is_x86_isa(cap) != is_x86_isa(best)) {
    pick = OPTIC_ISA_SCALAR;
    snprintf(note, sizeof note, "OPTIC_ISA=%s is not an ISA of this CPU (best %s); capped to scalar", env,
             optic_isa_name(best));
  } else if (cap < best || (cap == OPTIC_ISA_SCALAR)) {
    pick = cap;
    snprintf(note, sizeof note, "OPTIC_ISA=%s caps %s to %s", env, optic_isa_name(best), optic_isa_name(pick));
  } else {
    snprintf(note, sizeof note, "OPTIC_ISA=%s allows %s (best supported)", env, optic_isa_name(best));
  }
  atomic_store_explicit(&selected, (int)pick, memory_order_release);
}

optic_isa optic_isa_selected(void) {
  int s = atomic_load_explicit(&selected, memory_order_acquire);
  if (s >= 0) return (optic_isa)s;
  pthread_mutex_lock(&select_lock);
  if (atomic_load_explicit(&selected, memory_order_relaxed) < 0) choose_locked();
  pthread_mutex_unlock(&select_lock);
  return (optic_isa)atomic_load_explicit(&selected, memory_order_acquire);
}

const char *optic_isa_selection_note(void) {
  optic_isa_selected();
  return note;
}

void optic_isa_reselect(void) {
  pthread_mutex_lock(&select_lock);
  choose_locked();
  pthread_mutex_unlock(&select_lock);
}
