/* HLO text parser: module header, computations, instructions, shapes with
 * layouts, operands and constant literals into a syntax tree (attributes:
 * hlo_parse_attr.c), then hands the tree to the builder (hlo_parse_build.c).
 * Public entry points: optic_module_from_hlo_text and _file. Recursion is
 * bounded (tuple shapes by HLO_MAX_NESTING, literals by the rank). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hlo_parse.h"
#include "graph/internal.h"

/* XLA element types optic does not have (a written one is UNSUPPORTED). */
static const char *const other_dtypes[] = {"s2",         "s4",         "u2",     "u4",        "c64",
                                           "c128",       "f8e5m2",     "f8e4m3", "f8e4m3fn",  "f8e4m3b11fnuz",
                                           "f8e5m2fnuz", "f8e4m3fnuz", "f8e3m4", "f8e8m0fnu", "f4e2m1fn",
                                           "opaque"};

/* A token that spells one of optic's dtypes (core's table). */
static bool tok_dtype(const hlo_token *t, optic_dtype *out) {
  char name[16];
  if (t->kind != HLO_IDENT || t->n >= sizeof name) return false;
  memcpy(name, t->p, t->n);
  name[t->n] = '\0';
  for (int d = 1; d < OPTIC_DTYPE_COUNT_; d++) {
    if (strcmp(name, optic_dtype_name((optic_dtype)d)) == 0) {
      *out = (optic_dtype)d;
      return true;
    }
  }
  return false;
}

/* XLA opcodes optic's IR does not have (a written one is UNSUPPORTED). */
static const char *const other_opcodes[] = {
    "acos",
    "acosh",
    "add-dependency",
    "all-gather-done",
    "all-gather-start",
    "all-reduce-done",
    "all-reduce-start",
    "all-to-all",
    "asin",
    "asinh",
    "async-done",
    "async-start",
    "async-update",
    "atan",
    "atanh",
    "cholesky",
    "collective-broadcast",
    "collective-permute-done",
    "collective-permute-start",
    "collective-reduce",
    "complex",
    "copy-done",
    "copy-start",
    "cosh",
    "domain",
    "dynamic-reshape",
    "fft",
    "get-dimension-size",
    "imag",
    "mulhi",
    "ragged-all-to-all",
    "ragged-dot",
    "real",
    "recv",
    "recv-done",
    "rng",
    "rng-get-and-update-state",
    "scaled-dot",
    "scan",
    "select-and-scatter",
    "send",
    "send-done",
    "set-dimension-size",
    "shuffle",
    "sinh",
    "stochastic-convert",
    "trace",
    "triangular-solve",
    "tuple-select",
};

static bool in_list(const hlo_token *t, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (hlo_tok_is(t, list[i])) return true;
  }
  return false;
}

static optic_status expect(hlo_parser *P, hlo_tok kind, const char *what) {
  if (P->L.tok.kind != kind) return hlo_expected(&P->L, what);
  hlo_lex_next(&P->L);
  return OPTIC_OK;
}

static optic_status oom(hlo_parser *P) {
  return hlo_fail_at(OPTIC_ERR_OUT_OF_MEMORY, P->L.tok.line, P->L.tok.col, "out of memory");
}

optic_status hlo_parse_name(hlo_parser *P, const char *what, const char **name, hlo_pos *pos) {
  if (P->L.tok.kind != HLO_IDENT) return hlo_expected(&P->L, what);
  pos->line = P->L.tok.line, pos->col = P->L.tok.col;
  if ((*name = hlo_arena_strndup(&P->A, P->L.tok.p, P->L.tok.n)) == NULL) return oom(P);
  hlo_lex_next(&P->L);
  return OPTIC_OK;
}

/* ----------------------------------------------------------------- shapes */

static optic_status parse_dtype(hlo_parser *P, optic_dtype *out) {
  const hlo_token *t = &P->L.tok;
  if (tok_dtype(t, out)) {
    hlo_lex_next(&P->L);
    return OPTIC_OK;
  }
  char b[64];
  if (in_list(t, other_dtypes, sizeof other_dtypes / sizeof other_dtypes[0])) {
    return hlo_fail_tok(&P->L, OPTIC_ERR_UNSUPPORTED,
                        "element type %s is not supported (optic has pred, s8, s16, s32, s64, u8, u16, u32, u64, "
                        "f16, bf16, f32, f64, token)",
                        hlo_tok_describe(t, b, sizeof b));
  }
  if (t->kind == HLO_IDENT)
    return hlo_fail_tok(&P->L, OPTIC_ERR_INVALID_ARGUMENT, "unknown element type %s", hlo_tok_describe(t, b, sizeof b));
  return hlo_expected(&P->L, "a shape");
}

/* '{' minor_to_major [':' anything balanced] '}'; the '{' is current. */
static optic_status parse_layout(hlo_parser *P, hlo_shape *s) {
  hlo_lexer *L = &P->L;
  hlo_pos pos = {L->tok.line, L->tok.col};
  hlo_lex_next(L);
  int32_t n = 0;
  int64_t v[OPTIC_MAX_RANK];
  while (L->tok.kind == HLO_NUMBER) {
    int64_t x;
    optic_status st = hlo_token_int(L, &L->tok, &x);
    if (st != OPTIC_OK) return st;
    if (n == s->shape.rank || x < 0 || x >= s->shape.rank) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, pos.line, pos.col,
                         "layout does not fit rank %d (entry %lld); it must be a permutation of 0..%d",
                         (int)s->shape.rank, (long long)x, (int)s->shape.rank - 1);
    }
    v[n++] = x;
    hlo_lex_next(L);
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  if (L->tok.kind == HLO_COLON) { /* tiling, memory space, element size: no meaning on a CPU */
    int depth = 1;
    for (hlo_lex_next(L); depth > 0; hlo_lex_next(L)) {
      hlo_tok k = L->tok.kind;
      if (k == HLO_EOF || k == HLO_ERROR) return hlo_expected(L, "'}' closing the layout");
      if (k == HLO_LBRACE || k == HLO_LPAREN || k == HLO_LBRACKET) depth++;
      if (k == HLO_RBRACE || k == HLO_RPAREN || k == HLO_RBRACKET) depth--;
    }
  } else {
    optic_status st = expect(P, HLO_RBRACE, "',' or '}' in the layout");
    if (st != OPTIC_OK) return st;
  }
  if (n != s->shape.rank) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, pos.line, pos.col, "layout has %d entries for a rank-%d shape",
                       (int)n, (int)s->shape.rank);
  }
  bool seen[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < n; i++) {
    if (seen[v[i]]) {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, pos.line, pos.col, "layout lists dimension %lld twice",
                         (long long)v[i]);
    }
    seen[v[i]] = true;
    s->m2m[i] = (int8_t)v[i];
  }
  s->has_layout = true;
  return OPTIC_OK;
}

optic_status hlo_parse_shape_list(hlo_parser *P, hlo_shape **out, int32_t *n, int32_t depth) {
  hlo_vec v = {0};
  while (P->L.tok.kind != HLO_RPAREN) {
    hlo_shape *e = hlo_vec_push(&P->A, &v, sizeof *e);
    if (e == NULL) return oom(P);
    optic_status st = hlo_parse_shape(P, e, depth + 1);
    if (st != OPTIC_OK) return st;
    if (P->L.tok.kind != HLO_COMMA) break;
    hlo_lex_next(&P->L);
  }
  *out = v.data;
  *n = v.n;
  return expect(P, HLO_RPAREN, "',' or ')' in a tuple shape");
}

optic_status hlo_parse_shape(hlo_parser *P, hlo_shape *out, int32_t depth) {
  hlo_lexer *L = &P->L;
  memset(out, 0, sizeof *out);
  out->pos.line = L->tok.line, out->pos.col = L->tok.col;
  if (depth > HLO_MAX_NESTING) {
    return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "tuple shapes nest deeper than %d", HLO_MAX_NESTING);
  }
  if (L->tok.kind == HLO_LPAREN) {
    hlo_lex_next(L);
    out->dtype = OPTIC_DTYPE_INVALID;
    return hlo_parse_shape_list(P, &out->elems, &out->n_elems, depth);
  }
  optic_status st = parse_dtype(P, &out->dtype);
  if (st != OPTIC_OK) return st;
  if ((st = expect(P, HLO_LBRACKET, "'[' after the element type")) != OPTIC_OK) return st;
  int64_t dims[OPTIC_MAX_RANK];
  int32_t rank = 0;
  while (L->tok.kind != HLO_RBRACKET) {
    char b[64];
    if (L->tok.kind == HLO_LE || (L->tok.kind == HLO_OTHER && L->tok.p[0] == '?')) {
      return hlo_fail_tok(L, OPTIC_ERR_UNSUPPORTED, "dynamic dimension %s is not supported (static shapes only)",
                          hlo_tok_describe(&L->tok, b, sizeof b));
    }
    int64_t d;
    if ((st = hlo_token_int(L, &L->tok, &d)) != OPTIC_OK) return st;
    if (d < 0) return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "dimension %lld is negative", (long long)d);
    if (rank == OPTIC_MAX_RANK) {
      return hlo_fail_tok(L, OPTIC_ERR_UNSUPPORTED, "shape has more than %d dimensions (optic's maximum rank)",
                          OPTIC_MAX_RANK);
    }
    dims[rank++] = d;
    hlo_lex_next(L);
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  if ((st = expect(P, HLO_RBRACKET, "',' or ']' in the dimensions")) != OPTIC_OK) return st;
  if ((st = optic_shape_make(rank, dims, &out->shape)) != OPTIC_OK) {
    char b[TYPE_BUF];
    optic_shape s = {.rank = rank};
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    optic_shape_format(&s, out->dtype, b, sizeof b);
    return hlo_fail_at(st, out->pos.line, out->pos.col,
                       "shape %s has too many elements (its byte size must fit in 63 bits)", b);
  }
  /* '{' starts a layout unless it opens a computation body ("-> f32[2] {"). */
  if (L->tok.kind == HLO_LBRACE) {
    char c = hlo_lex_peek_char(L);
    if ((c >= '0' && c <= '9') || c == '}' || c == ':') return parse_layout(P, out);
  }
  return OPTIC_OK;
}

/* --------------------------------------------------------------- literals */

typedef struct literal_ctx {
  const hlo_shape *s;
  unsigned char *data;
  size_t esize, index;
  bool empty; /* the shape has no elements: "{}" is accepted for any rank */
} literal_ctx;

/* An integer literal of dtype dt into dst (range-checked; u64 up to 2^64-1). */
static optic_status int_literal(hlo_lexer *L, const hlo_token *t, optic_dtype dt, unsigned char *dst) {
  char b[64];
  int bits = optic_dtype_int_bits(dt);
  uint64_t u;
  if (dt == OPTIC_U64 && t->kind == HLO_NUMBER && t->n > 0 && t->p[0] != '-') {
    u = 0;
    for (size_t i = 0; i < t->n; i++) {
      unsigned d = (unsigned)(t->p[i] - '0');
      if (d > 9)
        return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "expected an integer, found %s",
                            hlo_tok_describe(t, b, sizeof b));
      if (u > (UINT64_MAX - d) / 10) {
        return hlo_fail_tok(L, OPTIC_ERR_OVERFLOW, "literal %s is out of range for u64",
                            hlo_tok_describe(t, b, sizeof b));
      }
      u = u * 10 + d;
    }
  } else {
    int64_t v;
    optic_status st = hlo_token_int(L, t, &v);
    if (st != OPTIC_OK) return st;
    bool sg = optic_dtype_is_signed_int(dt);
    int64_t lo = sg ? (bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1))) : 0;
    int64_t hi = bits == 64 ? INT64_MAX : sg ? (INT64_C(1) << (bits - 1)) - 1 : (INT64_C(1) << bits) - 1;
    if (v < lo || v > hi) {
      return hlo_fail_tok(L, OPTIC_ERR_OVERFLOW, "literal %lld is out of range for %s", (long long)v,
                          optic_dtype_name(dt));
    }
    u = (uint64_t)v;
  }
  memcpy(dst, &u, (size_t)bits / 8); /* little-endian: the low bytes */
  return OPTIC_OK;
}

static optic_status literal_value(hlo_parser *P, literal_ctx *c) {
  hlo_lexer *L = &P->L;
  hlo_token t = L->tok;
  char b[64];
  unsigned char *dst = c->data + c->index * c->esize;
  optic_dtype dt = c->s->dtype;
  bool neg = false;
  if (t.kind == HLO_MINUS) { /* -inf, -nan */
    neg = true;
    hlo_lex_next(L);
    t = L->tok;
  }
  if (dt == OPTIC_PRED) {
    if (!neg && (hlo_tok_is(&t, "true") || hlo_tok_is(&t, "false"))) {
      *dst = hlo_tok_is(&t, "true");
    } else if (!neg && t.kind == HLO_NUMBER && t.n == 1 && (t.p[0] == '0' || t.p[0] == '1')) {
      *dst = t.p[0] == '1';
    } else {
      return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "expected true or false for a pred literal, found %s",
                          hlo_tok_describe(&t, b, sizeof b));
    }
  } else if (optic_dtype_is_int(dt)) {
    if (neg) return hlo_expected(L, "an integer literal");
    optic_status st = int_literal(L, &t, dt, dst);
    if (st != OPTIC_OK) return st;
  } else { /* f16, bf16, f32, f64 */
    double v;
    if (hlo_tok_is(&t, "inf")) {
      v = (double)INFINITY;
    } else if (hlo_tok_is(&t, "nan")) {
      v = (double)NAN;
    } else if (t.kind == HLO_NUMBER && !neg) {
      char num[80];
      if (t.n >= sizeof num)
        return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "number %s is too long", hlo_tok_describe(&t, b, sizeof b));
      memcpy(num, t.p, t.n);
      num[t.n] = '\0';
      char *end;
      if (dt == OPTIC_F32) {
        float f = strtof(num, &end);
        v = (double)f;
      } else {
        v = strtod(num, &end);
      }
      if (*end != '\0')
        return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "malformed number %s", hlo_tok_describe(&t, b, sizeof b));
      if (dt == OPTIC_F16) v = (double)optic_f16_to_f32(optic_f64_to_f16(v));
      if (dt == OPTIC_BF16) v = (double)optic_bf16_to_f32(optic_f64_to_bf16(v));
      if (isinf(v)) {
        return hlo_fail_tok(L, OPTIC_ERR_OVERFLOW, "literal %s is out of range for %s",
                            hlo_tok_describe(&t, b, sizeof b), optic_dtype_name(dt));
      }
    } else {
      return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "expected a number, inf or nan for a %s literal, found %s",
                          optic_dtype_name(dt), hlo_tok_describe(&t, b, sizeof b));
    }
    if (neg) v = -v;
    if (dt == OPTIC_F32) {
      float f = (float)v;
      memcpy(dst, &f, 4);
    } else if (dt == OPTIC_F64) {
      memcpy(dst, &v, 8);
    } else { /* v already holds the rounded half value (or inf, nan) */
      uint16_t h = dt == OPTIC_F16 ? optic_f64_to_f16(v) : optic_f64_to_bf16(v);
      memcpy(dst, &h, 2);
    }
  }
  hlo_lex_next(L);
  c->index++;
  return OPTIC_OK;
}

/* Nested braces by dimension, logical row-major order (recursion <= rank). */
static optic_status literal_dim(hlo_parser *P, literal_ctx *c, int32_t d) {
  const optic_shape *s = &c->s->shape;
  if (d == s->rank) return literal_value(P, c);
  hlo_lexer *L = &P->L;
  if (L->tok.kind != HLO_LBRACE) return hlo_expected(L, "'{' (the literal has fewer nesting levels than the rank)");
  hlo_lex_next(L);
  if (L->tok.kind == HLO_ELLIPSIS) {
    return hlo_fail_tok(L, OPTIC_ERR_UNSUPPORTED, "the literal was elided as '{...}' (print it with its values)");
  }
  if (d == 0 && L->tok.kind == HLO_RBRACE && c->empty) { /* "{}": any shape without elements */
    hlo_lex_next(L);
    return OPTIC_OK;
  }
  for (int64_t i = 0; i < s->dims[d]; i++) {
    optic_status st = literal_dim(P, c, d + 1);
    if (st != OPTIC_OK) return st;
    if (i + 1 < s->dims[d]) {
      if (L->tok.kind == HLO_RBRACE) {
        return hlo_fail_tok(L, OPTIC_ERR_SHAPE_MISMATCH,
                            "literal dimension %d has %lld elements but the shape says %lld", (int)d,
                            (long long)(i + 1), (long long)s->dims[d]);
      }
      if ((st = expect(P, HLO_COMMA, "',' between literal elements")) != OPTIC_OK) return st;
    }
  }
  if (L->tok.kind == HLO_COMMA) {
    return hlo_fail_tok(L, OPTIC_ERR_SHAPE_MISMATCH,
                        "literal dimension %d has more than the %lld elements the shape says", (int)d,
                        (long long)s->dims[d]);
  }
  return expect(P, HLO_RBRACE, "'}' closing a literal dimension");
}

static optic_status parse_literal(hlo_parser *P, hlo_instr *in) {
  hlo_lexer *L = &P->L;
  const hlo_shape *s = &in->shape;
  if (s->dtype == OPTIC_DTYPE_INVALID) {
    return hlo_fail_at(OPTIC_ERR_UNSUPPORTED, in->op_pos.line, in->op_pos.col,
                       "constant '%s': tuple constants are not supported", in->name);
  }
  if (s->dtype == OPTIC_TOKEN) {
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, in->op_pos.line, in->op_pos.col,
                       "constant '%s': a token has no literal (make one with after-all)", in->name);
  }
  size_t n = 1;
  for (int32_t d = 0; d < s->shape.rank; d++) n *= (size_t)s->shape.dims[d]; /* optic_shape_make bounded it */
  /* Every element takes at least one character: a literal that cannot fit in
   * the rest of the text is rejected before anything is allocated. */
  if (n > L->len - L->tok.start) {
    return hlo_fail_tok(L, OPTIC_ERR_SHAPE_MISMATCH, "constant '%s' needs %zu elements; the text is too short for them",
                        in->name, n);
  }
  literal_ctx c = {.s = s, .esize = optic_dtype_size(s->dtype), .empty = n == 0};
  in->literal_bytes = n * c.esize;
  if (in->literal_bytes > 0 && (c.data = hlo_arena_alloc(&P->A, in->literal_bytes)) == NULL) return oom(P);
  in->literal = c.data;
  return literal_dim(P, &c, 0);
}

/* ----------------------------------------------------------- instructions */

static bool is_dtype_name(const hlo_token *t) {
  optic_dtype d;
  return tok_dtype(t, &d) || in_list(t, other_dtypes, sizeof other_dtypes / sizeof other_dtypes[0]);
}

/* operand ::= [shape] name, up to ')' (consumed). */
static optic_status parse_operands(hlo_parser *P, hlo_instr *in) {
  hlo_lexer *L = &P->L;
  hlo_vec names = {0}, pos = {0}, shapes = {0};
  while (L->tok.kind != HLO_RPAREN) {
    hlo_shape *shape = NULL;
    bool prefix = L->tok.kind == HLO_LPAREN ||
                  (L->tok.kind == HLO_IDENT && hlo_lex_char_after(L) == '[' && is_dtype_name(&L->tok));
    if (prefix) {
      if ((shape = hlo_arena_alloc(&P->A, sizeof *shape)) == NULL) return oom(P);
      optic_status st = hlo_parse_shape(P, shape, 0);
      if (st != OPTIC_OK) return st;
    }
    const char **name = hlo_vec_push(&P->A, &names, sizeof *name);
    hlo_pos *p = hlo_vec_push(&P->A, &pos, sizeof *p);
    hlo_shape **sp = hlo_vec_push(&P->A, &shapes, sizeof *sp);
    if (name == NULL || p == NULL || sp == NULL) return oom(P);
    *sp = shape;
    optic_status st = hlo_parse_name(P, "an operand name", name, p);
    if (st != OPTIC_OK) return st;
    if (L->tok.kind != HLO_COMMA) break;
    hlo_lex_next(L);
  }
  in->operands = names.data;
  in->operand_pos = pos.data;
  in->operand_shapes = shapes.data;
  in->n_operands = names.n;
  return expect(P, HLO_RPAREN, "',' or ')' after an operand");
}

static optic_status parse_opcode(hlo_parser *P, hlo_instr *in) {
  hlo_lexer *L = &P->L;
  char b[64];
  in->op_pos.line = L->tok.line, in->op_pos.col = L->tok.col;
  if (L->tok.kind != HLO_IDENT) return hlo_expected(L, "an opcode");
  for (int i = 0; i < OPTIC_OPCODE_COUNT_; i++) {
    if (hlo_tok_is(&L->tok, optic_opcode_name((optic_opcode)i))) {
      in->op = (optic_opcode)i;
      hlo_lex_next(L);
      return OPTIC_OK;
    }
  }
  if (in_list(&L->tok, other_opcodes, sizeof other_opcodes / sizeof other_opcodes[0])) {
    return hlo_fail_tok(L, OPTIC_ERR_UNSUPPORTED, "opcode %s (instruction '%s') is not supported by optic",
                        hlo_tok_describe(&L->tok, b, sizeof b), in->name);
  }
  return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "unknown opcode %s", hlo_tok_describe(&L->tok, b, sizeof b));
}

/* ['ROOT'] name '=' shape opcode '(' operands ')' (',' attribute)* */
static optic_status parse_instruction(hlo_parser *P, hlo_instr *in) {
  hlo_lexer *L = &P->L;
  in->node = in->phys_node = OPTIC_NO_NODE;
  if (hlo_tok_is(&L->tok, "ROOT")) {
    in->is_root = true;
    hlo_lex_next(L);
  }
  optic_status st = hlo_parse_name(P, "an instruction name", &in->name, &in->pos);
  if (st == OPTIC_OK) st = expect(P, HLO_EQ, "'=' after the instruction name");
  if (st == OPTIC_OK) st = hlo_parse_shape(P, &in->shape, 0);
  if (st == OPTIC_OK) st = parse_opcode(P, in);
  if (st == OPTIC_OK) st = expect(P, HLO_LPAREN, "'(' after the opcode");
  if (st != OPTIC_OK) return st;
  if (in->op == OPTIC_OP_PARAMETER) {
    if ((st = hlo_token_int(L, &L->tok, &in->param_number)) != OPTIC_OK) return st;
    if (in->param_number < 0 || in->param_number > INT32_MAX) {
      return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "parameter number %lld is out of range",
                          (long long)in->param_number);
    }
    hlo_lex_next(L);
    st = expect(P, HLO_RPAREN, "')' after the parameter number");
  } else if (in->op == OPTIC_OP_CONSTANT) {
    if ((st = parse_literal(P, in)) == OPTIC_OK) st = expect(P, HLO_RPAREN, "')' after the literal");
  } else {
    st = parse_operands(P, in);
  }
  while (st == OPTIC_OK && L->tok.kind == HLO_COMMA) {
    hlo_lex_next(L);
    st = hlo_parse_attribute(P, in);
  }
  return st;
}

/* ['ENTRY'] name [param_list '->' shape] '{' instruction* '}' [',' attributes] */
static optic_status parse_computation(hlo_parser *P, hlo_comp *c) {
  hlo_lexer *L = &P->L;
  if (hlo_tok_is(&L->tok, "ENTRY")) {
    c->is_entry = true;
    hlo_lex_next(L);
  }
  optic_status st = hlo_parse_name(P, "a computation name", &c->name, &c->pos);
  if (st != OPTIC_OK) return st;
  if (L->tok.kind == HLO_LPAREN) { /* the signature: checked through the parameter instructions instead */
    hlo_lex_next(L);
    while (st == OPTIC_OK && L->tok.kind != HLO_RPAREN) {
      const char *pname;
      hlo_pos ppos;
      hlo_shape ps;
      st = hlo_parse_name(P, "a parameter name", &pname, &ppos);
      if (st == OPTIC_OK) st = expect(P, HLO_COLON, "':' after the parameter name");
      if (st == OPTIC_OK) st = hlo_parse_shape(P, &ps, 0);
      if (st == OPTIC_OK && L->tok.kind != HLO_COMMA) break;
      if (st == OPTIC_OK) hlo_lex_next(L);
    }
    hlo_shape rs;
    if (st == OPTIC_OK) st = expect(P, HLO_RPAREN, "',' or ')' in the parameter list");
    if (st == OPTIC_OK) st = expect(P, HLO_ARROW, "'->' after the parameter list");
    if (st == OPTIC_OK) st = hlo_parse_shape(P, &rs, 0);
    if (st != OPTIC_OK) return st;
  }
  if ((st = expect(P, HLO_LBRACE, "'{' opening the computation")) != OPTIC_OK) return st;
  hlo_vec v = {0};
  while (L->tok.kind != HLO_RBRACE) {
    if (L->tok.kind == HLO_EOF) return hlo_expected(L, "'}' closing the computation");
    hlo_instr **slot = hlo_vec_push(&P->A, &v, sizeof *slot);
    if (slot == NULL || (*slot = hlo_arena_alloc(&P->A, sizeof **slot)) == NULL) return oom(P);
    if ((st = parse_instruction(P, *slot)) != OPTIC_OK) return st;
  }
  if (v.n == 0) return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "computation '%s' has no instructions", c->name);
  c->instrs = v.data;
  c->n_instrs = v.n;
  hlo_lex_next(L);
  while (L->tok.kind == HLO_COMMA) { /* e.g. execution_thread="main" */
    hlo_lex_next(L);
    hlo_token name = L->tok;
    if (name.kind != HLO_IDENT) return hlo_expected(L, "an attribute name");
    hlo_lex_next(L);
    if ((st = expect(P, HLO_EQ, "'=' after the attribute name")) != OPTIC_OK) return st;
    if ((st = hlo_skip_value(P, &name)) != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

static optic_status parse_module(hlo_parser *P) {
  hlo_lexer *L = &P->L;
  optic_status st = OPTIC_OK;
  if (hlo_tok_is(&L->tok, "HloModule")) {
    hlo_lex_next(L);
    hlo_pos pos;
    if ((st = hlo_parse_name(P, "the module name", &P->module_name, &pos)) != OPTIC_OK) return st;
    if (L->tok.kind == HLO_COLON) hlo_lex_next(L); /* "HloModule name:" lexes as a name in XLA */
    while (L->tok.kind == HLO_COMMA) {
      hlo_lex_next(L);
      if ((st = hlo_parse_module_attribute(P)) != OPTIC_OK) return st;
    }
  } else if (L->tok.kind == HLO_IDENT) {
    /* Text of computations with no header line, as XLA's parser also takes;
     * the module gets the name XLA gives a module parsed from text, "_". */
    P->module_name = "_";
  } else {
    return hlo_expected(L, "'HloModule' or a computation");
  }
  hlo_vec v = {0};
  while (L->tok.kind != HLO_EOF) {
    if (L->tok.kind == HLO_ERROR) return L->err;
    hlo_comp **slot = hlo_vec_push(&P->A, &v, sizeof *slot);
    if (slot == NULL || (*slot = hlo_arena_alloc(&P->A, sizeof **slot)) == NULL) return oom(P);
    if ((st = parse_computation(P, *slot)) != OPTIC_OK) return st;
  }
  if (v.n == 0) return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "module '%s' has no computations", P->module_name);
  P->comps = v.data;
  P->n_comps = v.n;
  return OPTIC_OK;
}

/* ------------------------------------------------------------ public API */

optic_status optic_module_from_hlo_text(const char *text, size_t len, optic_module_t **out) {
  if (out == NULL || (text == NULL && len > 0)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "hlo: NULL %s", out == NULL ? "out" : "text");
  }
  *out = NULL;
  if (len > (size_t)INT32_MAX) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "hlo: %zu bytes of text; at most 2^31-1 are accepted", len);
  }
  hlo_parser P;
  memset(&P, 0, sizeof P);
  hlo_lex_init(&P.L, text ? text : "", len);
  optic_status st = parse_module(&P);
  if (st == OPTIC_OK) st = hlo_build_module(&P, out);
  hlo_arena_free(&P.A);
  return st;
}

optic_status optic_module_from_hlo_file(const char *path, optic_module_t **out) {
  if (path == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "hlo: NULL %s", path ? "out" : "path");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return optic_fail(OPTIC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  optic_status st = OPTIC_OK;
  while (text != NULL) {
    len += fread(text + len, 1, cap - len, f);
    if (len < cap) break;
    if (cap > (size_t)INT32_MAX) {
      st = optic_fail(OPTIC_ERR_OVERFLOW, "%s: larger than 2 GiB", path);
      break;
    }
    char *t = realloc(text, cap * 2);
    if (t == NULL) free(text);
    text = t;
    cap *= 2;
  }
  if (text == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory reading the file", path);
  else if (st == OPTIC_OK && ferror(f)) st = optic_fail(OPTIC_ERR_IO, "%s: read error", path);
  fclose(f);
  if (st == OPTIC_OK) {
    st = optic_module_from_hlo_text(text, len, out);
    if (st != OPTIC_OK) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", optic_last_error());
      st = optic_fail(st, "%s: %s", path, msg);
    }
  }
  free(text);
  return st;
}
