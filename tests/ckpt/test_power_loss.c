/* Power loss during a save, simulated through the checkpoint's I/O table
 * (optic_ckpt_io): a layer over the real files of one directory that records
 * what has been made durable (a file's bytes at its last fsync; the
 * directory's names at its last fsync) and what is only in the "page cache"
 * (writes after the last fsync; creates, renames and unlinks after the last
 * directory fsync). At a kill point the power goes out: that I/O call and
 * every later one fail without effect, and afterwards the directory is
 * rebuilt as a machine that lost power would find it:
 *   - drop: every unsynced write and directory change discarded;
 *   - torn: a random prefix of the unsynced directory changes kept, and a
 *     random subset of the 4 KiB pages of the unsynced writes (seeded).
 * Then every file named as a checkpoint must verify, and rollback must give
 * the newest checkpoint bit-exact: the previous one, or the new one if its
 * rename reached the disk, and always the new one once the save returned OK.
 * Every kill point of one save is tried (drop and 8 torn variants each),
 * then a chain of 300 saves with random kill points carried from one to the
 * next, then every kill point (drop and 4 torn variants) of a save to two
 * replicas (once it returned OK, each replica alone restores the new step)
 * and of a repair of a corrupt replica (the copy is either still the corrupt
 * file or complete; a later repair finishes). Two controls show the checks can fail: a disk that acknowledges
 * fsync without making anything durable, and a save whose directory fsync is
 * skipped, must each be caught losing data. Seeds printed; `OPTIC_SEED=N`
 * repeats a run. */
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

#include "tests/ckpt/ckpt_test_util.h"
#include "tests/harness.h"

enum { MAX_INODES = 256, MAX_NAMES = 64, MAX_FDS = 1024, MAX_DIRS = 2, PAGE = 4096, NAME_LEN = 256 };
enum { TENSORS = 4, TORN_VARIANTS = 8, CHAIN_SAVES = 300 };
static const size_t tensor_floats[TENSORS] = {20000, 33, 1, 40000}; /* the first and last span 2 and 3 chunks */

/* ------------------------------------------------------ the simulated disk */

typedef struct pl_write {
  uint64_t off;
  size_t n;
  uint8_t *data;
} pl_write;

typedef struct pl_inode {
  bool used;
  uint8_t *durable; /* the bytes at the last fsync */
  size_t durable_n;
  pl_write *pending; /* writes since the last fsync, in order */
  size_t npending, cap;
} pl_inode;

typedef struct pl_name {
  char name[NAME_LEN];
  int inode;
} pl_name;

typedef enum { DIROP_CREATE, DIROP_RENAME, DIROP_UNLINK } pl_dirop_kind;
typedef struct pl_dirop {
  pl_dirop_kind kind;
  char a[NAME_LEN], b[NAME_LEN];
  int inode;
} pl_dirop;

typedef struct pl_names {
  pl_name at[MAX_NAMES];
  size_t n;
} pl_names;

typedef struct pl_fs {
  char dirs[MAX_DIRS][64];
  size_t ndirs;
  pl_inode inodes[MAX_INODES];
  pl_names durable, live;
  pl_dirop ops[MAX_NAMES * 4]; /* unsynced directory changes, in order (names are full paths) */
  size_t nops;
  int fd_inode[MAX_FDS];
  long calls, kill_at; /* the call numbered kill_at (0-based) and all later ones fail */
  bool dead;
  bool lying_fsync;   /* control: fsync reports success and makes nothing durable */
  bool skip_dir_sync; /* control: the directory fsync reports success and does nothing */
  pthread_mutex_t mu;
} pl_fs;

/* Whether path is an entry of directory dir. */
static bool in_dir(const char *path, const char *dir) {
  const char *s = strrchr(path, '/');
  size_t n = strlen(dir);
  return s != NULL && (size_t)(s - path) == n && strncmp(path, dir, n) == 0;
}

static size_t dir_of(const pl_fs *fs, const char *path) {
  for (size_t d = 0; d < fs->ndirs; d++)
    if (in_dir(path, fs->dirs[d])) return d;
  return 0;
}

static int names_find(const pl_names *ns, const char *name) {
  for (size_t i = 0; i < ns->n; i++)
    if (strcmp(ns->at[i].name, name) == 0) return (int)i;
  return -1;
}
static void names_remove(pl_names *ns, const char *name) {
  int i = names_find(ns, name);
  if (i >= 0) ns->at[i] = ns->at[--ns->n];
}
static void names_set(pl_names *ns, const char *name, int inode) {
  int i = names_find(ns, name);
  if (i < 0 && ns->n < MAX_NAMES) i = (int)ns->n++;
  if (i < 0) return;
  snprintf(ns->at[i].name, NAME_LEN, "%s", name);
  ns->at[i].inode = inode;
}
static void names_apply(pl_names *ns, const pl_dirop *op) {
  if (op->kind == DIROP_CREATE) {
    names_set(ns, op->a, op->inode);
  } else if (op->kind == DIROP_UNLINK) {
    names_remove(ns, op->a);
  } else {
    int i = names_find(ns, op->a);
    if (i < 0) return;
    int inode = ns->at[i].inode;
    names_remove(ns, op->a);
    names_set(ns, op->b, inode);
  }
}

static int new_inode(pl_fs *fs) {
  for (int i = 0; i < MAX_INODES; i++) {
    if (!fs->inodes[i].used) {
      fs->inodes[i] = (pl_inode){.used = true};
      return i;
    }
  }
  return -1;
}

static void free_fs(pl_fs *fs) {
  for (int i = 0; i < MAX_INODES; i++) {
    pl_inode *in = &fs->inodes[i];
    for (size_t k = 0; k < in->npending; k++) free(in->pending[k].data);
    free(in->pending);
    free(in->durable);
  }
  pthread_mutex_destroy(&fs->mu);
}

/* Everything now in dirs is durable (a machine that has been idle a while). */
static void start_fs(pl_fs *fs, const char *const *dirs, size_t ndirs) {
  memset(fs, 0, sizeof *fs);
  pthread_mutex_init(&fs->mu, NULL);
  for (int i = 0; i < MAX_FDS; i++) fs->fd_inode[i] = -1;
  fs->kill_at = -1;
  fs->ndirs = ndirs < MAX_DIRS ? ndirs : MAX_DIRS;
  for (size_t k = 0; k < fs->ndirs; k++) {
    snprintf(fs->dirs[k], sizeof fs->dirs[k], "%s", dirs[k]);
    DIR *d = opendir(dirs[k]);
    char path[NAME_LEN];
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      int ino = new_inode(fs);
      snprintf(path, sizeof path, "%s/%.*s", dirs[k], 160, e->d_name);
      fs->inodes[ino].durable = ct_read_file(path, &fs->inodes[ino].durable_n);
      names_set(&fs->durable, path, ino);
    }
    if (d != NULL) closedir(d);
  }
  fs->live = fs->durable;
}

/* Counts a state-changing call; false when the power is out. */
static bool tick(pl_fs *fs) {
  if (!fs->dead && fs->kill_at >= 0 && fs->calls >= fs->kill_at) fs->dead = true;
  fs->calls++;
  return !fs->dead;
}

static const optic_ckpt_io *posix(void) { return optic_ckpt_io_posix(); }

/* A directory change made: live at once, durable at the directory's next
 * fsync. A full table would make the simulated disk wrong: that fails. */
static void record_dirop(pl_fs *fs, const pl_dirop *op) {
  const size_t cap = sizeof fs->ops / sizeof fs->ops[0];
  OT_CHECK(fs->nops < cap, "simulated disk: more than %zu unsynced directory changes", cap);
  if (fs->nops < cap) fs->ops[fs->nops++] = *op;
  names_apply(&fs->live, op);
}

static int pl_open(void *u, const char *path, int flags, int mode) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int rc = -EIO;
  if (tick(fs)) {
    rc = posix()->open(NULL, path, flags, mode);
    if (rc >= 0 && rc < MAX_FDS) {
      int i = names_find(&fs->live, path);
      int ino = i >= 0 ? fs->live.at[i].inode : -1;
      if (flags & O_CREAT) {
        ino = new_inode(fs);
        pl_dirop op = {.kind = DIROP_CREATE, .inode = ino};
        snprintf(op.a, NAME_LEN, "%s", path);
        record_dirop(fs, &op);
      }
      fs->fd_inode[rc] = ino;
    }
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

static int64_t pl_pwrite(void *u, int fd, const void *buf, size_t n, uint64_t off) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int64_t rc = -EIO;
  if (tick(fs)) {
    rc = posix()->pwrite(NULL, fd, buf, n, off);
    pl_inode *in = fd >= 0 && fd < MAX_FDS && fs->fd_inode[fd] >= 0 ? &fs->inodes[fs->fd_inode[fd]] : NULL;
    if (rc > 0 && in != NULL) {
      if (in->npending == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 16;
        in->pending = realloc(in->pending, in->cap * sizeof *in->pending);
      }
      pl_write w = {off, (size_t)rc, malloc((size_t)rc)};
      memcpy(w.data, buf, (size_t)rc);
      in->pending[in->npending++] = w;
    }
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

/* Applies w (or, when keep_page is given, only the pages it keeps) to in's durable bytes. */
static void apply_write(pl_inode *in, const pl_write *w, uint64_t *rng) {
  if (w->off + w->n > in->durable_n) {
    in->durable = realloc(in->durable, (size_t)(w->off + w->n));
    memset(in->durable + in->durable_n, 0, (size_t)(w->off + w->n) - in->durable_n);
    in->durable_n = (size_t)(w->off + w->n);
  }
  for (size_t k = 0; k < w->n; k += PAGE) {
    size_t len = w->n - k < PAGE ? w->n - k : PAGE;
    if (rng == NULL || (ct_next(rng) & 1)) memcpy(in->durable + w->off + k, w->data + k, len);
  }
}

static void make_durable(pl_inode *in, uint64_t *rng) {
  for (size_t k = 0; k < in->npending; k++) {
    apply_write(in, &in->pending[k], rng);
    free(in->pending[k].data);
  }
  in->npending = 0;
}

static int pl_fsync(void *u, int fd) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int rc = -EIO;
  if (tick(fs)) {
    rc = 0;
    int ino = fd >= 0 && fd < MAX_FDS ? fs->fd_inode[fd] : -1;
    if (ino >= 0 && !fs->lying_fsync) make_durable(&fs->inodes[ino], NULL);
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

static int pl_close(void *u, int fd) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  bool alive = tick(fs);
  int rc = posix()->close(NULL, fd); /* the descriptor goes either way */
  if (fd >= 0 && fd < MAX_FDS) fs->fd_inode[fd] = -1;
  pthread_mutex_unlock(&fs->mu);
  return alive ? rc : -EIO;
}

static int pl_rename(void *u, const char *from, const char *to) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int rc = -EIO;
  if (tick(fs)) {
    rc = posix()->rename(NULL, from, to);
    if (rc == 0) {
      pl_dirop op = {.kind = DIROP_RENAME};
      snprintf(op.a, NAME_LEN, "%s", from);
      snprintf(op.b, NAME_LEN, "%s", to);
      record_dirop(fs, &op);
    }
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

static int pl_unlink(void *u, const char *path) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int rc = -EIO;
  if (tick(fs)) {
    rc = posix()->unlink(NULL, path);
    if (rc == 0) {
      pl_dirop op = {.kind = DIROP_UNLINK};
      snprintf(op.a, NAME_LEN, "%s", path);
      record_dirop(fs, &op);
    }
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

/* The directory's changes (in order) become durable; other directories' stay pending. */
static int pl_fsync_dir(void *u, const char *dir) {
  pl_fs *fs = u;
  pthread_mutex_lock(&fs->mu);
  int rc = -EIO;
  if (tick(fs)) {
    rc = 0;
    size_t kept = 0;
    for (size_t i = 0; i < fs->nops && !fs->skip_dir_sync; i++) {
      if (in_dir(fs->ops[i].a, dir)) names_apply(&fs->durable, &fs->ops[i]);
      else fs->ops[kept++] = fs->ops[i];
    }
    if (!fs->skip_dir_sync) fs->nops = kept;
  }
  pthread_mutex_unlock(&fs->mu);
  return rc;
}

static optic_ckpt_io pl_io(pl_fs *fs) {
  optic_ckpt_io io = *posix();
  io.user = fs;
  io.open = pl_open;
  io.pwrite = pl_pwrite;
  io.fsync = pl_fsync;
  io.close = pl_close;
  io.rename = pl_rename;
  io.unlink = pl_unlink;
  io.fsync_dir = pl_fsync_dir;
  io.writeback = NULL;
  return io;
}

/* The power went out: rewrites the real directories as the disk holds them.
 * rng NULL: drop everything unsynced; else keep a random prefix of each
 * directory's changes and a random subset of the unsynced pages. */
static void lose_power(pl_fs *fs, uint64_t *rng) {
  pl_names ns = fs->durable;
  size_t pending[MAX_DIRS] = {0}, keep[MAX_DIRS] = {0}, seen[MAX_DIRS] = {0};
  for (size_t i = 0; i < fs->nops; i++) pending[dir_of(fs, fs->ops[i].a)]++;
  for (size_t d = 0; d < fs->ndirs && rng != NULL; d++) keep[d] = (size_t)(ct_next(rng) % (pending[d] + 1));
  for (size_t i = 0; i < fs->nops; i++) {
    size_t d = dir_of(fs, fs->ops[i].a);
    if (seen[d]++ < keep[d]) names_apply(&ns, &fs->ops[i]);
  }
  for (int i = 0; i < MAX_INODES; i++) {
    pl_inode *in = &fs->inodes[i];
    if (!in->used) continue;
    if (rng != NULL) make_durable(in, rng);
  }
  for (size_t d = 0; d < fs->ndirs; d++) {
    ct_rmdir(fs->dirs[d]);
    OT_CHECK(mkdir(fs->dirs[d], 0700) == 0);
  }
  for (size_t i = 0; i < ns.n; i++) {
    const pl_inode *in = &fs->inodes[ns.at[i].inode];
    OT_CHECK(ct_write_file(ns.at[i].name, in->durable, in->durable_n), "rebuilding %s", ns.at[i].name);
  }
}

/* ------------------------------------------------------------ checkpoints */

static float *bufs[TENSORS], *got[TENSORS];
static const char *names[TENSORS] = {"w", "b", "scale", "adam/m"};

/* One hashing thread everywhere: the machine may be shared, and OpenMP's spinning workers would wait on it. */
static const optic_ckpt_read_options one_thread = {.size = sizeof one_thread, .threads = 1};

static void fill_for_step(uint64_t step) {
  for (int i = 0; i < TENSORS; i++) ct_fill(bufs[i], tensor_floats[i] * 4, step * 977 + (uint64_t)i);
}

static optic_ckpt_entry entry(int i, float *data) {
  return (optic_ckpt_entry){names[i], {OPTIC_F32, {.rank = 1, .dims = {(int64_t)tensor_floats[i]}}, data}};
}

static optic_status save_to(const char *const *dirs, size_t ndirs, uint64_t step, const optic_ckpt_io *io) {
  fill_for_step(step);
  optic_ckpt_entry e[TENSORS];
  for (int i = 0; i < TENSORS; i++) e[i] = entry(i, bufs[i]);
  optic_ckpt_save_options o = {.size = sizeof o, .threads = 1, .chunk_log2 = 16, .keep = 2, .io = io};
  return optic_ckpt_save(dirs, ndirs, step, e, TENSORS, NULL, 0, &o);
}
static optic_status save_step(const char *dir, uint64_t step, const optic_ckpt_io *io) {
  return save_to(&dir, 1, step, io);
}

static optic_status repair_dirs(const char *const *dirs, size_t ndirs, uint64_t step, const optic_ckpt_io *io) {
  (void)step;
  optic_ckpt_save_options o = {.size = sizeof o, .threads = 1, .chunk_log2 = 16, .io = io};
  return optic_ckpt_repair(dirs, ndirs, &o, NULL);
}

/* Whether every named checkpoint in dir verifies (why says which does not). */
static bool all_verify(const char *dir, char *why, size_t cap) {
  uint64_t steps[16];
  size_t count = 0;
  if (optic_ckpt_list(dir, steps, 16, &count) != OPTIC_OK) {
    snprintf(why, cap, "list: %s", optic_last_error());
    return false;
  }
  for (size_t j = 0; j < count && j < 16; j++) {
    char path[160];
    optic_ckpt_path(dir, steps[j], path, sizeof path);
    if (optic_ckpt_verify_file(path, &one_thread) != OPTIC_OK) {
      snprintf(why, cap, "%s does not verify: %s", path, optic_last_error());
      return false;
    }
  }
  return true;
}

/* Rollback over dirs: the step restored if it is prev or next (next if
 * must_be_next), bit-exact, with at most max_skipped files rejected;
 * else UINT64_MAX and why. */
static uint64_t rollback_checked(const char *const *dirs, size_t ndirs, uint64_t prev, uint64_t next, bool must_be_next,
                                 size_t max_skipped, char *why, size_t cap) {
  optic_ckpt_entry t[TENSORS];
  for (int i = 0; i < TENSORS; i++) t[i] = entry(i, got[i]);
  optic_ckpt_restore_report rep = {.size = sizeof rep};
  if (optic_ckpt_restore_latest(dirs, ndirs, t, TENSORS, &one_thread, &rep) != OPTIC_OK) {
    snprintf(why, cap, "rollback: %s", optic_last_error());
    return UINT64_MAX;
  }
  if (rep.skipped > max_skipped || (rep.step != prev && rep.step != next) || (must_be_next && rep.step != next)) {
    snprintf(why, cap, "restored step %llu (skipped %zu: %s), expected %s%llu", (unsigned long long)rep.step,
             rep.skipped, rep.first_skipped, must_be_next ? "" : "the previous or ", (unsigned long long)next);
    return UINT64_MAX;
  }
  fill_for_step(rep.step);
  for (int i = 0; i < TENSORS; i++) {
    if (memcmp(got[i], bufs[i], tensor_floats[i] * 4) != 0) {
      snprintf(why, cap, "step %llu restored, tensor %s differs", (unsigned long long)rep.step, names[i]);
      return UINT64_MAX;
    }
  }
  return rep.step;
}

/* After a power loss: every named checkpoint of every directory verifies,
 * rollback restores prev or next (next if must_be_next, and then from each
 * replica alone too) bit-exact with nothing rejected. Returns the step
 * restored, or UINT64_MAX with a reason in why. */
static uint64_t check_after_loss(const char *const *dirs, size_t ndirs, uint64_t prev, uint64_t next, bool must_be_next,
                                 char *why, size_t cap) {
  why[0] = '\0';
  for (size_t d = 0; d < ndirs; d++)
    if (!all_verify(dirs[d], why, cap)) return UINT64_MAX;
  for (size_t d = 0; d < ndirs && must_be_next && ndirs > 1; d++)
    if (rollback_checked(&dirs[d], 1, prev, next, true, 0, why, cap) == UINT64_MAX) return UINT64_MAX;
  return rollback_checked(dirs, ndirs, prev, next, must_be_next, 0, why, cap);
}

typedef struct scenario {
  long kill_at;   /* -1: no power loss during the save (it happens after) */
  uint64_t *torn; /* NULL: drop every unsynced change */
  bool lying_fsync, skip_dir_sync;
} scenario;

typedef optic_status (*pl_action)(const char *const *dirs, size_t ndirs, uint64_t step, const optic_ckpt_io *io);

/* Runs action(dirs, step) on the simulated disk, the power lost at the
 * scenario's kill point, the directories rebuilt. Returns the action's
 * status; *calls receives the I/O calls it made. */
static optic_status with_power_loss(const char *const *dirs, size_t ndirs, uint64_t step, pl_action action,
                                    const scenario *sc, long *calls) {
  static pl_fs fs;
  start_fs(&fs, dirs, ndirs);
  fs.kill_at = sc->kill_at;
  fs.lying_fsync = sc->lying_fsync;
  fs.skip_dir_sync = sc->skip_dir_sync;
  optic_ckpt_io io = pl_io(&fs);
  optic_status st = action(dirs, ndirs, step, &io);
  if (calls) *calls = fs.calls;
  lose_power(&fs, sc->torn);
  free_fs(&fs);
  return st;
}

/* One save of step `next` over durable directories whose newest step is
 * prev, the power lost at the scenario's kill point, the checks. Returns
 * the step restored (UINT64_MAX on a failed check, why says what). */
static uint64_t run_scenario_in(const char *const *dirs, size_t ndirs, uint64_t prev, uint64_t next, const scenario *sc,
                                long *calls, char *why, size_t cap) {
  optic_status st = with_power_loss(dirs, ndirs, next, save_to, sc, calls);
  return check_after_loss(dirs, ndirs, prev, next, st == OPTIC_OK, why, cap);
}
static uint64_t run_scenario(const char *dir, uint64_t prev, uint64_t next, const scenario *sc, long *calls, char *why,
                             size_t cap) {
  return run_scenario_in(&dir, 1, prev, next, sc, calls, why, cap);
}

static uint64_t seed_base(void) {
  const char *s = getenv("OPTIC_SEED");
  return s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
}

static void setup_buffers(void) {
  for (int i = 0; i < TENSORS; i++) {
    if (bufs[i] == NULL) bufs[i] = malloc(tensor_floats[i] * 4);
    if (got[i] == NULL) got[i] = malloc(tensor_floats[i] * 4);
  }
}

/* dir emptied and given steps 1 and 2 (saved once into a template directory, then copied). */
static void fresh_dir(const char *dir) {
  static char template_dir[64];
  if (template_dir[0] == '\0') {
    OT_CHECK(ct_mkdtemp(template_dir, sizeof template_dir));
    OT_EXPECT_OK(save_step(template_dir, 1, NULL));
    OT_EXPECT_OK(save_step(template_dir, 2, NULL));
  }
  ct_rmdir(dir);
  OT_CHECK(mkdir(dir, 0700) == 0);
  for (uint64_t step = 1; step <= 2; step++) {
    char from[160], to[160];
    optic_ckpt_path(template_dir, step, from, sizeof from);
    optic_ckpt_path(dir, step, to, sizeof to);
    size_t n = 0;
    uint8_t *b = ct_read_file(from, &n);
    OT_CHECK(b != NULL && ct_write_file(to, b, n));
    free(b);
  }
}

static void every_kill_point(void) {
  setup_buffers();
  uint64_t base = seed_base();
  printf("  base seed %llu (repeat with OPTIC_SEED=%llu)\n", (unsigned long long)base, (unsigned long long)base);
  char dir[64], why[1024];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  /* How many I/O calls one save makes here: every one is a kill point, and so is "after the last". */
  fresh_dir(dir);
  long calls = 0;
  scenario none = {.kill_at = -1};
  OT_CHECK(run_scenario(dir, 2, 3, &none, &calls, why, sizeof why) == 3, "uninterrupted save: %s", why);
  OT_CHECK(calls >= 10, "a save made only %ld I/O calls", calls);
  int runs = 0, got_prev = 0, got_next = 0;
  for (long k = 0; k <= calls && ot_failures_ == 0; k++) {
    for (int v = 0; v <= TORN_VARIANTS && ot_failures_ == 0; v++) {
      uint64_t seed = base * 1000 + (uint64_t)(k * 16 + v), rng = seed;
      scenario sc = {.kill_at = k, .torn = v == 0 ? NULL : &rng};
      fresh_dir(dir);
      uint64_t step = run_scenario(dir, 2, 3, &sc, NULL, why, sizeof why);
      OT_CHECK(step != UINT64_MAX, "kill at I/O call %ld of %ld, %s (seed %llu): %s", k, calls,
               v == 0 ? "unsynced changes dropped" : "torn", (unsigned long long)seed, why);
      runs++;
      if (step == 2) got_prev++;
      if (step == 3) got_next++;
    }
  }
  printf("  %ld kill points x %d variants = %d power losses: %d restored the previous step, %d the new one\n",
         calls + 1, TORN_VARIANTS + 1, runs, got_prev, got_next);
  OT_CHECK(got_prev > 0 && got_next > 0, "both outcomes occur");
  ct_rmdir(dir);
}

static void chain_of_saves(void) {
  setup_buffers();
  uint64_t base = seed_base() + 7, s = base;
  printf("  chain seed %llu (OPTIC_SEED=%llu)\n", (unsigned long long)base, (unsigned long long)seed_base());
  char dir[64], why[1024];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  fresh_dir(dir);
  uint64_t last = 2;
  int lost = 0;
  for (int i = 0; i < CHAIN_SAVES && ot_failures_ == 0; i++) {
    uint64_t rng = ct_next(&s);
    scenario sc = {.kill_at = (long)(ct_next(&s) % 20), .torn = (ct_next(&s) & 1) ? &rng : NULL};
    uint64_t step = run_scenario(dir, last, last + 1, &sc, NULL, why, sizeof why);
    OT_CHECK(step != UINT64_MAX, "save %d (step %llu, kill at call %ld, %s): %s", i, (unsigned long long)(last + 1),
             sc.kill_at, sc.torn ? "torn" : "dropped", why);
    if (step == last) lost++;
    if (step != UINT64_MAX) last = step;
  }
  printf("  %d saves with a power loss: %d lost the new step (the previous one restored), newest step %llu\n",
         CHAIN_SAVES, lost, (unsigned long long)last);
  ct_rmdir(dir);
}

/* Saving to two replicas: at every kill point each replica holds only
 * complete checkpoints, and once the save returned OK each alone restores
 * the new step. */
static void replicas_every_kill_point(void) {
  setup_buffers();
  uint64_t base = seed_base() + 11;
  char a[64], b[64], why[1024];
  OT_CHECK(ct_mkdtemp(a, sizeof a) && ct_mkdtemp(b, sizeof b));
  const char *dirs[2] = {a, b};
  fresh_dir(a), fresh_dir(b);
  long calls = 0;
  scenario none = {.kill_at = -1};
  OT_CHECK(run_scenario_in(dirs, 2, 2, 3, &none, &calls, why, sizeof why) == 3, "uninterrupted: %s", why);
  int runs = 0;
  for (long k = 0; k <= calls && ot_failures_ == 0; k++) {
    for (int v = 0; v <= 4 && ot_failures_ == 0; v++) {
      uint64_t seed = base * 1000 + (uint64_t)(k * 16 + v), rng = seed;
      scenario sc = {.kill_at = k, .torn = v == 0 ? NULL : &rng};
      fresh_dir(a), fresh_dir(b);
      uint64_t step = run_scenario_in(dirs, 2, 2, 3, &sc, NULL, why, sizeof why);
      OT_CHECK(step != UINT64_MAX, "replicas: kill at I/O call %ld of %ld, %s (seed %llu, OPTIC_SEED=%llu): %s", k,
               calls, v == 0 ? "dropped" : "torn", (unsigned long long)seed, (unsigned long long)seed_base(), why);
      runs++;
    }
  }
  printf("  two replicas: %ld kill points x 5 variants = %d power losses survived\n", calls + 1, runs);
  ct_rmdir(a), ct_rmdir(b);
}

/* One repair of a's corrupted step 2 from b with the power lost at sc's
 * kill point, and the checks: the good replica untouched, the repaired file
 * either still the corrupt one or complete (complete once repair returned
 * OK), rollback gives step 2 bit-exact, a repair after the power loss
 * finishes the job. Returns the I/O calls made; *fixed: the copy was repaired. */
static long repair_once(const char *const *dirs, const scenario *sc, uint64_t seed, bool *fixed) {
  char bad[160], why[1024];
  optic_ckpt_path(dirs[0], 2, bad, sizeof bad);
  fresh_dir(dirs[0]), fresh_dir(dirs[1]);
  size_t n = 0;
  uint8_t *bytes = ct_read_file(bad, &n);
  OT_CHECK(bytes != NULL && n > 5000);
  if (bytes == NULL) return 0;
  bytes[n / 2] ^= 0x08; /* a's step 2: one flipped bit in its data */
  OT_CHECK(ct_write_file(bad, bytes, n));
  free(bytes);
  long made = 0;
  optic_status st = with_power_loss(dirs, 2, 0, repair_dirs, sc, &made);
  *fixed = optic_ckpt_verify_file(bad, &one_thread) == OPTIC_OK;
  OT_CHECK(all_verify(dirs[1], why, sizeof why), "repair, kill at %ld (seed %llu): the good replica: %s", sc->kill_at,
           (unsigned long long)seed, why);
  OT_CHECK(st != OPTIC_OK || *fixed, "repair, kill at %ld (seed %llu): returned OK, the copy is not durable",
           sc->kill_at, (unsigned long long)seed);
  OT_CHECK(rollback_checked(dirs, 2, 2, 2, true, 1, why, sizeof why) == 2, "repair, kill at %ld (seed %llu): %s",
           sc->kill_at, (unsigned long long)seed, why);
  optic_ckpt_repair_report rr = {.size = sizeof rr};
  OT_EXPECT_OK(optic_ckpt_repair(dirs, 2, NULL, &rr));
  OT_CHECK(all_verify(dirs[0], why, sizeof why), "repair, kill at %ld: after a second repair: %s", sc->kill_at, why);
  return made;
}

static void repair_every_kill_point(void) {
  setup_buffers();
  uint64_t base = seed_base() + 13;
  char a[64], b[64];
  OT_CHECK(ct_mkdtemp(a, sizeof a) && ct_mkdtemp(b, sizeof b));
  const char *dirs[2] = {a, b};
  scenario none = {.kill_at = -1};
  bool fixed = false;
  long calls = repair_once(dirs, &none, 0, &fixed);
  OT_CHECK(fixed && calls >= 5, "an uninterrupted repair (%ld I/O calls) left the copy corrupt", calls);
  int runs = 0, repaired = 0;
  for (long k = 0; k <= calls && ot_failures_ == 0; k++) {
    for (int v = 0; v <= 4 && ot_failures_ == 0; v++) {
      uint64_t seed = base * 1000 + (uint64_t)(k * 16 + v), rng = seed;
      scenario sc = {.kill_at = k, .torn = v == 0 ? NULL : &rng};
      repair_once(dirs, &sc, seed, &fixed);
      runs++;
      repaired += fixed;
    }
  }
  printf("  repair: %ld kill points x 5 variants = %d power losses survived (%d left the copy repaired)\n", calls + 1,
         runs, repaired);
  ct_rmdir(a), ct_rmdir(b);
}

/* The checks catch a disk that lies about fsync, and a save without the directory fsync. */
static void controls_are_caught(void) {
  setup_buffers();
  char dir[64], why[1024];
  OT_CHECK(ct_mkdtemp(dir, sizeof dir));
  int caught_lying = 0, caught_no_dir_sync = 0;
  for (long k = 0; k <= 20; k++) {
    fresh_dir(dir);
    scenario lying = {.kill_at = k, .lying_fsync = true};
    if (run_scenario(dir, 2, 3, &lying, NULL, why, sizeof why) == UINT64_MAX) caught_lying++;
    fresh_dir(dir);
    scenario no_dir = {.kill_at = k, .skip_dir_sync = true};
    if (run_scenario(dir, 2, 3, &no_dir, NULL, why, sizeof why) == UINT64_MAX) caught_no_dir_sync++;
  }
  printf("  lying fsync caught at %d of 21 kill points, skipped directory fsync at %d\n", caught_lying,
         caught_no_dir_sync);
  OT_CHECK(caught_lying > 0, "a disk that ignores fsync went unnoticed");
  OT_CHECK(caught_no_dir_sync > 0, "a save that never fsyncs its directory went unnoticed");
  ct_rmdir(dir);
  for (int i = 0; i < TENSORS; i++) free(bufs[i]), free(got[i]), bufs[i] = got[i] = NULL;
}

static const ot_case cases[] = {
    {"every_kill_point", every_kill_point},
    {"chain_of_saves", chain_of_saves},
    {"replicas_every_kill_point", replicas_every_kill_point},
    {"repair_every_kill_point", repair_every_kill_point},
    {"controls_are_caught", controls_are_caught},
};
OT_MAIN(cases)
