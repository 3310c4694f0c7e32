/* The one parallel pass over entry data: in a save, one I/O thread writes the
 * caller's tensors to the file (starting writeback as it goes, then fsyncing)
 * while the other threads hash the same memory chunk by chunk, and the I/O
 * thread joins the hashing when its writes are done. With T >= 2 hashing
 * threads, only T - 1 of them hash while the writes are copied into the page
 * cache (the last one waits, blocked, for the writes to finish and then hashes
 * while the fsync waits on the disk), so no more threads are runnable than
 * the T cores asked for and the I/O thread is never starved of a core; in a read, every thread
 * reads chunks into their destination in L2-sized pieces and hashes each piece
 * while it is hot. One run of a shared thread team (core/team.h: short spins,
 * then sleeps) per pass; never writes outside the spans. */
#include <pthread.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/internal.h"
#include "core/error.h"
#include "core/team.h"

/* Writes are issued in pieces of this size; writeback is started every
 * CKPT_WRITEBACK_BYTES so the final fsync finds little left to do. */
#define CKPT_WRITE_BYTES ((size_t)8 << 20)
#define CKPT_WRITEBACK_BYTES ((uint64_t)64 << 20)

typedef struct pass_state {
  const ckpt_pass *p;
  const uint64_t *first_chunk; /* per span, its first global chunk; [nspans] = total */
  uint8_t (*chunk_digests)[OPTIC_CKPT_DIGEST_BYTES];
  EVP_MD *md;
  atomic_uint_fast64_t next;
  atomic_int failed;
  /* save: the hashing thread that waits for the writes to finish (-1: none) */
  int gated;
  bool writes_done; /* under gate_mu */
  pthread_mutex_t gate_mu;
  pthread_cond_t gate_cv;
  pthread_mutex_t err_mu;
  optic_status st; /* first error, under err_mu */
  char msg[768];
} pass_state;

/* Records the calling thread's last optic error as the pass's first error. */
static void record_failure(pass_state *s, optic_status st) {
  pthread_mutex_lock(&s->err_mu);
  if (s->st == OPTIC_OK) {
    s->st = st;
    snprintf(s->msg, sizeof s->msg, "%s", optic_last_error());
  }
  pthread_mutex_unlock(&s->err_mu);
  atomic_store(&s->failed, 1);
}

static size_t span_of_chunk(const pass_state *s, uint64_t c) {
  size_t lo = 0, hi = s->p->nspans; /* first_chunk[lo] <= c < first_chunk[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->first_chunk[mid] <= c) lo = mid;
    else hi = mid;
  }
  return lo;
}

static optic_status hash_chunk(pass_state *s, EVP_MD_CTX *ctx, uint8_t *scratch, uint64_t c) {
  const ckpt_pass *p = s->p;
  size_t si = span_of_chunk(s, c);
  const ckpt_span *sp = &p->spans[si];
  uint64_t start = (c - s->first_chunk[si]) << p->chunk_log2;
  uint64_t len = sp->bytes - start;
  if (len > ((uint64_t)1 << p->chunk_log2)) len = (uint64_t)1 << p->chunk_log2;
  if (EVP_DigestInit_ex(ctx, s->md, NULL) != 1)
    return optic_fail(OPTIC_ERR_INTERNAL, "%s: EVP_DigestInit failed", p->op);
  if (p->mode == CKPT_PASS_SAVE) {
    if (EVP_DigestUpdate(ctx, sp->mem + start, (size_t)len) != 1)
      return optic_fail(OPTIC_ERR_INTERNAL, "%s: EVP_DigestUpdate failed", p->op);
  } else {
    for (uint64_t k = 0; k < len; k += CKPT_PIECE_BYTES) {
      if (atomic_load_explicit(&s->failed, memory_order_relaxed)) return OPTIC_OK;
      size_t n = len - k < CKPT_PIECE_BYTES ? (size_t)(len - k) : CKPT_PIECE_BYTES;
      uint8_t *dst = sp->mem != NULL ? sp->mem + start + k : scratch;
      uint64_t off = sp->offset + start + k;
      size_t got = 0;
      optic_status st = ckpt_read_full(p->io, p->fd, dst, n, off, &got, p->op, p->path);
      if (st != OPTIC_OK) return st;
      if (got < n)
        return optic_fail(OPTIC_ERR_CORRUPT, "%s: %s: truncated at byte %llu (inside entry %zu's data)", p->op, p->path,
                          (unsigned long long)(off + got), sp->entry);
      if (EVP_DigestUpdate(ctx, dst, n) != 1)
        return optic_fail(OPTIC_ERR_INTERNAL, "%s: EVP_DigestUpdate failed", p->op);
      if (p->mode == CKPT_PASS_COPY) {
        st = ckpt_write_full(p->io, p->out_fd, dst, n, off, p->op, p->out_path);
        if (st != OPTIC_OK) return st;
      }
    }
  }
  unsigned int dlen = 0;
  if (EVP_DigestFinal_ex(ctx, s->chunk_digests[c], &dlen) != 1 || dlen != OPTIC_CKPT_DIGEST_BYTES)
    return optic_fail(OPTIC_ERR_INTERNAL, "%s: EVP_DigestFinal failed", p->op);
  return OPTIC_OK;
}

/* Lets the gated hashing thread start (idempotent). */
static void open_gate(pass_state *s) {
  pthread_mutex_lock(&s->gate_mu);
  s->writes_done = true;
  pthread_cond_broadcast(&s->gate_cv);
  pthread_mutex_unlock(&s->gate_mu);
}

static void wait_gate(pass_state *s) {
  pthread_mutex_lock(&s->gate_mu);
  while (!s->writes_done) pthread_cond_wait(&s->gate_cv, &s->gate_mu);
  pthread_mutex_unlock(&s->gate_mu);
}

/* The I/O thread of a save: every span written in order, writeback started
 * as it goes, the gated hashing thread let in, then one fsync (which mostly
 * waits on the disk while the hashing goes on). */
static optic_status write_spans(pass_state *s) {
  const ckpt_pass *p = s->p;
  uint64_t since_writeback = 0, writeback_from = p->nspans > 0 ? p->spans[0].offset : 0;
  for (size_t i = 0; i < p->nspans; i++) {
    const ckpt_span *sp = &p->spans[i];
    for (uint64_t k = 0; k < sp->bytes; k += CKPT_WRITE_BYTES) {
      if (atomic_load_explicit(&s->failed, memory_order_relaxed)) return OPTIC_OK;
      size_t n = sp->bytes - k < CKPT_WRITE_BYTES ? (size_t)(sp->bytes - k) : CKPT_WRITE_BYTES;
      optic_status st = ckpt_write_full(p->io, p->fd, sp->mem + k, n, sp->offset + k, p->op, p->path);
      if (st != OPTIC_OK) return st;
      since_writeback += n;
      if (since_writeback >= CKPT_WRITEBACK_BYTES && p->io->writeback != NULL) {
        uint64_t end = sp->offset + k + n;
        (void)p->io->writeback(p->io->user, p->fd, writeback_from, end - writeback_from);
        writeback_from = end;
        since_writeback = 0;
      }
    }
  }
  open_gate(s);
  int rc = p->io->fsync(p->io->user, p->fd);
  if (rc < 0) return ckpt_io_fail(rc, p->op, "fsync of", p->path);
  return OPTIC_OK;
}

static void run_thread(void *arg, int t, int nt) {
  pass_state *s = arg;
  const ckpt_pass *p = s->p;
  (void)nt;
  if (p->mode == CKPT_PASS_SAVE && t == 0) {
    optic_status st = write_spans(s);
    if (st != OPTIC_OK) record_failure(s, st);
    open_gate(s); /* also after an error or a failure elsewhere */
  } else if (p->mode == CKPT_PASS_SAVE && t == s->gated) {
    wait_gate(s);
  }
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  uint8_t *scratch = NULL;
  if (p->mode != CKPT_PASS_SAVE) scratch = malloc(CKPT_PIECE_BYTES);
  if (ctx == NULL || (p->mode != CKPT_PASS_SAVE && scratch == NULL)) {
    record_failure(s, optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for a hashing context", p->op));
  } else {
    const uint64_t total = s->first_chunk[p->nspans];
    while (!atomic_load_explicit(&s->failed, memory_order_relaxed)) {
      uint64_t c = atomic_fetch_add(&s->next, 1);
      if (c >= total) break;
      optic_status st = hash_chunk(s, ctx, scratch, c);
      if (st != OPTIC_OK) record_failure(s, st);
    }
  }
  free(scratch);
  EVP_MD_CTX_free(ctx);
}

optic_status ckpt_run_pass(const ckpt_pass *p) {
  uint64_t *first = malloc((p->nspans + 1) * sizeof *first);
  if (first == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for %zu entries", p->op, p->nspans);
  uint64_t total = 0;
  for (size_t i = 0; i < p->nspans; i++) {
    first[i] = total;
    total += ckpt_chunks_of(p->spans[i].bytes, p->chunk_log2);
  }
  first[p->nspans] = total;
  pass_state s = {.p = p, .first_chunk = first, .gated = -1, .st = OPTIC_OK};
  pthread_mutex_init(&s.gate_mu, NULL);
  pthread_cond_init(&s.gate_cv, NULL);
  pthread_mutex_init(&s.err_mu, NULL);
  atomic_init(&s.next, 0);
  atomic_init(&s.failed, 0);
  s.chunk_digests = p->chunk_digests;
  if (s.chunk_digests == NULL) s.chunk_digests = malloc((total > 0 ? total : 1) * sizeof *s.chunk_digests);
  s.md = EVP_MD_fetch(NULL, "SHA256", NULL);
  optic_status st = OPTIC_OK;
  if (s.chunk_digests == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: no memory for %llu chunk hashes", p->op, (unsigned long long)total);
  } else if (s.md == NULL) {
    st = optic_fail(OPTIC_ERR_INTERNAL, "%s: OpenSSL has no SHA256 (EVP_MD_fetch failed)", p->op);
  } else {
    int threads = ckpt_threads(p->threads);
    if (p->mode == CKPT_PASS_SAVE) threads += 1; /* the I/O thread, mostly waiting on the disk */
    if ((uint64_t)threads > total + (p->mode == CKPT_PASS_SAVE)) threads = (int)(total + (p->mode == CKPT_PASS_SAVE));
    if (threads < 1) threads = 1;
    /* The I/O thread is thread 0; with 2+ hashing threads the last one waits
     * for the writes (in a team smaller than asked for, that is the last
     * thread of the team it gets; with 2 threads nobody waits). */
    optic_team *team = threads > 1 ? optic_team_acquire_for(threads) : NULL;
    threads = optic_team_prepare(team, threads);
    if (p->mode == CKPT_PASS_SAVE && threads >= 3) s.gated = threads - 1;
    optic_team_run(team, threads, run_thread, &s);
    optic_team_release(team);
    if (s.st != OPTIC_OK) st = optic_fail(s.st, "%s", s.msg);
    for (size_t i = 0; i < p->nspans && st == OPTIC_OK; i++)
      st = ckpt_sha256(s.chunk_digests[first[i]], (size_t)(first[i + 1] - first[i]) * OPTIC_CKPT_DIGEST_BYTES,
                       p->digests[i]);
  }
  pthread_cond_destroy(&s.gate_cv);
  pthread_mutex_destroy(&s.gate_mu);
  pthread_mutex_destroy(&s.err_mu);
  EVP_MD_free(s.md);
  if (s.chunk_digests != p->chunk_digests) free(s.chunk_digests);
  free(first);
  return st;
}
