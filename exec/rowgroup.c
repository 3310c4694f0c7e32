/* Row groups: runs of consecutive steps that all work row by row on the same
 * R rows -- f32 kernel-path reduces of the trailing dims of [R, ...], native
 * input fusions of R rows, loop fusions whose result is [R, ...] -- run as
 * one step, a tile of rows at a time through every member. That is the
 * softmax / layer-norm pattern (reduce -> broadcast -> elementwise ->
 * reduce): a tile's intermediates are used while they are in cache, and those
 * no step outside the group touches live in a per-thread tile buffer instead
 * of the arena, so they never travel to memory. A step joins only when each
 * value an earlier member wrote is read row-locally (row r of a result reads
 * only row r of it), so tiles are independent and threads split tiles with no
 * barrier inside the group; every member computes exactly what it computes
 * alone, so results are bitwise those of the steps run one by one.
 * Forming allocates (bind time); running never does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"
#include "kernels/stream.h"

/* Bytes of the widest row of a tile: tiles hold about this much per value. */
#define RG_TILE_TARGET_BYTES ((size_t)16384)
#define RG_MAX_MEMBERS 64
/* The widest block a member's program runs in one call (elements): one
 * reduction leaf. Measured (optic run --repeat 500, 1 thread, back to back):
 * a whole tile (up to 4096) on rows of 125 ran softmax_f32 in 11.6 us and
 * layernorm_f32 in 13.1 us against 10.5 and 12.8 us with 1024, though it
 * executed fewer instructions: its registers no longer fit L1 beside the
 * tile. On rows of 1024 the blocks are cut at row ends anyway. */
#define RG_BLOCK_MAX ((size_t)1024)
#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

enum { RG_NONE, RG_NOOP, RG_REDUCE, RG_INPUT, RG_LOOP };

static size_t type_elems(const optic_type *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->shape.rank; d++) n *= (size_t)t->shape.dims[d];
  return n;
}

/* What step s is to a row group, and its rows R (0: not a member). */
static int member_kind(const exec_step *s, size_t *rows) {
  *rows = 0;
  if (s->noop) return RG_NOOP;
  if (s->sync || s->n_members > 0 || optic_type_is_tuple(s->type) || s->n_out != 1) return RG_NONE;
  if (s->op == OPTIC_OP_REDUCE) {
    const optic_shape *is = &s->operand_shape[0];
    const int32_t nd = s->attrs.reduce.count;
    if (!s->reduce_fast || s->n_operands != 2 || is->rank < 2 || nd != is->rank - 1) return RG_NONE;
    for (int32_t i = 0; i < nd; i++) {
      if (s->attrs.reduce.dims[i] < 1) return RG_NONE; /* exactly the trailing dims 1..rank-1 */
    }
    *rows = (size_t)is->dims[0];
    return *rows > 0 ? RG_REDUCE : RG_NONE;
  }
  if (s->op != OPTIC_OP_FUSION || s->prog == NULL || s->dot || s->conv) return RG_NONE;
  if (s->input_fusion) {
    *rows = s->in_rows;
    return *rows > 0 ? RG_INPUT : RG_NONE;
  }
  if (s->type->shape.rank < 1 || s->type->shape.dims[0] <= 0) return RG_NONE;
  *rows = (size_t)s->type->shape.dims[0];
  return RG_LOOP;
}

static bool same_ref(const exec_ref *a, const exec_ref *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == REF_ARENA) return a->offset == b->offset && a->size == b->size;
  return (a->kind == REF_OUTPUT || a->kind == REF_PARAM) && a->index == b->index;
}

static bool overlaps(const exec_ref *a, const exec_ref *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == REF_ARENA)
    return a->size && b->size && a->offset < b->offset + b->size && b->offset < a->offset + a->size;
  return (a->kind == REF_OUTPUT || a->kind == REF_PARAM) && a->index == b->index;
}

/* The refs the group's members wrote so far (their outputs) and read. */
typedef struct rg_refs {
  exec_ref w[RG_MAX_MEMBERS], r[RG_MAX_MEMBERS * 8];
  int32_t n_w, n_r;
} rg_refs;

/* Whether a gather walk reads row r of a value of `elems` elements only
 * for domain row r, over R rows. */
static bool walk_row_local(const exec_walk *w, size_t elems, size_t R) {
  if (w->base != 0 || w->rank < 1 || (size_t)w->dims[0] != R || elems % R != 0) return false;
  int64_t row = (int64_t)(elems / R), span = 0;
  if (w->strides[0] != row) return false;
  for (int32_t d = 1; d < w->rank; d++) {
    if (w->strides[d] < 0) return false;
    span += (w->dims[d] - 1) * w->strides[d];
  }
  return span < row || row == 0;
}

/* Whether member s reads its operand k only row by row (row r of its
 * domain reads row r of the operand). */
static bool operand_row_local(const exec_step *s, int kind, int32_t k, size_t R) {
  if (kind == RG_REDUCE) return k == 0;
  const ew_prog *p = s->prog;
  if (k >= p->n_inputs || ((p->scalar_inputs >> k) & 1u)) return false;
  for (int32_t i = 0; i < p->n_instr; i++) {
    const ew_instr *in = &p->ins[i];
    for (int32_t j = 0; j < in->n_src; j++) {
      const ew_src *src = &in->src[j];
      if (src->index != k || src->kind == EW_REG) continue;
      if (src->kind == EW_SCALAR) return false;
      if (in->kind == EW_GATHER && !walk_row_local(&in->walk, s->operand_elems[k], R)) return false;
    }
  }
  return true;
}

/* Whether step s (kind, rows R) may join a group whose members so far
 * touched g: what they wrote is read exactly and row-locally, and what s
 * writes meets their buffers only as exactly the same range. */
static bool may_join(const exec_step *s, int kind, size_t R, const rg_refs *g) {
  if (g->n_w >= RG_MAX_MEMBERS || g->n_r + s->in_first[s->n_operands] > RG_MAX_MEMBERS * 8) return false;
  for (int32_t k = 0; k < s->n_operands; k++) {
    if (s->in_first[k + 1] - s->in_first[k] != 1) return false;
    const exec_ref *in = &s->in[s->in_first[k]];
    for (int32_t j = 0; j < g->n_w; j++) {
      if (!overlaps(in, &g->w[j])) continue;
      if (!same_ref(in, &g->w[j]) || !operand_row_local(s, kind, k, R)) return false;
    }
  }
  const exec_ref *out = &s->out[0];
  for (int32_t j = 0; j < g->n_w; j++) {
    if (overlaps(out, &g->w[j]) && !same_ref(out, &g->w[j])) return false;
  }
  for (int32_t j = 0; j < g->n_r; j++) {
    if (overlaps(out, &g->r[j]) && !same_ref(out, &g->r[j])) return false;
  }
  return true;
}

static void note_refs(const exec_step *s, rg_refs *g) {
  for (int32_t k = 0; k < s->in_first[s->n_operands]; k++) g->r[g->n_r++] = s->in[k];
  g->w[g->n_w++] = s->out[0];
}

/* Whether no step of q outside [a, b) and no root leaf touches range r. */
static bool private_to(const exec_seq *q, int32_t a, int32_t b, const exec_ref *r, const exec_ref *root,
                       int32_t n_root) {
  if (r->kind != REF_ARENA) return false;
  for (int32_t i = 0; i < q->n_steps; i++) {
    if (i >= a && i < b) continue;
    const exec_step *s = &q->steps[i];
    for (int32_t k = 0; k < s->in_first[s->n_operands]; k++) {
      if (overlaps(&s->in[k], r)) return false;
    }
    for (int32_t k = 0; k < s->n_out; k++) {
      if (overlaps(&s->out[k], r)) return false;
    }
  }
  for (int32_t l = 0; l < n_root; l++) {
    if (overlaps(&root[l], r)) return false;
  }
  return true;
}

/* Register bytes member s needs with blocks of `block` elements. */
static size_t member_regs(const exec_step *s, size_t block) {
  size_t regs = s->prog ? (size_t)s->prog->n_regs + 1 : 0;
  if (s->op == OPTIC_OP_REDUCE) regs += (size_t)s->n_operands + 1;
  size_t bytes = regs * (s->prog ? block : EXEC_BLOCK) * 8, work = exec_reduce_work_bytes(s);
  return work > bytes ? work : bytes;
}

/* Elements per block program call in group g: a tile of the widest
 * member's domain, at most RG_BLOCK_MAX and at least EXEC_BLOCK (an input
 * fusion's staging register holds a reduction leaf, OPTIC_REDUCE_BLOCK
 * floats). A tile's values are in cache already, so a wider block only
 * saves per-call work: each program instruction dispatches half or a
 * quarter as often. */
static size_t group_block(const exec_step *g) {
  size_t block = EXEC_BLOCK;
  for (int32_t i = 0; i < g->n_members; i++) {
    const exec_step *s = &g->members[i];
    if (s->noop || s->prog == NULL) continue;
    size_t want = g->rg_tile * (s->input_fusion ? s->in_len : s->rg_per_row);
    want = want > RG_BLOCK_MAX ? RG_BLOCK_MAX : want;
    block = want > block ? want : block;
  }
  return block;
}

/* Values only the group's members [a, b) of q touch move to the tile
 * buffer of g; the widest row sets the tile height. */
static void tile_private_values(const exec_seq *q, int32_t a, int32_t b, exec_step *g, size_t R, const exec_ref *root,
                                int32_t n_root) {
  int32_t n = b - a;
  size_t widest = 1;
  for (int32_t i = 0; i < n; i++) {
    exec_step *s = &g->members[i];
    if (s->noop) continue;
    size_t row = s->out[0].size / R;
    widest = row > widest ? row : widest;
    s->rg_per_row = type_elems(s->type) / R;
  }
  g->rg_tile = RG_TILE_TARGET_BYTES / widest;
  g->rg_tile = g->rg_tile < 1 ? 1 : g->rg_tile > R ? R : g->rg_tile;
  for (int32_t i = 0; i < n; i++) {
    exec_step *s = &g->members[i];
    if (s->noop || s->out[0].kind == REF_TILE || !private_to(q, a, b, &s->out[0], root, n_root)) continue;
    const exec_ref v = s->out[0];
    exec_ref t = {.kind = REF_TILE, .index = (int32_t)(v.size / R), .offset = g->rg_tile_bytes, .size = v.size};
    g->rg_tile_bytes += ALIGN64(g->rg_tile * (v.size / R));
    for (int32_t j = i; j < n; j++) {
      exec_step *u = &g->members[j];
      for (int32_t k = 0; k < u->in_first[u->n_operands]; k++) {
        if (same_ref(&u->in[k], &v)) u->in[k] = t;
      }
      if (same_ref(&u->out[0], &v)) u->out[0] = t;
    }
  }
}

/* The group's inputs read from outside it whole rows at a time ([R, ...]
 * arrays in memory, not the tile buffer): what the next tile will read.
 * Only when they outgrow the caches (the streaming rule of
 * kernels/stream.h): inputs that stay in cache gain nothing from it. */
static void note_ahead(exec_step *g, size_t R) {
  for (int32_t i = 0; i < g->n_members; i++) {
    const exec_step *s = &g->members[i];
    if (s->noop) continue;
    for (int32_t k = 0; k < s->in_first[s->n_operands]; k++) {
      const exec_ref *r = &s->in[k];
      if ((r->kind != REF_ARENA && r->kind != REF_PARAM) || r->size < R * 64 || r->size % R != 0) continue;
      bool seen = false;
      for (int32_t j = 0; j < g->rg_n_ahead; j++) seen |= same_ref(r, &g->rg_ahead[j]);
      if (!seen && g->rg_n_ahead < 4) g->rg_ahead[g->rg_n_ahead++] = *r;
    }
  }
  size_t bytes = 0;
  for (int32_t j = 0; j < g->rg_n_ahead; j++) bytes += g->rg_ahead[j].size;
  if (!optic_stream_use(bytes)) g->rg_n_ahead = 0;
}

/* Moves steps [a, b) of q into one row-group step at a; the others shift down. */
static optic_status make_group(exec_seq *q, int32_t a, int32_t b, size_t R, int64_t split_min, const exec_ref *root,
                               int32_t n_root) {
  int32_t n = b - a;
  exec_step g;
  memset(&g, 0, sizeof g);
  g.members = calloc((size_t)n, sizeof *g.members);
  g.owned_name = malloc(128);
  if (g.members == NULL || g.owned_name == NULL) {
    free(g.members);
    free(g.owned_name);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory");
  }
  memcpy(g.members, &q->steps[a], (size_t)n * sizeof *g.members);
  g.n_members = n;
  g.rg_rows = R;
  tile_private_values(q, a, b, &g, R, root, n_root);
  g.rg_block = group_block(&g);
  note_ahead(&g, R);
  size_t n_in = 0, n_out = 0, touched = 0, at = 0;
  for (int32_t i = 0; i < n; i++) {
    const exec_step *s = &g.members[i];
    if (s->noop) continue;
    n_in += (size_t)s->in_first[s->n_operands];
    n_out += 1;
    size_t r = member_regs(s, g.rg_block);
    g.rg_regs = r > g.rg_regs ? r : g.rg_regs;
    g.flops += s->flops, g.bytes += s->bytes, g.est_ns += s->est_ns;
    touched += type_elems(s->type);
    for (int32_t k = 0; k < s->n_operands; k++) touched += s->operand_elems[k];
  }
  g.in_first = calloc(2, sizeof *g.in_first);
  g.in = calloc(n_in + 1, sizeof *g.in);
  g.out = calloc(n_out + 1, sizeof *g.out);
  if (g.in_first == NULL || g.in == NULL || g.out == NULL) {
    g.n_members = 0; /* the members still belong to q */
    exec_step_free(&g);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory");
  }
  int32_t ni = 0, no = 0;
  for (int32_t i = 0; i < n; i++) {
    const exec_step *s = &g.members[i];
    if (s->noop) continue;
    for (int32_t k = 0; k < s->in_first[s->n_operands]; k++) {
      if (s->in[k].kind != REF_TILE) g.in[ni++] = s->in[k];
    }
    if (s->out[0].kind != REF_TILE) g.out[no++] = s->out[0];
    at += (size_t)snprintf(g.owned_name + at, at < 120 ? 120 - at : 0, "%s%s", at ? "+" : "rows:", s->name);
    if (at >= 120) at = 120;
    g.id = s->id, g.type = s->type;
  }
  g.n_operands = 1;
  g.in_first[1] = ni;
  g.n_out = no;
  g.op = OPTIC_OP_FUSION;
  g.name = g.owned_name;
  g.solo = touched < (size_t)split_min;
  q->steps[a] = g;
  memmove(&q->steps[a + 1], &q->steps[b], (size_t)(q->n_steps - b) * sizeof *q->steps);
  q->n_steps -= n - 1;
  for (int32_t i = 0; i < n; i++) { /* the group is q's now: q frees what this allocates */
    exec_step *m = &q->steps[a].members[i];
    if (!m->noop && m->op == OPTIC_OP_REDUCE) {
      optic_status st = exec_reduce_rows_prepare(m);
      if (st != OPTIC_OK) return st;
    }
  }
  return OPTIC_OK;
}

optic_status exec_form_row_groups(exec_seq *q, int64_t split_min, const exec_ref *root, int32_t n_root) {
  for (int32_t a = 0; a < q->n_steps; a++) {
    size_t R;
    int kind = member_kind(&q->steps[a], &R);
    if (kind == RG_NONE || kind == RG_NOOP) continue;
    rg_refs *g = calloc(1, sizeof *g);
    if (g == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory");
    int32_t b = a, last = a, reduces = 0, real = 0;
    for (; b < q->n_steps; b++) {
      size_t Rb;
      const exec_step *s = &q->steps[b];
      int kb = member_kind(s, &Rb);
      if (kb == RG_NOOP) continue;
      if (kb == RG_NONE || Rb != R || !may_join(s, kb, R, g)) break;
      note_refs(s, g);
      reduces += kb == RG_REDUCE || kb == RG_INPUT;
      real++;
      last = b;
    }
    free(g);
    if (real >= 2 && reduces >= 1) {
      optic_status st = make_group(q, a, last + 1, R, split_min, root, n_root);
      if (st != OPTIC_OK) return st;
    }
  }
  return OPTIC_OK;
}

/* Prefetches (into L2) part `part` of `parts` of rows [r0, r1) of the
 * group's row inputs: the next tile's, spread over the members of this one,
 * so its reads from memory overlap this tile's work and writes instead of
 * all waiting for its first pass. Reads only: results are unchanged. */
static void tile_ahead(const exec_step *s, const exec_frame *f, size_t r0, size_t r1, int32_t part, int32_t parts) {
  for (int32_t j = 0; j < s->rg_n_ahead; j++) {
    const exec_ref *r = &s->rg_ahead[j];
    const size_t row = r->size / s->rg_rows, lo = r0 * row, bytes = (r1 - r0) * row;
    const size_t a = lo + bytes * (size_t)part / (size_t)parts, b = lo + bytes * (size_t)(part + 1) / (size_t)parts;
    const char *base = (const char *)ref_ptr(f, r);
    for (size_t off = a & ~(size_t)63; off < b; off += 64) __builtin_prefetch(base + off, 0, 2);
  }
}

optic_status exec_op_row_group(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  size_t tiles = (s->rg_rows + s->rg_tile - 1) / s->rg_tile, lo, hi;
  exec_share(tiles, th->t, th->nt, &lo, &hi);
  const size_t rows_end = hi * s->rg_tile < s->rg_rows ? hi * s->rg_tile : s->rg_rows; /* this thread's last row + 1 */
  exec_frame tf = *f;
  tf.tile = th->regs + s->rg_regs;
  bool streamed = false;
  for (size_t k = lo; k < hi; k++) {
    size_t r0 = k * s->rg_tile, r1 = r0 + s->rg_tile < s->rg_rows ? r0 + s->rg_tile : s->rg_rows;
    tf.tile_row0 = r0;
    const size_t n0 = r1, n1 = n0 + s->rg_tile < rows_end ? n0 + s->rg_tile : rows_end; /* the next tile */
    for (int32_t i = 0; i < s->n_members; i++) {
      const exec_step *m = &s->members[i];
      if (n0 < n1 && i > 0) tile_ahead(s, &tf, n0, n1, i - 1, s->n_members - 1);
      if (m->noop) continue;
      if (m->op == OPTIC_OP_REDUCE) {
        exec_reduce_rows(m, &tf, r0, r1, rows_end, th->regs); /* prefetch runs on into the next tile */
      } else if (m->input_fusion) {
        exec_input_fusion_rows(m, &tf, r0, r1, s->rg_block, th->regs);
      } else {
        const void *inputs[64];
        for (int32_t j = 0; j < m->n_operands; j++) inputs[j] = ref_ptr(&tf, &m->in[m->in_first[j]]);
        bool stream = m->out[0].kind != REF_TILE && exec_fused_streams(m);
        /* no prefetch: a tile's inputs are in cache (the tile buffer, or rows an earlier member just read) */
        unsigned char *y = ref_ptr(&tf, &m->out[0]);
        exec_fused_range(m, inputs, &y, r0 * m->rg_per_row, r1 * m->rg_per_row, stream, false, s->rg_block, th->regs);
        streamed |= stream;
      }
    }
  }
  if (streamed) optic_stream_fence();
  return OPTIC_OK;
}
