/* HLO text attributes: the values the importer needs (integer lists,
 * computation references, windows, slices, paddings, dim labels, replica
 * groups) and skipping everything else (metadata, sharding, backend_config,
 * frontend_attributes, control-predecessors, unknown names), which may hold
 * quoted strings with commas, braces and '='. */
#include <stdio.h>
#include <string.h>

#include "graph/hlo_parse.h"
#include "graph/internal.h"

static const char *const attr_names[HLO_A_COUNT_] = {
#define HLO_ATTR_NAME_(name, str) str,
    HLO_ATTR_LIST(HLO_ATTR_NAME_)
#undef HLO_ATTR_NAME_
};

const char *hlo_attr_name(hlo_attr_kind k) { return (unsigned)k < HLO_A_COUNT_ ? attr_names[k] : "?"; }

const hlo_attr *hlo_find_attr(const hlo_instr *in, hlo_attr_kind kind) {
  for (const hlo_attr *a = in->attrs; a; a = a->next) {
    if (a->kind == kind) return a;
  }
  return NULL;
}

static optic_status oom(hlo_parser *P) {
  return hlo_fail_at(OPTIC_ERR_OUT_OF_MEMORY, P->L.tok.line, P->L.tok.col, "out of memory");
}

static optic_status expect(hlo_parser *P, hlo_tok kind, const char *what) {
  if (P->L.tok.kind != kind) return hlo_expected(&P->L, what);
  hlo_lex_next(&P->L);
  return OPTIC_OK;
}

/* An integer at the current token (consumed). */
static optic_status take_int(hlo_parser *P, int64_t *v) {
  optic_status st = hlo_token_int(&P->L, &P->L.tok, v);
  if (st == OPTIC_OK) hlo_lex_next(&P->L);
  return st;
}

/* Integers separated by commas up to `close` (consumed); the opener was consumed. */
static optic_status int_list_until(hlo_parser *P, hlo_tok close, const char *what, hlo_vec *v) {
  while (P->L.tok.kind != close) {
    int64_t *slot = hlo_vec_push(&P->A, v, sizeof *slot);
    if (slot == NULL) return oom(P);
    optic_status st = take_int(P, slot);
    if (st != OPTIC_OK) return st;
    if (P->L.tok.kind != HLO_COMMA) break;
    hlo_lex_next(&P->L);
  }
  return expect(P, close, what);
}

/* '{' int (',' int)* '}' */
static optic_status int_list(hlo_parser *P, hlo_attr *a) {
  optic_status st = expect(P, HLO_LBRACE, "'{' opening a list of integers");
  hlo_vec v = {0};
  if (st == OPTIC_OK) st = int_list_until(P, HLO_RBRACE, "',' or '}' in a list of integers", &v);
  a->ints = v.data;
  a->n_ints = v.n;
  return st;
}

static optic_status single_int(hlo_parser *P, hlo_attr *a) {
  if ((a->ints = hlo_arena_alloc(&P->A, sizeof *a->ints)) == NULL) return oom(P);
  a->n_ints = 1;
  return take_int(P, a->ints);
}

/* name, or '{' name (',' name)* '}' */
static optic_status comp_refs(hlo_parser *P, hlo_attr *a, bool list) {
  hlo_vec names = {0}, pos = {0};
  bool braced = P->L.tok.kind == HLO_LBRACE;
  if (braced) hlo_lex_next(&P->L);
  while (!braced || P->L.tok.kind != HLO_RBRACE) {
    const char **n = hlo_vec_push(&P->A, &names, sizeof *n);
    hlo_pos *p = hlo_vec_push(&P->A, &pos, sizeof *p);
    if (n == NULL || p == NULL) return oom(P);
    optic_status st = hlo_parse_name(P, "a computation name", n, p);
    if (st != OPTIC_OK) return st;
    if (!braced || P->L.tok.kind != HLO_COMMA) break;
    hlo_lex_next(&P->L);
  }
  if (braced) {
    optic_status st = expect(P, HLO_RBRACE, "',' or '}' in a list of computations");
    if (st != OPTIC_OK) return st;
  }
  if (!list && names.n != 1) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, a->pos.line, a->pos.col, "%s takes one computation, %d given",
                       hlo_attr_name(a->kind), (int)names.n);
  }
  a->names = names.data;
  a->name_pos = pos.data;
  a->n_names = names.n;
  return OPTIC_OK;
}

static optic_status word(hlo_parser *P, hlo_attr *a, bool raw) {
  hlo_token t = raw ? hlo_lex_raw_word(&P->L) : P->L.tok;
  if (t.kind == HLO_ERROR) return P->L.err;
  if (t.n == 0 || (!raw && t.kind != HLO_IDENT)) return hlo_expected(&P->L, "a value");
  if (!raw) hlo_lex_next(&P->L);
  if ((a->word = hlo_arena_strndup(&P->A, t.p, t.n)) == NULL) return oom(P);
  return OPTIC_OK;
}

/* A quoted string's text (escapes kept as written). */
static optic_status quoted(hlo_parser *P, hlo_attr *a) {
  hlo_token t = P->L.tok;
  if (t.kind != HLO_STRING || t.n < 2) return hlo_expected(&P->L, "a quoted string");
  hlo_lex_next(&P->L);
  if ((a->word = hlo_arena_strndup(&P->A, t.p + 1, t.n - 2)) == NULL) return oom(P);
  return OPTIC_OK;
}

/* An integer inside a raw word. */
static optic_status sub_int(const hlo_token *w, const char *p, size_t n, int64_t *out) {
  hlo_token t = *w;
  t.kind = HLO_NUMBER;
  t.col += (int32_t)(p - w->p);
  t.p = p;
  t.n = n;
  return hlo_token_int(NULL, &t, out);
}

/* A raw word of groups separated by 'x', each of min_per..max_per integers
 * separated by '_' ("3x3", "1_1x0_2", "0_1_2x3_4"): out[g * max_per + j],
 * missing trailing entries 0. */
static optic_status x_groups(const hlo_token *w, int32_t min_per, int32_t max_per, int64_t *out, int32_t max_groups,
                             int32_t *n_groups) {
  *n_groups = 0;
  if (w->n == 0) return OPTIC_OK;
  const char *p = w->p, *end = w->p + w->n;
  while (p <= end) {
    const char *gend = memchr(p, 'x', (size_t)(end - p));
    if (gend == NULL) gend = end;
    if (*n_groups == max_groups) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, w->line, w->col, "more than %d dimensions in '%.*s'",
                         (int)max_groups, (int)w->n, w->p);
    }
    int64_t *g = out + (size_t)*n_groups * (size_t)max_per;
    int32_t k = 0;
    for (const char *q = p; q <= gend;) {
      const char *qend = q;
      while (qend < gend && *qend != '_') qend++;
      if (k == max_per) k++; /* too many: reported below */
      else {
        optic_status st = sub_int(w, q, (size_t)(qend - q), &g[k++]);
        if (st != OPTIC_OK) return st;
      }
      q = qend + 1;
    }
    if (k < min_per || k > max_per) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, w->line, w->col,
                         "'%.*s': each dimension needs %d%s%d numbers joined by '_'", (int)w->n, w->p, (int)min_per,
                         min_per == max_per ? "" : " to ", min_per == max_per ? 0 : (int)max_per);
    }
    for (; k < max_per; k++) g[k] = 0;
    (*n_groups)++;
    p = gend + 1;
  }
  return OPTIC_OK;
}

/* window={size=AxB stride=AxB pad=l_hxl_h lhs_dilate=AxB rhs_dilate=AxB rhs_reversal=0x1} */
static optic_status window(hlo_parser *P, hlo_attr *a) {
  static const char *const keys[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  hlo_lexer *L = &P->L;
  optic_status st = expect(P, HLO_LBRACE, "'{' opening the window");
  if (st != OPTIC_OK) return st;
  int64_t v[6][2 * OPTIC_MAX_RANK];
  int32_t count[6] = {0};
  bool given[6] = {false};
  while (L->tok.kind != HLO_RBRACE) {
    int k = 0;
    while (k < 6 && !hlo_tok_is(&L->tok, keys[k])) k++;
    if (k == 6) return hlo_expected(L, "size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal or '}' in the window");
    if (given[k]) return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "window gives %s twice", keys[k]);
    given[k] = true;
    hlo_lex_next(L);
    if (L->tok.kind != HLO_EQ) return hlo_expected(L, "'='");
    hlo_lex_next(L);
    /* "size=" with nothing after it is a window of rank 0 */
    hlo_token w = L->tok.kind == HLO_RBRACE
                      ? (hlo_token){.kind = HLO_IDENT, .p = L->tok.p, .line = L->tok.line, .col = L->tok.col}
                      : hlo_lex_raw_word(L);
    if (w.kind == HLO_ERROR) return L->err;
    int per = k == 2 ? 2 : 1;
    if ((st = x_groups(&w, per, per, v[k], OPTIC_MAX_RANK, &count[k])) != OPTIC_OK) return st;
  }
  hlo_lex_next(L);
  bool any = false;
  for (int k = 0; k < 6; k++) any |= given[k];
  if (any && !given[0]) return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, a->pos.line, a->pos.col, "window has no size");
  int32_t n = count[0];
  for (int k = 1; k < 6; k++) {
    if (given[k] && count[k] != n) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, a->pos.line, a->pos.col,
                         "window %s has %d dimensions but size has %d", keys[k], (int)count[k], (int)n);
    }
  }
  if (n > 0 && (a->window = hlo_arena_alloc(&P->A, (size_t)n * sizeof *a->window)) == NULL) return oom(P);
  for (int32_t d = 0; d < n; d++) {
    optic_window_dim *w = &a->window[d];
    w->size = v[0][d];
    w->stride = given[1] ? v[1][d] : 1;
    w->pad_low = given[2] ? v[2][2 * d] : 0;
    w->pad_high = given[2] ? v[2][2 * d + 1] : 0;
    w->base_dilation = given[3] ? v[3][d] : 1;
    w->window_dilation = given[4] ? v[4][d] : 1;
    if (given[5] && v[5][d] != 0 && v[5][d] != 1) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, a->pos.line, a->pos.col,
                         "window rhs_reversal entries must be 0 or 1");
    }
    w->reversal = given[5] && v[5][d] == 1;
  }
  a->n_window = n;
  return OPTIC_OK;
}

/* slice={[start:limit(:stride)], ...} -> (start, limit, stride) per dim */
static optic_status slice(hlo_parser *P, hlo_attr *a) {
  hlo_lexer *L = &P->L;
  optic_status st = expect(P, HLO_LBRACE, "'{' opening the slice");
  hlo_vec v = {0};
  while (st == OPTIC_OK && L->tok.kind != HLO_RBRACE) {
    int64_t *t = NULL;
    for (int k = 0; k < 3; k++) {
      int64_t *e = hlo_vec_push(&P->A, &v, sizeof *e);
      if (e == NULL) return oom(P);
      if (k == 0) t = e;
    }
    t = (int64_t *)v.data + v.n - 3;
    t[2] = 1;
    if ((st = expect(P, HLO_LBRACKET, "'[' opening a slice dimension")) != OPTIC_OK) return st;
    if ((st = take_int(P, &t[0])) != OPTIC_OK) return st;
    if ((st = expect(P, HLO_COLON, "':' in a slice dimension")) != OPTIC_OK) return st;
    if ((st = take_int(P, &t[1])) != OPTIC_OK) return st;
    if (L->tok.kind == HLO_COLON) {
      hlo_lex_next(L);
      if ((st = take_int(P, &t[2])) != OPTIC_OK) return st;
    }
    if ((st = expect(P, HLO_RBRACKET, "']' closing a slice dimension")) != OPTIC_OK) return st;
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  if (st == OPTIC_OK) st = expect(P, HLO_RBRACE, "',' or '}' in the slice");
  a->ints = v.data;
  a->n_ints = v.n;
  return st;
}

/* padding=l_h[_i]xl_h[_i]... (or {} for a scalar) -> (low, high, interior) per dim */
static optic_status padding(hlo_parser *P, hlo_attr *a) {
  if (P->L.tok.kind == HLO_LBRACE) {
    hlo_lex_next(&P->L);
    return expect(P, HLO_RBRACE, "'}' (a braced padding is the empty one of a scalar)");
  }
  hlo_token w = hlo_lex_raw_word(&P->L);
  if (w.kind == HLO_ERROR) return P->L.err;
  if (w.n == 0) return hlo_expected(&P->L, "a padding such as 0_1x2_3");
  int64_t v[3 * OPTIC_MAX_RANK];
  int32_t n;
  optic_status st = x_groups(&w, 2, 3, v, OPTIC_MAX_RANK, &n);
  if (st != OPTIC_OK) return st;
  if ((a->ints = hlo_arena_alloc(&P->A, sizeof v)) == NULL) return oom(P);
  memcpy(a->ints, v, (size_t)(3 * n) * sizeof *v);
  a->n_ints = 3 * n;
  return OPTIC_OK;
}

/* [G,S]<=[d0,d1,...] optionally followed by T(perm): ids 0..N-1 laid out as
 * dims, transposed by perm, read row-major in groups of S. The '[' is current. */
static optic_status iota_groups(hlo_parser *P, hlo_attr *a) {
  hlo_lexer *L = &P->L;
  hlo_vec gs = {0}, dims = {0}, perm = {0};
  hlo_lex_next(L);
  optic_status st = int_list_until(P, HLO_RBRACKET, "']' in the replica group sizes", &gs);
  if (st == OPTIC_OK) st = expect(P, HLO_LE, "'<=' in iota replica groups");
  if (st == OPTIC_OK) st = expect(P, HLO_LBRACKET, "'['");
  if (st == OPTIC_OK) st = int_list_until(P, HLO_RBRACKET, "']' after the iota dims", &dims);
  if (st == OPTIC_OK && hlo_tok_is(&L->tok, "T")) {
    hlo_lex_next(L);
    if ((st = expect(P, HLO_LPAREN, "'(' after T")) == OPTIC_OK) st = int_list_until(P, HLO_RPAREN, "')'", &perm);
  }
  if (st != OPTIC_OK) return st;
  const int64_t *g = gs.data, *d = dims.data, *p = perm.data;
  int64_t total = 1, limit = 65536;
  bool ok = gs.n == 2 && g[0] >= 1 && g[1] >= 1 && g[0] <= limit && g[1] <= limit && dims.n >= 1 &&
            dims.n <= OPTIC_MAX_RANK && (perm.n == 0 || perm.n == dims.n);
  for (int32_t i = 0; ok && i < dims.n; i++) {
    ok = d[i] >= 1 && d[i] <= limit && total * d[i] <= limit;
    if (ok) total *= d[i];
  }
  bool seen[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; ok && i < perm.n; i++) {
    ok = p[i] >= 0 && p[i] < dims.n && !seen[p[i]];
    if (ok) seen[p[i]] = true;
  }
  if (!ok || g[0] * g[1] != total) {
    return hlo_fail_at(
        OPTIC_ERR_INVALID_ARGUMENT, a->pos.line, a->pos.col,
        "replica_groups: iota form [groups,size]<=[dims]T(perm) is inconsistent or has more than %lld ids",
        (long long)limit);
  }
  int32_t rank = dims.n;
  int64_t tdims[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK], idx[OPTIC_MAX_RANK] = {0};
  for (int32_t i = rank - 1, s = 1; i >= 0; s *= (int32_t)d[i], i--) stride[i] = s;
  for (int32_t i = 0; i < rank; i++) tdims[i] = d[perm.n ? p[i] : i];
  if ((a->ints = hlo_arena_alloc(&P->A, (size_t)total * sizeof *a->ints)) == NULL ||
      (a->sizes = hlo_arena_alloc(&P->A, (size_t)g[0] * sizeof *a->sizes)) == NULL) {
    return oom(P);
  }
  for (int64_t k = 0; k < total; k++) { /* walk the transposed array row-major */
    int64_t id = 0;
    for (int32_t i = 0; i < rank; i++) id += idx[i] * stride[perm.n ? p[i] : i];
    a->ints[k] = id;
    for (int32_t i = rank - 1; i >= 0 && ++idx[i] == tdims[i]; i--) idx[i] = 0;
  }
  for (int64_t k = 0; k < g[0]; k++) a->sizes[k] = (int32_t)g[1];
  a->n_ints = (int32_t)total;
  a->n_sizes = (int32_t)g[0];
  return OPTIC_OK;
}

/* replica_groups={} | {{0,1},{2,3}} | [G,S]<=[N]... */
static optic_status replica_groups(hlo_parser *P, hlo_attr *a) {
  hlo_lexer *L = &P->L;
  if (L->tok.kind == HLO_LBRACKET) return iota_groups(P, a);
  optic_status st = expect(P, HLO_LBRACE, "'{' opening the replica groups");
  hlo_vec ids = {0}, sizes = {0};
  while (st == OPTIC_OK && L->tok.kind != HLO_RBRACE) {
    int32_t before = ids.n;
    if ((st = expect(P, HLO_LBRACE, "'{' opening a replica group")) != OPTIC_OK) return st;
    if ((st = int_list_until(P, HLO_RBRACE, "',' or '}' in a replica group", &ids)) != OPTIC_OK) return st;
    int32_t *s = hlo_vec_push(&P->A, &sizes, sizeof *s);
    if (s == NULL) return oom(P);
    *s = ids.n - before;
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  if (st == OPTIC_OK) st = expect(P, HLO_RBRACE, "',' or '}' in the replica groups");
  a->ints = ids.data;
  a->n_ints = ids.n;
  a->sizes = sizes.data;
  a->n_sizes = sizes.n;
  return st;
}

/* One piece of a skipped value: a string, a bracketed group, a word, or a
 * single punctuation token. *end gets the offset just past it. */
static optic_status skip_piece(hlo_parser *P, const hlo_token *name, size_t *end) {
  hlo_lexer *L = &P->L;
  hlo_tok k = L->tok.kind;
  if (k == HLO_LBRACE || k == HLO_LBRACKET || k == HLO_LPAREN) {
    hlo_pos open = {L->tok.line, L->tok.col};
    int64_t depth = 0;
    do { /* iterative: any nesting depth costs no stack */
      k = L->tok.kind;
      if (k == HLO_ERROR) return L->err;
      if (k == HLO_EOF) {
        return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, open.line, open.col,
                           "value of attribute '%.*s' is not closed before the end of the text", (int)name->n, name->p);
      }
      if (k == HLO_LBRACE || k == HLO_LBRACKET || k == HLO_LPAREN) depth++;
      if (k == HLO_RBRACE || k == HLO_RBRACKET || k == HLO_RPAREN) depth--;
      *end = (size_t)(L->tok.p - L->text) + L->tok.n;
      hlo_lex_next(L);
    } while (depth > 0);
    return OPTIC_OK;
  }
  if (k == HLO_IDENT || k == HLO_NUMBER || k == HLO_MINUS) {
    hlo_token w = hlo_lex_raw_word(L);
    if (w.kind == HLO_ERROR) return L->err;
    *end = w.start + w.n;
    return OPTIC_OK;
  }
  *end = (size_t)(L->tok.p - L->text) + L->tok.n;
  hlo_lex_next(L);
  return L->tok.kind == HLO_ERROR ? L->err : OPTIC_OK;
}

/* A value is pieces written without blanks between them ("[2,2]<=[4]T(1,0)"),
 * up to a ',' or a closing bracket; a blank ends it, so the next instruction
 * or computation is never swallowed. */
optic_status hlo_skip_value(hlo_parser *P, const hlo_token *name) {
  hlo_lexer *L = &P->L;
  hlo_tok k = L->tok.kind;
  if (k == HLO_ERROR) return L->err;
  if (k == HLO_EOF || k == HLO_COMMA || k == HLO_RBRACE || k == HLO_RBRACKET || k == HLO_RPAREN) {
    char b[64];
    return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "expected a value for attribute '%.*s', found %s", (int)name->n,
                        name->p, hlo_tok_describe(&L->tok, b, sizeof b));
  }
  size_t end = 0;
  for (;;) {
    optic_status st = skip_piece(P, name, &end);
    if (st != OPTIC_OK) return st;
    k = L->tok.kind;
    if (k == HLO_EOF || k == HLO_COMMA || k == HLO_RBRACE || k == HLO_RBRACKET || k == HLO_RPAREN) return OPTIC_OK;
    if (L->tok.start != end) return OPTIC_OK;
  }
}

optic_status hlo_parse_attribute(hlo_parser *P, hlo_instr *in) {
  hlo_lexer *L = &P->L;
  hlo_token name = L->tok;
  if (name.kind != HLO_IDENT) return hlo_expected(L, "an attribute name");
  hlo_lex_next(L);
  optic_status st = expect(P, HLO_EQ, "'=' after the attribute name");
  if (st != OPTIC_OK) return st;
  int k = 0;
  while (k < HLO_A_COUNT_ && !hlo_tok_is(&name, attr_names[k])) k++;
  if (k == HLO_A_COUNT_) return hlo_skip_value(P, &name);
  for (const hlo_attr *o = in->attrs; o; o = o->next) {
    if ((int)o->kind == k) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, name.line, name.col,
                         "attribute '%s' is given twice (first at line %d:%d)", attr_names[k], (int)o->pos.line,
                         (int)o->pos.col);
    }
  }
  hlo_attr *a = hlo_arena_alloc(&P->A, sizeof *a);
  if (a == NULL) return oom(P);
  a->kind = (hlo_attr_kind)k;
  a->pos.line = name.line, a->pos.col = name.col;
  switch (a->kind) {
    case HLO_A_DIMENSIONS:
    case HLO_A_DYNAMIC_SLICE_SIZES:
    case HLO_A_OFFSET_DIMS:
    case HLO_A_COLLAPSED_SLICE_DIMS:
    case HLO_A_START_INDEX_MAP:
    case HLO_A_SLICE_SIZES:
    case HLO_A_UPDATE_WINDOW_DIMS:
    case HLO_A_INSERTED_WINDOW_DIMS:
    case HLO_A_SCATTER_DIMS_TO_OPERAND_DIMS:
    case HLO_A_OPERAND_BATCHING_DIMS:
    case HLO_A_START_INDICES_BATCHING_DIMS:
    case HLO_A_INPUT_BATCHING_DIMS:
    case HLO_A_SCATTER_INDICES_BATCHING_DIMS:
    case HLO_A_LHS_BATCH:
    case HLO_A_RHS_BATCH:
    case HLO_A_LHS_CONTRACTING:
    case HLO_A_RHS_CONTRACTING: st = int_list(P, a); break;
    case HLO_A_INDEX:
    case HLO_A_IOTA_DIMENSION:
    case HLO_A_EXPONENT_BITS:
    case HLO_A_INDEX_VECTOR_DIM:
    case HLO_A_FEATURE_INDEX:
    case HLO_A_K:
    case HLO_A_MANTISSA_BITS:
    case HLO_A_FEATURE_GROUP_COUNT:
    case HLO_A_BATCH_GROUP_COUNT: st = single_int(P, a); break;
    case HLO_A_TO_APPLY:
    case HLO_A_CALLS:
    case HLO_A_CONDITION:
    case HLO_A_BODY:
    case HLO_A_TRUE_COMPUTATION:
    case HLO_A_FALSE_COMPUTATION: st = comp_refs(P, a, false); break;
    case HLO_A_BRANCH_COMPUTATIONS: st = comp_refs(P, a, true); break;
    case HLO_A_DIRECTION:
    case HLO_A_ALGORITHM:
    case HLO_A_IS_STABLE:
    case HLO_A_LARGEST:
    case HLO_A_KIND: st = word(P, a, false); break;
    case HLO_A_DIM_LABELS:
    case HLO_A_EPSILON: st = word(P, a, true); break;
    case HLO_A_WINDOW: st = window(P, a); break;
    case HLO_A_SLICE: st = slice(P, a); break;
    case HLO_A_PADDING: st = padding(P, a); break;
    case HLO_A_REPLICA_GROUPS:
    case HLO_A_SOURCE_TARGET_PAIRS: st = replica_groups(P, a); break;
    case HLO_A_CUSTOM_CALL_TARGET: st = quoted(P, a); break;
    default: st = hlo_skip_value(P, &name); break;
  }
  if (st != OPTIC_OK) return st;
  a->next = in->attrs;
  in->attrs = a;
  return OPTIC_OK;
}

/* '{' int (',' int)* '}' into path[0..*n) (at most OPTIC_MAX_RANK). */
static optic_status index_path(hlo_parser *P, int32_t *path, int32_t *n) {
  hlo_vec v = {0};
  hlo_pos at = {P->L.tok.line, P->L.tok.col};
  optic_status st = expect(P, HLO_LBRACE, "'{' opening a shape index");
  if (st == OPTIC_OK) st = int_list_until(P, HLO_RBRACE, "',' or '}' in a shape index", &v);
  if (st != OPTIC_OK) return st;
  if (v.n > OPTIC_MAX_RANK)
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, at.line, at.col, "a shape index deeper than %d", OPTIC_MAX_RANK);
  const int64_t *x = v.data;
  for (int32_t i = 0; i < v.n; i++) {
    if (x[i] < 0 || x[i] > INT32_MAX)
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, at.line, at.col, "shape index entry %lld", (long long)x[i]);
    path[i] = (int32_t)x[i];
  }
  *n = v.n;
  return OPTIC_OK;
}

/* input_output_alias={ {out}: (param, {param index}[, may-alias|must-alias]), ... } */
static optic_status io_aliases(hlo_parser *P) {
  hlo_lexer *L = &P->L;
  optic_status st = expect(P, HLO_LBRACE, "'{' opening input_output_alias");
  hlo_vec v = {0};
  while (st == OPTIC_OK && L->tok.kind != HLO_RBRACE) {
    graph_io_alias *a = hlo_vec_push(&P->A, &v, sizeof *a);
    if (a == NULL) return oom(P);
    memset(a, 0, sizeof *a);
    int64_t param = 0;
    if ((st = index_path(P, a->out_path, &a->out_len)) != OPTIC_OK) break;
    if ((st = expect(P, HLO_COLON, "':' after the output index")) != OPTIC_OK) break;
    if ((st = expect(P, HLO_LPAREN, "'(' opening the aliased parameter")) != OPTIC_OK) break;
    if ((st = take_int(P, &param)) != OPTIC_OK) break;
    if (param < 0 || param > INT32_MAX)
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, L->tok.line, L->tok.col, "parameter number %lld",
                         (long long)param);
    a->param = (int32_t)param;
    if ((st = expect(P, HLO_COMMA, "',' after the parameter number")) != OPTIC_OK) break;
    if ((st = index_path(P, a->param_path, &a->param_len)) != OPTIC_OK) break;
    if (L->tok.kind == HLO_COMMA) {
      hlo_lex_next(L);
      if (hlo_tok_is(&L->tok, "must-alias")) a->must = true;
      else if (!hlo_tok_is(&L->tok, "may-alias")) return hlo_expected(L, "may-alias or must-alias");
      hlo_lex_next(L);
    }
    if ((st = expect(P, HLO_RPAREN, "')' closing the aliased parameter")) != OPTIC_OK) break;
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  if (st == OPTIC_OK) st = expect(P, HLO_RBRACE, "'}' closing input_output_alias");
  P->aliases = v.data;
  P->n_aliases = v.n;
  return st;
}

/* entry_computation_layout={(shapes)->shape} and input_output_alias are
 * kept; everything else skipped. */
optic_status hlo_parse_module_attribute(hlo_parser *P) {
  hlo_lexer *L = &P->L;
  hlo_token name = L->tok;
  if (name.kind != HLO_IDENT) return hlo_expected(L, "a module attribute name");
  hlo_lex_next(L);
  optic_status st = expect(P, HLO_EQ, "'=' after the attribute name");
  if (st != OPTIC_OK) return st;
  if (hlo_tok_is(&name, "input_output_alias")) {
    if (P->aliases_pos.line != 0)
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, name.line, name.col, "input_output_alias is given twice");
    P->aliases_pos.line = name.line, P->aliases_pos.col = name.col;
    return io_aliases(P);
  }
  if (!hlo_tok_is(&name, "entry_computation_layout")) return hlo_skip_value(P, &name);
  if (P->has_entry_layout) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, name.line, name.col, "entry_computation_layout is given twice");
  }
  P->has_entry_layout = true;
  P->entry_layout_pos.line = name.line, P->entry_layout_pos.col = name.col;
  if ((st = expect(P, HLO_LBRACE, "'{' opening entry_computation_layout")) != OPTIC_OK) return st;
  if ((st = expect(P, HLO_LPAREN, "'(' opening the parameter layouts")) != OPTIC_OK) return st;
  if ((st = hlo_parse_shape_list(P, &P->entry_params, &P->n_entry_params, 0)) != OPTIC_OK) return st;
  if ((st = expect(P, HLO_ARROW, "'->' before the result layout")) != OPTIC_OK) return st;
  if ((st = hlo_parse_shape(P, &P->entry_result, 0)) != OPTIC_OK) return st;
  return expect(P, HLO_RBRACE, "'}' closing entry_computation_layout");
}
