/* Runs planned convolutions on OpenBLAS: one slice of the forward pass (also
 * used for the input gradient, planned as a forward convolution) or of the
 * kernel gradient. A slice writes only its own elements and uses only its own
 * part of the scratch; it never allocates, never spawns threads, and calls
 * cblas_sgemm, which runs single-threaded inside an OpenMP parallel region. */
#include "core/error.h"
#include "kernels/blas_conv_engine.h"
#include "kernels/conv_bf16.h"
#include "kernels/conv_direct.h"
#include "kernels/conv_grouped.h"
#include "kernels/conv_taps.h"
#include "core/unconst.h"

/* [lo, hi) of n items for slice t of count: sizes differ by at most one. */
static void split(int64_t n, int32_t t, int32_t count, int64_t *lo, int64_t *hi) {
  int64_t q = n / count, r = n % count;
  *lo = q * t + (t < r ? t : r);
  *hi = *lo + q + (t < r ? 1 : 0);
}

static optic_status check_run(const optic_conv_plan *p, optic_conv_pass pass, const char *name, const void *a,
                              const void *b, const void *out, const void *scratch, int32_t thread, int32_t threads) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s: plan is NULL", name);
  if (p->pass != pass) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s: the plan was made for another pass (%d)", name,
                      (int)p->pass);
  }
  if (threads < 1 || threads > p->threads || thread < 0 || thread >= threads) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: %s: slice %d of %d is invalid (the plan allows 1..%d slices)", name, thread,
                      threads, p->threads);
  }
  const void *ptrs[3] = {a, b, out};
  for (int i = 0; i < 3; i++) {
    if (ptrs[i] == NULL && p->operand_elems[i] != 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s: operand %d is NULL but has %zu elements", name, i,
                        p->operand_elems[i]);
    }
  }
  if (scratch == NULL && p->scratch_bytes != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: %s: scratch is NULL but the plan needs %zu bytes", name,
                      p->scratch_bytes);
  }
  return OPTIC_OK;
}

/* Positions [f0, f1) of the flattened (group, position) space, in blocks that
 * never cross an output run: gather (or view) the input, GEMM with the
 * kernel, write the output in place or through the tile. */
static void forward_slice(const optic_conv_plan *p, const float *in, const float *kernel, float *out, float *scr,
                          int32_t t, int32_t n) {
  const optic_conv_geom *G = &p->g;
  int64_t f0, f1;
  split(p->units, t, n, &f0, &f1);
  float *col = scr, *pack = scr + p->col_floats, *tile = pack + p->pack_floats;
  int64_t ost[OPTIC_CONV_MAX_SPATIAL + 1], ist[OPTIC_CONV_MAX_SPATIAL + 1];
  conv_pos_strides_out(p, ost);
  conv_pos_strides_in(p, ist);
  int64_t packed = -1;
  for (int64_t f = f0; f < f1;) {
    int64_t g = f / p->positions, q = f % p->positions;
    int64_t len = p->block, left = p->run - q % p->run;
    if (len > left) len = left;
    if (len > f1 - f) len = f1 - f;
    conv_mat b;
    if (p->kernel_direct) {
      b = (conv_mat){OPTIC_UNCONST(float *, kernel) + g * G->k_sg, p->k_row_stride, G->k_so};
    } else {
      if (packed != g) conv_kernel_to_dense(p, kernel, g, 0, p->kc, pack);
      packed = g;
      b = (conv_mat){pack, G->cout, 1};
    }
    conv_mat a;
    if (p->strategy == OPTIC_CONV_STRATEGY_GEMM) {
      a = (conv_mat){OPTIC_UNCONST(float *, in) + g * G->in_sg + conv_pos_offset(p, q, ist), p->in_run_stride,
                     G->in_sc};
    } else if (p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK || p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP) {
      if (p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK) {
        conv_gather_mk(p, in, g, q, len, 0, p->kc, col);
      } else {
        conv_gather_mk_tap(p, in, g, q, len, 0, p->kc, col);
      }
      a = (conv_mat){col, p->kc, 1};
    } else {
      conv_gather_km(p, in, g, q, len, 0, p->kc, col);
      a = (conv_mat){col, 1, len};
    }
    conv_mat c = p->output_direct
                     ? (conv_mat){out + g * G->out_sg + conv_pos_offset(p, q, ost), p->out_run_stride, G->out_so}
                     : (conv_mat){tile, G->cout, 1};
    conv_gemm(len, G->cout, p->kc, a, b, c, 0.0f);
    if (!p->output_direct) conv_tile_to_output(p, tile, g, q, len, out);
    f += len;
  }
}

/* Units [u0, u1) of (group, row chunk): each accumulates its rows of the
 * kernel gradient over every position, block by block. */
static void backward_kernel_slice(const optic_conv_plan *p, const float *in, const float *gout, float *gk, float *scr,
                                  int32_t t, int32_t n) {
  const optic_conv_geom *G = &p->g;
  int64_t u0, u1;
  split(p->units, t, n, &u0, &u1);
  float *col = scr, *dense = scr + p->col_floats, *tile = dense + p->pack_floats;
  int64_t ost[OPTIC_CONV_MAX_SPATIAL + 1], ist[OPTIC_CONV_MAX_SPATIAL + 1];
  conv_pos_strides_out(p, ost);
  conv_pos_strides_in(p, ist);
  int64_t chunks = p->units / G->groups;
  for (int64_t u = u0; u < u1; u++) {
    int64_t g = u / chunks, k0 = (u % chunks) * p->kchunk, k1 = k0 + p->kchunk;
    if (k1 > p->kc) k1 = p->kc;
    if (k0 >= k1) continue;
    int64_t kt = k1 - k0;
    conv_mat c = p->kernel_direct ? (conv_mat){gk + g * G->k_sg + k0 * p->k_row_stride, p->k_row_stride, G->k_so}
                                  : (conv_mat){dense, G->cout, 1};
    if (p->positions == 0) conv_gemm(kt, G->cout, 0, c, c, c, 0.0f);
    for (int64_t q = 0; q < p->positions;) {
      int64_t len = p->block, left = p->run - q % p->run;
      if (len > left) len = left;
      if (len > p->positions - q) len = p->positions - q;
      conv_mat b;
      if (p->output_direct) {
        b = (conv_mat){OPTIC_UNCONST(float *, gout) + g * G->out_sg + conv_pos_offset(p, q, ost), p->out_run_stride,
                       G->out_so};
      } else {
        conv_tile_from_output(p, gout, g, q, len, tile);
        b = (conv_mat){tile, G->cout, 1};
      }
      conv_mat at; /* (rows k0..k1) x positions: the transposed im2col block */
      if (p->strategy == OPTIC_CONV_STRATEGY_GEMM) {
        at = (conv_mat){OPTIC_UNCONST(float *, in) + g * G->in_sg + conv_pos_offset(p, q, ist) + k0 * G->in_sc,
                        G->in_sc, p->in_run_stride};
      } else if (p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK || p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP) {
        if (p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK) {
          conv_gather_mk(p, in, g, q, len, k0, k1, col);
        } else {
          conv_gather_mk_tap(p, in, g, q, len, k0, k1, col);
        }
        at = (conv_mat){col, 1, kt};
      } else {
        conv_gather_km(p, in, g, q, len, k0, k1, col);
        at = (conv_mat){col, len, 1};
      }
      conv_gemm(kt, G->cout, len, at, b, c, q == 0 ? 0.0f : 1.0f);
      q += len;
    }
    if (!p->kernel_direct) conv_kernel_from_dense(p, dense, g, k0, k1, gk);
  }
}

/* The direct strategy's kernel copy (kernels/conv.h direct_kernel_pack):
 * from the operand's strides into the plan's [group][taps][in][out]. */
static void pack_direct_kernel(const optic_conv_plan *p, const float *kernel, float *packed) {
  const optic_conv_geom *g = &p->g;
  int64_t taps = 1;
  for (int32_t s = 0; s < g->nsp; s++) taps *= g->k_size[s];
  for (int64_t gr = 0; gr < g->groups; gr++) {
    for (int64_t t = 0; t < taps; t++) {
      int64_t src = gr * p->pk_sg, rest = t;
      for (int32_t s = g->nsp - 1; s >= 0; s--) src += (rest % g->k_size[s]) * p->pk_ss[s], rest /= g->k_size[s];
      float *dst = packed + gr * g->k_sg + t * g->cin * g->cout;
      for (int64_t c = 0; c < g->cin; c++) {
        const float *from = kernel + src + c * p->pk_si;
        for (int64_t o = 0; o < g->cout; o++) dst[c * g->cout + o] = from[o * p->pk_so];
      }
    }
  }
}

/* NULL is legal for an operand without elements (and for scratch when none is
 * needed); such pointers are never read, but pointer arithmetic on NULL is
 * undefined, so they are replaced by a harmless address. */
static float no_elements;

static float *slice_scratch(const optic_conv_plan *p, void *scratch, int32_t thread) {
  return scratch == NULL ? &no_elements : (float *)scratch + (size_t)thread * p->per_thread_floats;
}

static const float *operand(const float *x) { return x == NULL ? &no_elements : x; }
static float *result(float *x) { return x == NULL ? &no_elements : x; }

optic_status optic_conv_run_forward(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    void *scratch, int32_t thread, int32_t threads) {
  optic_status st = check_run(p, OPTIC_CONV_FORWARD, "forward", input, kernel, output, scratch, thread, threads);
  if (st != OPTIC_OK) return st;
  if (p->operand_elems[0] > 0 && p->operand_elems[1] > 0) input += p->g.in_off, kernel += p->g.k_off;
  if (p->strategy == OPTIC_CONV_STRATEGY_DIRECT) {
    int64_t u0, u1;
    split(p->units, thread, threads, &u0, &u1);
    float *slice = slice_scratch(p, scratch, thread);
    if (p->direct_kernel_pack && u0 < u1) {
      float *packed = slice + (p->per_thread_floats - p->pk_floats) / 16 * 16;
      pack_direct_kernel(p, operand(kernel), packed);
      kernel = packed;
    }
    optic_conv_direct_run(p, operand(input), operand(kernel), result(output), slice, u0, u1);
    return OPTIC_OK;
  }
  if (p->strategy == OPTIC_CONV_STRATEGY_TAPS) {
    int64_t u0, u1;
    split(p->units, thread, threads, &u0, &u1);
    optic_conv_taps_run(p, operand(input), operand(kernel), result(output), u0, u1);
    return OPTIC_OK;
  }
  if (p->strategy == OPTIC_CONV_STRATEGY_GROUPED) {
    int64_t u0, u1;
    split(p->units, thread, threads, &u0, &u1);
    if (p->grouped_rows) {
      optic_conv_grouped_rows_run(p, operand(input), operand(kernel), result(output), u0, u1);
    } else {
      optic_conv_grouped_run(p, operand(input), operand(kernel), result(output), u0, u1);
    }
    return OPTIC_OK;
  }
  forward_slice(p, operand(input), operand(kernel), result(output), slice_scratch(p, scratch, thread), thread, threads);
  return OPTIC_OK;
}

bool optic_conv_grouped_bf16_chosen(const optic_conv_plan *p, optic_dtype lhs, optic_dtype rhs, optic_dtype out) {
  return p != NULL && lhs == OPTIC_BF16 && rhs == OPTIC_BF16 && (out == OPTIC_F32 || out == OPTIC_BF16) &&
         p->pass == OPTIC_CONV_FORWARD && p->strategy == OPTIC_CONV_STRATEGY_GROUPED && p->grouped_simd;
}

optic_status optic_conv_run_forward_bf16(const optic_conv_plan *p, const uint16_t *input, const uint16_t *kernel,
                                         void *output, bool bf16_result, int32_t thread, int32_t threads) {
  optic_status st = check_run(p, OPTIC_CONV_FORWARD, "forward_bf16", input, kernel, output, NULL, thread, threads);
  if (st != OPTIC_OK) return st;
  if (!optic_conv_grouped_bf16_chosen(p, OPTIC_BF16, OPTIC_BF16, OPTIC_F32)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "convolution: forward_bf16: the plan (strategy %d) is not on the grouped vector loops",
                      (int)p->strategy);
  }
  if (p->operand_elems[2] == 0) return OPTIC_OK;
  static const uint16_t none = 0; /* an operand without elements is never read */
  if (p->operand_elems[0] == 0 || p->operand_elems[1] == 0) {
    input = &none, kernel = &none;
  } else {
    input += p->g.in_off, kernel += p->g.k_off;
  }
  int64_t u0, u1;
  split(p->units, thread, threads, &u0, &u1);
#if OPTIC_ARCH_X86_64
  optic_conv_grouped_bf16_avx512(p, input, kernel, output, bf16_result, u0, u1);
#else
  (void)bf16_result, (void)u0, (void)u1; /* grouped_simd is never set off x86-64 */
#endif
  return OPTIC_OK;
}

optic_status optic_conv_run_backward_input(const optic_conv_plan *p, const float *grad_output, const float *kernel,
                                           float *grad_input, void *scratch, int32_t thread, int32_t threads) {
  optic_status st = check_run(p, OPTIC_CONV_BACKWARD_INPUT, "backward_input", grad_output, kernel, grad_input, scratch,
                              thread, threads);
  if (st != OPTIC_OK) return st;
  forward_slice(p, operand(grad_output), operand(kernel), result(grad_input), slice_scratch(p, scratch, thread), thread,
                threads);
  return OPTIC_OK;
}

optic_status optic_conv_run_backward_kernel(const optic_conv_plan *p, const float *input, const float *grad_output,
                                            float *grad_kernel, void *scratch, int32_t thread, int32_t threads) {
  optic_status st = check_run(p, OPTIC_CONV_BACKWARD_KERNEL, "backward_kernel", input, grad_output, grad_kernel,
                              scratch, thread, threads);
  if (st != OPTIC_OK) return st;
  backward_kernel_slice(p, operand(input), operand(grad_output), result(grad_kernel), slice_scratch(p, scratch, thread),
                        thread, threads);
  return OPTIC_OK;
}
