/* Dot and convolution through the kernels' plans (kernels/dot.h,
 * kernels/conv.h), called from every thread of the run's parallel region
 * with (thread, nthreads) as those headers prescribe, and loop fusions run
 * block by block through their block programs. */
#include "exec/exec_internal.h"

optic_status exec_op_linalg(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const float *a = ref_ptr(f, &s->in[0]);
  const float *b = ref_ptr(f, &s->in[1]);
  float *y = ref_ptr(f, &s->out[0]);
  void *scratch = s->scratch_bytes ? th->scratch + s->scratch_offset : NULL;
  if (s->op == OPTIC_OP_DOT) {
    optic_status st = optic_dot_pack(s->dot, a, b, scratch, th->t, th->nt);
    if (s->dot->lhs.packed || s->dot->rhs.packed) {
      if (th->nt > 1) {
#pragma omp barrier
      }
    }
    optic_status st2 = optic_dot_compute(s->dot, a, b, y, scratch, th->t, th->nt);
    return st != OPTIC_OK ? st : st2;
  }
  int32_t slices = th->nt < s->conv->threads ? th->nt : s->conv->threads;
  if (th->t >= slices) return OPTIC_OK;
  return optic_conv_run_forward(s->conv, a, b, y, scratch, th->t, slices);
}

optic_status exec_op_fused(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  const void *inputs[64];
  for (int32_t i = 0; i < s->n_operands; i++) inputs[i] = ref_ptr(f, &s->in[s->in_first[i]]);
  size_t n = 1;
  for (int32_t d = 0; d < s->type->shape.rank; d++) n *= (size_t)s->type->shape.dims[d];
  size_t es = optic_dtype_size(s->type->dtype);
  size_t blocks = (n + EXEC_BLOCK - 1) / EXEC_BLOCK, blo, bhi;
  exec_share(blocks, th->t, th->nt, &blo, &bhi);
  unsigned char *y = ref_ptr(f, &s->out[0]);
  for (size_t k = blo; k < bhi; k++) {
    size_t lo = k * EXEC_BLOCK, len = n - lo < EXEC_BLOCK ? n - lo : EXEC_BLOCK;
    void *outs[1] = {y + lo * es};
    ew_run_block(s->prog, inputs, s->prog->scalar_inputs, outs, lo, len, th->regs);
  }
  return OPTIC_OK;
}
