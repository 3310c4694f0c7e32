/* Mixed-precision optimizer steps: bf16 parameters and gradients, f32
 * master weights and state. Block by block (1024 elements, in L1): widen the
 * gradients exactly, run the selected ISA's f32 kernel on the master copy
 * and its state, round the master to the bf16 parameters once (nearest
 * even). One pass over memory; the f32 update is exactly the f32 kernel's. */
#include "kernels/optim.h"

#define BLOCK 1024

void optic_mixed_adam_bf16(size_t n, uint16_t *param, float *master, const uint16_t *grad, float *m, float *v,
                           float *vmax, const optic_adam_params *p) {
  const optic_optim_kernels *k = optic_optim_kernels_get();
  float g[BLOCK];
  for (size_t i = 0; i < n; i += BLOCK) {
    size_t len = n - i < BLOCK ? n - i : BLOCK;
    optic_convert_elements(OPTIC_BF16, grad + i, OPTIC_F32, g, len);
    k->adam(len, master + i, g, m + i, v + i, vmax ? vmax + i : NULL, p);
    optic_convert_elements(OPTIC_F32, master + i, OPTIC_BF16, param + i, len);
  }
}
