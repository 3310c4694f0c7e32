/* CPU feature detection: CPUID + XGETBV on x86-64 (a feature counts only when
 * the OS saves its registers), HWCAP on aarch64; cache sizes from sysfs.
 * Detected once, thread-safe. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#endif

static optic_cpu_info cpu_info;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static const char *const feature_names[] = {
#define FEATURE_NAME(name, str) str,
    OPTIC_CPU_FEATURE_LIST(FEATURE_NAME)
#undef FEATURE_NAME
};

const char *optic_cpu_feature_name(int bit) {
  if (bit < 0 || bit >= OPTIC_CPU_FEATURE_COUNT_) return NULL;
  return feature_names[bit];
}

#define SET(name, cond) \
  if (cond) cpu_info.features |= (uint64_t)1 << OPTIC_CPU_BIT_##name

#if defined(__x86_64__) || defined(__i386__)
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static void trim(char *s) {
  char *p = s;
  while (*p == ' ') p++;
  memmove(s, p, strlen(p) + 1);
  size_t n = strlen(s);
  while (n > 0 && s[n - 1] == ' ') s[--n] = '\0';
}

static void detect_x86(void) {
  unsigned a, b, c, d;
  snprintf(cpu_info.arch, sizeof cpu_info.arch, "x86_64");
  unsigned max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf == 0) return;
  __cpuid(0, a, b, c, d);
  memcpy(cpu_info.vendor + 0, &b, 4);
  memcpy(cpu_info.vendor + 4, &d, 4);
  memcpy(cpu_info.vendor + 8, &c, 4);
  cpu_info.vendor[12] = '\0';

  __cpuid(1, a, b, c, d);
  unsigned c1 = c, d1 = d;
  bool osxsave = (c1 >> 27) & 1;
  uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  bool ymm_os = (xcr0 & 0x6) == 0x6;             /* SSE + AVX state */
  bool zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */

  SET(SSE2, (d1 >> 26) & 1);
  SET(SSE4_1, (c1 >> 19) & 1);
  SET(SSE4_2, (c1 >> 20) & 1);
  SET(AVX, ymm_os && ((c1 >> 28) & 1));
  SET(F16C, ymm_os && ((c1 >> 29) & 1));
  SET(FMA, ymm_os && ((c1 >> 12) & 1));

  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    unsigned b7 = b, c7 = c, d7 = d;
    bool tiles_os = (xcr0 & 0x60000) == 0x60000; /* XTILECFG and XTILEDATA */
    SET(AVX2, ymm_os && ((b7 >> 5) & 1));
    SET(BMI2, (b7 >> 8) & 1);
    SET(AVX512F, zmm_os && ((b7 >> 16) & 1));
    SET(AVX512DQ, zmm_os && ((b7 >> 17) & 1));
    SET(AVX512CD, zmm_os && ((b7 >> 28) & 1));
    SET(SHA, (b7 >> 29) & 1);
    SET(AVX512BW, zmm_os && ((b7 >> 30) & 1));
    SET(AVX512VL, zmm_os && ((b7 >> 31) & 1));
    SET(AVX512VNNI, zmm_os && ((c7 >> 11) & 1));
    SET(AMX_TILE, tiles_os && ((d7 >> 24) & 1));
    SET(AMX_BF16, tiles_os && ((d7 >> 22) & 1));
    __cpuid_count(7, 1, a, b, c, d);
    SET(AVX512BF16, zmm_os && ((a >> 5) & 1));
  }

  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
    unsigned regs[12];
    for (unsigned i = 0; i < 3; i++) {
      __cpuid(0x80000002u + i, regs[4 * i], regs[4 * i + 1], regs[4 * i + 2], regs[4 * i + 3]);
    }
    char brand[49];
    memcpy(brand, regs, 48);
    brand[48] = '\0';
    trim(brand);
    snprintf(cpu_info.model, sizeof cpu_info.model, "%s", brand);
  }
}
#endif

#if defined(__aarch64__)
static void detect_aarch64(void) {
  snprintf(cpu_info.arch, sizeof cpu_info.arch, "aarch64");
  unsigned long hw = getauxval(AT_HWCAP);
  SET(NEON, (hw & HWCAP_ASIMD) != 0);
  /* No brand string register on aarch64; /proc/cpuinfo only has part numbers. */
}
#endif

/* Reads one small sysfs text file into buf; false if it is absent. */
static bool read_small(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  size_t got = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[got] = '\0';
  return got > 0;
}

/* Cache sizes from sysfs: "32K", "1024K", "32768K" or a plain byte count. */
static void detect_caches(void) {
  int best_level = 0;
  for (int index = 0; index < 16; index++) {
    char path[96], level[16], type[32], size[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    if (!read_small(path, level, sizeof level)) break;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    if (!read_small(path, type, sizeof type) || strncmp(type, "Instruction", 11) == 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    if (!read_small(path, size, sizeof size)) continue;
    char *end = NULL;
    long long v = strtoll(size, &end, 10);
    if (v <= 0 || end == size) continue;
    if (*end == 'K') v *= 1024;
    else if (*end == 'M') v *= 1024 * 1024;
    int lv = atoi(level);
    if (lv == 2) cpu_info.l2_bytes = v;
    if (lv >= best_level) best_level = lv, cpu_info.llc_bytes = v;
  }
}

static void detect(void) {
#if defined(__x86_64__) || defined(__i386__)
  detect_x86();
#elif defined(__aarch64__)
  detect_aarch64();
#else
  snprintf(cpu_info.arch, sizeof cpu_info.arch, "unknown");
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_info.logical_cpus = n > 0 ? (int)n : 1;
  detect_caches();
}

const optic_cpu_info *optic_cpu_info_get(void) {
  pthread_once(&cpu_once, detect);
  return &cpu_info;
}
