/* The executor's elementwise primitive: one op over n elements of any dtype,
 * f32 through the kernels' dispatch tables, other dtypes through the element
 * semantics of kernels/elem.h, the table the reference evaluator runs too
 * (docs/graph-evaluate.md), so the runtime agrees with the oracle bitwise
 * except where an f32 kernel has a documented ULP bound. Never allocates;
 * scalar operands are expanded in small stack chunks when a kernel has no
 * scalar form. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>

#include "exec/exec_internal.h"
#include "kernels/binary.h"
#include "kernels/clamp.h"
#include "kernels/compare.h"
#include "kernels/convert.h"
#include "kernels/elem.h"
#include "kernels/select.h"
#include "kernels/unary.h"

/* Each opcode's kind, from the kind column of OPTIC_OPCODE_LIST. */
enum { EW_KIND_UNARY, EW_KIND_BINARY, EW_KIND_ELEMENTWISE, EW_KIND_OTHER };
static const unsigned char opcode_kind[OPTIC_OPCODE_COUNT_] = {
#define EW_KIND_OF_(name, str, kind) EW_KIND_##kind,
    OPTIC_OPCODE_LIST(EW_KIND_OF_)
#undef EW_KIND_OF_
};

/* Element op + 1 by opcode (0: none), by name from OPTIC_ELEM_OP_LIST. */
static const unsigned char opcode_elem[OPTIC_OPCODE_COUNT_] = {
#define EW_ELEM_OF_(name, kind) [OPTIC_OP_##name] = OPTIC_ELEM_##name + 1,
    OPTIC_ELEM_OP_LIST(EW_ELEM_OF_)
#undef EW_ELEM_OF_
};

/* The opcode of each element op (opcode numbers fit a byte). */
static const unsigned char elem_opcode[OPTIC_ELEM_OP_COUNT_] = {
#define EW_OPCODE_OF_(name, kind) [OPTIC_ELEM_##name] = OPTIC_OP_##name,
    OPTIC_ELEM_OP_LIST(EW_OPCODE_OF_)
#undef EW_OPCODE_OF_
};
_Static_assert(OPTIC_OPCODE_COUNT_ < 256, "opcode numbers fit the tables' bytes");

/* The element op of an opcode ew_is_elementwise accepts. */
static optic_elem_op elem_of(optic_opcode op) { return (optic_elem_op)(opcode_elem[op] - 1); }

bool ew_is_elementwise(optic_opcode op) { return (unsigned)op < OPTIC_OPCODE_COUNT_ && opcode_elem[op] != 0; }

static bool is_binary(optic_opcode op) {
  return (unsigned)op < OPTIC_OPCODE_COUNT_ && opcode_kind[op] == EW_KIND_BINARY;
}

static bool unary_kernel(optic_opcode op, optic_unary_op *k) {
  return ew_is_elementwise(op) && optic_elem_unary_kernel(elem_of(op), k);
}

static bool binary_kernel(optic_opcode op, optic_binary_op *k) {
  return ew_is_elementwise(op) && optic_elem_binary_kernel(elem_of(op), k);
}

static bool scalar_op(optic_opcode op) { return ew_is_elementwise(op) && optic_elem_scalar_op(elem_of(op)); }

optic_compare_dir ew_param_of(const optic_node_attrs_t *a) {
  if (a->kind == OPTIC_ATTRS_REDUCE_PRECISION) {
    return (optic_compare_dir)optic_elem_reduce_precision_param(a->reduce_precision.exponent_bits,
                                                                a->reduce_precision.mantissa_bits);
  }
  return a->kind == OPTIC_ATTRS_COMPARE ? a->compare.direction : OPTIC_CMP_EQ;
}

bool ew_half_widenable(optic_opcode op) {
  if (!ew_is_elementwise(op) || scalar_op(op)) return false;
  optic_unary_op u;
  optic_binary_op b;
  return op == OPTIC_OP_COPY || op == OPTIC_OP_CONVERT || op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP ||
         op == OPTIC_OP_COMPARE || unary_kernel(op, &u) || binary_kernel(op, &b);
}

static bool generic_supported(optic_opcode op, optic_dtype in, optic_dtype out) {
  return ew_is_elementwise(op) && optic_elem_generic_supported(elem_of(op), in, out);
}

bool ew_supported(optic_opcode op, optic_dtype in, optic_dtype out) {
  if (!ew_is_elementwise(op)) return false;
  if (scalar_op(op)) return optic_elem_scalar_defines(elem_of(op), in, out);
  if (op == OPTIC_OP_COPY || op == OPTIC_OP_CONVERT || op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP ||
      op == OPTIC_OP_COMPARE) {
    return optic_dtype_has_values(in) && optic_dtype_has_values(out);
  }
  switch (in) {
    case OPTIC_F32:
    case OPTIC_F64:
    case OPTIC_S32:
    case OPTIC_PRED: return optic_elem_basic_defines(elem_of(op), in);
    case OPTIC_U8: return optic_elem_basic_defines(elem_of(op), in) || generic_supported(op, in, out);
    default: return generic_supported(op, in, out);
  }
}

/* The dtypes of the basic family; the others go to the generic family. */
static bool legacy_dtype(optic_dtype dt) {
  return dt == OPTIC_F32 || dt == OPTIC_F64 || dt == OPTIC_S32 || dt == OPTIC_U8 || dt == OPTIC_PRED;
}

/* The halves' f32 step: the dispatched f32 kernels, once per op. */
static void kernel_f32(void *ctx, optic_elem_op op, optic_compare_op cmp, size_t n, const float *const *src, void *y);

/* ------------------------------------------------------------ f32 through the kernels */

typedef struct ew_tables {
  const optic_binary_kernels *bin;
  const optic_unary_kernels *un;
  const optic_compare_kernels *cmp;
  const optic_select_kernels *sel;
  const optic_clamp_kernels *clamp;
  const optic_convert_kernels *cvt;
} ew_tables;

/* The dispatch tables for the selected ISA, fetched once per process (each
 * _get() is itself once-initialized and thread-safe). */
static ew_tables g_tables;
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void) {
  g_tables = (ew_tables){optic_binary_kernels_get(), optic_unary_kernels_get(), optic_compare_kernels_get(),
                         optic_select_kernels_get(), optic_clamp_kernels_get(), optic_convert_kernels_get()};
}

static const ew_tables *tables(void) {
  pthread_once(&g_tables_once, tables_init);
  return &g_tables;
}

static void fill(size_t es, size_t n, const void *v, unsigned char *dst) {
  switch (es) {
    case 4: {
      uint32_t x;
      memcpy(&x, v, 4);
      uint32_t *d = (uint32_t *)(void *)dst;
      for (size_t i = 0; i < n; i++) d[i] = x;
      break;
    }
    case 8: {
      uint64_t x;
      memcpy(&x, v, 8);
      uint64_t *d = (uint64_t *)(void *)dst;
      for (size_t i = 0; i < n; i++) d[i] = x;
      break;
    }
    default: memset(dst, *(const unsigned char *)v, n); break;
  }
}

#define CHUNK 256

/* Expands the masked operands into stack chunks and runs the op unmasked. */
static void expand_scalars(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n,
                           const void *const *src, unsigned mask, void *y, int nsrc) {
  _Alignas(64) unsigned char tmp[3][CHUNK * 8];
  size_t oes = optic_dtype_size(out);
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    const void *s[3];
    for (int k = 0; k < nsrc; k++) {
      size_t es = (op == OPTIC_OP_SELECT && k == 0) ? 1 : optic_dtype_size(in);
      if ((mask >> k) & 1u) {
        fill(es, len, src[k], tmp[k]);
        s[k] = tmp[k];
      } else {
        s[k] = (const unsigned char *)src[k] + lo * es;
      }
    }
    ew_apply(op, cmp, in, out, len, s, 0, (unsigned char *)y + lo * oes);
  }
}

static bool f32_apply(optic_opcode op, optic_compare_dir cmp, optic_dtype out, size_t n, const void *const *src,
                      unsigned mask, void *y) {
  const ew_tables *t = tables();
  optic_unary_op u;
  optic_binary_op b;
  if (unary_kernel(op, &u)) {
    if (mask) return false;
    t->un->kernel[u](n, src[0], y);
    return true;
  }
  if (binary_kernel(op, &b)) {
    if (mask == 1u && (op == OPTIC_OP_ADD || op == OPTIC_OP_MULTIPLY)) {
      /* s + a[i] and s * a[i] equal a[i] + s and a[i] * s (IEEE addition and
       * multiplication commute; only a NaN payload could differ). */
      t->bin->vs[b](n, src[1], *(const float *)src[0], y);
      return true;
    }
    if (mask == 0) t->bin->vv[b](n, src[0], src[1], y);
    else if (mask == 2u) t->bin->vs[b](n, src[0], *(const float *)src[1], y);
    else return false;
    return true;
  }
  switch (op) {
    case OPTIC_OP_COMPARE:
      if (mask == 0) t->cmp->vv[cmp](n, src[0], src[1], y);
      else if (mask == 2u) t->cmp->vs[cmp](n, src[0], *(const float *)src[1], y);
      else return false;
      return true;
    case OPTIC_OP_SELECT:
      if (mask == 0) t->sel->vpred(n, src[0], src[1], src[2], y);
      else if (mask == 1u) t->sel->spred(n, *(const uint8_t *)src[0], src[1], src[2], y);
      else return false;
      return true;
    case OPTIC_OP_CLAMP:
      if (mask == 0) t->clamp->vv(n, src[1], src[0], src[2], y);
      else if (mask == 5u) t->clamp->vs(n, src[1], *(const float *)src[0], *(const float *)src[2], y);
      else return false;
      return true;
    case OPTIC_OP_CONVERT:
      if (mask) return false;
      switch (out) {
        case OPTIC_F64: t->cvt->f32_f64(n, src[0], y); return true;
        case OPTIC_S32: t->cvt->f32_s32(n, src[0], y); return true;
        case OPTIC_PRED: t->cvt->f32_pred(n, src[0], y); return true;
        case OPTIC_F32:
          if (y != src[0]) memcpy(y, src[0], n * 4);
          return true;
        default: return false;
      }
    default: return false;
  }
}

void ew_apply(optic_opcode op, optic_compare_dir cmp, optic_dtype in, optic_dtype out, size_t n, const void *const *src,
              unsigned scalar_mask, void *y) {
  if (n == 0) return;
  if (scalar_op(op)) {
    optic_elem_scalar_apply(elem_of(op), (int32_t)cmp, in, out, n, src, scalar_mask, y);
    return;
  }
  int nsrc = op == OPTIC_OP_SELECT || op == OPTIC_OP_CLAMP ? 3 : (is_binary(op) || op == OPTIC_OP_COMPARE) ? 2 : 1;
  if (op == OPTIC_OP_COPY && !scalar_mask) {
    if (y != src[0]) memmove(y, src[0], n * optic_dtype_size(in));
    return;
  }
  if (!legacy_dtype(in) || (op == OPTIC_OP_CONVERT && !legacy_dtype(out)) ||
      (in == OPTIC_U8 && (op == OPTIC_OP_NEGATE || op == OPTIC_OP_ABS))) {
    optic_elem_generic(elem_of(op), (optic_compare_op)cmp, in, out, n, src, scalar_mask, y, kernel_f32, NULL);
    return;
  }
  if (in == OPTIC_F32 && op != OPTIC_OP_COPY) {
    if (f32_apply(op, cmp, out, n, src, scalar_mask, y)) return;
    if (scalar_mask && op != OPTIC_OP_CONVERT) {
      expand_scalars(op, cmp, in, out, n, src, scalar_mask, y, nsrc);
      return;
    }
  }
  if (op == OPTIC_OP_CONVERT && !scalar_mask) {
    const ew_tables *t = tables();
    if (in == OPTIC_F64 && out == OPTIC_F32) return t->cvt->f64_f32(n, src[0], y);
    if (in == OPTIC_S32 && out == OPTIC_F32) return t->cvt->s32_f32(n, src[0], y);
    if (in == OPTIC_F64 && out == OPTIC_S32) return t->cvt->f64_s32(n, src[0], y);
    if (in == OPTIC_S32 && out == OPTIC_F64) return t->cvt->s32_f64(n, src[0], y);
    if (in == OPTIC_U8 && out == OPTIC_F32) return t->cvt->u8_f32(n, src[0], y);
    if (in == out) {
      if (y != src[0]) memmove(y, src[0], n * optic_dtype_size(in));
      return;
    }
  }
  optic_elem_basic(elem_of(op), (optic_compare_op)cmp, in, out, n, src, scalar_mask, y);
}

void ew_bind_kernels(ew_instr *in) {
  in->k_un = NULL, in->k_vv = NULL, in->k_vs = NULL, in->k_comm = false, in->chain_op = 0;
  if (in->kind != EW_OP || in->in_dt != OPTIC_F32 || in->out_dt != OPTIC_F32 || scalar_op(in->op)) return;
  const ew_tables *t = tables();
  optic_unary_op u;
  optic_binary_op b;
  if (unary_kernel(in->op, &u)) {
    in->k_un = t->un->kernel[u];
  } else if (binary_kernel(in->op, &b)) { /* the f32_apply forms */
    in->k_vv = t->bin->vv[b], in->k_vs = t->bin->vs[b];
    in->k_comm = in->op == OPTIC_OP_ADD || in->op == OPTIC_OP_MULTIPLY;
    if (optic_chain_op_ok(b)) in->chain_op = (uint8_t)(b + 1);
  }
}

static void kernel_f32(void *ctx, optic_elem_op op, optic_compare_op cmp, size_t n, const float *const *src, void *y) {
  (void)ctx;
  optic_opcode o = (optic_opcode)elem_opcode[op];
  ew_apply(o, (optic_compare_dir)cmp, OPTIC_F32, o == OPTIC_OP_COMPARE ? OPTIC_PRED : OPTIC_F32, n,
           (const void *const *)src, 0, y);
}

/* ------------------------------------------------------------ strided walks */

static int64_t walk_offset(const exec_walk *w, size_t i, int64_t *idx) {
  int64_t off = w->base;
  for (int32_t d = w->rank - 1; d >= 0; d--) {
    int64_t dim = w->dims[d];
    idx[d] = dim ? (int64_t)(i % (size_t)dim) : 0;
    i = dim ? i / (size_t)dim : 0;
    off += idx[d] * w->strides[d];
  }
  return off;
}

/* Calls body(dst_index, src_offset, run) for maximal runs along the last dim. */
#define WALK_RUNS(w, lo, len, BODY)                                           \
  do {                                                                        \
    int64_t idx_[OPTIC_MAX_RANK];                                             \
    int64_t off_ = walk_offset(w, lo, idx_);                                  \
    int32_t last_ = (w)->rank - 1;                                            \
    size_t k_ = 0;                                                            \
    while (k_ < (len)) {                                                      \
      size_t run_ = last_ < 0 ? 1 : (size_t)((w)->dims[last_] - idx_[last_]); \
      if (run_ > (len)-k_) run_ = (len)-k_;                                   \
      int64_t st_ = last_ < 0 ? 0 : (w)->strides[last_];                      \
      BODY;                                                                   \
      k_ += run_;                                                             \
      if (last_ < 0) break;                                                   \
      idx_[last_] += (int64_t)run_;                                           \
      off_ += (int64_t)run_ * st_;                                            \
      for (int32_t d_ = last_; d_ > 0 && idx_[d_] >= (w)->dims[d_]; d_--) {   \
        off_ -= idx_[d_] * (w)->strides[d_];                                  \
        idx_[d_] = 0;                                                         \
        idx_[d_ - 1]++;                                                       \
        off_ += (w)->strides[d_ - 1];                                         \
      }                                                                       \
    }                                                                         \
  } while (0)

/* d[0, n) = v (32-bit words). libc's wmemset where wchar_t is 32 bits
 * (glibc picks an AVX-512/AVX2 fill at load time; this file is built for the
 * baseline ISA, whose loop stores 16 bytes at a time): the broadcasts of
 * row values that fused loops over short rows gather per block. */
static void fill32(unsigned char *d, uint32_t v, size_t n) {
  if (sizeof(wchar_t) == 4 && ((uintptr_t)d & 3) == 0) {
    wchar_t w;
    memcpy(&w, &v, 4);
    wmemset((wchar_t *)(void *)d, w, n);
    return;
  }
  for (size_t j = 0; j < n; j++) memcpy(d + j * 4, &v, 4);
}

static void copy_run(size_t es, const unsigned char *s, int64_t sst, unsigned char *d, int64_t dst_st, size_t run) {
  if (sst == 1 && dst_st == 1) {
    memcpy(d, s, run * es);
    return;
  }
  switch (es) {
    case 4: {
      /* memcpy keeps unaligned arrays defined; the constant-size copies compile to moves */
      if (sst == 0 && dst_st == 1) { /* a broadcast along the run: one value, filled */
        uint32_t v;
        memcpy(&v, s, 4);
        fill32(d, v, run);
      } else if (dst_st == 1) {
        for (size_t j = 0; j < run; j++) memcpy(d + j * 4, s + (int64_t)j * sst * 4, 4);
      } else {
        for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 4, s + (int64_t)j * sst * 4, 4);
      }
      break;
    }
    case 8: {
      for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 8, s + (int64_t)j * sst * 8, 8);
      break;
    }
    case 2: {
      for (size_t j = 0; j < run; j++) memcpy(d + (int64_t)j * dst_st * 2, s + (int64_t)j * sst * 2, 2);
      break;
    }
    case 1:
      for (size_t j = 0; j < run; j++) d[(int64_t)j * dst_st] = s[(int64_t)j * sst];
      break;
    default: /* token: no bytes */ break;
  }
}

/* walk_gather of a walk of rank 2 (the broadcasts of a row or a column
 * vector over [rows, width] blocks): one division for the first element,
 * then a run per row; the same elements as the general walk. */
static void gather_rank2(const exec_walk *w, size_t es, const unsigned char *s, size_t lo, size_t len,
                         unsigned char *d) {
  const size_t n = (size_t)w->dims[1];
  size_t q = lo / n, r = lo % n;
  int64_t row = w->base + (int64_t)(q % (size_t)w->dims[0]) * w->strides[0];
  for (size_t k = 0; k < len;) {
    size_t run = n - r < len - k ? n - r : len - k;
    copy_run(es, s + (row + (int64_t)r * w->strides[1]) * (int64_t)es, w->strides[1], d + k * es, 1, run);
    k += run, r = 0, row += w->strides[0];
  }
}

void walk_gather(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst) {
  if (len == 0) return;
  const unsigned char *s = src;
  unsigned char *d = dst;
  if (w->rank == 2 && w->dims[0] > 0 && w->dims[1] > 0) {
    gather_rank2(w, es, s, lo, len, d);
    return;
  }
  WALK_RUNS(w, lo, len, copy_run(es, s + off_ * (int64_t)es, st_, d + k_ * es, 1, run_));
}

void walk_scatter(const exec_walk *w, size_t es, const void *src, size_t lo, size_t len, void *dst) {
  if (len == 0) return;
  const unsigned char *s = src;
  unsigned char *d = dst;
  WALK_RUNS(w, lo, len, copy_run(es, s + k_ * es, 1, d + off_ * (int64_t)es, st_, run_));
}

exec_walk walk_merged(const exec_walk *w) {
  exec_walk m = {.rank = 0, .base = w->base};
  for (int32_t d = 0; d < w->rank; d++) {
    if (w->dims[d] == 1) continue;
    if (m.rank > 0 && m.strides[m.rank - 1] == w->dims[d] * w->strides[d]) {
      m.dims[m.rank - 1] *= w->dims[d];
      m.strides[m.rank - 1] = w->strides[d];
      continue;
    }
    m.dims[m.rank] = w->dims[d];
    m.strides[m.rank++] = w->strides[d];
  }
  return m;
}

bool walk_one_run(const exec_walk *w, size_t lo, size_t len, int64_t *off) {
  if (w->rank == 0) {
    *off = w->base;
    return true;
  }
  const int32_t last = w->rank - 1;
  const size_t n = (size_t)w->dims[last];
  if (n == 0) return false;
  size_t q = lo / n, r = lo % n;
  if (r + len > n) return false;
  int64_t o = w->base + (int64_t)r * w->strides[last];
  for (int32_t d = last - 1; d >= 0; d--) {
    size_t dim = (size_t)w->dims[d];
    size_t i = d == 0 ? q : q % dim;
    o += (int64_t)i * w->strides[d];
    q = d == 0 ? 0 : q / dim;
  }
  *off = o;
  return true;
}
