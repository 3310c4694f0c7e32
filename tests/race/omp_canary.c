/* The race check's canaries (tsan-omp preset; not part of the library): tiny
 * OpenMP programs that show ThreadSanitizer + Archer see OpenMP. `race` is a
 * deliberate data race its ctest requires TSan to report; `barrier`,
 * `critical` and `reduction` are the same sharing done right, which must run
 * clean with Archer and (checked for `barrier`) be reported without it, so a
 * clean run of the library's tests means the tool both sees threads race and
 * knows what OpenMP orders. Usage: omp_canary race|barrier|critical|reduction */
#include <omp.h>
#include <stdio.h>
#include <string.h>

enum { ROUNDS = 64 };

/* volatile keeps every access a memory access at -O2. */
static volatile long g_shared;
static volatile long g_slots[2];

/* Both threads write g_shared with nothing between them: a data race. */
static __attribute__((noinline)) void racy_increment(void) { g_shared = g_shared + 1; }

static int race(void) {
#pragma omp parallel num_threads(2)
  for (int i = 0; i < ROUNDS; i++) racy_increment();
  return 0;
}

/* Each thread writes its slot, meets the other at an OpenMP barrier, then
 * reads the other's slot: ordered by the barrier alone (which lives in the
 * uninstrumented runtime, so only Archer can tell TSan about it). */
static int barrier(void) {
  int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    for (int i = 0; i < ROUNDS; i++) {
      g_slots[t] = i * 2 + t;
#pragma omp barrier
      if (n == 2 && g_slots[1 - t] != i * 2 + (1 - t)) bad++;
#pragma omp barrier
    }
  }
  return bad;
}

static int critical(void) {
  g_shared = 0;
#pragma omp parallel num_threads(2)
  for (int i = 0; i < ROUNDS; i++) {
#pragma omp critical(canary)
    g_shared = g_shared + 1;
  }
  return g_shared == 2 * ROUNDS || omp_get_max_threads() < 2 ? 0 : 1;
}

static int reduction(void) {
  long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
  for (int i = 0; i < 1000; i++) sum += i;
  return sum == 499500 ? 0 : 1;
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*fn)(void);
  } modes[] = {{"race", race}, {"barrier", barrier}, {"critical", critical}, {"reduction", reduction}};
  for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; i++) {
    if (strcmp(argv[1], modes[i].name) != 0) continue;
    int bad = modes[i].fn();
    printf("omp_canary %s: %d threads, %s\n", argv[1], omp_get_max_threads(), bad ? "WRONG RESULT" : "done");
    return bad ? 1 : 0;
  }
  fprintf(stderr, "usage: %s race|barrier|critical|reduction\n", argv[0]);
  return 2;
}
