/* Crash during save: a forked child saves a 9 MiB checkpoint into a
 * directory that already holds a good one and is SIGKILLed at a random
 * moment (from before its first write to after its rename), 60 times with
 * printed seeds; then (kill_during_save_loop) a child that saves step after
 * step, reporting each completed save through a pipe, is SIGKILLed at a
 * random moment 25 times, and rollback must give a step no older than the
 * last one it reported (at most one newer). After every kill: each completed-looking file (ckpt-*.optic)
 * verifies, and rollback restores the newest one bit-exact: the previous
 * checkpoint, or the new one if the child got as far as the rename. Temporary
 * files never count. The child re-executes this binary (`--child DIR STEP`):
 * libgomp's thread pool does not survive fork, so a forked copy of a process
 * that has run an OpenMP region must not run another. `OPTIC_SEED=N` repeats a run. A watchdog alarm ends the
 * test if anything blocks. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { KILLS = 60, LOOP_KILLS = 25, TENSORS = 6 };
#define TENSOR_FLOATS ((size_t)384 << 10) /* 1.5 MiB each: 9 MiB in 12 hash chunks */

static float *bufs[TENSORS];
static const char *names[TENSORS] = {"emb", "l0/w", "l0/b", "l1/w", "adam/m", "adam/v"};

static void fill_for_step(uint64_t step) {
  for (int i = 0; i < TENSORS; i++) ct_fill(bufs[i], TENSOR_FLOATS * 4, step * 131 + (uint64_t)i);
}

static optic_ckpt_entry entry(int i, float *data) {
  return (optic_ckpt_entry){names[i], {OPTIC_F32, {.rank = 1, .dims = {(int64_t)TENSOR_FLOATS}}, data}};
}

static optic_status save_step(const char *dir, uint64_t step) {
  fill_for_step(step);
  optic_ckpt_entry e[TENSORS];
  for (int i = 0; i < TENSORS; i++) e[i] = entry(i, bufs[i]);
  char s[32];
  snprintf(s, sizeof s, "%llu", (unsigned long long)step);
  optic_ckpt_meta m = optic_ckpt_meta_str("step", s);
  optic_ckpt_save_options o = {.size = sizeof o, .keep = 2};
  return optic_ckpt_save(&dir, 1, step, e, TENSORS, &m, 1, &o);
}

static uint64_t now_us(void) { return optic_now_ns() / 1000; }
static uint64_t one_save_us; /* measured by kill_during_save */

/* fork + exec of this binary saving `step` into dir; returns the pid. */
static pid_t spawn_saver(const char *dir, uint64_t step) {
  char arg[32];
  snprintf(arg, sizeof arg, "%llu", (unsigned long long)step);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"ckpt_crash", "--child", (char *)dir, arg, NULL};
    execv("/proc/self/exe", argv);
    _exit(4);
  }
  return pid;
}

/* Every named file verifies; rollback gives a step in [lo, hi] bit-exact. Returns it (0 on failure). */
static uint64_t check_dir(const char *dir, uint64_t lo, uint64_t hi, uint64_t seed, float **got) {
  uint64_t steps[8];
  size_t count = 0;
  OT_EXPECT_OK(optic_ckpt_list(dir, steps, 8, &count));
  for (size_t j = 0; j < count && j < 8; j++) {
    char path[160];
    optic_ckpt_path(dir, steps[j], path, sizeof path);
    OT_CHECK(optic_ckpt_verify_file(path, NULL) == OPTIC_OK, "seed %llu: %s does not verify: %s",
             (unsigned long long)seed, path, optic_last_error());
  }
  optic_ckpt_entry t[TENSORS];
  for (int i = 0; i < TENSORS; i++) t[i] = entry(i, got[i]);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  const char *dirs[1] = {dir};
  OT_EXPECT_OK(optic_ckpt_restore_latest(dirs, 1, t, TENSORS, NULL, &rep));
  OT_CHECK(rep.step >= lo && rep.step <= hi && rep.skipped == 0,
           "seed %llu: restored step %llu (skipped %zu: %s), expected %llu..%llu", (unsigned long long)seed,
           (unsigned long long)rep.step, rep.skipped, rep.first_skipped, (unsigned long long)lo,
           (unsigned long long)hi);
  fill_for_step(rep.step);
  for (int i = 0; i < TENSORS; i++)
    OT_CHECK(memcmp(got[i], bufs[i], TENSOR_FLOATS * 4) == 0, "seed %llu: step %llu tensor %s differs",
             (unsigned long long)seed, (unsigned long long)rep.step, names[i]);
  return ot_failures_ == 0 ? rep.step : 0;
}

static void kill_during_save(void) {
  const char *env = getenv("OPTIC_SEED");
  uint64_t base = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("  base seed %llu (repeat with OPTIC_SEED=%llu)\n", (unsigned long long)base, (unsigned long long)base);
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  for (int i = 0; i < TENSORS; i++) bufs[i] = malloc(TENSOR_FLOATS * 4);
  float *got[TENSORS];
  for (int i = 0; i < TENSORS; i++) got[i] = malloc(TENSOR_FLOATS * 4);
  alarm(120); /* watchdog */

  /* A good checkpoint, and how long a child takes from fork to exit here
   * (kill points are drawn from 0 to 1.1 times that). */
  OT_EXPECT_OK(save_step(dir, 1));
  uint64_t t0 = now_us();
  pid_t calib = spawn_saver(dir, 2);
  int calib_status = 0;
  waitpid(calib, &calib_status, 0);
  uint64_t save_us = now_us() - t0;
  OT_CHECK(WIFEXITED(calib_status) && WEXITSTATUS(calib_status) == 0);
  printf("  one uninterrupted child save: %.1f ms\n", save_us / 1e3);
  one_save_us = save_us;
  uint64_t last_good = 2;
  int completed = 0, interrupted = 0;
  for (int k = 0; k < KILLS && ot_failures_ == 0; k++) {
    uint64_t seed = base + (uint64_t)k, s = seed;
    uint64_t delay = ct_next(&s) % (save_us + save_us / 10 + 1);
    uint64_t step = last_good + 1;
    pid_t pid = spawn_saver(dir, step);
    OT_CHECK(pid > 0);
    struct timespec ts = {(time_t)(delay / 1000000), (long)(delay % 1000000) * 1000};
    nanosleep(&ts, NULL); /* chooses the kill point; nothing waits on an outcome */
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    OT_CHECK(exited_ok || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL), "seed %llu: child status 0x%x",
             (unsigned long long)seed, status);

    /* Every file named as complete verifies; rollback gives the newest complete one, bit-exact. */
    uint64_t restored = check_dir(dir, last_good, step, seed, got);
    OT_CHECK(!exited_ok || restored == step, "seed %llu (delay %llu us): the child finished but step %llu was restored",
             (unsigned long long)seed, (unsigned long long)delay, (unsigned long long)restored);
    if (restored == step) completed++;
    else interrupted++;
    last_good = restored;
  }
  alarm(0);
  size_t hidden = 0, files = ct_count_files(dir, &hidden);
  printf(
      "  %d kills: %d before the rename (previous restored), %d after (new restored); %zu files left, %zu temporary\n",
      KILLS, interrupted, completed, files, hidden);
  OT_CHECK(interrupted > 0, "no kill landed inside a save (delays too long?)");
  for (int i = 0; i < TENSORS; i++) free(bufs[i]), free(got[i]), bufs[i] = NULL;
  ct_rmdir(dir);
}

/* fork + exec of this binary saving steps first, first+1, ... into dir until
 * killed, writing each step to the pipe once its save returned OK. */
static pid_t spawn_looper(const char *dir, uint64_t first, int pipe_fd) {
  char arg[32], fd[16];
  snprintf(arg, sizeof arg, "%llu", (unsigned long long)first);
  snprintf(fd, sizeof fd, "%d", pipe_fd);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"ckpt_crash", "--loop", (char *)dir, arg, fd, NULL};
    execv("/proc/self/exe", argv);
    _exit(4);
  }
  return pid;
}

/* The newest step the child reported saved (from the pipe, now at EOF), or fallback. */
static uint64_t last_reported(int fd, uint64_t fallback, int *count) {
  uint64_t step, last = fallback;
  *count = 0;
  while (read(fd, &step, sizeof step) == (ssize_t)sizeof step) last = step, (*count)++;
  return last;
}

static void kill_during_save_loop(void) {
  const char *env = getenv("OPTIC_SEED");
  uint64_t base = (env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL)) + 1000003;
  printf("  loop seed %llu (repeat with OPTIC_SEED=%llu)\n", (unsigned long long)base,
         env ? strtoull(env, NULL, 10) : (unsigned long long)(base - 1000003));
  char dir[64];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  for (int i = 0; i < TENSORS; i++)
    if (bufs[i] == NULL) bufs[i] = malloc(TENSOR_FLOATS * 4);
  float *got[TENSORS];
  for (int i = 0; i < TENSORS; i++) got[i] = malloc(TENSOR_FLOATS * 4);
  uint64_t save_us = one_save_us > 0 ? one_save_us : 100000;
  alarm(120); /* watchdog */
  OT_EXPECT_OK(save_step(dir, 1));
  uint64_t last = 1;
  int reported_total = 0, newer = 0;
  for (int k = 0; k < LOOP_KILLS && ot_failures_ == 0; k++) {
    uint64_t seed = base + (uint64_t)k, s = seed;
    uint64_t delay = ct_next(&s) % (3 * save_us + 1); /* zero to about three saves */
    int fds[2];
    OT_CHECK(pipe(fds) == 0);
    pid_t pid = spawn_looper(dir, last + 1, fds[1]);
    close(fds[1]);
    OT_CHECK(pid > 0);
    struct timespec ts = {(time_t)(delay / 1000000), (long)(delay % 1000000) * 1000};
    nanosleep(&ts, NULL); /* chooses the kill point */
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    OT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "seed %llu: child status 0x%x",
             (unsigned long long)seed, status);
    int reported = 0;
    uint64_t done = last_reported(fds[0], last, &reported);
    close(fds[0]);
    reported_total += reported;
    /* Every reported save survives a process kill; the one in flight may or may not have landed. */
    uint64_t step = check_dir(dir, done, done + 1, seed, got);
    if (step == done + 1) newer++;
    if (step != 0) last = step;
  }
  alarm(0);
  printf(
      "  %d kills of a saving loop: %d saves reported done before the kills, %d kills after a rename not yet "
      "reported; newest step %llu\n",
      LOOP_KILLS, reported_total, newer, (unsigned long long)last);
  OT_CHECK(reported_total > 0, "no save completed between kills (delays too short?)");
  for (int i = 0; i < TENSORS; i++) free(got[i]), free(bufs[i]), bufs[i] = NULL;
  ct_rmdir(dir);
}

static const ot_case cases[] = {{"kill_during_save", kill_during_save},
                                {"kill_during_save_loop", kill_during_save_loop}};

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) {
    alarm(60); /* watchdog: a child never outlives a minute */
    for (int i = 0; i < TENSORS; i++) bufs[i] = malloc(TENSOR_FLOATS * 4);
    optic_status st = save_step(argv[2], strtoull(argv[3], NULL, 10));
    if (st != OPTIC_OK) fprintf(stderr, "child: %s\n", optic_last_error());
    return st == OPTIC_OK ? 0 : 3;
  }
  if (argc == 5 && strcmp(argv[1], "--loop") == 0) {
    alarm(60); /* watchdog */
    for (int i = 0; i < TENSORS; i++) bufs[i] = malloc(TENSOR_FLOATS * 4);
    int fd = atoi(argv[4]);
    for (uint64_t step = strtoull(argv[3], NULL, 10);; step++) {
      optic_status st = save_step(argv[2], step);
      if (st != OPTIC_OK) {
        fprintf(stderr, "child: %s\n", optic_last_error());
        return 3;
      }
      if (write(fd, &step, sizeof step) != (ssize_t)sizeof step) return 5;
    }
  }
  return ot_main_(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
