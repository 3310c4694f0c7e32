/* bf16 dot_general on AVX512_BF16: scratch layout, thread shares and the
 * calls into the vdpbf16ps kernels (kernels/x86/avx512bf16/). The plan is
 * optic_dot_plan's; this file only reads it.
 *
 * Scratch: [0, plan->scratch_bytes) holds the dense copies the plan asks
 * for (sized for f32, so the bf16 copies fit), then the A panels of every
 * batch item, then the B panels, each 64-byte aligned. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "core/error.h"
#include "kernels/dot_bf16.h"

#define MR OPTIC_BF16_MR
#define NR OPTIC_BF16_NR

#if !defined(OPTIC_HAVE_AMX_KERNELS)
void optic_bf16_pack_a__amx(const optic_bf16_matrix *s, int64_t r0, int64_t kpad, uint16_t *dst) {
  (void)s, (void)r0, (void)kpad, (void)dst;
}
void optic_bf16_gemm__amx(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1) {
  (void)g, (void)pa0, (void)pa1, (void)pb0, (void)pb1;
}
#endif

/* Linux hands out AMX tile data per process on request (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, kernel 5.16+); without it the
 * first tile instruction faults. */
static bool request_tile_data(void) {
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
#else
  return false;
#endif
}

static bool amx_usable, avx512_usable;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void choose_kernels(void) {
  const optic_cpu_info *c = optic_cpu_info_get();
  bool avx512 = optic_isa_selected() == OPTIC_ISA_AVX512;
#if defined(OPTIC_HAVE_AVX512BF16_KERNELS)
  avx512_usable = avx512 && OPTIC_CPU_HAS(c, AVX512BF16);
#endif
#if defined(OPTIC_HAVE_AMX_KERNELS)
  const char *cap = getenv("OPTIC_ISA");
  optic_isa ignored;
  bool capped = cap != NULL && cap[0] != '\0' && optic_isa_from_name(cap, &ignored) == OPTIC_OK;
  amx_usable =
      avx512_usable && !capped && OPTIC_CPU_HAS(c, AMX_TILE) && OPTIC_CPU_HAS(c, AMX_BF16) && request_tile_data();
#else
  (void)request_tile_data;
#endif
  (void)c, (void)avx512;
}

bool optic_dot_bf16_kernel_usable(optic_bf16_kernel kernel) {
  pthread_once(&kernel_once, choose_kernels);
  return kernel == OPTIC_BF16_AMX ? amx_usable : kernel == OPTIC_BF16_AVX512 ? avx512_usable : false;
}

optic_bf16_kernel optic_dot_bf16_kernel(void) {
  if (optic_dot_bf16_kernel_usable(OPTIC_BF16_AMX)) return OPTIC_BF16_AMX;
  if (optic_dot_bf16_kernel_usable(OPTIC_BF16_AVX512)) return OPTIC_BF16_AVX512;
  return OPTIC_BF16_NONE;
}

const char *optic_dot_bf16_kernel_name(optic_bf16_kernel kernel) {
  return kernel == OPTIC_BF16_AMX ? "amx_bf16" : kernel == OPTIC_BF16_AVX512 ? "avx512_bf16" : "none";
}

bool optic_dot_bf16_available(void) { return optic_dot_bf16_kernel() != OPTIC_BF16_NONE; }

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

typedef struct layout {
  int64_t mr, kpairs, mp, np;          /* panel rows, pairs of k (padded), A and B panels per batch item */
  size_t a_off, b_off, a_item, b_item; /* offsets; per-item panel sizes in words */
} layout;

static layout layout_of(const struct optic_dot_plan *p, optic_bf16_kernel kernel) {
  layout l;
  bool amx = kernel == OPTIC_BF16_AMX;
  l.mr = amx ? 32 : MR;
  l.kpairs = (p->k + 1) / 2;
  if (amx) l.kpairs = (l.kpairs + 15) / 16 * 16; /* K padded to 32 for the tiles */
  l.mp = (p->m + l.mr - 1) / l.mr;
  l.np = (p->n + NR - 1) / NR;
  l.a_item = (size_t)(l.mp * l.kpairs * l.mr);
  l.b_item = (size_t)(l.np * l.kpairs * NR);
  l.a_off = align64(p->scratch_bytes);
  l.b_off = l.a_off + align64((size_t)p->batch * l.a_item * sizeof(uint32_t));
  return l;
}

size_t optic_dot_bf16_scratch_bytes_for(const struct optic_dot_plan *p, optic_bf16_kernel kernel) {
  if (p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return p->scratch_bytes;
  layout l = layout_of(p, kernel);
  return l.b_off + (size_t)p->batch * l.b_item * sizeof(uint32_t);
}

size_t optic_dot_bf16_scratch_bytes(const struct optic_dot_plan *p) {
  return optic_dot_bf16_scratch_bytes_for(p, optic_dot_bf16_kernel());
}

/* [lo, hi) of thread t's even share of n units. */
static void share(int64_t n, int t, int nt, int64_t *lo, int64_t *hi) {
  *lo = n / nt * t + (n % nt) * t / nt;
  *hi = n / nt * (t + 1) + (n % nt) * (t + 1) / nt;
}

static int64_t batch_offset(const struct optic_dot_plan *p, const int64_t *strides, int64_t b) {
  int64_t off = 0;
  for (int32_t i = p->batch_rank - 1; i >= 0; i--) {
    off += (b % p->batch_sizes[i]) * strides[i];
    b /= p->batch_sizes[i];
  }
  return off;
}

static optic_status check(const char *fn, optic_bf16_kernel kernel, const struct optic_dot_plan *p, bool need_in,
                          const void *lhs, const void *rhs, const void *scratch, int thread, int nthreads) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (nthreads < 1 || thread < 0 || thread >= nthreads) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: thread %d is outside [0, %d)", fn, thread, nthreads);
  }
  if (!optic_dot_bf16_kernel_usable(kernel)) {
    return optic_fail(
        OPTIC_ERR_UNSUPPORTED, "%s: the %s kernel cannot run here (needs %s and the avx512 ISA; selected: %s)", fn,
        optic_dot_bf16_kernel_name(kernel),
        kernel == OPTIC_BF16_AMX ? "AMX-TILE, AMX-BF16, tile data granted by the OS, OPTIC_ISA unset" : "AVX512_BF16",
        optic_isa_name(optic_isa_selected()));
  }
  if (p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return OPTIC_OK;
  if (need_in && (lhs == NULL || rhs == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, lhs == NULL ? "lhs" : "rhs");
  }
  if (scratch == NULL || (uintptr_t)scratch % 4 != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: needs %zu bytes of 4-aligned scratch, got %p", fn,
                      optic_dot_bf16_scratch_bytes_for(p, kernel), scratch);
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_pack_dense(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs,
                                       void *scratch, int thread, int nthreads) {
  optic_status st = check("dot_bf16_pack_dense", optic_dot_bf16_kernel(), p, true, lhs, rhs, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return st;
  char *base = scratch;
  if (p->lhs.packed) optic_dot_pack_operand(&p->lhs, lhs, base + p->lhs.scratch_offset, 2, thread, nthreads);
  if (p->rhs.packed) optic_dot_pack_operand(&p->rhs, rhs, base + p->rhs.scratch_offset, 2, thread, nthreads);
  return OPTIC_OK;
}

/* Batch item b of an operand (after step 1) as a matrix. */
static optic_bf16_matrix matrix_of(const struct optic_dot_plan *p, const optic_dot_operand *op, const uint16_t *src,
                                   const void *scratch, int64_t b, int64_t rows, int64_t cols) {
  const uint16_t *base =
      op->packed ? (const uint16_t *)(const void *)((const char *)scratch + op->scratch_offset) : src;
  optic_bf16_matrix m = {base + batch_offset(p, op->batch_strides, b), rows, cols, op->ld, op->trans, op->vector};
  return m;
}

optic_status optic_dot_bf16_pack_panels_with(optic_bf16_kernel kernel, const struct optic_dot_plan *p,
                                             const uint16_t *lhs, const uint16_t *rhs, void *scratch, int thread,
                                             int nthreads) {
  optic_status st = check("dot_bf16_pack_panels", kernel, p, true, lhs, rhs, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY || p->path == OPTIC_DOT_PATH_ZEROS) return st;
  layout l = layout_of(p, kernel);
  uint32_t *a = (uint32_t *)(void *)((char *)scratch + l.a_off), *bp = (uint32_t *)(void *)((char *)scratch + l.b_off);
  int64_t na = p->batch * l.mp, total = na + p->batch * l.np, lo, hi;
  share(total, thread, nthreads, &lo, &hi);
  for (int64_t u = lo; u < hi; u++) {
    if (u < na) {
      int64_t b = u / l.mp, i = u % l.mp;
      optic_bf16_matrix s = matrix_of(p, &p->lhs, lhs, scratch, b, p->m, p->k);
      uint32_t *dst = a + b * l.a_item + (size_t)(i * l.kpairs * l.mr);
      if (kernel == OPTIC_BF16_AMX) {
        optic_bf16_pack_a__amx(&s, i * l.mr, 2 * l.kpairs, (uint16_t *)(void *)dst);
      } else {
        optic_bf16_pack_a__avx512bf16(&s, i * MR, dst);
      }
    } else {
      int64_t b = (u - na) / l.np, j = (u - na) % l.np;
      optic_bf16_matrix s = matrix_of(p, &p->rhs, rhs, scratch, b, p->k, p->n);
      optic_bf16_pack_b__avx512bf16(&s, j * NR, l.kpairs, bp + b * l.b_item + (size_t)(j * l.kpairs * NR));
    }
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_compute_with(optic_bf16_kernel kernel, const struct optic_dot_plan *p, float *out,
                                         const void *scratch, int thread, int nthreads) {
  optic_status st = check("dot_bf16_compute", kernel, p, false, NULL, NULL, scratch, thread, nthreads);
  if (st != OPTIC_OK || p->path == OPTIC_DOT_PATH_EMPTY) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot_bf16_compute: out is NULL");
  int64_t lo, hi;
  if (p->path == OPTIC_DOT_PATH_ZEROS) {
    share(p->batch * p->m * p->n, thread, nthreads, &lo, &hi);
    if (hi > lo) memset(out + lo, 0, (size_t)(hi - lo) * sizeof(float));
    return OPTIC_OK;
  }
  layout l = layout_of(p, kernel);
  const uint32_t *a = (const uint32_t *)(const void *)((const char *)scratch + l.a_off);
  const uint32_t *b = (const uint32_t *)(const void *)((const char *)scratch + l.b_off);
  bool split_m = l.mp >= l.np; /* split the operand with more panels */
  int64_t per = split_m ? l.mp : l.np;
  bool amx = kernel == OPTIC_BF16_AMX;
  share(p->batch * per, thread, nthreads, &lo, &hi);
  while (lo < hi) {
    int64_t item = lo / per, x0 = lo % per, x1 = x0 + (hi - lo) < per ? x0 + (hi - lo) : per;
    optic_bf16_gemm_args g = {a + item * l.a_item,
                              b + item * l.b_item,
                              out + item * p->m * p->n,
                              p->m,
                              p->n,
                              amx ? 2 * l.kpairs : p->k,
                              p->n};
    int64_t pa0 = split_m ? x0 : 0, pa1 = split_m ? x1 : l.mp, pb0 = split_m ? 0 : x0, pb1 = split_m ? l.np : x1;
    if (amx) {
      optic_bf16_gemm__amx(&g, pa0, pa1, pb0, pb1);
    } else {
      optic_bf16_gemm__avx512bf16(&g, pa0, pa1, pb0, pb1);
    }
    lo += x1 - x0;
  }
  return OPTIC_OK;
}

optic_status optic_dot_bf16_run_with(optic_bf16_kernel kernel, const struct optic_dot_plan *p, const uint16_t *lhs,
                                     const uint16_t *rhs, float *out, void *scratch) {
  optic_status st = optic_dot_bf16_pack_dense(p, lhs, rhs, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_bf16_pack_panels_with(kernel, p, lhs, rhs, scratch, 0, 1);
  if (st == OPTIC_OK) st = optic_dot_bf16_compute_with(kernel, p, out, scratch, 0, 1);
  return st;
}

optic_status optic_dot_bf16_pack_panels(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs,
                                        void *scratch, int thread, int nthreads) {
  return optic_dot_bf16_pack_panels_with(optic_dot_bf16_kernel(), p, lhs, rhs, scratch, thread, nthreads);
}

optic_status optic_dot_bf16_compute(const struct optic_dot_plan *p, float *out, const void *scratch, int thread,
                                    int nthreads) {
  return optic_dot_bf16_compute_with(optic_dot_bf16_kernel(), p, out, scratch, thread, nthreads);
}

optic_status optic_dot_bf16_run(const struct optic_dot_plan *p, const uint16_t *lhs, const uint16_t *rhs, float *out,
                                void *scratch) {
  return optic_dot_bf16_run_with(optic_dot_bf16_kernel(), p, lhs, rhs, out, scratch);
}
