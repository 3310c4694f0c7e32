/* Dot and convolution through the kernels' plans (kernels/dot.h,
 * kernels/conv.h), called from every thread of the run's parallel region
 * with (thread, nthreads) as those headers prescribe, and loop fusions run
 * block by block through their block programs. */
#include <stdint.h>

#include "exec/exec_internal.h"
#include "kernels/convert.h"
#include "kernels/stream.h"

static optic_status run_contraction(const exec_step *s, const float *a, const float *b, float *y,
                                    const exec_thread *th);

/* This thread's share of converting n elements (all threads call it). */
static void convert_share(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n,
                          const exec_thread *th) {
  size_t lo, hi;
  exec_share(n, th->t, th->nt, &lo, &hi);
  if (lo < hi) {
    const unsigned char *sp = (const unsigned char *)src + lo * optic_dtype_size(from);
    unsigned char *dp = (unsigned char *)dst + lo * optic_dtype_size(to);
    if (!optic_convert_halves(from, sp, to, dp, hi - lo)) optic_convert_elements(from, sp, to, dp, hi - lo);
  }
}

/* Both operands bf16 (s->bf16_dot): dense copies, panels, then the
 * vdpbf16ps GEMM, each step shared by all threads (kernels/dot_bf16.h). */
static optic_status run_bf16_dot(const exec_step *s, const void *a, const void *b, float *y, const exec_thread *th) {
  void *scratch = th->scratch + s->scratch_offset;
  optic_status st = optic_dot_bf16_pack_dense(s->dot, a, b, scratch, th->t, th->nt);
  if (s->dot->lhs.packed || s->dot->rhs.packed) exec_sync(th);
  optic_status st2 = optic_dot_bf16_pack_panels(s->dot, a, b, scratch, th->t, th->nt);
  exec_sync(th);
  optic_status st3 = optic_dot_bf16_compute(s->dot, y, scratch, th->t, th->nt);
  return st != OPTIC_OK ? st : st2 != OPTIC_OK ? st2 : st3;
}

optic_status exec_op_linalg(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  void *p[3] = {ref_ptr(f, &s->in[0]), ref_ptr(f, &s->in[1]), ref_ptr(f, &s->out[0])};
  if (s->conv_bf16) { /* bf16 operands straight into the bf16 GEMM; no widening */
    int32_t slices = th->nt < s->conv_bf16->threads ? th->nt : s->conv_bf16->threads;
    if (th->t >= slices) return OPTIC_OK;
    void *scratch = s->scratch_bytes ? th->scratch + s->scratch_offset : NULL;
    return optic_conv_bf16_run(s->conv_bf16, p[0], p[1], p[2], scratch, th->t, slices);
  }
  if (s->conv_bf16_grouped) { /* bf16 depthwise read in place, widened in registers */
    int32_t slices = th->nt < s->conv->threads ? th->nt : s->conv->threads;
    if (th->t >= slices) return OPTIC_OK;
    return optic_conv_run_forward_bf16(s->conv, p[0], p[1], p[2], s->widen_dt[2] == OPTIC_BF16, th->t, slices);
  }
  if (!s->widen && !s->bf16_dot) return run_contraction(s, p[0], p[1], p[2], th);
  /* bf16 x bf16 on vdpbf16ps, or f16/bf16 widened to f32 exactly and
   * contracted in f32; a 16-bit result is rounded once to nearest even. */
  float *w[3];
  for (int k = 0; k < 3; k++) {
    w[k] = s->widen_offset[k] == SIZE_MAX ? p[k] : (float *)(void *)(th->scratch + s->widen_offset[k]);
    if (k < 2 && s->widen_offset[k] != SIZE_MAX)
      convert_share(s->widen_dt[k], p[k], OPTIC_F32, w[k], s->widen_elems[k], th);
  }
  exec_sync(th);
  optic_status st = s->bf16_dot ? run_bf16_dot(s, p[0], p[1], w[2], th) : run_contraction(s, w[0], w[1], w[2], th);
  exec_sync(th);
  if (s->widen_offset[2] != SIZE_MAX) convert_share(OPTIC_F32, w[2], s->widen_dt[2], p[2], s->widen_elems[2], th);
  return st;
}

static optic_status run_contraction(const exec_step *s, const float *a, const float *b, float *y,
                                    const exec_thread *th) {
  void *scratch = s->scratch_bytes ? th->scratch + s->scratch_offset : NULL;
  if (s->dot) {
    optic_status st = optic_dot_pack(s->dot, a, b, scratch, th->t, th->nt);
    if (s->dot->lhs.packed || s->dot->rhs.packed) {
      exec_sync(th); /* pack -> compute: the packed panels are shared */
    }
    optic_status st2 = optic_dot_compute(s->dot, a, b, y, scratch, th->t, th->nt);
    return st != OPTIC_OK ? st : st2;
  }
  int32_t slices = th->nt < s->conv->threads ? th->nt : s->conv->threads;
  if (th->t >= slices) return OPTIC_OK;
  return optic_conv_run_forward(s->conv, a, b, y, scratch, th->t, slices);
}

/* Asks for the next block of every streamed input while this block runs:
 * the chain reads its inputs one pass at a time, so without this each
 * stream would start cold (hardware prefetchers stop at page boundaries). */
static void prefetch_block(const exec_step *s, const void *const *inputs, size_t lo, size_t n) {
  const ew_prog *p = s->prog;
  for (int32_t i = 0; i < s->n_operands; i++) {
    if ((p->scalar_inputs >> i) & 1u) continue;
    size_t es = optic_dtype_size(p->input_dtype[i]);
    if (s->operand_elems[i] != n) continue; /* gathered leaves: not a linear stream */
    const unsigned char *b = (const unsigned char *)inputs[i] + lo * es;
    size_t bytes = (n - lo < EXEC_BLOCK ? n - lo : EXEC_BLOCK) * es;
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(b + off, 0, 2);
  }
}

size_t exec_fused_elems(const exec_step *s) {
  const optic_type *t = optic_type_is_tuple(s->type) && s->type->tuple_size > 0 ? &s->type->elements[0] : s->type;
  size_t n = 1;
  for (int32_t d = 0; d < t->shape.rank; d++) n *= (size_t)t->shape.dims[d];
  return n;
}

size_t exec_fused_footprint(const exec_step *s) {
  size_t bytes = 0;
  if (optic_type_is_tuple(s->type)) {
    for (int32_t l = 0; l < s->n_out; l++) bytes += s->out[l].size;
  } else {
    bytes = exec_fused_elems(s) * optic_dtype_size(s->type->dtype);
  }
  for (int32_t i = s->in_first[0]; i < s->in_first[s->n_operands]; i++) bytes += s->in[i].size;
  return bytes;
}

bool exec_fused_streams(const exec_step *s) { return optic_stream_use(exec_fused_footprint(s)); }

static void run_blocks(const exec_step *s, const void *const *inputs, unsigned char *const *ys, const exec_thread *th);

optic_status exec_op_output_fusion(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *inputs[64];
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  unsigned char *y = ref_ptr(f, &s->out[0]);
  optic_status st = run_contraction(s, inputs[s->epi_lhs], inputs[s->epi_rhs], (float *)(void *)y, th);
  exec_sync(th);
  inputs[s->prog->extra_input] = y; /* the epilogue rewrites the dot's result in place */
  run_blocks(s, inputs, &y, th);
  return st;
}

optic_status exec_op_fused(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *inputs[64];
  unsigned char *ys[EXEC_FUSED_OUTPUTS];
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  for (int32_t k = 0; k < s->prog->n_outputs; k++) ys[k] = ref_ptr(f, &s->out[k]);
  run_blocks(s, inputs, ys, th);
  return OPTIC_OK;
}

/* Streaming: each output's block is staged in its own register after the
 * program's (exec_regs_bytes reserves them), then streamed to memory --
 * unless the one output is written by a chain kernel call, which streams
 * its stores itself (p->chain_streams): no staging, no copy. */
void exec_fused_range(const exec_step *s, const void *const *inputs, unsigned char *const *ys, size_t lo, size_t hi,
                      bool stream, bool prefetch, size_t block, unsigned char *regs) {
  const ew_prog *p = s->prog;
  const size_t n = exec_fused_elems(s);
  unsigned char *tmp = regs + (size_t)p->n_regs * block * 8;
  const bool staged = stream && !p->chain_streams;
  size_t es[EXEC_FUSED_OUTPUTS];
  for (int32_t k = 0; k < p->n_outputs; k++) es[k] = optic_dtype_size(p->output_dtype[k]);
  for (size_t b0 = lo; b0 < hi; b0 += block) {
    size_t len = hi - b0 < block ? hi - b0 : block;
    if (prefetch && b0 + block < hi) prefetch_block(s, inputs, b0 + block, n);
    void *outs[EXEC_FUSED_OUTPUTS];
    for (int32_t k = 0; k < p->n_outputs; k++)
      outs[k] = staged ? (void *)(tmp + (size_t)k * block * 8) : (void *)(ys[k] + b0 * es[k]);
    ew_run_block_stream(p, inputs, p->scalar_inputs, outs, b0, len, regs, block * 8, stream);
    if (!staged) continue;
    for (int32_t k = 0; k < p->n_outputs; k++) optic_stream_copy(ys[k] + b0 * es[k], outs[k], len * es[k]);
  }
}

static void run_blocks(const exec_step *s, const void *const *inputs, unsigned char *const *ys, const exec_thread *th) {
  size_t n = exec_fused_elems(s);
  size_t blocks = (n + EXEC_BLOCK - 1) / EXEC_BLOCK, blo, bhi;
  exec_share(blocks, th->t, th->nt, &blo, &bhi);
  /* A call whose footprint outgrows the caches writes its results with
   * streaming stores from a register: no read-for-ownership of output lines
   * it overwrites (the kernels' policy, kernels/stream.h). */
  bool stream = exec_fused_streams(s);
  size_t hi = bhi * EXEC_BLOCK < n ? bhi * EXEC_BLOCK : n;
  if (blo < bhi) exec_fused_range(s, inputs, ys, blo * EXEC_BLOCK, hi, stream, true, EXEC_BLOCK, th->regs);
  if (stream) optic_stream_fence();
}
