/* Internal: the HLO text importer's shared pieces. The lexer
 * (hlo_parse_lex.c) turns text into tokens with line/column positions; the
 * parser (hlo_parse.c, attributes in hlo_parse_attr.c) builds a syntax tree
 * in an arena; the builder (hlo_parse_build.c, per-opcode calls in
 * hlo_parse_ops.c) turns the tree into a module through the public builders,
 * so every shape is inferred and checked. Nothing here prints or aborts;
 * every error is an optic_fail with "line L:C: ..." in front.
 * Never include from outside graph/. */
#ifndef OPTIC_GRAPH_HLO_PARSE_H
#define OPTIC_GRAPH_HLO_PARSE_H

#include <optic/graph.h>

#include "core/error.h"

/* Bounds that keep hostile input from exhausting the stack. */
#define HLO_MAX_NESTING 32    /* tuple shapes inside tuple shapes */
#define HLO_MAX_CALL_DEPTH 64 /* computations calling computations (the cost model's bound too) */

/* ------------------------------------------------------------------ arena */

typedef struct hlo_chunk hlo_chunk;
typedef struct hlo_arena {
  hlo_chunk *chunks;
  char *cur;
  size_t left;
} hlo_arena;

/* Zeroed, 16-byte aligned memory that lives until hlo_arena_free; NULL when
 * out of memory (or size does not fit). */
void *hlo_arena_alloc(hlo_arena *a, size_t size);
/* NUL-terminated copy of n bytes. */
char *hlo_arena_strndup(hlo_arena *a, const char *s, size_t n);
void hlo_arena_free(hlo_arena *a);

/* A growable array in the arena (old blocks are left behind: at most 2x). */
typedef struct hlo_vec {
  void *data;
  int32_t n, cap;
} hlo_vec;
/* A new zeroed element of elem bytes at the end; NULL when out of memory. */
void *hlo_vec_push(hlo_arena *a, hlo_vec *v, size_t elem);

/* ------------------------------------------------------- string -> int map */

/* Keys are (string, scope) pairs; strings are not copied (they live in the
 * arena). Open addressing, load factor <= 1/2. */
typedef struct hlo_map_slot {
  const char *key;
  uint32_t hash;
  int32_t scope, value;
} hlo_map_slot;
typedef struct hlo_map {
  hlo_map_slot *slots;
  size_t cap, count;
} hlo_map;

/* Inserts (key, scope) -> value unless present; *existing gets the present
 * value or -1. OUT_OF_MEMORY is the only error. */
optic_status hlo_map_put(hlo_map *m, const char *key, int32_t scope, int32_t value, int32_t *existing);
/* Inserts or overwrites. */
optic_status hlo_map_set(hlo_map *m, const char *key, int32_t scope, int32_t value);
/* The value, or -1. */
int32_t hlo_map_get(const hlo_map *m, const char *key, int32_t scope);
void hlo_map_free(hlo_map *m);

/* ------------------------------------------------------------------ lexer */

typedef enum hlo_tok {
  HLO_EOF,
  HLO_IDENT,  /* [A-Za-z_][A-Za-z0-9_.-]*, '%' dropped; '-' never starts "->" */
  HLO_NUMBER, /* -?digits[.digits][e[+-]digits] or -?.digits... */
  HLO_STRING, /* "..." with \-escapes; p/n cover the quotes */
  HLO_EQ,
  HLO_COMMA,
  HLO_COLON,
  HLO_LBRACKET,
  HLO_RBRACKET,
  HLO_LBRACE,
  HLO_RBRACE,
  HLO_LPAREN,
  HLO_RPAREN,
  HLO_ARROW,    /* -> */
  HLO_MINUS,    /* a '-' that starts no number or arrow: -inf, -nan */
  HLO_LE,       /* <= (bounded dynamic dims, iota replica groups) */
  HLO_ELLIPSIS, /* ... (elided literals) */
  HLO_OTHER,    /* any other single character */
  HLO_ERROR     /* unterminated string or comment; the lexer's err holds the status */
} hlo_tok;

typedef struct hlo_token {
  hlo_tok kind;
  const char *p; /* first character (after '%' for names) */
  size_t n;
  size_t start; /* offset of the token's first character, '%' included */
  int32_t line, col;
} hlo_token;

typedef struct hlo_lexer {
  const char *text;
  size_t len, pos;
  int32_t line;
  size_t line_start;
  hlo_token tok; /* the current token */
  optic_status err;
} hlo_lexer;

void hlo_lex_init(hlo_lexer *L, const char *text, size_t len);
/* Moves to the next token. */
void hlo_lex_next(hlo_lexer *L);
/* Re-reads the text from the current token's start as one raw word of
 * [A-Za-z0-9_.?<>+%-] characters (window numbers "3x3", pads "1_1x0_-1",
 * dim labels "b01f_01io->b01f"), returns it (possibly empty) and lexes the
 * token after it. */
hlo_token hlo_lex_raw_word(hlo_lexer *L);
/* The first character after the current token that is not blank or inside a
 * comment, or '\0' at the end of the text. Does not move. */
char hlo_lex_peek_char(const hlo_lexer *L);
/* The character right after the current token ('\0' at the end). */
char hlo_lex_char_after(const hlo_lexer *L);
/* Token kind + text comparisons. */
bool hlo_tok_is(const hlo_token *t, const char *word);

/* ---------------------------------------------------------------- errors */

/* optic_fail with "line L:C: " in front of the message. */
optic_status hlo_fail_at(optic_status code, int32_t line, int32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Error at the current token; when the lexer failed there, its error. */
optic_status hlo_fail_tok(hlo_lexer *L, optic_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "expected <what>, found <token>" at the current token. */
optic_status hlo_expected(hlo_lexer *L, const char *what);
/* Writes the token for a message: 'text' (truncated) or "end of input". */
const char *hlo_tok_describe(const hlo_token *t, char *buf, size_t size);
/* Re-raises the last error (a builder's) with "line L:C: <prefix>" in front, same code. */
optic_status hlo_fail_wrap(optic_status code, int32_t line, int32_t col, const char *prefix);
/* Parses an integer token (NUMBER without fraction or exponent) into
 * *out: INVALID_ARGUMENT if it is no integer, OVERFLOW if it does not fit int64. */
optic_status hlo_token_int(hlo_lexer *L, const hlo_token *t, int64_t *out);

/* ----------------------------------------------------------- syntax tree */

typedef struct hlo_pos {
  int32_t line, col;
} hlo_pos;

/* A written shape: an array with an optional layout, or a tuple. */
typedef struct hlo_shape {
  optic_dtype dtype; /* OPTIC_DTYPE_INVALID for a tuple */
  optic_shape shape;
  bool has_layout;
  int8_t m2m[OPTIC_MAX_RANK]; /* minor_to_major, valid when has_layout */
  int32_t n_elems;
  struct hlo_shape *elems;
  hlo_pos pos;
} hlo_shape;

/* The attributes the importer uses; all others are parsed and skipped. */
#define HLO_ATTR_LIST(X)                                            \
  X(DIMENSIONS, "dimensions")                                       \
  X(TO_APPLY, "to_apply")                                           \
  X(CALLS, "calls")                                                 \
  X(CONDITION, "condition")                                         \
  X(BODY, "body")                                                   \
  X(INDEX, "index")                                                 \
  X(DIRECTION, "direction")                                         \
  X(LHS_BATCH, "lhs_batch_dims")                                    \
  X(RHS_BATCH, "rhs_batch_dims")                                    \
  X(LHS_CONTRACTING, "lhs_contracting_dims")                        \
  X(RHS_CONTRACTING, "rhs_contracting_dims")                        \
  X(WINDOW, "window")                                               \
  X(DIM_LABELS, "dim_labels")                                       \
  X(FEATURE_GROUP_COUNT, "feature_group_count")                     \
  X(BATCH_GROUP_COUNT, "batch_group_count")                         \
  X(SLICE, "slice")                                                 \
  X(PADDING, "padding")                                             \
  X(IOTA_DIMENSION, "iota_dimension")                               \
  X(EXPONENT_BITS, "exponent_bits")                                 \
  X(DYNAMIC_SLICE_SIZES, "dynamic_slice_sizes")                     \
  X(OFFSET_DIMS, "offset_dims")                                     \
  X(SOURCE_TARGET_PAIRS, "source_target_pairs")                     \
  X(CUSTOM_CALL_TARGET, "custom_call_target")                       \
  X(ALGORITHM, "algorithm")                                         \
  X(IS_STABLE, "is_stable")                                         \
  X(K, "k")                                                         \
  X(EPSILON, "epsilon")                                             \
  X(FEATURE_INDEX, "feature_index")                                 \
  X(LARGEST, "largest")                                             \
  X(COLLAPSED_SLICE_DIMS, "collapsed_slice_dims")                   \
  X(START_INDEX_MAP, "start_index_map")                             \
  X(INDEX_VECTOR_DIM, "index_vector_dim")                           \
  X(SLICE_SIZES, "slice_sizes")                                     \
  X(UPDATE_WINDOW_DIMS, "update_window_dims")                       \
  X(INSERTED_WINDOW_DIMS, "inserted_window_dims")                   \
  X(SCATTER_DIMS_TO_OPERAND_DIMS, "scatter_dims_to_operand_dims")   \
  X(OPERAND_BATCHING_DIMS, "operand_batching_dims")                 \
  X(START_INDICES_BATCHING_DIMS, "start_indices_batching_dims")     \
  X(INPUT_BATCHING_DIMS, "input_batching_dims")                     \
  X(SCATTER_INDICES_BATCHING_DIMS, "scatter_indices_batching_dims") \
  X(MANTISSA_BITS, "mantissa_bits")                                 \
  X(KIND, "kind")                                                   \
  X(REPLICA_GROUPS, "replica_groups")                               \
  X(TRUE_COMPUTATION, "true_computation")                           \
  X(FALSE_COMPUTATION, "false_computation")                         \
  X(BRANCH_COMPUTATIONS, "branch_computations")

typedef enum hlo_attr_kind {
#define HLO_ATTR_ENUM_(name, str) HLO_A_##name,
  HLO_ATTR_LIST(HLO_ATTR_ENUM_)
#undef HLO_ATTR_ENUM_
      HLO_A_COUNT_
} hlo_attr_kind;

const char *hlo_attr_name(hlo_attr_kind k);

typedef struct hlo_attr {
  hlo_attr_kind kind;
  hlo_pos pos;   /* of the attribute's name */
  int64_t *ints; /* integer lists; slice: (start, limit, stride) per dim; padding: (low, high, interior) per dim;
                    replica_groups: the ids, group after group */
  int32_t n_ints;
  int32_t *sizes; /* replica_groups: ids per group */
  int32_t n_sizes;
  const char **names; /* computation references */
  hlo_pos *name_pos;
  int32_t n_names;
  const char *word; /* direction, kind, dim_labels */
  optic_window_dim *window;
  int32_t n_window;
  struct hlo_attr *next;
} hlo_attr;

typedef struct hlo_instr {
  const char *name; /* as written, '%' dropped */
  hlo_pos pos;
  bool is_root;
  hlo_shape shape;
  optic_opcode op;
  hlo_pos op_pos;
  const char **operands;
  hlo_pos *operand_pos;
  hlo_shape **operand_shapes; /* NULL entries where no shape was written */
  int32_t n_operands;
  int64_t param_number;
  void *literal; /* constant bytes in row-major order */
  size_t literal_bytes;
  hlo_attr *attrs;
  struct hlo_instr *next;
  /* filled by the builder */
  const char *final_name;    /* unique in the module */
  int32_t *operand_index;    /* operands resolved to instruction indices */
  int32_t n_users;           /* within the computation */
  optic_node_id node;        /* its logical value */
  optic_node_id phys_node;   /* entry parameters with a layout: the row-major physical parameter */
  const hlo_shape *boundary; /* entry parameters and root: the caller-facing shape (layouts) */
  bool node_is_physical;     /* a folded entry root already in the caller's layout */
  uint8_t state;             /* 0 new, 1 in progress, 2 built */
  int32_t cursor;
} hlo_instr;

typedef struct hlo_comp {
  const char *name;
  hlo_pos pos;
  bool is_entry;
  hlo_instr **instrs;
  int32_t n_instrs;
  struct hlo_comp *next;
  /* filled by the builder */
  int32_t root;
  optic_comp_id id;
  int32_t *callees; /* computation indices, one per reference */
  hlo_pos *callee_pos;
  int32_t n_callees;
  uint8_t state;
  int32_t cursor;
} hlo_comp;

typedef struct hlo_parser {
  hlo_lexer L;
  hlo_arena A;
  const char *module_name;
  hlo_comp **comps;
  int32_t n_comps;
  /* entry_computation_layout={(params)->result}, when written */
  bool has_entry_layout;
  hlo_shape *entry_params;
  int32_t n_entry_params;
  hlo_shape entry_result;
  hlo_pos entry_layout_pos;
  /* input_output_alias={ {out}: (param, {path}, kind), ... }, when written */
  struct graph_io_alias *aliases;
  int32_t n_aliases;
  hlo_pos aliases_pos;
} hlo_parser;

/* hlo_parse.c */
optic_status hlo_parse_shape(hlo_parser *P, hlo_shape *out, int32_t depth);
/* Comma-separated shapes up to ')' (the '(' was consumed): tuples and
 * entry_computation_layout's parameter list. */
optic_status hlo_parse_shape_list(hlo_parser *P, hlo_shape **out, int32_t *n, int32_t depth);
/* A computation name token (IDENT), '%' dropped, copied into the arena. */
optic_status hlo_parse_name(hlo_parser *P, const char *what, const char **name, hlo_pos *pos);

/* hlo_parse_attr.c: the current token is the attribute's name. */
optic_status hlo_parse_attribute(hlo_parser *P, hlo_instr *in);
/* Module header attributes (entry_computation_layout is kept, the rest skipped). */
optic_status hlo_parse_module_attribute(hlo_parser *P);
/* Skips one attribute value of any form (string, braced group, word). */
optic_status hlo_skip_value(hlo_parser *P, const hlo_token *name);
const hlo_attr *hlo_find_attr(const hlo_instr *in, hlo_attr_kind kind);

/* hlo_parse_build.c */
optic_status hlo_build_module(hlo_parser *P, optic_module_t **out);

/* The builder's state, shared by hlo_parse_build.c and hlo_parse_ops.c. Map
 * scopes: a computation's index for its instruction names, and these: */
#define HLO_SCOPE_COMPS (-1) /* computation names -> index */
#define HLO_SCOPE_USED (-2)  /* instruction names written in the text or given out */
typedef struct hlo_builder {
  hlo_parser *P;
  optic_module_t *m;
  hlo_map map;
  int32_t entry;       /* index of the entry computation */
  optic_node_id *made; /* layout nodes the importer added to the entry, in creation order */
  int32_t n_made, cap_made;
} hlo_builder;

/* hlo_parse_ops.c: builds one instruction from its resolved operands. */
optic_status hlo_build_op(hlo_builder *B, hlo_comp *c, hlo_instr *in, const optic_node_id *ops, optic_node_id *out);

/* Shared by the builder files. */
/* A fresh instruction name base+suffix (then base+suffix.K), unique in the
 * module and unused by the text; arena-backed. NULL when out of memory. */
const char *hlo_unique_name(hlo_builder *B, const char *base, const char *suffix);
bool hlo_layout_is_default(const hlo_shape *s); /* deep: every array element row-major */
/* The array's physical (row-major storage) shape under its layout. */
optic_shape hlo_physical_shape(const hlo_shape *s);
/* Physical position of each logical dim: pos[logical] = rank - 1 - (index in minor_to_major). */
void hlo_physical_positions(const hlo_shape *s, int32_t *pos);
/* The written shape as a type; physical: arrays in their storage order. Arena-backed. */
optic_status hlo_shape_to_type(hlo_arena *a, const hlo_shape *s, bool physical, optic_type *out);

#endif
