/* HLO text lexer with line/column positions, plus the importer's arena,
 * string map and "line L:C:" error helpers. The lexer never fails on odd
 * characters (they become HLO_OTHER tokens for the parser to reject where
 * they matter, and unknown attribute values can hold anything); only an
 * unterminated string or comment is a lexing error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hlo_parse.h"

/* ------------------------------------------------------------------ arena */

struct hlo_chunk {
  hlo_chunk *next;
  _Alignas(16) char data[];
};

#define HLO_CHUNK_BYTES ((size_t)64 << 10)

void *hlo_arena_alloc(hlo_arena *a, size_t size) {
  size_t need = (size + 15) & ~(size_t)15;
  if (need < size || need > SIZE_MAX / 2) return NULL;
  if (need > a->left) {
    size_t bytes = need > HLO_CHUNK_BYTES / 4 ? need : HLO_CHUNK_BYTES;
    hlo_chunk *c = malloc(sizeof *c + bytes);
    if (c == NULL) return NULL;
    c->next = a->chunks;
    a->chunks = c;
    if (bytes == HLO_CHUNK_BYTES) {
      a->cur = c->data;
      a->left = bytes;
    } else { /* a big block of its own: keep filling the current chunk */
      memset(c->data, 0, need);
      return c->data;
    }
  }
  void *p = a->cur;
  a->cur += need;
  a->left -= need;
  memset(p, 0, need);
  return p;
}

char *hlo_arena_strndup(hlo_arena *a, const char *s, size_t n) {
  char *p = hlo_arena_alloc(a, n + 1);
  if (p == NULL) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void hlo_arena_free(hlo_arena *a) {
  while (a->chunks) {
    hlo_chunk *next = a->chunks->next;
    free(a->chunks);
    a->chunks = next;
  }
  a->cur = NULL;
  a->left = 0;
}

void *hlo_vec_push(hlo_arena *a, hlo_vec *v, size_t elem) {
  if (v->n == v->cap) {
    if (v->cap > INT32_MAX / 2) return NULL;
    int32_t cap = v->cap ? v->cap * 2 : 8;
    void *d = hlo_arena_alloc(a, (size_t)cap * elem);
    if (d == NULL) return NULL;
    if (v->n) memcpy(d, v->data, (size_t)v->n * elem);
    v->data = d;
    v->cap = cap;
  }
  return (char *)v->data + (size_t)v->n++ * elem;
}

/* -------------------------------------------------------------------- map */

static uint32_t hash_key(const char *s, int32_t scope) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)scope;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (uint32_t)(h ^ (h >> 32));
}

/* The stored hash spares a string comparison (and its cache miss) per probe. */
static hlo_map_slot *find_slot(hlo_map_slot *slots, size_t cap, const char *key, uint32_t hash, int32_t scope) {
  for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1)) {
    const hlo_map_slot *s = &slots[i];
    if (s->key == NULL || (s->hash == hash && s->scope == scope && strcmp(s->key, key) == 0)) return &slots[i];
  }
}

optic_status hlo_map_put(hlo_map *m, const char *key, int32_t scope, int32_t value, int32_t *existing) {
  *existing = -1;
  if ((m->count + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    hlo_map_slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "hlo: cannot grow a name table to %zu slots", cap);
    for (size_t i = 0; i < m->cap; i++) {
      const hlo_map_slot *o = &m->slots[i];
      if (o->key) *find_slot(slots, cap, o->key, o->hash, o->scope) = *o;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
  }
  uint32_t hash = hash_key(key, scope);
  hlo_map_slot *s = find_slot(m->slots, m->cap, key, hash, scope);
  if (s->key) {
    *existing = s->value;
    return OPTIC_OK;
  }
  *s = (hlo_map_slot){.key = key, .hash = hash, .scope = scope, .value = value};
  m->count++;
  return OPTIC_OK;
}

optic_status hlo_map_set(hlo_map *m, const char *key, int32_t scope, int32_t value) {
  int32_t ex;
  optic_status st = hlo_map_put(m, key, scope, value, &ex);
  if (st == OPTIC_OK && ex >= 0) find_slot(m->slots, m->cap, key, hash_key(key, scope), scope)->value = value;
  return st;
}

int32_t hlo_map_get(const hlo_map *m, const char *key, int32_t scope) {
  if (m->cap == 0) return -1;
  const hlo_map_slot *s = find_slot(m->slots, m->cap, key, hash_key(key, scope), scope);
  return s->key ? s->value : -1;
}

void hlo_map_free(hlo_map *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* ----------------------------------------------------------------- errors */

optic_status hlo_fail_at(optic_status code, int32_t line, int32_t col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return optic_fail(code, "line %d:%d: %s", (int)line, (int)col, msg);
}

optic_status hlo_fail_wrap(optic_status code, int32_t line, int32_t col, const char *prefix) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", optic_last_error()); /* copy: optic_fail rewrites that buffer */
  return optic_fail(code, "line %d:%d: %s%s", (int)line, (int)col, prefix, msg);
}

const char *hlo_tok_describe(const hlo_token *t, char *buf, size_t size) {
  if (t->kind == HLO_EOF || t->kind == HLO_ERROR) {
    snprintf(buf, size, t->kind == HLO_EOF ? "end of input" : "an unterminated string or comment");
  } else if (t->n > 40) {
    snprintf(buf, size, "'%.40s...'", t->p);
  } else {
    /* show control characters (a NUL byte in the text, say) as escapes */
    size_t k = 0;
    buf[k++] = '\'';
    for (size_t i = 0; i < t->n && k + 6 < size; i++) {
      unsigned char c = (unsigned char)t->p[i];
      if (c < 32 || c >= 127) k += (size_t)snprintf(buf + k, size - k, "\\x%02x", c);
      else buf[k++] = (char)c;
    }
    if (k + 2 <= size) buf[k++] = '\'';
    buf[k < size ? k : size - 1] = '\0';
  }
  return buf;
}

optic_status hlo_fail_tok(hlo_lexer *L, optic_status code, const char *fmt, ...) {
  if (L->tok.kind == HLO_ERROR) return L->err;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hlo_fail_at(code, L->tok.line, L->tok.col, "%s", msg);
}

optic_status hlo_expected(hlo_lexer *L, const char *what) {
  char b[64];
  if (L->tok.kind == HLO_ERROR) return L->err;
  return hlo_fail_tok(L, OPTIC_ERR_INVALID_ARGUMENT, "expected %s, found %s", what,
                      hlo_tok_describe(&L->tok, b, sizeof b));
}

optic_status hlo_token_int(hlo_lexer *L, const hlo_token *t, int64_t *out) {
  char b[64];
  if (t->kind != HLO_NUMBER) {
    if (t->kind == HLO_ERROR) return L->err;
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, t->line, t->col, "expected an integer, found %s",
                       hlo_tok_describe(t, b, sizeof b));
  }
  size_t i = 0;
  bool neg = t->n > 0 && t->p[0] == '-';
  if (neg) i++;
  uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  if (i == t->n)
    return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, t->line, t->col, "expected an integer, found %s",
                       hlo_tok_describe(t, b, sizeof b));
  for (; i < t->n; i++) {
    char c = t->p[i];
    if (c < '0' || c > '9') {
      return hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, t->line, t->col, "expected an integer, found %s",
                         hlo_tok_describe(t, b, sizeof b));
    }
    unsigned d = (unsigned)(c - '0');
    if (v > (limit - d) / 10) {
      return hlo_fail_at(OPTIC_ERR_OVERFLOW, t->line, t->col, "integer %s does not fit in 64 bits",
                         hlo_tok_describe(t, b, sizeof b));
    }
    v = v * 10 + d;
  }
  *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  return OPTIC_OK;
}

bool hlo_tok_is(const hlo_token *t, const char *word) {
  size_t n = strlen(word);
  return t->kind == HLO_IDENT && t->n == n && memcmp(t->p, word, n) == 0;
}

/* ------------------------------------------------------------------ lexer */

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

void hlo_lex_init(hlo_lexer *L, const char *text, size_t len) {
  memset(L, 0, sizeof *L);
  L->text = text;
  L->len = len;
  L->line = 1;
  hlo_lex_next(L);
}

static char at(const hlo_lexer *L, size_t i) { return i < L->len ? L->text[i] : '\0'; }

static void newline_at(hlo_lexer *L, size_t i) {
  L->line++;
  L->line_start = i + 1;
}

/* Skips blanks and comments from pos; false (with the error set) for an
 * unterminated block comment. */
static bool skip_blanks(hlo_lexer *L) {
  for (;;) {
    char c = at(L, L->pos);
    if (L->pos >= L->len) return true;
    if (is_blank(c)) {
      if (c == '\n') newline_at(L, L->pos);
      L->pos++;
    } else if (c == '/' && at(L, L->pos + 1) == '/') {
      while (L->pos < L->len && L->text[L->pos] != '\n') L->pos++;
    } else if (c == '/' && at(L, L->pos + 1) == '*') {
      int32_t line = L->line, col = (int32_t)(L->pos - L->line_start + 1);
      size_t i = L->pos + 2;
      for (;; i++) {
        if (i + 1 >= L->len) {
          L->err = hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, line, col, "unterminated /* comment");
          return false;
        }
        if (L->text[i] == '\n') newline_at(L, i);
        if (L->text[i] == '*' && L->text[i + 1] == '/') break;
      }
      L->pos = i + 2;
    } else {
      return true;
    }
  }
}

static size_t lex_number_end(const hlo_lexer *L, size_t i) {
  if (at(L, i) == '-') i++;
  while (is_digit(at(L, i))) i++;
  if (at(L, i) == '.' && at(L, i + 1) != '.') {
    i++;
    while (is_digit(at(L, i))) i++;
  }
  char e = at(L, i);
  if (e == 'e' || e == 'E') {
    size_t k = i + 1;
    if (at(L, k) == '+' || at(L, k) == '-') k++;
    if (is_digit(at(L, k))) {
      while (is_digit(at(L, k))) k++;
      i = k;
    }
  }
  return i;
}

static size_t lex_ident_end(const hlo_lexer *L, size_t i) {
  for (;; i++) {
    char c = at(L, i);
    if (is_ident_start(c) || is_digit(c) || c == '.') continue;
    if (c == '-' && at(L, i + 1) != '>') continue;
    return i;
  }
}

/* long: the lexer's one switch over a token's first character */
void hlo_lex_next(hlo_lexer *L) {
  hlo_token *t = &L->tok;
  if (t->kind == HLO_ERROR) return; /* sticky */
  if (!skip_blanks(L)) {
    t->kind = HLO_ERROR;
    t->n = 0;
    return;
  }
  size_t s = L->pos;
  t->start = s;
  t->p = L->text + s;
  t->line = L->line;
  t->col = (int32_t)(s - L->line_start + 1);
  if (s >= L->len) {
    t->kind = HLO_EOF;
    t->n = 0;
    return;
  }
  char c = L->text[s], c1 = at(L, s + 1);
  size_t e = s + 1;
  switch (c) {
    case '=': t->kind = HLO_EQ; break;
    case ',': t->kind = HLO_COMMA; break;
    case ':': t->kind = HLO_COLON; break;
    case '[': t->kind = HLO_LBRACKET; break;
    case ']': t->kind = HLO_RBRACKET; break;
    case '{': t->kind = HLO_LBRACE; break;
    case '}': t->kind = HLO_RBRACE; break;
    case '(': t->kind = HLO_LPAREN; break;
    case ')': t->kind = HLO_RPAREN; break;
    case '<':
      t->kind = c1 == '=' ? HLO_LE : HLO_OTHER;
      e = c1 == '=' ? s + 2 : s + 1;
      break;
    case '"': {
      size_t i = s + 1;
      for (;; i++) {
        if (i >= L->len) {
          L->err = hlo_fail_at(OPTIC_ERR_INVALID_ARGUMENT, t->line, t->col, "unterminated string");
          t->kind = HLO_ERROR;
          t->n = 0;
          return;
        }
        if (L->text[i] == '\\') {
          i++;
          if (i < L->len && L->text[i] == '\n') newline_at(L, i);
          continue;
        }
        if (L->text[i] == '\n') newline_at(L, i);
        if (L->text[i] == '"') break;
      }
      t->kind = HLO_STRING;
      e = i + 1;
      break;
    }
    case '%':
      if (is_ident_start(c1)) {
        t->kind = HLO_IDENT;
        e = lex_ident_end(L, s + 1);
        t->p = L->text + s + 1;
        t->n = e - s - 1;
        L->pos = e;
        return;
      }
      t->kind = HLO_OTHER;
      break;
    case '-':
      if (c1 == '>') {
        t->kind = HLO_ARROW;
        e = s + 2;
      } else if (is_digit(c1) || (c1 == '.' && is_digit(at(L, s + 2)))) {
        t->kind = HLO_NUMBER;
        e = lex_number_end(L, s);
      } else {
        t->kind = HLO_MINUS;
      }
      break;
    case '.':
      if (c1 == '.' && at(L, s + 2) == '.') {
        t->kind = HLO_ELLIPSIS;
        e = s + 3;
      } else if (is_digit(c1)) {
        t->kind = HLO_NUMBER;
        e = lex_number_end(L, s);
      } else {
        t->kind = HLO_OTHER;
      }
      break;
    default:
      if (is_digit(c)) {
        t->kind = HLO_NUMBER;
        e = lex_number_end(L, s);
      } else if (is_ident_start(c)) {
        t->kind = HLO_IDENT;
        e = lex_ident_end(L, s);
      } else {
        t->kind = HLO_OTHER;
      }
      break;
  }
  t->n = e - s;
  L->pos = e;
}

static bool is_raw_char(char c) {
  return is_ident_start(c) || is_digit(c) || c == '.' || c == '?' || c == '<' || c == '>' || c == '+' || c == '-' ||
         c == '%';
}

hlo_token hlo_lex_raw_word(hlo_lexer *L) {
  hlo_token w = L->tok;
  if (w.kind == HLO_ERROR || w.kind == HLO_EOF) {
    w.n = 0;
    return w;
  }
  size_t i = w.start;
  while (i < L->len && is_raw_char(L->text[i])) i++;
  w.p = L->text + w.start;
  w.n = i - w.start;
  /* No raw character is a newline, so the line is the token's. */
  L->line = w.line;
  L->line_start = w.start - (size_t)(w.col - 1);
  L->pos = i;
  hlo_lex_next(L);
  return w;
}

char hlo_lex_char_after(const hlo_lexer *L) { return at(L, L->pos); }

char hlo_lex_peek_char(const hlo_lexer *L) {
  size_t i = L->pos;
  for (;;) {
    char c = at(L, i);
    if (i >= L->len) return '\0';
    if (is_blank(c)) {
      i++;
    } else if (c == '/' && at(L, i + 1) == '/') {
      while (i < L->len && L->text[i] != '\n') i++;
    } else if (c == '/' && at(L, i + 1) == '*') {
      size_t k = i + 2;
      while (k + 1 < L->len && !(L->text[k] == '*' && L->text[k + 1] == '/')) k++;
      if (k + 1 >= L->len) return '\0';
      i = k + 2;
    } else {
      return c;
    }
  }
}
