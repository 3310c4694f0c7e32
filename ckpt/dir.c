/* Checkpoint directories: the naming scheme that records completed saves
 * (DIR/ckpt-<20-digit step>.optic; temporaries start with '.'), saving to
 * replicas with keep-newest-K, rollback to the newest checkpoint that
 * verifies, and repair of replicas through the verified copy. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/internal.h"
#include "core/error.h"

#define NAME_PREFIX "ckpt-"
#define NAME_SUFFIX ".optic"
#define STEP_DIGITS 20

int optic_ckpt_path(const char *dir, uint64_t step, char *buf, size_t size) {
  return snprintf(buf, size, "%s/" NAME_PREFIX "%020llu" NAME_SUFFIX, dir, (unsigned long long)step);
}

/* The step of a completed checkpoint's file name, or false. */
static bool parse_name(const char *name, uint64_t *step) {
  size_t pre = strlen(NAME_PREFIX), suf = strlen(NAME_SUFFIX);
  if (strlen(name) != pre + STEP_DIGITS + suf || strncmp(name, NAME_PREFIX, pre) != 0 ||
      strcmp(name + pre + STEP_DIGITS, NAME_SUFFIX) != 0)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < STEP_DIGITS; i++) {
    char c = name[pre + i];
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - (uint64_t)(c - '0')) / 10) return false;
    v = v * 10 + (uint64_t)(c - '0');
  }
  *step = v;
  return true;
}

bool ckpt_step_from_name(const char *path, uint64_t *step) {
  const char *slash = strrchr(path, '/');
  return parse_name(slash != NULL ? slash + 1 : path, step);
}

/* A temporary file of an interrupted save: ".ckpt-<digits>.optic.tmp-...". */
static bool is_stale_temp(const char *name) {
  uint64_t step;
  const char *tmp = strstr(name, NAME_SUFFIX ".tmp-");
  if (name[0] != '.' || tmp == NULL) return false;
  char base[64];
  size_t len = (size_t)(tmp - (name + 1)) + strlen(NAME_SUFFIX);
  if (len >= sizeof base) return false;
  memcpy(base, name + 1, len);
  base[len] = '\0';
  return parse_name(base, &step);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* All steps in dir, ascending, in a malloc'd array (NULL when count is 0). */
static optic_status list_steps(const char *dir, uint64_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  DIR *d = opendir(dir);
  if (d == NULL) return ckpt_io_fail(-errno, "ckpt list", "cannot open the directory", dir);
  size_t n = 0, cap = 0;
  uint64_t *steps = NULL;
  optic_status st = OPTIC_OK;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    uint64_t step;
    if (!parse_name(e->d_name, &step)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      uint64_t *grown = realloc(steps, cap * sizeof *steps);
      if (grown == NULL) {
        st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "ckpt list: no memory for %zu steps", cap);
        break;
      }
      steps = grown;
    }
    steps[n++] = step;
  }
  closedir(d);
  if (st != OPTIC_OK) {
    free(steps);
    return st;
  }
  if (n > 1) qsort(steps, n, sizeof *steps, cmp_u64);
  *out = steps;
  *count = n;
  return OPTIC_OK;
}

optic_status optic_ckpt_list(const char *dir, uint64_t *steps, size_t cap, size_t *count) {
  if (dir == NULL || count == NULL || (cap > 0 && steps == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt list: NULL dir, steps or count");
  uint64_t *all;
  size_t n;
  optic_status st = list_steps(dir, &all, &n);
  if (st != OPTIC_OK) return st;
  for (size_t i = 0; i < n && i < cap; i++) steps[i] = all[i];
  *count = n;
  free(all);
  return OPTIC_OK;
}

static void remove_stale_temps(const char *dir, const optic_ckpt_io *io) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  char path[4352];
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!is_stale_temp(e->d_name)) continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) (void)io->unlink(io->user, path);
  }
  closedir(d);
}

/* Deletes all but the newest `keep` checkpoints of dir, never `just_saved`. */
static optic_status prune(const char *dir, uint32_t keep, uint64_t just_saved, const optic_ckpt_io *io) {
  if (keep == 0) return OPTIC_OK;
  uint64_t *steps;
  size_t n;
  optic_status st = list_steps(dir, &steps, &n);
  if (st != OPTIC_OK) return st;
  char path[4352];
  for (size_t i = 0; i + keep < n && st == OPTIC_OK; i++) {
    if (steps[i] == just_saved) continue;
    optic_ckpt_path(dir, steps[i], path, sizeof path);
    int rc = io->unlink(io->user, path);
    if (rc < 0 && rc != -ENOENT) st = ckpt_io_fail(rc, "ckpt save", "cannot delete the old checkpoint", path);
  }
  free(steps);
  return st;
}

optic_status optic_ckpt_save(const char *const *dirs, size_t ndirs, uint64_t step, const optic_ckpt_entry *entries,
                             size_t n, const optic_ckpt_meta *meta, size_t nmeta, const optic_ckpt_save_options *opts) {
  if (dirs == NULL || ndirs == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt save: no directory given");
  ckpt_save_config cfg;
  optic_status first = ckpt_save_config_from(opts, &cfg);
  if (first != OPTIC_OK) return first;
  cfg.has_step = true; /* the file records the step its name says */
  cfg.step = step;
  char first_msg[1024] = "";
  for (size_t d = 0; d < ndirs; d++) {
    char path[4352];
    optic_status st = OPTIC_OK;
    if (dirs[d] == NULL || optic_ckpt_path(dirs[d], step, path, sizeof path) >= (int)sizeof path)
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "ckpt save: directory %zu is NULL or too long", d);
    if (st == OPTIC_OK) {
      remove_stale_temps(dirs[d], cfg.io);
      st = ckpt_save_file_with(path, entries, n, meta, nmeta, &cfg);
    }
    if (st == OPTIC_OK) st = prune(dirs[d], cfg.keep, step, cfg.io);
    if (st != OPTIC_OK && first == OPTIC_OK) {
      first = st;
      snprintf(first_msg, sizeof first_msg, "%s", optic_last_error());
    }
  }
  if (first != OPTIC_OK)
    return optic_fail(first, "%s%s", first_msg, ndirs > 1 ? " (the other replicas were still written)" : "");
  return OPTIC_OK;
}

/* ---------------------------------------------------------------- rollback */

/* Union of the steps of every directory, descending; per directory lists. */
typedef struct dir_steps {
  uint64_t *steps;
  size_t n;
  bool ok;
} dir_steps;

static bool has_step(const dir_steps *d, uint64_t step) {
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->steps[mid] == step) return true;
    if (d->steps[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

static optic_status union_steps(const dir_steps *ds, size_t ndirs, uint64_t **out, size_t *count) {
  size_t total = 0;
  for (size_t d = 0; d < ndirs; d++) total += ds[d].n;
  uint64_t *all = malloc((total > 0 ? total : 1) * sizeof *all);
  if (all == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "ckpt: no memory for %zu steps", total);
  size_t k = 0;
  for (size_t d = 0; d < ndirs; d++)
    for (size_t i = 0; i < ds[d].n; i++) all[k++] = ds[d].steps[i];
  qsort(all, k, sizeof *all, cmp_u64);
  size_t u = 0;
  for (size_t i = 0; i < k; i++)
    if (u == 0 || all[u - 1] != all[i]) all[u++] = all[i];
  for (size_t i = 0; i < u / 2; i++) {
    uint64_t t = all[i];
    all[i] = all[u - 1 - i];
    all[u - 1 - i] = t;
  }
  *out = all;
  *count = u;
  return OPTIC_OK;
}

static void free_dirs(dir_steps *ds, size_t ndirs) {
  for (size_t d = 0; ds != NULL && d < ndirs; d++) free(ds[d].steps);
  free(ds);
}

/* Lists every directory; unreadable ones count as empty (ok = false). */
static dir_steps *list_all(const char *const *dirs, size_t ndirs) {
  dir_steps *ds = calloc(ndirs, sizeof *ds);
  for (size_t d = 0; ds != NULL && d < ndirs; d++)
    ds[d].ok = dirs[d] != NULL && list_steps(dirs[d], &ds[d].steps, &ds[d].n) == OPTIC_OK;
  return ds;
}

optic_status optic_ckpt_restore_latest(const char *const *dirs, size_t ndirs, const optic_ckpt_entry *targets, size_t n,
                                       const optic_ckpt_read_options *opts, optic_ckpt_restore_report *report) {
  const char *op = "ckpt restore_latest";
  if (dirs == NULL || ndirs == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: no directory given", op);
  if (report != NULL && report->size < sizeof *report)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: report size %zu, expected %zu", op, report->size,
                      sizeof *report);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  dir_steps *ds = list_all(dirs, ndirs);
  uint64_t *steps = NULL;
  size_t nsteps = 0;
  optic_status st =
      ds == NULL ? optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op) : union_steps(ds, ndirs, &steps, &nsteps);
  bool done = false;
  for (size_t s = 0; s < nsteps && st == OPTIC_OK && !done; s++) {
    for (size_t d = 0; d < ndirs && !done; d++) {
      if (!has_step(&ds[d], steps[s])) continue;
      char path[4352];
      optic_ckpt_path(dirs[d], steps[s], path, sizeof path);
      optic_ckpt_reader_t *r = NULL;
      optic_status got = optic_ckpt_reader_create(path, opts, &r);
      if (got == OPTIC_OK) got = optic_ckpt_check_name(r);
      if (got == OPTIC_OK) got = optic_ckpt_restore(r, targets, n);
      optic_ckpt_reader_destroy(r);
      if (got == OPTIC_OK) {
        rep.step = steps[s];
        rep.dir_index = d;
        done = true;
      } else {
        if (rep.skipped++ == 0) snprintf(rep.first_skipped, sizeof rep.first_skipped, "%s", optic_last_error());
      }
    }
  }
  if (st == OPTIC_OK && !done) {
    if (rep.skipped == 0)
      st = optic_fail(OPTIC_ERR_NOT_FOUND, "%s: no checkpoint in %s%s", op, dirs[0],
                      ndirs > 1 ? " or its replicas" : "");
    else
      st = optic_fail(OPTIC_ERR_CORRUPT, "%s: all %zu checkpoint files were rejected; the newest: %s", op, rep.skipped,
                      rep.first_skipped);
  }
  if (report != NULL) *report = rep;
  free(steps);
  free_dirs(ds, ndirs);
  return st;
}

/* ------------------------------------------------------------------ repair */

/* Rewrites dst from the valid checkpoint at src: temp file beside dst, the
 * verified copy, fsync, rename, directory fsync. */
static optic_status repair_one(const char *src, const char *dst, const ckpt_save_config *cfg) {
  const char *op = "ckpt repair";
  optic_ckpt_read_options ro = {.size = sizeof ro, .threads = cfg->threads, .io = cfg->io};
  optic_ckpt_reader_t *r = NULL;
  optic_status st = optic_ckpt_reader_create(src, &ro, &r);
  char tmp[4352];
  if (st == OPTIC_OK) st = ckpt_temp_path(dst, tmp, sizeof tmp);
  int fd = -1;
  if (st == OPTIC_OK) {
    fd = cfg->io->open(cfg->io->user, tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) st = ckpt_io_fail(fd, op, "cannot create", tmp);
  }
  bool created = fd >= 0, renamed = false;
  if (st == OPTIC_OK) st = ckpt_copy_verified(r, fd, tmp, cfg->io);
  if (st == OPTIC_OK) {
    int rc = cfg->io->fsync(cfg->io->user, fd);
    if (rc < 0) st = ckpt_io_fail(rc, op, "fsync of", tmp);
  }
  if (created) {
    int rc = cfg->io->close(cfg->io->user, fd);
    if (rc < 0 && st == OPTIC_OK) st = ckpt_io_fail(rc, op, "close of", tmp);
  }
  if (st == OPTIC_OK) {
    int rc = cfg->io->rename(cfg->io->user, tmp, dst);
    if (rc < 0) st = optic_fail(OPTIC_ERR_IO, "%s: rename %s -> %s: %s", op, tmp, dst, strerror(-rc));
    else renamed = true;
  }
  if (st != OPTIC_OK && created && !renamed) (void)cfg->io->unlink(cfg->io->user, tmp);
  if (st == OPTIC_OK) st = ckpt_sync_parent(cfg->io, dst, op);
  optic_ckpt_reader_destroy(r);
  return st;
}

optic_status optic_ckpt_repair(const char *const *dirs, size_t ndirs, const optic_ckpt_save_options *opts,
                               optic_ckpt_repair_report *report) {
  const char *op = "ckpt repair";
  if (dirs == NULL || ndirs == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: no directory given", op);
  if (report != NULL && report->size < sizeof *report)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: report size %zu, expected %zu", op, report->size,
                      sizeof *report);
  ckpt_save_config cfg;
  optic_status st = ckpt_save_config_from(opts, &cfg);
  if (st != OPTIC_OK) return st;
  optic_ckpt_repair_report rep = {.size = sizeof rep};
  optic_ckpt_read_options ro = {.size = sizeof ro, .threads = cfg.threads, .io = cfg.io};
  dir_steps *ds = list_all(dirs, ndirs);
  uint64_t *steps = NULL;
  size_t nsteps = 0;
  st = ds == NULL ? optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op) : union_steps(ds, ndirs, &steps, &nsteps);
  for (size_t d = 0; d < ndirs && st == OPTIC_OK; d++)
    if (!ds[d].ok) st = optic_fail(OPTIC_ERR_IO, "%s: cannot list the directory %s", op, dirs[d] ? dirs[d] : "(null)");
  bool *valid = calloc(ndirs, sizeof *valid);
  if (st == OPTIC_OK && valid == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory", op);
  optic_status io_err = OPTIC_OK;
  char io_msg[1024] = "", bad_msg[1024] = "";
  for (size_t s = 0; s < nsteps && st == OPTIC_OK; s++) {
    size_t source = ndirs;
    char path[4352], src[4352];
    for (size_t d = 0; d < ndirs; d++) {
      valid[d] = false;
      if (!has_step(&ds[d], steps[s])) continue;
      optic_ckpt_path(dirs[d], steps[s], path, sizeof path);
      rep.checked++;
      valid[d] = optic_ckpt_verify_file(path, &ro) == OPTIC_OK;
      if (valid[d]) {
        rep.valid++;
        if (source == ndirs) source = d;
      } else if (bad_msg[0] == '\0') {
        snprintf(bad_msg, sizeof bad_msg, "%s", optic_last_error());
      }
    }
    if (source == ndirs) {
      rep.unrecoverable++;
      continue;
    }
    optic_ckpt_path(dirs[source], steps[s], src, sizeof src);
    for (size_t d = 0; d < ndirs; d++) {
      if (valid[d]) continue;
      bool present = has_step(&ds[d], steps[s]);
      /* A missing step older than the directory's oldest was pruned, not lost. */
      if (!present && ds[d].n > 0 && steps[s] < ds[d].steps[0]) continue;
      optic_ckpt_path(dirs[d], steps[s], path, sizeof path);
      optic_status got = repair_one(src, path, &cfg);
      if (got == OPTIC_OK) {
        rep.repaired++;
      } else if (io_err == OPTIC_OK) {
        io_err = got;
        snprintf(io_msg, sizeof io_msg, "%s", optic_last_error());
      }
    }
  }
  if (st == OPTIC_OK && io_err != OPTIC_OK) st = optic_fail(io_err, "%s", io_msg);
  if (st == OPTIC_OK && rep.unrecoverable > 0)
    st = optic_fail(OPTIC_ERR_CORRUPT, "%s: %zu step(s) have no valid copy in any directory (first problem: %s)", op,
                    rep.unrecoverable, bad_msg);
  if (report != NULL) *report = rep;
  free(valid);
  free(steps);
  free_dirs(ds, ndirs);
  return st;
}

optic_status optic_ckpt_migrate_workload(const char *dir, const char *target_host) {
  return optic_fail(OPTIC_ERR_UNSUPPORTED,
                    "ckpt migrate_workload: live migration of a running workload (checkpoint %s -> host %s) needs "
                    "process-state transfer (CRIU-style) and a scheduler that starts and adopts the job on the "
                    "target host; optic has neither. Save a checkpoint, start the job on %s, and restore it with "
                    "optic_ckpt_restore_latest",
                    dir ? dir : "(none)", target_host ? target_host : "(none)", target_host ? target_host : "the host");
}
