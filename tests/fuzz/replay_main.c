/* Replays a fuzz target's corpus without libFuzzer: every regular file named on
 * the command line, or inside a directory named there, is passed once to
 * LLVMFuzzerTestOneInput in an exact-size heap buffer (so ASan sees any read
 * past the end). A target reports a bug by crashing or aborting, as under
 * libFuzzer; this driver fails on its own I/O errors and, given
 * --max-seconds=S first, on an input that took longer than S seconds (as
 * libFuzzer's -timeout would). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double max_seconds; /* 0: no limit */

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *grown = realloc(buf, cap * 2);
      if (!grown) break;
      buf = grown;
      cap *= 2;
    }
  }
  int err = ferror(f) || !buf;
  fclose(f);
  if (err) {
    free(buf);
    fprintf(stderr, "replay: cannot read %s\n", path);
    return 1;
  }
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) {
    free(buf);
    return 1;
  }
  memcpy(exact, buf, n);
  free(buf);
  printf("replay: %s (%zu bytes)\n", path, n);
  fflush(stdout);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LLVMFuzzerTestOneInput(exact, n);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  free(exact);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (max_seconds > 0 && secs > max_seconds) {
    fprintf(stderr, "replay: %s took %.2f s, over the %.0f s limit per input\n", path, secs, max_seconds);
    return 1;
  }
  return 0;
}

static int replay_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: cannot stat %s\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) {
    (*count)++;
    return replay_file(path);
  }
  struct dirent **names = NULL;
  int n = scandir(path, &names, NULL, alphasort); /* sorted: runs are reproducible */
  if (n < 0) {
    fprintf(stderr, "replay: cannot list %s\n", path);
    return 1;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", path, names[i]->d_name);
    struct stat fst;
    if (names[i]->d_name[0] != '.' && stat(full, &fst) == 0 && S_ISREG(fst.st_mode)) {
      (*count)++;
      rc |= replay_file(full);
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s [--max-seconds=S] FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  int rc = 0, count = 0, first = 1;
  if (strncmp(argv[1], "--max-seconds=", 14) == 0) {
    max_seconds = atof(argv[1] + 14);
    first = 2;
  }
  for (int i = first; i < argc; i++) rc |= replay_path(argv[i], &count);
  printf("replay: %d inputs, %s\n", count, rc ? "I/O errors or slow inputs" : "no crash");
  return rc;
}
