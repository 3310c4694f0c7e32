/* CPU detection agrees with the kernel's view in /proc/cpuinfo, and the ISA
 * choice follows the CPU and the OPTIC_ISA cap. */
#include <pthread.h>

#include <optic/optic.h>

#include "tests/harness.h"

/* Reads the first "flags" (x86) or "Features" (aarch64) line. */
static bool read_cpuinfo_flags(char *buf, size_t size) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return false;
  char line[8192];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0) {
      char *colon = strchr(line, ':');
      if (colon) {
        snprintf(buf, size, " %s", colon + 1);
        buf[strcspn(buf, "\n")] = ' ';
        found = true;
      }
      break;
    }
  }
  fclose(f);
  return found;
}

static bool has_flag(const char *flags, const char *name) {
  char needle[64];
  snprintf(needle, sizeof needle, " %s ", name);
  return strstr(flags, needle) != NULL;
}

static void features_match_proc_cpuinfo(void) {
  const optic_cpu_info *c = optic_cpu_info_get();
  char flags[8192];
  if (!read_cpuinfo_flags(flags, sizeof flags)) {
    printf("  (no flags line in /proc/cpuinfo; comparison skipped)\n");
    return;
  }
#if defined(__x86_64__)
  OT_CHECK(strcmp(c->arch, "x86_64") == 0);
  for (int b = 0; b < OPTIC_CPU_FEATURE_COUNT_; b++) {
    const char *name = optic_cpu_feature_name(b);
    if (strcmp(name, "asimd") == 0) continue; /* aarch64 only */
    bool ours = (c->features >> b) & 1;
    OT_CHECK(ours == has_flag(flags, name), "feature %s: optic says %d, /proc/cpuinfo says %d", name, ours,
             has_flag(flags, name));
  }
#elif defined(__aarch64__)
  /* Under qemu-user /proc/cpuinfo is the host's; only compare on real hardware. */
  if (has_flag(flags, "fp")) OT_CHECK(OPTIC_CPU_HAS(c, NEON) == has_flag(flags, "asimd"));
#endif
  OT_CHECK(c->logical_cpus >= 1);
  OT_CHECK(optic_cpu_feature_name(OPTIC_CPU_FEATURE_COUNT_) == NULL);
  OT_CHECK(optic_cpu_feature_name(-1) == NULL);
}

static void best_isa_is_supported(void) {
  optic_isa best = optic_isa_best();
  OT_CHECK(optic_isa_supported(best));
  OT_CHECK(optic_isa_supported(OPTIC_ISA_SCALAR));
  for (int i = best + 1; i < OPTIC_ISA_COUNT_; i++) {
    /* Nothing stronger on the same architecture is supported. */
    if (i != OPTIC_ISA_NEON)
      OT_CHECK(!optic_isa_supported((optic_isa)i), "%s supported above best %s", optic_isa_name((optic_isa)i),
               optic_isa_name(best));
  }
  const optic_cpu_info *c = optic_cpu_info_get();
  if (OPTIC_CPU_HAS(c, AVX512F) && OPTIC_CPU_HAS(c, AVX512BW) && OPTIC_CPU_HAS(c, AVX512VL) &&
      OPTIC_CPU_HAS(c, AVX512DQ)) {
    OT_CHECK(best == OPTIC_ISA_AVX512, "AVX-512 CPU but best is %s", optic_isa_name(best));
  }
}

static optic_isa select_with(const char *env) {
  if (env) {
    setenv("OPTIC_ISA", env, 1);
  } else {
    unsetenv("OPTIC_ISA");
  }
  optic_isa_reselect();
  return optic_isa_selected();
}

static void optic_isa_caps(void) {
  optic_isa best = optic_isa_best();
  OT_CHECK(select_with(NULL) == best);
  OT_CHECK(strstr(optic_isa_selection_note(), "best supported") != NULL, "note: %s", optic_isa_selection_note());
  OT_CHECK(select_with("scalar") == OPTIC_ISA_SCALAR);
  OT_CHECK(select_with("bogus") == best);
  OT_CHECK(strstr(optic_isa_selection_note(), "bogus") != NULL, "note: %s", optic_isa_selection_note());
  if (best == OPTIC_ISA_AVX512) {
    OT_CHECK(select_with("avx2") == OPTIC_ISA_AVX2);
    OT_CHECK(strstr(optic_isa_selection_note(), "caps avx512 to avx2") != NULL, "note: %s", optic_isa_selection_note());
    OT_CHECK(select_with("avx512") == OPTIC_ISA_AVX512);
    OT_CHECK(select_with("neon") == OPTIC_ISA_SCALAR, "foreign ISA caps to scalar");
  } else if (best == OPTIC_ISA_AVX2) {
    OT_CHECK(select_with("avx512") == OPTIC_ISA_AVX2, "a cap above the CPU gives the best supported");
  } else if (best == OPTIC_ISA_NEON) {
    OT_CHECK(select_with("avx2") == OPTIC_ISA_SCALAR, "foreign ISA caps to scalar");
    OT_CHECK(select_with("neon") == OPTIC_ISA_NEON);
  }
  select_with(NULL);
}

static void isa_names(void) {
  for (int i = 0; i < OPTIC_ISA_COUNT_; i++) {
    optic_isa back;
    OT_EXPECT_OK(optic_isa_from_name(optic_isa_name((optic_isa)i), &back));
    OT_CHECK(back == (optic_isa)i);
  }
  optic_isa x;
  OT_EXPECT_STATUS(optic_isa_from_name("sse", &x), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strcmp(optic_isa_name(OPTIC_ISA_COUNT_), "invalid") == 0);
}

static void *select_concurrently(void *arg) {
  *(optic_isa *)arg = optic_isa_selected();
  return NULL;
}

static void selection_is_thread_safe(void) {
  unsetenv("OPTIC_ISA");
  optic_isa_reselect();
  optic_isa want = optic_isa_selected();
  pthread_t t[8];
  optic_isa got[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, select_concurrently, &got[i]);
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    OT_CHECK(got[i] == want, "thread %d saw %s", i, optic_isa_name(got[i]));
  }
}

static void clock_is_monotonic(void) {
  uint64_t a = optic_now_ns();
  uint64_t b = optic_now_ns();
  OT_CHECK(b >= a && a > 0);
}

static const ot_case cases[] = {
    {"features_match_proc_cpuinfo", features_match_proc_cpuinfo},
    {"best_isa_is_supported", best_isa_is_supported},
    {"optic_isa_caps", optic_isa_caps},
    {"isa_names", isa_names},
    {"selection_is_thread_safe", selection_is_thread_safe},
    {"clock_is_monotonic", clock_is_monotonic},
};
OT_MAIN(cases)
