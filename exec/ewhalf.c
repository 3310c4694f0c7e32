/* Block programs on f16/bf16 values held widened to f32. The op-by-op rule
 * for a half op (kernels/elem_generic.c, the evaluator's) widens its operands
 * exactly, runs the f32 op and rounds the result to the half once. A
 * widened program keeps that rule and skips the conversions in between:
 * registers hold the exact f32 images of half values, each op runs the f32
 * kernels on them and rounds its result in place (y = widen(narrow(y))), a
 * half input is widened once per block, an output narrowed once on store
 * (exactly: the value already is a half, so NaN payloads pass unchanged, as
 * the op-by-op copy and select keep them). The results are therefore the
 * op-by-op path's bitwise. */
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "core/half.h"
#include "exec/exec_internal.h"
#include "kernels/convert.h"

static bool is_half(optic_dtype dt) { return dt == OPTIC_F16 || dt == OPTIC_BF16; }

/* ------------------------------------------------------------ conversions */

/* The convert kernels (kernels/convert.h: bitwise core/half.h's
 * converters on every ISA), fetched once per process. */
static const optic_convert_kernels *g_cvt;
static pthread_once_t g_cvt_once = PTHREAD_ONCE_INIT;
static void cvt_init(void) { g_cvt = optic_convert_kernels_get(); }
static const optic_convert_kernels *cvt(void) {
  pthread_once(&g_cvt_once, cvt_init);
  return g_cvt;
}

void ew_half_widen(optic_dtype dt, size_t n, const void *x, float *y) {
  if (dt == OPTIC_BF16) cvt()->bf16_f32(n, x, y);
  else cvt()->f16_f32(n, x, y);
}

/* The f16 whose exact f32 image is bits b (branch-free: every case is
 * computed and one selected). */
static inline uint16_t f16_of_image(uint32_t b) {
  uint32_t a = b & 0x7FFFFFFFu, sign = (b >> 16) & 0x8000u;
  uint32_t special = 0x7C00u | ((a >> 13) & 0x3FFu);                     /* inf, NaN with its payload */
  uint32_t normal = (a - 0x38000000u) >> 13;                             /* rebias 127 -> 15 */
  float small = optic_half_bits_f32(a < 0x38800000u ? a : 0u) * 0x1p24f; /* m x 2^-24: integral */
  uint32_t sub = (uint32_t)small;
  uint32_t h = a >= 0x7F800000u ? special : a >= 0x38800000u ? normal : sub;
  return (uint16_t)(sign | h);
}

void ew_half_narrow(optic_dtype dt, size_t n, const float *x, void *y) {
  if (dt == OPTIC_BF16) cvt()->f32_bf16(n, x, y);
  else cvt()->f32_f16(n, x, y);
}

void ew_half_narrow_exact(optic_dtype dt, size_t n, const float *x, void *y) {
  unsigned char *p = y;
  if (dt == OPTIC_BF16) {
    for (size_t i = 0; i < n; i++) {
      uint16_t h = (uint16_t)(optic_half_f32_bits(x[i]) >> 16);
      memcpy(p + 2 * i, &h, 2);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    uint16_t h = f16_of_image(optic_half_f32_bits(x[i]));
    memcpy(p + 2 * i, &h, 2);
  }
}

/* Narrowed into a stack chunk and widened back: the kernels' two passes
 * over L1 beat one scalar pass. */
void ew_half_round(optic_dtype dt, size_t n, float *y) {
  uint16_t h[512];
  for (size_t lo = 0; lo < n; lo += 512) {
    size_t len = n - lo < 512 ? n - lo : 512;
    ew_half_narrow(dt, len, y + lo, h);
    ew_half_widen(dt, len, h, y + lo);
  }
}

/* ------------------------------------------------------------ the rewrite */

/* Whether source k of op instruction in holds a half value. */
static bool src_is_half(const ew_instr *in, int32_t k) {
  if (!is_half(in->in_dt)) return false;
  return in->op != OPTIC_OP_SELECT || k > 0; /* select's operand 0 is the predicate */
}

/* Whether op instruction in has a widened form: halves in, halves (or
 * compare's predicates) out; converts between f32 and the halves. */
static bool op_widenable(const ew_instr *in) {
  bool hin = is_half(in->in_dt), hout = is_half(in->out_dt);
  if (!hin && !hout) return true;
  if (!ew_half_widenable(in->op)) return false;
  if (in->op == OPTIC_OP_CONVERT) return (hin || in->in_dt == OPTIC_F32) && (hout || in->out_dt == OPTIC_F32);
  return hin && (hout || in->out_dt == OPTIC_PRED);
}

typedef struct widen_ctx {
  ew_prog *p;
  ew_instr *ins;
  int32_t n;
  float *consts;
  int32_t n_consts;
  int32_t *input_reg; /* [0, n_inputs): EW_INPUT k widened; [n_inputs, 2 n_inputs): scalar input k */
} widen_ctx;

/* Makes op source s (a half) read a widened value: constants are widened
 * now, an input is widened into its own register on first use. */
static void widen_source(widen_ctx *c, optic_dtype dt, ew_src *s) {
  if (s->kind == EW_REG) return;
  if (s->kind == EW_SCALAR && s->value != NULL) {
    ew_half_widen(dt, 1, s->value, &c->consts[c->n_consts]);
    s->value = &c->consts[c->n_consts++];
    return;
  }
  int32_t slot = (s->kind == EW_INPUT ? 0 : c->p->n_inputs) + s->index;
  if (c->input_reg[slot] < 0) {
    int32_t r = c->p->n_regs++;
    ew_instr w = {.kind = EW_WIDEN, .op = OPTIC_OP_CONVERT, .in_dt = dt, .out_dt = OPTIC_F32, .n_src = 1, .dst = r};
    w.src[0] = *s;
    w.wide = dt;
    c->ins[c->n++] = w;
    c->input_reg[slot] = r;
  }
  *s = (ew_src){EW_REG, c->input_reg[slot], NULL};
}

static void widen_instr(widen_ctx *c, ew_instr in, bool *scratch) {
  if (in.kind == EW_GATHER && is_half(in.out_dt) && in.dst >= 0) {
    in.wide = in.out_dt;
    in.alias = EW_ALIAS_NONE;
  } else if (in.kind == EW_MOVE && is_half(in.in_dt) && in.src[0].kind == EW_REG) {
    in.wide = in.in_dt;
  } else if (in.kind == EW_OP && in.op == OPTIC_OP_CONVERT && is_half(in.in_dt) && in.out_dt == OPTIC_F32 &&
             in.src[0].kind == EW_INPUT) { /* an input's widening is the convert itself: one pass */
    in.kind = EW_WIDEN;
    in.wide = in.in_dt;
  } else if (in.kind == EW_OP) {
    for (int32_t k = 0; k < in.n_src; k++) {
      if (src_is_half(&in, k)) widen_source(c, in.in_dt, &in.src[k]);
    }
    const bool same = in.in_dt == in.out_dt;
    if (is_half(in.in_dt)) in.in_dt = OPTIC_F32;
    if (is_half(in.out_dt)) {
      /* the op-by-op path moves these bitwise (a NaN's payload unchanged) */
      in.wide_exact = in.op == OPTIC_OP_COPY || in.op == OPTIC_OP_SELECT || (in.op == OPTIC_OP_CONVERT && same);
      in.wide = in.out_dt;
      in.out_dt = OPTIC_F32;
      *scratch |= in.dst < 0;
    }
  }
  c->ins[c->n++] = in;
}

optic_status ew_widen_halves(ew_prog *p) {
  p->wide_scratch = -1;
  bool any = false;
  for (int32_t i = 0; i < p->n_instr; i++) {
    const ew_instr *in = &p->ins[i];
    if (in->kind != EW_OP) continue;
    if (!op_widenable(in)) return OPTIC_OK;
    any |= is_half(in->in_dt) || is_half(in->out_dt);
  }
  if (!any) return OPTIC_OK;
  /* at most one widening per op source before it */
  widen_ctx c = {.p = p};
  c.ins = calloc((size_t)p->n_instr * 4 + 1, sizeof *c.ins);
  c.consts = calloc((size_t)p->n_instr * 3 + 1, sizeof *c.consts);
  c.input_reg = malloc(((size_t)p->n_inputs * 2 + 1) * sizeof *c.input_reg);
  if (c.ins == NULL || c.consts == NULL || c.input_reg == NULL) {
    free(c.ins), free(c.consts), free(c.input_reg);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fused loop: out of memory");
  }
  for (int32_t k = 0; k < 2 * p->n_inputs; k++) c.input_reg[k] = -1;
  bool scratch = false;
  for (int32_t i = 0; i < p->n_instr; i++) widen_instr(&c, p->ins[i], &scratch);
  if (scratch) p->wide_scratch = p->n_regs++;
  free(p->ins);
  free(c.input_reg);
  p->ins = c.ins;
  p->n_instr = c.n;
  p->wide_consts = c.consts;
  return OPTIC_OK;
}
